from __future__ import annotations

import math

import pytest

from reverie.config.dynamics import DynamicsSettings, RetentionSettings
from reverie.dynamics import retention as rt
from reverie.model import Precision


def test_l2_half_at_half_life() -> None:
    assert rt.l2_retention(age_days=30, half_life_days=30) == pytest.approx(0.5)
    assert rt.l2_retention(age_days=1e6, half_life_days=math.inf) == 1.0


def test_huber_golden() -> None:
    hl = 30.0
    assert rt.huber_retention(age_days=10, half_life_days=hl) == pytest.approx(
        rt.l2_retention(age_days=10, half_life_days=hl)
    )
    r0 = 2**-0.5
    assert rt.huber_retention(age_days=hl, half_life_days=hl) == pytest.approx(r0 * (1 - math.log(2) / 2))
    assert rt.huber_retention(age_days=200, half_life_days=hl) == 0.0


def test_elastic_golden() -> None:
    assert rt.elastic_retention(age_days=30, half_life_days=30) == pytest.approx(0.3 * 0.5 + 0.7 * 0.5)
    assert rt.elastic_retention(age_days=90, half_life_days=30) == pytest.approx(0.7 * 0.125)


def test_access_reinforcement_capped(cfg: DynamicsSettings) -> None:
    assert rt.access_reinforcement(access_count=1, cfg=cfg.retention) == pytest.approx(0.05 * math.log(2))
    assert rt.access_reinforcement(access_count=10**6, cfg=cfg.retention) == 0.3
    assert rt.retention(age_days=0, half_life_days=30, access_count=50, cfg=cfg.retention) == 1.0


def test_default_mode_is_huber(cfg: DynamicsSettings) -> None:
    assert cfg.retention.mode == "huber"
    got = rt.retention(age_days=30, half_life_days=30, access_count=0, cfg=cfg.retention)
    assert got == pytest.approx(rt.huber_retention(age_days=30, half_life_days=30))
    with pytest.raises(ValueError, match="unknown retention mode"):
        rt.retention(age_days=1, half_life_days=30, access_count=0, cfg=cfg.retention, mode="l3")


@pytest.mark.parametrize(
    ("source", "half_life"),
    [
        ("human", 30.0),
        ("ai", 30 / 1.6),
        ("interaction", 30 / 1.8),
        ("ingest", 15.0),
        ("code_scan", 15.0),
        ("dream", 30 / 2.2),
    ],
)
def test_trust_weighted_half_life(cfg: DynamicsSettings, source: str, half_life: float) -> None:
    trust = rt.source_trust(source=source, cfg=cfg.retention)
    assert rt.layer_half_life(layer="episodic", trust=trust, cfg=cfg.retention) == pytest.approx(half_life)


def test_zero_trust_decays_three_times_faster(cfg: DynamicsSettings) -> None:
    assert rt.trust_half_life(half_life_days=30, trust=0.0, cfg=cfg.retention) == pytest.approx(10.0)
    assert rt.source_trust(source="unknown", cfg=cfg.retention) == 0.5
    assert rt.layer_half_life(layer="semantic", trust=0.4, cfg=cfg.retention) == math.inf


def test_category_decay_and_pahf(cfg: DynamicsSettings) -> None:
    c = cfg.retention
    assert rt.category_strength(category="fact", layer="semantic", days=100, cfg=c) == pytest.approx(math.exp(-0.5))
    assert rt.category_strength(category="fact", layer="episodic", days=100, cfg=c) == pytest.approx(math.exp(-1.5))
    assert rt.category_strength(category="other", layer="working", days=1, cfg=c) == pytest.approx(math.exp(-0.5))
    assert rt.category_strength(category="preference", layer="working", days=1000, cfg=c) == 1.0
    assert rt.category_strength(category="other", layer="episodic", days=1000, cfg=c, dormant=True) == 1.0
    assert rt.category_decay_rate(category="whatever", cfg=c) == 0.05
    assert [rt.pahf_multiplier(layer=x, cfg=c) for x in ("working", "episodic", "semantic")] == [10, 3, 1]


@pytest.mark.parametrize(
    ("category", "days", "protected"),
    [("correction", 10_000, True), ("preference", 10_000, True), ("entity", 10_000, True), ("decision", 44.9, True),
     ("decision", 45, False), ("fact", 13, True), ("fact", 14, False), ("other", 6.9, True), ("misc", 7, False)],
)  # fmt: skip
def test_min_retention(cfg: DynamicsSettings, category: str, days: float, protected: bool) -> None:
    assert rt.within_min_retention(category=category, age_days=days, cfg=cfg.retention) is protected


def test_seed_003_worked_example(cfg: DynamicsSettings) -> None:
    """Seed 003's docs: S 0.3, importance 0.7, semantic β 120 → 0.707 at 30 days, 0.124 at 180, core 0.60."""
    c = cfg.retention
    beta = rt.fading_beta(layer="semantic", core=False, cfg=c)
    assert beta == 120.0
    assert rt.fading_boost(importance=0.7, cfg=c) == pytest.approx(2.4)
    r30 = rt.fading_retention(days=30, stability=0.3, importance=0.7, beta_days=beta, core=False, cfg=c)
    assert r30 == pytest.approx(0.707, abs=5e-4)
    r180 = rt.fading_retention(days=180, stability=0.3, importance=0.7, beta_days=beta, core=False, cfg=c)
    assert r180 == pytest.approx(0.124, abs=1e-3)  # the seed rounds exp(-2.083)
    core_beta = rt.fading_beta(layer="semantic", core=True, cfg=c)
    assert rt.fading_retention(days=180, stability=0.3, importance=0.7, beta_days=core_beta, core=True, cfg=c) == 0.6
    assert rt.fading_retention(days=1e5, stability=0.3, importance=0.7, beta_days=beta, core=False, cfg=c) == 0.02
    procedural = rt.fading_beta(layer="procedural", core=False, cfg=c)
    assert rt.fading_retention(days=1e5, stability=0.1, importance=0, beta_days=procedural, core=False, cfg=c) == 1.0


@pytest.mark.parametrize(
    ("r", "p"),
    [(0.81, Precision.FLOAT32), (0.8, Precision.INT8), (0.51, Precision.INT8), (0.5, Precision.INT4),
     (0.21, Precision.INT4), (0.2, Precision.INT2), (0.0, Precision.INT2)],
)  # fmt: skip
def test_precision_tiers(cfg: DynamicsSettings, r: float, p: Precision) -> None:
    assert rt.precision_for_retention(retention=r, cfg=cfg.retention) is p


def test_retention_settings_validation() -> None:
    with pytest.raises(ValueError, match="'other'"):
        RetentionSettings(category_decay={"fact": 0.1})
