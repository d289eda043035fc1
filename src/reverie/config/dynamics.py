"""Settings of the memory dynamics. Every setting names the public idea it comes from (``source``).

The sections mirror the modules of :mod:`reverie.dynamics`. Cross-field constraints (weights that
must sum to 1, thresholds that must be ordered) are checked by model validators that say which
fields are wrong and by how much.
"""

from __future__ import annotations

import itertools
import math
import warnings
from typing import Literal

from pydantic import Field, field_validator, model_validator

from reverie.config.core import Section
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
    LIFECYCLE,
    PAHF,
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

_SUM_TOL = 1e-6


def _check_sum(name: str, weights: dict[str, float], target: float = 1.0) -> None:
    total = sum(weights.values())
    if abs(total - target) > _SUM_TOL:
        parts = ", ".join(f"{k}={v}" for k, v in weights.items())
        raise ValueError(f"{name} must sum to {target}, got {total:.6g} ({parts})")


def _check_descending(name: str, values: dict[str, float]) -> None:
    items = list(values.items())
    bad = [f"{a}={va} <= {b}={vb}" for (a, va), (b, vb) in itertools.pairwise(items) if va <= vb]
    if bad:
        raise ValueError(f"{name} must be strictly descending: " + "; ".join(bad))


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


class ImportanceSettings(Section):
    """Four-channel importance (Cognitive Memory v9), nine-factor importance and surprise (engram)."""

    SOURCE = LAYERED

    # four importance channels
    w_novelty: float = Field(
        default=0.25,
        ge=0,
        le=1,
        description="Novelty channel weight.",
        json_schema_extra=source(COGNITIVE_MEMORY),
    )
    w_arousal: float = Field(
        default=0.30,
        ge=0,
        le=1,
        description="Arousal channel weight.",
        json_schema_extra=source(COGNITIVE_MEMORY),
    )
    w_reward: float = Field(
        default=0.25,
        ge=0,
        le=1,
        description="Reward channel weight.",
        json_schema_extra=source(COGNITIVE_MEMORY),
    )
    w_attention: float = Field(
        default=0.20,
        ge=0,
        le=1,
        description="Attention channel weight.",
        json_schema_extra=source(COGNITIVE_MEMORY),
    )
    boost_min: float = Field(
        default=0.7,
        gt=0,
        description="Encoding boost multiplier lower bound.",
        json_schema_extra=source(COGNITIVE_MEMORY),
    )
    boost_max: float = Field(
        default=1.3,
        gt=0,
        description="Encoding boost multiplier upper bound.",
        json_schema_extra=source(COGNITIVE_MEMORY),
    )
    boost_emotion_gain: float = Field(
        default=0.3,
        ge=0,
        description="How much the emotion of what is being remembered deepens its encoding: a new memory's "
        "importance is multiplied by 1 + gain·(the stronger of its arousal and the size of its valence), so an "
        "emotionally neutral memory keeps its importance (×1.0) and a strongly emotional one gets up to ×1.3; the "
        "result is kept between the encoding boost bounds. Source: the encoding boost (0.7–1.3) of the "
        "four-channel importance; that emotion drives it is reverie's choice (emotional enhancement of encoding).",
    )
    priority_critical: float = Field(
        default=0.8,
        description="Priority 'critical' at importance >= 0.8.",
        json_schema_extra=source(COGNITIVE_MEMORY),
    )
    priority_high: float = Field(
        default=0.6,
        description="Priority 'high' at importance >= 0.6.",
        json_schema_extra=source(COGNITIVE_MEMORY),
    )
    priority_normal: float = Field(
        default=0.4,
        description="Priority 'normal' at importance >= 0.4, else 'low'.",
        json_schema_extra=source(COGNITIVE_MEMORY),
    )
    # nine importance factors (weights from engram's source)
    f_base: float = Field(default=0.25, ge=0, description="Weight of the base importance.")
    f_access: float = Field(default=0.12, ge=0, description="Weight of access frequency min(1, 0.1·ln(1+n)).")
    f_recency: float = Field(default=0.12, ge=0, description="Weight of recency exp(-ln2·age_days/30).")
    f_emotion: float = Field(default=0.08, ge=0, description="Weight of emotion |valence|·0.3.")
    f_stability: float = Field(default=0.08, ge=0, description="Weight of stability min(1, n/(span_days+1)).")
    f_layer: float = Field(default=0.15, ge=0, description="Weight of the layer boost.")
    f_trust: float = Field(default=0.10, ge=0, description="Weight of source trust.")
    f_confirmations: float = Field(default=0.10, ge=0, description="Weight of confirmations min(0.2, 0.05·ln(1+c)).")
    f_actr: float = Field(
        default=0.10,
        ge=0,
        description="Weight of the ACT-R factor its source omits (added, then all "
        "nine weights are renormalised to sum to 1).",
        json_schema_extra=source(ACTR),
    )
    access_log_scale: float = Field(default=0.1, ge=0, description="Access factor min(1, 0.1·ln(1+n)).")
    recency_half_life_days: float = Field(default=30.0, gt=0, description="Recency half-life, 30 days.")
    recency_trust_weighted: bool = Field(
        default=False,
        description="The layered-memory design says the recency half-life is trust-weighted; its source uses a "
        "plain 30 days (default). True scales it by 1/(1+2·(1-trust)).",
    )
    emotion_scale: float = Field(default=0.3, ge=0, description="Emotion factor |valence|·0.3.")
    layer_boost: dict[str, float] = Field(
        default_factory=lambda: {
            "working": 0.0,
            "episodic": 0.1,
            "semantic": 0.3,
            "procedural": 0.2,
            "codebase": 0.0,
        },
        description="Layer boost working 0, episodic 0.1, semantic 0.3, procedural 0.2 "
        "(codebase is absent from its source: 0).",
    )
    confirm_log_scale: float = Field(default=0.05, ge=0, description="Confirmations 0.05·ln(1+c).")
    confirm_cap: float = Field(default=0.2, ge=0, description="Confirmations capped at 0.2.")
    # surprise
    surprise_k: int = Field(default=5, ge=1, description="Surprise from the k = 5 nearest neighbours.")
    surprise_slope: float = Field(default=10.0, gt=0, description="Surprise = sigmoid(10·(d - 0.35)).")
    surprise_center: float = Field(
        default=0.35,
        description="Surprise sigmoid centre on mean cosine distance, for API embedders. Like every "
        "similarity threshold it depends on the embedder: the write path moves it by how far the embedder's "
        "novel-memory threshold (write.gate.profiles.<profile>.create_below) sits from the API embedders' (0.70), "
        "e.g. to 0.10 for multilingual-e5-small, whose cosines run high.",
    )
    surprise_scale: float = Field(default=0.6, ge=0, description="Importance += (surprise - 0.5)·0.6.")
    surprise_empty_modifier: float = Field(
        default=0.15,
        description="Importance modifier of the very first memory (no neighbours), as engram's source sets it.",
    )
    importance_floor: float = Field(default=0.05, ge=0, le=1, description="Adjusted importance clamp lower bound.")
    importance_ceiling: float = Field(default=1.0, ge=0, le=1, description="Adjusted importance clamp upper bound.")
    duplicate_similarity: float = Field(
        default=0.92, ge=-1, le=1, description="Nearest similarity >= 0.92 flags a duplicate."
    )
    # heuristic importance levels
    levels: dict[str, float] = Field(
        default_factory=lambda: {"critical": 1.0, "high": 0.8, "normal": 0.5, "low": 0.3, "trivial": 0.1},
        description="Heuristic importance levels (score of each named level) used when no "
        "scorer is available; 'normal' is the 0.5 default of the lifecycle policy's value inputs.",
        json_schema_extra=source(LIFECYCLE),
    )

    @model_validator(mode="after")
    def _weights(self) -> ImportanceSettings:
        _check_sum(
            "importance channel weights",
            {
                "w_novelty": self.w_novelty,
                "w_arousal": self.w_arousal,
                "w_reward": self.w_reward,
                "w_attention": self.w_attention,
            },
        )
        _check_sum("eight source factor weights", self.source_factor_weights)
        if not 0 < self.boost_min <= 1 <= self.boost_max:
            raise ValueError(f"need 0 < boost_min <= 1 <= boost_max, got {self.boost_min} / {self.boost_max}")
        _check_descending(
            "priority thresholds",
            {
                "priority_critical": self.priority_critical,
                "priority_high": self.priority_high,
                "priority_normal": self.priority_normal,
            },
        )
        if self.importance_floor > self.importance_ceiling:
            raise ValueError(f"importance_floor {self.importance_floor} > importance_ceiling {self.importance_ceiling}")
        bad = {k: v for k, v in self.levels.items() if not 0 <= v <= 1}
        if bad:
            raise ValueError(f"importance levels must lie in [0, 1]: {bad}")
        return self

    @property
    def source_factor_weights(self) -> dict[str, float]:
        """The eight importance factors as engram's source weights them (they sum to 1)."""
        return {
            "base": self.f_base,
            "access": self.f_access,
            "recency": self.f_recency,
            "emotion": self.f_emotion,
            "stability": self.f_stability,
            "layer": self.f_layer,
            "trust": self.f_trust,
            "confirmations": self.f_confirmations,
        }

    @property
    def nine_factor_weights(self) -> dict[str, float]:
        """The nine weights renormalised to sum to 1 (ACT-R added, then renormalised)."""
        raw = {**self.source_factor_weights, "actr": self.f_actr}
        total = sum(raw.values())
        return {k: v / total for k, v in raw.items()}


