"""The command line starts fast and loads the embedding model only where a command embeds a text; a server
never starts on a store that a mistyped ``--db`` would create (``--create`` asks for one).

The real figure of ``reverie --version`` / ``--help`` (target: under 0.3 s) is measured by
``bench/cli_startup.py``; the bound here is only a generous guard against loading the engine again."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from reverie.cli import app

runner = CliRunner()

#: runs the ``reverie`` command in a fresh interpreter, then says which heavy modules it imported
_PROBE = """
import sys
from reverie.cli import main
sys.argv = ["reverie", *sys.argv[1:]]
code = 0
try:
    main()
except SystemExit as exc:
    code = exc.code or 0
loaded = {m: m in sys.modules for m in ("onnxruntime", "numpy", "typer", "reverie.memory")}
sys.stderr.write("\\nPROBE " + repr((code, loaded)) + "\\n")
"""


def _probe(*args: str, env: dict[str, str] | None = None) -> tuple[int, dict[str, bool], str]:
    out = subprocess.run(
        [sys.executable, "-c", _PROBE, *args], capture_output=True, text=True, timeout=300, check=False, env=env
    )
    line = [x for x in out.stderr.splitlines() if x.startswith("PROBE ")]
    assert line, out.stderr
    code, loaded = eval(line[-1][len("PROBE ") :])  # the probe's own repr of ints, strs and bools
    return code, loaded, out.stdout


def test_version_answers_without_building_the_command_line() -> None:
    code, loaded, stdout = _probe("--version")
    assert code == 0 and stdout.startswith("reverie ")
    assert loaded == {"onnxruntime": False, "numpy": False, "typer": False, "reverie.memory": False}


def test_help_loads_neither_the_engine_nor_the_model() -> None:
    code, loaded, stdout = _probe("--help")
    assert code == 0 and "Commands" in stdout
    assert loaded == {"onnxruntime": False, "numpy": False, "typer": True, "reverie.memory": False}


def test_version_and_help_finish_well_within_a_generous_bound() -> None:
    """A guard, not the measurement (bench/cli_startup.py): loading the engine took 1.3 s here, the model 2.4 s."""
    for args in (["--version"], ["--help"]):
        best = min(_timed([sys.executable, "-m", "reverie", *args]) for _ in range(3))
        assert best < 1.5, (args, best)


def _timed(cmd: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, capture_output=True, check=True, timeout=60)
    return time.perf_counter() - start


@pytest.mark.model
def test_only_the_commands_that_embed_load_the_model(tmp_path: Path) -> None:
    db = str(tmp_path / "m.db")
    env = {**os.environ, "REVERIE_OPSLOG__PATH": str(tmp_path / "ops.jsonl")}
    added = runner.invoke(app, ["add", "Maya is allergic to penicillin", "--db", db, "-u", "maya", "--json"], env=env)
    assert added.exit_code == 0, added.output
    memory_id = json.loads(added.output)["id"]
    for args in (
        ["users"],
        ["list", "-u", "maya"],
        ["stats"],
        ["get", memory_id],
        ["history", memory_id],
        ["export", str(tmp_path / "out.jsonl")],
    ):
        code, loaded, stdout = _probe(*args, "--db", db, env=env)
        assert code == 0, (args, stdout)
        assert loaded["reverie.memory"] and not loaded["onnxruntime"], (args, loaded)
    code, loaded, stdout = _probe("search", "what is Maya allergic to?", "-u", "maya", "--db", db, env=env)
    assert code == 0 and "penicillin" in stdout
    assert loaded["onnxruntime"], "a search embeds its query: the model is loaded"


@pytest.mark.parametrize("command", ["serve", "mcp"])
def test_a_server_never_starts_on_a_store_that_does_not_exist(tmp_path: Path, command: str) -> None:
    typo = tmp_path / "memroy.db"
    out = runner.invoke(app, [command, "--db", str(typo)])
    assert out.exit_code == 1
    message = " ".join(out.output.split())
    assert "NotFoundError" in message and f"no memory database at {typo}" in message and "--create" in message
    assert list(tmp_path.iterdir()) == []


def test_a_server_asked_to_create_the_store_creates_it(tmp_path: Path) -> None:
    db = tmp_path / "new.db"
    out = subprocess.run(
        [sys.executable, "-m", "reverie", "mcp", "--db", str(db), "--create"],
        input="",
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={**os.environ, "REVERIE_OPSLOG__PATH": str(tmp_path / "ops.jsonl")},
    )
    assert out.returncode == 0, out.stderr  # stdin closed: the stdio server ends
    assert db.is_file()


def test_a_store_url_of_an_unknown_scheme_is_refused_on_the_command_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    for command in (["init"], ["add", "x"], ["stats"], ["serve"]):
        out = runner.invoke(app, [*command, "--db", "mysql://x/y"])
        assert out.exit_code == 1, out.output
        message = " ".join(out.output.split())
        assert "mysql:// is not a supported store" in message and "postgresql://" in message
    assert list(tmp_path.iterdir()) == []
