from __future__ import annotations

import pytest

from reverie.config.dynamics import DynamicsSettings
from reverie.dynamics import strength


def test_storage_gain_follows_seed_003_spacing(cfg: DynamicsSettings) -> None:
    c = cfg.strength
    assert strength.storage_gain(days_since_last_access=0.0, cfg=c) == pytest.approx(0.05)
    assert strength.storage_gain(days_since_last_access=7.0, cfg=c) == pytest.approx(1.05)
    assert strength.storage_gain(days_since_last_access=10.0, cfg=c) == pytest.approx(0.05 + 10 / 7)
    assert strength.storage_gain(days_since_last_access=30.0, cfg=c) == pytest.approx(2.05)  # factor capped at 2
    assert strength.storage_gain(days_since_last_access=7.0, cfg=c, associative=True) == pytest.approx(0.35)


def test_storage_capped_at_ten_and_never_lowered(cfg: DynamicsSettings) -> None:
    c = cfg.strength
    assert strength.storage_after_retrieval(storage=9.5, days_since_last_access=30, cfg=c) == 10.0
    assert strength.storage_after_retrieval(storage=10.0, days_since_last_access=30, cfg=c) == 10.0
    assert strength.storage_after_retrieval(storage=1.0, days_since_last_access=0, cfg=c) == pytest.approx(1.05)


def test_normalized_storage_is_seed_003_scale(cfg: DynamicsSettings) -> None:
    assert strength.normalized_storage(storage=1.0, cfg=cfg.strength) == pytest.approx(0.1)
    assert strength.normalized_storage(storage=8.5, cfg=cfg.strength) == pytest.approx(0.85)


def test_retrieval_strength_is_fsrs_r(cfg: DynamicsSettings) -> None:
    assert strength.retrieval_strength(elapsed_days=0, stability=3, cfg=cfg.fsrs) == 1.0
    assert strength.retrieval_strength(elapsed_days=3, stability=3, cfg=cfg.fsrs) == pytest.approx(0.9)
