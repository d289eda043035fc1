"""Consolidation steps: consolidation of fading memories and merging of near-duplicates still in use into
summaries — the record building and group writing the theme and abstraction steps
(:mod:`reverie.dream.themes`) share — plus :func:`undo_consolidation`.

* ``consolidate``: hot, active memories whose fading retention ``max(floor,
  exp(-Δt/(S·B·β)))`` fell below 0.20 — not core, pinned, immutable or flashbulb, not made by the
  dream — are grouped by scope (user, agent), layer (the consolidation design's "category": episodic with episodic) and
  category, and clustered into DISJOINT groups (the consolidation design's pseudocode compares a memory
  with itself and reuses members): each candidate's neighbours above the cosine threshold come from
  :func:`reverie.dream.neighbors.knn` (no all-pairs comparison at scale); the candidate with the most
  free neighbours founds a group with up to ``max_group_size - 1`` of them, nearest first, each only
  while the group's extractive summary (which keeps every member's text) stays within
  ``summary_max_chars``; a group needs ``group_size`` (5) members. A summary's length is thus bounded
  by grouping fewer memories, never by dropping what they say. Each group becomes one hot summary
  (the LLM's text when it keeps every name, date and number of the members and invents none, else the
  extractive text; max importance, mean stability, max access count, a fresh embedding,
  ``summarizes`` links of weight 0.8 to each original); the originals become ``superseded``, move to
  the cold store and point to the summary (``superseded_by``). One store transaction per group; every
  member is claimed first.
* ``merge``: memories still in use that say the same thing merge into one summary the same way.

Memories made here carry ``metadata["consolidation"] = {"kind": "summary"|"theme"|"pattern",
"members": [...], "method": "llm"|"extractive", ...}`` and ``write_source = "dream"``; they never join
another group (themes and patterns too). :func:`undo_consolidation` (``Memory.undo_consolidation``) reverses one.
"""

from __future__ import annotations

import dataclasses
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any

import numpy as np

from reverie.config.dream_consolidation import ConsolidationSettings, for_profile
from reverie.config.dynamics import DynamicsSettings
from reverie.dream.context import DreamContext, DreamStep, StepReport
from reverie.dream.documents import threshold_raise
from reverie.dream.group_notes import (
    KIND_SUMMARY,
    KINDS,
    META,
    UNDONE,
    Plan,
    new_memory,
    run_plans,
    summarized_event,
    vectors_of,
)
from reverie.dream.neighbors import knn
from reverie.dream.summarize import extractive_summary
from reverie.dynamics import retention, strength
from reverie.dynamics._util import days_between
from reverie.errors import MemoryStateError, NotFoundError
from reverie.model import (
    HistoryEvent,
    MemoryRecord,
    Status,
    StoreTier,
)
from reverie.results import UndoneConsolidation
from reverie.store.base import Store

_FADING_FIELDS = frozenset(
    {
        "id",
        "version",
        "content",
        "content_hash",
        "user_id",
        "agent_id",
        "layer",
        "status",
        "store",
        "category",
        "pinned",
        "immutable",
        "core",
        "flashbulb",
        "metadata",
        "last_accessed_at",
        "created_at",
        "storage_strength",
        "importance",
    }
)
_FADING_OMIT = frozenset(f.name for f in dataclasses.fields(MemoryRecord)) - _FADING_FIELDS
#: what the themes / abstraction scans read (eligibility and clustering)
CLUSTER_OMIT = _FADING_OMIT - frozenset({"utility", "access_count", "entities", "valid_from"})


# --- shared helpers ------------------------------------------------------------------------------


def fading_retention_of(rec: MemoryRecord, *, now: datetime, cfg: DynamicsSettings) -> float:
    """Retention of a memory at ``now`` (the clock runs from its last access, else its
    creation; S = storage strength on the consolidation design's 0–1 scale; β per layer, core when flagged)."""
    days = days_between(rec.last_accessed_at or rec.created_at, now)
    s = strength.fading_stability(
        storage=rec.storage_strength, cfg=cfg.strength, new=cfg.retention.fading_stability_new
    )
    beta = retention.fading_beta(layer=rec.layer, core=rec.core, cfg=cfg.retention)
    return retention.fading_retention(
        days=days, stability=s, importance=rec.importance, beta_days=beta, core=rec.core, cfg=cfg.retention
    )


