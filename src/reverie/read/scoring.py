"""Composite re-rank of the candidate pool: relevance leads.

``score = relevance + prior_margin × prior`` where

* ``relevance`` = the similarity share of the composite (0.40 of the ``0.40·sim + 0.30·ACT-R +
  0.15·importance + 0.15·RRF``; for utility-aware intents blended with the 0.6 of its ``0.6·sim +
  0.2·utility + 0.2·importance``) times the *hybrid similarity* (:func:`hybrid_similarity`: the
  cosine and the lexical score, a coverage of the query's words on an absolute scale), plus the
  boosts that measure the query itself: +0.1 per matching entity (at most 3), up to +0.1 when the
  memory's event time falls into a period the query names (read.when), and up to +0.1 when no session is
  named and the memory's session holds the pool's best matches (the episode strength squared);
* ``prior`` in [0, 1] = everything else the retrieval design weighs, as a share of its largest possible value:
  ``0.30·ACT-R activation + 0.15·importance + 0.15·RRF`` (and the utility and importance of the
  0.6/0.2/0.2 score), the intent's sort column, the episode boost (+0.15 the caller's session, or the
  inferred episode context, :func:`episode_strengths`), +0.05 co-activation — times the multipliers
  (sub-tier, mood-congruent ×1.1, the fail-open category filter, lifecycle state and
  confidence tier, disputed ×0.8, ×0.5 for source confidence < 0.3).

Access history, importance, ACT-R and episodes thus reorder candidates whose relevance lies within
``read.prior_margin`` of each other, and never push a clearly more relevant memory below a less
relevant one. Every term is returned for the hit's explanation. Pure: no I/O, ``now`` is an argument.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from reverie import lexicon
from reverie.config.dynamics import DynamicsSettings
from reverie.config.read import IntentStrategy, ReadSettings
from reverie.dynamics import actr
from reverie.dynamics.emotion import mood_multiplier
from reverie.dynamics.lifecycle import confidence_weight
from reverie.dynamics.utility import retrieval_score, utility_at
from reverie.model import MemoryRecord
from reverie.read.graph import entity_key
from reverie.read.when import Window, time_fit

_POSITIVE = lexicon.pattern("read_mood_positive")
_NEGATIVE = lexicon.pattern("read_mood_negative")


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
    windows: tuple[Window, ...] = ()
    attributes: frozenset[str] = frozenset()  # what the query asks about that holds one value at a time


@dataclass(slots=True)
class Inputs:
    """Per-candidate inputs gathered by the pipeline. ``similarity`` is the hybrid similarity;
    ``cosine``, ``lexical`` and the text weight used (when known) are its parts, kept for the
    explanation; ``episode`` is
    the inferred strength of the candidate's episode in [0, 1]."""

    similarity: float
    rrf_norm: float
    sort_value: float = 0.0
    coactivation: float = 0.0
    coactivated_with: list[str] = field(default_factory=list)
    cosine: float | None = None
    lexical: float | None = None
    text_weight: float | None = None
    episode: float = 0.0
    calibrated: float | None = None


#: the cosine scale the composite's weights and margins are set on: medians of (question, unrelated memory)
#: and (question, memory that answers it) cosines of all-MiniLM-L6-v2 over LoCoMo questions
REFERENCE_COSINES = (0.12, 0.46)


def calibrated_cosine(cosine: float, scale: tuple[float, float] | None) -> float:
    """``cosine`` mapped linearly from an embedder's scale ``(unrelated, relevant)`` onto
    :data:`REFERENCE_COSINES` (``read.cosine_scale``); unchanged without a scale. The map is monotone, so
    the order of cosines is kept; only their spread against the lexical score and the prior changes."""
    if scale is None:
        return cosine
    lo, hi = scale
    ref_lo, ref_hi = REFERENCE_COSINES
    return ref_lo + (cosine - lo) * (ref_hi - ref_lo) / (hi - lo)


def hybrid_similarity(cosine: float, lexical: float, *, vector_weight: float, text_weight: float) -> float:
    """``(w_v·cosine + w_t·lexical) / (w_v + w_t)``: the convex combination of the two channels'
    scores (the intent's vector/FTS weights). Score fusion keeps the margins that rank
    fusion drops (Bruch et al. 2023, "An Analysis of Fusion Functions for Hybrid Retrieval"). With
    no text channel (``text_weight`` 0, e.g. full text unavailable) it is the cosine."""
    total = vector_weight + text_weight
    if total <= 0:
        return cosine
    return (vector_weight * cosine + text_weight * lexical) / total


