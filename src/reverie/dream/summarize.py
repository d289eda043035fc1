"""Summaries of groups of memories: LLM-primary, with a deterministic extractive fallback.

Used by the dream cycle wherever several memories become one (consolidation,
themes, deep abstraction and category summaries, entity cards). Public API::

    summarize(texts, llm=client_or_None, purpose="consolidation", max_chars=1000) -> Summary

* LLM path (LLM-primary): one ``llm.chat_json`` call with the purpose's instruction
  (the consolidation design's consolidation prompt for ``"consolidation"``), answered as ``{"summary": str}``.
  The answer is accepted only when it is grounded in the inputs (:func:`grounding_problem`): it
  states no number, date or name that no input states (an invented date, count or person), and it
  keeps every number, date and proper name the inputs state (names of speakers included — "Jon:
  I opened my studio on Jan 20" needs "Jon", "Jan 20"). Otherwise the extractive path is used, and
  ``Summary.method`` says so: steps whose memories must come from the LLM (themes, patterns,
  category summaries, entity cards) then write nothing.
* Extractive path (the consolidation design's fallback, improved): every input is kept verbatim — names, dates,
  numbers and who said it — but what the inputs share is said once. A leading subject shared by all
  ("User", "User went") is factored out, a shared month/year becomes a header ("In March 2024, …")
  with each item's own day in brackets, items are put in date order and exact repeats merged::

      In March 2024, User went hiking at Mount Rainier (Mar 12), went kayaking at Lake Washington
      (Mar 15), ran a 5K in Fremont (Mar 20), went rock climbing at Stone Gardens (Mar 25), and
      joined a cycling club (Mar 28).

  instead of the consolidation design's ``"Summary: a | b | c"``. The extractive text is never cut and never drops
  an input: a caller bounds its length by summarising fewer inputs (consolidation stops adding
  members to a group when the group's extractive summary would exceed the length budget).
"""

from __future__ import annotations

import calendar
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from reverie import lexicon
from reverie.errors import InvalidInputError

if TYPE_CHECKING:
    from reverie.llm.client import ChatJSON

Method = Literal["llm", "extractive"]

#: the built-in instructions per purpose (callers may pass their own with ``instruction=``)
INSTRUCTIONS: dict[str, str] = {
    # the consolidation design's consolidation prompt, verbatim apart from the JSON answer format
    "consolidation": (
        "Compress these related memories into a single concise summary that preserves all key facts. "
        "Write one clear paragraph. Preserve specific names, dates, numbers, and preferences."
    ),
    # LLM consolidation: "extract themes, create theme-level memories"
    "theme": (
        "These memories belong together. Write one theme-level memory that states their common theme "
        "and keeps every specific fact (names, dates, numbers, preferences). Write one clear paragraph."
    ),
    # Deep abstraction: "extract behavioral patterns"
    "pattern": (
        "These memories describe one person's behaviour. State the recurring behavioural pattern they "
        "show (habits, preferences, tendencies) in one or two sentences, citing the evidence briefly with "
        "every name, date and number it mentions. Do not invent facts that the memories do not support."
    ),
    # Category summary system
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
    max_chars: int = 1000,
    instruction: str | None = None,
    op: str | None = None,
) -> Summary:
    """One summary of ``texts``: the LLM's when it answers acceptably, else the extractive one.

    ``purpose`` selects the LLM instruction (``consolidation``, ``theme``, ``pattern``,
    ``category``); any other purpose needs ``instruction=``. ``op`` names the call in the ops log
    (default: the purpose). ``max_chars`` bounds the LLM's answer (a longer one is cut at a sentence,
    then checked like any other); the extractive text keeps every input whatever its length.
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
        return Summary(extractive_summary(items), "extractive", "no LLM configured")
    user = "Memories:\n" + "\n".join(f"{i}. {t}" for i, t in enumerate(items, 1))
    answer = llm.chat_json(system=prompt + _ANSWER_FORMAT % max_chars, user=user, op=op or purpose)
    text, why = _accept(answer, items, max_chars)
    if text is None:
        return Summary(extractive_summary(items), "extractive", f"LLM fallback: {why}")
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


def _accept(answer: object, items: Sequence[str], max_chars: int) -> tuple[str | None, str]:
    """The LLM's summary if it validates, else ``None`` and why not."""
    if answer is None:
        return None, "no answer (unavailable, failed or invalid JSON)"
    if not isinstance(answer, dict):
        return None, "the answer is not a JSON object"
    value = answer.get("summary", answer.get("text"))
    if not isinstance(value, str) or not value.strip():
        return None, "the answer has no 'summary' text"
    text = _fit(_WS.sub(" ", value).strip(), max_chars)
    problem = grounding_problem(text, items)
    if problem is not None:
        return None, problem
    return text, "ok"


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


