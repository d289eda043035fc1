"""``forget()`` leaves no copy of the forgotten words: not in any table (boxes, derived summaries,
history), not in the full-text index pages, not in the SQLite file or its write-ahead log, and not in
the ops log — on both backends."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from reverie import Memory, SettableClock
from reverie.model import Status, StoreTier
from reverie.store.sqlite import SQLiteStore

SECRET = "zqxvkplm7731"
SEED003 = [
    f"User went hiking at Mount Rainier on March 12, 2024 with locker code {SECRET}",
    "User went kayaking at Lake Washington on March 15, 2024",
    "User ran a 5K in Fremont on March 20, 2024",
    "User went rock climbing at Stone Gardens on March 25, 2024",
    "User joined a cycling club on March 28, 2024",
]


def _sqlite_rows_with(path: Path, needle: str) -> list[tuple[str, str]]:
    """(table, column) of every cell in every table (FTS shadow tables included) holding ``needle``."""
    found = []
    with sqlite3.connect(path) as conn:
        tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        for table in tables:
            cur = conn.execute(f'SELECT * FROM "{table}"')
            cols = [d[0] for d in cur.description]
            for row in cur:
                for col, value in zip(cols, row, strict=True):
                    data = value.encode() if isinstance(value, str) else value if isinstance(value, bytes) else b""
                    if needle.encode() in data.lower():
                        found.append((table, col))
    return found


def _pg_rows_with(url: str, needle: str) -> list[tuple[str, str]]:
    import psycopg

    found = []
    with psycopg.connect(url) as conn:
        cols = conn.execute(
            "SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = 'public'"
        ).fetchall()
        for table, col in cols:
            n = conn.execute(
                f'SELECT count(*) FROM "{table}" WHERE lower("{col}"::text) LIKE %s', [f"%{needle}%"]
            ).fetchone()[0]
            if n:
                found.append((table, col))
        terms = conn.execute(
            "SELECT word FROM ts_stat('SELECT tsv FROM memories') WHERE word LIKE %s", [f"%{needle}%"]
        ).fetchall()
        found += [("memories", f"tsv:{t[0]}") for t in terms]
    return found


def _traces(mem: Memory, target: str) -> list[tuple[str, str]]:
    if target.startswith("postgresql://"):
        return _pg_rows_with(target, SECRET)
    return _sqlite_rows_with(Path(target), SECRET)


def _file_bytes(target: str) -> bytes:
    path = Path(target)
    return b"".join(p.read_bytes() for p in (path, Path(f"{target}-wal")) if p.exists())


def test_forget_leaves_no_copy_of_the_words(
    make_memory: Any, clock: SettableClock, store_target: str, tmp_path: Path
) -> None:
    mem: Memory = make_memory()
    # the secret goes through the write path (entities, a memory box, relations) ...
    first = mem.add(SEED003[0], user_id="u", session_id="s1")
    others = [r.id for r in mem.add_many(SEED003[1:], user_id="u", infer=False)]
    edited = mem.add("a note to be edited", user_id="u", infer=False)
    mem.update(edited.id, f"the gate code is {SECRET} too")  # ... through an edit (FTS delete + insert) ...
    mem.search(f"what is the locker code {SECRET}?", user_id="u")  # ... and through a query (the ops log)
    clock.advance(days=365)  # never recalled for a year: faded well below the consolidation threshold
    report = mem.dream(steps=["promote", "consolidate"])  # ... and into a dream summary of the five
    step = next(s for s in report["steps"] if s["name"] == "consolidate")
    assert step["details"]["groups"] == 1
    summary_id = step["details"]["summaries"][0]
    assert SECRET in mem.store.get([summary_id])[summary_id].content
    rec = mem.store.get([first.id])[first.id]
    assert rec.box_id is not None and SECRET in mem.store.box(rec.box_id).topic
    before = _traces(mem, store_target)
    assert {t for t, _ in before} >= {"memories", "boxes"}  # the checks below would see a leftover
    if not store_target.startswith("postgresql://"):
        mem.store.rebuild_indexes()  # pages of the text index on disk hold the word now
        assert SECRET.encode() in _file_bytes(store_target)

    mem.forget(first.id)
    mem.forget(edited.id)
    mem.ops.flush()

    assert mem.store.get([first.id, edited.id, summary_id]) == {}
    restored = mem.store.get(others)
    assert all(r.status is Status.ACTIVE and r.store is StoreTier.HOT for r in restored.values())
    assert mem.search("kayaking Lake Washington", user_id="u")[0].memory.id in others
    assert _traces(mem, store_target) == []
    if not store_target.startswith("postgresql://"):
        assert SECRET.encode() not in _file_bytes(store_target)
    log = (tmp_path / "ops-log.jsonl").read_text(encoding="utf-8")
    assert "forget" in log and SECRET not in log.lower()
    assert mem.store.text_search(SECRET, mem._scope_filter("u", None, None), 10) == []


def test_the_ops_log_keeps_text_only_when_told(make_memory: Any, tmp_path: Path) -> None:
    quiet = make_memory()
    quiet.search("where did I park the car", user_id="u")
    quiet.ops.flush()
    log = (tmp_path / "ops-log.jsonl").read_text(encoding="utf-8")
    assert "park the car" not in log and '"query_chars": 24' in log
    loud = make_memory(opslog={"path": str(tmp_path / "loud.jsonl"), "log_text": True})
    loud.search("where did I park the car", user_id="u")
    loud.ops.flush()
    assert "park the car" in (tmp_path / "loud.jsonl").read_text(encoding="utf-8")


@pytest.mark.parametrize("synchronous", ["NORMAL", "FULL"])
def test_synchronous_setting_reaches_sqlite(tmp_path: Path, synchronous: str) -> None:
    from reverie.embed.testing import HashEmbedder

    with Memory(
        tmp_path / "m.db",
        embedder=HashEmbedder(64),
        config={"opslog": {"enabled": False}, "storage": {"synchronous": synchronous}},
    ) as mem:
        assert isinstance(mem.store, SQLiteStore)
        level = mem.store._conn.execute("PRAGMA synchronous").fetchone()[0]
        assert level == {"NORMAL": 1, "FULL": 2}[synchronous]
        assert mem.store._conn.execute("PRAGMA secure_delete").fetchone()[0] == 1
