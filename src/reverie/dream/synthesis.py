"""Synthesis dream steps: category summaries, peer/entity cards, cross-domain
bridges and adversarial belief probing.

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
* ``bridges`` (cross-domain synthesis): entity pairs whose memories come from different
  contexts, never mention each other, and whose centroids lie in the "related, not the same domain"
  band. An LLM confirms a bridge (a bridge memory plus a related_to edge); without one (or when it
  fails, or its text states a name or number the facts do not) the rule alone gives a low-confidence
  related_to edge and no text.
* ``probe`` (adversarial belief probing): old semantic/procedural beliefs are challenged by
  their nearest newer memories with the write path's own contradiction check (LLM or heuristic);
  a contradicted belief gets a contradicts edge, ``verification_state = "disputed"`` and a lower
  importance, with history. Pinned and immutable beliefs are never touched. Probing writes no text.

Memories made here carry ``metadata["synthesis"]`` (their kind), ``write_source = "dream"`` and
``source = "dream"``; they are never members of other summaries, cards, bridges or probes. Members
are only read and linked (``summarizes`` edges), never changed.

Cost: one scan of the scope per run (light columns only), shared by the four steps through the
run's ``ctx.scratch`` and grouped by category and entity in one pass; bounded LLM calls, bounded
pairs of the top entities' centroids and a bounded number of vector searches — nothing compares
all pairs of memories.
"""

from __future__ import annotations

import dataclasses
import hashlib
import re
import uuid
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import numpy as np

from reverie.config.dream_synthesis import BridgeSettings, SynthesisSettings
from reverie.dream import DreamContext, Rejections, Step, StepReport
from reverie.dream.summarize import grounding_problem, summarize
from reverie.dynamics.access import initial_values
from reverie.errors import ConflictError
from reverie.model import (
    HistoryEvent,
    Layer,
    MemoryKind,
    MemoryRecord,
    Precision,
    Relation,
    RelationType,
    Status,
    content_hash,
)
from reverie.store.base import MemoryFilter, Store
from reverie.text import llm_update, updates

#: metadata key marking memories made by these steps (its value is the kind)
SYNTHESIS_KEY = "synthesis"
KIND_CATEGORY = "category_summary"
KIND_CARD = "entity_card"
KIND_BRIDGE = "bridge"

_NAMESPACE = uuid.UUID("6f1c1d2e-8a51-4f0e-9b7a-52a1c3e0d4b7")
_SEP = "\x1f"
_GET_CHUNK = 500


def synthesis_id(kind: str, user_id: str | None, key: str) -> str:
    """The fixed id of the synthesis memory of (kind, user, key): one per group, race-free."""
    return str(uuid.uuid5(_NAMESPACE, _SEP.join((kind, user_id or "", key))))


def is_synthesis(rec: MemoryRecord) -> bool:
    """Whether ``rec`` was made by a synthesis step (it is never a member of another one)."""
    return isinstance(rec.metadata.get(SYNTHESIS_KEY), str)


def _llm(ctx: DreamContext) -> Any | None:
    return ctx.llm if ctx.settings.dream.synthesis.use_llm else None


# --- the run's read snapshot -------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Row:
    """What grouping needs of one active memory (a small copy; the content is fetched on demand)."""

    id: str
    user_id: str | None
    category: str
    entities: tuple[str, ...]
    context: str
    layer: Layer
    recorded_at: datetime
    last_touch: datetime
    importance: float
    pinned: bool
    immutable: bool
    derived: bool  # made by synthesis, or a consolidation pattern (whose evidence stays active)
    member: bool  # in a member layer and not derived


def _context(rec: MemoryRecord) -> str:
    """The episode a memory came from: its memory box, else its session, else its category."""
    if rec.box_id:
        return "box:" + rec.box_id
    if rec.session_id:
        return "session:" + rec.session_id
    return "category:" + rec.category


def _derived(rec: MemoryRecord) -> bool:
    """Made by synthesis, or a deep-abstraction pattern: it restates memories that stay active,
    so counting it as a member would count their facts twice (consolidation summaries and themes,
    which replace their members, do count)."""
    consolidation = rec.metadata.get("consolidation")
    return is_synthesis(rec) or (isinstance(consolidation, dict) and consolidation.get("kind") == "pattern")


