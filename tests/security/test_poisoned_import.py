"""Poisoned imports: every way a record, a line or a file can be bad is rejected on its own — through
``restore``, ``POST /v1/import``, ``reverie import`` of JSONL, of a markdown tree and of a conversation —
the good records around it are stored, the error names the line or file, and afterwards every read,
search, dream and export of the store still works (on both backends)."""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from reverie import Memory
from reverie.model import MemoryRecord

from .corpus import NUL, SURR, deep_dict

T0 = "2025-03-01T09:00:00+00:00"


def good(n: int, user: str = "alice") -> dict[str, Any]:
    rec = MemoryRecord(content=f"Alice's fact number {n}: she waters the ferns on Sundays", user_id=user)
    return rec.to_dict()


#: (name, field, value): one poisoned field each, in an otherwise exported record
POISON: list[tuple[str, str, Any]] = [
    ("energy as text", "energy", "lots"),
    ("metadata as a list", "metadata", [1, 2]),
    ("infinite importance", "importance", math.inf),
    ("NaN importance", "importance", math.nan),
    ("NaN utility", "utility", math.nan),
    ("negative energy", "energy", -1.0),
    ("zero stability", "stability", 0),
    ("difficulty 99", "difficulty", 99),
    ("negative count", "access_count", -5),
    ("fractional count", "access_count", 1.5),
    ("pinned as text", "pinned", "yes"),
    ("unknown layer", "layer", "attic"),
    ("status as number", "status", 5),
    ("datetime overflow", "created_at", "0001-01-01T00:00:00+14:00"),
    ("bad date", "valid_until", "not a date"),
    ("year 9999", "valid_from", "9999-12-31T23:59:59-14:00"),
    ("empty content", "content", ""),
    ("NUL in content", "content", NUL),
    ("lone surrogate content", "content", SURR),
    ("lone surrogate user", "user_id", SURR),
    ("id as number", "id", 5),
    ("long id", "id", "x" * 300),
    ("NaN in embedding", "embedding", [math.nan] * 384),
    ("embedding as text", "embedding", "abc"),
    ("zero embedding", "embedding", [0.0] * 384),
    ("entities as text", "entities", "abc"),
    ("entity as number", "entities", [1]),
    ("channel as text", "importance_channels", {"a": "b"}),
    ("inputs not objects", "inputs", [1]),
    ("deep inputs", "inputs", [deep_dict(300)]),
    ("deep metadata", "metadata", deep_dict(600)),
    ("5 MB metadata", "metadata", {"blob": "x" * 5_000_000}),
    ("surrogate in metadata", "metadata", {"k": SURR}),
    ("unknown source", "source", "rumour"),
    ("valence 5", "emotion_valence", 5),
    ("version 0", "version", 0),
    ("superseded_by number", "superseded_by", 5),
    ("empty category", "category", ""),
    ("null layer", "layer", None),
    ("unknown field", "colour", "red"),
]


def poisoned(field: str, value: Any, n: int = 0) -> dict[str, Any]:
    rec = good(100 + n)
    rec[field] = value
    return rec


def _reads_still_work(mem: Memory, user: str = "alice") -> None:
    """What poisoned data used to break: search, get, list, stats, a dream, an export of every record."""
    from reverie.store.base import MemoryFilter

    hits = mem.search("when does Alice water the ferns?", user_id=user)
    assert hits
    mem.get(hits[0].memory.id)
    mem.list(user_id=user)
    mem.stats()
    mem.dream(user_id=user)
    for batch in mem.store.scan(MemoryFilter.everything()):
        for rec in batch:
            json.dumps(rec.to_dict(), allow_nan=False)


def test_restore_rejects_each_poisoned_record_alone(mem: Memory) -> None:
    before = mem.stats()["total"]
    records = []
    for i, (_, field, value) in enumerate(POISON):
        records += [good(2 * i), poisoned(field, value, i)]
    report = mem.restore(records)
    assert report["restored"] == len(POISON) and report["rejected"] == len(POISON), report["errors"][:5]
    assert [e["where"] for e in report["errors"]] == [f"record {2 * i + 2}" for i in range(len(POISON))]
    named = {
        name: e["error"]
        for (name, field, _), e in zip(POISON, report["errors"], strict=True)
        if field not in e["error"] and field != "colour"
    }
    assert not named, named  # every error names the bad field
    assert mem.stats()["total"] == before + len(POISON)
    _reads_still_work(mem)


def test_restore_of_records_objects_and_entries(mem: Memory) -> None:
    from reverie.io import Entry

    rec = MemoryRecord(content="Alice collects stamps", user_id="alice", importance=math.inf)
    report = mem.restore(
        [
            rec,
            Entry("file.jsonl:7", error="malformed JSON"),
            "not a record",
            MemoryRecord(content="Alice collects coins", user_id="alice"),
        ]
    )
    assert report["restored"] == 1 and report["rejected"] == 3
    assert [e["where"] for e in report["errors"]] == ["record 1", "file.jsonl:7", "record 3"]
    with pytest.raises(Exception, match="list"):
        mem.restore("a string")


