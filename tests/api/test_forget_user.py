"""``forget_user()`` — the right to be forgotten: after it, no row, full-text or vector index entry,
file page or ops-log line holds that user's words or names that user; other users keep everything.
On both backends, through the library, the REST API and the CLI."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from reverie import Memory, SettableClock
from reverie.store.base import MemoryFilter

USER = "erin-u4471"
SECRET = "qvbrtlzk5520"
OTHER = "bob"

SEED = [
    f"User went hiking at Mount Rainier on March 12, 2024 with locker code {SECRET}",
    "User went kayaking at Lake Washington on March 15, 2024",
    "User ran a 5K in Fremont on March 20, 2024",
    "User went rock climbing at Stone Gardens on March 25, 2024",
    "User joined a cycling club on March 28, 2024",
]


def _sqlite_cells_with(path: Path, needles: list[str]) -> list[tuple[str, str, str]]:
    found = []
    with sqlite3.connect(path) as conn:
        tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        for table in tables:
            cur = conn.execute(f'SELECT * FROM "{table}"')
            cols = [d[0] for d in cur.description]
            for row in cur:
                for col, value in zip(cols, row, strict=True):
                    data = value.encode() if isinstance(value, str) else value if isinstance(value, bytes) else b""
                    found += [(table, col, n) for n in needles if n.encode() in data.lower()]
    return found


def _pg_cells_with(url: str, needles: list[str]) -> list[tuple[str, str, str]]:
    import psycopg

    found = []
    with psycopg.connect(url) as conn:
        cols = conn.execute(
            "SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = 'public'"
        ).fetchall()
        for table, col in cols:
            for needle in needles:
                n = conn.execute(
                    f'SELECT count(*) FROM "{table}" WHERE lower("{col}"::text) LIKE %s', [f"%{needle}%"]
                ).fetchone()[0]
                if n:
                    found.append((table, col, needle))
        for needle in needles:
            terms = conn.execute(
                "SELECT word FROM ts_stat('SELECT tsv FROM memories') WHERE word LIKE %s", [f"%{needle}%"]
            ).fetchall()
            found += [("memories", f"tsv:{t[0]}", needle) for t in terms]
    return found


def _traces(target: str, needles: list[str]) -> list[tuple[str, str, str]]:
    if target.startswith("postgresql://"):
        return _pg_cells_with(target, needles)
    return _sqlite_cells_with(Path(target), needles)


def _populate(mem: Memory, clock: SettableClock) -> dict[str, Any]:
    """The user's data through every path that writes: the write pipeline (boxes, entities, relations),
    an edit, a pinned memory, accesses, a conversation buffer holding an unsaved turn, the schedule
    counters, a dream consolidation; and another user's memories beside it."""
    first = mem.add(SEED[0], user_id=USER, session_id="s1")
    rest = [r.id for r in mem.add_many(SEED[1:], user_id=USER, infer=False)]
    edited = mem.add("a note to be edited", user_id=USER, agent_id="planner", infer=False)
    mem.update(edited.id, f"the gate code is {SECRET} too")
    mem.pin(edited.id)
    mem.search(f"what is the locker code {SECRET}?", user_id=USER)
    mem.observe(f"my bike lock combination is {SECRET} by the way", user_id=USER, session_id="s2")
    bob = [mem.add(f"Bob note {i}: prefers aisle seats and green tea", user_id=OTHER, infer=False).id for i in range(3)]
    clock.advance(days=365)
    report = mem.dream(steps=["promote", "consolidate"])
    step = next(s for s in report["steps"] if s["name"] == "consolidate")
    assert step["details"]["groups"] == 1, step  # a dream summary of the user's memories exists
    return {"first": first.id, "rest": rest, "edited": edited.id, "bob": bob}


