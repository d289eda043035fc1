"""Forgetting steps: foresight, speculative and commitment expiry, redundancy (near-duplicates go dormant) and
strategic forgetting with its ordered rules (contradiction cleanup, foresight expiry, utility floor,
redundancy, capacity trim).

Forgotten memories go dormant in the cold store, reactivatable; nothing is deleted. No step compares pairs:
redundancy asks the vector index, a bounded number of times per cycle. Candidates come from the run's shared
pass (:mod:`reverie.dream.scope_pass`).
"""

from __future__ import annotations

import bisect
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from reverie.dream.consolidate import made_by_dream
from reverie.dream.context import Collector, DreamContext, DreamStep, StepReport, Write
from reverie.dream.scope_pass import (
    ACTIVE,
    HOT,
    anchored,
    apply,
    claimed,
    forget_exempt,
    forget_protection,
    idle_days,
    light_records,
    parse_time,
    scope_pass,
    utility_now,
)
from reverie.dynamics import lifecycle
from reverie.dynamics._util import days_between
from reverie.dynamics.utility import floating_threshold, prunable_by_use
from reverie.model import Layer, MemoryRecord, RelationType, Status, StoreTier, TemporalType
from reverie.store.base import MemoryFilter


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


# --- foresight expiry and the lifecycle policy's expiry rules ----------------------------------------------


def _commitment_resolved_at(ctx: DreamContext, rec: MemoryRecord) -> datetime | None:
    lc = ctx.settings.dream.forgetting
    if rec.category not in lc.commitment_categories:
        return None
    if rec.metadata.get("commitment_state") in lc.commitment_resolved_states:
        return parse_time(rec.metadata.get("resolved_at")) or rec.updated_at
    if rec.temporal_type is TemporalType.TIME_BOUNDED and rec.valid_until is not None and rec.valid_until <= ctx.now:
        return rec.valid_until
    return None


def _expiry_kind(ctx: DreamContext, rec: MemoryRecord) -> str | None:
    """Which expiry rule applies to an active memory: 'foresight', 'speculative', 'commitment' or None."""
    if rec.status is not Status.ACTIVE:
        return None
    lc = ctx.settings.dream.forgetting
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
    p = scope_pass(ctx)
    report.examined = p.examined
    expiring = p.of(EXPIRING)
    counts: Counter[str] = Counter()
    for kind in ("foresight", "speculative", "commitment"):

        def change(rec: MemoryRecord, kind: str = kind) -> Write | None:
            if _expiry_kind(ctx, rec) != kind or anchored(rec) is not None:
                return None
            status = Status.SUPERSEDED if kind == "foresight" else Status.EXPIRED
            changes = {"status": status, "valid_until": rec.valid_until or ctx.now, "updated_at": ctx.now}
            return Write(rec, changes, status.value, _EXPIRY_REASONS[kind], {"rule": kind})

        counts[kind] = len(apply(ctx, expiring.by_kind.pop(kind, []), "foresight", change))
    report.changed = sum(counts.values())
    report.details = {**{k: counts[k] for k in _EXPIRY_REASONS}, "protected": expiring.protected}
    return report


# --- redundancy — also strategic forgetting rule 4 ---------------------------------------------------------


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


_BUDGET_KEY = "redundancy.comparisons_left"


def _budget(ctx: DreamContext) -> int:
    """The comparisons this run has left (the redundancy step and the forgetting rule share one budget)."""
    left = ctx.scratch.get(_BUDGET_KEY)
    return int(left) if left is not None else ctx.settings.dream.forgetting.redundancy_max_comparisons


def _keep_order(ctx: DreamContext, rec: MemoryRecord) -> tuple[float, float, int, float, str]:
    """Keep the higher-utility memory (ties: importance, accesses, then the older one)."""
    return (utility_now(ctx, rec), rec.importance, rec.access_count, -rec.created_at.timestamp(), rec.id)


def _redundancy(ctx: DreamContext, rule: str, details: dict[str, Any]) -> int:
    """Up to the cycle's remaining comparisons: nearest active neighbour of the next memories after the
    cursor; a redundant pair leaves the lower-utility memory dormant. Returns how many went dormant."""
    lc = ctx.settings.dream.forgetting
    budget = _budget(ctx)
    candidates = scope_pass(ctx).of(FORGETTABLE).redundancy
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
        for batch in claimed(ctx, [mid, other.id], "redundancy"):
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
            if forget_protection(ctx, loser) is not None:
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
    ctx.scratch[_BUDGET_KEY] = budget - compared
    ctx.store.set_state(key, order[-1][0])
    details["compared"] = details.get("compared", 0) + compared
    return dormant


