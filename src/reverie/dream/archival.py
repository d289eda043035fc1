"""Archival and the store tiers: archival of faded memories and stale facts, the lifecycle policy's heat/decay
scores and states, and migration between the hot and the cold store (by retention at its floor, by status, and
optionally by the lifecycle policy's tier routing).

Pinned, immutable and flashbulb memories are never archived or moved cold; candidates come from the run's shared
pass (:mod:`reverie.dream.scope_pass`).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from reverie.dream.context import Collector, DreamContext, DreamStep, StepReport, Write
from reverie.dream.scope_pass import HOT, LIGHT_OMIT, anchored, apply, idle_days, scope_pass, utility_now
from reverie.dynamics import lifecycle, promotion, strength
from reverie.dynamics import retention as retention_mod
from reverie.dynamics._util import days_between
from reverie.model import MemoryRecord, Status, StoreTier

# --- archival and the lifecycle policy ---------------------------------------------------------------------


def _fact_archival(ctx: DreamContext, rec: MemoryRecord) -> bool:
    """Fact archival: > 90 days old, importance < 0.3, accessed at most twice, not protected."""
    lc = ctx.settings.dream.forgetting
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
    feedback = 2.0 * utility_now(ctx, rec) - 1.0
    disputed = rec.verification_state == "disputed"
    since_access = idle_days(ctx, rec)
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
    step = ctx.settings.dream.forgetting.lifecycle_min_change
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
    lc = ctx.settings.dream.forgetting
    dyn = ctx.settings.dynamics
    report = StepReport("archive", details={"faded": 0, "stale_fact": 0, "lifecycle": {}})
    p = scope_pass(ctx)
    report.examined = p.examined
    found = p.of(ARCHIVABLE)
    for rule in ("faded", "stale_fact"):

        def change(rec: MemoryRecord, rule: str = rule) -> Write | None:
            if _archive_rule(ctx, rec) != rule:
                return None
            changes: dict[str, Any] = {"status": Status.ARCHIVED, "updated_at": ctx.now}
            if lc.archive_to_cold:
                changes["store"] = StoreTier.COLD
            hl = retention_mod.layer_half_life(layer=rec.layer, trust=rec.trust, cfg=dyn.retention)
            kept = retention_mod.retention(
                age_days=idle_days(ctx, rec), half_life_days=hl, access_count=rec.access_count, cfg=dyn.retention
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

        report.details[rule] = len(apply(ctx, found.by_rule.pop(rule, []), "archive", change))
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

    rescored = len(apply(ctx, found.take_rescored(), "archive", policy))
    report.details["lifecycle"] = {"rescored": rescored, "transitions": dict(states)}
    report.changed = report.details["faded"] + report.details["stale_fact"] + sum(states.values())
    return report


# --- cold migration (and the lifecycle policy's tier routing) ----------------------------------------------


def _at_floor_long_enough(ctx: DreamContext, rec: MemoryRecord) -> bool:
    """Retention has sat at its floor (within 0.001) for ``cold_migration_days``: it already was
    at the floor that many days ago (retention never rises without an access)."""
    lc = ctx.settings.dream.forgetting
    r = ctx.settings.dynamics.retention
    then = idle_days(ctx, rec) - lc.cold_migration_days
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
        age_days=idle_days(ctx, rec),
        importance=rec.importance,
        cfg=lc,
        feedback=2.0 * utility_now(ctx, rec) - 1.0,
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
    if ctx.settings.dream.forgetting.tier_routing:
        target = _tier_route(ctx, rec)
        if target != rec.store.value:
            return "low_value" if target == StoreTier.COLD.value else "high_value"
    return None


def step_cold_migration(ctx: DreamContext) -> StepReport:
    """Hot → cold migration by timestamps: dormant and archived memories go to the
    cold store at once; an active memory whose fading retention has sat at its floor for 7 days follows
    (core, pinned, immutable and flashbulb memories stay). Optional tier routing by value both ways."""
    lc = ctx.settings.dream.forgetting
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

    report.details["status"] = len(apply(ctx, stale, "cold_migration", by_status))
    p = scope_pass(ctx)
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

        report.details[rule] = len(apply(ctx, p.of(MOVABLE).pop(rule, []), "cold_migration", move))
    report.changed = sum(v for v in report.details.values() if isinstance(v, int))
    return report


# --- what these steps collect in the shared pass ---------------------------------------------------------


@dataclass(slots=True)
class Archivable:
    """Memories an archival rule applies to, by rule ('faded', 'stale_fact'), and (lifecycle policy on) the
    others whose heat/decay scores or state change."""

    by_rule: dict[str, list[MemoryRecord]] = field(default_factory=dict)
    rescored: list[MemoryRecord] = field(default_factory=list)

    def take_rescored(self) -> list[MemoryRecord]:
        found, self.rescored = self.rescored, []
        return found


def _collect_archivable(ctx: DreamContext, found: Archivable, rec: MemoryRecord) -> None:
    rule = _archive_rule(ctx, rec)
    if rule is not None:
        found.by_rule.setdefault(rule, []).append(rec)
    elif ctx.settings.dream.forgetting.lifecycle_policy and _lifecycle_change(ctx, rec) is not None:
        found.rescored.append(rec)


def _collect_movable(ctx: DreamContext, found: dict[str, list[MemoryRecord]], rec: MemoryRecord) -> None:
    rule = _cold_rule(ctx, rec)
    if rule is not None:
        found.setdefault(rule, []).append(rec)


ARCHIVABLE: Collector[Archivable] = Collector("archivable", Archivable, _collect_archivable)
MOVABLE: Collector[dict[str, list[MemoryRecord]]] = Collector("movable", dict, _collect_movable)

STEPS: tuple[DreamStep, ...] = (
    DreamStep("archive", step_archive, (ARCHIVABLE,)),
    DreamStep("cold_migration", step_cold_migration, (MOVABLE,)),
)

__all__ = ["ARCHIVABLE", "MOVABLE", "STEPS"]
