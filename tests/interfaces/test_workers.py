"""``reverie serve --workers 2`` on PostgreSQL: two server processes on one socket, each with its own
Memory, answer concurrent writes and reads of one memory; on SQLite the option is refused with a
clear error. Uses the real command line (and so the default local embedding model)."""

from __future__ import annotations

import os
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest
from typer.testing import CliRunner

from .helpers import ServerProcess, child_env

pytestmark = [pytest.mark.model]


def _children(pid: int) -> list[str]:
    """Command lines of the live child processes of ``pid`` (Linux /proc)."""
    out = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            ppid = int(stat.rsplit(")", 1)[1].split()[1])
            if ppid == pid:
                out.append((entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace"))
        except (OSError, ValueError, IndexError):
            continue
    return out


@pytest.mark.postgres
def test_two_workers_serve_one_postgres_memory(pg_url: str, tmp_path: Path) -> None:
    if not Path("/proc/self/stat").exists():
        pytest.skip("needs /proc to see the worker processes")
    env = child_env(REVERIE_OPSLOG__PATH=str(tmp_path / "ops.jsonl"))
    server = ServerProcess(
        ["-m", "reverie.cli", "serve", "--db", pg_url, "--port", "0", "--workers", "2", "--no-access-log"], env
    )
    try:
        deadline = time.monotonic() + 60
        workers: list[str] = []
        while time.monotonic() < deadline and len(workers) < 2:
            workers = [c for c in _children(server.proc.pid) if "spawn_main" in c]
            time.sleep(0.1)
        assert len(workers) == 2, _children(server.proc.pid)
        with httpx.Client(base_url=server.url, timeout=60) as http:
            assert http.get("/readyz").status_code == 200

            def add(i: int) -> int:
                res = http.post(
                    "/v1/memories",
                    json={"content": f"worker test note {i} about the harbour", "user_id": "team", "infer": False},
                )
                return res.status_code

            with ThreadPoolExecutor(max_workers=8) as pool:
                codes = list(pool.map(add, range(24)))
            assert codes == [201] * 24
            listed = http.get("/v1/memories", params={"user_id": "team", "limit": 100}).json()
            assert listed["total"] == 24
            hits = http.post("/v1/search", json={"query": "harbour note 7", "user_id": "team", "k": 5}).json()
            assert any(h["memory"]["content"] == "worker test note 7 about the harbour" for h in hits["results"])
            from prometheus_client.parser import text_string_to_metric_families

            for _ in range(4):  # whichever worker answers, it counts what both did
                fams = {f.name: f for f in text_string_to_metric_families(http.get("/metrics").text)}
                adds = sum(s.value for s in fams["reverie_adds"].samples if s.name == "reverie_adds_total")
                searches = sum(s.value for s in fams["reverie_searches"].samples if s.name == "reverie_searches_total")
                assert (adds, searches) == (24, 1)
    finally:
        server.stop()


def test_workers_on_sqlite_are_refused(tmp_path: Path) -> None:
    from reverie.cli import app

    res = CliRunner().invoke(
        app,
        ["serve", "--db", str(tmp_path / "w.db"), "--create", "--workers", "2"],
        env={**os.environ, "REVERIE_OPSLOG__ENABLED": "false"},
    )
    assert res.exit_code == 1
    assert "--workers 2 needs PostgreSQL" in res.output
