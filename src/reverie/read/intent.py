"""Seed 001 intent router: keyword heuristics (EN + TR) → intent → strategy-table row.

The heuristic is the deterministic default; an LLM classifier may replace :func:`classify`
(any callable ``str -> str`` returning one of :data:`~reverie.config.read.INTENTS`).
Order matters: the first intent whose pattern matches wins.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from reverie.config.read import INTENTS, IntentStrategy, ReadSettings

_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("causal", re.compile(
        r"\b(why|because|cause[sd]?|reason|led to|lead to|result(ed)? in|due to|how come|"
        r"neden|niye|niçin|sebep|yüzünden|dolayı)\b", re.IGNORECASE)),
    ("temporal", re.compile(
        r"\b(when|what time|what date|how long ago|since when|before|after|last (week|month|year|time)|"
        r"yesterday|recently|first time|history|timeline|used to|ne zaman|önce|sonra|geçen|dün|tarih)\b",
        re.IGNORECASE)),
    ("preference", re.compile(
        r"\b(prefer\w*|like[sd]?|love[sd]?|hate[sd]?|dislike[sd]?|favou?rite|enjoy\w*|rather|"
        r"tercih|sever|sevmez|favori|hoşlan\w*|beğen\w*)\b", re.IGNORECASE)),
    ("entity_profile", re.compile(
        r"\b(who is|who's|who was|tell me about|what do (you|we) know about|profile of|about (him|her)|"
        r"kimdir|kim|hakkında)\b", re.IGNORECASE)),
    ("factual", re.compile(
        r"\b(what|which|where|how (many|much)|is|are|does|do|did|name|version|number|"
        r"ne|nedir|hangi|nerede|kaç)\b", re.IGNORECASE)),
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


def route(text: str, cfg: ReadSettings) -> Route:
    """Seed 001 strategy selection. With the router off every query is 'general'."""
    if not cfg.intent:
        return Route("general", cfg.strategies["general"], "router off")
    intent, matched = classify(text)
    if intent not in INTENTS:  # defensive: a replaced classifier must stay inside the table
        intent = "general"
    return Route(intent, cfg.strategies[intent], matched)


__all__ = ["Route", "classify", "route"]
