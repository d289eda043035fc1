"""The words and patterns the update reading looks for (EN + TR): stop words, change, correction and letting-go
words, attribute families, numbers, days, months and units.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from reverie import lexicon

#: evidence at or above this is an update (the write path supersedes the old memory)
UPDATE_SCORE = 3.0
#: evidence at or above this orders two answers to one question newest first (read path)
LIKELY_SCORE = 2.5

#: a ratio or a score, one value: "5:2" (a diet), "16:8", "3-1", "2–0" (a clock time such as "7:30" is read first)
RATIO = re.compile(r"(\d{1,3})\s?[:\-–]\s?(\d{1,3})")
#: the words of a phrase up to punctuation (a "." or ":" between digits — "3.5", "5:2" — is part of a number)
_UPTO = r"(?:[^,.;:!?]|(?<=\d)[.,:](?=\d))+"
#: a phrase up to punctuation that ends it (a number's "." or ":" between digits — "3.5", "5:2" — does not)
PHRASE_END = re.compile(r"(?<!\d)[,.;:!?]|[,.;:!?](?!\d)")
TOKEN = re.compile(
    r"\d{1,3}[\-–]\d{1,3}(?![\d\-–])|\d+(?:[.,:]\d+)*(?:['’]?[^\W\d_]+)?|"
    r"[^\W_]+(?:['’][^\W_]+)*(?:(?<=[sS])['’](?![^\W_]))?",
    re.UNICODE,
)
ABBREV = re.compile(r"\b(" + "|".join(lexicon.terms("update_abbreviations")) + r")\.", re.IGNORECASE)
TAG = re.compile(r"(?<!\w)#[\w-]+")  # "#24", "#todo": a tag or an id, not a value
#: a semicolon joins two clauses of one sentence ("The landlord raised the rent; we pay 1,550 now"): a change
#: said in one holds for the other, so it cuts a clause (CLAUSE), not a sentence
SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n+|\s+[-–—]\s+")
_SINCE_TIME = r"(?:the\s+|last\s+|early\s+|late\s+|mid-?)?(?:" + "|".join(lexicon.terms("update_since_time")) + r")\b"
#: a new state from a time on: "since January", "ever since last spring" (not "since Clara is renovating")
SINCE = re.compile(r"\b(?:ever\s+)?since\s+" + _SINCE_TIME, re.IGNORECASE)
CLAUSE = re.compile(
    r"[,;]\s+(?:so|but|and|then|ama|fakat|çünkü|yani)?\s*|\s+(?:so|but|whereas|because|since(?!\s+"
    + _SINCE_TIME
    + r")|ama|fakat|çünkü)\s+",
    re.I,
)
ISO_NOTE = re.compile(r"\s*\(\d{4}-\d{2}-\d{2}(?:\s*[–-]\s*\d{4}-\d{2}-\d{2})?\)")
#: a "Name: " or "label 12: " prefix (a speaker, a turn label): not part of what is said
SPEAKER = re.compile(
    r"^\s*([A-ZÇĞİÖŞÜ][\w'-]{0,20}(?: [A-ZÇĞİÖŞÜ][\w'-]{0,20}){0,2}(?: \d{1,6})?|"
    r"[\w'-]{1,20}(?: [\w'-]{1,20}){0,3} \d{1,6}):\s+(?=\S)"
)


# words -----------------------------------------------------------------------------------------

STOP = lexicon.words("update_stop_words")
FIRST_PERSON = lexicon.words("update_first_person")
DETERMINERS = lexicon.words("update_determiners")
#: people a speaker names by their relation ("my sister", "annem"): a possessive subject that is a person
PERSON_NOUNS = lexicon.words("update_person_nouns")
#: scheduled things: one of them happens at one time and place ("the meeting", "toplantı", "randevu")
EVENTS = lexicon.words("update_events")
#: words that ask nothing and assert no value at the start of a statement ("Honestly, …", "Update: …")
DISCOURSE = lexicon.words("update_discourse")

#: a change: what held before holds no longer (EN + TR)
CHANGE = lexicon.pattern("update_change")
#: a value taken up again after it was let go ("started smoking again", "back on coffee", "tekrar başladım")
RESUME = lexicon.pattern("update_resume")
#: a correction of what was said before
CORRECTION = lexicon.pattern("update_correction")
#: the new statement adds to what was said instead of replacing it
ADDITIVE = re.compile(
    r"\b(" + "|".join(lexicon.terms("update_additive")) + r")\b|(?<=\s)(?:de|da)(?=\s|$)", re.IGNORECASE
)
#: a value let go: "gave up on X", "X left", "not X", "X'i bıraktım" (the value is found next to these)
DROP_BEFORE = re.compile(
    r"\b(" + "|".join(lexicon.terms("update_drop_before")) + r")\s+(?:the |my |our |a |an |using |on )?", re.IGNORECASE
)
#: a value said not to hold ("not Alfama", "instead of Tuesday"): lets go of a value, never of a plain word
NOT_VALUE = re.compile(
    r"\b(" + "|".join(lexicon.terms("update_not_value")) + r")\s+(?:the |my |our |a |an |on )?", re.IGNORECASE
)


@dataclass(frozen=True, slots=True)
class Guarded:
    """A pattern whose second alternative, the Turkish one, cannot match without a verb that ``guard`` finds.
    Where the text holds none, the first alternative alone finds the same matches, without trying the
    Turkish one (a slow one: a phrase of up to 40 characters before a suffix) at every position."""

    full: re.Pattern[str]
    first: re.Pattern[str]
    guard: re.Pattern[str]

    def finditer(self, text: str) -> Iterator[re.Match[str]]:
        return (self.full if self.guard.search(text) else self.first).finditer(text)


def _guarded(first: str, turkish: str, verbs: str, groups: tuple[str, ...]) -> Guarded:
    """:class:`Guarded` of ``first|turkish`` (case-insensitive), ``turkish`` ending in ``\\s+`` + ``verbs``; the
    first alternative alone keeps the Turkish one's ``groups`` (never set)."""
    never = "(?!)" + "".join(f"(?P<{g}>)" for g in groups)
    return Guarded(
        re.compile(f"{first}|{turkish}", re.IGNORECASE),
        re.compile(f"{first}|{never}", re.IGNORECASE),
        re.compile(r"\s+" + verbs, re.IGNORECASE),
    )


