"""Upkeep steps: energy and retrieval-strength decay, layer promotion and demotion, the core flag, working-memory
expiry, pruning of old logs and claims, and the topic index."""

from __future__ import annotations

from collections import Counter

from reverie.dream.context import DreamContext, DreamStep, StepReport, Write, cutoff, omit_except
from reverie.dynamics import energy as energy_mod
from reverie.dynamics import promotion, strength
from reverie.model import Layer, Status
from reverie.text.classify import sub_tier_for

_EPS = 1e-9
#: what each step reads (a pass over a large scope decodes only these columns)
_DECAY_OMIT = omit_except(
    "layer",
    "status",
    "category",
    "energy",
    "energy_updated_at",
    "created_at",
    "last_accessed_at",
    "stability",
    "retrieval_strength",
    "metadata",
)
#: promotion, demotion and expiry rules (dynamics/promotion.py) and the shared-entity rule's entities
_PROMOTE_OMIT = omit_except(
    "user_id",
    "entities",
    "layer",
    "status",
    "category",
    "created_at",
    "last_accessed_at",
    "access_count",
    "energy",
    "energy_updated_at",
    "importance",
    "utility",
    "storage_strength",
    "trust",
    "pinned",
    "immutable",
    "core",
    "flashbulb",
    "valid_until",
    "memory_kind",
    "data_source",
    "write_source",
    "source",
)


def step_decay(ctx: DreamContext) -> StepReport:
    """The energy model's "apply decay to all memories": materialise each active memory's energy and its
    retrieval strength at ``now`` (lazy values made explicit, never decayed twice). The retrieval strength
    is FSRS retrievability times the category decay scaled by the tier multiplier
    (:func:`reverie.dynamics.strength.decayed_retrieval_strength`, the value ``explain_strength`` shows);
    the rehearsal step picks endangered memories by it."""
    report = StepReport("decay", details={"batches": 0})
    cfg = ctx.settings.dynamics
    for batch in ctx.claimed_batches(ctx.scope(stores=None), "decay", omit=_DECAY_OMIT):
        report.details["batches"] += 1
        writes: list[Write] = []
        for rec in batch:
            report.examined += 1
            e_now = energy_mod.energy_at(
                energy=rec.energy,
                updated_at=rec.energy_updated_at or rec.created_at,
                now=ctx.now,
                layer=rec.layer,
                cfg=cfg.energy,
            )
            r_now = strength.retrieval_strength_of(rec, now=ctx.now, cfg=cfg)
            if abs(e_now - rec.energy) < _EPS and abs(r_now - rec.retrieval_strength) < _EPS:
                continue
            writes.append(Write(rec, {"energy": e_now, "energy_updated_at": ctx.now, "retrieval_strength": r_now}))
        report.changed += len(ctx.write_many(writes))
    return report


def _entity_counts(ctx: DreamContext) -> dict[tuple[str | None, str], int]:
    """How many active episodic memories of each user mention each entity."""
    return ctx.store.entity_counts(ctx.scope(layers=frozenset({Layer.EPISODIC})))


def step_promote(ctx: DreamContext) -> StepReport:
    """Layer promotion: working → episodic (age or accesses, energy > 2.0) and episodic → semantic
    (frequent use, sustained utility, a shared entity, importance with accesses, energy > 5.0) — or to the
    procedural layer for know-how (``dynamics.promotion.procedural_layer``); semantic → dormant demotion
    (idle >= 60 days and utility < 0.2).

    The scan reads without claiming; only the memories that move are claimed and written, in
    transactions of ``dream.batch_size`` (the scheduled promotion job: 10). Each write is a
    compare-and-set on the version scanned, so a memory changed meanwhile is left for the next run."""
    report = StepReport("promote", details={"rules": {}, "batches": 0})
    rules: Counter[str] = Counter()
    cfg = ctx.settings.dynamics
    size = ctx.settings.dream.batch_size
    entities = _entity_counts(ctx)
    layers = frozenset({Layer.WORKING, Layer.EPISODIC, Layer.SEMANTIC})
    for page in ctx.store.scan(ctx.scope(layers=layers), batch_size=max(size, 1000), omit=_PROMOTE_OMIT):
        moves: list[Write] = []
        for rec in page:
            report.examined += 1
            shared = max((entities.get((rec.user_id, e), 0) for e in set(rec.entities)), default=0)
            move = promotion.eligible_transition(rec, now=ctx.now, cfg=cfg, shared_entity_count=shared)
            if move is not None:
                target, rule = move
                # knowledge now: its kind decides the sub-tier (episodic: where it came from)
                changes: dict[str, object] = {
                    "layer": target,
                    "updated_at": ctx.now,
                    "sub_tier": sub_tier_for(rec, target),
                }
                moves.append(
                    Write(
                        rec,
                        changes,
                        "promoted",
                        f"{rec.layer.value} → {target.value} ({rule})",
                        {"from": rec.layer.value, "to": target.value, "rule": rule},
                    )
                )
                continue
            demote = promotion.semantic_demotion(rec, now=ctx.now, cfg=cfg)
            if demote is not None:
                moves.append(
                    Write(
                        rec,
                        {"status": Status.DORMANT, "updated_at": ctx.now},
                        "demoted",
                        f"semantic → dormant ({demote})",
                        {"rule": demote},
                    )
                )
        for start in range(0, len(moves), size):
            chunk = moves[start : start + size]
            held = set(
                ctx.store.claim(
                    [w.rec.id for w in chunk],
                    owner=ctx.owner,
                    phase="promote",
                    now=ctx.now,
                    ttl_seconds=ctx.settings.dream.claim_ttl_s,
                )
            )
            if not held:
                continue
            try:
                writes = [w for w in chunk if w.rec.id in held]
                rule_of = {w.rec.id: str((w.data or {}).get("rule", "")) for w in writes}
                report.details["batches"] += 1
                for wid in ctx.write_many(writes):
                    report.changed += 1
                    rules[rule_of[wid]] += 1
            finally:
                ctx.store.release(ctx.owner, sorted(held))
    report.details["rules"] = dict(rules)
    return report


