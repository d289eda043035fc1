"""The subject of one clause: the speaker, a named person, a related person ("my sister") or a thing."""

from __future__ import annotations

import re

from reverie import lexicon
from reverie.text.updates.tokens import (
    PERSON_STEMS,
    canonical,
    core_form,
    day_of,
    fold,
    is_copula,
    is_predicate,
    month_of,
    stem,
    tr_person,
    tr_possessive,
)
from reverie.text.updates.vocabulary import (
    CHANGE,
    DETERMINERS,
    NUMBER_WORDS,
    OBJECT_VERBS,
    PERSON_NOUNS,
    PREPOSITIONS,
    QUALIFIER,
    SELF_WORDS,
    STOP,
    TITLE,
    TOPIC_VERB,
)

_PRONOUNS = lexicon.words("update_pronouns")
_VERB_START = re.compile("^(" + "|".join(lexicon.terms("update_verb_start")) + ")$")
_TR_CASE = re.compile(
    r"['’](?:da|de|ta|te|a|e|ya|ye|na|ne|dan|den|tan|ten|ı|i|u|ü|yı|yi|yu|yü|la|le|yla|yle|"
    r"deki|daki|teki|taki)$",
    re.IGNORECASE,
)
_TR_GENITIVE = re.compile(r"['’](?:nin|nın|nun|nün|in|ın|un|ün)$", re.IGNORECASE)


def read_subject(
    raw: list[str], words: list[str], lead: int, turkish: bool, *, first: bool = True
) -> tuple[tuple[str, ...], set[str]]:
    """Who or what the clause is about:

    ``("self",)`` the speaker (I/we, a first-person Turkish predicate, an English clause opening with a
    verb); ``("rel", owner, person)`` someone the speaker or a name relates to ("my sister" →
    ``("rel", "self", "sister")``, "Sam's parents" → ``("rel", "sam", "parent")``); ``("thing", owner,
    head)`` a noun phrase ("my rent", "the office", "Ofisimiz"); ``("lead", name)`` a capitalised first
    word (a name or not); ``()`` unknown (a pronoun). An elided subject is marked by ``{"∅"}``."""
    if lead >= len(words):
        return (), {"∅"}
    w = words[lead]
    if w in SELF_WORDS:
        return ("self",), set()
    others = _with_self(raw, words, lead)
    if others is not None:
        return ("self",), others
    if w in _PRONOUNS:
        return (), set()
    if w in ("my", "our", "benim", "bizim"):
        return np_subject("self", noun_phrase(raw, words, lead + 1), turkish)
    if w.endswith(("'s", "'")) and len(w) > 3 and lead + 1 < len(words):
        subject, sw = np_subject(stem(w), noun_phrase(raw, words, lead + 1), turkish)  # "mum's operation"
        return subject, sw | {stem(w)}
    if w in DETERMINERS and not turkish:  # Turkish "her" is "every", not "her"
        np = noun_phrase(raw, words, lead + 1)
        if len(np) > 1 and np[0].endswith(("'s", "'")):
            return np_subject(stem(np[0]), np[1:], turkish)
        return np_subject("", np, turkish)
    if turkish:
        return _tr_subject(raw, words, _past_count(words, lead), first=first)
    if raw[lead][:1].isupper() and not _VERB_START.match(w):
        parts, j = [raw[lead]], lead + 1
        while j < len(raw) and raw[j][:1].isupper() and not parts[-1].endswith(("'s", "’s")):
            parts.append(raw[j])
            j += 1
        if parts[-1].endswith(("'s", "’s")):
            owner = core_form(parts[-1])
            subject, sw = np_subject(owner, noun_phrase(raw, words, j), turkish)
            return subject, sw | {owner}
        names = {core_form(p) for p in parts if fold(p) not in TITLE}
        return ("lead", " ".join(sorted(names))), names
    if _VERB_START.match(w) or (w.endswith("ed") and len(w) > 4):
        return ("self",), set()
    return (), {"∅"}


def _past_count(words: list[str], lead: int) -> int:
    """ "İki kedimiz var": a number counts the subject, it is not the subject (the word after it is)."""
    w = words[lead]
    return lead + 1 if lead + 1 < len(words) and (w in NUMBER_WORDS or w.isdigit()) else lead


