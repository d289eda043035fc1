"""SQLite bulk writes: rows go in as multi-row INSERT statements, split by SQLite's bound-parameter
limit. Whatever the split, a batch is whole or absent, and the text index, the entity index and the
vector change log agree with the rows."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime
from pathlib import Path

import pytest

from reverie.config.core import StorageSettings
from reverie.embed.testing import HashEmbedder
from reverie.errors import ConflictError
from reverie.model import HistoryEvent, MemoryRecord
from reverie.store.base import MemoryFilter
from reverie.store.sqlite import SQLiteStore

DIM = 64
#: low enough that a memories row (69 values) fits twice per statement, history (6) 33 times
_LOW_LIMIT = 150


def _store(path: Path, *, limit: int | None = None) -> SQLiteStore:
    st = SQLiteStore(path, settings=StorageSettings(exact_search_max=20), dim=DIM)
    if limit is not None:
        st._conn.setlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER, limit)  # SQLite enforces it on every statement
    return st


def _records(embedder: HashEmbedder, n: int, prefix: str, user: str = "u") -> list[MemoryRecord]:
    texts = [f"{prefix} {i} mentions zq{prefix}{i}x and shared words" for i in range(n)]
    return [
        MemoryRecord(t, embedding=v, user_id=user, entities=[f"ent:{prefix}{i % 3}", "ent:all"])
        for i, (t, v) in enumerate(zip(texts, embedder.embed(texts), strict=True))
    ]


def _fts_consistent(st: SQLiteStore) -> None:
    # an external-content FTS5 table's integrity-check compares the index with the rows it indexes
    st._conn.execute("INSERT INTO memories_fts (memories_fts) VALUES ('integrity-check')")


@pytest.mark.parametrize("limit", [None, _LOW_LIMIT])
def test_a_batch_split_over_statements_is_stored_whole(
    tmp_path: Path, embedder: HashEmbedder, limit: int | None
) -> None:
    st = _store(tmp_path / "m.db", limit=limit)
    records = _records(embedder, 45, "bulk")
    statements: list[str] = []
    st._conn.set_trace_callback(statements.append)
    st.insert(records)
    st._conn.set_trace_callback(None)
    # the trace repeats a statement's (expanded, so distinct) text for each trigger run it makes
    inserts = {s for s in statements if s.startswith("INSERT INTO memories (")}
    per = (limit or st._conn.getlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER)) // 69
    assert len(inserts) == -(-45 // per)  # as few statements as the limit allows, not one per row

    stored = st.get([r.id for r in records])
    assert [stored[r.id].content for r in records] == [r.content for r in records]
    assert all(stored[r.id].entities == r.entities for r in records)
    _fts_consistent(st)
    for i in (0, 22, 44):  # a row of every statement is in the text index
        assert [h.id for h in st.text_search(f"zqbulk{i}x", MemoryFilter(user_id="u"), 3)] == [records[i].id]
    assert st.count(MemoryFilter(user_id="u", entities=frozenset({"ent:bulk1"}))) == 15
    assert st.count(MemoryFilter(user_id="u", entities=frozenset({"ent:all"}))) == 45
    for i in (0, 44):  # the vector change log has every row (45 > exact_search_max: the ANN graph)
        assert st.vector_search(records[i].embedding, MemoryFilter(user_id="u"), 1)[0].id == records[i].id
    assert st._conn.execute("SELECT count(*) FROM vector_changes").fetchone()[0] == 45
    st.close()

    reopened = _store(tmp_path / "m.db")  # a fresh process view: the same rows, the same index
    assert reopened.count(MemoryFilter(user_id="u")) == 45
    assert reopened.vector_search(records[30].embedding, MemoryFilter(user_id="u"), 1)[0].id == records[30].id
    reopened.close()


def test_a_failing_row_in_a_later_statement_leaves_nothing(tmp_path: Path, embedder: HashEmbedder) -> None:
    st = _store(tmp_path / "m.db", limit=_LOW_LIMIT)
    first = _records(embedder, 5, "kept")
    st.insert(first)
    batch = _records(embedder, 12, "lost")
    batch[-1] = MemoryRecord("a clash", id=first[0].id, embedding=embedder.embed(["a clash"])[0], user_id="u")
    with pytest.raises(ConflictError):
        st.insert(batch)  # the first five statements succeed, the sixth fails: all six are undone
    everyone = MemoryFilter(all_users=True)
    assert st.count(everyone) == 5
    assert st.get([r.id for r in batch[:-1]]) == {}
    assert st.text_search("zqlost0x", everyone, 3) == []
    assert st.count(MemoryFilter(all_users=True, entities=frozenset({"ent:lost0"}))) == 0
    assert st._conn.execute("SELECT count(*) FROM vector_changes").fetchone()[0] == 5
    _fts_consistent(st)
    st.insert(batch[:-1])  # the store is usable and the ids are free again
    assert st.count(everyone) == 16
    st.close()


def test_history_batches_keep_consecutive_ids(tmp_path: Path, embedder: HashEmbedder) -> None:
    st = _store(tmp_path / "m.db", limit=_LOW_LIMIT)
    records = _records(embedder, 3, "h")
    st.insert(records)
    at = datetime(2026, 1, 2, tzinfo=UTC)
    events = [
        HistoryEvent(records[i % 3].id, "created", at, reason=f"r{i}", actor="test", data={"i": i}) for i in range(100)
    ]  # 100 rows of 6 values: four statements under the low limit
    st.add_history(events)
    ids = [e.id for e in events]
    assert ids == list(range(ids[0], ids[0] + 100))
    back = st.history(records[1].id)
    assert [(e.id, e.reason, e.data) for e in back] == [(e.id, e.reason, e.data) for e in events[1::3]]
    st.close()


def test_find_by_hash_probes_the_hash_index(tmp_path: Path, embedder: HashEmbedder) -> None:
    """The write path's dedup asks once per item: a walk of the partition made a bulk load quadratic."""
    st = _store(tmp_path / "m.db")
    records = _records(embedder, 300, "dup")
    st.insert(records)
    target = records[123]
    statements: list[str] = []
    st._conn.set_trace_callback(statements.append)
    found = st.find_by_hash(MemoryFilter(user_id="u"), target.content_hash)
    st._conn.set_trace_callback(None)
    assert found is not None and found.id == target.id
    query = next(s for s in statements if "content_hash =" in s)
    plan = " ".join(str(r[-1]) for r in st._conn.execute("EXPLAIN QUERY PLAN " + query).fetchall())
    assert "memories_hash" in plan, plan
    assert st.find_by_hash(MemoryFilter(user_id="other"), target.content_hash) is None
    st.close()