# --- grounding: what a written text must keep of its sources, and must not add ------------------

_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
_WORD = re.compile(r"[^\W\d_][\w'’-]*")
#: what ends a sentence (or opens one) before a word: a capital there is no sign of a name
_OPENERS = frozenset(".!?:;…\"“”'‘’([{-–—*#>\n")
_PRONOUN_I = lexicon.words("dream_first_person")
#: a speaker label ("Jon: …", "Dr. Vega: …"): up to four words before a colon, each capitalised
_SPEAKER = re.compile(r"^(?P<who>[^\W\d_][\w.'’-]*(?: [^\W\d_][\w.'’-]*){0,3}):\s")


#: a further day of a month-day date ("March 1, 2 and 4"): a day number that ends a list item
_MORE_DAYS = re.compile(
    r"(?:\s*,\s*(?:and\s+)?|\s+and\s+|\s*&\s*)(\d{1,2})(?:st|nd|rd|th)?"
    r"(?=\s*(?:[,;.)&]|and\b|$))"
)
_TAIL_YEAR = re.compile(r",?\s+(\d{4})\b")


def _number(raw: str) -> str:
    """A number as a comparable token: thousands separators dropped, leading zeros dropped."""
    plain = raw.replace(",", "")
    whole, dot, frac = plain.partition(".")
    return (whole.lstrip("0") or "0") + (dot + frac if dot else "")


def _stem(word: str) -> str:
    """A name compared loosely: case, a possessive and a plural ending do not matter."""
    w = word.casefold().replace("’", "'")
    if w.endswith("'s"):
        w = w[:-2]
    w = w.rstrip("'-")
    return w[:-1] if len(w) > 3 and w.endswith("s") else w


@dataclass(frozen=True, slots=True)
class Facts:
    """The checkable facts of a text: numbers and dates (as tokens), and the proper names it states."""

    numbers: frozenset[str]
    names: frozenset[str]  # stems of capitalised words that are not sentence openers (and speakers)
    words: frozenset[str]  # stems of every word: what a name in another text may be found among


def facts(text: str, *, speaker: bool = True) -> Facts:
    """Numbers, dates and proper names of ``text``.

    A date is one fact however it is written ("March 12, 2024", "Mar 12", "2024-03-12" all give the
    month/day ``3/12``, the month ``month:3`` and the year ``2024``); other numbers are compared as
    numbers ("1,350" = "1350", "09" = "9"). A name is a capitalised word that does not open a sentence
    (nor "I"), or — with ``speaker`` — a speaker label ("Jon: …"); month names count as their month.
    """
    numbers: set[str] = set()
    spans: list[tuple[int, int]] = []
    for m in _DATE.finditer(text):
        g = m.groupdict()
        day: int | None
        if g["m4"] is not None:
            year, month, day = g["y4"], int(g["m4"]), int(g["d4"])
        else:
            raw_day = g["d1"] or g["d2"]
            year, month = g["y1"] or g["y2"] or g["y3"], _MONTHS[g["m1"] or g["m2"] or g["m3"]]
            day = int(raw_day) if raw_day else None
        if not 1 <= month <= 12 or (day is not None and not 1 <= day <= 31):
            continue
        end = m.end()
        days = [day] if day is not None else []
        if day is not None and g["m4"] is None and not year:  # "March 1, 2 and 4, 2025": more days of the month
            while (more := _MORE_DAYS.match(text, end)) is not None:
                days.append(int(more.group(1)))
                end = more.end()
            if len(days) > 1 and (tail := _TAIL_YEAR.match(text, end)) is not None:
                year, end = tail.group(1), tail.end()
        numbers.add(f"month:{month}")
        numbers.update(f"{month}/{d}" for d in days if 1 <= d <= 31)
        if year:
            numbers.add(_number(year))
        spans.append((m.start("pre") if m.group("pre") else m.start(), end))
    rest = text
    for start, end in reversed(spans):
        rest = rest[:start] + " " * (end - start) + rest[end:]
    numbers.update(_number(m.group(0)) for m in _NUMBER.finditer(rest))
    names: set[str] = set()
    words: set[str] = set()
    label = _SPEAKER.match(text) if speaker else None
    if label and all(w[0].isupper() for w in label.group("who").split()):
        names.update(_stem(w) for w in _WORD.findall(label.group("who")))
    for m in _WORD.finditer(text):
        word = m.group(0)
        named = _MONTHS.get(word.rstrip("."))
        stem = f"month:{named}" if named else _stem(word)
        words.add(stem)
        if not word[0].isupper() or word.casefold() in _PRONOUN_I:
            continue
        if _mid_sentence(text, m.start()):
            names.add(stem)
    return Facts(frozenset(numbers), frozenset(names), frozenset(words))


