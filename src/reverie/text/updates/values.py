"""The values one clause states: names, numbers with their units, times, dates, days and the objects of its verbs."""

from __future__ import annotations

import re
from collections.abc import Set as AbstractSet

from reverie import lexicon
from reverie.text.updates.statement import Value
from reverie.text.updates.tokens import (
    core_form,
    day_of,
    digits,
    fold,
    is_copula,
    is_predicate,
    month_of,
    number_of,
    stem,
    tr_possessive,
    verb_stem,
)
from reverie.text.updates.vocabulary import (
    CHANGE,
    CORRECTION,
    DETERMINERS,
    DISCOURSE,
    FIRST_PERSON,
    MOVED_TO_TR,
    MULTIPLIERS,
    NUMBER_WORDS,
    OBJECT_VERBS,
    ORDINALS,
    PERSON_NOUNS,
    PREPOSITIONS,
    RATIO,
    SELF_WORDS,
    SPELLED_SCALES,
    SPELLED_TENS,
    SPELLED_UNITS,
    STOP,
    THOUSANDS,
    TIME,
    TITLE,
    TOKEN,
    UNITS,
)

_DATE = re.compile(
    r"\b(?P<d1>\d{1,2})(?:st|nd|rd|th)?\s+(?:of\s+)?(?P<m1>[A-Za-zçğıöşüÇĞİÖŞÜ]+)|"
    r"\b(?P<m2>[A-Za-zçğıöşüÇĞİÖŞÜ]+)\s+(?P<d2>\d{1,2})(?:st|nd|rd|th)?\b"
)
#: words that start a noun phrase without being part of the value
_NP_SKIP = lexicon.words("update_noun_phrase_openers")


def read_values(
    text: str, raw: list[str], words: list[str], lead: int, turkish: bool, names: AbstractSet[str] = frozenset()
) -> list[Value]:
    """The values a clause states (see :class:`Value`); the subject's own ``names`` are none."""
    return _ValueReader(text, raw, words, lead, turkish, names).read()


