"""The intent router is LLM-primary with the keyword rules as fallback (a scripted local server)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from reverie import Memory, SettableClock
from reverie.embed.testing import HashEmbedder


def _memory(tmp_path: Path, clock: SettableClock, server: Any, **read: object) -> Memory:
    cfg: dict[str, Any] = {
        "opslog": {"path": str(tmp_path / "ops.jsonl")},
        "read": read,
        "llm": {"base_url": server.url, "timeout_s": 0.5, "retries": 0},
    }
    return Memory(tmp_path / "m.db", config=cfg, clock=clock, embedder=HashEmbedder(64))


def _intent(mem: Memory, query: str) -> tuple[str, str]:
    hits = mem.search(query, user_id="u")
    assert hits, "the stored memory is found"
    query_info = hits[0].explain
    return str(query_info["intent"]), mem._reader.route(query)[0].matched


def _route_requests(server: Any) -> list[dict[str, Any]]:
    return [r for r in server.requests if "route a question" in r["messages"][0]["content"]]


def test_the_llm_names_the_intent_first(tmp_path: Path, clock: SettableClock, chat_server: Any) -> None:
    # "what" makes the keywords say factual; the LLM reads it as a question about causes
    chat_server.script = lambda req: (
        200,
        json.dumps({"intent": "causal"} if "route a question" in req["messages"][0]["content"] else {}),
        0.0,
    )
    with _memory(tmp_path, clock, chat_server) as mem:
        mem.add("The build broke because the cache key ignored the lockfile", user_id="u", infer=False)
        intent, matched = _intent(mem, "what made the build break")
        assert (intent, matched) == ("causal", "llm")
        asked = len(_route_requests(chat_server))
        mem.search("what made the build break", user_id="u")  # cached: no second call
        assert len(_route_requests(chat_server)) == asked


def test_an_unusable_answer_falls_back_to_the_keywords(tmp_path: Path, clock: SettableClock, chat_server: Any) -> None:
    chat_server.script = lambda req: (200, json.dumps({"intent": "astrology"}), 0.0)
    with _memory(tmp_path, clock, chat_server) as mem:
        mem.add("The build broke because the cache key ignored the lockfile", user_id="u", infer=False)
        assert _intent(mem, "why did the build break") == ("causal", "why")
        assert _route_requests(chat_server)


def test_the_llm_router_can_be_switched_off(tmp_path: Path, clock: SettableClock, chat_server: Any) -> None:
    chat_server.script = lambda req: (200, json.dumps({"intent": "causal"}), 0.0)
    with _memory(tmp_path, clock, chat_server, llm_router=False) as mem:
        mem.add("The build broke because the cache key ignored the lockfile", user_id="u", infer=False)
        assert _intent(mem, "what made the build break")[0] == "factual"
        assert not _route_requests(chat_server)
