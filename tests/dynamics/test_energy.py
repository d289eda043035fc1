from __future__ import annotations

import math
from datetime import timedelta

import pytest

from reverie.config.dynamics import DynamicsSettings
from reverie.dynamics import energy

from .conftest import T0


def test_decay_constants_per_layer(cfg: DynamicsSettings) -> None:
    assert energy.decay_rate(layer="working", cfg=cfg.energy) == 0.5
    assert energy.decay_rate(layer="episodic", cfg=cfg.energy) == 0.05
    assert energy.decay_rate(layer="semantic", cfg=cfg.energy) == 0.001
    with pytest.raises(ValueError, match="unknown layer"):
        energy.decay_rate(layer="dormant", cfg=cfg.energy)


@pytest.mark.parametrize(
    ("layer", "hours", "expected"),
    [
        ("working", 2.0, math.exp(-1.0)),
        ("episodic", 10.0, math.exp(-0.5)),
        ("semantic", 1000.0, math.exp(-1.0)),
        ("working", 0.5, math.exp(-0.25)),  # fractional hours (SEED-NOTES 3)
    ],
)
def test_energy_golden(cfg: DynamicsSettings, layer: str, hours: float, expected: float) -> None:
    got = energy.energy_at(energy=1.0, updated_at=T0, now=T0 + timedelta(hours=hours), layer=layer, cfg=cfg.energy)
    assert got == pytest.approx(expected)


def test_access_adds_one_after_lazy_decay(cfg: DynamicsSettings) -> None:
    got = energy.energy_after_access(
        energy=2.0, updated_at=T0, now=T0 + timedelta(hours=2), layer="working", cfg=cfg.energy
    )
    assert got == pytest.approx(2.0 * math.exp(-1.0) + 1.0)


def test_lazy_decay_never_compounds(cfg: DynamicsSettings) -> None:
    """Reading energy twice from the same anchor gives the single-decay value (no compounding)."""
    t1, t2 = T0 + timedelta(hours=3), T0 + timedelta(hours=7)
    once = energy.energy_at(energy=4.0, updated_at=T0, now=t2, layer="episodic", cfg=cfg.energy)
    energy.energy_at(energy=4.0, updated_at=T0, now=t1, layer="episodic", cfg=cfg.energy)  # a read changes nothing
    assert once == pytest.approx(4.0 * math.exp(-0.05 * 7))
    chained = energy.energy_at(
        energy=energy.energy_at(energy=4.0, updated_at=T0, now=t1, layer="episodic", cfg=cfg.energy),
        updated_at=t1,
        now=t2,
        layer="episodic",
        cfg=cfg.energy,
    )
    assert chained == pytest.approx(once)


def test_time_before_anchor_does_not_raise_energy(cfg: DynamicsSettings) -> None:
    got = energy.energy_at(energy=1.0, updated_at=T0, now=T0 - timedelta(hours=5), layer="working", cfg=cfg.energy)
    assert got == 1.0


def test_retroactive_strengthening(cfg: DynamicsSettings) -> None:
    assert energy.retroactive_boost(similarity=0.8, cfg=cfg.energy) == pytest.approx(0.4)
    assert energy.retroactive_boost(similarity=0.7, cfg=cfg.energy) == 0.0  # "> 0.7" is exclusive
    upd = energy.retroactive_update(
        energy=2.0,
        updated_at=T0,
        now=T0 + timedelta(hours=10),
        layer="episodic",
        similarity=0.9,
        reinforcement_count=2,
        cfg=cfg.energy,
    )
    assert upd["energy"] == pytest.approx(2.0 * math.exp(-0.5) + 0.45)
    assert upd["reinforcement_count"] == 3
    assert upd["last_reinforced_at"] == upd["energy_updated_at"] == T0 + timedelta(hours=10)
    # seed 000: only shortTerm/longTerm memories are strengthened
    assert (
        energy.retroactive_update(
            energy=1.0, updated_at=T0, now=T0, layer="working", similarity=0.9, reinforcement_count=0, cfg=cfg.energy
        )
        == {}
    )


def test_thresholds_from_seed_000(cfg: DynamicsSettings) -> None:
    e = cfg.energy
    assert (e.promote_working, e.promote_episodic, e.session_end_threshold, e.working_expiry) == (2.0, 5.0, 1.5, 0.1)
    # a fresh working memory (E0 = 1) expires after ln(10)/0.5 = 4.6 hours without access
    assert energy.hours_until(energy=1.0, threshold=0.1, layer="working", cfg=e) == pytest.approx(math.log(10) / 0.5)
    assert energy.is_working_expired(energy=0.099, cfg=e)
    assert not energy.is_working_expired(energy=0.1, cfg=e)
