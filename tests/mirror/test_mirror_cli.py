"""``reverie mirror DIR`` and ``reverie sync`` end to end (real SQLite file, the real local model)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from reverie.cli import app

pytestmark = pytest.mark.model
runner = CliRunner()


def test_mirror_then_sync_edits_and_conflicts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REVERIE_OPSLOG__PATH", str(tmp_path / "ops.jsonl"))
    monkeypatch.setenv("COLUMNS", "200")
    db, root = str(tmp_path / "m.db"), tmp_path / "notes"
    assert runner.invoke(app, ["add", "Maya prefers window seats", "--db", db, "-u", "maya"]).exit_code == 0
    done = runner.invoke(app, ["mirror", str(root), "--db", db])
    assert done.exit_code == 0, done.output
    assert "1 files written" in done.output and f"REVERIE_MIRROR__DIR={root}" in " ".join(done.output.split())
    (path,) = (root / "facts").rglob("*.md")
    path.write_text(path.read_text(encoding="utf-8").replace("window", "aisle"), encoding="utf-8")
    (root / "facts" / "new.md").write_text("Maya's passport expires in May\n", encoding="utf-8")
    done = runner.invoke(app, ["sync", "--db", db, "--dir", str(root), "--json"])
    assert done.exit_code == 0, done.output
    report = json.loads(done.output)
    assert len(report["updated"]) == 1 and len(report["added"]) == 1 and report["conflicts"] == []
    shown = runner.invoke(app, ["get", report["updated"][0], "--db", db, "--peek"])
    assert "Maya prefers aisle seats" in shown.output

    monkeypatch.setenv("REVERIE_MIRROR__DIR", str(root))  # live from now on
    (path,) = [p for p in (root / "facts").rglob("*.md") if "aisle" in p.read_text(encoding="utf-8")]
    path.write_text(path.read_text(encoding="utf-8").replace("aisle", "exit row"), encoding="utf-8")
    changed = runner.invoke(
        app, ["update", report["updated"][0], "Maya prefers aisle seats near the front", "--db", db]
    )
    assert changed.exit_code == 0, changed.output
    done = runner.invoke(app, ["sync", "--db", db])
    assert done.exit_code == 1  # a conflict: both kept, reported
    assert "conflict" in done.output and "conflicts/facts/" in " ".join(done.output.split())
    assert "exit row" in path.read_text(encoding="utf-8")
