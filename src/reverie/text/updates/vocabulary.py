"""The words and patterns the update reading looks for (EN + TR): stop words, change, correction and letting-go
words, attribute families, numbers, days, months and units.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

#: evidence at or above this is an update (the write path supersedes the old memory)
UPDATE_SCORE = 3.0
#: evidence at or above this orders two answers to one question newest first (read path)
LIKELY_SCORE = 2.5

TOKEN = re.compile(
    r"\d+(?:[.,:]\d+)*(?:['’]?[^\W\d_]+)?|[^\W_]+(?:['’][^\W_]+)*(?:(?<=[sS])['’](?![^\W_]))?", re.UNICODE
)
ABBREV = re.compile(r"\b(Dr|Mr|Mrs|Ms|Prof|St|Mt|Jr|Sr|vs|etc|No|Av|Cad|Sok|Mah)\.", re.IGNORECASE)
TAG = re.compile(r"(?<!\w)#[\w-]+")  # "#24", "#todo": a tag or an id, not a value
SENTENCE_END = re.compile(r"(?<=[.!?;])\s+|\n+|\s+[-–—]\s+")
CLAUSE = re.compile(
    r",\s+(?:so|but|and|then|ama|fakat|çünkü|yani)?\s*|\s+(?:so|but|whereas|because|since|ama|fakat|"
    r"çünkü)\s+",
    re.I,
)
ISO_NOTE = re.compile(r"\s*\(\d{4}-\d{2}-\d{2}(?:\s*[–-]\s*\d{4}-\d{2}-\d{2})?\)")
#: a "Name: " or "label 12: " prefix (a speaker, a turn label): not part of what is said
SPEAKER = re.compile(
    r"^\s*([A-ZÇĞİÖŞÜ][\w'-]{0,20}(?: [A-ZÇĞİÖŞÜ][\w'-]{0,20}){0,2}(?: \d{1,6})?|"
    r"[\w'-]{1,20}(?: [\w'-]{1,20}){0,3} \d{1,6}):\s+(?=\S)"
)


def lex(text: str) -> frozenset[str]:
    return frozenset(text.split())


# words -----------------------------------------------------------------------------------------

STOP = lex("""
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
FIRST_PERSON = lex(
    "i me my mine myself we us our ours ourselves i'm i've i'd i'll we're we've we'd we'll "
    "ben beni bana benim biz bizi bize bizim"
)
DETERMINERS = lex("the a an this that these those his her their its your")
#: people a speaker names by their relation ("my sister", "annem"): a possessive subject that is a person
PERSON_NOUNS = lex("""
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
EVENTS = lex("""
meeting meetings appointment appointments class classes lesson lessons flight flights train wedding party dinner
lunch breakfast surgery operation deadline concert match game interview exam session sessions sync call
toplantı toplantısı randevu randevusu ders dersi uçuş uçuşu düğün düğünü parti yemek ameliyat ameliyatı
teslim sınav sınavı maç maçı görüşme konser seans
""")
#: words that ask nothing and assert no value at the start of a statement ("Honestly, …", "Update: …")
DISCOURSE = lex("""
actually honestly update heads up good news bad news change of plans correction sorry oops so well anyway
btw also just finally basically fyi quick note ok okay yes no yeah aslında neyse bu arada düzeltme pardon
these days nowadays lately recently currently now instead artık şimdi bu aralar son zamanlarda
kusura bakma evet hayır tamam
""")

#: a change: what held before holds no longer (EN + TR)
CHANGE = re.compile(
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
CORRECTION = re.compile(
    r"\b(actually|correction|sorry|i meant|i mean|wrong|mistake|oops|my bad|scratch that|to be precise|"
    r"aslında|düzeltme|pardon|yanlış|hata|özür|kusura bakma|yani)\b",
    re.IGNORECASE,
)
#: the new statement adds to what was said instead of replacing it
ADDITIVE = re.compile(
    r"\b(also|too|as well|again|another|second|both|in addition|plus|besides|still|either|"
    r"before that|the \w+ before|dahi|bir de|yine|hâlâ|hala|ayrıca|ikinci|başka)\b|(?<=\s)(?:de|da)(?=\s|$)",
    re.IGNORECASE,
)
#: a value let go: "gave up on X", "X left", "not X", "X'i bıraktım" (the value is found next to these)
DROP_BEFORE = re.compile(
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
NOT_VALUE = re.compile(
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
FROM_TO = re.compile(
    r"\bfrom\s+(?P<a>[^,.;]{1,40}?)\s+(?:to|over to|for)\s+(?P<b>[^,.;]{1,40})"
    r"|(?P<c>[\wçğıöşüÇĞİÖŞÜ' ]{2,40}?)['’]?(?:dan|den|tan|ten)\s+(?P<d>[\wçğıöşüÇĞİÖŞÜ' ]{2,40}?)['’]?"
    r"(?:ya|ye|a|e|na|ne)\s+(?:geç|taşı|aktar|değiştir)",
    re.IGNORECASE,
)
NEGATION = re.compile(
    r"\b(not|no longer|never|don't|doesn't|isn't|aren't|wasn't|weren't|didn't|won't|n't)\b", re.IGNORECASE
)
NEGATION_TR = re.compile(r"\b(değil\w*|\w+m[ıiuü]yor\w*|\w+m[ae]z\w*|\w+m[ae]d[ıi]\w*)\b", re.IGNORECASE)
OVER = re.compile(r"\b(\w+) over (\w+)\b", re.IGNORECASE)
LIKE = lex(
    "like likes liked love loves loved prefer prefers preferred enjoy enjoys enjoyed adore adores "
    "favorite favourite sever seviyor seviyorum sevdi bayılıyor bayılır tercih"
)
DISLIKE = lex(
    "hate hates hated dislike dislikes disliked detest detests loathe loathes nefret sevmiyor "
    "sevmiyorum sevmez sevmedi hoşlanmıyor hoşlanmaz"
)
POLARITY_WORDS = LIKE | DISLIKE


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
PAST_EN = re.compile(
    r"^(was|were|had|did|went|lived|worked|visited|ran|used|grew|studied|met|bought|"
    r"started|moved|adopted|watched|paid|ordered|spent|stayed|travel+ed|took|saw)$"
)
PAST_TR = re.compile(r"^\w{2,}(?:d[ıiuü]|t[ıiuü])(?:m|n|k|niz|nız|nuz|nüz|lar|ler)?$|^idi\w*$")
_PRESENT_TR_FIRST = re.compile(r"^\w+(?:yor|[ıiuü]r|[ae]r|yim|y[ıi]m|[ıiuü]m)(?:um|üm|ım|im|uz|üz|ız|iz)?$")

NUMBER_WORDS = {
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
NUMBER_WORDS = {k: v for k, v in NUMBER_WORDS.items() if v is not None}
ORDINALS = lex("""
first second third fourth fifth sixth seventh eighth ninth tenth twelfth twentieth birinci ikinci
üçüncü dördüncü beşinci
""")
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
TIME = re.compile(
    r"\b(\d{1,2})(?:[:.](\d{2}))?\s*(am|pm|a\.m\.|p\.m\.)|\b(\d{1,2})[:.](\d{2})\b"
    r"|\bsaat\s+(\d{1,2})(?:[:.](\d{2}))?",
    re.IGNORECASE,
)
TITLE = lex("dr dr. mr mr. mrs mrs. ms ms. prof st st. hanım bey hoca")


TOPIC_VERB = re.compile(
    r"^(changed|change|changing|switched|switch|moved|move|pushed|push|rescheduled|"
    r"postponed|replaced|swapped|raised|increased|lowered|reduced|cut|bumped|extended)$"
)


DROP_AROUND = re.compile(
    r"\b(?:put|set|laid|gave|gives?|giving)\s+(?P<x>(?:[\w'’]+\s+){0,2}?[\w'’]+)\s+"
    r"(?:down|aside|away|up)\b",
    re.IGNORECASE,
)
#: where a change goes: "switched to Neovim", "moved to Wednesdays", "Neovim'e geçti", "yerine Japonca"
TARGET = re.compile(
    r"\b(?:switch(?:ed|ing)?|chang(?:ed|ing)|mov(?:ed|ing)|migrat(?:ed|ing)|relocat(?:ed|ing)|went|go(?:ing)?|"
    r"push(?:ed)?(?:\s+\w+){0,3}\s+back|extended|raised|bumped(?:\s+\w+){0,4}?\s+up)\s+(?:over\s+)?to\s+"
    r"(?P<x>[^,.;:!?]+)|(?P<y>[\wçğıöşüÇĞİÖŞÜ]+)['’]?(?:y?[ae]|n[ae])\s+(?:geç\w*|taşın\w*|ertele\w*|uzat\w*)",
    re.IGNORECASE,
)
DROP_AFTER_WORD = re.compile(
    r"(?P<x>(?:\b[A-ZÇĞİÖŞÜ][\w'’]*\s+)?\b[\w'’]+)\s+(?:just\s+|has\s+|had\s+)?"
    r"(?:left|retired|quit|died|broke(?: down)?|filled up|(?:is|was) (?:full|closed|cancell?ed|gone|over)|"
    r"fell through|moved away|closed down|shut down|kept (?:missing|failing)|passed away|passed on|"
    r"bıraktı\w*|ayrıldı\w*|emekli oldu\w*|taşındı\w*|öldü\w*|bozuldu\w*|kapandı\w*|iptal oldu\w*|sattı\w*|"
    r"kapattı\w*|vazgeçti\w*|sildi\w*|iptal etti\w*|değil\w*|yerine|stepped down|handed (?:\w+ ){0,4}over)\b",
    re.UNICODE,
)
PREPOSITIONS = frozenset(["at", "in", "on", "to", "with", "by", "from", "for"])
OBJECT_VERBS = re.compile(
    r"^(drinks?|drank|uses?|using|prefers?|preferred|likes?|liked|loves?|loved|eats?|ate|plays?|takes?|took|"
    r"drives?|owns?|has|have|reads?|reading|watch(?:es)?|speaks?|learn(?:s|ing)?|stud(?:y|ies|ying)|wears?|"
    r"needs?|wants?|enjoys?|hates?|dislikes?|keeps?|gets?|bought|buy|sells?|rents?|switched to|"
    r"changed to|moved to|went with|going with|chose|picked)$"
)


SELF_WORDS = lex("i i'm i've i'd i'll we we're we've we'd we'll me us ben biz")