class _ValueReader:
    """Reads the values of one clause: times and dates first, then token by token."""

    def __init__(
        self, text: str, raw: list[str], words: list[str], lead: int, turkish: bool, names: AbstractSet[str]
    ) -> None:
        self.text, self.raw, self.words, self.lead, self.turkish = text, raw, words, lead, turkish
        self.out: list[Value] = []
        self.taken: set[int] = {
            i for i, w in enumerate(raw) if w[:1].isupper() and (core_form(w) in names or stem(w, turkish) in names)
        }
        self.spans = [m.span() for m in TOKEN.finditer(text)]

    def read(self) -> list[Value]:
        self._times()
        self._dates()
        if not self.turkish:
            self.out.extend(_direct_object(self.raw, self.words, self.taken))
        else:
            self.out.extend(_tr_object(self.raw, self.words, self.taken))
        i = 0
        while i < len(self.raw):
            i = self._token(i)
        return self.out

    def _take(self, start: int, end: int) -> None:
        self.taken.update(i for i, (a, b) in enumerate(self.spans) if a < end and b > start)

    def _times(self) -> None:
        for m in _TIME_WORDS.finditer(self.text):  # "half past eight", "quarter to nine", "eight o'clock"
            hour = NUMBER_WORDS.get((m.group("h") or m.group("h2") or m.group("h3")).casefold())
            if hour is None or not 1 <= hour <= 12:
                continue
            part = (m.group("part") or "").casefold()
            minutes = {"half past": 30, "quarter past": 15, "quarter to": 45}.get(" ".join(part.split()), 0)
            hour = hour - 1 if minutes == 45 else hour
            self.out.append(
                Value("time", f"{hour}:{minutes:02d}", m.group(0), _anchor_before(self.text[: m.start()], self.turkish))
            )
            self._take(*m.span())
        for m in TIME.finditer(self.text):
            h = m.group(1) or m.group(4) or m.group(6)
            mins = m.group(2) or m.group(5) or m.group(7) or "00"
            ampm = (m.group(3) or "").replace(".", "").lower()
            hour = int(h) % 12 + (12 if ampm == "pm" else 0) if ampm else int(h)
            self.out.append(
                Value("time", f"{hour}:{mins}", m.group(0), _anchor_before(self.text[: m.start()], self.turkish))
            )
            self._take(*m.span())

    def _dates(self) -> None:
        raw, words = self.raw, self.words
        for i, w in enumerate(raw):
            month = month_of(w)
            if month is None:
                continue
            for j in (i + 1, i - 1, i - 2):
                if j == i - 2 and (j < 0 or words[i - 1] != "of"):
                    continue
                if (
                    0 <= j < len(raw)
                    and j not in self.taken
                    and re.fullmatch(r"\d{1,2}(?:st|nd|rd|th)?(?:['’]\w+)?", raw[j])
                ):
                    day = digits(raw[j].split("'")[0].split("’")[0])
                    if 1 <= day <= 31:
                        self.out.append(
                            Value(
                                "date",
                                f"{month}-{day}",
                                f"{raw[min(i, j)]} {raw[max(i, j)]}",
                                _anchor(words, min(i, j), self.turkish),
                            )
                        )
                        self.taken.update((i, j))
                        break

    def _token(self, i: int) -> int:
        """The value at token ``i``, if any; returns the next token to read."""
        w, f = self.raw[i], self.words[i]
        if i not in self.taken:
            spelled = spelled_number(self.words, i, self.turkish)
            if spelled is not None:
                return self._spelled(i, *spelled)
        month = month_of(w) if i not in self.taken else None
        if (
            i in self.taken
            or (f in STOP and not f[:1].isdigit() and month is None)
            or (f in TITLE and i + 1 < len(self.raw) and self.raw[i + 1][:1].isupper())
        ):
            return i + 1
        day = day_of(w)
        if day and (w[:1].isupper() or self.turkish or f.startswith(day[:3])):
            self.out.append(Value("day", day, w, self._anchor_at(i)))
        elif month:
            self.out.append(Value("month", month, w, self._anchor_at(i)))
        elif re.fullmatch(r"(?:19|20)\d\d(?:['’]\w+)?", w):
            self.out.append(Value("year", w[:4], w, self._anchor_at(i)))
        elif re.fullmatch(r"\d+(?:st|nd|rd|th)", f):
            self.out.append(Value("number", f"#{digits(f)}@ord", w, self._anchor_at(i)))
        elif w[:1].isdigit():
            return self.number_of(i, self._anchor_at(i))
        elif f in NUMBER_WORDS and not (
            f == "one"
            and (i == 0 or self.words[i - 1] in DETERMINERS or (i + 1 < len(self.words) and self.words[i + 1] in STOP))
        ):
            unit = "ord" if f in ORDINALS else _unit_after(self.raw, i)
            value = f"#{NUMBER_WORDS[f]}" + (f"@{unit}" if unit else "")
            self.out.append(Value("number", value, w, self._anchor_at(i)))
        elif re.fullmatch(r"[a-zçğıöşü]+\d+[a-z0-9]*", f):
            self.out.append(Value("code", f, w, self._anchor_at(i)))  # a password, a model number
        elif self._name_starts(i):
            return self._name(i, self._anchor_at(i))
        else:
            self._preposition_object(i, self._anchor_at(i))
        return i + 1

    def _spelled(self, i: int, number: float, end: int, case: str) -> int:
        """A number said in words over ``words[i:end]``: a clock time in Turkish when it says "at" (a
        locative, "altıda", "yedi buçukta") or follows "saat", else a number with the unit after it."""
        text = " ".join(self.raw[i:end])
        moved_to = case[:1] in ("a", "e", "y") and end < len(self.words) and MOVED_TO_TR.match(self.words[end])
        # "altıda" (at six), "saat altı", "yedi buçuğa kaydı" (moved to half past seven)
        at_hour = self.turkish and (case[:1] in ("d", "t") or (i > 0 and self.words[i - 1] == "saat") or bool(moved_to))
        if at_hour and 0 < number <= 24:
            hour, half = int(number), number % 1
            self.out.append(Value("time", f"{hour}:{'30' if half else '00'}", text, self._anchor_at(i)))
        else:
            unit = _unit_after(self.raw, end - 1)
            self.out.append(Value("number", f"#{number:g}" + (f"@{unit}" if unit else ""), text, self._anchor_at(i)))
        self.taken.update(range(i, end))
        return end

    def _anchor_at(self, i: int) -> str:
        return _anchor(self.words, i, self.turkish)

    def number_of(self, i: int, anchor: str) -> int:
        raw, w = self.raw, self.raw[i]
        j, group = i, [w]
        while j + 1 < len(raw) and re.fullmatch(r"\d{2,5}", raw[j + 1]) and re.fullmatch(r"\d{2,5}", raw[j]):
            j += 1
            group.append(raw[j])
        if len(group) > 1 and len("".join(group)) >= 7:  # a phone number written in groups
            self.out.append(Value("code", "".join(group), " ".join(group), anchor))
            return j + 1
        ratio = RATIO.fullmatch(w)
        if ratio:  # "the 5:2 diet", "won 3-1": one value, not two numbers nor a time
            self.out.append(Value("number", f"#{ratio.group(1)}:{ratio.group(2)}@ratio", w, anchor))
            return i + 1
        m = re.fullmatch(r"(\d+(?:[.,]\d+)*)['’]?([^\W\d_]*)", w)
        value = number_of(m.group(1)) if m else None  # None for "127.0.0.1", "1.2.3": a code, not a number
        suffix = m.group(2).casefold() if m else ""
        if m and value is not None and (not suffix or suffix in UNITS or suffix in MULTIPLIERS or self.turkish):
            value *= MULTIPLIERS.get(suffix, 1.0)  # "45k": forty-five thousand
            unit = (
                (THOUSANDS if suffix in MULTIPLIERS else None)
                or UNITS.get(suffix)
                or _unit_after(raw, i)
                or (UNITS.get(core_form(raw[i - 1])) if i > 0 else None)
                or _age_unit(self.words, i)
            )
            self.out.append(Value("number", f"#{value:g}" + (f"@{unit}" if unit else ""), w, anchor))
        else:
            self.out.append(Value("code", self.words[i], w, anchor))
        return i + 1

    def _name_starts(self, i: int) -> bool:
        w, f = self.raw[i], self.words[i]
        return (
            w[:1].isupper()
            and f not in FIRST_PERSON
            and f not in DISCOURSE
            and not CHANGE.fullmatch(f)
            and not CORRECTION.fullmatch(f)
            and (i != self.lead or _name_at_lead(self.raw, i, self.turkish))
            and not (self.turkish and tr_possessive(f) and "'" not in f)
        )

    def _name(self, i: int, anchor: str) -> int:
        raw = self.raw
        j, parts = i, [raw[i]]
        while (
            "'" not in raw[j]
            and "’" not in raw[j]
            and j + 1 < len(raw)
            and j + 1 not in self.taken
            and (raw[j + 1][:1].isupper() or re.fullmatch(r"\d{1,2}", raw[j + 1]))
            and day_of(raw[j + 1]) is None
            and month_of(raw[j + 1]) is None
        ):
            j += 1
            parts.append(raw[j])
        name = " ".join(core_form(p) for p in parts if fold(p) not in TITLE)
        if name:
            self.out.append(Value("name", name, " ".join(parts), anchor))
        return j + 1

    def _preposition_object(self, i: int, anchor: str) -> None:
        """The noun governed by "at", "to", "by" … ("at the library"): a value of kind ``obj:<prep>``."""
        words, f = self.words, self.words[i]
        if self.turkish or i == 0 or f in STOP or CHANGE.fullmatch(f) or f.endswith("ly"):
            return
        if is_predicate(f) and words[i - 1] not in PREPOSITIONS and words[i - 1] not in _NP_SKIP:
            return
        prep = _preposition_before(words, i)
        nxt = words[i + 1] if i + 1 < len(words) else ""
        if prep == "to" and words[i - 1] == "to" and (nxt in _NP_SKIP or _VERBISH.match(f)):
            return  # "to see the state", "to try": a verb, not a place
        if f.endswith(("ing", "ed")) and len(f) > 5:
            return
        if prep and (not nxt or nxt in STOP or nxt in PREPOSITIONS or not nxt[:1].isalpha() or CHANGE.fullmatch(nxt)):
            before = words[i - 1]
            if (
                before not in STOP
                and before not in PREPOSITIONS
                and before not in _NP_SKIP
                and not is_predicate(before)
                and not before.endswith("'s")
                and not CHANGE.fullmatch(before)
                and self.raw[i - 1][:1].isalpha()
            ):  # "on the marketing team" / "to the sales team": the word that tells the team apart is the value's
                norm = " ".join(sorted((stem(before), stem(f))))
                self.out.append(Value(f"obj:{prep}", norm, f"{self.raw[i - 1]} {self.raw[i]}", anchor))
            else:
                self.out.append(Value(f"obj:{prep}", stem(f), self.raw[i], anchor))


