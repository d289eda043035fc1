"""The one place the mirror learns of changes: the store, seen through the mirror.

Every change reverie makes to a memory — the write path's create, update, supersede and reinforce, an
edit, an invalidation, a forget, a box sealed, a consolidation, a document the dream writes — reaches the
store through a handful of write methods (``insert``, ``update``, ``update_fields``,
``update_fields_many``, ``update_many``, ``delete``, ``put_box``, ``set_state``, ``delete_state``,
``delete_partition_rows``). :class:`MirroredStore` passes each of them to the real store unchanged and
notes what it touched; when the outermost transaction ends (or at once, for a write outside one), the
mirror renders what the store now holds. Nothing else in reverie knows the mirror exists, and a change
made by a path added later is mirrored as long as it goes through the store.

A change that only moves strengths (the access updates of a search: energy, access counts, stability)
touches none of the fields a file shows and writes nothing.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, cast

from reverie.mirror.layout import WATCHED_FIELDS
from reverie.mirror.writer import Mirror, doc_user
from reverie.model import MemoryRecord
from reverie.store.base import Box, Store


@dataclass(slots=True)
class _Pending:
    depth: int = 0
    ids: set[str] = field(default_factory=set)
    boxes: set[str] = field(default_factory=set)
    doc_users: set[str | None] = field(default_factory=set)
    topics: bool = False
    users_gone: set[str | None] = field(default_factory=set)

    def any(self) -> bool:
        return bool(self.ids or self.boxes or self.doc_users or self.topics or self.users_gone)


def _watched(fields: Mapping[str, Any]) -> bool:
    return not WATCHED_FIELDS.isdisjoint(fields)


class MirroredStore:
    """A :class:`~reverie.store.base.Store` that tells a :class:`Mirror` what each committed write changed.
    Every other attribute is the real store's."""

    def __init__(self, inner: Store, mirror: Mirror) -> None:
        self._inner = inner
        self.mirror = mirror
        self._local = threading.local()

    @property
    def inner(self) -> Store:
        return self._inner

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._inner, name)
        if callable(value):  # a bound method of the real store: looked up once
            setattr(self, name, value)
        return value

    def __repr__(self) -> str:
        return f"MirroredStore({self._inner!r}, mirror={str(self.mirror.root)!r})"

    # what changed -------------------------------------------------------------------------------
    def _pending(self) -> _Pending:
        pending: _Pending | None = getattr(self._local, "pending", None)
        if pending is None:
            pending = _Pending()
            self._local.pending = pending
        return pending

    def _noted(self) -> None:
        """After a write: mirror it now, unless a transaction is open (then when it ends)."""
        if self._pending().depth == 0:
            self.flush()

    def flush(self) -> None:
        pending = self._pending()
        if not pending.any():
            return
        self._local.pending = _Pending(depth=pending.depth)
        self.mirror.changed(
            ids=pending.ids,
            boxes=pending.boxes,
            doc_users=pending.doc_users,
            topics=pending.topics,
            users_gone=pending.users_gone,
        )

    @contextmanager
    def transaction(self) -> Iterator[None]:
        pending = self._pending()
        pending.depth += 1
        try:
            with self._inner.transaction():
                yield
        finally:
            pending.depth -= 1
            if pending.depth == 0:  # committed or rolled back: the mirror renders what the store holds
                self.flush()

    # the store's write methods, passed through --------------------------------------------------
    def insert(self, records: Sequence[MemoryRecord]) -> None:
        self._inner.insert(records)
        self._pending().ids.update(r.id for r in records)
        self._noted()

    def update(self, record: MemoryRecord, *, expected_version: int | None = None) -> int:
        version = self._inner.update(record, expected_version=expected_version)
        self._pending().ids.add(record.id)
        self._noted()
        return version

    def update_fields(self, memory_id: str, fields: Mapping[str, Any], *, expected_version: int | None = None) -> int:
        version = self._inner.update_fields(memory_id, fields, expected_version=expected_version)
        if _watched(fields):
            self._pending().ids.add(memory_id)
            self._noted()
        return version

    def update_fields_many(self, changes: Sequence[tuple[str, Mapping[str, Any], int | None]]) -> list[str]:
        written = self._inner.update_fields_many(changes)
        watched = {memory_id for memory_id, fields, _v in changes if _watched(fields)}
        touched = [memory_id for memory_id in written if memory_id in watched]
        if touched:
            self._pending().ids.update(touched)
            self._noted()
        return written

    def update_many(self, changes: Sequence[tuple[str, Mapping[str, Any]]]) -> None:
        self._inner.update_many(changes)
        touched = [memory_id for memory_id, fields in changes if _watched(fields)]
        if touched:
            self._pending().ids.update(touched)
            self._noted()

    def delete(self, ids: Sequence[str]) -> int:
        n = self._inner.delete(ids)
        self._pending().ids.update(ids)
        self._noted()
        return n

    def put_box(self, box: Box) -> None:
        self._inner.put_box(box)
        if box.sealed_at is not None:
            self._pending().boxes.add(box.id)
            self._pending().topics = True
            self._noted()

    def set_state(self, key: str, value: Any) -> None:
        self._inner.set_state(key, value)
        self._note_state([key])

    def delete_state(self, keys: Sequence[str]) -> int:
        n = self._inner.delete_state(keys)
        self._note_state(keys)
        return n

    def _note_state(self, keys: Sequence[str]) -> None:
        noted = False
        for key in keys:
            found = doc_user(key)
            if found is None:
                continue
            noted = True
            if found[0] == "doc":
                self._pending().doc_users.add(found[1])
            else:
                self._pending().topics = True
        if noted:
            self._noted()

    def delete_partition_rows(self, user_id: str | None, *, dry_run: bool = False) -> dict[str, int]:
        rows = self._inner.delete_partition_rows(user_id, dry_run=dry_run)
        if not dry_run:
            self._pending().users_gone.add(user_id)
            self._noted()
        return rows

    def close(self) -> None:
        try:
            self.flush()
        finally:
            self.mirror.lock.close()
            self._inner.close()


def mirrored(store: Store, mirror: Mirror) -> Store:
    """``store`` with every committed change written to ``mirror``."""
    return cast(Store, MirroredStore(store, mirror))


__all__ = ["MirroredStore", "mirrored"]
