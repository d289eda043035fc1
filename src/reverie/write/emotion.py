"""Emotion detection: valence, arousal and an Ekman label from EN + TR lexicons (no LLM cost).

Valence: (positive − negative) keyword hits, squashed to [-1, 1]. Arousal: exclamation marks,
upper-case words, urgency words and profanity, each adding a capped share, in [0, 1]. Label:
the Ekman basic emotion with the most keyword hits (joy, anger, fear, sadness, surprise, disgust).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from reverie.text.words import lexicon, words

POSITIVE = lexicon(
    "love loved loves great awesome amazing happy glad excellent wonderful fantastic perfect thanks thank "
    "enjoy enjoyed excited proud beautiful nice good best fun delighted grateful relieved "
    "harika mükemmel güzel mutlu sevindim seviyorum teşekkürler teşekkür süper muhteşem keyifli gurur"
)
NEGATIVE = lexicon(
    "hate hated terrible awful horrible sad angry furious broken failed failure crash crashed bug wrong "
    "worst annoying upset scared afraid worried disgusting lost lonely hurt painful sick down outage "
    "berbat kötü üzgün kızgın sinirli korkunç bozuk hata çöktü endişeli korkuyorum iğrenç yalnız acı"
)
URGENT = lexicon(
    "urgent urgently asap immediately critical emergency deadline now security breach outage down production "
    "acil hemen kritik derhal güvenlik"
)
PROFANITY = lexicon("damn shit fuck fucking crap hell lanet kahretsin")
EKMAN: dict[str, frozenset[str]] = {
    "joy": lexicon(
        "love loved happy glad excited delighted great awesome amazing wonderful fun proud enjoy enjoyed "
        "mutlu sevindim harika seviyorum keyifli"
    ),
    "anger": lexicon("angry furious hate hated annoying annoyed mad rage kızgın sinirli nefret"),
    "fear": lexicon("scared afraid worried anxious terrified nervous fear korkuyorum endişeli korku"),
    "sadness": lexicon("sad lonely lost hurt miss cried depressed down üzgün yalnız özledim ağladım"),
    "surprise": lexicon("surprised shocked unexpected wow suddenly şaşırdım inanılmaz vay"),
    "disgust": lexicon("disgusting gross awful revolting iğrenç berbat"),
}
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