def _with_self(raw: list[str], words: list[str], lead: int) -> set[str] | None:
    """ "Priya and I got married", "My wife and I moved": a subject the speaker is part of is the speaker; the
    words that name the others with them (they are no values of the clause). None for another subject."""
    for j in range(lead + 1, min(len(words) - 1, lead + 4)):
        if words[j] == "and":
            if words[j + 1] not in ("i", "we", "me"):
                return None
            return {core_form(raw[k]) for k in range(lead, j) if words[k] not in STOP} | {
                stem(words[k]) for k in range(lead, j) if words[k] not in STOP
            }
        if words[j] in STOP and words[j] not in ("my", "our"):
            return None
    return None


def _tr_subject(raw: list[str], words: list[str], lead: int, *, first: bool) -> tuple[tuple[str, ...], set[str]]:
    """Turkish drops the pronoun: a genitive phrase ("Emre'nin ailesi"), a possessed noun ("Annem",
    "Yöneticim"), a first-person predicate ("… yaşıyorum"), or a name in the nominative ("Ayşe Hanım
    ayrıldı"); a word with a case suffix ("Ankara'da", "Kahveyi") is no subject."""
    w = words[lead]
    genitive = _TR_GENITIVE.search(w) or re.search(r"(?:[ıiuü]n|n[ıiuü]n)$", w)
    if genitive:
        head = next(
            (j for j in (lead + 1, lead + 2) if j < len(words) and re.search(r"(?:[ıiuü]|s[ıiuü])$", words[j])), None
        )
        if head is not None:
            bare = re.sub(r"(?:['’]?(?:n[ıiuü]n|[ıiuü]n))$", "", w)
            # "Dairemin kirası": the speaker's; "Eşimin maaşı", "Annemin arabası": the spouse's, the mother's
            owner = "self" if tr_possessive(bare) and not tr_person(bare) else core_form(raw[lead])
            subject, sw = np_subject(owner, [words[head]], True)
            return subject, sw | {stem(core_form(raw[lead]), True)}
    if tr_possessive(w) and not _TR_CASE.search(w) and lead == len(words) - 1 and not tr_person(w):
        return ("self",), set()  # "Bekarım.", "Öğretmenim.": the clause is its predicate, "I am single"
    if tr_possessive(w) and not _TR_CASE.search(w):
        subject, sw = np_subject("self", [w], True)
        nxt = raw[lead + 1] if lead + 1 < len(raw) else ""
        if nxt[:1].isupper() and not _TR_CASE.search(fold(nxt)) and subject[0] == "rel" and not is_copula(words, True):
            sw = sw | {
                core_form(nxt)
            }  # "Kızım Zeynep … gidiyor": the daughter's name ("Yöneticim Ayşe Hanım": the value)
        return subject, sw
    verb = _tr_subject_from_verb(words)
    if verb[0] == ("self",):
        return verb
    if _TR_CASE.search(w) or day_of(w) or month_of(raw[lead]):
        return verb  # "Ankara'da …", "Kahveyi …", "Pazartesi günleri …": a place, an object or a time, not who
    nxt_word = words[lead + 1] if lead + 1 < len(words) else ""
    if raw[lead][:1].isupper() and nxt_word and tr_possessive(nxt_word) and not _TR_CASE.search(w):
        subject, sw = np_subject("self", [nxt_word], True)  # "Netflix aboneliğim": my Netflix subscription
        return subject, sw | {stem(core_form(raw[lead]), True)}
    if tr_person(w) and not _TR_CASE.search(w):
        return ("rel", "self", stem(w, True)), {stem(w, True)}  # "Annemler Üsküdar'da oturuyor"
    if raw[lead][:1].isupper():
        run, j = [raw[lead]], lead + 1
        while "'" not in run[-1] and "’" not in run[-1] and j < len(raw) and raw[j][:1].isupper():
            run.append(raw[j])
            j += 1
        if _TR_CASE.search(fold(run[-1])):
            if not (first and len(run) > 1):
                return verb  # "Cumhuriyet Koleji'ne gidiyor": where, not who
            run = run[:1]  # "Emre Berlin'e taşındı": a sentence opens with its subject
        # "Ayşe Hanım ayrıldı": a name with its title; "Kullanıcı Vim kullanıyor": the subject, then a value
        run = run[:1] + [x for x in run[1:2] if fold(x) in TITLE]
        names = {core_form(p) for p in run if fold(p) not in TITLE}
        return ("lead", " ".join(sorted(names))), names | {stem(x, True) for x in names}
    return ("thing", "", stem(w, True)), {stem(w, True)}


