"""The PostgreSQL store: the pool core, the memory rows, search and the shared tables in one class."""

from __future__ import annotations

from reverie.store.postgres.memories import PostgresMemories
from reverie.store.postgres.search import PostgresSearch


class PostgresStore(PostgresMemories, PostgresSearch):
    """The :class:`~reverie.store.base.Store` contract on PostgreSQL + pgvector."""


__all__ = ["PostgresStore"]
