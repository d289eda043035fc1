"""Seed 004 scores: heat, decay score, tier value, confidence tiers, graph-edge confidence."""

from __future__ import annotations

import math
from datetime import timedelta
from typing import Any

import pytest

from reverie.config.dynamics import DynamicsSettings
from reverie.dynamics import lifecycle as lc

from .conftest import T0


@pytest.mark.parametrize(
    ("conf", "tier", "weight"),
    [(1.0, "explicit", 1.0), (0.95, "explicit", 1.0), (0.8, "implied", 0.8), (0.5, "inferred", 0.6),
     (0.39, "speculative", 0.35)],
)  # fmt: skip
def test_confidence_tiers(cfg: DynamicsSettings, conf: float, tier: str, weight: float) -> None:
    assert lc.confidence_tier(confidence=conf, cfg=cfg.lifecycle) == tier
    assert lc.confidence_weight(confidence=conf, cfg=cfg.lifecycle) == weight


def test_heat_golden(cfg: DynamicsSettings) -> None:
    h = lc.heat(confidence=0.8, access_count=6, age_days=20, importance=0.6, cfg=cfg.lifecycle)
    expected = 0.25 * 0.8 + 0.30 * math.log(7) / math.log(21) + 0.20 * (1 - 20 / 90) + 0.15 * 0.6 + 0.10 * 0.5
    assert h == pytest.approx(expected)
    causal = lc.heat(confidence=0.8, access_count=6, age_days=20, importance=0.6, cfg=cfg.lifecycle, causal=1.0)
    assert causal == pytest.approx(expected + 0.05)
    disputed = lc.heat(confidence=0.8, access_count=6, age_days=20, importance=0.6, cfg=cfg.lifecycle, disputed=True)
    assert disputed == pytest.approx(expected - 0.2)
    assert lc.heat(confidence=1, access_count=9, age_days=0, importance=1, cfg=cfg.lifecycle, archived=True) == 0.0
    assert lc.access_weight(access_count=20, cfg=cfg.lifecycle) == pytest.approx(1.0)


def test_decay_score_golden(cfg: DynamicsSettings) -> None:
    d = lc.decay_score(age_days=90, stale_access_days=60, confidence=0.8, heat_score=0.4, cfg=cfg.lifecycle)
    assert d == pytest.approx(0.30 * 0.5 + 0.25 * 0.5 + 0.20 * 0.2 + 0.10 * 0.5 + 0.15 * 0.6)
    assert lc.decay_score(age_days=0, stale_access_days=0, confidence=1, heat_score=1, cfg=cfg.lifecycle,
                          archived=True) == 1.0  # fmt: skip


def test_tier_value_golden(cfg: DynamicsSettings) -> None:
    """The seed 004 reference test memory: confidence 0.8, 6 accesses, last access 20 days ago, importance 0.6."""
    base = 0.24 * 0.8 + 0.26 * math.log(7) / math.log(21) + 0.20 * (1 - 20 / 90) + 0.20 * 0.6 + 0.10 * 0.5
    v = lc.tier_value(confidence=0.8, access_count=6, age_days=20, importance=0.6, cfg=cfg.lifecycle)
    assert v == pytest.approx(base)
    corr = lc.tier_value(confidence=0.8, access_count=6, age_days=20, importance=0.6, cfg=cfg.lifecycle,
                         category="correction", verification_state="user_confirmed")  # fmt: skip
    assert corr == pytest.approx(base + 0.13)
    disp = lc.tier_value(confidence=0.8, access_count=6, age_days=20, importance=0.6, cfg=cfg.lifecycle,
                         verification_state="disputed")  # fmt: skip
    assert disp == pytest.approx(base - 0.1) and disp < v


