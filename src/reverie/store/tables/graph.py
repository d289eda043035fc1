"""Relations between memories (the graph role), written once for both SQL backends."""

from __future__ import annotations

import builtins
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final

from reverie.errors import InvalidInputError, NotFoundError
from reverie.model import Relation, RelationType
from reverie.store._common import relation_type
from reverie.store.base import MemoryFilter
from reverie.store.tables.backend import SqlBackend
from reverie.store.tables.dialect import Columns, Dialect

RELATION_COLUMNS: Final[Columns] = (
    ("id", "text"),
    ("src_id", "text"),
    ("dst_id", "text"),
    ("type", "text"),
    ("confidence", "float8"),
    ("weight", "float8"),
    ("created_at", "timestamptz"),
    ("last_reinforced_at", "timestamptz"),
    ("metadata", "jsonb"),
)
_SELECT: Final = ", ".join(name for name, _ in RELATION_COLUMNS)
_SELECT_R: Final = ", ".join(f"r.{name}" for name, _ in RELATION_COLUMNS)
_DIRECTIONS: Final = ("out", "in", "both")


def _encoders(d: Dialect) -> dict[str, Callable[[Any], Any]]:
    """How each writable relation field is bound."""
    return {
        "src_id": str,
        "dst_id": str,
        "type": relation_type,
        "confidence": float,
        "weight": float,
        "created_at": d.ts,
        "last_reinforced_at": d.ts,
        "metadata": lambda v: d.json(v, "relation metadata"),
    }


def encode_relation(d: Dialect, rel: Relation) -> tuple[Any, ...]:
    """A relation as its row (NULLs stay NULL)."""
    encoders = _encoders(d)
    return (rel.id, *(None if (v := getattr(rel, n)) is None else enc(v) for n, enc in encoders.items()))


def decode_relation(d: Dialect, row: Sequence[Any]) -> Relation:
    return Relation(
        src_id=row[1],
        dst_id=row[2],
        type=RelationType(row[3]),
        confidence=float(row[4]),
        weight=float(row[5]),
        id=row[0],
        created_at=d.from_ts(row[6]),
        last_reinforced_at=d.opt_from_ts(row[7]),
        metadata=d.from_json(row[8]),
    )


def _assignments(d: Dialect, relation_id: str, fields: Mapping[str, Any]) -> tuple[tuple[str, ...], list[Any]]:
    """The sorted field names of an update and its parameters (the values, then the id)."""
    encoders = _encoders(d)
    bad = sorted(set(fields) - encoders.keys())
    if bad:
        raise InvalidInputError(f"cannot update relation fields {bad}")
    names = tuple(sorted(fields))
    return names, [*(None if fields[n] is None else encoders[n](fields[n]) for n in names), relation_id]


def _update_sql(names: tuple[str, ...]) -> str:
    return f"UPDATE relations SET {', '.join(f'{n} = %s' for n in names)} WHERE id = %s"


class GraphTables(SqlBackend):
    """The relations table."""

    def add_relations(self, relations: Sequence[Relation]) -> int:
        if not relations:
            return 0
        d = self.dialect
        rows = [encode_relation(d, rel) for rel in relations]
        with self._writing("add_relations") as s:
            if not d.relation_foreign_keys:
                ends = sorted({r.src_id for r in relations} | {r.dst_id for r in relations})
                found = {r[0] for r in s.rows(f"SELECT id FROM memories WHERE {d.in_ids('id')}", [d.ids(ends)])}
                missing = [i for i in ends if i not in found]
                if missing:
                    raise NotFoundError(f"relation to unknown memories: {missing[:5]}")
            return s.insert("relations", RELATION_COLUMNS, rows, "ON CONFLICT DO NOTHING")

    def relations(
        self,
        memory_ids: Sequence[str],
        *,
        types: frozenset[RelationType] | None = None,
        direction: str = "both",
    ) -> builtins.list[Relation]:
        if direction not in _DIRECTIONS:
            raise InvalidInputError(f"direction must be 'out', 'in' or 'both', not {direction!r}")
        if not memory_ids:
            return []
        d = self.dialect
        ids = d.ids(memory_ids)
        ends = {
            "out": (d.in_ids("src_id"), [ids]),
            "in": (d.in_ids("dst_id"), [ids]),
            "both": (f"({d.in_ids('src_id')} OR {d.in_ids('dst_id')})", [ids, ids]),
        }
        where, params = ends[direction]
        if types is not None:
            where += f" AND {d.in_ids('type')}"
            params.append(d.ids(sorted(relation_type(t) for t in types)))
        with self._reading("relations") as s:
            rows = s.rows(f"SELECT {_SELECT} FROM relations WHERE {where} ORDER BY created_at, id", params)
        return [decode_relation(d, row) for row in rows]

    def update_relation(self, relation_id: str, fields: Mapping[str, Any]) -> None:
        names, params = _assignments(self.dialect, relation_id, fields)
        with self._writing("update_relation") as s:
            if not names:
                changed = len(s.rows("SELECT 1 FROM relations WHERE id = %s", [relation_id]))
            else:
                changed = s.run(_update_sql(names), params)
            if not changed:
                raise NotFoundError(f"no relation with id {relation_id!r}")

    def update_relations(self, changes: Sequence[tuple[str, Mapping[str, Any]]]) -> int:
        groups: dict[tuple[str, ...], builtins.list[builtins.list[Any]]] = {}
        for relation_id, fields in changes:
            names, params = _assignments(self.dialect, relation_id, fields)
            if names:
                groups.setdefault(names, []).append(params)
        if not groups:
            return 0
        with self._writing("update_relations") as s:
            return sum(s.run_many(_update_sql(names), rows) for names, rows in groups.items())

    def delete_relations(self, relation_ids: Sequence[str]) -> int:
        if not relation_ids:
            return 0
        d = self.dialect
        with self._writing("delete_relations") as s:
            return s.run(f"DELETE FROM relations WHERE {d.in_ids('id')}", [d.ids(relation_ids)])

    def _scoped_relations(
        self, select: str, flt: MemoryFilter, types: frozenset[RelationType] | None
    ) -> tuple[str, builtins.list[Any]]:
        where, params = self._memory_condition(flt, "m")
        if types is not None:
            where += f" AND {self.dialect.in_ids('r.type')}"
            params.append(self.dialect.ids(sorted(relation_type(t) for t in types)))
        return f"SELECT {select} FROM relations r JOIN memories m ON m.id = r.src_id WHERE {where}", params

    def count_relations(self, flt: MemoryFilter, *, types: frozenset[RelationType] | None = None) -> int:
        query, params = self._scoped_relations("count(*)", flt, types)
        with self._reading("count_relations") as s:
            return int(s.rows(query, params)[0][0])

    def scope_relations(
        self, flt: MemoryFilter, *, types: frozenset[RelationType] | None = None
    ) -> builtins.list[Relation]:
        query, params = self._scoped_relations(_SELECT_R, flt, types)
        with self._reading("scope_relations") as s:
            rows = s.rows(f"{query} ORDER BY r.created_at, r.id", params)
        return [decode_relation(self.dialect, row) for row in rows]


__all__ = ["RELATION_COLUMNS", "GraphTables", "decode_relation", "encode_relation"]
