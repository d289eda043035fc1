"""SQLite-only behaviour: files, WAL, migrations, the ANN index and several processes on one file."""

from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import stat
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

from reverie.config.core import StorageSettings
from reverie.embed.testing import HashEmbedder
from reverie.errors import MigrationError, StoreError
from reverie.model import MemoryRecord, Status, StoreTier
from reverie.store.base import MemoryFilter
from reverie.store.sqlite import MIGRATIONS, SQLiteStore, filter_sql
from reverie.store.textquery import query_terms

DIM = 64
SRC = str(Path(__file__).resolve().parents[2] / "src")
ANN = StorageSettings(exact_search_max=50, ann_rebuild_delta=100)


def _open(path: Path, settings: StorageSettings | None = None, dim: int = DIM) -> SQLiteStore:
    return SQLiteStore(path, settings=settings or StorageSettings(), dim=dim)


def _records(embedder: HashEmbedder, n: int, prefix: str = "item", user: str | None = None) -> list[MemoryRecord]:
    texts = [f"{prefix} {i} talks about w{i % 37} and v{i % 11} near x{i % 5}" for i in range(n)]
    vecs = embedder.embed(texts)
    return [MemoryRecord(t, embedding=v, user_id=user) for t, v in zip(texts, vecs, strict=True)]


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def _run(code: str, *args: str) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": SRC}
    return subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(code), *args],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


# -- files ------------------------------------------------------------------------------


def test_files_are_owner_only_and_wal(tmp_path: Path, embedder: HashEmbedder) -> None:
    path = tmp_path / "sub" / "mem.db"
    old = os.umask(0o022)
    try:
        st = _open(path, ANN)
        st.insert(_records(embedder, 120))
        st.vector_search(embedder.embed(["item"])[0], MemoryFilter(), 3)  # builds and saves the ANN index
        for p in (path, Path(f"{path}-wal"), Path(f"{path}-shm")):
            assert p.exists() and _mode(p) == 0o600, p
        ann = Path(f"{path}.ann")
        assert _mode(ann) == 0o700
        files = [p for p in ann.iterdir() if p.is_file()]
        assert files and all(_mode(p) == 0o600 for p in files)
        with sqlite3.connect(path) as raw:
            assert raw.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        st.close()
    finally:
        os.umask(old)


