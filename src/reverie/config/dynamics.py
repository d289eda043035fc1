"""Settings of the memory dynamics. Every setting names the public idea it comes from (``source``).

The sections mirror the modules of :mod:`reverie.dynamics`. Cross-field constraints (weights that
must sum to 1, thresholds that must be ordered) are checked by model validators that say which
fields are wrong and by how much.
"""

from __future__ import annotations

import warnings
from typing import Literal

from pydantic import Field, field_validator, model_validator

from reverie.config.core import Section
from reverie.config.dynamics_importance import ImportanceSettings, UtilitySettings
from reverie.config.dynamics_retention import LifecycleSettings, RetentionSettings
from reverie.config.sources import (
    ACTR,
    AMEM,
    COGNITIVE_MEMORY,
    CONSOLIDATION,
    DUAL_STRENGTH,
    EMOTION,
    ENERGY,
    FSRS,
    LAYERED,
    REVERIE,
    TAGGING,
    WORKING_MEMORY,
    source,
)
from reverie.legacy import RENAMED_CURVES, RENAMED_SETTINGS

#: py-fsrs 6 ``DEFAULT_PARAMETERS`` (the reference scheduler's FSRS-6 defaults, w0 … w20).
FSRS6_DEFAULT_W: tuple[float, ...] = (
    0.212, 1.2931, 2.3065, 8.2956, 6.4133, 0.8334, 3.0194, 0.001, 1.8722, 0.1666, 0.796, 1.4835,
    0.0614, 0.2629, 1.6483, 0.6014, 1.8729, 0.5425, 0.0912, 0.0658, 0.1542,
)  # fmt: skip
#: py-fsrs 6 parameter bounds (lower, upper) used to validate ``w``.
FSRS6_W_LOWER: tuple[float, ...] = (
    0.001, 0.001, 0.001, 0.001, 1.0, 0.001, 0.001, 0.001, 0.0, 0.0, 0.001, 0.001, 0.001, 0.001, 0.0,
    0.0, 1.0, 0.0, 0.0, 0.0, 0.1,
)  # fmt: skip
FSRS6_W_UPPER: tuple[float, ...] = (
    100.0, 100.0, 100.0, 100.0, 10.0, 4.0, 4.0, 0.75, 4.5, 0.8, 3.5, 5.0, 0.25, 0.9, 4.0, 1.0, 6.0,
    2.0, 2.0, 0.8, 0.8,
)  # fmt: skip


class EnergySettings(Section):
    """The three-tier energy model: decay multiplies and is computed lazily from the last update."""

    SOURCE = ENERGY

    initial: float = Field(default=1.0, ge=0, description="Energy of a new memory.")
    access_boost: float = Field(default=1.0, ge=0, description="+1.0 energy per access.")
    decay_working: float = Field(default=0.5, ge=0, description="λ per hour, working tier.")
    decay_episodic: float = Field(default=0.05, ge=0, description="λ per hour, short-term (episodic) tier.")
    decay_semantic: float = Field(default=0.001, ge=0, description="λ per hour, long-term (semantic) tier.")
    decay_procedural: float = Field(
        default=0.001,
        ge=0,
        description="Long-term λ per hour, applied to the procedural layer.",
    )
    decay_codebase: float = Field(
        default=0.001,
        ge=0,
        description="Long-term λ per hour, applied to the codebase layer.",
    )
    promote_working: float = Field(default=2.0, description="Working → episodic when energy > 2.0.")
    promote_episodic: float = Field(default=5.0, description="Episodic → semantic when energy > 5.0.")
    session_end_threshold: float = Field(default=1.5, description="Session-end promotion threshold.")
    working_expiry: float = Field(default=0.1, description="Working memories below this energy expire.")
    reinforce_factor: float = Field(default=0.5, ge=0, description="Retroactive strengthening +0.5·similarity.")
    reinforce_similarity: float = Field(
        default=0.7,
        ge=-1,
        le=1,
        description="Retroactive strengthening applies to older memories with similarity > 0.7 "
        "(cosine of API embedders; see the calibration notes in docs/design-notes.md).",
    )
    reinforce_layers: tuple[str, ...] = Field(
        default=("episodic", "semantic", "procedural", "codebase"),
        description="Only short-term and long-term memories (episodic/semantic, plus the procedural and codebase "
        "layers) "
        "memories are strengthened retroactively.",
    )

    @model_validator(mode="after")
    def _ordered(self) -> EnergySettings:
        if not self.working_expiry < self.promote_working < self.promote_episodic:
            raise ValueError(
                "energy thresholds must satisfy working_expiry < promote_working < promote_episodic, got "
                f"{self.working_expiry} / {self.promote_working} / {self.promote_episodic}"
            )
        return self


