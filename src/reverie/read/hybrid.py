"""Hybrid search: vector (over-fetched 3x) + full text, fused by weighted RRF (K = 60).

Full text degrades gracefully: a store error in ``text_search`` leaves the vector channel alone
and is reported in the explanation. Several sub-queries are fused again by RRF over their fused
lists (decomposition), deduplicated by memory id; each memory keeps, per channel, the
best rank any sub-query gave it.

The composite re-rank combines the cosine with a *lexical* score (read.scoring "similarity"): rank
fusion alone throws away how much better the best match is than the rest. The lexical score is on an
absolute scale (:func:`lexical_scores`): the share of the query's words a memory holds, each word
weighted by how rare it is among the candidates — not BM25 over the query's best BM25, which turns the
best of a set of weak matches (a name every memory has) into a perfect 1.0.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from reverie.errors import StoreError
from reverie.model import Vector
from reverie.read.fusion import rrf
from reverie.store.base import MemoryFilter, ScoredId, Store
from reverie.store.textquery import MAX_QUERY_TERMS, MAX_TERM_CHARS, STOPWORDS
from reverie.text.updates import stem
from reverie.text.updates.tokens import TEXT_CACHE

#: a word with what follows an apostrophe inside it: a Turkish case suffix ("Ebru'nun", "Gaziantep'te") or an
#: English clitic ("Maya's", "don't"); the lexical score compares the word before it
_WORD = re.compile(r"([^\W_]+)(?:['’][^\W_]+)*", re.UNICODE)


@dataclass(slots=True)
class PoolEntry:
    """A memory admitted to the re-rank pool, with how it got there."""

    id: str
    rrf: float
    stage: str = "hybrid"
    channels: dict[str, dict[str, Any]] = field(default_factory=dict)
    graph: dict[str, Any] | None = None


@dataclass(slots=True)
class ChannelResult:
    """One sub-query's raw channel hits and their fusion."""

    vector: list[ScoredId]
    text: list[ScoredId]
    text_error: str | None = None


def text_channel(store: Store, flt: MemoryFilter, *, text: str, pool: int) -> tuple[list[ScoredId], str | None]:
    """One full-text search, or no hits and the error when the store cannot do it (graceful fallback)."""
    try:
        return store.text_search(text, flt, pool), None
    except StoreError as exc:
        return [], str(exc)[:200]


def run_channels(
    store: Store,
    flt: MemoryFilter,
    *,
    text: str,
    vector: Vector,
    pool: int,
    sparse: tuple[list[ScoredId], str | None] | None = None,
) -> ChannelResult:
    """One vector search and one full-text search (``sparse``: its result, when already run)."""
    dense = store.vector_search(vector, flt, pool)
    hits, error = sparse if sparse is not None else text_channel(store, flt, text=text, pool=pool)
    return ChannelResult(dense, hits, text_error=error)


def fuse_channels(
    results: Sequence[ChannelResult], *, weights: Mapping[str, float], k: int, limit: int | None = None
) -> list[PoolEntry]:
    """Weighted RRF per sub-query, then (for several sub-queries) RRF across the sub-query lists; the first
    ``limit`` (None: all)."""
    per_query: list[list[PoolEntry]] = []
    for qi, res in enumerate(results):
        fused = rrf({"vector": [h.id for h in res.vector], "text": [h.id for h in res.text]}, k=k, weights=weights)
        if len(results) == 1:  # one list: the entries past the limit would only be cut off
            fused = fused[:limit]
        sims = {h.id: h.score for h in res.vector}
        bm25 = {h.id: h.score for h in res.text}
        cands: list[PoolEntry] = []
        for f in fused:
            ch: dict[str, dict[str, Any]] = {}
            if "vector" in f.ranks:
                ch["vector"] = {"rank": f.ranks["vector"], "similarity": round(sims[f.id], 6), "subquery": qi}
            if "text" in f.ranks:
                ch["text"] = {"rank": f.ranks["text"], "bm25": round(bm25[f.id], 6), "subquery": qi}
            cands.append(PoolEntry(f.id, f.score, channels=ch))
        per_query.append(cands)
    if len(per_query) == 1:
        return per_query[0]
    return _fuse_subqueries(per_query, k=k)[:limit]


