"""Retention models.

* retention modes (engram) over a half-life ``hl`` — l2 ``exp(-ln2·t/hl)``; huber = l2 up to
  ``t = 0.5·hl`` then linear with the matching slope; elastic ``0.3·max(0, 1 - t/(2hl)) + 0.7·l2`` —
  plus an access reinforcement ``min(0.3, 0.05·ln(1+n))``, clamped to [0, 1]. The half-life is the
  layer's (episodic 30 days, durable layers ∞) scaled by trust: ``hl·1/(1 + 2·(1 - trust))``.
* category decay per day and minimum retention; PAHF layer multipliers 10x/3x/1x/frozen.
  The per-day rate is applied multiplicatively (decay multiplies):
  ``strength = exp(-rate·multiplier·days)``.
* fading retention (the consolidation design): ``R = max(floor, exp(-Δt/(S·B·β)))`` with ``S`` =
  storage strength on that design's 0–1 scale (storage/10), ``B = min(3, 1 + 2·importance)``, ``β`` per layer
  (episodic 45 days, semantic
  120, procedural/codebase ∞, core 120 — the core flag selects β_core) and the floor 0.60 for core
  memories, 0.02 otherwise.
* precision tier by retention: R > 0.8 float32, > 0.5 int8, > 0.2 int4, else int2.
"""

from __future__ import annotations

import math

from reverie.config.dynamics import RetentionSettings
from reverie.dynamics._util import LN2, clamp, layer_name
from reverie.model import Precision

MODES = ("l2", "huber", "elastic")


def source_trust(*, source: str, cfg: RetentionSettings) -> float:
    """Trust table (unknown sources: ``default_trust``)."""
    return cfg.trust.get(source, cfg.default_trust)


def trust_half_life(*, half_life_days: float, trust: float, cfg: RetentionSettings) -> float:
    """``hl / (1 + 2·(1 - trust))`` (human 1.0 keeps the full half-life)."""
    return half_life_days / (1.0 + cfg.trust_slope * (1.0 - clamp(trust)))


def layer_half_life(*, layer: object, trust: float, cfg: RetentionSettings) -> float:
    """The trust-weighted half-life (days) of a layer."""
    base = cfg.layer_half_life_days.get(layer_name(layer), cfg.base_half_life_days)
    return trust_half_life(half_life_days=base, trust=trust, cfg=cfg)


def l2_retention(*, age_days: float, half_life_days: float) -> float:
    """``exp(-ln2·t/hl)`` (1 for an infinite half-life)."""
    if not math.isfinite(half_life_days):
        return 1.0
    return math.exp(-LN2 * max(0.0, age_days) / half_life_days)


def huber_retention(*, age_days: float, half_life_days: float, knee: float = 0.5) -> float:
    """l2 up to ``t0 = knee·hl``, then linear with the slope of l2 at ``t0``, floored at 0."""
    if not math.isfinite(half_life_days):
        return 1.0
    t = max(0.0, age_days)
    t0 = knee * half_life_days
    if t <= t0:
        return l2_retention(age_days=t, half_life_days=half_life_days)
    r0 = l2_retention(age_days=t0, half_life_days=half_life_days)
    slope = LN2 / half_life_days * r0
    return max(0.0, r0 - slope * (t - t0))


def elastic_retention(*, age_days: float, half_life_days: float, l1_weight: float = 0.3, l1_span: float = 2.0) -> float:
    """``0.3·max(0, 1 - t/(2hl)) + 0.7·l2``."""
    if not math.isfinite(half_life_days):
        return 1.0
    t = max(0.0, age_days)
    l1 = max(0.0, 1.0 - t / (l1_span * half_life_days))
    return l1_weight * l1 + (1.0 - l1_weight) * l2_retention(age_days=t, half_life_days=half_life_days)


def access_reinforcement(*, access_count: int, cfg: RetentionSettings) -> float:
    """``min(0.3, 0.05·ln(1 + n))``."""
    return min(cfg.reinforcement_cap, cfg.reinforcement_scale * math.log1p(max(0, access_count)))


