"""Readable documents the consolidation pass keeps current, per user (the lifecycle design's consolidation
pass: entity profiles, the behavioural profile with its line cap, identity-style reflections consolidated
past 8 KB, compression guidelines learned from the action telemetry).

Each is a dream step writing one state entry per user (``profile:<user>``, ``entities:<user>``,
``reflections:<user>``, ``guidelines:<user>``), so every process on one store sees the same documents;
``Memory.documents`` reads them, the dashboard shows them, the markdown export writes them. A line of a
document that repeats a memory's words names the memory's id: forgetting the memory takes the line out
(:func:`scrub`). The guidelines hold counts only, never words.

* ``profile`` — the behavioural profile: the user's active preferences, decisions, commitments, principles,
  plans, skills, the dream's behavioural patterns and the procedural layer (know-how), one line each, most
  important first, grouped by kind, at most ``max_lines`` lines (the line cap: what is left out is counted).
* ``entity_profiles`` — one profile per entity the user's memories often name: how many memories name it,
  the most recently updated facts about it, the entities named beside it, first and last seen.
* ``reflections`` — the dream's behavioural patterns and the memories added as reflections, newest first;
  past ``max_bytes`` (8 KB) it is consolidated: near-identical reflections fold into the newest, then the
  least important, oldest fold out (listed by id) until the page fits.
* ``guidelines`` — compression-guideline learning: the distribution of write actions and outcomes over the
  telemetry window, and conservative guidance for the next passes: when too many of the summaries made for
  this user were undone, consolidation and merge ask members to be more alike (:func:`threshold_raise`).
  Fail-open: a telemetry read that fails leaves the previous guidelines in place and the cycle goes on.
"""

from __future__ import annotations

import hashlib
import math
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime, timedelta
from typing import Any

from reverie.dream.context import DreamContext, DreamStep, StepReport
from reverie.errors import ReverieError
from reverie.model import Layer, MemoryRecord
from reverie.store.base import MemoryFilter, Store
from reverie.text.words import content_words

PROFILE, ENTITIES, REFLECTIONS, GUIDELINES = "profile", "entities", "reflections", "guidelines"
KINDS = (PROFILE, ENTITIES, REFLECTIONS, GUIDELINES)
#: headings of the behavioural profile, by category (procedural memories: "know-how")
_HEADINGS = {
    "preference": "Preferences",
    "decision": "Decisions",
    "commitment": "Commitments",
    "principle": "Principles",
    "plan": "Plans",
    "skill": "Skills",
    "pattern": "Behavioural patterns",
    "procedural": "Know-how",
}
#: the LLM's instruction when older reflections must leave the page
_CONDENSE = (
    "These are older reflections an assistant wrote about a user and about how to help them. Condense them "
    "into as few short sentences as possible, keeping every distinct lesson, name, date and number. "
    'Answer as JSON: {"summary": "..."}'
)


def state_key(kind: str, user_id: str | None) -> str:
    return f"{kind}:{user_id or ''}"


def _users(ctx: DreamContext, limit: int) -> list[str | None]:
    if ctx.all_users:
        return [u for u, _ in ctx.store.users(limit=limit)]
    return [ctx.user_id]


def _line(rec: MemoryRecord) -> dict[str, Any]:
    return {"text": " ".join(rec.content.split()), "ids": [rec.id]}


def _norm(text: str) -> str:
    return " ".join(text.casefold().split())


# --- the behavioural profile ------------------------------------------------------------------------