def merged_search(
    store: Store,
    scopes: Sequence[MemoryFilter],
    *,
    subqueries: Sequence[str],
    vectors: Vector,
    weights: Mapping[str, float],
    pool: int,
    k: int,
    sparse: Sequence[Sequence[tuple[list[ScoredId], str | None]] | None],
) -> tuple[list[PoolEntry], list[str], list[set[str]]]:
    """Both channels over ``scopes`` for every sub-query (``vectors[i]``, a row, its search vector), fused, the
    first ``pool``. Several disjoint scopes (the hot and the cold store) are searched as one: each channel keeps
    the best ``pool`` hits of all the scopes by their raw score (BM25 and the cosine are on one scale whichever
    store a memory is in), and only those are fused. ``sparse[j]``: the full-text results of scope j per
    sub-query when already run (None: run here). Returns the entries, the full-text errors and, with several
    scopes, the ids each scope's searches found."""
    results: list[ChannelResult] = []
    found: list[set[str]] = [set() for _ in scopes]
    for i, sub in enumerate(subqueries):
        per_scope = [
            run_channels(store, flt, text=sub, vector=vectors[i], pool=pool, sparse=None if sp is None else sp[i])
            for flt, sp in zip(scopes, sparse, strict=True)
        ]
        if len(per_scope) == 1:  # one scope: its channels as they are
            results.append(per_scope[0])
            continue
        for ids, res in zip(found, per_scope, strict=True):
            ids.update(h.id for h in (*res.vector, *res.text))
        errors = [r.text_error for r in per_scope if r.text_error]
        results.append(
            ChannelResult(
                _best(pool, (h for r in per_scope for h in r.vector)),
                _best(pool, (h for r in per_scope for h in r.text)),
                text_error=errors[0] if errors else None,
            )
        )
    cands = fuse_channels(results, weights=weights, k=k, limit=pool)
    return cands, [r.text_error for r in results if r.text_error], found


def _best(pool: int, hits: Iterable[ScoredId]) -> list[ScoredId]:
    """The best ``pool`` of ``hits`` (best score first, ties by id), one per memory."""
    seen: dict[str, ScoredId] = {}
    for h in hits:
        if h.id not in seen or h.score > seen[h.id].score:
            seen[h.id] = h
    return sorted(seen.values(), key=lambda h: (-h.score, h.id))[:pool]


@lru_cache(maxsize=TEXT_CACHE)
def _stems(text: str) -> frozenset[str]:
    return frozenset(stem(w) for w in _WORD.findall(text))


def _query_stems(query: str) -> list[str]:
    """The query's content words as the lexical score compares them (suffixes after an apostrophe dropped)."""
    words = [w.casefold() for w in _WORD.findall(query) if len(w) <= MAX_TERM_CHARS]
    content = [w for w in dict.fromkeys(words) if w not in STOPWORDS] or words
    return list(dict.fromkeys(stem(w) for w in content))[:MAX_QUERY_TERMS]


def lexical_scores(queries: Sequence[str], texts: Sequence[str]) -> list[float]:
    """For each text, the best over ``queries`` of the share of the query's words it holds, each word
    weighted by its rarity among ``texts`` (``ln(1 + n / (df + 0.5))`` over the n candidates): 1.0 holds
    every word, 0 none. A word no candidate holds weighs most and lowers every score alike; a word every
    candidate holds (a speaker's name) weighs little. Words are compared by their stems."""
    docs = [_stems(t) for t in texts]
    n = len(docs)
    best = [0.0] * n
    for query in queries:
        terms = _query_stems(query)
        if not terms or n == 0:
            continue
        weights = {t: math.log(1.0 + n / (sum(t in d for d in docs) + 0.5)) for t in terms}
        total = sum(weights.values())
        for i, d in enumerate(docs):
            share = sum(w for t, w in weights.items() if t in d) / total
            if share > best[i]:
                best[i] = share
    return [round(b, 6) for b in best]


def _fuse_subqueries(per_query: Sequence[Sequence[PoolEntry]], *, k: int) -> list[PoolEntry]:
    fused = rrf({f"q{i}": [c.id for c in cands] for i, cands in enumerate(per_query)}, k=k)
    merged: dict[str, PoolEntry] = {}
    for cands in per_query:
        for c in cands:
            into = merged.setdefault(c.id, PoolEntry(c.id, 0.0))
            for name, info in c.channels.items():
                if name not in into.channels or info["rank"] < into.channels[name]["rank"]:
                    into.channels[name] = info
    out: list[PoolEntry] = []
    for f in fused:
        cand = merged[f.id]
        cand.rrf = f.score
        out.append(cand)
    return out


__all__ = [
    "ChannelResult",
    "PoolEntry",
    "fuse_channels",
    "merged_search",
    "run_channels",
    "text_channel",
]
