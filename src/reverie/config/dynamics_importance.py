"""Settings of importance and utility: how much a memory matters when it is written (surprise, emotion,
source factors) and how useful it proved (the utility update)."""

from __future__ import annotations

from pydantic import Field, model_validator

from reverie.config.checks import check_descending, check_sum
from reverie.config.core import Section
from reverie.config.sources import ACTR, COGNITIVE_MEMORY, LAYERED, LIFECYCLE, source


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
        check_sum(
            "importance channel weights",
            {
                "w_novelty": self.w_novelty,
                "w_arousal": self.w_arousal,
                "w_reward": self.w_reward,
                "w_attention": self.w_attention,
            },
        )
        check_sum("eight source factor weights", self.source_factor_weights)
        if not 0 < self.boost_min <= 1 <= self.boost_max:
            raise ValueError(f"need 0 < boost_min <= 1 <= boost_max, got {self.boost_min} / {self.boost_max}")
        check_descending(
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
        check_sum(
            "utility score weights",
            {"w_semantic": self.w_semantic, "w_utility": self.w_utility, "w_importance": self.w_importance},
        )
        return self
