"""PostgreSQL-only behaviour: migrations, many processes on one database, pgvector indexes.

The shared behaviour of both backends lives in ``test_contract.py``.
"""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from urllib.parse import quote, urlencode

import numpy as np
import psycopg
import psycopg.conninfo
import pytest
from pgvector.psycopg import register_vector

from reverie import vector_codec
from reverie.config.core import StorageSettings
from reverie.errors import ConflictError, InvalidInputError, StoreError
from reverie.model import MemoryRecord, Precision, Status, StoreTier
from reverie.store import open_store
from reverie.store.base import MemoryFilter
from reverie.store.postgres import MIGRATIONS, PostgresStore
from reverie.store.postgres.codec import COLUMN_NAMES
from reverie.store.postgres.schema import sign_bits

pytestmark = pytest.mark.postgres

DIM = 16
SRC = str(Path(__file__).resolve().parents[2] / "src")


def _vec(rng: np.random.Generator) -> np.ndarray:
    v = rng.standard_normal(DIM).astype(np.float32)
    return v / np.linalg.norm(v)


@pytest.fixture
def pg(pg_url: str) -> Iterator[PostgresStore]:
    st = PostgresStore(pg_url, settings=StorageSettings(), dim=DIM)
    yield st
    st.close()


def _scalar(url: str, query: str) -> object:
    with psycopg.connect(url) as conn:
        row = conn.execute(query).fetchone()
        assert row is not None
        return row[0]


def test_columns_cover_every_memory_field() -> None:
    assert set(COLUMN_NAMES) == {f.name for f in dataclasses.fields(MemoryRecord)}


def test_migrations_are_recorded_and_idempotent_on_reopen(pg_url: str) -> None:
    with PostgresStore(pg_url, settings=StorageSettings(), dim=DIM) as st:
        rec = MemoryRecord("kept across reopen", embedding=_vec(np.random.default_rng(0)))
        st.insert([rec])
        first = st.info().schema_version
    with PostgresStore(pg_url, settings=StorageSettings(), dim=DIM) as st:
        assert st.info().schema_version == first == len(MIGRATIONS)
        assert st.get([rec.id])[rec.id].content == "kept across reopen"
    assert _scalar(pg_url, "SELECT count(*) FROM schema_migrations") == len(MIGRATIONS)


def test_unknown_migration_in_database_is_refused(pg_url: str) -> None:
    PostgresStore(pg_url, settings=StorageSettings(), dim=DIM).close()
    with psycopg.connect(pg_url) as conn:
        conn.execute("INSERT INTO schema_migrations (name) VALUES ('9999_from_the_future')")
    with pytest.raises(StoreError, match="9999_from_the_future"):
        PostgresStore(pg_url, settings=StorageSettings(), dim=DIM)


def test_dimension_mismatch_is_a_clear_store_error(pg_url: str) -> None:
    PostgresStore(pg_url, settings=StorageSettings(), dim=DIM).close()
    with pytest.raises(StoreError, match=r"16-dimensional.*32-dimensional"):
        PostgresStore(pg_url, settings=StorageSettings(), dim=32)


def test_concurrent_open_from_threads_migrates_once(pg_url: str) -> None:
    stores: list[PostgresStore] = []
    errors: list[BaseException] = []
    barrier = threading.Barrier(4)

    def opener() -> None:
        barrier.wait()
        try:
            stores.append(PostgresStore(pg_url, settings=StorageSettings(), dim=DIM))
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=opener) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for st in stores:
        st.close()
    assert errors == []
    assert len(stores) == 4
    assert _scalar(pg_url, "SELECT count(*) FROM schema_migrations") == len(MIGRATIONS)


