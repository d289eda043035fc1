from __future__ import annotations

import math
from datetime import timedelta

import pytest

from reverie.config.dynamics import ActrSettings, DynamicsSettings
from reverie.dynamics import actr

from .conftest import T0


def test_single_access_form_golden(cfg: DynamicsSettings) -> None:
    b = actr.base_level_single(access_count=1, age_seconds=3600, cfg=cfg.actr)
    assert b == pytest.approx(-0.5 * math.log(3600))
    assert actr.activation(base_level=b, cfg=cfg.actr) == pytest.approx(1 / (1 + math.exp(0.5 * math.log(3600))))
    b10 = actr.base_level_single(access_count=10, age_seconds=100, cfg=cfg.actr)
    assert b10 == pytest.approx(math.log(10) - 0.5 * math.log(100))
    # n = 0 counts as 1 (max(n, 1)); age floored at one second
    assert actr.base_level_single(access_count=0, age_seconds=0, cfg=cfg.actr) == 0.0
    assert actr.activation(base_level=0.0, cfg=cfg.actr) == 0.5


def test_full_form_exact_when_log_within_k(cfg: DynamicsSettings) -> None:
    ages = [10.0, 1000.0, 86400.0]
    b = actr.base_level_full(ages_seconds=ages, cfg=cfg.actr, total_accesses=3, lifetime_seconds=90000.0)
    assert b == pytest.approx(math.log(sum(t**-0.5 for t in ages)))


def test_full_form_is_order_independent(cfg: DynamicsSettings) -> None:
    ages = [50.0, 5.0, 500.0, 5000.0]
    a = actr.base_level_full(ages_seconds=ages, cfg=cfg.actr)
    b = actr.base_level_full(ages_seconds=list(reversed(ages)), cfg=cfg.actr)
    assert a == b


def test_petrov_k0_is_the_closed_form() -> None:
    c = ActrSettings(exact_recent=0)
    n, life = 20, 1e6
    b = actr.base_level_full(ages_seconds=[], cfg=c, total_accesses=n, lifetime_seconds=life)
    assert b == pytest.approx(math.log(n / (1 - 0.5)) - 0.5 * math.log(life))


def test_petrov_approximates_evenly_spaced_history() -> None:
    ages = [3600.0 * 24 * i for i in range(1, 101)]  # one access a day for 100 days
    exact = math.log(sum(t**-0.5 for t in ages))
    approx = actr.base_level_full(ages_seconds=ages, cfg=ActrSettings(exact_recent=1), lifetime_seconds=ages[-1])
    assert approx == pytest.approx(exact, abs=0.05)


def test_pruned_log_is_completed_over_lifetime(cfg: DynamicsSettings) -> None:
    full = actr.base_level_full(ages_seconds=[100.0], cfg=cfg.actr, total_accesses=1, lifetime_seconds=1e5)
    more = actr.base_level_full(ages_seconds=[100.0], cfg=cfg.actr, total_accesses=30, lifetime_seconds=1e5)
    assert more > full


def test_no_access_uses_creation(cfg: DynamicsSettings) -> None:
    b = actr.base_level_full(ages_seconds=[], cfg=cfg.actr, lifetime_seconds=400.0)
    assert b == pytest.approx(-0.5 * math.log(400.0))
    with pytest.raises(ValueError):
        actr.base_level_full(ages_seconds=[], cfg=cfg.actr)


def test_ages_from_datetimes_ignores_future() -> None:
    now = T0 + timedelta(hours=1)
    got = actr.ages_seconds(access_times=[T0, now, now + timedelta(seconds=5)], now=now)
    assert got == [3600.0, 0.0]