def episode_strengths(
    sessions: Sequence[str | None], similarities: Sequence[float], *, power: float
) -> dict[str, float]:
    """Inferred episode context: each episode (session) present in the pool scores
    ``(its best similarity / the best similarity overall) ** power`` in [0, 1]. An episode holding
    the strongest hit gets 1.0; one whose best member is half as similar gets 0.5 (power 1)."""
    best: dict[str, float] = {}
    for sid, sim in zip(sessions, similarities, strict=True):
        if sid is not None:
            best[sid] = max(best.get(sid, 0.0), sim)
    top = max(best.values(), default=0.0)
    if top <= 0:
        return {}
    return {sid: (max(v, 0.0) / top) ** power for sid, v in best.items()}


def activation_of(
    rec: MemoryRecord, *, now: datetime, cfg: DynamicsSettings, min_age_s: float = 1.0
) -> tuple[float, float]:
    """(B, activation) by the single-access ACT-R form from the record's counters; the age
    since the last access is floored at ``min_age_s`` (``read.activation_min_age_s``)."""
    last = rec.last_accessed_at or rec.created_at
    age = max((now - last).total_seconds(), min_age_s)
    b = actr.base_level_single(access_count=rec.access_count, age_seconds=age, cfg=cfg.actr)
    return b, actr.activation(base_level=b, cfg=cfg.actr)


def similarity_weight(ctx: QueryContext, read: ReadSettings, dyn: DynamicsSettings) -> float:
    """The similarity's share of the composite: 0.40, blended for utility-aware intents with
    the 0.6 of its 0.6/0.2/0.2 utility score in the proportion of the intent's utility boost."""
    ub = ctx.strategy.utility_boost
    return (1.0 - ub) * read.w_similarity + ub * dyn.utility.w_semantic


def base_terms(
    rec: MemoryRecord,
    inp: Inputs,
    ctx: QueryContext,
    read: ReadSettings,
    dyn: DynamicsSettings,
    *,
    explain: bool = True,
) -> tuple[float, float, float, dict[str, Any]]:
    """``(relevance, prior, largest possible prior, explanation)`` of the composite's terms (module docs);
    ``explain=False`` leaves the explanation empty (the numbers are the same)."""
    _, act = activation_of(rec, now=ctx.now, cfg=dyn, min_age_s=read.activation_min_age_s)
    ub = ctx.strategy.utility_boost
    relevance = similarity_weight(ctx, read, dyn) * inp.similarity
    prior = (1.0 - ub) * (read.w_activation * act + read.w_importance * rec.importance + read.w_rrf * inp.rrf_norm)
    possible = (1.0 - ub) * (read.w_activation + read.w_importance + read.w_rrf)
    out: dict[str, Any] = {}
    if explain:
        terms = {"similarity": inp.similarity, "activation": act, "importance": rec.importance, "rrf": inp.rrf_norm}
        out["terms"] = {k: round(v, 6) for k, v in terms.items()}
        out["weights"] = {
            "similarity": read.w_similarity,
            "activation": read.w_activation,
            "importance": read.w_importance,
            "rrf": read.w_rrf,
        }
    if explain and inp.cosine is not None:
        out["similarity"] = {
            "cosine": round(inp.cosine, 6),
            "lexical": round(inp.lexical or 0.0, 6),
            "vector_weight": ctx.strategy.vector_weight,
            "text_weight": ctx.strategy.text_weight if inp.text_weight is None else inp.text_weight,
        }
        if inp.calibrated is not None and inp.calibrated != inp.cosine:
            out["similarity"]["calibrated_cosine"] = round(inp.calibrated, 6)  # read.cosine_scale
    if ub > 0:
        util = utility_at(
            utility=rec.utility, updated_at=rec.utility_updated_at or rec.created_at, now=ctx.now, cfg=dyn.utility
        )
        prior += ub * (dyn.utility.w_utility * util + dyn.utility.w_importance * rec.importance)
        possible += ub * (dyn.utility.w_utility + dyn.utility.w_importance)
        if explain:
            rs = retrieval_score(semantic=inp.similarity, utility=util, importance=rec.importance, cfg=dyn.utility)
            out["utility"] = {"boost": ub, "utility": round(util, 6), "retrieval_score": round(rs, 6)}
    if ctx.strategy.sort != "relevance":
        prior += read.sort_weight * inp.sort_value
        possible += read.sort_weight
        if explain:
            out["sort"] = {"by": ctx.strategy.sort, "value": round(inp.sort_value, 6), "weight": read.sort_weight}
    return relevance, prior, possible, out


