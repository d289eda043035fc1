"""The prediction-error write gate (thresholds on similarity, not on 1 - similarity), with
knowledge updates first.

1. **Update**: the stored memories nearest to the new text (by meaning, and by its words in full
   text) are read against it (:func:`reverie.text.updates.judge`). One that the new text updates —
   the same subject and attribute with another value, a value let go, "from X to Y", a preference
   turned around — is SUPERSEDEd, whatever the similarity (people state a change in other words
   than the fact they change: "uses Vim" → "switched to Neovim"). An immutable memory, or one that
   another named speaker said, keeps its place: the new memory is created beside it. When the reading
   is unsure — the same subject and a change said, but no value of one slot read to replace another,
   only closeness by meaning — nothing is hidden: the new memory is created beside the old one and
   linked to it (``may_update``), and ranking by relevance decides which answers a question (the newer
   first only when both answer it: :mod:`reverie.read.versions`).
2. Otherwise, by similarity to the nearest memory: below ``create_below`` → CREATE; in the gap
   [create_below, update_min) → SKIP when the text adds nothing the nearest memory lacks and its
   importance is low, else CREATE; from ``update_min`` → REINFORCE when the new text adds (almost)
   nothing, UPDATE (merge) when it elaborates the memory (keeps what it says and adds detail), and
   CREATE when it is a different statement at that similarity (two facts are not merged into one).
   Only a note (a stable belief, preference or decision) is merged: an episode (a time-specific event)
   keeps its words as it happened, and the detail is created beside it (episode/note reconsolidation).

Thresholds come from the embedder's :class:`~reverie.config.write.SimilarityProfile`.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

from reverie.config.write import GateSettings, SimilarityProfile
from reverie.model import MemoryKind, MemoryRecord
from reverie.results import Action
from reverie.text import updates
from reverie.text.updates import other_speaker
from reverie.text.words import content_words, new_words

_NUMBER = re.compile(r"\d+")


@dataclass(frozen=True, slots=True)
class Neighbour:
    record: MemoryRecord
    similarity: float


@dataclass(frozen=True, slots=True)
class Checked:
    """One stored memory read against the new text: the verdict and its reason (kept in the history)."""

    id: str
    similarity: float
    score: float
    reason: str

    def to_dict(self) -> dict[str, object]:
        return {"id": self.id, "similarity": round(self.similarity, 4), "score": self.score, "reason": self.reason}


@dataclass(frozen=True, slots=True)
class GateDecision:
    action: Action
    target: MemoryRecord | None
    similarity: float | None
    reason: str
    path: str = "heuristic"
    checked: tuple[Checked, ...] = field(default=())
    #: CREATE beside ``target``, which the new memory may update (an unsure reading: both kept, linked)
    may_update: bool = False


def _new_values(old: str, new: str) -> list[str]:
    """Values ``new`` states that ``old`` does not (a name, a number, a date, a day, a time, the object
    of its verb or of a preposition)."""
    a, b = updates.analyse(old), updates.analyse(new)
    olds = [v for c in a.clauses for v in c.values if not v.kind.startswith("family")]
    news = [v for c in b.clauses for v in c.values if not v.kind.startswith("family")]
    named = {w.casefold() for w in updates.words(old)}  # a name the old text says anywhere (its subject too)
    fresh = [
        v.text
        for v in news
        if not v.kind.startswith("obj")
        and not any(updates.same_value(v, o) for o in olds)
        and not (v.kind == "name" and set(v.norm.split()) <= named)
    ]
    return fresh or [n.text for _, n in updates.substitutions(olds, news)]


def _reinforces(old: str, new: str, similarity: float, profile: SimilarityProfile, cfg: GateSettings) -> bool:
    if _new_values(old, new):
        return False  # "fly to Madrid on Friday" / "fly back from Madrid on Monday": another fact
    if set(_NUMBER.findall(new)) - set(_NUMBER.findall(old)):
        return False  # "note 24: …" / "note 3: …", "#24": another item, however alike
    added = new_words(old, new)
    dropped = new_words(new, old)
    if len(added) <= cfg.reinforce_max_new_words and (not dropped or similarity >= profile.reinforce_min):
        return True
    return similarity >= profile.reinforce_min and len(added) <= max(2, len(content_words(new)) // 5)


def _elaborates(old: str, new: str, cfg: GateSettings) -> bool:
    """Whether ``new`` keeps what ``old`` says (at most ``elaboration_max_dropped`` of its informative
    words missing) and adds to it: an elaboration, merged into the old memory. A number of ``old`` that
    ``new`` lacks ("note 4" / "note 24", "#4") makes them two items, however alike."""
    if Counter(_NUMBER.findall(old)) - Counter(_NUMBER.findall(new)):
        return False
    return len(new_words(new, old)) <= cfg.elaboration_max_dropped


def find_update(
    text: str,
    neighbours: list[Neighbour],
    *,
    correction: bool,
    profile: SimilarityProfile,
    cfg: GateSettings,
    speaker: str | None = None,
) -> tuple[Neighbour | None, updates.Verdict | None, tuple[Checked, ...]]:
    """The stored memory ``text`` updates, if any: the neighbours from ``update_candidate_min`` are read
    against it; the strongest verdict at the update score wins (ties: the more similar). Returns the
    winner, its verdict, and every check with its reason."""
    checked: list[Checked] = []
    best: tuple[Neighbour, updates.Verdict] | None = None
    floor = profile.update_candidate_min
    for n in neighbours:
        if n.similarity < floor:
            continue
        theirs = n.record.metadata.get("speaker")
        verdict = updates.judge(
            n.record.content,
            text,
            correction=correction,
            old_speaker=theirs if isinstance(theirs, str) else None,
            new_speaker=speaker,
        )
        verdict = updates.unaligned_update(verdict, n.similarity, profile.change_min)
        checked.append(Checked(n.record.id, n.similarity, verdict.score, verdict.reason))
        # a value read to replace another outweighs closeness by meaning; then the stronger evidence
        if verdict.updates and (best is None or _weight(verdict) > _weight(best[1])):
            best = (n, verdict)
    if best is None:
        return None, None, tuple(checked)
    return best[0], best[1], tuple(checked)


def _weight(verdict: updates.Verdict) -> tuple[bool, float]:
    return (not verdict.by_similarity, verdict.score)


def decide(
    text: str,
    neighbours: list[Neighbour],
    *,
    importance: float,
    correction: bool,
    profile: SimilarityProfile,
    cfg: GateSettings,
    contradiction: bool = True,
    speaker: str | None = None,
) -> GateDecision:
    """The gate's action for ``text`` given its nearest stored memories (best first). ``contradiction=False``
    skips the update check (an LLM has ruled it out). ``speaker`` is who said ``text`` (metadata
    ``speaker``): an update of another named speaker's memory is created beside it, never superseding it
    (what Sam says about Sam does not invalidate what Evan said)."""
    checked: tuple[Checked, ...] = ()
    if contradiction and neighbours and updates.may_update(text):
        hit, verdict, checked = find_update(
            text, neighbours, correction=correction, profile=profile, cfg=cfg, speaker=speaker
        )
        if hit is not None and verdict is not None:
            if verdict.by_similarity:
                return GateDecision(
                    Action.CREATE,
                    hit.record,
                    hit.similarity,
                    f"may update {hit.record.id} (similarity {hit.similarity:.3f}), but no value of one slot was "
                    f"read to replace another: both kept and linked, ranking decides ({verdict.reason})",
                    checked=checked,
                    may_update=True,
                )
            return _update_decision(hit, verdict, checked, speaker)
    near = sorted(neighbours, key=lambda n: -n.similarity)
    if not near or near[0].similarity < profile.create_below:
        nearest = near[0].similarity if near else None
        return GateDecision(
            Action.CREATE,
            None,
            nearest,
            f"novel (similarity {_fmt(nearest)} < {profile.create_below})",
            checked=checked,
        )
    if near[0].similarity < profile.update_min:
        return _gap_decision(text, near[0], importance, cfg, checked)
    return _near_decision(text, near[0], profile, cfg, checked)


def _update_decision(
    hit: Neighbour, verdict: updates.Verdict, checked: tuple[Checked, ...], speaker: str | None
) -> GateDecision:
    """The decision on a stored memory ``text`` updates: superseded, unless it is immutable or another
    speaker's (then the new memory is created beside it)."""
    old, sim = hit.record, hit.similarity
    why = f"updates {old.id} (similarity {sim:.3f}, evidence {verdict.score:.1f}): {verdict.reason}"
    if old.immutable:
        return GateDecision(
            Action.CREATE,
            old,
            sim,
            f"contradicts an immutable memory: created beside it; {why}",
            checked=checked,
        )
    if other_speaker(old, speaker):
        return GateDecision(
            Action.CREATE,
            old,
            sim,
            f"contradicts {old.id}, said by another speaker: created beside it; {why}",
            checked=checked,
        )
    return GateDecision(Action.SUPERSEDE, old, sim, why, checked=checked)


