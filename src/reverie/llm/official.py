"""The official ``openai`` client (sync or async) as reverie's LLM, and what ``Memory(llm=...)`` accepts.

``Memory(llm=openai.OpenAI())``, ``Memory(llm=openai.AsyncOpenAI(base_url="http://127.0.0.1:11434/v1"))``
or ``Memory(llm="http://127.0.0.1:8000/v1")``: :func:`as_llm` turns each into an object with
``chat_json(system=, user=, op=)`` — the only thing the write path and the dream cycle ask of an
LLM — and refuses anything else when the ``Memory`` is built, not on the first ``add``.

An async client's requests run on the event loop of the :class:`~reverie.AsyncMemory` call that
needs them (the loop the client belongs to); used from the synchronous ``Memory`` they run on one
private event loop in a background thread, so the client's connection pool always sees one loop.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import threading
import time
from collections.abc import Coroutine
from typing import Any
from urllib.parse import urlsplit

from reverie._context import CALLER_LOOP
from reverie.config.core import LLMSettings
from reverie.errors import InvalidInputError
from reverie.llm.client import CallHook, ChatJSON, CircuitBreaker, LLMClient


class _LoopThread:
    """One private event loop in a daemon thread, for async clients used from synchronous code."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name="reverie-llm-loop", daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(timeout=5)
        self.loop.close()


class OpenAIChat:
    """:class:`~reverie.llm.client.ChatJSON` over an official ``openai`` client (``OpenAI`` or
    ``AsyncOpenAI``, or any object with the same ``chat.completions.create``).

    JSON mode, temperature 0, the model of ``model`` (else ``llm.model``). Retries are the client's
    own (``max_retries``); reverie adds its circuit breaker (``llm.breaker_failures``,
    ``llm.breaker_cooldown_s``) and reports each call to ``on_call`` (the ops log). A failed call,
    an answer that is not a JSON object, or an open breaker gives ``None``: the caller falls back to
    its heuristic, nothing is lost."""

    def __init__(
        self,
        client: Any,
        *,
        model: str | None = None,
        settings: LLMSettings | None = None,
        on_call: CallHook | None = None,
    ) -> None:
        settings = settings or LLMSettings()
        create = getattr(getattr(getattr(client, "chat", None), "completions", None), "create", None)
        if not callable(create):
            raise InvalidInputError("an OpenAI client needs chat.completions.create (openai.OpenAI or AsyncOpenAI)")
        if model is not None and (not isinstance(model, str) or not model.strip()):
            raise InvalidInputError("model must be a non-empty string")
        self.client = client
        self.model = model or settings.model
        self.settings = settings
        self.on_call = on_call
        self.breaker = CircuitBreaker(
            settings.breaker_failures,
            settings.breaker_cooldown_s,
            label=f"model {self.model!r} at {self.base_url or type(client).__name__}",
        )
        self._create = create
        self._private: _LoopThread | None = None
        self._private_lock = threading.Lock()

    @property
    def base_url(self) -> str:
        return str(getattr(self.client, "base_url", ""))

    def chat_json(self, *, system: str, user: str, op: str) -> dict[str, Any] | None:
        if self.breaker.is_open:
            self.breaker.refused(op)
            self._report(op, 0.0, success=False, error="circuit open")
            return None
        start = time.monotonic()
        try:
            answer = self._create(
                model=self.model,
                messages=[{"role": "system", "content": system}, {"role": "user", "content": user}],
                response_format={"type": "json_object"},
                temperature=0,
                timeout=self.settings.timeout_s,
            )
            if inspect.isawaitable(answer):
                answer = self._await(answer)
            value = _json_object(answer.choices[0].message.content)
        except Exception as exc:  # any client failure means "no LLM answer": fall back
            error = f"{type(exc).__name__}: {exc}"
            self.breaker.failure(op, error[:200])
            self._report(op, time.monotonic() - start, success=False, error=error)
            return None
        self.breaker.success()
        self._report(op, time.monotonic() - start, success=True)
        return value

    def _await(self, awaitable: Any) -> Any:
        coro: Coroutine[Any, Any, Any] = _as_coroutine(awaitable)
        loop = CALLER_LOOP.get()
        if loop is not None and loop.is_running() and not _runs_here(loop):
            return asyncio.run_coroutine_threadsafe(coro, loop).result(timeout=self.settings.timeout_s * 2 + 5)
        with self._private_lock:
            if self._private is None:
                self._private = _LoopThread()
            private = self._private
        return asyncio.run_coroutine_threadsafe(coro, private.loop).result(timeout=self.settings.timeout_s * 2 + 5)

    def close(self) -> None:
        with self._private_lock:
            if self._private is not None:
                self._private.close()
                self._private = None

    def _report(self, op: str, seconds: float, *, success: bool, error: str | None = None) -> None:
        if self.on_call is None:
            return
        event: dict[str, Any] = {"op": op, "model": self.model, "latencyMs": round(seconds * 1000), "success": success}
        if error is not None:
            event["error"] = error[:200]
        self.on_call(event)

    def __repr__(self) -> str:
        return f"OpenAIChat({type(self.client).__name__}, model={self.model!r}, base_url={self.base_url!r})"


def _runs_here(loop: asyncio.AbstractEventLoop) -> bool:
    try:
        return asyncio.get_running_loop() is loop
    except RuntimeError:
        return False


async def _await_any(awaitable: Any) -> Any:
    return await awaitable


def _as_coroutine(awaitable: Any) -> Coroutine[Any, Any, Any]:
    return awaitable if inspect.iscoroutine(awaitable) else _await_any(awaitable)


def _json_object(content: Any) -> dict[str, Any]:
    if not isinstance(content, str):
        raise ValueError("the answer has no text content")
    text = content.strip()
    if text.startswith("```"):
        text = text.split("\n", 1)[1] if "\n" in text else ""
        text = text.rsplit("```", 1)[0]
    value = json.loads(text)
    if not isinstance(value, dict):
        raise ValueError("the answer is not a JSON object")
    return value


ACCEPTED = (
    "an openai.OpenAI or openai.AsyncOpenAI client, an OpenAI-compatible base URL such as "
    "'http://127.0.0.1:11434/v1' (Ollama), or an object with chat_json(system=, user=, op=)"
)


def as_llm(llm: Any, settings: LLMSettings, *, on_call: CallHook | None = None) -> ChatJSON | None:
    """What ``Memory(llm=...)`` accepts, as a :class:`ChatJSON` (``None`` stays ``None``)."""
    if llm is None:
        return None
    if isinstance(llm, ChatJSON):
        return llm
    if isinstance(llm, str):
        parts = urlsplit(llm)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise InvalidInputError(f"llm={llm!r} is not an http(s) URL; Memory(llm=...) takes {ACCEPTED}")
        return LLMClient(settings.model_copy(update={"base_url": llm}), on_call=on_call)
    create = getattr(getattr(getattr(llm, "chat", None), "completions", None), "create", None)
    if callable(create):
        return OpenAIChat(llm, settings=settings, on_call=on_call)
    raise InvalidInputError(f"Memory(llm=...) takes {ACCEPTED}; got {type(llm).__name__}")


__all__ = ["ACCEPTED", "CALLER_LOOP", "OpenAIChat", "as_llm"]