def step_redundancy(ctx: DreamContext) -> StepReport:
    """Cosine > 0.9 (per embedder profile) → keep the higher-utility memory, the other
    goes dormant; at most 50 comparisons per cycle, resuming where the last cycle stopped."""
    report = StepReport("redundancy", details={"compared": 0})
    report.changed = _redundancy(ctx, "redundancy", report.details)
    report.examined = report.details["compared"]
    report.details["threshold"] = ctx.settings.dream.forgetting.redundancy_threshold(ctx.profile)
    return report


# --- strategic forgetting (five ordered rules) -------------------------------------------------------------


def _below_utility_floor(ctx: DreamContext, rec: MemoryRecord) -> bool:
    lc = ctx.settings.dream.forgetting
    return (
        rec.status is Status.ACTIVE
        and utility_now(ctx, rec) < lc.utility_floor
        and idle_days(ctx, rec) >= lc.utility_floor_idle_days
        and forget_protection(ctx, rec) is None
    )


def _usage_threshold(ctx: DreamContext, user: str | None) -> float | None:
    """The floating pruning threshold of a user (the mean access count of its active memories), or None
    when ``floating_threshold`` is off."""
    if not ctx.settings.dream.forgetting.floating_threshold:
        return None
    total, count = scope_pass(ctx).of(FORGETTABLE).usage.get(user, [0, 0])
    return floating_threshold(total_accesses=total, count=count)


def _used_above_average(ctx: DreamContext, rec: MemoryRecord) -> bool:
    threshold = _usage_threshold(ctx, rec.user_id)
    return threshold is not None and not prunable_by_use(access_count=rec.access_count, threshold=threshold)


def _forget_contradictions(ctx: DreamContext) -> int:
    """Rule 1: of two active memories joined by a ``contradicts`` relation, the older goes dormant."""
    rels = ctx.store.scope_relations(ctx.scope(statuses=None, stores=None), types=frozenset({RelationType.CONTRADICTS}))
    if not rels:
        return 0
    recs = light_records(ctx, sorted({r.src_id for r in rels} | {r.dst_id for r in rels}))
    older: dict[str, str] = {}
    for rel in rels:
        a, b = recs.get(rel.src_id), recs.get(rel.dst_id)
        if a is None or b is None or a.status is not Status.ACTIVE or b.status is not Status.ACTIVE:
            continue
        old, new = sorted((a, b), key=lambda r: (r.created_at, r.id))
        older.setdefault(old.id, new.id)

    def change(rec: MemoryRecord) -> Write | None:
        if rec.status is not Status.ACTIVE or forget_protection(ctx, rec) is not None:
            return None
        newer = older[rec.id]
        return _dormant(ctx, rec, "contradiction", f"contradiction cleanup: older side of {newer}", newer=newer)

    return len(apply(ctx, sorted(older), "forget", change))


def _trimmed_layers(ctx: DreamContext) -> frozenset[Layer]:
    exempt = ctx.settings.dream.forgetting.forget_exempt_layers
    return frozenset(layer for layer in Layer if layer.value not in exempt)