def entity_matches(query: frozenset[str], stored: Sequence[str]) -> int:
    """How many of the query's entities the memory names: the same name, or one whose words hold the other's
    ("Hakan" and a stored "Hakan Gaziantep", "Maya Silva" and "Maya"): a name written with more or fewer of its
    words is still the same name."""
    keys = [frozenset(k.split()) for k in {entity_key(e) for e in stored}]
    return sum(1 for q in query if any((words := frozenset(q.split())) <= k or k <= words for k in keys if k))


def boosts(rec: MemoryRecord, inp: Inputs, ctx: QueryContext, read: ReadSettings) -> dict[str, float]:
    out: dict[str, float] = {}
    matches = 0
    if ctx.entities and rec.entities:
        matches = entity_matches(ctx.entities, rec.entities)
        if matches:
            out["entity"] = read.entity_boost * min(matches, read.entity_boost_max)
    if inp.episode > 0 and read.episode_relevance_boost > 0 and not ctx.episodes:
        out["episode_relevance"] = read.episode_relevance_boost * inp.episode**read.episode_relevance_power
    if rec.session_id is not None and rec.session_id in ctx.episodes:
        out["episode"] = read.episode_boost
    elif inp.episode > 0 and read.episode_context_boost > 0:
        out["episode_context"] = read.episode_context_boost * inp.episode
    if inp.coactivation:
        out["coactivation"] = inp.coactivation
    if ctx.attributes and read.attribute_boost > 0 and (matches or not ctx.entities):
        from reverie.text.updates import attributes

        # the attribute of whom the question names ("Mert ne iş yapıyor?": not Emre's colleagues)
        if ctx.attributes & attributes(rec.content):
            out["attribute"] = read.attribute_boost
    if ctx.windows and read.time_anchor_boost > 0:
        fit = time_fit(
            rec.valid_from or rec.created_at,
            ctx.windows,
            after_days=read.time_anchor_after_days,
            before_days=read.time_anchor_before_days,
        )
        if fit > 0:
            out["time"] = read.time_anchor_boost * fit
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


#: boosts that measure the query itself (relevance); the others are priors
_RELEVANCE_BOOSTS = ("entity", "attribute", "time", "episode_relevance")


def score(
    rec: MemoryRecord,
    inp: Inputs,
    ctx: QueryContext,
    read: ReadSettings,
    dyn: DynamicsSettings,
    *,
    explain: bool = True,
) -> tuple[float, dict[str, Any]]:
    """The final score of one candidate and its explanation (module docs). ``explain=False``: the same
    score with an empty explanation (the pipeline explains only the memories it returns)."""
    relevance, prior, possible, explanation = base_terms(rec, inp, ctx, read, dyn, explain=explain)
    add = boosts(rec, inp, ctx, read)
    mult = multipliers(rec, ctx, read, dyn)
    relevance += sum(v for k, v in add.items() if k in _RELEVANCE_BOOSTS)
    prior += sum(v for k, v in add.items() if k not in _RELEVANCE_BOOSTS)
    possible += max(read.episode_boost, read.episode_context_boost) + dyn.tagging.coactivation_bonus
    factor = 1.0
    for value in mult.values():
        factor *= value
    share = min(1.0, max(0.0, prior * factor / possible)) if possible > 0 else 0.0
    total = relevance + read.prior_margin * share
    if not explain:
        return total, explanation
    explanation["boosts"] = {k: round(v, 6) for k, v in add.items()}
    explanation["multipliers"] = mult
    explanation["relevance"] = round(relevance, 6)
    explanation["prior"] = {
        "share": round(share, 6),
        "margin": read.prior_margin,
        "note": "access history, importance, ACT-R, utility, episode and the multipliers "
        "reorder memories whose relevance lies within the margin",
    }
    if "episode" in add or "episode_context" in add:
        explanation["episode_source"] = ctx.episode_source
    if inp.coactivated_with:
        explanation["coactivated_with"] = inp.coactivated_with
    return total, explanation


__all__ = [
    "Inputs",
    "QueryContext",
    "activation_of",
    "base_terms",
    "boosts",
    "detect_mood",
    "episode_strengths",
    "hybrid_similarity",
    "multipliers",
    "score",
    "similarity_weight",
]
