"""Ranking the pool: the composite score's inputs, MMR selection, the hits and their explanations, and the
hot-tier merge.

The similarity of a memory is its best cosine over the sub-queries' raw vectors (a quantised cold memory's
cosine divided by the embedder's shrink at its precision), calibrated per embedder and blended with an
absolute lexical score; the RRF term is scaled as ``read.rrf_scale`` says (min-max over the pool by default:
RRF scores with K = 60 differ by a few percent between rank 1 and rank 60, so dividing by the best would make
the RRF term nearly constant).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from datetime import datetime
from typing import Any

import numpy as np

from reverie.config import Settings
from reverie.config.read import ReadSettings
from reverie.model import MemoryRecord, Status
from reverie.read import filters, hybrid, intent, scoring, when
from reverie.read.hot import HotTier
from reverie.read.hybrid import PoolEntry
from reverie.read.mmr import mmr_select
from reverie.read.plan import F32, QueryPlan
from reverie.results import Hit
from reverie.store.base import MemoryFilter, Store
from reverie.vector_codec import query_shrink

#: a pool entry's composite score and the terms that explain it
Scored = tuple[float, dict[str, Any]]
#: the pool's order: (index into the pool, what the ordering steps noted about it)
Order = list[tuple[int, dict[str, Any]]]


def matrix(records: Sequence[MemoryRecord], dim: int) -> F32:
    """The stored embeddings as rows (zeros where a memory has none of this dimension)."""
    out = np.zeros((len(records), dim), dtype=np.float32)
    for i, rec in enumerate(records):
        if rec.embedding is not None and rec.embedding.shape == (dim,):
            out[i] = rec.embedding
    return out


def similarities(plan: QueryPlan, vecs: F32, records: Sequence[MemoryRecord], profile: str) -> np.ndarray:
    """Each memory's best cosine over the sub-queries. A quantised (cold) memory's dequantised vector is shrunk
    towards noise, ``cos(q, x̂) ≈ shrink·cos(q, x)``: its cosine is divided by the shrink."""
    if not len(vecs):
        return np.zeros(0)
    sims: np.ndarray = (vecs @ plan.raw.T).max(axis=1)
    shrink = np.asarray([query_shrink(profile, r.embedding_precision) for r in records], dtype=np.float32)
    out: np.ndarray = sims / shrink.reshape(sims.shape)
    return out


def context(
    cfg: ReadSettings,
    route: intent.Route,
    *,
    query: str,
    session_id: str | None,
    now: datetime,
    entities: Sequence[str],
    windows: Sequence[when.Window],
) -> scoring.QueryContext:
    """What the composite score knows about the query: intent, strategy, entities, episode, mood, time."""
    episodes: frozenset[str] = frozenset()
    source = ""
    if session_id is not None:
        episodes, source = frozenset({session_id}), "session"
    elif cfg.episode_context:
        source = "inferred: best similarity in the episode / best overall"
    return scoring.QueryContext(
        route.intent,
        route.strategy,
        now,
        frozenset(entities),
        episodes,
        source,
        scoring.detect_mood(query),
        tuple(windows),
        _attributes(query) if cfg.attribute_boost > 0 else frozenset(),
    )


def _attributes(query: str) -> frozenset[str]:
    from reverie.text.updates import attributes

    return attributes(query)


def inputs(
    store: Store,
    settings: Settings,
    profile: str,
    cands: list[PoolEntry],
    records: dict[str, MemoryRecord],
    sims: np.ndarray,
    ctx: scoring.QueryContext,
    *,
    text_ok: bool = True,
    queries: Sequence[str] = (),
) -> dict[str, scoring.Inputs]:
    """The composite score's inputs per pool entry (``queries``: the sub-queries)."""
    cfg = settings.read
    strat = ctx.strategy
    # largest possible RRF: rank 1 on both channels, or (several sub-queries) rank 1 in every list
    best_rrf = (len(queries) if len(queries) > 1 else strat.vector_weight + strat.text_weight) / (cfg.rrf_k + 1)
    rrf_norm = rrf_scaled([c.rrf for c in cands], cfg.rrf_scale, best_rrf)
    sort = sort_values([records[c.id] for c in cands], strat.sort)
    tw = strat.text_weight if text_ok and cfg.hybrid_similarity else 0.0
    lexical = hybrid.lexical_scores(queries, [records[c.id].content for c in cands]) if tw > 0 else [0.0] * len(cands)
    scale = cfg.cosine_scale.get(profile)
    calibrated = [scoring.calibrated_cosine(float(s), scale) for s in sims]
    hyb = [
        scoring.hybrid_similarity(c, lx, vector_weight=strat.vector_weight, text_weight=tw)
        for c, lx in zip(calibrated, lexical, strict=True)
    ]
    strength: dict[str, float] = {}
    if cfg.episode_context and not ctx.episodes:
        strength = scoring.episode_strengths(
            [records[c.id].session_id for c in cands], hyb, power=cfg.episode_context_power
        )
    out: dict[str, scoring.Inputs] = {}
    for c, s, cal, h, r, lx in zip(cands, sims, calibrated, hyb, rrf_norm, lexical, strict=True):
        sid = records[c.id].session_id
        out[c.id] = scoring.Inputs(
            h,
            r,
            sort.get(c.id, 0.0),
            cosine=float(s),
            lexical=lx,
            text_weight=tw,
            episode=strength.get(sid, 0.0) if sid is not None else 0.0,
            calibrated=cal,
        )
    if cfg.coactivation:
        coactivation(store, settings, out)
    return out


