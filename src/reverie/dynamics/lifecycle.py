"""Lifecycle policy: heat, decay score, tier value score, confidence tiers, edge confidence.

Inputs (the lifecycle design's ``computeLifecycleValueInputs``): confidence → tier weight, access
``ln(1+n)/ln(21)``, recency ``max(0, 1 - age_days/90)``, importance, feedback ``(f + 1)/2`` with
``f ∈ [-1, 1]`` (reverie derives ``f = 2·utility - 1``, so the feedback weight equals utility),
disputed penalty 0.2. Heat adds reverie's ``0.05·causal``.
"""

from __future__ import annotations

import math
from datetime import datetime

from reverie.config.dynamics import LifecycleSettings
from reverie.dynamics._util import clamp, days_between

CONFIDENCE_TIERS = ("explicit", "implied", "inferred", "speculative")


def confidence_tier(*, confidence: float, cfg: LifecycleSettings) -> str:
    """explicit >= 0.95, implied >= 0.70, inferred >= 0.40, else speculative (< 0.40)."""
    for tier in ("explicit", "implied", "inferred"):
        if confidence >= cfg.confidence_tiers[tier]:
            return tier
    return "speculative"


def confidence_weight(*, confidence: float, cfg: LifecycleSettings) -> float:
    """Explicit 1.0, implied 0.8, inferred 0.6, speculative 0.35."""
    return cfg.confidence_tier_weight[confidence_tier(confidence=confidence, cfg=cfg)]


def access_weight(*, access_count: int, cfg: LifecycleSettings) -> float:
    """``ln(1+n)/ln(21)`` in [0, 1]."""
    if access_count <= 0:
        return 0.0
    return clamp(math.log1p(access_count) / math.log1p(cfg.access_saturation))


def recency_weight(*, age_days: float, cfg: LifecycleSettings) -> float:
    """``max(0, 1 - age_days/90)``."""
    return clamp(1.0 - max(0.0, age_days) / cfg.recency_window_days)


def feedback_weight(*, feedback: float) -> float:
    """``(f + 1)/2`` for ``f ∈ [-1, 1]``."""
    return clamp((clamp(feedback, -1.0, 1.0) + 1.0) / 2.0)


def heat(
    *,
    confidence: float,
    access_count: int,
    age_days: float,
    importance: float,
    cfg: LifecycleSettings,
    feedback: float = 0.0,
    causal: float = 0.0,
    disputed: bool = False,
    archived: bool = False,
) -> float:
    """Heat in [0, 1] (0 for archived memories)."""
    if archived:
        return 0.0
    score = (
        cfg.heat_confidence * confidence_weight(confidence=confidence, cfg=cfg)
        + cfg.heat_access * access_weight(access_count=access_count, cfg=cfg)
        + cfg.heat_recency * recency_weight(age_days=age_days, cfg=cfg)
        + cfg.heat_importance * clamp(importance)
        + cfg.heat_feedback * feedback_weight(feedback=feedback)
        + cfg.heat_causal * clamp(causal)
        - (cfg.heat_disputed_penalty if disputed else 0.0)
    )
    return clamp(score)


def decay_score(
    *,
    age_days: float,
    stale_access_days: float,
    confidence: float,
    heat_score: float,
    cfg: LifecycleSettings,
    feedback: float = 0.0,
    archived: bool = False,
) -> float:
    """Decay score in [0, 1] (1 for archived memories).

    ``0.30·age/180 + 0.25·stale/120 + 0.20·(1 - confidence) + 0.10·(1 - f)/2 + 0.15·(1 - heat)``.
    """
    if archived:
        return 1.0
    score = (
        cfg.decay_w_age * clamp(age_days / cfg.decay_age_days)
        + cfg.decay_w_stale * clamp(stale_access_days / cfg.decay_stale_access_days)
        + cfg.decay_w_confidence * (1.0 - confidence_weight(confidence=confidence, cfg=cfg))
        + cfg.decay_w_feedback * clamp((1.0 - clamp(feedback, -1.0, 1.0)) / 2.0)
        + cfg.decay_w_cold * (1.0 - clamp(heat_score))
    )
    return clamp(score)


def tier_value(
    *,
    confidence: float,
    access_count: int,
    age_days: float,
    importance: float,
    cfg: LifecycleSettings,
    feedback: float = 0.0,
    category: str = "",
    verification_state: str = "unverified",
) -> float:
    """Tier value score in [0, 1] (hot/cold routing)."""
    disputed = verification_state == "disputed"
    score = (
        cfg.value_confidence * confidence_weight(confidence=confidence, cfg=cfg)
        + cfg.value_access * access_weight(access_count=access_count, cfg=cfg)
        + cfg.value_recency * recency_weight(age_days=age_days, cfg=cfg)
        + cfg.value_importance * clamp(importance)
        + cfg.value_feedback * feedback_weight(feedback=feedback)
        + (cfg.value_correction_bonus if category == "correction" else 0.0)
        + (cfg.value_confirmed_bonus if verification_state == "user_confirmed" else 0.0)
        - (cfg.value_disputed_penalty * cfg.heat_disputed_penalty if disputed else 0.0)
    )
    return clamp(score)


