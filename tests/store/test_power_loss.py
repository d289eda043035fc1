"""Power loss: what a store looks like after the power was cut while it was being written, and what it keeps.

SQLite (``storage.synchronous``, set in ``SQLiteCore._configure``): the database is in WAL mode with
``PRAGMA synchronous = NORMAL`` by default (``FULL`` when the setting says so). Under NORMAL a commit
appends its frames to the write-ahead log with ``write()`` and returns without an fsync; the log is
fsynced only when a checkpoint copies it into the database file (SQLite syncs the log, copies, then
syncs the file). So the guarantee reverie gives, and documents in the setting's description, is:

* a write that returned survives the crash or kill of any process (its frames are in the OS page cache);
* after a power loss or an OS crash the database opens and is consistent, every write committed before
  the last checkpoint that reached the disk is there, and of the writes committed since, a *prefix in
  commit order* survives (the log's frames carry cumulative checksums: SQLite replays frames up to the
  first torn or missing one and discards the rest; it can lose the last acknowledged writes, never
  keep a later one without an earlier one, never half of one).

The test takes crash images of a live database while another process writes: it pins a read snapshot
(so no checkpoint can restart the log under the copy: every state it copies is one a power cut could
leave), copies the database file and its ``-wal`` in either order and the ``-shm`` as copied, absent
or garbage (the shared-memory index is never synced; SQLite rebuilds it). Then it cuts the copied log
at an arbitrary byte offset, or zeroes a range inside it, as a disk that dropped unsynced pages would.
A cut is only made where a power loss could make it: at or after the frames a checkpoint already
synced (read from the live ``-shm``'s ``nBackfillAttempted``; 0 when no checkpoint ran in this
generation of the log). Every image must:

* pass ``PRAGMA integrity_check`` and the full-text index's check against its rows;
* hold the derived data of exactly its rows: the text index, the entity index, the vector change log
  (no memory row without its vector entry or the reverse, no row without an embedding);
* equal the writer's state after some prefix of its operations, that prefix covering every operation
  acknowledged before the copy began (the whole log) or before the last completed truncating
  checkpoint (a cut log);
* open with reverie's ``Memory``, find its memories by search, and take a new write.

During a dream cycle the same images must also keep every original: each is still there, held by at
most one summary, and a superseded one by exactly one summary that exists.

The HNSW graph saved beside the database (``<db>.ann``) is fsynced when written, so after a power cut it
can be newer than the database; it must not be trusted once new writes reuse the log positions and row
ids the database lost (it is rebuilt from the rows instead).

What copies cannot show is an fsync: an image is taken through the page cache, so ``FULL`` (every
acknowledged write survives a power loss) gives the same images as ``NORMAL`` here; the test checks the
PRAGMAs reverie sets and takes FULL's guarantee from SQLite's documentation.

PostgreSQL: ``pg_ctl stop -m immediate`` while a writer and a dreamer work (no shutdown checkpoint; the
restart replays the server's WAL). Every acknowledged write is there afterwards, nothing is consolidated
twice, and the store answers. (The existing fault tests kill reverie's processes and stop the server
cleanly; none kills the server itself.) What survives a real power loss there is the server's
``fsync``/``synchronous_commit``, reported by the test.
"""

from __future__ import annotations

import contextlib
import os
import random
import shutil
import signal
import sqlite3
import struct
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from reverie import Memory, SettableClock
from reverie.embed.testing import HashEmbedder
from reverie.model import RelationType
from reverie.store.base import MemoryFilter
from tests.dream.test_concurrency_mp import NOW, _seed, settings
from tests.store.test_postgres_faults import _pg_ctl, _start, private_pg

SRC = Path(__file__).resolve().parents[2] / "src"
ROOT = Path(__file__).resolve().parents[2]
DIM = 64
CONFIG: dict[str, Any] = {"opslog": {"enabled": False}}

