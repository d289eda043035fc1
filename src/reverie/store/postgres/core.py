"""The PostgreSQL store's connection pool, transactions, lifecycle, index rebuilds and compaction."""

from __future__ import annotations

import builtins
import os
import re
import threading
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any, Final, Self

import psycopg
import psycopg.conninfo
from pgvector import HalfVector
from pgvector.psycopg import register_vector
from psycopg import sql
from psycopg.rows import TupleRow
from psycopg.types.json import set_json_loads
from psycopg_pool import ConnectionPool, PoolTimeout

from reverie.config.core import StorageSettings
from reverie.errors import ConflictError, InvalidInputError, NotFoundError, StoreError
from reverie.model import MemoryRecord
from reverie.store._common import safe_json_loads
from reverie.store.base import CompactReport, MemoryFilter, StoreInfo
from reverie.store.postgres.codec import Conn, Params, Query, decode_record, filter_sql, redact_url
from reverie.store.postgres.schema import (
    COLD_HNSW_INDEX,
    HNSW_INDEX,
    REBUILD_LOCK,
    cold_hnsw_ddl,
    half_vectors,
    hnsw_ddl,
    run_migrations,
)
from reverie.store.postgres.session import POSTGRES, PostgresSession
from reverie.store.tables import Session, SqlTables

#: the tables compact() vacuums (every table reverie creates)
_COMPACT_TABLES: Final = (
    "memories",
    "relations",
    "coactivations",
    "history",
    "access_log",
    "claims",
    "state",
    "clusters",
    "cluster_members",
    "synaptic_tags",
    "boxes",
    "working_memory",
    "dream_runs",
    "meta",
    "schema_migrations",
    "memory_actions",
)
#: VACUUM VERBOSE's summary line: 'finished vacuuming "db.public.t": … tuples: N removed, …'
_VACUUM_REMOVED: Final = re.compile(r'vacuuming "([^"]+)".*?tuples: (\d+) removed', re.DOTALL)

#: tables that hold a memory's words or scope, vacuumed after an erasure
_RECLAIMED: Final = (
    "memories",
    "relations",
    "history",
    "access_log",
    "boxes",
    "state",
    "clusters",
    "cluster_members",
    "working_memory",
    "synaptic_tags",
    "coactivations",
)


#: moves between scopes (status, store tier, vector form) that make the planner's statistics stale: this share
#: of the table's rows (autovacuum analyses after a tenth of a table changed, but only after a delay)
_MOVED_SHARE: Final = 0.2


