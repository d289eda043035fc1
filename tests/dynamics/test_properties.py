"""Hypothesis properties: nothing rises while nothing happens, scores stay in bounds, accesses never
lower storage strength, results do not depend on processing order."""

from __future__ import annotations

import random
from datetime import timedelta
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from reverie.config.dynamics import DynamicsSettings, FsrsSettings
from reverie.dynamics import (
    actr,
    current_values,
    energy,
    fsrs,
    importance,
    lifecycle,
    on_access,
    retention,
    surprise,
    utility,
    working,
)
from reverie.model import Layer, MemoryRecord

from .conftest import T0

CFG = DynamicsSettings()
SEED_CFG = FsrsSettings(curve="simple_power")
unit = st.floats(0.0, 1.0)
days = st.floats(0.0, 2000.0)
hours = st.floats(0.0, 5000.0)
layers = st.sampled_from([x.value for x in Layer])
pos = st.floats(0.01, 500.0)


@given(e0=st.floats(0.0, 100.0), layer=layers, h1=hours, dh=hours)
def test_energy_never_rises_without_access(e0: float, layer: str, h1: float, dh: float) -> None:
    a = energy.energy_at(energy=e0, updated_at=T0, now=T0 + timedelta(hours=h1), layer=layer, cfg=CFG.energy)
    b = energy.energy_at(energy=e0, updated_at=T0, now=T0 + timedelta(hours=h1 + dh), layer=layer, cfg=CFG.energy)
    assert 0.0 <= b <= a <= e0


@given(t=days, dt=days, s=pos, hl=st.floats(0.1, 1e4), n=st.integers(0, 10**6), trust=unit)
def test_retention_never_rises_without_access(t: float, dt: float, s: float, hl: float, n: int, trust: float) -> None:
    for cfg in (CFG.fsrs, SEED_CFG):
        r1 = fsrs.retrievability(elapsed_days=t, stability=s, cfg=cfg)
        r2 = fsrs.retrievability(elapsed_days=t + dt, stability=s, cfg=cfg)
        assert 0.0 <= r2 <= r1 <= 1.0
    h = retention.trust_half_life(half_life_days=hl, trust=trust, cfg=CFG.retention)
    for mode in retention.MODES:
        a = retention.retention(age_days=t, half_life_days=h, access_count=n, cfg=CFG.retention, mode=mode)
        b = retention.retention(age_days=t + dt, half_life_days=h, access_count=n, cfg=CFG.retention, mode=mode)
        assert 0.0 <= b <= a <= 1.0
    kw: dict[str, Any] = {
        "stability": min(s, 1.0),
        "importance": trust,
        "beta_days": hl,
        "core": n % 2 == 0,
        "cfg": CFG.retention,
    }
    assert retention.fading_retention(days=t + dt, **kw) <= retention.fading_retention(days=t, **kw) <= 1.0
    for cat in ("fact", "decision", "other", "preference"):
        c1 = retention.category_strength(category=cat, layer="episodic", days=t, cfg=CFG.retention)
        c2 = retention.category_strength(category=cat, layer="episodic", days=t + dt, cfg=CFG.retention)
        assert 0.0 <= c2 <= c1 <= 1.0


@given(
    conf=unit, n=st.integers(0, 10**5), age=days, stale=days, imp=unit, fb=st.floats(-1, 1), causal=unit,
    disputed=st.booleans(), cat=st.sampled_from(["fact", "correction"]),
    ver=st.sampled_from(["unverified", "user_confirmed", "disputed"]),
)  # fmt: skip
def test_seed_004_scores_in_bounds(
    conf: float, n: int, age: float, stale: float, imp: float, fb: float, causal: float, disputed: bool, cat: str,
    ver: str,
) -> None:  # fmt: skip
    c = CFG.lifecycle
    h = lifecycle.heat(confidence=conf, access_count=n, age_days=age, importance=imp, cfg=c, feedback=fb,
                       causal=causal, disputed=disputed)  # fmt: skip
    d = lifecycle.decay_score(age_days=age, stale_access_days=stale, confidence=conf, heat_score=h, cfg=c, feedback=fb)
    v = lifecycle.tier_value(confidence=conf, access_count=n, age_days=age, importance=imp, cfg=c, feedback=fb,
                             category=cat, verification_state=ver)  # fmt: skip
    assert 0.0 <= h <= 1.0 and 0.0 <= d <= 1.0 and 0.0 <= v <= 1.0


@given(
    ch=st.tuples(unit, unit, unit, unit), boost=st.floats(0.0, 5.0), base=unit, n=st.integers(0, 10**6),
    age=days, val=st.floats(-1, 1), span=days, layer=layers, trust=unit, conf=st.integers(0, 10**6), act=unit,
)  # fmt: skip
def test_importance_in_bounds(
    ch: tuple[float, float, float, float], boost: float, base: float, n: int, age: float, val: float, span: float,
    layer: str, trust: float, conf: int, act: float,
) -> None:  # fmt: skip
    c = CFG.importance
    i4 = importance.channel_importance(novelty=ch[0], arousal=ch[1], reward=ch[2], attention=ch[3], cfg=c, boost=boost)
    assert 0.0 <= i4 <= 1.0
    f = importance.nine_factors(base=base, access_count=n, age_days=age, valence=val, span_days=span, layer=layer,
                                trust=trust, confirmations=conf, actr_activation=act, cfg=c)  # fmt: skip
    assert all(0.0 <= x <= 1.0 for x in f.values())
    assert 0.0 <= importance.nine_factor_importance(factors=f, cfg=c) <= 1.0


