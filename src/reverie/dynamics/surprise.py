"""Surprise: mean cosine distance to the k = 5 nearest neighbours.

``surprise = sigmoid(10·(d - 0.35))``; ``importance += (surprise - 0.5)·0.6`` clamped to [0.05, 1];
nearest similarity >= 0.92 flags a duplicate. Takes neighbour similarities, not a store.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from reverie.config.dynamics import ImportanceSettings
from reverie.dynamics._util import clamp, sigmoid


class Surprise(NamedTuple):
    surprise: float
    mean_distance: float
    nearest_similarity: float | None
    is_duplicate: bool
    modifier: float


def surprise(
    *, neighbour_similarities: Sequence[float], cfg: ImportanceSettings, center_shift: float = 0.0
) -> Surprise:
    """Surprise of a new memory given cosine similarities to stored memories (any order, any count).

    ``center_shift`` moves the sigmoid's centre (distance) for an embedder whose cosines run higher or lower
    than the API embedders the centre was set for (the write path passes its similarity profile's shift)."""
    if not neighbour_similarities:
        return Surprise(1.0, 1.0, None, False, cfg.surprise_empty_modifier)
    top = sorted(neighbour_similarities, reverse=True)[: cfg.surprise_k]
    mean_distance = sum(1.0 - s for s in top) / len(top)
    s = sigmoid(cfg.surprise_slope * (mean_distance - (cfg.surprise_center + center_shift)))
    return Surprise(
        surprise=s,
        mean_distance=mean_distance,
        nearest_similarity=top[0],
        is_duplicate=top[0] >= cfg.duplicate_similarity,
        modifier=(s - 0.5) * cfg.surprise_scale,
    )


def adjust_importance(*, importance: float, modifier: float, cfg: ImportanceSettings) -> float:
    """``importance + modifier`` clamped to [0.05, 1]."""
    return clamp(importance + modifier, cfg.importance_floor, cfg.importance_ceiling)