def _mid_sentence(text: str, at: int) -> bool:
    """Whether the word starting at ``at`` follows another word of its sentence."""
    i = at - 1
    while i >= 0 and text[i].isspace():
        i -= 1
    return i >= 0 and text[i] not in _OPENERS


def grounding_problem(text: str, sources: Sequence[str], *, keep_all: bool = True) -> str | None:
    """Why ``text`` is not a faithful account of ``sources`` (``None``: it is).

    It must state no number, date or name found in none of the sources (an invention), and — with
    ``keep_all`` — it must keep every number, date and name the sources state.
    """
    mine = facts(text, speaker=False)  # a label of its own ("Summary: …") names nobody
    theirs = [facts(s) for s in sources]
    numbers = frozenset().union(*(f.numbers for f in theirs))
    words = frozenset().union(*(f.words for f in theirs))
    invented = sorted(mine.numbers - numbers - words)  # a date's month may be a source's word ("in May")
    if invented:
        return f"the answer states numbers found in no memory: {invented[:5]}"
    made_up = sorted(mine.names - words - numbers)  # a month may be named where a source wrote 2024-09-02
    if made_up:
        return f"the answer states names found in no memory: {made_up[:5]}"
    if keep_all:
        lost = sorted(numbers - mine.numbers)
        if lost:
            return f"the answer leaves out numbers or dates of the memories: {lost[:5]}"
        lost = sorted(frozenset().union(*(f.names for f in theirs)) - mine.words - mine.numbers)
        if lost:
            return f"the answer leaves out names of the memories: {lost[:5]}"
    return None


# --- extractive ---------------------------------------------------------------------------------

_WS = re.compile(r"\s+")
_MONTHS = {name: i for i, name in enumerate(calendar.month_name) if name}
_MONTHS.update({name: i for i, name in enumerate(calendar.month_abbr) if name})
_MONTHS["Sept"] = 9
_MONTH_RE = "|".join(sorted(_MONTHS, key=len, reverse=True))  # capitalised only: "may" is a verb
_PRE = r"(?P<pre>\b(?:" + "|".join(lexicon.terms("dream_date_preposition")) + r")\s+)?"
_DATE = re.compile(
    _PRE + r"(?:"
    rf"(?P<m1>{_MONTH_RE})\.?\s+(?P<d1>\d{{1,2}})(?:st|nd|rd|th)?\b(?:,?\s+(?P<y1>\d{{4}})\b)?"
    rf"|(?P<d2>\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?(?P<m2>{_MONTH_RE})\.?(?:,?\s+(?P<y2>\d{{4}})\b)?"
    rf"|(?P<m3>{_MONTH_RE})\.?\s+(?P<y3>\d{{4}})\b"
    r"|(?P<y4>\d{4})-(?P<m4>\d{2})-(?P<d4>\d{2})\b"
    r")"
)
_ARTICLES = lexicon.words("dream_determiners")
_STOP = _ARTICLES | lexicon.words("dream_glue_words")


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
            date = _Date(
                int(raw_year) if raw_year else None,
                _MONTHS[g["m1"] or g["m2"] or g["m3"]],
                int(raw_day) if raw_day else None,
            )
        if 1 <= date.month <= 12 and (date.day is None or 1 <= date.day <= 31):
            found.append((date, m))
    return found[0] if len(found) == 1 else None


def _strip_date(text: str, m: re.Match[str]) -> str:
    out = (text[: m.start()] + " " + text[m.end() :]).strip()
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


def _compose(header: str, prefix: str, parts: list[str]) -> str:
    """``header, prefix part1, part2, and part3.`` (clauses joined by ";" when nothing is factored)."""
    # nothing factored: independent sentences, kept apart
    body = f"{prefix} {_join(parts)}" if prefix else "; ".join(parts)
    text = (f"{header}, {body}" if header else body).rstrip(" .;,")
    return text if text.endswith(("?", "!", "…")) else text + "."


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
    return (
        header,
        prefix,
        [r + (f" ({', '.join(it.labels)})" if it.labels else "") for r, it in zip(rest, items, strict=True)],
    )


def extractive_summary(texts: Sequence[str]) -> str:
    """The deterministic summary of ``texts`` (see the module docs): every input, nothing cut."""
    cleaned = [t.rstrip(" .;") for t in _clean_texts(texts)]
    return _compose(*_parts(cleaned))


__all__ = ["INSTRUCTIONS", "Facts", "Summary", "extractive_summary", "facts", "grounding_problem", "summarize"]
