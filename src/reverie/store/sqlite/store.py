"""The SQLite store: the connection core, the memory rows, search and the shared tables in one class."""

from __future__ import annotations

from reverie.store.sqlite.memories import SQLiteMemories
from reverie.store.sqlite.search import SQLiteSearch


class SQLiteStore(SQLiteMemories, SQLiteSearch):
    """The :class:`~reverie.store.base.Store` contract on one SQLite file."""


__all__ = ["SQLiteStore"]
