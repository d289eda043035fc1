"""Knowledge updates: does a newer statement change what an older one says? (EN + TR, no model.)

People state changes in many ways: "I moved to Munich", "Priya left, I report to Daniel now",
"Berlin filled up so I signed up for the Chicago one instead", "it's 4:30, not 5", "VS Code'u
bıraktım, artık Neovim kullanıyorum". Two related facts are just as often both true: "Maya works
at Google in Zurich" and "Maya moved from Lisbon to Zurich"; "Ana likes tea at home" and "Ana likes
coffee at work"; "The rent is 1350 euros" and "The deposit was 2700 euros".

:func:`judge` reads both statements into clauses (:func:`analyse`) and weighs the evidence that the
new one replaces a value of the old one (:class:`Verdict` with the reason and each piece of
evidence). Evidence *for* an update:

* **the old value let go** — the new statement drops, ends or negates a value the old one asserts
  ("gave up on VS Code", "Priya left", "not Alfama", "Kahveyi bıraktım", "vegan değilim");
* **from → to** — "from LastPass to Bitwarden", "Garanti'den Akbank'a" where the old states the first;
* **a polarity flip** over the same words ("allergic to cats" → "not allergic to cats", likes → hates);
* **the same slot, another value** — the same subject and the same attribute (shared frame words, or
  one attribute family such as where someone lives, works, whom they report to) with a value of
  the same kind replaced (a name, a number with its unit, a weekday, a date, a time, the object of
  the same preposition), counted when the attribute holds one value at a time ("X is V", where
  someone lives or works) or when the new statement says that something changed ("switched",
  "moved to", "now", "instead", "artık", "geçtik") or corrects ("actually", "sorry, I meant").

Evidence *against*: different subjects ("my brother" / "my sister", "The Berlin office" / "The Lisbon
office"), the new statement adding rather than replacing ("also", "too", "again", "another", "de/da",
"bir de"), several values changing at once without a change word (another occasion, not a new value),
an old statement about the past ("I lived in Berlin for five years"), a value the old one already
holds ("moved to Zurich" against "works in Zurich").

The verdict is an *update* at ``UPDATE_SCORE``; the read path uses the weaker ``LIKELY_SCORE`` to
order two memories that both answer one question (never to hide one). Pure functions; the results of
:func:`analyse` are cached by text.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from functools import lru_cache

#: evidence at or above this is an update (the write path supersedes the old memory)
UPDATE_SCORE = 3.0
#: evidence at or above this orders two answers to one question newest first (read path)
LIKELY_SCORE = 2.5

_TOKEN = re.compile(
    r"\d+(?:[.,:]\d+)*(?:['’]?[^\W\d_]+)?|[^\W_]+(?:['’][^\W_]+)*(?:(?<=[sS])['’](?![^\W_]))?", re.UNICODE
)
_ABBREV = re.compile(r"\b(Dr|Mr|Mrs|Ms|Prof|St|Mt|Jr|Sr|vs|etc|No|Av|Cad|Sok|Mah)\.", re.IGNORECASE)
_TAG = re.compile(r"(?<!\w)#[\w-]+")  # "#24", "#todo": a tag or an id, not a value
_SENTENCE_END = re.compile(r"(?<=[.!?;])\s+|\n+|\s+[-–—]\s+")
_CLAUSE = re.compile(
    r",\s+(?:so|but|and|then|ama|fakat|çünkü|yani)?\s*|\s+(?:so|but|whereas|because|since|ama|fakat|"
    r"çünkü)\s+",
    re.I,
)
_ISO_NOTE = re.compile(r"\s*\(\d{4}-\d{2}-\d{2}(?:\s*[–-]\s*\d{4}-\d{2}-\d{2})?\)")
#: a "Name: " or "label 12: " prefix (a speaker, a turn label): not part of what is said
_SPEAKER = re.compile(
    r"^\s*([A-ZÇĞİÖŞÜ][\w'-]{0,20}(?: [A-ZÇĞİÖŞÜ][\w'-]{0,20}){0,2}(?: \d{1,6})?|"
    r"[\w'-]{1,20}(?: [\w'-]{1,20}){0,3} \d{1,6}):\s+(?=\S)"
)


def _lex(text: str) -> frozenset[str]:
    return frozenset(text.split())


# words -----------------------------------------------------------------------------------------

_STOP = _lex("""
a an the and or but if then so of to in on at by for with from as is are was were be been being am
i me my mine we our ours us you your he him his she her it its they them their this that these those
do does did done have has had having will would shall should can could may might must not no yes
just very really quite also too than there here what which who whom whose when where why how all any
some about into over under again more most such only own same other up down out off once every each
i'm i've i'd i'll we're we've it's that's there's don't doesn't didn't can't won't isn't aren't
user users ok okay oh yeah hey hi well get got let lets let's one ones thing things bit lot
still always usually often never sometimes already ever even mostly generally currently
something anything everything nothing someone anyone everyone somebody anybody everybody stuff way lots
myself yourself himself herself itself ourselves yourselves themselves
bir ve ile de da bu şu o ben sen biz siz onlar için gibi ama fakat çok daha en mi mı mu mü ne
var yok ki ya veya hem şey olarak olan oldu olur diye kadar sonra önce her gün günü günleri
""")
_FIRST_PERSON = _lex(
    "i me my mine myself we us our ours ourselves i'm i've i'd i'll we're we've we'd we'll "
    "ben beni bana benim biz bizi bize bizim"
)
_DETERMINERS = _lex("the a an this that these those his her their its your")
#: people a speaker names by their relation ("my sister", "annem"): a possessive subject that is a person
_PERSON_NOUNS = _lex("""
mother mum mom mummy father dad daddy parent parents brother sister son daughter kid kids child children
husband wife partner boyfriend girlfriend fiance fiancee friend friends neighbour neighbor neighbours boss
manager colleague coworker niece nephew aunt uncle cousin grandma grandmother granny grandpa grandfather
family baby twins roommate housemate flatmate landlord landlady tutor teacher doctor dentist vet gp
coach trainer therapist nurse nanny babysitter accountant lawyer barber hairdresser mechanic
anne annem babam baba kardeş kardeşim abla ablam ağabey abim oğul oğlum kız kızım eş eşim koca kocam
karım sevgili sevgilim arkadaş arkadaşım komşu komşum patron patronum yönetici yöneticim müdür müdürüm
aile ailem teyze teyzem amca amcam dayı dayım hala halam yeğen yeğenim torun kuzen kuzenim çocuk çocuğum
çocuklar çocuklarım
""")
#: scheduled things: one of them happens at one time and place ("the meeting", "toplantı", "randevu")
_EVENTS = _lex("""
meeting meetings appointment appointments class classes lesson lessons flight flights train wedding party dinner
lunch breakfast surgery operation deadline concert match game interview exam session sessions sync call
toplantı toplantısı randevu randevusu ders dersi uçuş uçuşu düğün düğünü parti yemek ameliyat ameliyatı
teslim sınav sınavı maç maçı görüşme konser seans
""")
#: words that ask nothing and assert no value at the start of a statement ("Honestly, …", "Update: …")
_DISCOURSE = _lex("""
actually honestly update heads up good news bad news change of plans correction sorry oops so well anyway
btw also just finally basically fyi quick note ok okay yes no yeah aslında neyse bu arada düzeltme pardon
these days nowadays lately recently currently now instead artık şimdi bu aralar son zamanlarda
kusura bakma evet hayır tamam
""")

#: a change: what held before holds no longer (EN + TR)
_CHANGE = re.compile(
    r"\b(switch(?:ed|es|ing)?|mov(?:ed|es|ing)|chang(?:ed|es|ing)|replac(?:ed|es|ing)|swapp?(?:ed|ing)?|"
    r"migrat(?:ed|es|ing)|relocat(?:ed|es|ing)|transferr?(?:ed|ing)|upgrad(?:ed|ing)|downgrad(?:ed|ing)|"
    r"instead|now|nowadays|these days|anymore|any more|no longer|from now on|new|newly|"
    r"push(?:ed)?(?: \w+){0,3} (?:back|forward)|postponed|rescheduled|brought forward|extended|raised|increased|"
    r"lowered|reduced|bumped|went (?:up|down)|gone (?:up|down)|down to|up to|turned|became|become|"
    r"promoted|took over|resched\w*|rewr\w*|rebuilt|redid|redone|redesigned|"
    r"handed (?:\w+ )*over|"
    r"artık|şimdi|yeni|değişti\w*|değiştir\w*|geçti\w*|geçiyor\w*|geçeceğ\w*|taşındı\w*|taşıdı\w*|"
    r"taşınıyor\w*|ertele\w*|uzattı\w*|uzatıldı\w*|çıkardı\w*|çıktı\w*|indirdi\w*|indi\w*|düştü\w*|"
    r"alındı\w*|kaydır\w*|başladı\w*|bu aralar|son zamanlarda|bundan sonra|yerine|baştan)\b",
    re.IGNORECASE,
)
#: a correction of what was said before
_CORRECTION = re.compile(
    r"\b(actually|correction|sorry|i meant|i mean|wrong|mistake|oops|my bad|scratch that|to be precise|"
    r"aslında|düzeltme|pardon|yanlış|hata|özür|kusura bakma|yani)\b",
    re.IGNORECASE,
)
#: the new statement adds to what was said instead of replacing it
_ADDITIVE = re.compile(
    r"\b(also|too|as well|again|another|second|both|in addition|plus|besides|still|either|"
    r"before that|the \w+ before|dahi|bir de|yine|hâlâ|hala|ayrıca|ikinci|başka)\b|(?<=\s)(?:de|da)(?=\s|$)",
    re.IGNORECASE,
)
#: a value let go: "gave up on X", "X left", "not X", "X'i bıraktım" (the value is found next to these)
_DROP_BEFORE = re.compile(
    r"\b(gave up(?: on)?|give up(?: on)?|given up(?: on)?|giving up(?: on)?|quit|quitting|dropped|ditched|cancell?ed|"
    r"closed|sold|scrapp?(?:ed)?|deleted|uninstalled|removed|unsubscribed from|"
    r"(?:took|taken|removed)\s+(?:\w+\s+){0,3}?(?:from|out of)(?:\s+under)?|"
    r"stopped(?: using| going to| taking| drinking| eating)?|put down|cut out|got rid of|moved out of|"
    r"had it with|fed up with|done with|"
    r"moved away from|switched from|changed from|migrated from|replaced|left|leaving|off|"
    r"don't (?:use|go to|drink|eat|take|like|have|see)|do not (?:use|go to))\s+(?:the |my |our |a |an |using |on )?",
    re.IGNORECASE,
)
#: a value said not to hold ("not Alfama", "instead of Tuesday"): lets go of a value, never of a plain word
_NOT_VALUE = re.compile(
    r"\b(not|no longer|instead of|rather than|no more|not at|not in|not on|not with)\s+"
    r"(?:the |my |our |a |an |on )?",
    re.IGNORECASE,
)
_DROP_AFTER = re.compile(
    r"^\s*(?:\w+\s+)?(left|retired|quit|died|broke(?: down)?|filled up|(?:is|was) (?:full|closed|cancell?ed|gone)|"
    r"fell through|moved away|closed down|shut down|anymore|any more|is out|no longer|"
    r"bıraktı\w*|sattı\w*|kapattı\w*|ayrıldı\w*|emekli oldu\w*|taşındı\w*|değil\w*|iptal\w*|vazgeçti\w*|"
    r"yerine|öldü\w*|bozuldu\w*|kapandı\w*)\b",
    re.IGNORECASE,
)
_FROM_TO = re.compile(
    r"\bfrom\s+(?P<a>[^,.;]{1,40}?)\s+(?:to|over to|for)\s+(?P<b>[^,.;]{1,40})"
    r"|(?P<c>[\wçğıöşüÇĞİÖŞÜ' ]{2,40}?)['’]?(?:dan|den|tan|ten)\s+(?P<d>[\wçğıöşüÇĞİÖŞÜ' ]{2,40}?)['’]?"
    r"(?:ya|ye|a|e|na|ne)\s+(?:geç|taşı|aktar|değiştir)",
    re.IGNORECASE,
)
_NEGATION = re.compile(
    r"\b(not|no longer|never|don't|doesn't|isn't|aren't|wasn't|weren't|didn't|won't|n't)\b", re.IGNORECASE
)
_NEGATION_TR = re.compile(r"\b(değil\w*|\w+m[ıiuü]yor\w*|\w+m[ae]z\w*|\w+m[ae]d[ıi]\w*)\b", re.IGNORECASE)
_OVER = re.compile(r"\b(\w+) over (\w+)\b", re.IGNORECASE)
_LIKE = _lex(
    "like likes liked love loves loved prefer prefers preferred enjoy enjoys enjoyed adore adores "
    "favorite favourite sever seviyor seviyorum sevdi bayılıyor bayılır tercih"
)
_DISLIKE = _lex(
    "hate hates hated dislike dislikes disliked detest detests loathe loathes nefret sevmiyor "
    "sevmiyorum sevmez sevmedi hoşlanmıyor hoşlanmaz"
)
_POLARITY_WORDS = _LIKE | _DISLIKE


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


_FAMILIES: dict[str, Family] = {
    "residence": Family(
        True,
        re.compile(
            r"^(live[sd]?|living|reside[sd]?|residing|relocat\w*|moved|move|moving|based|rent|renting|rented|flat|"
            r"apartment|"
            r"yaşı\w*|yaşa\w*|otur\w*|taşın\w*|ikamet\w*)$"
        ),
        frozenset({"name", "obj:in", "obj:to"}),
    ),
    "work": Family(
        True,
        re.compile(
            r"^(work|works|working|job|jobs|employ\w*|employer|hired|joined|company|firm|"
            r"çalış\w*|iş|işe|işi|işim|işten|şirket\w*)$"
        ),
        frozenset({"name"}),
    ),
    "manager": Family(
        True,
        re.compile(
            r"^(manager|boss|supervisor|report|reports|reporting|lead|leads|leading|"
            r"yönetici\w*|müdür\w*|patron\w*|amir\w*|bağlı\w*)$"
        ),
        frozenset({"name"}),
    ),
    "diet": Family(
        True,
        re.compile(
            r"^(vegetarian|vegan|pescatarian|keto|paleo|carnivore|diet|vejetaryen\w*|vegan\w*|diyet\w*|beslen\w*)$"
        ),
        frozenset({"family:diet"}),
        re.compile(
            r"^(vegetarian|vegan|pescatarian|keto|paleo|carnivore|flexitarian|vejetaryen\w*|vegan\w*|"
            r"pesketaryen\w*)$"
        ),
    ),
    "commute": Family(
        True,
        re.compile(r"^(commute\w*|commuting)$"),
        frozenset({"family:commute"}),
        re.compile(
            r"^(bike|bicycle|bus|tram|car|foot|metro|subway|tube|ferry|scooter|train|"
            r"bisiklet\w*|otobüs\w*|metro\w*|araba\w*|tramvay\w*|vapur\w*|yürüye\w*)$"
        ),
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
        re.compile(r"^(wake|wakes|woke|waking|awake|alarm|kalk\w*|uyan\w*)$"),
        frozenset({"time"}),
        phrase=re.compile(r"\b(?:get|gets|got|getting)\s+up\b", re.IGNORECASE),
    ),
    "age": Family(
        True, re.compile(r"^(age|aged|turned|turn|turns|birthday|yaşında\w*|yaşına|yaş)$"), frozenset({"number@years"})
    ),
    "preference": Family(
        False,
        re.compile(
            r"^(love[sd]?|loving|like[sd]?|prefer\w*|enjoy\w*|adore[sd]?|favou?rite|hate[sd]?|dislike[sd]?|"
            r"sev\w*|tercih\w*|bayıl\w*|nefret\w*)$"
        ),
        frozenset({"name", "obj:in", "obj:at"}),
    ),
    "learning": Family(False, re.compile(r"^(learn\w*|studying|öğren\w*)$"), frozenset({"name"})),
    "use": Family(False, re.compile(r"^(use|uses|using|used|kullan\w*|editing|edit|editor)$"), frozenset({"name"})),
}
_PAST_EN = re.compile(
    r"^(was|were|had|did|went|lived|worked|visited|ran|used|grew|studied|met|bought|"
    r"started|moved|adopted|watched|paid|ordered|spent|stayed|travel+ed|took|saw)$"
)
_PAST_TR = re.compile(r"^\w{2,}(?:d[ıiuü]|t[ıiuü])(?:m|n|k|niz|nız|nuz|nüz|lar|ler)?$|^idi\w*$")
_PRESENT_TR_FIRST = re.compile(r"^\w+(?:yor|[ıiuü]r|[ae]r|yim|y[ıi]m|[ıiuü]m)(?:um|üm|ım|im|uz|üz|ız|iz)?$")

_NUMBER_WORDS = {
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
    "hundred": 100,
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
    "yüz": 100,
    "birinci": 1,
    "ikinci": 2,
    "üçüncü": 3,
    "dördüncü": 4,
    "beşinci": 5,
}
_NUMBER_WORDS = {k: v for k, v in _NUMBER_WORDS.items() if v is not None}
_ORDINALS = _lex("""
first second third fourth fifth sixth seventh eighth ninth tenth twelfth twentieth birinci ikinci
üçüncü dördüncü beşinci
""")
_DAYS = (
    ("monday", "pazartesi"),
    ("tuesday", "salı"),
    ("wednesday", "çarşamba"),
    ("thursday", "perşembe"),
    ("friday", "cuma"),
    ("saturday", "cumartesi"),
    ("sunday", "pazar"),
)
_MONTHS = (
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
_UNITS = {
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
    "k": "km",
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
_TIME = re.compile(
    r"\b(\d{1,2})(?:[:.](\d{2}))?\s*(am|pm|a\.m\.|p\.m\.)|\b(\d{1,2})[:.](\d{2})\b"
    r"|\bsaat\s+(\d{1,2})(?:[:.](\d{2}))?",
    re.IGNORECASE,
)
_TITLE = _lex("dr dr. mr mr. mrs mrs. ms ms. prof st st. hanım bey hoca")


# analysis ---------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Value:
    """A value a clause states: ``kind`` (name, number, time, day, month, date, year, code) and its
    normal form; ``anchor`` is the nearest content word before it (what it is a value of)."""

    kind: str
    norm: str
    text: str
    anchor: str = ""


@dataclass(slots=True)
class Clause:
    text: str
    words: list[str]  # folded tokens
    stems: set[str]  # content stems (values, change and correction words left out)
    values: list[Value]
    subject: tuple[str, ...]  # see _subject
    subject_words: set[str]
    families: set[str]
    change: list[str]
    correction: list[str]
    additive: list[str]
    dropped: set[str]  # stems and value forms the clause lets go of
    denied: set[str]  # what follows "not", "instead of" …: lets go of a value only ("not Alfama")
    given_up: set[str]  # what a verb of letting go names ("gave up on VS Code"): may be a plain word
    moved_from: set[str]
    moved_to: set[str]
    negated: bool
    polarity: int
    past: bool
    question: bool
    copula: bool
    context: set[str] = field(default_factory=set)  # content stems of the whole sentence
    topic: tuple[str, str] | None = None  # (owner, head) of what a change verb acts on ("changed my phone's wallpaper")
    targets: set[str] = field(default_factory=set)  # what a change goes to ("switched to Neovim")


@dataclass(slots=True)
class Statement:
    text: str
    speaker: str | None
    turkish: bool = False
    clauses: list[Clause] = field(default_factory=list)
    stems: set[str] = field(default_factory=set)


@lru_cache(maxsize=65536)
def _fold(word: str) -> str:
    w = word.replace("’", "'")
    if _is_turkish(w):
        w = w.replace("İ", "i").replace("I", "ı")
    return w.casefold()


_TR_CHARS = frozenset("çğışöüÇĞİŞÖÜ")


def _is_turkish(word: str) -> bool:
    return not _TR_CHARS.isdisjoint(word)


_TR_SUFFIXES = sorted(
    _lex("""