def build_profile(
    store: Store,
    user_id: str | None,
    *,
    categories: Sequence[str],
    layers: Sequence[Layer],
    max_lines: int,
    now: datetime,
) -> dict[str, Any]:
    """The behavioural profile of one user (see the module docs)."""
    want = max_lines * 2 + 10
    found: dict[str, MemoryRecord] = {}
    if categories:
        for rec in store.list(
            MemoryFilter(user_id=user_id, categories=frozenset(categories)), limit=want, order_by="importance"
        ):
            found[rec.id] = rec
    if layers:
        for rec in store.list(
            MemoryFilter(user_id=user_id, layers=frozenset(layers)), limit=want, order_by="importance"
        ):
            found[rec.id] = rec
    ranked = sorted(found.values(), key=lambda r: (-r.importance, -r.updated_at.timestamp(), r.id))
    seen: dict[str, dict[str, Any]] = {}
    lines: list[tuple[str, dict[str, Any]]] = []
    for rec in ranked:
        key = _norm(rec.content)
        if key in seen:  # the same words twice: one line naming both memories
            seen[key]["ids"].append(rec.id)
            continue
        heading = "procedural" if rec.layer is Layer.PROCEDURAL else rec.category
        line = _line(rec)
        seen[key] = line
        lines.append((heading, line))
    kept, dropped = lines[:max_lines], max(0, len(lines) - max_lines)
    order = [*_HEADINGS, *sorted({h for h, _ in kept} - set(_HEADINGS))]
    sections = [
        {"heading": _HEADINGS.get(h, h.capitalize()), "lines": [ln for hh, ln in kept if hh == h]}
        for h in order
        if any(hh == h for hh, _ in kept)
    ]
    return {
        "kind": PROFILE,
        "user_id": user_id,
        "updated_at": now.isoformat(),
        "title": "Behavioural profile",
        "sections": sections,
        "lines": len(kept),
        "line_cap": max_lines,
        "left_out": dropped,
        "note": (f"{dropped} more line(s) left out by the line cap ({max_lines})" if dropped else ""),
    }


def step_profile(ctx: DreamContext) -> StepReport:
    """The behavioural profile per user, with its line cap (see the module docs)."""
    dc = ctx.settings.dream.documents
    pc = dc.profile
    changed = lines = left_out = 0
    users = _users(ctx, pc.max_users)
    for user in users:
        doc = build_profile(
            ctx.store, user, categories=pc.categories, layers=dc.profile_layers, max_lines=pc.max_lines, now=ctx.now
        )
        changed += _put(ctx.store, PROFILE, user, doc)
        lines += doc["lines"]
        left_out += doc["left_out"]
    return StepReport(
        "profile",
        changed=changed,
        examined=len(users),
        details={"users": len(users), "lines": lines, "left_out_by_line_cap": left_out},
    )


# --- entity profiles --------------------------------------------------------------------------------


def _entity_name(uri: str) -> str:
    return uri.rsplit("/", 1)[-1].replace("_", " ")


def _entity_type(uri: str) -> str:
    parts = uri.removeprefix("entity://").split("/")
    return parts[0] if len(parts) > 1 else "entity"


def build_entity_profiles(
    store: Store,
    user_id: str | None,
    counts: dict[str, int],
    *,
    max_entities: int,
    min_memories: int,
    max_facts: int,
    now: datetime,
    previous: dict[str, Any] | None,
) -> tuple[dict[str, Any], int]:
    """The entity profiles of one user, and how many of them changed since ``previous``."""
    chosen = sorted(((n, uri) for uri, n in counts.items() if n >= min_memories), key=lambda t: (-t[0], t[1]))
    old = (previous or {}).get("entities", {})
    entities: dict[str, Any] = {}
    changed = 0
    for n, uri in chosen[:max_entities]:
        recs = store.list(
            MemoryFilter(user_id=user_id, entities=frozenset({uri})), limit=max_facts, order_by="updated_at"
        )
        digest = hashlib.sha256(repr([(r.id, r.version) for r in recs]).encode()).hexdigest()[:16]
        before = old.get(uri)
        if before is not None and before.get("digest") == digest and before.get("memories") == n:
            entities[uri] = before
            continue
        changed += 1
        related = Counter(e for r in recs for e in r.entities if e != uri)
        times = [r.valid_from or r.created_at for r in recs]
        entities[uri] = {
            "name": _entity_name(uri),
            "type": _entity_type(uri),
            "memories": n,
            "digest": digest,
            "updated_at": now.isoformat(),
            "first_seen": min(times).isoformat() if times else None,
            "last_seen": max(times).isoformat() if times else None,
            "facts": [_line(r) for r in recs],
            "related": [_entity_name(e) for e, _ in related.most_common(8)],
        }
    changed += len(set(old) - set(entities))
    doc = {
        "kind": ENTITIES,
        "user_id": user_id,
        "updated_at": now.isoformat(),
        "title": "Entity profiles",
        "entities": entities,
    }
    return doc, changed


