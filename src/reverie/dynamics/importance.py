"""Importance: four channels, nine factors (engram) and heuristic levels.

The nine-factor formulas are taken from the layered-memory design's public source (engram); its ACT-R factor, which
the source omits, is added and the nine weights renormalised.
"""

from __future__ import annotations

import math

from reverie.config.dynamics import ImportanceSettings
from reverie.dynamics._util import LN2, clamp, layer_name

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