def coactivation(store: Store, settings: Settings, inputs: dict[str, scoring.Inputs]) -> None:
    """Pairs in the pool co-retrieved often enough get the co-activation bonus."""
    from reverie.dynamics.tagging import coactivation_bonus

    tag = settings.dynamics.tagging
    for pair in store.coactivations(list(inputs), min_weight=tag.coactivation_threshold):
        bonus = coactivation_bonus(count=pair.weight, cfg=tag)
        if bonus and pair.a_id in inputs and pair.b_id in inputs:
            for me, other in ((pair.a_id, pair.b_id), (pair.b_id, pair.a_id)):
                inputs[me].coactivation = bonus
                inputs[me].coactivated_with.append(other)


def select(cfg: ReadSettings, cands: list[PoolEntry], scored: list[Scored], vecs: F32, k: int) -> Order:
    """The pool ordered by score, then by MMR (``read.mmr``) over the stored embeddings."""
    by_score = sorted(range(len(cands)), key=lambda i: (-scored[i][0], cands[i].id))
    if not cfg.mmr:
        return [(i, {}) for i in by_score[:k]]
    scores = [max(scored[i][0], 0.0) for i in by_score]
    picked = mmr_select(scores, vecs[by_score], k=k, lam=cfg.mmr_lambda)
    return [
        (
            by_score[j],
            {
                "lambda": cfg.mmr_lambda,
                "step": step,
                "value": round(value, 6),
                "max_similarity": round(msim, 6),
                "score_rank": j + 1,
            },
        )
        for step, (j, value, msim) in enumerate(picked, start=1)
    ]


def hit(
    rrf_k: int, route: intent.Route, cand: PoolEntry, rec: MemoryRecord, scored: Scored, mmr: dict[str, Any]
) -> Hit:
    """One result with its explanation: the stage that admitted it, its channels, RRF, score terms, order."""
    score, terms = scored
    weights = {"vector": route.strategy.vector_weight, "text": route.strategy.text_weight}
    explain: dict[str, Any] = {
        "stage": cand.stage,
        "intent": route.intent,
        "channels": cand.channels,
        "rrf": {"k": rrf_k, "score": cand.rrf, "weights": weights},
        **terms,
    }
    mmr = dict(mmr)
    for key in ("superseded", "current_version_of", "newer_first", "took_slot_of", "anchor_of"):
        if key in mmr:
            explain[key] = mmr.pop(key)
    if rec.status is Status.SUPERSEDED and "superseded" not in explain and cand.stage not in ("cold", "summary"):
        explain["superseded"] = {
            "by": rec.superseded_by,
            "how": "stored",
            "reason": "superseded when the newer memory was written",
        }
    if mmr:
        explain["mmr"] = mmr
    explain["score"] = score
    return Hit(rec, score, explain)