def made_by_dream(rec: MemoryRecord) -> bool:
    """Summaries, themes, patterns and synthesis notes never become members of another group."""
    return META in rec.metadata or "synthesis" in rec.metadata


def protected(rec: MemoryRecord, *, flashbulb: bool) -> bool:
    """Never merged: pinned, immutable, core, flashbulb (optional),
    made by the dream, or restored by an undo."""
    return (
        rec.pinned
        or rec.immutable
        or rec.core
        or (flashbulb and rec.flashbulb)
        or made_by_dream(rec)
        or UNDONE in rec.metadata
    )


# --- consolidate fading memories -------------------------------------------------------------------

_Key = tuple[str | None, str | None, str, str]


def _fading(ctx: DreamContext, report: StepReport) -> tuple[dict[_Key, list[str]], dict[str, str]]:
    """Candidate ids per (user, agent, layer, category): hot, active, unprotected and fading — at most
    ``max_candidates`` of them, the most faded first — and their contents (the grouping measures the
    summary a group would get)."""
    cc = ctx.settings.dream.consolidation.consolidate
    dyn = ctx.settings.dynamics
    flt = ctx.scope(layers=frozenset(cc.layers), pinned=False)
    found: list[tuple[float, str, _Key]] = []
    contents: dict[str, str] = {}
    for batch in ctx.store.scan(flt, batch_size=max(ctx.settings.dream.batch_size, 1000), omit=_FADING_OMIT):
        for rec in batch:
            report.examined += 1
            if protected(rec, flashbulb=cc.exempt_flashbulb):
                continue
            r = fading_retention_of(rec, now=ctx.now, cfg=dyn)
            if r < cc.retention_threshold:
                found.append((r, rec.id, (rec.user_id, rec.agent_id, rec.layer.value, rec.category)))
                contents[rec.id] = rec.content
    report.details["fading"] = len(found)
    if len(found) > cc.max_candidates:
        found.sort()
        found = found[: cc.max_candidates]
    buckets: dict[_Key, list[str]] = defaultdict(list)
    for _, mid, key in found:
        buckets[key].append(mid)
    return buckets, {mid: contents[mid] for _, mid, _ in found}


def disjoint_groups(
    vectors: np.ndarray,
    *,
    threshold: float,
    min_size: int,
    max_size: int,
    ids: Sequence[str],
    cfg: ConsolidationSettings,
    fits: Callable[[Sequence[int]], bool] | None = None,
) -> tuple[list[list[int]], str]:
    """Disjoint star groups: every member's cosine to the group's founder is >= ``threshold``.

    Founders are taken densest first (mean cosine of their ``min_size - 1`` nearest; ties: more
    neighbours, then id), so the cores of dense regions group before memories that merely bridge two
    regions; a member is never reused and never compared with itself.

    ``fits(indices)`` bounds a group's size by its content: a founder's free neighbours join it nearest
    first, each only if the group with it still fits (a neighbour that does not fit is passed over for
    the next one); a group that cannot reach ``min_size`` that way is not formed.

    Each memory's neighbour list is cut at ``2 · max_size``. When the groups formed take a would-be
    founder's listed neighbours, free neighbours beyond the cut may remain; the grouping then runs
    again over the memories still free, until a round forms no group — so one run leaves nothing that
    a second run would group.
    """
    free = list(range(len(ids)))
    groups: list[list[int]] = []
    method = "none"
    while len(free) >= min_size:
        found, method, truncated = _group_round(
            vectors[free],
            threshold=threshold,
            min_size=min_size,
            max_size=max_size,
            ids=[ids[i] for i in free],
            cfg=cfg,
            fits=None if fits is None else _reindexed(fits, free),
        )
        groups += [[free[i] for i in g] for g in found]
        if not found or not truncated:
            break
        taken = {i for g in groups for i in g}
        free = [i for i in free if i not in taken]
    return groups, method


def _reindexed(fits: Callable[[Sequence[int]], bool], rows: list[int]) -> Callable[[Sequence[int]], bool]:
    """``fits`` asked about positions in ``rows`` instead of original indices."""
    return lambda idx: fits([rows[i] for i in idx])


