"""Steps that strengthen or refresh memories: emotional consolidation of flashbulb memories, synaptic replay of
co-activated pairs, utility drift toward its prior, and rehearsal of endangered memories (the testing effect).

Their numbers come from ``settings.dynamics`` and ``settings.dream.forgetting``; the math is
:mod:`reverie.dynamics`. Candidates come from the run's shared pass (:mod:`reverie.dream.scope_pass`).
"""

from __future__ import annotations

import dataclasses
import heapq
from collections import Counter
from datetime import datetime
from typing import Any

from reverie.dream.context import Collector, DreamContext, DreamStep, StepReport, Write
from reverie.dream.scope_pass import ACTIVE, apply, idle_days, iso, light_records, parse_time, scope_pass, utility_now
from reverie.dynamics import emotion, strength, tagging
from reverie.dynamics._util import days_between
from reverie.model import MemoryRecord, Status

# metadata keys the steps keep on a memory (markers that make a step idempotent)
EMOTIONAL_MARK = "emotional_consolidated_at"
REPLAY_MARK = "replayed_at"
REHEARSAL_MARK = strength.REHEARSAL_MARK


# --- emotional consolidation -------------------------------------------------------------------------------


def _wants_emotional(ctx: DreamContext, rec: MemoryRecord) -> bool:
    if rec.status is not Status.ACTIVE or EMOTIONAL_MARK in rec.metadata:
        return False
    return rec.flashbulb or emotion.is_flashbulb(arousal=rec.emotion_arousal, cfg=ctx.settings.dynamics.emotion)


def step_emotional(ctx: DreamContext) -> StepReport:
    """Dream phase 2: each flashbulb memory gets its consolidation stability boost (×1.5) once,
    marked in its metadata; a memory with flashbulb-level arousal (>= 0.8) that was stored without the
    flashbulb tags (imported, restored) is tagged first — flashbulb, pinned, importance >= 0.9."""
    report = StepReport("emotional", details={"boosted": 0, "tagged": 0})
    cfg = ctx.settings.dynamics.emotion
    p = scope_pass(ctx)
    report.examined = p.examined
    candidates = p.take(EMOTIONAL)
    tagged: set[str] = set()

    def change(rec: MemoryRecord) -> Write | None:
        if not _wants_emotional(ctx, rec):
            return None
        boosted = emotion.flashbulb_stability(stability=rec.stability, cfg=cfg)
        changes: dict[str, Any] = {
            "stability": boosted,
            "metadata": {**rec.metadata, "flashbulb": True, EMOTIONAL_MARK: iso(ctx.now)},
            "updated_at": ctx.now,
        }
        tag = not rec.flashbulb
        if tag:
            changes.update(
                flashbulb=True, pinned=True, importance=emotion.flashbulb_importance(importance=rec.importance, cfg=cfg)
            )
            tagged.add(rec.id)
        data = {
            "stability_before": rec.stability,
            "stability_after": boosted,
            "tagged": tag,
            "arousal": rec.emotion_arousal,
            "label": rec.emotion_label,
        }
        return Write(rec, changes, "emotional_consolidation", "flashbulb consolidation boost", data)

    done = apply(ctx, candidates, "emotional", change)
    report.changed = len(done)
    report.details.update(boosted=len(done), tagged=len(tagged & set(done)))
    return report


# --- synaptic replay ---------------------------------------------------------------------------------------


def step_replay(ctx: DreamContext) -> StepReport:
    """Dream phase 3: memories of co-activated pairs (co-retrieved >= 3 times) get the Hebbian
    stability boost (+2%) once per new co-activation (a marker records the replay); expired synaptic
    tags (TTL 4 h) are cleaned up."""
    report = StepReport("replay", details={"pairs": 0, "strengthened": 0, "tags_removed": 0})
    tag_cfg = ctx.settings.dynamics.tagging
    pairs = ctx.store.coactivations(min_weight=tag_cfg.coactivation_threshold)
    latest: dict[str, datetime] = {}
    partners: Counter[str] = Counter()
    for pair in pairs:
        for mid in (pair.a_id, pair.b_id):
            latest[mid] = max(latest.get(mid, pair.last_at), pair.last_at)
            partners[mid] += 1
    in_scope = light_records(ctx, sorted(latest), ctx.scope(statuses=ACTIVE, stores=None))
    report.examined = len(in_scope)

    def due(rec: MemoryRecord) -> bool:
        marked = parse_time(rec.metadata.get(REPLAY_MARK))
        return rec.status is Status.ACTIVE and (marked is None or marked < latest[rec.id])

    def change(rec: MemoryRecord) -> Write | None:
        if not due(rec):
            return None
        boosted = tagging.hebbian_stability(stability=rec.stability, cfg=tag_cfg)
        changes = {"stability": boosted, "metadata": {**rec.metadata, REPLAY_MARK: iso(ctx.now)}}
        data = {"pairs": partners[rec.id], "stability_before": rec.stability, "stability_after": boosted}
        return Write(rec, changes, "replayed", "synaptic replay of co-activated pairs", data)

    done = apply(ctx, [i for i, r in in_scope.items() if due(r)], "replay", change)
    report.details["tags_removed"] = ctx.store.prune_tags(ctx.now)
    report.details.update(pairs=len(pairs), strengthened=len(done))
    report.changed = len(done) + report.details["tags_removed"]
    return report


# --- utility decay -----------------------------------------------------------------------------------------


def _utility_change(ctx: DreamContext, rec: MemoryRecord) -> float | None:
    if rec.status is not Status.ACTIVE:
        return None
    drifted = utility_now(ctx, rec)
    return drifted if abs(drifted - rec.utility) >= ctx.settings.dream.forgetting.utility_min_change else None


