"""Reading a text into clauses (:func:`analyse`): the speaker, sentences, clause boundaries and each clause's
features.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache

from reverie.text.updates.statement import Clause, Statement, Value
from reverie.text.updates.subjects import noun_phrase, np_subject, read_subject
from reverie.text.updates.tokens import (
    TEXT_CACHE,
    WORD_CACHE,
    core_form,
    day_of,
    fold,
    is_copula,
    is_past,
    is_turkish,
    number_of,
    stem,
    tr_person,
)
from reverie.text.updates.values import read_values, spelled_number
from reverie.text.updates.vocabulary import (
    ABBREV,
    ACCUSATIVE_TR,
    ADDITIVE,
    CHANGE,
    CLAUSE,
    CORRECTION,
    DAYS,
    DETERMINERS,
    DISCOURSE,
    DISLIKE,
    DROP_AFTER_WORD,
    DROP_AROUND,
    DROP_BEFORE,
    FAMILIES,
    FIRST_PERSON,
    FROM_TO,
    GIVEN_AWAY,
    INSTEAD_TR,
    ISO_NOTE,
    LEFT_GROUPS,
    LIKE,
    MOVED_OUT,
    MOVED_TO_TR,
    NEGATED_VERB_TR,
    NEGATION,
    NEGATION_TR,
    NO_LONGER,
    NO_LONGER_TR,
    NO_MORE_TR,
    NOT_VALUE,
    NUMBER_WORDS,
    PERSON_NOUNS,
    PHRASE_END,
    PREPOSITIONS,
    QUALIFIER,
    RATIO,
    RESUME,
    SENTENCE_END,
    SINCE,
    SPEAKER,
    STOP,
    TAG,
    TARGET,
    THING_ENDED,
    TIME_START,
    TITLE,
    TOKEN,
    TOPIC_VERB,
    WRONG_ABOUT,
)

#: third-person pronouns: an elided subject in a clause that names one is not the speaker
_THIRD_PERSON = frozenset({"he", "she", "him", "her", "they", "them"})
_SINCE_TR = re.compile(r"([\wçğıöşüÇĞİÖŞÜ'’.]+)\s+(?:beri|itibaren)\b", re.IGNORECASE)


def split_speaker(text: str, speaker: str | None) -> tuple[str | None, str]:
    """The speaker (named, or read from a "Name: " prefix) and what ``text`` says, as :func:`analyse`
    reads it: the prefix, tags and ISO date notes removed, abbreviations without their period."""
    body = text
    m = SPEAKER.match(body)
    if (
        m
        and not CORRECTION.search(m.group(1))
        and not CHANGE.search(m.group(1))
        and m.group(1).casefold() not in DISCOURSE
    ):
        speaker = speaker or m.group(1).strip()
        body = body[m.end() :]
    body = TAG.sub(" ", body)
    body = ABBREV.sub(lambda g: g.group(1), ISO_NOTE.sub("", body))
    return speaker, body


def analyse(text: str, speaker: str | None = None, turkish: bool | None = None) -> Statement:
    """The clauses of ``text`` with their subject, values and change words (cached by text).
    ``turkish``: read it as Turkish (or not); by default, as its words suggest."""
    return _analyse(text, speaker, turkish)  # one cache entry however the arguments are passed


@lru_cache(maxsize=TEXT_CACHE)
def _analyse(text: str, speaker: str | None, turkish: bool | None) -> Statement:
    speaker, body = split_speaker(text, speaker)
    if turkish is None:
        turkish = is_turkish(body)
    body = ISO_NOTE.sub("", body)
    st = Statement(text, speaker, turkish=turkish)
    for sentence in _sentences(body):
        question = sentence.rstrip().endswith("?")
        inherited: tuple[tuple[str, ...], set[str]] | None = None
        clauses: list[Clause] = []
        for part in CLAUSE.split(sentence):
            if not part or not part.strip(" ,;:"):
                continue
            clause = _clause(part.strip(" ,;:"), question, turkish, first=not clauses)
            if clause is None:
                continue
            if not clause.subject and clause.subject_words == {"∅"}:  # elided: the sentence's subject
                speaker_said = not turkish or not clauses
                if speaker_said and not inherited and _THIRD_PERSON & set(clause.words):
                    speaker_said = False  # "No more swimming for him": about someone else, not the speaker
                clause.subject, clause.subject_words = inherited or (
                    (("self",), set()) if speaker_said else ((), set())
                )
            elif clause.subject:
                inherited = (clause.subject, clause.subject_words)
            clauses.append(clause)
        # a change or a correction is said once for the sentence ("We changed vets, the cat now sees …")
        change = list(dict.fromkeys(c for cl in clauses for c in cl.change))
        correction = list(dict.fromkeys(c for cl in clauses for c in cl.correction))
        context = {x for cl in clauses for x in cl.stems}
        wrong_about = {x for cl in clauses for x in cl.wrong_about}  # "I was wrong about the fee, it's 5"
        for cl in clauses:
            cl.change, cl.correction, cl.context = change, correction, context
            cl.wrong_about = wrong_about
        st.clauses.extend(clauses)
        st.stems |= {x for cl in clauses for x in cl.stems | cl.subject_words}
    return st


def _sentences(text: str) -> list[str]:
    return [s.strip() for s in SENTENCE_END.split(text) if s and s.strip()]


def _since_tr_at(words: list[str], i: int) -> bool:
    """Whether ``words[i]`` belongs to a Turkish "X'ten beri" / "X'ten itibaren" (when a state began)."""
    if words[i] in ("beri", "itibaren"):
        return i > 0
    return i + 1 < len(words) and words[i + 1] in ("beri", "itibaren")


def _subject_of(
    raw: list[str], words: list[str], lead: int, turkish: bool, *, first: bool
) -> tuple[tuple[str, ...], set[str]]:
    """:func:`read_subject` of a clause, leaving out a Turkish "since" phrase ("Mart'tan itibaren kızım …": the
    month is not the subject)."""
    if turkish and any(w in ("beri", "itibaren") for w in words[1:]):
        keep = [i for i in range(len(words)) if not _since_tr_at(words, i)]
        sraw, swords = [raw[i] for i in keep], [words[i] for i in keep]
        return read_subject(sraw, swords, _lead(swords, turkish), turkish, first=first)
    return read_subject(raw, words, lead, turkish, first=first)


def _content_stems(words: list[str], values: list[Value], turkish: bool) -> set[str]:
    """The stems of a clause's content words: not stop words, values, change cues or numbers."""
    value_words = {fold(w) for v in values if not v.kind.startswith(("obj", "family")) for w in TOKEN.findall(v.text)}
    cue_words = {w for w in words if _is_cue(w)}
    return {
        stem(w, turkish)
        for w in words
        if w not in STOP
        and (len(w) >= 3 or w.isdigit())
        and w not in value_words
        and w not in cue_words
        and not w[:1].isdigit()
    }


