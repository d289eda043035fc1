"""``reverie mcp`` and ``reverie serve`` on the command line."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from reverie.cli import app

runner = CliRunner()


def test_help_of_the_interface_commands() -> None:
    for cmd, words in (
        ("mcp", ("--http", "--user", "--agent", "--session", "--port")),
        ("serve", ("--host", "--port", "REVERIE_API_TOKEN")),
    ):
        res = runner.invoke(app, [cmd, "--help"])
        assert res.exit_code == 0, res.output
        for word in words:
            assert word in res.output, (cmd, word)


@pytest.mark.model
def test_serve_refuses_a_public_bind_without_a_token(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REVERIE_OPSLOG__PATH", str(tmp_path / "ops.jsonl"))
    monkeypatch.delenv("REVERIE_API_TOKEN", raising=False)
    res = runner.invoke(app, ["serve", "--db", str(tmp_path / "m.db"), "--create", "--host", "0.0.0.0", "--port", "0"])
    assert res.exit_code == 1
    assert "ConfigError" in res.output and "REVERIE_API_TOKEN" in res.output
    monkeypatch.setenv("REVERIE_API_TOKEN", "short")
    res = runner.invoke(app, ["serve", "--db", str(tmp_path / "m.db"), "--create", "--host", "0.0.0.0", "--port", "0"])
    assert res.exit_code == 1 and "at least 16" in res.output
