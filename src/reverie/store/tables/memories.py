"""The parts of the memory operations that are the same on both backends: argument checks, whole-record
updates and the walk of a scan; the SQL stays with each backend."""

from __future__ import annotations

import builtins
import dataclasses
from collections.abc import Callable, Iterator, Mapping
from typing import Any, Final

from reverie.errors import InvalidInputError
from reverie.model import MemoryRecord
from reverie.store._common import field_changes
from reverie.store.base import ORDERABLE_FIELDS, MemoryFilter
from reverie.store.tables.backend import SqlBackend

#: one batch of a scan: the memories whose id sorts after the given one, at most ``batch_size``, in id order
BatchReader = Callable[[str, int], builtins.list[MemoryRecord]]
#: the record fields a write may change
WRITABLE: Final = frozenset(f.name for f in dataclasses.fields(MemoryRecord)) - {"id", "version"}


class MemoryOperations(SqlBackend):
    """``update``, ``list`` and ``scan`` over a backend's :meth:`_update`, :meth:`_page` and :meth:`_scanner`."""

    def _update(self, memory_id: str, fields: Mapping[str, Any], expected_version: int | None) -> int:
        """Write checked field changes to one memory (a compare-and-set with ``expected_version``); the new
        version."""
        raise NotImplementedError

    def _page(
        self, flt: MemoryFilter, limit: int, offset: int, order_by: str, descending: bool
    ) -> builtins.list[MemoryRecord]:
        """One page of memories, ordered by ``order_by`` (NULLs the smallest value) then id, both in the
        direction asked (arguments already checked)."""
        raise NotImplementedError

    def _scanner(self, flt: MemoryFilter, omit: frozenset[str]) -> BatchReader:
        """The reader of a scan's batches (``omit`` names fields not read)."""
        raise NotImplementedError

    def update(self, record: MemoryRecord, *, expected_version: int | None = None) -> int:
        values = {name: getattr(record, name) for name in WRITABLE}
        return self._update(record.id, values, expected_version)

    def update_fields(
        self,
        memory_id: str,
        fields: Mapping[str, Any],
        *,
        expected_version: int | None = None,
    ) -> int:
        return self._update(memory_id, field_changes(fields, WRITABLE), expected_version)

    def list(
        self,
        flt: MemoryFilter,
        *,
        limit: int = 100,
        offset: int = 0,
        order_by: str = "created_at",
        descending: bool = True,
    ) -> builtins.list[MemoryRecord]:
        if order_by not in ORDERABLE_FIELDS:
            raise InvalidInputError(f"cannot order by {order_by!r}; choose one of {sorted(ORDERABLE_FIELDS)}")
        if limit < 0 or offset < 0:
            raise InvalidInputError("limit and offset must not be negative")
        return self._page(flt, limit, offset, order_by, descending)

    def scan(
        self, flt: MemoryFilter, *, batch_size: int = 1000, omit: frozenset[str] = frozenset(), after: str = ""
    ) -> Iterator[builtins.list[MemoryRecord]]:
        if batch_size < 1:
            raise InvalidInputError("batch_size must be positive")
        read = self._scanner(flt, omit)
        while True:
            batch = read(after, batch_size)
            if not batch:
                return
            yield batch
            if len(batch) < batch_size:
                return
            after = batch[-1].id


__all__ = ["WRITABLE", "BatchReader", "MemoryOperations"]
