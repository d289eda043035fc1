"""The SQLite dialect of the shared tables, the session they run in, and the translation of driver errors."""

from __future__ import annotations

import builtins
import contextlib
import functools
import sqlite3
from collections.abc import Iterator, Sequence
from datetime import datetime
from typing import Any, Final

import numpy as np

from reverie.errors import ConflictError, InvalidInputError, StoreError
from reverie.model import Vector
from reverie.store._common import safe_json_loads
from reverie.store.sqlite.codec import from_epoch, ids_json, to_epoch
from reverie.store.tables import Columns, Dialect, dump_json


def integrity_error(exc: sqlite3.IntegrityError, what: str) -> Exception:
    message = str(exc)
    if "UNIQUE" in message or "PRIMARY KEY" in message:
        return ConflictError(f"{what}: a row with the same key exists ({message})")
    return InvalidInputError(f"{what}: {message}")


@contextlib.contextmanager
def driver_errors(what: str, *extra: type[Exception], wrap: type[StoreError] = StoreError) -> Iterator[None]:
    """Re-raise driver errors (and ``extra`` ones) as reverie's StoreError."""
    catch: tuple[type[Exception], ...] = (sqlite3.Error, *extra)
    try:
        yield
    except catch as exc:
        if isinstance(exc, StoreError):
            raise
        raise wrap(f"{what}: {exc}") from exc


def insert_rows(conn: sqlite3.Connection, head: str, rows: Sequence[Sequence[Any]], tail: str = "") -> None:
    """``head`` + multi-row ``VALUES`` for ``rows``: as few statements as the bound-parameter limit allows.

    One statement per row (executemany) pays SQLite's per-statement work for every row: the
    statement journal, and for ``memories`` the FTS5 savepoint, which flushes the pending terms
    to a new segment each time (bench/scale.py compares the load rates). The chunks are of equal size so that
    a batch size reuses the same few cached statements. Atomic like executemany: a failing
    row aborts its statement, and the caller's transaction rolls back the earlier ones."""
    if not rows:
        return
    width = len(rows[0])
    per = max(1, conn.getlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER) // width)
    chunks = -(-len(rows) // per)
    size = -(-len(rows) // chunks)
    one = "(" + ", ".join("?" * width) + ")"
    end = f" {tail}" if tail else ""
    for start in range(0, len(rows), size):
        part = rows[start : start + size]
        conn.execute(head + ", ".join([one] * len(part)) + end, [v for row in part for v in row])


class SQLiteDialect(Dialect):
    """Instants as epoch seconds, JSON as text, id lists as a JSON array read by ``json_each``."""

    same = "IS"
    greatest = "max"
    relation_foreign_keys = False

    def ids(self, values: Sequence[str]) -> str:
        return ids_json(values)

    def in_ids(self, column: str) -> str:
        return f"{column} IN (SELECT value FROM json_each(%s))"

    def ts(self, value: datetime) -> float:
        return to_epoch(value)

    def from_ts(self, value: Any) -> datetime:
        return from_epoch(value)

    def json(self, value: Any, what: str) -> str:
        return dump_json(value, what)

    def from_json(self, value: Any) -> Any:
        return safe_json_loads(value)

    def from_vector(self, value: Any) -> Vector:
        return np.frombuffer(value, dtype=np.float32).copy()


@functools.lru_cache(maxsize=512)
def _placeholders(query: str) -> str:
    return query.replace("%s", "?")


class SQLiteSession:
    """The shared tables' view of the connection (inside the store's read or write block)."""

    def __init__(self, conn: sqlite3.Connection, what: str) -> None:
        self._conn = conn
        self._what = what

    @contextlib.contextmanager
    def _constraints(self) -> Iterator[None]:
        try:
            yield
        except sqlite3.IntegrityError as exc:
            raise integrity_error(exc, self._what) from exc

    def run(self, query: str, params: Sequence[Any] = ()) -> int:
        with self._constraints():
            return int(self._conn.execute(_placeholders(query), params).rowcount)

    def run_many(self, query: str, rows: Sequence[Sequence[Any]]) -> int:
        with self._constraints():
            return int(self._conn.executemany(_placeholders(query), rows).rowcount)

    def rows(self, query: str, params: Sequence[Any] = ()) -> builtins.list[tuple[Any, ...]]:
        return self._conn.execute(_placeholders(query), params).fetchall()

    def insert(self, table: str, columns: Columns, rows: Sequence[Sequence[Any]], tail: str = "") -> int:
        before = self._conn.total_changes
        head = f"INSERT INTO {table} ({', '.join(name for name, _ in columns)}) VALUES "
        with self._constraints():
            insert_rows(self._conn, head, rows, tail)
        return self._conn.total_changes - before

    def insert_ids(self, table: str, columns: Columns, rows: Sequence[Sequence[Any]]) -> builtins.list[int]:
        self.insert(table, columns, rows)  # in a write transaction (BEGIN IMMEDIATE): consecutive ids
        last = int(self._conn.execute("SELECT last_insert_rowid()").fetchone()[0])
        return builtins.list(range(last - len(rows) + 1, last + 1))


SQLITE: Final = SQLiteDialect()