def merge_hot(
    hot: HotTier,
    store: Store,
    settings: Settings,
    profile: str,
    hits: list[Hit],
    *,
    flt: MemoryFilter,
    plan: QueryPlan,
    ctx: scoring.QueryContext,
    now: datetime,
) -> list[Hit]:
    """The hot tier's memories similar enough to the query (``read.hot_min_similarity``), each placed before
    the first result that scores lower; the results keep their order (MMR, current version first), so the
    first n of a longer list are the same n."""
    cfg = settings.read
    floor = cfg.for_profile("hot_min_similarity", profile)
    have = {h.memory.id for h in hits}
    extra: list[Hit] = []
    for rec in hot.get(store, flt, now=now, cfg=cfg):
        if rec.id in have or rec.embedding is None or not filters.matches(rec, flt):
            continue
        sim = float((plan.raw @ rec.embedding).max())
        if sim < floor:
            continue
        score, terms = scoring.score(
            rec,
            scoring.Inputs(scoring.calibrated_cosine(sim, cfg.cosine_scale.get(profile)), 0.0, cosine=sim),
            ctx,
            cfg,
            settings.dynamics,
        )
        cand = PoolEntry(rec.id, 0.0, "hot", {"hot": {"rank": len(extra) + 1, "similarity": round(sim, 6)}})
        extra.append(hit(cfg.rrf_k, plan.route, cand, rec, (score, terms), {}))
    merged = list(hits)
    for h in sorted(extra, key=lambda x: -x.score):
        at = next((i for i, x in enumerate(merged) if x.score < h.score), len(merged))
        merged.insert(at, h)
    return merged


def explain_order(hits: Sequence[Hit]) -> None:
    """A result scored higher than the one above it says why it comes later: the step that placed the memory
    above it there, or diversity when MMR moved it (only then: a memory similar to none above it was not moved
    for diversity)."""
    for above, h in itertools.pairwise(hits):
        if h.score <= above.score:
            continue
        mmr = h.explain.get("mmr", {})
        if "superseded" in h.explain:
            why = "superseded: placed right after the memory that replaced it (current version first)"
        elif "current_version_of" in above.explain:
            why = "placed after the current version of a memory, which took that memory's place"
        elif "newer_first" in above.explain:
            why = f"placed after a newer answer to the same question: {above.explain['newer_first']['note']}"
        elif "anchor_of" in above.explain:
            why = "placed after the memory it disputes (an immutable memory keeps its place above what contradicts it)"
        elif "took_slot_of" in above.explain:
            why = "placed after an original that took its consolidation summary's place"
        elif "hot" in above.explain.get("channels", {}):
            why = "placed after a core memory (hot tier) merged into the results"
        elif mmr.get("max_similarity", 0) > 0:
            why = f"diversity (MMR): it is similar to a memory above it (max similarity {mmr['max_similarity']:.2f})"
        else:
            why = "placed by the ordering steps after a memory they moved up"
        h.explain["order"] = why


def text_ok(cands: Sequence[PoolEntry]) -> bool:
    """False when the full-text channel failed (its fallback is recorded on the candidates)."""
    return not any(c.channels.get("text", {}).get("fallback") for c in cands)


def rrf_scaled(values: Sequence[float], how: str, best: float) -> list[float]:
    """The RRF scores as read.rrf_scale says: raw, over the largest possible value ``best``, or min-max."""
    if how == "raw":
        return list(values)
    if how == "possible":
        return [min(v / best, 1.0) if best > 0 else 0.0 for v in values]
    return minmax(values)


def minmax(values: Sequence[float]) -> list[float]:
    """Min-max scaling to [0, 1] over the pool (all 1.0 when the values are equal)."""
    if not values:
        return []
    lo, hi = min(values), max(values)
    if hi - lo <= 1e-12:
        return [1.0 for _ in values]
    return [(v - lo) / (hi - lo) for v in values]


def sort_values(records: Sequence[MemoryRecord], sort: str) -> dict[str, float]:
    """The intent's sort column scaled to [0, 1]: utility as is, valid_from as a rank (newest = 1)."""
    if sort == "utility":
        return {r.id: r.utility for r in records}
    if sort != "valid_from" or len(records) < 2:
        return {}
    ordered = sorted(records, key=lambda r: r.valid_from or r.created_at)
    return {r.id: i / (len(ordered) - 1) for i, r in enumerate(ordered)}


__all__ = ["Order", "Scored", "context", "explain_order", "hit", "inputs", "matrix", "merge_hot", "select"]
