"""Temporal anchoring: a query that names a time prefers memories from that time.

"What did Maria donate in December 2023?", "Who did she have dinner with on May 3, 2023?", "what
did we decide last week?": the time in the question is evidence about *which* memories answer it,
just as its words are. Every memory is stored bitemporally (``validFrom`` = when it became
true), and the write path normalises time expressions (bugün → today, dün → yesterday); this
module does the same for the query: it finds the periods the query names and scores how well a
memory's event time (``valid_from``, else ``created_at``) falls into them.

Recognised (EN + TR): ISO dates (2023-05-07); day–month–year in either order ("7 May 2023",
"May 7, 2023", "7 Mayıs 2023"); month and year ("December 2023", "Aralık 2023"); a year after a
preposition or with a Turkish case suffix ("in 2023", "2023'te"); a month after a preposition
("in June", "Haziran'da": the latest such month not after ``now``); and relative periods
("yesterday"/"dün", "today"/"bugün", "last/this week|month|year", "geçen hafta|ay|yıl",
"N days|weeks|months|years ago", "N gün|hafta|ay|yıl önce"). Pure: ``now`` is an argument.

A memory inside a period fits 1.0; the fit falls linearly to 0 over ``after_days`` after the
period (events are often told some days after they happen: "last week I …") and over
``before_days`` before it.
"""

from __future__ import annotations

import calendar
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta

from reverie.text.months import MONTHS, TR_MONTHS

_MON = "|".join(sorted(MONTHS, key=len, reverse=True))
_DAY = r"(\d{1,2})(?:st|nd|rd|th)?"
_YEAR = r"((?:19|20)\d\d)"
_ISO = re.compile(r"\b" + _YEAR + r"-(\d{2})-(\d{2})\b")
_DMY = re.compile(r"\b" + _DAY + r"\s+(" + _MON + r")\.?,?\s+" + _YEAR + r"\b", re.IGNORECASE)
_MDY = re.compile(r"\b(" + _MON + r")\.?\s+" + _DAY + r",?\s+" + _YEAR + r"\b", re.IGNORECASE)
_MY = re.compile(r"\b(" + _MON + r")\.?,?\s+(?:of\s+)?" + _YEAR + r"\b", re.IGNORECASE)
_Y = re.compile(
    r"(?:\b(?:in|during|of|from|since|until)\s+"
    + _YEAR
    + r"\b|\b"
    + _YEAR
    + r"(?:['’](?:de|da|te|ta|nde|nda)\b|\s+yılında\b))",
    re.IGNORECASE,
)
_TR_MON = "|".join(sorted(TR_MONTHS, key=len, reverse=True))  # Haziran'da: Turkish months take case suffixes
_M = re.compile(
    r"(?:\b(?:in|during|since|until|last)\s+(" + _MON + r")\b|\b(" + _TR_MON + r")['’]?(?:da|de|ta|te|nda|nde)\b)",
    re.IGNORECASE,
)
_DAYWORD = re.compile(r"\b(yesterday|today|dün|bugün)\b", re.IGNORECASE)
_PERIOD = re.compile(r"\b(last|this|past|previous|geçen|bu)\s+(week|month|year|hafta|ay|yıl)\b", re.IGNORECASE)
_AGO = re.compile(
    r"\b(\d+|a|an|one|two|three|four|five|six)\s+(day|week|month|year|gün|hafta|ay|yıl)s?\s+"
    r"(ago|önce)\b",
    re.IGNORECASE,
)
_COUNT = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6}
_UNIT = {
    "day": "day",
    "gün": "day",
    "week": "week",
    "hafta": "week",
    "month": "month",
    "ay": "month",
    "year": "year",
    "yıl": "year",
}


@dataclass(frozen=True, slots=True)
class Window:
    """A period the query names: ``[start, end)``, and the words that named it."""

    start: datetime
    end: datetime
    text: str


def _at(d: date) -> datetime:
    return datetime.combine(d, time(), tzinfo=UTC)


def _month(year: int, month: int) -> tuple[datetime, datetime]:
    last = calendar.monthrange(year, month)[1]
    return _at(date(year, month, 1)), _at(date(year, month, last)) + timedelta(days=1)


def _day(year: int, month: int, day: int) -> tuple[datetime, datetime] | None:
    try:
        start = _at(date(year, month, day))
    except ValueError:
        return None
    return start, start + timedelta(days=1)


