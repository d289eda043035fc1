"""Lifecycle dream steps (issue 6): emotional consolidation, synaptic replay, utility decay, rehearsal,
foresight expiry, redundancy, strategic forgetting, co-activation clustering, drift detection, archival,
cold migration and graph-edge confidence decay.

How they scale (100k memories in one scope): one read-only *pass* per run walks the scope once, reading
only the fields the rules need (:data:`LIGHT_OMIT` leaves out embeddings, inputs and the rest), and keeps
each step's candidates. A step then claims only its candidates, checks that each is still at the version
the pass read (re-reading the few that changed), re-checks its rule and writes in batches
(:meth:`~reverie.dream.DreamContext.write_many`: one compare-and-set per memory, one transaction per batch,
history for every transition). A memory that became eligible after the pass is handled by the next run.
No step compares pairs: redundancy asks the vector index, a bounded number of times per cycle.

Every rule's numbers come from ``settings.dynamics`` (the constants the engine shares) and
``settings.dream.lifecycle``; the math is :mod:`reverie.dynamics`. Pinned, immutable and flashbulb
memories are never forgotten, archived or moved cold; nothing is deleted (dormant memories move to the
cold store and ``Memory.reactivate`` brings them back).
"""

from __future__ import annotations

import bisect
import dataclasses
import heapq
import os
import re
import uuid
from collections import Counter, OrderedDict
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from reverie.codebase import code_path
from reverie.dream import DreamContext, Step, StepReport, Write
from reverie.dream.consolidate import made_by_dream
from reverie.dynamics import emotion, lifecycle, promotion, strength, tagging
from reverie.dynamics import retention as retention_mod
from reverie.dynamics._util import days_between
from reverie.dynamics.utility import floating_threshold, prunable_by_use, utility_at
from reverie.model import HistoryEvent, Layer, MemoryRecord, RelationType, Status, StoreTier, TemporalType
from reverie.store.base import Cluster, MemoryFilter

#: fields the lifecycle steps never read: a pass (and every re-read) leaves them out. A rule that starts
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

# metadata keys the steps keep on a memory (markers that make a step idempotent)
EMOTIONAL_MARK = "emotional_consolidated_at"
REPLAY_MARK = "replayed_at"
REHEARSAL_MARK = strength.REHEARSAL_MARK
DRIFT_SEEN = "drift_seen"


# ----------------------------------------------------------------------------------------
# shared plumbing: protection, claiming, the pass
# ----------------------------------------------------------------------------------------


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


def _forget_exempt(ctx: DreamContext, rec: MemoryRecord) -> bool:
    """A layer strategic forgetting leaves alone (``forget_exempt_layers``: codebase memories)."""
    return rec.layer.value in ctx.settings.dream.lifecycle.forget_exempt_layers


def _forget_protection(ctx: DreamContext, rec: MemoryRecord) -> str | None:
    """Anchors, the exempt layers, and the Cognitive Memory design's category minimum retention (corrections,
    preferences,
    entities are permanent)."""
    why = anchored(rec)
    if why is not None:
        return why
    if _forget_exempt(ctx, rec):
        return "exempt_layer"
    age = days_between(rec.created_at, ctx.now)
    if retention_mod.within_min_retention(category=rec.category, age_days=age, cfg=ctx.settings.dynamics.retention):
        return "min_retention"
    return None