def _gap_decision(
    text: str, best: Neighbour, importance: float, cfg: GateSettings, checked: tuple[Checked, ...]
) -> GateDecision:
    """In the gap [create_below, update_min): CREATE when the text is important or adds what the nearest
    memory lacks, else SKIP."""
    old, sim = best.record, best.similarity
    if importance >= cfg.gap_importance:
        return GateDecision(
            Action.CREATE, old, sim, f"gap similarity {sim:.3f}, importance {importance:.2f} high", checked=checked
        )
    added = new_words(old.content, text)
    if added:
        return GateDecision(
            Action.CREATE,
            old,
            sim,
            f"gap similarity {sim:.3f}: adds what {old.id} lacks ({', '.join(sorted(added)[:4])})",
            checked=checked,
        )
    return GateDecision(
        Action.SKIP,
        old,
        sim,
        f"gap similarity {sim:.3f}, importance {importance:.2f} low, nothing {old.id} lacks",
        checked=checked,
    )


def _near_decision(
    text: str, best: Neighbour, profile: SimilarityProfile, cfg: GateSettings, checked: tuple[Checked, ...]
) -> GateDecision:
    """From ``update_min``: REINFORCE (adds nothing), CREATE (another statement, or detail to an immutable
    memory or an episode), or UPDATE (an elaboration of a note, merged)."""
    old, sim = best.record, best.similarity
    if _reinforces(old.content, text, sim, profile, cfg):
        return GateDecision(
            Action.REINFORCE, old, sim, f"nearly identical to {old.id} (similarity {sim:.3f})", checked=checked
        )
    if not _elaborates(old.content, text, cfg):
        return GateDecision(
            Action.CREATE,
            old,
            sim,
            f"similar to {old.id} (similarity {sim:.3f}) but another statement: kept apart",
            checked=checked,
        )
    if old.immutable:
        return GateDecision(Action.CREATE, old, sim, "nearest memory is immutable: created beside it", checked=checked)
    if old.memory_kind is MemoryKind.EPISODE:
        return GateDecision(
            Action.CREATE,
            old,
            sim,
            f"adds detail to the episode {old.id} (similarity {sim:.3f}): "
            "an episode is kept as it happened, the detail created beside it",
            checked=checked,
        )
    return GateDecision(Action.UPDATE, old, sim, f"adds detail to {old.id} (similarity {sim:.3f})", checked=checked)


def _fmt(sim: float | None) -> str:
    return "none" if sim is None else f"{sim:.3f}"
