"""Memories on SQLite: insert, read, update (with the vector index kept in step), delete, list and count."""

from __future__ import annotations

import builtins
import sqlite3
from collections.abc import Mapping, Sequence
from typing import Any

from reverie import vector_codec
from reverie.errors import ConflictError, NotFoundError
from reverie.model import Layer, MemoryRecord, Precision, Status
from reverie.store._common import (
    ID_PREFIX_UPPER,
    INDEXED_FIELDS,
    grouped_plain_changes,
    precision_changes,
    reencode,
    resolve_embedding,
    scan_fields,
    unique_changes,
)
from reverie.store.base import LayerStats, MemoryFilter
from reverie.store.sqlite.codec import (
    EMBEDDING_INDEX,
    FIELDS,
    SELECT_COLUMNS,
    StoredRow,
    decode_record,
    decode_records,
    encode_record,
    encode_value,
    filter_sql,
    ids_json,
    index_key,
    index_vector,
    partial_decoder,
    partition_of,
    quantised_codes,
    scan_columns,
    vector_transition,
)
from reverie.store.sqlite.core import SQLiteCore
from reverie.store.sqlite.session import insert_rows, integrity_error
from reverie.store.tables import DEPENDENT_TABLES
from reverie.store.tables.memories import WRITABLE, BatchReader, MemoryOperations
from reverie.store.vector_index import DELETE, UPSERT, PendingOp, quantized_partition


