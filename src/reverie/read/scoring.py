"""Composite re-rank of the candidate pool (SEED-NOTES 9, seed 001, seed 004).

``score = (base + boosts) × multipliers`` where

* ``base = 0.40·similarity + 0.30·ACT-R activation + 0.15·importance + 0.15·RRF`` (RRF score
  min-max scaled over the pool; a graph-admitted memory uses its graph score instead), blended
  for utility-aware intents with seed 001's ``0.6·sim + 0.2·utility + 0.2·importance`` in the
  proportion of the intent's utility boost, plus the intent's sort column as a small secondary key;
* ``boosts`` = +0.1 per matching entity (at most 3), +0.15 same episode, +0.05 co-activation
  (pairs retrieved together >= 3 times);
* ``multipliers`` = sub-tier (personal 1.1 … vicarious 0.9), mood-congruent ×1.1, fail-open
  category filter, seed 004 lifecycle state and confidence-tier weight, disputed penalty, and
  ×0.5 for source confidence < 0.3.

Every term is returned for the hit's explanation. Pure: no I/O, ``now`` is an argument.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from reverie.config.dynamics import DynamicsSettings
from reverie.config.read import IntentStrategy, ReadSettings
from reverie.dynamics import actr
from reverie.dynamics.emotion import mood_multiplier
from reverie.dynamics.lifecycle import confidence_weight
from reverie.dynamics.utility import retrieval_score, utility_at
from reverie.model import MemoryRecord
from reverie.read.graph import entity_key

_POSITIVE = re.compile(r"\b(happy|glad|great|love[sd]?|excit\w+|wonderful|awesome|proud|enjoy\w*|fun|"
                       r"mutlu|harika|sevin\w*|güzel|keyifli)\b", re.IGNORECASE)
_NEGATIVE = re.compile(r"\b(sad|angry|upset|worried|afraid|scared|hate[sd]?|terrible|awful|stress\w*|"
                       r"annoy\w*|frustrat\w*|üzgün|kızgın|endişe\w*|korku\w*|berbat|sinirli)\b", re.IGNORECASE)


def detect_mood(text: str) -> float | None:
    """The query's valence from keyword lists (EN + TR): +1, -1, or None when neutral or mixed."""
    pos, neg = len(_POSITIVE.findall(text)), len(_NEGATIVE.findall(text))
    if pos == neg:
        return None
    return 1.0 if pos > neg else -1.0


@dataclass(frozen=True, slots=True)
class QueryContext:
    """What the scorer knows about the query."""

    intent: str
    strategy: IntentStrategy
    now: datetime
    entities: frozenset[str] = frozenset()
    episodes: frozenset[str] = frozenset()
    episode_source: str = ""
    mood: float | None = None


@dataclass(slots=True)
class Inputs:
    """Per-candidate inputs gathered by the pipeline."""

    similarity: float
    rrf_norm: float
    sort_value: float = 0.0
    coactivation: float = 0.0
    coactivated_with: list[str] = field(default_factory=list)


def activation_of(rec: MemoryRecord, *, now: datetime, cfg: DynamicsSettings,
                  min_age_s: float = 1.0) -> tuple[float, float]:
    """(B, activation) by seed 001's single-access ACT-R form from the record's counters; the age
    since the last access is floored at ``min_age_s`` (``read.activation_min_age_s``)."""
    last = rec.last_accessed_at or rec.created_at
    age = max((now - last).total_seconds(), min_age_s)
    b = actr.base_level_single(access_count=rec.access_count, age_seconds=age, cfg=cfg.actr)
    return b, actr.activation(base_level=b, cfg=cfg.actr)