def _shift_months(d: date, months: int) -> date:
    total = d.year * 12 + d.month - 1 + months
    return date(total // 12, total % 12 + 1, 1)


def _relative(unit: str, which: str, today: date) -> tuple[datetime, datetime]:
    """'last'/'this' week, month or year as calendar periods (weeks start on Monday)."""
    last = which.casefold() in ("last", "past", "previous", "geçen")
    if unit == "week":
        start = today - timedelta(days=today.weekday()) - timedelta(days=7 if last else 0)
        return _at(start), _at(start + timedelta(days=7))
    if unit == "month":
        first = _shift_months(today, -1 if last else 0)
        return _month(first.year, first.month)
    year = today.year - (1 if last else 0)
    return _at(date(year, 1, 1)), _at(date(year + 1, 1, 1))


def _ago(count: int, unit: str, today: date) -> tuple[datetime, datetime]:
    """'N units ago': the day, week, month or year that lies N units before today."""
    if unit == "day":
        d = today - timedelta(days=count)
        return _at(d), _at(d + timedelta(days=1))
    if unit == "week":
        d = today - timedelta(days=7 * count)
        start = d - timedelta(days=d.weekday())
        return _at(start), _at(start + timedelta(days=7))
    if unit == "month":
        first = _shift_months(today, -count)
        return _month(first.year, first.month)
    return _at(date(today.year - count, 1, 1)), _at(date(today.year - count + 1, 1, 1))


def query_windows(text: str, now: datetime) -> list[Window]:
    """The periods ``text`` names (most specific first: days, then months, then years), or []."""
    today = now.astimezone(UTC).date() if now.tzinfo else now.date()
    out: list[Window] = []
    taken: list[tuple[int, int]] = []

    def add(span: tuple[int, int], period: tuple[datetime, datetime] | None, words: str) -> None:
        if period is None or any(s < span[1] and span[0] < e for s, e in taken):
            return
        taken.append(span)
        out.append(Window(period[0], period[1], words))

    for m in _ISO.finditer(text):
        add(m.span(), _day(int(m.group(1)), int(m.group(2)), int(m.group(3))), m.group(0))
    for m in _DMY.finditer(text):
        add(m.span(), _day(int(m.group(3)), MONTHS[m.group(2).casefold()], int(m.group(1))), m.group(0))
    for m in _MDY.finditer(text):
        add(m.span(), _day(int(m.group(3)), MONTHS[m.group(1).casefold()], int(m.group(2))), m.group(0))
    for m in _MY.finditer(text):
        add(m.span(), _month(int(m.group(2)), MONTHS[m.group(1).casefold()]), m.group(0))
    for m in _Y.finditer(text):
        year = int(m.group(1) or m.group(2))
        add(m.span(), (_at(date(year, 1, 1)), _at(date(year + 1, 1, 1))), m.group(0))
    for m in _M.finditer(text):
        month = MONTHS[(m.group(1) or m.group(2)).casefold()]
        if m.group(1) is not None and m.group(1).casefold() == "may" and not m.group(0).casefold().startswith("in"):
            continue  # "since may", "until may": the modal verb, not the month
        year = today.year if month <= today.month else today.year - 1
        add(m.span(), _month(year, month), m.group(0))
    for m in _DAYWORD.finditer(text):
        back = 1 if m.group(1).casefold() in ("yesterday", "dün") else 0
        d = today - timedelta(days=back)
        add(m.span(), (_at(d), _at(d + timedelta(days=1))), m.group(0))
    for m in _PERIOD.finditer(text):
        add(m.span(), _relative(_UNIT[m.group(2).casefold()], m.group(1), today), m.group(0))
    for m in _AGO.finditer(text):
        raw = m.group(1).casefold()
        count = int(raw) if raw.isdigit() else _COUNT[raw]
        add(m.span(), _ago(count, _UNIT[m.group(2).casefold()], today), m.group(0))
    return out


def time_fit(when: datetime, windows: Sequence[Window], *, after_days: float, before_days: float) -> float:
    """How well an event time fits the named periods: 1 inside one, falling linearly to 0 over
    ``after_days`` after it and ``before_days`` before it; the best over the periods."""
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    best = 0.0
    for w in windows:
        if w.start <= when < w.end:
            return 1.0
        if when >= w.end:
            gap, span = (when - w.end).total_seconds() / 86400.0, after_days
        else:
            gap, span = (w.start - when).total_seconds() / 86400.0, before_days
        if span > 0:
            best = max(best, 1.0 - gap / span)
    return best


__all__ = ["Window", "query_windows", "time_fit"]