def test_rest_import_rejects_poisoned_lines(mem: Memory) -> None:
    from fastapi.testclient import TestClient

    from reverie.auth import create_key
    from reverie.http import create_app

    _, alice = create_key(mem.store, name="alice", users=["alice"], now=mem.now())
    _, admin = create_key(mem.store, name="admin", admin=True, now=mem.now())
    lines = []
    for i, (_, field, value) in enumerate(POISON):
        lines += [json.dumps(good(2 * i), allow_nan=True), json.dumps(poisoned(field, value, i), allow_nan=True)]
    lines += ["{not json", "[1, 2]", json.dumps(good(999, user="bob"))]  # bob's record: outside alice's key
    body = "\n".join(lines).encode("utf-8", "surrogatepass")
    with TestClient(create_app(mem, dashboard=False, max_body=64 * 2**20)) as client:
        res = client.post(
            "/v1/import",
            content=body,
            headers={"Authorization": f"Bearer {alice}", "Content-Type": "application/x-ndjson"},
        )
        assert res.status_code == 200, res.text
        report = res.json()
        assert report["restored"] == len(POISON) and report["rejected"] == len(POISON) + 3
        wheres = [e["where"] for e in report["errors"]]
        assert wheres[:2] == ["line 2", "line 4"] and wheres[-1] == f"line {len(lines)}"
        assert "outside this credential's scope" in report["errors"][-1]["error"]
        auth = {"Authorization": f"Bearer {admin}"}
        assert client.post("/v1/search", json={"query": "ferns", "user_id": "alice"}, headers=auth).status_code == 200
        assert client.get("/v1/memories", params={"all_users": "true"}, headers=auth).status_code == 200
        export = client.get("/v1/export", headers=auth)
        assert export.status_code == 200 and len(export.text.splitlines()) == len(POISON)
    _reads_still_work(mem)


# the CLI importers (the real local model embeds what has no embedding) -------------------------------------

runner = CliRunner()