lerimiz larımız leriniz larınız ımızın imizin ümüzün umuzun ımız imiz umuz ümüz ları leri ların lerin
lara lere larda lerde lardan lerden iyorum ıyorum uyorum üyorum yorum iyoruz ıyoruz uyoruz üyoruz yoruz
iyor ıyor ılmış ilmiş ulmuş ülmüş mış miş muş müş uyor üyor yor dık dik duk dük tık tik tuk tük dım dim
dum düm tım tim tum tüm nın nin nun nün dan den tan ten nda nde yla yle da de ta te ya ye yı yi yu yü
na ne ın in un ün la le ım im um üm sı si su sü ki ı i u ü a e m
"""),
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
    return [_core(w) for w in _TOKEN.findall(text)]


@lru_cache(maxsize=65536)
def stem(word: str, turkish: bool = False) -> str:
    """A light stem: English suffixes stripped, Turkish case, possessive and person suffixes stripped;
    the suffix after an apostrophe dropped ("Ankara'da" → "ankara", "kids'" → "kid")."""
    w = _fold(word)
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
            break
    if w.endswith("e") and len(w) > 3:
        w = w[:-1]  # "office" / "offices", "move" / "moved"
    return w[:6]


@lru_cache(maxsize=65536)
def _core(word: str) -> str:
    """A name without its possessive or Turkish case suffix ("Ankara'da" → "ankara", "Sam's" → "sam")."""
    w = word.replace("’", "'")
    if "'" in w:
        w = w.split("'", 1)[0] or w
    return _fold(w)


def _number(text: str) -> float | None:
    t = text.replace(" ", "")
    if re.fullmatch(r"\d{1,3}(?:[.,]\d{3})+", t):
        return float(re.sub(r"[.,]", "", t))
    try:
        return float(t.replace(",", "."))
    except ValueError:
        return None


def _digits(text: str) -> int:
    return int(re.sub(r"\D", "", text))


_DAY_FORMS = {form: en for en, _ in _DAYS for form in (en, en + "s")}
_DAYS_TR = sorted(((tr, en) for en, tr in _DAYS), key=lambda d: -len(d[0]))
_MONTH_FORMS = {en: en for en, _ in _MONTHS}
_MONTHS_TR = [(tr, en) for en, tr in _MONTHS]


@lru_cache(maxsize=65536)
def _day(word: str) -> str | None:
    w = _core(word)
    found = _DAY_FORMS.get(w)
    if found or w[:1] not in "pscç":
        return found
    for tr, en in _DAYS_TR:
        if w.startswith(tr) and len(w) - len(tr) <= 5 and not (tr == "pazar" and w.startswith("pazartesi")):
            return en
    return None


@lru_cache(maxsize=65536)
def _month(raw: str) -> str | None:
    w = _core(raw)
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


def _body(text: str, speaker: str | None) -> tuple[str | None, str]:
    """The speaker (named, or read from a "Name: " prefix) and what ``text`` says, as :func:`analyse`
    reads it: the prefix, tags and ISO date notes removed, abbreviations without their period."""
    body = text
    m = _SPEAKER.match(body)
    if (
        m
        and not _CORRECTION.search(m.group(1))
        and not _CHANGE.search(m.group(1))
        and m.group(1).casefold() not in _DISCOURSE
    ):
        speaker = speaker or m.group(1).strip()
        body = body[m.end() :]
    body = _TAG.sub(" ", body)
    body = _ABBREV.sub(lambda g: g.group(1), _ISO_NOTE.sub("", body))
    return speaker, body


@lru_cache(maxsize=8192)
def analyse(text: str, speaker: str | None = None, turkish: bool | None = None) -> Statement:
    """The clauses of ``text`` with their subject, values and change words (cached by text).
    ``turkish``: read it as Turkish (or not); by default, as its words suggest."""
    speaker, body = _body(text, speaker)
    if turkish is None:
        turkish = is_turkish(body)
    body = _ISO_NOTE.sub("", body)
    st = Statement(text, speaker, turkish=turkish)
    for sentence in _sentences(body):
        question = sentence.rstrip().endswith("?")
        inherited: tuple[tuple[str, ...], set[str]] | None = None
        clauses: list[Clause] = []
        for part in _CLAUSE.split(sentence):
            if not part or not part.strip(" ,;:"):
                continue
            clause = _clause(part.strip(" ,;:"), question, turkish, first=not clauses)
            if clause is None:
                continue
            if not clause.subject and clause.subject_words == {"∅"}:  # elided: the sentence's subject
                clause.subject, clause.subject_words = inherited or (
                    (("self",), set()) if not turkish or not clauses else ((), set())
                )
            elif clause.subject:
                inherited = (clause.subject, clause.subject_words)
            clauses.append(clause)
        # a change or a correction is said once for the sentence ("We changed vets, the cat now sees …")
        change = list(dict.fromkeys(c for cl in clauses for c in cl.change))
        correction = list(dict.fromkeys(c for cl in clauses for c in cl.correction))
        context = {x for cl in clauses for x in cl.stems}
        for cl in clauses:
            cl.change, cl.correction, cl.context = change, correction, context
        st.clauses.extend(clauses)
        st.stems |= {x for cl in clauses for x in cl.stems | cl.subject_words}
    return st


def _sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE_END.split(text) if s and s.strip()]


def _clause(text: str, question: bool, turkish: bool, *, first: bool = True) -> Clause | None:
    raw = _TOKEN.findall(text)
    if not raw:
        return None
    words = [_fold(w) for w in raw]
    lead = _lead(words)
    subject, subject_words = _subject(raw, words, lead, turkish, first=first)
    names = {w for w in subject_words if w and w != "∅"}
    values = [
        v
        for v in _values(text, raw, words, lead, turkish, names)
        if not (v.kind == "name" and {stem(x, turkish) for x in v.norm.split()} & subject_words)
    ]
    holder = _role_holder(raw, words, subject, subject_words, turkish)
    if holder is not None:  # "Tom is my mentor": the mentor is Tom
        subject, subject_words, value = holder
        values.append(value)
    topic = None if turkish else _topic(raw, words)
    moving = {w for w in words if w.startswith("mov")} if topic is not None else set()  # moved a thing, not oneself
    nouns_after = {w for k, w in enumerate(words) if k and words[k - 1] in _PREPOSITIONS}  # "at work": a place
    families = {name for w in words if w not in moving and w not in nouns_after for name in _word_families(w)}
    families |= {name for name, fam in _FAMILIES.items() if fam.phrase is not None and fam.phrase.search(text)}
    for name in families:
        pat = _FAMILIES[name].values
        if pat is not None:
            values += [Value(f"family:{name}", stem(w, turkish), w) for w in words if pat.match(w)]
    value_words = {_fold(w) for v in values if not v.kind.startswith(("obj", "family")) for w in _TOKEN.findall(v.text)}
    cue_words = {w for w in words if _is_cue(w)}
    stems = {
        stem(w, turkish)
        for w in words
        if w not in _STOP
        and (len(w) >= 3 or w.isdigit())
        and w not in value_words
        and w not in cue_words
        and not w[:1].isdigit()
    }
    dropped: set[str] = set()
    given_up: set[str] = set()  # let go by a verb that means it ("stopped using the treadmill", "quit ballet")
    for m in _DROP_BEFORE.finditer(text):
        terms = _next_terms(text[m.end() :], turkish)
        dropped |= terms
        if m.group(1).split()[0].casefold() not in ("off", "left", "leaving", "replaced"):
            given_up |= terms
    denied: set[str] = set()
    for m in _NOT_VALUE.finditer(text):
        denied |= _next_terms(text[m.end() :], turkish)
    for m in _DROP_AROUND.finditer(text):
        dropped |= _terms(m.group("x"), turkish)
    targets: set[str] = set()
    for m in _TARGET.finditer(text):
        targets |= _terms(" ".join((m.group("x") or m.group("y") or "").split()[:4]), turkish)
    for m in _DROP_AFTER_WORD.finditer(text):
        x = m.group("x")
        if re.search(r"(?:n't|['’]t|\bnot|\bnever|\bwon|\bdon|\bdidn)$", x, re.IGNORECASE) or _fold(x) in _STOP:
            continue
        if turkish and re.search(r"(?:['’](?:y?[ae]|n[ae]|[dt][ae]))$", x):
            continue  # "Berlin'e taşındı", "Berlin'de …": a destination or a place, not what was left
        dropped |= _terms(x, turkish)
    moved_from: set[str] = set()
    moved_to: set[str] = set()
    for m in _FROM_TO.finditer(text):
        moved_from |= _terms(m.group("a") or m.group("c") or "", turkish, last=bool(m.group("c")))
        moved_to |= _terms(m.group("b") or m.group("d") or "", turkish)
    folded = set(words)
    polarity = (1 if folded & _LIKE else 0) - (1 if folded & _DISLIKE else 0)
    values = [v for v in values if not (v.kind in ("name", "obj", "obj:to") and _fold(v.text) in _PERSON_NOUNS)]
    return Clause(
        text,
        words,
        stems,
        values,
        subject,
        subject_words,
        families,
        change=[m.group(0).casefold() for m in _CHANGE.finditer(text)],
        correction=[m.group(0).casefold() for m in _CORRECTION.finditer(text)],
        additive=[m.group(0).casefold().strip() for m in _ADDITIVE.finditer(text)],
        dropped=dropped,
        given_up=given_up,
        denied=denied,
        moved_from=moved_from,
        moved_to=moved_to,
        negated=bool(_NEGATION.search(text) or (turkish and _NEGATION_TR.search(text))),
        polarity=polarity,
        past=_is_past(words),
        question=question,
        copula=_is_copula(words, turkish),
        topic=topic,
        targets=targets,
    )


_TOPIC_VERB = re.compile(
    r"^(changed|change|changing|switched|switch|moved|move|pushed|push|rescheduled|"
    r"postponed|replaced|swapped|raised|increased|lowered|reduced|cut|bumped|extended)$"
)


def _topic(raw: list[str], words: list[str]) -> tuple[str, str] | None:
    """What a change verb acts on: "I changed my phone's wallpaper to …" → ("phone", "wallpaper"),
    "We pushed the wedding back …" → ("", "wedding"); None without such an object."""
    for i, w in enumerate(words):
        if not _TOPIC_VERB.match(w):
            continue
        np: list[str] = []
        owner = ""
        for j in range(i + 1, min(len(words), i + 6)):
            x = words[j]
            if x in ("to", "back", "forward", "over", "from", "with", "into", "for", "by", "at", "on"):
                break
            if x in ("my", "our", "the", "a", "an", "his", "her", "their"):
                owner = owner or ("self" if x in ("my", "our") else "")
                continue
            if x.endswith(("'s", "'")):
                owner = stem(x)
                continue
            if x in _STOP or raw[j][:1].isupper():
                break
            np.append(x)
        if np:
            return owner, " ".join(stem(x) for x in np)  # the head last: "sertraline dose" → "sertra dos"
        return None
    return None


def _role_holder(
    raw: list[str], words: list[str], subject: tuple[str, ...], subject_words: set[str], turkish: bool
) -> tuple[tuple[str, ...], set[str], Value] | None:
    """ "Tom from accounting is my mentor", "Jonas is the lead on payments": a name said to hold a role is
    the value of that role — the same slot as "My mentor is Grace Liu"."""
    if turkish or subject[:1] != ("lead",):
        return None
    for i, w in enumerate(words[:-2]):
        if w not in ("is", "was") or words[i + 1] not in ("my", "our", "the"):
            continue
        np = _noun_phrase(raw, words, i + 2)
        np = [x for x in np if not x.startswith("=")]
        if not np:
            return None
        owner = "self" if words[i + 1] in ("my", "our") else ""
        role, role_words = _np_subject(owner, np, turkish)
        name = subject[1]
        return role, role_words, Value("name", name, name.title(), stem(np[-1], turkish))
    return None


@lru_cache(maxsize=65536)
def _word_families(word: str) -> tuple[str, ...]:
    """The attribute families a word names ("lives" → residence)."""
    return tuple(name for name, fam in _FAMILIES.items() if fam.trigger.match(word))


@lru_cache(maxsize=65536)
def _is_cue(word: str) -> bool:
    return bool(_CHANGE.fullmatch(word) or _CORRECTION.fullmatch(word))


def _lead(words: list[str]) -> int:
    """Index of the first word after discourse openers and change words ("Honestly", "Update:", "now")."""
    i = 0
    while i < len(words) and (
        words[i] in _DISCOURSE
        or (
            words[i] in _STOP
            and words[i] not in _FIRST_PERSON
            and words[i] not in _DETERMINERS
            and words[i] not in ("my", "our")
            and not (words[i] == "these" and i + 1 < len(words) and words[i + 1] != "days")
        )
    ):
        i += 1
    return i


_DROP_AROUND = re.compile(
    r"\b(?:put|set|laid|gave|gives?|giving)\s+(?P<x>(?:[\w'’]+\s+){0,2}?[\w'’]+)\s+"
    r"(?:down|aside|away|up)\b",
    re.IGNORECASE,
)
#: where a change goes: "switched to Neovim", "moved to Wednesdays", "Neovim'e geçti", "yerine Japonca"
_TARGET = re.compile(
    r"\b(?:switch(?:ed|ing)?|chang(?:ed|ing)|mov(?:ed|ing)|migrat(?:ed|ing)|relocat(?:ed|ing)|went|go(?:ing)?|"
    r"push(?:ed)?(?:\s+\w+){0,3}\s+back|extended|raised|bumped(?:\s+\w+){0,4}?\s+up)\s+(?:over\s+)?to\s+"
    r"(?P<x>[^,.;:!?]+)|(?P<y>[\wçğıöşüÇĞİÖŞÜ]+)['’]?(?:y?[ae]|n[ae])\s+(?:geç\w*|taşın\w*|ertele\w*|uzat\w*)",
    re.IGNORECASE,
)
_DROP_AFTER_WORD = re.compile(
    r"(?P<x>(?:\b[A-ZÇĞİÖŞÜ][\w'’]*\s+)?\b[\w'’]+)\s+(?:just\s+|has\s+|had\s+)?"
    r"(?:left|retired|quit|died|broke(?: down)?|filled up|(?:is|was) (?:full|closed|cancell?ed|gone|over)|"
    r"fell through|moved away|closed down|shut down|kept (?:missing|failing)|passed away|passed on|"
    r"bıraktı\w*|ayrıldı\w*|emekli oldu\w*|taşındı\w*|öldü\w*|bozuldu\w*|kapandı\w*|iptal oldu\w*|sattı\w*|"
    r"kapattı\w*|vazgeçti\w*|sildi\w*|iptal etti\w*|değil\w*|yerine|stepped down|handed (?:\w+ ){0,4}over)\b",
    re.UNICODE,
)


def _terms(text: str, turkish: bool = False, *, last: bool = False) -> set[str]:
    """Value forms and content stems of a short phrase (what a change lets go of). ``last``: only its
    last word (a Turkish "X'ten" phrase names its value last)."""
    raw = _TOKEN.findall(text)
    if last:
        raw = raw[-1:]
    out: set[str] = set()
    for w in raw:
        f = _fold(w)
        if f in _STOP or f in _TITLE:
            continue
        out.add(stem(w, turkish))
        out.add(_core(w))
        n = _number(w) if w[:1].isdigit() else _NUMBER_WORDS.get(f)
        if n is not None:
            out.add(f"#{n:g}")
        day = _day(w)
        if day:
            out.add(f"day:{day}")
    return out


def _next_terms(text: str, turkish: bool = False) -> set[str]:
    """The phrase right after a letting-go word: up to punctuation, a conjunction, or 4 words."""
    phrase = re.split(r"[,.;:!?]|\b(?:and|so|because|since|after|to|with|ve|çünkü)\b", text, maxsplit=1)[0]
    return _terms(" ".join(phrase.split()[:4]), turkish)


def _is_past(words: list[str]) -> bool:
    """Whether the clause's first predicate is in the past (an event or a past state)."""
    if any(w in ("is", "are", "am", "now", "i'm", "it's", "we're", "i've", "we've") for w in words[:8]):
        return False
    for w in words[:8]:
        if _PAST_EN.match(w) or (w.endswith("ed") and len(w) > 4 and w not in ("need", "used", "based")):
            return True
    last = words[-1] if words else ""
    return bool(_PAST_TR.match(last)) and not re.search(r"(?:yor|iyor|ıyor|uyor|üyor)", last)


