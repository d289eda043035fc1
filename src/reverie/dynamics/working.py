"""Working memory: eviction score, capacity 9, promotion candidates.

Recency: ``exp(-ln2·age_min/30)`` (a true 30-minute half-life).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from datetime import datetime

from reverie.config.dynamics import WorkingMemorySettings
from reverie.dynamics._util import LN2, seconds_between


def recency(*, age_minutes: float, cfg: WorkingMemorySettings) -> float:
    """``exp(-ln2·age_min/30)``."""
    return math.exp(-LN2 * max(0.0, age_minutes) / cfg.half_life_minutes)


def eviction_score(
    *,
    importance: float,
    access_count: int,
    last_accessed_at: datetime,
    now: datetime,
    cfg: WorkingMemorySettings,
) -> float:
    """``importance · recency · (1 + 0.1·accessCount)`` — the lowest score is evicted first."""
    age_min = seconds_between(last_accessed_at, now) / 60.0
    return importance * recency(age_minutes=age_min, cfg=cfg) * (1.0 + cfg.access_weight * access_count)


def evictions(*, scores: Mapping[str, float], cfg: WorkingMemorySettings) -> list[str]:
    """Ids to evict so that at most ``max_items`` remain (lowest score first; ties by id)."""
    excess = len(scores) - cfg.max_items
    if excess <= 0:
        return []
    ranked = sorted(scores.items(), key=lambda kv: (kv[1], kv[0]))
    return [key for key, _ in ranked[:excess]]


def is_promotion_candidate(*, access_count: int, importance: float, cfg: WorkingMemorySettings) -> bool:
    """AccessCount >= 2 OR importance >= 0.6."""
    return access_count >= cfg.promote_accesses or importance >= cfg.promote_importance
