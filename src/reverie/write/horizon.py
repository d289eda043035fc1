"""How far ahead a plan looks: the periods a plan names by season, month or year.

A plan is time-bounded (foresight): it holds until its time has passed. A plan that names a day gets the
day after it (the temporal normalisation turns "tomorrow", "next Friday" or "next month" into a date); a
plan that names no time gets a week. This module reads the coarser periods people plan in — "this summer",
"next winter", "in March", "by the end of the year"; "bu yaz", "gelecek kış", "Mart'ta", "seneye", "yıl
sonuna" — and gives the last day of the period, so that "We're going to Italy this summer" told in April
is not dropped as an expired plan in May. Seasons are the meteorological ones of the northern hemisphere
(spring March–May, summer June–August, autumn September–November, winter December–February). Pure: the
day is an argument.
"""

from __future__ import annotations

import calendar
import re
from datetime import date

from reverie.text.months import MONTHS, TR_MONTHS

_SEASONS: dict[str, int] = {  # the season's first month
    "spring": 3, "summer": 6, "autumn": 9, "fall": 9, "winter": 12,
    "ilkbahar": 3, "bahar": 3, "yaz": 6, "sonbahar": 9, "kış": 12,
}  # fmt: skip
_NEXT = r"(?:next|the coming|coming|gelecek|önümüzdeki|seneye|haftaya)"
_THIS = r"(?:this|bu)"
#: Turkish case and possessive endings after a period word ("yazın", "yaza", "Mart'ta", "kışa kadar")
_TR_END = r"(?:['’]?(?:ın|in|un|ün|a|e|da|de|ta|te|dan|den|tan|ten|ı|i|u|ü|ki|ya|ye|na|ne|nda|nde|ndan|nden))?"
_SEASON = re.compile(
    rf"\b(?:({_NEXT}|{_THIS})\s+)?({'|'.join(sorted(_SEASONS, key=len, reverse=True))}){_TR_END}\b", re.IGNORECASE
)
# a month is a plan's time after a preposition, with a Turkish ending, or after next/this ("May" alone is a verb)
_MONTH = re.compile(
    rf"(?:\b(?:in|by|before|until|till|through|during|end of|({_NEXT}|{_THIS}))\s+"
    rf"({'|'.join(sorted(MONTHS, key=len, reverse=True))})\b"
    rf"|\b({'|'.join(TR_MONTHS)})(?:['’](?:da|de|ta|te|a|e|ya|ye|na|ne|dan|den|tan|ten)|\s+ay[ıi]nda)\b)",
    re.IGNORECASE,
)
# the end of the year ("next year" / "this year" are dates already: the temporal normalisation reads them)
_YEAR_END = re.compile(r"\b(?:end of (?:the |this )?year|(seneye)|(?:yıl|sene) sonun[ae])\b", re.IGNORECASE)


def _month_end(year: int, month: int) -> date:
    while month > 12:
        year, month = year + 1, month - 12
    return date(year, month, calendar.monthrange(year, month)[1])


def _season_end(first_month: int, start_year: int) -> date:
    return _month_end(start_year, first_month + 2)


def _next_period(first_month: int, months: int, today: date, *, upcoming: bool) -> date:
    """The last day of the period of ``months`` months from ``first_month``: the one under way or to come
    (``upcoming``: the first one that has not started yet)."""
    for year in (today.year - 1, today.year, today.year + 1, today.year + 2):
        start = date(year, first_month, 1)
        end = _month_end(year, first_month + months - 1)
        if (upcoming and start > today) or (not upcoming and end >= today):
            return end
    return _month_end(today.year + 2, first_month + months - 1)


def plan_horizon(text: str, today: date) -> date | None:
    """The last day of the latest season, month or year ``text`` plans for, or None when it names none."""
    ends: list[date] = []
    for m in _SEASON.finditer(text):
        which, name = (m.group(1) or "").casefold(), m.group(2).casefold()
        ends.append(_next_period(_SEASONS[name], 3, today, upcoming=bool(which) and not re.match(_THIS, which)))
    for m in _MONTH.finditer(text):
        which = (m.group(1) or "").casefold()
        name = (m.group(2) or m.group(3)).casefold()
        ends.append(_next_period(MONTHS[name], 1, today, upcoming=bool(which) and not re.match(_THIS, which)))
    for m in _YEAR_END.finditer(text):
        ends.append(date(today.year + (1 if m.group(1) else 0), 12, 31))
    return max(ends) if ends else None


__all__ = ["plan_horizon"]
