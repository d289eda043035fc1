"""``Memory(llm=...)`` with the official ``openai`` package (sync and async clients) and a base URL,
against the loopback OpenAI-compatible server (real HTTP, both storage backends)."""

from __future__ import annotations

import asyncio
import json
import threading
from pathlib import Path
from typing import Any

import pytest

from reverie import AsyncMemory, Memory, SettableClock
from reverie.embed.testing import HashEmbedder
from reverie.errors import InvalidInputError
from reverie.llm import OpenAIChat
from reverie.results import Action

openai = pytest.importorskip("openai")

ANSWERS: dict[str, Any] = {
    "standalone": {
        "facts": [
            {
                "text": "Maya signed a lease for a flat in Graça",
                "category": "decision",
                "temporal_type": "persistent",
                "valid_until": None,
                "entities": ["Maya", "Graça"],
                "confidence": 0.9,
            },
            {
                "text": "Maya plans to take Lena to Sintra",
                "category": "plan",
                "temporal_type": "persistent",
                "valid_until": None,
                "entities": ["Lena"],
                "confidence": 0.8,
            },
        ]
    },
    "Merge": {"text": "merged by llm"},
    "contradict": {"contradicts": False},
    "relation": {"relations": []},
}
TURN = "We decided to sign the lease in Graça, and I want to take Lena to Sintra."


def _memory(target: str, tmp_path: Path, clock: SettableClock, llm: Any, **llm_cfg: Any) -> Memory:
    cfg = {"opslog": {"path": str(tmp_path / "ops.jsonl")}, "llm": {"model": "test-model", **llm_cfg}}
    return Memory(target, config=cfg, clock=clock, embedder=HashEmbedder(64), llm=llm)


def _extracted_by_llm(mem: Memory) -> None:
    res = mem.observe(TURN, user_id="u", session_id="s")
    assert [r.action for r in res] == [Action.CREATE, Action.CREATE]
    recs = mem.store.get([r.id for r in res if r.id])
    assert {r.content for r in recs.values()} == {f["text"] for f in ANSWERS["standalone"]["facts"]}
    assert all(mem.history(i)[0].data["path"] == "llm" for i in recs)


def test_the_sync_openai_client(
    store_target: str, tmp_path: Path, clock: SettableClock, chat_server: Any, script_by_prompt: Any
) -> None:
    chat_server.script = script_by_prompt(ANSWERS)
    client = openai.OpenAI(base_url=chat_server.url, api_key="test-key", max_retries=0)
    with _memory(store_target, tmp_path, clock, client) as mem:
        assert isinstance(mem.llm, OpenAIChat) and mem.llm.model == "test-model"
        _extracted_by_llm(mem)
    sent = chat_server.requests[0]
    assert sent["model"] == "test-model" and sent["response_format"] == {"type": "json_object"}
    assert sent["temperature"] == 0
    client.close()  # the caller's client stays the caller's: Memory.close() did not close it


def test_the_async_openai_client_from_the_sync_memory(
    store_target: str, tmp_path: Path, clock: SettableClock, chat_server: Any, script_by_prompt: Any
) -> None:
    chat_server.script = script_by_prompt(ANSWERS)
    client = openai.AsyncOpenAI(base_url=chat_server.url, api_key="test-key", max_retries=0)
    with _memory(store_target, tmp_path, clock, client) as mem:
        _extracted_by_llm(mem)
        loops = [t for t in threading.enumerate() if t.name == "reverie-llm-loop"]
        assert loops  # the async client runs on one private loop ...
    assert not [t for t in threading.enumerate() if t.name == "reverie-llm-loop" and t.is_alive()]  # ... closed