class FsrsSettings(Section):
    """FSRS-6 in its canonical form, checked against the py-fsrs reference scheduler."""

    SOURCE = FSRS

    w: tuple[float, ...] = Field(
        default=FSRS6_DEFAULT_W,
        description="FSRS-6 weights w0…w20, default = the reference scheduler's (py-fsrs 6) DEFAULT_PARAMETERS.",
    )
    w20: float | None = Field(
        default=None,
        ge=0.1,
        le=0.8,
        description="Override of the forgetting-curve decay w20 (None = w[20]).",
    )
    RENAMED = RENAMED_SETTINGS["FsrsSettings"]

    curve: Literal["fsrs6", "simple_power"] = Field(
        default="fsrs6",
        description="'fsrs6' = (1 + f·t/S)^(-w20) with R(S)=0.9; 'simple_power' = the Cognitive Memory v9 "
        "design's (1 + t/(9S))^(-1/0.5) with R(S)=0.81. A former name of 'simple_power' is still accepted for "
        "one release (see CHANGELOG.md).",
    )
    simple_power_factor: float = Field(
        default=9.0,
        gt=0,
        description="The 9 in (1 + t/(9S))^(-1/0.5).",
        json_schema_extra=source(COGNITIVE_MEMORY),
    )
    simple_power_exponent: float = Field(
        default=2.0,
        gt=0,
        description="The 1/0.5 = 2 in (1 + t/(9S))^(-1/0.5).",
        json_schema_extra=source(COGNITIVE_MEMORY),
    )
    desired_retention: float = Field(
        default=0.9,
        gt=0,
        lt=1,
        description="FSRS: desired retention for the next interval (reference 0.9).",
    )
    stability_min: float = Field(default=0.001, gt=0, description="FSRS-6 reference: minimum stability (days).")
    difficulty_min: float = Field(default=1.0, description="FSRS-6 reference: minimum difficulty.")
    difficulty_max: float = Field(default=10.0, description="FSRS-6 reference: maximum difficulty.")
    short_term: bool = Field(
        default=True,
        description="FSRS-6 reference: a review less than one day after the previous one uses the "
        "same-day (short-term) stability formula.",
    )
    rehearsal_threshold: float = Field(
        default=0.3,
        ge=0,
        le=1,
        description="Endangered memories (R < 0.3) are rehearsed in the dream cycle.",
    )
    rehearsal_boost: float = Field(default=1.5, ge=1, description="Rehearsal multiplies stability by 1.5.")

    @field_validator("curve", mode="before")
    @classmethod
    def _former_curve(cls, value: object) -> object:
        if isinstance(value, str) and value in RENAMED_CURVES:
            warnings.warn(
                f"dynamics.fsrs.curve {value!r} is now {RENAMED_CURVES[value]!r}; the old value goes "
                "away in the next release",
                DeprecationWarning,
                stacklevel=2,
            )
            return RENAMED_CURVES[value]
        return value

    @field_validator("w")
    @classmethod
    def _w_bounds(cls, w: tuple[float, ...]) -> tuple[float, ...]:
        if len(w) != len(FSRS6_DEFAULT_W):
            raise ValueError(f"FSRS-6 needs {len(FSRS6_DEFAULT_W)} weights w0…w20, got {len(w)}")
        bad = [
            f"w{i}={v} not in [{lo}, {hi}]"
            for i, (v, lo, hi) in enumerate(zip(w, FSRS6_W_LOWER, FSRS6_W_UPPER, strict=True))
            if not lo <= v <= hi
        ]
        if bad:
            raise ValueError("FSRS-6 weights out of bounds: " + "; ".join(bad))
        return w

    @property
    def params(self) -> tuple[float, ...]:
        """The effective weights (w20 replaced by the override when set)."""
        if self.w20 is None:
            return self.w
        return (*self.w[:20], self.w20)


