"""The CLI end to end on a real SQLite file with the real local embedding model."""

from __future__ import annotations

import json
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


def test_every_command_has_help() -> None:
    out = run("--help")
    for cmd in (
        "init",
        "add",
        "search",
        "get",
        "show",
        "list",
        "pin",
        "unpin",
        "forget",
        "history",
        "stats",
        "dream",
        "import",
        "export",
        "demo",
        "feedback",
        "invalidate",
        "backup",
        "forget-user",
        "serve",
        "keys",
    ):
        assert cmd in out
        assert runner.invoke(app, [cmd, "--help"]).exit_code == 0


def test_add_search_get_show_history(db: str) -> None:
    run("init", "--db", db)
    added = json.loads(run("add", "Maya prefers window seats on flights", "--db", db, "-u", "maya", "--json"))
    assert added["action"] == "CREATE"
    mid = added["id"]
    hits = json.loads(run("search", "which seat does Maya like", "--db", db, "-u", "maya", "--json"))
    assert hits[0]["memory"]["id"] == mid and hits[0]["explain"]["channels"]
    table = run("search", "seat", "--db", db, "-u", "maya", "--explain")
    assert "vector" in table and "rrf" in table
    assert json.loads(run("get", mid, "--db", db, "--json"))["content"].startswith("Maya prefers")
    shown = json.loads(run("show", mid, "--db", db, "--json"))
    assert "energy" in shown
    assert "created" in run("history", mid, "--db", db)
    run("pin", mid, "--db", db)
    assert json.loads(run("list", "--db", db, "-u", "maya", "--json"))[0]["pinned"] is True
    stats = json.loads(run("stats", "--db", db, "--json"))
    assert stats["total"] == 1
    run("forget", mid, "--db", db, "--yes")
    assert json.loads(run("list", "--db", db, "-u", "maya", "--json")) == []


def test_errors_are_one_line_and_exit_1(db: str) -> None:
    res = runner.invoke(app, ["get", "nope", "--db", db])
    assert res.exit_code == 1 and "NotFoundError" in res.output
    res = runner.invoke(app, ["add", "   ", "--db", db])
    assert res.exit_code == 1 and "empty" in res.output
    res = runner.invoke(app, ["add", "x", "--db", db, "--metadata", "{bad"])
    assert res.exit_code == 1 and "not valid JSON" in res.output


def test_a_message_printed_to_a_pipe_is_not_wrapped(db: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Printed to a pipe or a log (not a terminal), an error keeps its long path on one line whatever the
    width the console guesses (here 40 columns): scripts and tests can read it back."""
    run("init", "--db", db)
    monkeypatch.setenv("COLUMNS", "40")
    deep = tmp_path.joinpath(*(["a-rather-long-directory-name"] * 6))
    deep.mkdir(parents=True)
    target = deep / "copy.db"
    target.write_bytes(b"")
    res = runner.invoke(app, ["backup", str(target), "--db", db])
    assert res.exit_code == 1
    line = next(line for line in res.output.splitlines() if str(target) in line)
    assert "a backup never overwrites a file" in line, res.output


def test_import_export_round_trip(db: str, tmp_path: Path) -> None:
    import importlib.resources

    sample = importlib.resources.files("reverie").joinpath("sample/conversation.json")
    conv = tmp_path / "conv.json"
    conv.write_text(sample.read_text("utf-8"))
    assert "imported 35 of 35" in run("import", str(conv), "--db", db)
    out = tmp_path / "all.jsonl"
    run("export", str(out), "--db", db)
    assert len(out.read_text().splitlines()) == 35
    md = tmp_path / "md"
    run("export", str(md), "--db", db, "--markdown")
    assert len(list((md / "facts").rglob("*.md"))) == 35  # one file per memory
    assert (md / "topics.md").is_file() and (md / "state" / "topics.json").is_file()  # boxes: import makes none
    db2 = str(tmp_path / "copy.db")
    assert "restored 35" in run("import", str(md), "--db", db2, "--markdown")
    db3 = str(tmp_path / "copy3.db")
    assert "restored 35" in run("import", str(out), "--db", db3)
    lines = tmp_path / "plain.jsonl"
    lines.write_text(
        '{"content": "Maya keeps her bike in the hallway"}\n{"content": "Tomás teaches surfing in Ericeira"}\n'
    )
    assert "added 2 of 2" in run("import", str(lines), "--db", db3, "-u", "x")


def test_dream_runs(db: str) -> None:
    run("add", "something to dream about", "--db", db)
    report = json.loads(run("dream", "--db", db, "--json"))
    from reverie.config import Settings

    assert [s["name"] for s in report["steps"]] == Settings().dream.steps
    assert report["steps"][0]["name"] == "decay" and report["steps"][-1]["name"] == "prune"


def test_demo_finds_the_evidence() -> None:
    out = run("demo")
    assert len(out.splitlines()) < 150  # a page a person reads, ending with a summary
    assert "Summary" in out.splitlines()[-5] and "months later: evidence in the top 3" in out
    assert "evidence in the top 3" in out
    found = int(out.split("evidence in the top 3 for ")[1].split(" of ")[0])
    assert found >= 7  # of 9 questions
    # memories replaced by a correction are not counted as consolidated: no originals without a summary
    later = out.split("months later:")[1]
    originals = int(later.split(" originals consolidated into ")[0].rsplit(" ", 1)[1])
    summaries = int(later.split(" originals consolidated into ")[1].split(" ")[0])
    assert "replaced by a newer statement" in later and (originals == 0) == (summaries == 0)
    # consolidation at work: the week of sport in March fades and is merged into one summary
    assert originals >= 5 and summaries >= 1 and "into one summary: " in out
    # the store of a run without --db is deleted: the last line says how to keep one, and names none
    last = out.strip().splitlines()[-1]
    assert "reverie demo --db demo.db keeps its store" in last and "reverie-demo-" not in last


def test_reactivate_and_undo_consolidation(db: str) -> None:
    from reverie import Memory, SettableClock
    from reverie.model import Status, StoreTier

    seed003 = [
        "User went hiking at Mount Rainier on March 12, 2024",
        "User went kayaking at Lake Washington on March 15, 2024",
        "User ran a 5K in Fremont on March 20, 2024",
        "User went rock climbing at Stone Gardens on March 25, 2024",
        "User joined a cycling club on March 28, 2024",
    ]
    clock = SettableClock()
    with Memory(db, clock=clock) as mem:
        ids = [r.id for r in mem.add_many(seed003, infer=False)]
        clock.advance(days=200)  # long enough without recall to fade below the consolidation threshold
        report = mem.dream(steps=["promote", "consolidate"])
        summary_id = next(s for s in report["steps"] if s["name"] == "consolidate")["details"]["summaries"][0]
    out = run("undo-consolidation", summary_id, "--db", db)
    assert "restored 5 original(s)" in out
    with Memory(db, clock=clock) as mem:
        assert mem.get(summary_id).status is Status.INVALIDATED
        mem.store.update_fields(ids[0], {"status": Status.DORMANT, "store": StoreTier.COLD})
    out = run("reactivate", ids[0], "--db", db)
    assert f"reactivated {ids[0]} (active, hot)" in out
    res = runner.invoke(app, ["undo-consolidation", ids[1], "--db", db])
    assert res.exit_code == 1 and "not a consolidation summary" in " ".join(res.output.split())
