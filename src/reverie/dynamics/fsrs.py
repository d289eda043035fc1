"""FSRS-6 in its canonical form, checked against py-fsrs in the tests.

Forgetting curve ``R = (1 + f·t/S)^(-w20)`` with ``f = 0.9^(-1/w20) - 1`` (R = 0.9 at t = S); the
Cognitive Memory design's ``(1 + t/(9S))^(-1/0.5)`` (R = 0.81 at t = S) is available as ``curve = "simple_power"``.
Stability/difficulty updates follow the reference scheduler (py-fsrs 6) formula by formula; time
is continuous (fractional days) where the reference floors to whole days.
"""

from __future__ import annotations

import math
from enum import IntEnum
from typing import NamedTuple

from reverie.config.dynamics import FsrsSettings


class Rating(IntEnum):
    """FSRS review grades."""

    AGAIN = 1
    HARD = 2
    GOOD = 3
    EASY = 4


class FsrsState(NamedTuple):
    """Memory state after a review: stability (days), difficulty (1–10), R at the review."""

    stability: float
    difficulty: float
    retrievability: float


def curve_decay(*, cfg: FsrsSettings) -> float:
    """``w20`` — the forgetting-curve exponent (positive)."""
    return cfg.params[20]


def curve_factor(*, cfg: FsrsSettings) -> float:
    """``f = 0.9^(-1/w20) - 1`` so that R(t = S) = 0.9."""
    return float(0.9 ** (-1.0 / curve_decay(cfg=cfg)) - 1.0)


def retrievability_fsrs6(*, elapsed_days: float, stability: float, w20: float) -> float:
    """Canonical FSRS-6 retrievability."""
    factor = 0.9 ** (-1.0 / w20) - 1.0
    return float((1.0 + factor * max(0.0, elapsed_days) / stability) ** (-w20))


def retrievability_simple_power(
    *, elapsed_days: float, stability: float, factor: float = 9.0, exponent: float = 2.0
) -> float:
    """The Cognitive Memory design's curve ``(1 + t/(9S))^(-1/0.5)``."""
    return float((1.0 + max(0.0, elapsed_days) / (factor * stability)) ** (-exponent))


def retrievability(*, elapsed_days: float, stability: float, cfg: FsrsSettings) -> float:
    """R after ``elapsed_days`` at ``stability``, on the configured curve."""
    stability = max(stability, cfg.stability_min)
    if cfg.curve == "simple_power":
        return retrievability_simple_power(
            elapsed_days=elapsed_days,
            stability=stability,
            factor=cfg.simple_power_factor,
            exponent=cfg.simple_power_exponent,
        )
    return retrievability_fsrs6(elapsed_days=elapsed_days, stability=stability, w20=curve_decay(cfg=cfg))


def _clamp_d(difficulty: float, cfg: FsrsSettings) -> float:
    return min(max(difficulty, cfg.difficulty_min), cfg.difficulty_max)


def initial_stability(*, rating: Rating, cfg: FsrsSettings) -> float:
    """``S0 = w[rating - 1]``."""
    return max(cfg.params[int(rating) - 1], cfg.stability_min)


def initial_difficulty(*, rating: Rating, cfg: FsrsSettings, clamp: bool = True) -> float:
    """``D0 = w4 - e^(w5·(rating - 1)) + 1``."""
    w = cfg.params
    d = w[4] - math.exp(w[5] * (int(rating) - 1)) + 1.0
    return _clamp_d(d, cfg) if clamp else d


def next_difficulty(*, difficulty: float, rating: Rating, cfg: FsrsSettings) -> float:
    """Linear damping toward 10, then mean reversion toward D0(Easy) with weight w7."""
    w = cfg.params
    delta = -w[6] * (int(rating) - 3)
    damped = difficulty + (10.0 - difficulty) * delta / 9.0
    target = initial_difficulty(rating=Rating.EASY, cfg=cfg, clamp=False)
    return _clamp_d(w[7] * target + (1.0 - w[7]) * damped, cfg)


def next_recall_stability(
    *, difficulty: float, stability: float, retrievability: float, rating: Rating, cfg: FsrsSettings
) -> float:
    """Stability after a successful review (Hard/Good/Easy)."""
    w = cfg.params
    hard_penalty = w[15] if rating == Rating.HARD else 1.0
    easy_bonus = w[16] if rating == Rating.EASY else 1.0
    growth = (
        math.exp(w[8])
        * (11.0 - difficulty)
        * stability ** (-w[9])
        * (math.exp((1.0 - retrievability) * w[10]) - 1.0)
        * hard_penalty
        * easy_bonus
    )
    return max(float(stability * (1.0 + growth)), cfg.stability_min)


def next_forget_stability(*, difficulty: float, stability: float, retrievability: float, cfg: FsrsSettings) -> float:
    """Stability after a lapse (Again): the smaller of the long-term and short-term forms."""
    w = cfg.params
    long_term = (
        w[11] * difficulty ** (-w[12]) * ((stability + 1.0) ** w[13] - 1.0) * math.exp((1.0 - retrievability) * w[14])
    )
    short_term = stability / math.exp(w[17] * w[18])
    return max(float(min(long_term, short_term)), cfg.stability_min)


def short_term_stability(*, stability: float, rating: Rating, cfg: FsrsSettings) -> float:
    """FSRS-6 same-day review: ``S·e^(w17·(G - 3 + w18))·S^(-w19)``, never below S for G >= Hard."""
    w = cfg.params
    increase = math.exp(w[17] * (int(rating) - 3 + w[18])) * stability ** (-w[19])
    if rating != Rating.AGAIN:
        increase = max(increase, 1.0)
    return max(float(stability * increase), cfg.stability_min)


def review(*, stability: float, difficulty: float, elapsed_days: float, rating: Rating, cfg: FsrsSettings) -> FsrsState:
    """One review of a memory already in review state (reference: ``State.Review``).

    ``elapsed_days`` < 1 uses the same-day formula (as the reference, whose whole-day count is 0);
    otherwise the recall/forget formulas with R at ``elapsed_days``.
    """
    stability = max(stability, cfg.stability_min)
    r = retrievability(elapsed_days=elapsed_days, stability=stability, cfg=cfg)
    if cfg.short_term and elapsed_days < 1.0:
        new_s = short_term_stability(stability=stability, rating=rating, cfg=cfg)
    elif rating == Rating.AGAIN:
        new_s = next_forget_stability(difficulty=difficulty, stability=stability, retrievability=r, cfg=cfg)
    else:
        new_s = next_recall_stability(
            difficulty=difficulty, stability=stability, retrievability=r, rating=rating, cfg=cfg
        )
    new_d = next_difficulty(difficulty=difficulty, rating=rating, cfg=cfg)
    return FsrsState(new_s, new_d, r)


def first_review(*, rating: Rating, cfg: FsrsSettings) -> FsrsState:
    """State of a new memory after its first (encoding) review: S0, D0, R = 1."""
    return FsrsState(initial_stability(rating=rating, cfg=cfg), initial_difficulty(rating=rating, cfg=cfg), 1.0)


def next_interval_days(*, stability: float, cfg: FsrsSettings) -> float:
    """Days until R falls to ``desired_retention`` (unrounded; the reference rounds to >= 1 day)."""
    if cfg.curve == "simple_power":
        return float(
            cfg.simple_power_factor * stability * (cfg.desired_retention ** (-1.0 / cfg.simple_power_exponent) - 1)
        )
    decay = -curve_decay(cfg=cfg)
    return float((stability / curve_factor(cfg=cfg)) * (cfg.desired_retention ** (1.0 / decay) - 1.0))
