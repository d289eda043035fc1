"""An import by a scoped credential (:meth:`reverie.scoped.ScopedMemory.restore`): each record must lie in the
credential's scope, and it keeps an id only when the id is free or one of the caller's memories; any other id
becomes one derived from it and the record's scope (the module docs of :mod:`reverie.scoped`)."""

from __future__ import annotations

import dataclasses
import hashlib
import re
from collections.abc import Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

from reverie.errors import InvalidInputError
from reverie.io import Entry
from reverie.model import MemoryRecord
from reverie.validation import clean_id, printable

if TYPE_CHECKING:
    from reverie.auth import Credential
    from reverie.memory import Memory

#: records checked together (one read of the ids they name)
_IMPORT_CHUNK = 500
_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")


def in_scope(memory: Memory, credential: Credential, records: Iterable[Any]) -> Iterator[Any]:
    """The records of an import by a scoped credential, each in its scope or rejected with the reason, with the
    ids they may keep (:func:`_own_ids`); see :class:`reverie.scoped.ScopedMemory.restore`."""
    if isinstance(records, str | bytes | Mapping | MemoryRecord) or not isinstance(records, Iterable):
        raise InvalidInputError("records must be a list (or an iterable) of records")
    chunk: list[Any] = []  # in the order given: answers keep naming lines in order
    for n, item in enumerate(records, start=1):
        where = getattr(item, "where", None) or f"record {n}"
        if getattr(item, "error", None) is not None:
            chunk.append(item)
            continue
        data = item if isinstance(item, Mapping | MemoryRecord) else getattr(item, "data", item)
        user, agent = _field(data, "user_id"), _field(data, "agent_id")
        if not isinstance(user, str) or user not in credential.users:
            chunk.append(Entry(where, error=f"user_id {printable(user)} is outside this credential's scope"))
        elif credential.agents is not None and agent not in credential.agents:
            chunk.append(Entry(where, error=f"agent_id {printable(agent)} is outside this credential's scope"))
        else:
            chunk.append((where, data))
        if len(chunk) >= _IMPORT_CHUNK:
            yield from _own_ids(memory, credential, chunk)
            chunk = []
    yield from _own_ids(memory, credential, chunk)


def _own_ids(memory: Memory, credential: Credential, chunk: list[Any]) -> Iterator[Any]:
    """The records of one chunk (``(where, data)``; anything else is passed on) with the ids they may keep
    in this scope (see the module docs): an id of one of the caller's memories stays (the record is
    skipped as a re-run); any other id — free, or taken by a memory of another scope, which must not be
    told apart — becomes the id derived from it and the record's scope, and so does a ``superseded_by``
    naming it. A ``box_id`` stays only when the box belongs to one of the credential's users."""
    records = [c for c in chunk if isinstance(c, tuple)]
    named = {i for _w, d in records for key in ("id", "superseded_by") if isinstance(i := _field(d, key), str)}
    own = {i for i, rec in memory.peek_many(sorted(named)).items() if credential.may_see(rec)}
    boxes = {b for _w, d in records if isinstance(b := _field(d, "box_id"), str)}
    own_boxes = {b for b in boxes if _box_in_scope(memory, credential, b)}
    for item in chunk:
        if not isinstance(item, tuple):
            yield item
            continue
        where, data = item
        user, agent = _field(data, "user_id"), _field(data, "agent_id")
        changes: dict[str, Any] = {}
        for key in ("id", "superseded_by"):
            value = _field(data, key)
            if isinstance(value, str) and value not in own and _valid_id(value):  # a bad one is rejected
                changes[key] = _derived_id(value, user, agent)
        box = _field(data, "box_id")
        if isinstance(box, str) and box not in own_boxes:
            changes["box_id"] = None
        yield Entry(where, _with(data, changes) if changes else data)


def _box_in_scope(memory: Memory, credential: Credential, box_id: str) -> bool:
    box = memory.box(box_id)
    return box is not None and box.user_id is not None and box.user_id in credential.users


def _field(data: Any, name: str) -> Any:
    """A field of an imported record (a :class:`MemoryRecord` or a mapping of its fields)."""
    if isinstance(data, MemoryRecord):
        return getattr(data, name, None)
    return data.get(name) if isinstance(data, Mapping) else None


def _with(data: Any, changes: Mapping[str, Any]) -> Any:
    if isinstance(data, MemoryRecord):
        return dataclasses.replace(data, **changes)
    return {**data, **changes}


def _valid_id(value: str) -> bool:
    try:
        clean_id(value)
    except InvalidInputError:
        return False
    return True


def _derived_id(original: str, user: Any, agent: Any) -> str:
    """The id a scoped import stores a record under when it may not keep ``original`` (see the module docs):
    a UUIDv7 keeping the original's time (its first 48 bits, when it has them, so the order by id is kept)
    with the rest taken from a hash of the original and the record's scope — the same on every run."""
    digest = hashlib.sha256(
        "\x00".join(("reverie-scoped-import", str(user), str(agent), original)).encode("utf-8", "surrogatepass")
    ).hexdigest()
    head = original.replace("-", "")[:12].lower() if _UUID.fullmatch(original) else digest[20:32]
    variant = "89ab"[int(digest[3], 16) % 4]
    raw = f"{head}7{digest[:3]}{variant}{digest[4:7]}{digest[7:19]}"
    return f"{raw[:8]}-{raw[8:12]}-{raw[12:16]}-{raw[16:20]}-{raw[20:32]}"


__all__ = ["in_scope"]