class SQLiteMemories(SQLiteCore, MemoryOperations):
    """The memory rows."""

    def _next_rid(self) -> int:
        row = self._conn.execute("SELECT seq FROM sqlite_sequence WHERE name = 'memories'").fetchone()
        top = self._conn.execute("SELECT max(rid) FROM memories").fetchone()[0]
        return max(int(row[0]) if row else 0, int(top or 0)) + 1

    def insert(self, records: Sequence[MemoryRecord]) -> None:
        if not records:
            return
        rows = [encode_record(r, self.dim) for r in records]
        codes = [quantised_codes(r, row) for r, row in zip(records, rows, strict=True)]
        columns = ", ".join(("rid", '"partition"', *FIELDS, "embedding_codes"))
        with self._write("insert"):
            first = self._next_rid()
            params = [
                (first + i, partition_of(r.user_id), *row, code)
                for i, (r, row, code) in enumerate(zip(records, rows, codes, strict=True))
            ]
            try:
                insert_rows(self._conn, f"INSERT INTO memories ({columns}) VALUES ", params)
            except sqlite3.IntegrityError as exc:
                raise integrity_error(exc, "insert") from exc
            self._log_vectors(
                [
                    PendingOp(UPSERT, first + i, key[0], index_vector(row[EMBEDDING_INDEX], code), r.id)
                    for i, (r, row, code) in enumerate(zip(records, rows, codes, strict=True))
                    if (key := index_key(partition_of(r.user_id), row[EMBEDDING_INDEX], code)) is not None
                ]
            )

    def get(self, ids: Sequence[str]) -> dict[str, MemoryRecord]:
        if not ids:
            return {}
        with self._read("get"):
            rows = self._conn.execute(
                f"SELECT {SELECT_COLUMNS} FROM memories m WHERE m.id IN (SELECT value FROM json_each(?))",
                (ids_json(ids),),
            ).fetchall()
        return {r.id: r for r in decode_records(rows)}

    def _current(self, memory_id: str) -> StoredRow:
        row = self._conn.execute(
            'SELECT rid, version, "partition", content, embedding, embedding_codes, embedding_precision '
            "FROM memories WHERE id = ?",
            (memory_id,),
        ).fetchone()
        if row is None:
            raise NotFoundError(f"no memory with id {memory_id!r}")
        return StoredRow(int(row[0]), int(row[1]), row[2], row[3], row[4], row[5], row[6])

    def _update(self, memory_id: str, fields: Mapping[str, Any], expected_version: int | None) -> int:
        encoded = {name: encode_value(name, value, self.dim) for name, value in fields.items()}
        if not INDEXED_FIELDS & encoded.keys():
            return self._update_plain(memory_id, encoded, expected_version)
        with self._write("update"):
            cur = self._current(memory_id)
            if expected_version is not None and cur.version != expected_version:
                raise ConflictError(
                    f"memory {memory_id!r} is at version {cur.version}, not the expected {expected_version}"
                )
            if encoded.get("content") == cur.content:
                del encoded["content"]  # unchanged text: leave the FTS index alone
            resolved = resolve_embedding(fields, cur.stored(), self.dim)
            if resolved is not None:  # the embedding is stored at its precision
                encoded["embedding"] = None if resolved.vector is None else resolved.vector.tobytes()
                encoded["embedding_codes"] = resolved.codes
                encoded["embedding_precision"] = resolved.precision.value
            new_partition = partition_of(encoded["user_id"]) if "user_id" in encoded else cur.partition
            encoded["partition"] = new_partition
            encoded["version"] = cur.version + 1
            assigns = ", ".join(f'"{name}" = ?' for name in encoded)
            try:
                self._conn.execute(f"UPDATE memories SET {assigns} WHERE rid = ?", (*encoded.values(), cur.rid))
            except sqlite3.IntegrityError as exc:
                raise integrity_error(exc, "update") from exc
            new_blob = encoded.get("embedding", cur.embedding)
            new_codes = encoded.get("embedding_codes", cur.codes)
            self._log_vectors(vector_transition(memory_id, cur, new_partition, new_blob, new_codes))
        return cur.version + 1

    def _update_plain(self, memory_id: str, encoded: dict[str, Any], expected_version: int | None) -> int:
        """An update that touches neither the text, the vector nor the partition (access counters,
        strengths, flags): one statement, no read of the row first."""
        assigns = ", ".join(f'"{name}" = ?' for name in encoded)
        params: builtins.list[Any] = [*encoded.values(), memory_id]
        check = ""
        if expected_version is not None:
            check = " AND version = ?"
            params.append(expected_version)
        with self._write("update"):
            row = self._conn.execute(
                f"UPDATE memories SET {assigns}, version = version + 1 WHERE id = ?{check} RETURNING version",
                params,
            ).fetchone()
            if row is not None:
                return int(row[0])
            cur = self._current(memory_id)  # raises NotFoundError for an unknown id
        raise ConflictError(f"memory {memory_id!r} is at version {cur.version}, not the expected {expected_version}")

    def update_many(self, changes: Sequence[tuple[str, Mapping[str, Any]]]) -> None:
        groups = grouped_plain_changes(changes, WRITABLE)
        with self._write("update_many"):
            for names, rows in groups.items():
                assigns = ", ".join(f'"{name}" = ?' for name in names)
                self._conn.executemany(
                    f"UPDATE memories SET {assigns}, version = version + 1 WHERE id = ?",
                    [[*(encode_value(n, fields[n], self.dim) for n in names), mid] for mid, fields in rows],
                )

    def update_fields_many(self, changes: Sequence[tuple[str, Mapping[str, Any], int | None]]) -> builtins.list[str]:
        groups, versions = unique_changes(changes, WRITABLE)
        wanted = [mid for rows in groups.values() for mid, _ in rows]
        if not wanted:
            return []
        with self._write("update_fields_many"):  # BEGIN IMMEDIATE: no writer between the check and the write
            current = dict(
                self._conn.execute(
                    "SELECT id, version FROM memories WHERE id IN (SELECT value FROM json_each(?))",
                    (ids_json(wanted),),
                ).fetchall()
            )
            ok = {mid for mid in wanted if mid in current and versions[mid] in (None, current[mid])}
            for names, rows in groups.items():
                assigns = ", ".join(f'"{name}" = ?' for name in names)
                params = [
                    [*(encode_value(n, fields[n], self.dim) for n in names), mid] for mid, fields in rows if mid in ok
                ]
                if params:
                    self._conn.executemany(f"UPDATE memories SET {assigns}, version = version + 1 WHERE id = ?", params)
        return [mid for mid in versions if mid in ok]

    def set_embedding_precision(self, changes: Sequence[tuple[str, Precision, int | None]]) -> builtins.list[str]:
        targets, versions = precision_changes(changes)
        if not targets:
            return []
        with self._write("set_embedding_precision"):  # BEGIN IMMEDIATE: no writer between the check and the write
            rows = self._conn.execute(
                'SELECT id, rid, version, "partition", content, embedding, embedding_codes, embedding_precision '
                "FROM memories WHERE id IN (SELECT value FROM json_each(?))",
                (ids_json(list(targets)),),
            ).fetchall()
            current = {
                r[0]: StoredRow(int(r[1]), int(r[2]), r[3], r[4], r[5], r[6], r[7])
                for r in rows
                if versions[r[0]] in (None, int(r[2]))
            }
            new = reencode({mid: cur.stored() for mid, cur in current.items()}, targets, self.dim)
            self._conn.executemany(
                "UPDATE memories SET embedding = ?, embedding_codes = ?, embedding_precision = ?, "
                "version = version + 1 WHERE rid = ?",
                [
                    (None if sv.vector is None else sv.vector.tobytes(), sv.codes, sv.precision.value, current[mid].rid)
                    for mid, sv in new.items()
                ],
            )
            coded = [mid for mid, sv in new.items() if sv.codes is not None]
            search = dict(
                zip(coded, vector_codec.search_rows([new[m].codes or b"" for m in coded], self.dim), strict=True)
            )
            ops: builtins.list[PendingOp] = []
            for mid, sv in new.items():
                cur = current[mid]
                blob = None if sv.vector is None else sv.vector.tobytes()
                old_key = index_key(cur.partition, cur.embedding, cur.codes)
                new_key = index_key(cur.partition, blob, sv.codes)
                if old_key is not None and new_key is not None and old_key[0] != new_key[0]:
                    ops.append(PendingOp(DELETE, cur.rid, old_key[0], None, mid))
                if new_key is not None:
                    ops.append(PendingOp(UPSERT, cur.rid, new_key[0], search.get(mid, sv.vector), mid))
            self._log_vectors(ops)
        return [mid for mid in targets if mid in new]

    def delete(self, ids: Sequence[str]) -> int:
        if not ids:
            return 0
        payload = ids_json(ids)
        with self._write("delete"):
            gone = self._conn.execute(
                'SELECT rid, id, "partition", embedding IS NOT NULL, embedding_codes IS NOT NULL FROM memories '
                "WHERE id IN (SELECT value FROM json_each(?))",
                (payload,),
            ).fetchall()
            for table in DEPENDENT_TABLES:
                self._conn.execute(
                    f"DELETE FROM {table} WHERE memory_id IN (SELECT value FROM json_each(?))", (payload,)
                )
            self._conn.execute(
                "DELETE FROM relations WHERE src_id IN (SELECT value FROM json_each(?1)) "
                "OR dst_id IN (SELECT value FROM json_each(?1))",
                (payload,),
            )
            self._conn.execute(
                "DELETE FROM coactivations WHERE a_id IN (SELECT value FROM json_each(?1)) "
                "OR b_id IN (SELECT value FROM json_each(?1))",
                (payload,),
            )
            self._conn.execute("DELETE FROM memories WHERE id IN (SELECT value FROM json_each(?))", (payload,))
            if gone:
                # the text index keeps a deleted row's words in its old segments until they are merged:
                # merge them all now, so that a forgotten memory's words are not in the file any more
                self._conn.execute("INSERT INTO memories_fts (memories_fts) VALUES ('optimize')")
                self._tx.checkpoint = True  # and, once committed, no copy stays in the write-ahead log
            self._log_vectors(
                [
                    PendingOp(DELETE, int(r[0]), r[2] if r[3] else quantized_partition(r[2]), None, r[1])
                    for r in gone
                    if r[3] or r[4]
                ]
            )
        return len(gone)

    def _page(
        self, flt: MemoryFilter, limit: int, offset: int, order_by: str, descending: bool
    ) -> builtins.list[MemoryRecord]:
        where, params = filter_sql(flt)
        direction = "DESC" if descending else "ASC"  # NULLs are the smallest value in SQLite
        query = (
            f"SELECT {SELECT_COLUMNS} FROM memories m WHERE {where} "
            f"ORDER BY m.{order_by} {direction}, m.id {direction} LIMIT ? OFFSET ?"
        )
        with self._read("list"):
            rows = self._conn.execute(query, (*params, limit, offset)).fetchall()
        return decode_records(rows)

    def _scanner(self, flt: MemoryFilter, omit: frozenset[str]) -> BatchReader:
        names = scan_fields(omit, FIELDS)
        decode = partial_decoder(names)
        where, params = filter_sql(flt)
        query = f"SELECT {scan_columns(names)} FROM memories m WHERE {where} AND m.id > ? ORDER BY m.id LIMIT ?"

        def read(after: str, batch_size: int) -> builtins.list[MemoryRecord]:
            with self._read("scan"):
                rows = self._conn.execute(query, (*params, after, batch_size)).fetchall()
            return [decode(row) for row in rows]

        return read

    def count(self, flt: MemoryFilter) -> int:
        where, params = filter_sql(flt)
        with self._read("count"):
            return int(self._conn.execute(f"SELECT count(*) FROM memories m WHERE {where}", params).fetchone()[0])

    def ids_with_prefix(self, prefix: str, *, limit: int = 10) -> builtins.list[str]:
        if not prefix or limit < 1:
            return []
        # a range on the primary key (binary collation), not LIKE: uses the index and has no wildcards
        with self._read("ids_with_prefix"):
            rows = self._conn.execute(
                "SELECT id FROM memories WHERE id >= ? AND id < ? ORDER BY id LIMIT ?",
                (prefix, prefix + ID_PREFIX_UPPER, limit),
            ).fetchall()
        return [str(r[0]) for r in rows]

    def users(self, *, limit: int = 50) -> builtins.list[tuple[str | None, int]]:
        query = (
            'SELECT "partition", count(*) AS n FROM memories GROUP BY "partition" ORDER BY n DESC, "partition" LIMIT ?'
        )
        with self._read("users"):
            rows = self._conn.execute(query, (max(limit, 0),)).fetchall()
        return [(str(r[0]) or None, int(r[1])) for r in rows]

    def versions(self, ids: Sequence[str]) -> dict[str, int]:
        if not ids:
            return {}
        with self._read("versions"):
            return dict(
                self._conn.execute(
                    "SELECT id, version FROM memories WHERE id IN (SELECT value FROM json_each(?))", (ids_json(ids),)
                ).fetchall()
            )

    def entity_counts(self, flt: MemoryFilter) -> dict[tuple[str | None, str], int]:
        where, params = filter_sql(flt)
        query = (  # memory_entities holds each (entity, memory) once
            "SELECT m.user_id, e.entity, count(*) FROM memory_entities e JOIN memories m ON m.rid = e.rid "
            f"WHERE {where} GROUP BY m.user_id, e.entity"
        )
        with self._read("entity_counts"):
            return {(user, entity): int(n) for user, entity, n in self._conn.execute(query, params)}

    def stats(self, flt: MemoryFilter) -> builtins.list[LayerStats]:
        where, params = filter_sql(flt)
        query = (
            "SELECT m.layer, m.status, count(*), avg(m.energy), min(m.energy), max(m.energy) "
            f"FROM memories m WHERE {where} GROUP BY m.layer, m.status ORDER BY m.layer, m.status"
        )
        with self._read("stats"):
            rows = self._conn.execute(query, params).fetchall()
        return [LayerStats(Layer(r[0]), Status(r[1]), int(r[2]), float(r[3]), float(r[4]), float(r[5])) for r in rows]

    def find_by_hash(self, flt: MemoryFilter, content_hash: str) -> MemoryRecord | None:
        where, params = filter_sql(flt)
        # without INDEXED BY the planner (no ANALYZE statistics) took memories_created for its
        # ORDER BY and walked the whole partition, once per item of the write path's dedup; a hash
        # names a handful of rows, so the hash index always wins
        query = (
            f"SELECT {SELECT_COLUMNS} FROM memories m INDEXED BY memories_hash WHERE m.content_hash = ? AND {where} "
            "ORDER BY m.created_at DESC, m.id DESC LIMIT 1"
        )
        with self._read("find_by_hash"):
            row = self._conn.execute(query, (content_hash, *params)).fetchone()
        return decode_record(row) if row else None
