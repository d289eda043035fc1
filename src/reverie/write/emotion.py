"""Emotion detection: valence, arousal and an Ekman label from EN + TR lexicons (no LLM cost).

Valence: (positive − negative) keyword hits, squashed to [-1, 1]. Arousal: exclamation marks,
upper-case words, urgency words and profanity, each adding a capped share, in [0, 1]. Label:
the Ekman basic emotion with the most keyword hits (joy, anger, fear, sadness, surprise, disgust).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from reverie import lexicon
from reverie.text.words import words

POSITIVE = lexicon.words("emotion_positive")
NEGATIVE = lexicon.words("emotion_negative")
URGENT = lexicon.words("emotion_urgent")
PROFANITY = lexicon.words("emotion_profanity")
#: the Ekman basic emotions, in the order a tie between them is broken
EKMAN_LABELS = ("joy", "anger", "fear", "sadness", "surprise", "disgust")
EKMAN: dict[str, frozenset[str]] = {label: lexicon.words(f"emotion_{label}") for label in EKMAN_LABELS}
_CAPS = re.compile(r"\b[A-ZÇĞİÖŞÜ]{4,}\b")


@dataclass(frozen=True, slots=True)
class Emotion:
    """Valence in [-1, 1], arousal in [0, 1] and an Ekman label (or ``None``)."""

    valence: float
    arousal: float
    label: str | None


def detect_emotion(text: str) -> Emotion:
    """Emotion of ``text`` by keyword lexicons (EN + TR) and arousal cues."""
    tokens = words(text)
    pos = sum(t in POSITIVE for t in tokens)
    neg = sum(t in NEGATIVE for t in tokens)
    valence = math.tanh((pos - neg) / 2.0)
    return Emotion(round(valence, 4), round(_arousal(text, tokens), 4), _label(tokens))


def _arousal(text: str, tokens: list[str]) -> float:
    exclaim = min(0.3, 0.1 * text.count("!"))
    caps = min(0.3, 0.15 * len(_CAPS.findall(text)))
    urgent = min(0.5, 0.25 * sum(t in URGENT for t in tokens))
    profane = min(0.3, 0.2 * sum(t in PROFANITY for t in tokens))
    feeling = min(0.2, 0.1 * sum(t in POSITIVE or t in NEGATIVE for t in tokens))
    return min(1.0, exclaim + caps + urgent + profane + feeling)


def _label(tokens: list[str]) -> str | None:
    counts = {name: sum(t in lexicon for t in tokens) for name, lexicon in EKMAN.items()}
    best = max(counts, key=lambda name: counts[name])
    return best if counts[best] > 0 else None
