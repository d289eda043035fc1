"""Seed 001 prediction-error gate as resolved in SEED-NOTES 2 (thresholds on similarity).

sim < create_below → CREATE; [create_below, update_min) → CREATE if importance is high else SKIP;
>= update_min → UPDATE, or REINFORCE when the new text adds (almost) nothing; a contradiction →
SUPERSEDE. Immutable memories are never updated or superseded: the new memory is created instead.
Thresholds come from the embedder's :class:`~reverie.config.write.SimilarityProfile`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from reverie.config.write import GateSettings, SimilarityProfile
from reverie.model import MemoryRecord
from reverie.results import Action
from reverie.write.text import WORD, content_words, lexicon

_NEGATION = re.compile(r"\b(not|no longer|never|don't|doesn't|isn't|aren't|wasn't|değil|yok|artık)\b", re.I)


@dataclass(frozen=True, slots=True)
class Neighbour:
    record: MemoryRecord
    similarity: float


@dataclass(frozen=True, slots=True)
class GateDecision:
    action: Action
    target: MemoryRecord | None
    similarity: float | None
    reason: str
    path: str = "heuristic"


def new_words(old: str, new: str) -> set[str]:
    """Informative words of ``new`` that ``old`` lacks."""
    return content_words(new) - content_words(old)


_NUMBER_WORDS = lexicon(
    "zero one two three four five six seven eight nine ten eleven twelve hundred thousand million first second "
    "third sıfır bir iki üç dört beş altı yedi sekiz dokuz on yüz bin milyon"
)


def _is_value(token: str, position: int) -> bool:
    return (
        any(c.isdigit() for c in token)
        or token.casefold() in _NUMBER_WORDS
        or (position > 0 and token[:1].isupper())
    )


def _values(text: str) -> set[str]:
    """Value-like tokens: numbers, number words and capitalised words that are not the first word."""
    return {t.casefold() for i, t in enumerate(WORD.findall(text)) if _is_value(t, i)}


def contradicts(old: str, new: str, *, correction: bool = False) -> bool:
    """Heuristic contradiction: a negation flip, or both sides differ in a few words of which
    each side has a value (a name, a number) — or any small two-sided difference in a correction."""
    o, n = content_words(old), content_words(new)
    if not o or not n:
        return False
    shared = len(o & n) / min(len(o), len(n))
    if bool(_NEGATION.search(old)) != bool(_NEGATION.search(new)) and shared >= 0.5:
        return True
    only_old, only_new = o - n, n - o
    if not only_old or not only_new or len(only_old) > 3 or len(only_new) > 3 or shared < 0.4:
        return False
    if correction:
        return True
    return bool(only_old & _values(old)) and bool(only_new & _values(new))


def _reinforces(old: str, new: str, similarity: float, profile: SimilarityProfile, cfg: GateSettings) -> bool:
    added = new_words(old, new)
    dropped = new_words(new, old)
    if len(added) <= cfg.reinforce_max_new_words and (not dropped or similarity >= profile.reinforce_min):
        return True
    return similarity >= profile.reinforce_min and len(added) <= max(2, len(content_words(new)) // 5)


def decide(
    text: str,
    neighbours: list[Neighbour],
    *,
    importance: float,
    correction: bool,
    profile: SimilarityProfile,
    cfg: GateSettings,
) -> GateDecision:
    """The gate's action for ``text`` given its nearest stored memories (best first)."""
    if not neighbours or neighbours[0].similarity < profile.contradiction_min:
        sim = neighbours[0].similarity if neighbours else None
        return GateDecision(Action.CREATE, None, sim, f"novel (similarity {_fmt(sim)} < {profile.create_below})")
    best = neighbours[0]
    old, sim = best.record, best.similarity
    if contradicts(old.content, text, correction=correction):
        if old.immutable:
            return GateDecision(Action.CREATE, old, sim, "contradicts an immutable memory: created beside it")
        return GateDecision(Action.SUPERSEDE, old, sim, f"contradicts {old.id} (similarity {sim:.3f})")
    if sim < profile.create_below:
        return GateDecision(Action.CREATE, None, sim, f"novel (similarity {sim:.3f} < {profile.create_below})")
    if sim < profile.update_min:
        if importance >= cfg.gap_importance:
            return GateDecision(Action.CREATE, old, sim, f"gap similarity {sim:.3f}, importance {importance:.2f} high")
        return GateDecision(Action.SKIP, old, sim, f"gap similarity {sim:.3f}, importance {importance:.2f} low")
    if _reinforces(old.content, text, sim, profile, cfg):
        return GateDecision(Action.REINFORCE, old, sim, f"nearly identical to {old.id} (similarity {sim:.3f})")
    if old.immutable:
        return GateDecision(Action.CREATE, old, sim, "nearest memory is immutable: created beside it")
    return GateDecision(Action.UPDATE, old, sim, f"adds detail to {old.id} (similarity {sim:.3f})")


def _fmt(sim: float | None) -> str:
    return "none" if sim is None else f"{sim:.3f}"