__all__ = ["private_pg"]  # the fixture, imported for the PostgreSQL test

WRITER = r"""
import os, sys
from reverie import Memory
from reverie.embed.testing import HashEmbedder
db, limit, every = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
mem = Memory(db, embedder=HashEmbedder(64), config={"opslog": {"enabled": False}})
mine, n, step = [], 0, 0
while n < limit:
    if step % 3 == 0:
        texts = [f"note {n + j}: the ferry to island {(n + j) % 13} leaves at {(n + j) % 24}h" for j in range(8)]
        ids = [r.id for r in mem.add_many(texts, user_id="u", infer=False)]
    else:
        ids = [mem.add(f"note {n}: the harbour light {n % 7} turns on at {n % 24}h", user_id="u", infer=False).id]
    for mid in ids:
        print("add", mid, flush=True)   # acknowledged: the call returned
    n, mine = n + len(ids), mine + ids
    if step % every == every - 1:   # a hard delete: reverie checkpoints and truncates the log after it
        victim = mine.pop(len(mine) // 2)
        mem.forget(victim)
        print("forget", victim, flush=True)
        if os.path.getsize(db + "-wal") == 0:
            print("checkpoint", flush=True)   # everything before is in the database file, synced
    step += 1
print("done", flush=True)
mem.close()
"""

DREAMER = r"""
import sys
from reverie import Memory, SettableClock
from reverie.embed.testing import HashEmbedder
from tests.dream.test_concurrency_mp import NOW, settings
clock = SettableClock(NOW)
mem = Memory(sys.argv[1], config=settings(tick_every=0, name="dreamer"), clock=clock, embedder=HashEmbedder(64))
for run in range(int(sys.argv[2])):
    print("start", run, flush=True)
    mem.dream()
    clock.advance(seconds=1)
    print("end", run, flush=True)
mem.close()
"""


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(SRC), str(ROOT)])}


@dataclass
class Worker:
    """A process whose acknowledgements (stdout lines) are read as they come."""

    proc: subprocess.Popen[str]
    lines: list[list[str]] = field(default_factory=list)
    thread: threading.Thread | None = None

    @classmethod
    def start(cls, program: str, *args: str) -> Worker:
        proc = subprocess.Popen(
            [sys.executable, "-c", program, *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=_env(),
        )
        worker = cls(proc)
        worker.thread = threading.Thread(target=worker._read, daemon=True)
        worker.thread.start()
        return worker

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.append(line.split())

    def snapshot(self) -> int:
        return len(self.lines)  # the lines are appended in order: a prefix is a consistent view

    def finish(self, timeout: float) -> str:
        try:
            self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            raise
        assert self.thread is not None and self.proc.stderr is not None
        self.thread.join(timeout=10)
        return self.proc.stderr.read()

    def kill(self) -> None:
        if self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGKILL)
        self.proc.wait()
        assert self.thread is not None
        self.thread.join(timeout=10)
        for stream in (self.proc.stdout, self.proc.stderr):
            if stream is not None:
                stream.close()


# --- crash images -------------------------------------------------------------------------------------


PINNER = r"""
import sqlite3, sys
conn = sqlite3.connect(sys.argv[1], isolation_level=None, timeout=30)
for line in sys.stdin:
    if line.strip() == "pin":
        conn.execute("BEGIN")
        conn.execute("SELECT count(*) FROM memories").fetchone()
    else:
        conn.execute("COMMIT")
    print("ok", flush=True)
"""


class Pinner:
    """A reader in a process of its own that holds a read snapshot on request. (Not in the test process:
    POSIX locks belong to a process, and copying the live files there would close descriptors of them and
    so drop the snapshot's lock.) While it holds one, a checkpoint copies no frame past it and the log does
    not start over except from a state the database file holds whole."""

    def __init__(self, db: Path) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-c", PINNER, str(db)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )

    def _say(self, word: str) -> None:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(word + "\n")
        self.proc.stdin.flush()
        assert self.proc.stdout.readline().strip() == "ok"

    @contextlib.contextmanager
    def pinned(self) -> Iterator[None]:
        self._say("pin")
        try:
            yield
        finally:
            self._say("unpin")

    def close(self) -> None:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.close()
        self.proc.wait(timeout=30)
        self.proc.stdout.close()


