"""Themes and deep abstraction: memories the LLM writes from clusters of related memories.

* ``themes`` (clustering + LLM consolidation): clusters of >= 3 memories sharing an entity,
  or of one category with importance within 0.3 (and, reverie's guard, cosine-similar), become
  theme memories (importance 0.8; at most 5 LLM calls per cycle); the originals are superseded as
  above. Only idle memories are eligible (see ``ThemeSettings``): a memory in use stays individually
  searchable.
* ``abstraction`` (deep abstraction): the top 3 clusters of the scope give pattern memories
  (importance 0.85) that link to their evidence; the originals stay as they are.

Themes and patterns are written by the LLM or not at all: member texts glued together are neither a
theme nor a pattern. Without an LLM these steps report ``"skipped": "needs an LLM"``; an answer that
drops or invents a name, date or number (:func:`reverie.dream.summarize.grounding_problem`) is not
used, and the group is not sent again until its members change (:class:`reverie.dream.context.Rejections`).

Both write through :func:`reverie.dream.consolidate.run_plans`; their memories carry the same
``metadata["consolidation"]`` as summaries and :func:`~reverie.dream.consolidate.undo_consolidation` reverses them.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import numpy as np

from reverie.config.dream_consolidation import ConsolidationSettings, ThemeSettings, for_profile
from reverie.dream.consolidate import CLUSTER_OMIT, made_by_dream, protected
from reverie.dream.context import DreamContext, DreamStep, Rejections, StepReport
from reverie.dream.group_notes import (
    KIND_PATTERN,
    KIND_THEME,
    UNDONE,
    Plan,
    new_memory,
    run_plans,
    summary_id,
    vectors_of,
)
from reverie.dream.neighbors import knn
from reverie.dynamics._util import days_between
from reverie.model import Layer, MemoryRecord, RelationType, Status, StoreTier
from reverie.store.base import Store

# --- clustering (themes, abstraction) -------------------------------------------------------------


@dataclass(slots=True)
class _Cluster:
    key: str
    members: list[MemoryRecord]

    def rank(self) -> tuple[int, float, str]:
        return (-len(self.members), -sum(m.importance for m in self.members), self.members[0].id)


def theme_clusters(
    records: Sequence[MemoryRecord],
    vectors: dict[str, np.ndarray],
    *,
    tc: ThemeSettings,
    min_size: int,
    max_size: int,
    similarity: float,
    cfg: ConsolidationSettings,
) -> list[_Cluster]:
    """Clustering into disjoint clusters of ``min_size``..``max_size`` members.

    1. entity overlap: memories sharing >= ``entity_overlap`` entities with the cluster's first member
       (entities taken by how many free memories mention them, ties by name);
    2. the rest: same category and importance within ``importance_proximity`` of the cluster's founder,
       and (reverie's guard) cosine >= ``similarity`` to it — founders by neighbour count, as in
       :func:`disjoint_groups`.
    """
    ordered = sorted(records, key=lambda r: (-r.importance, r.id))
    taken: set[str] = set()
    clusters: list[_Cluster] = []
    by_entity: dict[str, list[MemoryRecord]] = defaultdict(list)
    for r in ordered:
        for e in dict.fromkeys(r.entities):
            by_entity[e].append(r)
    for ent in sorted(by_entity, key=lambda e: (-len(by_entity[e]), e)):
        free = [r for r in by_entity[ent] if r.id not in taken]
        if len(free) < min_size:
            continue
        seed_ents = set(free[0].entities)
        members = [r for r in free if len(seed_ents & set(r.entities)) >= tc.entity_overlap][:max_size]
        if len(members) >= min_size:
            taken.update(m.id for m in members)
            clusters.append(_Cluster("entity:" + ent, members))
    rest: dict[str, list[MemoryRecord]] = defaultdict(list)
    for r in ordered:
        if r.id not in taken and r.id in vectors:
            rest[r.category].append(r)
    for category in sorted(rest):
        recs = rest[category]
        if len(recs) < min_size:
            continue
        mat = np.vstack([vectors[r.id] for r in recs])
        nb = knn(mat, min(len(recs) - 1, 2 * max_size), min_similarity=similarity, cfg=cfg.neighbors)
        counts = (nb.indices >= 0).sum(axis=1)
        used = np.zeros(len(recs), dtype=bool)
        for i in sorted(range(len(recs)), key=lambda i: (-int(counts[i]), recs[i].id)):
            if used[i] or counts[i] < min_size - 1:
                continue
            close = [
                j
                for j, _ in nb.of(i)
                if not used[j] and abs(recs[j].importance - recs[i].importance) < tc.importance_proximity
            ]
            picked = [i, *close[: max_size - 1]]
            if len(picked) >= min_size:
                used[picked] = True
                clusters.append(_Cluster("category:" + category, [recs[j] for j in picked]))
    clusters.sort(key=_Cluster.rank)
    return clusters


def _scope_key(rec: MemoryRecord) -> tuple[str, str]:
    return (rec.user_id or "", rec.agent_id or "")


def _idle_days(rec: MemoryRecord, now: datetime) -> float:
    return days_between(rec.last_accessed_at or rec.created_at, now)


def _theme_eligible(ctx: DreamContext, rec: MemoryRecord) -> bool:
    tc = ctx.settings.dream.consolidation.themes
    return (
        rec.status is Status.ACTIVE
        and rec.store is StoreTier.HOT
        and rec.layer in tc.layers
        and not protected(rec, flashbulb=True)
        and _idle_days(rec, ctx.now) >= tc.min_idle_days
        and rec.utility < tc.max_utility
        and rec.access_count < tc.max_access_count
    )


def _scan_scopes(ctx: DreamContext, layers: Iterable[Layer], keep: Any) -> dict[tuple[str, str], list[MemoryRecord]]:
    flt = ctx.scope(layers=frozenset(layers))
    scopes: dict[tuple[str, str], list[MemoryRecord]] = defaultdict(list)
    for batch in ctx.store.scan(flt, batch_size=max(ctx.settings.dream.batch_size, 1000), omit=CLUSTER_OMIT):
        for rec in batch:
            if keep(rec):
                scopes[_scope_key(rec)].append(rec)
    return scopes


def _needs_llm(ctx: DreamContext, report: StepReport) -> bool:
    """Steps whose memories only an LLM can write (a theme, a pattern) make nothing without one: glued
    member texts are no theme and no pattern. Says so in the report; True when the step can run."""
    if ctx.embed is None:
        report.details["skipped"] = "no embedder in the dream context"
        return False
    if ctx.llm is None:
        report.details["skipped"] = "needs an LLM"
        return False
    return True


def _untried(plans: list[Plan], rejections: Rejections) -> tuple[list[Plan], int]:
    """The plans whose group was not rejected before (same members), and how many were."""
    fresh = [p for p in plans if not rejections.seen(summary_id(p.kind, p.member_ids))]
    return fresh, len(plans) - len(fresh)


def step_themes(ctx: DreamContext) -> StepReport:
    """Clustering + LLM consolidation into theme memories (see the module docs)."""
    report = StepReport("themes")
    cfg = ctx.settings.dream.consolidation
    tc = cfg.themes
    similarity = for_profile(tc.category_similarity, ctx.profile)
    report.details.update(similarity=similarity, profile=ctx.profile, llm=ctx.llm is not None, budget=tc.max_llm_calls)
    if not _needs_llm(ctx, report):
        return report
    examined = [0]

    def keep(rec: MemoryRecord) -> bool:
        examined[0] += 1
        return _theme_eligible(ctx, rec)

    scopes = _scan_scopes(ctx, tc.layers, keep)
    report.examined = examined[0]
    clusters: list[_Cluster] = []
    for scope in sorted(scopes):
        recs = sorted(scopes[scope], key=lambda r: (-_idle_days(r, ctx.now), r.id))[: tc.max_candidates]
        kept, mat = vectors_of(ctx.store, [r.id for r in recs])
        vectors = dict(zip(kept, mat, strict=True))
        clusters.extend(
            theme_clusters(
                recs, vectors, tc=tc, min_size=tc.min_cluster, max_size=tc.max_cluster, similarity=similarity, cfg=cfg
            )
        )
    clusters.sort(key=_Cluster.rank)
    rejections = Rejections(ctx, "themes")
    plans, before = _untried([Plan(KIND_THEME, [m.id for m in c.members], key=c.key) for c in clusters], rejections)
    report.details.update(
        eligible=sum(len(v) for v in scopes.values()), clusters_found=len(clusters), rejected_before=before
    )
    out = run_plans(
        ctx,
        plans[: tc.max_llm_calls],
        step="themes",
        eligible=lambda r: _theme_eligible(ctx, r),
        make=lambda members, s, v: new_memory(
            ctx,
            KIND_THEME,
            members,
            s,
            v,
            importance=tc.importance,
            layer=Layer.SEMANTIC,
            category=Counter(m.category for m in members).most_common(1)[0][0],
            extra={"step": "themes"},
        ),
        purpose="theme",
        max_chars=tc.summary_max_chars,
        supersede=True,
        link_weight=tc.link_weight,
        llm_budget=tc.max_llm_calls,
        rejections=rejections,
    )
    out.fill(report, groups="themes", members="members", ids="created")
    report.details["rejected"] = out.rejected[:10]
    return report


# --- deep abstraction ----------------------------------------------------------------------------


def _covered(store: Store, cluster: _Cluster, share: float) -> bool:
    """Whether an active pattern already links at least ``share`` of the cluster's members."""
    ids = [m.id for m in cluster.members]
    links = store.relations(ids, types=frozenset({RelationType.SUMMARIZES}), direction="in")
    by_src: dict[str, set[str]] = defaultdict(set)
    for rel in links:
        if rel.metadata.get("kind") == KIND_PATTERN:
            by_src[rel.src_id].add(rel.dst_id)
    if not by_src:
        return False
    patterns = store.get(list(by_src))
    return any(p.status is Status.ACTIVE and len(by_src[p.id]) >= share * len(ids) for p in patterns.values())


def step_abstraction(ctx: DreamContext) -> StepReport:
    """Deep abstraction: pattern memories from the top clusters (see the module docs)."""
    report = StepReport("abstraction")
    cfg = ctx.settings.dream.consolidation
    ac, tc = cfg.abstraction, cfg.themes
    similarity = for_profile(tc.category_similarity, ctx.profile)
    report.details.update(similarity=similarity, profile=ctx.profile, llm=ctx.llm is not None)
    if ac.top_clusters == 0 or not _needs_llm(ctx, report):
        return report
    examined = [0]

    def keep(rec: MemoryRecord) -> bool:
        examined[0] += 1
        return not made_by_dream(rec) and UNDONE not in rec.metadata

    scopes = _scan_scopes(ctx, tc.layers, keep)
    report.examined = examined[0]
    rejections = Rejections(ctx, "abstraction")
    chosen: list[_Cluster] = []
    covered = before = 0
    for scope in sorted(scopes):
        recs = sorted(scopes[scope], key=lambda r: (r.last_accessed_at or r.created_at, r.id), reverse=True)[
            : ac.max_candidates
        ]
        kept, mat = vectors_of(ctx.store, [r.id for r in recs])
        for c in theme_clusters(
            recs,
            dict(zip(kept, mat, strict=True)),
            tc=tc,
            min_size=ac.min_cluster,
            max_size=ac.max_evidence,
            similarity=similarity,
            cfg=cfg,
        ):
            if rejections.seen(summary_id(KIND_PATTERN, [m.id for m in c.members])):
                before += 1
            elif _covered(ctx.store, c, ac.covered_share):
                covered += 1
            else:
                chosen.append(c)
    chosen.sort(key=_Cluster.rank)
    chosen = chosen[: ac.top_clusters]
    report.details.update(already_abstracted=covered, rejected_before=before)
    plans = [Plan(KIND_PATTERN, [m.id for m in c.members], key=c.key) for c in chosen]
    out = run_plans(
        ctx,
        plans,
        step="abstraction",
        eligible=lambda r: r.status is Status.ACTIVE and not made_by_dream(r),
        make=lambda members, s, v: new_memory(
            ctx,
            KIND_PATTERN,
            members,
            s,
            v,
            importance=ac.importance,
            layer=Layer.SEMANTIC,
            category="pattern",
            extra={"step": "abstraction"},
        ),
        purpose="pattern",
        max_chars=ac.summary_max_chars,
        supersede=False,
        link_weight=ac.link_weight,
        llm_budget=None,
        rejections=rejections,
    )
    out.fill(report, groups="patterns", members="evidence", ids="created")
    report.details["rejected"] = out.rejected[:10]
    return report


STEPS: tuple[DreamStep, ...] = (
    DreamStep("themes", step_themes),
    DreamStep("abstraction", step_abstraction),
)

__all__ = ["STEPS", "step_abstraction", "step_themes", "theme_clusters"]