def step_entity_profiles(ctx: DreamContext) -> StepReport:
    """Entity profiles per user, refreshed where their facts changed (see the module docs)."""
    ec = ctx.settings.dream.documents.entity_profiles
    users = _users(ctx, ctx.settings.dream.documents.profile.max_users)
    counts: dict[str | None, dict[str, int]] = {}
    if users:
        everyone = len(users) > 1  # one user: that user's partition only
        flt = MemoryFilter(all_users=everyone, user_id=None if everyone else users[0])
        for (user, entity), n in ctx.store.entity_counts(flt).items():
            counts.setdefault(user, {})[entity] = n
    changed = profiles = 0
    for user in users:
        doc, n = build_entity_profiles(
            ctx.store,
            user,
            counts.get(user, {}),
            max_entities=ec.max_entities,
            min_memories=ec.min_memories,
            max_facts=ec.max_facts,
            now=ctx.now,
            previous=ctx.store.get_state(state_key(ENTITIES, user)),
        )
        if n:
            ctx.store.set_state(state_key(ENTITIES, user), doc)
        changed += n
        profiles += len(doc["entities"])
    return StepReport(
        "entity_profiles",
        changed=changed,
        examined=len(users),
        details={"users": len(users), "profiles": profiles, "refreshed": changed},
    )


# --- reflections ------------------------------------------------------------------------------------


def _jaccard(a: set[str], b: set[str]) -> float:
    return len(a & b) / len(a | b) if a or b else 1.0


def _size(lines: Iterable[dict[str, Any]]) -> int:
    return sum(len(("- " + ln["text"] + "\n").encode("utf-8")) for ln in lines)


def _fold_similar(lines: list[dict[str, Any]], fold_similarity: float) -> tuple[list[dict[str, Any]], int]:
    """Near-identical lines fold into the first (newest) of them, which counts how many it holds."""
    kept: list[dict[str, Any]] = []
    words: list[set[str]] = []
    folded = 0
    for ln in lines:
        w = content_words(ln["text"])
        match = next((i for i, other in enumerate(words) if _jaccard(w, other) >= fold_similarity), None)
        if match is None:
            kept.append({**ln, "ids": list(ln["ids"]), "times": 1})
            words.append(w)
            continue
        target = kept[match]
        target["ids"].extend(ln["ids"])
        target["times"] += 1
        target["importance"] = max(target["importance"], ln["importance"])
        folded += 1
    for ln in kept:
        if ln["times"] > 1:
            ln["text"] = f"{ln['text']} (×{ln['times']})"
    return kept, folded


def _condensed(
    kept: list[dict[str, Any]],
    order: list[int],
    drop: set[int],
    max_bytes: int,
    condense: Callable[[list[str]], str | None],
) -> list[dict[str, Any]] | None:
    """The page with the lines ``drop`` names (and more, in ``order``, if needed) condensed into one line by
    the LLM; ``None`` when it has no acceptable answer or the page does not fit (at most three tries)."""
    rest = [i for i in order if i not in drop]  # the next to go, first
    keep = [i for i in range(len(kept)) if i not in drop]
    dropped = [kept[i] for i in sorted(drop)]
    text = condense([ln["text"] for ln in dropped])
    for _ in range(3):
        if not text:
            return None
        line = {
            "text": "Earlier reflections, condensed: " + " ".join(text.split()),
            "ids": [mid for ln in dropped for mid in ln["ids"]],
            "importance": max(ln["importance"] for ln in dropped),
            "at": max(ln["at"] for ln in dropped),
            "agent_id": None,
            "pattern": False,
            "condensed": len(dropped),
        }
        room = max_bytes - _size([line])
        while rest and _size(kept[i] for i in keep) > room:  # make room: more lines go into the condensing
            nxt = rest.pop(0)
            keep.remove(nxt)
            dropped.append(kept[nxt])
        if _size(kept[i] for i in keep) > room:
            return None
        if line["condensed"] == len(dropped):
            return [*(kept[i] for i in keep), line]
        text = condense([ln["text"] for ln in dropped])
    return None