def _is_copula(words: list[str], turkish: bool) -> bool:
    for i, w in enumerate(words[:7]):
        if w in ("is", "are", "am", "was", "it's", "i'm", "that's", "we're", "they're", "she's", "he's"):
            following = words[i + 1] if i + 1 < len(words) else ""
            return not (following.endswith("ing") or following in ("going",))
    if not turkish or not words:
        return False
    # a Turkish nominal sentence ends without a verb ("Kira ayda 15.000 lira", "Ofisimiz Levent'te")
    return not re.search(r"(?:yor\w*|d[ıiuü]\w*|t[ıiuü]\w*|[ıiuü]r|[ae]r|m[ae]k|[ae]c[ae]k\w*|m[ıiuü]ş\w*)$", words[-1])


_DATE = re.compile(
    r"\b(?P<d1>\d{1,2})(?:st|nd|rd|th)?\s+(?:of\s+)?(?P<m1>[A-Za-zçğıöşüÇĞİÖŞÜ]+)|"
    r"\b(?P<m2>[A-Za-zçğıöşüÇĞİÖŞÜ]+)\s+(?P<d2>\d{1,2})(?:st|nd|rd|th)?\b"
)
_PREPOSITIONS = frozenset(["at", "in", "on", "to", "with", "by", "from", "for"])
_NP_SKIP = frozenset(["the", "a", "an", "my", "our", "his", "her", "their", "your", "this", "that", "some"])


