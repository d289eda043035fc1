"""What the two SQL backends do differently for the tables they share, and how shared code talks to a connection.

The shared tables (relations, working memory, tags, boxes, clusters, history, access log, action telemetry,
co-activations, claims, state, API keys) are written once, in :mod:`reverie.store.tables`, with ``%s``
placeholders. A backend hands that code a :class:`Dialect` (how a value is bound and read back, how a list of
ids is matched) and a :class:`Session` (one connection inside a read or a write transaction), and keeps to
itself everything that is I/O: connections, transactions, migrations, the text and vector indexes.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime
from typing import Any, Protocol

from reverie.errors import InvalidInputError
from reverie.model import Vector

#: a bulk insert's columns: ``(name, type)`` with the type as PostgreSQL spells it (``text``, ``float8``,
#: ``int8``, ``timestamptz``, ``jsonb``, ``bool``); SQLite ignores the type
Columns = tuple[tuple[str, str], ...]


class Session(Protocol):
    """One connection inside a transaction (a read or a write), as the shared tables use it.

    Queries use ``%s`` placeholders; the session translates them for its driver. Driver errors leave as
    reverie errors (a duplicate key as ConflictError, a bad value as InvalidInputError, the rest StoreError).
    """

    def run(self, query: str, params: Sequence[Any] = ()) -> int:
        """Execute one statement; the number of rows it changed."""
        ...

    def run_many(self, query: str, rows: Sequence[Sequence[Any]]) -> int:
        """Execute one statement per parameter row; the number of rows changed in all."""
        ...

    def rows(self, query: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """The rows a query returns."""
        ...

    def insert(self, table: str, columns: Columns, rows: Sequence[Sequence[Any]], tail: str = "") -> int:
        """Insert many rows in as few statements as the driver allows (``tail``: an ``ON CONFLICT`` clause);
        the number of rows changed."""
        ...

    def insert_ids(self, table: str, columns: Columns, rows: Sequence[Sequence[Any]]) -> list[int]:
        """Insert rows into a table with an integer ``id`` key; their new ids, in row order."""
        ...


def dump_json(value: Any, what: str) -> str:
    """Compact JSON text of ``value``; a value JSON cannot hold (or nested too deep) is InvalidInputError."""
    try:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise InvalidInputError(f"{what} is not JSON-serialisable: {exc}") from exc
    except RecursionError:
        raise InvalidInputError(f"{what} is nested too deep") from None


class Dialect:
    """How one SQL backend binds and reads the values of the shared tables."""

    #: null-safe equality (``NULL`` equals ``NULL``)
    same: str = "IS NOT DISTINCT FROM"
    #: the larger of two values
    greatest: str = "greatest"
    #: the schema's foreign keys reject a relation whose end is not a memory (NotFoundError); else it is checked
    relation_foreign_keys: bool = True

    def ids(self, values: Sequence[str]) -> Any:
        """The parameter :meth:`in_ids` binds: ``values`` without repeats, in order."""
        raise NotImplementedError

    def in_ids(self, column: str) -> str:
        """The condition "``column`` is one of the ids bound by one ``%s`` parameter"."""
        raise NotImplementedError

    def ts(self, value: datetime) -> Any:
        """A datetime as the driver stores it (naive ones are taken to be UTC)."""
        raise NotImplementedError

    def from_ts(self, value: Any) -> datetime:
        """A stored instant as an aware UTC datetime."""
        raise NotImplementedError

    def json(self, value: Any, what: str) -> Any:
        """A JSON parameter (``what`` names it in the error for a value JSON cannot hold)."""
        raise NotImplementedError

    def from_json(self, value: Any) -> Any:
        """A stored JSON value as Python data."""
        raise NotImplementedError

    def from_vector(self, value: Any) -> Vector:
        """A stored float32 embedding as a vector of its own (not a view of driver memory)."""
        raise NotImplementedError

    def opt_ts(self, value: datetime | None) -> Any:
        return None if value is None else self.ts(value)

    def opt_from_ts(self, value: Any) -> datetime | None:
        return None if value is None else self.from_ts(value)


__all__ = ["Columns", "Dialect", "Session", "dump_json"]