def test_lifecycle_and_tier_transitions(cfg: DynamicsSettings) -> None:
    c = cfg.lifecycle
    kw: dict[str, Any] = {"verification_state": "unverified", "category": "fact", "policy_class": "durable", "cfg": c}
    assert lc.lifecycle_transition(current_state="active", heat_score=0.1, decay=0.9, **kw)[0] == "archived"
    assert lc.lifecycle_transition(current_state="active", heat_score=0.1, decay=0.7, **kw)[0] == "stale"
    assert lc.lifecycle_transition(current_state="candidate", heat_score=0.6, decay=0.1, **kw)[0] == "validated"
    assert lc.lifecycle_transition(current_state="candidate", heat_score=0.1, decay=0.1, **kw) == (
        "candidate",
        "no_transition",
    )
    protected = {**kw, "category": "preference"}
    assert lc.lifecycle_transition(current_state="active", heat_score=0.1, decay=0.9, **protected)[0] == "stale"
    assert lc.tier_transition(current_store="hot", value=0.3, age_days=14, cfg=c)[0] == "cold"
    assert lc.tier_transition(current_store="hot", value=0.3, age_days=13, cfg=c)[0] == "hot"
    assert lc.tier_transition(current_store="cold", value=0.7, age_days=100, cfg=c)[0] == "hot"


def test_policy_classes(cfg: DynamicsSettings) -> None:
    c = cfg.lifecycle
    base: dict[str, Any] = {"pinned": False, "immutable": False, "flashbulb": False, "category": "fact", "cfg": c}
    assert lc.policy_class(**base, time_bounded=False, confidence=0.9) == "durable"
    assert lc.policy_class(**base, time_bounded=True, confidence=0.9) == "ephemeral"
    assert lc.policy_class(**base, time_bounded=False, confidence=0.3) == "ephemeral"  # speculative
    assert lc.policy_class(**{**base, "pinned": True}, time_bounded=True, confidence=0.3) == "protected"
    assert lc.policy_class(**{**base, "category": "decision"}, time_bounded=True, confidence=0.9) == "protected"
    # how far decay may go: ephemeral memories are archived once stale, durable ones at the archive threshold
    kw: dict[str, Any] = {"verification_state": "unverified", "category": "fact", "cfg": c}
    stale: dict[str, Any] = {
        "current_state": "active",
        "heat_score": 0.1,
        "decay": (c.stale_decay + c.archive_decay) / 2,
    }
    assert lc.lifecycle_transition(**stale, **kw, policy_class="durable")[0] == "stale"
    assert lc.lifecycle_transition(**stale, **kw, policy_class="ephemeral") == (
        "archived",
        "ephemeral_memory_is_archived_when_stale",
    )
    assert lc.lifecycle_transition(**stale, **kw, policy_class="protected")[0] == "stale"
    fresh: dict[str, Any] = {**stale, "decay": c.stale_decay / 2}
    assert lc.lifecycle_transition(**fresh, **kw, policy_class="ephemeral")[0] == "active"


def test_speculative_ttl(cfg: DynamicsSettings) -> None:
    assert lc.speculative_expired(confidence=0.3, age_days=30, confirmed=False, cfg=cfg.lifecycle)
    assert not lc.speculative_expired(confidence=0.3, age_days=29, confirmed=False, cfg=cfg.lifecycle)
    assert not lc.speculative_expired(confidence=0.3, age_days=99, confirmed=True, cfg=cfg.lifecycle)
    assert not lc.speculative_expired(confidence=0.4, age_days=99, confirmed=False, cfg=cfg.lifecycle)


def test_edge_confidence(cfg: DynamicsSettings) -> None:
    c = cfg.lifecycle
    assert lc.reinforce_edge(confidence=0.5, cfg=c) == pytest.approx(0.55)
    assert lc.reinforce_edge(confidence=0.98, cfg=c) == 1.0

    def at(days: float, conf: float = 0.9) -> float:
        return lc.edge_confidence_at(confidence=conf, last_reinforced_at=T0, now=T0 + timedelta(days=days), cfg=c)

    assert at(90) == 0.9  # grace window, boundary inside
    assert at(91) == pytest.approx(0.8)
    assert at(180) == pytest.approx(0.8)  # exactly one window past the grace
    assert at(181) == pytest.approx(0.7)
    assert at(10_000) == pytest.approx(0.1)  # floor
    assert at(10_000, conf=0.05) == 0.05  # never raised up to the floor
    assert lc.edge_traversable(confidence=0.2, cfg=c) and not lc.edge_traversable(confidence=0.19, cfg=c)