def _change_words(text: str, words: list[str], values: list[Value], turkish: bool, *, adjective: bool) -> list[str]:
    """The words of a clause that say something changed (a "moving" said of a thing is none)."""
    found = [
        m.group(0).casefold()
        for pat in (CHANGE, SINCE)
        for m in pat.finditer(text)
        if not (adjective and m.group(0).casefold() == "moving")
    ]
    if turkish:
        found += _moved_to_tr(words) + _became_tr(words, values)
    return found


#: "Friday is takeaway night": a day said first is the value of what follows the verb ("takeaway night is Friday")
_DAY_FIRST = re.compile(
    rf"^\s*((?:{'|'.join(en for en, _ in DAYS)})s?)\s+(is|are|was|were)\s+([^,;]+?)([.!?]?)\s*$", re.IGNORECASE
)


def _clause(text: str, question: bool, turkish: bool, *, first: bool = True) -> Clause | None:
    day_first = None if turkish else _DAY_FIRST.match(text)
    if day_first:
        day, verb, rest, end = day_first.groups()
        text = f"{rest} {verb} {day}{end}"
    raw = TOKEN.findall(text)
    if not raw:
        return None
    words = [fold(w) for w in raw]
    lead = _lead(words, turkish)
    subject, subject_words = _subject_of(raw, words, lead, turkish, first=first)
    names = {w for w in subject_words if w and w != "∅"}
    since = {fold(w) for m in SINCE.finditer(text) for w in TOKEN.findall(m.group(0))[1:]}
    if turkish:  # "Ocak'tan beri", "Mart'tan itibaren": when the new state began
        since |= {fold(m.group(1)) for m in _SINCE_TR.finditer(text)}
    values = [
        v
        for v in read_values(text, raw, words, lead, turkish, names)
        if not (v.kind == "name" and {stem(x, turkish) for x in v.norm.split()} & subject_words)
        and not (since and {fold(w) for w in TOKEN.findall(v.text)} <= since)  # when it began, not a value
    ]
    holder = _role_holder(raw, words, subject, subject_words, turkish)
    if holder is not None:  # "Tom is my mentor": the mentor is Tom
        subject, subject_words, value = holder
        values.append(value)
    topic = _topic_tr(words) if turkish else _topic(raw, words)
    moving = {w for w in words if w.startswith("mov")} if topic is not None else set()  # moved a thing, not oneself
    adjective = _moving_said_of_a_thing(words)  # "a moving film", "moving parts": no move
    if adjective:
        moving.add("moving")
    nouns_after = {w for k, w in enumerate(words) if k and words[k - 1] in PREPOSITIONS}  # "at work": a place
    families = {name for w in words if w not in moving and w not in nouns_after for name in _word_families(w)}
    families |= {name for name, fam in FAMILIES.items() if fam.phrase is not None and fam.phrase.search(text)}
    for name in families:
        pat = FAMILIES[name].values
        if pat is not None:
            values += [Value(f"family:{name}", stem(w, turkish), w) for w in words if pat.match(w)]
    stems = _content_stems(words, values, turkish)
    lets_go = _letting_go(text, turkish)
    negated = bool(NEGATION.search(text) or (turkish and NEGATION_TR.search(text)))
    folded = set(words)
    polarity = (1 if folded & LIKE else 0) - (1 if folded & DISLIKE else 0)
    values = [v for v in values if not (v.kind in ("name", "obj", "obj:to") and fold(v.text) in PERSON_NOUNS)]
    return Clause(
        text,
        words,
        stems,
        values,
        subject,
        subject_words,
        families,
        change=_change_words(text, words, values, turkish, adjective=adjective),
        correction=[m.group(0).casefold() for m in CORRECTION.finditer(text)],
        additive=[m.group(0).casefold().strip() for m in ADDITIVE.finditer(text)],
        dropped=lets_go.dropped,
        given_up=lets_go.given_up,
        denied=lets_go.denied,
        moved_from=lets_go.moved_from,
        moved_to=lets_go.moved_to,
        negated=negated,
        polarity=polarity,
        past=is_past(words),
        question=question,
        copula=is_copula(words, turkish),
        topic=topic,
        targets=lets_go.targets,
        wrong_about=lets_go.wrong_about,
        moved_out=bool(MOVED_OUT.search(text)),
        resumed=not negated and bool(RESUME.search(text)),
    )


