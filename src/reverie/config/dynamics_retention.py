"""Settings of retention and the memory lifecycle: how long memories of each layer, category and source are
kept before they fade, and the states a memory goes through on its way to the cold store."""

from __future__ import annotations

import math
from typing import Literal

from pydantic import Field, model_validator

from reverie.config.checks import check_descending, check_sum
from reverie.config.core import Section
from reverie.config.sources import COGNITIVE_MEMORY, CONSOLIDATION, LAYERED, LIFECYCLE, PAHF, source
from reverie.legacy import RENAMED_SETTINGS


def _default_trust() -> dict[str, float]:
    return {"human": 1.0, "ai": 0.7, "interaction": 0.6, "ingest": 0.5, "code_scan": 0.5, "dream": 0.4}


def _default_category_decay() -> dict[str, float]:
    return {
        "preference": 0.0,
        "entity": 0.0,
        "correction": 0.0,
        "fact": 0.005,
        "decision": 0.02,
        "other": 0.05,
        # the lifecycle design's further categories, each decaying like its nearest of the six above
        "principle": 0.0,
        "relationship": 0.0,
        "commitment": 0.02,
        "skill": 0.005,
        "moment": 0.05,
    }


def _default_min_retention() -> dict[str, float]:
    return {
        "correction": math.inf,
        "preference": math.inf,
        "entity": math.inf,
        "decision": 45.0,
        "fact": 14.0,
        "other": 7.0,
    }


