"""Nothing degrades in silence: an LLM that cannot be reached, a circuit that opens, a dream step that cannot
run and a search for a user with no memories are said on the standard ``reverie`` logger (and shown only when
the application configures logging); a write decided by rules instead of the LLM says so in its reason; a
store URL of an unknown scheme is an error, never a new file."""

from __future__ import annotations

import logging
import socket
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from reverie import InvalidInputError, Memory
from reverie.embed.testing import HashEmbedder
from reverie.results import Action


def _closed_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


def _records(caplog: pytest.LogCaptureFixture, level: int) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.name.startswith("reverie") and r.levelno == level]


def _memory(tmp_path: Path, client: Any, **config: Any) -> Memory:
    return Memory(
        tmp_path / "m.db",
        embedder=HashEmbedder(64),
        llm=client,
        config={"opslog": {"path": str(tmp_path / "ops.jsonl")}, **config},
    )


def test_an_unreachable_llm_is_logged_and_the_result_says_rules_decided(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="reverie")
    url = f"http://127.0.0.1:{_closed_port()}/v1"
    with _memory(tmp_path, url) as mem:
        first = mem.add("Maya moved to Lisbon in March", user_id="maya")
        second = mem.add("Maya's sister is called Ana", user_id="maya")
    assert first.action is Action.CREATE and second.action is Action.CREATE  # nothing is lost
    for result in (first, second):
        assert "rules decided" in result.reason and "the LLM gave no valid answer" in result.reason, result.reason
    warnings = [r.getMessage() for r in _records(caplog, logging.WARNING)]
    failed = [m for m in warnings if "failed" in m and "rules decide instead" in m]
    assert failed and url in failed[0], warnings
    assert len(failed) == 1, "only the first failure of a run of failures is a warning"
    opened = [m for m in warnings if "circuit" in m and "opened after 3 consecutive failures" in m]
    assert len(opened) == 1, warnings
    debug = [r.getMessage() for r in _records(caplog, logging.DEBUG)]
    assert any("circuit" in m and "is open" in m for m in debug), "the calls the open circuit refused"
    info = [r.getMessage() for r in _records(caplog, logging.INFO)]
    assert any("rules decided (no valid LLM answer)" in m for m in info)


def test_an_llm_that_answers_again_is_noted(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, chat_server: Any, script_by_prompt: Any
) -> None:
    caplog.set_level(logging.DEBUG, logger="reverie")
    chat_server.script = lambda req: (500, "{}", 0.0)
    with _memory(tmp_path, chat_server.url, llm={"retries": 0, "breaker_failures": 50}) as mem:
        down = mem.add("Maya moved to Lisbon in March", user_id="maya")
        chat_server.script = script_by_prompt({}, default={})
        mem.add("Maya's sister is called Ana", user_id="maya")
    assert "rules decided" in down.reason
    info = [r.getMessage() for r in _records(caplog, logging.INFO)]
    assert any("answers again after" in m for m in info), info


def test_without_logging_configured_nothing_is_printed(tmp_path: Path) -> None:
    """A library prints nothing by itself: the degradations go to the ``reverie`` logger, whose records the
    application shows only when it configures logging."""
    script = textwrap.dedent(
        f"""
        from reverie import Memory
        from reverie.embed.testing import HashEmbedder
        mem = Memory({str(tmp_path / "m.db")!r}, embedder=HashEmbedder(64), llm="http://127.0.0.1:{_closed_port()}/v1",
                     config={{"opslog": {{"enabled": False}}}})
        result = mem.add("Maya moved to Lisbon in March", user_id="maya")
        assert "rules decided" in result.reason, result.reason
        mem.dream()
        assert mem.search("where does Maya live?", user_id="nobody") == []
        mem.close()
        """
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=False)
    assert out.returncode == 0, out.stderr
    assert out.stdout == "" and out.stderr == ""
    configured = "import logging; logging.basicConfig(level=logging.WARNING)\n" + script
    out = subprocess.run([sys.executable, "-c", configured], capture_output=True, text=True, timeout=120, check=False)
    assert out.returncode == 0, out.stderr
    assert "WARNING:reverie.llm:" in out.stderr and "rules decide instead" in out.stderr, out.stderr


def test_a_dream_step_that_cannot_run_is_logged(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="reverie")
    with _memory(tmp_path, None) as mem:
        mem.add("Maya moved to Lisbon in March", user_id="maya")
        report = mem.dream(steps=["themes"])
    skipped = report["steps"][0]["details"]["skipped"]
    messages = [r.getMessage() for r in _records(caplog, logging.INFO)]
    assert f"dream step 'themes' skipped: {skipped}" in messages, messages


def test_a_search_for_a_user_without_memories_is_empty_and_logged_at_debug(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with _memory(tmp_path, None) as mem:
        mem.add("Maya moved to Lisbon in March", user_id="maya")
        caplog.set_level(logging.DEBUG, logger="reverie")
        assert mem.search("where does Maya live?", user_id="mya") == []
        hint = [r.getMessage() for r in _records(caplog, logging.DEBUG) if "no memories are stored" in r.getMessage()]
        assert hint == ["search: no memories are stored for user_id 'mya'; users with memories (count): maya (1)"]
        caplog.clear()
        mem.search("zzzz qqqq", user_id="maya")  # a user with memories and no match: nothing to say
        assert not [r for r in caplog.records if "no memories are stored" in r.getMessage()]


def test_a_store_url_of_an_unknown_scheme_is_an_error_naming_the_supported_ones(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    for url in ("mysql://x/y", "sqlite+pysqlite://x/y.db", "redis://localhost:6379"):
        with pytest.raises(InvalidInputError) as info:
            Memory(url, embedder=HashEmbedder(64))
        message = str(info.value)
        assert "is not a supported store" in message and "SQLite file path" in message
        assert "postgresql://" in message
    assert list(tmp_path.iterdir()) == []  # nothing was created