def _values(
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
            i for i, w in enumerate(raw) if w[:1].isupper() and (_core(w) in names or stem(w, turkish) in names)
        }
        self.spans = [m.span() for m in _TOKEN.finditer(text)]

    def read(self) -> list[Value]:
        self._times()
        self._dates()
        if not self.turkish:
            self.out.extend(_direct_object(self.raw, self.words, self.taken))
        i = 0
        while i < len(self.raw):
            i = self._token(i)
        return self.out

    def _take(self, start: int, end: int) -> None:
        self.taken.update(i for i, (a, b) in enumerate(self.spans) if a < end and b > start)

    def _times(self) -> None:
        for m in _TIME.finditer(self.text):
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
            month = _month(w)
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
                    day = _digits(raw[j].split("'")[0].split("’")[0])
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
        month = _month(w) if i not in self.taken else None
        if (
            i in self.taken
            or (f in _STOP and not f[:1].isdigit() and month is None)
            or (f in _TITLE and i + 1 < len(self.raw) and self.raw[i + 1][:1].isupper())
        ):
            return i + 1
        day = _day(w)
        if day and (w[:1].isupper() or self.turkish or f.startswith(day[:3])):
            self.out.append(Value("day", day, w, self._anchor_at(i)))
        elif month:
            self.out.append(Value("month", month, w, self._anchor_at(i)))
        elif re.fullmatch(r"(?:19|20)\d\d(?:['’]\w+)?", w):
            self.out.append(Value("year", w[:4], w, self._anchor_at(i)))
        elif re.fullmatch(r"\d+(?:st|nd|rd|th)", f):
            self.out.append(Value("number", f"#{_digits(f)}@ord", w, self._anchor_at(i)))
        elif w[:1].isdigit():
            return self._number(i, self._anchor_at(i))
        elif f in _NUMBER_WORDS and not (
            f == "one"
            and (
                i == 0 or self.words[i - 1] in _DETERMINERS or (i + 1 < len(self.words) and self.words[i + 1] in _STOP)
            )
        ):
            unit = "ord" if f in _ORDINALS else _unit_after(self.raw, i)
            value = f"#{_NUMBER_WORDS[f]}" + (f"@{unit}" if unit else "")
            self.out.append(Value("number", value, w, self._anchor_at(i)))
        elif re.fullmatch(r"[a-zçğıöşü]+\d+[a-z0-9]*", f):
            self.out.append(Value("code", f, w, self._anchor_at(i)))  # a password, a model number
        elif self._name_starts(i):
            return self._name(i, self._anchor_at(i))
        else:
            self._preposition_object(i, self._anchor_at(i))
        return i + 1

    def _anchor_at(self, i: int) -> str:
        return _anchor(self.words, i, self.turkish)

    def _number(self, i: int, anchor: str) -> int:
        raw, w = self.raw, self.raw[i]
        j, group = i, [w]
        while j + 1 < len(raw) and re.fullmatch(r"\d{2,5}", raw[j + 1]) and re.fullmatch(r"\d{2,5}", raw[j]):
            j += 1
            group.append(raw[j])
        if len(group) > 1 and len("".join(group)) >= 7:  # a phone number written in groups
            self.out.append(Value("code", "".join(group), " ".join(group), anchor))
            return j + 1
        m = re.fullmatch(r"(\d+(?:[.,]\d+)*)['’]?([^\W\d_]*)", w)
        value = _number(m.group(1)) if m else None  # None for "127.0.0.1", "1.2.3": a code, not a number
        if m and value is not None and (not m.group(2) or m.group(2).casefold() in _UNITS or self.turkish):
            unit = (
                _UNITS.get(m.group(2).casefold())
                or _unit_after(raw, i)
                or (_UNITS.get(_core(raw[i - 1])) if i > 0 else None)
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
            and f not in _FIRST_PERSON
            and f not in _DISCOURSE
            and not _CHANGE.fullmatch(f)
            and not _CORRECTION.fullmatch(f)
            and (i != self.lead or _name_at_lead(self.raw, i, self.turkish))
            and not (self.turkish and _tr_possessive(f) and "'" not in f)
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
            and _day(raw[j + 1]) is None
            and _month(raw[j + 1]) is None
        ):
            j += 1
            parts.append(raw[j])
        name = " ".join(_core(p) for p in parts if _fold(p) not in _TITLE)
        if name:
            self.out.append(Value("name", name, " ".join(parts), anchor))
        return j + 1

    def _preposition_object(self, i: int, anchor: str) -> None:
        """The noun governed by "at", "to", "by" … ("at the library"): a value of kind ``obj:<prep>``."""
        words, f = self.words, self.words[i]
        if self.turkish or i == 0 or f in _STOP or _CHANGE.fullmatch(f) or f.endswith("ly"):
            return
        if _is_predicate(f) and words[i - 1] not in _PREPOSITIONS and words[i - 1] not in _NP_SKIP:
            return
        prep = _preposition_before(words, i)
        nxt = words[i + 1] if i + 1 < len(words) else ""
        if prep == "to" and words[i - 1] == "to" and (nxt in _NP_SKIP or _VERBISH.match(f)):
            return  # "to see the state", "to try": a verb, not a place
        if f.endswith(("ing", "ed")) and len(f) > 5:
            return
        if prep and (
            not nxt or nxt in _STOP or nxt in _PREPOSITIONS or not nxt[:1].isalpha() or _CHANGE.fullmatch(nxt)
        ):
            self.out.append(Value(f"obj:{prep}", stem(f), self.raw[i], anchor))


