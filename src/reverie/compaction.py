"""``Memory.compact()``: memory dedup and index optimisation (the ``compact`` command of the
Cognitive Memory design: "memory dedup and index optimization").

1. **Dedup**: active memories of one user and agent whose normalised content is the same (one
   content hash) are one fact stored several times (``add(..., infer=False)`` and imports skip the
   write path's dedup). The survivor is the hot one, then the pinned one, then the most used, then the
   oldest; every other copy becomes ``superseded`` by it and moves to the cold store (never deleted,
   history on both sides), and the survivor counts each copy as a confirmation. Immutable copies are
   left as they are. Nothing a search could answer is lost: the survivor says exactly the same.
2. **Expired claims** of crashed dreamers are deleted.
3. **The store's compaction** (:meth:`reverie.store.base.Store.compact`): SQLite VACUUM, ANALYZE,
   full-text optimisation, vector index rebuild and change-log trim; PostgreSQL VACUUM (ANALYZE)
   and REINDEX CONCURRENTLY — with the bytes, rows and index entries it reclaimed.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from reverie.errors import ConflictError
from reverie.model import HistoryEvent, MemoryRecord, Relation, RelationType, Status, StoreTier
from reverie.store.base import MemoryFilter, Store

_CHUNK = 500


def _survivor_order(rec: MemoryRecord) -> tuple[int, int, int, float, str]:
    return (
        0 if rec.store is StoreTier.HOT else 1,
        0 if rec.pinned else 1,
        -rec.access_count,
        rec.created_at.timestamp(),
        rec.id,
    )


def deduplicate(store: Store, flt: MemoryFilter, *, now: datetime, actor: str = "compact") -> dict[str, Any]:
    """Supersede the extra copies of each group of identical active memories (see the module docs)."""
    groups = store.duplicate_groups(flt)
    superseded: list[str] = []
    skipped = 0
    for start in range(0, len(groups), _CHUNK):
        chunk: Sequence[list[str]] = groups[start : start + _CHUNK]
        records = store.get([i for g in chunk for i in g])
        for group in chunk:
            members = [records[i] for i in group if i in records and records[i].status is Status.ACTIVE]
            movable = [m for m in members if not m.immutable]
            if len(members) < 2 or not movable:
                continue
            keep = min(members, key=_survivor_order)
            copies = [m for m in movable if m.id != keep.id]
            if not copies:
                continue
            try:
                _merge(store, keep, copies, now=now, actor=actor)
            except ConflictError:
                skipped += 1  # changed meanwhile: the next compaction looks again
                continue
            superseded.extend(m.id for m in copies)
    return {"groups": len(groups), "superseded": len(superseded), "ids": superseded[:100], "skipped_changed": skipped}


def _merge(store: Store, keep: MemoryRecord, copies: list[MemoryRecord], *, now: datetime, actor: str) -> None:
    retire = {"status": Status.SUPERSEDED, "store": StoreTier.COLD, "superseded_by": keep.id, "updated_at": now}
    why = f"an identical copy of {keep.id} (same user, agent and content)"
    with store.transaction():
        written = store.update_fields_many([(m.id, retire, m.version) for m in copies])
        if len(written) != len(copies):
            raise ConflictError("a duplicate changed since it was read")
        store.update_fields(
            keep.id,
            {"confirmations": keep.confirmations + len(copies), "updated_at": now},
            expected_version=keep.version,
        )
        store.add_relations(
            [
                Relation(
                    keep.id,
                    m.id,
                    RelationType.SUPERSEDES,
                    confidence=1.0,
                    created_at=now,
                    metadata={"by": actor, "why": "duplicate"},
                )
                for m in copies
            ]
        )
        store.add_history(
            [
                HistoryEvent(
                    m.id,
                    "deduplicated",
                    now,
                    reason=why,
                    actor=actor,
                    data={"kept": keep.id, "from_store": m.store.value, "to_store": "cold"},
                )
                for m in copies
            ]
            + [
                HistoryEvent(
                    keep.id,
                    "confirmed",
                    now,
                    reason=f"{len(copies)} identical copies superseded by this memory",
                    actor=actor,
                    data={"copies": [m.id for m in copies]},
                )
            ]
        )


__all__ = ["deduplicate"]
