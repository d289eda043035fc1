"""The vector index's view of the database: vectors and the change log, read under the store's lock."""

from __future__ import annotations

import builtins
import contextlib
import json
import sqlite3
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

import numpy as np

from reverie import vector_codec
from reverie.store.vector_index import (
    QUANTIZED_SUFFIX,
    Matrix,
    Rids,
    VectorChange,
    is_quantized_partition,
    quantized_partition,
)

if TYPE_CHECKING:
    from reverie.store.sqlite.core import SQLiteCore


class RowSource:
    """The vector index's view of the database (runs under the store's lock)."""

    def __init__(self, store: SQLiteCore) -> None:
        self._store = store

    @property
    def _conn(self) -> sqlite3.Connection:
        return self._store._conn

    @contextlib.contextmanager
    def snapshot(self) -> Iterator[None]:
        if self._store._tx.depth:
            yield  # inside our own transaction: it is the snapshot
            return
        self._conn.execute("BEGIN")
        try:
            yield
        finally:
            self._conn.execute("COMMIT")

    def max_seq(self) -> int:
        return self._store._max_seq()

    def changes_since(self, seq: int) -> builtins.list[VectorChange]:
        rows = self._conn.execute(
            'SELECT seq, rid, "partition", op FROM vector_changes WHERE seq > ? ORDER BY seq', (seq,)
        ).fetchall()
        return [VectorChange(int(r[0]), int(r[1]), r[2], r[3]) for r in rows]

    def current_vectors(self, rids: Sequence[int]) -> builtins.list[tuple[int, str, Matrix]]:
        if not rids:
            return []
        rows = self._conn.execute(
            'SELECT rid, "partition", embedding, embedding_codes FROM memories '
            "WHERE rid IN (SELECT value FROM json_each(?)) AND (embedding IS NOT NULL OR embedding_codes IS NOT NULL)",
            (json.dumps(list(rids)),),
        ).fetchall()
        out = [(int(r[0]), r[1], np.frombuffer(r[2], dtype=np.float32)) for r in rows if r[2] is not None]
        quantised = [r for r in rows if r[2] is None]
        if quantised:  # quantised rows go to the user's quantised partition as search vectors
            vecs = vector_codec.search_rows([r[3] for r in quantised], self._store.dim)
            out += [(int(r[0]), quantized_partition(r[1]), vec) for r, vec in zip(quantised, vecs, strict=True)]
        return out

    def partition_size(self, partition: str) -> int:
        if is_quantized_partition(partition):
            query = 'SELECT count(*) FROM memories WHERE "partition" = ? AND embedding_codes IS NOT NULL'
            partition = partition.removesuffix(QUANTIZED_SUFFIX)
        else:
            query = 'SELECT count(*) FROM memories WHERE "partition" = ? AND embedding IS NOT NULL'
        return int(self._conn.execute(query, (partition,)).fetchone()[0])

    def partition_vectors(self, partition: str, batch_size: int) -> Iterator[tuple[Rids, Matrix]]:
        dim = self._store.dim
        quantised = is_quantized_partition(partition)
        column = "embedding_codes" if quantised else "embedding"
        partition = partition.removesuffix(QUANTIZED_SUFFIX) if quantised else partition
        after = 0
        while True:
            rows = self._conn.execute(
                f'SELECT rid, {column} FROM memories WHERE +"partition" = ? AND rid > ? '
                f"AND {column} IS NOT NULL ORDER BY rid LIMIT ?",
                (partition, after, batch_size),
            ).fetchall()
            if not rows:
                return
            rids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
            if quantised:
                vecs = vector_codec.search_rows([r[1] for r in rows], dim)
            else:
                vecs = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32).reshape(len(rows), dim)
            yield rids, vecs
            after = int(rids[-1])

    def change_key(self, seq: int) -> str | None:
        row = self._conn.execute("SELECT rid, memory_id, op FROM vector_changes WHERE seq = ?", (seq,)).fetchone()
        return None if row is None else f"{row[0]}:{row[1]}:{row[2]}"

    def log_floor(self) -> int:
        row = self._conn.execute("SELECT value FROM meta WHERE key = 'vector_log_floor'").fetchone()
        return int(row[0]) if row else 0

    def partitions(self) -> builtins.list[str]:
        names = [r[0] for r in self._conn.execute('SELECT DISTINCT "partition" FROM memories')]
        quantised = self._conn.execute(
            'SELECT DISTINCT "partition" FROM memories WHERE embedding_codes IS NOT NULL'
        ).fetchall()
        return names + [quantized_partition(r[0]) for r in quantised]
