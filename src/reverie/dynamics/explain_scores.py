"""The scores of a memory, explained (parts of :func:`reverie.dynamics.explain.explain_strength`): ACT-R
activation, utility, importance and its priority level, the lifecycle policy's heat, decay score, tier value,
confidence tier and next state, the working-memory eviction score and the next layer promotion. Formulas carry
the settings in force."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from reverie.config.dynamics import ActrSettings, DynamicsSettings
from reverie.dynamics import actr, importance, lifecycle, promotion, utility
from reverie.dynamics import working as working_mod
from reverie.dynamics._util import days_between, seconds_between
from reverie.dynamics.explain_terms import Entries, Moment, entry, num
from reverie.model import MemoryRecord, Status


def _squash(ac: ActrSettings) -> str:
    if ac.sigmoid_offset == 0 and ac.sigmoid_scale == 1:
        return "σ(B)"
    return f"σ((B - {num(ac.sigmoid_offset)})/{num(ac.sigmoid_scale)})"


def actr_entries(record: MemoryRecord, m: Moment, cfg: DynamicsSettings, times: Sequence[datetime]) -> Entries:
    """ACT-R activation: the single-access form and the full form over the access log."""
    ac = cfg.actr
    d = num(ac.decay)
    b1 = actr.base_level_single(access_count=record.access_count, age_seconds=m.since_access_s, cfg=ac)
    ages = actr.ages_seconds(access_times=times, now=m.now)
    lifetime = seconds_between(record.created_at, m.now)
    bf = actr.base_level_full(ages_seconds=ages, cfg=ac, total_accesses=record.access_count, lifetime_seconds=lifetime)
    return {
        "actr_single": entry(
            actr.activation(base_level=b1, cfg=ac),
            f"{_squash(ac)}, B = ln(max(n,1)) - {d}·ln(age_s)",
            B=b1,
            n=record.access_count,
            age_s=m.since_access_s,
            d=ac.decay,
        ),
        "actr_full": entry(
            actr.activation(base_level=bf, cfg=ac),
            f"{_squash(ac)}, B = ln(Σ_(k = {ac.exact_recent} recent) t_j^(-{d}) + (n-k)(t_n^(1-{d}) - t_k^(1-{d}))"
            f"/((1-{d})(t_n - t_k)))",
            B=bf,
            logged=len(ages),
            n=max(len(ages), record.access_count),
            k=ac.exact_recent,
            t_n=lifetime,
            d=ac.decay,
        ),
    }


def _utility_now(record: MemoryRecord, m: Moment, cfg: DynamicsSettings) -> tuple[float, datetime, float]:
    ref = record.utility_updated_at or record.created_at
    days = days_between(ref, m.now)
    return utility.drifted_utility(utility=record.utility, days=days, cfg=cfg.utility), ref, days


def utility_entries(record: MemoryRecord, m: Moment, cfg: DynamicsSettings, _times: Sequence[datetime]) -> Entries:
    """Utility, drifted towards its prior since its last update."""
    uc = cfg.utility
    value, ref, days = _utility_now(record, m, cfg)
    return {
        "utility": entry(
            value,
            f"u + ({num(uc.prior)} - u)·(1 - exp(-{num(uc.drift_rate)}·days))",
            u=record.utility,
            days=days,
            rate=uc.drift_rate,
            prior=uc.prior,
            updated_at=ref,
        )
    }


def importance_entries(record: MemoryRecord, m: Moment, cfg: DynamicsSettings, times: Sequence[datetime]) -> Entries:
    """The stored importance, its priority level and the nine-factor importance."""
    ic = cfg.importance
    nine, factors = importance.layered_importance(record, now=m.now, cfg=cfg, access_times=times)
    weights = ic.nine_factor_weights
    return {
        "importance": entry(
            record.importance,
            "stored importance (write path: channels or 9 factors)",
            channels=record.importance_channels,
        ),
        "priority_level": entry(
            importance.priority_level(importance=record.importance, cfg=ic),
            f"critical >= {num(ic.priority_critical)}, high >= {num(ic.priority_high)}, normal >= "
            f"{num(ic.priority_normal)}, else low",
            importance=record.importance,
        ),
        "importance_9factor": entry(
            nine,
            "Σ w_i·f_i, "
            + " + ".join(f"{num(round(w, 4))}·{name}" for name, w in weights.items())
            + f" (weights renormalised to sum to 1); base = importance + (surprise - 0.5)·{num(ic.surprise_scale)} "
            "(the archival rule's importance when promotion.archive_importance_measure is nine_factor)",
            factors=factors,
            weights=weights,
        ),
    }


def lifecycle_entries(record: MemoryRecord, m: Moment, cfg: DynamicsSettings, _times: Sequence[datetime]) -> Entries:
    """The lifecycle policy's heat, decay score, tier value, confidence tier and next lifecycle state."""
    lc = cfg.lifecycle
    feedback = 2.0 * _utility_now(record, m, cfg)[0] - 1.0
    archived = record.status == Status.ARCHIVED
    h = lifecycle.heat(
        confidence=record.confidence,
        access_count=record.access_count,
        age_days=m.since_access_days,
        importance=record.importance,
        cfg=lc,
        feedback=feedback,
        disputed=record.verification_state == "disputed",
        archived=archived,
    )
    d = lifecycle.decay_score(
        age_days=m.age_days,
        stale_access_days=m.since_access_days,
        confidence=record.confidence,
        heat_score=h,
        cfg=lc,
        feedback=feedback,
        archived=archived,
    )
    out = {"heat": _heat(record, m, cfg, h, feedback)}
    out["decay_score"] = entry(
        d,
        f"{num(lc.decay_w_age)}·age/{num(lc.decay_age_days)} + {num(lc.decay_w_stale)}·stale/"
        f"{num(lc.decay_stale_access_days)} + {num(lc.decay_w_confidence)}·(1 - conf_w) + "
        f"{num(lc.decay_w_feedback)}·(1 - f)/2 + {num(lc.decay_w_cold)}·(1 - heat)",
        age=m.age_days,
        stale=m.since_access_days,
        f=feedback,
        heat=h,
    )
    out["tier_value"] = _tier_value(record, m, cfg, feedback)
    tiers = lc.confidence_tiers
    out["confidence_tier"] = entry(
        lifecycle.confidence_tier(confidence=record.confidence, cfg=lc),
        f"explicit >= {num(tiers['explicit'])}, implied >= {num(tiers['implied'])}, inferred >= "
        f"{num(tiers['inferred'])}, else speculative",
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
    out["lifecycle_state"] = entry(
        nxt,
        f"lifecycle transition from heat/decay: archived at decay >= {num(lc.archive_decay)} (unless protected), "
        f"stale at decay >= {num(lc.stale_decay)}, promoted at heat >= {num(lc.promote_heat)}",
        current=record.lifecycle_state,
        reason=why,
    )
    return out


def _heat(record: MemoryRecord, m: Moment, cfg: DynamicsSettings, h: float, feedback: float) -> dict[str, object]:
    lc = cfg.lifecycle
    disputed = record.verification_state == "disputed"
    return entry(
        h,
        f"{num(lc.heat_confidence)}·conf_w + {num(lc.heat_access)}·ln(1+n)/ln({lc.access_saturation + 1}) + "
        f"{num(lc.heat_recency)}·max(0, 1 - age/{num(lc.recency_window_days)}) + {num(lc.heat_importance)}·imp + "
        f"{num(lc.heat_feedback)}·(f+1)/2 + {num(lc.heat_causal)}·causal - {num(lc.heat_disputed_penalty)}·disputed",
        conf_w=lifecycle.confidence_weight(confidence=record.confidence, cfg=lc),
        n=record.access_count,
        age=m.since_access_days,
        imp=record.importance,
        f=feedback,
        causal=0.0,
        disputed=disputed,
        archived=record.status == Status.ARCHIVED,
    )


def _tier_value(record: MemoryRecord, m: Moment, cfg: DynamicsSettings, feedback: float) -> dict[str, object]:
    lc = cfg.lifecycle
    v = lifecycle.tier_value(
        confidence=record.confidence,
        access_count=record.access_count,
        age_days=m.since_access_days,
        importance=record.importance,
        cfg=lc,
        feedback=feedback,
        category=record.category,
        verification_state=record.verification_state,
    )
    decision = lifecycle.tier_transition(
        current_store=str(getattr(record.store, "value", record.store)), value=v, age_days=m.age_days, cfg=lc
    )
    return entry(
        v,
        f"{num(lc.value_confidence)}·conf_w + {num(lc.value_access)}·access + {num(lc.value_recency)}·recency + "
        f"{num(lc.value_importance)}·imp + {num(lc.value_feedback)}·(f+1)/2 + {num(lc.value_correction_bonus)}"
        f"·correction + {num(lc.value_confirmed_bonus)}·confirmed - {num(lc.value_disputed_penalty)}·"
        f"{num(lc.heat_disputed_penalty)}·disputed",
        category=record.category,
        verification_state=record.verification_state,
        store=record.store,
        decision=decision,
    )


def working_entries(record: MemoryRecord, m: Moment, cfg: DynamicsSettings, _times: Sequence[datetime]) -> Entries:
    """The working-memory eviction score."""
    wc = cfg.working
    value = working_mod.eviction_score(
        importance=record.importance, access_count=record.access_count, last_accessed_at=m.last, now=m.now, cfg=wc
    )
    return {
        "working_eviction_score": entry(
            value,
            f"importance·exp(-ln2·age_min/{num(wc.half_life_minutes)})·(1 + {num(wc.access_weight)}·accessCount)",
            age_min=m.since_access_s / 60.0,
            n=record.access_count,
            importance=record.importance,
        )
    }


def promotion_entries(record: MemoryRecord, m: Moment, cfg: DynamicsSettings, _times: Sequence[datetime]) -> Entries:
    """The first layer transition the memory is eligible for."""
    move = promotion.eligible_transition(record, now=m.now, cfg=cfg)
    return {
        "promotion": entry(
            None if move is None else move[0],
            "first eligible layer transition",
            reason=None if move is None else move[1],
            layer=m.layer,
        )
    }
