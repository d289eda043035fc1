"""Memories on PostgreSQL: insert (COPY), read, update, delete, list and count."""

from __future__ import annotations

import builtins
from collections.abc import Mapping, Sequence
from typing import Any

from psycopg import sql

from reverie.errors import ConflictError, NotFoundError
from reverie.model import Layer, MemoryRecord, Precision, Status
from reverie.store._common import (
    ID_PREFIX_UPPER,
    StoredVector,
    grouped_plain_changes,
    precision_changes,
    precision_value,
    reencode,
    resolve_embedding,
    scan_fields,
    stored_vector,
    unique_changes,
)
from reverie.store.base import LayerStats, MemoryFilter
from reverie.store.postgres.codec import (
    COLUMN_KIND,
    COLUMN_NAMES,
    COLUMNS,
    COPY_TYPES,
    EMBEDDING_INDEX,
    PRECISION_INDEX,
    SELECT_MEMORY,
    Conn,
    decode_record,
    decode_value,
    encode_record,
    encode_value,
    filter_sql,
    partial_select,
    unique_ids,
)
from reverie.store.postgres.core import PostgresCore
from reverie.store.tables import DEPENDENT_TABLES
from reverie.store.tables.memories import WRITABLE, BatchReader, MemoryOperations

#: columns whose change moves a memory between the scopes a search filters on (its status and store tier): after
#: many such moves (a dream making most of a user's memories dormant and cold) the planner's statistics are stale
_MOVES = frozenset({"status", "store"})


def _moved(groups: Mapping[tuple[str, ...], Sequence[object]]) -> int:
    """How many rows of these grouped changes move between scopes (see ``_MOVES``)."""
    return sum(len(rows) for names, rows in groups.items() if _MOVES.intersection(names))


