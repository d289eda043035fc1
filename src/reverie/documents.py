"""Readable documents about a memory, for people as much as for programs (the lifecycle design's markdown
files): sealed memory boxes, the topic index, and the documents the consolidation pass keeps per user (the
behavioural profile, entity profiles, reflections, compression guidelines; :mod:`reverie.dream.documents`),
the action telemetry and verbatim artifacts.

* **Sealed boxes** — a box holds the memories of one topic episode of a conversation (the write path
  opens, fills and seals them; the trace weaver links boxes of a recurring topic). The markdown export
  writes each sealed box as ``boxes/YYYY-MM-DD/box-<id>.md`` (the day it was sealed): YAML front matter
  (id, user, session, opened/sealed, trace, topic words, memory count), then its topic and its memories,
  each linked to its own file under ``facts/``.
* **Topic index** — per user, what the memory is about: the topic words of the sealed boxes and the
  entities the active memories name, each with how many memories and boxes mention it, when it was first
  and last seen and in how many traces. The dream's ``topics`` step keeps it current (state
  ``topics:<user>``); the export writes ``state/topics.json`` and a readable ``topics.md``.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import yaml

from reverie.errors import InvalidInputError
from reverie.model import MemoryRecord
from reverie.store.base import Box, MemoryFilter, Store

TOPICS_KEY = "topics:"
_SAFE_ID = re.compile(r"[^0-9A-Za-z_-]+")
#: the write path's third-person subject ("User prefers …"): in every box of a user, no topic of its own
_NOT_TOPICS = frozenset({"user", "user's", "users", "user’s"})


def topics_key(user_id: str | None) -> str:
    return TOPICS_KEY + (user_id or "")


# --- the topic index ----------------------------------------------------------------------------------


def _entity_topic(uri: str) -> str:
    """``entity://person/lena`` → ``lena``; a plain name stays as it is (case folded)."""
    return uri.rsplit("/", 1)[-1].replace("_", " ").casefold().strip()


def build_topic_index(
    user_id: str | None, boxes: Sequence[Box], entity_counts: Mapping[str, int], *, now: datetime, max_topics: int
) -> dict[str, Any]:
    """The topic index of one user from its sealed boxes and the entity counts of its active memories."""
    topics: dict[str, dict[str, Any]] = defaultdict(
        lambda: {"memories": 0, "boxes": 0, "traces": set(), "first_seen": None, "last_seen": None, "entity": False}
    )
    for box in boxes:
        for word in dict.fromkeys(w.casefold().strip() for w in box.topic):
            if not word or word in _NOT_TOPICS:
                continue
            t = topics[word]
            t["boxes"] += 1
            t["memories"] += box.memory_count
            t["traces"].add(box.trace_id or box.id)
            first, last = box.opened_at, box.sealed_at or box.last_at
            t["first_seen"] = first if t["first_seen"] is None else min(t["first_seen"], first)
            t["last_seen"] = last if t["last_seen"] is None else max(t["last_seen"], last)
    for uri, n in entity_counts.items():
        name = _entity_topic(uri)
        if not name:
            continue
        t = topics[name]
        t["memories"] = max(t["memories"], n)
        t["entity"] = True
    ranked = sorted(topics.items(), key=lambda kv: (-(kv[1]["memories"] + kv[1]["boxes"]), kv[0]))[:max_topics]
    return {
        "user_id": user_id,
        "updated_at": now.isoformat(),
        "sealed_boxes": len(boxes),
        "topics": [
            {
                "topic": name,
                "memories": t["memories"],
                "boxes": t["boxes"],
                "traces": len(t["traces"]),
                "entity": t["entity"],
                "first_seen": t["first_seen"].isoformat() if t["first_seen"] else None,
                "last_seen": t["last_seen"].isoformat() if t["last_seen"] else None,
            }
            for name, t in ranked
        ],
    }