#: "from X to Y", "X'ten Y'ye geçtim"
FROM_TO = _guarded(
    r"\bfrom\s+(?P<a>[^,.;]{1,40}?)\s+(?:to|over to|for)\s+(?P<b>[^,.;]{1,40})",
    r"(?P<c>[\wçğıöşüÇĞİÖŞÜ' ]{2,40}?)['’]?(?:dan|den|tan|ten)\s+(?P<d>[\wçğıöşüÇĞİÖŞÜ' ]{2,40}?)['’]?"
    r"(?:ya|ye|a|e|na|ne)\s+(?:geç|taşı|aktar|değiştir)",
    r"(?:geç|taşı|aktar|değiştir)",
    ("c", "d"),
)
NEGATION = lexicon.pattern("update_negation")
#: a stretch of time up to now ("in three weeks", "üç aydır"): with a negation, something done without since
GONE_WITHOUT = lexicon.pattern("update_gone_without")
NEGATION_TR = re.compile(r"\b(değil\w*|\w+m[ıiuü]yor\w*|\w+m[ae]z\w*|\w+m[ae]d[ıi]\w*)\b", re.IGNORECASE)
#: "artık çay yok" (no more tea): what follows "artık" is let go ("çay yok artık" is a word let go after it)
NO_MORE_TR = re.compile(r"\bartık\s+(?P<x>[\wçğıöşüÇĞİÖŞÜ'’]+)\s+yok\b", re.IGNORECASE)
OVER = re.compile(r"\b(\w+) over (\w+)\b", re.IGNORECASE)
LIKE = lexicon.words("update_like")
DISLIKE = lexicon.words("update_dislike")
POLARITY_WORDS = LIKE | DISLIKE


def _whole_words(name: str) -> re.Pattern[str]:
    """A whole token that is one of the entries of the word list ``name`` (``^(…|…)$``, as written)."""
    return re.compile("^(" + "|".join(lexicon.terms(name)) + ")$")


@dataclass(frozen=True, slots=True)
class Family:
    """One attribute said in different words. ``functional``: it holds one value at a time (where
    someone lives, whom they report to). ``kinds``: the kinds of value it takes; ``values``: words that
    are values themselves (a diet, a way to commute)."""

    functional: bool
    trigger: re.Pattern[str]
    kinds: frozenset[str]
    values: re.Pattern[str] | None = None
    phrase: re.Pattern[str] | None = None  # a trigger of several words ("get up")


