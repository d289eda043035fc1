"""``explain_strength``: every current value of a memory with its formula and the terms behind it.

Each entry is ``{"value": …, "formula": "…", "terms": {…}}``; the whole result is JSON-serialisable
(``json.dumps(..., allow_nan=False)``: ∞ is written as the string ``"inf"``, datetimes as ISO text).

Clocks used (documented choices):
* "since the last access" = ``last_accessed_at`` or, never accessed, ``created_at`` (the encoding
  counts as the first review) — FSRS R, retrieval strength, retention and fading retention, ACT-R
  single form, category decay, the lifecycle policy's recency/stale access;
* energy decays from ``energy_updated_at`` (or ``created_at``), utility drifts from
  ``utility_updated_at`` (or ``created_at``); the lifecycle policy's age and archival age from
  ``created_at``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from enum import Enum
from typing import Any

from reverie.config.dynamics import DynamicsSettings
from reverie.dynamics import (
    actr,
    energy,
    fsrs,
    importance,
    lifecycle,
    promotion,
    retention,
    strength,
    utility,
)
from reverie.dynamics import working as working_mod
from reverie.dynamics._util import days_between, json_number, layer_name, seconds_between
from reverie.model import MemoryRecord, Status


def _safe(value: Any) -> Any:
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, Enum):
        return _safe(value.value)
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return json_number(value)
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, Mapping):
        return {str(k): _safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_safe(v) for v in value]
    return str(value)


def _entry(value: Any, formula: str, **terms: Any) -> dict[str, Any]:
    return {"value": _safe(value), "formula": formula, "terms": _safe(terms)}


def explain_strength(
    record: MemoryRecord,
    *,
    now: datetime,
    cfg: DynamicsSettings,
    access_times: Sequence[datetime] = (),
) -> dict[str, Any]:
    """Every derived value of ``record`` at ``now`` with formula and terms (pure, JSON-ready)."""
    out: dict[str, dict[str, Any]] = {}
    layer = layer_name(record.layer)
    last = record.last_accessed_at or record.created_at
    since_access_days = days_between(last, now)
    since_access_s = seconds_between(last, now)
    age_days = days_between(record.created_at, now)
    out["at"] = _entry(
        now, "the memory's clock time of this evaluation", created_at=record.created_at, last_access=last
    )

    # Energy
    e_ref = record.energy_updated_at or record.created_at
    lam = energy.decay_rate(layer=layer, cfg=cfg.energy)
    hours = seconds_between(e_ref, now) / 3600.0
    e_now = energy.decayed_energy(energy=record.energy, hours=hours, rate=lam)
    out["energy"] = _entry(
        e_now, "E0·exp(-λ·h)", E0=record.energy, **{"lambda": lam}, hours=hours, updated_at=e_ref, layer=layer
    )

    # FSRS
    fc = cfg.fsrs
    r_now = fsrs.retrievability(elapsed_days=since_access_days, stability=record.stability, cfg=fc)
    if fc.curve == "fsrs6":
        out["retrievability"] = _entry(
            r_now,
            "(1 + f·t/S)^(-w20), f = 0.9^(-1/w20) - 1",
            t=since_access_days,
            S=record.stability,
            w20=fsrs.curve_decay(cfg=fc),
            f=fsrs.curve_factor(cfg=fc),
            curve="fsrs6",
        )
    else:
        out["retrievability"] = _entry(
            r_now,
            "(1 + t/(9·S))^(-1/0.5)",
            t=since_access_days,
            S=record.stability,
            factor=fc.simple_power_factor,
            exponent=fc.simple_power_exponent,
            curve="simple_power",
        )
    out["stability"] = _entry(
        record.stability,
        "stored FSRS stability S (days); updated per review",
        next_interval_days=fsrs.next_interval_days(stability=record.stability, cfg=fc),
        desired_retention=fc.desired_retention,
    )
    out["difficulty"] = _entry(record.difficulty, "stored FSRS difficulty D ∈ [1, 10]; updated per review")
    rc0 = cfg.retention
    dormant0 = record.status == Status.DORMANT
    out["retrieval_strength"] = _entry(
        strength.retrieval_strength_of(record, now=now, cfg=cfg),
        "R·exp(-rate·multiplier·days) (1.0 right after an access): FSRS R since the last access times the "
        "category decay at the tier's rate since the last access or rehearsal; the decay step stores it and "
        "rehearsal reads it",
        rehearsed_at=strength.rehearsed_at(record),
        R=r_now,
        rate=retention.category_decay_rate(category=record.category, cfg=rc0),
        multiplier=retention.pahf_multiplier(layer=layer, cfg=rc0, dormant=dormant0),
        stored=record.retrieval_strength,
        t=since_access_days,
    )
    sc = cfg.strength
    out["storage_strength"] = _entry(
        record.storage_strength,
        "stored; per retrieval += base + gain·min(cap, days/interval), ≤ max",
        base=sc.storage_base_gain,
        gain=sc.storage_spaced_gain,
        cap=sc.spacing_cap,
        interval=sc.spacing_interval_days,
        max=sc.storage_max,
        next_gain_now=strength.storage_gain(days_since_last_access=since_access_days, cfg=sc),
    )

    # Retention
    rc = cfg.retention
    hl_base = rc.layer_half_life_days.get(layer, rc.base_half_life_days)
    hl = retention.layer_half_life(layer=layer, trust=record.trust, cfg=rc)
    reinf = retention.access_reinforcement(access_count=record.access_count, cfg=rc)
    modes = {
        "l2": "exp(-ln2·t/hl) + min(0.3, 0.05·ln(1+n))",
        "huber": "l2 for t <= 0.5·hl, then linear with the slope of l2 at 0.5·hl; + min(0.3, 0.05·ln(1+n))",
        "elastic": "0.3·max(0, 1 - t/(2·hl)) + 0.7·exp(-ln2·t/hl) + min(0.3, 0.05·ln(1+n))",
    }
    for mode, formula in modes.items():
        value = retention.retention(
            age_days=since_access_days, half_life_days=hl, access_count=record.access_count, cfg=rc, mode=mode
        )
        out[f"retention_{mode}"] = _entry(
            value,
            formula,
            t=since_access_days,
            hl=hl,
            base_half_life=hl_base,
            trust=record.trust,
            n=record.access_count,
            reinforcement=reinf,
        )
    r_mode = out[f"retention_{rc.mode}"]["value"]
    out["retention"] = _entry(
        r_mode, f"retention_{rc.mode} (configured mode)", mode=rc.mode, trust_factor="1/(1 + 2·(1 - trust))"
    )
    s003 = strength.fading_stability(storage=record.storage_strength, cfg=sc, new=rc.fading_stability_new)
    beta = retention.fading_beta(layer=layer, core=record.core, cfg=rc)
    r003 = retention.fading_retention(
        days=since_access_days,
        stability=s003,
        importance=record.importance,
        beta_days=beta,
        core=record.core,
        cfg=rc,
    )
    out["fading_retention"] = _entry(
        r003,
        f"max(floor, exp(-Δt/(S·B·β))), S = {rc.fading_stability_new:g} + {1 - rc.fading_stability_new:g}·(storage - "
        f"{sc.storage_min:g})/({sc.storage_max:g} - {sc.storage_min:g}), B = min({rc.fading_boost_cap:g}, 1 + "
        f"{rc.fading_importance_boost:g}·importance)",
        dt=since_access_days,
        S=s003,
        B=retention.fading_boost(importance=record.importance, cfg=rc),
        beta=beta,
        floor=retention.fading_floor(core=record.core, cfg=rc),
        core=record.core,
    )
    dormant = record.status == Status.DORMANT
    rate = retention.category_decay_rate(category=record.category, cfg=rc)
    mult = retention.pahf_multiplier(layer=layer, cfg=rc, dormant=dormant)
    out["category_strength"] = _entry(
        retention.category_strength(
            category=record.category, layer=layer, days=since_access_days, cfg=rc, dormant=dormant
        ),
        "exp(-rate·pahf_multiplier·days)",
        rate=rate,
        multiplier=mult,
        days=since_access_days,
        category=record.category,
        dormant=dormant,
    )
    min_days = retention.min_retention_days(category=record.category, cfg=rc)
    out["min_retention"] = _entry(
        age_days < min_days,
        "age_days < minimum retention of the category",
        age_days=age_days,
        min_days=min_days,
        category=record.category,
    )
    out["precision"] = _entry(
        retention.precision_for_retention(retention=float(r_mode), cfg=rc),
        "R > 0.8 float32, > 0.5 int8, > 0.2 int4, else int2",
        R=r_mode,
        tiers=rc.precision_tiers,
    )

    # ACT-R
    ac = cfg.actr
    b1 = actr.base_level_single(access_count=record.access_count, age_seconds=since_access_s, cfg=ac)
    out["actr_single"] = _entry(
        actr.activation(base_level=b1, cfg=ac),
        "σ(B), B = ln(max(n,1)) - d·ln(age_s)",
        B=b1,
        n=record.access_count,
        age_s=since_access_s,
        d=ac.decay,
    )
    ages = actr.ages_seconds(access_times=access_times, now=now)
    lifetime = seconds_between(record.created_at, now)
    bf = actr.base_level_full(ages_seconds=ages, cfg=ac, total_accesses=record.access_count, lifetime_seconds=lifetime)
    act_full = actr.activation(base_level=bf, cfg=ac)
    out["actr_full"] = _entry(
        act_full,
        "σ(B), B = ln(Σ_{k recent} t_j^(-d) + (n-k)(t_n^(1-d) - t_k^(1-d))/((1-d)(t_n - t_k)))",
        B=bf,
        logged=len(ages),
        n=max(len(ages), record.access_count),
        k=ac.exact_recent,
        t_n=lifetime,
        d=ac.decay,
    )

    # Utility
    uc = cfg.utility
    u_ref = record.utility_updated_at or record.created_at
    u_days = days_between(u_ref, now)
    u_now = utility.drifted_utility(utility=record.utility, days=u_days, cfg=uc)
    out["utility"] = _entry(
        u_now,
        "u + (prior - u)·(1 - exp(-rate·days))",
        u=record.utility,
        days=u_days,
        rate=uc.drift_rate,
        prior=uc.prior,
        updated_at=u_ref,
    )

    # importance
    ic = cfg.importance
    out["importance"] = _entry(
        record.importance,
        "stored importance (write path: channels or 9 factors)",
        channels=record.importance_channels,
    )
    out["priority_level"] = _entry(
        importance.priority_level(importance=record.importance, cfg=ic),
        "critical >= 0.8, high >= 0.6, normal >= 0.4, else low",
        importance=record.importance,
    )
    nine, factors = importance.layered_importance(record, now=now, cfg=cfg, access_times=access_times)
    out["importance_9factor"] = _entry(
        nine,
        "Σ w_i·f_i over 9 renormalised weights; base = importance + (surprise - 0.5)·scale (the archival rule's "
        "importance when promotion.archive_importance_measure is nine_factor)",
        factors=factors,
        weights=ic.nine_factor_weights,
    )

    # Lifecycle
    lc = cfg.lifecycle
    feedback = 2.0 * u_now - 1.0
    disputed = record.verification_state == "disputed"
    archived = record.status == Status.ARCHIVED
    h = lifecycle.heat(
        confidence=record.confidence,
        access_count=record.access_count,
        age_days=since_access_days,
        importance=record.importance,
        cfg=lc,
        feedback=feedback,
        disputed=disputed,
        archived=archived,
    )
    out["heat"] = _entry(
        h,
        "0.25·conf_w + 0.30·ln(1+n)/ln(21) + 0.20·max(0, 1 - age/90) + 0.15·imp + 0.10·(f+1)/2 "
        "+ 0.05·causal - 0.2·disputed",
        conf_w=lifecycle.confidence_weight(confidence=record.confidence, cfg=lc),
        n=record.access_count,
        age=since_access_days,
        imp=record.importance,
        f=feedback,
        causal=0.0,
        disputed=disputed,
        archived=archived,
    )
    d = lifecycle.decay_score(
        age_days=age_days,
        stale_access_days=since_access_days,
        confidence=record.confidence,
        heat_score=h,
        cfg=lc,
        feedback=feedback,
        archived=archived,
    )
    out["decay_score"] = _entry(
        d,
        "0.30·age/180 + 0.25·stale/120 + 0.20·(1 - conf_w) + 0.10·(1 - f)/2 + 0.15·(1 - heat)",
        age=age_days,
        stale=since_access_days,
        f=feedback,
        heat=h,
    )
    v = lifecycle.tier_value(
        confidence=record.confidence,
        access_count=record.access_count,
        age_days=since_access_days,
        importance=record.importance,
        cfg=lc,
        feedback=feedback,
        category=record.category,
        verification_state=record.verification_state,
    )
    out["tier_value"] = _entry(
        v,
        "0.24·conf_w + 0.26·access + 0.20·recency + 0.20·imp + 0.10·(f+1)/2 + 0.08·correction "
        "+ 0.05·confirmed - 0.5·0.2·disputed",
        category=record.category,
        verification_state=record.verification_state,
        store=record.store,
        decision=lifecycle.tier_transition(
            current_store=str(getattr(record.store, "value", record.store)),
            value=v,
            age_days=age_days,
            cfg=lc,
        ),
    )
    out["confidence_tier"] = _entry(
        lifecycle.confidence_tier(confidence=record.confidence, cfg=lc),
        "explicit >= 0.95, implied >= 0.70, inferred >= 0.40, else speculative",
        confidence=record.confidence,
    )
    nxt, why = lifecycle.lifecycle_transition(
        current_state=record.lifecycle_state,
        heat_score=h,
        decay=d,
        verification_state=record.verification_state,
        category=record.category,
        policy_class=record.policy_class,
        cfg=lc,
    )
    out["lifecycle_state"] = _entry(
        nxt, "lifecycle transition from heat/decay", current=record.lifecycle_state, reason=why
    )

    # working memory; layer promotion
    out["working_eviction_score"] = _entry(
        working_mod.eviction_score(
            importance=record.importance,
            access_count=record.access_count,
            last_accessed_at=last,
            now=now,
            cfg=cfg.working,
        ),
        "importance·exp(-ln2·age_min/30)·(1 + 0.1·accessCount)",
        age_min=since_access_s / 60.0,
        n=record.access_count,
        importance=record.importance,
    )
    move = promotion.eligible_transition(record, now=now, cfg=cfg)
    out["promotion"] = _entry(
        None if move is None else move[0],
        "first eligible layer transition",
        reason=None if move is None else move[1],
        layer=layer,
    )
    return out
