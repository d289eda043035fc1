"""``reverie backup`` of a live SQLite file (WAL mode) while a writer keeps adding, and the restore
drill: the copy passes ``PRAGMA integrity_check``, opens as a memory that searches, and holds every
write acknowledged before the backup began. PostgreSQL points to pg_dump."""

from __future__ import annotations

import json
import shutil
import sqlite3
import stat
import threading
import time
from pathlib import Path

import pytest

from reverie import Memory
from reverie.embed.testing import HashEmbedder
from reverie.errors import ConfigError, InvalidInputError
from reverie.store.sqlite import SQLiteStore

PRELOAD = 4000


def _open(path: Path) -> Memory:
    return Memory(path, embedder=HashEmbedder(64), config={"opslog": {"enabled": False}})


def test_backup_while_a_writer_adds_restores_every_acknowledged_write(tmp_path: Path) -> None:
    db = tmp_path / "live.db"
    with _open(db) as mem:
        assert isinstance(mem.store, SQLiteStore)
        assert mem.store._conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        mem.add_many(
            [f"preloaded memory {i} about topic {i % 97} with some words to fill the pages" for i in range(PRELOAD)],
            user_id="u",
            infer=False,
        )
        acked: list[str] = []
        lock = threading.Lock()
        stop = threading.Event()
        failures: list[BaseException] = []

        def writer() -> None:  # another Memory on the same file: as another process would
            try:
                with _open(db) as other:
                    i = 0
                    while not stop.is_set():
                        rid = other.add(f"live write {i} from the writer thread", user_id="w", infer=False).id
                        assert rid is not None
                        with lock:
                            acked.append(rid)  # acknowledged: add() returned, the write is committed
                        i += 1
            except BaseException as exc:  # pragma: no cover - reported below
                failures.append(exc)

        thread = threading.Thread(target=writer)
        thread.start()
        deadline = time.monotonic() + 60
        while len(acked) < 30 and time.monotonic() < deadline:
            time.sleep(0.01)
        with lock:
            before = list(acked)  # everything acknowledged before the backup starts
        dest = tmp_path / "backup.db"
        report = mem.backup(dest)
        with lock:
            during = len(acked) - len(before)
        time.sleep(0.2)
        stop.set()
        thread.join(timeout=60)
        assert not failures, failures
        assert len(acked) > len(before)  # the writer went on during and after the backup
        print(
            f"backup: {report['memories']} memories, {report['bytes']:,} bytes in {report['seconds']} s; "
            f"{len(before)} writes acknowledged before it, {during} during it"
        )

    assert report["integrity"] == "ok" and report["path"] == str(dest)
    assert stat.S_IMODE(dest.stat().st_mode) == 0o600
    assert not list(tmp_path.glob(".backup.db.partial*"))
    # the restore drill: the servers are stopped, the backup goes where the database was
    restored_path = tmp_path / "restored" / "live.db"
    restored_path.parent.mkdir()
    shutil.copy2(dest, restored_path)
    with sqlite3.connect(restored_path) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        n = conn.execute("SELECT count(*) FROM memories").fetchone()[0]
    assert n == report["memories"] >= PRELOAD + len(before)
    with _open(restored_path) as restored:
        found = restored.store.get(before)
        assert sorted(found) == sorted(before)  # every acknowledged write up to the backup's start
        assert len(restored.list(user_id="u", limit=10_000)) == PRELOAD
        hits = restored.search("preloaded memory 1234 about topic", user_id="u", k=3)
        assert any("preloaded memory 1234 " in h.memory.content for h in hits)
        restored.add("written after the restore", user_id="u", infer=False)  # a working store, not read-only


def test_backup_refuses_to_overwrite_and_postgres_points_to_pg_dump(tmp_path: Path, store_target: str) -> None:
    with Memory(store_target, embedder=HashEmbedder(64), config={"opslog": {"enabled": False}}) as mem:
        mem.add("something", user_id="u", infer=False)
        if mem.store.backend == "postgres":
            with pytest.raises(ConfigError, match="pg_dump"):
                mem.backup(tmp_path / "b.db")
            return
        existing = tmp_path / "taken.db"
        existing.write_bytes(b"keep me")
        with pytest.raises(InvalidInputError, match="never overwrites"):
            mem.backup(existing)
        assert existing.read_bytes() == b"keep me"
        with pytest.raises(InvalidInputError):
            mem.backup(store_target)


@pytest.mark.model
def test_backup_command(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from reverie.cli import app

    db = tmp_path / "cli.db"
    with Memory(db, config={"opslog": {"enabled": False}}) as mem:
        mem.add("Maya prefers window seats", user_id="maya", infer=False)
    res = CliRunner().invoke(
        app, ["backup", str(tmp_path / "copy.db"), "--db", str(db), "--json"], env={"REVERIE_OPSLOG__ENABLED": "false"}
    )
    assert res.exit_code == 0, res.output
    out = json.loads(res.output)
    assert out["memories"] == 1 and out["integrity"] == "ok"
    again = CliRunner().invoke(app, ["backup", str(tmp_path / "copy.db"), "--db", str(db)])
    assert again.exit_code == 1 and "never overwrites" in again.output
