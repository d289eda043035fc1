"""The ``reverie`` command under the bad-input corpus (``cli_corpus.py``, 400+ command lines), run in process:
every case ends with a one-line error and exit code 1 or 2 (or exit 0 where the corpus documents why), never
a traceback, and no row of the store changes. Stored terminal control sequences are shown escaped.

The command embeds through a loopback OpenAI-compatible endpoint serving the deterministic test vectors
(``tests/support/embed_server.py``), so no local model is loaded; the parser is built once and each case
runs it as ``reverie`` would (``main`` with the arguments, in an isolated environment)."""

from __future__ import annotations

import json
import re
import sys
import traceback
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import typer.main
from typer.testing import CliRunner

from reverie import Memory
from reverie.cli import app
from tests.support.embed_server import EmbeddingServer, cli_environment

from .cli_corpus import CLI_CASES, UNDECODABLE, CliCase
from .corpus import row_counts

COMMAND = typer.main.get_command(app)


@dataclass
class Ran:
    code: int
    output: str
    crash: str | None


def run(args: list[str], *, env: dict[str, str] | None = None, stdin: str | bytes | None = None) -> Ran:
    """``reverie ARGS`` in process: its exit code, everything it printed, and the traceback of an exception
    that escaped it (what a user would see), if any."""
    runner = CliRunner()
    crash = None
    code = 0
    with runner.isolation(input=stdin, env=env) as (_out, _err, output):
        try:
            COMMAND.main(args=args, prog_name="reverie", standalone_mode=True)
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 1
        except BaseException:  # the point: nothing may escape
            crash = traceback.format_exc()
            code = -1
        sys.stdout.flush()  # what the process would write out when it exits
        sys.stderr.flush()
        text = output.getvalue().decode("utf-8", "replace")
    return Ran(code, text, crash)


@pytest.fixture(scope="module")
def embed_server() -> Iterator[EmbeddingServer]:
    server = EmbeddingServer()
    yield server
    server.close()


