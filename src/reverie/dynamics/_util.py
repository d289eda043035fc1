"""Small numeric and time helpers shared by the dynamics modules (pure)."""

from __future__ import annotations

import math
from datetime import datetime

SECONDS_PER_HOUR = 3600.0
SECONDS_PER_DAY = 86400.0
LN2 = math.log(2.0)


def clamp(value: float, lo: float = 0.0, hi: float = 1.0) -> float:
    """``value`` limited to ``[lo, hi]`` (NaN becomes ``lo``)."""
    if math.isnan(value):
        return lo
    return lo if value < lo else hi if value > hi else value


def sigmoid(x: float) -> float:
    """Overflow-safe logistic function."""
    if x >= 0:
        return 1.0 / (1.0 + math.exp(-x))
    z = math.exp(x)
    return z / (1.0 + z)


def seconds_between(start: datetime, end: datetime) -> float:
    """Seconds from ``start`` to ``end``, never negative (time before ``start`` counts as zero)."""
    return max(0.0, (end - start).total_seconds())


def hours_between(start: datetime, end: datetime) -> float:
    return seconds_between(start, end) / SECONDS_PER_HOUR


def days_between(start: datetime, end: datetime) -> float:
    return seconds_between(start, end) / SECONDS_PER_DAY


def layer_name(layer: object) -> str:
    """The string value of a :class:`~reverie.model.Layer` (or of a plain string)."""
    value = getattr(layer, "value", layer)
    return str(value)


def json_number(value: float) -> float | str:
    """A float that ``json.dumps(..., allow_nan=False)`` accepts: ∞ and NaN become strings."""
    if math.isfinite(value):
        return float(value)
    if math.isnan(value):
        return "nan"
    return "inf" if value > 0 else "-inf"
