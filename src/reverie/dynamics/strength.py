"""Seed 001 dual strength: storage 1–10 (never decays), retrieval 0–1 (follows FSRS).

Storage increment per successful retrieval (reverie's design, documented in the settings):
``gain = base + spaced_gain·min(cap, days_since_last_access / 7)`` — seed 003's spaced-repetition
boost (0.1·min(2, days/7) on its 0–1 stability scale, i.e. 1.0 on the 1–10 scale) plus a small base
gain so that every retrieval grows storage (seed 001), capped at ``storage_max`` (10). Associative
retrievals (seed 003) use the smaller associative gain. Storage never decreases.
"""

from __future__ import annotations

from reverie.config.dynamics import FsrsSettings, RetentionSettings, StrengthSettings
from reverie.dynamics import fsrs
from reverie.dynamics import retention as retention_mod


def spacing_factor(*, days_since_last_access: float, cfg: StrengthSettings) -> float:
    """Seed 003: ``min(2, days/7)``."""
    return min(cfg.spacing_cap, max(0.0, days_since_last_access) / cfg.spacing_interval_days)


def storage_gain(*, days_since_last_access: float, cfg: StrengthSettings, associative: bool = False) -> float:
    """The storage increment of one successful retrieval (always > 0)."""
    gain = cfg.storage_associative_gain if associative else cfg.storage_spaced_gain
    return cfg.storage_base_gain + gain * spacing_factor(
        days_since_last_access=days_since_last_access, cfg=cfg
    )


def storage_after_retrieval(
    *, storage: float, days_since_last_access: float, cfg: StrengthSettings, associative: bool = False
) -> float:
    """Storage strength after a successful retrieval, within [storage, storage_max]."""
    start = min(max(storage, cfg.storage_min), cfg.storage_max)
    grown = start + storage_gain(
        days_since_last_access=days_since_last_access, cfg=cfg, associative=associative
    )
    return max(storage, min(cfg.storage_max, grown))


def normalized_storage(*, storage: float, cfg: StrengthSettings) -> float:
    """Storage on a 0–1 scale: ``storage / storage_max``."""
    return min(1.0, max(0.0, storage / cfg.storage_max))


def fading_stability(*, storage: float, cfg: StrengthSettings, new: float) -> float:
    """The stability ``S`` of the fading retention ``exp(-Δt/(S·B·β))``: ``new`` for a memory never
    recalled (storage at its minimum), rising linearly with storage strength to 1.0 at its maximum."""
    span = cfg.storage_max - cfg.storage_min
    grown = (min(max(storage, cfg.storage_min), cfg.storage_max) - cfg.storage_min) / span
    return new + (1.0 - new) * grown


def retrieval_strength(*, elapsed_days: float, stability: float, cfg: FsrsSettings) -> float:
    """Retrieval strength = FSRS retrievability since the last access (1.0 right after it)."""
    return fsrs.retrievability(elapsed_days=elapsed_days, stability=stability, cfg=cfg)


def decayed_retrieval_strength(
    *,
    elapsed_days: float,
    stability: float,
    category: str,
    layer: object,
    fsrs_cfg: FsrsSettings,
    retention_cfg: RetentionSettings,
    dormant: bool = False,
) -> float:
    """The retrieval strength the engine applies: FSRS retrievability since the last access times the
    category decay scaled by the layer's tier multiplier, ``R·exp(-rate(category)·multiplier(layer)·days)``
    (no decay for preferences, entities and corrections; working ×10, episodic ×3, semantic ×1; a dormant
    memory's category decay is frozen). 1.0 right after an access."""
    r = fsrs.retrievability(elapsed_days=elapsed_days, stability=stability, cfg=fsrs_cfg)
    return r * retention_mod.category_strength(
        category=category, layer=layer, days=elapsed_days, cfg=retention_cfg, dormant=dormant
    )
