"""Reciprocal Rank Fusion (Cormack et al. 2009; score = 1 / (K + rank), K = 60)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

RRF_K = 60


@dataclass(slots=True)
class Fused:
    """One fused result: its RRF score and the 1-based rank it had in each channel."""

    id: str
    score: float
    ranks: dict[str, int] = field(default_factory=dict)


def rrf(
    rankings: Mapping[str, Sequence[str]],
    *,
    k: int = RRF_K,
    weights: Mapping[str, float] | None = None,
) -> list[Fused]:
    """Fuse ranked id lists. ``weights`` scale each channel's contribution (per-intent
    vector/FTS weights); a missing weight is 1.0. Ties break by id so the result does not depend
    on the order of the channels."""
    fused: dict[str, Fused] = {}
    for channel, ids in rankings.items():
        w = 1.0 if weights is None else float(weights.get(channel, 1.0))
        seen: set[str] = set()
        rank = 0
        for mid in ids:
            if mid in seen:
                continue
            seen.add(mid)
            rank += 1
            item = fused.get(mid)
            if item is None:
                item = fused[mid] = Fused(mid, 0.0)
            item.score += w / (k + rank)
            item.ranks[channel] = rank
    return sorted(fused.values(), key=lambda f: (-f.score, f.id))


__all__ = ["RRF_K", "Fused", "rrf"]