FAMILIES: dict[str, Family] = {
    "residence": Family(
        True,
        _whole_words("update_family_residence"),
        frozenset({"name", "obj:in", "obj:to"}),
    ),
    "work": Family(
        True,
        _whole_words("update_family_work"),
        frozenset({"name", "obj:as"}),  # where someone works, and as what ("works as a nurse")
    ),
    "manager": Family(
        True,
        _whole_words("update_family_manager"),
        frozenset({"name"}),
    ),
    "diet": Family(
        True,
        _whole_words("update_family_diet"),
        frozenset({"family:diet"}),
        _whole_words("update_family_diet_values"),
    ),
    "commute": Family(
        True,
        _whole_words("update_family_commute"),
        frozenset({"family:commute"}),
        _whole_words("update_family_commute_values"),
        phrase=re.compile(
            r"\b(?:by|take the|takes the|took the|ride the|ride my|ride a)\s+(?:bike|"
            r"bicycle|bus|tram|car|metro|subway|tube|ferry|scooter|train)\b|"
            r"\b(?:bisiklet|otobüs|metro|araba|tramvay|vapur)(?:le|la|yle|yla)\b|"
            r"\b(?:işe|to work)\b",
            re.IGNORECASE,
        ),
    ),
    "wake": Family(
        True,
        _whole_words("update_family_wake"),
        frozenset({"time"}),
        phrase=re.compile(r"\b(?:get|gets|got|getting)\s+up\b", re.IGNORECASE),
    ),
    "age": Family(True, _whole_words("update_family_age"), frozenset({"number@years"})),
    "relationship": Family(
        True,
        _whole_words("update_family_relationship"),
        frozenset({"family:relationship"}),
        _whole_words("update_family_relationship_values"),
        phrase=re.compile(
            r"\b(?:seeing|dating)\s+(?:someone|somebody|a\s+(?:guy|girl|man|woman))\b|\b(?:broke|split|break)\s+up\b",
            re.IGNORECASE,
        ),
    ),
    "preference": Family(
        False,
        _whole_words("update_family_preference"),
        frozenset({"name", "obj:in", "obj:at"}),
    ),
    "learning": Family(False, _whole_words("update_family_learning"), frozenset({"name"})),
    "use": Family(False, _whole_words("update_family_use"), frozenset({"name"})),
}
PAST_EN = re.compile("^(" + "|".join(lexicon.terms("update_past_verbs")) + ")$")
PAST_TR = re.compile(r"^\w{2,}(?:d[ıiuü]|t[ıiuü])(?:m|n|k|niz|nız|nuz|nüz|lar|ler)?$|^idi\w*$")
_PRESENT_TR_FIRST = re.compile(r"^\w+(?:yor|[ıiuü]r|[ae]r|yim|y[ıi]m|[ıiuü]m)(?:um|üm|ım|im|uz|üz|ız|iz)?$")