class UtilitySettings(Section):
    """Utility: update on use, drift to the prior, weighted retrieval score."""

    SOURCE = COGNITIVE_MEMORY

    alpha: float = Field(default=0.1, gt=0, le=1, description="Utility += 0.1·(target - utility).")
    drift_rate: float = Field(default=0.01, ge=0, description="Drift u + (0.5-u)·(1-exp(-0.01·days)).")
    prior: float = Field(default=0.5, ge=0, le=1, description="Neutral utility prior 0.5.")
    w_semantic: float = Field(default=0.6, ge=0, le=1, description="Score = 0.6·semantic + …")
    w_utility: float = Field(default=0.2, ge=0, le=1, description="… + 0.2·utility + …")
    w_importance: float = Field(default=0.2, ge=0, le=1, description="… + 0.2·importance.")

    @model_validator(mode="after")
    def _weights(self) -> UtilitySettings:
        _check_sum(
            "utility score weights",
            {"w_semantic": self.w_semantic, "w_utility": self.w_utility, "w_importance": self.w_importance},
        )
        return self


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
        _check_descending(
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
        _check_sum(
            "heat weights (without causal)",
            {
                "heat_confidence": self.heat_confidence,
                "heat_access": self.heat_access,
                "heat_recency": self.heat_recency,
                "heat_importance": self.heat_importance,
                "heat_feedback": self.heat_feedback,
            },
        )
        _check_sum(
            "decay weights",
            {
                "decay_w_age": self.decay_w_age,
                "decay_w_stale": self.decay_w_stale,
                "decay_w_confidence": self.decay_w_confidence,
                "decay_w_feedback": self.decay_w_feedback,
                "decay_w_cold": self.decay_w_cold,
            },
        )
        _check_sum(
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
        _check_descending(
            "confidence tiers",
            {k: self.confidence_tiers.get(k, math.nan) for k in ("explicit", "implied", "inferred")},
        )
        return self


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