_CHILD = """
import json, sys, time
from datetime import UTC, datetime
from reverie.config.core import StorageSettings
from reverie.store.postgres import PostgresStore

url, owner, start, ids = sys.argv[1], sys.argv[2], float(sys.argv[3]), json.loads(sys.argv[4])
st = PostgresStore(url, settings=StorageSettings(), dim=int(sys.argv[5]))
while time.time() < start:
    time.sleep(0.001)
held = []
for i in range(0, len(ids), 5):
    held += st.claim(ids[i:i + 5], owner=owner, phase="merge", now=datetime.now(UTC), ttl_seconds=600)
st.close()
print(json.dumps(held))
"""


def _spawn(args: list[str]) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([SRC, os.environ.get("PYTHONPATH", "")])}
    return subprocess.Popen(
        [sys.executable, "-c", _CHILD, *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )


def test_processes_open_and_claim_the_same_ids_without_overlap(pg_url: str) -> None:
    import time

    ids = [f"m{i:03d}" for i in range(200)]
    start = str(time.time() + 2.0)
    procs = [
        _spawn([pg_url, "worker-a", start, json.dumps(ids), str(DIM)]),
        _spawn([pg_url, "worker-b", start, json.dumps(list(reversed(ids))), str(DIM)]),
    ]
    results = []
    for proc in procs:
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
        results.append(set(json.loads(out)))
    a, b = results
    assert not a & b, "a memory was claimed by two owners"
    assert a | b == set(ids)
    with psycopg.connect(pg_url) as conn:
        rows: dict[str, str] = dict(conn.execute("SELECT memory_id, owner FROM claims").fetchall())
    assert {k for k, v in rows.items() if v == "worker-a"} == a
    assert _scalar(pg_url, "SELECT count(*) FROM schema_migrations") == len(MIGRATIONS)


def test_claim_earlier_wins_until_it_expires(pg: PostgresStore) -> None:
    now = datetime(2025, 1, 1, tzinfo=UTC)
    assert pg.claim(["x", "y"], owner="a", phase="p", now=now, ttl_seconds=60) == ["x", "y"]
    assert pg.claim(["y", "z"], owner="b", phase="p", now=now, ttl_seconds=60) == ["z"]
    later = now + timedelta(seconds=61)
    assert pg.claim(["y"], owner="b", phase="p", now=later, ttl_seconds=60) == ["y"]
    assert pg.release("a") == 1
    assert pg.release("b", ["y", "z"]) == 2


def _as_url(conninfo: str) -> str:
    """A ``postgresql://`` URL for a libpq conninfo string (the ``pg_url`` fixture gives either)."""
    if conninfo.startswith(("postgresql://", "postgres://")):
        return conninfo
    params = psycopg.conninfo.conninfo_to_dict(conninfo)
    user = quote(str(params.pop("user", "")), safe="")
    password = params.pop("password", None)
    auth = f"{user}:{quote(str(password), safe='')}@" if password else (f"{user}@" if user else "")
    dbname = quote(str(params.pop("dbname", "")), safe="")
    host = str(params.get("host", ""))
    netloc = "" if host.startswith("/") else host
    if not host.startswith("/"):
        params.pop("host", None)
        if "port" in params:
            netloc += f":{params.pop('port')}"
    return f"postgresql://{auth}{netloc}/{dbname}" + (f"?{urlencode(params)}" if params else "")


def test_open_store_dispatches_postgres_urls(pg_url: str) -> None:
    base = _as_url(pg_url)
    for url in (base, base.replace("postgresql://", "postgres://", 1)):
        st = open_store(url, settings=StorageSettings(), dim=DIM)
        try:
            assert isinstance(st, PostgresStore)
            assert st.backend == "postgres"
            assert "password" not in st.info().target
        finally:
            st.close()


def test_reverie_pg_url_is_honoured(pg_server_url: str) -> None:
    url = os.environ.get("REVERIE_PG_URL")
    if url:
        assert pg_server_url == url
    assert _scalar(pg_server_url, "SELECT name FROM pg_available_extensions WHERE name = 'vector'")


def test_hnsw_index_uses_the_configured_parameters(pg_url: str) -> None:
    settings = StorageSettings(hnsw_m=12, hnsw_ef_construction=40)
    with PostgresStore(pg_url, settings=settings, dim=DIM) as st:
        st.rebuild_indexes()
    indexdef = str(_scalar(pg_url, "SELECT indexdef FROM pg_indexes WHERE indexname = 'memories_embedding_hnsw'"))
    assert "USING hnsw" in indexdef
    assert "vector_cosine_ops" in indexdef
    assert "m='12'" in indexdef
    assert "ef_construction='40'" in indexdef
    gin = str(_scalar(pg_url, "SELECT indexdef FROM pg_indexes WHERE indexname = 'memories_tsv_idx'"))
    assert "USING gin" in gin


def _filtered_population(pg: PostgresStore, pg_url: str) -> tuple[list[MemoryRecord], np.ndarray]:
    rng = np.random.default_rng(7)
    records = [
        MemoryRecord(f"memory {i}", user_id="u", embedding=_vec(rng), category="rare" if i % 40 == 0 else "common")
        for i in range(2000)
    ]
    pg.insert(records)
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("ANALYZE memories")
    return records, _vec(rng)


def _brute_force(records: list[MemoryRecord], query: np.ndarray, k: int) -> list[str]:
    rare = [r for r in records if r.category == "rare"]
    sims = np.array([float(r.embedding @ query) for r in rare])
    return [rare[i].id for i in np.argsort(-sims)[:k]]


def test_rebuild_inside_a_transaction_locks_but_works(pg: PostgresStore) -> None:
    rec = MemoryRecord("lighthouse keeper", embedding=_vec(np.random.default_rng(3)))
    pg.insert([rec])
    with pg.transaction():
        pg.rebuild_indexes()
        assert pg.vector_search(rec.embedding, MemoryFilter(), 1)[0].id == rec.id
    assert [h.id for h in pg.text_search("lighthouse", MemoryFilter(), 5)] == [rec.id]


def test_filtered_vector_search_returns_k_rows(pg: PostgresStore, pg_url: str) -> None:
    records, query = _filtered_population(pg, pg_url)
    hits = pg.vector_search(query, MemoryFilter(user_id="u", categories=frozenset({"rare"})), 20)
    assert len(hits) == 20
    assert [h.id for h in hits] == _brute_force(records, query, 20)
    scores = [h.score for h in hits]
    assert scores == sorted(scores, reverse=True)


def test_exhausted_hnsw_scan_falls_back_to_exact_search(pg: PostgresStore, pg_url: str) -> None:
    records, query = _filtered_population(pg, pg_url)
    with pg.transaction(), pg._conn() as conn:
        conn.execute("SET LOCAL hnsw.max_scan_tuples = 50")  # the index gives up after 50 rows
        hits = pg.vector_search(query, MemoryFilter(user_id="u", categories=frozenset({"rare"})), 20)
    assert [h.id for h in hits] == _brute_force(records, query, 20)


def test_iterative_scan_is_enabled_on_pooled_connections(pg: PostgresStore) -> None:
    with pg.transaction(), pg._conn() as conn:
        conn.execute("SELECT '[1,0]'::vector")
        settings = dict(
            conn.execute(
                "SELECT name, setting FROM pg_settings WHERE name IN ('hnsw.ef_search', 'hnsw.iterative_scan')"
            ).fetchall()
        )
    assert settings == {"hnsw.ef_search": "96", "hnsw.iterative_scan": "relaxed_order"}


def test_timestamps_come_back_as_aware_utc_with_microseconds(pg: PostgresStore) -> None:
    local = datetime(2024, 3, 12, 9, 30, 15, 123456, tzinfo=timezone(timedelta(hours=-7)))
    rec = MemoryRecord("a hike", created_at=local, valid_from=local)
    pg.insert([rec])
    got = pg.get([rec.id])[rec.id]
    assert got.created_at == local
    assert got.created_at.tzinfo is UTC
    assert got.valid_from is not None
    assert got.valid_from.microsecond == 123456


def test_hostile_text_queries_never_error(pg: PostgresStore) -> None:
    pg.insert([MemoryRecord("the user's cat is called Pixel", user_id="u")])
    flt = MemoryFilter(user_id="u")
    hostile = [
        "'",
        "!&|():*",
        "cat & | ! (",
        "\x00 cat",
        "a <-> b",
        "''; DROP TABLE memories; --",
        "x" * 5000,
    ]
    for query in hostile:
        pg.text_search(query, flt, 5)
    assert [h.id for h in pg.text_search("cats OR dogs", flt, 5)]
    assert pg.text_search("the and of", flt, 5) == []


def test_embedding_of_wrong_shape_is_invalid_input(pg: PostgresStore) -> None:
    with pytest.raises(InvalidInputError):
        pg.insert([MemoryRecord("bad", embedding=np.zeros(DIM + 1, dtype=np.float32))])
    with pytest.raises(InvalidInputError):
        pg.vector_search(np.zeros(3, dtype=np.float32), MemoryFilter(), 5)
    assert pg.count(MemoryFilter.everything()) == 0


def test_failed_write_inside_a_transaction_does_not_poison_it(pg: PostgresStore) -> None:
    rec = MemoryRecord("first")
    with pg.transaction():
        pg.insert([rec])
        with pytest.raises(ConflictError):
            pg.insert([rec])
        pg.set_state("after", True)
    assert pg.get_state("after") is True
    assert rec.id in pg.get([rec.id])


def test_transactions_are_per_thread(pg: PostgresStore) -> None:
    inside = threading.Event()
    release = threading.Event()

    def writer() -> None:
        with pg.transaction():
            pg.set_state("other-thread", 1)
            inside.set()
            release.wait(10)

    t = threading.Thread(target=writer)
    t.start()
    assert inside.wait(10)
    assert pg.get_state("other-thread") is None  # not committed yet, not this thread's transaction
    release.set()
    t.join()
    assert pg.get_state("other-thread") == 1


def test_closed_store_raises_store_error(pg_url: str) -> None:
    st = PostgresStore(pg_url, settings=StorageSettings(), dim=DIM)
    st.close()
    st.close()
    with pytest.raises(StoreError):
        st.count(MemoryFilter())


def test_unreachable_server_is_a_store_error() -> None:
    with pytest.raises(StoreError):
        PostgresStore("postgresql://nobody@127.0.0.1:1/none?connect_timeout=2", settings=StorageSettings(), dim=DIM)


def test_common_words_come_from_the_planner_statistics_once_analysed(pg_url: str) -> None:
    with PostgresStore(pg_url, settings=StorageSettings(fts_common_docs=10), dim=DIM) as st:
        st.insert([MemoryRecord(f"Maya walked the dog {i}", id=f"w{i:02d}") for i in range(20)])
        st.insert([MemoryRecord("Maya saw a heron", id=f"h{i}") for i in range(3)])
        words = ["maya", "dog", "heron", "nowhere", "the"]
        assert st._common_words(words, 10) == {"maya", "dog"}  # no statistics yet: counted
        with psycopg.connect(pg_url, autocommit=True) as conn:
            conn.execute("ANALYZE memories")
        assert st._common_words(words, 10) == {"maya", "dog"}  # every row sampled: the same answer
        st.insert([MemoryRecord("a heron again", id=f"h{i}") for i in range(3, 11)])
        # 11 rows name the heron now, but the decision follows the statistics of the last ANALYZE
        assert st._common_words(words, 10) == {"maya", "dog"}
        with psycopg.connect(pg_url, autocommit=True) as conn:
            conn.execute("ANALYZE memories")
        assert st._common_words(words, 10) == {"maya", "dog", "heron"}
        assert [h.id for h in st.text_search("Maya heron dog 7", MemoryFilter(), 3)] == ["w07"]


def test_read_path_layout_is_set_by_the_migrations(pg_url: str) -> None:
    with PostgresStore(pg_url, settings=StorageSettings(pg_fillfactor=80), dim=DIM):
        pass
    assert _scalar(pg_url, "SELECT reloptions FROM pg_class WHERE relname = 'memories'") == ["fillfactor=80"]
    for index in ("memories_tsv_idx", "memories_entities_idx"):  # no pending list for queries to scan
        assert _scalar(pg_url, f"SELECT reloptions FROM pg_class WHERE relname = '{index}'") == ["fastupdate=off"]


def test_moving_many_memories_between_scopes_refreshes_the_planner_statistics(pg_url: str) -> None:
    """A dream that makes most of a user's memories dormant and cold (status and store changed, vectors
    quantised) leaves the planner's statistics describing them as hot: once such moves reach
    storage.pg_analyze_after_rows and a fifth of the table, the table is analysed. A scope's rows with a float32
    vector have an index of their own (a quantised cold store is not read row by row to find none)."""
    rng = np.random.default_rng(5)
    settings = StorageSettings(pg_analyze_after_rows=50)
    with PostgresStore(pg_url, settings=settings, dim=DIM) as st:
        st.insert([MemoryRecord(f"fact {i}", id=f"f{i:03d}", user_id="u", embedding=_vec(rng)) for i in range(120)])

        def analysed() -> int:
            return int(str(_scalar(pg_url, "SELECT analyze_count FROM pg_stat_user_tables WHERE relname = 'memories'")))

        before = analysed()
        st.update_many([(f"f{i:03d}", {"energy": 0.5}) for i in range(120)])  # an access update: no move
        assert analysed() == before
        moved = st.update_fields_many(
            [(f"f{i:03d}", {"status": Status.DORMANT, "store": StoreTier.COLD}, None) for i in range(100)]
        )
        assert len(moved) == 100 and analysed() == before + 1
        cold = MemoryFilter(user_id="u", statuses=frozenset({Status.DORMANT}), stores=frozenset({StoreTier.COLD}))
        assert len(st.vector_search(_vec(rng), cold, 10)) == 10
    definition = str(_scalar(pg_url, "SELECT indexdef FROM pg_indexes WHERE indexname = 'memories_float_idx'"))
    assert "(partition, store, status) WHERE (embedding IS NOT NULL)" in definition


def _shared_direction(rng: np.random.Generator, n: int, centers: np.ndarray, dim: int) -> np.ndarray:
    """Unit vectors around ``centers`` (n of them per centre row, cycled) that all share one strong direction, as
    many embedding models' vectors do (every cosine near 0.88 here; multilingual-e5-small: 0.75-0.85)."""
    v = 3.0 * np.ones(dim) / np.sqrt(dim) + np.resize(centers, (n, dim))
    v = v + 0.5 * rng.standard_normal((n, dim)) / np.sqrt(dim)
    return (v / np.linalg.norm(v, axis=1, keepdims=True)).astype(np.float32)


def _cold_population(pg_url: str, dim: int) -> tuple[np.ndarray, list[str], np.ndarray]:
    """3,000 quantised cold memories in 100 groups, and 20 queries near the first 20 groups."""
    rng = np.random.default_rng(3)
    centers = rng.standard_normal((100, dim))
    centers /= np.linalg.norm(centers, axis=1, keepdims=True)
    docs = _shared_direction(rng, 3000, np.repeat(centers, 30, axis=0), dim)
    records = [
        MemoryRecord(f"memory {i}", embedding=v, store=StoreTier.COLD, embedding_precision=Precision.INT8)
        for i, v in enumerate(docs)
    ]
    with PostgresStore(pg_url, settings=StorageSettings(), dim=dim) as st:
        st.insert(records)
    stored = vector_codec.decode_rows([vector_codec.encode(v, Precision.INT8) for v in docs], dim)
    return stored, [r.id for r in records], _shared_direction(rng, 20, centers[:20], dim)


def _cold_top10_overlap(pg_url: str, dim: int, stored: np.ndarray, ids: list[str], queries: np.ndarray) -> float:
    cold = MemoryFilter(stores=frozenset({StoreTier.COLD}))
    unit = stored / np.linalg.norm(stored, axis=1, keepdims=True)
    with PostgresStore(pg_url, settings=StorageSettings(), dim=dim) as st:
        found = [{h.id for h in st.vector_search(q, cold, 10)} for q in queries]
    exact = [{ids[i] for i in np.argsort(-(unit @ q))[:10]} for q in queries]
    return float(np.mean([len(f & e) / 10 for f, e in zip(found, exact, strict=True)]))


def test_cold_search_finds_the_nearest_when_every_vector_shares_a_direction(pg_url: str) -> None:
    # the quantised rows come from their own HNSW graph (memories_cold_hnsw); vectors that share one direction
    # have close neighbourhoods, which a narrow graph misses (the sign bits taken around zero, before, found 0.71)
    dim = 64
    stored, ids, queries = _cold_population(pg_url, dim)
    assert _cold_top10_overlap(pg_url, dim, stored, ids, queries) >= 0.98


def _cold_plan(pg_url: str, dim: int, flt: MemoryFilter) -> str:
    """The plan of the cold store's vector search for ``flt`` (the store's own statement)."""
    from reverie.store.postgres.codec import filter_sql
    from reverie.store.postgres.schema import query_half
    from reverie.store.postgres.search import _SEARCH_COLD_QUERY

    where, params = filter_sql(flt)
    query = np.ones(dim, dtype=np.float32)
    with psycopg.connect(pg_url, autocommit=True) as conn:
        register_vector(conn)
        conn.execute("ANALYZE memories")
        plan = conn.execute(
            psycopg.sql.SQL("EXPLAIN ") + _SEARCH_COLD_QUERY.format(where=where),
            [query, *params, 10, *params, query_half(query), 100],
        ).fetchall()
    return "\n".join(r[0] for r in plan)


def test_cold_search_of_a_large_scope_walks_the_cold_graph(pg_url: str) -> None:
    # before, it ranked every quantised row of the scope by its sign bits: a cost that grew with the cold store
    dim = 64
    rng = np.random.default_rng(8)
    docs = _shared_direction(rng, 6000, rng.standard_normal((200, dim)) / np.sqrt(dim), dim)
    with PostgresStore(pg_url, settings=StorageSettings(), dim=dim) as st:
        st.insert(
            [
                MemoryRecord(
                    f"m {i}",
                    user_id="big",
                    embedding=v,
                    store=StoreTier.COLD,
                    status=Status.DORMANT,
                    embedding_precision=Precision.INT8,
                )
                for i, v in enumerate(docs)
            ]
        )
    deep = MemoryFilter(user_id="big", stores=frozenset({StoreTier.COLD}), statuses=frozenset({Status.DORMANT}))
    assert "memories_cold_hnsw" in _cold_plan(pg_url, dim, deep)
    definition = str(_scalar(pg_url, "SELECT indexdef FROM pg_indexes WHERE indexname = 'memories_cold_hnsw'"))
    assert "hnsw (embedding_half halfvec_l2_ops)" in definition and "ef_construction='200'" in definition


def test_cold_search_of_one_small_scope_among_many_is_exact(pg_url: str) -> None:
    # one user's few cold rows among many users' (the planner may sort the scope instead of walking the graph)
    dim = 32
    rng = np.random.default_rng(9)
    records = [
        MemoryRecord(
            f"u{u} m{i}",
            user_id=f"u{u}",
            embedding=_shared_direction(rng, 1, rng.standard_normal((1, dim)), dim)[0],
            store=StoreTier.COLD,
            status=Status.DORMANT,
            embedding_precision=Precision.INT8,
        )
        for u in range(150)
        for i in range(20)
    ]
    with PostgresStore(pg_url, settings=StorageSettings(), dim=dim) as st:
        st.insert(records)
        for user in ("u0", "u77"):
            mine = [r for r in records if r.user_id == user]
            codes = [vector_codec.encode(r.embedding, Precision.INT8) for r in mine]
            query = _shared_direction(rng, 1, rng.standard_normal((1, dim)), dim)[0]
            exact = [mine[i].id for i in np.argsort(-vector_codec.mixed_similarity(query, codes), kind="stable")[:10]]
            flt = MemoryFilter(user_id=user, stores=frozenset({StoreTier.COLD}), statuses=frozenset({Status.DORMANT}))
            assert [h.id for h in st.vector_search(query, flt, 10)] == exact


def test_a_database_from_before_the_cold_graph_is_upgraded(pg_url: str) -> None:
    # the state a store of the previous versions left: sign bits (taken around zero, before migration 0012) and no
    # cold graph; reopening runs 0012 and 0013: every quantised row gets its half-precision vector in the graph
    dim = 64
    stored, ids, queries = _cold_population(pg_url, dim)
    with psycopg.connect(pg_url, autocommit=True) as conn:
        register_vector(conn)
        conn.execute("ALTER TABLE memories DROP COLUMN embedding_half")  # drops the graph too
        conn.execute(psycopg.sql.SQL("ALTER TABLE memories ADD COLUMN embedding_bits bit({})").format(dim))
        rows = conn.execute("SELECT id, embedding_codes FROM memories").fetchall()
        bits = sign_bits([bytes(r[1]) for r in rows], dim, None)
        with conn.cursor() as cur:
            cur.executemany(
                "UPDATE memories SET embedding_bits = %s WHERE id = %s",
                [(b, r[0]) for b, r in zip(bits, rows, strict=True)],
            )
        conn.execute("DELETE FROM schema_migrations WHERE name IN ('0012_bits_center', '0013_cold_index')")
    assert _cold_top10_overlap(pg_url, dim, stored, ids, queries) >= 0.98  # reopens: migrates
    assert _scalar(pg_url, "SELECT count(*) FROM schema_migrations WHERE name = '0013_cold_index'") == 1
    assert _scalar(pg_url, "SELECT count(*) FROM memories WHERE embedding_half IS NULL") == 0
    assert _scalar(pg_url, "SELECT count(*) FROM pg_indexes WHERE indexname = 'memories_cold_hnsw'") == 1
    columns = "SELECT count(*) FROM information_schema.columns WHERE table_name = 'memories' AND column_name = %s"
    with psycopg.connect(pg_url) as conn:
        assert conn.execute(columns, ("embedding_bits",)).fetchone() == (0,)
        assert conn.execute("SELECT count(*) FROM meta WHERE key = 'bits_center'").fetchone() == (0,)
        row = conn.execute("SELECT embedding_codes, embedding_half::real[] FROM memories LIMIT 1").fetchone()
    assert row is not None
    unit = vector_codec.decode(bytes(row[0]))
    np.testing.assert_allclose(np.asarray(row[1]), unit / np.linalg.norm(unit), atol=2e-3)


def test_quantising_and_restoring_precision_keeps_the_cold_graph_in_step(pg: PostgresStore, pg_url: str) -> None:
    rng = np.random.default_rng(4)
    rec = MemoryRecord("moves between precisions", embedding=_vec(rng), store=StoreTier.COLD)
    pg.insert([rec])
    half = "SELECT embedding_half IS NOT NULL FROM memories"
    assert _scalar(pg_url, half) is False
    assert pg.set_embedding_precision([(rec.id, Precision.INT4, None)]) == [rec.id]
    assert _scalar(pg_url, half) is True
    assert pg.vector_search(rec.embedding, MemoryFilter(stores=None), 1)[0].id == rec.id
    pg.update_fields(rec.id, {"embedding": _vec(rng), "embedding_precision": Precision.FLOAT32})
    assert _scalar(pg_url, half) is False
