"""The write path's LLM-primary stages against a scripted local server, and their fallbacks."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from reverie import Memory, SettableClock
from reverie.embed.testing import HashEmbedder
from reverie.model import Status
from reverie.results import Action


def _memory(store_target: str, tmp_path: Path, clock: SettableClock, server: Any, **llm: object) -> Memory:
    cfg = {"opslog": {"path": str(tmp_path / "ops.jsonl")},
           "llm": {"base_url": server.url, "timeout_s": 0.5, "retries": 0, **llm}}
    return Memory(store_target, config=cfg, clock=clock, embedder=HashEmbedder(64))


def test_llm_extraction_merge_contradiction_relations(
    store_target: str, tmp_path: Path, clock: SettableClock, chat_server: Any,
    script_by_prompt: Any,
) -> None:
    chat_server.script = script_by_prompt({
        "standalone": {"facts": [
            {"text": "Maya signed a lease for a flat in Graça on 2025-03-01", "category": "decision",
             "temporal_type": "persistent", "valid_until": None, "entities": ["Maya", "Graça"], "confidence": 0.9},
            {"text": "Maya plans to take Lena to Sintra", "category": "plan", "temporal_type": "time_bounded",
             "valid_until": "2025-03-08T00:00:00+00:00", "entities": ["Lena"], "confidence": 0.8}]},
        "Merge": {"text": "merged by llm"},
        "contradict": {"contradicts": False},
        "relation": {"relations": []},
    })
    with _memory(store_target, tmp_path, clock, chat_server) as m:
        res = m.observe("We decided to sign the lease in Graça, and I want to take Lena to Sintra.", user_id="u",
                        session_id="s")
        assert [r.action for r in res] == [Action.CREATE, Action.CREATE]
        recs = m.store.get([r.id for r in res if r.id])
        plan = next(r for r in recs.values() if r.category == "plan")
        assert plan.valid_until is not None and "entity://name/lena" in plan.entities
        hist = m.history(plan.id)[0]
        assert hist.data["path"] == "llm" and hist.data["formation"] == "llm"


def test_llm_failures_fall_back_to_heuristics_nothing_lost(
    store_target: str, tmp_path: Path, clock: SettableClock, chat_server: Any,
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
    store_target: str, tmp_path: Path, clock: SettableClock, chat_server: Any,
    script_by_prompt: Any,
) -> None:
    chat_server.script = script_by_prompt({"Merge": {"text": "unused"}, "contradict": {"contradicts": True},
                                    "relation": {"relations": []}})
    with _memory(store_target, tmp_path, clock, chat_server) as m:
        old = m.add("User prefers dark mode in the editor", user_id="u")
        new = m.add("User prefers dark mode in the editor, with a high-contrast theme and 14pt font", user_id="u")
        assert new.action is Action.SUPERSEDE and new.reason.endswith("(llm)")
        assert m.store.get([old.id])[old.id].status is Status.SUPERSEDED


def test_llm_synthesis_on_update(
    store_target: str, tmp_path: Path, clock: SettableClock, chat_server: Any,
    script_by_prompt: Any,
) -> None:
    chat_server.script = script_by_prompt({"Merge": {"text": "User prefers dark mode with a high-contrast theme"},
                                    "contradict": {"contradicts": False},
                                    "relation": {"relations": []}})
    with _memory(store_target, tmp_path, clock, chat_server) as m:
        base = m.add("User prefers dark mode in the editor", user_id="u")
        up = m.add("User prefers dark mode in the editor, with a high-contrast theme and 14pt font", user_id="u")
        assert up.action is Action.UPDATE
        assert m.store.get([base.id])[base.id].content == "User prefers dark mode with a high-contrast theme"
        updated = next(e for e in m.history(base.id) if e.event == "updated")
        assert updated.data["synthesis"] == "llm" and updated.data["gate"] == "llm"