#: ordinal number words (a rank, not an amount)
ORDINAL_WORDS = frozenset(
    {"first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth", "twelfth"}
    | {"twentieth", "birinci", "ikinci", "üçüncü", "dördüncü", "beşinci"}
)
_NUMBER_WORDS: dict[str, int | None] = {
    "zero": 0,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "thirteen": 13,
    "fourteen": 14,
    "fifteen": 15,
    "sixteen": 16,
    "seventeen": 17,
    "eighteen": 18,
    "nineteen": 19,
    "twenty": 20,
    "thirty": 30,
    "forty": 40,
    "fifty": 50,
    "sixty": 60,
    "seventy": 70,
    "eighty": 80,
    "ninety": 90,
    "hundred": 100,
    "thousand": 1000,
    "dozen": 12,
    "first": 1,
    "second": 2,
    "third": 3,
    "fourth": 4,
    "fifth": 5,
    "sixth": 6,
    "seventh": 7,
    "eighth": 8,
    "ninth": 9,
    "tenth": 10,
    "twelfth": 12,
    "twentieth": 20,
    "sıfır": 0,
    "iki": 2,
    "üç": 3,
    "dört": 4,
    "beş": 5,
    "altı": 6,
    "yedi": 7,
    "sekiz": 8,
    "dokuz": 9,
    "on": None,
    "yirmi": 20,
    "otuz": 30,
    "kırk": 40,
    "elli": 50,
    "altmış": 60,
    "yetmiş": 70,
    "seksen": 80,
    "doksan": 90,
    "yüz": 100,
    "bin": 1000,
    "birinci": 1,
    "ikinci": 2,
    "üçüncü": 3,
    "dördüncü": 4,
    "beşinci": 5,
}
NUMBER_WORDS: dict[str, int] = {k: v for k, v in _NUMBER_WORDS.items() if v is not None}
#: the number words of a number said in several ("eighty-four", "one hundred and twenty", "seksen beş",
#: "yedi buçuk"): units, tens, the multipliers and the Turkish half ("buçuk"); "on" (ten) and "bir" (one) are
#: Turkish number words inside such a run only
SPELLED_UNITS = {
    **{w: n for w, n in NUMBER_WORDS.items() if n < 20 and w not in ORDINAL_WORDS},
    "on": 10,
    "bir": 1,
}
SPELLED_TENS = {w: n for w, n in NUMBER_WORDS.items() if n in (20, 30, 40, 50, 60, 70, 80, 90)}
SPELLED_SCALES = {"hundred": 100, "thousand": 1000, "dozen": 12, "yüz": 100, "bin": 1000}
#: a Turkish case suffix on a number word ("altıda" at six, "beşe" to five, "bine" to a thousand, "buçukta")
SPELLED_TR_CASE = re.compile(r"^(?P<w>.+?)(?:['’]?(?P<case>[dt][ae]|y?[ae]|[dt][ae]n|y?[ıiuü]))?$")
ORDINALS = lexicon.words("update_ordinals")
DAYS = (
    ("monday", "pazartesi"),
    ("tuesday", "salı"),
    ("wednesday", "çarşamba"),
    ("thursday", "perşembe"),
    ("friday", "cuma"),
    ("saturday", "cumartesi"),
    ("sunday", "pazar"),
)
MONTHS = (
    ("january", "ocak"),
    ("february", "şubat"),
    ("march", "mart"),
    ("april", "nisan"),
    ("may", "mayıs"),
    ("june", "haziran"),
    ("july", "temmuz"),
    ("august", "ağustos"),
    ("september", "eylül"),
    ("october", "ekim"),
    ("november", "kasım"),
    ("december", "aralık"),
)
UNITS = {
    "kg": "kg",
    "kgs": "kg",
    "kilo": "kg",
    "kilos": "kg",
    "kilogram": "kg",
    "kilograms": "kg",
    "kilom": "kg",
    "lb": "lb",
    "lbs": "lb",
    "pounds": "money/gbp",
    "pound": "money/gbp",
    "£": "money/gbp",
    "quid": "money/gbp",
    "euro": "money/eur",
    "euros": "money/eur",
    "€": "money/eur",
    "eur": "money/eur",
    "dollar": "money/usd",
    "dollars": "money/usd",
    "$": "money/usd",
    "usd": "money/usd",
    "lira": "money/try",
    "tl": "money/try",
    "mg": "mg",
    "ml": "ml",
    "km": "km",
    "miles": "mi",
    "mile": "mi",
    "people": "people",
    "kişi": "people",
    "years": "years",
    "year": "years",
    "yaşında": "years",
    "yaş": "years",
    "minutes": "min",
    "min": "min",
    "hours": "h",
    "dakika": "min",
    "saat": "h",
}
#: a suffix that multiplies the number it ends: "45k" (a salary, a price) is 45,000, never kilometres
MULTIPLIERS = {"k": 1000.0}
#: the unit of such an amount: of money most often, so it is of one kind with a sum in a currency
THOUSANDS = "thousand"
TIME = re.compile(
    r"\b(\d{1,2})(?:[:.](\d{2}))?\s*(am|pm|a\.m\.|p\.m\.)|\b(\d{1,2})[:.](\d{2})\b"
    r"|\bsaat\s+(\d{1,2})(?:[:.](\d{2}))?",
    re.IGNORECASE,
)
TITLE = lexicon.words("update_titles")
#: words that only qualify a value ("the old account", "my previous job"): never a value themselves
QUALIFIER = lexicon.words("update_qualifiers")
#: words that open a time adverbial after an object ("sold the Civic last weekend"): when, not what
TIME_START = lexicon.words("update_time_start")


TOPIC_VERB = re.compile("^(" + "|".join(lexicon.terms("update_topic_verbs")) + ")$")