def _forget_capacity(ctx: DreamContext, details: dict[str, Any]) -> int:
    """Rule 5: a user scope with more than 500 active hot memories keeps its 450 highest-utility ones."""
    lc = ctx.settings.dream.forgetting
    p = scope_pass(ctx).of(FORGETTABLE)
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
            if forget_protection(ctx, rec) is not None:
                return None
            return _dormant(ctx, rec, "capacity", reason, utility=round(utility_now(ctx, rec), 4))

        # the lowest-ranked first, each round written in id order (the store's order: neighbouring rows
        # share pages) instead of utility order; a round short of the excess (a memory protected or
        # changed meanwhile) takes the next ones in rank
        trimmed, start = 0, 0
        while trimmed < excess and start < len(ranked):
            take = ranked[start : start + excess - trimmed]
            start += len(take)
            take.sort(key=lambda r: r.id)
            trimmed += len(apply(ctx, take, "forget", change))
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
    lc = ctx.settings.dream.forgetting
    report = StepReport("forget", details={"rules": {}})
    p = scope_pass(ctx)
    report.examined = p.examined
    rules: dict[str, int] = {}
    for rule in lc.forget_rules:
        if rule == "contradiction":
            rules[rule] = _forget_contradictions(ctx)
        elif rule == "foresight":

            def expired(rec: MemoryRecord) -> Write | None:
                if _expiry_kind(ctx, rec) != "foresight" or forget_protection(ctx, rec) is not None:
                    return None
                return _dormant(ctx, rec, "foresight", _EXPIRY_REASONS["foresight"])

            rules[rule] = len(apply(ctx, p.of(EXPIRING).by_kind.pop("foresight", []), "forget", expired))
        elif rule == "utility_floor":
            spared: list[str] = []

            def floor(rec: MemoryRecord, spared: list[str] = spared) -> Write | None:
                if not _below_utility_floor(ctx, rec):
                    return None
                if _used_above_average(ctx, rec):
                    spared.append(rec.id)
                    return None
                u = utility_now(ctx, rec)
                return _dormant(
                    ctx,
                    rec,
                    "utility_floor",
                    f"utility floor: utility {u:.3f} < "
                    f"{lc.utility_floor}, unused {idle_days(ctx, rec):.0f} days, used "
                    f"{rec.access_count} times (average {_usage_threshold(ctx, rec.user_id) or 0:.2f})",
                    utility=round(u, 4),
                    access_count=rec.access_count,
                )

            rules[rule] = len(apply(ctx, p.of(FORGETTABLE).take_floor(), "forget", floor))
            if spared:
                report.details["spared_above_average_use"] = len(spared)
        elif rule == "redundancy":
            rules[rule] = _redundancy(ctx, "redundancy", report.details)
        else:
            rules[rule] = _forget_capacity(ctx, report.details)
    report.details["rules"] = rules
    report.changed = sum(rules.values())
    return report


# --- what these steps collect in the shared pass ---------------------------------------------------------


@dataclass(slots=True)
class Expiring:
    """Active memories an expiry rule applies to, by rule ('foresight', 'speculative', 'commitment'), and how many
    of them are anchored (left alone)."""

    by_kind: dict[str, list[MemoryRecord]] = field(default_factory=dict)
    protected: int = 0


def _collect_expiring(ctx: DreamContext, found: Expiring, rec: MemoryRecord) -> None:
    kind = _expiry_kind(ctx, rec)
    if kind is None:
        return
    if anchored(rec) is not None:
        found.protected += 1
    else:
        found.by_kind.setdefault(kind, []).append(rec)


@dataclass(slots=True)
class Forgettable:
    """Candidates of the utility floor, the capacity trim and redundancy: active memories outside the layers
    forgetting leaves alone."""

    utility_floor: list[MemoryRecord] = field(default_factory=list)
    active_hot: Counter[str | None] = field(default_factory=Counter)
    #: per user: (utility, importance, last use, id, record); ids are unique, so records are never compared
    capacity: dict[str | None, list[tuple[float, float, float, str, MemoryRecord]]] = field(default_factory=dict)
    redundancy: list[tuple[str, str | None]] = field(default_factory=list)  # (id, user), id order
    #: per user: (sum of access counts, count) of its active memories outside the exempt layers (the
    #: floating pruning threshold is their mean)
    usage: dict[str | None, list[int]] = field(default_factory=dict)

    def take_floor(self) -> list[MemoryRecord]:
        """The utility-floor candidates, handed over once."""
        found, self.utility_floor = self.utility_floor, []
        return found


def _collect_forgettable(ctx: DreamContext, p: Forgettable, rec: MemoryRecord) -> None:
    if rec.status is not Status.ACTIVE or forget_exempt(ctx, rec):
        return
    used = p.usage.setdefault(rec.user_id, [0, 0])
    used[0] += rec.access_count
    used[1] += 1
    if _below_utility_floor(ctx, rec):
        p.utility_floor.append(rec)
    if rec.store is StoreTier.HOT:
        p.active_hot[rec.user_id] += 1
        if forget_protection(ctx, rec) is None:
            last = (rec.last_accessed_at or rec.created_at).timestamp()
            p.capacity.setdefault(rec.user_id, []).append((utility_now(ctx, rec), rec.importance, last, rec.id, rec))
            p.redundancy.append((rec.id, rec.user_id))


EXPIRING: Collector[Expiring] = Collector("expiring", Expiring, _collect_expiring)
FORGETTABLE: Collector[Forgettable] = Collector("forgettable", Forgettable, _collect_forgettable)

STEPS: tuple[DreamStep, ...] = (
    DreamStep("foresight", step_foresight, (EXPIRING,)),
    DreamStep("redundancy", step_redundancy, (FORGETTABLE,)),
    DreamStep("forget", step_forget, (EXPIRING, FORGETTABLE)),
)

__all__ = ["EXPIRING", "FORGETTABLE", "STEPS", "redundant"]