#: what a verb "moving" is said with: a form of "be" or a verb of going on before it ("we're moving", "keep moving"),
#: or a direction, a place or an object after it ("moving to Leeds", "moving house", "moving the meeting")
_MOVING_BEFORE = frozenset(
    {"am", "is", "are", "was", "were", "be", "been", "being", "i'm", "we're", "they're", "you're", "he's", "she's"}
    | {"it's", "keep", "kept", "keeps", "start", "started", "stop", "stopped", "about", "finish", "finished"}
)
_MOVING_AFTER = frozenset(
    {"to", "in", "into", "out", "away", "back", "from", "on", "up", "over", "house", "home", "abroad", "across"}
    | {"down", "forward", "ahead", "the", "my", "our", "his", "her", "their", "it", "them", "everything", "all"}
    | {"there", "here", "closer", "nearer", "again", "soon", "next", "this", "somewhere", "elsewhere"}
)


def _moving_said_of_a_thing(words: list[str]) -> bool:
    """Whether every "moving" in ``words`` is an adjective ("a moving film", "moving parts", "found the talks
    moving"), said without a form of "be" before it or a direction, a place or an object after it."""
    at = [i for i, w in enumerate(words) if w == "moving"]
    return bool(at) and not any(
        (i > 0 and words[i - 1] in _MOVING_BEFORE) or (i + 1 < len(words) and words[i + 1] in _MOVING_AFTER) for i in at
    )


def _became_tr(words: list[str], values: list[Value]) -> list[str]:
    """ "Eşim okul müdürü oldu": what someone became (the predicate before "oldu") is a change; "oldu" alone
    ("it happened", "it was") is none."""
    if len(words) >= 2 and words[-1] in ("oldu", "olmuş") and any(v.kind == "obj:is" for v in values):
        return [words[-1]]
    return []