#: words that are verbs far more often than nouns after "to" ("to see", "to try", "to make")
_VERBISH = re.compile(
    r"^(see|try|make|do|be|go|get|hear|say|tell|find|give|use|help|keep|let|put|think|know|"
    r"want|feel|look|come|take|work|learn|start|share|reflect|hone|combine|explore|build|create|"
    r"grow|reach|connect|express|write|read|play|pause|relax|chill|check|join|visit|meet)$"
)
_OBJECT_VERBS = re.compile(
    r"^(drinks?|drank|uses?|using|prefers?|preferred|likes?|liked|loves?|loved|eats?|ate|plays?|takes?|took|"
    r"drives?|owns?|has|have|reads?|reading|watch(?:es)?|speaks?|learn(?:s|ing)?|stud(?:y|ies|ying)|wears?|"
    r"needs?|wants?|enjoys?|hates?|dislikes?|keeps?|gets?|bought|buy|sells?|rents?|switched to|"
    r"changed to|moved to|went with|going with|chose|picked)$"
)


def _direct_object(raw: list[str], words: list[str], taken: set[int]) -> list[Value]:
    """The object of the clause's first object-taking verb ("drinks coffee", "prefer window seats",
    "switched to tea"): a value of kind ``obj``, normalised to its stems; and what a copula says someone
    or something is ("I'm a senior analyst", "the lead is a contractor"): kind ``obj:is``."""
    out = _complement(raw, words, taken)
    for i, w in enumerate(words):
        two = f"{w} {words[i + 1]}" if i + 1 < len(words) else w
        if _OBJECT_VERBS.match(two):
            start = i + 2
        elif _OBJECT_VERBS.match(w):
            start = i + 1
        else:
            continue
        phrase: list[int] = []
        hobby = _verb_stem(w) in ("lik", "lov", "enjoy", "hat", "prefer", "start", "stop", "quit")
        for j in range(start, min(len(words), start + 5)):
            x = words[j]
            if x in _NP_SKIP and not phrase:
                continue
            if not phrase and not hobby and (x.endswith(("ing", "ed")) or _VERBISH.match(x)):
                break  # "like getting transported", "want to try": no object
            if (
                x in _STOP
                or x in _PREPOSITIONS
                or j in taken
                or x[:1].isdigit()
                or _CHANGE.fullmatch(x)
                or _is_predicate(x)
            ):
                break
            phrase.append(j)
            if len(phrase) == 3:
                break
        if phrase and all(raw[j][:1].isupper() for j in phrase):
            return out  # only names: the name values say it ("uses Vim")
        if phrase:
            text = " ".join(raw[j] for j in phrase)
            return [*out, Value("obj", " ".join(sorted(stem(words[j]) for j in phrase)), text, _verb_stem(w))]
        return out
    return out


def _complement(raw: list[str], words: list[str], taken: set[int]) -> list[Value]:
    for i, w in enumerate(words[:-2]):
        if w not in ("is", "am", "are", "i'm", "he's", "she's", "was") or words[i + 1] not in ("a", "an", "the"):
            continue
        phrase = []
        for j in range(i + 2, min(len(words), i + 6)):
            x = words[j]
            if x in _STOP or x in _PREPOSITIONS or j in taken or raw[j][:1].isupper() or x[:1].isdigit():
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
        or (j == i - 1 and words[j] not in _STOP and words[j] not in _PREPOSITIONS and not _is_predicate(words[j]))
    ):
        j -= 1
        if i - j > 3:
            return None
    return words[j] if j >= 0 and words[j] in _PREPOSITIONS else None


def _age_unit(words: list[str], i: int) -> str | None:
    """A bare number said of a person is an age: "I'm 34", "my niece is 8", "just turned 35"."""
    before = words[i - 1] if i > 0 else ""
    after = words[i + 1] if i + 1 < len(words) else ""
    if after and after[:1].isalpha() and after not in ("and", "or", "now", "yesterday", "today", "last", "this"):
        return None
    if (
        before in ("turned", "turning", "turns", "aged")
        or before in ("i'm", "im")
        or (before in ("is", "was") and i >= 2 and (words[i - 2] in _PERSON_NOUNS or words[i - 2] in _SELF_WORDS))
    ):
        return "years"
    return None


def _unit_after(raw: list[str], i: int) -> str | None:
    if i + 1 >= len(raw):
        return None
    nxt = _core(raw[i + 1])
    return _UNITS.get(nxt) or next((u for k, u in _UNITS.items() if len(k) > 3 and nxt.startswith(k)), None)


def _name_at_lead(raw: list[str], i: int, turkish: bool) -> bool:
    """The first word of a clause is capitalised anyway: a name only when a capitalised word follows
    ("Priya Nair"), or (Turkish) an apostrophe sets off its suffix ("Zeynep'in")."""
    if i + 1 < len(raw) and raw[i + 1][:1].isupper():
        return True
    return turkish and ("'" in raw[i] or "’" in raw[i])


def _anchor(words: list[str], index: int, turkish: bool = False) -> str:
    for j in range(index - 1, max(-1, index - 5), -1):
        w = words[j]
        if w in _STOP or w in _TITLE or w[:1].isdigit() or _CHANGE.fullmatch(w) or w in _PREPOSITIONS:
            continue
        return stem(w, turkish)
    return ""


def _anchor_before(text: str, turkish: bool = False) -> str:
    words = [_fold(w) for w in _TOKEN.findall(text)]
    return _anchor(words, len(words), turkish)


_SELF_WORDS = _lex("i i'm i've i'd i'll we we're we've we'd we'll me us ben biz")
_PRONOUNS = _lex("it it's they they're he he's she she's this that there there's o onlar bu şu")
_VERB_START = re.compile(
    r"^(sold|got|bought|moved|switched|changed|started|stopped|quit|dropped|cancell?ed|closed|"
    r"put|scrap|down|up|turned|joined|left|gave|took|went|found|tried|had|have|been|love|"
    r"hate|like|prefer|need|want|think|feel|use|drink|eat|take|go|run|work|live|bumped|"
    r"cut|ditched|replaced|migrated|relocated|promoted|hired)$"
)
_TR_CASE = re.compile(
    r"['’](?:da|de|ta|te|a|e|ya|ye|na|ne|dan|den|tan|ten|ı|i|u|ü|yı|yi|yu|yü|la|le|yla|yle|"
    r"deki|daki|teki|taki)$",
    re.IGNORECASE,
)
_TR_GENITIVE = re.compile(r"['’](?:nin|nın|nun|nün|in|ın|un|ün)$", re.IGNORECASE)