class RetentionSettings(Section):
    """Retention modes and trust-weighted decay (engram); category and PAHF decay; the consolidation design's
    fading retention with its β decay."""

    RENAMED = RENAMED_SETTINGS["RetentionSettings"]

    SOURCE = LAYERED

    mode: Literal["l2", "huber", "elastic"] = Field(
        default="huber", description="Retention regularisation mode (huber is the default)."
    )
    base_half_life_days: float = Field(default=30.0, gt=0, description="Episodic half-life 30 days.")
    layer_half_life_days: dict[str, float] = Field(
        default_factory=lambda: {
            "working": 30.0,
            "episodic": 30.0,
            "semantic": math.inf,
            "procedural": math.inf,
            "codebase": math.inf,
        },
        description="Half-life per layer (episodic 30 days; semantic, procedural, codebase ∞; "
        "working auto-promotes and uses the episodic value while it lasts).",
    )
    huber_knee: float = Field(
        default=0.5,
        gt=0,
        description="Huber = l2 up to t = 0.5·hl, then linear with the matching slope.",
    )
    elastic_l1_weight: float = Field(default=0.3, ge=0, le=1, description="Elastic = 0.3·max(0, 1 - t/(2hl)) + 0.7·l2.")
    elastic_l1_span: float = Field(default=2.0, gt=0, description="The 2 in max(0, 1 - t/(2hl)).")
    reinforcement_scale: float = Field(default=0.05, ge=0, description="Access reinforcement 0.05·ln(1+n).")
    reinforcement_cap: float = Field(default=0.3, ge=0, le=1, description="Access reinforcement capped at +0.3.")
    trust: dict[str, float] = Field(
        default_factory=_default_trust,
        description="Source trust human 1.0, ai 0.7, interaction 0.6, ingest 0.5, code_scan 0.5, dream 0.4.",
    )
    default_trust: float = Field(
        default=0.5,
        ge=0,
        le=1,
        description="Trust of a source missing from the table (reverie: as ingest, 0.5).",
    )
    trust_slope: float = Field(default=2.0, ge=0, description="Half-life × 1/(1 + 2·(1 - trust)).")
    category_decay: dict[str, float] = Field(
        default_factory=_default_category_decay,
        description="Decay per day by category (preference/entity/correction 0, fact 0.005, "
        "decision 0.02, other 0.05); unknown categories use 'other'. reverie adds the lifecycle design's categories, "
        "each like its nearest: principle and relationship 0 (like a preference, an entity), commitment 0.02 (like a "
        "decision), skill 0.005 (like a fact), moment 0.05 (like other). Scaled by the tier multiplier, applied by "
        "the dream's decay step to the retrieval strength (rehearsal reads it).",
        json_schema_extra=source(COGNITIVE_MEMORY),
    )
    min_retention_days: dict[str, float] = Field(
        default_factory=_default_min_retention,
        description="Minimum retention (corrections, preferences, entities permanent; decisions "
        "45 days; facts 14; other 7).",
        json_schema_extra=source(COGNITIVE_MEMORY),
    )
    pahf_multiplier: dict[str, float] = Field(
        default_factory=lambda: {
            "working": 10.0,
            "episodic": 3.0,
            "semantic": 1.0,
            "procedural": 1.0,
            "codebase": 1.0,
            "dormant": 0.0,
        },
        description="PAHF: decay multipliers working 10x, episodic 3x, semantic 1x, dormant "
        "frozen (0); procedural/codebase decay like semantic.",
        json_schema_extra=source(PAHF),
    )
    beta_days: dict[str, float] = Field(
        default_factory=lambda: {
            "working": 1.0,
            "episodic": 45.0,
            "semantic": 120.0,
            "procedural": math.inf,
            "codebase": math.inf,
            "core": 120.0,
        },
        description="Base decay β per category in days (episodic 45, semantic 120, procedural ∞, "
        "core 120); working 1 day and codebase ∞ are reverie's choices.",
        json_schema_extra=source(CONSOLIDATION),
    )
    fading_importance_boost: float = Field(
        default=2.0,
        ge=0,
        description="Fading retention: B = 1 + 2·importance.",
        json_schema_extra=source(CONSOLIDATION),
    )
    fading_boost_cap: float = Field(
        default=3.0,
        ge=1,
        description="Fading retention: B capped at 3.",
        json_schema_extra=source(CONSOLIDATION),
    )
    fading_min_stability: float = Field(
        default=0.01,
        gt=0,
        description="Fading retention: S floored at 0.01.",
        json_schema_extra=source(CONSOLIDATION),
    )
    fading_stability_new: float = Field(
        default=0.5,
        gt=0,
        le=1,
        description="S of the fading retention exp(-Δt/(S·B·β)) for a memory never recalled; S rises linearly "
        "with storage strength to 1.0 at its maximum. The consolidation design measures S on a 0–1 scale that "
        "reverie's 1–10 storage strength does not have: mapping it as storage/10 gave a new memory S = 0.1, so "
        "an episodic memory of middling importance that nobody recalled fell below the 0.20 consolidation "
        "threshold after about two weeks. With 0.5 that takes about ten weeks (B = 2, β = 45 days: "
        "0.5·2·45·ln 5 ≈ 72 days); chosen with the LoCoMo benchmark in the default configuration "
        "(bench/locomo.py) as the judge.",
    )
    core_floor: float = Field(
        default=0.60,
        ge=0,
        le=1,
        description="Retention floor of core memories.",
        json_schema_extra=source(CONSOLIDATION),
    )
    regular_floor: float = Field(
        default=0.02,
        ge=0,
        le=1,
        description="Retention floor of regular memories.",
        json_schema_extra=source(CONSOLIDATION),
    )
    precision_tiers: dict[str, float] = Field(
        default_factory=lambda: {"float32": 0.8, "int8": 0.5, "int4": 0.2},
        description="R > 0.8 float32, > 0.5 int8, > 0.2 int4, else int2.",
    )

    @model_validator(mode="after")
    def _check(self) -> RetentionSettings:
        bad = {k: v for k, v in self.trust.items() if not 0 <= v <= 1}
        if bad:
            raise ValueError(f"trust values must lie in [0, 1]: {bad}")
        if "other" not in self.category_decay or "other" not in self.min_retention_days:
            raise ValueError("category_decay and min_retention_days need an 'other' entry")
        neg = {k: v for k, v in {**self.category_decay, **self.pahf_multiplier}.items() if v < 0}
        if neg:
            raise ValueError(f"decay rates and multipliers must be >= 0: {neg}")
        if self.regular_floor > self.core_floor:
            raise ValueError(f"regular_floor {self.regular_floor} > core_floor {self.core_floor}")
        check_descending(
            "precision tiers",
            {
                "float32": self.precision_tiers.get("float32", math.nan),
                "int8": self.precision_tiers.get("int8", math.nan),
                "int4": self.precision_tiers.get("int4", math.nan),
            },
        )
        return self