def _moved_to_tr(words: list[str]) -> list[str]:
    """ "Yüzme derslerini pazar öğleden sonraya aldık", "toplantıyı salıya çektik": a verb of taking or moving
    whose dative is a time (a day, a time, a number just before it) moves a scheduled thing there — a change."""
    out = []
    for k in range(1, len(words)):
        dative = words[k - 1]
        if not MOVED_TO_TR.match(words[k]) or not re.search(r"(?:y?[ae]|n[ae])$", dative):
            continue
        near = range(max(0, k - 3), k)  # a number word, bare or with a case ending ("beş Mayıs'a", "on beşine")
        if any(
            day_of(words[j]) or words[j][:1].isdigit() or words[j] in NUMBER_WORDS or spelled_number(words, j, True)
            for j in near
        ):
            out.append(f"{dative} {words[k]}")
    return out


@dataclass(slots=True)
class _LettingGo:
    """What a clause lets go of and where it goes: the features of :class:`Clause` of the same names."""

    dropped: set[str] = field(default_factory=set)
    given_up: set[str] = field(default_factory=set)
    denied: set[str] = field(default_factory=set)
    targets: set[str] = field(default_factory=set)
    moved_from: set[str] = field(default_factory=set)
    moved_to: set[str] = field(default_factory=set)
    wrong_about: set[str] = field(default_factory=set)


def _letting_go(text: str, turkish: bool) -> _LettingGo:
    """The values ``text`` lets go of (dropped, given up by a verb that means it, denied), where a change
    goes, and what it moves from and to."""
    dropped, given_up = _dropped_before(text, turkish)
    denied: set[str] = set()
    for m in NOT_VALUE.finditer(text):
        terms = _next_terms(text[m.end() :], turkish)
        denied |= terms
        if m.group(1).casefold() in ("instead of", "rather than"):
            given_up |= terms  # "padel instead of tennis": tennis is let go, a plain word too
            dropped |= terms
    for m in INSTEAD_TR.finditer(text):  # "kahve yerine çay": the word before "yerine" is let go
        given_up |= _terms(m.group("x"), turkish)
        dropped |= _terms(m.group("x"), turkish)
    for m in DROP_AROUND.finditer(text):
        dropped |= _terms(m.group("x"), turkish)
    for m in GIVEN_AWAY.finditer(text):  # "gave my season ticket to my nephew": the ticket is gone
        given_up |= _terms(m.group("x"), turkish)
        dropped |= _terms(m.group("x"), turkish)
    if turkish:
        for m in NO_MORE_TR.finditer(text):  # "artık çay yok": no more tea
            dropped |= _terms(m.group("x"), turkish)
    targets: set[str] = set()
    for m in TARGET.finditer(text):
        target = m.group("x") or m.group("x2") or m.group("x3") or m.group("x4") or m.group("y") or ""
        targets |= _terms(" ".join(target.split()[:4]), turkish)
    _dropped_after(text, turkish, dropped, given_up)
    wrong_about: set[str] = set()
    for m in WRONG_ABOUT.finditer(text):  # what was wrong is taken back
        wrong = _next_terms(m.group("x") or m.group("y") or m.group("z") or "", turkish)
        dropped |= wrong
        given_up |= wrong
        wrong_about |= wrong
    for m in (NO_LONGER_TR if turkish else NO_LONGER).finditer(text):
        gone = _terms(m.group("x") or m.group("y") or "", turkish)
        verb = NEGATED_VERB_TR.match(fold(TOKEN.findall(m.group(0))[-1])) if turkish else None
        if verb:  # "artık koşmuyorum": running is what is no longer done
            gone |= _terms(verb.group("root") or verb.group("root2"), turkish)
        dropped |= gone
        given_up |= gone
    moved_from: set[str] = set()
    moved_to: set[str] = set()
    for m in FROM_TO.finditer(text):
        moved_from |= _terms(m.group("a") or m.group("c") or "", turkish, last=bool(m.group("c")))
        moved_to |= _terms(m.group("b") or m.group("d") or "", turkish)
    return _LettingGo(dropped, given_up, denied, targets, moved_from, moved_to, wrong_about)


