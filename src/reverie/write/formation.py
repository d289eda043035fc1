"""Formation (heuristic path): coreference, atomic facts, temporal normalisation, foresight.

* coreference: singular third-person pronouns → the last named entity seen (EN + TR);
* atomic split: " and " / " ve " when each side names different entities;
* temporal: today/tomorrow/yesterday, bugün/yarın/dün, "next week", "3 days ago", "2 gün önce",
  weekday names → ISO dates relative to the message time (the word is kept, the date added);
* foresight: plan to / will / going to / -ecek → ``valid_until`` = message time + 7 days, or the day
  after the latest future date the plan names when that is later (a season, month or year it plans for
  counts to its last day: "this summer", "in March", "seneye"). Only the plan is time-bounded: in a
  raw turn, the sentences that state no plan stay a persistent fact of their own, so what else the
  message said does not expire with the plan. "will" about no one's intention ("it will be fun", "you
  will love it") or beyond any bound ("will always remember") is no plan.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta

from reverie import lexicon
from reverie.config.write import FormationSettings
from reverie.model import TemporalType
from reverie.write.entities import extract_entities
from reverie.write.horizon import plan_horizon

#: singular third-person pronouns (EN + TR) stand for the last named entity; plural "they/them/their"
#: stand for a group, never for one name ("they bring lots of joy" is not "Maya brings …"), and a
#: pronoun in a contraction ("she's") is left alone
_PRONOUN = re.compile(r"\b(" + "|".join(lexicon.terms("formation_pronouns")) + r")\b(?!['’])", re.IGNORECASE)
_POSSESSIVE = re.compile(r"\b(" + "|".join(lexicon.terms("formation_possessives")) + r")\b(?=\s+\w)", re.IGNORECASE)
#: " and " / " ve " between clauses; the "ve" of an English contraction ("must've") is no conjunction
_SPLIT = re.compile(r"\s*(?:,\s*)?(?<!['’])\b(?:and|ve)\b\s+", re.IGNORECASE)

_DAY_OFFSETS = {
    "today": 0,
    "tonight": 0,
    "tomorrow": 1,
    "yesterday": -1,
    "bugün": 0,
    "bu akşam": 0,
    "yarın": 1,
    "dün": -1,
    "the day after tomorrow": 2,
    "öbür gün": 2,
    "the day before yesterday": -2,
    "evvelsi gün": -2,
}
_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_WEEKDAYS_TR = ("pazartesi", "salı", "çarşamba", "perşembe", "cuma", "cumartesi", "pazar")
_UNIT_DAYS = {"day": 1, "week": 7, "month": 30, "year": 365, "gün": 1, "hafta": 7, "ay": 30, "yıl": 365}

_DAY_WORD = re.compile(r"\b(" + "|".join(lexicon.terms("formation_day_words")) + r")\b(?!\s*\()", re.IGNORECASE)
_AGO = re.compile(
    r"\b(\d+|a|an|one|two|three|four|five|bir|iki|üç|dört|beş)\s+"
    r"(day|week|month|year|gün|hafta|ay|yıl)s?\s+(ago|önce)\b(?!\s*\()",
    re.IGNORECASE,
)
_IN = re.compile(
    r"\b(in|within)\s+(\d+|a|an|one|two|three|four|five)\s+(day|week|month|year)s?\b(?!\s*\()", re.IGNORECASE
)
_LATER_TR = re.compile(r"\b(\d+|bir|iki|üç|dört|beş)\s+(gün|hafta|ay|yıl)\s+sonra\b(?!\s*\()", re.IGNORECASE)
_NEXT_LAST = re.compile(
    r"\b(next|last|this|gelecek|geçen|önümüzdeki|bu)\s+(week|month|year|hafta|ay|yıl|"
    + "|".join(_WEEKDAYS + _WEEKDAYS_TR)
    + r")\b(?!\s*\()",
    re.IGNORECASE,
)
_NUMBERS = {
    "a": 1,
    "an": 1,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "bir": 1,
    "iki": 2,
    "üç": 3,
    "dört": 4,
    "beş": 5,
}
_FORESIGHT = lexicon.pattern("formation_foresight")
#: "will" / "won't" that states no plan: a prediction about a thing or the listener ("it will be fun",
#: "you will love it") or a lasting stance ("will always remember", "won't ever forget")
_NO_PLAN_BEFORE = re.compile(r"\b(?:" + "|".join(lexicon.terms("formation_no_plan_before")) + r")\s+$", re.IGNORECASE)
_NO_PLAN_AFTER = re.compile(r"\s+(?:" + "|".join(lexicon.terms("formation_no_plan_after")) + r")\b", re.IGNORECASE)
_SENTENCE = re.compile(r"(?<=[.!?])\s+")


@dataclass(slots=True)
class FormedFact:
    """One atomic memory unit produced by formation."""

    text: str
    entities: list[str] = field(default_factory=list)
    temporal_type: TemporalType = TemporalType.PERSISTENT
    valid_until: datetime | None = None
    dates: list[str] = field(default_factory=list)
    foresight: bool = False


def resolve_coreference(text: str, last_entity: str | None) -> tuple[str, str | None]:
    """Replace third-person pronouns with the last named entity; returns (text, new last entity)."""
    current = last_entity
    out: list[str] = []
    for sentence in re.split(r"(?<=[.!?])\s+", text):
        names = [e.text for e in extract_entities(sentence) if e.kind == "name"]
        if current is not None and not names:
            sentence = _POSSESSIVE.sub(f"{current}'s", sentence)
            sentence = _PRONOUN.sub(current, sentence)
        if names:
            current = names[-1]
        out.append(sentence)
    return " ".join(out), current


def atomic_split(text: str, *, min_words: int) -> list[str]:
    """Split at " and " / " ve " when the two sides name different entities."""
    parts = _SPLIT.split(text)
    if len(parts) < 2:
        return [text]
    out = [parts[0]]
    for part in parts[1:]:
        left = {e.uri for e in extract_entities(out[-1])}
        right = {e.uri for e in extract_entities(part)}
        if _splits(out[-1], part, left, right, min_words):
            out.append(part)
        else:
            out[-1] = f"{out[-1]} and {part}" if re.search(r"\band\b", text, re.IGNORECASE) else f"{out[-1]} ve {part}"
    return [p.strip().rstrip(",") for p in out if p.strip()]


def _splits(left_text: str, right_text: str, left: set[str], right: set[str], min_words: int) -> bool:
    """Both sides are clauses about different entities, the right one opening with its subject entity."""
    if not left or not right or left == right:
        return False
    if len(left_text.split()) < min_words or len(right_text.split()) < min_words:
        return False
    first = extract_entities(right_text.split(None, 1)[0])
    return bool(first) and any(uri.startswith(first[0].uri) for uri in right)


def _iso(day: date) -> str:
    return day.isoformat()


def _weekday(now: date, name: str, direction: str) -> date:
    target = (_WEEKDAYS + _WEEKDAYS_TR).index(name.casefold()) % 7
    delta = (target - now.weekday()) % 7
    if direction in ("next", "gelecek", "önümüzdeki"):
        return now + timedelta(days=delta or 7)
    if direction in ("last", "geçen"):
        return now - timedelta(days=((now.weekday() - target) % 7) or 7)
    return now + timedelta(days=delta)


def _period(now: date, unit: str, direction: str) -> date:
    days = _UNIT_DAYS[unit.casefold()]
    sign = {"next": 1, "gelecek": 1, "önümüzdeki": 1, "last": -1, "geçen": -1}.get(direction, 0)
    return now + timedelta(days=sign * days)


def normalise_temporal(text: str, now: datetime) -> tuple[str, list[str]]:
    """Add ISO dates after relative time expressions (relative to ``now``); returns (text, dates)."""
    today = now.date()
    dates: list[str] = []

    def mark(match: re.Match[str], day: date) -> str:
        dates.append(_iso(day))
        return f"{match.group(0)} ({_iso(day)})"

    text = _DAY_WORD.sub(lambda m: mark(m, today + timedelta(days=_DAY_OFFSETS[m.group(1).casefold()])), text)
    text = _AGO.sub(
        lambda m: mark(m, today - timedelta(days=_count(m.group(1)) * _UNIT_DAYS[m.group(2).casefold()])), text
    )
    text = _IN.sub(
        lambda m: mark(m, today + timedelta(days=_count(m.group(2)) * _UNIT_DAYS[m.group(3).casefold()])), text
    )
    text = _LATER_TR.sub(
        lambda m: mark(m, today + timedelta(days=_count(m.group(1)) * _UNIT_DAYS[m.group(2).casefold()])), text
    )
    text = _NEXT_LAST.sub(lambda m: mark(m, _relative(today, m.group(1).casefold(), m.group(2).casefold())), text)
    return text, dates


def _relative(today: date, direction: str, what: str) -> date:
    if what in _UNIT_DAYS:
        return _period(today, what, direction)
    return _weekday(today, what, direction)


def _count(word: str) -> int:
    return int(word) if word.isdigit() else _NUMBERS.get(word.casefold(), 1)


def is_plan(text: str) -> bool:
    """Whether ``text`` states a plan or intention (foresight: plan to, will, going to, -ecek),
    leaving out "will" that predicts or lasts rather than plans ("it will be fun", "will always")."""
    for m in _FORESIGHT.finditer(text):
        if m.group(0).casefold() in ("will", "won't") and (
            _NO_PLAN_BEFORE.search(text[: m.start()]) or _NO_PLAN_AFTER.match(text, m.end())
        ):
            continue
        return True
    return False


def foresight(text: str, now: datetime, cfg: FormationSettings, *, dates: list[str] | None = None) -> datetime | None:
    """A plan or intention is time-bounded: ``valid_until`` = now + 7 days by default, or the
    day after the latest of ``dates`` (ISO dates the plan names) or of the season, month or year it plans
    for (:func:`~reverie.write.horizon.plan_horizon`) when that is later."""
    if not is_plan(text):
        return None
    until = now + timedelta(days=cfg.foresight_days)
    horizon = plan_horizon(text, now.date())  # "this summer", "in March", "next year": the period's last day
    for iso in [*(dates or ()), *([horizon.isoformat()] if horizon else [])]:
        try:
            day = date.fromisoformat(iso)
        except ValueError:
            continue
        end = datetime.combine(day + timedelta(days=1), now.timetz())
        until = max(until, end)
    return until


def plan_apart(text: str) -> list[str]:
    """The sentences of ``text`` that state no plan, then the ones that do (each group joined), when the
    text holds both; else ``[text]``. The plan part is what foresight bounds in time."""
    parts = [p for p in _SENTENCE.split(text.strip()) if p]
    if len(parts) < 2:
        return [text]
    flags = [is_plan(p) for p in parts]
    if all(flags) or not any(flags):
        return [text]
    rest = " ".join(p for p, f in zip(parts, flags, strict=True) if not f)
    plans = " ".join(p for p, f in zip(parts, flags, strict=True) if f)
    return [rest, plans]


def form_facts(
    text: str,
    *,
    now: datetime,
    cfg: FormationSettings,
    last_entity: str | None = None,
    split: bool = True,
    subject: str | None = None,
) -> tuple[list[FormedFact], str | None]:
    """The heuristic formation path: coreference → atomic split (and the plan apart from the rest) →
    temporal → foresight. ``subject`` (who said ``text``) is put before a split piece that no longer
    names them ("Maya: …"), so every piece stays attributed."""
    resolved, last = resolve_coreference(text, last_entity)
    pieces = atomic_split(resolved, min_words=cfg.min_split_words) if split else [resolved]
    if split:
        pieces = [part for piece in pieces for part in plan_apart(piece)]
        if subject and len(pieces) > 1:
            pieces = [_attributed(p, subject) for p in pieces]
    facts: list[FormedFact] = []
    for piece in pieces:
        normalised, dates = normalise_temporal(piece, now)
        until = foresight(piece, now, cfg, dates=dates)
        facts.append(
            FormedFact(
                text=normalised,
                entities=[e.uri for e in extract_entities(piece)],
                temporal_type=TemporalType.TIME_BOUNDED if until else TemporalType.PERSISTENT,
                valid_until=until,
                dates=dates,
                foresight=until is not None,
            )
        )
    return facts, last


def _attributed(piece: str, subject: str) -> str:
    name = subject.strip()
    if not name or re.search(rf"(?<!\w){re.escape(name)}(?!\w)", piece, re.IGNORECASE):
        return piece
    return f"{name}: {piece}"