def consolidate_reflections(
    lines: list[dict[str, Any]],
    *,
    max_bytes: int,
    fold_similarity: float,
    condense: Callable[[list[str]], str | None] | None = None,
) -> tuple[list[dict[str, Any]], list[str], dict[str, Any]]:
    """Fit reflection lines (newest first, each with ``text``, ``ids``, ``importance``, ``at``) into ``max_bytes``:
    near-identical lines fold into the newest of them, then the least important, least repeated, oldest lines
    fold out — or, with ``condense`` (the LLM: texts → one text, ``None`` when it has no acceptable answer),
    become one condensed line naming all their memories, when the page then fits (at most three tries, each
    condensing more lines). Returns the kept lines, the ids folded out, and what was done."""
    before = _size(lines)
    if before <= max_bytes:
        return lines, [], {"consolidated": False, "bytes_before": before, "bytes_after": before}
    kept, folded_similar = _fold_similar(lines, fold_similarity)
    out: list[str] = []
    dropped = condensed = 0
    if _size(kept) > max_bytes:
        # the least important go first; among equals, a reflection seen fewer times, then the oldest
        order = sorted(range(len(kept)), key=lambda i: (kept[i]["importance"], kept[i]["times"], kept[i]["at"]))
        drop: set[int] = set()
        size = _size(kept)
        for i in order:
            if size <= max_bytes:
                break
            drop.add(i)
            size -= _size([kept[i]])
        page = _condensed(kept, order, drop, max_bytes, condense) if condense is not None else None
        if page is not None:
            condensed = int(page[-1]["condensed"])
            kept = page
        else:
            out = [mid for i in sorted(drop) for mid in kept[i]["ids"]]
            dropped = len(drop)
            kept = [ln for i, ln in enumerate(kept) if i not in drop]
    for ln in kept:
        ln.pop("times", None)
    return (
        kept,
        out,
        {
            "consolidated": True,
            "bytes_before": before,
            "bytes_after": _size(kept),
            "folded_similar": folded_similar,
            "folded_out_lines": dropped,
            "condensed_by_llm": condensed,
        },
    )


def build_reflections(
    store: Store,
    user_id: str | None,
    *,
    max_bytes: int,
    fold_similarity: float,
    limit: int,
    now: datetime,
    condense: Callable[[list[str]], str | None] | None = None,
) -> dict[str, Any]:
    """The reflections document of one user (see the module docs)."""
    from reverie.dream.group_notes import META

    found: dict[str, MemoryRecord] = {}
    for flt in (
        MemoryFilter(user_id=user_id, categories=frozenset({"pattern", "reflection"})),
        MemoryFilter(user_id=user_id, metadata={"reflection": True}),
    ):
        for rec in store.list(flt, limit=limit, order_by="created_at"):
            found[rec.id] = rec
    recs = sorted(found.values(), key=lambda r: (-r.created_at.timestamp(), r.id))[:limit]
    lines = [
        {
            **_line(r),
            "importance": r.importance,
            "at": r.created_at.isoformat(),
            "agent_id": r.agent_id,
            "pattern": isinstance(r.metadata.get(META), dict),
        }
        for r in recs
    ]
    kept, folded, how = consolidate_reflections(
        lines, max_bytes=max_bytes, fold_similarity=fold_similarity, condense=condense
    )
    return {
        "kind": REFLECTIONS,
        "user_id": user_id,
        "updated_at": now.isoformat(),
        "title": "Reflections",
        "lines": kept,
        "folded_out": folded,
        "max_bytes": max_bytes,
        **how,
    }