def _light(
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


def _claimed(ctx: DreamContext, items: Sequence[Item], phase: str) -> Iterator[list[MemoryRecord]]:
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
            current.update(_light(ctx, [i for i in held if i not in current]))
            yield [current[i] for i in held if i in current]
        finally:
            ctx.store.release(ctx.owner, held)


def _apply(
    ctx: DreamContext,
    items: Sequence[Item],
    phase: str,
    change: Callable[[MemoryRecord], Write | None],
    limit: int | None = None,
) -> list[str]:
    """Claim the memories, ask ``change`` for each current copy, write the changes in batches; at most
    ``limit`` writes. Returns the ids written."""
    written: list[str] = []
    for batch in _claimed(ctx, items, phase):
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


def _iso(value: datetime) -> str:
    return value.isoformat()


def _parse(value: Any) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        return datetime.fromisoformat(value)
    except ValueError:
        return None


def _utility_now(ctx: DreamContext, rec: MemoryRecord) -> float:
    return utility_at(
        utility=rec.utility,
        updated_at=rec.utility_updated_at or rec.created_at,
        now=ctx.now,
        cfg=ctx.settings.dynamics.utility,
    )


def _idle_days(ctx: DreamContext, rec: MemoryRecord) -> float:
    return days_between(rec.last_accessed_at or rec.created_at, ctx.now)


def _dormant(ctx: DreamContext, rec: MemoryRecord, rule: str, reason: str, **data: Any) -> Write:
    """Forgotten = dormant, in the cold store, reactivatable (never deleted)."""
    changes = {"status": Status.DORMANT, "store": StoreTier.COLD, "updated_at": ctx.now}
    return Write(
        rec,
        changes,
        "forgotten",
        reason,
        {"rule": rule, "from_status": rec.status.value, "from_store": rec.store.value, **data},
    )


@dataclass(slots=True)
class _Pass:
    """Candidates of every pass-based step, from one read-only walk of the scope."""

    examined: int = 0
    users: set[str | None] = field(default_factory=set)
    emotional: list[MemoryRecord] = field(default_factory=list)
    utility: list[MemoryRecord] = field(default_factory=list)
    rehearse: list[tuple[float, str, MemoryRecord]] = field(default_factory=list)  # max-heap of (-R, id, rec)
    foresight: dict[str, list[MemoryRecord]] = field(default_factory=dict)
    protected_expiry: int = 0
    utility_floor: list[MemoryRecord] = field(default_factory=list)
    active_hot: Counter[str | None] = field(default_factory=Counter)
    #: per user: (utility, importance, last use, id, record); ids are unique, so records are never compared
    capacity: dict[str | None, list[tuple[float, float, float, str, MemoryRecord]]] = field(default_factory=dict)
    redundancy: list[tuple[str, str | None]] = field(default_factory=list)  # (id, user), id order
    #: per user: (sum of access counts, count) of its active memories outside the exempt layers (the
    #: floating pruning threshold is their mean)
    usage: dict[str | None, list[int]] = field(default_factory=dict)
    drift: list[MemoryRecord] = field(default_factory=list)
    archive: dict[str, list[MemoryRecord]] = field(default_factory=dict)
    lifecycle: list[MemoryRecord] = field(default_factory=list)
    cold: dict[str, list[MemoryRecord]] = field(default_factory=dict)


_PASSES: OrderedDict[tuple[str, str | None, bool], _Pass] = OrderedDict()
_BUDGETS: OrderedDict[str, int] = OrderedDict()
_KEEP = 8
_KEEP_PASSES = 2  # a pass holds its candidates' records: keep few (concurrent runs of one process)


def _remember(cache: OrderedDict[Any, Any], key: Any, value: Any, keep: int = _KEEP) -> None:
    cache[key] = value
    cache.move_to_end(key)
    while len(cache) > keep:
        cache.popitem(last=False)


def _pass(ctx: DreamContext) -> _Pass:
    """The run's pass (built by the first step that needs it; later steps of the run reuse it)."""
    key = (ctx.owner, ctx.user_id, ctx.all_users)
    found = _PASSES.get(key)
    if found is not None:
        return found
    p = _Pass()
    size = max(ctx.settings.dream.batch_size, 2000)
    for batch in ctx.store.scan(ctx.scope(statuses=None, stores=None), batch_size=size, omit=LIGHT_OMIT):
        for rec in batch:
            p.examined += 1
            p.users.add(rec.user_id)
            _visit_early(ctx, p, rec)
            _visit_forget(ctx, p, rec)
            _visit_late(ctx, p, rec)
    _remember(_PASSES, key, p, _KEEP_PASSES)
    return p


def _visit_early(ctx: DreamContext, p: _Pass, rec: MemoryRecord) -> None:
    """Candidates of emotional consolidation, utility decay, rehearsal and expiry."""
    if _wants_emotional(ctx, rec):
        p.emotional.append(rec)
    if _utility_change(ctx, rec) is not None:
        p.utility.append(rec)
    r = _endangered(ctx, rec)
    cap = ctx.settings.dream.lifecycle.rehearse_max
    if r is not None and cap > 0:
        item = (-r, rec.id, rec)  # keep the lowest R: a max-heap on R of size rehearse_max
        if len(p.rehearse) < cap:
            heapq.heappush(p.rehearse, item)
        elif item[:2] > p.rehearse[0][:2]:
            heapq.heapreplace(p.rehearse, item)
    kind = _expiry_kind(ctx, rec)
    if kind is not None:
        if anchored(rec) is not None:
            p.protected_expiry += 1
        else:
            p.foresight.setdefault(kind, []).append(rec)


def _visit_forget(ctx: DreamContext, p: _Pass, rec: MemoryRecord) -> None:
    """Candidates of the utility floor, capacity trim and redundancy (active memories outside the layers
    forgetting leaves alone)."""
    if rec.status is not Status.ACTIVE or _forget_exempt(ctx, rec):
        return
    used = p.usage.setdefault(rec.user_id, [0, 0])
    used[0] += rec.access_count
    used[1] += 1
    if _below_utility_floor(ctx, rec):
        p.utility_floor.append(rec)
    if rec.store is StoreTier.HOT:
        p.active_hot[rec.user_id] += 1
        if _forget_protection(ctx, rec) is None:
            last = (rec.last_accessed_at or rec.created_at).timestamp()
            p.capacity.setdefault(rec.user_id, []).append((_utility_now(ctx, rec), rec.importance, last, rec.id, rec))
            p.redundancy.append((rec.id, rec.user_id))


def _visit_late(ctx: DreamContext, p: _Pass, rec: MemoryRecord) -> None:
    """Candidates of drift detection, archival, the lifecycle policy and cold migration."""
    lc = ctx.settings.dream.lifecycle
    if rec.status is Status.ACTIVE and _drift_check(rec, lc.drift_project_root, lc.drift_max_paths) is not None:
        p.drift.append(rec)
    rule = _archive_rule(ctx, rec)
    if rule is not None:
        p.archive.setdefault(rule, []).append(rec)
    elif lc.lifecycle_policy and _lifecycle_change(ctx, rec) is not None:
        p.lifecycle.append(rec)
    cold = _cold_rule(ctx, rec)
    if cold is not None:
        p.cold.setdefault(cold, []).append(rec)


# ----------------------------------------------------------------------------------------
# emotional consolidation
# ----------------------------------------------------------------------------------------


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
    p = _pass(ctx)
    report.examined = p.examined
    tagged: set[str] = set()

    def change(rec: MemoryRecord) -> Write | None:
        if not _wants_emotional(ctx, rec):
            return None
        boosted = emotion.flashbulb_stability(stability=rec.stability, cfg=cfg)
        changes: dict[str, Any] = {
            "stability": boosted,
            "metadata": {**rec.metadata, "flashbulb": True, EMOTIONAL_MARK: _iso(ctx.now)},
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

    done = _apply(ctx, p.emotional, "emotional", change)
    p.emotional = []  # consumed: the pass holds no records it no longer needs
    report.changed = len(done)
    report.details.update(boosted=len(done), tagged=len(tagged & set(done)))
    return report


# ----------------------------------------------------------------------------------------
# synaptic replay
# ----------------------------------------------------------------------------------------


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
    in_scope = _light(ctx, sorted(latest), ctx.scope(statuses=ACTIVE, stores=None))
    report.examined = len(in_scope)

    def due(rec: MemoryRecord) -> bool:
        marked = _parse(rec.metadata.get(REPLAY_MARK))
        return rec.status is Status.ACTIVE and (marked is None or marked < latest[rec.id])

    def change(rec: MemoryRecord) -> Write | None:
        if not due(rec):
            return None
        boosted = tagging.hebbian_stability(stability=rec.stability, cfg=tag_cfg)
        changes = {"stability": boosted, "metadata": {**rec.metadata, REPLAY_MARK: _iso(ctx.now)}}
        data = {"pairs": partners[rec.id], "stability_before": rec.stability, "stability_after": boosted}
        return Write(rec, changes, "replayed", "synaptic replay of co-activated pairs", data)

    done = _apply(ctx, [i for i, r in in_scope.items() if due(r)], "replay", change)
    report.details["tags_removed"] = ctx.store.prune_tags(ctx.now)
    report.details.update(pairs=len(pairs), strengthened=len(done))
    report.changed = len(done) + report.details["tags_removed"]
    return report


# ----------------------------------------------------------------------------------------
# utility decay
# ----------------------------------------------------------------------------------------


def _utility_change(ctx: DreamContext, rec: MemoryRecord) -> float | None:
    if rec.status is not Status.ACTIVE:
        return None
    drifted = _utility_now(ctx, rec)
    return drifted if abs(drifted - rec.utility) >= ctx.settings.dream.lifecycle.utility_min_change else None


def step_utility_decay(ctx: DreamContext) -> StepReport:
    """Utility drifts toward the 0.5 prior, ``u + (0.5 - u)·(1 - exp(-0.01·days))``
    , materialised from ``utility_updated_at`` (lazy: re-running never compounds)."""
    report = StepReport("utility_decay")
    p = _pass(ctx)
    report.examined = p.examined

    def change(rec: MemoryRecord) -> Write | None:
        drifted = _utility_change(ctx, rec)
        if drifted is None:
            return None
        return Write(rec, {"utility": drifted, "utility_updated_at": ctx.now})

    report.changed = len(_apply(ctx, p.utility, "utility_decay", change))
    p.utility = []
    return report


# ----------------------------------------------------------------------------------------
# rehearsal (the testing effect)
# ----------------------------------------------------------------------------------------


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
    last = _parse(rec.metadata.get(REHEARSAL_MARK))
    if last is not None and days_between(last, ctx.now) < ctx.settings.dream.lifecycle.rehearse_interval_days:
        return None
    return r


def step_rehearse(ctx: DreamContext) -> StepReport:
    """Testing effect: endangered memories (retrieval strength < 0.3: FSRS R times the category
    decay at the tier's rate), most endangered first, at most 50 per
    cycle, get a stability boost ×1.5 (a simulated successful retrieval)."""
    report = StepReport("rehearse")
    fc = ctx.settings.dynamics.fsrs
    p = _pass(ctx)
    report.examined = p.examined
    order = [item[2] for item in sorted(p.rehearse, key=lambda item: (-item[0], item[1]))]

    def change(rec: MemoryRecord) -> Write | None:
        r = _endangered(ctx, rec)
        if r is None:
            return None
        # the stability boost answers FSRS forgetting; a memory endangered by its category's decay alone keeps
        # its stability, and the rehearsal (a simulated retrieval) restarts that decay
        fsrs_r = strength.retrieval_strength(elapsed_days=_idle_days(ctx, rec), stability=rec.stability, cfg=fc)
        boosted = rec.stability * fc.rehearsal_boost if fsrs_r < fc.rehearsal_threshold else rec.stability
        marked = {**rec.metadata, REHEARSAL_MARK: _iso(ctx.now)}
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

    done = _apply(ctx, order, "rehearse", change, limit=ctx.settings.dream.lifecycle.rehearse_max)
    p.rehearse = []
    report.changed = len(done)
    report.details = {"rehearsed": len(done), "candidates": len(order)}
    return report


# ----------------------------------------------------------------------------------------
# foresight expiry and the lifecycle policy's expiry rules
# ----------------------------------------------------------------------------------------


def _commitment_resolved_at(ctx: DreamContext, rec: MemoryRecord) -> datetime | None:
    lc = ctx.settings.dream.lifecycle
    if rec.category not in lc.commitment_categories:
        return None
    if rec.metadata.get("commitment_state") in lc.commitment_resolved_states:
        return _parse(rec.metadata.get("resolved_at")) or rec.updated_at
    if rec.temporal_type is TemporalType.TIME_BOUNDED and rec.valid_until is not None and rec.valid_until <= ctx.now:
        return rec.valid_until
    return None


def _expiry_kind(ctx: DreamContext, rec: MemoryRecord) -> str | None:
    """Which expiry rule applies to an active memory: 'foresight', 'speculative', 'commitment' or None."""
    if rec.status is not Status.ACTIVE:
        return None
    lc = ctx.settings.dream.lifecycle
    resolved = _commitment_resolved_at(ctx, rec)
    if resolved is not None:  # a resolved commitment stays until its decay period has passed, then expires
        return "commitment" if days_between(resolved, ctx.now) >= lc.commitment_decay_days else None
    if rec.temporal_type is TemporalType.TIME_BOUNDED and rec.valid_until is not None and rec.valid_until <= ctx.now:
        return "foresight"
    confirmed = rec.confirmations > 0 or rec.verification_state == "user_confirmed"
    if lc.speculative_expiry and lifecycle.speculative_expired(
        confidence=rec.confidence,
        age_days=days_between(rec.created_at, ctx.now),
        confirmed=confirmed,
        cfg=ctx.settings.dynamics.lifecycle,
    ):
        return "speculative"
    return None


_EXPIRY_REASONS = {
    "foresight": "foresight expiry: time-bounded and past valid_until",
    "speculative": "unconfirmed speculative memory past its 30-day TTL",
    "commitment": "commitment decay: resolved commitment past its decay days",
}


def step_foresight(ctx: DreamContext) -> StepReport:
    """Time-bounded memories past ``valid_until`` → superseded; unconfirmed speculative memories
    after 30 days and resolved commitments after 90 days → expired (the lifecycle design deletes
    them; reverie keeps them). Pinned, immutable and flashbulb memories are left alone."""
    report = StepReport("foresight")
    p = _pass(ctx)
    report.examined = p.examined
    counts: Counter[str] = Counter()
    for kind in ("foresight", "speculative", "commitment"):

        def change(rec: MemoryRecord, kind: str = kind) -> Write | None:
            if _expiry_kind(ctx, rec) != kind or anchored(rec) is not None:
                return None
            status = Status.SUPERSEDED if kind == "foresight" else Status.EXPIRED
            changes = {"status": status, "valid_until": rec.valid_until or ctx.now, "updated_at": ctx.now}
            return Write(rec, changes, status.value, _EXPIRY_REASONS[kind], {"rule": kind})

        counts[kind] = len(_apply(ctx, p.foresight.pop(kind, []), "foresight", change))
    report.changed = sum(counts.values())
    report.details = {**{k: counts[k] for k in _EXPIRY_REASONS}, "protected": p.protected_expiry}
    return report


# ----------------------------------------------------------------------------------------
# redundancy — also strategic forgetting rule 4
# ----------------------------------------------------------------------------------------


def redundant(kept: str, other: str, *, similarity: float, threshold: float, max_new_words: int) -> bool:
    """Redundancy: cosine above the profile's threshold, and ``other`` is a duplicate of ``kept``
    rather than an elaboration (at most ``max_new_words`` content words ``kept`` lacks, none of them a
    number) or a contradiction (a changed value, a reversal: the Cognitive Memory design's contradiction heuristics)."""
    from reverie.text.updates import contradicts
    from reverie.text.words import new_words

    if similarity <= threshold:
        return False
    if contradicts(kept, other) or contradicts(other, kept):
        return False
    added = new_words(kept, other)
    if any(ch.isdigit() for word in added for ch in word):  # "room 101" / "room 102": another value
        return False
    return len(added) <= max_new_words


def _budget(ctx: DreamContext) -> int:
    return _BUDGETS.get(ctx.owner, ctx.settings.dream.lifecycle.redundancy_max_comparisons)


def _keep_order(ctx: DreamContext, rec: MemoryRecord) -> tuple[float, float, int, float, str]:
    """Keep the higher-utility memory (ties: importance, accesses, then the older one)."""
    return (_utility_now(ctx, rec), rec.importance, rec.access_count, -rec.created_at.timestamp(), rec.id)


def _redundancy(ctx: DreamContext, rule: str, details: dict[str, Any]) -> int:
    """Up to the cycle's remaining comparisons: nearest active neighbour of the next memories after the
    cursor; a redundant pair leaves the lower-utility memory dormant. Returns how many went dormant."""
    lc = ctx.settings.dream.lifecycle
    budget = _budget(ctx)
    candidates = _pass(ctx).redundancy
    if budget <= 0 or not candidates:
        return 0
    key = f"dream:redundancy:cursor:{'*' if ctx.all_users else ctx.user_id or ''}"
    cursor = ctx.store.get_state(key)
    start = bisect.bisect_right([mid for mid, _ in candidates], cursor if isinstance(cursor, str) else "")
    order = (candidates[start:] + candidates[:start])[:budget]
    threshold = lc.redundancy_threshold(ctx.profile)
    vectors = ctx.store.embeddings([mid for mid, _ in order])
    gone: set[str] = set()
    compared = dormant = 0
    for mid, user in order:
        compared += 1
        vec = vectors.get(mid)
        if vec is None or mid in gone:
            continue
        hits = ctx.store.vector_search(vec, MemoryFilter(user_id=user, statuses=ACTIVE, stores=HOT), 2)
        other = next((h for h in hits if h.id != mid and h.id not in gone), None)
        if other is None or other.score <= threshold:
            continue
        for batch in _claimed(ctx, [mid, other.id], "redundancy"):
            pair = {r.id: r for r in batch}
            if len(pair) < 2 or any(
                r.status is not Status.ACTIVE or r.store is not StoreTier.HOT for r in pair.values()
            ):
                continue
            if any(made_by_dream(r) for r in pair.values()):
                # a summary, pattern or card restates memories; it never makes one of them redundant
                details["derived"] = details.get("derived", 0) + 1
                continue
            kept, loser = sorted(pair.values(), key=lambda r: _keep_order(ctx, r), reverse=True)
            if _forget_protection(ctx, loser) is not None:
                details["protected"] = details.get("protected", 0) + 1
                continue
            if not redundant(
                kept.content,
                loser.content,
                similarity=other.score,
                threshold=threshold,
                max_new_words=lc.redundancy_max_new_words,
            ):
                details["not_duplicates"] = details.get("not_duplicates", 0) + 1
                continue
            reason = f"redundancy: cosine {other.score:.3f} > {threshold} with {kept.id}, lower utility"
            w = _dormant(ctx, loser, rule, reason, kept=kept.id, similarity=round(other.score, 4))
            w.changes["metadata"] = {**loser.metadata, "redundant_with": kept.id}
            if ctx.write_many([w]):
                gone.add(loser.id)
                dormant += 1
    _remember(_BUDGETS, ctx.owner, budget - compared)
    ctx.store.set_state(key, order[-1][0])
    details["compared"] = details.get("compared", 0) + compared
    return dormant


def step_redundancy(ctx: DreamContext) -> StepReport:
    """Cosine > 0.9 (per embedder profile) → keep the higher-utility memory, the other
    goes dormant; at most 50 comparisons per cycle, resuming where the last cycle stopped."""
    report = StepReport("redundancy", details={"compared": 0})
    report.changed = _redundancy(ctx, "redundancy", report.details)
    report.examined = report.details["compared"]
    report.details["threshold"] = ctx.settings.dream.lifecycle.redundancy_threshold(ctx.profile)
    return report


# ----------------------------------------------------------------------------------------
# strategic forgetting (five ordered rules)
# ----------------------------------------------------------------------------------------


def _below_utility_floor(ctx: DreamContext, rec: MemoryRecord) -> bool:
    lc = ctx.settings.dream.lifecycle
    return (
        rec.status is Status.ACTIVE
        and _utility_now(ctx, rec) < lc.utility_floor
        and _idle_days(ctx, rec) >= lc.utility_floor_idle_days
        and _forget_protection(ctx, rec) is None
    )


def _usage_threshold(ctx: DreamContext, user: str | None) -> float | None:
    """The floating pruning threshold of a user (the mean access count of its active memories), or None
    when ``floating_threshold`` is off."""
    if not ctx.settings.dream.lifecycle.floating_threshold:
        return None
    total, count = _pass(ctx).usage.get(user, [0, 0])
    return floating_threshold(total_accesses=total, count=count)


def _used_above_average(ctx: DreamContext, rec: MemoryRecord) -> bool:
    threshold = _usage_threshold(ctx, rec.user_id)
    return threshold is not None and not prunable_by_use(access_count=rec.access_count, threshold=threshold)


def _forget_contradictions(ctx: DreamContext) -> int:
    """Rule 1: of two active memories joined by a ``contradicts`` relation, the older goes dormant."""
    rels = ctx.store.scope_relations(ctx.scope(statuses=None, stores=None), types=frozenset({RelationType.CONTRADICTS}))
    if not rels:
        return 0
    recs = _light(ctx, sorted({r.src_id for r in rels} | {r.dst_id for r in rels}))
    older: dict[str, str] = {}
    for rel in rels:
        a, b = recs.get(rel.src_id), recs.get(rel.dst_id)
        if a is None or b is None or a.status is not Status.ACTIVE or b.status is not Status.ACTIVE:
            continue
        old, new = sorted((a, b), key=lambda r: (r.created_at, r.id))
        older.setdefault(old.id, new.id)

    def change(rec: MemoryRecord) -> Write | None:
        if rec.status is not Status.ACTIVE or _forget_protection(ctx, rec) is not None:
            return None
        newer = older[rec.id]
        return _dormant(ctx, rec, "contradiction", f"contradiction cleanup: older side of {newer}", newer=newer)

    return len(_apply(ctx, sorted(older), "forget", change))


def _trimmed_layers(ctx: DreamContext) -> frozenset[Layer]:
    exempt = ctx.settings.dream.lifecycle.forget_exempt_layers
    return frozenset(layer for layer in Layer if layer.value not in exempt)


def _forget_capacity(ctx: DreamContext, details: dict[str, Any]) -> int:
    """Rule 5: a user scope with more than 500 active hot memories keeps its 450 highest-utility ones."""
    lc = ctx.settings.dream.lifecycle
    p = _pass(ctx)
    total = 0
    for user, seen in p.active_hot.items():
        if seen <= lc.capacity_target:
            continue
        count = ctx.store.count(MemoryFilter(user_id=user, statuses=ACTIVE, stores=HOT, layers=_trimmed_layers(ctx)))
        if count <= lc.capacity_max:
            continue
        excess = count - lc.capacity_target
        # the memories used more than average (the floating threshold) are trimmed last
        ranked = [
            c[4] for c in sorted(p.capacity.get(user, []), key=lambda c: (_used_above_average(ctx, c[4]), *c[:4]))
        ]
        reason = f"capacity trim: {count} active > {lc.capacity_max}, trimmed to {lc.capacity_target}"

        def change(rec: MemoryRecord, reason: str = reason) -> Write | None:
            if rec.status is not Status.ACTIVE or rec.store is not StoreTier.HOT:
                return None
            if _forget_protection(ctx, rec) is not None:
                return None
            return _dormant(ctx, rec, "capacity", reason, utility=round(_utility_now(ctx, rec), 4))

        # the lowest-ranked first, each round written in id order (the store's order: neighbouring rows
        # share pages) instead of utility order; a round short of the excess (a memory protected or
        # changed meanwhile) takes the next ones in rank
        trimmed, start = 0, 0
        while trimmed < excess and start < len(ranked):
            take = ranked[start : start + excess - trimmed]
            start += len(take)
            take.sort(key=lambda r: r.id)
            trimmed += len(_apply(ctx, take, "forget", change))
        if trimmed < excess:
            details.setdefault("capacity_short", {})[user or ""] = excess - trimmed
        total += trimmed
    return total


def step_forget(ctx: DreamContext) -> StepReport:
    """Strategic forgetting, its rules in order: contradiction cleanup, foresight expiry, utility
    floor (< 0.15 and 30+ days unused), redundancy, capacity trim (> 500 active → 450). Forgotten memories
    go dormant in the cold store (reactivatable); pinned, immutable, flashbulb memories and the Cognitive Memory
    design's
    permanent categories are never forgotten."""
    lc = ctx.settings.dream.lifecycle
    report = StepReport("forget", details={"rules": {}})
    p = _pass(ctx)
    report.examined = p.examined
    rules: dict[str, int] = {}
    for rule in lc.forget_rules:
        if rule == "contradiction":
            rules[rule] = _forget_contradictions(ctx)
        elif rule == "foresight":

            def expired(rec: MemoryRecord) -> Write | None:
                if _expiry_kind(ctx, rec) != "foresight" or _forget_protection(ctx, rec) is not None:
                    return None
                return _dormant(ctx, rec, "foresight", _EXPIRY_REASONS["foresight"])

            rules[rule] = len(_apply(ctx, p.foresight.pop("foresight", []), "forget", expired))
        elif rule == "utility_floor":
            spared: list[str] = []

            def floor(rec: MemoryRecord, spared: list[str] = spared) -> Write | None:
                if not _below_utility_floor(ctx, rec):
                    return None
                if _used_above_average(ctx, rec):
                    spared.append(rec.id)
                    return None
                u = _utility_now(ctx, rec)
                return _dormant(
                    ctx,
                    rec,
                    "utility_floor",
                    f"utility floor: utility {u:.3f} < "
                    f"{lc.utility_floor}, unused {_idle_days(ctx, rec):.0f} days, used "
                    f"{rec.access_count} times (average {_usage_threshold(ctx, rec.user_id) or 0:.2f})",
                    utility=round(u, 4),
                    access_count=rec.access_count,
                )

            rules[rule] = len(_apply(ctx, p.utility_floor, "forget", floor))
            if spared:
                report.details["spared_above_average_use"] = len(spared)
            p.utility_floor = []
        elif rule == "redundancy":
            rules[rule] = _redundancy(ctx, "redundancy", report.details)
        else:
            rules[rule] = _forget_capacity(ctx, report.details)
    report.details["rules"] = rules
    report.changed = sum(rules.values())
    return report


# ----------------------------------------------------------------------------------------
# co-activation clusters
# ----------------------------------------------------------------------------------------

CLUSTER_KIND = "coactivation"


def step_cluster(ctx: DreamContext) -> StepReport:
    """The energy model's "form clusters when weight exceeds threshold": memories joined by co-activation edges of
    weight > 3 (exclusive, configurable) form semantic clusters — connected groups, disjoint, stored in
    the clusters tables and kept up to date (a grown group keeps its cluster id)."""
    report = StepReport("cluster", details={"clusters": 0, "created": 0, "updated": 0, "merged": 0})
    tag_cfg = ctx.settings.dynamics.tagging
    edges = [
        e
        for e in ctx.store.coactivations(min_weight=tag_cfg.cluster_weight)
        if tagging.forms_cluster(weight=e.weight, cfg=tag_cfg)
    ]
    members = _light(
        ctx, sorted({e.a_id for e in edges} | {e.b_id for e in edges}), ctx.scope(statuses=None, stores=None)
    )
    report.examined = len(edges)
    parent: dict[str, str] = {}

    def root(x: str) -> str:
        while parent.setdefault(x, x) != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    weight: dict[str, float] = {}
    for e in edges:
        a, b = members.get(e.a_id), members.get(e.b_id)
        if a is None or b is None or a.user_id != b.user_id:
            continue
        parent[root(e.a_id)] = root(e.b_id)
        weight[e.a_id] = max(weight.get(e.a_id, 0.0), float(e.weight))
        weight[e.b_id] = max(weight.get(e.b_id, 0.0), float(e.weight))
    groups: dict[str, dict[str, float]] = {}
    for mid in weight:
        groups.setdefault(root(mid), {})[mid] = weight[mid]
    rule = f"co-activation weight {'>' if tag_cfg.cluster_exclusive else '>='} {tag_cfg.cluster_weight}"
    existing = ctx.store.clusters(ctx.user_id, all_users=ctx.all_users, kind=CLUSTER_KIND)
    owner_of = {mid: c for c in existing for mid in c.members}
    puts: list[Cluster] = []
    drop: list[str] = []
    joined: list[tuple[str, str]] = []
    for group in groups.values():
        user = members[next(iter(group))].user_id
        touching = sorted(
            {owner_of[m].id: owner_of[m] for m in group if m in owner_of}.values(), key=lambda c: (c.created_at, c.id)
        )
        meta = {"strength": max(group.values()), "rule": rule}
        if not touching:
            cluster = Cluster(str(uuid.uuid4()), user, CLUSTER_KIND, ctx.now, ctx.now, dict(group), metadata=meta)
            report.details["created"] += 1
        else:
            cluster = touching[0]
            drop.extend(c.id for c in touching[1:])
            report.details["merged"] += len(touching) - 1
            if cluster.members == group and cluster.metadata == meta and len(touching) == 1:
                continue
            cluster.members, cluster.metadata, cluster.updated_at = dict(group), meta, ctx.now
            report.details["updated"] += 1
        joined.extend((m, cluster.id) for m in group if m not in owner_of or owner_of[m].id != cluster.id)
        puts.append(cluster)
    with ctx.store.transaction():
        ctx.store.put_clusters(puts)
        ctx.store.delete_clusters(drop)
        ctx.store.add_history(
            [
                HistoryEvent(
                    m, "clustered", ctx.now, reason="co-activation cluster", actor="dream", data={"cluster": cid}
                )
                for m, cid in joined
            ]
        )
    report.details["clusters"] = len(groups)
    report.changed = len(puts) + len(drop)
    return report


# ----------------------------------------------------------------------------------------
# drift detection
# ----------------------------------------------------------------------------------------

#: an absolute (or ~) path of at least two components; not inside a URL, a fraction or "and/or"
_ABSOLUTE = re.compile(r"(?<![\w/.:~@-])(~?/(?:[\w.@+-]+/)+[\w.@+-]*[\w@+-])")
#: a relative path with a directory and a file extension ("src/app/main.py", "./conf/app.yaml")
_RELATIVE = re.compile(r"(?<![\w/.:~@-])((?:\.{1,2}/)*(?:[\w@+-][\w.@+-]*/)+[\w@+-][\w.@+-]*\.[A-Za-z0-9]{1,10})\b")


def named_paths(text: str, project_root: str | None) -> list[str]:
    """The file-system paths a memory names, resolved: absolute and ``~`` paths always, relative ones
    only against a configured project root (conservative: a bare word is never a path)."""
    if "/" not in text:
        return []
    found: list[str] = []
    for m in _ABSOLUTE.finditer(text):
        raw = m.group(1)
        if raw.startswith("~/"):
            raw = os.path.expanduser(raw)
            if raw.startswith("~"):
                continue
        found.append(os.path.normpath(raw))
    if project_root is not None:
        spans = [m.span(1) for m in _ABSOLUTE.finditer(text)]
        for m in _RELATIVE.finditer(text):
            if any(s <= m.start(1) < e for s, e in spans):
                continue
            found.append(os.path.normpath(os.path.join(project_root, m.group(1))))
    return list(dict.fromkeys(found))


def _drift_check(rec: MemoryRecord, root: str | None, max_paths: int) -> tuple[list[str], list[str]] | None:
    """(paths seen before that are gone now, paths existing now not yet recorded), or None when neither.

    A codebase memory's own file or directory (``Memory.ingest_code``) counts as seen: it existed when it
    was ingested."""
    own = code_path(rec)
    paths = list(dict.fromkeys([*([own] if own else []), *named_paths(rec.content, root)]))[:max_paths]
    if not paths:
        return None
    seen = set(rec.metadata.get(DRIFT_SEEN) or []) | ({own} if own else set())
    exists = {p for p in paths if os.path.exists(p)}
    gone = sorted(p for p in paths if p in seen and p not in exists)
    new = sorted(exists - seen)
    return (gone, new) if gone or new else None


def step_drift(ctx: DreamContext) -> StepReport:
    """Drift detection: a memory naming a file or directory that existed at an earlier
    dream and no longer does is invalidated (never deleted). Conservative: only absolute/~ paths (and
    relative ones under ``drift_project_root``), and only paths this engine has seen exist — a path of
    another machine is never taken for a dead reference. Pinned and immutable memories are reported only."""
    lc = ctx.settings.dream.lifecycle
    report = StepReport("drift", details={"invalidated": 0, "recorded": 0, "protected": 0})
    p = _pass(ctx)
    report.examined = p.examined
    invalid: set[str] = set()

    def change(rec: MemoryRecord) -> Write | None:
        found = _drift_check(rec, lc.drift_project_root, lc.drift_max_paths) if rec.status is Status.ACTIVE else None
        if found is None:
            return None
        gone, new = found
        seen = sorted(set(rec.metadata.get(DRIFT_SEEN) or []) | set(new))
        if gone and (rec.pinned or rec.immutable):
            report.details["protected"] += 1
            gone = []
        if gone:
            meta = {**rec.metadata, DRIFT_SEEN: seen, "drift_missing": gone}
            changes = {
                "status": Status.INVALIDATED,
                "valid_until": rec.valid_until or ctx.now,
                "updated_at": ctx.now,
                "metadata": meta,
            }
            reason = f"drift: {', '.join(gone[:3])} no longer exist{'s' if len(gone) == 1 else ''}"
            invalid.add(rec.id)
            return Write(rec, changes, "invalidated", reason, {"rule": "drift", "missing": gone})
        if not new:
            return None
        return Write(rec, {"metadata": {**rec.metadata, DRIFT_SEEN: seen}})

    done = set(_apply(ctx, p.drift, "drift", change))
    p.drift = []
    report.details["invalidated"] = len(done & invalid)
    report.details["recorded"] = len(done - invalid)
    report.changed = report.details["invalidated"]
    return report


# ----------------------------------------------------------------------------------------
# archival and the lifecycle policy
# ----------------------------------------------------------------------------------------


def _fact_archival(ctx: DreamContext, rec: MemoryRecord) -> bool:
    """Fact archival: > 90 days old, importance < 0.3, accessed at most twice, not protected."""
    lc = ctx.settings.dream.lifecycle
    return (
        lc.fact_archival
        and rec.status is Status.ACTIVE
        and anchored(rec) is None
        and not rec.core
        and rec.category not in lc.fact_archival_protected_categories
        and days_between(rec.created_at, ctx.now) > lc.fact_archival_age_days
        and rec.importance < lc.fact_archival_max_importance
        and rec.access_count <= lc.fact_archival_max_access_count
    )


def _archive_rule(ctx: DreamContext, rec: MemoryRecord) -> str | None:
    if promotion.archival_eligible(rec, now=ctx.now, cfg=ctx.settings.dynamics):
        return "faded"
    if _fact_archival(ctx, rec):
        return "stale_fact"
    return None


def _lifecycle_change(ctx: DreamContext, rec: MemoryRecord) -> dict[str, Any] | None:
    """Lifecycle policy: fresh heat/decay scores and the state they lead to (None: nothing to write)."""
    if rec.status is not Status.ACTIVE:
        return None
    lc = ctx.settings.dynamics.lifecycle
    feedback = 2.0 * _utility_now(ctx, rec) - 1.0
    disputed = rec.verification_state == "disputed"
    since_access = _idle_days(ctx, rec)
    heat = lifecycle.heat(
        confidence=rec.confidence,
        access_count=rec.access_count,
        age_days=since_access,
        importance=rec.importance,
        cfg=lc,
        feedback=feedback,
        disputed=disputed,
    )
    decay = lifecycle.decay_score(
        age_days=days_between(rec.created_at, ctx.now),
        stale_access_days=since_access,
        confidence=rec.confidence,
        heat_score=heat,
        cfg=lc,
        feedback=feedback,
    )
    state, why = lifecycle.lifecycle_transition(
        current_state=rec.lifecycle_state,
        heat_score=heat,
        decay=decay,
        verification_state=rec.verification_state,
        category=rec.category,
        policy_class=rec.policy_class,
        cfg=lc,
    )
    step = ctx.settings.dream.lifecycle.lifecycle_min_change
    moved = (
        rec.heat_score is None
        or rec.decay_score is None
        or abs(heat - rec.heat_score) >= step
        or abs(decay - rec.decay_score) >= step
    )
    if state == rec.lifecycle_state and not moved:
        return None
    return {"heat_score": heat, "decay_score": decay, "lifecycle_state": state, "why": why}


def step_archive(ctx: DreamContext) -> StepReport:
    """Archival: > 90 days old, retention < 0.15, importance < 0.3, fewer than 3 accesses →
    archived (semantic, procedural, codebase, pinned, immutable, flashbulb, core and permanent categories
    exempt), into the cold store; fact archival (opt-in). With ``lifecycle_policy`` on, also the
    lifecycle policy's heat/decay scores and lifecycle state (candidate → validated/active → stale → archived)."""
    lc = ctx.settings.dream.lifecycle
    dyn = ctx.settings.dynamics
    report = StepReport("archive", details={"faded": 0, "stale_fact": 0, "lifecycle": {}})
    p = _pass(ctx)
    report.examined = p.examined
    for rule in ("faded", "stale_fact"):

        def change(rec: MemoryRecord, rule: str = rule) -> Write | None:
            if _archive_rule(ctx, rec) != rule:
                return None
            changes: dict[str, Any] = {"status": Status.ARCHIVED, "updated_at": ctx.now}
            if lc.archive_to_cold:
                changes["store"] = StoreTier.COLD
            hl = retention_mod.layer_half_life(layer=rec.layer, trust=rec.trust, cfg=dyn.retention)
            kept = retention_mod.retention(
                age_days=_idle_days(ctx, rec), half_life_days=hl, access_count=rec.access_count, cfg=dyn.retention
            )
            pc = dyn.promotion
            reason = (
                f"archival: > {pc.archive_age_days:g} days, retention < {pc.archive_retention:g}, "
                f"importance < {pc.archive_importance:g}, < {pc.archive_accesses} accesses"
                if rule == "faded"
                else "fact archival: old, unimportant, rarely used"
            )
            return Write(
                rec,
                changes,
                "archived",
                reason,
                {
                    "rule": rule,
                    "retention": round(kept, 4),
                    "importance": round(promotion.archival_importance(rec, now=ctx.now, cfg=dyn), 4)
                    if rule == "faded"
                    else rec.importance,
                    "access_count": rec.access_count,
                },
            )

        report.details[rule] = len(_apply(ctx, p.archive.pop(rule, []), "archive", change))
    states: Counter[str] = Counter()

    def policy(rec: MemoryRecord) -> Write | None:
        found = _lifecycle_change(ctx, rec) if lc.lifecycle_policy else None
        if found is None:
            return None
        why = found.pop("why")
        if found["lifecycle_state"] == rec.lifecycle_state:
            return Write(rec, found)
        to = found["lifecycle_state"]
        states[to] += 1
        data = {"from": rec.lifecycle_state, "to": to, "heat": found["heat_score"], "decay": found["decay_score"]}
        return Write(rec, found, "lifecycle", f"lifecycle: {rec.lifecycle_state} → {to} ({why})", data)

    rescored = len(_apply(ctx, p.lifecycle, "archive", policy))
    p.lifecycle = []
    report.details["lifecycle"] = {"rescored": rescored, "transitions": dict(states)}
    report.changed = report.details["faded"] + report.details["stale_fact"] + sum(states.values())
    return report


# ----------------------------------------------------------------------------------------
# cold migration (and the lifecycle policy's tier routing)
# ----------------------------------------------------------------------------------------


def _at_floor_long_enough(ctx: DreamContext, rec: MemoryRecord) -> bool:
    """Retention has sat at its floor (within 0.001) for ``cold_migration_days``: it already was
    at the floor that many days ago (retention never rises without an access)."""
    lc = ctx.settings.dream.lifecycle
    r = ctx.settings.dynamics.retention
    then = _idle_days(ctx, rec) - lc.cold_migration_days
    if then < 0:
        return False
    dyn = ctx.settings.dynamics
    stability = strength.fading_stability(
        storage=rec.storage_strength, cfg=dyn.strength, new=dyn.retention.fading_stability_new
    )
    value = retention_mod.fading_retention(
        days=then,
        stability=stability,
        importance=rec.importance,
        beta_days=retention_mod.fading_beta(layer=rec.layer, core=rec.core, cfg=r),
        core=rec.core,
        cfg=r,
    )
    return value - retention_mod.fading_floor(core=rec.core, cfg=r) < lc.cold_floor_tolerance


def _tier_route(ctx: DreamContext, rec: MemoryRecord) -> str:
    lc = ctx.settings.dynamics.lifecycle
    value = lifecycle.tier_value(
        confidence=rec.confidence,
        access_count=rec.access_count,
        age_days=_idle_days(ctx, rec),
        importance=rec.importance,
        cfg=lc,
        feedback=2.0 * _utility_now(ctx, rec) - 1.0,
        category=rec.category,
        verification_state=rec.verification_state,
    )
    target, _ = lifecycle.tier_transition(
        current_store=rec.store.value, value=value, age_days=days_between(rec.created_at, ctx.now), cfg=lc
    )
    return target


def _cold_rule(ctx: DreamContext, rec: MemoryRecord) -> str | None:
    """Which rule moves an active memory between stores now: 'retention_floor', 'low_value' (hot → cold)
    or 'high_value' (cold → hot), or None."""
    if rec.status is not Status.ACTIVE or rec.core or anchored(rec) is not None:
        return None
    if rec.store is StoreTier.HOT and _at_floor_long_enough(ctx, rec):
        return "retention_floor"
    if ctx.settings.dream.lifecycle.tier_routing:
        target = _tier_route(ctx, rec)
        if target != rec.store.value:
            return "low_value" if target == StoreTier.COLD.value else "high_value"
    return None


def step_cold_migration(ctx: DreamContext) -> StepReport:
    """Hot → cold migration by timestamps: dormant and archived memories go to the
    cold store at once; an active memory whose fading retention has sat at its floor for 7 days follows
    (core, pinned, immutable and flashbulb memories stay). Optional tier routing by value both ways."""
    lc = ctx.settings.dream.lifecycle
    report = StepReport("cold_migration", details={"status": 0, "retention_floor": 0, "low_value": 0, "high_value": 0})
    statuses = frozenset(Status(s) for s in lc.cold_statuses)
    stale: list[str] = []
    for batch in ctx.store.scan(
        ctx.scope(statuses=statuses, stores=HOT), batch_size=ctx.settings.dream.batch_size, omit=LIGHT_OMIT
    ):
        stale.extend(r.id for r in batch)

    def by_status(rec: MemoryRecord) -> Write | None:
        if rec.status not in statuses or rec.store is not StoreTier.HOT:
            return None
        return Write(
            rec,
            {"store": StoreTier.COLD, "updated_at": ctx.now},
            "cold_migrated",
            f"{rec.status.value} memories live in the cold store",
            {"rule": "status", "status": rec.status.value},
        )

    report.details["status"] = len(_apply(ctx, stale, "cold_migration", by_status))
    p = _pass(ctx)
    report.examined = p.examined + len(stale)
    reasons = {
        "retention_floor": f"retention at its floor for {lc.cold_migration_days:g} days",
        "low_value": "tier routing: value <= demotion threshold after the minimum age",
        "high_value": "tier routing: value >= promotion threshold",
    }
    for rule, reason in reasons.items():

        def move(rec: MemoryRecord, rule: str = rule, reason: str = reason) -> Write | None:
            if _cold_rule(ctx, rec) != rule:
                return None
            target = StoreTier.HOT if rule == "high_value" else StoreTier.COLD
            event = "hot_migrated" if target is StoreTier.HOT else "cold_migrated"
            return Write(rec, {"store": target, "updated_at": ctx.now}, event, reason, {"rule": rule})

        report.details[rule] = len(_apply(ctx, p.cold.pop(rule, []), "cold_migration", move))
    report.changed = sum(v for v in report.details.values() if isinstance(v, int))
    return report


# ----------------------------------------------------------------------------------------
# graph-edge confidence decay and relation pruning
# ----------------------------------------------------------------------------------------


def _decayed_edge(ctx: DreamContext, confidence: float, anchor: datetime) -> tuple[float, datetime] | None:
    """The materialised form of the lifecycle design's lazy edge decay: (confidence now, new anchor) such that
    ``edge_confidence_at`` from the new pair gives, at every later time, what it gives from the old one
    (the anchor moves on by the whole windows already applied; at the floor it moves to now)."""
    lc = ctx.settings.dynamics.lifecycle
    now_conf = lifecycle.edge_confidence_at(confidence=confidence, last_reinforced_at=anchor, now=ctx.now, cfg=lc)
    if abs(now_conf - confidence) < 1e-12:
        return None
    if now_conf <= min(lc.edge_decay_floor, confidence) + 1e-12:
        return now_conf, ctx.now
    windows = round((confidence - now_conf) / lc.edge_decay_per_window)
    return now_conf, anchor + timedelta(days=windows * lc.edge_decay_window_days)


def step_edge_decay(ctx: DreamContext) -> StepReport:
    """Graph-edge confidence decay, materialised: after the 90-day grace, −0.1 per window, floor
    0.1 (:func:`~reverie.dynamics.lifecycle.edge_confidence_at`; readers decaying lazily see the same
    value before and after). Then relation pruning per user: over 1,000 relations, the lowest-confidence
    prunable ones go down to 900 — supersedes, contradicts and causes are never pruned."""
    from reverie.edges import prune_scope

    report = StepReport("edge_decay", details={"decayed": 0, "below_traversal": 0, "pruned": 0})
    lc = ctx.settings.dynamics.lifecycle
    rels = ctx.store.scope_relations(ctx.scope(statuses=None, stores=None))
    report.examined = len(rels)
    changes: list[tuple[str, dict[str, Any]]] = []
    for rel in rels:
        anchor = rel.last_reinforced_at or rel.created_at
        found = _decayed_edge(ctx, rel.confidence, anchor)
        if found is None:
            continue
        conf, new_anchor = found
        meta = {**rel.metadata, "decayed_at": _iso(ctx.now)}
        meta.setdefault("observed_at", _iso(anchor))
        changes.append((rel.id, {"confidence": conf, "last_reinforced_at": new_anchor, "metadata": meta}))
        rel.confidence = conf
        if not lifecycle.edge_traversable(confidence=conf, cfg=lc):
            report.details["below_traversal"] += 1
    report.details["decayed"] = ctx.store.update_relations(changes)
    rel_cfg = ctx.settings.write.relations
    for user in sorted(_pass(ctx).users, key=lambda u: u or ""):
        report.details["pruned"] += prune_scope(ctx.store, user, rel_cfg)
    report.changed = report.details["decayed"] + report.details["pruned"]
    return report


# ----------------------------------------------------------------------------------------

STEPS: list[tuple[str, Step]] = [
    ("emotional", step_emotional),
    ("replay", step_replay),
    ("utility_decay", step_utility_decay),
    ("rehearse", step_rehearse),
    ("foresight", step_foresight),
    ("redundancy", step_redundancy),
    ("forget", step_forget),
    ("cluster", step_cluster),
    ("drift", step_drift),
    ("archive", step_archive),
    ("cold_migration", step_cold_migration),
    ("edge_decay", step_edge_decay),
]

__all__ = ["LIGHT_OMIT", "STEPS", "anchored", "named_paths", "redundant"]