_HOURS = "one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve"
#: a clock time in words: "half past eight", "quarter to nine", "eight o'clock", "at one" (then the clause ends)
_TIME_WORDS = re.compile(
    rf"\b(?P<part>half\s+past|quarter\s+past|quarter\s+to)\s+(?P<h>{_HOURS})\b|\b(?P<h2>{_HOURS})\s+o['’]clock\b"
    rf"|\bat\s+(?P<h3>{_HOURS})(?=\s*(?:$|[,.;!?]|(?:now|and|every|on|tonight|sharp|in\s+the)\b))",
    re.IGNORECASE,
)
#: Turkish case endings a number word may carry ("altıda", "beşe", "dokuza", "bine", "buçuğa"), longest first
_TR_NUMBER_CASES = ("dan", "den", "tan", "ten", "da", "de", "ta", "te", "ya", "ye", "a", "e")
_HALF = "buçuk"
#: the possessive (with its buffer "n") a Turkish number word takes before a case ending: "beş-in-de", "altı-sın-a"
_TR_POSSESSIVE = re.compile(r"s?[ıiuü]n$")
#: marks a case ending that followed the possessive (:func:`_number_word`): the number is a day, never a clock time
_OWNED = "+"
_SCALES_OF = {False: frozenset({"hundred", "thousand", "dozen"}), True: frozenset({"yüz", "bin"})}