def _group_round(
    vectors: np.ndarray,
    *,
    threshold: float,
    min_size: int,
    max_size: int,
    ids: Sequence[str],
    cfg: ConsolidationSettings,
    fits: Callable[[Sequence[int]], bool] | None,
) -> tuple[list[list[int]], str, bool]:
    """One greedy pass of :func:`disjoint_groups`; the last value says whether a memory left free had
    a full (cut) neighbour list, i.e. whether another round over the free memories may find more."""
    n = len(ids)
    if n < min_size:
        return [], "none", False
    k = min(n - 1, 2 * max_size)  # founders after the first still find enough free neighbours in a dense region
    nb = knn(vectors, k, min_similarity=threshold, cfg=cfg.neighbors)
    counts = (nb.indices >= 0).sum(axis=1)
    # density: mean cosine of the (min_size - 1) nearest — cores of dense regions found groups before
    # "bridges" that are merely similar to two regions at once
    density = np.where(nb.indices[:, : min_size - 1] >= 0, nb.similarities[:, : min_size - 1], 0.0).mean(axis=1)
    order = sorted(
        (i for i in range(n) if counts[i] >= min_size - 1), key=lambda i: (-float(density[i]), -int(counts[i]), ids[i])
    )
    taken = np.zeros(n, dtype=bool)
    groups: list[list[int]] = []
    for i in order:
        if taken[i]:
            continue
        free = [j for j, _ in nb.of(i) if not taken[j]]
        if fits is None:
            members = [i, *free[: max_size - 1]]
        else:
            members = [i] if fits([i]) else []
            for j in free if members else ():
                if len(members) >= max_size:
                    break
                if fits([*members, j]):
                    members.append(j)
        if len(members) >= min_size:
            taken[members] = True
            groups.append(members)
    truncated = bool(np.any(~taken & (counts >= k)))
    return groups, nb.method, truncated


def _plan_groups(
    ctx: DreamContext,
    buckets: dict[Any, list[str]],
    contents: dict[str, str],
    *,
    threshold: float,
    min_size: int,
    max_size: int,
    max_chars: int,
) -> tuple[list[Plan], Counter[str]]:
    """Disjoint groups of each bucket's memories (a bucket: one user, agent, layer …), as summary plans, and
    which neighbour search each bucket used. A user's threshold is raised by what its guidelines learned."""
    cfg = ctx.settings.dream.consolidation
    plans: list[Plan] = []
    methods: Counter[str] = Counter()
    for key in sorted(buckets, key=lambda k: tuple("" if v is None else v for v in k)):
        ids = buckets[key]
        if len(ids) < min_size:
            continue
        kept, vecs = vectors_of(ctx.store, ids)
        groups, how = disjoint_groups(
            vecs,
            threshold=threshold + threshold_raise(ctx, key[0]),
            min_size=min_size,
            max_size=max_size,
            ids=kept,
            cfg=cfg,
            fits=_fits([contents[i] for i in kept], max_chars),
        )
        methods[how] += 1
        plans.extend(Plan(KIND_SUMMARY, [kept[i] for i in g]) for g in groups)
    return plans, methods


def step_consolidate(ctx: DreamContext) -> StepReport:
    """Consolidation of fading memories into summaries (see the module docs)."""
    report = StepReport("consolidate")
    cfg = ctx.settings.dream.consolidation
    cc = cfg.consolidate
    threshold = for_profile(cc.similarity, ctx.profile)
    report.details.update(threshold=threshold, profile=ctx.profile)
    if ctx.embed is None:
        report.details["skipped"] = "no embedder in the dream context"
        return report
    t0 = time.perf_counter()
    buckets, contents = _fading(ctx, report)
    t1 = time.perf_counter()
    plans, methods = _plan_groups(
        ctx,
        buckets,
        contents,
        threshold=threshold,
        min_size=cc.group_size,
        max_size=cc.max_group_size,
        max_chars=cc.summary_max_chars,
    )
    t2 = time.perf_counter()
    report.details.update(
        candidates=sum(len(v) for v in buckets.values()), groups_found=len(plans), neighbours=dict(methods)
    )
    plans = plans[: cc.max_groups_per_run]
    out = run_plans(
        ctx,
        plans,
        step="consolidate",
        eligible=lambda r: _still_fading(ctx, r),
        make=lambda members, s, v: new_memory(
            ctx,
            KIND_SUMMARY,
            members,
            s,
            v,
            importance=max(m.importance for m in members),
            layer=members[0].layer,
            category=members[0].category,
            extra={"step": "consolidate", "threshold": threshold, "profile": ctx.profile},
        ),
        purpose="consolidation",
        max_chars=cc.summary_max_chars,
        supersede=True,
        link_weight=cc.link_weight,
        llm_budget=cc.max_llm_calls,
    )
    out.fill(report, groups="groups", members="members", ids="summaries", ids_limit=50)
    report.details["seconds"] = {
        "scan": round(t1 - t0, 3),
        "group": round(t2 - t1, 3),
        "write": round(time.perf_counter() - t2, 3),
    }
    return report


