"""Memory.compact(): memory dedup and index optimisation, reporting what it reclaimed (both backends)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from reverie import Memory, SettableClock
from reverie.cli import app
from reverie.errors import InvalidInputError
from reverie.model import Status, StoreTier


def test_compact_keeps_one_copy_of_each_fact_and_loses_no_answer(make_memory, clock: SettableClock) -> None:
    m: Memory = make_memory()
    first = m.add("Maya is allergic to penicillin", user_id="maya", infer=False).id
    clock.advance(minutes=5)
    copies = [
        m.add(text, user_id="maya", infer=False).id
        for text in ("maya is allergic to penicillin.", "Maya is  allergic to penicillin")
    ]
    used = copies[1]
    m.get(used)  # the most used copy survives (both hot, none pinned)
    other_user = m.add("Maya is allergic to penicillin", user_id="bob", infer=False).id
    other_agent = m.add("Maya is allergic to penicillin", user_id="maya", agent_id="nurse-bot", infer=False).id
    unique = [m.add(f"distinct fact number {i} about the garden", user_id="maya", infer=False).id for i in range(20)]
    for mid in unique[:10]:
        m.forget(mid)  # hard deletes leave pages and index entries behind

    report = m.compact()

    assert report["dedup"]["groups"] == 1 and report["dedup"]["superseded"] == 2
    recs = m.store.get([first, *copies, other_user, other_agent])
    assert recs[used].status is Status.ACTIVE and recs[used].confirmations == 2
    for mid in (first, copies[0]):
        assert recs[mid].status is Status.SUPERSEDED and recs[mid].superseded_by == used
        assert recs[mid].store is StoreTier.COLD
        assert m.history(mid)[-1].event == "deduplicated"
    assert recs[other_user].status is Status.ACTIVE and recs[other_agent].status is Status.ACTIVE
    hits = m.search("what is Maya allergic to?", user_id="maya", k=3)
    assert hits[0].memory.id in {used, other_agent}
    found = {h.memory.id for h in m.search("distinct fact garden", user_id="maya", k=20)}
    assert set(unique[10:]) <= found and not found & set(unique[:10])
    store = report["store"]
    assert store["backend"] == m.store.backend
    assert store["bytes_before"] > 0 and store["reclaimed_bytes"] >= 0 and store["actions"]
    assert m.compact()["dedup"]["superseded"] == 0  # idempotent


def test_compact_leaves_immutable_and_pinned_copies_their_place(make_memory) -> None:
    m: Memory = make_memory()
    a = m.add("The vault code changes every Monday", user_id="u", infer=False).id
    b = m.add("The vault code changes every Monday", user_id="u", infer=False).id
    c = m.add("The vault code changes every Monday", user_id="u", infer=False).id
    m.pin(b)
    m.store.update_fields(c, {"immutable": True})
    report = m.compact(user_id="u")
    assert report["dedup"]["superseded"] == 1
    recs = m.store.get([a, b, c])
    assert recs[b].status is Status.ACTIVE  # the pinned copy is kept
    assert recs[c].status is Status.ACTIVE  # an immutable memory is never changed
    assert recs[a].status is Status.SUPERSEDED and recs[a].superseded_by == b
    assert m.compact(dedup=False)["store"]["backend"] == m.store.backend
    with pytest.raises(InvalidInputError):
        m.compact(dedup="yes")  # type: ignore[arg-type]


def test_cli_compact(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REVERIE_OPSLOG__PATH", str(tmp_path / "ops.jsonl"))
    runner = CliRunner()
    db = str(tmp_path / "c.db")
    for _ in range(2):
        assert runner.invoke(app, ["add", "--db", db, "-u", "u", "--verbatim", "tea at noon"]).exit_code == 0
    res = runner.invoke(app, ["compact", "--db", db, "--json"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    assert data["dedup"]["superseded"] == 1 and data["store"]["backend"] == "sqlite"
    text = runner.invoke(app, ["compact", "--db", db])
    assert text.exit_code == 0 and "reclaimed" in text.output and "VACUUM" in text.output
    missing = runner.invoke(app, ["compact", "--db", str(tmp_path / "nope.db")])
    assert missing.exit_code == 1 and "no memory database" in missing.output