class StrengthSettings(Section):
    """Dual strength: storage strength (1–10) never decays; retrieval strength (0–1) follows FSRS.

    The storage increment follows the consolidation design's spaced-repetition boost (0.1·min(2, days/7)
    on its 0–1 stability scale, ×10 on the 1–10 storage scale) plus a small floor so that every
    successful retrieval grows storage strength.
    """

    SOURCE = DUAL_STRENGTH

    storage_min: float = Field(default=1.0, description="Storage strength lower bound (a new memory).")
    storage_max: float = Field(default=10.0, description="Storage strength upper bound.")
    storage_base_gain: float = Field(
        default=0.05,
        gt=0,
        description="Minimum storage gain per successful retrieval (massed practice).",
    )
    storage_spaced_gain: float = Field(
        default=1.0,
        ge=0,
        description="Direct-retrieval boost 0.1 on the 0–1 scale = 1.0 on the 1–10 scale.",
        json_schema_extra=source(CONSOLIDATION),
    )
    storage_associative_gain: float = Field(
        default=0.3,
        ge=0,
        description="Associative-retrieval boost 0.03 on the 0–1 scale = 0.3 here.",
        json_schema_extra=source(CONSOLIDATION),
    )
    spacing_interval_days: float = Field(
        default=7.0, gt=0, description="Days of spacing for a 1x factor.", json_schema_extra=source(CONSOLIDATION)
    )
    spacing_cap: float = Field(
        default=2.0, gt=0, description="Cap of the spaced-repetition factor.", json_schema_extra=source(CONSOLIDATION)
    )

    @model_validator(mode="after")
    def _range(self) -> StrengthSettings:
        if not 0 < self.storage_min < self.storage_max:
            raise ValueError(f"need 0 < storage_min < storage_max, got {self.storage_min} / {self.storage_max}")
        return self


class ActrSettings(Section):
    """ACT-R base-level activation, squashed by a sigmoid."""

    SOURCE = ACTR

    decay: float = Field(default=0.5, gt=0, lt=1, description="ACT-R: decay d = 0.5 in t^(-d).")
    min_age_seconds: float = Field(
        default=1.0, gt=0, description="ACT-R: ages are floored at one second so that log(age) stays finite."
    )
    exact_recent: int = Field(
        default=10,
        ge=0,
        description="ACT-R full form: the k most recent accesses are summed exactly; older ones by "
        "Petrov's (2006) hybrid approximation.",
    )
    sigmoid_offset: float = Field(default=0.0, description="Activation = 1/(1+exp(-(B - offset)/scale)).")
    sigmoid_scale: float = Field(default=1.0, gt=0, description="Activation = 1/(1+exp(-(B - offset)/scale)).")


class WorkingMemorySettings(Section):
    """Working memory (Miller's 7±2) with a 30-minute recency half-life."""

    SOURCE = WORKING_MEMORY

    max_items: int = Field(default=9, ge=1, description="At most 9 working-memory items per session.")
    half_life_minutes: float = Field(default=30.0, gt=0, description="Recency exp(-ln2·age_min/30).")
    access_weight: float = Field(default=0.1, ge=0, description="Eviction score ×(1 + 0.1·accessCount).")
    promote_accesses: int = Field(default=2, ge=1, description="Promotion candidate at accessCount >= 2.")
    promote_importance: float = Field(default=0.6, ge=0, le=1, description="… or importance >= 0.6.")


