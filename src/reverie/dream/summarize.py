"""Summaries of groups of memories: LLM-primary, with a deterministic extractive fallback.

Used by the dream cycle wherever several memories become one (seed 003 consolidation, seed 001
themes, deep abstraction and category summaries, seed 002 cards). Public API::

    summarize(texts, llm=client_or_None, purpose="consolidation", max_chars=600) -> Summary

* LLM path (seed 001 "LLM-primary"): one ``llm.chat_json`` call with the purpose's instruction
  (seed 003's consolidation prompt for ``"consolidation"``), answered as ``{"summary": str}``.
  An answer that is missing, empty, or states a number found in none of the inputs (an invented
  date or count) is rejected, and the extractive path is used instead.
* Extractive path (seed 003's fallback, improved): every input is kept verbatim — names, dates and
  numbers included — but what the inputs share is said once. A leading subject shared by all
  ("User", "User went") is factored out, a shared month/year becomes a header ("In March 2024, …")
  with each item's own day in brackets, items are put in date order and exact repeats merged::

      In March 2024, User went hiking at Mount Rainier (Mar 12), went kayaking at Lake Washington
      (Mar 15), ran a 5K in Fremont (Mar 20), went rock climbing at Stone Gardens (Mar 25), and
      joined a cycling club (Mar 28).

  instead of seed 003's ``"Summary: a | b | c"``. Over ``max_chars`` it drops filler words, then
  lists as many items as fit and says how many more there are ("… and 2 more").
"""

from __future__ import annotations

import calendar
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from reverie.errors import InvalidInputError

if TYPE_CHECKING:
    from reverie.llm.client import ChatJSON

Method = Literal["llm", "extractive"]

#: the built-in instructions per purpose (callers may pass their own with ``instruction=``)
INSTRUCTIONS: dict[str, str] = {
    # seed 003's consolidation prompt, verbatim apart from the JSON answer format
    "consolidation": (
        "Compress these related memories into a single concise summary that preserves all key facts. "
        "Write one clear paragraph. Preserve specific names, dates, numbers, and preferences."
    ),
    # seed 001 LLM consolidation: "extract themes, create theme-level memories"
    "theme": (
        "These memories belong together. Write one theme-level memory that states their common theme "
        "and keeps every specific fact (names, dates, numbers, preferences). Write one clear paragraph."
    ),
    # seed 001 deep abstraction: "extract behavioral patterns"
    "pattern": (
        "These memories describe one person's behaviour. State the recurring behavioural pattern they "
        "show (habits, preferences, tendencies) in one or two sentences, citing the evidence briefly. "
        "Do not invent facts that the memories do not support."
    ),
    # seed 001 category summary system
    "category": (
        "Summarise all of these memories of one category in one concise paragraph. Preserve specific "
        "names, dates, numbers, and preferences."
    ),
}

_ANSWER_FORMAT = ' Answer JSON: {"summary": str} with at most %d characters.'


@dataclass(frozen=True, slots=True)
class Summary:
    """A summary text and how it was made (``reason`` says why the LLM was or was not used)."""

    text: str
    method: Method
    reason: str = ""


def summarize(
    texts: Sequence[str],
    *,
    llm: ChatJSON | None,
    purpose: str,
    max_chars: int = 600,
    instruction: str | None = None,
    op: str | None = None,
) -> Summary:
    """One summary of ``texts``: the LLM's when it answers acceptably, else the extractive one.

    ``purpose`` selects the LLM instruction (``consolidation``, ``theme``, ``pattern``,
    ``category``); any other purpose needs ``instruction=``. ``op`` names the call in the ops log
    (default: the purpose).
    """
    items = _clean_texts(texts)
    if max_chars < 40:
        raise InvalidInputError("max_chars must be at least 40")
    prompt = instruction if instruction is not None else INSTRUCTIONS.get(purpose)
    if prompt is None:
        raise InvalidInputError(
            f"unknown summary purpose {purpose!r}: pass instruction= or use one of {sorted(INSTRUCTIONS)}"
        )
    if llm is None:
        return Summary(extractive_summary(items, max_chars=max_chars), "extractive", "no LLM configured")
    user = "Memories:\n" + "\n".join(f"{i}. {t}" for i, t in enumerate(items, 1))
    answer = llm.chat_json(system=prompt + _ANSWER_FORMAT % max_chars, user=user, op=op or purpose)
    text, why = _accept(answer, items, max_chars)
    if text is None:
        return Summary(extractive_summary(items, max_chars=max_chars), "extractive", f"LLM fallback: {why}")
    return Summary(text, "llm", "LLM summary")


