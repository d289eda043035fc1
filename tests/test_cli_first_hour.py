"""The CLI's first hour: each test here failed on what a new user met before (ids, an empty scope,
a typo that created a store, output for people, the missing commands and export's surprises)."""

from __future__ import annotations

import json
import os
import re
import stat
from pathlib import Path

import pytest
from typer.testing import CliRunner

from reverie.cli import app

pytestmark = pytest.mark.model
runner = CliRunner()


@pytest.fixture
def db(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("REVERIE_OPSLOG__PATH", str(tmp_path / "ops.jsonl"))
    return str(tmp_path / "cli.db")


def run(*args: str) -> str:
    res = runner.invoke(app, list(args))
    assert res.exit_code == 0, res.output
    return res.output


def fails(*args: str) -> str:
    res = runner.invoke(app, list(args))
    assert res.exit_code == 1, res.output
    return " ".join(res.output.split())


def _add(db: str, text: str, *extra: str) -> str:
    return str(json.loads(run("add", text, "--db", db, "--json", *extra))["id"])


FACTS = ["Maya prefers window seats on long flights", "Maya is allergic to penicillin", "Maya's cat is called Pixel"]


def test_ids_short_forms_are_unique_and_any_unique_prefix_is_accepted(db: str) -> None:
    ids = [_add(db, f, "-u", "maya") for f in FACTS]
    # written together, time-ordered ids share their first characters (the old 8-character display showed one id
    # for all three, unless the adds straddled a 65-second step of the timestamp's first 8 characters)
    common = os.path.commonprefix(ids)  # noqa: RUF071 - ids, not paths: the common characters are wanted
    assert len(common) >= 6, ids
    listed = run("list", "--db", db, "-u", "maya")
    shown = re.findall(r"\b[0-9a-f]{8}-[0-9a-f-]*[0-9a-f]\b", listed)
    assert len(shown) == 3 and len(set(shown)) == 3, listed
    for short in shown:
        full = next(i for i in ids if i.startswith(short))
        assert json.loads(run("get", short, "--db", db, "--json"))["id"] == full
    ambiguous = fails("get", common, "--db", db)
    assert "AmbiguousIdError" in ambiguous and "matches several memories" in ambiguous and ids[0] in ambiguous


def test_a_search_without_a_user_names_the_users(db: str) -> None:
    _add(db, FACTS[0], "-u", "maya")
    out = fails("search", "seats", "--db", db)
    assert "maya (1)" in out and "-u NAME" in out and "--all-users" in out
    assert "window seats" in run("search", "seats", "--db", db, "--all-users")
    typo = run("search", "seats", "--db", db, "-u", "mya")
    assert "no memories for user 'mya'" in typo and "maya (1)" in typo
    assert "window seats" in run("list", "--db", db, "--all-users")


def test_read_commands_never_create_a_store(tmp_path: Path, db: str) -> None:
    missing_dir = tmp_path / "nonexistent" / "dir" / "x.db"
    for cmd in (
        ["search", "x"],
        ["list"],
        ["stats"],
        ["get", "abc"],
        ["export", str(tmp_path / "o.jsonl")],
        ["dream"],
        ["history", "abc"],
    ):
        out = fails(*cmd, "--db", str(missing_dir))
        assert "no memory database" in out
        assert not (tmp_path / "nonexistent").exists()
    fresh = tmp_path / "typo.db"
    assert "reverie init --db" in fails("search", "x", "--db", str(fresh))
    assert sorted(p.name for p in tmp_path.iterdir()) == []  # no database, no ops log
    out = fails("add", "a fact", "--db", str(missing_dir))
    assert "does not exist" in out and not (tmp_path / "nonexistent").exists()
    _add(db, "a fact worth keeping")  # add creates the database in an existing directory
    assert Path(db).exists()


def test_output_for_people(db: str) -> None:
    assert run("--version").startswith("reverie ")
    for cmd in ("add", "search", "list", "export", "simulate", "observe", "update", "get"):
        text = run(cmd, "--help")
        assert "<bool>" not in text and "seed 0" not in text and "{" not in text.splitlines()[0], cmd
    assert ".[plot]" in run("simulate", "--help")
    assert "Usage: reverie add [OPTIONS] TEXT" in run("add", "--help")
    for fact in FACTS:
        _add(db, fact, "-u", "maya")
    out = run("search", "which seat does Maya like", "--db", db, "-u", "maya", "-k", "3")
    lines = out.strip().splitlines()
    assert lines[0].startswith("1. Maya prefers window seats") and "found by" in lines[1] and "score" in lines[1]
    assert len(lines) == 6  # the answer and one line of why, per hit
    scores = [float(line.split("score ")[1].split()[0]) for line in lines[1::2]]
    assert scores == sorted(scores, reverse=True)
    explained = run("search", "which seat does Maya like", "--db", db, "-u", "maya", "-k", "1", "--explain")
    assert "terms:" in explained and "rrf:" in explained
    mid = json.loads(run("search", "window seats", "--db", db, "-u", "maya", "--json"))[0]["memory"]["id"]
    got = run("get", mid, "--db", db)
    assert got.startswith("Maya prefers window seats") and len(got.splitlines()) < 20
    shown = run("show", mid, "--db", db)
    assert "what decides its forgetting" in shown and "retention" in shown and "retention_l2" not in shown
    assert "retention_l2" in run("show", mid, "--db", db, "--explain")


def test_the_missing_commands(db: str) -> None:
    mid = _add(db, FACTS[1], "-u", "maya")
    assert "updated" in run("update", mid[:13], "Maya is allergic to penicillin and to latex", "--db", db)
    assert "latex" in json.loads(run("get", mid, "--db", db, "--json", "--peek"))["content"]
    assert "working → episodic" in run("promote", mid, "--db", db)
    assert "episodic → working" in run("demote", mid, "--db", db)
    block = run("context", "what is Maya allergic to", "--db", db, "-u", "maya")
    assert "latex" in block and "tokens" in block
    observed = run("observe", "My sister Lena lives in Seattle near the lake", "--db", db, "-u", "maya", "-s", "s1")
    assert observed.startswith("BUFFERED") and "not stored yet" in observed
    assert "CREATE" in run("flush", "--db", db, "-u", "maya", "-s", "s1")
    assert "Lena" in run("search", "where does Lena live", "--db", db, "-u", "maya")
    assert run("search", "where does Lena live", "--db", db, "-u", "maya", "--layer", "semantic").startswith(
        "no memory matches"
    )  # the filters list has
    assert "maya" in run("users", "--db", db)


def test_get_peek_counts_no_access(db: str) -> None:
    mid = _add(db, FACTS[0], "-u", "maya")
    before = json.loads(run("get", mid, "--db", db, "--json", "--peek"))["access_count"]
    run("get", mid, "--db", db, "--peek")
    assert json.loads(run("get", mid, "--db", db, "--json", "--peek"))["access_count"] == before
    run("get", mid, "--db", db)
    assert json.loads(run("get", mid, "--db", db, "--json", "--peek"))["access_count"] == before + 1


def test_export_stdout_format_overwrite_and_permissions(db: str, tmp_path: Path) -> None:
    for fact in FACTS:
        _add(db, fact, "-u", "maya")
    res = runner.invoke(app, ["export", "-", "--db", db])
    assert res.exit_code == 0 and not (Path.cwd() / "-").exists()
    lines = [line for line in res.stdout.splitlines() if line.startswith("{")]
    assert len(lines) == 3 and {json.loads(line)["content"] for line in lines} == set(FACTS)
    assert "extension" in fails("export", str(tmp_path / "x.json"), "--db", db)
    assert not (tmp_path / "x.json").exists()
    out = tmp_path / "all.jsonl"
    run("export", str(out), "--db", db)
    assert stat.S_IMODE(os.stat(out).st_mode) == 0o600
    assert "not overwritten" in fails("export", str(out), "--db", db)
    out.write_text("precious\n")
    fails("export", str(out), "--db", db)
    assert out.read_text() == "precious\n"
    run("export", str(out), "--db", db, "--force")
    assert len(out.read_text().splitlines()) == 3 and stat.S_IMODE(os.stat(out).st_mode) == 0o600
    md = tmp_path / "md"
    run("export", str(md), "--db", db, "--markdown")
    files = [f for f in md.rglob("*") if f.is_file()]  # memories, boxes and the topic index: owner only
    assert len(list((md / "facts").rglob("*.md"))) == 3
    assert all(stat.S_IMODE(os.stat(f).st_mode) == 0o600 for f in files)
    assert "does not exist" in fails("export", str(tmp_path / "no" / "x.jsonl"), "--db", db)
    copy = str(tmp_path / "copy.db")
    assert "restored 3" in run("import", str(out), "--db", copy)