def _subject(
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
    if w in _SELF_WORDS:
        return ("self",), set()
    if w in _PRONOUNS:
        return (), set()
    if w in ("my", "our", "benim", "bizim"):
        return _np_subject("self", _noun_phrase(raw, words, lead + 1), turkish)
    if w.endswith(("'s", "'")) and len(w) > 3 and lead + 1 < len(words):
        subject, sw = _np_subject(stem(w), _noun_phrase(raw, words, lead + 1), turkish)  # "mum's operation"
        return subject, sw | {stem(w)}
    if w in _DETERMINERS:
        np = _noun_phrase(raw, words, lead + 1)
        if len(np) > 1 and np[0].endswith(("'s", "'")):
            return _np_subject(stem(np[0]), np[1:], turkish)
        return _np_subject("", np, turkish)
    if turkish:
        return _tr_subject(raw, words, lead, first=first)
    if raw[lead][:1].isupper() and not _VERB_START.match(w):
        parts, j = [raw[lead]], lead + 1
        while j < len(raw) and raw[j][:1].isupper() and not parts[-1].endswith(("'s", "’s")):
            parts.append(raw[j])
            j += 1
        if parts[-1].endswith(("'s", "’s")):
            owner = _core(parts[-1])
            subject, sw = _np_subject(owner, _noun_phrase(raw, words, j), turkish)
            return subject, sw | {owner}
        names = {_core(p) for p in parts if _fold(p) not in _TITLE}
        return ("lead", " ".join(sorted(names))), names
    if _VERB_START.match(w) or (w.endswith("ed") and len(w) > 4):
        return ("self",), set()
    return (), {"∅"}


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
            owner = "self" if _tr_possessive(bare) else _core(raw[lead])
            subject, sw = _np_subject(owner, [words[head]], True)
            return subject, sw | {stem(_core(raw[lead]), True)}
    if _tr_possessive(w) and not _TR_CASE.search(w):
        subject, sw = _np_subject("self", [w], True)
        nxt = raw[lead + 1] if lead + 1 < len(raw) else ""
        if (
            nxt[:1].isupper()
            and not _TR_CASE.search(_fold(nxt))
            and subject[0] == "rel"
            and not _is_copula(words, True)
        ):
            sw = sw | {_core(nxt)}  # "Kızım Zeynep … gidiyor": the daughter's name ("Yöneticim Ayşe Hanım": the value)
        return subject, sw
    verb = _tr_subject_from_verb(words)
    if verb[0] == ("self",):
        return verb
    if _TR_CASE.search(w):
        return verb  # "Ankara'da …", "Kahveyi …": a place or an object, not the subject
    nxt_word = words[lead + 1] if lead + 1 < len(words) else ""
    if raw[lead][:1].isupper() and nxt_word and _tr_possessive(nxt_word) and not _TR_CASE.search(w):
        subject, sw = _np_subject("self", [nxt_word], True)  # "Netflix aboneliğim": my Netflix subscription
        return subject, sw | {stem(_core(raw[lead]), True)}
    if _tr_person(w) and not _TR_CASE.search(w):
        return ("rel", "self", stem(w, True)), {stem(w, True)}  # "Annemler Üsküdar'da oturuyor"
    if raw[lead][:1].isupper():
        run, j = [raw[lead]], lead + 1
        while "'" not in run[-1] and "’" not in run[-1] and j < len(raw) and raw[j][:1].isupper():
            run.append(raw[j])
            j += 1
        if _TR_CASE.search(_fold(run[-1])):
            if not (first and len(run) > 1):
                return verb  # "Cumhuriyet Koleji'ne gidiyor": where, not who
            run = run[:1]  # "Emre Berlin'e taşındı": a sentence opens with its subject
        # "Ayşe Hanım ayrıldı": a name with its title; "Kullanıcı Vim kullanıyor": the subject, then a value
        run = run[:1] + [x for x in run[1:2] if _fold(x) in _TITLE]
        names = {_core(p) for p in run if _fold(p) not in _TITLE}
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


def _noun_phrase(raw: list[str], words: list[str], start: int) -> list[str]:
    """The words of a noun phrase from ``start``: it ends at a stop word, a predicate, or a verb-like
    word after its first word ("My husband walks" → husband)."""
    out: list[str] = []
    for j in range(start, min(len(words), start + 5)):
        w = words[j]
        if (
            (w in _STOP and not w.endswith("'s"))
            or _is_predicate(w)
            or _CHANGE.fullmatch(w)
            or (out and (_VERB_START.match(w) or _OBJECT_VERBS.match(w) or _TOPIC_VERB.match(w)))
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
                or nxt in _STOP
                or nxt in _PREPOSITIONS
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


def _is_predicate(word: str) -> bool:
    return bool(
        re.match(
            r"^(is|are|was|were|am|has|have|had|lives?|works?|runs?|meets?|starts?|plays?|uses?|"
            r"goes|takes?|comes?|does|moved|switched|got|left|changed|sees?|tracks?|costs?|weighs?|"
            r"lands?|leaves?|arrives?|begins?|ends?|opens?|closes?|raised|retired|died|relocated|"
            r"said|called|loves?|likes?|hates?|prefers?|speaks?|drinks?|eats?|reports?|teaches?|"
            r"visits?|visiting|studies|learning|reading|being|been|planned|scheduled|walks?)$",
            word,
        )
    )


def _np_subject(owner: str, np: list[str], turkish: bool) -> tuple[tuple[str, ...], set[str]]:
    """A noun phrase subject: a person related to ``owner`` or a thing of ``owner``."""
    names = {_core(w[1:]) for w in np if w.startswith("=")}
    owned = [w for w in np if w.endswith(("'s", "'")) and not w.startswith("=")]
    if owned and np and not np[-1].endswith(("'s", "'")):
        owner = stem(owned[-1].removesuffix("'s").rstrip("'"), turkish)  # "my wife's car": the wife's
    clean = [w.removesuffix("'s").rstrip("'") for w in np if w and not w.startswith("=")]
    if not clean:
        return (("self",), set()) if owner == "self" else ((), set())
    words = {stem(w, turkish) for w in clean} | names
    head = clean[-1]
    if head in _PERSON_NOUNS or stem(head, turkish) in _PERSON_STEMS or (turkish and _tr_person(head)):
        return ("rel", owner, stem(head, turkish)), words
    return ("thing", owner, stem(head, turkish)), words


_PERSON_STEMS = frozenset(stem(w) for w in _PERSON_NOUNS) | frozenset(
    stem(w, True) for w in _PERSON_NOUNS if _is_turkish(w)
)


def _tr_possessive(word: str) -> bool:
    return bool(re.match(r"^\w{2,}(?:[aeıiuü]m|m[ıiuü]z|[ıiuü]m[ıiuü]z)$", word)) and not re.search(
        r"(?:yor|[dt][ıiuü]|[ae]c[ae][kğ]|m[ae]l[ıi]y)(?:[ıiuü]?m|um|üm|ım|im|[ıiuü]z)$", word
    )


def _tr_genitive(words: list[str], i: int) -> bool:
    """ "Kardeşimin eşi", "Emre'nin ailesi": a genitive followed by its possessed noun."""
    return (
        i + 1 < len(words)
        and bool(re.search(r"(?:[ıiuü]n|n[ıiuü]n)$", words[i]))
        and bool(re.search(r"(?:[ıiuü]|s[ıiuü])$", words[i + 1]))
    )


def _tr_person(word: str) -> bool:
    return any(
        word.startswith(p)
        for p in (
            "anne",
            "baba",
            "kardeş",
            "abla",
            "ağabey",
            "abi",
            "oğl",
            "oğul",
            "kız",
            "eşim",
            "koca",
            "karı",
            "sevgili",
            "arkadaş",
            "komşu",
            "patron",
            "yönetici",
            "müdür",
            "aile",
            "teyze",
            "amca",
            "dayı",
            "hala",
            "yeğen",
            "torun",
            "kuzen",
            "çocu",
            "öğretmen",
            "hoca",
            "doktor",
        )
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

    @property
    def updates(self) -> bool:
        return self.score >= UPDATE_SCORE

    @property
    def likely(self) -> bool:
        return self.score >= LIKELY_SCORE


NO_UPDATE = Verdict(0.0, "no sign of an update")


@lru_cache(maxsize=16384)
def judge(
    old: str, new: str, *, correction: bool = False, old_speaker: str | None = None, new_speaker: str | None = None
) -> Verdict:
    """How strongly ``new`` updates ``old`` (see the module docs). ``correction``: the new statement was
    classified as a correction as a whole (it counts as a correction word). Cached by its arguments."""
    a, b = analyse(old, old_speaker), analyse(new, new_speaker)
    if a.turkish != b.turkish:  # one language for both, so that their words stem alike
        a, b = analyse(old, old_speaker, True), analyse(new, new_speaker, True)
    best: Verdict | None = None
    for nc in b.clauses:
        if nc.question:
            continue
        marked = _explicit_marks(nc)
        if not marked and not nc.values:
            continue  # names no value and lets none go: it can update nothing
        for oc in a.clauses:
            if oc.question or (not marked and not oc.values):
                continue
            v = _judge_clauses(oc, nc, a, b, correction=correction)
            if best is None or v.score > best.score:
                best = v
    return best or NO_UPDATE


def same_value(x: Value, y: Value) -> bool:
    """Whether two values are the same (names sharing a word, numbers and times alike, a date and its month)."""
    if x.norm == y.norm:
        return True
    if x.kind == "name" and y.kind == "name":
        xs, ys = set(x.norm.split()), set(y.norm.split())
        return bool(xs & ys) or bool({stem(w) for w in xs} & {stem(w) for w in ys})  # "Rockies" / "Rocky Mountains"
    if {x.kind, y.kind} <= {"number", "time"}:
        return _num_core(x) == _num_core(y) and _units_agree(x, y)
    if {x.kind, y.kind} == {"date", "month"}:
        return x.norm.split("-")[0] == y.norm.split("-")[0]
    return False


def _value_in(value: Value, clause: Clause) -> bool:
    return any(same_value(value, v) for v in clause.values)


def _num_core(v: Value) -> str:
    if v.kind == "time":
        h, m = v.norm.split(":")
        return f"#{int(h) % 12}" + ("" if m == "00" else f":{m}")
    core = v.norm.split("@", 1)[0]
    if core.startswith("#"):
        try:
            return f"#{float(core[1:]) % 12:g}" if False else core
        except ValueError:
            return core
    return core


def _units_agree(x: Value, y: Value) -> bool:
    ux = x.norm.split("@", 1)[1] if "@" in x.norm else None
    uy = y.norm.split("@", 1)[1] if "@" in y.norm else None
    return ux is None or uy is None or ux == uy


def _kind(v: Value) -> str:
    if v.kind == "number":
        return "number@" + v.norm.split("@", 1)[1] if "@" in v.norm else "number"
    return "date" if v.kind == "month" else v.kind


def _compatible_kinds(x: Value, y: Value) -> bool:
    kx, ky = _kind(x), _kind(y)
    if kx == ky:
        return True
    if kx.startswith("number") and ky.startswith("number"):
        return "@" not in kx or "@" not in ky
    if kx.startswith("obj") and ky.startswith("obj"):
        return kx == ky or {kx, ky} == {"obj", "obj:to"}  # "drinks coffee" / "switched to tea"
    if {kx.split("@")[0], ky.split("@")[0]} == {"number", "time"}:
        number = x if kx.startswith("number") else y
        return number.text[:1].isdigit()  # "at 5pm" / "not 5"; "two kids" is no time
    return False


def _held(v: Value, terms: AbstractSet[str]) -> bool:
    """Whether ``v`` is among the terms a change lets go of."""
    if v.norm in terms:
        return True
    if v.kind == "name":
        return any(part in terms or stem(part) in terms for part in v.norm.split())
    if v.kind in ("number", "time"):
        return _num_core(v) in terms or _num_core(v).split(":")[0] in terms
    if v.kind == "day":
        return f"day:{v.norm}" in terms
    if v.kind.startswith(("obj", "family")):
        return bool(set(v.norm.split()) & terms)
    return False


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
    if so[0] == sn[0] == "thing" and so[2] == sn[2]:
        return _same_kind_of_thing(so, sn, oc.subject_words, new_words, a.turkish)
    if so == sn:
        return "same"
    pair = frozenset({so[0], sn[0]})
    if pair == {"thing"}:
        return "unknown" if so[2] in b.stems or sn[2] in a.stems else "different-thing"
    return _SUBJECT_PAIRS.get(pair, _unknown)(so, sn, oc.subject_words, nc.subject_words)


def _explicit_marks(c: Clause) -> bool:
    return bool(c.dropped or c.moved_from or c.negated or c.polarity or _OVER.search(c.text))


def may_update(text: str) -> bool:
    """Whether ``text`` says something that can change a stored value at all — a change or a correction
    word, a value let go, "from X", a negation or a preference — or states values of its own. A text
    with none of these updates nothing (the gate and the read path skip reading it against others)."""
    return any(
        c.change or c.correction or c.dropped or c.moved_from or c.negated or c.polarity or c.values
        for c in analyse(text).clauses
    )


def says_change(text: str) -> bool:
    """Whether ``text`` itself says that something changed or was wrong (a change or correction word, a
    value let go, "from X", a negation, a preference turned)."""
    return may_say_change(text) and any(
        c.change or c.correction or c.dropped or c.moved_from or c.negated or c.polarity for c in analyse(text).clauses
    )


#: what each clause feature :func:`says_change` counts is found by (a clause is a piece of the text that
#: :func:`_body` keeps, cut at spaces and punctuation, so each of these finds in the whole text what it
#: finds in a clause). Where a pattern is slow to try at every position, a looser one that finds at least
#: what it finds stands in: the word that ends a value ("… left", "… bıraktı") after a space, and "from "
#: or a Turkish verb of moving after a space (the only literal parts of the from → to pattern)
_CHANGE_CUES = (
    _CHANGE,
    _CORRECTION,
    _DROP_BEFORE,
    _NOT_VALUE,
    _DROP_AROUND,
    _NEGATION,
    re.compile(r"\s" + _DROP_AFTER_WORD.pattern.split(r"(?:just\s+|has\s+|had\s+)?", 1)[1], re.UNICODE | re.IGNORECASE),
    re.compile(r"\bfrom\s|\s(?:geç|taşı|aktar|değiştir)", re.IGNORECASE),
)


@lru_cache(maxsize=65536)
def may_say_change(text: str) -> bool:
    """A cheap test run before reading ``text`` into clauses: False only when :func:`says_change` is False
    (no change or correction word, no word that lets a value go, no "from", no negation, no word of liking
    or disliking anywhere in it). A few regular expressions over the text instead of a full reading:
    the read path asks it of every memory among the best candidates on every search."""
    _, body = _body(text, None)
    if any(p.search(body) for p in _CHANGE_CUES):
        return True
    if is_turkish(body) and _NEGATION_TR.search(body):
        return True
    return any(_fold(w) in _POLARITY_WORDS for w in _TOKEN.findall(body))


def _same_kind_of_thing(
    so: tuple[str, ...], sn: tuple[str, ...], words_o: set[str], words_n: set[str], turkish: bool
) -> str:
    """What tells two things of one kind apart: their owner and modifiers ("The Berlin office" / "The
    Lisbon office", "my car insurance" / "my home insurance", "my car" / "my wife's car")."""
    marks_o = (words_o | {stem(so[1], turkish)}) - {so[2], "self", ""}
    marks_n = (words_n | {stem(sn[1], turkish)}) - {sn[2], "self", ""}
    if marks_o and marks_n and not marks_o & marks_n:
        return "different"
    if so[1] and sn[1] and so[1] != sn[1] and "self" in (so[1], sn[1]):
        return "different"
    return "same"


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


def _names_old_attribute(oc: Clause, nc: Clause) -> bool:
    """ "new number", "new landlord", "new job": "new" says a value was replaced only when the word after
    it names the old statement's attribute (its words, or one attribute family with it)."""
    for i, w in enumerate(nc.words[:-1]):
        if w in ("new", "newly", "yeni"):
            nxt = nc.words[i + 1]
            if (
                stem(nxt) in oc.stems
                or stem(nxt) in oc.subject_words
                or any(_FAMILIES[f].trigger.match(nxt) for f in oc.families)
            ):
                return True
    return False


def _topic_differs(oc: Clause, nc: Clause) -> str | None:
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
class _Pair:
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
    moved: list[Value] = field(default_factory=list)
    shared: set[str] = field(default_factory=set)
    subs: list[tuple[Value, Value]] = field(default_factory=list)
    frame: set[str] = field(default_factory=set)
    families: set[str] = field(default_factory=set)
    functional: bool = False
    cue: float = 0.0
    copula: bool = False
    chatty: bool = False  # either text is a long message rather than a statement of a fact

    def add(self, weight: float, text: str) -> float:
        self.ev.append((weight, text))
        return weight


def _judge_clauses(oc: Clause, nc: Clause, a: Statement, b: Statement, *, correction: bool) -> Verdict:
    r = _Pair(
        oc, nc, a, b, _subjects(oc, nc, a, b), nc.correction or (["classified as a correction"] if correction else [])
    )
    r.shared = oc.stems & (nc.stems | nc.context)
    r.chatty = len(a.stems) > _CHATTY or len(b.stems) > _CHATTY
    _explicit(r)
    weak = _for(r)
    against = sum(rule(r) for rule in _AGAINST)
    if r.explicit:
        score = r.explicit + 0.25 * weak
        if r.subject == "different" and not r.let_go and not r.moved:
            score -= 3.0
        if nc.additive and not r.corrects and not r.let_go and not r.moved:
            score -= 2.0
    else:
        score = weak - against
    pro = [t for w, t in sorted(r.ev, key=lambda e: -e[0]) if w > 0][:3]
    con = [t for w, t in r.ev if w < 0]
    reason = "; ".join(pro) if pro else "no sign of an update"
    if con:
        reason += " — against: " + "; ".join(con)
    return Verdict(round(score, 3), reason, tuple(f"{w:+.1f} {t}" for w, t in r.ev), explicit=bool(r.explicit))


#: a clause with more content words than this is chat, not a statement of one fact: its negations and the
#: objects of its verbs say too little about one attribute to count as an update on their own
_SHORT = 10
#: a text with more content words than this is a message of several things (a chat turn): only named values
#: (names, numbers, dates, times) and words let go by name count as evidence in it
_CHATTY = 22


def _explicit(r: _Pair) -> None:
    """Evidence that names what changed: a value let go, "from X", a preference or a negation turned."""
    oc, nc = r.oc, r.nc
    named = [v for v in oc.values if not v.kind.startswith(("obj", "family"))]
    plain = [v for v in oc.values if v.kind.startswith(("obj", "family"))]
    r.let_go = [v for v in named if _held(v, nc.dropped) or (_held(v, nc.denied) and not _held(v, oc.denied))]
    if not r.chatty:  # an object is let go only by a verb that means it ("stopped using the treadmill")
        r.let_go += [v for v in plain if _held(v, nc.dropped if r.a.turkish else nc.given_up)]
    given_up = nc.dropped if r.a.turkish else nc.given_up
    words = (
        sorted(((oc.stems - oc.subject_words) & given_up) - nc.subject_words)
        if not r.let_go and not r.chatty and max(len(oc.stems), len(nc.stems)) <= _SHORT
        else []
    )
    if r.let_go or words:
        r.explicit = r.add(
            3.5, f"lets go of '{', '.join([v.text for v in r.let_go] or words)}', which the old statement holds"
        )
        return
    r.moved = [
        v
        for v in oc.values
        if _held(v, nc.moved_from) and (not v.kind.startswith(("obj", "family")) or (nc.targets and not r.chatty))
    ]
    if r.moved:
        r.explicit = r.add(3.5, f"changes from '{', '.join(v.text for v in r.moved)}', which the old statement holds")
        return
    if oc.polarity * nc.polarity < 0 and r.shared - _LIKE - _DISLIKE:
        r.explicit = r.add(3.5, "the preference turned around over the same thing")
        return
    a_over, b_over = _OVER.search(oc.text), _OVER.search(nc.text)
    if (
        a_over
        and b_over
        and stem(a_over.group(1)) == stem(b_over.group(2))
        and stem(a_over.group(2)) == stem(b_over.group(1))
    ):
        r.explicit = r.add(3.5, f"the preference turned around ('{a_over.group(0)}' → '{b_over.group(0)}')")
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


def _for(r: _Pair) -> float:
    """Evidence that the same slot got another value: the values, the words and attribute they share,
    a change or a correction said, "X is V", the same subject."""
    oc, nc, a = r.oc, r.nc, r.a
    new_values = [
        v
        for v in nc.values
        if not _held(v, nc.moved_from)
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
        ties = _anchors(r.subs) | {_kind(o) for o, n in r.subs if "@" in _kind(o) and _kind(o) == _kind(n)}
        if ties:
            weak += r.add(0.5, f"both are values of '{', '.join(sorted(ties))}'")
    names = set() if a.turkish else {w for c in (oc, nc) if c.subject[:1] == ("lead",) for w in c.subject_words}
    r.frame = r.shared - (names if r.subject != "same" else set())
    if r.frame:
        weak += r.add(min(1.5, 0.5 * len(r.frame)), f"shared words: {', '.join(sorted(r.frame)[:5])}")
    r.families = oc.families & nc.families
    if r.families:
        kinds = {k for o, _ in r.subs for k in (o.kind, _kind(o).split("@")[0])}
        fitting = [f for f in r.families if _FAMILIES[f].kinds & kinds] if r.subs else list(r.families)
        r.functional = any(_FAMILIES[f].functional for f in fitting)
        weak += r.add(
            1.0 if r.functional else 0.5,
            f"same attribute ({', '.join(sorted(r.families))})" + (", one value at a time" if r.functional else ""),
        )
    change = [c for c in nc.change if c not in ("new", "newly", "yeni") or _names_old_attribute(oc, nc)]
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


def _one_slot(o: Value, n: Value, r: _Pair) -> bool:
    """Whether two objects are values of one slot: the object of the same verb ("drinks coffee" / "drinks
    tea"), where a change goes ("switched to tea"), what one is ("I'm a manager"), or the object of the same
    preposition in clauses that share a word of their own. Names, numbers, dates and times always are."""
    if not o.kind.startswith("obj") and not n.kind.startswith("obj"):
        return True
    if n.kind == "obj:to" and _held(n, r.nc.targets):
        return True
    if o.kind == n.kind == "obj":
        return bool(o.anchor) and (o.anchor == n.anchor or n.anchor in _TARGET_ANCHORS)
    if o.kind == n.kind == "obj:is":
        return r.subject == "same"
    names = {w for c in (r.oc, r.nc) if c.subject[:1] == ("lead",) for w in c.subject_words}
    return o.kind == n.kind and bool((r.oc.stems & r.nc.stems) - names)


def _verb_stem(word: str) -> str:
    """A verb without its inflection ("prefers", "preferred", "prefer" → "prefer"; "drinks" → "drink")."""
    w = _fold(word)
    for suffix in ("ing", "ed", "es", "s"):
        if w.endswith(suffix) and len(w) - len(suffix) >= 3:
            w = w[: len(w) - len(suffix)]
            break
    if len(w) > 3 and w[-1] == w[-2] and w[-1] not in "aeiouls":
        w = w[:-1]  # "preferr" → "prefer"
    return w.rstrip("e")


_TARGET_ANCHORS = frozenset({_verb_stem("switched"), _verb_stem("changed"), _verb_stem("moved"), "went"})


def _anchors(subs: list[tuple[Value, Value]]) -> set[str]:
    return {o.anchor for o, _ in subs if o.anchor} & {n.anchor for _, n in subs if n.anchor}


def _against_subject(r: _Pair) -> float:
    if r.subject == "different":
        return r.add(-3.0, "different subjects") * -1
    if r.subject == "different-thing" and not r.cue:
        return r.add(-1.5, "about different things") * -1
    return 0.0


def _against_attribute(r: _Pair) -> float:
    oc, nc = r.oc, r.nc
    if oc.families and nc.families and not r.families:
        return (
            r.add(-1.5, f"different attributes ({', '.join(sorted(oc.families))} / {', '.join(sorted(nc.families))})")
            * -1
        )
    return 0.0


def _against_untied(r: _Pair) -> float:
    """Values that differ, with nothing that makes them values of one attribute."""
    if not r.subs or r.explicit or r.frame or r.families:
        return 0.0
    anchored = _anchors(r.subs) or any("@" in _kind(o) and _kind(o) == _kind(n) for o, n in r.subs)
    targeted = r.nc.targets and r.subject in ("same", "unknown") and any(_held(n, r.nc.targets) for _, n in r.subs)
    events = _EVENT_STEMS[r.a.turkish]
    both_events = all(
        len(c.subject) > 2 and c.subject[0] == "thing" and c.subject[2].lstrip("·") in events for c in (r.oc, r.nc)
    )
    said_of = r.copula and r.subject == "same"  # "I'm a senior analyst" / "I'm a manager now": what one is
    if anchored or targeted or both_events or said_of:
        return 0.0
    return r.add(-1.5, "nothing ties the values to one attribute (no shared word or attribute)") * -1


def _against_topic(r: _Pair) -> float:
    other = _topic_differs(r.oc, r.nc)
    return r.add(-1.5, other) * -1 if other and not r.explicit else 0.0


def _against_roles(r: _Pair) -> float:
    old = {o.anchor for o, _ in r.subs if o.anchor in _PERSON_STEMS}
    new = {n.anchor for _, n in r.subs if n.anchor in _PERSON_STEMS}
    if old and new and not old & new and not r.explicit:
        return r.add(-1.5, f"values of different roles ({', '.join(sorted(old))} / {', '.join(sorted(new))})") * -1
    return 0.0


def _against_addition(r: _Pair) -> float:
    if r.nc.additive and not r.corrects:
        return r.add(-2.0, f"adds rather than replaces ({', '.join(dict.fromkeys(r.nc.additive))})") * -1
    return 0.0


def _against_past(r: _Pair) -> float:
    if r.oc.past and not r.nc.past and not r.corrects:
        return r.add(-3.0, "the old statement tells how things were, the new one how they are") * -1
    return 0.0


def _against_occasion(r: _Pair) -> float:
    """Another time or place, or several kinds of value at once: another occasion, not a new value."""
    out = 0.0
    qualifiers = [(o, n) for o, n in r.subs if _kind(o) in _QUALIFIERS]
    if qualifiers and len(qualifiers) < len(r.subs) and not r.corrects:
        o, n = qualifiers[0]
        out -= r.add(-1.5, f"about another time or place ('{o.text}' / '{n.text}')")
    if r.subs and len({_kind(o).split("@")[0] for o, _ in r.subs}) > 1 and not r.cue:
        out -= r.add(-1.0, "several kinds of value differ at once (another occasion)")
    return out


def _against_nothing_replaced(r: _Pair) -> float:
    if not r.subs and not r.explicit:
        return r.add(-3.0, "no value of the old statement is replaced") * -1
    return 0.0


def _against_many_values(r: _Pair) -> float:
    """An attribute that may hold several values (likes, uses, visits) gets another value, no change said."""
    oc, a = r.oc, r.a
    one_thing = r.subject == "same" and (
        oc.subject[:1] == ("thing",) or (oc.subject[:1] == ("lead",) and oc.subject_words & _EVENT_STEMS[a.turkish])
    )
    if one_thing and r.subs and all(_kind(o).split("@")[0] in ("time", "date", "day", "number") for o, _ in r.subs):
        r.functional = True  # one thing (an event) has one time, date, price … at a time
    if r.subs and not r.cue and not r.copula and not r.functional and not r.explicit:
        return r.add(-3.0, "the attribute may hold several values and no change is stated") * -1
    return 0.0


def _against_already_held(r: _Pair) -> float:
    held = [v for v in r.nc.values if _held(v, r.nc.moved_to) and _value_in(v, r.oc)]
    if held and not r.explicit:
        return r.add(-1.5, f"the old statement already holds '{held[0].text}'") * -1
    return 0.0


_EVENT_STEMS = {turkish: frozenset(stem(e, turkish) for e in _EVENTS) for turkish in (False, True)}
_AGAINST = (
    _against_subject,
    _against_attribute,
    _against_untied,
    _against_topic,
    _against_roles,
    _against_addition,
    _against_past,
    _against_occasion,
    _against_nothing_replaced,
    _against_many_values,
    _against_already_held,
)


_QUALIFIERS = frozenset({"obj:in", "obj:on", "obj:at", "day", "time", "date"})


def substitutions(
    old_values: list[Value],
    new_values: list[Value],
    targets: AbstractSet[str] = frozenset(),
    fits: Callable[[Value, Value], bool] | None = None,
) -> list[tuple[Value, Value]]:
    """(old value, new value) pairs of one kind: the new clause no longer holds the old value and the
    old clause does not hold the new one. Where a change goes ("switched to tea", ``targets``) may
    replace a name or the object of the old clause ("uses Vim", "drinks coffee")."""
    gone = [v for v in old_values if not any(same_value(v, n) for n in new_values)]
    fresh = [v for v in new_values if not any(same_value(v, o) for o in old_values)]
    out: list[tuple[Value, Value]] = []
    used: set[int] = set()
    for o in gone:
        for i, n in enumerate(fresh):
            target = _kind(n) == "obj:to" and _held(n, targets) and _kind(o) in ("name", "obj")
            if i not in used and (_compatible_kinds(o, n) or target) and (fits is None or fits(o, n)):
                out.append((o, n))
                used.add(i)
                break
    return out


__all__ = [
    "LIKELY_SCORE",
    "UPDATE_SCORE",
    "Clause",
    "Family",
    "Statement",
    "Value",
    "Verdict",
    "analyse",
    "is_turkish",
    "judge",
    "may_say_change",
    "may_update",
    "same_value",
    "says_change",
    "stem",
    "substitutions",
    "words",
]
