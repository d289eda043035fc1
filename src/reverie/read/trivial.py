"""Trivial messages: skip them before retrieval, before any embedding is computed (``read.gate``).

Greetings ("hi", "merhaba"), confirmations ("ok", "tamam", "evet"), slash commands ("/help") and
single-word acknowledgements ("thanks", "sağol") short-circuit the read path. A single word that
is not in these lists ("Lisbon") is a real query and passes. The word lists are the languages' data
(``read_greeting``, ``read_confirmation``, ``read_acknowledgement`` in ``reverie/lexicons/``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from reverie import lexicon

GREETINGS = lexicon.words("read_greeting")
CONFIRMATIONS = lexicon.words("read_confirmation")
ACKNOWLEDGEMENTS = lexicon.words("read_acknowledgement")
_SLASH = re.compile(r"^/[a-z][\w-]*(\s.*)?$", re.IGNORECASE | re.DOTALL)
_STRIP = re.compile(r"[\s!.,?;:~\-—…'\"()*]+")
_EMOJI_ONLY = re.compile(r"^[\W_]+$", re.UNICODE)


@dataclass(frozen=True, slots=True)
class SkipDecision:
    """``skip`` is true for a trivial message; ``reason`` names the rule that matched."""

    skip: bool
    reason: str


def _normalise(text: str) -> str:
    return _STRIP.sub(" ", text.casefold()).strip()


def check(text: str) -> SkipDecision:
    """The pattern-based skip logic (EN + TR)."""
    stripped = text.strip()
    if _SLASH.match(stripped):
        return SkipDecision(True, "slash command")
    if _EMOJI_ONLY.match(stripped):
        return SkipDecision(True, "no words")
    norm = _normalise(stripped)
    for name, words in (
        ("greeting", GREETINGS),
        ("confirmation", CONFIRMATIONS),
        ("acknowledgement", ACKNOWLEDGEMENTS),
    ):
        if norm in words:
            return SkipDecision(True, name)
    return SkipDecision(False, "passes")


__all__ = ["ACKNOWLEDGEMENTS", "CONFIRMATIONS", "GREETINGS", "SkipDecision", "check"]
