"""An OpenAI-compatible ``/chat/completions`` client that answers JSON objects — or ``None``.

Never required: every caller has a heuristic fallback. Timeouts, connection errors and 5xx
answers are retried (``retries``); invalid JSON counts as a failure. After ``breaker_failures``
consecutive failures the circuit opens for ``breaker_cooldown_s`` seconds (calls return ``None``
at once), then one trial call decides whether it closes again. Every call is reported to the
``on_call`` hook (the ops log) with its latency and outcome.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable
from typing import Any, Protocol, runtime_checkable

import httpx

from reverie.config.core import LLMSettings

CallHook = Callable[[dict[str, Any]], None]
log = logging.getLogger("reverie.llm")


@runtime_checkable
class ChatJSON(Protocol):
    """What the write path needs from an LLM: a JSON object for a prompt, or ``None``."""

    @property
    def model(self) -> str: ...

    def chat_json(self, *, system: str, user: str, op: str) -> dict[str, Any] | None: ...


class CircuitBreaker:
    """Opens after ``failures`` consecutive failures; half-opens after ``cooldown`` seconds.

    It also says what happens on the ``reverie.llm`` logger (standard :mod:`logging`; nothing is shown
    unless the application configures logging): the first failure of a run of failures and every opening
    of the circuit at WARNING, the failures after the first and the calls the open circuit refuses at
    DEBUG, the first answer after failures at INFO — so an unreachable LLM is never silent, and never
    floods the application's log either. ``label`` names the LLM in those lines (model and endpoint)."""

    def __init__(
        self, failures: int, cooldown: float, clock: Callable[[], float] = time.monotonic, *, label: str = "the LLM"
    ) -> None:
        self.failures = failures
        self.cooldown = cooldown
        self.label = label
        self._clock = clock
        self._count = 0
        self._opened_at: float | None = None
        self._lock = threading.Lock()
        #: what the last failed call met (``None`` after a success): ``reverie doctor`` shows it
        self.last_error: str | None = None

    @property
    def is_open(self) -> bool:
        with self._lock:
            return self._opened_at is not None and self._clock() - self._opened_at < self.cooldown

    def refused(self, op: str) -> None:
        """A call the open circuit did not make."""
        log.debug("LLM call %r not made: the circuit of %s is open; rules decide", op, self.label)

    def success(self) -> None:
        with self._lock:
            failing = self._count
            self._count = 0
            self._opened_at = None
            self.last_error = None
        if failing:
            log.info("%s answers again after %d failed calls", self.label, failing)

    def failure(self, op: str = "call", error: str = "") -> None:
        with self._lock:
            self._count += 1
            count = self._count
            self.last_error = error or "no answer"
            opened = count >= self.failures
            if opened:
                self._opened_at = self._clock()
        level = logging.WARNING if count == 1 else logging.DEBUG
        log.log(level, "LLM call %r to %s failed (%s); rules decide instead", op, self.label, error or "no answer")
        if opened:
            log.warning(
                "circuit of %s opened after %d consecutive failures: no LLM call for %g s, rules decide meanwhile",
                self.label,
                count,
                self.cooldown,
            )


class LLMClient:
    """OpenAI-compatible chat with JSON output via httpx (see module docs)."""

    def __init__(
        self,
        settings: LLMSettings,
        *,
        transport: httpx.BaseTransport | None = None,
        on_call: CallHook | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if settings.base_url is None:
            raise ValueError("LLMSettings.base_url is not set")
        self.settings = settings
        self.model = settings.model
        self.on_call = on_call
        self.breaker = CircuitBreaker(
            settings.breaker_failures,
            settings.breaker_cooldown_s,
            clock,
            label=f"model {settings.model!r} at {settings.base_url}",
        )
        headers = {"Content-Type": "application/json"}
        if settings.api_key is not None:
            headers["Authorization"] = f"Bearer {settings.api_key.get_secret_value()}"
        self._http = httpx.Client(
            base_url=settings.base_url.rstrip("/"), headers=headers, timeout=settings.timeout_s, transport=transport
        )

    def close(self) -> None:
        self._http.close()

    def chat_json(self, *, system: str, user: str, op: str) -> dict[str, Any] | None:
        """The JSON object the model answers, or ``None`` (breaker open, failures, invalid JSON)."""
        if self.breaker.is_open:
            self.breaker.refused(op)
            self._report(op, 0.0, success=False, error="circuit open")
            return None
        start = time.monotonic()
        error = "no attempt"
        for attempt in range(self.settings.retries + 1):
            try:
                answer = self._once(system, user)
            except _Retryable as exc:
                error = str(exc)
                time.sleep(min(1.0, 0.05 * 2**attempt))
                continue
            except _Fatal as exc:
                error = str(exc)
                break
            self.breaker.success()
            self._report(op, time.monotonic() - start, success=True)
            return answer
        self.breaker.failure(op, error)
        self._report(op, time.monotonic() - start, success=False, error=error)
        return None

    def _once(self, system: str, user: str) -> dict[str, Any]:
        body = {
            "model": self.model,
            "messages": [{"role": "system", "content": system}, {"role": "user", "content": user}],
            "response_format": {"type": "json_object"},
            "temperature": 0,
        }
        try:
            resp = self._http.post("/chat/completions", json=body)
        except httpx.TimeoutException as exc:
            raise _Retryable(f"timeout: {exc}") from exc
        except httpx.TransportError as exc:
            raise _Retryable(f"transport error: {exc}") from exc
        if resp.status_code >= 500 or resp.status_code == 429:
            raise _Retryable(f"HTTP {resp.status_code}")
        if resp.status_code >= 400:
            raise _Fatal(f"HTTP {resp.status_code}")
        return _parse(resp)

    def _report(self, op: str, seconds: float, *, success: bool, error: str | None = None) -> None:
        if self.on_call is None:
            return
        event: dict[str, Any] = {"op": op, "model": self.model, "latencyMs": round(seconds * 1000), "success": success}
        if error is not None:
            event["error"] = error[:200]
        self.on_call(event)


class _Retryable(Exception):
    pass


class _Fatal(Exception):
    pass


def _parse(resp: httpx.Response) -> dict[str, Any]:
    try:
        content = resp.json()["choices"][0]["message"]["content"]
        value = json.loads(_strip_fence(content))
    except (ValueError, KeyError, IndexError, TypeError) as exc:
        raise _Fatal(f"invalid JSON answer: {exc}") from exc
    if not isinstance(value, dict):
        raise _Fatal("the answer is not a JSON object")
    return value


def _strip_fence(content: str) -> str:
    text = content.strip()
    if text.startswith("```"):
        text = text.split("\n", 1)[1] if "\n" in text else ""
        text = text.rsplit("```", 1)[0]
    return text


def make_llm(settings: LLMSettings, *, on_call: CallHook | None = None) -> LLMClient | None:
    """An :class:`LLMClient` when ``settings.base_url`` is set, else ``None`` (heuristics only)."""
    if settings.base_url is None:
        return None
    return LLMClient(settings, on_call=on_call)