def _fits(texts: Sequence[str], max_chars: int) -> Callable[[Sequence[int]], bool]:
    """Whether the extractive summary of the texts at some indices stays within ``max_chars``."""
    return lambda idx: len(extractive_summary([texts[i] for i in idx])) <= max_chars


def _still_fading(ctx: DreamContext, rec: MemoryRecord) -> bool:
    cc = ctx.settings.dream.consolidation.consolidate
    return (
        rec.status is Status.ACTIVE
        and rec.store is StoreTier.HOT
        and rec.layer in cc.layers
        and not protected(rec, flashbulb=cc.exempt_flashbulb)
        and fading_retention_of(rec, now=ctx.now, cfg=ctx.settings.dynamics) < cc.retention_threshold
    )


# --- merge: clusters of near-identical memories still in use ---------------------------------------

_MergeKey = tuple[str | None, str | None, str]


def _mergeable(ctx: DreamContext, rec: MemoryRecord) -> bool:
    """Hot, active, in a merge layer, unprotected, old enough — and not fading (fading memories are the
    ``consolidate`` step's)."""
    mc = ctx.settings.dream.consolidation.merge
    cc = ctx.settings.dream.consolidation.consolidate
    return (
        rec.status is Status.ACTIVE
        and rec.store is StoreTier.HOT
        and rec.layer in mc.layers
        and not protected(rec, flashbulb=True)
        and days_between(rec.created_at, ctx.now) >= mc.min_age_days
        and fading_retention_of(rec, now=ctx.now, cfg=ctx.settings.dynamics) >= cc.retention_threshold
    )


def _merge_candidates(ctx: DreamContext, report: StepReport) -> tuple[dict[_MergeKey, list[str]], dict[str, str]]:
    """Candidate ids per (user, agent, layer), in id order — at most ``max_candidates``, the newest first — and
    their contents."""
    mc = ctx.settings.dream.consolidation.merge
    found: list[tuple[float, str, _MergeKey, str]] = []
    flt = ctx.scope(layers=frozenset(mc.layers), pinned=False)
    for batch in ctx.store.scan(flt, batch_size=max(ctx.settings.dream.batch_size, 1000), omit=_FADING_OMIT):
        for rec in batch:
            report.examined += 1
            if _mergeable(ctx, rec):
                found.append(
                    (-rec.created_at.timestamp(), rec.id, (rec.user_id, rec.agent_id, rec.layer.value), rec.content)
                )
    if len(found) > mc.max_candidates:
        found.sort()
        found = found[: mc.max_candidates]
    buckets: dict[_MergeKey, list[str]] = defaultdict(list)
    contents: dict[str, str] = {}
    for _, mid, key, text in found:
        buckets[key].append(mid)
        contents[mid] = text
    return {k: sorted(v) for k, v in buckets.items()}, contents


def step_merge(ctx: DreamContext) -> StepReport:
    """The layered-memory design's dream step 2: memories still in use (not fading) that say the same thing —
    clusters of ``merge.group_size`` (5) or more, each member at cosine >= the profile's threshold (0.8 for API
    embedders) to the cluster's founder — merge into one summary, as consolidation does: the summary keeps every
    member's words (or is the LLM's text that keeps every name, date and number), links to each member, and the
    members are superseded into the cold store, where a plain search still reaches them through the summary.
    Clusters are disjoint, built from each candidate's nearest neighbours (no all-pairs comparison), per user,
    agent and layer."""
    report = StepReport("merge")
    cfg = ctx.settings.dream.consolidation
    mc = cfg.merge
    threshold = for_profile(mc.similarity, ctx.profile)
    report.details.update(threshold=threshold, profile=ctx.profile)
    if ctx.embed is None:
        report.details["skipped"] = "no embedder in the dream context"
        return report
    buckets, contents = _merge_candidates(ctx, report)
    plans, methods = _plan_groups(
        ctx,
        buckets,
        contents,
        threshold=threshold,
        min_size=mc.group_size,
        max_size=mc.max_group_size,
        max_chars=mc.summary_max_chars,
    )
    report.details.update(candidates=len(contents), groups_found=len(plans), neighbours=dict(methods))
    out = run_plans(
        ctx,
        plans[: mc.max_groups_per_run],
        step="merge",
        eligible=lambda r: _mergeable(ctx, r),
        make=lambda members, s, v: new_memory(
            ctx,
            KIND_SUMMARY,
            members,
            s,
            v,
            importance=max(m.importance for m in members),
            layer=members[0].layer,
            category=Counter(m.category for m in members).most_common(1)[0][0],
            extra={"step": "merge", "threshold": threshold, "profile": ctx.profile},
        ),
        purpose="consolidation",
        max_chars=mc.summary_max_chars,
        supersede=True,
        link_weight=mc.link_weight,
        llm_budget=mc.max_llm_calls,
    )
    return out.fill(report, groups="groups", members="members", ids="summaries", ids_limit=50)


