"""ACT-R base-level activation, sigmoid-squashed.

* single-access form (the Cognitive Memory design's): ``B = ln(max(n, 1)) - d·ln(age_seconds)``
* full form over the access log: ``B = ln(Σ_j t_j^(-d))`` — the ``k`` most recent accesses exactly,
  older ones (and accesses beyond the log) by Petrov's (2006) hybrid approximation
  ``(n - k)·(t_n^(1-d) - t_k^(1-d)) / ((1 - d)·(t_n - t_k))`` with ``t_n`` the memory's lifetime.
  With ``k = 0`` this is the classic ``ln(n/(1-d)) - d·ln(t_n)``.
* ``activation = 1 / (1 + exp(-(B - offset)/scale))``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from datetime import datetime

from reverie.config.dynamics import ActrSettings
from reverie.dynamics._util import seconds_between, sigmoid


def base_level_single(*, access_count: int, age_seconds: float, cfg: ActrSettings) -> float:
    """``ln(max(n, 1)) - d·ln(age)``, age = seconds since the last access."""
    age = max(age_seconds, cfg.min_age_seconds)
    return math.log(max(access_count, 1)) - cfg.decay * math.log(age)


def petrov_tail(*, count: int, t_k: float, t_n: float, decay: float) -> float:
    """Petrov's approximation of ``Σ t_j^(-d)`` over ``count`` accesses spread over ``[t_k, t_n]``."""
    if count <= 0:
        return 0.0
    if t_n - t_k <= 1e-9:
        return float(count * t_n ** (-decay))
    return float(count * (t_n ** (1.0 - decay) - t_k ** (1.0 - decay)) / ((1.0 - decay) * (t_n - t_k)))


def base_level_full(
    *,
    ages_seconds: Sequence[float],
    cfg: ActrSettings,
    total_accesses: int | None = None,
    lifetime_seconds: float | None = None,
) -> float:
    """ACT-R ``B = ln(Σ t_j^(-d))`` over the access log (ages of the accesses, any order).

    ``total_accesses`` may exceed the log (a pruned log); the missing accesses are approximated
    over the lifetime. With no access at all, the creation counts as the one presentation (as the
    design's ``max(n, 1)``).
    """
    floor = cfg.min_age_seconds
    ages = sorted(max(a, floor) for a in ages_seconds)
    lifetime = max(lifetime_seconds, floor) if lifetime_seconds is not None else None
    n = max(len(ages), total_accesses or 0)
    if n == 0 or (not ages and lifetime is None):
        if lifetime is None:
            raise ValueError("base_level_full needs access ages or the memory's lifetime")
        ages, n = [lifetime], 1
    k = min(cfg.exact_recent, len(ages))
    exact = math.fsum(t ** (-cfg.decay) for t in ages[:k])
    if n > k:
        t_k = ages[k - 1] if k > 0 else 0.0
        candidates = [t_k, *ages[-1:]] + ([lifetime] if lifetime is not None else [])
        t_n = max(candidates)
        exact += petrov_tail(count=n - k, t_k=t_k, t_n=t_n, decay=cfg.decay)
    return math.log(exact)


def activation(*, base_level: float, cfg: ActrSettings) -> float:
    """Sigmoid squash of B into (0, 1)."""
    return sigmoid((base_level - cfg.sigmoid_offset) / cfg.sigmoid_scale)


def ages_seconds(*, access_times: Sequence[datetime], now: datetime) -> list[float]:
    """Ages (seconds before ``now``) of logged accesses; accesses after ``now`` are ignored."""
    return [seconds_between(t, now) for t in access_times if t <= now]