def base_retention(*, age_days: float, half_life_days: float, mode: str, cfg: RetentionSettings) -> float:
    """The retention curve of ``mode`` without reinforcement."""
    if mode == "l2":
        return l2_retention(age_days=age_days, half_life_days=half_life_days)
    if mode == "huber":
        return huber_retention(age_days=age_days, half_life_days=half_life_days, knee=cfg.huber_knee)
    if mode == "elastic":
        return elastic_retention(
            age_days=age_days,
            half_life_days=half_life_days,
            l1_weight=cfg.elastic_l1_weight,
            l1_span=cfg.elastic_l1_span,
        )
    raise ValueError(f"unknown retention mode {mode!r}; expected one of {MODES}")


def retention(
    *,
    age_days: float,
    half_life_days: float,
    access_count: int,
    cfg: RetentionSettings,
    mode: str | None = None,
) -> float:
    """Retention in [0, 1]: curve of ``mode`` (default ``cfg.mode``) + access reinforcement."""
    curve = base_retention(age_days=age_days, half_life_days=half_life_days, mode=mode or cfg.mode, cfg=cfg)
    return clamp(curve + access_reinforcement(access_count=access_count, cfg=cfg))


def category_decay_rate(*, category: str, cfg: RetentionSettings) -> float:
    """Decay per day of a category (unknown categories decay as 'other')."""
    return cfg.category_decay.get(category, cfg.category_decay["other"])


def pahf_multiplier(*, layer: object, cfg: RetentionSettings, dormant: bool = False) -> float:
    """PAHF multiplier: working 10, episodic 3, semantic 1, dormant 0 (frozen)."""
    if dormant:
        return cfg.pahf_multiplier.get("dormant", 0.0)
    return cfg.pahf_multiplier.get(layer_name(layer), 1.0)


def category_strength(
    *, category: str, layer: object, days: float, cfg: RetentionSettings, dormant: bool = False
) -> float:
    """``exp(-rate·multiplier·days)``: 1 for no-decay categories and for frozen (dormant) memories."""
    rate = category_decay_rate(category=category, cfg=cfg) * pahf_multiplier(layer=layer, cfg=cfg, dormant=dormant)
    return math.exp(-rate * max(0.0, days))


def min_retention_days(*, category: str, cfg: RetentionSettings) -> float:
    """Minimum retention of a category in days (∞ = permanent)."""
    return cfg.min_retention_days.get(category, cfg.min_retention_days["other"])


def within_min_retention(*, category: str, age_days: float, cfg: RetentionSettings) -> bool:
    """True while a memory is protected from forgetting by its category's minimum retention."""
    return age_days < min_retention_days(category=category, cfg=cfg)


def fading_beta(*, layer: object, core: bool, cfg: RetentionSettings) -> float:
    """β (days): ``core`` when the core flag is set, else the layer's."""
    key = "core" if core else layer_name(layer)
    return cfg.beta_days.get(key, cfg.beta_days.get("episodic", 45.0))


def fading_boost(*, importance: float, cfg: RetentionSettings) -> float:
    """``B = min(3, 1 + 2·importance)``."""
    return min(cfg.fading_boost_cap, 1.0 + cfg.fading_importance_boost * clamp(importance))


def fading_floor(*, core: bool, cfg: RetentionSettings) -> float:
    """Floor: 0.60 for core memories, 0.02 otherwise."""
    return cfg.core_floor if core else cfg.regular_floor


def fading_retention(
    *, days: float, stability: float, importance: float, beta_days: float, core: bool, cfg: RetentionSettings
) -> float:
    """``max(floor, exp(-Δt/(S·B·β)))``; ``stability`` on the consolidation design's 0–1 scale."""
    floor = fading_floor(core=core, cfg=cfg)
    if not math.isfinite(beta_days):
        return 1.0
    s = max(stability, cfg.fading_min_stability)
    rate = s * fading_boost(importance=importance, cfg=cfg) * beta_days
    return max(floor, math.exp(-max(0.0, days) / rate))


def precision_for_retention(*, retention: float, cfg: RetentionSettings) -> Precision:
    """R > 0.8 float32, > 0.5 int8, > 0.2 int4, else int2."""
    tiers = cfg.precision_tiers
    if retention > tiers["float32"]:
        return Precision.FLOAT32
    if retention > tiers["int8"]:
        return Precision.INT8
    if retention > tiers["int4"]:
        return Precision.INT4
    return Precision.INT2
