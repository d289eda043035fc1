"""Word-level helpers of the update reading: folding, stemming (EN + TR), numbers, days and months, and tests on
one word or the start of a clause.
"""

from __future__ import annotations

import re
from functools import lru_cache

from reverie import lexicon
from reverie.text.updates.vocabulary import DAYS, MONTHS, PAST_EN, PAST_TR, PERSON_NOUNS, TOKEN

#: The text helpers' caches live as long as the process, so they are bounded for a server that reads many
#: users' texts for months (bench/soak.py): per word (folding, stemming, number, day and month forms) ...
WORD_CACHE = 16_384
#: ... and per whole text (a statement's reading, a pair's verdict, a text's stems): about 5 KB an entry
TEXT_CACHE = 4_096


@lru_cache(maxsize=WORD_CACHE)
def fold(word: str) -> str:
    w = word.replace("’", "'")
    if _is_turkish(w):
        w = w.replace("İ", "i").replace("I", "ı")
    return w.casefold()


_TR_CHARS = frozenset("çğışöüÇĞİŞÖÜ")


def _is_turkish(word: str) -> bool:
    return not _TR_CHARS.isdisjoint(word)


_TR_SUFFIXES = sorted(
    lexicon.words("update_tr_suffixes"),
    key=len,
    reverse=True,
)


def _tr_stem(w: str) -> str:
    for _ in range(3):
        for suffix in _TR_SUFFIXES:
            if w.endswith(suffix) and len(w) - len(suffix) >= 3:
                w = w[: len(w) - len(suffix)]
                break
        else:
            break
    return w[:6]


def words(text: str) -> list[str]:
    """The words of ``text``, folded, names without their suffixes ("Ankara'da" → "ankara")."""
    return [core_form(w) for w in TOKEN.findall(text)]


@lru_cache(maxsize=WORD_CACHE)
def stem(word: str, turkish: bool = False) -> str:
    """A light stem: English suffixes stripped, Turkish case, possessive and person suffixes stripped;
    the suffix after an apostrophe dropped ("Ankara'da" → "ankara", "kids'" → "kid")."""
    w = fold(word)
    if "'" in w:
        head = w.split("'", 1)[0]
        w = head or w
    if turkish or _is_turkish(w):
        return _tr_stem(w)
    if len(w) > 9:
        return w[:6]
    for suffix, keep in (("ies", "y"), ("sses", "ss"), ("ing", ""), ("ed", ""), ("s", ""), ("er", ""), ("ly", "")):
        if w.endswith(suffix) and len(w) - len(suffix) >= 3 and not (suffix == "s" and w.endswith("ss")):
            w = w[: len(w) - len(suffix)] + keep
            if suffix in ("ing", "ed") and w[-1] == w[-2] and w[-1] in "bgmnprt":
                w = w[:-1]  # "swimming" / "swim", "stopped" / "stop", "planned" / "plan"
            break
    if w.endswith("e") and len(w) > 3:
        w = w[:-1]  # "office" / "offices", "move" / "moved"
    return w[:6]


def _synonyms() -> dict[str, str]:
    """Each stem of a word in one of the ``update_synonyms`` groups → the stem of the group's first word."""
    out: dict[str, str] = {}
    for group in lexicon.terms("update_synonyms"):
        words = [w.strip() for w in group.split("|") if w.strip()]
        turkish = any(_is_turkish(fold(w)) for w in words)
        first = stem(words[0], turkish)
        for w in words:
            out.setdefault(stem(w, turkish), first)
    return out


_SYNONYM: dict[str, str] = {}


def canonical(stemmed: str) -> str:
    """The one stem a group of words that name one thing shares ("mum" and "mother", "surgery" and
    "operation"): how a subject said in other words is recognised."""
    if not _SYNONYM:
        _SYNONYM.update(_synonyms())
    return _SYNONYM.get(stemmed, stemmed)


@lru_cache(maxsize=WORD_CACHE)
def core_form(word: str) -> str:
    """A name without its possessive or Turkish case suffix ("Ankara'da" → "ankara", "Sam's" → "sam")."""
    w = word.replace("’", "'")
    if "'" in w:
        w = w.split("'", 1)[0] or w
    return fold(w)


def number_of(text: str) -> float | None:
    t = text.replace(" ", "")
    if re.fullmatch(r"\d{1,3}(?:[.,]\d{3})+", t):
        return float(re.sub(r"[.,]", "", t))
    try:
        return float(t.replace(",", "."))
    except ValueError:
        return None


def digits(text: str) -> int:
    return int(re.sub(r"\D", "", text))


_DAY_FORMS = {form: en for en, _ in DAYS for form in (en, en + "s")}
_DAYS_TR = sorted(((tr, en) for en, tr in DAYS), key=lambda d: -len(d[0]))
_MONTH_FORMS = {en: en for en, _ in MONTHS}
_MONTHS_TR = [(tr, en) for en, tr in MONTHS]