def _clean_texts(texts: Sequence[str]) -> list[str]:
    if isinstance(texts, str) or not isinstance(texts, Sequence):
        raise InvalidInputError("texts must be a sequence of strings")
    out: list[str] = []
    for t in texts:
        if not isinstance(t, str):
            raise InvalidInputError(f"texts must be strings, got {type(t).__name__}")
        clean = _WS.sub(" ", t).strip()
        if clean:
            out.append(clean)
    if not out:
        raise InvalidInputError("nothing to summarise: texts are empty")
    return out


_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")


def _numbers(text: str) -> set[str]:
    return {m.group(0).replace(",", "") for m in _NUMBER.finditer(text)}


def _accept(answer: object, items: Sequence[str], max_chars: int) -> tuple[str | None, str]:
    """The LLM's summary if it validates, else ``None`` and why not."""
    if answer is None:
        return None, "no answer (unavailable, failed or invalid JSON)"
    if not isinstance(answer, dict):
        return None, "the answer is not a JSON object"
    value = answer.get("summary", answer.get("text"))
    if not isinstance(value, str) or not value.strip():
        return None, "the answer has no 'summary' text"
    text = _WS.sub(" ", value).strip()
    invented = sorted(_numbers(text) - set().union(*(_numbers(t) for t in items)))
    if invented:
        return None, f"the answer states numbers found in no memory: {invented[:5]}"
    return _fit(text, max_chars), "ok"


def _fit(text: str, max_chars: int) -> str:
    """``text`` cut to ``max_chars`` at a sentence or word boundary (with an ellipsis)."""
    if len(text) <= max_chars:
        return text
    head = text[: max_chars - 1]
    stop = max(head.rfind(". "), head.rfind("; "))
    if stop >= max_chars // 2:
        return head[: stop + 1]
    space = head.rfind(" ")
    return (head[:space] if space > 0 else head).rstrip(" ,;:") + "…"


# --- extractive ---------------------------------------------------------------------------------

_WS = re.compile(r"\s+")
_MONTHS = {name: i for i, name in enumerate(calendar.month_name) if name}
_MONTHS.update({name: i for i, name in enumerate(calendar.month_abbr) if name})
_MONTHS["Sept"] = 9
_MONTH_RE = "|".join(sorted(_MONTHS, key=len, reverse=True))  # capitalised only: "may" is a verb
_PRE = r"(?P<pre>\b(?:on|in|during)\s+)?"
_DATE = re.compile(
    _PRE + r"(?:"
    rf"(?P<m1>{_MONTH_RE})\.?\s+(?P<d1>\d{{1,2}})(?:st|nd|rd|th)?\b(?:,?\s+(?P<y1>\d{{4}})\b)?"
    rf"|(?P<d2>\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?(?P<m2>{_MONTH_RE})\.?(?:,?\s+(?P<y2>\d{{4}})\b)?"
    rf"|(?P<m3>{_MONTH_RE})\.?\s+(?P<y3>\d{{4}})\b"
    r"|(?P<y4>\d{4})-(?P<m4>\d{2})-(?P<d4>\d{2})\b"
    r")"
)
_ARTICLES = frozenset({"a", "an", "the", "this", "that", "these", "those"})
_STOP = _ARTICLES | frozenset({"and", "or", "but", "of", "to", "in", "on", "at", "for", "with", "is", "was",
                               "are", "were", "it", "its", "-"})
