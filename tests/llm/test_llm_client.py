"""The LLM client against a real local HTTP server: JSON answers, retries, timeouts, breaker."""

from __future__ import annotations

import json
from typing import Any

from pydantic import SecretStr

from reverie.config.core import LLMSettings
from reverie.llm import LLMClient, make_llm


def _client(server: Any, **kw: Any) -> tuple[LLMClient, list[dict[str, Any]]]:
    calls: list[dict[str, Any]] = []
    settings = LLMSettings(base_url=server.url, api_key=SecretStr("sk-test"), timeout_s=0.5, retries=1, **kw)
    return LLMClient(settings, on_call=calls.append), calls


def test_json_answer_and_request_shape(chat_server: Any) -> None:
    chat_server.script = lambda req: (200, '```json\n{"ok": true}\n```', 0.0)
    client, calls = _client(chat_server)
    assert client.chat_json(system="sys", user="hello", op="test") == {"ok": True}
    req = chat_server.requests[0]
    assert req["model"] == "gpt-4o-mini" and req["response_format"] == {"type": "json_object"}
    assert req["messages"] == [{"role": "system", "content": "sys"}, {"role": "user", "content": "hello"}]
    assert calls[0]["success"] is True and calls[0]["op"] == "test"


def test_invalid_json_gives_none(chat_server: Any) -> None:
    chat_server.script = lambda req: (200, "not json at all", 0.0)
    client, calls = _client(chat_server)
    assert client.chat_json(system="s", user="u", op="x") is None
    assert len(chat_server.requests) == 1 and "invalid JSON" in calls[0]["error"]
    chat_server.script = lambda req: (200, json.dumps([1, 2]), 0.0)
    assert client.chat_json(system="s", user="u", op="x") is None


def test_timeout_retries_then_none(chat_server: Any) -> None:
    chat_server.script = lambda req: (200, "{}", 1.0)
    client, calls = _client(chat_server)
    assert client.chat_json(system="s", user="u", op="x") is None
    assert len(chat_server.requests) == 2 and "timeout" in calls[0]["error"]


def test_server_error_retried_and_recovers(chat_server: Any) -> None:
    answers = iter([(500, "{}", 0.0), (200, '{"n": 1}', 0.0)])
    chat_server.script = lambda req: next(answers)
    client, _ = _client(chat_server)
    assert client.chat_json(system="s", user="u", op="x") == {"n": 1}


def test_circuit_breaker_opens_and_half_opens(chat_server: Any) -> None:
    now = [0.0]
    chat_server.script = lambda req: (500, "{}", 0.0)
    settings = LLMSettings(base_url=chat_server.url, retries=0, breaker_failures=2, breaker_cooldown_s=30)
    client = LLMClient(settings, clock=lambda: now[0])
    assert client.chat_json(system="s", user="u", op="x") is None
    assert client.chat_json(system="s", user="u", op="x") is None
    assert client.breaker.is_open and len(chat_server.requests) == 2
    assert client.chat_json(system="s", user="u", op="x") is None
    assert len(chat_server.requests) == 2  # open: no call
    now[0] = 31.0
    chat_server.script = lambda req: (200, '{"ok": 1}', 0.0)
    assert client.chat_json(system="s", user="u", op="x") == {"ok": 1}
    assert not client.breaker.is_open


def test_make_llm_is_optional() -> None:
    assert make_llm(LLMSettings()) is None