def step_reflections(ctx: DreamContext) -> StepReport:
    """The reflections document per user, consolidated past its size (see the module docs)."""
    rc = ctx.settings.dream.documents.reflections
    users = _users(ctx, ctx.settings.dream.documents.profile.max_users)
    changed = consolidated = lines = 0
    llm = ctx.llm if rc.use_llm else None

    def condense(texts: list[str]) -> str | None:
        from reverie.dream.summarize import summarize

        s = summarize(
            texts,
            llm=llm,
            purpose="reflections",
            instruction=_CONDENSE,
            max_chars=rc.condensed_max_chars,
            op="dream.reflections",
        )
        return s.text if s.method == "llm" else None

    for user in users:
        doc = build_reflections(
            ctx.store,
            user,
            max_bytes=rc.max_bytes,
            fold_similarity=rc.fold_similarity,
            limit=rc.max_reflections,
            now=ctx.now,
            condense=condense if llm is not None else None,
        )
        if not doc["lines"] and ctx.store.get_state(state_key(REFLECTIONS, user)) is None:
            continue
        changed += _put(ctx.store, REFLECTIONS, user, doc)
        consolidated += bool(doc["consolidated"])
        lines += len(doc["lines"])
    return StepReport(
        "reflections",
        changed=changed,
        examined=len(users),
        details={"users": len(users), "lines": lines, "consolidated": consolidated},
    )


# --- compression guidelines ---------------------------------------------------------------------------


def learn_guidelines(
    events: Sequence[Any],
    *,
    user_id: str | None,
    now: datetime,
    window_days: float,
    min_summaries: int,
    undo_rate: float,
    raise_step: float,
    max_raise: float,
) -> dict[str, Any]:
    """The compression guidelines of one user from its action telemetry (newest first; see the module docs)."""
    actions = Counter(e.action for e in events)
    outcomes = Counter(f"{e.action}:{e.outcome}" for e in events)
    sources = Counter(e.source for e in events)
    made = {e.memory_id for e in events if e.action == "summarize_node" and e.outcome != "UNDONE" and e.memory_id}
    undone = {e.memory_id for e in events if e.action == "summarize_node" and e.outcome == "UNDONE"} & made
    writes = sum(actions[a] for a in ("store_episode", "store_note", "update_note", "discard"))
    rate = len(undone) / len(made) if made else 0.0
    guidance: list[str] = []
    raise_by = 0.0
    if len(made) >= min_summaries and undo_rate > 0 and rate >= undo_rate:
        raise_by = min(max_raise, raise_step * math.floor(rate / undo_rate))
        guidance.append(
            f"{len(undone)} of {len(made)} summaries made in the last {window_days:g} days were undone "
            f"({rate:.0%}): consolidation and merge ask members to be {raise_by:.2f} (cosine) more alike "
            "for this user."
        )
    elif made:
        guidance.append(f"{len(made)} summaries made, {len(undone)} undone: compression keeps its thresholds.")
    if writes:
        discard = actions["discard"] / writes
        updates = actions["update_note"] / writes
        if discard >= 0.5:
            guidance.append(
                f"{discard:.0%} of write decisions stored nothing (duplicates, filtered or trivial "
                "messages): most of what arrives is already known."
            )
        if updates >= 0.3:
            guidance.append(
                f"{updates:.0%} of write decisions updated or confirmed a memory: this user repeats and "
                "revises facts, so confirmations carry most of the strength."
            )
    if actions["create_artifact"]:
        guidance.append(
            f"{actions['create_artifact']} verbatim artifact(s) kept the exact words of decisions, "
            "commitments, corrections or preferences."
        )
    if not guidance:
        guidance.append("Not enough telemetry yet: every threshold stays as configured.")
    return {
        "kind": GUIDELINES,
        "user_id": user_id,
        "updated_at": now.isoformat(),
        "title": "Compression guidelines",
        "window_days": window_days,
        "events": len(events),
        "actions": dict(actions.most_common()),
        "outcomes": dict(outcomes.most_common()),
        "sources": dict(sources.most_common()),
        "summaries": len(made),
        "undone": len(undone),
        "undo_rate": round(rate, 4),
        "consolidation_threshold_raise": round(raise_by, 4),
        "guidance": guidance,
    }


