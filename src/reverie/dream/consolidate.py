"""Consolidation dream steps: consolidation of fading memories, themes (clustering + LLM consolidation)
and deep abstraction — plus :func:`undo_consolidation`.

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
used, and the group is not sent again until its members change (:class:`reverie.dream.Rejections`).

Memories made here carry ``metadata["consolidation"] = {"kind": "summary"|"theme"|"pattern",
"members": [...], "method": "llm"|"extractive", ...}`` and ``write_source = "dream"``; they never join
another group. :func:`undo_consolidation` (``Memory.undo_consolidation``) reverses one.
"""

from __future__ import annotations

import dataclasses
import time
import uuid
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import numpy as np

from reverie.action_policy import lifecycle_of
from reverie.config.dream_consolidation import ConsolidationSettings, ThemeSettings, for_profile
from reverie.config.dynamics import DynamicsSettings
from reverie.dream import DreamContext, Rejections, Step, StepReport
from reverie.dream.documents import threshold_raise
from reverie.dream.neighbors import knn
from reverie.dream.summarize import Summary, extractive_summary, summarize
from reverie.dynamics import retention, strength
from reverie.dynamics._util import days_between
from reverie.errors import ConflictError, InvalidInputError, NotFoundError
from reverie.model import (
    ActionEvent,
    HistoryEvent,
    Layer,
    MemoryKind,
    MemoryRecord,
    Relation,
    RelationType,
    Status,
    StoreTier,
)
from reverie.results import UndoneConsolidation
from reverie.store.base import Store

META = "consolidation"
KIND_SUMMARY, KIND_THEME, KIND_PATTERN = "summary", "theme", "pattern"
KINDS = (KIND_SUMMARY, KIND_THEME, KIND_PATTERN)
#: metadata key set on originals whose consolidation was undone: they are never grouped again
UNDONE = "consolidation_undone"
_NAMESPACE = uuid.UUID("6f1d3c1e-5b8a-4c33-9d0e-7a52c0de0003")
_CHUNK = 2000  # ids per store.get / store.embeddings call
_WRITE_CHUNK = 64  # groups claimed, summarised and embedded together
#: what the consolidate scan reads (everything else is left out: a pass over 100k memories)
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
_CLUSTER_OMIT = _FADING_OMIT - frozenset({"utility", "access_count", "entities", "valid_from"})


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


def _protected(rec: MemoryRecord, *, flashbulb: bool) -> bool:
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


def _get_many(store: Store, ids: Sequence[str]) -> dict[str, MemoryRecord]:
    out: dict[str, MemoryRecord] = {}
    for start in range(0, len(ids), _CHUNK):
        out.update(store.get(ids[start : start + _CHUNK]))
    return out


def _vectors(store: Store, ids: Sequence[str]) -> tuple[list[str], np.ndarray]:
    """The ids that have an embedding, and their vectors as one matrix (same order)."""
    found: dict[str, Any] = {}
    for start in range(0, len(ids), _CHUNK):
        found.update(store.embeddings(ids[start : start + _CHUNK]))
    kept = [i for i in ids if i in found]
    if not kept:
        return [], np.zeros((0, 1), dtype=np.float32)
    return kept, np.vstack([np.asarray(found[i], dtype=np.float32) for i in kept])


def _summary_id(kind: str, member_ids: Iterable[str]) -> str:
    """Deterministic: the same members give the same id, so a group can never be written twice."""
    return str(uuid.uuid5(_NAMESPACE, kind + ":" + ",".join(sorted(member_ids))))


