"""The SQLite store's connection, transactions, lifecycle, compaction and vector change log."""

from __future__ import annotations

import builtins
import contextlib
import json
import os
import sqlite3
import threading
import time
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, Self

from reverie.config.core import StorageSettings
from reverie.errors import InvalidInputError, MigrationError, StoreError
from reverie.store.base import CompactReport, MemoryFilter, StoreInfo
from reverie.store.sqlite.codec import ERASED_PARTITION, filter_sql, partition_of
from reverie.store.sqlite.rows import RowSource
from reverie.store.sqlite.schema import MIGRATIONS
from reverie.store.sqlite.session import SQLITE, SQLiteSession, driver_errors, insert_rows
from reverie.store.tables import Session, SqlTables
from reverie.store.vector_index import IndexParams, PendingOp, VectorIndex, quantized_partition

#: SQLite page cache per connection (KiB). The operating system's page cache holds the file too: a larger
#: cache gave no faster load or text search, and costs resident memory in a serving process
_CACHE_KIB: Final = 16 * 1024

_WAL_CHECKPOINT_PAGES: Final = 10_000

# ----------------------------------------------------------------------------------------
# transactions
# ----------------------------------------------------------------------------------------


@dataclass
class _Tx:
    """The state of the open transaction of this connection."""

    depth: int = 0
    ops: builtins.list[builtins.list[PendingOp]] = field(default_factory=list)
    seq_before: int | None = None
    synced: bool = False  # the index caught up inside this transaction (it saw uncommitted rows)
    checkpoint: bool = False  # a hard delete: copy the WAL into the file and truncate it after the commit


