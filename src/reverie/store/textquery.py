"""Turning free text into full-text query terms, the same way on every backend.

Only word characters reach the query language (user text never becomes query syntax), and
function words are dropped: an OR query over "what", "is", "the" … matches nearly every row
and makes BM25 ranking slow and noisy on large stores. If a query has nothing but function
words, its words are kept (so "The Who" still finds something).
"""

from __future__ import annotations

import re

TERM = re.compile(r"[^\W_]+", re.UNICODE)
MAX_TERM_CHARS = 100
MAX_QUERY_TERMS = 64

# English and Turkish function words (the engine supports EN + TR)
_STOPWORD_TEXT = """
a about above after again against all am an and any are as at be because been before being below
between both but by can could did do does doing down during each few for from further had has have
having he her here hers herself him himself his how i if in into is it its itself just me more most
my myself no nor not now of off on once only or other our ours ourselves out over own same she should
so some such than that the their theirs them themselves then there these they this those through to
too under until up very was we were what when where which while who whom why will with would you your
yours yourself yourselves s t don didn doesn isn wasn aren weren won ll re ve d m o y also ever
bir bu şu da de ki mi mı mu mü ne için ile gibi daha çok en ama fakat veya ya hem ise
ben sen biz siz onlar bana sana ona bize size onlara beni seni onu bizi sizi onları benim senin onun
bizim sizin onların var yok değil nasıl neden niye nerede zaman hangi kim kimin
"""
STOPWORDS = frozenset(_STOPWORD_TEXT.split())


def query_terms(text: str) -> list[str]:
    """Distinct, case-folded content words of ``text`` (at most 64), in order of appearance."""
    words = list(dict.fromkeys(t.casefold() for t in TERM.findall(text) if len(t) <= MAX_TERM_CHARS))
    content = [w for w in words if w not in STOPWORDS]
    return (content or words)[:MAX_QUERY_TERMS]


__all__ = ["MAX_QUERY_TERMS", "MAX_TERM_CHARS", "STOPWORDS", "TERM", "query_terms"]
