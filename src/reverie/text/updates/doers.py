"""A change of who does something: "My wife does the ironing" → "I've taken over the ironing", "Kedileri komşumuz
besliyor" → "Kedileri artık ben besliyorum", "Çocukları okula eşim götürüyor" → "Eşim hastalandı; çocukları okula
annem götürüyor".

The clause reading treats a statement about another person as that person's own fact ("My son finished Dune" does
not update "I'm reading Dune"). A chore or a role is different: one person at a time does *this* thing to *this*
object (irons the shirts, takes the kids to school, pays the bills), so another person doing the same to the same
object replaces the old doer when the new statement says so: a take-over ("took over", "devraldım"), a change word
("now", "artık"), or the old doer named in another clause of the new statement ("when Sam went on leave", "Eşim
hastalandı") — the last only marks the verdict unaligned, for the embedder to decide.

What must be shared is the activity, not a word: the verb and its object, or a take-over of the object — an object
of the old statement's verb (not a possessor: "took over the team's newsletter" takes over no team), never only a
place after a preposition ("works at the garden centre": many people do) nor only the verb ("Arabayı artık ben
yıkıyorum" beside "Bulaşıkları annem yıkıyor"). It stays silent for another part of the day or another day or time
("I walk the dog in the evenings now"), an addition ("too", "de"), a negation, an old statement about the past, and
a subject it cannot tell is a person ("Quiz night is Thursdays now").
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from reverie import lexicon
from reverie.text.updates.statement import Clause, Statement
from reverie.text.updates.tokens import PERSON_STEMS, day_of, fold, is_predicate, month_of, stem, tr_person

#: a take-over: someone else does it from now on ("took over", "taken over", "devraldım", "üstlendi")
_TAKE_OVER = lexicon.pattern("update_take_over")
_PREPOSITIONS = lexicon.words("update_doer_prepositions")
#: "had to", "want to": a verb follows
_TO_VERB = frozenset(
    {"had", "have", "has", "need", "needs", "needed", "want", "wants", "wanted", "going", "got", "used"}
)
_TIME = {t: frozenset(stem(w, t) for w in lexicon.words("update_time_words")) for t in (False, True)}
_PARTS = {t: frozenset(stem(w, t) for w in lexicon.words("update_parts_of_day")) for t in (False, True)}
_THIRD_PERSON = frozenset({"he", "she", "they", "it", "o", "onlar"})
_SELF_TR = frozenset({"ben", "biz"})
#: a Turkish verb in the first person ("alıyorum", "devraldım", "gidiyoruz", "yaptık")
_FIRST_PERSON_TR = re.compile(r"(?:[ıiuü]m|[ıiuü]z|[dt][ıiuü]k)$")
#: a Turkish noun in the accusative after a possessive ("oğlumu", "köpeğimizi", "işini"): an object, not a doer
_ACCUSATIVE_TR = re.compile(r"(?:m|m[ıiuü]z|n|s)[ıiuü]$|[ıiuü]n[ıiuü]$|l[ae]r[ıi]$|[^aeıioöuü][ıiuü]$")
_NOMINATIVE_TR = re.compile(r"(?:[aeıioöuü]m|m[ıiuü]z)$")
_TIMED = ("day", "time", "date")
#: a possessor ("the team's newsletter", "Mum's bills"): it names whose the object is, not the object
_POSSESSOR = re.compile(r"['’]s?$|s['’]$")
#: a word after a name that reads as its verb ("Sam handles", "Priya took", "Ana does")
_VERB_EN = re.compile(r"\w{3,}(?:s|ed)|took|did|does|got|makes?|made")


@dataclass(frozen=True, slots=True)
class _Doing:
    doer: frozenset[str]  # who does it: "self" for the speaker, else the stems of the person's words
    activity: frozenset[str]  # the stems of what is done (the verb, its object, where), without the doer or time
    objects: frozenset[str]  # the activity's stems that are its object, not a place after a preposition
    parts: frozenset[str]  # parts of the day it is done in


def doer_changed(a: Statement, b: Statement) -> tuple[str, bool]:
    """The reason when ``b`` says that someone else does what ``a`` says one person does, and whether ``b`` says
    the change itself (a take-over or a change word; else the old doer is only named in another of its clauses,
    and the verdict is left to the embedder) — or ("", False)."""
    olds = [c for c in a.clauses if not c.question]
    if len(olds) != 1 or olds[0].past or olds[0].negated:
        return "", False
    oc = olds[0]
    old = _doing(oc, a.turkish, a.text)
    if old is None:
        return "", False
    for nc in b.clauses:
        if nc.question or nc.additive or nc.negated:
            continue
        new = _doing(nc, a.turkish, b.text)
        if new is None or new.doer & old.doer or _other_occasion(oc, nc, old, new):
            continue
        shared = (old.activity & new.activity) - old.doer - new.doer
        took_over = bool(_TAKE_OVER.search(nc.text))
        if not shared & old.objects or not (took_over or len(shared) >= 2):
            continue
        said = took_over or bool(nc.correction) or any(w not in ("new", "newly", "yeni") for w in nc.change)
        named = any(old.doer & _doers_named(c, a.turkish) for c in b.clauses if c is not nc)
        if said or named:
            what = ", ".join(sorted(shared)[:3])
            how = "takes over" if took_over else ("a change said" if said else "the old one named apart")
            return f"another person does the same ({what}): {how}", said
    return "", False


def _other_occasion(oc: Clause, nc: Clause, old: _Doing, new: _Doing) -> bool:
    """Another part of the day, or another day, time or date: the same chore at another time."""
    if old.parts and new.parts and not old.parts & new.parts:
        return True
    timed_o = {v.norm for v in oc.values if v.kind in _TIMED}
    timed_n = {v.norm for v in nc.values if v.kind in _TIMED}
    return bool(timed_o and timed_n and not timed_o & timed_n)


def _doing(c: Clause, turkish: bool, text: str) -> _Doing | None:
    doer = _doer_tr(c) if turkish else _doer_en(c)
    if not doer:
        return None
    body = _TAKE_OVER.sub(" ", c.text)
    raw = [fold(w) for w in re.findall(r"[\w'’]+", body)]
    stems: dict[str, str] = {}
    for w in raw:
        s = stem(w, turkish)
        if s and s not in doer and w not in doer:
            stems.setdefault(s, w)
    for v in c.values:
        for w in v.norm.split():
            stems.setdefault(stem(w, turkish), w)
    drop = _TIME[turkish] | _PARTS[turkish] | {"self"}
    activity = {s for s in stems if s not in drop and s in (c.stems | set(_value_stems(c, turkish)))}
    activity -= doer
    objects = {s for s in activity if _is_object(stems[s], raw, turkish) and not _POSSESSOR.search(stems[s])}
    parts = {s for s in (stem(w, turkish) for w in raw) if s in _PARTS[turkish]}
    return _Doing(frozenset(doer), frozenset(activity), frozenset(objects), frozenset(parts))


def _value_stems(c: Clause, turkish: bool) -> list[str]:
    return [stem(w, turkish) for v in c.values if v.kind not in _TIMED for w in v.norm.split()]


def _is_object(word: str, raw: list[str], turkish: bool) -> bool:
    """Whether ``word`` is an object of the clause's verb: Turkish, a noun in the accusative; English, a word no
    preposition governs: one before the first preposition of the clause ("irons the shirts after Sam's shift"; "to"
    after "had" or "want" is no preposition)."""
    if turkish:
        return bool(_ACCUSATIVE_TR.search(word)) and not _NOMINATIVE_TR.search(word)
    verb = next((w for w in raw[1:] if is_predicate(w) or _VERB_EN.fullmatch(w) or w in ("do", "did")), "")
    for i, w in enumerate(raw):
        if w == word:
            return w != verb  # "works at the garden centre": the verb is no object
        if w in _PREPOSITIONS and not (w == "to" and i and raw[i - 1] in _TO_VERB):
            return False  # what follows a preposition is where, when or whose, not what
    return False


def _doer_en(c: Clause) -> set[str]:
    first = c.words[0] if c.words else ""
    if first in _THIRD_PERSON:
        return set()  # "he started his night job": someone named elsewhere
    kind = c.subject[:1]
    if kind == ("self",):
        return {"self"}
    if kind == ("rel",):  # "the kids" is read as a child: both name the doer
        return set(c.subject_words) | {s for s in (stem(w) for w in c.words[:3]) if s in PERSON_STEMS}
    if kind == ("lead",) and c.subject_words:
        lead = c.subject[1]
        verb = c.words[1] if len(c.words) > 1 else ""
        if day_of(lead) or month_of(lead):
            return set()
        if lead in PERSON_STEMS or stem(lead) in PERSON_STEMS or is_predicate(verb) or _VERB_EN.fullmatch(verb):
            return set(c.subject_words)
    return set()


def _doer_tr(c: Clause) -> set[str]:
    """The Turkish doer: the last person word in the nominative ("annem", "komşumuz", "komşunun oğlu"), "ben" or
    "biz", else a verb in the first person (the speaker)."""
    words = c.words
    found: set[str] = set()
    for i, w in enumerate(words):
        if w in _SELF_TR:
            found = {"self"}
        elif tr_person(w) and (
            _NOMINATIVE_TR.search(w)
            or w in PERSON_STEMS
            or (i and re.search(r"n[ıiuü]n$", words[i - 1]) and re.search(r"[ıiuü]$", w))
        ):
            found = {stem(w, True), w}
    if found:
        return found
    return {"self"} if words and _FIRST_PERSON_TR.search(words[-1]) else set()


def _doers_named(c: Clause, turkish: bool) -> set[str]:
    """Every person word a clause names (the old doer named apart: "when Sam went on leave", "Eşim
    hastalandı"): its words and their stems, a possessive "'s" left off."""
    out = {stem(w.rstrip("'’s"), turkish) for w in c.words} | {w.rstrip("'’s") for w in c.words}
    out |= set(c.subject_words)
    return out - {""}
