from __future__ import annotations

import math
from datetime import timedelta

import pytest

from reverie.config.dynamics import DynamicsSettings
from reverie.dynamics import utility

from .conftest import T0


def test_update_on_use(cfg: DynamicsSettings) -> None:
    assert utility.utility_after_use(utility=0.5, success=True, cfg=cfg.utility) == pytest.approx(0.55)
    assert utility.utility_after_use(utility=0.5, success=False, cfg=cfg.utility) == pytest.approx(0.45)
    # "a single bad session won't tank a high-utility memory"
    assert utility.utility_after_use(utility=0.9, success=False, cfg=cfg.utility) == pytest.approx(0.81)


def test_drift_to_prior(cfg: DynamicsSettings) -> None:
    assert utility.drifted_utility(utility=1.0, days=100, cfg=cfg.utility) == pytest.approx(0.5 + 0.5 * math.exp(-1))
    assert utility.drifted_utility(utility=0.0, days=10_000, cfg=cfg.utility) == pytest.approx(0.5)
    # identical to the seed's linear form for small gaps (SEED-NOTES 5)
    seed = 1.0 + 0.01 * 1 * (0.5 - 1.0)
    assert utility.drifted_utility(utility=1.0, days=1, cfg=cfg.utility) == pytest.approx(seed, abs=1e-4)
    # the seed's linear form overshoots after 100 days; ours never crosses the prior
    assert 1.0 + 0.01 * 300 * (0.5 - 1.0) < 0.5 < utility.drifted_utility(utility=1.0, days=300, cfg=cfg.utility)


def test_utility_at(cfg: DynamicsSettings) -> None:
    got = utility.utility_at(utility=0.9, updated_at=T0, now=T0 + timedelta(days=50), cfg=cfg.utility)
    assert got == pytest.approx(0.9 + (0.5 - 0.9) * (1 - math.exp(-0.5)))


def test_weighted_score(cfg: DynamicsSettings) -> None:
    got = utility.retrieval_score(semantic=0.8, utility=0.5, importance=0.25, cfg=cfg.utility)
    assert got == pytest.approx(0.6 * 0.8 + 0.2 * 0.5 + 0.2 * 0.25)