def test_a_base_url_and_a_model_setting(
    store_target: str, tmp_path: Path, clock: SettableClock, chat_server: Any, script_by_prompt: Any
) -> None:
    chat_server.script = script_by_prompt(ANSWERS)
    with _memory(store_target, tmp_path, clock, chat_server.url, retries=0) as mem:
        _extracted_by_llm(mem)
    assert chat_server.requests[0]["model"] == "test-model"
    client = openai.OpenAI(base_url=chat_server.url, api_key="k", max_retries=0)
    with Memory(
        store_target,
        config={"opslog": {"enabled": False}},
        clock=clock,
        embedder=HashEmbedder(64),
        llm=OpenAIChat(client, model="llama3.1:8b"),
    ) as mem:
        mem.observe(TURN, user_id="v", session_id="s")
    assert chat_server.requests[-1]["model"] == "llama3.1:8b"
    client.close()


def test_a_failing_endpoint_falls_back_to_heuristics_and_is_logged(
    store_target: str, tmp_path: Path, clock: SettableClock, chat_server: Any
) -> None:
    chat_server.script = lambda req: (500, "{}", 0.0)
    client = openai.OpenAI(base_url=chat_server.url, api_key="k", max_retries=0)
    with _memory(store_target, tmp_path, clock, client) as mem:
        res = mem.observe("Actually the staging port should be 5433, I was wrong", user_id="u", session_id="s")
        assert res[0].action is Action.CREATE
        assert mem.history(res[0].id)[0].data["path"] == "heuristic"
    events = [json.loads(line) for line in (tmp_path / "ops.jsonl").read_text().splitlines()]
    failed = [e for e in events if e.get("success") is False]
    assert failed and "InternalServerError" in failed[0]["error"]
    client.close()


@pytest.mark.parametrize("bad", [object(), "not a url", "ftp://host/v1", 42])
def test_anything_else_is_refused_when_the_memory_is_built(tmp_path: Path, bad: Any) -> None:
    target = tmp_path / "never.db"
    with pytest.raises(InvalidInputError) as err:
        Memory(target, embedder=HashEmbedder(64), llm=bad)
    assert "openai.OpenAI" in str(err.value) and "base URL" in str(err.value)
    assert not target.exists()  # refused before anything was created


def test_async_client_inside_a_running_loop_with_the_sync_memory(
    tmp_path: Path, clock: SettableClock, chat_server: Any, script_by_prompt: Any
) -> None:
    """A sync Memory called from async code (no AsyncMemory) must not deadlock its own loop."""
    chat_server.script = script_by_prompt(ANSWERS)

    async def main() -> None:
        client = openai.AsyncOpenAI(base_url=chat_server.url, api_key="k", max_retries=0)
        with _memory(str(tmp_path / "m.db"), tmp_path, clock, client) as mem:
            _extracted_by_llm(mem)
        await client.close()

    asyncio.run(main())


def test_an_async_openai_client_runs_on_the_callers_loop(
    tmp_path: Path, clock: SettableClock, chat_server: Any, script_by_prompt: Any
) -> None:
    import httpx

    chat_server.script = script_by_prompt(
        {
            "standalone": {
                "facts": [
                    {
                        "text": "Maya signed a lease for a flat in Graça",
                        "category": "decision",
                        "temporal_type": "persistent",
                        "valid_until": None,
                        "entities": ["Maya"],
                        "confidence": 0.9,
                    }
                ]
            },
            "Merge": {"text": "m"},
            "contradict": {"contradicts": False},
            "relation": {"relations": []},
        }
    )
    seen: list[asyncio.AbstractEventLoop] = []

    async def hook(_request: httpx.Request) -> None:
        seen.append(asyncio.get_running_loop())

    async def main() -> None:
        http = httpx.AsyncClient(event_hooks={"request": [hook]})
        client = openai.AsyncOpenAI(base_url=chat_server.url, api_key="k", max_retries=0, http_client=http)
        async with AsyncMemory(
            tmp_path / "m.db", config={"opslog": {"enabled": False}}, clock=clock, embedder=HashEmbedder(64), llm=client
        ) as mem:
            res = await mem.observe("We decided to sign the lease in Graça", user_id="maya", session_id="s")
            assert res[0].action is Action.CREATE
            assert (await mem.history(res[0].id))[0].data["path"] == "llm"
        assert seen and all(loop is asyncio.get_running_loop() for loop in seen)
        await client.close()

    asyncio.run(main())
