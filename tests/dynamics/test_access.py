from __future__ import annotations

import json
import math
from datetime import timedelta
from typing import Any

import pytest

from reverie.config.dynamics import DynamicsSettings
from reverie.dynamics import access, current_values, explain_strength, fsrs, on_access, on_feedback
from reverie.model import Layer, MemoryRecord

from .conftest import T0


def new(cfg: DynamicsSettings, **kw: Any) -> MemoryRecord:
    r = MemoryRecord(content="the API uses JWT tokens", created_at=T0, **kw)
    return r.copy(**access.initial_values(r, now=T0, cfg=cfg))


def test_initial_values(cfg: DynamicsSettings) -> None:
    r = new(cfg, source="human")
    assert r.energy == 1.0 and r.energy_updated_at == T0
    assert r.stability == pytest.approx(2.3065) and r.difficulty == pytest.approx(fsrs.initial_difficulty(
        rating=fsrs.Rating.GOOD, cfg=cfg.fsrs))  # fmt: skip
    assert (r.storage_strength, r.retrieval_strength, r.utility, r.trust, r.access_count) == (1.0, 1.0, 0.5, 1.0, 0)
    fb = new(cfg, emotion_arousal=0.9, importance=0.2)
    assert fb.flashbulb and fb.pinned and fb.importance == 0.9 and fb.stability == pytest.approx(2.3065 * 1.5)


def test_on_access_updates(cfg: DynamicsSettings) -> None:
    r = new(cfg, layer=Layer.EPISODIC)
    now = T0 + timedelta(days=3)
    upd = on_access(r, now=now, cfg=cfg)
    assert upd["energy"] == pytest.approx(math.exp(-0.05 * 72) + 1.0)
    assert upd["energy_updated_at"] == now == upd["last_accessed_at"]
    expected = fsrs.review(stability=r.stability, difficulty=r.difficulty, elapsed_days=3, rating=fsrs.Rating.GOOD,
                           cfg=cfg.fsrs)  # fmt: skip
    assert (upd["stability"], upd["difficulty"]) == pytest.approx((expected.stability, expected.difficulty))
    assert upd["retrieval_strength"] == 1.0
    assert upd["storage_strength"] == pytest.approx(1.0 + 0.05 + 3 / 7)
    assert upd["access_count"] == 1
    assert "utility" not in upd
    assert r.access_count == 0  # the record itself is untouched


def test_on_access_with_success_and_feedback(cfg: DynamicsSettings) -> None:
    r = new(cfg)
    upd = on_access(r, now=T0 + timedelta(days=10), cfg=cfg, success=False)
    assert upd["utility"] == pytest.approx(0.45)  # the prior does not drift
    hi = r.copy(utility=0.9)
    fb = on_feedback(hi, useful=True, now=T0 + timedelta(days=100), cfg=cfg)
    drifted = 0.5 + 0.4 * math.exp(-1.0)
    assert fb == {
        "utility": pytest.approx(drifted + 0.1 * (1 - drifted)),
        "utility_updated_at": T0 + timedelta(days=100),
    }


def test_same_day_accesses_use_short_term_fsrs(cfg: DynamicsSettings) -> None:
    r = new(cfg)
    upd = on_access(r, now=T0 + timedelta(hours=2), cfg=cfg)
    assert upd["stability"] == pytest.approx(fsrs.short_term_stability(stability=r.stability, rating=fsrs.Rating.GOOD,
                                                                       cfg=cfg.fsrs))  # fmt: skip


def test_explain_is_json_and_complete(cfg: DynamicsSettings) -> None:
    r = new(cfg, layer=Layer.SEMANTIC)
    times = [T0 + timedelta(days=d) for d in (1, 2, 5)]
    for t in times:
        r = access.apply(r, on_access(r, now=t, cfg=cfg))
    ex = explain_strength(r, now=T0 + timedelta(days=30), cfg=cfg, access_times=times)
    json.dumps(ex, allow_nan=False)
    expected_keys = {
        "energy", "retrievability", "retrieval_strength", "storage_strength", "stability", "difficulty",
        "retention", "retention_l2", "retention_huber", "retention_elastic", "fading_retention",
        "category_strength", "min_retention", "precision", "actr_single", "actr_full", "utility",
        "importance", "priority_level", "importance_9factor", "heat", "decay_score", "tier_value",
        "confidence_tier", "lifecycle_state", "working_eviction_score", "promotion", "at",
    }  # fmt: skip
    assert expected_keys <= set(ex)
    for entry in ex.values():
        assert set(entry) == {"value", "formula", "terms"}
    assert ex["energy"]["terms"]["hours"] == pytest.approx(25 * 24)
    assert ex["retention_l2"]["terms"]["hl"] == "inf"  # semantic memories do not decay (infinite half-life)
    vals = current_values(r, now=T0 + timedelta(days=30), cfg=cfg, access_times=times)
    assert vals["energy"] == pytest.approx(r.energy * math.exp(-0.001 * 25 * 24))
    assert vals["retrievability"] == pytest.approx(
        fsrs.retrievability(elapsed_days=25, stability=r.stability, cfg=cfg.fsrs)
    )
    assert vals["priority_level"] == "normal" and vals["confidence_tier"] == "explicit"
    day = 86400.0
    b = math.log(sum((d * day) ** -0.5 for d in (29, 28, 25)))
    assert vals["actr_full"] == pytest.approx(1 / (1 + math.exp(-b)))
    b1 = math.log(3) - 0.5 * math.log(25 * day)
    assert vals["actr_single"] == pytest.approx(1 / (1 + math.exp(-b1)))
