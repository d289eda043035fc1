"""The evidence for and against an update between one old and one new clause, weighed by
:mod:`reverie.text.updates.judge`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from reverie import lexicon
from reverie.text.updates.compare import held_in, kind_of, same_value, substitutions, value_in
from reverie.text.updates.statement import Clause, Statement, Value
from reverie.text.updates.tokens import PERSON_STEMS, fold, stem, verb_stem
from reverie.text.updates.vocabulary import (
    DIET_EXCLUDES,
    DISLIKE,
    DROP_AFTER_WORD,
    EVENTS,
    FAMILIES,
    GONE_WITHOUT,
    LIKE,
    NEGATION,
    OVER,
    QUALIFIER,
    STOP,
    TOKEN,
    WITH_TR,
    WITHOUT_TR,
)


def names_old_attribute(oc: Clause, nc: Clause) -> bool:
    """ "new number", "new landlord", "new job": "new" says a value was replaced only when the word after
    it names the old statement's attribute (its words, or one attribute family with it) and the old statement
    does not say "new" of that word too ("a new fact about the violin" / "a new fact about the passport")."""
    for i, w in enumerate(nc.words[:-1]):
        if w in ("new", "newly", "yeni"):
            nxt = nc.words[i + 1]
            if (w, nxt) in zip(oc.words, oc.words[1:], strict=False):
                continue
            if (
                stem(nxt) in oc.stems
                or stem(nxt) in oc.subject_words
                or any(FAMILIES[f].trigger.match(nxt) for f in oc.families)
            ):
                return True
    return False


def topic_differs(oc: Clause, nc: Clause) -> str | None:
    """The new clause changes a named thing ("my phone's wallpaper", "my dentist appointment") that is not
    what the old clause is about: the part of it, or another thing."""
    if nc.topic is None or not oc.subject:
        return None
    owner, phrase = nc.topic
    named = set(phrase.split())
    head = phrase.split()[-1]
    known = oc.stems | oc.subject_words
    if named & known or any(
        n.startswith(k) or k.startswith(n) for n in named for k in known if len(k) >= 3 and len(n) >= 3
    ):
        return None  # "the kids' bedtime" / "the kids go to bed": a compound of what the old names
    if oc.subject[0] not in ("thing", "rel"):
        return f"the new statement changes something the old one does not name ({head})"
    old_head = oc.subject[2].lstrip("·")
    if head == old_head or head in oc.stems:
        return None
    if owner == old_head:
        return f"the new statement changes a part of it ({owner}'s {head})"
    return f"the new statement changes another thing ({head} / {old_head})"


@dataclass(slots=True)
class Pair:
    """One old clause read against one new clause, and what the reading found so far."""

    oc: Clause
    nc: Clause
    a: Statement
    b: Statement
    subject: str
    corrects: list[str]
    ev: list[tuple[float, str]] = field(default_factory=list)
    explicit: float = 0.0
    let_go: list[Value] = field(default_factory=list)
    resumed: list[str] = field(default_factory=list)  # what the new clause takes up again after the old let it go
    moved: list[Value] = field(default_factory=list)
    shared: set[str] = field(default_factory=set)
    subs: list[tuple[Value, Value]] = field(default_factory=list)
    frame: set[str] = field(default_factory=set)
    families: set[str] = field(default_factory=set)
    functional: bool = False
    cue: float = 0.0
    copula: bool = False
    chatty: bool = False  # either text is a long message rather than a statement of a fact
    oc_diet: str = ""  # the old clause's diet that the new one breaks

    def add(self, weight: float, text: str) -> float:
        self.ev.append((weight, text))
        return weight


#: a clause with more content words than this is chat, not a statement of one fact: its negations and the
#: objects of its verbs say too little about one attribute to count as an update on their own
_SHORT = 10


def weigh_explicit(r: Pair) -> None:
    """Evidence that names what changed: a value let go, "from X", a preference or a negation turned."""
    oc, nc = r.oc, r.nc
    named = [v for v in oc.values if not v.kind.startswith(("obj", "family"))]
    plain = [v for v in oc.values if v.kind.startswith(("obj", "family"))]
    r.let_go = [v for v in named if held_in(v, nc.dropped) or (held_in(v, nc.denied) and not held_in(v, oc.denied))]
    if not r.chatty:  # an object is let go only by a verb that means it ("stopped using the treadmill")
        r.let_go += [v for v in plain if held_in(v, nc.dropped if r.a.turkish else nc.given_up)]
    given_up = nc.dropped if r.a.turkish else nc.given_up
    # "Artık kantin yok", "No more cola": the new clause's subject is itself what it lets go of
    gone = set() if nc.subject_words and nc.subject_words <= given_up else nc.subject_words
    words = (
        sorted(((oc.stems - oc.subject_words) & given_up) - gone)
        if not r.let_go and not r.chatty and max(len(oc.stems), len(nc.stems)) <= _SHORT
        else []
    )
    if not words and not r.let_go and not r.chatty and oc.subject[:2] == ("thing", "self") and r.subject != "different":
        # "My Netflix subscription …" / "Cancelled Netflix": the speaker's own thing the old statement is about,
        # let go by name
        words = sorted((oc.subject_words - {oc.subject[2]}) & given_up - gone)
    if r.let_go or words:
        let_go = ", ".join([v.text for v in r.let_go] or words)
        r.explicit = r.add(3.5, f"lets go of '{let_go}', which the old statement holds")
        return
    successor = _successor_named(r)
    if successor:
        r.explicit = r.add(
            3.5, f"'{oc.subject[1]}', whom the old statement is about, is gone and '{successor}' is named instead"
        )
        return
    r.resumed = _taken_up_again(r)
    if r.resumed:
        r.explicit = r.add(3.5, f"takes up again '{', '.join(r.resumed)}', which the old statement let go")
        return
    excluded = _diet_broken(r)
    if excluded:
        r.explicit = r.add(3.5, f"takes up '{excluded}', which the old statement's '{r.oc_diet}' excludes")
        return
    if r.nc.moved_out and "residence" in oc.families and r.subject == "same" and not r.chatty:
        r.explicit = r.add(3.5, "moves out of where the old statement says they live")
        return
    r.moved = [
        v
        for v in oc.values
        if held_in(v, nc.moved_from) and (not v.kind.startswith(("obj", "family")) or (nc.targets and not r.chatty))
    ]
    if r.moved:
        r.explicit = r.add(3.5, f"changes from '{', '.join(v.text for v in r.moved)}', which the old statement holds")
        return
    if oc.polarity * nc.polarity < 0 and r.shared - LIKE - DISLIKE:
        r.explicit = r.add(3.5, "the preference turned around over the same thing")
        return
    if r.a.turkish and r.subject == "same" and r.shared and _with_and_without(oc.words, nc.words):
        r.explicit = r.add(3.5, "lacks what the old statement has, or has what it lacked ('-li' / '-siz')")
        return
    a_over, b_over = OVER.search(oc.text), OVER.search(nc.text)
    if (
        a_over
        and b_over
        and stem(a_over.group(1)) == stem(b_over.group(2))
        and stem(a_over.group(2)) == stem(b_over.group(1))
    ):
        r.explicit = r.add(3.5, f"the preference turned around ('{a_over.group(0)}' → '{b_over.group(0)}')")
        return
    if _gone_without(r):
        return
    local = oc.stems & nc.stems  # the negated clause itself, not its sentence
    negated_value = any(same_value(v, n) for v in oc.values for n in nc.values) or any(
        set(v.norm.split()) & local for v in oc.values if v.kind.startswith(("obj", "family"))
    )
    if (
        oc.negated != nc.negated
        and len(local) >= 2
        and r.subject != "different"
        and not r.chatty
        and negated_value
        and max(len(oc.stems), len(nc.stems)) <= _SHORT
        and len(local) * 5 >= min(len(oc.stems), len(nc.stems)) * 3
    ):
        r.explicit = r.add(3.0, "negates what the old statement asserts over the same words")


def _successor_named(r: Pair) -> str:
    """ "Karen does our accounts" → "We hired a new bookkeeper, Tom Reyes, after Karen retired": the person the
    old statement is about left (retired, quit …) and the new statement names someone else — the name, or ""."""
    oc, nc = r.oc, r.nc
    if oc.subject[:1] != ("lead",) or not oc.subject_words or not oc.subject_words <= nc.dropped or r.chatty:
        return ""
    for c in r.b.clauses:
        if c.subject[:1] == ("lead",) and c.subject_words and not c.subject_words & oc.subject_words:
            return c.subject[1]
        for v in c.values:
            if v.kind == "name" and not {stem(x, r.a.turkish) for x in v.norm.split()} & oc.subject_words:
                return v.text
    return ""


_NOT = re.compile(r"n['’]t\b|\bwithout\b|\bno\b", re.IGNORECASE)


def _gone_without(r: Pair) -> list[str]:
    """ "I drink cola every day" → "I haven't had a cola in three weeks", "Sigara içiyorum" → "Üç aydır ağzıma sigara
    koymadım": a habit of the old clause gone without for a stretch of time up to now (a negation or "without" and
    "in three weeks", "for months", "aydır"): weighed as explicit evidence, and the words they share besides their
    subjects and the time returned."""
    oc, nc = r.oc, r.nc
    if oc.negated or oc.past or r.subject != "same" or r.chatty or max(len(oc.stems), len(nc.stems)) > _SHORT:
        return []
    if not GONE_WITHOUT.search(nc.text) or not (nc.negated or NEGATION.search(nc.text) or _NOT.search(nc.text)):
        return []
    span = {stem(w, r.a.turkish) for m in GONE_WITHOUT.finditer(nc.text) for w in m.group(0).split()}
    without = sorted((oc.stems & nc.stems) - span - oc.subject_words - nc.subject_words)
    if without:
        r.explicit = r.add(3.5, f"has gone without '{', '.join(without)}' for a while, which the old statement does")
    return without


_TAKEN_UP = re.compile(r"\b(?:again|start(?:ed|ing)|beg[au]n|back|tekrar|yeniden|başla\w*)\b", re.IGNORECASE)


def _with_and_without(old: list[str], new: list[str]) -> bool:
    """ "Kahvemi şekerli içerim" / "Kahveyi artık şekersiz içiyorum": one root with "-li" in one and "-siz" in the
    other (with sugar / without sugar)."""

    def roots(words: list[str], pat: re.Pattern[str]) -> set[str]:
        return {m.group("root") for w in words if (m := pat.match(w))}

    return bool(roots(old, WITH_TR) & roots(new, WITHOUT_TR) or roots(old, WITHOUT_TR) & roots(new, WITH_TR))


def _diet_broken(r: Pair) -> str:
    """ "I'm vegetarian" → "I've started eating chicken again", "I'm teetotal" → "having the odd glass of wine
    again": what the new clause takes up (again, now, from a time on) that the old clause's diet or abstention
    excludes — the word, or ""."""
    oc, nc = r.oc, r.nc
    if r.subject == "different" or r.chatty or nc.negated or not (nc.resumed or nc.change or _TAKEN_UP.search(nc.text)):
        return ""
    for v in oc.values:
        if v.kind != "family:diet":
            continue
        excluded = next((x for d, x in DIET_EXCLUDES.items() if stem(d, r.a.turkish) == v.norm), frozenset())
        found = next((w for w in nc.words if w in excluded), "")
        if found:
            r.oc_diet = v.text
            r.resumed = [found]
            return found
    return ""


def _taken_up_again(r: Pair) -> list[str]:
    """What the new clause takes up again ("started smoking again", "back on coffee", "tekrar et yemeye
    başladım") that the old clause let go of or denied ("I quit smoking", "I've given up coffee", "Et
    yemiyorum"): the words they share, besides their subjects."""
    oc, nc = r.oc, r.nc
    if not nc.resumed or r.subject == "different" or r.chatty or max(len(oc.stems), len(nc.stems)) > _SHORT:
        return []
    let_go = oc.dropped | oc.given_up
    if oc.negated or let_go or DROP_AFTER_WORD.search(oc.text):  # "Sigarayı üç yıl önce bıraktım"
        let_go = let_go | oc.stems
    return sorted((nc.stems & let_go) - nc.subject_words - oc.subject_words)


def weigh_for(r: Pair) -> float:
    """Evidence that the same slot got another value: the values, the words and attribute they share,
    a change or a correction said, "X is V", the same subject."""
    oc, nc, a = r.oc, r.nc, r.a
    new_values = [
        v
        for v in nc.values
        if not held_in(v, nc.moved_from)
        and not (v.kind == "name" and {stem(x, a.turkish) for x in v.norm.split()} & oc.subject_words)
    ]
    still = [v for v in oc.values if v.kind == "name" and set(v.norm.split()) & nc.subject_words]
    plain = r.chatty or max(len(oc.stems), len(nc.stems)) > _SHORT  # objects of chat say too little
    r.subs = substitutions(
        [v for v in oc.values if v not in still and not (plain and v.kind.startswith(("obj", "family")))],
        new_values,
        nc.targets,
        fits=lambda o, n: _one_slot(o, n, r),
    )
    weak = 0.0
    if r.subs:
        weak += r.add(
            1.5 if any(not o.kind.startswith("obj") for o, _ in r.subs) else 1.0,
            "another value in the same place: " + "; ".join(f"'{o.text}' → '{n.text}'" for o, n in r.subs[:3]),
        )
        ties = _anchors(r.subs) | {kind_of(o) for o, n in r.subs if "@" in kind_of(o) and kind_of(o) == kind_of(n)}
        if ties:
            weak += r.add(0.5, f"both are values of '{', '.join(sorted(ties))}'")
    names = set() if a.turkish else {w for c in (oc, nc) if c.subject[:1] == ("lead",) for w in c.subject_words}
    r.frame = r.shared - (names if r.subject != "same" else set())
    if r.frame:
        weak += r.add(min(1.5, 0.5 * len(r.frame)), f"shared words: {', '.join(sorted(r.frame)[:5])}")
    r.families = oc.families & nc.families
    if r.families:
        kinds = {k for o, _ in r.subs for k in (o.kind, kind_of(o).split("@")[0])}
        fitting = [f for f in r.families if FAMILIES[f].kinds & kinds] if r.subs else list(r.families)
        r.functional = any(FAMILIES[f].functional for f in fitting)
        weak += r.add(
            1.0 if r.functional else 0.5,
            f"same attribute ({', '.join(sorted(r.families))})" + (", one value at a time" if r.functional else ""),
        )
    change = [c for c in nc.change if c not in ("new", "newly", "yeni") or names_old_attribute(oc, nc)]
    if change:
        r.cue += r.add(1.0, f"states a change ({', '.join(dict.fromkeys(change))})")
    if r.corrects:
        r.cue += r.add(1.0, f"a correction ({', '.join(dict.fromkeys(r.corrects))})")
    weak += min(r.cue, 1.5)
    r.copula = oc.copula and nc.copula
    if r.subs and r.copula and r.subject in ("same", "unknown"):
        weak += r.add(0.5, "'X is V' holds one value at a time")
    if r.subject == "same":
        weak += r.add(0.5, "same subject")
    return weak


def _one_slot(o: Value, n: Value, r: Pair) -> bool:
    """Whether two objects are values of one slot: the object of the same verb ("drinks coffee" / "drinks
    tea"), where a change goes ("switched to tea"), what one is ("I'm a manager"), or the object of the same
    preposition in clauses that share a word of their own. Names, numbers, dates and times always are."""
    if not o.kind.startswith("obj") and not n.kind.startswith("obj"):
        return True
    if n.kind == "obj:to" and held_in(n, r.nc.targets):
        return True
    if o.kind == n.kind == "obj":
        return bool(o.anchor) and (o.anchor == n.anchor or n.anchor in _TARGET_ANCHORS)
    if o.kind == n.kind == "obj:is":
        return r.subject == "same"
    names = {w for c in (r.oc, r.nc) if c.subject[:1] == ("lead",) for w in c.subject_words}
    return o.kind == n.kind and bool((r.oc.stems & r.nc.stems) - names)


_TARGET_ANCHORS = frozenset({verb_stem("switched"), verb_stem("changed"), verb_stem("moved"), "went"})


def _anchors(subs: list[tuple[Value, Value]]) -> set[str]:
    return {o.anchor for o, _ in subs if o.anchor} & {n.anchor for _, n in subs if n.anchor}


def _against_subject(r: Pair) -> float:
    if r.subject == "different":
        return r.add(-3.0, "different subjects") * -1
    if r.subject == "different-thing" and not r.cue:
        return r.add(-1.5, "about different things") * -1
    return 0.0


def _against_attribute(r: Pair) -> float:
    oc, nc = r.oc, r.nc
    if oc.families and nc.families and not r.families:
        return (
            r.add(-1.5, f"different attributes ({', '.join(sorted(oc.families))} / {', '.join(sorted(nc.families))})")
            * -1
        )
    return 0.0


def _against_untied(r: Pair) -> float:
    """Values that differ, with nothing that makes them values of one attribute."""
    if not r.subs or r.explicit or r.frame or r.families:
        return 0.0
    anchored = _anchors(r.subs) or any("@" in kind_of(o) and kind_of(o) == kind_of(n) for o, n in r.subs)
    targeted = r.nc.targets and r.subject in ("same", "unknown") and any(held_in(n, r.nc.targets) for _, n in r.subs)
    events = _EVENT_STEMS[r.a.turkish]
    both_events = all(
        len(c.subject) > 2 and c.subject[0] == "thing" and c.subject[2].lstrip("·") in events for c in (r.oc, r.nc)
    )
    said_of = r.copula and r.subject == "same"  # "I'm a senior analyst" / "I'm a manager now": what one is
    if anchored or targeted or both_events or said_of:
        return 0.0
    return r.add(-1.5, UNTIED) * -1


def _against_other_slot(r: Pair) -> float:
    """Values of two attributes of one subject: besides what they share, each clause names an attribute word of
    its own that the other lacks ("Rent for the studio is 900 a month" / "The studio is 38 square metres",
    "starts at 9:30" / "wraps up at 4:30", "shoe size 31" / "jacket size 128"). A value replaced in one slot keeps
    the slot's words and changes the value. Only without a change or correction said: people word a change
    with verbs of their own ("I weigh 82 kilos" / "Down to 76 kg", "lives in Toronto" / "moved back to
    Vancouver"), and the change said is then the evidence that one slot changed."""
    if not r.subs or r.explicit or r.cue or r.corrects or r.functional or any(change_said(c) for c in r.b.clauses):
        return 0.0  # a change said, or one attribute family that holds one value at a time: read as one slot
    own_old, own_new = _own_words(r.oc, r.nc, r), _own_words(r.nc, r.oc, r)
    if not own_old or not own_new:
        own_old, own_new = _counted(r)
    if not own_old or not own_new:
        return 0.0
    return (
        r.add(
            -3.0,
            f"values of different attributes ({', '.join(sorted(own_old)[:2])} / {', '.join(sorted(own_new)[:2])})",
        )
        * -1
    )


_COUNTED = re.compile(r"^[^\w£$€₺]*(?:(?:a|an|per|the|of|bir)\s+)?([^\W\d_]{2,})", re.UNICODE)
_CURRENCY = re.compile(r"[£$€₺]\s*$")


def _counted(r: Pair) -> tuple[set[str], set[str]]:
    """What the replaced numbers count or measure, each named only in its own clause ("2 bedrooms" / "the 5th
    floor", "4.1 kg" / "52 cm", "900 a month" / "38 square metres"): the word right after each number (or money,
    for a currency sign before it). Empty sets when the numbers measure one thing or say nothing of it."""
    old: set[str] = set()
    new: set[str] = set()
    turkish = r.a.turkish
    for o, n in r.subs:
        if kind_of(o).split("@")[0] != "number" or kind_of(n).split("@")[0] != "number":
            continue
        co, cn = _unit(o, r.oc, turkish), _unit(n, r.nc, turkish)
        if (
            co
            and cn
            and co[:3] != cn[:3]
            and co not in r.nc.stems | r.nc.context
            and cn not in r.oc.stems | r.oc.context
        ):
            old.add(co)
            new.add(cn)
    return old, new


def _unit(v: Value, c: Clause, turkish: bool) -> str:
    at = c.text.find(v.text)
    if at < 0:
        return ""
    if _CURRENCY.search(c.text[:at]):
        return "money"
    m = _COUNTED.match(c.text[at + len(v.text) :])
    return stem(fold(m.group(1)), turkish) if m else ""


_SINCE_EVENT = re.compile(r"\b(?:since|beri|itibaren)\b", re.IGNORECASE)


def change_said(c: Clause) -> bool:
    """Whether the clause says that something changed or was corrected: a change or correction word, "since"
    (a time or an event: "since my knee surgery"), a value let go, "from X", where a change goes, a habit taken
    up again."""
    change = [w for w in c.change if w not in ("new", "newly", "yeni")]  # "my new laptop" names no old one
    return bool(
        change or c.correction or c.dropped or c.moved_from or c.targets or c.resumed or _SINCE_EVENT.search(c.text)
    )


def _own_words(c: Clause, other: Clause, r: Pair) -> set[str]:
    """The content stems of clause ``c`` that name what its values are of and that ``other`` does not say: not
    its subject, its values, words of time or qualifiers ("new", "old"), nor a word ``other`` says in any form
    (the same stem, or one's first four letters)."""
    turkish = r.a.turkish
    said = other.stems | other.subject_words | other.context | {w for v in other.values for w in v.norm.split()}
    mine = c.stems - c.subject_words - {w for v in c.values for w in v.norm.split()} - _TIME[turkish] - _QUAL[turkish]
    return {w for w in mine if len(w) >= 3 and w not in said and not any(w[:4] == x[:4] for x in said if len(x) >= 4)}


def _against_topic(r: Pair) -> float:
    other = topic_differs(r.oc, r.nc)
    return r.add(-1.5, other) * -1 if other and not r.explicit else 0.0


def _against_roles(r: Pair) -> float:
    old = {o.anchor for o, _ in r.subs if o.anchor in PERSON_STEMS}
    new = {n.anchor for _, n in r.subs if n.anchor in PERSON_STEMS}
    if old and new and not old & new and not r.explicit:
        return r.add(-1.5, f"values of different roles ({', '.join(sorted(old))} / {', '.join(sorted(new))})") * -1
    return 0.0


def _against_modifiers(r: Pair) -> float:
    """Values of one attribute word that each statement modifies with a word of its own: two things of one
    kind ("yatma saatini 20:00'ye aldık" / "Servis saati yedi buçuğa kaydı": a bedtime and a bus time; "gym
    class at six" / "yoga class moved to seven")."""
    if r.explicit:
        return 0.0
    for o, n in r.subs:
        if not o.anchor or o.anchor != n.anchor:
            continue
        mo, mn = _modifier(r.oc, o.anchor, r.a.turkish), _modifier(r.nc, n.anchor, r.a.turkish)
        if mo and mn and mo[:4] != mn[:4]:
            return r.add(-1.5, f"values of another {o.anchor} ({mo} / {mn})") * -1
    return 0.0


def _modifier(c: Clause, anchor: str, turkish: bool) -> str:
    """The stem of the content word right before ``anchor``'s word in ``c`` (what kind of it: "yatma saati",
    "gym class"), or "" when a function word, a number, a qualifier ("my", "the", "new") or a value of the clause
    stands there ("bisikletle gidiyorum": the value, not a kind of going)."""
    in_values = {w for v in c.values for w in (*v.norm.split(), *(fold(x) for x in TOKEN.findall(v.text)))}
    for i in range(1, len(c.words)):
        if stem(c.words[i], turkish) != anchor:
            continue
        prev = c.words[i - 1]
        if prev.isalpha() and len(prev) >= 3 and prev not in STOP and prev not in QUALIFIER and prev not in in_values:
            return stem(prev, turkish)
        return ""
    return ""


def _against_other_correction(r: Pair) -> float:
    """ "I was wrong about the parking fee": a correction of something the old statement does not name."""
    about = r.nc.wrong_about
    if about and not about & (r.oc.stems | r.oc.subject_words | {w for v in r.oc.values for w in v.norm.split()}):
        return r.add(-2.0, f"corrects something the old statement does not name ({', '.join(sorted(about))})") * -1
    return 0.0


def _against_addition(r: Pair) -> float:
    if r.nc.additive and not r.corrects:
        return r.add(-2.0, f"adds rather than replaces ({', '.join(dict.fromkeys(r.nc.additive))})") * -1
    return 0.0


def _against_past(r: Pair) -> float:
    if r.oc.past and not r.nc.past and not r.corrects:
        return r.add(-3.0, "the old statement tells how things were, the new one how they are") * -1
    return 0.0


def _against_occasion(r: Pair) -> float:
    """Another time or place, or several kinds of value at once: another occasion, not a new value."""
    out = 0.0
    # a place that only repeats another replaced value ("at the Leeds branch" beside "Leeds") is that value
    others = {w for o, _ in r.subs if kind_of(o) not in _QUALIFIERS for w in o.text.casefold().split()}
    qualifiers = [
        (o, n) for o, n in r.subs if kind_of(o) in _QUALIFIERS and not set(o.text.casefold().split()) & others
    ]
    if qualifiers and len(qualifiers) < len(r.subs) and not r.corrects:
        o, n = qualifiers[0]
        out -= r.add(-1.5, f"about another time or place ('{o.text}' / '{n.text}')")
    if r.subs and len({kind_of(o).split("@")[0] for o, _ in r.subs}) > 1 and not r.cue:
        out -= r.add(-1.0, "several kinds of value differ at once (another occasion)")
    return out


NOTHING_REPLACED = "no value of the old statement is replaced"
UNTIED = "nothing ties the values to one attribute (no shared word or attribute)"


def _against_nothing_replaced(r: Pair) -> float:
    if not r.subs and not r.explicit:
        return r.add(-3.0, NOTHING_REPLACED) * -1
    return 0.0


def _against_many_values(r: Pair) -> float:
    """An attribute that may hold several values (likes, uses, visits) gets another value, no change said."""
    oc, a = r.oc, r.a
    one_thing = r.subject == "same" and (
        oc.subject[:1] == ("thing",) or (oc.subject[:1] == ("lead",) and oc.subject_words & _EVENT_STEMS[a.turkish])
    )
    if one_thing and r.subs and all(kind_of(o).split("@")[0] in ("time", "date", "day", "number") for o, _ in r.subs):
        r.functional = True  # one thing (an event) has one time, date, price … at a time
    if r.subs and not r.cue and not r.copula and not r.functional and not r.explicit:
        return r.add(-3.0, "the attribute may hold several values and no change is stated") * -1
    return 0.0


def _against_already_held(r: Pair) -> float:
    held = [v for v in r.nc.values if held_in(v, r.nc.moved_to) and value_in(v, r.oc)]
    if held and not r.explicit:
        return r.add(-1.5, f"the old statement already holds '{held[0].text}'") * -1
    return 0.0


_EVENT_STEMS = {turkish: frozenset(stem(e, turkish) for e in EVENTS) for turkish in (False, True)}
_TIME = {t: frozenset(stem(w, t) for w in lexicon.words("update_time_words")) for t in (False, True)}
_QUAL = {t: frozenset(stem(w, t) for w in QUALIFIER) for t in (False, True)}
AGAINST = (
    _against_subject,
    _against_attribute,
    _against_other_slot,
    _against_untied,
    _against_topic,
    _against_roles,
    _against_modifiers,
    _against_addition,
    _against_other_correction,
    _against_past,
    _against_occasion,
    _against_nothing_replaced,
    _against_many_values,
    _against_already_held,
)


_QUALIFIERS = frozenset({"obj:in", "obj:on", "obj:at", "day", "time", "date"})
