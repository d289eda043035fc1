"""Seed 001 prediction-error gate as resolved in SEED-NOTES 2 (thresholds on similarity).

sim < create_below → CREATE; [create_below, update_min) → CREATE if importance is high else SKIP;
>= update_min → UPDATE, or REINFORCE when the new text adds (almost) nothing; a contradiction →
SUPERSEDE (checked from ``contradiction_min``, or from ``change_min`` for an explicit change statement
such as "switched to"). Immutable memories are never updated or superseded: the new memory is created
instead.
Thresholds come from the embedder's :class:`~reverie.config.write.SimilarityProfile`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from reverie.config.write import GateSettings, SimilarityProfile
from reverie.model import MemoryRecord
from reverie.results import Action
from reverie.write.text import WORD, content_words, lexicon, sentences

_NEGATION = re.compile(
    r"\b(not|no longer|never|don't|doesn't|isn't|aren't|wasn't|değil|yok|artık|"
    r"\w+m[ıiuü]yor(?:um|sun|uz|sunuz|lar|du)?|\w+m[ae]d[ıi](?:m|n|k|niz|nız|ler|lar)?)\b",  # TR: kullanmıyor, gitmedi
    re.I,
)


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


#: English predicates (copulas, auxiliaries, common relational verbs): what makes a line assert a value
_EN_PREDICATES = lexicon(
    """
    is are was were am be been being isn't aren't wasn't weren't has have had hasn't haven't hadn't
    do does did will would shall should can could may might must costs cost weighs weigh measures lasts
    lives live lived works work worked uses use used prefers prefer preferred likes like liked loves love
    loved hates hate hated owns own owned drives drive drove runs run ran starts start started ends ended
    takes take took plays play played studies study studied wants want wanted needs need needed earns
    earn earned pays pay paid opens open opened closes close closed leaves leave left arrives arrive
    arrived meets meet met becomes become became called named speaks speak spoke teaches teach taught
    visits visit visited reads read writes write wrote drinks drink drank eats eat ate equals means
    moved move moves switched switch switches changed change migrated replaced
    """
)
#: Turkish predicates: verb and copula endings (SOV: the predicate closes the clause) and var/yok/değil
_TR_PREDICATE = re.compile(
    r"^(?:var|yok|değil|oldu|olur|olmalı|\w+(?:[ıiuü]?yor\w*|[dt][ıiuü]r(?:lar|ler)?|mal[ıi]|mel[ıi]|"
    r"[ae]c[ae][kğ]\w*|m[ıiuü]ş\w*)|\w{3,}[dt][ıiuü](?:m|n|k|nız|niz|lar|ler)?)$"
)


def _asserted_values(text: str) -> set[str]:
    """Values a line asserts: after an English predicate or before a Turkish one ("User lives in
    Berlin", "Kullanıcı İzmir'de yaşıyor"). A line without a predicate ("plain line one", "memory 2")
    is a label, not an assertion, and asserts nothing."""
    tokens = WORD.findall(text)
    folded = [t.casefold() for t in tokens]
    en = [i for i, t in enumerate(folded) if t in _EN_PREDICATES]
    tr = [i for i, t in enumerate(folded) if _TR_PREDICATE.match(t)]
    return {
        folded[i]
        for i, t in enumerate(tokens)
        if _is_value(t, i) and ((en and en[0] < i) or (tr and tr[-1] > i))
    }


#: explicit change statements: the new line says that what was true is replaced (seed 001 SUPERSEDE)
_CHANGE = re.compile(
    r"\b(switch(?:ed|es|ing)? (?:to|from|over)|mov(?:ed|es|ing) (?:to|from)|chang(?:ed|es|ing) (?:to|from)|"
    r"migrat(?:ed|es|ing) (?:to|from)|replac(?:ed|es|ing)|swapp?(?:ed|ing)|instead of|stopped|quit|gave up|"
    r"now (?:uses?|prefers?|likes?|lives?|works?|drives?|has|is|owns?)|any ?more|"
    r"geçti\w*|geçiyor\w*|geçeceğ\w*|taşındı\w*|değiştirdi\w*|bıraktı\w*|yerine)\b",
    re.IGNORECASE,
)
#: preference polarity (EN + TR): "likes X" → "hates X" is a reversal
_LIKE = lexicon(
    "like likes liked love loves loved prefer prefers preferred enjoy enjoys enjoyed adore adores favorite "
    "favourite sever seviyor seviyorum sevdi bayılıyor bayılır tercih"
)
_DISLIKE = lexicon(
    "hate hates hated dislike dislikes disliked detest detests loathe loathes nefret sevmiyor sevmiyorum sevmez "
    "sevmedi hoşlanmıyor hoşlanmaz"
)
_OVER = re.compile(r"\b(\w+) over (\w+)\b", re.IGNORECASE)


def is_change(text: str) -> bool:
    """Whether ``text`` states a change ("switched to", "moved to", "now uses", "geçti", "yerine")."""
    return _CHANGE.search(text) is not None


def _stems(words: set[str]) -> set[str]:
    """First five letters of each word: Turkish case suffixes ("kahveyi", "kahveden") meet."""
    return {w[:5] for w in words}


def _polarity(words: set[str]) -> int:
    return (1 if words & _LIKE else 0) - (1 if words & _DISLIKE else 0)


def _same_subject(old: str, new: str, o: set[str], n: set[str]) -> bool:
    first_old, first_new = WORD.findall(old)[:1], WORD.findall(new)[:1]
    same_first = bool(first_old and first_new and first_old[0].casefold() == first_new[0].casefold())
    return same_first or bool(o & n)


def _change_contradicts(old: str, new: str, o: set[str], n: set[str]) -> bool:
    """A change statement replaces an older line about the same subject that held another value. Only
    the sentences of ``new`` that state the change are compared: the rest of a long message says
    nothing about what changed."""
    stated = " ".join(s for s in sentences(new) if is_change(s))
    if not stated:
        return False
    new, n = stated, content_words(stated)
    if not n or not _same_subject(old, new, o, n):
        return False
    old_values, new_values = _values(old), _values(new)
    if old_values - new_values and new_values - old_values:
        return True
    only_old, only_new = o - n, n - o
    return bool(o & n) and 0 < len(only_old) <= 3 and 0 < len(only_new) <= 3


def _reversal(old: str, new: str, o: set[str], n: set[str]) -> bool:
    """Preference reversal: opposite polarity about the same thing, or "A over B" → "B over A"."""
    po, pn = _polarity({w.casefold() for w in WORD.findall(old)}), _polarity({w.casefold() for w in WORD.findall(new)})
    objects_old, objects_new = _stems(o - _LIKE - _DISLIKE), _stems(n - _LIKE - _DISLIKE)
    if po * pn < 0 and objects_old & objects_new:
        return True
    a, b = _OVER.search(old), _OVER.search(new)
    return bool(a and b and a.group(1).casefold() == b.group(2).casefold()
                and a.group(2).casefold() == b.group(1).casefold())


def contradicts(old: str, new: str, *, correction: bool = False) -> bool:
    """Heuristic contradiction (seed 001 "key values differ"), any of:

    * a negation flip over mostly shared words ("lives in İzmir" → "artık İzmir'de yaşamıyor");
    * a preference reversal ("loves X" → "hates X", "sevmiyor", "A over B" → "B over A");
    * an explicit change statement about the same subject ("uses Vim" → "switched to Neovim");
    * a small two-sided difference where each side *asserts* a different value (a name, a number
      after a predicate: "lives in Berlin" → "lives in Munich") — near-template labels without a
      predicate ("plain line one" / "plain line two") assert nothing and never contradict;
    * in a correction, any small two-sided difference.

    Questions assert nothing: only the other sentences of each text are compared.
    """
    old, new = assertions(old), assertions(new)
    o, n = content_words(old), content_words(new)
    if not o or not n:
        return False
    shared = len(o & n) / min(len(o), len(n))
    if bool(_NEGATION.search(old)) != bool(_NEGATION.search(new)) and shared >= 0.5:
        return True
    if _reversal(old, new, o, n) or _change_contradicts(old, new, o, n):
        return True
    only_old, only_new = o - n, n - o
    if not only_old or not only_new or len(only_old) > 3 or len(only_new) > 3 or shared < 0.4:
        return False
    if correction:
        return True
    return bool(only_old & _asserted_values(old)) and bool(only_new & _asserted_values(new))


def assertions(text: str) -> str:
    """The sentences of ``text`` that assert something: its questions left out."""
    return " ".join(s for s in sentences(text) if not s.rstrip().endswith("?"))


def other_speaker(old: MemoryRecord, speaker: str | None) -> bool:
    """Whether ``old`` holds the words of another named speaker than ``speaker`` (metadata ``speaker``):
    one speaker's statement does not invalidate what another said."""
    theirs = old.metadata.get("speaker")
    if not speaker or not isinstance(theirs, str) or not theirs.strip():
        return False
    return theirs.strip().casefold() != speaker.strip().casefold()


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
    contradiction: bool = True,
    speaker: str | None = None,
) -> GateDecision:
    """The gate's action for ``text`` given its nearest stored memories (best first); ``contradiction=False``
    skips the heuristic contradiction check (an LLM has ruled it out). ``speaker`` is who said ``text``
    (metadata ``speaker``): a contradiction of another named speaker's memory is created beside it,
    never superseding it (what Sam says about Sam does not invalidate what Evan said)."""
    # an explicit change statement is worded apart from what it replaces: it is compared from change_min
    floor = profile.change_min if contradiction and is_change(text) else profile.contradiction_min
    if not neighbours or neighbours[0].similarity < floor:
        sim = neighbours[0].similarity if neighbours else None
        return GateDecision(Action.CREATE, None, sim, f"novel (similarity {_fmt(sim)} < {profile.create_below})")
    best = neighbours[0]
    old, sim = best.record, best.similarity
    if contradiction and contradicts(old.content, text, correction=correction):
        if old.immutable:
            return GateDecision(Action.CREATE, old, sim, "contradicts an immutable memory: created beside it")
        if other_speaker(old, speaker):
            return GateDecision(Action.CREATE, old, sim, f"contradicts {old.id}, said by another speaker "
                                f"(similarity {sim:.3f}): created beside it")
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