class SQLiteCore(SqlTables):
    """The connection and its transactions, under the memory and search parts of :class:`SQLiteStore`."""

    backend = "sqlite"
    dialect = SQLITE

    def __init__(self, path: str | Path, *, settings: StorageSettings, dim: int) -> None:
        if dim < 1:
            raise InvalidInputError(f"dim must be positive, got {dim}")
        self.path = Path(path)
        self.settings = settings
        self.dim = dim
        self._lock = threading.RLock()
        self._tx = _Tx()
        self._closed = False
        #: rows per full-text term (counted up to ``storage.fts_common_docs``), valid for one state of the
        #: full-text index: the key is its structure record, which every flush of new terms rewrites
        self._term_docs_cache: dict[str, int] = {}
        self._term_docs_key: bytes | None = None
        #: scopes (partition, statuses, stores, cap) found to hold at least ``cap`` rows, until when (monotonic
        #: seconds) that is taken as still true: it only chooses how a search runs, never what it finds
        self._large_scopes: dict[tuple[Any, ...], float] = {}
        self._conn = self._connect()
        try:
            self._schema_version = self._migrate()
            instance = self._check_meta()
        except BaseException:
            self._conn.close()
            raise
        params = IndexParams(
            dim=dim,
            exact_search_max=settings.exact_search_max,
            hnsw_m=settings.hnsw_m,
            hnsw_ef_construction=settings.hnsw_ef_construction,
            hnsw_ef_search=settings.hnsw_ef_search,
            rebuild_delta=settings.ann_rebuild_delta,
        )
        ann_dir = Path(f"{self.path}.ann")
        self._index = VectorIndex(params, RowSource(self), ann_dir, instance)

    def _connect(self) -> sqlite3.Connection:
        with driver_errors(f"could not open the SQLite database {self.path}", OSError):
            self.path.parent.mkdir(parents=True, exist_ok=True)
            if not self.path.exists():
                os.close(os.open(self.path, os.O_CREAT | os.O_RDWR, 0o600))
            old_umask = os.umask(0o077)  # the -wal and -shm files: owner only
            try:
                conn = sqlite3.connect(
                    self.path,
                    timeout=self.settings.sqlite_busy_timeout_ms / 1000,
                    isolation_level=None,
                    check_same_thread=False,
                )
                try:
                    self._configure(conn)
                except BaseException:
                    conn.close()
                    raise
            finally:
                os.umask(old_umask)
        return conn

    def _configure(self, conn: sqlite3.Connection) -> None:
        conn.execute(f"PRAGMA busy_timeout = {int(self.settings.sqlite_busy_timeout_ms)}")
        mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
        if str(mode).lower() != "wal":
            raise StoreError(f"could not switch {self.path} to WAL mode (got {mode})")
        # storage.synchronous: NORMAL survives process crashes; FULL also fsyncs the WAL at every commit
        conn.execute(f"PRAGMA synchronous = {'FULL' if self.settings.synchronous == 'FULL' else 'NORMAL'}")
        # freed space is overwritten with zeros: the words of a forgotten (or edited) memory do not
        # linger in free pages of the file
        conn.execute("PRAGMA secure_delete = ON")
        conn.execute(f"PRAGMA cache_size = {-_CACHE_KIB}")
        conn.execute(f"PRAGMA wal_autocheckpoint = {_WAL_CHECKPOINT_PAGES}")  # fewer checkpoint stalls
        conn.execute("PRAGMA foreign_keys = ON")

    def _migrate(self) -> int:
        with self.transaction(), driver_errors("schema migration failed", wrap=MigrationError):
            self._conn.execute(
                "CREATE TABLE IF NOT EXISTS schema_migrations (name TEXT PRIMARY KEY, applied_at REAL NOT NULL)"
            )
            applied = {r[0] for r in self._conn.execute("SELECT name FROM schema_migrations")}
            known = [name for name, _ in MIGRATIONS]
            unknown = sorted(applied - set(known))
            if unknown:
                raise MigrationError(
                    f"{self.path} was written by a newer reverie (unknown migrations {unknown}); upgrade reverie"
                )
            for name, statements in MIGRATIONS:
                if name in applied:
                    continue
                for statement in statements:
                    self._conn.execute(statement)
                self._conn.execute(
                    "INSERT INTO schema_migrations (name, applied_at) VALUES (?, ?)", (name, time.time())
                )
        return len(MIGRATIONS)

    def _check_meta(self) -> str:
        """Record (first open) or check the embedding dimension; return the database instance id."""
        with self.transaction():
            meta = dict(self._conn.execute("SELECT key, value FROM meta").fetchall())
            if "dim" not in meta:
                meta = {"dim": str(self.dim), "created": str(time.time()), "instance": uuid.uuid4().hex}
                self._conn.executemany("INSERT INTO meta (key, value) VALUES (?, ?)", meta.items())
        if int(meta["dim"]) != self.dim:
            raise StoreError(
                f"{self.path} stores {meta['dim']}-dimensional embeddings but the embedder makes "
                f"{self.dim}-dimensional ones; use the embedder the memory was built with, or a new database"
            )
        return str(meta["instance"])

    def close(self) -> None:
        with self._lock:
            if self._closed:
                return
            with contextlib.suppress(OSError, RuntimeError, sqlite3.Error):
                self._index.save_if_stale()
            self._closed = True
            with driver_errors("could not close the SQLite database"):
                self._conn.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def info(self) -> StoreInfo:
        with self._read("info"):
            memories = self._conn.execute("SELECT count(*) FROM memories").fetchone()[0]
            details: dict[str, Any] = {
                "dim": self.dim,
                "path": str(self.path),
                "sqlite_version": sqlite3.sqlite_version,
                "memories": int(memories),
                "exact_search_max": self.settings.exact_search_max,
                "vector_index": self._index.describe(),
            }
        return StoreInfo(self.backend, str(self.path), self._schema_version, details)

    @contextlib.contextmanager
    def transaction(self) -> Iterator[None]:
        """Re-entrant and thread-safe; inner blocks are savepoints of the outer transaction."""
        with self._lock:
            self._check_open()
            if self._tx.depth == 0:
                yield from self._outer_transaction()
            else:
                yield from self._savepoint()

    def _outer_transaction(self) -> Iterator[None]:
        with driver_errors("could not begin a transaction"):
            self._conn.execute("BEGIN IMMEDIATE")
        self._tx = _Tx(depth=1, ops=[[]])
        try:
            yield
        except BaseException:
            self._rollback()
            raise
        self._commit()

    def _savepoint(self) -> Iterator[None]:
        name = f"sp{self._tx.depth}"
        with driver_errors("could not open a savepoint"):
            self._conn.execute(f"SAVEPOINT {name}")
        self._tx.depth += 1
        self._tx.ops.append([])
        try:
            yield
        except BaseException:
            self._tx.depth -= 1
            self._tx.ops.pop()
            with driver_errors("could not roll back a savepoint"):
                self._conn.execute(f"ROLLBACK TO {name}")
                self._conn.execute(f"RELEASE {name}")
            if self._tx.synced:
                self._index.reset()
            raise
        self._tx.depth -= 1
        inner = self._tx.ops.pop()
        self._tx.ops[-1].extend(inner)
        with driver_errors("could not release a savepoint"):
            self._conn.execute(f"RELEASE {name}")

    def _commit(self) -> None:
        tx = self._tx
        ops = [op for level in tx.ops for op in level]
        try:
            with driver_errors("could not commit"):
                seq_after = self._max_seq() if ops else 0
                self._conn.execute("COMMIT")
        except BaseException:
            self._rollback()
            raise
        self._tx = _Tx()
        if ops and not tx.synced and tx.seq_before is not None:
            self._index.apply_committed(ops, tx.seq_before, seq_after)
        if tx.checkpoint:  # best effort: a reader in another process may keep older frames alive a while
            with contextlib.suppress(sqlite3.Error):
                self._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    def _rollback(self) -> None:
        synced = self._tx.synced
        self._tx = _Tx()
        with contextlib.suppress(sqlite3.Error):
            self._conn.execute("ROLLBACK")
        if synced:
            self._index.reset()

    @contextlib.contextmanager
    def _read(self, what: str) -> Iterator[None]:
        with self._lock, driver_errors(f"{what} failed"):
            self._check_open()
            yield

    @contextlib.contextmanager
    def _write(self, what: str) -> Iterator[None]:
        with self.transaction(), driver_errors(f"{what} failed"):
            yield

    def _check_open(self) -> None:
        if self._closed:
            raise StoreError(f"the SQLite store {self.path} is closed")

    def backup(self, dest: str | os.PathLike[str]) -> dict[str, Any]:
        from reverie.store.backup import backup_sqlite

        self._check_open()
        return backup_sqlite(self.path, Path(dest), busy_timeout_ms=int(self.settings.sqlite_busy_timeout_ms))

    def rebuild_indexes(self) -> None:
        with self._write("rebuilding the text index"):
            self._conn.execute("INSERT INTO memories_fts (memories_fts) VALUES ('rebuild')")
        with self._read("rebuilding the vector index"), driver_errors("rebuilding the vector index", RuntimeError):
            self._index.rebuild()

    def _disk_bytes(self) -> int:
        """The database file, its write-ahead log and the vector index files, in bytes."""
        total = 0
        for path in (self.path, Path(f"{self.path}-wal")):
            with contextlib.suppress(OSError):
                total += path.stat().st_size
        ann = Path(f"{self.path}.ann")
        if ann.is_dir():
            for entry in ann.iterdir():
                with contextlib.suppress(OSError):
                    total += entry.stat().st_size
        return total

    def _index_entries(self) -> dict[str, int]:
        fts = int(self._conn.execute("SELECT count(*) FROM memories_fts_data").fetchone()[0])
        return {**self._index.entry_counts(), "fulltext_segment_rows": fts}

    def compact(self) -> CompactReport:
        started = time.perf_counter()
        with self._lock:
            self._check_open()
            if self._tx.depth:
                raise InvalidInputError("compact() cannot run inside a transaction")
            with driver_errors("compaction failed", RuntimeError, OSError):
                self._index.sync(None)  # every partition loaded: its entries are counted and rebuilt
                report = CompactReport(self.backend, self._disk_bytes(), 0, index_entries_before=self._index_entries())
                with self.transaction():
                    head = self._max_seq()
                    trimmed = self._conn.execute("DELETE FROM vector_changes WHERE seq < ?", (head,)).rowcount
                    self._conn.execute(
                        "INSERT INTO meta (key, value) VALUES ('vector_log_floor', ?) "
                        "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                        (str(head),),
                    )
                report.rows_removed["vector_changes"] = int(trimmed)
                report.actions.append(f"trimmed the vector change log to position {head}")
                with self.transaction():
                    self._conn.execute("INSERT INTO memories_fts (memories_fts) VALUES ('optimize')")
                report.actions.append("optimised the full-text index (segments merged)")
                self._index.rebuild()
                report.actions.append("rebuilt the vector index from the rows (deleted entries dropped)")
                self._conn.execute("VACUUM")
                report.actions.append("VACUUM")
                self._conn.execute("ANALYZE")
                report.actions.append("ANALYZE")
                self._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
                report.actions.append("WAL checkpoint (truncate)")
                report.index_entries_after = self._index_entries()
                report.bytes_after = self._disk_bytes()
        report.seconds = time.perf_counter() - started
        return report

    def duplicate_groups(self, flt: MemoryFilter) -> builtins.list[builtins.list[str]]:
        where, params = filter_sql(flt)
        query = (
            "SELECT json_group_array(json_array(m.created_at, m.id)) FROM memories m "
            f'WHERE {where} GROUP BY m."partition", m.agent_id, m.content_hash HAVING count(*) > 1'
        )
        with self._read("duplicate_groups"):
            groups = [[mid for _, mid in sorted(json.loads(r[0]))] for r in self._conn.execute(query, params)]
        return sorted(groups, key=lambda g: g[0])

    def _max_seq(self) -> int:
        # a bare max() is answered from the end of the b-tree; coalesce() would scan the log
        top = self._conn.execute("SELECT max(seq) FROM vector_changes").fetchone()[0]
        return int(top or 0)

    def _log_vectors(self, ops: Sequence[PendingOp]) -> None:
        """Append vector changes to the log (inside the current write transaction)."""
        if not ops:
            return
        if self._tx.seq_before is None:
            self._tx.seq_before = self._max_seq()
        insert_rows(
            self._conn,
            'INSERT INTO vector_changes (rid, memory_id, "partition", op) VALUES ',
            [(op.rid, op.memory_id, op.partition, op.op) for op in ops],
        )
        self._tx.ops[-1].extend(ops)

    @contextlib.contextmanager
    def _reading(self, what: str) -> Iterator[Session]:
        with self._read(what):
            yield SQLiteSession(self._conn, what)

    @contextlib.contextmanager
    def _writing(self, what: str) -> Iterator[Session]:
        with self._write(what):
            yield SQLiteSession(self._conn, what)

    def _memory_condition(self, flt: MemoryFilter, alias: str) -> tuple[str, builtins.list[Any]]:
        return filter_sql(flt, alias)

    def reclaim(self) -> None:
        return None  # secure_delete overwrites freed pages; delete() merged the text index

    def delete_partition_rows(self, user_id: str | None, *, dry_run: bool = False) -> dict[str, int]:
        if dry_run:
            return self._partition_rows(user_id, dry_run=True)
        part = partition_of(user_id)
        with self._write("delete_partition_rows"):
            counts = self._partition_rows(user_id, dry_run=False)
            # the vector change log keeps which partition each change was in: name none after the erasure
            # (other processes then have no change of this partition to apply; their searches check rows)
            self._conn.execute(
                'UPDATE vector_changes SET "partition" = ?, memory_id = \'\' WHERE "partition" IN (?, ?)',
                (ERASED_PARTITION, part, quantized_partition(part)),
            )
            self._tx.checkpoint = True  # no copy of a box topic stays in the write-ahead log
        # graphs on disk keep a deleted vector's data (hnswlib only marks it) and the manifest names the
        # partition: drop them all; the next search rebuilds them from the rows
        with self._read("dropping the vector index files"), driver_errors("dropping the vector index", RuntimeError):
            self._index.drop_persisted()
            self._index.reset()
        return counts