def _row(rec: MemoryRecord, member_layers: frozenset[Layer]) -> _Row:
    derived = _derived(rec)
    return _Row(
        id=rec.id,
        user_id=rec.user_id,
        category=rec.category,
        entities=tuple(dict.fromkeys(rec.entities)),
        context=_context(rec),
        layer=rec.layer,
        recorded_at=rec.recorded_at,
        last_touch=rec.last_accessed_at or rec.created_at,
        importance=rec.importance,
        pinned=rec.pinned,
        immutable=rec.immutable,
        derived=derived,
        member=rec.layer in member_layers and not derived,
    )


#: the fields the snapshot reads; the scan skips every other (heavy) column
_READ = frozenset(
    {
        "id",
        "version",
        "content",
        "content_hash",
        "user_id",
        "category",
        "entities",
        "box_id",
        "session_id",
        "layer",
        "recorded_at",
        "last_accessed_at",
        "created_at",
        "importance",
        "pinned",
        "immutable",
        "metadata",
    }
)
_OMIT = frozenset(f.name for f in dataclasses.fields(MemoryRecord)) - _READ

_SCRATCH_KEY = "synthesis.snapshot"


def _snapshot(ctx: DreamContext) -> list[_Row]:
    """Every active memory of the run's scope, scanned once per run (kept in ``ctx.scratch``) and
    shared by the four steps.

    Memories made by these steps are never members, so the snapshot stays valid while they add
    them; every write re-reads and version-checks the record it changes.
    """
    cached: list[_Row] | None = ctx.scratch.get(_SCRATCH_KEY)
    if cached is not None:
        return cached
    layers = frozenset(ctx.settings.dream.synthesis.member_layers)
    scan = ctx.store.scan(ctx.scope(stores=None), batch_size=ctx.settings.dream.batch_size, omit=_OMIT)
    rows = [_row(rec, layers) for batch in scan for rec in batch]
    ctx.scratch[_SCRATCH_KEY] = rows
    return rows


def _get_many(store: Store, ids: Sequence[str]) -> dict[str, MemoryRecord]:
    out: dict[str, MemoryRecord] = {}
    for start in range(0, len(ids), _GET_CHUNK):
        out.update(store.get(ids[start : start + _GET_CHUNK]))
    return out


# --- summaries and cards: one maintained memory per group ---------------------------------------


@dataclass(slots=True)
class _Group:
    user_id: str | None
    key: str
    members: list[_Row]


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
    render: Callable[[_Group, list[str], DreamContext], tuple[str, str, str | None]]
    category: Callable[[_Group], str]
    entities: Callable[[_Group], list[str]]


def _digest(rows: Iterable[_Row]) -> str:
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


def _inputs(members: list[_Row], n: int) -> list[_Row]:
    """The members fed to the summarizer: most important first, ties newest first."""
    return sorted(members, key=lambda r: (-r.importance, -r.recorded_at.timestamp(), r.id))[:n]


def _maintain(ctx: DreamContext, groups: list[_Group], spec: _Spec) -> StepReport:
    report = StepReport(spec.step)
    outcome: Counter[str] = Counter()
    methods: Counter[str] = Counter()
    if ctx.embed is None:
        report.details["skipped"] = "no embedder in the dream context"
        return report
    if _llm(ctx) is None:
        # glued member texts are no summary and no card: these memories come from the LLM or not at all
        report.details["skipped"] = "needs an LLM" if ctx.llm is None else "needs an LLM (synthesis.use_llm is off)"
        return report
    eligible = sorted(
        (g for g in groups if len(g.members) >= spec.min_members),
        key=lambda g: (-len(g.members), g.user_id or "", g.key),
    )
    by_id = {synthesis_id(spec.kind, g.user_id, g.key): g for g in eligible}
    existing = _get_many(ctx.store, list(by_id))
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