DROP_AROUND = re.compile(
    r"\b(?:put|set|laid|gave|gives?|giving)\s+(?P<x>(?:[\w'’]+\s+){0,2}?[\w'’]+)\s+"
    r"(?:down|aside|away|up)\b",
    re.IGNORECASE,
)
#: where a change goes: "switched to Neovim", "moved to Wednesdays", "Neovim'e geçti", "yerine Japonca"
TARGET = _guarded(
    r"\b(?:switch(?:ed|ing)?|chang(?:ed|ing)|mov(?:ed|ing)|shift(?:ed|ing)|migrat(?:ed|ing)|relocat(?:ed|ing)|"
    r"went|go(?:ing)?|"
    r"transferr?(?:ed|ing)?|c[oa]m(?:e|ing)\s+(?:a)?round|warm(?:ed|ing)(?:\s+up)?|"
    r"push(?:ed)?(?:\s+\w+){0,3}\s+back|extended|raised|upped|doubled|halved|bumped(?:\s+\w+){0,4}?\s+up)\s+"
    r"(?:over\s+)?to\s+(?P<x>" + _UPTO + r")"
    r"|\b(?:raised|upped|increased|lowered|reduced|cut|doubled|halved)\s+(?:my|the|our|his|her)\s+"
    r"(?:[\w'’]+\s+){0,2}?to\s+(?P<x4>" + _UPTO + r")"
    r"|\b(?:decided|settled)\s+on\s+(?P<x2>" + _UPTO + r")|\bopted\s+for\s+(?P<x3>" + _UPTO + r")",
    r"(?P<y>[\wçğıöşüÇĞİÖŞÜ]+)['’]?(?:y?[ae]|n[ae])\s+(?:geç\w*|taşın\w*|ertele\w*|uzat\w*)",
    r"(?:geç|taşın|ertele|uzat)",
    ("y",),
)
DROP_AFTER_WORD = re.compile(
    r"(?P<x>(?:\b[A-ZÇĞİÖŞÜ][\w'’]*\s+)?\b[\w'’]+\+?)\s+(?:just\s+|has\s+|had\s+)?"
    r"(?:left|retired|quit|died|broke(?: down)?|filled up|(?:is|was) (?:full|closed|cancell?ed|gone|over)|"
    r"(?:are|were|is|was|got|been) (?:off|called off|cancell?ed|scrapped)(?!\s+(?:to|for|at|on|until|till)\b)|"
    r"fell through|moved away|closed down|shut down|kept (?:missing|failing)|passed away|passed on|"
    r"closed(?!\s+(?:on|at|for|until|till|early|over|at)\b)|went (?:bust|under|out of business)|burn[et] down|"
    r"bıraktı\w*|ayrıldı\w*|emekli oldu\w*|taşındı\w*|öldü\w*|bozuldu\w*|kapandı\w*|iptal oldu\w*|sattı\w*|"
    r"verdi\w*|bitirdi\w*|(?:was|got|has been|been) (?:written off|stolen|totall?ed|scrapped|towed)|"
    r"kapattı\w*|vazgeçti\w*|sildi\w*|iptal etti\w*|değil\w*|yerine|yok artık|stepped down|"
    r"handed (?:\w+ ){0,4}over|(?:is|was|were|are|got) (?:fully |completely |all )?booked(?: up| out)?|sold out|"
    r"(?:is|was|were|are) hopeless|(?:wasn't|isn't|weren't|aren't|didn't|doesn't) (?:cutting it|work(?:ing)?(?: out)?)|"
    r"(?:is|was|are|were)(?:n't| not) for (?:me|him|her|us|them)|"
    r"doldu\w*|veda ett\w*|sıkıldı\w*|bıktı\w*|(?:bana|ona|bize|onlara|sana) göre değil\w*)\b",
    re.UNICODE,
)
#: a thing given away: "gave my season ticket to my nephew", "handed the old car over to …" (two words at most after
#: the determiner: "gave my sister a lift" gives nothing away)
GIVEN_AWAY = re.compile(
    r"\b(?:gave|given|giving|handed|passed)\s+(?:away\s+)?(?P<x>(?:my|our|the|his|her|their)\s+(?:[\w'’]+\s+)?[\w'’]+)"
    r"\s+(?:to|away|on)\b",
    re.IGNORECASE,
)
#: a Turkish adjective of having and its opposite of lacking on one root ("şekerli" / "şekersiz", "tuzlu" / "tuzsuz")
WITH_TR = re.compile(r"^(?P<root>\w{2,}?)(?:l[ıiuü])$")
WITHOUT_TR = re.compile(r"^(?P<root>\w{2,}?)(?:s[ıiuü]z)$")
#: what follows a thing that is gone for good ("the falafel place closed", "the bakery went bust"): the thing is
#: let go, as a verb of giving up lets go of its object
THING_ENDED = re.compile(
    r"^\s*(?:just\s+|has\s+|had\s+)?"
    r"(?:closed|shut down|went (?:bust|under|out)|burn[et] down|(?:is|was) (?:closed|gone)|"
    r"(?:was|got|has been|been) (?:written off|stolen|totall?ed|scrapped))",
    re.IGNORECASE,
)
#: a Turkish object in the accusative ("Samsung'u", "kahveyi", "arabayı"): what a verb of letting go lets go of
#: when a dative stands between them ("Samsung'u kardeşime verdim")
ACCUSATIVE_TR = re.compile(r"^[\wçğıöşü]{2,}(?:['’]y?[ıiuü]|[aeıioöuü]y[ıiuü])$", re.IGNORECASE)
#: a value no longer held, said with a negation: "I don't go to the gym any more", "not vegetarian anymore",
#: "no longer take the bus", "Artık spor salonuna gitmiyorum", "Spor salonuna artık gitmiyorum"
NO_LONGER = re.compile(
    r"(?:\bnot|n['’]t|\bnever)\s+(?P<x>(?:[\w'’]+\s+){0,5}?)any\s?more\b|\bno longer\s+(?P<y>" + _UPTO + r")",
    re.IGNORECASE,
)
NO_LONGER_TR = re.compile(
    r"\bartık\s+(?P<x>(?:[\w'’]+\s+){0,4}?)[\w'’]+(?:m[ıiuü]yor|m[ae]z|m[ae]m)\w*"
    r"|(?P<y>(?:[\w'’]+\s+){1,4}?)artık\s+[\w'’]+(?:m[ıiuü]yor|m[ae]z|m[ae]m)\w*",
    re.IGNORECASE,
)
#: what the speaker says they were wrong about ("I was wrong about penicillin", "got the date wrong", "Tom
#: konusunda yanılmışım"): the old statement about it is taken back
WRONG_ABOUT = re.compile(
    r"\b(?:wrong|mistaken|confused)\s+about\s+(?P<x>" + _UPTO + r")|\bgot\s+(?P<y>(?:[\w'’]+\s+){1,3}?)wrong\b"
    r"|(?P<z>[\w'’]+)\s+(?:konusunda|hakkında)\s+yan[ıi]l",
    re.IGNORECASE,
)
#: "X yerine" (instead of X): X is let go
INSTEAD_TR = re.compile(r"(?P<x>[\wçğıöşüÇĞİÖŞÜ'’]+)\s+yerine\b", re.IGNORECASE)
#: a Turkish verb said in the negative ("koşmuyorum", "içmiyorum", "gitmem"): its root is what is no longer done
NEGATED_VERB_TR = re.compile(r"^(?P<root>\w{2,}?)m[ıiuü]yor\w*$|^(?P<root2>\w{2,}?)m[ae](?:z|m)\w*$")
#: a Turkish verb that moves a scheduled thing to its dative ("pazar öğleden sonraya aldık", "salıya çektik")
MOVED_TO_TR = re.compile(r"^(?:al[dın]|çek[tilm]|kaydır|kayd[ıi])\w*$")
PREPOSITIONS = lexicon.words("update_prepositions")
OBJECT_VERBS = re.compile("^(" + "|".join(lexicon.terms("update_object_verbs")) + ")$")


SELF_WORDS = lexicon.words("update_self_words")
#: what one belongs to and leaves for good ("left the climbing club"): after "left" it is let go
LEFT_GROUPS = lexicon.words("update_left_groups")
#: a move out said without where to ("got his own place", "moved out", "kendi evime çıktım")
MOVED_OUT = lexicon.pattern("update_moved_out")
#: what each diet or abstention excludes ("vegetarian" → meat, chicken …; "teetotal" → wine, beer …)
DIET_EXCLUDES: dict[str, frozenset[str]] = {}
for _entry in lexicon.terms("update_diet_excludes"):
    _diet, _, _excluded = _entry.partition(":")
    DIET_EXCLUDES[_diet.strip()] = DIET_EXCLUDES.get(_diet.strip(), frozenset()) | frozenset(_excluded.split())