class LifecycleSettings(Section):
    """Lifecycle policy: heat, decay score, tier value score, confidence tiers, edge confidence."""

    SOURCE = LIFECYCLE

    heat_confidence: float = Field(default=0.25, description="Heat weight of confidence.")
    heat_access: float = Field(default=0.30, description="Heat weight of ln(1+n)/ln(21).")
    heat_recency: float = Field(default=0.20, description="Heat weight of max(0, 1 - age_days/90).")
    heat_importance: float = Field(default=0.15, description="Heat weight of importance.")
    heat_feedback: float = Field(default=0.10, description="Heat weight of feedback.")
    heat_causal: float = Field(default=0.05, description="Heat weight of causal links.")
    heat_disputed_penalty: float = Field(default=0.2, ge=0, description="Heat −0.2 when disputed.")
    access_saturation: int = Field(default=20, ge=1, description="Access weight ln(1+n)/ln(1+20).")
    recency_window_days: float = Field(default=90.0, gt=0, description="Recency max(0, 1 - age_days/90).")
    decay_age_days: float = Field(default=180.0, gt=0, description="Decay age risk age_days/180.")
    decay_stale_access_days: float = Field(default=120.0, gt=0, description="Stale-access risk days/120.")
    decay_w_age: float = Field(default=0.30, description="Decay score weight of age risk.")
    decay_w_stale: float = Field(default=0.25, description="Decay score weight of stale-access risk.")
    decay_w_confidence: float = Field(default=0.20, description="Decay score weight of 1 - confidence.")
    decay_w_feedback: float = Field(default=0.10, description="Decay score weight of negative feedback.")
    decay_w_cold: float = Field(default=0.15, description="Decay score weight of 1 - heat.")
    value_confidence: float = Field(default=0.24, description="Tier value weight of confidence.")
    value_access: float = Field(default=0.26, description="Tier value weight of access.")
    value_recency: float = Field(default=0.20, description="Tier value weight of recency.")
    value_importance: float = Field(default=0.20, description="Tier value weight of importance.")
    value_feedback: float = Field(default=0.10, description="Tier value weight of feedback.")
    value_correction_bonus: float = Field(default=0.08, description="Tier value +0.08 for corrections.")
    value_confirmed_bonus: float = Field(default=0.05, description="Tier value +0.05 when user-confirmed.")
    value_disputed_penalty: float = Field(default=0.5, description="Tier value −0.5·0.2 when disputed.")
    promote_heat: float = Field(default=0.55, ge=0, le=1, description="Lifecycle promote when heat >= 0.55.")
    stale_decay: float = Field(default=0.65, ge=0, le=1, description="Lifecycle stale when decay >= 0.65.")
    archive_decay: float = Field(default=0.85, ge=0, le=1, description="Lifecycle archive when decay >= 0.85.")
    protected_categories: tuple[str, ...] = Field(
        default=("decision", "principle", "commitment", "preference"),
        description="Categories never archived by the lifecycle policy.",
    )
    demotion_min_age_days: float = Field(default=14.0, ge=0, description="Hot → cold only after 14 days.")
    demotion_value: float = Field(default=0.35, ge=0, le=1, description="Hot → cold when value <= 0.35.")
    promotion_value: float = Field(default=0.70, ge=0, le=1, description="Cold → hot when value >= 0.70.")
    confidence_tiers: dict[str, float] = Field(
        default_factory=lambda: {"explicit": 0.95, "implied": 0.70, "inferred": 0.40},
        description="Confidence tiers by lower bound (speculative < 0.40 per the lifecycle design; the explicit "
        "0.95 and implied 0.70 bounds are reverie's).",
    )
    confidence_tier_weight: dict[str, float] = Field(
        default_factory=lambda: {"explicit": 1.0, "implied": 0.8, "inferred": 0.6, "speculative": 0.35},
        description="Weight of each confidence tier in heat/decay/value scores.",
    )
    speculative_ttl_days: float = Field(default=30.0, gt=0, description="Speculative memories expire after 30 days.")
    edge_reinforce_delta: float = Field(default=0.05, ge=0, le=1, description="Edge confidence +0.05 per observation.")
    edge_decay_window_days: float = Field(default=90.0, gt=0, description="Edge decay window (grace), 90 days.")
    edge_decay_per_window: float = Field(default=0.1, ge=0, le=1, description="Edge confidence −0.1 per window.")
    edge_decay_floor: float = Field(default=0.1, ge=0, le=1, description="Decay never drops an edge below 0.1.")
    edge_traversal_floor: float = Field(
        default=0.2, ge=0, le=1, description="Edges below confidence 0.2 are pruned from traversal."
    )

    @model_validator(mode="after")
    def _check(self) -> LifecycleSettings:
        check_sum(
            "heat weights (without causal)",
            {
                "heat_confidence": self.heat_confidence,
                "heat_access": self.heat_access,
                "heat_recency": self.heat_recency,
                "heat_importance": self.heat_importance,
                "heat_feedback": self.heat_feedback,
            },
        )
        check_sum(
            "decay weights",
            {
                "decay_w_age": self.decay_w_age,
                "decay_w_stale": self.decay_w_stale,
                "decay_w_confidence": self.decay_w_confidence,
                "decay_w_feedback": self.decay_w_feedback,
                "decay_w_cold": self.decay_w_cold,
            },
        )
        check_sum(
            "tier value weights",
            {
                "value_confidence": self.value_confidence,
                "value_access": self.value_access,
                "value_recency": self.value_recency,
                "value_importance": self.value_importance,
                "value_feedback": self.value_feedback,
            },
        )
        if not self.stale_decay <= self.archive_decay:
            raise ValueError(f"stale_decay {self.stale_decay} must be <= archive_decay {self.archive_decay}")
        if not self.demotion_value < self.promotion_value:
            raise ValueError(f"demotion_value {self.demotion_value} must be < promotion_value {self.promotion_value}")
        check_descending(
            "confidence tiers",
            {k: self.confidence_tiers.get(k, math.nan) for k in ("explicit", "implied", "inferred")},
        )
        return self
