"""Category notes: one maintained note per category of a user (category summaries) and per entity (entity
cards), made by the LLM from the members and refreshed in place when they change.

* ``category_summaries`` (the category summary system): a category of a user with 10+ active
  memories gets ONE summary memory (semantic, importance 0.8). It is refreshed in place, with the
  previous text in its history, when the category's members change — at most once per cooldown —
  and never duplicated: its id is derived from (user, category), so two dreamers cannot both create it.
* ``entity_cards`` (peer cards): the same for each entity with >= 5 memories about it.

  Summaries and cards are written by the LLM or not at all: member texts glued together are no
  summary and no card, and they outranked the members themselves in unrelated searches. Without an
  LLM (or with ``synthesis.use_llm`` off) both steps report ``"skipped": "needs an LLM"``; an answer
  that drops or invents a name, date or number (:func:`reverie.dream.summarize.grounding_problem`)
  is not used, and that group is not asked again until its members change.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import numpy as np

from reverie.dream.context import DreamContext, DreamStep, Rejections, StepReport
from reverie.dream.derived import (
    KIND_CARD,
    KIND_CATEGORY,
    SYNTHESIS_KEY,
    Group,
    Row,
    dream_llm,
    entity_name,
    get_many,
    groups_by,
    input_entry,
    inputs_of,
    new_note,
    snapshot,
    synthesis_id,
)
from reverie.dream.summarize import Summary, summarize
from reverie.errors import ConflictError
from reverie.model import (
    HistoryEvent,
    MemoryKind,
    MemoryRecord,
    Precision,
    Relation,
    RelationType,
    Status,
    content_hash,
)


@dataclass(frozen=True, slots=True)
class _Spec:
    """How one kind of maintained memory is made."""

    kind: str
    step: str
    min_members: int
    cooldown_s: float
    max_inputs: int
    max_chars: int
    max_per_run: int
    importance: float
    what: str
    render: Callable[[Group, list[str], DreamContext], tuple[str, str, str | None]]
    category: Callable[[Group], str]
    entities: Callable[[Group], list[str]]


def _digest(rows: Iterable[Row]) -> str:
    """A fingerprint of a group's membership (changes when a member joins or leaves)."""
    h = hashlib.sha256()
    for rid in sorted(r.id for r in rows):
        h.update(rid.encode())
        h.update(b"\n")
    return h.hexdigest()[:32]


def _keep_reason(rec: MemoryRecord, digest: str, now: datetime, cooldown_s: float) -> str | None:
    """Why the existing memory is left as it is this run (``None``: refresh it)."""
    if rec.status is not Status.ACTIVE:
        return "inactive"  # retired by a user or the lifecycle: not revived, not duplicated
    if rec.pinned or rec.immutable:
        return "protected"
    if rec.metadata.get("member_digest") == digest:
        return "unchanged"
    refreshed = rec.metadata.get("refreshed_at")
    if isinstance(refreshed, str):
        try:
            last = datetime.fromisoformat(refreshed)
        except ValueError:
            return None
        if now - last < timedelta(seconds=cooldown_s):
            return "debounced"
    return None


def _maintain(ctx: DreamContext, groups: list[Group], spec: _Spec) -> StepReport:
    report = StepReport(spec.step)
    outcome: Counter[str] = Counter()
    methods: Counter[str] = Counter()
    if ctx.embed is None:
        report.details["skipped"] = "no embedder in the dream context"
        return report
    if dream_llm(ctx) is None:
        # glued member texts are no summary and no card: these memories come from the LLM or not at all
        report.details["skipped"] = "needs an LLM" if ctx.llm is None else "needs an LLM (synthesis.use_llm is off)"
        return report
    eligible = sorted(
        (g for g in groups if len(g.members) >= spec.min_members),
        key=lambda g: (-len(g.members), g.user_id or "", g.key),
    )
    by_id = {synthesis_id(spec.kind, g.user_id, g.key): g for g in eligible}
    existing = get_many(ctx.store, list(by_id))
    rejections = Rejections(ctx, spec.step)
    rejected: list[str] = []
    budget = spec.max_per_run
    for sid, group in by_id.items():
        report.examined += 1
        digest = _digest(group.members)
        old = existing.get(sid)
        why = _keep_reason(old, digest, ctx.now, spec.cooldown_s) if old is not None else None
        if why is None and rejections.seen(sid, digest):
            why = "rejected_before"  # the LLM's text for these very members was not used: not asked again
        if why is not None:
            outcome[why] += 1
            continue
        if budget <= 0:
            outcome["deferred"] += 1
            continue
        budget -= 1
        done = _write_group(ctx, spec, sid, group, digest)
        if done is None:
            outcome["skipped_concurrent"] += 1
            continue
        action, detail = done
        outcome[action] += 1
        if action == "llm_rejected":
            rejections.add(sid, digest)
            rejected.append(detail)
            continue
        methods[detail] += 1
        report.changed += 1
    rejections.save()
    report.details.update(
        {"groups": len(eligible), "outcome": dict(outcome), "methods": dict(methods), "rejected": rejected[:10]}
    )
    return report