class PostgresCore(SqlTables):
    """The pool and its transactions, under the memory and search parts of :class:`PostgresStore`."""

    backend = "postgres"
    dialect = POSTGRES

    def __init__(self, url: str, *, settings: StorageSettings, dim: int) -> None:
        if dim < 1:
            raise InvalidInputError(f"dim must be positive, got {dim}")
        self.url = url
        self.settings = settings
        self.dim = dim
        self._local = threading.local()
        self._closed = False
        self._unanalyzed = 0  # rows inserted by this process since its last ANALYZE
        self._moved = 0  # rows this process moved between scopes since its last ANALYZE (see _scopes_changed)
        self._table_rows = 0.0  # the table's rows as the last ANALYZE this process ran counted them
        self._analyze_lock = threading.Lock()
        with self._errors("could not open the PostgreSQL store"):
            with psycopg.connect(url, autocommit=True) as conn:
                self._schema_version = run_migrations(conn, dim, settings)
            self._pool: ConnectionPool[Conn] = ConnectionPool(
                url,
                min_size=1,
                max_size=settings.pg_pool_size,
                kwargs={"autocommit": True},
                configure=self._configure,
                open=True,
                name="reverie",
                timeout=settings.pg_connect_timeout_s,
            )

    def _configure(self, conn: Conn) -> None:
        register_vector(conn)
        set_json_loads(safe_json_loads, conn)  # absurdly nested stored JSON must not make a read fail
        conn.execute("SELECT set_config('hnsw.ef_search', %s, false)", (str(self.settings.hnsw_ef_search),))
        conn.execute("SELECT set_config('hnsw.iterative_scan', 'relaxed_order', false)")
        conn.execute("SET TIME ZONE 'UTC'")

    @staticmethod
    @contextmanager
    def _errors(what: str = "PostgreSQL operation failed") -> Iterator[None]:
        """Translate driver errors into reverie errors at the boundary."""
        try:
            yield
        except psycopg.errors.UniqueViolation as exc:
            raise ConflictError(f"{what}: {exc.diag.message_detail or exc}") from exc
        except (psycopg.errors.NotNullViolation, psycopg.errors.CheckViolation) as exc:
            raise InvalidInputError(f"{what}: {exc}") from exc
        except psycopg.errors.ForeignKeyViolation as exc:
            raise NotFoundError(f"{what}: {exc.diag.message_detail or exc}") from exc
        except psycopg.DataError as exc:
            raise InvalidInputError(f"{what}: {exc}") from exc
        except PoolTimeout as exc:
            raise StoreError(
                f"{what}: the PostgreSQL server gave no connection in time ({exc}); it may be down or "
                "restarting, or every connection is busy (storage.pg_connect_timeout_s, storage.pg_pool_size)"
            ) from exc
        except psycopg.OperationalError as exc:
            if exc.sqlstate is None or exc.sqlstate.startswith(("08", "57P")):  # no connection, or the server left
                raise StoreError(
                    f"{what}: the PostgreSQL server cannot be reached or closed the connection: {exc}"
                ) from exc
            raise StoreError(f"{what}: {exc}") from exc
        except psycopg.Error as exc:
            raise StoreError(f"{what}: {exc}") from exc

    @contextmanager
    def _conn(self) -> Iterator[Conn]:
        """The thread's transaction connection, or a pooled one (autocommit) for one call."""
        if self._closed:
            raise StoreError("the PostgreSQL store is closed")
        conn: Conn | None = getattr(self._local, "conn", None)
        with self._errors():
            if conn is not None:
                yield conn
                return
            with self._pool.connection() as pooled:
                yield pooled

    @contextmanager
    def _write(self) -> Iterator[Conn]:
        """A transaction (or a savepoint inside the thread's outer transaction)."""
        with self._conn() as conn, conn.transaction():
            yield conn

    def _half_vectors(self, codes: Sequence[bytes | None]) -> builtins.list[HalfVector | None]:
        """The ``embedding_half`` of code blobs about to be written (``None`` where there is none): what the cold
        store's HNSW graph holds (:func:`~reverie.store.postgres.schema.half_vectors`)."""
        return half_vectors(codes, self.dim)

    def _rows(self, query: Query, params: Params = (), *, binary: bool = False) -> builtins.list[TupleRow]:
        with self._conn() as conn:
            return conn.execute(query, params, binary=binary).fetchall()

    def _records(self, query: Query, params: Params) -> builtins.list[MemoryRecord]:
        """Whole records, fetched in binary: a vector as text is kilobytes of digits to parse."""
        return [decode_record(row) for row in self._rows(query, params, binary=True)]

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self._pool.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def backup(self, dest: str | os.PathLike[str]) -> dict[str, Any]:
        from reverie.store.backup import refuse_postgres

        refuse_postgres()
        return {}

    def info(self) -> StoreInfo:
        row = self._rows(
            "SELECT current_setting('server_version'), "
            "(SELECT extversion FROM pg_extension WHERE extname = 'vector'), "
            "(SELECT count(*) FROM memories), pg_database_size(current_database())"
        )[0]
        return StoreInfo(
            backend=self.backend,
            target=redact_url(self.url),
            schema_version=self._schema_version,
            details={
                "dim": self.dim,
                "server_version": row[0],
                "pgvector_version": row[1],
                "memories": int(row[2]),
                "size_bytes": int(row[3]),
                "pool_size": self.settings.pg_pool_size,
                "hnsw_m": self.settings.hnsw_m,
                "hnsw_ef_construction": self.settings.hnsw_ef_construction,
                "hnsw_ef_search": self.settings.hnsw_ef_search,
            },
        )

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """Re-entrant per thread: inner blocks are savepoints of the thread's outer transaction."""
        outer: Conn | None = getattr(self._local, "conn", None)
        if outer is not None:
            with self._errors("savepoint failed"), outer.transaction():
                yield
            return
        if self._closed:
            raise StoreError("the PostgreSQL store is closed")
        with self._errors("transaction failed"), self._pool.connection() as conn, conn.transaction():
            self._local.conn = conn
            try:
                yield
            finally:
                self._local.conn = None
        self._maybe_analyze()

    def _scopes_changed(self, rows: int) -> None:
        """``rows`` memories changed status, store tier or vector form. Once such moves reach
        ``storage.pg_analyze_after_rows`` and a fifth of the table (``_MOVED_SHARE``), the table is analysed: after a
        dream made most of a user's memories dormant, cold and quantised, the planner still saw them hot with
        float32 vectors and read a whole scope row by row, until autovacuum analysed the table. The share keeps a
        dream over a large store from analysing it every thousand moves (39 times for 20k memories)."""
        if rows:
            self._moved += rows
            self._maybe_analyze()

    def _analyze_due(self) -> bool:
        after = self.settings.pg_analyze_after_rows
        return self._unanalyzed >= after or self._moved >= max(after, _MOVED_SHARE * self._table_rows)

    def _maybe_analyze(self) -> None:
        """Refresh the planner's statistics after bulk inserts or moves (outside any transaction).

        Autovacuum analyses a grown table only after a delay; until then the planner believes the
        new rows are not there and sorts whole partitions instead of using the HNSW index.
        """
        if not self._analyze_due() or getattr(self._local, "conn", None) is not None:
            return
        with self._analyze_lock:
            if not self._analyze_due():
                return
            self._unanalyzed = self._moved = 0
            with self._errors("ANALYZE failed"), self._pool.connection() as conn:
                conn.execute("ANALYZE memories")
                row = conn.execute("SELECT reltuples FROM pg_class WHERE oid = 'memories'::regclass").fetchone()
                self._table_rows = max(0.0, float(row[0])) if row is not None else 0.0

    def rebuild_indexes(self) -> None:
        """Rebuild the text index and the HNSW indexes, of float32 and of quantised vectors (with the current
        m/ef_construction).

        Outside a transaction the indexes are rebuilt ``CONCURRENTLY``: other processes keep
        reading and writing meanwhile. Inside one, the rebuild locks the table until commit.
        """
        if getattr(self._local, "conn", None) is not None:
            with self._write() as conn:
                conn.execute("SET LOCAL maintenance_work_mem = '256MB'")
                conn.execute("REINDEX INDEX memories_tsv_idx")
                for name, ddl in ((HNSW_INDEX, hnsw_ddl), (COLD_HNSW_INDEX, cold_hnsw_ddl)):
                    conn.execute(sql.SQL("DROP INDEX {}").format(sql.Identifier(name)))
                    conn.execute(ddl(self.settings))
            return
        with self._conn() as conn:
            conn.execute("SELECT pg_advisory_lock(%s)", (REBUILD_LOCK,))
            try:
                self._rebuild_concurrently(conn)
            finally:
                conn.execute("SELECT pg_advisory_unlock(%s)", (REBUILD_LOCK,))
                conn.execute("RESET maintenance_work_mem")

    def _rebuild_concurrently(self, conn: Conn) -> None:
        conn.execute("SET maintenance_work_mem = '256MB'")
        conn.execute("REINDEX INDEX CONCURRENTLY memories_tsv_idx")
        for name, ddl in ((HNSW_INDEX, hnsw_ddl), (COLD_HNSW_INDEX, cold_hnsw_ddl)):
            fresh = sql.Identifier(f"{name}_new")
            conn.execute(sql.SQL("DROP INDEX CONCURRENTLY IF EXISTS {}").format(fresh))  # a failed earlier run
            conn.execute(ddl(self.settings, name=f"{name}_new", concurrently=True))
            conn.execute(sql.SQL("DROP INDEX CONCURRENTLY {}").format(sql.Identifier(name)))
            conn.execute(sql.SQL("ALTER INDEX {} RENAME TO {}").format(fresh, sql.Identifier(name)))
        conn.execute("ANALYZE memories")

    def _total_bytes(self, conn: Conn) -> int:
        row = conn.execute(
            "SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0) FROM pg_class c "
            "WHERE c.relkind = 'r' AND c.relname = ANY(%s) AND c.relnamespace = current_schema()::regnamespace",
            (list(_COMPACT_TABLES),),
        ).fetchone()
        return int(row[0]) if row else 0

    @staticmethod
    def _index_entries(conn: Conn) -> dict[str, int]:
        rows = conn.execute(
            "SELECT i.relname, i.reltuples FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid "
            "WHERE x.indrelid = 'memories'::regclass ORDER BY i.relname"
        ).fetchall()
        return {str(name): max(0, int(n)) for name, n in rows}

    def compact(self) -> CompactReport:
        import time as _time

        if getattr(self._local, "conn", None) is not None:
            raise InvalidInputError(
                "compact() cannot run inside a transaction (VACUUM and REINDEX CONCURRENTLY run on their own)"
            )
        started = _time.perf_counter()
        removed: Counter[str] = Counter()

        def on_notice(diag: psycopg.errors.Diagnostic) -> None:
            found = _VACUUM_REMOVED.search(diag.message_primary or "")
            if found:
                removed[found.group(1).rsplit(".", 1)[-1]] += int(found.group(2))

        with self._conn() as conn:
            conn.execute("SELECT pg_advisory_lock(%s)", (REBUILD_LOCK,))
            conn.add_notice_handler(on_notice)
            try:
                report = CompactReport(
                    self.backend, self._total_bytes(conn), 0, index_entries_before=self._index_entries(conn)
                )
                conn.execute("SET maintenance_work_mem = '256MB'")
                for table in _COMPACT_TABLES:
                    conn.execute(sql.SQL("VACUUM (ANALYZE, VERBOSE) {}").format(sql.Identifier(table)))
                report.actions.append(f"VACUUM (ANALYZE) of {len(_COMPACT_TABLES)} tables")
                conn.execute("REINDEX TABLE CONCURRENTLY memories")
                conn.execute("ANALYZE memories")
                report.actions.append("REINDEX TABLE CONCURRENTLY memories (text, vector and column indexes)")
                report.index_entries_after = self._index_entries(conn)
                report.bytes_after = self._total_bytes(conn)
            finally:
                conn.remove_notice_handler(on_notice)
                conn.execute("RESET maintenance_work_mem")
                conn.execute("SELECT pg_advisory_unlock(%s)", (REBUILD_LOCK,))
        report.rows_removed = {t: removed.get(t, 0) for t in _COMPACT_TABLES}
        report.seconds = _time.perf_counter() - started
        return report

    def duplicate_groups(self, flt: MemoryFilter) -> builtins.list[builtins.list[str]]:
        where, params = filter_sql(flt)
        query = sql.SQL(
            "SELECT array_agg(id ORDER BY created_at, id) FROM memories WHERE {} "
            "GROUP BY partition, agent_id, content_hash HAVING count(*) > 1"
        ).format(where)
        return sorted(([str(i) for i in r[0]] for r in self._rows(query, params)), key=lambda g: g[0])

    @contextmanager
    def _reading(self, what: str) -> Iterator[Session]:
        with self._conn() as conn:
            yield PostgresSession(conn)

    @contextmanager
    def _writing(self, what: str) -> Iterator[Session]:
        with self._write() as conn:
            yield PostgresSession(conn)

    def _memory_condition(self, flt: MemoryFilter, alias: str) -> tuple[str, builtins.list[Any]]:
        where, params = filter_sql(flt, alias=alias)
        return where.as_string(), params

    def reclaim(self) -> None:
        # VACUUM removes dead row versions and their entries in every index (the HNSW graph and the text
        # index included); it cannot run inside a transaction: a pooled autocommit connection
        with self._errors("VACUUM failed"), self._pool.connection() as conn:
            for table in _RECLAIMED:
                conn.execute(sql.SQL("VACUUM {}").format(sql.Identifier(table)))

    def delete_partition_rows(self, user_id: str | None, *, dry_run: bool = False) -> dict[str, int]:
        return self._partition_rows(user_id, dry_run=dry_run)