def _number_word(word: str, turkish: bool, *, last: bool) -> tuple[str, str] | None:
    """The number word ``word`` is (its plain form) and the Turkish case ending it carries ("altıda" → ("altı",
    "da")); a case ending only on the ``last`` word of a number. None if it is no number word."""
    table = (SPELLED_UNITS, SPELLED_TENS, SPELLED_SCALES)
    if word in _SCALES_OF[not turkish] or (not turkish and word in ("on", "bir")):
        return None  # "bin" and "on" are English words, "hundred" no Turkish one
    if any(word in t for t in table) or (turkish and word == _HALF):
        return word, ""
    if not turkish or not last:
        return None
    for case in _TR_NUMBER_CASES:
        base = word[: -len(case)].rstrip("'’") if word.endswith(case) else ""
        if base.endswith("ğ"):
            base = base[:-1] + "k"  # "buçuğa" → "buçuk"
        if base and (any(base in t for t in table) or base == _HALF):
            return base, case
        # with the possessive before the case: a day of the month, not a clock time ("ayın beşinde" on the
        # fifth, "on beşine" to the fifteenth, "dördüne"); not "yüzüne" (to one's face)
        owned = _TR_POSSESSIVE.sub("", base) if base else ""
        owned = owned[:-1] + "t" if owned.endswith("d") else owned  # "dördüne" → "dört"
        if owned != base and (owned in SPELLED_UNITS or owned in SPELLED_TENS):
            return owned, _OWNED + case
    return None


def _times_said(words: list[str], i: int, turkish: bool) -> float | None:
    """How many times: "twice a day", "once a week", "günde bir kez" (once a day); None otherwise."""
    nxt = words[i + 1] if i + 1 < len(words) else ""
    if words[i] == "twice" or (words[i] == "once" and nxt in ("a", "an", "per", "every", "weekly", "daily")):
        return 2.0 if words[i] == "twice" else 1.0
    if turkish and words[i] == "bir" and nxt in ("kez", "kere", "defa"):
        return 1.0
    return None


def _one_word_no_number(parts: list[tuple[str, str]]) -> bool:
    """A single word the caller reads itself (a plain number word), or "on" with a case ending but no possessive:
    alone, "on" is "ten" only as a day of the month ("ayın onunda"); "ona" is "to him", "onda" "at him"."""
    if len(parts) != 1:
        return False
    word, case = parts[0]
    return not case or (word == "on" and not case.startswith(_OWNED))