def _checkpointed(shm: Path) -> tuple[bytes, int]:
    """The salts of the current log (in the WAL-index header) and the frames of it a checkpoint already
    synced (WalCkptInfo.nBackfillAttempted, after the two 48-byte copies of the header; native order)."""
    raw = shm.read_bytes()[:132] if shm.exists() else b""
    if len(raw) < 132:
        return b"", 0
    return raw[32:40], struct.unpack_from("=I", raw, 128)[0]


@dataclass
class Image:
    path: Path
    acked: int  # worker lines read before the copy began
    cut: bool  # the log lost its tail or a range of it
    how: str = ""  # how it was taken (for the failure messages)


def take_images(db: Path, dest: Path, worker: Worker, pinner: Pinner, rng: random.Random, tag: str) -> list[Image]:
    """One copy of the live database as a power cut could leave it, and the cut variants made from it."""
    acked = worker.snapshot()
    wal, shm = Path(f"{db}-wal"), Path(f"{db}-shm")
    base = dest / f"{tag}.db"
    with pinner.pinned():
        readings = [_checkpointed(shm)]
        wal_first = rng.random() < 0.5
        if wal_first:  # the log before or after the database file
            shutil.copyfile(wal, f"{base}-wal")
            shutil.copyfile(db, base)
        else:
            shutil.copyfile(db, base)
            shutil.copyfile(wal, f"{base}-wal")
        shutil.copyfile(shm, f"{base}-shm")
        readings.append(_checkpointed(shm))
    log = Path(f"{base}-wal").read_bytes()
    page = struct.unpack_from(">I", log, 8)[0] if len(log) >= 32 else 4096
    # the frames of this log a checkpoint synced: below them a power loss cannot cut it (the log may have
    # started over during the copy: a reading of another log's salts says nothing about this one)
    salts = log[16:24]
    mine = [frames for salt, frames in readings if salt == salts]
    synced = max(mine) if mine else (0 if len(log) < 32 else 1 << 30)
    floor = 32 + synced * (24 + page) if synced else 0
    how = f"{'log' if wal_first else 'database'} copied first, {synced} frames synced by a checkpoint"
    images = [Image(base, acked, cut=False, how=how)]
    for variant in ("tail", "hole"):
        if len(log) <= floor:
            continue
        cut = dest / f"{tag}-{variant}.db"
        shutil.copyfile(base, cut)
        at = rng.randint(floor, len(log) - 1)
        if variant == "tail":  # the unsynced tail pages never reached the disk
            data = log[:at]
        else:  # a range of unsynced pages never reached the disk, later ones did
            end = min(len(log), at + rng.randint(1, 3 * (24 + page)))
            data = log[:at] + bytes(end - at) + log[end:]
        Path(f"{cut}-wal").write_bytes(data)
        images.append(Image(cut, acked, cut=True, how=f"{how}, {variant} at byte {at} of {len(log)}"))
    for image in images[1:]:
        shutil.copyfile(f"{base}-shm", f"{image.path}-shm")
    for image in images:  # the shared-memory index is never synced: copied, absent or garbage
        shm_copy = Path(f"{image.path}-shm")
        choice = rng.choice(("keep", "drop", "garbage"))
        if choice == "drop":
            shm_copy.unlink()
        elif choice == "garbage":
            shm_copy.write_bytes(rng.randbytes(shm_copy.stat().st_size))
    return images


