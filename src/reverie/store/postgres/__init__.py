"""PostgreSQL + pgvector backend: one memory shared by many agent processes.

* psycopg 3 with a connection pool (``psycopg_pool``); every pooled connection is in autocommit
  mode and every write runs in an explicit transaction (a savepoint when it joins an outer
  :meth:`PostgresStore.transaction`), so a failed statement never poisons the caller's
  transaction.
* Schema changes are named migrations recorded in ``schema_migrations``, applied in one
  transaction under a ``pg_advisory_xact_lock`` so that processes opening the same database at
  once do not race.
* Vector search is cosine distance (``<=>``) over an HNSW index with pgvector 0.8's iterative
  scan, so filtered queries still return ``k`` rows; full text is a generated ``tsvector``
  (english) with a GIN index, ranked by ``ts_rank`` (cheaper than ``ts_rank_cd`` per matched row);
  which query words are too common to rank by is read from the planner's statistics
  (``pg_stats.most_common_elems``), not counted through the index.

Only this package (and the other ``store`` modules) knows SQL.

Modules: :mod:`.codec` (columns, value encoding, the filter every read uses), :mod:`.schema`
(migrations), :mod:`.session` (the dialect of the shared tables), :mod:`.core` (pool, transactions,
lifecycle, index rebuilds, compaction), :mod:`.memories`, :mod:`.search` and :mod:`.store` (the class
that joins them).
"""

from __future__ import annotations

from reverie.store.postgres.schema import MIGRATIONS
from reverie.store.postgres.store import PostgresStore

__all__ = ["MIGRATIONS", "PostgresStore"]