def step_guidelines(ctx: DreamContext) -> StepReport:
    """Compression-guideline learning from the action telemetry (see the module docs); fail-open."""
    gc = ctx.settings.dream.documents.guidelines
    users = _users(ctx, ctx.settings.dream.documents.profile.max_users)
    since = ctx.now - timedelta(days=gc.window_days)
    changed = failed = raised = 0
    for user in users:
        try:
            events = ctx.store.memory_actions(user, since=since, limit=gc.max_events)
        except ReverieError as exc:  # never blocks the cycle: the previous guidelines stay
            failed += 1
            if ctx.ops_log is not None:
                ctx.ops_log("dream.guidelines", user_id=user, error=type(exc).__name__)
            continue
        doc = learn_guidelines(
            events,
            user_id=user,
            now=ctx.now,
            window_days=gc.window_days,
            min_summaries=gc.min_summaries,
            undo_rate=gc.undo_rate,
            raise_step=gc.raise_step,
            max_raise=gc.max_raise,
        )
        changed += _put(ctx.store, GUIDELINES, user, doc)
        raised += doc["consolidation_threshold_raise"] > 0
    return StepReport(
        "guidelines",
        changed=changed,
        examined=len(users),
        details={"users": len(users), "raised": raised, "failed": failed},
    )


def threshold_raise(ctx: DreamContext, user_id: str | None) -> float:
    """How much the learned guidelines raise this user's consolidation thresholds (0 without guidelines)."""
    cache: dict[str | None, float] = ctx.scratch.setdefault("guideline_raise", {})
    if user_id not in cache:
        doc = ctx.store.get_state(state_key(GUIDELINES, user_id))
        value = doc.get("consolidation_threshold_raise", 0.0) if isinstance(doc, dict) else 0.0
        cap = ctx.settings.dream.documents.guidelines.max_raise
        cache[user_id] = min(cap, max(0.0, float(value))) if isinstance(value, int | float) else 0.0
    return cache[user_id]


# --- shared -------------------------------------------------------------------------------------------


def _put(store: Store, kind: str, user_id: str | None, doc: dict[str, Any]) -> int:
    """Store ``doc`` unless only its time changed; 1 when it changed."""
    key = state_key(kind, user_id)
    old = store.get_state(key)
    if isinstance(old, dict) and {k: v for k, v in old.items() if k != "updated_at"} == {
        k: v for k, v in doc.items() if k != "updated_at"
    }:
        return 0
    store.set_state(key, doc)
    return 1


def _drop(lines: list[dict[str, Any]], gone: set[str]) -> tuple[list[dict[str, Any]], bool]:
    kept = [ln for ln in lines if not gone & set(ln.get("ids", ()))]
    return kept, len(kept) != len(lines)


def scrub(store: Store, user_id: str | None, memory_ids: Iterable[str]) -> int:
    """Take every line repeating a forgotten memory's words out of the user's documents; how many documents
    changed."""
    gone = set(memory_ids)
    changed = 0
    profile = store.get_state(state_key(PROFILE, user_id))
    if isinstance(profile, dict):
        hit = False
        for section in profile.get("sections", []):
            section["lines"], h = _drop(section.get("lines", []), gone)
            hit |= h
        if hit:
            profile["sections"] = [s for s in profile["sections"] if s["lines"]]
            store.set_state(state_key(PROFILE, user_id), profile)
            changed += 1
    entities = store.get_state(state_key(ENTITIES, user_id))
    if isinstance(entities, dict):
        table = entities.get("entities", {})
        hit_uris = [uri for uri, ent in table.items() if _drop(ent.get("facts", []), gone)[1]]
        for uri in hit_uris:  # the whole profile goes (its name and related names too); the next pass rebuilds it
            del table[uri]
        if hit_uris:
            store.set_state(state_key(ENTITIES, user_id), entities)
            changed += 1
    reflections = store.get_state(state_key(REFLECTIONS, user_id))
    if isinstance(reflections, dict):
        reflections["lines"], hit = _drop(reflections.get("lines", []), gone)
        folded = [i for i in reflections.get("folded_out", []) if i not in gone]
        if hit or folded != reflections.get("folded_out", []):
            reflections["folded_out"] = folded
            store.set_state(state_key(REFLECTIONS, user_id), reflections)
            changed += 1
    return changed


STEPS: tuple[DreamStep, ...] = (
    DreamStep("profile", step_profile),
    DreamStep("entity_profiles", step_entity_profiles),
    DreamStep("reflections", step_reflections),
    DreamStep("guidelines", step_guidelines),
)

__all__ = [
    "KINDS",
    "STEPS",
    "build_entity_profiles",
    "build_profile",
    "build_reflections",
    "consolidate_reflections",
    "learn_guidelines",
    "scrub",
    "state_key",
    "threshold_raise",
]
