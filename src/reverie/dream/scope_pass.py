"""The shared read-only pass over a run's scope, and the claim-and-write plumbing of the steps that use it.

How they scale to a large scope: one read-only *pass* per run walks the scope once, reading only the
fields the rules need (:data:`LIGHT_OMIT` leaves out embeddings, inputs and the rest), and hands every memory to
each registered :class:`~reverie.dream.context.Collector`, which keeps its step's candidates. A step then claims
only its candidates, checks that each is still at the version the pass read (re-reading the few that changed),
re-checks its rule and writes in batches (:meth:`~reverie.dream.context.DreamContext.write_many`: one
compare-and-set per memory, one transaction per batch, history for every transition). A memory that became
eligible after the pass is handled by the next run. The pass lives in the run's context and dies with it.

A step that wants candidates from the pass declares its collector in its :class:`~reverie.dream.context.DreamStep`
(``collects=``); the pass runs the collectors of every registered step.

Pinned, immutable and flashbulb memories are never forgotten, archived or moved cold; nothing is deleted
(dormant memories move to the cold store and ``Memory.reactivate`` brings them back).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, TypeVar, cast

from reverie.dream.context import Collector, DreamContext, Write
from reverie.dynamics import retention as retention_mod
from reverie.dynamics._util import days_between
from reverie.dynamics.utility import utility_at
from reverie.model import MemoryRecord, Status, StoreTier
from reverie.store.base import MemoryFilter

S = TypeVar("S")

#: reading one of them must take it out of here (tests/dream/test_lifecycle_steps.py checks every rule
#: gives the same verdict on a light and on a full record).
LIGHT_OMIT = frozenset(
    {
        "embedding",
        "inputs",
        "entities",
        "embedding_precision",
        "energy",
        "energy_updated_at",
        "difficulty",
        "retrieval_strength",
        "reinforcement_count",
        "last_reinforced_at",
        "source",
        "source_confidence",
        "write_source",
        "data_source",
        "valid_from",
        "recorded_at",
        "superseded_by",
        "box_id",
        "agent_id",
        "session_id",
        "instance_id",
        "sub_tier",
        "memory_kind",
    }
)
ACTIVE = frozenset({Status.ACTIVE})
HOT = frozenset({StoreTier.HOT})


# --- protection ------------------------------------------------------------------------------------------


def anchored(rec: MemoryRecord) -> str | None:
    """Why a memory may never be forgotten, archived or moved cold (truth anchors: pinned, immutable;
    flashbulb memories), or ``None``."""
    if rec.pinned:
        return "pinned"
    if rec.immutable:
        return "immutable"
    if rec.flashbulb:
        return "flashbulb"
    return None


def forget_exempt(ctx: DreamContext, rec: MemoryRecord) -> bool:
    """A layer strategic forgetting leaves alone (``forget_exempt_layers``: codebase memories)."""
    return rec.layer.value in ctx.settings.dream.forgetting.forget_exempt_layers


def forget_protection(ctx: DreamContext, rec: MemoryRecord) -> str | None:
    """Anchors, the exempt layers, and the Cognitive Memory design's category minimum retention (corrections,
    preferences,
    entities are permanent)."""
    why = anchored(rec)
    if why is not None:
        return why
    if forget_exempt(ctx, rec):
        return "exempt_layer"
    age = days_between(rec.created_at, ctx.now)
    if retention_mod.within_min_retention(category=rec.category, age_days=age, cfg=ctx.settings.dynamics.retention):
        return "min_retention"
    return None


# --- reading and claiming -------------------------------------------------------------------------------


def light_records(
    ctx: DreamContext, ids: Sequence[str], flt: MemoryFilter | None = None, *, omit: frozenset[str] = LIGHT_OMIT
) -> dict[str, MemoryRecord]:
    """Fresh copies of ``ids`` without the fields no step reads (optionally only those passing ``flt``)."""
    out: dict[str, MemoryRecord] = {}
    size = max(ctx.settings.dream.batch_size, 1)
    base = flt or MemoryFilter.everything()
    for start in range(0, len(ids), size):
        chunk = frozenset(ids[start : start + size])
        for batch in ctx.store.scan(dataclasses.replace(base, ids=chunk), batch_size=len(chunk), omit=omit):
            out.update((r.id, r) for r in batch)
    return out


Item = MemoryRecord | str


def claimed(ctx: DreamContext, items: Sequence[Item], phase: str) -> Iterator[list[MemoryRecord]]:
    """Claim the memories batch by batch (the earlier claim wins: another dreamer's are skipped) and yield
    current copies of the ones held: a record from the pass is used as it is when its version is still the
    stored one, or brought up to date when only this run's own writes came since (a version check instead
    of a re-read, :meth:`DreamContext.brought_up_to`); anything else is re-read. Claims are released
    after each batch."""
    cfg = ctx.settings.dream
    known = {i.id: i for i in items if isinstance(i, MemoryRecord)}
    ids = list(dict.fromkeys(i.id if isinstance(i, MemoryRecord) else i for i in items))
    for start in range(0, len(ids), cfg.batch_size):
        chunk = ids[start : start + cfg.batch_size]
        held = ctx.store.claim(chunk, owner=ctx.owner, phase=phase, now=ctx.claim_now(), ttl_seconds=cfg.claim_ttl_s)
        if not held:
            continue
        try:
            stored = ctx.store.versions([i for i in held if i in known]) if known else {}
            current = {
                i: rec for i in held if i in stored and (rec := ctx.brought_up_to(known[i], stored[i])) is not None
            }
            current.update(light_records(ctx, [i for i in held if i not in current]))
            yield [current[i] for i in held if i in current]
        finally:
            ctx.store.release(ctx.owner, held)


def apply(
    ctx: DreamContext,
    items: Sequence[Item],
    phase: str,
    change: Callable[[MemoryRecord], Write | None],
    limit: int | None = None,
) -> list[str]:
    """Claim the memories, ask ``change`` for each current copy, write the changes in batches; at most
    ``limit`` writes. Returns the ids written."""
    written: list[str] = []
    for batch in claimed(ctx, items, phase):
        writes: list[Write] = []
        for rec in batch:
            if limit is not None and len(written) + len(writes) >= limit:
                break
            w = change(rec)
            if w is not None:
                writes.append(w)
        written.extend(ctx.write_many(writes))
        if limit is not None and len(written) >= limit:
            break
    return written


# --- small shared values -------------------------------------------------------------------------------


def iso(value: datetime) -> str:
    return value.isoformat()


def parse_time(value: Any) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        return datetime.fromisoformat(value)
    except ValueError:
        return None


def utility_now(ctx: DreamContext, rec: MemoryRecord) -> float:
    return utility_at(
        utility=rec.utility,
        updated_at=rec.utility_updated_at or rec.created_at,
        now=ctx.now,
        cfg=ctx.settings.dynamics.utility,
    )


def idle_days(ctx: DreamContext, rec: MemoryRecord) -> float:
    return days_between(rec.last_accessed_at or rec.created_at, ctx.now)


# --- the pass ----------------------------------------------------------------------------------------------


@dataclass(slots=True)
class ScopePass:
    """One read-only walk of the run's scope: how many memories it read, their users, and each collector's state."""

    examined: int = 0
    users: set[str | None] = field(default_factory=set)
    states: dict[str, Any] = field(default_factory=dict)

    def of(self, collector: Collector[S]) -> S:
        """The state ``collector`` built in this pass."""
        return cast(S, self.states[collector.name])

    def take(self, collector: Collector[S]) -> S:
        """The state ``collector`` built, handed over once: the pass keeps a fresh empty one instead (it holds no
        records a step has already used)."""
        state = self.of(collector)
        self.states[collector.name] = collector.start()
        return state


_SCRATCH_KEY = "scope_pass"


def scope_pass(ctx: DreamContext, collectors: Sequence[Collector[Any]] | None = None) -> ScopePass:
    """The run's pass (built by the first step that needs it and kept in ``ctx.scratch``; later steps of the
    run reuse it). ``collectors`` defaults to those of every registered step."""
    found: ScopePass | None = ctx.scratch.get(_SCRATCH_KEY)
    if found is not None:
        return found
    if collectors is None:
        from reverie.dream.registry import collectors as registered

        collectors = registered()
    p = ScopePass(states={c.name: c.start() for c in collectors})
    visits: list[tuple[Callable[[DreamContext, Any, MemoryRecord], None], Any]] = [
        (c.visit, p.states[c.name]) for c in collectors
    ]
    size = max(ctx.settings.dream.batch_size, 2000)
    for batch in ctx.store.scan(ctx.scope(statuses=None, stores=None), batch_size=size, omit=LIGHT_OMIT):
        for rec in batch:
            p.examined += 1
            p.users.add(rec.user_id)
            for visit, state in visits:
                visit(ctx, state, rec)
    ctx.scratch[_SCRATCH_KEY] = p
    return p


__all__ = [
    "ACTIVE",
    "HOT",
    "LIGHT_OMIT",
    "ScopePass",
    "anchored",
    "apply",
    "claimed",
    "forget_exempt",
    "forget_protection",
    "idle_days",
    "iso",
    "light_records",
    "parse_time",
    "scope_pass",
    "utility_now",
]