def check_database(path: Path) -> None:
    """SQLite's own checks, and the derived data agreeing with the rows (nothing half written)."""
    conn = sqlite3.connect(path, isolation_level=None)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        conn.execute("INSERT INTO memories_fts (memories_fts, rank) VALUES ('integrity-check', 1)")
        unembedded = "SELECT count(*) FROM memories WHERE embedding IS NULL AND embedding_codes IS NULL"
        assert conn.execute(unembedded).fetchone() == (0,)
        entities = (
            "SELECT DISTINCT je.value, m.rid FROM memories AS m, json_each(m.entities) AS je WHERE je.type = 'text'"
        )
        for query in (
            f"{entities} EXCEPT SELECT entity, rid FROM memory_entities",
            f"SELECT entity, rid FROM memory_entities EXCEPT {entities}",
        ):
            assert conn.execute(query).fetchall() == [], query
        assert conn.execute("SELECT value FROM meta WHERE key = 'vector_log_floor'").fetchone() is None
        latest = (
            "SELECT v.rid, v.memory_id, v.op FROM vector_changes AS v "
            "WHERE v.seq = (SELECT max(seq) FROM vector_changes WHERE rid = v.rid)"
        )
        rows = set(conn.execute("SELECT rid, id FROM memories").fetchall())
        logged = {(rid, mid) for rid, mid, op in conn.execute(latest) if op == "upsert"}
        assert rows == logged, (sorted(rows - logged)[:3], sorted(logged - rows)[:3])
    finally:
        conn.close()


def replay(lines: list[list[str]]) -> Iterator[frozenset[str]]:
    """The writer's memories after each prefix of its operations (0 operations first)."""
    state: set[str] = set()
    yield frozenset(state)
    for line in lines:
        if line[0] == "add":
            state.add(line[1])
        elif line[0] == "forget":
            state.discard(line[1])
        else:
            continue
        yield frozenset(state)


def operations(lines: list[list[str]]) -> int:
    return sum(1 for line in lines if line[0] in ("add", "forget"))


def check_writer_image(image: Image, lines: list[list[str]]) -> int:
    """The image holds the writer's state after some prefix of its operations; returns that prefix's length."""
    check_database(image.path)
    with Memory(image.path, embedder=HashEmbedder(DIM), config=CONFIG) as mem:
        present = {r.id: r.content for r in mem.list(user_id="u", limit=10_000)}
        states = list(replay(lines))
        prefix = [k for k, s in enumerate(states) if s == set(present)]
        assert prefix, f"{image.path.name}: not a state the writer was ever in ({len(present)} memories)"
        acked = lines[: image.acked]
        if image.cut:  # a cut log keeps what the last completed truncating checkpoint synced
            marks = [i for i, line in enumerate(acked) if line[0] == "checkpoint"]
            must = operations(acked[: marks[-1]]) if marks else 0
        else:
            must = operations(acked)
        assert prefix[-1] >= must, f"{image.path.name}: {must - prefix[-1]} acknowledged operations lost"
        for mid in random.sample(sorted(present), min(3, len(present))):
            hits = mem.search(present[mid], user_id="u", k=5)
            assert mid in [h.memory.id for h in hits], (image.path.name, present[mid])
        new = mem.add("written after the power came back", user_id="u", infer=False).id
        assert new in [h.memory.id for h in mem.search("written after the power came back", user_id="u", k=3)]
    check_database(image.path)
    return prefix[-1]


def images_while(
    db: Path, tmp_path: Path, program: str, args: list[str], *, cap: int, pause: float
) -> tuple[Worker, list[Image]]:
    """Crash images of ``db`` (up to ``cap`` copies, a random pause of up to ``pause`` s between them) taken
    from the worker's first acknowledgement until it exits; the worker must exit cleanly."""
    images_dir = tmp_path / "images"
    images_dir.mkdir()
    rng = random.Random(int(os.environ.get("REVERIE_POWER_SEED", "35")))
    worker = Worker.start(program, *args)
    pinner = Pinner(db)
    images: list[Image] = []
    try:
        deadline = time.monotonic() + 60
        while not worker.snapshot() and worker.proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.01)
        while worker.proc.poll() is None and len(images) < cap and time.monotonic() < deadline:
            images += take_images(db, images_dir, worker, pinner, rng, f"i{len(images)}")
            time.sleep(rng.uniform(pause / 4, pause))
        err = worker.finish(timeout=120)
    finally:
        worker.kill()
        pinner.close()
    assert worker.proc.returncode == 0, err[-3000:]
    return worker, images


