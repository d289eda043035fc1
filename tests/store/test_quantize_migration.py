"""Migration 0004_quantized_embeddings upgrades an existing database on both backends (embedding compression),
and the SQLite probe for quantised hot rows is answered from its partial index."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np
import pytest

from reverie.config.core import StorageSettings
from reverie.model import MemoryRecord, Precision, StoreTier
from reverie.store.base import MemoryFilter, Store

DIM = 64


def _vectors(n: int) -> np.ndarray:
    x = np.random.default_rng(2).standard_normal((n, DIM)).astype(np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def _populate(st: Store, vecs: np.ndarray) -> None:
    st.insert([MemoryRecord(f"old memory {i}", id=f"o{i}", store=StoreTier.COLD, embedding=vecs[i]) for i in range(4)])


def _check_upgraded(st: Store, vecs: np.ndarray) -> None:
    recs = st.get(["o0", "o1"])
    # a pre-migration label said int8 but the row held float32: the float32 copy is the truth
    assert recs["o1"].embedding_precision is Precision.FLOAT32
    np.testing.assert_array_equal(recs["o1"].embedding, vecs[1])
    st.update_fields("o0", {"embedding_precision": Precision.INT4})
    deep = MemoryFilter(stores=None)
    assert st.vector_search(vecs[0], deep, 1)[0].id == "o0"
    assert st.get(["o0"])["o0"].embedding_precision is Precision.INT4
    assert st.vector_search(vecs[1], deep, 1)[0].id == "o1"


def test_sqlite_database_from_before_quantization_is_upgraded(tmp_path: Path) -> None:
    from reverie.store.sqlite import SQLiteStore

    path = tmp_path / "old.db"
    vecs = _vectors(4)
    with SQLiteStore(path, settings=StorageSettings(), dim=DIM) as st:
        _populate(st, vecs)
    with sqlite3.connect(path) as raw:  # turn it into a database written before migration 0004
        raw.execute("DROP INDEX memories_quantized")
        raw.execute("ALTER TABLE memories DROP COLUMN embedding_codes")
        raw.execute("DELETE FROM schema_migrations WHERE name = '0004_quantized_embeddings'")
        raw.execute("UPDATE memories SET embedding_precision = 'int8' WHERE id = 'o1'")
    with SQLiteStore(path, settings=StorageSettings(), dim=DIM) as st:
        _check_upgraded(st, vecs)
    with sqlite3.connect(path) as raw:
        names = {r[0] for r in raw.execute("SELECT name FROM schema_migrations")}
        assert "0004_quantized_embeddings" in names


@pytest.mark.postgres
def test_postgres_database_from_before_quantization_is_upgraded(pg_url: str) -> None:
    import psycopg

    from reverie.store.postgres import PostgresStore

    vecs = _vectors(4)
    with PostgresStore(pg_url, settings=StorageSettings(), dim=DIM) as st:
        _populate(st, vecs)
    with psycopg.connect(pg_url, autocommit=True) as raw:
        raw.execute("ALTER TABLE memories DROP COLUMN embedding_codes")  # drops its partial index too
        raw.execute("ALTER TABLE memories DROP COLUMN embedding_half")  # added by 0013 (drops its graph too)
        raw.execute(
            "DELETE FROM schema_migrations WHERE name IN ('0004_quantized_embeddings', '0012_bits_center', "
            "'0013_cold_index')"
        )
        raw.execute("UPDATE memories SET embedding_precision = 'int8' WHERE id = 'o1'")
    with PostgresStore(pg_url, settings=StorageSettings(), dim=DIM) as st:
        _check_upgraded(st, vecs)
    with psycopg.connect(pg_url, autocommit=True) as raw:
        assert raw.execute(
            "SELECT count(*) FROM schema_migrations WHERE name = '0004_quantized_embeddings'"
        ).fetchone() == (1,)
        raw.execute("SET enable_seqscan = off")  # four rows: show that the partial index serves the probe
        plan = raw.execute(
            "EXPLAIN SELECT id FROM memories WHERE embedding_codes IS NOT NULL "
            "AND partition = '' AND status = 'active' AND store = 'hot'"
        ).fetchall()
        assert "memories_quantized_idx" in " ".join(r[0] for r in plan)


def test_sqlite_hot_search_probes_quantized_rows_through_the_partial_index(tmp_path: Path) -> None:
    from reverie.store.sqlite import SQLiteStore, filter_sql

    with SQLiteStore(tmp_path / "m.db", settings=StorageSettings(), dim=DIM) as st:
        for flt in (
            MemoryFilter(),
            MemoryFilter(user_id="u"),
            MemoryFilter(user_id="u", statuses=None),
            MemoryFilter(all_users=True, statuses=None),
        ):
            where, params = filter_sql(flt)
            plan = st._conn.execute(
                "EXPLAIN QUERY PLAN SELECT m.id FROM memories m WHERE m.embedding_codes IS NOT NULL AND " + where,
                params,
            ).fetchall()
            assert "memories_quantized" in " ".join(str(r[-1]) for r in plan), flt


def test_sqlite_quantized_partition_grows_an_hnsw_graph(tmp_path: Path) -> None:
    from reverie.store.sqlite import SQLiteStore

    vecs = _vectors(400)
    settings = StorageSettings(exact_search_max=50)
    with SQLiteStore(tmp_path / "m.db", settings=settings, dim=DIM) as st:
        st.insert(
            [
                MemoryRecord(
                    f"cold {i}",
                    id=f"c{i:03d}",
                    store=StoreTier.COLD,
                    embedding=vecs[i],
                    embedding_precision=Precision.INT4,
                )
                for i in range(300)
            ]
        )
        st.insert([MemoryRecord(f"hot {i}", id=f"h{i:03d}", embedding=vecs[i]) for i in range(300, 400)])
        deep = MemoryFilter(stores=None)
        for i in (0, 123, 299):
            top = st.vector_search(vecs[i], deep, 3)
            assert top[0].id == f"c{i:03d}" and top[0].score == pytest.approx(1.0, abs=2e-3)
        assert st._index.describe()["hnsw_partitions"] == 2  # the hot partition and the quantised one
        assert {h.id[0] for h in st.vector_search(vecs[0], MemoryFilter(), 50)} == {"h"}