def step_expire(ctx: DreamContext) -> StepReport:
    """Working memories whose energy fell below 0.1 expire (kept, status expired)."""
    report = StepReport("expire")
    cfg = ctx.settings.dynamics
    for batch in ctx.claimed_batches(ctx.scope(layers=frozenset({Layer.WORKING})), "expire", omit=_PROMOTE_OMIT):
        writes = [
            Write(
                rec,
                {"status": Status.EXPIRED, "valid_until": rec.valid_until or ctx.now, "updated_at": ctx.now},
                "expired",
                "working energy below the expiry threshold",
            )
            for rec in batch
            if promotion.working_expired(rec, now=ctx.now, cfg=cfg)
        ]
        report.examined += len(batch)
        report.changed += len(ctx.write_many(writes))
    return report


def step_prune(ctx: DreamContext) -> StepReport:
    """The layered-memory design's "prune old access logs and events": access-log rows older than the retention
    window, expired claims (a crashed dreamer's leftovers) and synaptic tags past their TTL.
    History is never pruned: it is the record of every transition."""
    days = ctx.settings.dream.access_log_retention_days
    with ctx.store.transaction():
        rows = ctx.store.prune_access_log(cutoff(ctx.now, days))
        claims = ctx.store.prune_claims(ctx.now)
        tags = ctx.store.prune_tags(ctx.now)
        actions = ctx.store.prune_memory_actions(cutoff(ctx.now, ctx.settings.write.policy.telemetry_retention_days))
    details = {
        "access_log_rows": rows,
        "older_than_days": days,
        "expired_claims": claims,
        "expired_tags": tags,
        "action_telemetry_rows": actions,
    }
    return StepReport("prune", changed=rows + claims + tags + actions, details=details)


def step_topics(ctx: DreamContext) -> StepReport:
    """The lifecycle design's topic index, kept current: per user, the topic words of its sealed boxes and the
    entities its active memories name, with how many memories and boxes mention each (state
    ``topics:<user>``; ``Memory.topic_index``, the markdown export's ``state/topics.json`` and ``topics.md``)."""
    from reverie.documents import refresh_topic_indexes

    tc = ctx.settings.dream.topics
    users = [u for u, _ in ctx.store.users(limit=tc.max_users)] if ctx.all_users else [ctx.user_id]
    indexes = refresh_topic_indexes(ctx.store, users, now=ctx.now, max_topics=tc.max_topics, max_boxes=tc.max_boxes)
    topics = sum(len(i["topics"]) for i in indexes.values())
    return StepReport(
        "topics",
        changed=len(indexes),
        examined=sum(i["sealed_boxes"] for i in indexes.values()),
        details={"users": len(indexes), "topics": topics},
    )


_CORE_OMIT = omit_except("status", "core", "access_count", "storage_strength")


def step_core(ctx: DreamContext) -> StepReport:
    """The core flag (the consolidation design): an active memory used at least ``promotion.core_accesses`` (10)
    times, with a normalised storage strength of at least ``promotion.core_stability`` (0.85) and accesses in at
    least ``promotion.core_sessions`` (3) distinct sessions becomes core — exempt from consolidation, archival and
    cold migration, its fading retention floored at 0.60. The scan reads four columns; only the memories that pass
    the counters have their access log read (the newest ``dream.core_access_events`` accesses)."""
    report = StepReport("core", details={"candidates": 0})
    cfg = ctx.settings.dynamics
    p = cfg.promotion
    floor = p.core_stability * cfg.strength.storage_max
    writes: list[Write] = []
    for page in ctx.store.scan(
        ctx.scope(stores=None), batch_size=max(ctx.settings.dream.batch_size, 1000), omit=_CORE_OMIT
    ):
        for rec in page:
            report.examined += 1
            if rec.core or rec.access_count < p.core_accesses or rec.storage_strength < floor:
                continue
            report.details["candidates"] += 1
            events = ctx.store.access_events(rec.id, limit=ctx.settings.dream.core_access_events)
            sessions = len({e.session_id for e in events if e.session_id})
            if promotion.core_eligible(rec, distinct_sessions=sessions, cfg=cfg):
                writes.append(
                    Write(
                        rec,
                        {"core": True, "updated_at": ctx.now},
                        "core",
                        f"core: {rec.access_count} accesses in {sessions} sessions, storage {rec.storage_strength:.2f}",
                        {"sessions": sessions, "access_count": rec.access_count},
                    )
                )
    size = max(ctx.settings.dream.batch_size, 1)
    for start in range(0, len(writes), size):  # only the memories that become core are claimed
        chunk = writes[start : start + size]
        held = set(
            ctx.store.claim(
                [w.rec.id for w in chunk],
                owner=ctx.owner,
                phase="core",
                now=ctx.claim_now(),
                ttl_seconds=ctx.settings.dream.claim_ttl_s,
            )
        )
        try:
            report.changed += len(ctx.write_many([w for w in chunk if w.rec.id in held]))
        finally:
            if held:
                ctx.store.release(ctx.owner, sorted(held))
    return report


STEPS: tuple[DreamStep, ...] = (
    DreamStep("decay", step_decay),
    DreamStep("promote", step_promote),
    DreamStep("core", step_core),
    DreamStep("expire", step_expire),
    DreamStep("prune", step_prune),
    DreamStep("topics", step_topics),
)
