"""The write path's LLM-primary stages against a scripted local server, and their fallbacks."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from reverie import Memory, SettableClock
from reverie.config.core import LLMSettings
from reverie.config.write import WriteSettings
from reverie.embed.testing import HashEmbedder
from reverie.llm import LLMClient
from reverie.model import Status
from reverie.results import Action
from reverie.write import llm_stages
from reverie.write.emotion import Emotion


def _memory(store_target: str, tmp_path: Path, clock: SettableClock, server: Any, **llm: object) -> Memory:
    cfg = {
        "opslog": {"path": str(tmp_path / "ops.jsonl")},
        "llm": {"base_url": server.url, "timeout_s": 0.5, "retries": 0, **llm},
    }
    return Memory(store_target, config=cfg, clock=clock, embedder=HashEmbedder(64))


def _client(server: Any) -> LLMClient:
    return LLMClient(LLMSettings(base_url=server.url, timeout_s=0.5, retries=0, breaker_failures=100))


def test_llm_extraction_merge_contradiction_relations(
    store_target: str,
    tmp_path: Path,
    clock: SettableClock,
    chat_server: Any,
    script_by_prompt: Any,
) -> None:
    chat_server.script = script_by_prompt(
        {
            "standalone": {
                "facts": [
                    {
                        "text": "Maya signed a lease for a flat in Graça on 2025-03-01",
                        "category": "decision",
                        "temporal_type": "persistent",
                        "valid_until": None,
                        "entities": ["Maya", "Graça"],
                        "confidence": 0.9,
                    },
                    {
                        "text": "Maya plans to take Lena to Sintra",
                        "category": "plan",
                        "temporal_type": "time_bounded",
                        "valid_until": "2025-03-08T00:00:00+00:00",
                        "entities": ["Lena"],
                        "confidence": 0.8,
                    },
                ]
            },
            "Merge": {"text": "merged by llm"},
            "contradict": {"contradicts": False},
            "relation": {"relations": []},
        }
    )
    with _memory(store_target, tmp_path, clock, chat_server) as m:
        res = m.observe(
            "We decided to sign the lease in Graça, and I want to take Lena to Sintra.", user_id="u", session_id="s"
        )
        assert [r.action for r in res] == [Action.CREATE, Action.CREATE]
        recs = m.store.get([r.id for r in res if r.id])
        plan = next(r for r in recs.values() if r.category == "plan")
        assert plan.valid_until is not None and "entity://name/lena" in plan.entities
        hist = m.history(plan.id)[0]
        assert hist.data["path"] == "llm" and hist.data["formation"] == "llm"


def test_llm_failures_fall_back_to_heuristics_nothing_lost(
    store_target: str,
    tmp_path: Path,
    clock: SettableClock,
    chat_server: Any,
    script_by_prompt: Any,
) -> None:
    chat_server.script = lambda req: (200, "this is not json", 0.0)
    with _memory(store_target, tmp_path, clock, chat_server) as m:
        res = m.observe("Actually the staging port should be 5433, I was wrong", user_id="u", session_id="s")
        assert res[0].action is Action.CREATE
        rec = m.store.get([res[0].id])[res[0].id]
        assert "5433" in rec.content and m.history(rec.id)[0].data["path"] == "heuristic"
        chat_server.script = lambda req: (200, "{}", 2.0)  # timeouts now
        base = m.add("User prefers dark mode in the editor", user_id="u")
        up = m.add("User prefers dark mode in the editor, with a high-contrast theme and 14pt font", user_id="u")
        assert up.action is Action.UPDATE and up.id == base.id
        merged = m.store.get([base.id])[base.id]
        assert "high-contrast" in merged.content and merged.status is Status.ACTIVE


def test_llm_contradiction_verdict_supersedes(
    store_target: str,
    tmp_path: Path,
    clock: SettableClock,
    chat_server: Any,
    script_by_prompt: Any,
) -> None:
    chat_server.script = script_by_prompt(
        {
            "Merge": {"text": "unused"},
            "contradict": {"contradicts": True, "reason": "the theme changed"},
            "relation": {"relations": []},
        }
    )
    with _memory(store_target, tmp_path, clock, chat_server) as m:
        old = m.add("User prefers dark mode in the editor", user_id="u")
        new = m.add("User prefers dark mode in the editor, with a high-contrast theme and 14pt font", user_id="u")
        assert new.action is Action.SUPERSEDE and "(llm" in new.reason and "the theme changed" in new.reason
        assert m.store.get([old.id])[old.id].status is Status.SUPERSEDED
        # the verdict and its reason are in the history of both memories
        superseded = next(e for e in m.history(old.id) if e.event == "superseded")
        assert superseded.data["path"] == "llm" and "the theme changed" in superseded.reason
        created = next(e for e in m.history(new.id) if e.event == "created")
        assert created.data["llm_verdicts"][0] == {"id": old.id, "updates": True, "reason": "the theme changed"}


def test_llm_merge_on_update(
    store_target: str,
    tmp_path: Path,
    clock: SettableClock,
    chat_server: Any,
    script_by_prompt: Any,
) -> None:
    chat_server.script = script_by_prompt(
        {
            "Merge": {"text": "User prefers dark mode with a high-contrast theme"},
            "contradict": {"contradicts": False},
            "relation": {"relations": []},
        }
    )
    with _memory(store_target, tmp_path, clock, chat_server) as m:
        base = m.add("User prefers dark mode in the editor", user_id="u")
        up = m.add("User prefers dark mode in the editor, with a high-contrast theme and 14pt font", user_id="u")
        assert up.action is Action.UPDATE
        assert m.store.get([base.id])[base.id].content == "User prefers dark mode with a high-contrast theme"
        updated = next(e for e in m.history(base.id) if e.event == "updated")
        assert updated.data["merge"] == "llm" and updated.data["gate"] == "llm"


# -- observer classification, emotion and box topics: LLM-primary, strictly validated ---------------

EXTRACTED = {
    "facts": [
        {
            "text": "User's flat in Graça has a balcony facing the river",
            "category": "fact",
            "temporal_type": "persistent",
            "valid_until": None,
            "entities": ["Graça"],
            "confidence": 0.9,
        }
    ]
}
GOOD = {
    "Classify one": {"kind": "decision", "confidence": 0.9},
    "Rate the emotion": {"valence": 0.8, "arousal": 0.9, "label": "joy"},
    "topic keywords": {"topics": ["balcony", "flat", "river"]},
    "standalone": EXTRACTED,
    "Merge": {"text": "merged"},
    "contradict": {"contradicts": False},
    "relation": {"relations": []},
}
BALCONY = "The flat in Graça has a lovely balcony facing the river"


def _ops(m: Memory, tmp_path: Path) -> list[dict[str, Any]]:
    m.ops.flush()
    return [json.loads(line) for line in (tmp_path / "ops.jsonl").read_text().splitlines()]


def test_llm_observer_emotion_and_topics(
    store_target: str,
    tmp_path: Path,
    clock: SettableClock,
    chat_server: Any,
    script_by_prompt: Any,
) -> None:
    chat_server.script = script_by_prompt(GOOD)
    with _memory(store_target, tmp_path, clock, chat_server) as m:
        # the heuristic patterns see nothing here (it would be buffered); the LLM calls it a decision: HIGH signal
        res = m.observe(BALCONY, user_id="u", session_id="s")
        assert [r.action for r in res] == [Action.CREATE]
        rec = m.store.get([res[0].id])[res[0].id]
        assert (rec.emotion_valence, rec.emotion_arousal, rec.emotion_label) == (0.8, 0.9, "joy")
        assert rec.flashbulb and rec.pinned and rec.importance >= 0.9  # seed 001: arousal >= 0.8
        box = m.store.open_box("u", "s")
        assert box is not None and box.id == rec.box_id
        assert box.topic[:4] == ["graca", "balcony", "flat", "river"]
        created = m.history(rec.id)[0]
        assert created.data["classification"] == created.data["formation"] == "llm"
        assert created.data["emotion"] == "llm" and created.data["box_topics"] == "llm"
        assert "fallbacks" not in created.data
        classify_req = next(r for r in chat_server.requests if "Classify one" in r["messages"][0]["content"])
        assert classify_req["messages"][1]["content"] == BALCONY
        ops = _ops(m, tmp_path)
        assert any(e["op"] == "classification" and e["success"] for e in ops)
        assert not any(e["op"] == "llm_fallback" for e in ops)


def test_llm_classification_on_add_and_heuristic_formation(
    store_target: str,
    tmp_path: Path,
    clock: SettableClock,
    chat_server: Any,
    script_by_prompt: Any,
) -> None:
    chat_server.script = script_by_prompt({**GOOD, "Classify one": {"kind": "preference", "confidence": 0.7}})
    with _memory(store_target, tmp_path, clock, chat_server) as m:
        res = m.add("The flat in Graça has a balcony facing the river", user_id="u")
        rec = m.store.get([res.id])[res.id]
        assert rec.category == "preference"
        assert m.history(rec.id)[0].data["classification"] == "llm"


BAD_CLASSIFY = [
    {"kind": "opinion", "confidence": 0.5},
    {"kind": "decision", "confidence": 1.5},
    {"kind": "decision", "confidence": True},
    {"kind": "decision", "confidence": "0.9"},
    {"kind": ["decision"], "confidence": 0.5},
    {"confidence": 0.5},
    {"kind": "decision"},
]
BAD_EMOTION = [
    {"valence": 2, "arousal": 0.5, "label": "joy"},
    {"valence": 0.5, "arousal": -0.1, "label": "joy"},
    {"valence": 0.5, "arousal": 0.5, "label": "happy"},
    {"valence": 0.5, "arousal": 0.5},
    {"valence": "high", "arousal": 0.5, "label": None},
    {"valence": 0.5, "arousal": False, "label": None},
    {"valence": float("nan"), "arousal": 0.5, "label": None},
]
BAD_TOPICS = [
    {"topics": "balcony"},
    {"topics": []},
    {"topics": [1, 2]},
    {"topics": ["two words"]},
    {"topics": [f"w{i}" for i in range(13)]},
    {"topics": [""]},
    {"topic": ["balcony"]},
]


@pytest.mark.parametrize("answer", BAD_CLASSIFY)
def test_classification_answer_validated_strictly(chat_server: Any, answer: dict[str, Any]) -> None:
    chat_server.script = lambda req: (200, json.dumps(answer), 0.0)
    assert llm_stages.classify_message(_client(chat_server), "We decided on the flat") is None


@pytest.mark.parametrize("answer", BAD_EMOTION)
def test_emotion_answer_validated_strictly(chat_server: Any, answer: dict[str, Any]) -> None:
    chat_server.script = lambda req: (200, json.dumps(answer), 0.0)
    assert llm_stages.detect_emotion(_client(chat_server), "I love it!") is None


@pytest.mark.parametrize("answer", BAD_TOPICS)
def test_topics_answer_validated_strictly(chat_server: Any, answer: dict[str, Any]) -> None:
    chat_server.script = lambda req: (200, json.dumps(answer), 0.0)
    assert llm_stages.box_topics(_client(chat_server), "balcony over the river", max_topics=12) is None


def test_valid_stage_answers_and_bounded_prompts(chat_server: Any, script_by_prompt: Any) -> None:
    chat_server.script = script_by_prompt(
        {
            "Classify one": {"kind": "fact", "confidence": 1},
            "Rate the emotion": {"valence": -1, "arousal": 0, "label": None},
            "topic keywords": {"topics": ["Balcony", "river", "river"]},
        }
    )
    client = _client(chat_server)
    assert llm_stages.classify_message(client, "x" * 10_000, limit=300) == ("fact", 1.0)
    assert llm_stages.detect_emotion(client, "Kahvemi döktüm", limit=300) == Emotion(-1.0, 0.0, None)
    assert llm_stages.box_topics(client, "y" * 10_000, max_topics=3, limit=300) == ["balcony", "river"]
    assert all(len(r["messages"][1]["content"]) <= 300 for r in chat_server.requests)


def _stored_after_failures(m: Memory) -> list[Any]:
    """Observe a session of turns and end it: every kept turn must be stored (nothing lost)."""
    turns = [
        "Actually the staging port should be 5433, I was wrong",
        BALCONY,
        "My sister Lena lives in Seattle near the lake",
    ]
    for text in turns:
        m.observe(text, user_id="u", session_id="s")
    m.end_session("s", user_id="u")
    stored = m.list(user_id="u", filters={"layer": ["working", "episodic"]})
    texts = " ".join(r.content for r in stored)
    assert "5433" in texts and "balcony" in texts and "Seattle" in texts
    return stored


@pytest.mark.parametrize("failure", ["wrong types", "invalid json", "timeout"])
def test_stage_failures_fall_back_to_heuristics_nothing_lost(
    store_target: str,
    tmp_path: Path,
    clock: SettableClock,
    chat_server: Any,
    script_by_prompt: Any,
    failure: str,
) -> None:
    if failure == "wrong types":
        chat_server.script = script_by_prompt(
            {
                "Classify one": {"kind": "opinion", "confidence": 2},
                "Rate the emotion": {"valence": "very"},
                "topic keywords": {"topics": "all"},
                "standalone": {"facts": "none"},
                "Merge": {"text": 3},
                "contradict": {"contradicts": "maybe"},
                "relation": {"relations": [{"index": True, "type": "x"}]},
            }
        )
    elif failure == "invalid json":
        chat_server.script = lambda req: (200, "{'kind': decision", 0.0)
    else:
        chat_server.script = lambda req: (200, json.dumps(GOOD["Classify one"]), 1.0)
    with _memory(store_target, tmp_path, clock, chat_server, breaker_failures=100) as m:
        stored = _stored_after_failures(m)
        for rec in stored:
            created = next(e for e in m.history(rec.id) if e.event == "created")
            assert created.data["path"] == "heuristic"
            assert (
                created.data["classification"] == created.data["emotion"] == created.data["box_topics"] == ("heuristic")
            )
            assert {"observer", "formation", "emotion", "topics"} <= set(created.data["fallbacks"])
        ops = _ops(m, tmp_path)
        fell = {e["stage"] for e in ops if e["op"] == "llm_fallback"}
        assert {"observer", "formation", "emotion", "topics"} <= fell
        assert all(e["fallback"] for e in ops if e["op"] == "write")
        assert any(e["op"] == "emotion" and e["success"] is False for e in ops) or failure == "wrong types"


def test_circuit_breaker_open_falls_back_without_calls(
    store_target: str,
    tmp_path: Path,
    clock: SettableClock,
    chat_server: Any,
) -> None:
    chat_server.script = lambda req: (500, "{}", 0.0)
    with _memory(store_target, tmp_path, clock, chat_server, breaker_failures=2, breaker_cooldown_s=3600) as m:
        stored = _stored_after_failures(m)
        assert len(chat_server.requests) == 2  # the breaker opened after two failures: no further calls
        assert all(m.history(r.id)[0].data["emotion"] == "heuristic" for r in stored)
        ops = _ops(m, tmp_path)
        assert sum(e.get("error") == "circuit open" for e in ops) >= 5


def test_llm_stages_setting_limits_what_is_asked(
    store_target: str,
    tmp_path: Path,
    clock: SettableClock,
    chat_server: Any,
    script_by_prompt: Any,
) -> None:
    chat_server.script = script_by_prompt(GOOD)
    cfg = {
        "opslog": {"path": str(tmp_path / "ops.jsonl")},
        "llm": {"base_url": chat_server.url, "retries": 0},
        "write": {"llm_stages": ["formation"]},
    }
    with Memory(store_target, config=cfg, clock=clock, embedder=HashEmbedder(64)) as m:
        m.add("The flat in Graça has a balcony facing the river", user_id="u")
        assert chat_server.requests == []  # add() forms heuristically; only "formation" may ask
        m.observe("Actually the staging port should be 5433, I was wrong", user_id="u", session_id="s")
        prompts = {r["messages"][0]["content"][:20] for r in chat_server.requests}
        assert len(prompts) == 1 and "standalone" in chat_server.requests[0]["messages"][0]["content"]
    with pytest.raises(ValueError, match=r"unknown write\.llm_stages"):
        WriteSettings(llm_stages=["mood"])
