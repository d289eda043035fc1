"""``explain_strength`` writes its formulas from the settings in force: a tuned setting shows in the formula,
and the numbers in the formula, applied to the entry's terms, give the entry's value."""

from __future__ import annotations

import math
import re
from datetime import timedelta
from typing import Any

import pytest

from reverie.config.dynamics import (
    DynamicsSettings,
    EnergySettings,
    FsrsSettings,
    LifecycleSettings,
    RetentionSettings,
    UtilitySettings,
    WorkingMemorySettings,
)
from reverie.dynamics import access, explain_strength, on_access
from reverie.model import Layer, MemoryRecord

from .conftest import T0

NUMBER = r"(-?[\d.]+(?:e-?\d+)?)"


def tuned() -> DynamicsSettings:
    return DynamicsSettings(
        energy=EnergySettings(decay_episodic=0.0375),
        fsrs=FsrsSettings(curve="simple_power", simple_power_factor=7.5, simple_power_exponent=1.75),
        utility=UtilitySettings(drift_rate=0.0325, prior=0.45),
        retention=RetentionSettings(reinforcement_scale=0.07, reinforcement_cap=0.25, elastic_l1_weight=0.35),
        working=WorkingMemorySettings(half_life_minutes=45.0, access_weight=0.15),
        lifecycle=LifecycleSettings(
            heat_confidence=0.3,
            heat_access=0.25,
            heat_recency=0.2,
            heat_importance=0.15,
            heat_feedback=0.1,
            heat_causal=0.04,
            access_saturation=30,
            recency_window_days=60.0,
        ),
    )


def explained(cfg: DynamicsSettings) -> dict[str, dict[str, Any]]:
    r = MemoryRecord(content="the API uses JWT tokens", created_at=T0, layer=Layer.EPISODIC, importance=0.6)
    r = r.copy(**access.initial_values(r, now=T0, cfg=cfg))
    times = [T0 + timedelta(days=d) for d in (1, 3)]
    for t in times:
        r = access.apply(r, on_access(r, now=t, cfg=cfg))
    return explain_strength(r, now=T0 + timedelta(days=9, hours=5), cfg=cfg, access_times=times)


def numbers(formula: str, pattern: str) -> list[float]:
    found = re.search(pattern, formula)
    assert found, f"{pattern!r} not in {formula!r}"
    return [float(g) for g in found.groups()]


def test_tuned_settings_show_in_the_formulas() -> None:
    ex = explained(tuned())
    assert "λ = 0.0375 per hour (episodic)" in ex["energy"]["formula"]
    assert ex["retrievability"]["formula"] == "(1 + t/(7.5·S))^(-1.75)"
    assert ex["utility"]["formula"] == "u + (0.45 - u)·(1 - exp(-0.0325·days))"
    assert "min(0.25, 0.07·ln(1+n))" in ex["retention_l2"]["formula"]
    assert ex["retention_elastic"]["formula"].startswith("0.35·max(0, 1 - t/(2·hl)) + 0.65·exp(-ln2·t/hl)")
    assert ex["working_eviction_score"]["formula"] == "importance·exp(-ln2·age_min/45)·(1 + 0.15·accessCount)"
    assert ex["heat"]["formula"].startswith("0.3·conf_w + 0.25·ln(1+n)/ln(31) + 0.2·max(0, 1 - age/60)")
    default = explained(DynamicsSettings())
    for key in ("energy", "retrievability", "utility", "retention_l2", "working_eviction_score", "heat"):
        assert default[key]["formula"] != ex[key]["formula"], key


@pytest.mark.parametrize("cfg", [DynamicsSettings(), tuned()], ids=["defaults", "tuned"])
def test_formula_numbers_reproduce_the_values(cfg: DynamicsSettings) -> None:
    ex = explained(cfg)
    e, t = ex["energy"], ex["energy"]["terms"]
    (lam,) = numbers(e["formula"], rf"λ = {NUMBER} per hour")
    assert e["value"] == pytest.approx(t["E0"] * math.exp(-lam * t["hours"]))

    r, t = ex["retrievability"], ex["retrievability"]["terms"]
    if cfg.fsrs.curve == "simple_power":
        factor, exponent = numbers(r["formula"], rf"t/\({NUMBER}·S\)\)\^\(-{NUMBER}\)")
        assert r["value"] == pytest.approx((1 + t["t"] / (factor * t["S"])) ** -exponent)
    else:
        w20, f = numbers(r["formula"], rf"w20 = {NUMBER}, f = .* = {NUMBER}")
        assert r["value"] == pytest.approx((1 + f * t["t"] / t["S"]) ** -w20, rel=1e-5)

    u, t = ex["utility"], ex["utility"]["terms"]
    prior, rate = numbers(u["formula"], rf"\({NUMBER} - u\)·\(1 - exp\(-{NUMBER}·days\)\)")
    assert u["value"] == pytest.approx(t["u"] + (prior - t["u"]) * (1 - math.exp(-rate * t["days"])))

    ret, t = ex["retention_l2"], ex["retention_l2"]["terms"]
    cap, scale = numbers(ret["formula"], rf"min\({NUMBER}, {NUMBER}·ln\(1\+n\)\)")
    expected = math.exp(-math.log(2) * t["t"] / t["hl"]) + min(cap, scale * math.log1p(t["n"]))
    assert ret["value"] == pytest.approx(min(1.0, expected))

    w, t = ex["working_eviction_score"], ex["working_eviction_score"]["terms"]
    half, weight = numbers(w["formula"], rf"age_min/{NUMBER}\)·\(1 \+ {NUMBER}·accessCount\)")
    recency = math.exp(-math.log(2) * t["age_min"] / half)
    assert w["value"] == pytest.approx(t["importance"] * recency * (1 + weight * t["n"]))

    h, t = ex["heat"], ex["heat"]["terms"]
    pattern = (
        rf"{NUMBER}·conf_w \+ {NUMBER}·ln\(1\+n\)/ln\({NUMBER}\) \+ {NUMBER}·max\(0, 1 - age/{NUMBER}\) \+ "
        rf"{NUMBER}·imp \+ {NUMBER}·\(f\+1\)/2 \+ {NUMBER}·causal - {NUMBER}·disputed"
    )
    wc, wa, base, wr, window, wi, wf, wcausal, pen = numbers(h["formula"], pattern)
    heat = (
        wc * t["conf_w"]
        + wa * math.log1p(t["n"]) / math.log(base)
        + wr * max(0.0, 1 - t["age"] / window)
        + wi * t["imp"]
        + wf * (t["f"] + 1) / 2
        + wcausal * t["causal"]
        - pen * t["disputed"]
    )
    assert h["value"] == pytest.approx(min(1.0, max(0.0, heat)))