@pytest.fixture
def cli_db(store_target: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("REVERIE_OPSLOG__PATH", str(tmp_path / "ops.jsonl"))
    return store_target


def _import(*args: str) -> Any:
    from reverie.cli import app

    res = runner.invoke(app, ["import", *args])
    assert res.exception is None or isinstance(res.exception, SystemExit), repr(res.exception)
    return res


def _count(db: str) -> int:
    """Memories stored (read straight from the database: no model loaded)."""
    if db.startswith("postgresql://"):
        import psycopg

        with psycopg.connect(db) as conn:
            try:
                return int(conn.execute("SELECT count(*) FROM memories").fetchone()[0])
            except psycopg.errors.UndefinedTable:
                return 0
    import sqlite3

    if not Path(db).exists():
        return 0
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
        try:
            return int(conn.execute("SELECT count(*) FROM memories").fetchone()[0])
        except sqlite3.OperationalError:  # not created yet
            return 0


@pytest.mark.model
def test_cli_jsonl_import_rejects_poisoned_lines_and_keeps_the_rest(cli_db: str, tmp_path: Path) -> None:
    path = tmp_path / "poisoned.jsonl"
    lines = []
    for i, (_, field, value) in enumerate(POISON):
        rec = good(2 * i)
        rec.pop("embedding", None)
        lines += [json.dumps(rec), json.dumps(poisoned(field, value, i), allow_nan=True)]
    lines += [
        '{"content": "a plain line to add"}',
        '{"content": "' + "\\ud800" + '"}',
        "{broken",
        "",
        '{"content": "x", "user_id": "bob"}',
    ]
    path.write_bytes(("\n".join(lines) + "\n").encode("utf-8", "surrogatepass"))
    res = _import(str(path), "--db", cli_db, "--verbatim")
    assert res.exit_code == 1
    assert f"{len(POISON) + 2} record(s) rejected" in res.output.replace("\n", " "), res.output
    assert f"{path}:2" in res.output.replace("\n", "") and "more" in res.output  # (a long path wraps)
    assert _count(cli_db) == len(POISON) + 2  # the good records, the plain line and bob's line
    # running the same import again adds nothing (records keep their ids, lines get stable ids)
    again = _import(str(path), "--db", cli_db, "--verbatim")
    assert again.exit_code == 1 and _count(cli_db) == len(POISON) + 2
    with Memory(cli_db, config={"opslog": {"enabled": False}}) as mem:
        _reads_still_work(mem)


@pytest.mark.model
def test_cli_markdown_import_rejects_bad_files_alone(cli_db: str, tmp_path: Path) -> None:
    from reverie import io

    root = tmp_path / "tree"
    goods = [MemoryRecord.from_dict({k: v for k, v in good(i).items()}) for i in range(3)]
    io.export_markdown(goods, root)
    day = root / "facts" / "2025-03-03"
    day.mkdir(parents=True, exist_ok=True)
    for i, (_, field, value) in enumerate(POISON[:20]):
        meta = poisoned(field, value, i)
        content = meta.pop("content")
        front = yaml.safe_dump(meta, allow_unicode=False)
        (day / f"poison-{i:02d}.md").write_text(
            f"---\n{front}---\n{content if isinstance(content, str) else ''}", encoding="utf-8", errors="surrogatepass"
        )
    bomb = '---\na: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n' + "".join(
        f"{c}: &{c} [*{p},*{p},*{p},*{p},*{p},*{p},*{p},*{p},*{p}]\n"
        for p, c in zip("abcdefgh", "bcdefghi", strict=True)
    )
    (day / "bomb.md").write_text(bomb + "content: x\n---\nboom", encoding="utf-8")
    (day / "huge.md").write_text("---\nuser_id: alice\n---\n" + "x" * 200_000, encoding="utf-8")
    (day / "latin1.md").write_bytes(b"---\nuser_id: alice\n---\ncaf\xe9")
    os.mkfifo(day / "fifo.md")  # opening it would block forever
    (day / "dir.md").mkdir()
    res = _import(str(root), "--markdown", "--db", cli_db)
    assert res.exit_code == 1, res.output
    out = " ".join(res.output.split())
    for name in ("bomb.md", "huge.md", "latin1.md", "fifo.md", "dir.md", "poison-00.md"):
        assert name in out, (name, out[-3000:])
    assert "anchors and aliases" in out and "not a regular file" in out
    assert _count(cli_db) == 3
    with Memory(cli_db, config={"opslog": {"enabled": False}}) as mem:
        _reads_still_work(mem)


@pytest.mark.model
def test_cli_conversation_import_rejects_bad_turns_alone(cli_db: str, tmp_path: Path) -> None:
    conv = {
        "user_id": "alice",
        "sessions": [
            {
                "id": 1,
                "date": "2025-03-01T09:00:00+00:00",
                "turns": [
                    {"speaker": "Alice", "text": "I water the ferns on Sundays"},
                    {"speaker": "Alice", "text": "bad \x00 byte"},
                    {"speaker": "Alice", "text": SURR},
                    {"speaker": "Alice", "text": "y" * 150_000},
                    {"speaker": "Alice", "text": "I also repot the cactus in spring"},
                ],
            },
            {"id": 2, "date": "0001-01-01T00:00:00+14:00", "turns": [{"speaker": "Alice", "text": "lost in time"}]},
        ],
    }
    path = tmp_path / "conv.json"
    path.write_bytes(json.dumps(conv).encode())
    res = _import(str(path), "--db", cli_db, "--verbatim")
    assert res.exit_code == 1, res.output
    out = " ".join(res.output.split())
    assert "4 record(s) rejected" in out and "turn session-1:2" in out and "turn session-2:1" in out
    assert _count(cli_db) == 2
    assert _import(str(path), "--db", cli_db, "--verbatim").exit_code == 1 and _count(cli_db) == 2  # idempotent
    fifo = tmp_path / "conv-fifo.json"
    os.mkfifo(fifo)
    res = _import(str(fifo), "--db", cli_db)
    assert res.exit_code == 1 and "not a regular file" in " ".join(res.output.split())
    with Memory(cli_db, config={"opslog": {"enabled": False}}) as mem:
        _reads_still_work(mem)


@pytest.mark.model
def test_a_killed_verbatim_import_resumes_without_duplicates(cli_db: str, tmp_path: Path) -> None:
    """``reverie import --verbatim`` killed midway (SIGKILL), then run again: every line stored once."""
    import signal
    import subprocess
    import sys
    import time

    path = tmp_path / "lines.jsonl"
    n = 3000
    path.write_text(
        "".join(
            json.dumps({"content": f"line {i}: Alice noted detail {i}", "session_id": "s", "when": T0}) + "\n"
            for i in range(n)
        ),
        encoding="utf-8",
    )
    src = Path(__file__).resolve().parents[2] / "src"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(src), os.environ.get("PYTHONPATH", "")])}
    cmd = [sys.executable, "-m", "reverie.cli", "import", str(path), "--db", cli_db, "--verbatim", "-u", "alice"]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while _count(cli_db) < 300:  # killed once part of the file is in
        assert proc.poll() is None and time.monotonic() < deadline, "the import ended before it was killed"
        time.sleep(0.2)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    partial = _count(cli_db)
    assert 300 <= partial < n
    res = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stderr[-2000:]
    assert _count(cli_db) == n  # nothing twice, nothing missing
    print(f"verbatim import killed at {partial}/{n} lines; the re-run stored the other {n - partial}")
