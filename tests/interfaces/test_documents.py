"""Readable documents (the lifecycle design): sealed memory boxes in the markdown export as
boxes/YYYY-MM-DD/box-<id>.md, the topic index, and the stale filter of search — both backends."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from reverie import Memory, SettableClock, io
from reverie.cli import app

SESSIONS = {
    "s1": ["My sister Lena lives in Hamburg with her two dogs.", "Lena works as a nurse at the Hamburg clinic."],
    "s2": ["I switched my team to Rust for the backend services.", "The Rust backend compiles in four minutes."],
}


def converse(m: Memory, clock: SettableClock, user: str = "maya") -> None:
    for sid, turns in SESSIONS.items():
        for text in turns:
            m.observe(text, user_id=user, session_id=sid)
            clock.advance(minutes=2)
        m.end_session(sid, user_id=user)  # stores what is buffered and seals the box
        clock.advance(hours=3)


def test_export_writes_sealed_boxes_and_the_topic_index(make_memory, clock: SettableClock, tmp_path: Path) -> None:
    m: Memory = make_memory()
    converse(m, clock)
    boxes = m.store.sealed_boxes("maya")
    assert len(boxes) == 2
    report = m.dream(steps=["topics"])["steps"][0]
    assert report["details"]["users"] == 1 and report["details"]["topics"] > 0
    index = m.topic_index(user_id="maya")
    names = [t["topic"] for t in index["topics"]]
    assert {"hamburg", "rust"} <= set(names) and "user's" not in names
    hamburg = next(t for t in index["topics"] if t["topic"] == "hamburg")
    assert hamburg["boxes"] == 1 and hamburg["memories"] >= 2 and hamburg["first_seen"].startswith("2025-03-01")

    out = tmp_path / "tree"
    done = m.export_markdown(out)
    # no dream has made the consolidation pass's documents yet; the write decisions are exported as telemetry
    assert done == {
        "memories": 4,
        "boxes": 2,
        "topic_indexes": 1,
        "documents": 0,
        "entity_profiles": 0,
        "action_events": 6,
        "artifacts": 0,
    }
    files = sorted(p.relative_to(out).as_posix() for p in (out / "boxes").rglob("*.md"))
    assert files == sorted(f"boxes/2025-03-01/box-{b.id}.md" for b in boxes)
    text = (out / files[0]).read_text()
    front = yaml.safe_load(text.split("---\n")[1])
    box = next(b for b in boxes if b.id == front["id"])
    assert front["user_id"] == "maya" and front["topic"] == box.topic and front["memory_count"] == box.memory_count
    body = text.split("---\n", 2)[2]
    links = [line.rsplit("](../../", 1)[1].rstrip(")") for line in body.splitlines() if line.startswith("- ")]
    assert len(links) == box.memory_count and all((out / link).is_file() for link in links)
    assert json.loads((out / "state" / "topics.json").read_text())["maya"]["topics"] == index["topics"]
    assert "| hamburg (entity) |" in (out / "topics.md").read_text()
    # the boxes and the index are for people: importing the tree reads the memories only
    assert len(list(io.iter_markdown(out))) == 4


def test_topic_index_is_built_on_demand_and_per_user(make_memory, clock: SettableClock) -> None:
    m: Memory = make_memory()
    converse(m, clock, user="maya")
    m.add("Bob collects vintage synthesizers", user_id="bob", infer=False)
    assert m.store.get_state("topics:maya") is None
    fresh = m.topic_index(user_id="maya")  # no dream yet: built now
    assert fresh["sealed_boxes"] == 2 and m.topic_index(user_id="maya") == fresh
    assert all(t["topic"] not in ("synthesizers", "vintage") for t in fresh["topics"])
    assert m.topic_index(user_id="bob", refresh=True)["sealed_boxes"] == 0
    with pytest.raises(Exception, match="refresh"):
        m.topic_index(user_id="maya", refresh="yes")  # type: ignore[arg-type]


def test_cli_topics_and_markdown_export(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REVERIE_OPSLOG__PATH", str(tmp_path / "ops.jsonl"))
    runner = CliRunner()
    db = str(tmp_path / "c.db")
    for text in SESSIONS["s1"]:
        assert runner.invoke(app, ["observe", text, "--db", db, "-u", "maya", "-s", "s1"]).exit_code == 0
    with Memory(db, config={"opslog": {"path": str(tmp_path / "ops.jsonl")}}) as m:
        m.end_session("s1", user_id="maya")
    res = runner.invoke(app, ["topics", "--db", db, "-u", "maya", "--json"])
    assert res.exit_code == 0, res.output
    assert "hamburg" in [t["topic"] for t in json.loads(res.stdout)["topics"]]
    table = runner.invoke(app, ["topics", "--db", db, "-u", "maya"])
    assert table.exit_code == 0 and "hamburg" in table.output
    empty = runner.invoke(app, ["topics", "--db", db, "-u", "nobody"])
    assert empty.exit_code == 0 and "no topics yet" in empty.output
    exported = runner.invoke(app, ["export", str(tmp_path / "md"), "--db", db, "--markdown"])
    assert exported.exit_code == 0 and "1 sealed memory boxes" in exported.output
    assert list((tmp_path / "md" / "boxes").rglob("box-*.md"))


def test_the_stale_filter_leaves_out_what_the_lifecycle_policy_found_stale(make_memory) -> None:
    plain: Memory = make_memory()
    a = plain.add("The office wifi password is printed on the kitchen wall", user_id="u", infer=False).id
    b = plain.add("The office wifi password changed to a sticker on the router", user_id="u", infer=False).id
    legacy = plain.add("The office wifi password is kept by Tom", user_id="u", infer=False).id
    plain.store.update_fields(a, {"lifecycle_state": "stale", "heat_score": 0.05, "decay_score": 0.8})
    plain.store.update_fields(legacy, {"lifecycle_state": "stale"})  # never scored by the policy: fail-open
    query = "office wifi password"
    assert {h.memory.id for h in plain.search(query, user_id="u", k=5)} == {a, b, legacy}  # ranked, not filtered
    filtering: Memory = make_memory(read={"filter_stale": True})
    assert {h.memory.id for h in filtering.search(query, user_id="u", k=5)} == {b, legacy}
    assert filtering.get(a).id == a  # still there, only left out of search results