def _titled(title: str, text: str) -> str:
    """``title: text`` — unless the text already starts with the title's subject ("Entity card: Maya" and
    "Maya works at …" give "Entity card: Maya works at …", not "Entity card: Maya: Maya works at …")."""
    head, _, subject = title.rpartition(": ")
    if head and subject and re.match(re.escape(subject) + r"\b", text, flags=re.IGNORECASE):
        return f"{head}: {text}"
    return f"{title}: {text}"


def _write_group(ctx: DreamContext, spec: _Spec, sid: str, group: Group, digest: str) -> tuple[str, str] | None:
    """Create or refresh the group's memory: (what was done, the method) — or ("llm_rejected", why) when
    the LLM gave no usable text (nothing is written); ``None`` when another dreamer holds or changed it."""
    held = ctx.store.claim(
        [sid], owner=ctx.owner, phase=spec.step, now=ctx.claim_now(), ttl_seconds=ctx.settings.dream.claim_ttl_s
    )
    if not held:
        return None
    try:
        old = ctx.store.get([sid]).get(sid)
        if old is not None and _keep_reason(old, digest, ctx.now, spec.cooldown_s) is not None:
            return None
        if old is not None and old.memory_kind is MemoryKind.EPISODE:  # an episode is never rewritten
            return None
        chosen = inputs_of(group.members, spec.max_inputs)
        fetched = ctx.store.get([r.id for r in chosen])
        records = sorted(
            (fetched[r.id] for r in chosen if r.id in fetched and fetched[r.id].status is Status.ACTIVE),
            key=lambda r: (r.valid_from or r.created_at, r.id),
        )
        if not records:
            return None
        title, purpose, instruction = spec.render(group, [r.content for r in records], ctx)
        summary = summarize(
            [r.content for r in records],
            llm=dream_llm(ctx),
            purpose=purpose,
            instruction=instruction,
            max_chars=spec.max_chars,
            op="dream." + spec.step,
        )
        if summary.method != "llm":
            return "llm_rejected", summary.reason
        return _save_group(ctx, spec, sid, group, digest, old, records, _titled(title, summary.text), summary)
    finally:
        ctx.store.release(ctx.owner, [sid])


def _save_group(
    ctx: DreamContext,
    spec: _Spec,
    sid: str,
    group: Group,
    digest: str,
    old: MemoryRecord | None,
    records: list[MemoryRecord],
    content: str,
    summary: Summary,
) -> tuple[str, str] | None:
    """Write the group's memory with ``content``: created, confirmed (same text) or refreshed; ``None`` when a
    concurrent writer got there first."""
    assert ctx.embed is not None
    vector = np.asarray(ctx.embed([content]), dtype=np.float32)[0]
    metadata = {
        SYNTHESIS_KEY: spec.kind,
        "key": group.key,
        "members": len(group.members),
        "member_digest": digest,
        "method": summary.method,
        "refreshed_at": ctx.now.isoformat(),
    }
    data = {
        "method": summary.method,
        "why": summary.reason,
        "members": len(group.members),
        "inputs": [r.id for r in records],
        "what": spec.what,
    }
    links = [
        Relation(
            sid,
            r.id,
            RelationType.SUMMARIZES,
            weight=0.8,
            created_at=ctx.now,
            metadata={"path": summary.method, "by": "dream." + spec.step},
        )
        for r in records
    ]
    if old is None:
        ok = _create(ctx, spec, sid, group, content, vector, metadata, data, links)
        return ("created", summary.method) if ok else None
    if old.content == content:
        changes: dict[str, Any] = {"metadata": {**old.metadata, **metadata}}
        if not ctx.write(old, changes, None, ""):
            return None
        return "confirmed", summary.method
    changes = {
        "content": content,
        "content_hash": content_hash(content),
        "embedding": vector,
        "embedding_precision": Precision.FLOAT32,
        "metadata": {**old.metadata, **metadata},
        "updated_at": ctx.now,
        "inputs": [*old.inputs, input_entry(summary.method, len(group.members), ctx.now)],
    }
    with ctx.store.transaction():
        if not ctx.write(
            old,
            changes,
            "resynthesized",
            f"{spec.kind} refreshed: {len(group.members)} members ({spec.what})",
            {**data, "previous": old.content},
        ):
            return None
        ctx.store.add_relations(links)
    return "refreshed", summary.method


