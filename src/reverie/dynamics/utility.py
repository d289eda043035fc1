"""Utility: update on use, drift to the 0.5 prior, weighted score."""

from __future__ import annotations

import math
from datetime import datetime

from reverie.config.dynamics import UtilitySettings
from reverie.dynamics._util import clamp, days_between


def utility_after_use(*, utility: float, success: bool, cfg: UtilitySettings) -> float:
    """``u + α·(target - u)``, target 1 on success and 0 on failure (α = 0.1)."""
    target = 1.0 if success else 0.0
    return clamp(utility + cfg.alpha * (target - utility))


def drifted_utility(*, utility: float, days: float, cfg: UtilitySettings) -> float:
    """``u + (0.5 - u)·(1 - exp(-0.01·days))`` (never overshoots the prior)."""
    return utility + (cfg.prior - utility) * (1.0 - math.exp(-cfg.drift_rate * max(0.0, days)))


def utility_at(*, utility: float, updated_at: datetime, now: datetime, cfg: UtilitySettings) -> float:
    """Utility now, drifted lazily from its last update."""
    return drifted_utility(utility=utility, days=days_between(updated_at, now), cfg=cfg)


def retrieval_score(*, semantic: float, utility: float, importance: float, cfg: UtilitySettings) -> float:
    """``0.6·semantic + 0.2·utility + 0.2·importance``."""
    return cfg.w_semantic * semantic + cfg.w_utility * utility + cfg.w_importance * importance


def floating_threshold(*, total_accesses: float, count: int) -> float:
    """The pruning threshold that floats with use (BCM theory's sliding threshold, as the Cognitive Memory
    design prunes): the average access count of the memories considered (0 when there are none)."""
    return total_accesses / count if count > 0 else 0.0


def prunable_by_use(*, access_count: int, threshold: float) -> bool:
    """Whether a memory is used at most as much as the average one (``threshold``), so that forgetting by
    disuse may take it; a memory used more than average is spared."""
    return access_count <= threshold