@lru_cache(maxsize=WORD_CACHE)
def day_of(word: str) -> str | None:
    w = core_form(word)
    found = _DAY_FORMS.get(w)
    if found or w[:1] not in "pscç":
        return found
    for tr, en in _DAYS_TR:
        if w.startswith(tr) and len(w) - len(tr) <= 5 and not (tr == "pazar" and w.startswith("pazartesi")):
            return en
    return None


@lru_cache(maxsize=WORD_CACHE)
def month_of(raw: str) -> str | None:
    w = core_form(raw)
    en = _MONTH_FORMS.get(w)
    if en is not None:
        return en if en not in ("may", "march") or raw[:1].isupper() else None
    if not raw[:1].isupper():
        return None
    for tr, en in _MONTHS_TR:
        if w == tr or (w.startswith(tr) and len(w) - len(tr) <= 4):
            return en
    return None


_TR_LETTERS = re.compile(r"[çğışöüÇĞİŞÖÜ]")
_STATEMENT_TR = re.compile(
    r"(?<![\w'’])(?:ve|bir|bu|ile|için|gibi|değil|ayda|var|yok|artık|şimdi)\b|"
    r"\w+(?:yor|yorum|dım|dim|dık|dik|tım|tik)\b|\w['’](?:da|de|ta|te|a|e|ya|ye|dan|den)\b"
)


def is_turkish(text: str) -> bool:
    """Whether ``text`` reads as Turkish (its letters, frequent words, verb endings or case suffixes)."""
    return bool(_TR_LETTERS.search(text) or _STATEMENT_TR.search(text.casefold()))


def is_past(words: list[str]) -> bool:
    """Whether the clause's first predicate is in the past (an event or a past state)."""
    if any(w in ("is", "are", "am", "now", "i'm", "it's", "we're", "i've", "we've") for w in words[:8]):
        return False
    for w in words[:8]:
        if PAST_EN.match(w) or (w.endswith("ed") and len(w) > 4 and w not in ("need", "used", "based")):
            return True
    last = words[-1] if words else ""
    return bool(PAST_TR.match(last)) and not re.search(r"(?:yor|iyor|ıyor|uyor|üyor)", last)


def is_copula(words: list[str], turkish: bool) -> bool:
    for i, w in enumerate(words[:7]):
        if w in ("is", "are", "am", "was", "it's", "i'm", "that's", "we're", "they're", "she's", "he's"):
            following = words[i + 1] if i + 1 < len(words) else ""
            return not (following.endswith("ing") or following in ("going",))
    if not turkish or not words:
        return False
    # a Turkish nominal sentence ends without a verb ("Kira ayda 15.000 lira", "Ofisimiz Levent'te")
    return not re.search(r"(?:yor\w*|d[ıiuü]\w*|t[ıiuü]\w*|[ıiuü]r|[ae]r|m[ae]k|[ae]c[ae]k\w*|m[ıiuü]ş\w*)$", words[-1])


#: verbs that follow a subject (a clause's predicate)
_PREDICATE = re.compile("^(" + "|".join(lexicon.terms("update_predicates")) + ")$")
#: the stems of Turkish words for a related person ("annem", "kardeşimin")
_TR_PERSON_STEMS = lexicon.terms("update_tr_person_stems")


def is_predicate(word: str) -> bool:
    return bool(_PREDICATE.match(word))


PERSON_STEMS = frozenset(stem(w) for w in PERSON_NOUNS) | frozenset(
    stem(w, True) for w in PERSON_NOUNS if _is_turkish(w)
)


def tr_possessive(word: str) -> bool:
    return bool(re.match(r"^\w{2,}(?:[aeıiuü]m|m[ıiuü]z|[ıiuü]m[ıiuü]z)$", word)) and not re.search(
        r"(?:yor|[dt][ıiuü]|[ae]c[ae][kğ]|m[ae]l[ıi]y)(?:[ıiuü]?m|um|üm|ım|im|[ıiuü]z)$", word
    )


def tr_person(word: str) -> bool:
    return any(word.startswith(p) for p in _TR_PERSON_STEMS)


def verb_stem(word: str) -> str:
    """A verb without its inflection ("prefers", "preferred", "prefer" → "prefer"; "drinks" → "drink")."""
    w = fold(word)
    for suffix in ("ing", "ed", "es", "s"):
        if w.endswith(suffix) and len(w) - len(suffix) >= 3:
            w = w[: len(w) - len(suffix)]
            break
    if len(w) > 3 and w[-1] == w[-2] and w[-1] not in "aeiouls":
        w = w[:-1]  # "preferr" → "prefer"
    return w.rstrip("e")
