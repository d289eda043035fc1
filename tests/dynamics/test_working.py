from __future__ import annotations

import math
from datetime import timedelta

import pytest

from reverie.config.dynamics import DynamicsSettings
from reverie.dynamics import working

from .conftest import T0


def test_recency_is_a_true_half_life(cfg: DynamicsSettings) -> None:
    assert working.recency(age_minutes=30, cfg=cfg.working) == pytest.approx(0.5)
    assert working.recency(age_minutes=60, cfg=cfg.working) == pytest.approx(0.25)


def test_eviction_score_golden(cfg: DynamicsSettings) -> None:
    got = working.eviction_score(
        importance=0.8, access_count=2, last_accessed_at=T0, now=T0 + timedelta(minutes=30), cfg=cfg.working
    )
    assert got == pytest.approx(0.8 * 0.5 * 1.2)
    fresh = working.eviction_score(importance=0.5, access_count=0, last_accessed_at=T0, now=T0, cfg=cfg.working)
    assert fresh == 0.5
    assert math.isfinite(fresh)


def test_capacity_nine(cfg: DynamicsSettings) -> None:
    scores = {f"m{i}": i / 10 for i in range(11)}
    assert working.evictions(scores=scores, cfg=cfg.working) == ["m0", "m1"]
    assert working.evictions(scores={"a": 0.1}, cfg=cfg.working) == []
    tied = {f"m{i}": 0.5 for i in range(10)}
    assert working.evictions(scores=tied, cfg=cfg.working) == ["m0"]


def test_promotion_candidate(cfg: DynamicsSettings) -> None:
    assert working.is_promotion_candidate(access_count=2, importance=0.1, cfg=cfg.working)
    assert working.is_promotion_candidate(access_count=0, importance=0.6, cfg=cfg.working)
    assert not working.is_promotion_candidate(access_count=1, importance=0.59, cfg=cfg.working)