def _create(
    ctx: DreamContext,
    spec: _Spec,
    sid: str,
    group: Group,
    content: str,
    vector: Any,
    metadata: dict[str, Any],
    data: dict[str, Any],
    links: list[Relation],
) -> bool:
    rec = new_note(
        ctx,
        sid,
        group.user_id,
        content,
        vector,
        category=spec.category(group),
        entities=spec.entities(group),
        importance=spec.importance,
        metadata=metadata,
    )
    rec.inputs = [input_entry(str(metadata["method"]), len(group.members), ctx.now)]
    try:
        with ctx.store.transaction():
            ctx.store.insert([rec])
            ctx.store.add_history(
                [
                    HistoryEvent(
                        sid,
                        "created",
                        ctx.now,
                        reason=f"{spec.kind} of {len(group.members)} memories ({spec.what})",
                        actor="dream",
                        data={**data, "layer": rec.layer.value},
                    )
                ]
            )
            ctx.store.add_relations(links)
    except ConflictError:
        return False  # another dreamer created it a moment ago (same fixed id)
    if ctx.ops_log is not None:
        ctx.ops_log("dream.created", id=sid, reason=spec.kind)
    return True


def _render_category(group: Group, texts: list[str], ctx: DreamContext) -> tuple[str, str, str | None]:
    return f"Summary of {group.key} memories", "category", None


_CARD = (
    "These memories are all about one entity, {name}. Write its card: who or what it is, key facts and "
    "attributes, relationships to other entities, and a timeline of significant events. Keep every specific "
    "name, date and number; do not add anything the memories do not say."
)


def _render_card(group: Group, texts: list[str], ctx: DreamContext) -> tuple[str, str, str | None]:
    name = entity_name(group.key, texts)
    return f"Entity card: {name}", "card", _CARD.format(name=name)


def step_category_summaries(ctx: DreamContext) -> StepReport:
    """Category Summary System (see module docs)."""
    cfg = ctx.settings.dream.synthesis.category
    spec = _Spec(
        KIND_CATEGORY,
        "category_summaries",
        cfg.min_members,
        cfg.cooldown_s,
        cfg.max_inputs,
        cfg.max_chars,
        cfg.max_per_run,
        cfg.importance,
        "category summary",
        _render_category,
        lambda g: g.key,
        lambda g: [],
    )
    return _maintain(ctx, groups_by(snapshot(ctx), lambda r: (r.category,)), spec)


def step_entity_cards(ctx: DreamContext) -> StepReport:
    """Peer cards (see module docs)."""
    cfg = ctx.settings.dream.synthesis.cards
    spec = _Spec(
        KIND_CARD,
        "entity_cards",
        cfg.min_members,
        cfg.cooldown_s,
        cfg.max_inputs,
        cfg.max_chars,
        cfg.max_per_run,
        cfg.importance,
        "peer card",
        _render_card,
        lambda g: "entity",
        lambda g: [g.key],
    )
    return _maintain(ctx, groups_by(snapshot(ctx), lambda r: r.entities), spec)


STEPS: tuple[DreamStep, ...] = (
    DreamStep("category_summaries", step_category_summaries),
    DreamStep("entity_cards", step_entity_cards),
)

__all__ = ["STEPS", "step_category_summaries", "step_entity_cards"]