def spelled_number(words: list[str], i: int, turkish: bool) -> tuple[float, int, str] | None:
    """A number said in words from ``words[i]``: "eighty-four", "one hundred and twenty", "seksen beş", "yedi
    buçukta", "altıda" → (its value, the index after it, the Turkish case ending of its last word). None for a
    single plain number word (the caller reads those) or no number at all."""
    times = _times_said(words, i, turkish)
    if times is not None:
        return times, i + 1, ""
    parts: list[tuple[str, str]] = []
    j = i
    while j < len(words):
        found = _number_word(words[j], turkish, last=False) or _number_word(words[j], turkish, last=True)
        if found is None:
            if parts and not turkish and words[j] == "and" and j + 1 < len(words):
                nxt = _number_word(words[j + 1], turkish, last=True)
                if nxt is not None and parts[-1][0] in SPELLED_SCALES:
                    j += 1
                    continue
            break
        if found[0] == _HALF and not parts:
            break
        parts.append(found)
        j += 1
        if found[1]:
            break  # a case ending closes the number
    if not parts or _one_word_no_number(parts):
        return None
    if parts[0][0] == "bir" and (len(parts) < 2 or parts[1][0] not in SPELLED_SCALES):
        return None  # "bir" alone is "a"
    total = current = 0.0
    for word, _ in parts:
        if word == _HALF:
            current += 0.5
        elif word in SPELLED_SCALES:
            current = max(current, 1.0) * SPELLED_SCALES[word]
            if SPELLED_SCALES[word] >= 1000:
                total, current = total + current, 0.0
        else:
            current += SPELLED_UNITS.get(word) or SPELLED_TENS.get(word) or 0
    return total + current, j, parts[-1][1]


#: words that are verbs far more often than nouns after "to" ("to see", "to try", "to make")
_VERBISH = re.compile("^(" + "|".join(lexicon.terms("update_verbish")) + ")$")


def _direct_object(raw: list[str], words: list[str], taken: set[int]) -> list[Value]:
    """The object of the clause's first object-taking verb ("drinks coffee", "prefer window seats",
    "switched to tea"): a value of kind ``obj``, normalised to its stems; and what a copula says someone
    or something is ("I'm a senior analyst", "the lead is a contractor"): kind ``obj:is``."""
    out = _complement(raw, words, taken)
    for i, w in enumerate(words):
        two = f"{w} {words[i + 1]}" if i + 1 < len(words) else w
        if OBJECT_VERBS.match(two):
            start = i + 2
        elif OBJECT_VERBS.match(w):
            start = i + 1
        else:
            continue
        phrase: list[int] = []
        hobby = verb_stem(w) in ("lik", "lov", "enjoy", "hat", "prefer", "start", "stop", "quit")
        for j in range(start, min(len(words), start + 5)):
            x = words[j]
            if x in _NP_SKIP and not phrase:
                continue
            if not phrase and not hobby and (x.endswith(("ing", "ed")) or _VERBISH.match(x)):
                break  # "like getting transported", "want to try": no object
            if (
                x in STOP
                or x in PREPOSITIONS
                or j in taken
                or x[:1].isdigit()
                or CHANGE.fullmatch(x)
                or is_predicate(x)
            ):
                break
            phrase.append(j)
            if len(phrase) == 3:
                break
        if phrase and all(raw[j][:1].isupper() for j in phrase):
            return out  # only names: the name values say it ("uses Vim")
        if phrase:
            text = " ".join(raw[j] for j in phrase)
            return [*out, Value("obj", " ".join(sorted(stem(words[j]) for j in phrase)), text, verb_stem(w))]
        return out
    return out


#: a Turkish verb at the end of a clause (present, past, reported past, future, aorist; any person)
_TR_VERB = re.compile(r"\w{2,}(?:[ıiuü]?yor|[dt][ıiuü]|m[ıiuü]ş|[ae]c[ae][kğ]|[ae]r|[ıiuü]r)\w{0,6}$")
#: the case ending of a Turkish noun before its verb: where to (dative), where (locative), from where (ablative)
_TR_OBJECT_CASES = (
    ("abl", re.compile(r"\w{3,}(?:[dt][ae]n)$")),
    ("loc", re.compile(r"\w{3,}(?:[dt][ae])$")),
    ("dat", re.compile(r"\w{3,}(?:y[ae]|n[ae]|[^aeıioöuü\d][ae])$")),
)


def _tr_object(raw: list[str], words: list[str], taken: set[int]) -> list[Value]:
    """The noun before a Turkish clause's final verb, by its case ("anaokuluna gidiyor" → where to; "ilkokula
    başladı"): a value of kind ``obj:<case>`` — the slot the verb fills, as an English preposition's object is.
    Names, numbers, days and times are read as such; a possessed subject ("Kızım") is no object."""
    if len(words) >= 2 and words[-1] in ("oldu", "olmuş", "olacak"):  # "okul müdürü oldu": what someone became
        return _tr_predicate(raw, words, len(words) - 2, taken)
    if len(words) >= 2 and is_copula(words, True):  # "Eşim öğretmen": a nominal sentence, its predicate
        return _tr_predicate(raw, words, len(words) - 1, taken)
    if len(words) < 2 or not _TR_VERB.match(words[-1]):
        return []
    i = len(words) - 2
    w = words[i]
    if (
        i in taken
        or raw[i][:1].isupper()
        or w in STOP
        or w in NUMBER_WORDS
        or day_of(w)
        or month_of(raw[i])
        or "'" in w
        or tr_possessive(w)
    ):
        return []
    for case, pattern in _TR_OBJECT_CASES:
        if pattern.match(w):
            return [Value(f"obj:{case}", stem(w, True), raw[i], stem(words[-1], True))]
    return []


