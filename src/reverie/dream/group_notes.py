"""The memory a group of memories becomes — a consolidation summary, a theme or a pattern: building its record,
writing it with its links and history (the members retired to the cold store when it replaces them), and running a
step's planned groups (claim, re-check, summarise, embed, write).

Memories made here carry ``metadata["consolidation"] = {"kind": "summary"|"theme"|"pattern", "members": [...],
"method": "llm"|"extractive", ...}`` and ``write_source = "dream"``.
"""

from __future__ import annotations

import uuid
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import numpy as np

from reverie.action_policy import lifecycle_of
from reverie.dream.context import DreamContext, Rejections, StepReport
from reverie.dream.summarize import Summary, summarize
from reverie.errors import ConflictError
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
from reverie.store.base import Store

META = "consolidation"
KIND_SUMMARY, KIND_THEME, KIND_PATTERN = "summary", "theme", "pattern"
KINDS = (KIND_SUMMARY, KIND_THEME, KIND_PATTERN)
#: metadata key set on originals whose consolidation was undone: they are never grouped again
UNDONE = "consolidation_undone"
_NAMESPACE = uuid.UUID("6f1d3c1e-5b8a-4c33-9d0e-7a52c0de0003")
_CHUNK = 2000  # ids per store.get / store.embeddings call
_WRITE_CHUNK = 64  # groups claimed, summarised and embedded together


def get_many(store: Store, ids: Sequence[str]) -> dict[str, MemoryRecord]:
    out: dict[str, MemoryRecord] = {}
    for start in range(0, len(ids), _CHUNK):
        out.update(store.get(ids[start : start + _CHUNK]))
    return out


def vectors_of(store: Store, ids: Sequence[str]) -> tuple[list[str], np.ndarray]:
    """The ids that have an embedding, and their vectors as one matrix (same order)."""
    found: dict[str, Any] = {}
    for start in range(0, len(ids), _CHUNK):
        found.update(store.embeddings(ids[start : start + _CHUNK]))
    kept = [i for i in ids if i in found]
    if not kept:
        return [], np.zeros((0, 1), dtype=np.float32)
    return kept, np.vstack([np.asarray(found[i], dtype=np.float32) for i in kept])


def summary_id(kind: str, member_ids: Iterable[str]) -> str:
    """Deterministic: the same members give the same id, so a group can never be written twice."""
    return str(uuid.uuid5(_NAMESPACE, kind + ":" + ",".join(sorted(member_ids))))


