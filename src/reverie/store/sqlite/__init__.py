"""The embedded SQLite backend of the :class:`~reverie.store.base.Store` contract.

One database file (WAL mode, owner-only permissions) holds every table; full text runs on
FTS5 (porter + unicode61) kept in sync by triggers in the same transaction; vectors are
float32 BLOBs searched through the in-process :class:`~reverie.store.vector_index.VectorIndex`
(exact for small partitions, HNSW above ``exact_search_max``), which follows a change log so
that several processes may share one file.

Conventions of this backend (the PostgreSQL backend matches them):

* datetimes are stored as REAL epoch seconds UTC and come back as aware UTC datetimes with
  microsecond precision (naive datetimes are taken to be UTC);
* ``list`` sorts NULLs as the smallest value and breaks ties by id in the same direction;
* ``scan`` walks ids in binary (byte) order;
* nested transactions are savepoints: an exception leaving an inner block undoes that block.

Modules: :mod:`.schema` (tables and migrations), :mod:`.codec` (how records are stored, the filter every
read uses), :mod:`.session` (the dialect of the shared tables, driver errors), :mod:`.core` (connection,
transactions, lifecycle, compaction, vector change log), :mod:`.memories`, :mod:`.search`, :mod:`.rows`
(the vector index's view of the rows) and :mod:`.store` (the class that joins them).
"""

from __future__ import annotations

from reverie.store.sqlite.codec import filter_sql, from_epoch, to_epoch
from reverie.store.sqlite.schema import MIGRATIONS
from reverie.store.sqlite.store import SQLiteStore

__all__ = ["MIGRATIONS", "SQLiteStore", "filter_sql", "from_epoch", "to_epoch"]
