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
