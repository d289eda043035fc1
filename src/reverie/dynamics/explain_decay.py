"""How a memory fades, explained (parts of :func:`reverie.dynamics.explain.explain_strength`): energy, FSRS
retrievability, stability and difficulty, retrieval and storage strength, the retention curves, fading
retention, category decay, minimum retention and the precision tier. Formulas carry the settings in force."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from reverie.config.dynamics import DynamicsSettings
from reverie.dynamics import energy, fsrs, retention, strength
from reverie.dynamics._util import seconds_between
from reverie.dynamics.explain_terms import Entries, Moment, entry, num
from reverie.model import MemoryRecord, Status


def energy_entries(record: MemoryRecord, m: Moment, cfg: DynamicsSettings, _times: Sequence[datetime]) -> Entries:
    """Energy, decayed per hour at the layer's rate since its last update."""
    ref = record.energy_updated_at or record.created_at
    lam = energy.decay_rate(layer=m.layer, cfg=cfg.energy)
    hours = seconds_between(ref, m.now) / 3600.0
    value = energy.decayed_energy(energy=record.energy, hours=hours, rate=lam)
    formula = f"E0·exp(-λ·h), λ = {num(lam)} per hour ({m.layer})"
    return {
        "energy": entry(value, formula, E0=record.energy, **{"lambda": lam}, hours=hours, updated_at=ref, layer=m.layer)
    }


def retrievability_formula(cfg: DynamicsSettings) -> str:
    """The forgetting curve of ``fsrs.curve`` with its parameters."""
    fc = cfg.fsrs
    if fc.curve == "fsrs6":
        w20 = fsrs.curve_decay(cfg=fc)
        return f"(1 + f·t/S)^(-w20), w20 = {num(w20)}, f = 0.9^(-1/w20) - 1 = {num(fsrs.curve_factor(cfg=fc))}"
    return f"(1 + t/({num(fc.simple_power_factor)}·S))^(-{num(fc.simple_power_exponent)})"


def fsrs_entries(record: MemoryRecord, m: Moment, cfg: DynamicsSettings, _times: Sequence[datetime]) -> Entries:
    """FSRS retrievability since the last access, the stored stability and difficulty."""
    fc = cfg.fsrs
    r_now = fsrs.retrievability(elapsed_days=m.since_access_days, stability=record.stability, cfg=fc)
    if fc.curve == "fsrs6":
        curve = {"w20": fsrs.curve_decay(cfg=fc), "f": fsrs.curve_factor(cfg=fc), "curve": "fsrs6"}
    else:
        curve = {"factor": fc.simple_power_factor, "exponent": fc.simple_power_exponent, "curve": "simple_power"}
    return {
        "retrievability": entry(r_now, retrievability_formula(cfg), t=m.since_access_days, S=record.stability, **curve),
        "stability": entry(
            record.stability,
            f"stored FSRS stability S (days); updated per review; next interval at desired retention "
            f"{num(fc.desired_retention)}",
            next_interval_days=fsrs.next_interval_days(stability=record.stability, cfg=fc),
            desired_retention=fc.desired_retention,
        ),
        "difficulty": entry(
            record.difficulty,
            f"stored FSRS difficulty D ∈ [{num(fc.difficulty_min)}, {num(fc.difficulty_max)}]; updated per review",
        ),
    }


def strength_entries(record: MemoryRecord, m: Moment, cfg: DynamicsSettings, _times: Sequence[datetime]) -> Entries:
    """Retrieval strength (FSRS R times the category decay) and the stored storage strength."""
    rc, sc = cfg.retention, cfg.strength
    r_now = fsrs.retrievability(elapsed_days=m.since_access_days, stability=record.stability, cfg=cfg.fsrs)
    rate = retention.category_decay_rate(category=record.category, cfg=rc)
    mult = retention.pahf_multiplier(layer=m.layer, cfg=rc, dormant=record.status == Status.DORMANT)
    return {
        "retrieval_strength": entry(
            strength.retrieval_strength_of(record, now=m.now, cfg=cfg),
            f"R·exp(-rate·multiplier·days), rate = {num(rate)} per day ({record.category}), multiplier = "
            f"{num(mult)} ({m.layer}) (1.0 right after an access): FSRS R since the last access times the category "
            "decay at the tier's rate since the last access or rehearsal; the decay step stores it and rehearsal "
            "reads it",
            rehearsed_at=strength.rehearsed_at(record),
            R=r_now,
            rate=rate,
            multiplier=mult,
            stored=record.retrieval_strength,
            t=m.since_access_days,
        ),
        "storage_strength": entry(
            record.storage_strength,
            f"stored; per retrieval += {num(sc.storage_base_gain)} + {num(sc.storage_spaced_gain)}·min("
            f"{num(sc.spacing_cap)}, days/{num(sc.spacing_interval_days)}), ≤ {num(sc.storage_max)}",
            base=sc.storage_base_gain,
            gain=sc.storage_spaced_gain,
            cap=sc.spacing_cap,
            interval=sc.spacing_interval_days,
            max=sc.storage_max,
            next_gain_now=strength.storage_gain(days_since_last_access=m.since_access_days, cfg=sc),
        ),
    }