def refresh_topic_indexes(
    store: Store, users: Iterable[str | None], *, now: datetime, max_topics: int, max_boxes: int
) -> dict[str | None, dict[str, Any]]:
    """Build and store (state ``topics:<user>``) the topic index of each user; returns them."""
    wanted = list(dict.fromkeys(users))
    counts: dict[str | None, dict[str, int]] = defaultdict(dict)
    if wanted:
        everyone = len(wanted) > 1  # one user: that user's partition only
        flt = MemoryFilter(all_users=everyone, user_id=None if everyone else wanted[0])
        for (user, entity), n in store.entity_counts(flt).items():
            counts[user][entity] = n
    out: dict[str | None, dict[str, Any]] = {}
    for user in wanted:
        index = build_topic_index(
            user, store.sealed_boxes(user, limit=max_boxes), counts.get(user, {}), now=now, max_topics=max_topics
        )
        store.set_state(topics_key(user), index)
        out[user] = index
    return out


def agent_topic_index(
    store: Store, user_id: str | None, agent_id: str, *, now: datetime, max_topics: int
) -> dict[str, Any]:
    """The topic index of one agent of a user: the entities its active memories name (not stored: the
    user's index is the one the dream keeps)."""
    counts = store.entity_counts(MemoryFilter(user_id=user_id, agent_id=agent_id))
    index = build_topic_index(
        user_id, [], {entity: n for (_user, entity), n in counts.items()}, now=now, max_topics=max_topics
    )
    return {**index, "agent_id": agent_id}


def topics_markdown(indexes: Mapping[str | None, Mapping[str, Any]]) -> str:
    """The topic indexes as a readable markdown page."""
    lines = ["# Topic index", ""]
    for user in sorted(indexes, key=lambda u: u or ""):
        index = indexes[user]
        lines += [
            f"## {user or '(no user)'}",
            "",
            f"Updated {index.get('updated_at', '?')} from {index.get('sealed_boxes', 0)} sealed box(es).",
            "",
        ]
        rows = index.get("topics") or []
        if not rows:
            lines += ["No topics yet.", ""]
            continue
        lines += ["| topic | memories | boxes | traces | first seen | last seen |", "|---|---:|---:|---:|---|---|"]
        for t in rows:
            name = str(t["topic"]).replace("|", "\\|") + (" (entity)" if t.get("entity") else "")
            lines.append(
                f"| {name} | {t['memories']} | {t['boxes']} | {t['traces']} | "
                f"{(t.get('first_seen') or '—')[:10]} | {(t.get('last_seen') or '—')[:10]} |"
            )
        lines.append("")
    return "\n".join(lines)


# --- sealed boxes ---------------------------------------------------------------------------------------


def box_path(box: Box) -> Path:
    """``boxes/YYYY-MM-DD/box-<id>.md`` (the day it was sealed, UTC); only safe characters reach the path."""
    if box.sealed_at is None:
        raise InvalidInputError(f"box {box.id} is not sealed")
    day = box.sealed_at.astimezone(UTC).strftime("%Y-%m-%d")
    safe = _SAFE_ID.sub("_", box.id)[:80] or "box"
    return Path("boxes") / day / f"box-{safe}.md"


def box_markdown(box: Box, memories: Sequence[MemoryRecord]) -> str:
    """A sealed box as markdown: front matter, its topic and its memories (oldest first), each linked to
    its file in the markdown tree."""
    from reverie.io import markdown_path

    front = {
        "id": box.id,
        "user_id": box.user_id,
        "session_id": box.session_id,
        "opened_at": box.opened_at.isoformat(),
        "last_at": box.last_at.isoformat(),
        "sealed_at": box.sealed_at.isoformat() if box.sealed_at else None,
        "trace_id": box.trace_id,
        "topic": list(box.topic),
        "memory_count": box.memory_count,
    }
    head = yaml.safe_dump(front, sort_keys=True, allow_unicode=True)
    sealed = box.sealed_at.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC") if box.sealed_at else "open"
    lines = [
        f"# Memory box {box.id}",
        "",
        f"Topic: {', '.join(box.topic) or '—'}",
        "",
        f"Sealed {sealed}"
        + (f" · session {box.session_id}" if box.session_id else "")
        + (f" · trace {box.trace_id}" if box.trace_id else "")
        + f" · {box.memory_count} memories",
        "",
    ]
    for rec in sorted(memories, key=lambda r: (r.created_at, r.id)):
        text = " ".join(rec.content.split())
        status = "" if rec.status.value == "active" else f" ({rec.status.value})"
        lines.append(f"- {text}{status} — [{rec.id}](../../{markdown_path(rec).as_posix()})")
    if not memories:
        lines.append("(its memories are not in this export)")
    return f"---\n{head}---\n" + "\n".join(lines) + "\n"