def _batched(items: Sequence[Any], size: int) -> Iterator[Sequence[Any]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


@dataclass(slots=True)
class Plan:
    """One group to write: its members, the record fields of the new memory, and how originals change."""

    kind: str
    member_ids: list[str]
    key: str = ""


@dataclass(slots=True)
class Outcome:
    changed: int = 0
    groups: int = 0
    members: int = 0
    methods: Counter[str] = field(default_factory=Counter)
    skipped: Counter[str] = field(default_factory=Counter)
    ids: list[str] = field(default_factory=list)
    rejected: list[str] = field(default_factory=list)  # why the LLM's answers were not used
    llm_calls: int = 0

    def fill(
        self, report: StepReport, *, groups: str, members: str, ids: str, ids_limit: int | None = None
    ) -> StepReport:
        """Write this outcome into a step's report, under the names the step gives its groups, their
        members and the memories it made."""
        report.changed = self.changed
        report.details.update(
            {
                groups: self.groups,
                members: self.members,
                "methods": dict(self.methods),
                "skipped": dict(self.skipped),
                ids: self.ids[:ids_limit],
            }
        )
        return report


def new_memory(
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
        id=summary_id(kind, [m.id for m in members]),
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
                ctx.store.log_actions([summarized_event(rec, step, now)])
    except ConflictError:
        return False  # a member changed, or this group was written already: the next run looks again
    if ctx.ops_log is not None:
        ctx.ops_log("dream." + step, id=rec.id, members=len(members), method=rec.metadata[META]["method"])
    return True


def summarized_event(rec: MemoryRecord, step: str, now: datetime, outcome: str | None = None) -> ActionEvent:
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


@dataclass(frozen=True, slots=True)
class _Job:
    """How a step writes its planned groups (see :func:`run_plans`)."""

    step: str
    eligible: Callable[[MemoryRecord], bool]
    make: Callable[[list[MemoryRecord], Summary, Any], MemoryRecord]
    purpose: str
    max_chars: int
    supersede: bool
    link_weight: float
    llm_budget: int | None
    rejections: Rejections | None


def run_plans(
    ctx: DreamContext,
    plans: Sequence[Plan],
    *,
    step: str,
    eligible: Callable[[MemoryRecord], bool],
    make: Callable[[list[MemoryRecord], Summary, Any], MemoryRecord],
    purpose: str,
    max_chars: int,
    supersede: bool,
    link_weight: float,
    llm_budget: int | None,
    rejections: Rejections | None = None,
) -> Outcome:
    """Claim, re-check, summarise, embed and write the planned groups, a chunk at a time.

    A group is written only when this run holds every member's claim (the earlier claim wins; another
    dreamer's group is skipped) and every member, re-read after the claim, is still eligible.
    With ``rejections`` the text must come from the LLM: a group whose answer is rejected (or that
    the call budget leaves unasked) is not written, and a rejected one is remembered.
    """
    job = _Job(step, eligible, make, purpose, max_chars, supersede, link_weight, llm_budget, rejections)
    out = Outcome()
    for chunk in _batched(plans, _WRITE_CHUNK):
        all_ids = [i for p in chunk for i in p.member_ids]
        held = set(
            ctx.store.claim(
                all_ids, owner=ctx.owner, phase=step, now=ctx.claim_now(), ttl_seconds=ctx.settings.dream.claim_ttl_s
            )
        )
        try:
            fresh = get_many(ctx.store, [i for i in all_ids if i in held])
            ready = [r for plan in chunk if (r := _prepare(ctx, job, plan, held, fresh, out)) is not None]
            if ready:
                _write_ready(ctx, job, ready, out)
        finally:
            if held:
                ctx.store.release(ctx.owner, sorted(held))
    if rejections is not None:
        rejections.save()
    return out


def _prepare(
    ctx: DreamContext, job: _Job, plan: Plan, held: set[str], fresh: dict[str, MemoryRecord], out: Outcome
) -> tuple[Plan, list[MemoryRecord], Summary] | None:
    """The plan's current members and their summary, or ``None`` (counted in ``out.skipped``) when a member is
    claimed elsewhere or changed, the LLM budget is spent, or an LLM-only text was rejected."""
    if not all(i in held for i in plan.member_ids):
        out.skipped["claimed_elsewhere"] += 1
        return None
    members = [fresh[i] for i in plan.member_ids if i in fresh]
    if len(members) != len(plan.member_ids) or not all(job.eligible(m) for m in members):
        out.skipped["changed_since_scan"] += 1
        return None
    use_llm = ctx.llm is not None and (job.llm_budget is None or out.llm_calls < job.llm_budget)
    if job.rejections is not None and not use_llm:
        out.skipped["llm_budget"] += 1
        return None
    out.llm_calls += int(use_llm)
    summary = summarize(
        [m.content for m in members],
        llm=ctx.llm if use_llm else None,
        purpose=job.purpose,
        max_chars=job.max_chars,
        op=f"dream.{job.step}",
    )
    if job.rejections is not None and summary.method != "llm":
        out.skipped["llm_rejected"] += 1
        out.rejected.append(summary.reason)
        job.rejections.add(summary_id(plan.kind, plan.member_ids))
        return None
    return plan, members, summary


def _write_ready(
    ctx: DreamContext, job: _Job, ready: list[tuple[Plan, list[MemoryRecord], Summary]], out: Outcome
) -> None:
    """Embed the summaries of the prepared groups together and write each group."""
    assert ctx.embed is not None
    vectors = np.asarray(ctx.embed([s.text for _, _, s in ready]), dtype=np.float32)
    for (plan, members, summary), vec in zip(ready, vectors, strict=True):
        rec = job.make(members, summary, vec)
        if plan.key:
            rec.metadata[META]["cluster"] = plan.key
        if _write(ctx, rec, members, supersede=job.supersede, link_weight=job.link_weight, step=job.step):
            out.changed += 1 + (len(members) if job.supersede else 0)
            out.groups += 1
            out.members += len(members)
            out.methods[summary.method] += 1
            out.ids.append(rec.id)
        else:
            out.skipped["conflict"] += 1


__all__ = [
    "KINDS",
    "KIND_PATTERN",
    "KIND_SUMMARY",
    "KIND_THEME",
    "META",
    "UNDONE",
    "Outcome",
    "Plan",
    "get_many",
    "new_memory",
    "run_plans",
    "summarized_event",
    "summary_id",
    "vectors_of",
]