def retention_formulas(cfg: DynamicsSettings) -> dict[str, str]:
    """The formula of each retention mode, with the reinforcement term, from the settings."""
    rc = cfg.retention
    reinforce = f" + min({num(rc.reinforcement_cap)}, {num(rc.reinforcement_scale)}·ln(1+n))"
    l1 = rc.elastic_l1_weight
    return {
        "l2": "exp(-ln2·t/hl)" + reinforce,
        "huber": f"l2 for t <= {num(rc.huber_knee)}·hl, then linear with the slope of l2 at {num(rc.huber_knee)}·hl;"
        + reinforce,
        "elastic": f"{num(l1)}·max(0, 1 - t/({num(rc.elastic_l1_span)}·hl)) + {num(1 - l1)}·exp(-ln2·t/hl)" + reinforce,
    }


def retention_entries(record: MemoryRecord, m: Moment, cfg: DynamicsSettings, _times: Sequence[datetime]) -> Entries:
    """The three retention curves, the configured one, fading retention, category decay, minimum retention and
    the precision tier the retention selects."""
    rc = cfg.retention
    hl = retention.layer_half_life(layer=m.layer, trust=record.trust, cfg=rc)
    out: Entries = {}
    for mode, formula in retention_formulas(cfg).items():
        value = retention.retention(
            age_days=m.since_access_days, half_life_days=hl, access_count=record.access_count, cfg=rc, mode=mode
        )
        out[f"retention_{mode}"] = entry(
            value,
            formula,
            t=m.since_access_days,
            hl=hl,
            base_half_life=rc.layer_half_life_days.get(m.layer, rc.base_half_life_days),
            trust=record.trust,
            n=record.access_count,
            reinforcement=retention.access_reinforcement(access_count=record.access_count, cfg=rc),
        )
    r_mode = out[f"retention_{rc.mode}"]["value"]
    out["retention"] = entry(
        r_mode,
        f"retention_{rc.mode} (configured mode)",
        mode=rc.mode,
        trust_factor=f"1/(1 + {num(rc.trust_slope)}·(1 - trust))",
    )
    out["fading_retention"] = _fading(record, m, cfg)
    out.update(_category(record, m, cfg))
    tiers = rc.precision_tiers
    out["precision"] = entry(
        retention.precision_for_retention(retention=float(r_mode), cfg=rc),
        f"R > {num(tiers['float32'])} float32, > {num(tiers['int8'])} int8, > {num(tiers['int4'])} int4, else int2",
        R=r_mode,
        tiers=tiers,
    )
    return out


def _fading(record: MemoryRecord, m: Moment, cfg: DynamicsSettings) -> dict[str, object]:
    rc, sc = cfg.retention, cfg.strength
    s = strength.fading_stability(storage=record.storage_strength, cfg=sc, new=rc.fading_stability_new)
    beta = retention.fading_beta(layer=m.layer, core=record.core, cfg=rc)
    value = retention.fading_retention(
        days=m.since_access_days, stability=s, importance=record.importance, beta_days=beta, core=record.core, cfg=rc
    )
    return entry(
        value,
        f"max(floor, exp(-Δt/(S·B·β))), S = {num(rc.fading_stability_new)} + {num(1 - rc.fading_stability_new)}"
        f"·(storage - {num(sc.storage_min)})/({num(sc.storage_max)} - {num(sc.storage_min)}), B = min("
        f"{num(rc.fading_boost_cap)}, 1 + {num(rc.fading_importance_boost)}·importance)",
        dt=m.since_access_days,
        S=s,
        B=retention.fading_boost(importance=record.importance, cfg=rc),
        beta=beta,
        floor=retention.fading_floor(core=record.core, cfg=rc),
        core=record.core,
    )


def _category(record: MemoryRecord, m: Moment, cfg: DynamicsSettings) -> Entries:
    rc = cfg.retention
    dormant = record.status == Status.DORMANT
    rate = retention.category_decay_rate(category=record.category, cfg=rc)
    mult = retention.pahf_multiplier(layer=m.layer, cfg=rc, dormant=dormant)
    min_days = retention.min_retention_days(category=record.category, cfg=rc)
    value = retention.category_strength(
        category=record.category, layer=m.layer, days=m.since_access_days, cfg=rc, dormant=dormant
    )
    return {
        "category_strength": entry(
            value,
            f"exp(-rate·pahf_multiplier·days), rate = {num(rate)} per day ({record.category}), pahf_multiplier = "
            f"{num(mult)}",
            rate=rate,
            multiplier=mult,
            days=m.since_access_days,
            category=record.category,
            dormant=dormant,
        ),
        "min_retention": entry(
            m.age_days < min_days,
            f"age_days < {num(min_days)}, the minimum retention of the category ({record.category})",
            age_days=m.age_days,
            min_days=min_days,
            category=record.category,
        ),
    }