_FILLER = frozenset({"very", "really", "just", "actually", "basically", "quite", "also", "definitely",
                     "literally", "pretty", "somewhat"})


@dataclass(frozen=True, slots=True)
class _Date:
    year: int | None
    month: int
    day: int | None


@dataclass(slots=True)
class _Item:
    text: str  # the text without its date when the date was factored out
    date: _Date | None
    labels: list[str]


def _find_date(text: str) -> tuple[_Date, re.Match[str]] | None:
    """The single date of ``text`` (``None`` when it has none or several)."""
    found: list[tuple[_Date, re.Match[str]]] = []
    for m in _DATE.finditer(text):
        g = m.groupdict()
        if g["m4"] is not None:
            date = _Date(int(g["y4"]), int(g["m4"]), int(g["d4"]))
        else:
            raw_day, raw_year = g["d1"] or g["d2"], g["y1"] or g["y2"] or g["y3"]
            date = _Date(int(raw_year) if raw_year else None, _MONTHS[g["m1"] or g["m2"] or g["m3"]],
                         int(raw_day) if raw_day else None)
        if 1 <= date.month <= 12 and (date.day is None or 1 <= date.day <= 31):
            found.append((date, m))
    return found[0] if len(found) == 1 else None


def _strip_date(text: str, m: re.Match[str]) -> str:
    out = (text[: m.start()] + " " + text[m.end():]).strip()
    out = re.sub(r"\s+([,.;:!?)])", r"\1", _WS.sub(" ", out))
    return out.strip(" ,;:")


def _label(d: _Date, *, with_year: bool) -> str:
    month = calendar.month_abbr[d.month]
    if d.day is None:
        return f"{month} {d.year}" if with_year and d.year else month
    return f"{month} {d.day}, {d.year}" if with_year and d.year else f"{month} {d.day}"


def _factor_dates(texts: list[str]) -> tuple[str, list[_Item]]:
    """Factor a shared month/year (or whole date) into a header; items keep their own day."""
    plain = [_Item(t, None, []) for t in texts]
    if len(texts) < 2:
        return "", plain
    dated: list[tuple[_Date, re.Match[str]]] = []
    for t in texts:
        found = _find_date(t)
        if found is None:
            return "", plain  # an undated item would fall under a header that is not its own
        dated.append(found)
    dates = [d for d, _ in dated]
    years = {d.year for d in dates}
    months = {(d.year, d.month) for d in dates}
    first = dates[0]
    if len(set(dates)) == 1 and first.day is not None:
        header = f"On {calendar.month_name[first.month]} {first.day}" + (f", {first.year}" if first.year else "")
        labels: list[list[str]] = [[] for _ in dates]
    elif len(months) == 1:
        header = f"In {calendar.month_name[first.month]}" + (f" {first.year}" if first.year else "")
        labels = [[_label(d, with_year=False)] if d.day else [] for d in dates]
    elif len(years) == 1 and first.year is not None:
        header = f"In {first.year}"
        labels = [[_label(d, with_year=False)] for d in dates]
    else:
        return "", plain
    items = [_Item(_strip_date(t, m), d, lab) for t, (d, m), lab in zip(texts, dated, labels, strict=True)]
    return header, items


def _sort_key(item: _Item) -> tuple[int, int, int]:
    d = item.date
    if d is None:
        return (0, 0, 0)
    return (d.year or 0, d.month, d.day or 0)


def _merge_repeats(items: list[_Item]) -> list[_Item]:
    """Items whose text is the same (case/punctuation aside) become one, with all their labels."""
    merged: dict[str, _Item] = {}
    for it in items:
        key = re.sub(r"[^\w]+", " ", it.text.casefold()).strip()
        if key in merged:
            for label in it.labels:
                if label not in merged[key].labels:
                    merged[key].labels.append(label)
        else:
            merged[key] = _Item(it.text, it.date, list(it.labels))
    return list(merged.values())