def policy_class(
    *,
    pinned: bool,
    immutable: bool,
    flashbulb: bool,
    category: str,
    time_bounded: bool,
    confidence: float,
    cfg: LifecycleSettings,
) -> str:
    """The lifecycle policy class of a memory: ``protected`` (pinned, immutable, flashbulb, or of a protected
    category — never archived by the lifecycle policy); ``ephemeral`` when it holds only for a while — a
    time-bounded statement (it has an end of validity: a plan, an appointment) or a speculative inference
    (confidence below the inferred tier) — archived as soon as the policy finds it stale; else ``durable``."""
    if pinned or immutable or flashbulb or category in cfg.protected_categories:
        return "protected"
    if time_bounded or confidence_tier(confidence=confidence, cfg=cfg) == "speculative":
        return "ephemeral"
    return "durable"


def lifecycle_transition(
    *,
    current_state: str,
    heat_score: float,
    decay: float,
    verification_state: str,
    category: str,
    policy_class: str,
    cfg: LifecycleSettings,
) -> tuple[str, str]:
    """``decideLifecycleTransition``: (next state, reason). The policy class decides how far decay may go:
    a ``protected`` memory (or one of a protected category) is never archived, a ``durable`` one is archived
    once its decay reaches ``archive_decay``, an ``ephemeral`` one (time-bounded or speculative: it holds only
    for a while) is archived as soon as it is stale, without waiting for the archive threshold."""
    if current_state == "archived":
        return "archived", "archived_is_terminal"
    if verification_state == "disputed":
        return "stale", "disputed_memories_do_not_promote_to_active"
    protected = policy_class == "protected" or category in cfg.protected_categories
    if decay >= cfg.archive_decay and not protected:
        return "archived", "decay_exceeded_archive_threshold"
    if decay >= cfg.stale_decay:
        if policy_class == "ephemeral" and not protected:
            return "archived", "ephemeral_memory_is_archived_when_stale"
        return "stale", "decay_exceeded_stale_threshold"
    if heat_score >= cfg.promote_heat:
        active = verification_state in ("user_confirmed", "system_inferred")
        return ("active" if active else "validated"), "heat_exceeded_promote_threshold"
    return current_state, "no_transition"


def tier_transition(*, current_store: str, value: float, age_days: float, cfg: LifecycleSettings) -> tuple[str, str]:
    """``decideTierTransition``: hot → cold at age >= 14 days and value <= 0.35;
    cold → hot at value >= 0.7."""
    if current_store == "hot" and age_days >= cfg.demotion_min_age_days and value <= cfg.demotion_value:
        return "cold", "value_below_demotion_threshold"
    if current_store == "cold" and value >= cfg.promotion_value:
        return "hot", "value_above_promotion_threshold"
    return current_store, "no_transition"


def speculative_expired(*, confidence: float, age_days: float, confirmed: bool, cfg: LifecycleSettings) -> bool:
    """Unconfirmed speculative memories (confidence < 0.40) expire after 30 days."""
    speculative = confidence_tier(confidence=confidence, cfg=cfg) == "speculative"
    return speculative and not confirmed and age_days >= cfg.speculative_ttl_days


#: lifecycle states a search may leave out (``read.filter_stale``)
FILTERED_STATES = frozenset({"stale", "archived"})


def filtered_as_stale(*, lifecycle_state: str, heat_score: float | None) -> bool:
    """Whether the stale filter leaves a memory out of search results: its lifecycle policy scored it
    (``heat_score`` set) and found it stale or archived. Fail-open: a memory the policy never scored keeps its
    place whatever its state says."""
    return heat_score is not None and lifecycle_state in FILTERED_STATES


def reinforce_edge(*, confidence: float, cfg: LifecycleSettings) -> float:
    """Edge confidence + 0.05 per observation, capped at 1 (never lowered)."""
    return min(1.0, max(confidence, confidence + cfg.edge_reinforce_delta))


def edge_confidence_at(
    *, confidence: float, last_reinforced_at: datetime, now: datetime, cfg: LifecycleSettings
) -> float:
    """Edge decay, computed lazily from the last reinforcement.

    Inside the 90-day grace window: unchanged. Then −0.1 per started window
    (``ceil((age - window)/window)``), never below the 0.1 floor (nor raised up to it).
    """
    window = cfg.edge_decay_window_days
    age = days_between(last_reinforced_at, now)
    if age <= window:
        return confidence
    windows = math.ceil((age - window) / window)
    lower = min(cfg.edge_decay_floor, confidence)
    return max(lower, min(confidence, confidence - cfg.edge_decay_per_window * windows))


def edge_traversable(*, confidence: float, cfg: LifecycleSettings) -> bool:
    """Edges below confidence 0.2 are pruned from graph traversal."""
    return confidence >= cfg.edge_traversal_floor