def _check_erased(mem: Memory, target: str, ids: dict[str, Any], log: Path) -> None:
    mem.ops.flush()
    assert _traces(target, [SECRET, USER]) == []
    assert mem.store.count(MemoryFilter.everything(user_id=USER, all_users=False)) == 0
    flt = MemoryFilter.everything(user_id=USER, all_users=False)
    assert mem.store.text_search(SECRET, flt, 10) == []  # full-text index
    probe = mem.embedder.embed([SEED[1]])[0]
    assert mem.store.vector_search(probe, flt, 10) == []  # vector index
    assert mem.store.embeddings([ids["first"], *ids["rest"]]) == {}
    if not target.startswith("postgresql://"):
        data = b"".join(p.read_bytes() for p in (Path(target), Path(f"{target}-wal")) if p.exists())
        assert SECRET.encode() not in data  # no page of the file or its write-ahead log
    else:  # the erasure vacuumed: no dead row version is left on disk (VACUUM removes a dead row's index
        # entries — text, vector — before the row itself), counted exactly by pgstattuple
        import psycopg

        with psycopg.connect(target, autocommit=True) as conn:
            conn.execute("CREATE EXTENSION IF NOT EXISTS pgstattuple")
            dead = {
                t: conn.execute("SELECT dead_tuple_count FROM pgstattuple(%s)", [t]).fetchone()[0]
                for t in ("memories", "relations", "history", "access_log", "boxes", "state")
            }
        assert set(dead.values()) == {0}, dead
    text = log.read_text(encoding="utf-8")
    assert SECRET not in text.lower() and "forget_user" in text
    # the other user keeps everything, still searchable
    assert len(mem.list(user_id=OTHER)) == 3
    assert mem.search("aisle seats", user_id=OTHER)[0].memory.id in ids["bob"]
    assert [u for u, _ in mem.users()] == [OTHER]


def test_forget_user_leaves_nothing_of_the_user(
    make_memory: Any, clock: SettableClock, store_target: str, tmp_path: Path
) -> None:
    mem: Memory = make_memory()
    ids = _populate(mem, clock)
    assert {t for t, _c, n in _traces(store_target, [SECRET]) if n == SECRET} >= {"memories", "boxes", "state"}
    total = mem.store.count(MemoryFilter.everything(user_id=USER, all_users=False))

    dry = mem.forget_user(USER, dry_run=True)
    assert dry["dry_run"] is True and dry["memories"] == total >= 7  # 6 written + the dream's summary
    assert dry["boxes"] >= 1 and dry["state_entries"] >= 2  # the buffer and the schedule counter at least
    assert mem.store.count(MemoryFilter.everything(user_id=USER, all_users=False)) == total  # nothing changed

    done = mem.forget_user(USER)
    assert done["dry_run"] is False and done["memories"] == total and done["boxes"] == dry["boxes"]
    assert done["state_entries"] == dry["state_entries"]
    _check_erased(mem, store_target, ids, tmp_path / "ops-log.jsonl")
    again = mem.forget_user(USER)  # idempotent
    assert again["memories"] == 0 and again["boxes"] == 0


def test_forget_user_through_rest(make_memory: Any, clock: SettableClock, store_target: str, tmp_path: Path) -> None:
    from reverie.auth import create_key
    from reverie.http import create_app

    mem: Memory = make_memory()
    ids = _populate(mem, clock)
    _key, maya_token = create_key(mem.store, name="maya's bot", users=["maya"], now=mem.now())
    _key, admin_token = create_key(mem.store, name="ops", admin=True, now=mem.now())
    with TestClient(create_app(mem, dashboard=False)) as client:
        refused = client.delete(f"/v1/users/{USER}", headers={"Authorization": f"Bearer {maya_token}"})
        assert refused.status_code == 403  # a key of another user may not erase this one
        admin = {"Authorization": f"Bearer {admin_token}"}
        dry = client.delete(f"/v1/users/{USER}", params={"dry_run": True}, headers=admin)
        assert dry.status_code == 200, dry.text
        assert dry.json()["dry_run"] is True and dry.json()["memories"] >= 7
        assert client.get("/v1/memories", params={"user_id": USER}, headers=admin).json()["total"] > 0
        done = client.delete(f"/v1/users/{USER}", headers=admin)
        assert done.status_code == 200 and done.json()["memories"] == dry.json()["memories"]
    _check_erased(mem, store_target, ids, tmp_path / "ops-log.jsonl")


@pytest.mark.model
@pytest.mark.parametrize("dry", [True, False])
def test_forget_user_from_the_cli(tmp_path: Path, dry: bool) -> None:
    from typer.testing import CliRunner

    from reverie.cli import app

    db = tmp_path / "m.db"
    with Memory(db, config={"opslog": {"enabled": False}}) as mem:  # the CLI's own (default) embedder
        mem.add("Erin likes tea", user_id=USER, infer=False)
        mem.add("Bob likes coffee", user_id=OTHER, infer=False)
    args = ["forget-user", USER, "--db", str(db), "--json"] + (["--dry-run"] if dry else ["--yes"])
    res = CliRunner().invoke(app, args, env={"REVERIE_OPSLOG__ENABLED": "false"})
    assert res.exit_code == 0, res.output
    out = json.loads(res.output)
    assert out["memories"] == 1 and out["dry_run"] is dry
    left = sqlite3.connect(db).execute("SELECT count(*) FROM memories WHERE user_id = ?", (USER,)).fetchone()[0]
    assert left == (1 if dry else 0)
