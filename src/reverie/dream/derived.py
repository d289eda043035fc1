"""Notes the dream derives from groups of memories (category summaries, entity cards, bridges), and what the
steps that make or probe them share: the notes' fixed ids and marker, the run's read snapshot of active memories,
their grouping, and the record a derived note is written as.

The snapshot is one scan of the scope per run (light columns only), kept in the run's ``ctx.scratch`` and shared
by the category-note, bridge and belief-probe steps. Memories made here carry ``metadata["synthesis"]`` (their
kind), ``write_source = "dream"`` and ``source = "dream"``; they are never members of other notes, bridges or
probes. Members are only read and linked (``summarizes`` edges), never changed.
"""

from __future__ import annotations

import dataclasses
import uuid
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from reverie.dream.context import DreamContext
from reverie.dynamics.access import initial_values
from reverie.model import (
    Layer,
    MemoryKind,
    MemoryRecord,
)
from reverie.store.base import Store

SYNTHESIS_KEY = "synthesis"
KIND_CATEGORY = "category_summary"
KIND_CARD = "entity_card"
KIND_BRIDGE = "bridge"

_NAMESPACE = uuid.UUID("6f1c1d2e-8a51-4f0e-9b7a-52a1c3e0d4b7")
SEP = "\x1f"
_GET_CHUNK = 500


def synthesis_id(kind: str, user_id: str | None, key: str) -> str:
    """The fixed id of the synthesis memory of (kind, user, key): one per group, race-free."""
    return str(uuid.uuid5(_NAMESPACE, SEP.join((kind, user_id or "", key))))


def is_synthesis(rec: MemoryRecord) -> bool:
    """Whether ``rec`` was made by a synthesis step (it is never a member of another one)."""
    return isinstance(rec.metadata.get(SYNTHESIS_KEY), str)


def dream_llm(ctx: DreamContext) -> Any | None:
    return ctx.llm if ctx.settings.dream.synthesis.use_llm else None


# --- the run's read snapshot -------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Row:
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


def restates_others(rec: MemoryRecord) -> bool:
    """Made by synthesis, or a deep-abstraction pattern: it restates memories that stay active,
    so counting it as a member would count their facts twice (consolidation summaries and themes,
    which replace their members, do count)."""
    consolidation = rec.metadata.get("consolidation")
    return is_synthesis(rec) or (isinstance(consolidation, dict) and consolidation.get("kind") == "pattern")


def _row(rec: MemoryRecord, member_layers: frozenset[Layer]) -> Row:
    derived = restates_others(rec)
    return Row(
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


def snapshot(ctx: DreamContext) -> list[Row]:
    """Every active memory of the run's scope, scanned once per run (kept in ``ctx.scratch``) and
    shared by the four steps.

    Memories made by these steps are never members, so the snapshot stays valid while they add
    them; every write re-reads and version-checks the record it changes.
    """
    cached: list[Row] | None = ctx.scratch.get(_SCRATCH_KEY)
    if cached is not None:
        return cached
    layers = frozenset(ctx.settings.dream.synthesis.member_layers)
    scan = ctx.store.scan(ctx.scope(stores=None), batch_size=ctx.settings.dream.batch_size, omit=_OMIT)
    rows = [_row(rec, layers) for batch in scan for rec in batch]
    ctx.scratch[_SCRATCH_KEY] = rows
    return rows


def get_many(store: Store, ids: Sequence[str]) -> dict[str, MemoryRecord]:
    out: dict[str, MemoryRecord] = {}
    for start in range(0, len(ids), _GET_CHUNK):
        out.update(store.get(ids[start : start + _GET_CHUNK]))
    return out


@dataclass(slots=True)
class Group:
    user_id: str | None
    key: str
    members: list[Row]


def inputs_of(members: list[Row], n: int) -> list[Row]:
    """The members fed to the summarizer: most important first, ties newest first."""
    return sorted(members, key=lambda r: (-r.importance, -r.recorded_at.timestamp(), r.id))[:n]


def input_entry(method: str, members: int, now: datetime) -> dict[str, Any]:
    return {"action": "SYNTHESIZE", "at": now.isoformat(), "method": method, "members": members}


def new_note(
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


def groups_by(rows: Iterable[Row], key: Callable[[Row], Iterable[str]]) -> list[Group]:
    grouped: dict[tuple[str | None, str], list[Row]] = defaultdict(list)
    for r in rows:
        if r.member:
            for k in key(r):
                grouped[(r.user_id, k)].append(r)
    return [Group(u, k, members) for (u, k), members in grouped.items()]


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


__all__ = [
    "KIND_BRIDGE",
    "KIND_CARD",
    "KIND_CATEGORY",
    "SEP",
    "SYNTHESIS_KEY",
    "Group",
    "Row",
    "dream_llm",
    "entity_name",
    "get_many",
    "groups_by",
    "input_entry",
    "inputs_of",
    "is_synthesis",
    "new_note",
    "restates_others",
    "snapshot",
    "synthesis_id",
]