@pytest.fixture
def cli_env(embed_server: EmbeddingServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    certs = tmp_path / "no-certificates"
    certs.mkdir()
    env = cli_environment(embed_server, empty_dir=str(certs), REVERIE_OPSLOG__PATH=str(tmp_path / "ops-log.jsonl"))
    monkeypatch.delenv("REVERIE_CONFIG", raising=False)
    monkeypatch.delenv("REVERIE_TARGET", raising=False)
    monkeypatch.delenv("REVERIE_API_TOKEN", raising=False)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    return env


def _scratch(tmp: Path) -> None:
    """The files the corpus names under ``$TMP``."""
    (tmp / "existing.txt").write_text("already here\n")
    (tmp / "empty-dir").mkdir()
    (tmp / "garbage.jsonl").write_bytes(b"\xff\xfe not json\n{broken\n")
    (tmp / "bad.toml").write_text("[limits\nmax_content_bytes = \n")
    (tmp / "binary.toml").write_bytes(b"\x00\xff\xfe\x80")
    (tmp / "wrong-values.toml").write_text("[limits]\nmax_content_bytes = 'lots'\n[read]\nmmr = 'maybe'\n")
    lines = [
        json.dumps({"content": "an imported fact", "user_id": "alice", "energy": "lots"}),
        "{not json",
        json.dumps({"content": "", "user_id": "alice"}),
        "[1, 2]",
    ]
    (tmp / "poisoned.jsonl").write_text("\n".join(lines) + "\n")


def _resolved(case: CliCase, db: str, mid: str, tmp: Path) -> tuple[list[str], dict[str, str]]:
    def sub(value: str) -> str:
        return value.replace("$DB", db).replace("$ID", mid).replace("$TMP", str(tmp))

    return [sub(a) for a in case.args], {k: sub(v) for k, v in case.env.items()}


def test_the_cli_corpus_is_large() -> None:
    assert len(CLI_CASES) >= 200
    assert len({c.name for c in CLI_CASES}) == len(CLI_CASES)


def test_every_bad_command_line_gets_a_one_line_error_and_changes_nothing(
    cli_env: dict[str, str], tmp_path: Path
) -> None:
    db = str(tmp_path / "memory.db")
    assert run(["add", "Alice keeps her bike in the hallway", "--db", db, "-u", "alice", "--verbatim"]).code == 0
    assert run(["observe", "I am learning the cello", "--db", db, "-u", "alice", "-s", "s1"]).code == 0
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    _scratch(scratch)
    with Memory(db) as mem:
        mid = mem.list(user_id="alice")[0].id
        before = row_counts(mem)
    problems: list[str] = []
    codes: dict[int, int] = {}
    for case in CLI_CASES:
        args, env = _resolved(case, db, mid, scratch)
        ran = run(args, env=env, stdin=case.stdin)
        codes[ran.code] = codes.get(ran.code, 0) + 1
        if ran.crash is not None:
            problems.append(f"{case.name}: traceback\n{ran.crash[-1500:]}")
        elif "Traceback" in ran.output:
            problems.append(f"{case.name}: printed a traceback\n{ran.output[-1500:]}")
        elif case.accepted is not None:
            if ran.code != 0:
                problems.append(f"{case.name}: documented as accepted ({case.accepted}), got {ran.code}")
        elif ran.code not in (1, 2):
            problems.append(f"{case.name}: exit {ran.code}, expected an error: {ran.output[-300:]!r}")
        elif not re.search(r"^(error|Error|Usage|Aborted|rejected)", ran.output, re.MULTILINE):
            problems.append(f"{case.name}: exit {ran.code} without an error line: {ran.output[-300:]!r}")
    with Memory(db) as mem:
        after = row_counts(mem)
    assert not problems, "\n".join(p[:600] for p in problems)
    assert after == before
    print(f"cli: {len(CLI_CASES)} bad command lines, exit codes {dict(sorted(codes.items()))}, 0 tracebacks")


HOSTILE = {
    "clear screen": "\x1b[2J\x1b[H",
    "window title": "\x1b]0;you have been pwned\x07",
    "hyperlink": "\x1b]8;;https://evil.example/\x1b\\click\x1b]8;;\x1b\\",
    "8-bit CSI": "\x9b31m",
    "bidi override": "\u202eevil\u202c",
    "backspace": "abc\x08\x08\x08xyz",
    "carriage return": "safe text\rEVIL",
}
RAW = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def test_stored_terminal_control_sequences_are_shown_escaped(cli_env: dict[str, str], tmp_path: Path) -> None:
    """A memory written through the API cannot clear the screen, set the title or inject links when the
    command shows it: ``list``, ``search``, ``context``, ``users``, ``get``, ``history`` and their JSON."""
    db = str(tmp_path / "memory.db")
    user = "mallory\x1b[2J"  # a user id is stored text too
    with Memory(db) as mem:
        ids = [
            mem.add(f"Mallory's note about the {name}: {seq} end", user_id=user, infer=False).id
            for name, seq in HOSTILE.items()
        ]
    commands = [
        ["list", "--db", db, "-u", user, "--limit", "20"],
        ["search", "Mallory's note about the", "--db", db, "-u", user, "-k", "20", "--explain"],
        ["context", "Mallory's note", "--db", db, "-u", user],
        ["users", "--db", db],
        ["history", ids[0], "--db", db],
        *(["get", i, "--db", db] for i in ids),
        ["list", "--db", db, "-u", user, "--json"],
        ["get", ids[3], "--db", db, "--json"],
        ["export", "-", "--db", db],
    ]
    for args in commands:
        ran = run(args)
        assert ran.code == 0 and ran.crash is None, (args, ran.output[-500:], ran.crash)
        found = RAW.findall(ran.output)
        assert not found, (args[0], sorted(set(found)), ran.output[:500])
    shown = run(["get", ids[0], "--db", db]).output
    assert "\\x1b[2J" in shown  # the sequence is there, readable, not acted on
    got = run(["get", ids[3], "--db", db, "--json"])
    assert got.code == 0 and got.output.startswith("{"), repr(got.output[:300])
    data = json.loads(got.output)
    assert "\x9b31m" in data["content"]  # JSON escapes it (\u009b) and loses nothing


def test_no_traceback_for_the_red_team_command_lines(cli_env: dict[str, str], tmp_path: Path) -> None:
    """The six tracebacks the red team saw, and a missing REVERIE_CONFIG file, named one by one."""
    db = str(tmp_path / "memory.db")
    assert run(["init", "--db", db]).code == 0
    bad_toml = tmp_path / "bad.toml"
    bad_toml.write_text("[limits\n")
    lines: dict[str, tuple[list[str], dict[str, str], str]] = {
        "JSON 60,000 deep": (["add", "x y", "--db", db, "-m", '{"k":' * 60_000 + "1" + "}" * 60_000], {}, "deep"),
        "4,400-digit integer": (["add", "x y", "--db", db, "-m", '{"n": ' + "9" * 4400 + "}"], {}, "digits"),
        "export /proc/self": (["export", "/proc/self", "--markdown", "--db", db], {}, "error"),
        "serve --port -1": (["serve", "--db", db, "--port", "-1"], {}, "--port"),
        "serve --port 70000": (["serve", "--db", db, "--port", "70000"], {}, "--port"),
        "invalid TOML": (["list", "--db", db], {"REVERIE_CONFIG": str(bad_toml)}, "not valid TOML"),
        "missing REVERIE_CONFIG": (
            ["list", "--db", db],
            {"REVERIE_CONFIG": str(tmp_path / "nowhere.toml")},
            "REVERIE_CONFIG",
        ),
        "undecodable argument": (["add", f"x {UNDECODABLE}", "--db", db], {}, "error"),
    }
    for name, (args, env, phrase) in lines.items():
        ran = run(args, env=env)
        assert ran.crash is None, (name, ran.crash)
        said = " ".join(ran.output.split())  # the console wraps at its width
        assert ran.code in (1, 2) and phrase in said, (name, ran.code, said[-400:])