def base_terms(rec: MemoryRecord, inp: Inputs, ctx: QueryContext, read: ReadSettings,
               dyn: DynamicsSettings) -> tuple[float, dict[str, Any]]:
    _, act = activation_of(rec, now=ctx.now, cfg=dyn, min_age_s=read.activation_min_age_s)
    terms = {"similarity": inp.similarity, "activation": act, "importance": rec.importance, "rrf": inp.rrf_norm}
    composite = (read.w_similarity * inp.similarity + read.w_activation * act
                 + read.w_importance * rec.importance + read.w_rrf * inp.rrf_norm)
    out: dict[str, Any] = {"terms": {k: round(v, 6) for k, v in terms.items()},
                           "weights": {"similarity": read.w_similarity, "activation": read.w_activation,
                                       "importance": read.w_importance, "rrf": read.w_rrf},
                           "composite": round(composite, 6)}
    ub = ctx.strategy.utility_boost
    if ub > 0:
        util = utility_at(utility=rec.utility, updated_at=rec.utility_updated_at or rec.created_at, now=ctx.now,
                          cfg=dyn.utility)
        rs = retrieval_score(semantic=inp.similarity, utility=util, importance=rec.importance, cfg=dyn.utility)
        composite = (1.0 - ub) * composite + ub * rs
        out["utility"] = {"boost": ub, "utility": round(util, 6), "retrieval_score": round(rs, 6)}
    if ctx.strategy.sort != "relevance":
        composite += read.sort_weight * inp.sort_value
        out["sort"] = {"by": ctx.strategy.sort, "value": round(inp.sort_value, 6), "weight": read.sort_weight}
    return composite, out


def boosts(rec: MemoryRecord, inp: Inputs, ctx: QueryContext, read: ReadSettings) -> dict[str, float]:
    out: dict[str, float] = {}
    if ctx.entities and rec.entities:
        matches = len(ctx.entities & {entity_key(e) for e in rec.entities})
        if matches:
            out["entity"] = read.entity_boost * min(matches, read.entity_boost_max)
    if rec.session_id is not None and rec.session_id in ctx.episodes:
        out["episode"] = read.episode_boost
    if inp.coactivation:
        out["coactivation"] = inp.coactivation
    return out


def multipliers(rec: MemoryRecord, ctx: QueryContext, read: ReadSettings, dyn: DynamicsSettings) -> dict[str, float]:
    out: dict[str, float] = {}
    if rec.sub_tier and read.sub_tier_boost.get(rec.sub_tier, 1.0) != 1.0:
        out["sub_tier"] = read.sub_tier_boost[rec.sub_tier]
    mood = mood_multiplier(current_mood=ctx.mood, memory_valence=rec.emotion_valence, cfg=dyn.emotion)
    if mood != 1.0:
        out["mood"] = mood
    if ctx.strategy.categories and rec.category in ctx.strategy.categories:
        out["category"] = read.category_boost
    life = read.lifecycle_factor.get(rec.lifecycle_state, 1.0)
    if life != 1.0:
        out["lifecycle"] = life
    conf = confidence_weight(confidence=rec.confidence, cfg=dyn.lifecycle)
    if conf != 1.0:
        out["confidence_tier"] = conf
    if rec.verification_state == "disputed":
        out["disputed"] = read.disputed_factor
    if rec.source_confidence < read.low_source_confidence:
        out["low_source_confidence"] = read.low_source_confidence_factor
    return out


def score(rec: MemoryRecord, inp: Inputs, ctx: QueryContext, read: ReadSettings,
          dyn: DynamicsSettings) -> tuple[float, dict[str, Any]]:
    """The final score of one candidate and its explanation."""
    base, explain = base_terms(rec, inp, ctx, read, dyn)
    add = boosts(rec, inp, ctx, read)
    mult = multipliers(rec, ctx, read, dyn)
    total = base + sum(add.values())
    for factor in mult.values():
        total *= factor
    explain["boosts"] = {k: round(v, 6) for k, v in add.items()}
    explain["multipliers"] = mult
    if "episode" in add:
        explain["episode_source"] = ctx.episode_source
    if inp.coactivated_with:
        explain["coactivated_with"] = inp.coactivated_with
    return total, explain


__all__ = ["Inputs", "QueryContext", "activation_of", "base_terms", "boosts", "detect_mood", "multipliers", "score"]
