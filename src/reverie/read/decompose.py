"""Multi-query decomposition: a compound query becomes 2–4 independent sub-queries.

Compound = several question marks, "and also"/"as well as"/"ayrıca"/"bir de", or " and "/" ve "
followed by a question word ("… and where does she work?"), joining two clauses that each carry
their own content words. A plain "and" between noun phrases ("Mel and her kids", "black and white")
does not split: splitting it would send half a question to the search. Each part is a sub-query; the
pipeline runs them separately and fuses their result lists by RRF, deduplicated by memory id.
"""

from __future__ import annotations

import re

from reverie import lexicon

_QUESTIONS = re.compile(r"(?<=\?)\s+")
_ALSO = re.compile(r"\s*(?:,?\s*\b(?:" + "|".join(lexicon.terms("read_also")) + r")\b|;)\s*", re.IGNORECASE)
# a conjunction joins two questions only when a question word follows it ("… and where does she work?");
# otherwise it joins noun phrases ("Mel and her kids", "black and white bowl") inside one question
_AND = re.compile(
    r"\s+(?:"
    + "|".join(lexicon.terms("read_conjunction"))
    + r")\s+(?=(?:"
    + "|".join(lexicon.terms("read_question_word"))
    + r")\b)",
    re.IGNORECASE,
)
_WORD = re.compile(r"\w+", re.UNICODE)
#: words left out of a query's content words (the languages' ``read_stopwords``)
STOPWORDS = lexicon.words("read_stopwords")


def content_words(text: str) -> list[str]:
    """Lower-cased words of ``text`` minus stop words (EN + TR)."""
    return [w for w in _WORD.findall(text.casefold()) if w not in STOPWORDS and len(w) > 1]


def _clean(parts: list[str]) -> list[str]:
    out: list[str] = []
    for p in parts:
        p = p.strip(" ,;")
        if len(content_words(p)) >= 1 and p not in out:
            out.append(p)
    return out


def _split_and(part: str) -> list[str]:
    pieces = _AND.split(part)
    if len(pieces) < 2 or any(not content_words(p) for p in pieces):
        return [part]  # "… and what?": one side without content cannot stand alone
    return pieces


def decompose(text: str, *, max_parts: int = 4) -> list[str]:
    """The sub-queries of ``text`` (``[text]`` when it is not compound). Never more than ``max_parts``."""
    parts = _clean(_QUESTIONS.split(text.strip()))
    parts = _clean([q for p in parts for q in _ALSO.split(p)])
    if len(parts) == 1:
        parts = _clean(_split_and(parts[0]))
    if len(parts) < 2:
        return [text]
    if len(parts) > max_parts:
        parts = [*parts[: max_parts - 1], " ".join(parts[max_parts - 1 :])]
    return parts


__all__ = ["STOPWORDS", "content_words", "decompose"]