def _shared_prefix(texts: list[str]) -> int:
    """How many leading words every text shares (0 when not a meaningful subject)."""
    if len(texts) < 2:
        return 0
    words = [t.split() for t in texts]
    n = 0
    for column in zip(*words, strict=False):
        if len(set(column)) != 1:
            break
        n += 1
    n = min(n, min(len(w) for w in words) - 1)  # every item keeps at least one word of its own
    while n > 0 and words[0][n - 1].casefold() in _ARTICLES:
        n -= 1  # "User went to the gym" / "… the park": factor "User went to", keep "the …"
    if n == 0 or all(w.casefold().strip(",.;:") in _STOP for w in words[0][:n]):
        return 0
    if words[0][n - 1].endswith((",", ";", ":")):
        return 0  # the shared part ends a clause; factoring it would glue clauses together
    return n


def _has_comma(text: str) -> bool:
    """A comma or semicolon of the text itself (not one inside a date or a bracketed label)."""
    bare = re.sub(r"\([^)]*\)", "", _DATE.sub("", text))
    return "," in bare or ";" in bare


def _join(parts: list[str]) -> str:
    if len(parts) == 1:
        return parts[0]
    sep = "; " if any(_has_comma(p) for p in parts) else ", "
    if len(parts) == 2 and sep == ", ":
        return f"{parts[0]} and {parts[1]}"
    return sep.join(parts[:-1]) + f"{sep}and {parts[-1]}"


def _compose(header: str, prefix: str, parts: list[str], more: int) -> str:
    """``header, prefix part1, part2, and part3.`` (clauses joined by ";" when nothing is factored)."""
    listed = [*parts, f"{more} more"] if more else list(parts)
    if prefix:
        body = f"{prefix} {_join(listed)}"
    elif len(listed) == 1:
        body = listed[0]
    else:  # independent sentences: keep them apart
        body = "; ".join(listed[:-1]) + ("; and " if more else "; ") + listed[-1]
    text = f"{header}, {body}" if header else body
    return text.rstrip(" .;,") + "."


def _without_filler(text: str) -> str:
    return " ".join(w for w in text.split() if w.casefold() not in _FILLER)


def _parts(texts: list[str]) -> tuple[str, str, list[str]]:
    """(header, shared prefix, item parts) of the extractive summary."""
    header, items = _factor_dates(texts)
    items = _merge_repeats(items)
    if header:
        items.sort(key=_sort_key)  # stable: undated ties keep their input order
    bodies = [it.text for it in items]
    n = _shared_prefix(bodies)
    prefix = " ".join(bodies[0].split()[:n]) if n else ""
    rest = [" ".join(b.split()[n:]) for b in bodies] if n else bodies
    return header, prefix, [r + (f" ({', '.join(it.labels)})" if it.labels else "")
                            for r, it in zip(rest, items, strict=True)]


def extractive_summary(texts: Sequence[str], *, max_chars: int = 600) -> str:
    """The deterministic summary of ``texts`` (see the module docs); at most ``max_chars`` long."""
    cleaned = [t.rstrip(" .;!") for t in _clean_texts(texts)]
    header, prefix, parts = _parts(cleaned)
    text = _compose(header, prefix, parts, 0)
    if len(text) <= max_chars:
        return text
    header, prefix, parts = _parts([_without_filler(t) for t in cleaned])
    text = _compose(header, prefix, parts, 0)
    if len(text) <= max_chars:
        return text
    for keep in range(len(parts) - 1, 0, -1):
        text = _compose(header, prefix, parts[:keep], len(parts) - keep)
        if len(text) <= max_chars:
            return text
    return _fit(_compose(header, prefix, parts[:1], len(parts) - 1), max_chars)


__all__ = ["INSTRUCTIONS", "Summary", "extractive_summary", "summarize"]