# --- undo ------------------------------------------------------------------------------------------


def undo_consolidation(
    store: Store, summary_id: str, *, now: datetime, reason: str = "", telemetry: bool = True
) -> UndoneConsolidation:
    """Reverse one consolidation: the originals it superseded go back to hot + active (and are never
    grouped again), the summary / theme / pattern is invalidated (never deleted); history on all sides.

    Raises :class:`NotFoundError` for an unknown id and :class:`InvalidInputError` for a memory that is
    not a consolidation summary or was already undone.
    """
    rec = store.get([summary_id]).get(summary_id)
    if rec is None:
        raise NotFoundError(f"no memory with id {summary_id}")
    meta = rec.metadata.get(META)
    if not isinstance(meta, dict) or meta.get("kind") not in KINDS or not isinstance(meta.get("members"), list):
        raise MemoryStateError(
            f"memory {summary_id} is not a consolidation summary (made by the consolidate, "
            "themes or abstraction dream steps); nothing to undo"
        )
    if rec.status is Status.INVALIDATED:
        raise MemoryStateError(f"the consolidation {summary_id} was already undone (the summary is invalidated)")
    members = store.get([str(i) for i in meta["members"]])
    restored = [m for m in members.values() if m.superseded_by == rec.id and m.status is Status.SUPERSEDED]
    untouched = sorted(set(members) - {m.id for m in restored})
    why = reason or "undo of a dream consolidation"
    events = [
        HistoryEvent(
            rec.id,
            "consolidation_undone",
            now,
            reason=why,
            actor="undo_consolidation",
            data={"kind": meta["kind"], "restored": [m.id for m in restored], "untouched": untouched},
        )
    ]
    events += [
        HistoryEvent(
            m.id,
            "consolidation_undone",
            now,
            reason=f"{why}: back to hot from {rec.id}",
            actor="undo_consolidation",
            data={"summary": rec.id, "to_store": "hot"},
        )
        for m in restored
    ]
    with store.transaction():
        store.update_fields(
            rec.id,
            {"status": Status.INVALIDATED, "valid_until": rec.valid_until or now, "updated_at": now},
            expected_version=rec.version,
        )
        for m in restored:
            undone = [*m.metadata.get(UNDONE, []), rec.id] if isinstance(m.metadata.get(UNDONE), list) else [rec.id]
            store.update_fields(
                m.id,
                {
                    "status": Status.ACTIVE,
                    "store": StoreTier.HOT,
                    "superseded_by": None,
                    "metadata": {**m.metadata, UNDONE: undone},
                    "updated_at": now,
                },
                expected_version=m.version,
            )
        store.add_history(events)
        if telemetry:
            store.log_actions([summarized_event(rec, str(meta.get("step", meta["kind"])), now, outcome="UNDONE")])
    return {
        "summary_id": rec.id,
        "kind": meta["kind"],
        "restored": sorted(m.id for m in restored),
        "untouched": untouched,
    }


STEPS: tuple[DreamStep, ...] = (
    DreamStep("consolidate", step_consolidate),
    DreamStep("merge", step_merge),
)

__all__ = [
    "CLUSTER_OMIT",
    "KINDS",
    "META",
    "STEPS",
    "UNDONE",
    "disjoint_groups",
    "fading_retention_of",
    "made_by_dream",
    "protected",
    "step_consolidate",
    "step_merge",
    "undo_consolidation",
]
