"""Graph steps: co-activation clusters (memories retrieved together form clusters), and graph-edge confidence
decay with relation pruning."""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta
from typing import Any

from reverie.dream.context import DreamContext, DreamStep, StepReport
from reverie.dream.scope_pass import iso, light_records, scope_pass
from reverie.dynamics import lifecycle, tagging
from reverie.model import HistoryEvent
from reverie.store.base import Cluster

# --- co-activation clusters --------------------------------------------------------------------------------

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
    members = light_records(
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


# --- graph-edge confidence decay and relation pruning ------------------------------------------------------


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
        meta = {**rel.metadata, "decayed_at": iso(ctx.now)}
        meta.setdefault("observed_at", iso(anchor))
        changes.append((rel.id, {"confidence": conf, "last_reinforced_at": new_anchor, "metadata": meta}))
        rel.confidence = conf
        if not lifecycle.edge_traversable(confidence=conf, cfg=lc):
            report.details["below_traversal"] += 1
    report.details["decayed"] = ctx.store.update_relations(changes)
    rel_cfg = ctx.settings.write.relations
    for user in sorted(scope_pass(ctx).users, key=lambda u: u or ""):
        report.details["pruned"] += prune_scope(ctx.store, user, rel_cfg)
    report.changed = report.details["decayed"] + report.details["pruned"]
    return report


CLUSTER_STEP = DreamStep("cluster", step_cluster)
EDGE_DECAY_STEP = DreamStep("edge_decay", step_edge_decay)

__all__ = ["CLUSTER_KIND", "CLUSTER_STEP", "EDGE_DECAY_STEP"]
