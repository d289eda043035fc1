"""Importance: four channels, nine factors (engram) and heuristic levels.

The nine-factor formulas are taken from the layered-memory design's public source (engram); its ACT-R factor, which
the source omits, is added and the nine weights renormalised.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from datetime import datetime

from reverie.config.dynamics import DynamicsSettings, ImportanceSettings
from reverie.dynamics import actr, retention
from reverie.dynamics._util import LN2, clamp, days_between, layer_name, seconds_between
from reverie.dynamics.surprise import adjust_importance
from reverie.model import MemoryRecord

PRIORITY_LEVELS = ("critical", "high", "normal", "low")


def encoding_boost(*, boost: float, cfg: ImportanceSettings) -> float:
    """The encoding boost multiplier limited to [0.7, 1.3]."""
    return clamp(boost, cfg.boost_min, cfg.boost_max)


def encoding_boost_of(*, arousal: float, valence: float, cfg: ImportanceSettings) -> float:
    """The encoding boost of a new memory from its emotion: ``1 + gain·max(arousal, |valence|)``, within
    [0.7, 1.3] (an emotionally neutral memory: 1.0)."""
    salience = max(clamp(arousal), clamp(abs(valence)))
    return encoding_boost(boost=1.0 + cfg.boost_emotion_gain * salience, cfg=cfg)


def channel_importance(
    *,
    novelty: float,
    arousal: float,
    reward: float,
    attention: float,
    cfg: ImportanceSettings,
    boost: float = 1.0,
) -> float:
    """``(0.25·novelty + 0.30·arousal + 0.25·reward + 0.20·attention)·boost``, in [0, 1]."""
    raw = (
        cfg.w_novelty * clamp(novelty)
        + cfg.w_arousal * clamp(arousal)
        + cfg.w_reward * clamp(reward)
        + cfg.w_attention * clamp(attention)
    )
    return clamp(raw * encoding_boost(boost=boost, cfg=cfg))


def priority_level(*, importance: float, cfg: ImportanceSettings) -> str:
    """Critical >= 0.8, high >= 0.6, normal >= 0.4, else low."""
    if importance >= cfg.priority_critical:
        return "critical"
    if importance >= cfg.priority_high:
        return "high"
    if importance >= cfg.priority_normal:
        return "normal"
    return "low"


def level_importance(*, level: str, cfg: ImportanceSettings) -> float:
    """Heuristic: the importance score of a named level."""
    try:
        return cfg.levels[level]
    except KeyError:
        raise ValueError(f"unknown importance level {level!r}; known: {sorted(cfg.levels)}") from None


def nine_factors(
    *,
    base: float,
    access_count: int,
    age_days: float,
    valence: float,
    span_days: float,
    layer: object,
    trust: float,
    confirmations: int,
    actr_activation: float,
    cfg: ImportanceSettings,
    half_life_days: float | None = None,
) -> dict[str, float]:
    """The nine unweighted importance factor values (each in [0, 1]).

    ``age_days`` = days since the last access; ``span_days`` = days between creation and the last
    access (floored at 1 day as in the source); ``half_life_days`` overrides the recency half-life.
    """
    hl = half_life_days if half_life_days is not None else cfg.recency_half_life_days
    stability = min(1.0, access_count / (max(1.0, span_days) + 1.0)) if access_count > 0 else 0.0
    return {
        "base": clamp(base),
        "access": min(1.0, cfg.access_log_scale * math.log1p(max(0, access_count))),
        "recency": math.exp(-LN2 * max(0.0, age_days) / hl) if math.isfinite(hl) else 1.0,
        "emotion": clamp(abs(valence)) * cfg.emotion_scale,
        "stability": stability,
        "layer": cfg.layer_boost.get(layer_name(layer), 0.0),
        "trust": clamp(trust),
        "confirmations": min(cfg.confirm_cap, cfg.confirm_log_scale * math.log1p(max(0, confirmations))),
        "actr": clamp(actr_activation),
    }


def nine_factor_importance(*, factors: dict[str, float], cfg: ImportanceSettings) -> float:
    """``Σ w_i·f_i`` with the renormalised nine weights, clamped to [0, 1]."""
    weights = cfg.nine_factor_weights
    return clamp(math.fsum(weights[k] * factors[k] for k in weights))


def surprise_adjusted_base(record: MemoryRecord, *, cfg: ImportanceSettings) -> float:
    """The layered-memory design's base importance: the importance set at creation, moved by the memory's
    write-time surprise (``importance + (surprise - 0.5)·scale``, clamped to [floor, ceiling]) — a novel memory
    counts for more, a redundant one for less. The adjustment recorded at write is used when there is one (it
    holds ``surprise_empty_modifier`` for a memory written into an empty scope); a memory written before surprise
    was recorded keeps its importance."""
    base = record.importance_channels.get("base", record.importance)
    modifier = record.importance_channels.get("surprise_adjustment")
    if modifier is None:
        if record.surprise is None:
            return clamp(base)
        modifier = (record.surprise - 0.5) * cfg.surprise_scale
    return adjust_importance(importance=base, modifier=modifier, cfg=cfg)


def layered_importance(
    record: MemoryRecord, *, now: datetime, cfg: DynamicsSettings, access_times: Sequence[datetime] = ()
) -> tuple[float, dict[str, float]]:
    """The nine-factor importance of a stored memory at ``now`` and its factor values.

    The base factor is :func:`surprise_adjusted_base`; recency uses the trust-weighted half-life when
    ``importance.recency_trust_weighted`` is on; the ACT-R factor is the full base-level activation over
    ``access_times`` (the access log), the accesses not in it approximated over the memory's lifetime — with no
    log given, from the access count and the last access alone. The archival rule decides with this value.
    """
    ic = cfg.importance
    last = record.last_accessed_at or record.created_at
    hl = ic.recency_half_life_days
    if ic.recency_trust_weighted:
        hl = retention.trust_half_life(half_life_days=hl, trust=record.trust, cfg=cfg.retention)
    ages = (
        actr.ages_seconds(access_times=access_times, now=now)
        if access_times
        else [seconds_between(record.last_accessed_at, now)]
        if record.last_accessed_at is not None
        else []
    )
    base_level = actr.base_level_full(
        ages_seconds=ages,
        cfg=cfg.actr,
        total_accesses=record.access_count,
        lifetime_seconds=seconds_between(record.created_at, now),
    )
    factors = nine_factors(
        base=surprise_adjusted_base(record, cfg=ic),
        access_count=record.access_count,
        age_days=days_between(last, now),
        valence=record.emotion_valence,
        span_days=days_between(record.created_at, last),
        layer=record.layer,
        trust=record.trust,
        confirmations=record.confirmations,
        actr_activation=actr.activation(base_level=base_level, cfg=cfg.actr),
        cfg=ic,
        half_life_days=hl,
    )
    return nine_factor_importance(factors=factors, cfg=ic), factors
