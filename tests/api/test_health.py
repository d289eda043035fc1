"""``Memory.health()`` and ``reverie doctor``: the store, the embedder, the LLM endpoint and the maintenance
schedule, each checked for real and reported as ok / warn / error with one line."""

from __future__ import annotations

import json
import socket
from collections.abc import Sequence
from datetime import timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from typer.testing import CliRunner

from reverie import InvalidInputError, Memory, SettableClock
from reverie.cli import app
from reverie.embed.testing import HashEmbedder
from reverie.health import CHECKS, Health

runner = CliRunner()


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


def _memory(tmp_path: Path, *, llm: Any = None, embedder: Any = None, clock: SettableClock | None = None) -> Memory:
    return Memory(
        tmp_path / "m.db",
        embedder=embedder or HashEmbedder(64),
        llm=llm,
        clock=clock,
        config={"opslog": {"path": str(tmp_path / "ops.jsonl")}, "llm": {"retries": 0}},
    )


def test_a_healthy_memory_reports_every_check_by_name(tmp_path: Path) -> None:
    clock = SettableClock()
    with _memory(tmp_path, clock=clock) as mem:
        empty = mem.health()
        names = [c.name for c in empty.checks]
        assert names == [name for name, _ in CHECKS] == ["store", "embedder", "llm", "schedule", "mirror"]
        assert empty.status == "ok" and empty.ok
        assert "nothing to maintain yet" in empty["schedule"].message
        mem.add("Maya is allergic to penicillin", user_id="maya")
        mem.add("Leo plays the cello", user_id="leo")
        report = mem.health()
        schema = mem.info().schema_version
    assert report["store"].status == "ok"
    assert report["store"].details == {"backend": "sqlite", "schema_version": schema, "memories": 2, "users": 2}
    assert report["embedder"].status == "ok" and "(64-d)" in report["embedder"].message
    assert report["llm"].status == "ok" and "none configured" in report["llm"].message
    assert report["schedule"].status == "warn" and "never ran" in report["schedule"].message
    assert report["mirror"].status == "ok" and "mirror.dir is not set" in report["mirror"].message
    assert report.status == "warn" and report.ok
    assert json.loads(json.dumps(report.to_dict()))["checks"][0]["name"] == "store"


def test_the_schedule_check_follows_the_dream_cycle(tmp_path: Path) -> None:
    clock = SettableClock()
    with _memory(tmp_path, clock=clock) as mem:
        mem.add("Maya is allergic to penicillin", user_id="maya")
        mem.dream()
        fresh = mem.health(checks=["schedule"])["schedule"]
        assert fresh.status == "ok" and "last ran" in fresh.message
        clock.advance(timedelta(days=3))  # the cycle runs daily: two missed cycles are overdue
        late = mem.health(checks=["schedule"])["schedule"]
    assert late.status == "warn" and "overdue" in late.message and "3 d ago" in late.message


def test_an_unreachable_llm_is_an_error_that_names_the_endpoint(tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{_closed_port()}/v1"
    with _memory(tmp_path, llm=url) as mem:
        report = mem.health(checks=["llm"])
    check = report["llm"]
    assert check.status == "error" and report.status == "error" and not report.ok
    assert url in check.message and "Connection refused" in check.message and "fall back to rules" in check.message


def test_a_reachable_llm_is_ok(tmp_path: Path, chat_server: Any) -> None:
    chat_server.script = lambda req: (200, json.dumps({"ok": True}), 0.0)
    with _memory(tmp_path, llm=chat_server.url) as mem:
        check = mem.health(checks=["llm"])["llm"]
    assert check.status == "ok" and "answers" in check.message
    assert chat_server.requests and chat_server.requests[-1]["response_format"] == {"type": "json_object"}


class _ShortVectors:
    """An embedder that breaks the contract: its vectors are not unit length."""

    name, dim, profile = "short-vectors", 8, "api"

    def embed(self, texts: Sequence[str]) -> Any:
        return np.full((len(texts), self.dim), 0.1, dtype=np.float32)


class _Failing:
    """An embedder whose model cannot run."""

    name, dim, profile = "failing", 8, "api"

    def embed(self, texts: Sequence[str]) -> Any:
        from reverie.errors import EmbeddingError

        raise EmbeddingError("the model file is damaged")


def test_a_broken_embedder_is_an_error(tmp_path: Path) -> None:
    with _memory(tmp_path / "a", embedder=_ShortVectors()) as mem:
        check = mem.health(checks=["embedder"])["embedder"]
    assert check.status == "error" and "not a unit vector" in check.message
    with _memory(tmp_path / "b", embedder=_Failing()) as mem:
        check = mem.health(checks=["embedder"])["embedder"]
    assert check.status == "error" and check.message == "EmbeddingError: the model file is damaged"


def test_unknown_check_names_are_refused(tmp_path: Path) -> None:
    with _memory(tmp_path) as mem, pytest.raises(InvalidInputError, match="unknown health checks"):
        mem.health(checks=["stor"])


def test_the_worst_check_decides_the_status() -> None:
    from reverie.health import Check

    assert Health((Check("a", "ok", ""), Check("b", "warn", ""))).status == "warn"
    assert Health((Check("a", "error", ""), Check("b", "warn", ""))).status == "error"
    assert Health(()).status == "ok"


def test_reverie_doctor_prints_one_line_per_check_and_fails_on_an_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("REVERIE_OPSLOG__PATH", str(tmp_path / "ops.jsonl"))
    monkeypatch.setenv("REVERIE_EMBEDDING__PROVIDER", "openai")  # an embedding endpoint that is down
    monkeypatch.setenv("REVERIE_EMBEDDING__BASE_URL", f"http://127.0.0.1:{_closed_port()}/v1")
    monkeypatch.setenv("REVERIE_EMBEDDING__MODEL", "m")
    monkeypatch.setenv("REVERIE_EMBEDDING__DIMENSIONS", "8")
    db = str(tmp_path / "m.db")
    assert runner.invoke(app, ["init", "--db", db]).exit_code == 0
    out = runner.invoke(app, ["doctor", "--db", db], env={"COLUMNS": "400"})
    assert out.exit_code == 1, out.output
    lines = out.output.splitlines()
    assert lines[0] == f"reverie doctor: {db}"
    assert [line.split()[:2] for line in lines[1:6]] == [
        ["ok", "store"],
        ["error", "embedder"],
        ["ok", "llm"],
        ["ok", "schedule"],
        ["ok", "mirror"],
    ]
    assert lines[-1] == "1 error(s), 0 warning(s)"
    doc = json.loads(runner.invoke(app, ["doctor", "--db", db, "--json", "--no-llm"]).output)
    assert [c["name"] for c in doc["checks"]] == ["store", "embedder", "schedule", "mirror"] and doc[
        "status"
    ] == "error"
    missing = runner.invoke(app, ["doctor", "--db", str(tmp_path / "typo.db")], env={"COLUMNS": "400"})
    assert missing.exit_code == 1 and "error  store  NotFoundError: no memory database" in missing.output
    assert not (tmp_path / "typo.db").exists()