def _dropped_before(text: str, turkish: bool) -> tuple[set[str], set[str]]:
    """What a word of letting go before it lets go of ("gave up on VS Code"), and of that what a verb that means
    it gives up ("stopped using the treadmill", "quit ballet", "left the climbing club"): a plain word too."""
    dropped: set[str] = set()
    given_up: set[str] = set()
    for m in DROP_BEFORE.finditer(text):
        terms = _next_terms(text[m.end() :], turkish)
        dropped |= terms
        verb = m.group(1).split()[0].casefold()
        if verb not in ("off", "left", "leaving", "replaced"):
            given_up |= terms
        elif verb in ("left", "leaving") and _leaves_a_group(text[m.end() :]):
            given_up |= terms  # "left the climbing club", "left my job at the bank": gone for good
    return dropped, given_up


def _leaves_a_group(text: str) -> bool:
    """Whether the phrase after "left" names what one belongs to ("the climbing club", "my job at the bank"), not a
    place left for a while or a thing left somewhere ("the office at six", "my umbrella at the office")."""
    phrase = re.split(PHRASE_END.pattern + r"|\b(?:at|in|on|for|with|after|because|and|so|to)\b", text, maxsplit=1)[0]
    return any(fold(w) in LEFT_GROUPS for w in TOKEN.findall(phrase)[:4])


#: a farewell in Turkish: its object takes the dative ("Fiat'a veda ettik")
_FAREWELL_TR = re.compile(r"\bveda\b", re.IGNORECASE)


def _dropped_after(text: str, turkish: bool, dropped: set[str], given_up: set[str]) -> None:
    """What a word of letting go after it lets go of ("Priya left", "the falafel place closed", "Samsung'u
    kardeşime verdim"), added to ``dropped`` (and to ``given_up`` for a thing gone for good)."""
    for m in DROP_AFTER_WORD.finditer(text):
        x = m.group("x")
        if turkish:
            before = TOKEN.findall(text[: m.start("x")])[-4:]
            accusative = [w for w in before if ACCUSATIVE_TR.match(w)]
            if accusative:  # "Samsung'u kardeşime verdim", "Sigarayı üç ay önce bıraktım": the object
                dropped |= _terms(accusative[-1], turkish)
        if re.search(r"(?:n't|['’]t|\bnot|\bnever|\bwon|\bdon|\bdidn)$", x, re.IGNORECASE) or fold(x) in STOP:
            continue
        if turkish and re.search(r"(?:['’](?:y?[ae]|n[ae]|[dt][ae]))$", x) and not _FAREWELL_TR.search(m.group(0)):
            continue  # "Berlin'e taşındı", "Berlin'de …": a destination or a place, not what was left ("Fiat'a veda
            # ettik": what one says farewell to)
        if not turkish:
            x = _head_before_phrase(text[: m.end("x")]) or x  # "The bakery on Mill Road closed": the bakery
        dropped |= _terms(x, turkish)
        if not turkish and THING_ENDED.match(text[m.end("x") :]):
            given_up |= _terms(x, turkish)  # "the falafel place closed": the place is gone


def _head_before_phrase(text: str) -> str | None:
    """ "The bakery on Mill Road", "My manager at Acme", "Priya from accounting": what closed or left is the
    noun before the phrase of place that ends ``text`` (up to three words after the preposition)."""
    raw = TOKEN.findall(text)
    for k in range(len(raw) - 2, max(0, len(raw) - 5), -1):
        if fold(raw[k]) in PREPOSITIONS and k > 0 and fold(raw[k - 1]) not in STOP:
            return str(raw[k - 1])
    return None


def _topic(raw: list[str], words: list[str]) -> tuple[str, str] | None:
    """What a change verb acts on: "I changed my phone's wallpaper to …" → ("phone", "wallpaper"),
    "We pushed the wedding back …" → ("", "wedding"); None without such an object."""
    for i, w in enumerate(words):
        if not TOPIC_VERB.match(w):
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
            if x in STOP or raw[j][:1].isupper():
                break
            np.append(x)
        if np and np[-1] not in ("mind", "minds"):  # "changed her mind" acts on no thing: what she wants changed
            return owner, " ".join(stem(x) for x in np)  # the head last: "sertraline dose" → "sertra dos"
        return None
    return None


#: a Turkish genitive ("çocukların", "annemin", "Zeynep'in") and the possessed object after it, in the accusative
_TR_GENITIVE_OBJECT = re.compile(r"(?:n[ıiuü]n|[ıiuü]n)$")
_TR_POSSESSED_ACCUSATIVE = re.compile(r"(?:s[ıiuü]n[ıiuü]|[ıiuü]n[ıiuü]|n[ıiuü])$")