def _batched(items: Sequence[Any], size: int) -> Iterator[Sequence[Any]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


@dataclass(slots=True)
class _Plan:
    """One group to write: its members, the record fields of the new memory, and how originals change."""

    kind: str
    member_ids: list[str]
    key: str = ""


@dataclass(slots=True)
class _Outcome:
    changed: int = 0
    groups: int = 0
    members: int = 0
    methods: Counter[str] = field(default_factory=Counter)
    skipped: Counter[str] = field(default_factory=Counter)
    ids: list[str] = field(default_factory=list)
    rejected: list[str] = field(default_factory=list)  # why the LLM's answers were not used


def _new_memory(
    ctx: DreamContext,
    kind: str,
    members: list[MemoryRecord],
    summary: Summary,
    vector: Any,
    *,
    importance: float,
    layer: Layer,
    category: str,
    extra: dict[str, Any],
) -> MemoryRecord:
    """The summary / theme / pattern record (max importance, mean stability, max accesses)."""
    from reverie.dynamics.access import initial_values

    now = ctx.now
    first = members[0]
    sources = {m.source for m in members}
    source = sources.pop() if len(sources) == 1 and kind != KIND_PATTERN else "dream"
    entities = list(dict.fromkeys(e for m in members for e in m.entities))[:16]
    valid_from = min((m.valid_from or m.created_at for m in members), default=now)
    meta = {
        META: {
            "kind": kind,
            "members": [m.id for m in members],
            "method": summary.method,
            "why": summary.reason,
            "at": now.isoformat(),
            **extra,
        }
    }
    rec = MemoryRecord(
        content=summary.text,
        id=_summary_id(kind, [m.id for m in members]),
        user_id=first.user_id,
        agent_id=first.agent_id,
        instance_id=ctx.settings.instance_id,
        layer=layer,
        category=category,
        memory_kind=MemoryKind.NOTE,
        entities=entities,
        embedding=np.asarray(vector, dtype=np.float32),
        importance=importance,
        source=source,
        write_source="dream",
        data_source="dream",
        metadata=meta,
        valid_from=valid_from,
        recorded_at=now,
        created_at=now,
        updated_at=now,
        inputs=[{"action": kind.upper(), "at": now.isoformat(), "method": summary.method, "members": len(members)}],
    )
    for key, value in initial_values(rec, now=now, cfg=ctx.settings.dynamics).items():
        setattr(rec, key, value)
    if kind != KIND_PATTERN:
        # the members' own facts, compressed: as trustworthy as the least trusted member, not the
        # layered-memory design's 0.4 for dream-invented content (patterns keep that: they are inferences)
        rec.trust = min(m.trust for m in members)
        rec.source_confidence = min(m.source_confidence for m in members)
    if kind == KIND_SUMMARY:  # a consolidation summary
        rec.stability = float(np.mean([m.stability for m in members]))
        rec.storage_strength = float(np.mean([m.storage_strength for m in members]))
        rec.difficulty = float(np.mean([m.difficulty for m in members]))
        rec.access_count = max(m.access_count for m in members)
        rec.utility = float(np.mean([m.utility for m in members]))
    return rec


def _write(
    ctx: DreamContext, rec: MemoryRecord, members: list[MemoryRecord], *, supersede: bool, link_weight: float, step: str
) -> bool:
    """Insert ``rec``, link it to each member, and (``supersede``) retire the members to cold storage —
    all in one transaction with optimistic version checks. False when anything changed meanwhile."""
    now = ctx.now
    links = [
        Relation(
            rec.id,
            m.id,
            RelationType.SUMMARIZES,
            confidence=link_weight,
            weight=link_weight,
            created_at=now,
            metadata={"by": "dream." + step, "kind": rec.metadata[META]["kind"]},
        )
        for m in members
    ]
    event = "consolidated" if supersede else "abstracted"
    member_ids = [m.id for m in members]
    history = [
        HistoryEvent(
            rec.id,
            "created",
            now,
            reason=f"dream {step}: {len(members)} memories → 1",
            actor="dream",
            data={"members": member_ids, "method": rec.metadata[META]["method"], "kind": rec.metadata[META]["kind"]},
        )
    ]
    history += [
        HistoryEvent(
            m.id,
            event,
            now,
            reason=f"{event} into {rec.id} (dream {step})",
            actor="dream",
            data={
                "into": rec.id,
                "kind": rec.metadata[META]["kind"],
                **({"from_store": m.store.value, "to_store": "cold"} if supersede else {}),
            },
        )
        for m in members
    ]
    try:
        with ctx.store.transaction():
            ctx.store.insert([rec])
            if supersede:
                retire = {
                    "status": Status.SUPERSEDED,
                    "store": StoreTier.COLD,
                    "superseded_by": rec.id,
                    "updated_at": now,
                }
                written = ctx.store.update_fields_many([(m.id, retire, m.version) for m in members])
                if len(written) != len(members):
                    raise ConflictError(f"members of {rec.id} changed since they were read")
            ctx.store.add_relations(links)
            ctx.store.add_history(history)
            if ctx.settings.write.policy.telemetry:
                ctx.store.log_actions([_summarized(rec, step, now)])
    except ConflictError:
        return False  # a member changed, or this group was written already: the next run looks again
    if ctx.ops_log is not None:
        ctx.ops_log("dream." + step, id=rec.id, members=len(members), method=rec.metadata[META]["method"])
    return True


def _summarized(rec: MemoryRecord, step: str, now: datetime, outcome: str | None = None) -> ActionEvent:
    """The action telemetry of a summary (``summarize_node``; outcome: the step, or ``UNDONE``)."""
    return ActionEvent(
        "summarize_node",
        outcome or step.upper(),
        now,
        user_id=rec.user_id,
        agent_id=rec.agent_id,
        memory_id=rec.id,
        confidence=min(1.0, max(0.0, rec.source_confidence)),
        lifecycle_state=lifecycle_of(rec.lifecycle_state),
        importance=min(1.0, max(0.0, rec.importance)),
        source="consolidation",
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
            if _protected(rec, flashbulb=cc.exempt_flashbulb):
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
    """
    n = len(ids)
    if n < min_size:
        return [], "none"
    # 2·max_size: founders after the first still find enough free neighbours in a dense region
    nb = knn(vectors, min(n - 1, 2 * max_size), min_similarity=threshold, cfg=cfg.neighbors)
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
    return groups, nb.method


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
    plans: list[_Plan] = []
    methods: Counter[str] = Counter()
    for key in sorted(buckets, key=lambda k: tuple("" if v is None else v for v in k)):
        ids = buckets[key]
        if len(ids) < cc.group_size:
            continue
        kept, vecs = _vectors(ctx.store, ids)
        groups, how = disjoint_groups(
            vecs,
            threshold=threshold + threshold_raise(ctx, key[0]),
            min_size=cc.group_size,
            max_size=cc.max_group_size,
            ids=kept,
            cfg=cfg,
            fits=_fits([contents[i] for i in kept], cc.summary_max_chars),
        )
        methods[how] += 1
        plans.extend(_Plan(KIND_SUMMARY, [kept[i] for i in g]) for g in groups)
    t2 = time.perf_counter()
    report.details.update(
        candidates=sum(len(v) for v in buckets.values()), groups_found=len(plans), neighbours=dict(methods)
    )
    plans = plans[: cc.max_groups_per_run]
    out = _run_plans(
        ctx,
        plans,
        step="consolidate",
        eligible=lambda r: _still_fading(ctx, r),
        make=lambda members, s, v: _new_memory(
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
    report.changed = out.changed
    report.details.update(
        groups=out.groups,
        members=out.members,
        methods=dict(out.methods),
        skipped=dict(out.skipped),
        summaries=out.ids[:50],
        seconds={"scan": round(t1 - t0, 3), "group": round(t2 - t1, 3), "write": round(time.perf_counter() - t2, 3)},
    )
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
        and not _protected(rec, flashbulb=cc.exempt_flashbulb)
        and fading_retention_of(rec, now=ctx.now, cfg=ctx.settings.dynamics) < cc.retention_threshold
    )


def _run_plans(
    ctx: DreamContext,
    plans: Sequence[_Plan],
    *,
    step: str,
    eligible: Any,
    make: Any,
    purpose: str,
    max_chars: int,
    supersede: bool,
    link_weight: float,
    llm_budget: int | None,
    rejections: Rejections | None = None,
) -> _Outcome:
    """Claim, re-check, summarise, embed and write the planned groups, a chunk at a time.

    A group is written only when this run holds every member's claim (the earlier claim wins; another
    dreamer's group is skipped) and every member, re-read after the claim, is still eligible.
    With ``rejections`` the text must come from the LLM: a group whose answer is rejected (or that
    the call budget leaves unasked) is not written, and a rejected one is remembered.
    """
    out = _Outcome()
    calls = 0
    llm_only = rejections is not None
    for chunk in _batched(plans, _WRITE_CHUNK):
        all_ids = [i for p in chunk for i in p.member_ids]
        held = set(
            ctx.store.claim(
                all_ids, owner=ctx.owner, phase=step, now=ctx.claim_now(), ttl_seconds=ctx.settings.dream.claim_ttl_s
            )
        )
        try:
            fresh = _get_many(ctx.store, [i for i in all_ids if i in held])
            ready: list[tuple[_Plan, list[MemoryRecord], Summary]] = []
            for plan in chunk:
                if not all(i in held for i in plan.member_ids):
                    out.skipped["claimed_elsewhere"] += 1
                    continue
                members = [fresh[i] for i in plan.member_ids if i in fresh]
                if len(members) != len(plan.member_ids) or not all(eligible(m) for m in members):
                    out.skipped["changed_since_scan"] += 1
                    continue
                use_llm = ctx.llm is not None and (llm_budget is None or calls < llm_budget)
                if llm_only and not use_llm:
                    out.skipped["llm_budget"] += 1
                    continue
                calls += int(use_llm)
                summary = summarize(
                    [m.content for m in members],
                    llm=ctx.llm if use_llm else None,
                    purpose=purpose,
                    max_chars=max_chars,
                    op=f"dream.{step}",
                )
                if rejections is not None and summary.method != "llm":
                    out.skipped["llm_rejected"] += 1
                    out.rejected.append(summary.reason)
                    rejections.add(_summary_id(plan.kind, plan.member_ids))
                    continue
                ready.append((plan, members, summary))
            if not ready:
                continue
            assert ctx.embed is not None
            vectors = np.asarray(ctx.embed([s.text for _, _, s in ready]), dtype=np.float32)
            for (plan, members, summary), vec in zip(ready, vectors, strict=True):
                rec = make(members, summary, vec)
                if plan.key:
                    rec.metadata[META]["cluster"] = plan.key
                if _write(ctx, rec, members, supersede=supersede, link_weight=link_weight, step=step):
                    out.changed += 1 + (len(members) if supersede else 0)
                    out.groups += 1
                    out.members += len(members)
                    out.methods[summary.method] += 1
                    out.ids.append(rec.id)
                else:
                    out.skipped["conflict"] += 1
        finally:
            if held:
                ctx.store.release(ctx.owner, sorted(held))
    if rejections is not None:
        rejections.save()
    return out


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
        and not _protected(rec, flashbulb=True)
        and days_between(rec.created_at, ctx.now) >= mc.min_age_days
        and fading_retention_of(rec, now=ctx.now, cfg=ctx.settings.dynamics) >= cc.retention_threshold
    )


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
    plans: list[_Plan] = []
    methods: Counter[str] = Counter()
    for key in sorted(buckets, key=lambda k: tuple("" if v is None else v for v in k)):
        ids = sorted(buckets[key])
        if len(ids) < mc.group_size:
            continue
        kept, vecs = _vectors(ctx.store, ids)
        groups, how = disjoint_groups(
            vecs,
            threshold=threshold + threshold_raise(ctx, key[0]),
            min_size=mc.group_size,
            max_size=mc.max_group_size,
            ids=kept,
            cfg=cfg,
            fits=_fits([contents[i] for i in kept], mc.summary_max_chars),
        )
        methods[how] += 1
        plans.extend(_Plan(KIND_SUMMARY, [kept[i] for i in g]) for g in groups)
    report.details.update(candidates=len(found), groups_found=len(plans), neighbours=dict(methods))
    out = _run_plans(
        ctx,
        plans[: mc.max_groups_per_run],
        step="merge",
        eligible=lambda r: _mergeable(ctx, r),
        make=lambda members, s, v: _new_memory(
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
    report.changed = out.changed
    report.details.update(
        groups=out.groups,
        members=out.members,
        methods=dict(out.methods),
        skipped=dict(out.skipped),
        summaries=out.ids[:50],
    )
    return report


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
        and not _protected(rec, flashbulb=True)
        and _idle_days(rec, ctx.now) >= tc.min_idle_days
        and rec.utility < tc.max_utility
        and rec.access_count < tc.max_access_count
    )


def _scan_scopes(ctx: DreamContext, layers: Iterable[Layer], keep: Any) -> dict[tuple[str, str], list[MemoryRecord]]:
    flt = ctx.scope(layers=frozenset(layers))
    scopes: dict[tuple[str, str], list[MemoryRecord]] = defaultdict(list)
    for batch in ctx.store.scan(flt, batch_size=max(ctx.settings.dream.batch_size, 1000), omit=_CLUSTER_OMIT):
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


def _untried(plans: list[_Plan], rejections: Rejections) -> tuple[list[_Plan], int]:
    """The plans whose group was not rejected before (same members), and how many were."""
    fresh = [p for p in plans if not rejections.seen(_summary_id(p.kind, p.member_ids))]
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
        kept, mat = _vectors(ctx.store, [r.id for r in recs])
        vectors = dict(zip(kept, mat, strict=True))
        clusters.extend(
            theme_clusters(
                recs, vectors, tc=tc, min_size=tc.min_cluster, max_size=tc.max_cluster, similarity=similarity, cfg=cfg
            )
        )
    clusters.sort(key=_Cluster.rank)
    rejections = Rejections(ctx, "themes")
    plans, before = _untried([_Plan(KIND_THEME, [m.id for m in c.members], key=c.key) for c in clusters], rejections)
    report.details.update(
        eligible=sum(len(v) for v in scopes.values()), clusters_found=len(clusters), rejected_before=before
    )
    out = _run_plans(
        ctx,
        plans[: tc.max_llm_calls],
        step="themes",
        eligible=lambda r: _theme_eligible(ctx, r),
        make=lambda members, s, v: _new_memory(
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
    report.changed = out.changed
    report.details.update(
        themes=out.groups,
        members=out.members,
        methods=dict(out.methods),
        skipped=dict(out.skipped),
        rejected=out.rejected[:10],
        created=out.ids,
    )
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
        kept, mat = _vectors(ctx.store, [r.id for r in recs])
        for c in theme_clusters(
            recs,
            dict(zip(kept, mat, strict=True)),
            tc=tc,
            min_size=ac.min_cluster,
            max_size=ac.max_evidence,
            similarity=similarity,
            cfg=cfg,
        ):
            if rejections.seen(_summary_id(KIND_PATTERN, [m.id for m in c.members])):
                before += 1
            elif _covered(ctx.store, c, ac.covered_share):
                covered += 1
            else:
                chosen.append(c)
    chosen.sort(key=_Cluster.rank)
    chosen = chosen[: ac.top_clusters]
    report.details.update(already_abstracted=covered, rejected_before=before)
    plans = [_Plan(KIND_PATTERN, [m.id for m in c.members], key=c.key) for c in chosen]
    out = _run_plans(
        ctx,
        plans,
        step="abstraction",
        eligible=lambda r: r.status is Status.ACTIVE and not made_by_dream(r),
        make=lambda members, s, v: _new_memory(
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
    report.changed = out.changed
    report.details.update(
        patterns=out.groups,
        evidence=out.members,
        methods=dict(out.methods),
        skipped=dict(out.skipped),
        rejected=out.rejected[:10],
        created=out.ids,
    )
    return report


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
        raise InvalidInputError(
            f"memory {summary_id} is not a consolidation summary (made by the consolidate, "
            "themes or abstraction dream steps); nothing to undo"
        )
    if rec.status is Status.INVALIDATED:
        raise InvalidInputError(f"the consolidation {summary_id} was already undone (the summary is invalidated)")
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
            store.log_actions([_summarized(rec, str(meta.get("step", meta["kind"])), now, outcome="UNDONE")])
    return {
        "summary_id": rec.id,
        "kind": meta["kind"],
        "restored": sorted(m.id for m in restored),
        "untouched": untouched,
    }


STEPS: list[tuple[str, Step]] = [
    ("consolidate", step_consolidate),
    ("merge", step_merge),
    ("themes", step_themes),
    ("abstraction", step_abstraction),
]

__all__ = [
    "KINDS",
    "META",
    "STEPS",
    "UNDONE",
    "disjoint_groups",
    "fading_retention_of",
    "made_by_dream",
    "step_abstraction",
    "step_consolidate",
    "step_merge",
    "step_themes",
    "theme_clusters",
    "undo_consolidation",
]
