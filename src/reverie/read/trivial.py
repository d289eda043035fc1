"""Trivial messages: skip them before retrieval, before any embedding is computed (``read.gate``).

Greetings ("hi", "merhaba"), confirmations ("ok", "tamam", "evet"), slash commands ("/help") and
single-word acknowledgements ("thanks", "sağol") short-circuit the read path. A single word that
is not in these lists ("Lisbon") is a real query and passes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

GREETINGS = frozenset({
    "hi", "hello", "hey", "hiya", "yo", "howdy", "good morning", "good evening", "good afternoon",
    "merhaba", "selam", "selamlar", "günaydın", "iyi akşamlar", "hey there", "hello there",
})  # fmt: skip
CONFIRMATIONS = frozenset({
    "ok", "okay", "k", "kk", "sure", "yes", "yep", "yeah", "yup", "no", "nope", "fine", "alright",
    "all right", "got it", "sounds good", "will do", "done", "right", "correct", "agreed",
    "tamam", "evet", "hayır", "olur", "peki", "anladım", "tabii", "tabi", "aynen", "oldu",
})  # fmt: skip
ACKNOWLEDGEMENTS = frozenset({
    "thanks", "thank you", "thx", "ty", "cool", "nice", "great", "awesome", "perfect", "lol", "haha",
    "wow", "hmm", "bye", "cheers", "noted", "np",
    "teşekkürler", "sağol", "sağ ol", "eyvallah", "süper", "harika", "güzel", "hoşçakal", "görüşürüz",
})  # fmt: skip
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