class TaggingSettings(Section):
    """Synaptic tagging & capture, Hebbian co-activation; co-activation clusters of the energy model."""

    SOURCE = TAGGING

    weak_importance: float = Field(default=0.5, ge=0, le=1, description="Tag memories with importance < 0.5.")
    strong_importance: float = Field(default=0.7, ge=0, le=1, description="A memory >= 0.7 captures tags.")
    tag_ttl_hours: float = Field(default=4.0, gt=0, description="Synaptic tag TTL 4 hours.")
    capture_boost: float = Field(default=1.3, ge=1, description="Captured memories' stability ×1.3.")
    hebbian_boost: float = Field(default=0.02, ge=0, description="Co-retrieved memories' stability +2%.")
    coactivation_threshold: int = Field(default=3, ge=1, description="Pairs co-retrieved >= 3 times …")
    coactivation_bonus: float = Field(default=0.05, ge=0, description="… get a +0.05 retrieval boost.")
    spreading_boost: float = Field(
        default=0.02,
        ge=0,
        description="Neighbours of an accessed memory get a 2% stability boost.",
        json_schema_extra=source(AMEM),
    )
    cluster_weight: int = Field(
        default=3,
        ge=1,
        description="Co-activation clusters form at weight > 3.",
        json_schema_extra=source(ENERGY),
    )
    cluster_exclusive: bool = Field(
        default=True,
        description="The cluster rule 'weight > 3' is exclusive (False: >=).",
        json_schema_extra=source(ENERGY),
    )

    @model_validator(mode="after")
    def _check(self) -> TaggingSettings:
        if self.weak_importance > self.strong_importance:
            raise ValueError(
                f"weak_importance {self.weak_importance} must be <= strong_importance {self.strong_importance}"
            )
        return self


class EmotionSettings(Section):
    """Emotional memory: flashbulb memories and mood congruence."""

    SOURCE = EMOTION

    flashbulb_arousal: float = Field(default=0.8, ge=0, le=1, description="Flashbulb at arousal >= 0.8.")
    flashbulb_importance: float = Field(default=0.9, ge=0, le=1, description="Flashbulb importance at least 0.9.")
    flashbulb_stability: float = Field(default=1.5, ge=1, description="Flashbulb stability ×1.5.")
    mood_congruence: float = Field(default=1.1, ge=1, description="Mood-congruent memories score ×1.1.")