def _write_group(ctx: DreamContext, spec: _Spec, sid: str, group: _Group, digest: str) -> tuple[str, str] | None:
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
        chosen = _inputs(group.members, spec.max_inputs)
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
            llm=_llm(ctx),
            purpose=purpose,
            instruction=instruction,
            max_chars=spec.max_chars,
            op="dream." + spec.step,
        )
        if summary.method != "llm":
            return "llm_rejected", summary.reason
        content = _titled(title, summary.text)
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
            "inputs": [*old.inputs, _input(summary.method, len(group.members), ctx.now)],
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
    finally:
        ctx.store.release(ctx.owner, [sid])


def _input(method: str, members: int, now: datetime) -> dict[str, Any]:
    return {"action": "SYNTHESIZE", "at": now.isoformat(), "method": method, "members": members}


def _create(
    ctx: DreamContext,
    spec: _Spec,
    sid: str,
    group: _Group,
    content: str,
    vector: Any,
    metadata: dict[str, Any],
    data: dict[str, Any],
    links: list[Relation],
) -> bool:
    rec = _new_record(
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
    rec.inputs = [_input(str(metadata["method"]), len(group.members), ctx.now)]
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


def _new_record(
    ctx: DreamContext,
    sid: str,
    user_id: str | None,
    content: str,
    vector: Any,
    *,
    category: str,
    entities: list[str],
    importance: float,
    metadata: dict[str, Any],
) -> MemoryRecord:
    """A semantic note written by the dream (source "dream", trust 0.4)."""
    now = ctx.now
    rec = MemoryRecord(
        content=content,
        id=sid,
        user_id=user_id,
        instance_id=ctx.settings.instance_id,
        layer=Layer.SEMANTIC,
        category=category,
        memory_kind=MemoryKind.NOTE,
        entities=entities,
        embedding=vector,
        importance=importance,
        source="dream",
        write_source="dream",
        data_source="dream",
        metadata=metadata,
        valid_from=now,
        recorded_at=now,
        created_at=now,
        updated_at=now,
    )
    for key, value in initial_values(rec, now=now, cfg=ctx.settings.dynamics).items():
        setattr(rec, key, value)
    return rec


def _groups(rows: Iterable[_Row], key: Callable[[_Row], Iterable[str]]) -> list[_Group]:
    grouped: dict[tuple[str | None, str], list[_Row]] = defaultdict(list)
    for r in rows:
        if r.member:
            for k in key(r):
                grouped[(r.user_id, k)].append(r)
    return [_Group(u, k, members) for (u, k), members in grouped.items()]


def entity_name(uri: str, texts: Sequence[str] = ()) -> str:
    """A readable name of an entity URI (``entity://tech/react`` → ``react``), in the spelling the
    memories use when one of them mentions it (``Lena`` rather than ``lena``)."""
    tail = uri.rstrip("/").rsplit("/", 1)[-1] if uri.startswith("entity://") else uri
    plain = tail.replace("-", " ").strip() or uri
    low = plain.casefold()
    for text in texts:
        at = text.casefold().find(low)
        if at >= 0:
            return text[at : at + len(plain)]
    return plain


def _render_category(group: _Group, texts: list[str], ctx: DreamContext) -> tuple[str, str, str | None]:
    return f"Summary of {group.key} memories", "category", None


_CARD = (
    "These memories are all about one entity, {name}. Write its card: who or what it is, key facts and "
    "attributes, relationships to other entities, and a timeline of significant events. Keep every specific "
    "name, date and number; do not add anything the memories do not say."
)


def _render_card(group: _Group, texts: list[str], ctx: DreamContext) -> tuple[str, str, str | None]:
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
    return _maintain(ctx, _groups(_snapshot(ctx), lambda r: (r.category,)), spec)


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
    return _maintain(ctx, _groups(_snapshot(ctx), lambda r: r.entities), spec)


# --- cross-domain bridges ---------------------------------------------------------------------


_BRIDGE = (
    "Two entities appear in different contexts of one person's memories. From the facts given about each, "
    "decide whether there is a genuine, non-trivial connection between them; do not force one. Answer JSON: "
    '{"connected": true|false, "synthesis": "one or two sentences saying what connects them"}'
)


_BRIDGE_FACT_CHARS = 300  # each fact is shown to the LLM up to this many characters


@dataclass(slots=True)
class _Candidate:
    user_id: str | None
    a: str
    b: str
    similarity: float
    rep_a: str
    rep_b: str

    @property
    def pair(self) -> str:
        return self.a + _SEP + self.b


def _bridge_state_key(user_id: str | None) -> str:
    return "dream:synthesis:bridges:" + (user_id or "")


def _bridge_candidates(
    ctx: DreamContext, user_id: str | None, groups: list[_Group], judged: set[str], cfg: SynthesisSettings
) -> tuple[list[_Candidate], int]:
    """Pairs of this user's top entities that qualify, most similar first, and how many pairs were compared."""
    bcfg = cfg.bridges
    band = bcfg.band(ctx.profile)
    top = sorted((g for g in groups if len(g.members) >= bcfg.min_members), key=lambda g: (-len(g.members), g.key))[
        : bcfg.max_entities
    ]
    if len(top) < 2:
        return [], 0
    names = [g.key for g in top]
    index = {k: i for i, k in enumerate(names)}
    together: set[tuple[int, int]] = set()
    contexts: list[set[str]] = [set() for _ in top]
    seen_rows: set[str] = set()
    for i, g in enumerate(top):
        for r in g.members:
            contexts[i].add(r.context)
            if r.id in seen_rows:
                continue
            seen_rows.add(r.id)
            mine = sorted(index[e] for e in r.entities if e in index)
            together.update((x, y) for n, x in enumerate(mine) for y in mine[n + 1 :])
    samples = [[r.id for r in _inputs(g.members, bcfg.sample)] for g in top]
    vectors = ctx.store.embeddings([rid for s in samples for rid in s])
    member_vecs: list[tuple[list[str], np.ndarray]] = []
    centroids = np.zeros((len(top), _dim(vectors)), dtype=np.float32)
    for i, ids in enumerate(samples):
        have = [rid for rid in ids if rid in vectors]
        mat = np.stack([vectors[rid] for rid in have]) if have else np.zeros((0, centroids.shape[1]), np.float32)
        member_vecs.append((have, mat))
        if have:
            c = mat.mean(axis=0)
            norm = float(np.linalg.norm(c))
            centroids[i] = c / norm if norm > 0 else c
    sims = centroids @ centroids.T
    out: list[_Candidate] = []
    compared = 0
    for i in range(len(top)):
        for j in range(i + 1, len(top)):
            compared += 1
            s = float(sims[i, j])
            if not band.min_similarity <= s <= band.max_similarity or (i, j) in together:
                continue
            if _jaccard(contexts[i], contexts[j]) > bcfg.max_context_overlap:
                continue
            a, b = sorted((names[i], names[j]))
            if a + _SEP + b in judged or not member_vecs[i][0] or not member_vecs[j][0]:
                continue
            ia, ib = (i, j) if names[i] == a else (j, i)
            out.append(
                _Candidate(
                    user_id, a, b, s, _closest(member_vecs[ia], centroids[ib]), _closest(member_vecs[ib], centroids[ia])
                )
            )
    out.sort(key=lambda c: (-c.similarity, c.a, c.b))
    return out, compared


def _dim(vectors: dict[str, Any]) -> int:
    for v in vectors.values():
        return int(np.asarray(v).shape[0])
    return 1


def _closest(members: tuple[list[str], np.ndarray], target: np.ndarray) -> str:
    """The member whose vector is most similar to ``target`` (the memory that carries the bridge)."""
    ids, mat = members
    return ids[int(np.argmax(mat @ target))]


def _jaccard(a: set[str], b: set[str]) -> float:
    union = a | b
    return len(a & b) / len(union) if union else 0.0


def _ask_bridge(
    llm: Any, a: str, b: str, facts_a: list[str], facts_b: list[str], sim: float
) -> tuple[bool, str] | None:
    """The LLM's verdict on a bridge, or ``None`` when it is unavailable or its answer does not validate."""
    cut = _BRIDGE_FACT_CHARS
    user = (
        f"Entity A: {a}\nFacts about A:\n"
        + "\n".join(f"- {t[:cut]}" for t in facts_a)
        + f"\n\nEntity B: {b}\nFacts about B:\n"
        + "\n".join(f"- {t[:cut]}" for t in facts_b)
        + f"\n\nEmbedding similarity: {sim:.2f}"
    )
    answer = llm.chat_json(system=_BRIDGE, user=user, op="dream.bridges")
    if not isinstance(answer, dict) or not isinstance(answer.get("connected"), bool):
        return None
    text = answer.get("synthesis")
    if not answer["connected"]:
        return False, ""
    if not isinstance(text, str) or not text.strip():
        return None
    return True, " ".join(text.split())


def step_bridges(ctx: DreamContext) -> StepReport:
    """Cross-domain synthesis (see module docs)."""
    cfg = ctx.settings.dream.synthesis
    bcfg = cfg.bridges
    report = StepReport("bridges")
    outcome: Counter[str] = Counter()
    by_user: dict[str | None, dict[str, _Group]] = defaultdict(dict)
    for g in _groups(_snapshot(ctx), lambda r: r.entities):
        by_user[g.user_id][g.key] = g
    budget = bcfg.max_per_run
    compared_total = 0
    llm = _llm(ctx)
    for user_id in sorted(by_user, key=lambda u: u or ""):
        if budget <= 0 or ctx.embed is None:
            break
        groups = by_user[user_id]
        state = ctx.store.get_state(_bridge_state_key(user_id)) or {}
        judged_list: list[list[str]] = [list(p) for p in state.get("judged", [])]
        candidates, compared = _bridge_candidates(ctx, user_id, list(groups.values()), {p[0] for p in judged_list}, cfg)
        compared_total += compared
        report.examined += len(candidates)
        for cand in candidates[:budget]:
            budget -= 1
            facts = _bridge_facts(ctx, cand, groups)
            verdict, text = _judge_bridge(llm, cand, facts)
            outcome[verdict] += 1
            judged_list = [*judged_list, [cand.pair, verdict]][-bcfg.judged_kept :]
            with ctx.store.transaction():
                report.changed += _record_bridge(ctx, cand, verdict, text, facts, bcfg)
                ctx.store.set_state(_bridge_state_key(user_id), {"judged": judged_list})
    report.details.update(
        {
            "outcome": dict(outcome),
            "pairs_compared": compared_total,
            "band": bcfg.band(ctx.profile).model_dump(),
            "profile": ctx.profile,
        }
    )
    return report


def _judge_bridge(llm: Any | None, cand: _Candidate, facts: tuple[list[str], list[str]]) -> tuple[str, str]:
    """(verdict, text): ``llm`` (confirmed, with the LLM's synthesis), ``rejected`` (the LLM saw no
    connection) or ``heuristic`` (no LLM, it failed, or its text states a name or number the facts do not:
    the candidate rule alone decides, and no text is written)."""
    if llm is None:
        return "heuristic", ""
    names = entity_name(cand.a, facts[0]), entity_name(cand.b, facts[1])
    answer = _ask_bridge(llm, names[0], names[1], facts[0], facts[1], cand.similarity)
    if answer is None:
        return "heuristic", ""
    connected, text = answer
    if not connected:
        return "rejected", ""
    # the bridge text must be true of the facts it was given: no name or number they do not state
    given = [*names, *(t[:_BRIDGE_FACT_CHARS] for t in (*facts[0], *facts[1]))]
    if grounding_problem(text, given, keep_all=False) is not None:
        return "heuristic", ""
    return "llm", text


def _bridge_facts(ctx: DreamContext, cand: _Candidate, groups: dict[str, _Group]) -> tuple[list[str], list[str]]:
    """Up to five facts of each entity, the bridge-carrying memory first."""
    out: list[list[str]] = []
    for ent, rep in ((cand.a, cand.rep_a), (cand.b, cand.rep_b)):
        ids = [rep, *(r.id for r in _inputs([r for r in groups[ent].members if r.id != rep], 4))]
        recs = ctx.store.get(ids)
        out.append([recs[i].content for i in ids if i in recs])
    return out[0], out[1]


def _record_bridge(
    ctx: DreamContext,
    cand: _Candidate,
    verdict: str,
    text: str,
    facts: tuple[list[str], list[str]],
    bcfg: BridgeSettings,
) -> int:
    """Write what the verdict calls for (inside the caller's transaction); returns the memories/edges added."""
    if verdict == "rejected":
        return 0
    path = "llm" if verdict == "llm" else "heuristic"
    edge_meta: dict[str, Any] = {
        "bridge": [cand.a, cand.b],
        "similarity": round(cand.similarity, 4),
        "path": path,
        "by": "dream.bridges",
    }
    added = 0
    if verdict == "llm":
        content = f"Bridge between {entity_name(cand.a, facts[0])} and {entity_name(cand.b, facts[1])}: {text}"
        sid = synthesis_id(KIND_BRIDGE, cand.user_id, cand.pair)
        assert ctx.embed is not None
        vector = np.asarray(ctx.embed([content]), dtype=np.float32)[0]
        rec = _new_record(
            ctx,
            sid,
            cand.user_id,
            content,
            vector,
            category="fact",
            entities=[cand.a, cand.b],
            importance=bcfg.importance,
            metadata={
                SYNTHESIS_KEY: KIND_BRIDGE,
                "key": cand.pair,
                "similarity": round(cand.similarity, 4),
                "method": "llm",
            },
        )
        if not ctx.store.get([sid]):
            ctx.store.insert([rec])
            ctx.store.add_history(
                [
                    HistoryEvent(
                        sid,
                        "created",
                        ctx.now,
                        reason="cross-domain bridge confirmed by the LLM",
                        actor="dream",
                        data={
                            "entities": [cand.a, cand.b],
                            "similarity": cand.similarity,
                            "members": [cand.rep_a, cand.rep_b],
                        },
                    )
                ]
            )
            ctx.store.add_relations(
                [
                    Relation(sid, m, RelationType.SUMMARIZES, weight=0.8, created_at=ctx.now, metadata=dict(edge_meta))
                    for m in (cand.rep_a, cand.rep_b)
                ]
            )
            added += 1
        edge_meta["memory"] = sid
    conf = bcfg.llm_confidence if verdict == "llm" else bcfg.heuristic_confidence
    added += ctx.store.add_relations(
        [
            Relation(
                cand.rep_a, cand.rep_b, RelationType.RELATED_TO, confidence=conf, created_at=ctx.now, metadata=edge_meta
            )
        ]
    )
    return added


# --- adversarial belief probing ----------------------------------------------------------------


def _probe_state_key(ctx: DreamContext) -> str:
    return "dream:synthesis:probe:" + ("*" if ctx.all_users else (ctx.user_id or ""))


def _beliefs(ctx: DreamContext) -> list[_Row]:
    """This run's beliefs to probe: old, idle semantic/procedural memories, round-robin after the cursor."""
    pcfg = ctx.settings.dream.synthesis.probe
    layers = frozenset(pcfg.layers)
    idle_before = ctx.now - timedelta(days=pcfg.min_idle_days)
    rows = sorted(
        (
            r
            for r in _snapshot(ctx)
            if not r.derived and r.layer in layers and not r.pinned and not r.immutable and r.last_touch <= idle_before
        ),
        key=lambda r: ((r.user_id or ""), r.id),
    )
    if not rows or pcfg.max_per_run == 0:
        return []
    state = ctx.store.get_state(_probe_state_key(ctx)) or {}
    after = str(state.get("after", ""))
    start = next((i for i, r in enumerate(rows) if (r.user_id or "") + _SEP + r.id > after), 0)
    ordered = rows[start:] + rows[:start]
    return ordered[: pcfg.max_per_run]


def step_probe(ctx: DreamContext) -> StepReport:
    """Adversarial belief probing (see module docs)."""
    pcfg = ctx.settings.dream.synthesis.probe
    report = StepReport("probe")
    paths: Counter[str] = Counter()
    chosen = _beliefs(ctx)
    llm = _llm(ctx)
    llm_calls = 0
    min_sim = ctx.settings.write.gate.profile(ctx.profile).contradiction_min
    held = (
        ctx.store.claim(
            [r.id for r in chosen],
            owner=ctx.owner,
            phase="probe",
            now=ctx.claim_now(),
            ttl_seconds=ctx.settings.dream.claim_ttl_s,
        )
        if chosen
        else []
    )
    try:
        fresh = _get_many(ctx.store, held)
        for row in chosen:
            belief = fresh.get(row.id)
            if belief is None or belief.status is not Status.ACTIVE or belief.pinned or belief.immutable:
                continue
            report.examined += 1
            challengers = _challengers(ctx, belief, min_sim, pcfg.neighbours)
            found: list[tuple[MemoryRecord, float, str]] = []
            for other, sim in challengers:
                verdict: bool | None = None
                path = "heuristic"
                if llm is not None and llm_calls < pcfg.max_llm_calls:
                    llm_calls += 1
                    verdict = llm_update.contradicts(llm, belief.content, other.content)
                    path = "llm" if verdict is not None else "heuristic"
                if verdict is None:
                    verdict = updates.contradicts(
                        belief.content, other.content, correction=other.category == "correction"
                    )
                if verdict:
                    found.append((other, sim, path))
            if found and _dispute(ctx, belief, found, pcfg.importance_factor, pcfg.importance_floor):
                report.changed += 1
                paths.update(p for _, _, p in found)
    finally:
        if held:
            ctx.store.release(ctx.owner, held)
    if chosen:
        last = chosen[-1]
        ctx.store.set_state(
            _probe_state_key(ctx), {"after": (last.user_id or "") + _SEP + last.id, "at": ctx.now.isoformat()}
        )
    report.details.update(
        {"probed": report.examined, "disputed": report.changed, "paths": dict(paths), "llm_calls": llm_calls}
    )
    return report


def _challengers(ctx: DreamContext, belief: MemoryRecord, min_sim: float, k: int) -> list[tuple[MemoryRecord, float]]:
    """The belief's nearest newer memories (similar enough for the write gate to weigh a contradiction)
    that have not disputed it already."""
    vec = belief.embedding
    if vec is None:
        return []
    hits = ctx.store.vector_search(vec, MemoryFilter(user_id=belief.user_id), k + 1)
    hits = [h for h in hits if h.id != belief.id and h.score >= min_sim]
    if not hits:
        return []
    done = {
        r.src_id for r in ctx.store.relations([belief.id], types=frozenset({RelationType.CONTRADICTS}), direction="in")
    }
    recs = ctx.store.get([h.id for h in hits if h.id not in done])
    out: list[tuple[MemoryRecord, float]] = []
    for h in hits:
        other = recs.get(h.id)
        if other is None or _derived(other) or other.recorded_at <= belief.recorded_at:
            continue
        out.append((other, h.score))
    return out[:k]


def _dispute(
    ctx: DreamContext, belief: MemoryRecord, found: list[tuple[MemoryRecord, float, str]], factor: float, floor: float
) -> bool:
    """Lower a contradicted belief's importance (with history) and link its challengers."""
    new_importance = max(min(floor, belief.importance), belief.importance * factor)
    by = [o.id for o, _, _ in found]
    changes = {"importance": new_importance, "verification_state": "disputed", "updated_at": ctx.now}
    data = {
        "from": belief.importance,
        "to": new_importance,
        "by": by,
        "paths": sorted({p for _, _, p in found}),
        "what": "adversarial belief probing",
    }
    edges = [
        Relation(
            o.id,
            belief.id,
            RelationType.CONTRADICTS,
            confidence=1.0,
            created_at=ctx.now,
            metadata={"path": p, "similarity": round(s, 4), "by": "dream.probe"},
        )
        for o, s, p in found
    ]
    with ctx.store.transaction():
        if not ctx.write(belief, changes, "disputed", f"contradicted by newer memories {', '.join(by)}", data):
            return False
        ctx.store.add_relations(edges)
    return True


STEPS: list[tuple[str, Step]] = [
    ("category_summaries", step_category_summaries),
    ("entity_cards", step_entity_cards),
    ("bridges", step_bridges),
    ("probe", step_probe),
]

__all__ = [
    "KIND_BRIDGE",
    "KIND_CARD",
    "KIND_CATEGORY",
    "STEPS",
    "SYNTHESIS_KEY",
    "entity_name",
    "is_synthesis",
    "step_bridges",
    "step_category_summaries",
    "step_entity_cards",
    "step_probe",
    "synthesis_id",
]
