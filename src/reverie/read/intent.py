"""Intent router: the intent of a query → its row of the retrieval strategy table.

LLM-primary with the keyword heuristic as fallback, like every other LLM stage: with an LLM configured
(and ``read.llm_router`` on) the LLM names the intent (one of :data:`~reverie.config.read.INTENTS`);
without one, or when its answer is missing or not one of the intents (timeout, open breaker, invalid
JSON), the keyword heuristics (EN + TR) decide. For the keywords, order matters: the first intent whose
pattern matches wins. Answers are cached per query text (``read.llm_router_cache``), so a repeated
query costs no second call.
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from reverie import lexicon
from reverie.config.read import INTENTS, IntentStrategy, ReadSettings

_ROUTE_PROMPT = (
    'You route a question to a memory search strategy. Answer with a JSON object {"intent": I} where I is '
    "one of: factual (a fact: what, which, where, how many), temporal (when something happened, its order or "
    "history), causal (why, what caused or led to something), entity_profile (everything about a person, "
    "project or thing), preference (likes, dislikes, favourites, what someone prefers), general (anything "
    "else). Judge the intent of the question, not its first word."
)

#: the keyword patterns of the intents, tried in this order (the languages' ``read_intent_<intent>`` lists)
_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (name, lexicon.pattern(f"read_intent_{name}"))
    for name in ("causal", "temporal", "preference", "entity_profile", "factual")
)


@dataclass(frozen=True, slots=True)
class Route:
    """The routed intent, the strategy-table row, and the pattern that decided it."""

    intent: str
    strategy: IntentStrategy
    matched: str


def classify(text: str) -> tuple[str, str]:
    """(intent, matched keyword) by the first matching pattern; 'general' when none matches."""
    for intent, pattern in _PATTERNS:
        m = pattern.search(text)
        if m is not None:
            return intent, m.group(0).lower()
    return "general", ""


def classify_llm(llm: Any, text: str, *, limit: int = 2000) -> str | None:
    """The LLM's intent for ``text``: one of :data:`INTENTS`, or ``None`` (no valid answer)."""
    answer = llm.chat_json(system=_ROUTE_PROMPT, user=text[:limit], op="intent")
    if not isinstance(answer, dict):
        return None
    intent = answer.get("intent")
    if not isinstance(intent, str):
        return None
    intent = intent.strip().lower()
    return intent if intent in INTENTS else None


class Router:
    """The intent router of one read path: the LLM first (when one is configured and ``read.llm_router`` is
    on), the keyword heuristic as fallback; the LLM's answers cached per query (LRU, ``read.llm_router_cache``
    entries)."""

    def __init__(self, cfg: ReadSettings, llm: Any | None = None) -> None:
        self.cfg = cfg
        self.llm = llm
        self._cache: OrderedDict[str, str] = OrderedDict()
        self._lock = threading.Lock()

    def route(self, text: str) -> Route:
        cfg = self.cfg
        if not cfg.intent:
            return Route("general", cfg.strategies["general"], "router off")
        if self.llm is not None and cfg.llm_router:
            intent = self._ask(text)
            if intent is not None:
                return Route(intent, cfg.strategies[intent], "llm")
        return route(text, cfg)

    def _ask(self, text: str) -> str | None:
        with self._lock:
            hit = self._cache.get(text)
            if hit is not None:
                self._cache.move_to_end(text)
                return hit
        intent = classify_llm(self.llm, text)
        if intent is not None and self.cfg.llm_router_cache > 0:
            with self._lock:
                self._cache[text] = intent
                while len(self._cache) > self.cfg.llm_router_cache:
                    self._cache.popitem(last=False)
        return intent


def route(text: str, cfg: ReadSettings) -> Route:
    """Strategy selection by the keyword heuristic. With the router off every query is 'general'."""
    if not cfg.intent:
        return Route("general", cfg.strategies["general"], "router off")
    intent, matched = classify(text)
    if intent not in INTENTS:  # defensive: a replaced classifier must stay inside the table
        intent = "general"
    return Route(intent, cfg.strategies[intent], matched)


__all__ = ["Route", "Router", "classify", "classify_llm", "route"]