def export_documents(
    store: Store,
    records: Iterable[MemoryRecord],
    root: Path,
    *,
    users: Iterable[str | None],
    max_boxes: int,
    topic_indexes: Mapping[str | None, Mapping[str, Any]],
) -> dict[str, int]:
    """Write the sealed boxes of ``users`` (with those of ``records`` that belong to them), ``state/topics.json``
    and ``topics.md`` under ``root``. Returns how many of each were written."""
    root = root.resolve()
    by_box: dict[str, list[MemoryRecord]] = defaultdict(list)
    for rec in records:
        if rec.box_id:
            by_box[rec.box_id].append(rec)
    written = 0
    for user in dict.fromkeys(users):
        for box in store.sealed_boxes(user, limit=max_boxes):
            target = (root / box_path(box)).resolve()
            if root not in target.parents:  # defence in depth: the path holds safe characters only
                raise InvalidInputError(f"refusing to write outside {root}: {target}")
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(box_markdown(box, by_box.get(box.id, [])), encoding="utf-8")
            written += 1
    state = root / "state"
    state.mkdir(parents=True, exist_ok=True)
    payload = {(u or ""): dict(v) for u, v in topic_indexes.items()}
    (state / "topics.json").write_text(
        json.dumps(payload, ensure_ascii=False, indent=2, sort_keys=True) + "\n", encoding="utf-8"
    )
    (root / "topics.md").write_text(topics_markdown(topic_indexes), encoding="utf-8")
    return {"boxes": written, "topic_indexes": len(payload)}


# --- the consolidation pass's documents, the action telemetry and verbatim artifacts ----------------------


def _safe(name: str | None, fallback: str) -> str:
    return _SAFE_ID.sub("_", name or "")[:80].strip("_") or fallback


def _bullets(lines: Iterable[Mapping[str, Any]]) -> list[str]:
    return [f"- {' '.join(str(ln.get('text', '')).split())}" for ln in lines]


def document_markdown(doc: Mapping[str, Any]) -> str:
    """One of the consolidation pass's documents (profile, entity profiles, reflections, guidelines) as
    markdown."""
    kind = doc.get("kind")
    who = doc.get("user_id") or "(no user)"
    lines = [f"# {doc.get('title', kind)} — {who}", "", f"Updated {doc.get('updated_at', '?')}.", ""]
    if kind == "profile":
        for section in doc.get("sections", []):
            lines += [f"## {section['heading']}", "", *_bullets(section["lines"]), ""]
        if doc.get("note"):
            lines += [f"_{doc['note']}_", ""]
    elif kind == "entities":
        for ent in sorted(doc.get("entities", {}).values(), key=lambda e: (-int(e.get("memories", 0)), e["name"])):
            lines += [
                f"## {ent['name']} ({ent['type']})",
                "",
                f"{ent['memories']} memories · first seen {(ent.get('first_seen') or '—')[:10]} · last seen "
                f"{(ent.get('last_seen') or '—')[:10]}"
                + (f" · named with {', '.join(ent['related'])}" if ent.get("related") else ""),
                "",
                *_bullets(ent.get("facts", [])),
                "",
            ]
    elif kind == "reflections":
        lines += _bullets(doc.get("lines", []))
        if doc.get("consolidated"):
            lines += [
                "",
                f"_Consolidated past {doc.get('max_bytes')} bytes ({doc.get('bytes_before')} → "
                f"{doc.get('bytes_after')}): {doc.get('folded_similar', 0)} near-identical reflection(s) folded "
                f"together, {len(doc.get('folded_out', []))} older one(s) folded out._",
            ]
        lines.append("")
    elif kind == "guidelines":
        lines += [
            "## Guidance",
            "",
            *[f"- {g}" for g in doc.get("guidance", [])],
            "",
            f"## Write actions in the last {doc.get('window_days')} days ({doc.get('events', 0)} decisions)",
            "",
            "| action | count |",
            "|---|---:|",
            *[f"| {a} | {n} |" for a, n in doc.get("actions", {}).items()],
            "",
            "| action:outcome | count |",
            "|---|---:|",
            *[f"| {a} | {n} |" for a, n in doc.get("outcomes", {}).items()],
            "",
            f"Summaries made: {doc.get('summaries', 0)}, undone: {doc.get('undone', 0)} "
            f"(rate {doc.get('undo_rate', 0)}); consolidation threshold raised by "
            f"{doc.get('consolidation_threshold_raise', 0)}.",
            "",
        ]
    return "\n".join(lines)