@pytest.mark.parametrize(("setting", "expected"), [(None, 1), ("FULL", 2)])
def test_the_durability_the_images_assume(tmp_path: Path, setting: str | None, expected: int) -> None:
    """The guarantee stated above is the one of the connection reverie opens: WAL, synchronous NORMAL (1)
    by default, FULL (2) when ``storage.synchronous`` says so."""
    config = {**CONFIG, "storage": {"synchronous": setting}} if setting else CONFIG
    with Memory(tmp_path / "m.db", embedder=HashEmbedder(DIM), config=config) as mem:
        conn = mem.store._conn  # type: ignore[attr-defined]  # the PRAGMAs are per connection
        assert conn.execute("PRAGMA journal_mode").fetchone() == ("wal",)
        assert conn.execute("PRAGMA synchronous").fetchone() == (expected,)


def test_sqlite_crash_images_taken_while_a_writer_writes(tmp_path: Path) -> None:
    db = tmp_path / "live.db"
    with Memory(db, embedder=HashEmbedder(DIM), config=CONFIG) as mem:
        mem.add_many([f"base fact {i} about the old lighthouse" for i in range(10)], user_id="base", infer=False)
    writer, images = images_while(db, tmp_path, WRITER, [str(db), "600", "6"], cap=36, pause=0.15)
    lines = writer.lines
    assert lines[-1] == ["done"]
    assert sum(line[0] == "checkpoint" for line in lines) >= 3
    kept = [check_writer_image(image, lines) for image in images]
    whole = [k for image, k in zip(images, kept, strict=True) if not image.cut]
    assert len(whole) >= 5 and sum(image.cut for image in images) >= 5
    assert len(set(kept)) >= 5  # the images were taken at different points of the writing
    print(
        f"sqlite writer: {len(images)} crash images ({sum(i.cut for i in images)} with a cut log), 0 broken, "
        f"0 acknowledged writes lost; prefixes kept {min(kept)}..{max(kept)} of {operations(lines)} operations"
    )


# --- during a dream cycle -------------------------------------------------------------------------------


def check_dream_image(path: Path, seeded: list[str]) -> dict[str, int]:
    """Every original is still there, none is held by two summaries, a superseded one by exactly one."""
    check_database(path)
    with Memory(path, config=settings(tick_every=0), clock=SettableClock(NOW), embedder=HashEmbedder(DIM)) as mem:
        return consolidation_state(mem, seeded)


def consolidation_state(mem: Memory, seeded: list[str]) -> dict[str, int]:
    """How many originals a summary holds; fails when one is lost or held twice."""
    scope = MemoryFilter.everything(user_id="u", all_users=False)
    records = {r.id: r for batch in mem.store.scan(scope) for r in batch}
    lost = [i for i in seeded if i not in records]
    assert not lost, f"{len(lost)} originals lost"
    owners: dict[str, set[str]] = {}
    for rel in mem.store.scope_relations(scope, types=frozenset({RelationType.SUMMARIZES})):
        owners.setdefault(rel.dst_id, set()).add(rel.src_id)
    for rec in records.values():
        newer = records.get(rec.superseded_by or "")
        if rec.superseded_by is not None:
            assert newer is not None, f"{rec.id} superseded by a memory that does not exist"
        if newer is not None and newer.write_source == "dream":
            owners.setdefault(rec.id, set()).add(newer.id)
    twice = {m: s for m, s in owners.items() if len(s) > 1}
    assert not twice, f"consolidated twice: {list(twice.items())[:3]}"
    for m, held in owners.items():
        summary = records.get(next(iter(held)))
        assert summary is not None and summary.write_source == "dream", (m, held)
    hits = mem.search("User went hiking at Mount Rainier", user_id="u", k=3)
    assert hits
    return {"held": len(owners.keys() & set(seeded)), "free": len(set(seeded) - owners.keys())}


