"""seed 001 ops log: async JSONL, rotation at a size limit, never blocking or failing."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

from reverie.clock import SettableClock
from reverie.opslog import OpsLog


def test_events_are_written_as_jsonl(tmp_path: Path) -> None:
    clock = SettableClock(datetime(2026, 3, 1, 12, tzinfo=UTC))
    log = OpsLog(tmp_path / "ops-log.jsonl", clock=clock)
    log.log("consolidation", input="cluster of 5", success=True, latencyMs=450)
    log.log("search", query="x", resultCount=3)
    log.close()
    lines = [json.loads(x) for x in (tmp_path / "ops-log.jsonl").read_text().splitlines()]
    assert [e["op"] for e in lines] == ["consolidation", "search"]
    assert lines[0]["ts"] == "2026-03-01T12:00:00+00:00" and lines[0]["latencyMs"] == 450
    assert log.written == 2 and log.dropped == 0


def test_rotation_to_dated_files(tmp_path: Path) -> None:
    clock = SettableClock(datetime(2026, 3, 1, tzinfo=UTC))
    path = tmp_path / "ops-log.jsonl"
    log = OpsLog(path, clock=clock, rotate_bytes=2048)
    for i in range(60):
        log.log("add", i=i, pad="x" * 40)
    log.close()
    rotated = sorted(p.name for p in tmp_path.glob("ops-log-2026-03-01*.jsonl"))
    assert "ops-log-2026-03-01.jsonl" in rotated and len(rotated) >= 2
    total = sum(len(p.read_text().splitlines()) for p in tmp_path.glob("ops-log*.jsonl"))
    assert total == 60
    assert all(p.stat().st_size <= 2048 for p in tmp_path.glob("ops-log*.jsonl"))


def test_never_fails_the_caller(tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("a file where a directory should be")
    log = OpsLog(blocker / "ops-log.jsonl", clock=SettableClock())
    log.log("add", x=1)  # the write fails in the background thread
    log.flush()
    assert log.errors == 1 and log.written == 0
    log.log("add", bad=object())  # unserialisable values are stringified, not raised
    log.close()


def test_full_queue_drops_instead_of_blocking(tmp_path: Path) -> None:
    log = OpsLog(None, clock=SettableClock())  # disabled log: a no-op
    log.log("add")
    assert not log.enabled
    small = OpsLog(tmp_path / "o.jsonl", clock=SettableClock(), queue_size=1)
    for _ in range(2000):
        small.log("burst")
    small.close()
    assert small.written + small.dropped == 2000


def test_every_entry_names_its_store(tmp_path: Path) -> None:
    """Stores that share one log (every SQLite file of a directory writes ops-log.jsonl beside itself) are
    told apart by the store each entry names."""
    from reverie import Memory
    from reverie.embed.testing import HashEmbedder

    for name in ("a.db", "b.db"):
        with Memory(tmp_path / name, embedder=HashEmbedder(64)) as mem:
            mem.add(f"a fact in {name}", user_id="u", infer=False)
    entries = [json.loads(x) for x in (tmp_path / "ops-log.jsonl").read_text().splitlines()]
    assert {e["store"] for e in entries} == {str(tmp_path / "a.db"), str(tmp_path / "b.db")}
    assert all(set(e) >= {"ts", "op", "store"} for e in entries)


def test_forgetting_rewrites_only_the_entries_that_name_it(tmp_path: Path) -> None:
    log = OpsLog(tmp_path / "ops-log.jsonl", clock=SettableClock(), store="s.db", rotate_bytes=1024)
    for i in range(30):
        log.log("write", action="CREATE", id=f"m{i:03d}", user_id="u", reason=f"novel fact {i} says 'v{i}'")
    log.log("write", action="SUPERSEDE", id="m100", user_id="v", reason="updates m007: 'v7' → 'w7'")
    assert log.forget(["m007"]) == 2  # its own entry and the one that quotes it
    assert log.forget(["m007"]) == 0  # a rewritten entry stays as it is
    log.close()
    lines = [json.loads(x) for p in log.files() for x in p.read_text().splitlines()]
    assert len(log.files()) > 1 and len(lines) == 31
    gone = [e for e in lines if e.get("redacted") == "forgotten"]
    assert sorted(e["id"] for e in gone) == ["m007", "m100"]
    assert all(set(e) == {"ts", "op", "store", "action", "id", "user_id", "redacted"} for e in gone)
    assert not any("v7" in json.dumps(e) for e in lines)
    assert sum("reason" in e for e in lines) == 29


def test_a_rewrite_loses_no_line_another_writer_appends(tmp_path: Path) -> None:
    """Two logs on one file (two processes on one store): one rewrites while the other appends."""
    import threading

    path = tmp_path / "ops-log.jsonl"
    writer = OpsLog(path, clock=SettableClock(), store="s.db")
    forgetter = OpsLog(path, clock=SettableClock(), store="s.db")

    def append() -> None:
        for i in range(3000):
            writer.log("write", id=f"w{i}", reason="text")
            if i % 50 == 0:
                writer.flush()  # written while the other log rewrites the file, not all at the end

    thread = threading.Thread(target=append)
    thread.start()
    for n in range(20):
        forgetter.log("write", id=f"f{n:03d}", reason="secret")
        forgetter.forget([f"f{n:03d}"])
    thread.join()
    writer.close()
    forgetter.close()
    lines = [json.loads(x) for x in path.read_text().splitlines()]
    assert sum(e["id"].startswith("w") for e in lines) == writer.written == 3000
    assert sum(e["id"].startswith("f") for e in lines) == 20
    assert all(e.get("redacted") == "forgotten" for e in lines if e["id"].startswith("f"))