def artifact_path(rec: MemoryRecord) -> Path:
    """``artifacts/YYYY-MM-DD/artifact-<id>.md`` (the day the memory was created, UTC)."""
    day = rec.created_at.astimezone(UTC).strftime("%Y-%m-%d")
    return Path("artifacts") / day / f"artifact-{_safe(rec.id, 'memory')}.md"


def artifact_markdown(rec: MemoryRecord, artifact: Mapping[str, Any]) -> str:
    """A verbatim artifact: the exact words a memory was extracted from, with the memory it became."""
    from reverie.io import markdown_path

    front = {
        "memory_id": rec.id,
        "user_id": rec.user_id,
        "agent_id": rec.agent_id,
        "category": rec.category,
        "kept_at": artifact.get("at"),
        "session_id": rec.session_id,
    }
    head = yaml.safe_dump(front, sort_keys=True, allow_unicode=True)
    quote = "\n".join("> " + line for line in str(artifact.get("verbatim", "")).splitlines() or [""])
    return (
        f"---\n{head}---\n# Verbatim artifact\n\n{quote}\n\nRemembered as: {' '.join(rec.content.split())} "
        f"— [{rec.id}](../../{markdown_path(rec).as_posix()})\n"
    )


def user_document_files(store: Store, user: str | None) -> dict[Path, str]:
    """The markdown files of one user's documents, by path in the tree: ``users/<user>/profile.md``,
    ``reflections.md``, ``compression-guidelines.md``, ``entities.md`` and ``entities/<name>.md`` (those the
    consolidation pass has written)."""
    from reverie.dream.documents import ENTITIES, GUIDELINES, PROFILE, REFLECTIONS, state_key

    folder = Path("users") / _safe(user, "_no_user")
    files: dict[Path, str] = {}
    for kind, name in (
        (PROFILE, "profile.md"),
        (REFLECTIONS, "reflections.md"),
        (GUIDELINES, "compression-guidelines.md"),
    ):
        doc = store.get_state(state_key(kind, user))
        if isinstance(doc, dict):
            files[folder / name] = document_markdown(doc)
    ents = store.get_state(state_key(ENTITIES, user))
    if isinstance(ents, dict) and ents.get("entities"):
        files[folder / "entities.md"] = document_markdown(ents)
        for uri, ent in ents["entities"].items():
            one = {**ents, "entities": {uri: ent}, "title": f"Entity profile: {ent['name']}"}
            files[folder / "entities" / f"{_safe(ent['name'], 'entity')}.md"] = document_markdown(one)
    return files


def export_user_documents(store: Store, root: Path, users: Iterable[str | None], *, max_events: int) -> dict[str, int]:
    """Write each user's documents under ``users/<user>/`` (:func:`user_document_files`) and its recent action
    telemetry as ``state/memory-actions.jsonl``. Returns how many of each were written."""
    root = root.resolve()
    counts = {"documents": 0, "entity_profiles": 0, "action_events": 0}
    state = root / "state"
    state.mkdir(parents=True, exist_ok=True)
    with (state / "memory-actions.jsonl").open("w", encoding="utf-8") as log:
        for user in dict.fromkeys(users):
            for rel, text in user_document_files(store, user).items():
                target = root / rel
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(text, encoding="utf-8")
                counts["entity_profiles" if len(rel.parts) == 4 else "documents"] += 1  # users/<u>/entities/<name>.md
            for event in reversed(store.memory_actions(user, limit=max_events)):
                log.write(json.dumps(event.to_dict(), ensure_ascii=False) + "\n")
                counts["action_events"] += 1
    return counts


__all__ = [
    "TOPICS_KEY",
    "artifact_markdown",
    "artifact_path",
    "box_markdown",
    "box_path",
    "build_topic_index",
    "document_markdown",
    "export_documents",
    "export_user_documents",
    "refresh_topic_indexes",
    "topics_key",
    "topics_markdown",
    "user_document_files",
]
