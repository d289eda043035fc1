"""Documents the consolidation pass keeps per user, through ``Memory`` on both backends: the behavioural
profile with its line cap, entity profiles kept current, reflections consolidated past their size limit,
and compression guidelines learned from the action telemetry that later consolidation passes use. Shown
over REST, MCP-free paths and in the dashboard; forgetting a memory takes its lines out."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
from fastapi.testclient import TestClient

from reverie import Memory, SettableClock
from reverie.embed.testing import HashEmbedder
from reverie.http import create_app
from reverie.model import Layer, Status

PREFERENCES = [
    "I like my coffee black without sugar",
    "Window seats on long flights, please",
    "Send reports as PDF, never as Word files",
    "Meetings before 10 am are not welcome",
    "Use metric units in every answer",
    "Replies in German for family matters",
    "Vegetarian restaurants for team dinners",
    "Dark mode in every editor",
]


def _lines(doc: dict[str, Any]) -> list[str]:
    return [ln["text"] for s in doc["sections"] for ln in s["lines"]]


def test_behavioural_profile_has_a_line_cap_and_loses_forgotten_lines(make_memory, clock: SettableClock) -> None:
    m: Memory = make_memory(dream={"documents": {"profile": {"max_lines": 5}}})
    ids = [r.id for r in m.add_many(PREFERENCES, user_id="maya", infer=False)]
    for i, mid in enumerate(ids):  # importance 0.9 down to 0.55
        m.update(mid, category="preference", importance=round(0.9 - 0.05 * i, 2))
    how = m.add("To deploy, tag the release and let CI publish it", user_id="maya", infer=False).id
    m.promote(how, "procedural")
    m.update(how, importance=0.95)
    m.add("The office is on the third floor", user_id="maya", infer=False)  # a plain fact: not behaviour
    step = m.dream(user_id="maya", steps=["profile"])["steps"][0]
    assert step["details"]["lines"] == 5 and step["details"]["left_out_by_line_cap"] == 4
    doc = m.documents(user_id="maya")["profile"]
    assert doc["line_cap"] == 5 and doc["lines"] == 5 and doc["left_out"] == 4 and "line cap" in doc["note"]
    assert [s["heading"] for s in doc["sections"]] == ["Preferences", "Know-how"]
    # the most important lines are kept: the know-how and the four most important preferences
    assert set(_lines(doc)) == {"To deploy, tag the release and let CI publish it", *PREFERENCES[:4]}
    assert "The office is on the third floor" not in _lines(doc)
    m.forget(ids[0])  # its words leave the profile at once, before the next pass
    assert PREFERENCES[0] not in _lines(m.documents(user_id="maya")["profile"])
    assert m.dream(user_id="maya", steps=["profile"])["steps"][0]["changed"] == 1
    assert PREFERENCES[4] in _lines(m.documents(user_id="maya")["profile"])  # the next one moves up
    assert m.dream(user_id="maya", steps=["profile"])["steps"][0]["changed"] == 0  # unchanged: not rewritten


def test_entity_profiles_are_kept_current(make_memory, clock: SettableClock) -> None:
    m: Memory = make_memory()
    facts = [
        "Lena moved to Hamburg in 2019",
        "Lena works as a chemist at Siemens",
        "Lena has two dogs named Ole and Pit",
    ]
    ids = [m.add(text, user_id="maya").id for text in facts]
    m.add("Tom likes sailing", user_id="maya")  # named once: no profile
    first = m.dream(user_id="maya", steps=["entity_profiles"])["steps"][0]
    assert first["details"]["profiles"] == 1 and first["changed"] == 1
    (lena,) = m.documents(user_id="maya")["entities"]["entities"].values()
    assert lena["name"].casefold() == "lena" and lena["memories"] == 3
    assert {f["text"] for f in lena["facts"]} == set(facts) and "hamburg" in [r.casefold() for r in lena["related"]]
    assert m.dream(user_id="maya", steps=["entity_profiles"])["steps"][0]["changed"] == 0  # nothing new
    clock.advance(hours=1)
    m.add("Lena started a pottery class on Tuesdays", user_id="maya")
    clock.advance(minutes=1)
    m.update(ids[0], "Lena moved to Hamburg in 2018")
    again = m.dream(user_id="maya", steps=["entity_profiles"])["steps"][0]
    assert again["changed"] == 1
    (lena,) = m.documents(user_id="maya")["entities"]["entities"].values()
    assert lena["memories"] == 4 and lena["facts"][0]["text"] == "Lena moved to Hamburg in 2018"  # newest first
    assert "Lena started a pottery class on Tuesdays" in {f["text"] for f in lena["facts"]}
    m.forget(ids[1])
    assert m.documents(user_id="maya")["entities"]["entities"] == {}  # rebuilt by the next pass
    m.dream(user_id="maya", steps=["entity_profiles"])
    (lena,) = m.documents(user_id="maya")["entities"]["entities"].values()
    assert "Lena works as a chemist at Siemens" not in {f["text"] for f in lena["facts"]}


REFLECTIONS = [
    f"When {topic} comes up, I should ask one clarifying question before answering"
    for topic in ("travel", "money", "health", "family", "work", "code", "music", "food")
]
DISTINCT = [
    "The user reads answers on a phone: short paragraphs work best",
    "Long lists overwhelm the user; three options at most",
    "The user trusts sources more when links come first",
    "Humour is welcome in casual chats but not in work threads",
    "The user often returns to unfinished plans after a week",
]


def test_reflections_are_consolidated_past_their_size_limit(make_memory, clock: SettableClock) -> None:
    m: Memory = make_memory(dream={"documents": {"reflections": {"max_bytes": 300}}})
    small = m.add(DISTINCT[0], user_id="ada", agent_id="helper", metadata={"reflection": True}, infer=False).id
    m.dream(user_id="ada", steps=["reflections"])
    doc = m.documents(user_id="ada")["reflections"]
    assert not doc["consolidated"] and [ln["ids"] for ln in doc["lines"]] == [[small]]
    for text in [*REFLECTIONS, *DISTINCT[1:]]:
        clock.advance(minutes=5)
        m.add(text, user_id="ada", agent_id="helper", metadata={"reflection": True}, infer=False)
    m.dream(user_id="ada", steps=["reflections"])
    doc = m.documents(user_id="ada")["reflections"]
    assert doc["consolidated"] and doc["bytes_before"] > 300 >= doc["bytes_after"]
    # the eight near-identical reflections became one line naming all eight memories (the newest words)
    folded = [ln for ln in doc["lines"] if len(ln["ids"]) > 1]
    assert doc["folded_similar"] >= 7 and folded and "(×" in folded[0]["text"]
    kept = {i for ln in doc["lines"] for i in ln["ids"]}
    assert kept | set(doc["folded_out"]) == {r.id for r in m.list(user_id="ada", limit=100)}
    assert doc["folded_out"] and not kept & set(doc["folded_out"])


NOTES_A = [
    f"The staging server for the billing service runs in the Frankfurt region{tail}"
    for tail in ("", " today", " as before", " since May", " on two machines", " for now")
]
NOTES_B = [
    f"The backup job for the payroll database runs every night at two{tail}"
    for tail in ("", " still", " as planned", " since June", " on the old cluster", " by default")
]


def _settle(m: Memory, ids: list[str], clock: SettableClock) -> None:
    clock.advance(hours=1)
    m.dream(steps=["promote"])
    clock.advance(days=2)
    for mid in ids:
        m.get(mid)


def test_compression_guidelines_make_later_consolidation_more_conservative(make_memory, clock: SettableClock) -> None:
    vecs = HashEmbedder(64).embed(NOTES_B)
    sims = vecs @ vecs.T
    low, high = float(sims[~np.eye(6, dtype=bool)].min()), float(sims.max(initial=0, where=~np.eye(6, dtype=bool)))
    gap = round(high - low + 0.02, 3)
    m: Memory = make_memory(
        dream={
            "consolidation": {"merge": {"similarity": {"api": 0.8, "hash": round(low - 0.01, 3)}}},
            "documents": {"guidelines": {"min_summaries": 1, "raise_step": gap, "max_raise": gap}},
        }
    )
    first = [r.id for r in m.add_many(NOTES_A, user_id="a", infer=False)]
    _settle(m, first, clock)
    assert m.dream(steps=["merge"])["steps"][0]["details"]["groups"] == 1
    (summary,) = {r.superseded_by for r in m.store.get(first).values()}
    assert summary is not None
    m.undo_consolidation(summary)  # the user did not want this compression
    step = m.dream(steps=["guidelines"])["steps"][0]
    assert step["details"]["raised"] == 1
    guide = m.documents(user_id="a")["guidelines"]
    assert (guide["summaries"], guide["undone"], guide["undo_rate"]) == (1, 1, 1.0)
    assert guide["consolidation_threshold_raise"] == gap and "undone" in guide["guidance"][0]
    assert guide["actions"]["summarize_node"] == 2 and guide["outcomes"]["summarize_node:UNDONE"] == 1
    # the same kind of group now stays apart for user a, while user b (no undone summaries) still merges
    later_a = [r.id for r in m.add_many(NOTES_B, user_id="a", infer=False)]
    later_b = [r.id for r in m.add_many(NOTES_B, user_id="b", infer=False)]
    _settle(m, later_a + later_b, clock)
    merged = m.dream(steps=["merge"])["steps"][0]
    assert merged["details"]["groups"] == 1
    assert all(r.status is Status.ACTIVE for r in m.store.get(later_a).values())
    assert all(r.status is Status.SUPERSEDED for r in m.store.get(later_b).values())
    m.dream(steps=["guidelines"])
    b = m.documents(user_id="b")["guidelines"]
    assert (b["summaries"], b["undone"], b["consolidation_threshold_raise"]) == (1, 0, 0.0)
    assert "keeps its thresholds" in b["guidance"][0]


def test_documents_over_rest_dashboard_and_export(make_memory, clock: SettableClock, tmp_path: Path) -> None:
    m: Memory = make_memory()
    for text in [
        "I prefer window seats on long flights.",
        "We decided to move the launch to March 3rd.",
        "Lena moved to Hamburg in 2019",
        "Lena works as a chemist",
        "Lena has two dogs",
    ]:
        m.observe(text, user_id="maya", session_id="s1")
    m.end_session("s1", user_id="maya")
    m.add("Keep answers short for maya", user_id="maya", metadata={"reflection": True}, infer=False)
    docs = m.documents(user_id="maya", refresh=True)
    assert docs["profile"]["lines"] >= 1 and docs["entities"]["entities"] and docs["reflections"]["lines"]
    assert docs["guidelines"]["events"] > 0 and docs["topics"]["user_id"] == "maya"
    with TestClient(create_app(m)) as c:
        body = c.get("/v1/documents", params={"user_id": "maya"}).json()
        assert body["profile"] == docs["profile"] and body["guidelines"]["actions"] == docs["guidelines"]["actions"]
        actions = c.get("/v1/actions", params={"user_id": "maya", "limit": 5}).json()["actions"]
        assert len(actions) == 5 and {
            "action",
            "outcome",
            "confidence",
            "lifecycle_state",
            "importance",
            "source",
        } <= set(actions[0])
        assert c.get("/v1/actions", params={"limit": 0}).status_code == 422
        page = c.get("/documents", params={"user_id": "maya"})
        assert page.status_code == 200
        for needle in (
            "Behavioural profile",
            "window seats",
            "Entity profiles",
            "Reflections",
            "Keep answers short for maya",
            "Compression guidelines",
            "store_note",
            "I prefer window seats",
        ):
            assert needle in page.text, needle
        assert 'href="/documents?user_id=maya"' in c.get("/documents").text
    out = m.export_markdown(tmp_path / "md", user_id="maya")
    assert out["documents"] == 4 and out["entity_profiles"] >= 1 and out["action_events"] > 0
    assert "window seats" in (tmp_path / "md" / "users" / "maya" / "profile.md").read_text()
    assert (tmp_path / "md" / "users" / "maya" / "compression-guidelines.md").is_file()
    assert (tmp_path / "md" / "users" / "maya" / "reflections.md").is_file()
    assert (tmp_path / "md" / "state" / "memory-actions.jsonl").read_text().count("\n") == out["action_events"]


def test_layers_of_the_profile_are_a_setting(make_memory) -> None:
    m: Memory = make_memory(dream={"documents": {"profile_layers": [], "profile": {"categories": []}}})
    mid = m.add("To deploy, tag the release", user_id="u", infer=False).id
    m.promote(mid, Layer.PROCEDURAL)
    m.dream(user_id="u", steps=["profile"])
    assert m.documents(user_id="u")["profile"]["lines"] == 0


def test_documents_command(tmp_path: Path, monkeypatch) -> None:
    from typer.testing import CliRunner

    from reverie.cli import app

    monkeypatch.setenv("REVERIE_OPSLOG__PATH", str(tmp_path / "ops.jsonl"))
    db, runner = str(tmp_path / "cli.db"), CliRunner()
    assert runner.invoke(app, ["documents", "--db", db, "-u", "maya"]).exit_code == 1  # no such database
    for text in ("I prefer window seats on long flights.", "We decided to move the launch to March 3rd."):
        assert runner.invoke(app, ["observe", text, "--db", db, "-u", "maya", "-s", "s1", "--flush"]).exit_code == 0
    res = runner.invoke(app, ["documents", "--db", db, "-u", "maya", "--refresh", "--actions", "3"])
    assert res.exit_code == 0, res.output
    assert "Behavioural profile" in res.output and "window seats" in res.output
    assert "Compression guidelines" in res.output and "recent write decisions" in res.output
    empty = runner.invoke(app, ["documents", "--db", db, "-u", "nobody"])
    assert empty.exit_code == 0 and "no documents yet" in empty.output


def test_an_llm_condenses_the_reflections_that_would_fold_out(make_memory, clock: SettableClock, chat_server) -> None:
    import json

    condensed = "Ask one clarifying question first; keep lists and paragraphs short."
    chat_server.script = lambda req: (200, json.dumps({"summary": condensed}), 0.0)
    m: Memory = make_memory(
        llm={"base_url": chat_server.url, "timeout_s": 2, "retries": 0},
        dream={"documents": {"reflections": {"max_bytes": 300}}},
    )
    for text in [*REFLECTIONS, *DISTINCT]:
        clock.advance(minutes=5)
        m.add(text, user_id="ada", metadata={"reflection": True}, infer=False)
    m.dream(user_id="ada", steps=["reflections"])
    doc = m.documents(user_id="ada")["reflections"]
    assert doc["consolidated"] and doc["condensed_by_llm"] >= 1 and doc["folded_out"] == []
    line = doc["lines"][-1]
    assert line["text"] == "Earlier reflections, condensed: " + condensed and doc["bytes_after"] <= 300
    assert {i for ln in doc["lines"] for i in ln["ids"]} == {r.id for r in m.list(user_id="ada", limit=100)}
    assert any("older reflections" in r["messages"][0]["content"] for r in chat_server.requests)
    # an answer that invents a number is not grounded: the heuristic folding stays
    chat_server.script = lambda req: (200, json.dumps({"summary": "Ask 7 questions first."}), 0.0)
    clock.advance(minutes=5)
    m.add("Short answers work best before 9 am", user_id="ada", metadata={"reflection": True}, infer=False)
    m.dream(user_id="ada", steps=["reflections"])
    doc = m.documents(user_id="ada")["reflections"]
    assert doc["condensed_by_llm"] == 0 and doc["folded_out"]


def test_documents_and_telemetry_stay_in_a_credentials_scope(make_memory) -> None:
    import pytest

    from reverie import PermissionDeniedError, ScopedMemory
    from reverie.auth import Credential

    m: Memory = make_memory()
    m.add("I prefer tea", user_id="maya", agent_id="travel")
    m.add("I prefer coffee", user_id="maya", agent_id="food")
    m.add("Tom's secret fact", user_id="tom")
    m.dream(steps=["profile", "guidelines"])
    maya = ScopedMemory(m, Credential.scoped("maya"))
    assert maya.documents()["guidelines"]["events"] == 2
    assert {e["agent_id"] for e in maya.action_telemetry()} == {"travel", "food"}
    with pytest.raises(PermissionDeniedError):
        maya.documents(user_id="tom")
    with pytest.raises(PermissionDeniedError):
        maya.action_telemetry(user_id="tom")
    travel = ScopedMemory(m, Credential.scoped("maya", "travel"))
    assert {e["agent_id"] for e in travel.action_telemetry()} == {"travel"}  # only its own agent's decisions
    with pytest.raises(PermissionDeniedError):
        travel.documents()  # made from every agent's memories of the user
    with pytest.raises(PermissionDeniedError):
        maya.compact()
    with pytest.raises(PermissionDeniedError):
        maya.maintain()
