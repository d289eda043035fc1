"""The hooks a backend gives the shared tables: its dialect, its sessions and its memory filter."""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import Any, Final

from reverie.store.base import MemoryFilter
from reverie.store.tables.dialect import Dialect, Session

#: tables with rows about a memory that go when it is hard-deleted (relations go with their own statement; the
#: history too: nothing of the memory remains)
DEPENDENT_TABLES: Final = (
    "access_log",
    "claims",
    "synaptic_tags",
    "working_memory",
    "cluster_members",
    "history",
    "memory_actions",
)


class SqlBackend:
    """Base of the shared-table mixins; a backend implements the three hooks."""

    dialect: Dialect

    def _reading(self, what: str) -> AbstractContextManager[Session]:
        """A session for reads (``what`` names the operation in errors)."""
        raise NotImplementedError

    def _writing(self, what: str) -> AbstractContextManager[Session]:
        """A session inside a write transaction (a savepoint inside an open one)."""
        raise NotImplementedError

    def _memory_condition(self, flt: MemoryFilter, alias: str) -> tuple[str, list[Any]]:
        """The SQL condition (``%s`` placeholders) selecting the memories of ``flt`` as ``alias``, with its
        parameters."""
        raise NotImplementedError


__all__ = ["DEPENDENT_TABLES", "SqlBackend"]
