"""Cross-field checks the settings models share: weights that must sum to a total, values that must descend."""

from __future__ import annotations

import itertools

SUM_TOL = 1e-6


def check_sum(name: str, weights: dict[str, float], target: float = 1.0) -> None:
    total = sum(weights.values())
    if abs(total - target) > SUM_TOL:
        parts = ", ".join(f"{k}={v}" for k, v in weights.items())
        raise ValueError(f"{name} must sum to {target}, got {total:.6g} ({parts})")


def check_descending(name: str, values: dict[str, float]) -> None:
    items = list(values.items())
    bad = [f"{a}={va} <= {b}={vb}" for (a, va), (b, vb) in itertools.pairwise(items) if va <= vb]
    if bad:
        raise ValueError(f"{name} must be strictly descending: " + "; ".join(bad))
