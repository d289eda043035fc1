"""The verdict: how strongly a new statement updates an old one (:func:`judge`), and the cheap tests run before it."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import lru_cache

from reverie import lexicon
from reverie.model import MemoryRecord
from reverie.text.updates.clauses import analyse, split_speaker
from reverie.text.updates.compare import kind_of, value_in
from reverie.text.updates.doers import doer_changed
from reverie.text.updates.evidence import (
    AGAINST,
    NOTHING_REPLACED,
    UNTIED,
    Pair,
    names_old_attribute,
    topic_differs,
    weigh_explicit,
    weigh_for,
)
from reverie.text.updates.evidence import (
    change_said as _change_said,
)
from reverie.text.updates.statement import Clause, Statement
from reverie.text.updates.tokens import PERSON_STEMS, TEXT_CACHE, fold, is_turkish, stem
from reverie.text.updates.vocabulary import (
    CHANGE,
    CORRECTION,
    DROP_AFTER_WORD,
    DROP_AROUND,
    DROP_BEFORE,
    FAMILIES,
    GIVEN_AWAY,
    LIKELY_SCORE,
    MOVED_OUT,
    NEGATION,
    NEGATION_TR,
    NOT_VALUE,
    OVER,
    POLARITY_WORDS,
    QUALIFIER,
    SINCE,
    TOKEN,
    UPDATE_SCORE,
    WITH_TR,
    WITHOUT_TR,
)

# judging -----------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Verdict:
    """How strongly a new statement updates an old one: the weighed ``score``, a one-line ``reason``
    and every piece of ``evidence`` (positive and negative), and whether it named the old value."""

    score: float
    reason: str
    evidence: tuple[str, ...] = ()
    explicit: bool = False
    #: the same subject and attribute, a change said, and values the reading could not align: an update when
    #: the two are also close in meaning (:func:`unaligned_update`)
    unaligned: bool = False
    #: an update only because the embedder put the two close (:func:`unaligned_update`): no value of one slot
    #: was read to replace another, so it is a *possible* update — never evidence enough to hide a memory
    by_similarity: bool = False

    @property
    def updates(self) -> bool:
        return self.score >= UPDATE_SCORE

    @property
    def likely(self) -> bool:
        return self.score >= LIKELY_SCORE


NO_UPDATE = Verdict(0.0, "no sign of an update")


@lru_cache(maxsize=2 * TEXT_CACHE)
def judge(
    old: str, new: str, *, correction: bool = False, old_speaker: str | None = None, new_speaker: str | None = None
) -> Verdict:
    """How strongly ``new`` updates ``old`` (see the module docs). ``correction``: the new statement was
    classified as a correction as a whole (it counts as a correction word). Cached by its arguments."""
    a, b = analyse(old, old_speaker), analyse(new, new_speaker)
    if a.turkish != b.turkish:  # one language for both, so that their words stem alike
        a, b = analyse(old, old_speaker, True), analyse(new, new_speaker, True)
    best: Verdict | None = None
    unaligned = False
    # an old diet or abstention ("vejetaryenim") is broken by what the new clause eats, whatever value it names
    diet = any(v.kind == "family:diet" for c in a.clauses for v in c.values)
    for nc in b.clauses:
        if nc.question:
            continue
        marked = _explicit_marks(nc) or (diet and not nc.negated)
        if not marked and not nc.values:
            continue  # names no value and lets none go: it can update nothing (unless it may break a diet)
        for oc in a.clauses:
            if oc.question or (not marked and not oc.values):
                continue
            v = _judge_clauses(oc, nc, a, b, correction=correction)
            unaligned = unaligned or v.unaligned
            if best is None or v.score > best.score:
                best = v
    if best is not None and unaligned and not best.updates and not best.unaligned:
        best = replace(best, unaligned=True)
    if best is None or not best.updates:
        who, said = doer_changed(a, b)
        if who and said:
            return Verdict(UPDATE_SCORE, who, (f"+{UPDATE_SCORE:.1f} {who}",), explicit=True)
        if who and not (best and best.unaligned):
            best = replace(best or NO_UPDATE, reason=f"{who}; {(best or NO_UPDATE).reason}", unaligned=True)
    if best is None or not (best.updates or best.unaligned):
        loose = _changed_in_other_words(a, b, correction=correction) or _new_one_named(a, b)
        if loose:
            base = best or NO_UPDATE
            best = replace(base, reason=f"{loose}; {base.reason}", unaligned=True)
    return best or NO_UPDATE


def _changed_in_other_words(a: Statement, b: Statement, *, correction: bool) -> str:
    """The reason when ``b`` says a change of what ``a`` is about in words the clause reading cannot line up,
    else "": a change said anywhere in ``b`` (a change or correction word, a value let go or denied, "from X",
    where a change goes, a habit taken up again, a move out, "new" before a word that names the old attribute),
    a word of ``a`` beyond who it is about that ``b`` says too (the attribute), a word of ``a`` that ``b`` no
    longer says (the old value) and one of ``b``'s own (the new value), and nothing that tells them apart: another
    person, another attribute, another part of the day, an addition, an old statement about the past, or a
    one-off occasion told in the new one ("I left my umbrella at the office yesterday"). Such a statement is
    marked unaligned: the embedder decides (:func:`unaligned_update`)."""
    olds = [c for c in a.clauses if not c.question]
    said = [c for c in b.clauses if not c.question]
    cued = correction or any(_says_change_of_value(c) or names_old_attribute(oc, c) for oc in olds for c in said)
    if not olds or not cued or any(c.additive for c in said) or any(c.past for c in olds):
        return ""
    who = {w for c in (*olds, *said) if c.subject[:1] in (("self",), ("rel",), ("lead",)) for w in c.subject_words}
    topic = (a.stems & b.stems) - who - _TIME_STEMS[a.turkish]
    if not topic or not a.stems - b.stems or not b.stems - a.stems:
        return ""
    if len(topic) < 2 and not topic & _named(a) & _named(b) and not _one_word_and_value(a, b, said):
        return ""  # one shared word that names nothing ("learning", "do"): no shared topic
    families_a = {f for c in olds for f in c.families if FAMILIES[f].functional}
    families_b = {f for c in said for f in c.families if FAMILIES[f].functional}
    if families_a and families_b and not families_a & families_b:
        return ""  # "I've lived in Leeds since 2015" / "I've worked at the hospital since 2019"
    parts_a, parts_b = _parts_of_day(a), _parts_of_day(b)
    if parts_a and parts_b and not parts_a & parts_b:
        return ""  # "Sabahları normal kahve" / "Akşamları kafeinsiz kahveye geçtim": another part of the day
    if _ONE_OFF.search(b.text):
        return ""
    if any(topic_differs(oc, nc) for oc in olds for nc in said):
        return ""  # "The kids' school starts at 8:30" / "We switched the kids' bedtime to 8pm"
    relations = {_subjects(oc, nc, a, b) for oc in olds for nc in said}
    if "different" in relations or not relations & {"same", "unknown"}:
        return ""
    return f"a change said of the same thing ({', '.join(sorted(topic)[:3])}) in other words"


def _new_one_named(a: Statement, b: Statement) -> str:
    """The reason when ``a`` names who or what fills one of the speaker's roles ("My dentist is Dr Okafor") and
    ``b`` says the speaker has a new one and names it apart ("We have a new dentist now, Dr Lindqvist"), else ""."""
    olds = [c for c in a.clauses if not c.question]
    if len(olds) != 1 or a.turkish or olds[0].past or olds[0].negated or not olds[0].copula:
        return ""
    oc = olds[0]
    names = {w for v in oc.values if v.kind == "name" for w in v.norm.split()}
    if oc.subject[:2] not in (("rel", "self"), ("thing", "self")) or not names:
        return ""
    head = oc.subject[2]
    if names & {fold(w) for w in TOKEN.findall(b.text)}:
        return ""  # the old one named too ("tried a new hairdresser, Bella, but I'm sticking with Kim")
    for c, after in zip(b.clauses, b.clauses[1:], strict=False):
        raw = [fold(w) for w in TOKEN.findall(c.text)]
        said = any(w == "new" and head in {stem(x) for x in raw[i + 1 : i + 3]} for i, w in enumerate(raw))
        if not said or c.question or c.negated or c.additive or c.subject[:1] == ("rel",):
            continue
        if after.subject[:1] == ("lead",) and len(after.words) <= 4 and not after.subject_words & names:
            return f"a new {head}, named apart ({' '.join(sorted(after.subject_words))})"
    return ""


#: a change of mind: what the old statement says was wanted or planned is what changed
_MIND_CHANGED = lexicon.pattern("update_mind_changed")


def _one_word_and_value(a: Statement, b: Statement, said: list[Clause]) -> bool:
    """Whether the old statement says nothing beyond the one word the new one shares and the value the new one no
    longer says, and the new one says a change in a word of change ("Pilates yapıyorum" / "artık yoga yapıyorum",
    "I collect stamps" / "Now I collect vinyl records"): what else would the shared word be about."""
    changed = any(w not in ("new", "newly", "yeni") for c in said for w in c.change)
    if changed and _MIND_CHANGED.search(b.text):
        return True  # "changed her mind, she wants to do veterinary science": what she wants is what changed
    return changed and len(a.stems - b.stems) == 1


def _says_change_of_value(c: Clause) -> bool:
    change = [w for w in c.change if w not in ("new", "newly", "yeni")]  # "a new dentist" names no old one
    return bool(
        change or c.correction or c.dropped or c.denied or c.moved_from or c.targets or c.resumed or c.moved_out
    )


#: words of time: they say when, never what a statement is about
_TIME_STEMS = {t: frozenset(stem(w, t) for w in lexicon.words("update_time_words")) for t in (False, True)}
_PARTS_OF_DAY = {t: frozenset(stem(w, t) for w in lexicon.words("update_parts_of_day")) for t in (False, True)}
#: a one-off occasion: what happened then, not what holds from then on
_ONE_OFF = lexicon.pattern("update_one_off")


def _named(s: Statement) -> set[str]:
    """The words that name things in ``s``: its values and the things its clauses are about."""
    out = {w for c in s.clauses for v in c.values for w in v.norm.split()}
    out |= {w for c in s.clauses if c.subject[:1] in (("thing",), ("lead",)) for w in c.subject_words}
    return out | {stem(w, s.turkish) for w in out}


def _parts_of_day(s: Statement) -> set[str]:
    return {w for c in s.clauses for w in c.stems if w in _PARTS_OF_DAY[s.turkish]}


def unaligned_update(verdict: Verdict, similarity: float, change_min: float) -> Verdict:
    """``verdict``, or an update when the reading found the same subject and attribute and a change said but
    could not align the values (:attr:`Verdict.unaligned`: "I've come round to aisle seats" for "I prefer the
    window seat" said in words the reading has no rule for) and the embedder puts the two at least
    ``change_min`` apart — the similarity from which a change statement is read against what it replaces."""
    if verdict.updates or not verdict.unaligned or similarity < change_min:
        return verdict
    return Verdict(
        UPDATE_SCORE,
        f"the same subject and attribute with a change said, values not aligned, similar by meaning "
        f"({similarity:.2f} >= {change_min:.2f}): {verdict.reason}",
        (*verdict.evidence, f"+{UPDATE_SCORE - max(verdict.score, 0.0):.1f} similar by meaning ({similarity:.2f})"),
        by_similarity=True,
    )


def _subjects(oc: Clause, nc: Clause, a: Statement, b: Statement) -> str:
    """``same``, ``different`` (two people or two things told apart), ``different-thing`` (two things of
    other kinds) or ``unknown``."""
    so, sn = oc.subject, nc.subject
    new_words = nc.subject_words
    if nc.topic is not None:  # "my doctor raised my dose": the dose is what the new statement is about
        sn = ("thing", nc.topic[0], nc.topic[1].split()[-1])
        new_words = set(nc.topic[1].split())
    if not so or not sn:
        return "unknown"
    if nc.topic is not None and so == ("self",) and sn[1] in PERSON_STEMS:
        return "different"  # "I go to bed at eleven" / "we moved the kids' bedtime to 8": the kids' thing
    if so[0] == sn[0] == "thing" and so[2] == sn[2]:
        return _same_kind_of_thing(so, sn, oc.subject_words, new_words, a.turkish)
    if so == sn:
        return "same"
    if _two_attributes_of_one_owner(so, sn, a, b) and not _change_said(nc):
        return "different"  # "Priya's manager" / "Priya's mentor": two slots of one owner
    names_o, names_n = _names(oc.subject_words), _names(new_words)
    if (
        "lead" in (so[0], sn[0])
        and {so[0], sn[0]} <= {"lead", "thing"}
        and names_o
        and names_n
        and not names_o & _said(b)
        and not names_n & _said(a)
        and not _change_said(nc)
    ):  # two named subjects, each named only in its own statement ("Zeynep" / "Tolga", "Rent" / "the electricity bill")
        return "different"
    pair = frozenset({so[0], sn[0]})
    if pair == {"thing"}:
        return "unknown" if so[2] in b.stems or sn[2] in a.stems else "different-thing"
    return _SUBJECT_PAIRS.get(pair, _unknown)(so, sn, oc.subject_words, nc.subject_words)


def _explicit_marks(c: Clause) -> bool:
    return bool(
        c.dropped
        or c.moved_from
        or c.negated
        or c.polarity
        or c.resumed
        or c.moved_out
        or OVER.search(c.text)
        or _with_or_without(c)
    )


def _with_or_without(c: Clause) -> bool:
    """A Turkish word of having or lacking ("şekerli", "şekersiz"): it may turn the old statement's around."""
    return any(WITH_TR.match(w) or WITHOUT_TR.match(w) for w in c.words) if is_turkish(c.text) else False


def may_update(text: str) -> bool:
    """Whether ``text`` says something that can change a stored value at all — a change or a correction
    word, a value let go, "from X", a negation or a preference — or states values of its own. A text
    with none of these updates nothing (the gate and the read path skip reading it against others)."""
    return any(_says_change_clause(c) or c.values for c in analyse(text).clauses)


def says_change(text: str) -> bool:
    """Whether ``text`` itself says that something changed or was wrong (a change or correction word, a
    value let go, "from X", a negation, a preference turned)."""
    return may_say_change(text) and any(_says_change_clause(c) for c in analyse(text).clauses)


def _says_change_clause(c: Clause) -> bool:
    """Whether one clause says that something changed or was wrong (see :func:`says_change`)."""
    return bool(
        c.change
        or c.correction
        or c.dropped
        or c.moved_from
        or c.negated
        or c.polarity
        or c.resumed
        or c.moved_out
        or _with_or_without(c)
    )


#: what each clause feature :func:`says_change` counts is found by (a clause is a piece of the text that
#: :func:`split_speaker` keeps, cut at spaces and punctuation, so each of these finds in the whole text what it
#: finds in a clause). Where a pattern is slow to try at every position, a looser one that finds at least
#: what it finds stands in: the word that ends a value ("… left", "… bıraktı") after a space, and "from "
#: or a Turkish verb of moving after a space (the only literal parts of the from → to pattern)
_CHANGE_CUES = (
    CHANGE,
    SINCE,
    re.compile(r"again|back|resum|tekrar|yeniden|yine|gene|geri", re.IGNORECASE),  # each RESUME holds one of these
    CORRECTION,
    DROP_BEFORE,
    NOT_VALUE,
    DROP_AROUND,
    NEGATION,
    re.compile(r"\s" + DROP_AFTER_WORD.pattern.split(r"(?:just\s+|has\s+|had\s+)?", 1)[1], re.UNICODE | re.IGNORECASE),
    re.compile(r"\bfrom\s|\s(?:geç|taşı|aktar|değiştir)", re.IGNORECASE),
    # a Turkish move to a time (clauses._moved_to_tr)
    re.compile(r"\s(?:al[dın]|çek[tilm]|kaydır|kayd[ıi])", re.IGNORECASE),
    re.compile(r"mistaken|confused|yan[ıi]l", re.IGNORECASE),  # what the speaker was wrong about (WRONG_ABOUT)
    MOVED_OUT,  # a move out said without where to
    GIVEN_AWAY,  # a thing given away
    re.compile(r"\w(?:l[ıiuü]|s[ıiuü]z)\b", re.IGNORECASE),  # a Turkish word of having or lacking ("şekersiz")
)


@lru_cache(maxsize=TEXT_CACHE)
def may_say_change(text: str) -> bool:
    """A cheap test run before reading ``text`` into clauses: False only when :func:`says_change` is False
    (no change or correction word, no word that lets a value go, no "from", no negation, no word of liking
    or disliking anywhere in it). A few regular expressions over the text instead of a full reading:
    the read path asks it of every memory among the best candidates on every search."""
    _, body = split_speaker(text, None)
    if any(p.search(body) for p in _CHANGE_CUES):
        return True
    if is_turkish(body) and NEGATION_TR.search(body):
        return True
    return any(fold(w) in POLARITY_WORDS for w in TOKEN.findall(body))


def _same_kind_of_thing(
    so: tuple[str, ...], sn: tuple[str, ...], words_o: set[str], words_n: set[str], turkish: bool
) -> str:
    """What tells two things of one kind apart: their owner and modifiers ("The Berlin office" / "The
    Lisbon office", "my car insurance" / "my home insurance", "my car" / "my wife's car")."""
    marks_o = (words_o | {stem(so[1], turkish)}) - {so[2], "self", ""} - _QUALIFIER_STEMS
    marks_n = (words_n | {stem(sn[1], turkish)}) - {sn[2], "self", ""} - _QUALIFIER_STEMS
    if marks_o and marks_n and not marks_o & marks_n:
        return "different"
    if so[1] and sn[1] and so[1] != sn[1] and "self" in (so[1], sn[1]):
        return "different"
    return "same"


#: "new", "old", "yeni", "eski": they qualify a thing without telling it apart from another ("my new address")
_QUALIFIER_STEMS = frozenset(stem(w, t) for w in QUALIFIER for t in (False, True))


def _let_go_by_itself(r: Pair) -> bool:
    """Whether what the new clause lets go of is its own subject ("Priya left", "The café closed"): then it is
    gone whoever the old statement was about; a value let go by another subject ("My son quit piano") is
    theirs."""
    names = r.nc.subject_words
    return any(set(v.norm.split()) & names or {stem(w) for w in v.norm.split()} & names for v in r.let_go)


def _unknown(*_: object) -> str:
    return "unknown"


def _self_and_relation(so: tuple[str, ...], sn: tuple[str, ...], words_o: set[str], words_n: set[str]) -> str:
    rel = so if so[0] == "rel" else sn
    return "different" if rel[1] == "self" else "unknown"  # "I" / "my sister"


def _two_relations(so: tuple[str, ...], sn: tuple[str, ...], words_o: set[str], words_n: set[str]) -> str:
    if so[1:] == sn[1:] or ((words_o - {so[2]}) & (words_n - {sn[2]}) and so[1] == sn[1]):
        return "same"
    return "different"  # "my brother" / "my sister", "my brother" / "my brother's wife"


def _two_leads(so: tuple[str, ...], sn: tuple[str, ...], words_o: set[str], words_n: set[str]) -> str:
    return "same" if words_o & words_n else "unknown"


def _two_attributes_of_one_owner(so: tuple[str, ...], sn: tuple[str, ...], a: Statement, b: Statement) -> bool:
    """Whether the two subjects are two things of one owner, each named only in its own statement ("Priya's
    manager" / "Priya's mentor", "my phone" / "my laptop"): then a value of one is no value of the other."""
    if len(so) < 3 or len(sn) < 3 or so[0] not in ("rel", "thing") or sn[0] not in ("rel", "thing"):
        return False
    if not so[1] or so[1] != sn[1] or so[2] == sn[2]:
        return False
    head_o, head_n = so[2].lstrip("·"), sn[2].lstrip("·")
    return bool(head_o and head_n) and head_o not in _said(b) and head_n not in _said(a)


def _names(words: set[str]) -> set[str]:
    """The words of a capitalised subject that can name someone or something (not "new", not one letter)."""
    return {w for w in words if len(w) >= 3 and w not in _QUALIFIER_STEMS and w not in QUALIFIER}


def _said(s: Statement) -> set[str]:
    """Every word ``s`` names something with: its content stems, its subjects' words and its values' words."""
    return s.stems | {w for c in s.clauses for w in (*c.subject_words, *(x for v in c.values for x in v.norm.split()))}


def _lead_and_other(so: tuple[str, ...], sn: tuple[str, ...], words_o: set[str], words_n: set[str]) -> str:
    lead_words, other, other_words = (words_o, sn, words_n) if so[0] == "lead" else (words_n, so, words_o)
    if other[1] in lead_words or any(stem(x) == other[1] for x in lead_words):
        return "different"  # "Sam" / "Sam's parents"
    return "same" if lead_words & other_words else "unknown"


_SUBJECT_PAIRS: dict[frozenset[str], Callable[[tuple[str, ...], tuple[str, ...], set[str], set[str]], str]] = {
    frozenset({"self"}): lambda *_args: "same",
    frozenset({"self", "rel"}): _self_and_relation,
    frozenset({"rel"}): _two_relations,
    frozenset({"lead"}): _two_leads,
    frozenset({"lead", "rel"}): _lead_and_other,
    frozenset({"lead", "thing"}): _lead_and_other,
}


def _judge_clauses(oc: Clause, nc: Clause, a: Statement, b: Statement, *, correction: bool) -> Verdict:
    r = Pair(
        oc, nc, a, b, _subjects(oc, nc, a, b), nc.correction or (["classified as a correction"] if correction else [])
    )
    r.shared = oc.stems & (nc.stems | nc.context)
    r.chatty = len(a.stems) > _CHATTY or len(b.stems) > _CHATTY
    weigh_explicit(r)
    weak = weigh_for(r)
    against = sum(rule(r) for rule in AGAINST)
    if r.explicit:
        score = r.explicit + 0.25 * weak
        if r.subject == "different" and not r.moved and not _let_go_by_itself(r):
            score -= 3.0  # "My son finished Dune" for "I'm reading Dune": another's value, not the speaker's
        if nc.additive and not r.corrects and not r.let_go and not r.moved and not r.resumed:
            score -= 2.0
    else:
        score = weak - against
    # the values could not be aligned, but all else says one slot changed: the same subject and attribute (a
    # functional family, or two words of the frame), a change said, a value stated, and nothing against but
    # the values left unaligned
    unaligned = (
        not r.explicit
        and not r.subs
        and r.cue > 0
        and r.subject == "same"
        and bool(nc.values)
        and any(not value_in(v, nc) for v in oc.values)  # an old value the new one no longer holds (else: detail)
        and (r.functional or len(r.frame) >= 2)
        and (  # a value of a kind the shared attribute takes ("my sister's new flat has a balcony": no residence)
            not r.families or any(kind_of(v) in FAMILIES[f].kinds for f in r.families for v in nc.values)
        )
        and [t for w, t in r.ev if w < 0] == [NOTHING_REPLACED]
    ) or _aligned_but_untied(r)
    pro = [t for w, t in sorted(r.ev, key=lambda e: -e[0]) if w > 0][:3]
    con = [t for w, t in r.ev if w < 0]
    reason = "; ".join(pro) if pro else "no sign of an update"
    if con:
        reason += " — against: " + "; ".join(con)
    return Verdict(
        round(score, 3),
        reason,
        tuple(f"{w:+.1f} {t}" for w, t in r.ev),
        explicit=bool(r.explicit),
        unaligned=unaligned and score < UPDATE_SCORE,
    )


def _aligned_but_untied(r: Pair) -> bool:
    """Values of one kind replaced and a change said, with nothing against but that no word ties them to one
    attribute ("Oğlumun servisi sabah yedide geliyor" / "Servis saati yedi buçuğa kaydı": the attribute is the
    subject, in another form): left to the embedder (:func:`unaligned_update`)."""
    against = [t for w, t in r.ev if w < 0]
    if r.explicit or not r.subs or r.cue <= 0 or r.subject not in ("same", "unknown") or r.chatty or r.oc.past:
        return False
    if not r.oc.stems:  # a fragment ("saat 14'te") names no attribute of its own
        return False
    if any(t != UNTIED for t in against) or any(o.kind.startswith(("obj", "family")) for o, _ in r.subs):
        return False  # a plain object ("two sugars" / "oat milk") may be another thing altogether
    parts_a, parts_b = _parts_of_day(r.a), _parts_of_day(r.b)
    if parts_a and parts_b and not parts_a & parts_b:
        return False
    # the new statement names what the old one is about, or the value it replaces ("Aidata zam geldi", "We were
    # with Octopus but …"), not only another thing on another date ("The keys are handed over on April 20th")
    about = r.oc.stems | r.oc.subject_words | {w for o, _ in r.subs if o.kind == "name" for w in o.norm.split()}
    said = {w for c in r.b.clauses for w in c.stems | c.subject_words | {x for v in c.values for x in v.norm.split()}}
    said -= {w for _, n in r.subs for w in n.norm.split()}  # not the new value itself ("April 20th")
    return any(x[:4] == y[:4] for x in about for y in said if len(x) >= 4 and len(y) >= 4)


#: a text with more content words than this is a message of several things (a chat turn): only named values
#: (names, numbers, dates, times) and words let go by name count as evidence in it
_CHATTY = 22


def contradicts(old: str, new: str, *, correction: bool = False) -> bool:
    """Whether ``new`` updates (contradicts) ``old``: :func:`judge` at its update score. ``correction``:
    ``new`` was classified as a correction as a whole."""
    return judge(old, new, correction=correction).updates


def other_speaker(old: MemoryRecord, speaker: str | None) -> bool:
    """Whether ``old`` holds the words of another named speaker than ``speaker`` (metadata ``speaker``):
    one speaker's statement does not invalidate what another said."""
    theirs = old.metadata.get("speaker")
    if not speaker or not isinstance(theirs, str) or not theirs.strip():
        return False
    return theirs.strip().casefold() != speaker.strip().casefold()
