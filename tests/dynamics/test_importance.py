from __future__ import annotations

import math

import pytest

from reverie.config.dynamics import DynamicsSettings
from reverie.dynamics import importance


def test_four_channels_golden(cfg: DynamicsSettings) -> None:
    c = cfg.importance
    assert importance.channel_importance(novelty=1, arousal=1, reward=1, attention=1, cfg=c) == pytest.approx(1.0)
    got = importance.channel_importance(novelty=0.5, arousal=1.0, reward=0.0, attention=0.5, cfg=c)
    assert got == pytest.approx(0.25 * 0.5 + 0.30 + 0.20 * 0.5)
    boosted = importance.channel_importance(novelty=0.5, arousal=1.0, reward=0.0, attention=0.5, cfg=c, boost=2.0)
    assert boosted == pytest.approx(0.525 * 1.3)  # boost limited to 1.3
    damped = importance.channel_importance(novelty=0.5, arousal=1.0, reward=0.0, attention=0.5, cfg=c, boost=0.1)
    assert damped == pytest.approx(0.525 * 0.7)


@pytest.mark.parametrize(
    ("value", "level"), [(0.8, "critical"), (0.79, "high"), (0.6, "high"), (0.4, "normal"), (0.39, "low")]
)
def test_priority_levels(cfg: DynamicsSettings, value: float, level: str) -> None:
    assert importance.priority_level(importance=value, cfg=cfg.importance) == level


def test_seed_004_levels(cfg: DynamicsSettings) -> None:
    assert importance.level_importance(level="normal", cfg=cfg.importance) == 0.5
    with pytest.raises(ValueError, match="unknown importance level"):
        importance.level_importance(level="meh", cfg=cfg.importance)


def test_nine_factor_golden(cfg: DynamicsSettings) -> None:
    c = cfg.importance
    f = importance.nine_factors(
        base=0.6,
        access_count=4,
        age_days=30.0,
        valence=-0.5,
        span_days=9.0,
        layer="semantic",
        trust=0.7,
        confirmations=2,
        actr_activation=0.4,
        cfg=c,
    )
    assert f == pytest.approx(
        {
            "base": 0.6,
            "access": 0.1 * math.log(5),
            "recency": 0.5,
            "emotion": 0.15,
            "stability": 0.4,
            "layer": 0.3,
            "trust": 0.7,
            "confirmations": 0.05 * math.log(3),
            "actr": 0.4,
        }
    )
    source = 0.25 * 0.6 + 0.12 * f["access"] + 0.12 * 0.5 + 0.08 * 0.15 + 0.08 * 0.4 + 0.15 * 0.3 + 0.10 * 0.7
    source += 0.10 * f["confirmations"]
    expected = (source + 0.10 * 0.4) / 1.10  # ACT-R added, then renormalised
    assert importance.nine_factor_importance(factors=f, cfg=c) == pytest.approx(expected)


def test_nine_factor_caps(cfg: DynamicsSettings) -> None:
    f = importance.nine_factors(
        base=1.0,
        access_count=10**6,
        age_days=0.0,
        valence=1.0,
        span_days=0.0,
        layer="episodic",
        trust=1.0,
        confirmations=10**6,
        actr_activation=1.0,
        cfg=cfg.importance,
    )
    assert f["access"] == 1.0 and f["confirmations"] == 0.2 and f["stability"] == 1.0 and f["layer"] == 0.1
    assert f["emotion"] == pytest.approx(0.3)