class PostgresMemories(PostgresCore, MemoryOperations):
    """The memory rows."""

    def insert(self, records: Sequence[MemoryRecord]) -> None:
        if not records:
            return
        rows = [encode_record(r, self.dim) for r in records]
        codes: list[bytes | None] = []
        for row in rows:  # a record at a quantised precision is stored as codes (+ its unit vector in half precision)
            stored = stored_vector(row[EMBEDDING_INDEX], precision_value(row[PRECISION_INDEX]))
            row[EMBEDDING_INDEX] = stored.vector
            codes.append(stored.codes)
        query = sql.SQL("COPY memories ({}) FROM STDIN (FORMAT BINARY)").format(
            sql.SQL(", ").join(sql.Identifier(n) for n in (*COLUMN_NAMES, "embedding_codes", "embedding_half"))
        )
        for row, blob, half in zip(rows, codes, self._half_vectors(codes), strict=True):
            row += [blob, half]
        with self._write() as conn, conn.cursor() as cur, cur.copy(query) as copy:
            copy.set_types([*(COPY_TYPES[k] for _, k in COLUMNS), "bytea", "halfvec"])
            for row in rows:
                copy.write_row(row)
        self._unanalyzed += len(records)
        self._maybe_analyze()

    def get(self, ids: Sequence[str]) -> dict[str, MemoryRecord]:
        if not ids:
            return {}
        query = sql.SQL("{} WHERE id = ANY(%s)").format(SELECT_MEMORY)
        return {r.id: r for r in self._records(query, [unique_ids(ids)])}

    def _update(self, memory_id: str, fields: Mapping[str, Any], expected_version: int | None) -> int:
        assigns: builtins.list[sql.Composable] = [sql.SQL("version = version + 1")]
        params: builtins.list[Any] = []
        encoded = {name: encode_value(name, COLUMN_KIND[name], fields[name], self.dim) for name in sorted(fields)}
        with self._write() as conn:
            if "embedding" in fields or "embedding_precision" in fields:
                encoded.update(self._stored_embedding(conn, memory_id, fields))
            for name, value in encoded.items():
                assigns.append(sql.SQL("{} = %s").format(sql.Identifier(name)))
                params.append(value)
            query = sql.SQL("UPDATE memories SET {} WHERE id = %s").format(sql.SQL(", ").join(assigns))
            params.append(memory_id)
            if expected_version is not None:
                query = sql.SQL("{} AND version = %s").format(query)
                params.append(expected_version)
            query = sql.SQL("{} RETURNING version").format(query)
            row = conn.execute(query, params).fetchone()
            if row is not None:
                return int(row[0])
            current = conn.execute("SELECT version FROM memories WHERE id = %s", (memory_id,)).fetchone()
        if current is None:
            raise NotFoundError(f"no memory with id {memory_id!r}")
        raise ConflictError(f"memory {memory_id!r} is at version {current[0]}, not the expected {expected_version}")

    def _stored_embedding(self, conn: Conn, memory_id: str, fields: Mapping[str, Any]) -> dict[str, Any]:
        """The embedding columns a write of ``embedding``/``embedding_precision`` stores (embedding quantization:
        float32 in ``embedding``, or codes in ``embedding_codes``), from the locked current row."""
        row = conn.execute(
            "SELECT embedding, embedding_codes, embedding_precision FROM memories WHERE id = %s FOR UPDATE",
            (memory_id,),
        ).fetchone()
        if row is None:
            return {}  # the UPDATE finds no row and reports it
        vector = None if row[0] is None else decode_value("embedding", "vector", row[0])
        current = StoredVector(vector, None if row[1] is None else bytes(row[1]), precision_value(row[2]))
        resolved = resolve_embedding(fields, current, self.dim)
        if resolved is None:
            return {}
        return {
            "embedding": resolved.vector,
            "embedding_codes": resolved.codes,
            "embedding_half": self._half_vectors([resolved.codes])[0],
            "embedding_precision": resolved.precision.value,
        }

    def update_many(self, changes: Sequence[tuple[str, Mapping[str, Any]]]) -> None:
        groups = grouped_plain_changes(changes, WRITABLE)
        if not groups:
            return
        with self._write() as conn, conn.cursor() as cur:
            for names, rows in groups.items():
                assigns = sql.SQL(", ").join(sql.SQL("{} = %s").format(sql.Identifier(n)) for n in names)
                query = sql.SQL("UPDATE memories SET {}, version = version + 1 WHERE id = %s").format(assigns)
                params = [
                    [*(encode_value(n, COLUMN_KIND[n], fields[n], self.dim) for n in names), mid]
                    for mid, fields in rows
                ]
                cur.executemany(query, params)
        self._scopes_changed(_moved(groups))

    def update_fields_many(self, changes: Sequence[tuple[str, Mapping[str, Any], int | None]]) -> builtins.list[str]:
        groups, versions = unique_changes(changes, WRITABLE)
        if not groups:
            return []
        written: set[str] = set()
        with self._write() as conn, conn.cursor() as cur:
            for names, rows in groups.items():
                assigns = sql.SQL(", ").join(sql.SQL("{} = %s").format(sql.Identifier(n)) for n in names)
                query = sql.SQL(
                    "UPDATE memories SET {}, version = version + 1 "
                    "WHERE id = %s AND (%s::bigint IS NULL OR version = %s) RETURNING id"
                ).format(assigns)
                params = [
                    [
                        *(encode_value(n, COLUMN_KIND[n], fields[n], self.dim) for n in names),
                        mid,
                        versions[mid],
                        versions[mid],
                    ]
                    for mid, fields in rows
                ]
                cur.executemany(query, params, returning=True)
                while True:  # one result per row: the id when the compare-and-set matched
                    row = cur.fetchone()
                    if row is not None:
                        written.add(row[0])
                    if not cur.nextset():
                        break
        self._scopes_changed(_moved(groups))
        return [mid for mid in versions if mid in written]

    def set_embedding_precision(self, changes: Sequence[tuple[str, Precision, int | None]]) -> builtins.list[str]:
        targets, versions = precision_changes(changes)
        if not targets:
            return []
        with self._write() as conn, conn.cursor() as cur:
            rows = cur.execute(
                "SELECT id, version, embedding, embedding_codes, embedding_precision FROM memories "
                "WHERE id = ANY(%s) FOR UPDATE",
                [list(targets)],
            ).fetchall()
            current = {
                r[0]: StoredVector(
                    None if r[2] is None else decode_value("embedding", "vector", r[2]),
                    None if r[3] is None else bytes(r[3]),
                    precision_value(r[4]),
                )
                for r in rows
                if versions[r[0]] in (None, int(r[1]))
            }
            new = reencode(current, targets, self.dim)
            if new:
                cur.executemany(
                    "UPDATE memories SET embedding = %s, embedding_codes = %s, embedding_half = %s, "
                    "embedding_precision = %s, version = version + 1 WHERE id = %s",
                    [
                        (sv.vector, sv.codes, half, sv.precision.value, mid)
                        for (mid, sv), half in zip(
                            new.items(), self._half_vectors([sv.codes for sv in new.values()]), strict=True
                        )
                    ],
                )
        self._scopes_changed(len(new))  # float32 vectors became code blobs, or back
        return [mid for mid in targets if mid in new]

    def delete(self, ids: Sequence[str]) -> int:
        if not ids:
            return 0
        id_list = unique_ids(ids)
        with self._write() as conn:
            for table in DEPENDENT_TABLES:
                conn.execute(
                    sql.SQL("DELETE FROM {} WHERE memory_id = ANY(%s)").format(sql.Identifier(table)),
                    (id_list,),
                )
            conn.execute("DELETE FROM coactivations WHERE a_id = ANY(%s) OR b_id = ANY(%s)", (id_list, id_list))
            cur = conn.execute("DELETE FROM memories WHERE id = ANY(%s)", (id_list,))
            return cur.rowcount

    def _page(
        self, flt: MemoryFilter, limit: int, offset: int, order_by: str, descending: bool
    ) -> builtins.list[MemoryRecord]:
        where, params = filter_sql(flt)
        # NULLs sort as the smallest value (as in SQLite): first ascending, last descending
        direction = sql.SQL("DESC NULLS LAST" if descending else "ASC NULLS FIRST")
        id_direction = sql.SQL("DESC" if descending else "ASC")
        query = sql.SQL("{} WHERE {} ORDER BY {} {}, id {} LIMIT %s OFFSET %s").format(
            SELECT_MEMORY, where, sql.Identifier(order_by), direction, id_direction
        )
        return self._records(query, [*params, limit, offset])

    def _scanner(self, flt: MemoryFilter, omit: frozenset[str]) -> BatchReader:
        names = scan_fields(omit, COLUMN_NAMES)
        select, decode = (SELECT_MEMORY, decode_record) if names == COLUMN_NAMES else partial_select(names)
        where, params = filter_sql(flt)
        query = sql.SQL("{} WHERE {} AND id > %s ORDER BY id LIMIT %s").format(select, where)

        def read(after: str, batch_size: int) -> builtins.list[MemoryRecord]:
            return [decode(row) for row in self._rows(query, [*params, after, batch_size], binary=True)]

        return read

    def count(self, flt: MemoryFilter) -> int:
        where, params = filter_sql(flt)
        return int(self._rows(sql.SQL("SELECT count(*) FROM memories WHERE {}").format(where), params)[0][0])

    def ids_with_prefix(self, prefix: str, *, limit: int = 10) -> builtins.list[str]:
        if not prefix or limit < 1:
            return []
        # a range on the primary key (COLLATE "C": byte order), not LIKE: uses the index, no wildcards
        rows = self._rows(
            sql.SQL("SELECT id FROM memories WHERE id >= %s AND id < %s ORDER BY id LIMIT %s"),
            [prefix, prefix + ID_PREFIX_UPPER, limit],
        )
        return [str(r[0]) for r in rows]

    def users(self, *, limit: int = 50) -> builtins.list[tuple[str | None, int]]:
        rows = self._rows(
            sql.SQL(
                "SELECT user_id, count(*) AS n FROM memories GROUP BY user_id "
                "ORDER BY n DESC, user_id NULLS FIRST LIMIT %s"
            ),
            [max(limit, 0)],
        )
        return [(None if r[0] is None else str(r[0]), int(r[1])) for r in rows]

    def versions(self, ids: Sequence[str]) -> dict[str, int]:
        if not ids:
            return {}
        rows = self._rows(sql.SQL("SELECT id, version FROM memories WHERE id = ANY(%s)"), [list(dict.fromkeys(ids))])
        return {str(mid): int(version) for mid, version in rows}

    def entity_counts(self, flt: MemoryFilter) -> dict[tuple[str | None, str], int]:
        where, params = filter_sql(flt)
        query = sql.SQL(
            "SELECT user_id, e.entity, count(*) FROM memories, "
            "LATERAL (SELECT DISTINCT value AS entity FROM jsonb_array_elements_text(entities)) AS e "
            "WHERE {} GROUP BY user_id, e.entity"
        ).format(where)
        return {(user, entity): int(n) for user, entity, n in self._rows(query, params)}

    def stats(self, flt: MemoryFilter) -> builtins.list[LayerStats]:
        where, params = filter_sql(flt)
        query = sql.SQL(
            "SELECT layer, status, count(*), avg(energy), min(energy), max(energy) FROM memories "
            "WHERE {} GROUP BY layer, status ORDER BY layer, status"
        ).format(where)
        return [
            LayerStats(Layer(r[0]), Status(r[1]), int(r[2]), float(r[3]), float(r[4]), float(r[5]))
            for r in self._rows(query, params)
        ]

    def find_by_hash(self, flt: MemoryFilter, content_hash: str) -> MemoryRecord | None:
        where, params = filter_sql(flt)
        query = sql.SQL("{} WHERE content_hash = %s AND {} ORDER BY created_at DESC, id DESC LIMIT 1").format(
            SELECT_MEMORY, where
        )
        found = self._records(query, [content_hash, *params])
        return found[0] if found else None