def step_utility_decay(ctx: DreamContext) -> StepReport:
    """Utility drifts toward the 0.5 prior, ``u + (0.5 - u)·(1 - exp(-0.01·days))``
    , materialised from ``utility_updated_at`` (lazy: re-running never compounds)."""
    report = StepReport("utility_decay")
    p = scope_pass(ctx)
    report.examined = p.examined

    def change(rec: MemoryRecord) -> Write | None:
        drifted = _utility_change(ctx, rec)
        if drifted is None:
            return None
        return Write(rec, {"utility": drifted, "utility_updated_at": ctx.now})

    candidates: list[MemoryRecord] = p.take(UTILITY)
    report.changed = len(apply(ctx, candidates, "utility_decay", change))
    return report


# --- rehearsal (the testing effect) ------------------------------------------------------------------------


def _retrieval_strength(ctx: DreamContext, rec: MemoryRecord, stability: float) -> float:
    """FSRS R times the category decay scaled by the tier multiplier (the decay step's value)."""
    return strength.retrieval_strength_of(rec, now=ctx.now, cfg=ctx.settings.dynamics, stability=stability)


def _endangered(ctx: DreamContext, rec: MemoryRecord) -> float | None:
    """Retrieval strength of an active memory (FSRS R times its category's decay at its tier's rate) below
    the rehearsal threshold (0.3), unless rehearsed within the interval."""
    if rec.status is not Status.ACTIVE:
        return None
    fc = ctx.settings.dynamics.fsrs
    r = _retrieval_strength(ctx, rec, rec.stability)
    if r >= fc.rehearsal_threshold:
        return None
    last = parse_time(rec.metadata.get(REHEARSAL_MARK))
    if last is not None and days_between(last, ctx.now) < ctx.settings.dream.forgetting.rehearse_interval_days:
        return None
    return r


def step_rehearse(ctx: DreamContext) -> StepReport:
    """Testing effect: endangered memories (retrieval strength < 0.3: FSRS R times the category
    decay at the tier's rate), most endangered first, at most 50 per
    cycle, get a stability boost ×1.5 (a simulated successful retrieval)."""
    report = StepReport("rehearse")
    fc = ctx.settings.dynamics.fsrs
    p = scope_pass(ctx)
    report.examined = p.examined
    heap: list[tuple[float, str, MemoryRecord]] = p.take(REHEARSE)
    order = [item[2] for item in sorted(heap, key=lambda item: (-item[0], item[1]))]

    def change(rec: MemoryRecord) -> Write | None:
        r = _endangered(ctx, rec)
        if r is None:
            return None
        # the stability boost answers FSRS forgetting; a memory endangered by its category's decay alone keeps
        # its stability, and the rehearsal (a simulated retrieval) restarts that decay
        fsrs_r = strength.retrieval_strength(elapsed_days=idle_days(ctx, rec), stability=rec.stability, cfg=fc)
        boosted = rec.stability * fc.rehearsal_boost if fsrs_r < fc.rehearsal_threshold else rec.stability
        marked = {**rec.metadata, REHEARSAL_MARK: iso(ctx.now)}
        r_after = strength.retrieval_strength_of(
            dataclasses.replace(rec, metadata=marked), now=ctx.now, cfg=ctx.settings.dynamics, stability=boosted
        )
        changes = {"stability": boosted, "retrieval_strength": r_after, "metadata": marked}
        data = {
            "retrievability_before": r,
            "retrievability_after": r_after,
            "stability_before": rec.stability,
            "stability_after": boosted,
        }
        return Write(rec, changes, "rehearsed", f"testing effect: R {r:.3f} < {fc.rehearsal_threshold}", data)

    done = apply(ctx, order, "rehearse", change, limit=ctx.settings.dream.forgetting.rehearse_max)
    report.changed = len(done)
    report.details = {"rehearsed": len(done), "candidates": len(order)}
    return report


# --- what these steps collect in the shared pass ---------------------------------------------------------


def _collect_emotional(ctx: DreamContext, found: list[MemoryRecord], rec: MemoryRecord) -> None:
    if _wants_emotional(ctx, rec):
        found.append(rec)


def _collect_utility(ctx: DreamContext, found: list[MemoryRecord], rec: MemoryRecord) -> None:
    if _utility_change(ctx, rec) is not None:
        found.append(rec)


def _collect_endangered(ctx: DreamContext, heap: list[tuple[float, str, MemoryRecord]], rec: MemoryRecord) -> None:
    """Keep the ``rehearse_max`` memories of lowest retrieval strength: a max-heap on R of (-R, id, record)."""
    r = _endangered(ctx, rec)
    cap = ctx.settings.dream.forgetting.rehearse_max
    if r is None or cap <= 0:
        return
    item = (-r, rec.id, rec)
    if len(heap) < cap:
        heapq.heappush(heap, item)
    elif item[:2] > heap[0][:2]:
        heapq.heapreplace(heap, item)


EMOTIONAL: Collector[list[MemoryRecord]] = Collector("emotional", list, _collect_emotional)
UTILITY: Collector[list[MemoryRecord]] = Collector("utility_decay", list, _collect_utility)
REHEARSE: Collector[list[tuple[float, str, MemoryRecord]]] = Collector("rehearse", list, _collect_endangered)

STEPS: tuple[DreamStep, ...] = (
    DreamStep("emotional", step_emotional, (EMOTIONAL,)),
    DreamStep("replay", step_replay),
    DreamStep("utility_decay", step_utility_decay, (UTILITY,)),
    DreamStep("rehearse", step_rehearse, (REHEARSE,)),
)

__all__ = ["EMOTIONAL_MARK", "REHEARSAL_MARK", "REPLAY_MARK", "STEPS"]
