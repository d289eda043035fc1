"""Embedding quantization of cold memories: precision chosen by retention.

The ``quantize`` step walks the cold store once without the heavy columns, picks the memories whose
embedding precision should drop — the layered-memory design's tiers by retention (R > 0.8 float32, > 0.5 int8,
> 0.2 int4, else int2; :func:`reverie.dynamics.retention.precision_for_retention` over the
retention of the configured mode, the one archival uses) — claims only those and re-encodes them a
batch at a time (``Store.set_embedding_precision``: one compare-and-set per memory against the
version the pass read, vectors quantised together; :mod:`reverie.vector_codec` is the codec).
Precision only goes down while a memory is cold; hot memories are never touched, so the float32
ANN index of the hot store stays as it is. Every change gets a ``quantized`` history event naming
the precision before and after and the bytes saved, in the same transaction, so a re-run changes
nothing and a killed run leaves every finished batch consistent.

Going back: a memory that returns to the hot store (reactivation, undoing a consolidation) must get
a float32 embedding again; :func:`restore_precision` re-embeds it from its content (kept whole).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

import numpy as np

from reverie import vector_codec as quantize
from reverie.dream.context import DreamContext, DreamStep, StepReport, omit_except
from reverie.dynamics import retention as retention_mod
from reverie.dynamics._util import days_between
from reverie.errors import ConflictError
from reverie.model import HistoryEvent, MemoryRecord, Precision, StoreTier
from reverie.store.base import Store

if TYPE_CHECKING:
    from reverie.config import Settings

#: what the pass reads: the store, the anchors, the retention's inputs and the current precision
_PASS_OMIT = omit_except(
    "store",
    "pinned",
    "immutable",
    "flashbulb",
    "layer",
    "trust",
    "last_accessed_at",
    "created_at",
    "access_count",
    "embedding_precision",
)
_COLD = frozenset({StoreTier.COLD})


def memory_retention(rec: MemoryRecord, *, now: datetime, settings: Settings) -> float:
    """Retention of a memory at ``now`` (configured mode, trust-weighted layer half-life,
    access reinforcement) — the value archival uses too."""
    cfg = settings.dynamics.retention
    hl = retention_mod.layer_half_life(layer=rec.layer, trust=rec.trust, cfg=cfg)
    return retention_mod.retention(
        age_days=days_between(rec.last_accessed_at or rec.created_at, now),
        half_life_days=hl,
        access_count=rec.access_count,
        cfg=cfg,
    )


def target_precision(rec: MemoryRecord, *, now: datetime, settings: Settings) -> tuple[Precision, float] | None:
    """The lower precision a cold memory's embedding should be stored at now, with its retention;
    ``None`` when it stays (hot, protected, or already at or below its tier)."""
    qcfg = settings.dream.quantize
    if rec.store is not StoreTier.COLD:
        return None
    if qcfg.protect_anchored and (rec.pinned or rec.immutable or rec.flashbulb):
        return None
    r = memory_retention(rec, now=now, settings=settings)
    tier = retention_mod.precision_for_retention(retention=r, cfg=settings.dynamics.retention)
    lowest = Precision(qcfg.lowest_precision)
    if quantize.bits_of(tier) < quantize.bits_of(lowest):
        tier = lowest
    if quantize.bits_of(tier) >= quantize.bits_of(rec.embedding_precision):
        return None  # precision only goes down while cold
    return tier, r


def step_quantize(ctx: DreamContext) -> StepReport:
    """Embedding compression: re-encode cold memories whose retention fell below their tier."""
    report = StepReport("quantize")
    tally = _Tally(dim=int(ctx.store.info().details.get("dim", 0)))
    scope = ctx.scope(stores=_COLD, statuses=None)
    for batch in ctx.store.scan(scope, batch_size=ctx.settings.dream.batch_size, omit=_PASS_OMIT):
        report.examined += len(batch)
        moves = {r.id: (r, move) for r in batch if (move := target_precision(r, now=ctx.now, settings=ctx.settings))}
        if moves:
            _quantize_claimed(ctx, moves, tally)
    report.changed = tally.changed
    report.details = {
        "transitions": dict(tally.transitions),
        "bytes_saved": tally.saved,
        "lowest_precision": ctx.settings.dream.quantize.lowest_precision,
    }
    return report


Move = tuple[MemoryRecord, tuple[Precision, float]]


@dataclass
class _Tally:
    dim: int
    changed: int = 0
    saved: int = 0
    transitions: Counter[str] = field(default_factory=Counter)


def _quantize_claimed(ctx: DreamContext, moves: dict[str, Move], tally: _Tally) -> None:
    """Claim the memories to move (the earlier claim wins: another dreamer's are skipped) and
    re-encode them together: one transaction, one batched compare-and-set against the version the
    pass read (``Store.set_embedding_precision``: a memory changed since is skipped until the next
    run) and the history of every memory written."""
    held = ctx.store.claim(
        list(moves), owner=ctx.owner, phase="quantize", now=ctx.claim_now(), ttl_seconds=ctx.settings.dream.claim_ttl_s
    )
    if not held:
        return
    try:
        with ctx.store.transaction():
            written = ctx.store.set_embedding_precision([(i, moves[i][1][0], moves[i][0].version) for i in held])
            events = [_event(ctx, *moves[i], tally.dim) for i in written]
            ctx.store.add_history(events)
    finally:
        ctx.store.release(ctx.owner, held)
    for ev in events:
        tally.changed += 1
        tally.transitions[f"{ev.data['from']}→{ev.data['to']}"] += 1
        tally.saved += int(ev.data["bytes_before"]) - int(ev.data["bytes_after"])
    ctx.log_events(events)


def _event(ctx: DreamContext, rec: MemoryRecord, move: tuple[Precision, float], dim: int) -> HistoryEvent:
    """The ``quantized`` history event of a re-encoded memory: precision before and after, bytes."""
    target, r = move
    source = rec.embedding_precision.value
    data = {
        "from": source,
        "to": target.value,
        "retention": round(r, 4),
        "bytes_before": quantize.stored_bytes(source, dim),
        "bytes_after": quantize.stored_bytes(target, dim),
    }
    return HistoryEvent(
        rec.id,
        "quantized",
        ctx.now,
        reason=f"embedding {source} → {target.value} (retention {r:.2f})",
        actor="dream",
        data=data,
    )


def restore_precision(
    store: Store,
    embed: Callable[[Sequence[str]], Any],
    ids: Sequence[str],
    now: datetime,
    *,
    actor: str = "engine",
) -> list[str]:
    """Give memories stored at a quantised precision a float32 embedding again, re-embedded from
    their content (quantization in reverse: a memory back in the hot store must be in its float32 ANN).

    Call it whenever memories return to the hot store (reactivation, undoing a consolidation).
    Memories already at float32, or unknown, are skipped. Each write is a compare-and-set with a
    ``precision_restored`` history event; a memory changed meanwhile is re-read (and re-embedded if
    its content changed). Works inside an outer transaction. Returns the ids restored.
    """
    found = store.get(list(dict.fromkeys(ids)))
    pending = [r for r in found.values() if r.embedding_precision is not Precision.FLOAT32]
    restored: list[str] = []
    for _ in range(3):  # a concurrent writer may win a round; the loser is re-read and retried
        if not pending:
            break
        vectors = np.asarray(embed([r.content for r in pending]), dtype=np.float32)
        retry: list[MemoryRecord] = []
        for rec, vec in zip(pending, vectors, strict=True):
            event = HistoryEvent(
                rec.id,
                "precision_restored",
                now,
                reason="back in the hot store: re-embedded",
                actor=actor,
                data={"from": rec.embedding_precision.value, "to": "float32"},
            )
            try:
                with store.transaction():
                    store.update_fields(
                        rec.id,
                        {"embedding": vec, "embedding_precision": Precision.FLOAT32},
                        expected_version=rec.version,
                    )
                    store.add_history([event])
            except ConflictError:
                fresh = store.get([rec.id]).get(rec.id)
                if fresh is not None and fresh.embedding_precision is not Precision.FLOAT32:
                    retry.append(fresh)
                continue
            restored.append(rec.id)
        pending = retry
    return restored


STEPS: tuple[DreamStep, ...] = (DreamStep("quantize", step_quantize),)

__all__ = ["STEPS", "memory_retention", "restore_precision", "step_quantize", "target_precision"]
