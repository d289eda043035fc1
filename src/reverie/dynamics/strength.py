"""Dual strength: storage 1–10 (never decays), retrieval 0–1 (follows FSRS).

Storage increment per successful retrieval (reverie's design, documented in the settings):
``gain = base + spaced_gain·min(cap, days_since_last_access / 7)`` — the consolidation design's spaced-repetition
boost (0.1·min(2, days/7) on its 0–1 stability scale, i.e. 1.0 on the 1–10 scale) plus a small base
gain so that every retrieval grows storage, capped at ``storage_max`` (10). Associative
retrievals use the smaller associative gain. Storage never decreases.
"""

from __future__ import annotations

from datetime import datetime

from reverie.config.dynamics import DynamicsSettings, FsrsSettings, RetentionSettings, StrengthSettings
from reverie.dynamics import fsrs
from reverie.dynamics import retention as retention_mod
from reverie.dynamics._util import days_between
from reverie.model import MemoryRecord, Status


def spacing_factor(*, days_since_last_access: float, cfg: StrengthSettings) -> float:
    """``min(2, days/7)``."""
    return min(cfg.spacing_cap, max(0.0, days_since_last_access) / cfg.spacing_interval_days)


def storage_gain(*, days_since_last_access: float, cfg: StrengthSettings, associative: bool = False) -> float:
    """The storage increment of one successful retrieval (always > 0)."""
    gain = cfg.storage_associative_gain if associative else cfg.storage_spaced_gain
    return cfg.storage_base_gain + gain * spacing_factor(days_since_last_access=days_since_last_access, cfg=cfg)


def storage_after_retrieval(
    *, storage: float, days_since_last_access: float, cfg: StrengthSettings, associative: bool = False
) -> float:
    """Storage strength after a successful retrieval, within [storage, storage_max]."""
    start = min(max(storage, cfg.storage_min), cfg.storage_max)
    grown = start + storage_gain(days_since_last_access=days_since_last_access, cfg=cfg, associative=associative)
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


#: metadata key of a memory's last rehearsal (the dream's testing-effect step): a simulated successful
#: retrieval, from which its category decay runs again
REHEARSAL_MARK = "rehearsed_at"


def decayed_retrieval_strength(
    *,
    elapsed_days: float,
    stability: float,
    category: str,
    layer: object,
    fsrs_cfg: FsrsSettings,
    retention_cfg: RetentionSettings,
    dormant: bool = False,
    category_days: float | None = None,
) -> float:
    """The retrieval strength the engine applies: FSRS retrievability since the last access times the
    category decay scaled by the layer's tier multiplier, ``R·exp(-rate(category)·multiplier(layer)·days)``
    (no decay for preferences, entities and corrections; working ×10, episodic ×3, semantic ×1; a dormant
    memory's category decay is frozen). ``category_days`` (default ``elapsed_days``) is the time since the
    last access or rehearsal. 1.0 right after an access."""
    r = fsrs.retrievability(elapsed_days=elapsed_days, stability=stability, cfg=fsrs_cfg)
    days = elapsed_days if category_days is None else category_days
    return r * retention_mod.category_strength(
        category=category, layer=layer, days=days, cfg=retention_cfg, dormant=dormant
    )


def rehearsed_at(record: MemoryRecord) -> datetime | None:
    """When the dream last rehearsed ``record`` (``None``: never, or an unreadable mark)."""
    value = record.metadata.get(REHEARSAL_MARK) if isinstance(record.metadata, dict) else None
    if not isinstance(value, str):
        return None
    try:
        return datetime.fromisoformat(value)
    except ValueError:
        return None


def retrieval_strength_of(
    record: MemoryRecord, *, now: datetime, cfg: DynamicsSettings, stability: float | None = None
) -> float:
    """:func:`decayed_retrieval_strength` of a record at ``now``: FSRS from the last access (else creation),
    the category decay from the later of the last access and the last rehearsal."""
    last = record.last_accessed_at or record.created_at
    rehearsed = rehearsed_at(record)
    since = days_between(last, now)
    category_days = since if rehearsed is None or rehearsed <= last else days_between(rehearsed, now)
    return decayed_retrieval_strength(
        elapsed_days=since,
        stability=record.stability if stability is None else stability,
        category=record.category,
        layer=record.layer,
        fsrs_cfg=cfg.fsrs,
        retention_cfg=cfg.retention,
        dormant=record.status == Status.DORMANT,
        category_days=category_days,
    )
