"""FSRS-6 against the reference scheduler (py-fsrs, test oracle only) and the seed's curve."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from fsrs import Card, Rating, Scheduler, State

from reverie.config.dynamics import DynamicsSettings, FsrsSettings
from reverie.dynamics import fsrs

T = datetime(2025, 1, 1, tzinfo=UTC)
REF = Scheduler(enable_fuzzing=False)


@pytest.mark.parametrize("t", [0, 1, 3, 7, 30, 100, 365])
@pytest.mark.parametrize("s", [0.5, 2.3065, 10.0, 75.0])
def test_retrievability_matches_reference(cfg: DynamicsSettings, t: int, s: float) -> None:
    card = Card(state=State.Review, stability=s, difficulty=5.0, last_review=T)
    expected = REF.get_card_retrievability(card, T + timedelta(days=t))
    assert fsrs.retrievability(elapsed_days=t, stability=s, cfg=cfg.fsrs) == pytest.approx(expected, rel=1e-12)


def test_canonical_r_at_stability_is_0_9(cfg: DynamicsSettings) -> None:
    assert fsrs.retrievability(elapsed_days=12.5, stability=12.5, cfg=cfg.fsrs) == pytest.approx(0.9)


def test_seed_001_curve_named_option() -> None:
    seed = FsrsSettings(curve="simple_power")
    assert fsrs.retrievability(elapsed_days=4.0, stability=4.0, cfg=seed) == pytest.approx(0.81)
    assert fsrs.retrievability_simple_power(elapsed_days=9.0, stability=1.0) == pytest.approx(0.25)


STATES = [(2.3065, 2.118), (5.0, 5.0), (10.0, 7.5), (40.0, 3.0), (0.8, 9.5)]


@pytest.mark.parametrize(("s", "d"), STATES)
@pytest.mark.parametrize("days", [1, 2, 5, 20, 90])
@pytest.mark.parametrize("rating", [Rating.Again, Rating.Hard, Rating.Good, Rating.Easy])
def test_review_matches_reference(cfg: DynamicsSettings, s: float, d: float, days: int, rating: Rating) -> None:
    card = Card(state=State.Review, stability=s, difficulty=d, last_review=T, due=T)
    ref, _ = REF.review_card(card, rating, T + timedelta(days=days))
    got = fsrs.review(stability=s, difficulty=d, elapsed_days=days, rating=fsrs.Rating(int(rating)), cfg=cfg.fsrs)
    assert got.stability == pytest.approx(ref.stability, rel=1e-9)
    assert got.difficulty == pytest.approx(ref.difficulty, rel=1e-9)


@pytest.mark.parametrize(("s", "d"), STATES)
@pytest.mark.parametrize("rating", [Rating.Again, Rating.Good])
def test_same_day_review_matches_reference(cfg: DynamicsSettings, s: float, d: float, rating: Rating) -> None:
    card = Card(state=State.Review, stability=s, difficulty=d, last_review=T, due=T)
    ref, _ = REF.review_card(card, rating, T + timedelta(hours=5))
    got = fsrs.review(stability=s, difficulty=d, elapsed_days=5 / 24, rating=fsrs.Rating(int(rating)), cfg=cfg.fsrs)
    assert got.stability == pytest.approx(ref.stability, rel=1e-9)
    assert got.difficulty == pytest.approx(ref.difficulty, rel=1e-9)


@pytest.mark.parametrize("rating", [Rating.Again, Rating.Hard, Rating.Good, Rating.Easy])
def test_first_review_matches_reference(cfg: DynamicsSettings, rating: Rating) -> None:
    ref, _ = REF.review_card(Card(), rating, T)
    got = fsrs.first_review(rating=fsrs.Rating(int(rating)), cfg=cfg.fsrs)
    assert got.stability == pytest.approx(ref.stability)
    assert got.difficulty == pytest.approx(ref.difficulty)


def test_reference_review_sequence(cfg: DynamicsSettings) -> None:
    """A whole schedule of Good reviews (as reverie treats accesses) tracks the reference."""
    card, _ = REF.review_card(Card(), Rating.Good, T)
    card, _ = REF.review_card(card, Rating.Good, T + timedelta(minutes=10))  # leaves learning
    s, d = card.stability, card.difficulty
    assert s is not None and d is not None
    t = T + timedelta(minutes=10)
    for gap in (3, 7, 1, 15, 40, 2):
        t += timedelta(days=gap)
        card, _ = REF.review_card(card, Rating.Good, t)
        s, d, _r = fsrs.review(stability=s, difficulty=d, elapsed_days=gap, rating=fsrs.Rating.GOOD, cfg=cfg.fsrs)
        assert s == pytest.approx(card.stability, rel=1e-9)
        assert d == pytest.approx(card.difficulty, rel=1e-9)


@pytest.mark.parametrize("s", [1.0, 3.7, 25.0, 300.0])
def test_next_interval_matches_reference(cfg: DynamicsSettings, s: float) -> None:
    assert max(1, round(fsrs.next_interval_days(stability=s, cfg=cfg.fsrs))) == REF._next_interval(stability=s)
    assert fsrs.next_interval_days(stability=s, cfg=cfg.fsrs) == pytest.approx(s)  # R = 0.9 at t = S


def test_w20_changes_the_curve_but_keeps_r_at_s() -> None:
    c = FsrsSettings(w20=0.5)
    assert fsrs.retrievability(elapsed_days=10, stability=10, cfg=c) == pytest.approx(0.9)
    ref = Scheduler(parameters=c.params, enable_fuzzing=False)
    card = Card(state=State.Review, stability=10.0, difficulty=5.0, last_review=T)
    assert fsrs.retrievability(elapsed_days=50, stability=10, cfg=c) == pytest.approx(
        ref.get_card_retrievability(card, T + timedelta(days=50))
    )


def test_rehearsal_constants(cfg: DynamicsSettings) -> None:
    assert (cfg.fsrs.rehearsal_threshold, cfg.fsrs.rehearsal_boost) == (0.3, 1.5)