def _tr_predicate(raw: list[str], words: list[str], i: int, taken: set[int]) -> list[Value]:
    """What a Turkish nominal sentence says its subject is ("Eşim öğretmen", "Annem emekli", "müdürü oldu"): a
    value of kind ``obj:is`` (a name, a number, a time or a unit is read as such)."""
    w = words[i]
    if (
        i in taken
        or i == 0
        or raw[i][:1].isupper()
        or not raw[i][:1].isalpha()
        or len(w) < 3
        or w in STOP
        or w in NUMBER_WORDS
        or w in UNITS
        or day_of(w)
        or month_of(raw[i])
        or "'" in w
        or "’" in w
        or tr_possessive(w)
    ):
        return []
    return [Value("obj:is", stem(w, True), raw[i])]


def _complement(raw: list[str], words: list[str], taken: set[int]) -> list[Value]:
    for i, w in enumerate(words[:-2]):
        if w not in ("is", "am", "are", "i'm", "he's", "she's", "was") or words[i + 1] not in ("a", "an", "the"):
            continue
        phrase = []
        for j in range(i + 2, min(len(words), i + 6)):
            x = words[j]
            if x in STOP or x in PREPOSITIONS or j in taken or raw[j][:1].isupper() or x[:1].isdigit():
                break
            phrase.append(j)
        if phrase:
            return [Value("obj:is", " ".join(sorted(stem(words[j]) for j in phrase)), " ".join(raw[j] for j in phrase))]
        return []
    return []


def _preposition_before(words: list[str], i: int) -> str | None:
    """The preposition that governs the noun at ``i`` ("at the library" → "at"), if any."""
    j = i - 1
    while j >= 0 and (
        words[j] in _NP_SKIP
        or words[j].endswith("'s")
        or (j == i - 1 and words[j] not in STOP and words[j] not in PREPOSITIONS and not is_predicate(words[j]))
    ):
        j -= 1
        if i - j > 3:
            return None
    return words[j] if j >= 0 and words[j] in PREPOSITIONS else None


def _age_unit(words: list[str], i: int) -> str | None:
    """A bare number said of a person is an age: "I'm 34", "my niece is 8", "just turned 35"."""
    before = words[i - 1] if i > 0 else ""
    after = words[i + 1] if i + 1 < len(words) else ""
    if after and after[:1].isalpha() and after not in ("and", "or", "now", "yesterday", "today", "last", "this"):
        return None
    if (
        before in ("turned", "turning", "turns", "aged")
        or before in ("i'm", "im")
        or (before in ("is", "was") and i >= 2 and (words[i - 2] in PERSON_NOUNS or words[i - 2] in SELF_WORDS))
    ):
        return "years"
    return None


def _unit_after(raw: list[str], i: int) -> str | None:
    if i + 1 >= len(raw):
        return None
    nxt = core_form(raw[i + 1])
    return UNITS.get(nxt) or next((u for k, u in UNITS.items() if len(k) > 3 and nxt.startswith(k)), None)


def _name_at_lead(raw: list[str], i: int, turkish: bool) -> bool:
    """The first word of a clause is capitalised anyway: a name only when a capitalised word follows
    ("Priya Nair"), or (Turkish) an apostrophe sets off its suffix ("Zeynep'in")."""
    if i + 1 < len(raw) and raw[i + 1][:1].isupper():
        return True
    return turkish and ("'" in raw[i] or "’" in raw[i])


def _anchor(words: list[str], index: int, turkish: bool = False) -> str:
    for j in range(index - 1, max(-1, index - 5), -1):
        w = words[j]
        if w in STOP or w in TITLE or w[:1].isdigit() or CHANGE.fullmatch(w) or w in PREPOSITIONS:
            continue
        return stem(w, turkish)
    return ""


def _anchor_before(text: str, turkish: bool = False) -> str:
    words = [fold(w) for w in TOKEN.findall(text)]
    return _anchor(words, len(words), turkish)