def _topic_tr(words: list[str]) -> tuple[str, str] | None:
    """What a Turkish clause acts on when it names another's thing: "çocukların yatma saatini 20:00'ye aldık" →
    ("çocuk", "saat"): the kids' bedtime, not the speaker's. None without a genitive person and its object."""
    for k in range(len(words) - 1):
        owner = words[k]
        if not _TR_GENITIVE_OBJECT.search(owner) or not tr_person(owner.split("'")[0]):
            continue
        for j in range(k + 1, min(len(words), k + 4)):
            if _TR_POSSESSED_ACCUSATIVE.search(words[j]) and j + 1 < len(words):
                return stem(owner, True), stem(words[j], True)
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
        np = noun_phrase(raw, words, i + 2)
        np = [x for x in np if not x.startswith("=")]
        if not np:
            return None
        owner = "self" if words[i + 1] in ("my", "our") else ""
        role, role_words = np_subject(owner, np, turkish)
        name = subject[1]
        return role, role_words, Value("name", name, name.title(), stem(np[-1], turkish))
    return None


@lru_cache(maxsize=TEXT_CACHE)
def attributes(text: str) -> frozenset[str]:
    """The attributes that hold one value at a time (where someone lives or works, whom they report to, a
    diet, a commute, when they get up, an age) that ``text`` names by a word of its family ("job", "moved",
    "manager", "vegan"): a question about one of them is answered by a memory that states it. A look-up of
    each word (no reading into clauses): the read path asks it of every candidate."""
    found = {name for w in TOKEN.findall(text) for name in _word_families(fold(w))}
    found |= {name for name, fam in FAMILIES.items() if fam.phrase is not None and fam.phrase.search(text)}
    return frozenset(name for name in found if FAMILIES[name].functional)


@lru_cache(maxsize=WORD_CACHE)
def _word_families(word: str) -> tuple[str, ...]:
    """The attribute families a word names ("lives" → residence)."""
    return tuple(name for name, fam in FAMILIES.items() if fam.trigger.match(word))


@lru_cache(maxsize=WORD_CACHE)
def _is_cue(word: str) -> bool:
    return bool(CHANGE.fullmatch(word) or CORRECTION.fullmatch(word))


def _lead(words: list[str], turkish: bool = False) -> int:
    """Index of the first word after discourse openers and change words ("Honestly", "Update:", "now")."""
    i = 0
    while i < len(words) and (
        words[i] in DISCOURSE
        or (
            words[i] in STOP
            and words[i] not in FIRST_PERSON
            and (turkish or words[i] not in DETERMINERS)
            and words[i] not in ("my", "our")
            and not (words[i] == "these" and i + 1 < len(words) and words[i + 1] != "days")
        )
    ):
        i += 1
    return i


def _terms(text: str, turkish: bool = False, *, last: bool = False) -> set[str]:
    """Value forms and content stems of a short phrase (what a change lets go of). ``last``: only its
    last word (a Turkish "X'ten" phrase names its value last)."""
    raw = TOKEN.findall(text)
    if last:
        raw = raw[-1:]
    out: set[str] = set()
    for w in raw:
        f = fold(w)
        if f in STOP or f in TITLE or f in QUALIFIER:
            continue
        out.add(stem(w, turkish))
        out.add(core_form(w))
        ratio = RATIO.fullmatch(w)
        if ratio:
            out.add(f"#{ratio.group(1)}:{ratio.group(2)}")
            continue
        n = number_of(w) if w[:1].isdigit() else NUMBER_WORDS.get(f)
        if n is not None:
            out.add(f"#{n:g}")
        day = day_of(w)
        if day:
            out.add(f"day:{day}")
    return out


def _next_terms(text: str, turkish: bool = False) -> set[str]:
    """The phrase right after a letting-go word: up to punctuation, a conjunction, or 4 words."""
    phrase = re.split(PHRASE_END.pattern + r"|\b(?:and|so|because|since|after|to|with|ve|çünkü)\b", text, maxsplit=1)[0]
    words = phrase.split()[:4]
    # a time adverbial after what was let go ("sold the Civic last weekend") says when, not what
    cut = next((i for i, w in enumerate(words) if i and fold(w) in TIME_START), len(words))
    return _terms(" ".join(words[:cut]), turkish)