def test_sqlite_crash_images_taken_during_a_dream_cycle(tmp_path: Path) -> None:
    db = tmp_path / "dream.db"
    seeded = _seed(str(db))
    dreamer, images = images_while(db, tmp_path, DREAMER, [str(db), "2"], cap=50, pause=0.12)
    mid_cycle = [image for image in images if dreamer.lines[image.acked - 1][0] == "start"]
    assert mid_cycle, "no image was taken inside a dream cycle"
    states = [check_dream_image(image.path, seeded) for image in images]
    # a dream resumed on a crash image (the dead dreamer's claims expired) still consolidates nothing twice
    for image in (mid_cycle[len(mid_cycle) // 2], images[-1]):
        later = SettableClock(NOW + timedelta(hours=1))
        with Memory(image.path, config=settings(tick_every=0), clock=later, embedder=HashEmbedder(DIM)) as mem:
            mem.dream()
            final = consolidation_state(mem, seeded)
        check_database(image.path)
        assert final["held"] >= 5
    held = sorted({s["held"] for s in states})
    print(
        f"sqlite dream: {len(images)} crash images ({len(mid_cycle)} inside a cycle), originals held "
        f"by a summary {held[0]}..{held[-1]} of {len(seeded)}, 0 lost, 0 consolidated twice"
    )


# --- PostgreSQL: the server killed, not shut down --------------------------------------------------------

PG_WRITER = r"""
import sys
from reverie import Memory
from reverie.embed.testing import HashEmbedder
mem = Memory(sys.argv[1], embedder=HashEmbedder(64),
             config={"opslog": {"enabled": False}, "storage": {"pg_connect_timeout_s": 2.0}})
i = 0
while True:
    if i % 2:
        ids = [mem.add(f"note {i}: the ferry to island {i % 13} leaves at {i % 24}h", user_id="w", infer=False).id]
    else:
        ids = [r.id for r in mem.add_many([f"imported fact {i}-{j} about harbour {j % 7}" for j in range(10)],
                                          user_id="w", infer=False)]
    for mid in ids:
        print("add", mid, flush=True)
    i += 1
"""


def _pg_settings(url: str) -> dict[str, str]:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        rows = {name: conn.execute(f"SHOW {name}").fetchone() for name in ("fsync", "synchronous_commit")}
    return {name: str(row[0]) if row else "?" for name, row in rows.items()}


@pytest.mark.postgres
def test_postgres_server_killed_while_writing_and_dreaming(private_pg: tuple[Any, str]) -> None:
    server, url = private_pg
    durability = _pg_settings(url)
    seeded = _seed(url)
    writer = Worker.start(PG_WRITER, url)
    dreamer = Worker.start(DREAMER, url, "1")
    try:
        deadline = time.monotonic() + 60
        # kill the server once the writer acknowledged some writes and the dream cycle wrote some summaries
        # (while it still holds claims), or at the deadline
        while (writer.snapshot() < 60 or not consolidating(url)) and time.monotonic() < deadline:
            if dreamer.proc.poll() is not None:
                break
            time.sleep(0.02)
        _pg_ctl(server, "-m", "immediate", "stop")  # no shutdown checkpoint: crash recovery at the next start
    finally:
        writer.kill()  # every acknowledgement it printed was committed before the server went down
        dreamer.kill()
    acked = writer.snapshot()
    assert acked >= 60
    _start(server, url)
    try:
        ids = [line[1] for line in writer.lines[:acked] if line[0] == "add"]
        config = {**settings(tick_every=0), "storage": {"pg_connect_timeout_s": 10.0}}
        with Memory(url, config=config, clock=SettableClock(NOW), embedder=HashEmbedder(DIM)) as mem:
            stored = mem.peek_many(ids)
            lost = sorted(set(ids) - set(stored))
            assert not lost, f"{len(lost)} acknowledged writes lost"
            before = consolidation_state(mem, seeded)
            hits = mem.search("the ferry to island 3", user_id="w", k=5)
            assert hits and "ferry" in hits[0].memory.content
        later = SettableClock(NOW + timedelta(hours=1))  # the killed dreamer's claims expired
        with Memory(url, config=config, clock=later, embedder=HashEmbedder(DIM)) as mem:
            mem.dream()
            after = consolidation_state(mem, seeded)
            assert mem.add("after the crash", user_id="w", infer=False).id
        assert after["held"] >= 5
    finally:  # the restarted server is this test's: the fixture only stops the one it started
        _pg_ctl(server, "-m", "fast", "stop")
    print(
        f"postgres killed (-m immediate) at {len(ids)} acknowledged writes, server {durability}: 0 lost; "
        f"originals held by a summary {before['held']} then {after['held']} of {len(seeded)}, 0 twice"
    )


def consolidating(url: str) -> bool:
    """A dream cycle is under way (it holds claims) and has already written summaries."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        claims = conn.execute("SELECT count(*) FROM claims").fetchone()
        summaries = conn.execute("SELECT count(*) FROM memories WHERE write_source = 'dream'").fetchone()
    return bool(claims and claims[0] and summaries and summaries[0])


# --- SQLite: the saved vector index outlives the lost end of the log ------------------------------------


def test_a_saved_vector_index_newer_than_the_database_is_not_trusted(tmp_path: Path) -> None:
    """The HNSW graph and its manifest are fsynced when saved; the log under NORMAL is not. After a power
    cut the manifest can name log positions the database lost; once new writes reuse those positions (and
    the row ids of the lost memories), a graph loaded on the strength of its watermark alone would answer
    with the lost memories' vectors under the new memories' ids. The graph must be rebuilt instead."""
    db, image = tmp_path / "live.db", tmp_path / "image.db"
    config = {**CONFIG, "storage": {"exact_search_max": 50}}  # a small partition is served by a graph
    embed = HashEmbedder(DIM)
    with Memory(db, embedder=embed, config=config) as mem:
        mem.add_many([f"old fact {i} about the quarry number {i}" for i in range(60)], user_id="u", infer=False)
    shutil.copyfile(db, image)  # on disk since the checkpoint of the close: what a power cut keeps of the database
    with Memory(db, embedder=embed, config=config) as mem:
        lost = [f"lost note {i}: zebra crossing at avenue {i}" for i in range(20)]
        mem.add_many(lost, user_id="u", infer=False)  # in the log only, never synced
        assert mem.search("zebra crossing", user_id="u", k=3)  # builds the graph over 80 rows and saves it
        shutil.copytree(f"{db}.ann", f"{image}.ann")  # the saved graph, synced: it survives the power cut
    with Memory(image, embedder=embed, config=config) as mem:
        fresh = [f"fresh memo {i}: violin lesson on tuesday {i}" for i in range(25)]
        ids = [r.id for r in mem.add_many(fresh, user_id="u", infer=False)]  # before any search
        scope = MemoryFilter(user_id="u")
        found = [mem.store.vector_search(vector, scope, k=1) for vector in embed.embed(fresh)]
        assert [hits[0].id for hits in found] == ids, "new memories answered with other vectors"
        for vector in embed.embed(lost):
            best = mem.store.vector_search(vector, scope, k=1)[0]
            assert best.score < 0.9, "a lost memory's vector answers under another memory's id"