def _tr_person_of(words: list[str]) -> int | None:
    """The grammatical person of a Turkish clause's verb: 1 (yaşıyorum, oturuyoruz, taşındık), 3 (yaşıyor,
    taşındı), or None (no verb)."""
    last = words[-1] if words else ""
    if re.search(r"(?:yor|[dt][ıiuü]|m[ıiuü]ş|[ae]c[ae][kğ])(?:[ıiuü]?m|um|üm|ım|im|uz|üz|ız|iz|k)$", last):
        return 1
    if re.search(r"(?:yor|[dt][ıiuü]|m[ıiuü]ş|[ae]c[ae]k)(?:lar|ler)?$", last):
        return 3
    return None


def _tr_subject_from_verb(words: list[str]) -> tuple[tuple[str, ...], set[str]]:
    """``("self",)`` for a first-person predicate at the end of the clause, else an elided subject."""
    last = words[-1] if words else ""
    if re.search(r"(?:[ıiuü]m|um|üm|ım|im|[ıiuü]z|uz|üz|ız|iz|[dt][ıiuü][mk]|y[ıi]m)$", last):
        return ("self",), set()
    return (), {"∅"}


def noun_phrase(raw: list[str], words: list[str], start: int) -> list[str]:
    """The words of a noun phrase from ``start``: it ends at a stop word, a predicate, or a verb-like
    word after its first word ("My husband walks" → husband)."""
    out: list[str] = []
    for j in range(start, min(len(words), start + 5)):
        w = words[j]
        if not out and w in QUALIFIER:
            continue  # "my new phone", "our old car": the qualifier is no change said, the noun follows
        if (
            (w in STOP and not w.endswith("'s"))
            or is_predicate(w)
            or CHANGE.fullmatch(w)
            or (out and (_VERB_START.match(w) or OBJECT_VERBS.match(w) or TOPIC_VERB.match(w)))
        ):
            break
        nxt = words[j + 1] if j + 1 < len(words) else ""
        if (
            out
            and not out[-1].endswith(("'s", "'"))
            and re.search(r"(?:[^s]s|ed)$", w)
            and not raw[j][:1].isupper()
            and (
                not nxt
                or nxt in STOP
                or nxt in PREPOSITIONS
                or nxt[:1].isdigit()
                or (j + 1 < len(raw) and raw[j + 1][:1].isupper())
            )
        ):
            break  # "My husband walks the dog": a verb (an object follows), not "the kids' swimming lessons"
        if out and raw[j][:1].isupper() and not out[-1].endswith(("'s", "'")):
            out.append("=" + w)  # a name after the noun ("my best friend Sam"): marked, not the head
            continue
        out.append(w)
    return out


def np_subject(owner: str, np: list[str], turkish: bool) -> tuple[tuple[str, ...], set[str]]:
    """A noun phrase subject: a person related to ``owner`` or a thing of ``owner``."""
    names = {core_form(w[1:]) for w in np if w.startswith("=")}
    owned = [w for w in np if w.endswith(("'s", "'")) and not w.startswith("=")]
    if owned and np and not np[-1].endswith(("'s", "'")):
        owner = stem(owned[-1].removesuffix("'s").rstrip("'"), turkish)  # "my wife's car": the wife's
    clean = [w.removesuffix("'s").rstrip("'") for w in np if w and not w.startswith("=")]
    if not clean:
        return (("self",), set()) if owner == "self" else ((), set())
    words = {canonical(stem(w, turkish)) for w in clean} | names
    head = clean[-1]
    owner = canonical(owner)
    if head in PERSON_NOUNS or stem(head, turkish) in PERSON_STEMS or (turkish and tr_person(head)):
        return ("rel", owner, canonical(stem(head, turkish))), words
    return ("thing", owner, canonical(stem(head, turkish))), words


def _tr_genitive(words: list[str], i: int) -> bool:
    """ "Kardeşimin eşi", "Emre'nin ailesi": a genitive followed by its possessed noun."""
    return (
        i + 1 < len(words)
        and bool(re.search(r"(?:[ıiuü]n|n[ıiuü]n)$", words[i]))
        and bool(re.search(r"(?:[ıiuü]|s[ıiuü])$", words[i + 1]))
    )
