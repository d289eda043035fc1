"""The PostgreSQL dialect of the shared tables and the session they run in."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any, Final, cast

import numpy as np
from psycopg.types.json import Jsonb

from reverie.model import Vector
from reverie.store.postgres.codec import Conn, jsonb_param, unique_ids, utc
from reverie.store.tables import Columns, Dialect


class PostgresDialect(Dialect):
    """Instants as ``timestamptz``, JSON as ``jsonb``, id lists as ``text[]`` matched with ``= ANY``."""

    def ids(self, values: Sequence[str]) -> list[str]:
        return unique_ids(values)

    def in_ids(self, column: str) -> str:
        return f"{column} = ANY(%s)"

    def ts(self, value: datetime) -> datetime | None:
        return utc(value)

    def from_ts(self, value: Any) -> datetime:
        return cast(datetime, value).astimezone(UTC)

    def json(self, value: Any, what: str) -> Jsonb:
        return jsonb_param(value, what)

    def from_json(self, value: Any) -> Any:
        return value  # the driver decodes jsonb

    def from_vector(self, value: Any) -> Vector:
        return np.array(value.to_numpy(), dtype=np.float32)


POSTGRES: Final = PostgresDialect()


class PostgresSession:
    """The shared tables' view of a connection (the store's error translation is around it)."""

    def __init__(self, conn: Conn) -> None:
        self._conn = conn

    def run(self, query: str, params: Sequence[Any] = ()) -> int:
        return self._conn.execute(query, params).rowcount

    def run_many(self, query: str, rows: Sequence[Sequence[Any]]) -> int:
        with self._conn.cursor() as cur:
            cur.executemany(query, rows)
            return max(0, cur.rowcount)

    def rows(self, query: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        return self._conn.execute(query, params).fetchall()

    def insert(self, table: str, columns: Columns, rows: Sequence[Sequence[Any]], tail: str = "") -> int:
        """One ``INSERT … SELECT FROM unnest(…)`` of column arrays: one round trip for any number of rows."""
        if not rows:
            return 0
        names = ", ".join(name for name, _ in columns)
        arrays = ", ".join(f"%s::{kind}[]" for _, kind in columns)
        query = f"INSERT INTO {table} ({names}) SELECT * FROM unnest({arrays}) {tail}"
        return self.run(query, [list(c) for c in zip(*rows, strict=True)])

    def insert_ids(self, table: str, columns: Columns, rows: Sequence[Sequence[Any]]) -> list[int]:
        names = ", ".join(name for name, _ in columns)
        values = ", ".join(["%s"] * len(columns))
        query = f"INSERT INTO {table} ({names}) VALUES ({values}) RETURNING id"
        ids: list[int] = []
        with self._conn.cursor() as cur:
            cur.executemany(query, rows, returning=True)
            for _ in rows:
                row = cur.fetchone()
                ids.append(int(row[0]) if row else 0)
                cur.nextset()
        return ids