class PromotionSettings(Section):
    """Layer transitions: every rule set is a setting; the defaults combine the designs' rules."""

    SOURCE = LAYERED

    working_after_minutes: float = Field(default=30.0, ge=0, description="Working → episodic after 30 min …")
    working_accesses: int = Field(default=2, ge=1, description="… or 2 accesses.")
    working_use_energy: bool = Field(
        default=True,
        description="Working → episodic also when energy > 2.0.",
        json_schema_extra=source(ENERGY),
    )
    episodic_accesses: int = Field(
        default=3,
        ge=1,
        description="Episodic → semantic at access_count >= 3 (frequent use).",
        json_schema_extra=source(COGNITIVE_MEMORY),
    )
    episodic_utility: float = Field(
        default=0.7,
        ge=0,
        le=1,
        description="Episodic → semantic at utility >= 0.7 …",
        json_schema_extra=source(COGNITIVE_MEMORY),
    )
    episodic_utility_age_days: float = Field(
        default=7.0,
        ge=0,
        description="… and age >= 7 days (sustained utility).",
        json_schema_extra=source(COGNITIVE_MEMORY),
    )
    episodic_entity_count: int = Field(
        default=3,
        ge=1,
        description="Episodic → semantic when >= 3 episodic memories share an entity.",
        json_schema_extra=source(COGNITIVE_MEMORY),
    )
    episodic_importance: float = Field(default=0.7, ge=0, le=1, description="Importance >= 0.7 …")
    episodic_importance_accesses: int = Field(default=5, ge=1, description="… and access_count >= 5.")
    episodic_use_energy: bool = Field(
        default=True,
        description="Episodic → semantic also when energy > 5.0.",
        json_schema_extra=source(ENERGY),
    )
    core_accesses: int = Field(
        default=10,
        ge=1,
        description="Core at access_count >= 10 …",
        json_schema_extra=source(CONSOLIDATION),
    )
    core_stability: float = Field(
        default=0.85,
        ge=0,
        le=1,
        description="… normalised storage strength (stability) >= 0.85 …",
        json_schema_extra=source(CONSOLIDATION),
    )
    core_sessions: int = Field(
        default=3,
        ge=1,
        description="… and >= 3 distinct sessions.",
        json_schema_extra=source(CONSOLIDATION),
    )
    demote_idle_days: float = Field(
        default=60.0,
        ge=0,
        description="Semantic → dormant after >= 60 idle days …",
        json_schema_extra=source(COGNITIVE_MEMORY),
    )
    demote_utility: float = Field(
        default=0.2,
        ge=0,
        le=1,
        description="… and utility < 0.2 (both required).",
        json_schema_extra=source(COGNITIVE_MEMORY),
    )
    archive_age_days: float = Field(default=90.0, ge=0, description="Archive after 90 days if …")
    archive_retention: float = Field(default=0.15, ge=0, le=1, description="… retention < 0.15 …")
    archive_importance: float = Field(default=0.3, ge=0, le=1, description="… importance < 0.3 …")
    archive_accesses: int = Field(default=3, ge=0, description="… and access_count < 3.")
    archive_importance_measure: Literal["stored", "nine_factor"] = Field(
        default="stored",
        description="Which importance the archival rule compares with `archive_importance`: `stored` — the importance "
        "set at creation (the four-channel score with the encoding boost); `nine_factor` — the layered-memory "
        "design's nine-factor importance at the time of the check (its base is the importance set at creation moved "
        "by the write-time surprise, so a redundant memory archives sooner and a novel one later; recency, accesses, "
        "stability, layer, source trust, confirmations, emotion and ACT-R activation weigh in). `stored` is the "
        "default by measurement: on the LoCoMo development half `nine_factor` archived 699 of 3,134 memories, left "
        "overall recall@10 where it was (0.676 vs 0.677), cost multi-hop questions 0.008 and halved the share of "
        "old turns that consolidation summarises (62% → 32%), since archival takes fading turns before they join a "
        "consolidation group (docs/architecture.md, design notes).",
    )
    archive_exempt_layers: tuple[str, ...] = Field(
        default=("semantic", "procedural", "codebase"),
        description="Semantic, procedural (and codebase) memories are exempt from archival.",
    )
    protected_categories: tuple[str, ...] = Field(
        default=("correction", "preference", "entity"),
        description="Categories with permanent minimum retention are never archived.",
        json_schema_extra=source(COGNITIVE_MEMORY),
    )
    procedural_layer: bool = Field(
        default=True,
        description="Know-how goes to the procedural layer by itself — a memory that earns its promotion to "
        "long-term knowledge (episodic → semantic), or is already semantic, moves to the procedural layer instead "
        "when it is an instruction, a decision or a pattern — its category is one of procedural_categories (and it "
        "is a standing note, not a dated episode), or it reads as a how-to or a standing rule ('how to …', 'to "
        "deploy, first …', 'always run …', 'never use …', Turkish 'nasıl yapılır', 'her zaman … kullan'). Only "
        "promotion moves memories there, so a passing remark never does. (The layered-memory design's procedural "
        "layer: decisions, patterns, how-to.)",
        json_schema_extra=source(REVERIE),
    )
    procedural_categories: tuple[str, ...] = Field(
        default=("decision", "pattern", "procedure", "skill", "howto", "principle"),
        description="Categories whose long-term memories belong to the procedural layer (see procedural_layer).",
        json_schema_extra=source(REVERIE),
    )


class DynamicsSettings(Section):
    """All decay, strength and scoring constants."""

    energy: EnergySettings = Field(default_factory=EnergySettings)
    fsrs: FsrsSettings = Field(default_factory=FsrsSettings)
    strength: StrengthSettings = Field(default_factory=StrengthSettings)
    actr: ActrSettings = Field(default_factory=ActrSettings)
    importance: ImportanceSettings = Field(default_factory=ImportanceSettings)
    utility: UtilitySettings = Field(default_factory=UtilitySettings)
    retention: RetentionSettings = Field(default_factory=RetentionSettings)
    lifecycle: LifecycleSettings = Field(default_factory=LifecycleSettings)
    working: WorkingMemorySettings = Field(default_factory=WorkingMemorySettings)
    tagging: TaggingSettings = Field(default_factory=TaggingSettings)
    emotion: EmotionSettings = Field(default_factory=EmotionSettings)
    promotion: PromotionSettings = Field(default_factory=PromotionSettings)


__all__ = [
    "ActrSettings",
    "DynamicsSettings",
    "EmotionSettings",
    "EnergySettings",
    "FsrsSettings",
    "ImportanceSettings",
    "LifecycleSettings",
    "PromotionSettings",
    "RetentionSettings",
    "StrengthSettings",
    "TaggingSettings",
    "UtilitySettings",
    "WorkingMemorySettings",
]