def test_migrations_are_recorded_and_idempotent(tmp_path: Path) -> None:
    path = tmp_path / "mem.db"
    _open(path).close()
    with sqlite3.connect(path) as raw:
        first = raw.execute("SELECT name, applied_at FROM schema_migrations ORDER BY name").fetchall()
    assert [r[0] for r in first] == [name for name, _ in MIGRATIONS]
    st = _open(path)
    assert st.info().schema_version == len(MIGRATIONS)
    st.close()
    with sqlite3.connect(path) as raw:
        assert raw.execute("SELECT name, applied_at FROM schema_migrations ORDER BY name").fetchall() == first
        tables = {r[0] for r in raw.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    expected = {
        "memories", "memories_fts", "relations", "coactivations", "history", "access_log", "claims", "state",
        "clusters", "cluster_members", "synaptic_tags", "boxes", "working_memory", "dream_runs", "meta",
        "vector_changes", "schema_migrations",
    }  # fmt: skip
    assert expected <= tables


def test_newer_database_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "mem.db"
    _open(path).close()
    with sqlite3.connect(path) as raw:
        raw.execute("INSERT INTO schema_migrations VALUES ('9999_future', 0)")
    with pytest.raises(MigrationError, match="newer"):
        _open(path)


def test_dimension_mismatch_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "mem.db"
    _open(path).close()
    with pytest.raises(StoreError, match="64-dimensional"):
        _open(path, dim=32)


def test_driver_errors_become_store_errors(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    with pytest.raises(StoreError):
        _open(blocker / "mem.db")


# -- ANN index --------------------------------------------------------------------------


def test_ann_recall_and_delta(tmp_path: Path, embedder: HashEmbedder) -> None:
    st = _open(tmp_path / "mem.db", ANN)
    recs = _records(embedder, 2000)
    for i in range(0, 2000, 500):
        st.insert(recs[i : i + 500])
    matrix = np.stack([r.embedding for r in recs if r.embedding is not None])
    queries = embedder.embed([f"talks about w{i} and v{i % 11}" for i in range(40)])
    recall = []
    for q in queries:
        exact = {recs[i].id for i in np.argsort(-(matrix @ q))[:10]}
        got = {h.id for h in st.vector_search(q, MemoryFilter(), 10)}
        recall.append(len(exact & got) / 10)
    assert float(np.mean(recall)) >= 0.9
    assert st.info().details["vector_index"]["hnsw_partitions"] == 1
    # rows added after the build are served from the exact delta
    delta = _records(embedder, 30, prefix="fresh delta row")
    st.insert(delta)
    for r in delta:
        assert st.vector_search(r.embedding, MemoryFilter(), 1)[0].id == r.id
    # beyond ann_rebuild_delta the delta is folded into the graph, and still found
    more = _records(embedder, 300, prefix="second wave")
    st.insert(more)
    for r in more[::30]:
        assert st.vector_search(r.embedding, MemoryFilter(), 1)[0].id == r.id
    # deletions and embedding changes inside the graph are honoured
    st.delete([recs[0].id])
    assert recs[0].id not in {h.id for h in st.vector_search(recs[0].embedding, MemoryFilter(), 5)}
    st.update_fields(recs[1].id, {"embedding": embedder.embed(["zebra quantum"])[0]})
    top = st.vector_search(embedder.embed(["zebra quantum"])[0], MemoryFilter(), 1)
    assert top[0].id == recs[1].id
    st.close()


def test_ann_index_is_persisted_and_rebuilt(tmp_path: Path, embedder: HashEmbedder) -> None:
    path = tmp_path / "mem.db"
    st = _open(path, ANN)
    recs = _records(embedder, 400)
    st.insert(recs)
    probe = [r.embedding for r in recs[::40]]
    before = [[h.id for h in st.vector_search(q, MemoryFilter(), 5)] for q in probe]
    st.close()
    manifest = Path(f"{path}.ann") / "manifest.json"
    assert json.loads(manifest.read_text())["partitions"]
    # reopened: served from the saved graph plus the log
    st = _open(path, ANN)
    assert [[h.id for h in st.vector_search(q, MemoryFilter(), 5)] for q in probe] == before
    st.close()
    # the index directory is gone: rebuilt from the rows
    shutil.rmtree(Path(f"{path}.ann"))
    st = _open(path, ANN)
    assert [[h.id for h in st.vector_search(q, MemoryFilter(), 5)] for q in probe] == before
    st.close()
    # a damaged manifest or graph file: ignored and rebuilt
    for p in Path(f"{path}.ann").iterdir():
        if p.suffix == ".hnsw":
            p.write_bytes(b"garbage")
    st = _open(path, ANN)
    assert [[h.id for h in st.vector_search(q, MemoryFilter(), 5)] for q in probe] == before
    st.rebuild_indexes()
    assert [[h.id for h in st.vector_search(q, MemoryFilter(), 5)] for q in probe] == before
    st.close()


def test_saved_index_catches_up_with_later_writes(tmp_path: Path, embedder: HashEmbedder) -> None:
    path = tmp_path / "mem.db"
    st = _open(path, ANN)
    recs = _records(embedder, 300)
    st.insert(recs)
    st.vector_search(recs[0].embedding, MemoryFilter(), 1)
    st.close()
    # another writer (the index is not loaded) changes rows after the save
    other = _open(path, ANN)
    other.delete([recs[0].id])
    new_vec = embedder.embed(["brand new direction"])[0]
    other.update_fields(recs[1].id, {"embedding": new_vec})
    added = _records(embedder, 5, prefix="added later")
    other.insert(added)
    other.close()
    st = _open(path, ANN)
    assert recs[0].id not in {h.id for h in st.vector_search(recs[0].embedding, MemoryFilter(), 5)}
    assert st.vector_search(new_vec, MemoryFilter(), 1)[0].id == recs[1].id
    assert st.vector_search(added[2].embedding, MemoryFilter(), 1)[0].id == added[2].id
    st.close()


def test_a_graph_mostly_marked_deleted_is_loaded_again_from_its_rows(tmp_path: Path, embedder: HashEmbedder) -> None:
    """When most of a partition's graph entries are marked deleted (the lifecycle moved most of a user's memories
    to the cold store's quantised partition, or they were deleted), a search would walk the deleted entries to find
    the few live ones: the partition is loaded again from its rows (here few enough to be searched exactly), and
    the saved manifest no longer names the old graph."""
    path = tmp_path / "mem.db"
    st = _open(path, ANN)
    recs = _records(embedder, 400)
    st.insert(recs)
    probes = [recs[i].embedding for i in (5, 150, 390)]
    st.vector_search(probes[0], MemoryFilter(), 5)  # 400 rows > exact_search_max: a graph
    st.close()
    assert json.loads((Path(f"{path}.ann") / "manifest.json").read_text())["partitions"]
    st = _open(path, ANN)
    gone = [r.id for r in recs if r.id not in {recs[5].id, recs[150].id, recs[390].id}][:360]
    st.delete(gone)
    assert st._index_entries()["vector_deleted_marks"] == 0  # not loaded yet: the next search catches up
    hits = [st.vector_search(p, MemoryFilter(), 3) for p in probes]
    assert [h[0].id for h in hits] == [recs[5].id, recs[150].id, recs[390].id]
    assert all(h.id not in set(gone) for found in hits for h in found)
    assert st._index_entries()["vector_deleted_marks"] == 0 and st._index_entries()["vectors"] == 40
    st.close()
    assert json.loads((Path(f"{path}.ann") / "manifest.json").read_text())["partitions"] == {}
    st = _open(path, ANN)  # reopened: the 40 rows, exactly
    assert [st.vector_search(p, MemoryFilter(), 1)[0].id for p in probes] == [recs[5].id, recs[150].id, recs[390].id]
    st.close()


def test_two_connections_see_each_others_vectors(tmp_path: Path, embedder: HashEmbedder) -> None:
    path = tmp_path / "mem.db"
    a, b = _open(path, ANN), _open(path, ANN)
    first = _records(embedder, 200)
    a.insert(first)
    assert b.vector_search(first[7].embedding, MemoryFilter(), 1)[0].id == first[7].id
    second = _records(embedder, 20, prefix="written by b")
    b.insert(second)
    assert a.vector_search(second[3].embedding, MemoryFilter(), 1)[0].id == second[3].id
    b.delete([first[7].id])
    assert first[7].id not in {h.id for h in a.vector_search(first[7].embedding, MemoryFilter(), 3)}
    a.close()
    b.close()


# -- several processes ------------------------------------------------------------------

_WRITER = """
import sys
from pathlib import Path
from reverie.config.core import StorageSettings
from reverie.embed.testing import HashEmbedder
from reverie.model import MemoryRecord
from reverie.store.sqlite import SQLiteStore

path, n, prefix = sys.argv[1], int(sys.argv[2]), sys.argv[3]
store = SQLiteStore(Path(path), settings=StorageSettings(exact_search_max=50, ann_rebuild_delta=100), dim=64)
emb = HashEmbedder(64)
for i in range(n):
    text = f"{prefix} number {i} says hello"
    rec = MemoryRecord(text, id=f"{prefix}-{i}", embedding=emb.embed([text])[0])
    store.insert([rec])
    print(rec.id, flush=True)
store.close()
"""


def test_other_process_writes_are_visible(tmp_path: Path, embedder: HashEmbedder) -> None:
    path = tmp_path / "mem.db"
    st = _open(path, ANN)
    st.insert(_records(embedder, 150))
    st.vector_search(embedder.embed(["item"])[0], MemoryFilter(), 1)  # index loaded before the other writes
    proc = _run(_WRITER, str(path), "40", "child")
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    assert len(out.split()) == 40
    for i in (0, 17, 39):
        q = embedder.embed([f"child number {i} says hello"])[0]
        assert st.vector_search(q, MemoryFilter(), 1)[0].id == f"child-{i}"
    assert st.count(MemoryFilter()) == 190
    st.close()


def test_killed_writer_loses_no_acknowledged_row(tmp_path: Path, embedder: HashEmbedder) -> None:
    path = tmp_path / "mem.db"
    _open(path, ANN).close()
    proc = _run(_WRITER, str(path), "100000", "victim")
    assert proc.stdout is not None
    acked: list[str] = []
    deadline = time.monotonic() + 60
    while len(acked) < 80 and time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        acked.append(line.strip())
    proc.send_signal(signal.SIGKILL)
    _, err = proc.communicate(timeout=30)  # also closes the pipes
    assert proc.returncode == -signal.SIGKILL
    assert len(acked) >= 80, err
    st = _open(path, ANN)
    assert set(acked) <= set(st.get(acked))
    last = acked[-1]
    i = int(last.rsplit("-", 1)[1])
    q = embedder.embed([f"victim number {i} says hello"])[0]
    assert st.vector_search(q, MemoryFilter(), 1)[0].id == last
    st.insert(_records(embedder, 3, prefix="after the crash"))
    assert st.count(MemoryFilter()) >= len(acked) + 3
    st.close()


def test_common_words_do_not_flood_full_text_search(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "fts.db", settings=StorageSettings(fts_common_docs=5), dim=64)
    try:
        rows = [MemoryRecord(f"Maya: talked about topic {i} with the cat") for i in range(20)]
        rows.append(MemoryRecord("Maya: my cat is called Pixel"))
        store.insert(rows)
        hits = store.text_search("What is Maya's cat Pixel like?", MemoryFilter(), 5)
        assert [h.id for h in hits] == [rows[-1].id]  # "maya" and "cat" are in >= 5 rows: only "pixel" ranks
        both_common = store.text_search("maya cat", MemoryFilter(), 50)
        assert len(both_common) == 21  # every term common: ANDed, still found
        assert {h.id for h in store.text_search("topic 7", MemoryFilter(), 5)} == {rows[7].id}
    finally:
        store.close()


def test_remembered_word_counts_follow_every_change_of_the_text_index(tmp_path: Path) -> None:
    """How common a query word is, is remembered between searches only while the full-text index is
    unchanged: words that become common (or rare again) through inserts, deletes, edits — by this
    connection or another one — rank as a fresh count would have them rank."""
    path = tmp_path / "memo.db"
    store = SQLiteStore(path, settings=StorageSettings(fts_common_docs=3), dim=64)
    other = SQLiteStore(path, settings=StorageSettings(fts_common_docs=3), dim=64)
    try:
        pixel = MemoryRecord("my cat is called Pixel")
        store.insert([pixel, MemoryRecord("the cat sleeps all day")])

        def found(query: str) -> set[str]:
            return {h.id for h in store.text_search(query, MemoryFilter(), 10)}

        assert len(found("cat pixel")) == 2  # "cat" in 2 rows: rare, OR-ed with "pixel"
        extra = [MemoryRecord(f"a cat story number {i}") for i in range(2)]
        store.insert(extra)
        assert found("cat pixel") == {pixel.id}  # "cat" in 4 rows now: common, left out
        store.delete([r.id for r in extra])
        assert len(found("cat pixel")) == 2  # rare again
        other.insert([MemoryRecord(f"another cat tale {i}") for i in range(3)])  # another connection
        assert found("cat pixel") == {pixel.id}
        with store.transaction():  # inside this connection's transaction: counted afresh, pending rows included
            store.update_fields(pixel.id, {"content": "my dog is called Pixel"})
            assert found("dog pixel") == {pixel.id}
        store.update_fields(pixel.id, {"content": "my cat is called Pixel"})
        assert found("cat pixel") == {pixel.id}
        assert found("dog") == set()
    finally:
        other.close()
        store.close()


def test_text_search_ranked_before_the_filter_equals_the_joined_ranking(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The fast paths (rank in the FTS index, then filter the best 2k rows; or, for a scope of few
    rows, list the rows passing the filter and score only the matches among them) must give exactly
    what joining every match to its row gives: other users' rows crowding the best matches, ties at the
    probe's edge, superseded rows, and filters that keep almost nothing all fall back or agree."""
    import random

    rng = random.Random(5)
    store = SQLiteStore(tmp_path / "probe.db", settings=StorageSettings(fts_common_docs=10_000), dim=64)
    words = ["apple", "river", "stone", "cloud", "ember", "maple", "quartz", "violet"]
    try:
        rows = []
        for _ in range(600):
            text = " ".join(rng.choice(words) for _ in range(rng.randint(1, 6)))
            user = rng.choice(["ana", "ana", "ben", "ben", "ben", "ben", "ben", "cy", None])
            rows.append(
                MemoryRecord(
                    text,
                    user_id=user,
                    session_id=rng.choice(["s1", "s2"]),
                    status=rng.choice([Status.ACTIVE] * 3 + [Status.SUPERSEDED]),
                )
            )
        rows += [MemoryRecord("apple river", user_id="ana") for _ in range(30)]  # exact ties
        store.insert(rows)
        filters = [
            MemoryFilter(),
            MemoryFilter(user_id="ana"),
            MemoryFilter(user_id="cy"),
            MemoryFilter(user_id="ben", session_id="s2"),
            MemoryFilter(statuses=frozenset({Status.SUPERSEDED})),
            MemoryFilter(all_users=True),
        ]
        queries = ["apple", "apple river", "quartz violet ember", "maple", "cloud stone", "nothing here"]
        cases = [(q, f, k) for q in queries for f in filters for k in (1, 3, 10, 40)]
        monkeypatch.setattr(store, "_scope_rows", lambda *a, **kw: None)  # rank first (a large scope)
        fast = [store.text_search(q, f, k) for q, f, k in cases]
        used = sum(
            store._ranked_then_filtered(store._selective_match(query_terms(q)), *filter_sql(f), k) is not None
            for q, f, k in cases
            if query_terms(q)
        )
        monkeypatch.setattr(store, "_scope_rows", lambda *a, **kw: 1)  # filter first (a scope of few rows)
        narrow = [store.text_search(q, f, k) for q, f, k in cases]
        monkeypatch.setattr(store, "_scope_rows", lambda *a, **kw: None)
        monkeypatch.setattr(store, "_ranked_then_filtered", lambda *a: None)  # always join
        joined = [store.text_search(q, f, k) for q, f, k in cases]
        assert fast == joined
        assert narrow == joined
        assert 0 < used < len(cases)  # both paths were exercised
    finally:
        store.close()


def test_text_search_of_a_small_store_within_a_large_one(tmp_path: Path) -> None:
    """A scope of few rows (the cold store, one small user) inside a large partition is searched by
    filtering first; the scope is measured in the index, and the results are the joined ranking's."""
    import random

    rng = random.Random(11)
    words = ["apple", "river", "stone", "cloud", "ember", "maple", "quartz", "violet"]
    store = SQLiteStore(tmp_path / "narrow.db", settings=StorageSettings(fts_common_docs=10_000), dim=64)
    try:
        rows = [
            MemoryRecord(
                " ".join(rng.choice(words) for _ in range(rng.randint(1, 5))),
                user_id="u",
                store=rng.choice([StoreTier.HOT] * 9 + [StoreTier.COLD]),
                status=rng.choice([Status.ACTIVE, Status.ACTIVE, Status.SUPERSEDED, Status.DORMANT]),
            )
            for _ in range(800)
        ]
        store.insert(rows)
        cold = MemoryFilter(
            user_id="u",
            stores=frozenset({StoreTier.COLD}),
            statuses=frozenset({Status.ACTIVE, Status.SUPERSEDED, Status.DORMANT, Status.ARCHIVED}),
        )
        hot = MemoryFilter(user_id="u")
        assert 0 < store._scope_rows(cold, 200) < 200 and store._scope_rows(hot, 200) == 200
        assert store._scope_rows(MemoryFilter(all_users=True), 10_000) is None
        assert store._scope_rows(MemoryFilter(user_id="nobody"), 200) == 0  # an empty scope: nothing is ranked
        for q in ["apple", "quartz violet", "cloud stone ember", "maple river"]:
            for flt in (cold, hot, MemoryFilter(user_id="nobody")):
                where, params = filter_sql(flt)
                joined = [
                    (r[0], float(r[1]))
                    for r in store._conn.execute(
                        "SELECT m.id, -bm25(memories_fts) AS score FROM memories_fts JOIN memories m ON "
                        f"m.rid = memories_fts.rowid WHERE memories_fts MATCH ? AND {where} ORDER BY score DESC, m.id "
                        "LIMIT 25",
                        (store._selective_match(query_terms(q)), *params),
                    )
                ]
                assert [(h.id, h.score) for h in store.text_search(q, flt, 25)] == joined
                assert [
                    (h.id, h.score)
                    for h in store._filtered_then_ranked(store._selective_match(query_terms(q)), flt, 25)
                ] == joined
    finally:
        store.close()


def test_a_scope_remembered_as_large_still_finds_exactly_what_the_joined_ranking_finds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A scope counted at the plan's cap is not counted again for a while (the count costs ~0.4 ms at 100k);
    when it has since shrunk, the search runs the plan for a large scope, which returns the same hits."""
    import reverie.store.sqlite.search as sqlite_search

    monkeypatch.setattr(sqlite_search, "_TEXT_FILTER_FIRST", 40)
    store = SQLiteStore(tmp_path / "large.db", settings=StorageSettings(fts_common_docs=10_000), dim=64)
    try:
        rows = [MemoryRecord(f"apple river note {i}", user_id="u") for i in range(60)]
        store.insert(rows)
        hot = MemoryFilter(user_id="u")
        assert store._scope_rows(hot, 40, remember=True) == 40
        store.update_many([(r.id, {"store": StoreTier.COLD.value}) for r in rows[:45]])  # the scope shrinks to 15
        assert store._scope_rows(hot, 40, remember=True) == 40  # still taken as large: only the plan depends on it
        assert store._scope_rows(hot, 40) == 15  # counted when the caller does not ask to remember
        where, params = filter_sql(hot)
        joined = [
            (r[0], float(r[1]))
            for r in store._conn.execute(
                "SELECT m.id, -bm25(memories_fts) AS score FROM memories_fts JOIN memories m ON "
                f"m.rid = memories_fts.rowid WHERE memories_fts MATCH ? AND {where} ORDER BY score DESC, m.id LIMIT 10",
                (store._selective_match(query_terms("apple note")), *params),
            )
        ]
        assert len(joined) == 10
        assert [(h.id, h.score) for h in store.text_search("apple note", hot, 10)] == joined
        store._large_scopes.clear()
        assert store._scope_rows(hot, 40, remember=True) == 15  # counted again once the memory lapses
        cold = MemoryFilter(user_id="u", stores=frozenset({StoreTier.COLD}))
        assert store._scope_rows(cold, 40) == 40
        assert store._scope_rows(MemoryFilter(user_id="nobody"), 40) == 0  # small scopes are counted every time
    finally:
        store.close()


def test_sealed_boxes_come_from_the_index_in_order(tmp_path: Path) -> None:
    """The write path reads the newest sealed boxes on every seal: no sort of every sealed box."""
    from datetime import UTC, datetime, timedelta

    from reverie.store.base import Box

    store = _open(tmp_path / "boxes.db")
    t0 = datetime(2026, 1, 1, tzinfo=UTC)
    try:
        for i in range(40):
            sealed = t0 + timedelta(minutes=(i * 7) % 40) if i % 4 else None  # sealed out of id order
            store.put_box(Box(f"b{i:02d}", "u", "s", t0, t0, sealed_at=sealed))
        store.put_box(Box("other", "v", "s", t0, t0, sealed_at=t0 + timedelta(days=1)))
        newest = store.sealed_boxes("u", limit=5)
        expect = sorted((b for b in (store.sealed_boxes("u", limit=100))), key=lambda b: (b.sealed_at, b.id))[::-1][:5]
        assert [b.id for b in newest] == [b.id for b in expect] and len(newest) == 5
        statements: list[str] = []
        store._conn.set_trace_callback(statements.append)
        store.sealed_boxes("u", limit=5)
        store._conn.set_trace_callback(None)
        query = next(s for s in statements if "FROM boxes" in s)
        plan = " ".join(str(r[-1]) for r in store._conn.execute("EXPLAIN QUERY PLAN " + query).fetchall())
        assert "boxes_sealed" in plan and "TEMP B-TREE" not in plan, plan
    finally:
        store.close()


def test_compaction_trims_the_change_log_and_other_connections_reload(tmp_path: Path, embedder: HashEmbedder) -> None:
    """compact() keeps only the last change-log entry: a second connection (another process) whose index is
    older than the trimmed log reloads it instead of missing the changes it can no longer replay."""
    path = tmp_path / "mem.db"
    a, b = _open(path, ANN), _open(path, ANN)
    first = _records(embedder, 200)
    a.insert(first)
    assert b.vector_search(first[7].embedding, MemoryFilter(), 1)[0].id == first[7].id
    later = _records(embedder, 30, prefix="written before compaction")
    a.insert(later)
    a.delete([first[9].id])
    report = a.compact()
    assert report.rows_removed["vector_changes"] == 200 + 30 + 1 - 1
    with sqlite3.connect(path) as raw:
        assert raw.execute("SELECT count(*) FROM vector_changes").fetchone()[0] == 1
    # b's index predates the trimmed entries: it reloads and sees both the insert and the delete
    assert b.vector_search(later[4].embedding, MemoryFilter(), 1)[0].id == later[4].id
    assert first[9].id not in {h.id for h in b.vector_search(first[9].embedding, MemoryFilter(), 5)}
    after = _records(embedder, 5, prefix="written after compaction")
    a.insert(after)
    assert b.vector_search(after[2].embedding, MemoryFilter(), 1)[0].id == after[2].id
    a.close()
    b.close()
    c = _open(path, ANN)  # a fresh process loads the graphs the compaction saved
    assert c.vector_search(after[1].embedding, MemoryFilter(), 1)[0].id == after[1].id
    assert c.vector_search(first[50].embedding, MemoryFilter(), 1)[0].id == first[50].id
    c.close()