@given(sims=st.lists(st.floats(-1.0, 1.0), max_size=30), imp=unit)
def test_surprise_bounds_and_order_independence(sims: list[float], imp: float) -> None:
    s = surprise.surprise(neighbour_similarities=sims, cfg=CFG.importance)
    shuffled = list(sims)
    random.Random(len(sims)).shuffle(shuffled)
    assert s == surprise.surprise(neighbour_similarities=shuffled, cfg=CFG.importance)
    assert 0.0 <= s.surprise <= 1.0 and -0.3 <= s.modifier <= 0.3
    assert 0.05 <= surprise.adjust_importance(importance=imp, modifier=s.modifier, cfg=CFG.importance) <= 1.0


@given(u=unit, d=days, flags=st.lists(st.booleans(), max_size=20))
def test_utility_in_bounds(u: float, d: float, flags: list[bool]) -> None:
    x = utility.drifted_utility(utility=u, days=d, cfg=CFG.utility)
    assert min(u, 0.5) - 1e-12 <= x <= max(u, 0.5) + 1e-12
    for ok in flags:
        x = utility.utility_after_use(utility=x, success=ok, cfg=CFG.utility)
        assert 0.0 <= x <= 1.0


@given(ages=st.lists(st.floats(0.0, 1e8), max_size=40), extra=st.integers(0, 50), life=st.floats(0.0, 2e8))
def test_actr_bounds_and_order(ages: list[float], extra: int, life: float) -> None:
    life = max(life, *ages) if ages else life
    b = actr.base_level_full(ages_seconds=ages, cfg=CFG.actr, total_accesses=len(ages) + extra, lifetime_seconds=life)
    b2 = actr.base_level_full(ages_seconds=list(reversed(ages)), cfg=CFG.actr, total_accesses=len(ages) + extra,
                              lifetime_seconds=life)  # fmt: skip
    assert b == b2
    assert 0.0 <= actr.activation(base_level=b, cfg=CFG.actr) <= 1.0


records = st.builds(
    lambda layer, s, d, st_, gap, n, imp: MemoryRecord(
        content="m", created_at=T0, layer=Layer(layer), stability=s, difficulty=d, storage_strength=st_,
        importance=imp, access_count=n, last_accessed_at=T0 + timedelta(hours=gap) if n else None,
    ),
    layers, st.floats(0.01, 3000.0), st.floats(1.0, 10.0), st.floats(1.0, 10.0), st.floats(0.0, 500.0),
    st.integers(0, 1000), unit,
)  # fmt: skip


@settings(max_examples=60)
@given(rec=records, later=st.floats(0.0, 20000.0), success=st.sampled_from([None, True, False]))
def test_access_never_lowers_storage_and_keeps_bounds(rec: MemoryRecord, later: float, success: bool | None) -> None:
    now = (rec.last_accessed_at or rec.created_at) + timedelta(hours=later)
    upd = on_access(rec, now=now, cfg=CFG, success=success)
    assert rec.storage_strength <= upd["storage_strength"] <= 10.0
    assert upd["stability"] >= CFG.fsrs.stability_min and 1.0 <= upd["difficulty"] <= 10.0
    assert upd["energy"] >= CFG.energy.access_boost
    if success is not None:
        assert 0.0 <= upd["utility"] <= 1.0
    vals = current_values(rec.copy(**upd), now=now + timedelta(days=1), cfg=CFG)
    for key in ("retrievability", "retention", "fading_retention", "heat", "decay_score", "tier_value",
                "actr_single", "actr_full", "utility", "importance_9factor"):  # fmt: skip
        assert 0.0 <= vals[key] <= 1.0, key


@settings(max_examples=30)
@given(recs=st.lists(records, min_size=2, max_size=8), seed=st.integers(0, 1000))
def test_results_do_not_depend_on_processing_order(recs: list[MemoryRecord], seed: int) -> None:
    now = T0 + timedelta(days=60)

    def process(batch: list[MemoryRecord]) -> dict[str, tuple[dict[str, object], dict[str, object]]]:
        return {r.id: (on_access(r, now=now, cfg=CFG), current_values(r, now=now, cfg=CFG)) for r in batch}

    shuffled = list(recs)
    random.Random(seed).shuffle(shuffled)
    assert process(recs) == process(shuffled)
    scores = {r.id: r.importance * (1 + 0.1 * r.access_count) for r in recs}
    reordered = dict(sorted(scores.items(), key=lambda kv: random.Random(seed).random()))
    small = CFG.working.model_copy(update={"max_items": 1})
    assert working.evictions(scores=scores, cfg=small) == working.evictions(scores=reordered, cfg=small)
