"""Settings of the dream steps that decide what is kept and what is forgotten: emotional consolidation,
synaptic replay, utility decay, rehearsal, foresight expiry, redundancy, strategic forgetting, co-activation
clusters, drift detection, archival, cold migration and graph-edge decay.

The constants these steps share with the rest of the engine live in ``dynamics`` (FSRS rehearsal
threshold and boost, flashbulb boost, Hebbian boost, co-activation thresholds, the archival
rule, the fading retention, the lifecycle policy and edge confidence); this section holds what only the
dream steps use.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from reverie.config.core import Section
from reverie.config.sources import COGNITIVE_MEMORY, CONSOLIDATION, LAYERED, LIFECYCLE, REVERIE, source
from reverie.model import Status

ForgetRule = Literal["contradiction", "foresight", "utility_floor", "redundancy", "capacity"]
FORGET_RULES: tuple[ForgetRule, ...] = ("contradiction", "foresight", "utility_floor", "redundancy", "capacity")


def _redundancy_profiles() -> dict[str, float]:
    # api: the design's cosine > 0.9. minilm (all-MiniLM-L6-v2, test_minilm_redundancy_threshold_calibration in
    # tests/dream/test_lifecycle_steps.py): paraphrases 0.91–0.98, elaborations 0.85–0.94, changed values
    # 0.78–0.92, the consolidation design's distinct March activities 0.47–0.55; 0.88 (the PE gate's minilm
    # REINFORCE bound) keeps every paraphrase above it, and the text guards (no new content word beyond one, no
    # new number, no contradiction) reject the elaborations and changed values cosine cannot separate.
    # e5 (multilingual-e5-small, test_e5_redundancy_threshold_calibration): paraphrases 0.97–0.99, elaborations
    # 0.93–0.97, changed values 0.92–0.97, the March activities 0.90; 0.965 (the PE gate's e5 REINFORCE bound)
    # keeps every paraphrase above it and the same text guards reject the rest.
    # hash (unit tests only): paraphrases of the designs' examples 0.55–0.93.
    return {"api": 0.90, "e5": 0.965, "minilm": 0.88, "hash": 0.78}


class ForgettingSettings(Section):
    """The dream steps that strengthen, expire, forget, archive and move memories between the hot and cold
    stores; each step is switched on by naming it in ``dream.steps``."""

    SOURCE = COGNITIVE_MEMORY

    # utility decay
    utility_min_change: float = Field(
        default=0.001,
        ge=0,
        le=1,
        description="Utility decay: drifts smaller than this stay lazy — readers "
        "compute the same drift from utility_updated_at, so skipping them changes no score.",
    )
    # rehearsal (the testing effect)
    rehearse_max: int = Field(
        default=50, ge=0, description="Testing effect: at most 50 endangered memories rehearsed per cycle."
    )
    rehearse_interval_days: float = Field(
        default=1.0,
        ge=0,
        description="Testing effect cron (default daily): a memory is rehearsed at most once per this "
        "many days, so a re-run of the dream never boosts it twice.",
    )
    # foresight expiry and the lifecycle policy's expiry rules
    speculative_expiry: bool = Field(
        default=True,
        description="Unconfirmed speculative memories (confidence < 0.40) expire after "
        "dynamics.lifecycle.speculative_ttl_days (30).",
        json_schema_extra=source(LIFECYCLE),
    )
    commitment_categories: tuple[str, ...] = Field(
        default=("commitment",),
        description="Categories treated as commitments by commitment decay.",
        json_schema_extra=source(LIFECYCLE),
    )
    commitment_resolved_states: tuple[str, ...] = Field(
        default=("fulfilled", "expired"),
        description="Values of metadata 'commitment_state' that mark a commitment resolved (a "
        "time-bounded commitment past valid_until is resolved too).",
        json_schema_extra=source(LIFECYCLE),
    )
    commitment_decay_days: float = Field(
        default=90.0,
        gt=0,
        description="Resolved commitments expire this many days after resolution "
        "(the lifecycle design deletes them; reverie keeps them with status expired).",
        json_schema_extra=source(LIFECYCLE),
    )
    # redundancy and strategic forgetting rule 4
    redundancy_similarity: dict[str, float] = Field(
        default_factory=_redundancy_profiles,
        description="Redundancy: cosine above this (per embedder profile; similarity thresholds "
        "depend on the embedder) makes two memories candidates; api = the design's 0.9, minilm/hash calibrated.",
    )
    redundancy_default_profile: str = Field(
        default="api", description="Profile used when the embedder's is not listed in redundancy_similarity."
    )
    redundancy_max_comparisons: int = Field(
        default=50,
        ge=0,
        description="At most 50 redundancy comparisons (nearest-neighbour lookups) per cycle, shared by "
        "the redundancy step and forgetting rule 4; a cursor resumes where the last cycle stopped.",
    )
    redundancy_max_new_words: int = Field(
        default=1,
        ge=0,
        description="Guard on redundancy: the memory made dormant may hold at most this many "
        "content words the kept one lacks (more is an elaboration, not a duplicate; a contradiction never is).",
        json_schema_extra=source(REVERIE),
    )
    # strategic forgetting (five ordered rules)
    forget_rules: tuple[ForgetRule, ...] = Field(
        default=FORGET_RULES,
        description="Strategic forgetting: the rules applied, in this order (contradiction cleanup, "
        "foresight expiry, utility floor, redundancy, capacity trim).",
    )
    utility_floor: float = Field(default=0.15, ge=0, le=1, description="Forgetting: utility < 0.15 …")
    utility_floor_idle_days: float = Field(
        default=30.0, ge=0, description="Forgetting: … and 30+ days unused → dormant."
    )
    capacity_max: int = Field(
        default=500,
        ge=1,
        description="Capacity trim: when a user scope holds more than 500 active memories in the hot store …",
    )
    capacity_target: int = Field(
        default=450, ge=0, description="Capacity trim: … the lowest-utility ones go dormant down to 450."
    )
    floating_threshold: bool = Field(
        default=True,
        description="Forgetting by disuse spares what is used more than usual: the utility floor makes a memory "
        "dormant only when its access count is at or below the average access count of its user's active "
        "memories, and the capacity trim takes those at or below the average first (the memories used more "
        "than average go only when nothing else is left to trim). The threshold floats with how the memory is "
        "actually used. (The Cognitive Memory design's pruning threshold = average(access_count), after the "
        "BCM theory of a sliding modification threshold.)",
    )
    forget_exempt_layers: tuple[str, ...] = Field(
        default=("codebase",),
        description="Layers strategic forgetting leaves alone (utility floor, redundancy, capacity trim): "
        "codebase memories mirror files and follow them (re-ingesting and drift detection), not their use.",
    )
    # drift detection
    drift_project_root: str | None = Field(
        default=None,
        description="Drift detection: directory against which relative paths named in memories are "
        "resolved (None: only absolute and ~ paths are checked).",
        json_schema_extra=source(LAYERED),
    )
    drift_max_paths: int = Field(
        default=20,
        ge=1,
        description="At most this many paths per memory are checked by drift detection.",
        json_schema_extra=source(REVERIE),
    )
    # archival
    archive_to_cold: bool = Field(
        default=True,
        description="Archival is a soft delete: archived memories also move to the cold store (deep "
        "recall still finds them).",
        json_schema_extra=source(LAYERED),
    )
    fact_archival: bool = Field(
        default=False,
        description="Fact archival (off by default, as in the lifecycle design): archive old facts …",
        json_schema_extra=source(LIFECYCLE),
    )
    fact_archival_age_days: float = Field(
        default=90.0,
        ge=0,
        description="… older than 90 days …",
        json_schema_extra=source(LIFECYCLE),
    )
    fact_archival_max_importance: float = Field(
        default=0.3, ge=0, le=1, description="… with importance < 0.3 …", json_schema_extra=source(LIFECYCLE)
    )
    fact_archival_max_access_count: int = Field(
        default=2,
        ge=0,
        description="… accessed at most 2 times …",
        json_schema_extra=source(LIFECYCLE),
    )
    fact_archival_protected_categories: tuple[str, ...] = Field(
        default=("commitment", "preference", "decision", "principle", "correction"),
        description="… and not in a protected category (corrections are never archived).",
        json_schema_extra=source(LIFECYCLE),
    )
    lifecycle_policy: bool = Field(
        default=False,
        description="Lifecycle policy (opt-in, as in the lifecycle design): the archive step also refreshes "
        "heat_score, decay_score and lifecycle_state (candidate/validated/active/stale/archived).",
        json_schema_extra=source(LIFECYCLE),
    )
    lifecycle_min_change: float = Field(
        default=0.01,
        ge=0,
        le=1,
        description="Heat/decay scores are rewritten when they moved by at least this much (a lifecycle "
        "state change is always written).",
        json_schema_extra=source(REVERIE),
    )
    # cold migration (and the lifecycle policy's tier routing)
    cold_statuses: tuple[str, ...] = Field(
        default=("dormant", "archived"),
        description="Dormant = cold storage; the consolidation design sends superseded originals cold. Statuses whose "
        "memories move to the cold store at once (superseded stays hot: timeline queries read it there).",
    )
    cold_migration_days: float = Field(
        default=7.0,
        ge=0,
        description="An active memory whose fading retention has sat at its "
        "floor for 7 days moves to the cold store (measured by timestamps, not ticks).",
        json_schema_extra=source(CONSOLIDATION),
    )
    cold_floor_tolerance: float = Field(
        default=0.001,
        ge=0,
        description="Retention within 0.001 of the floor counts as 'at floor'.",
        json_schema_extra=source(CONSOLIDATION),
    )
    tier_routing: bool = Field(
        default=False,
        description="Hot/cold tier routing (opt-in, as in the lifecycle design): active memories also move hot → cold "
        "by value (age >= 14 days, value <= 0.35) and back cold → hot (value >= 0.70).",
        json_schema_extra=source(LIFECYCLE),
    )

    @model_validator(mode="after")
    def _check(self) -> ForgettingSettings:
        if self.capacity_target > self.capacity_max:
            raise ValueError(f"capacity_target {self.capacity_target} must be <= capacity_max {self.capacity_max}")
        if len(set(self.forget_rules)) != len(self.forget_rules):
            raise ValueError(f"forget_rules names a rule twice: {list(self.forget_rules)}")
        bad = {k: v for k, v in self.redundancy_similarity.items() if not -1 <= v <= 1}
        if bad:
            raise ValueError(f"redundancy similarities must lie in [-1, 1]: {bad}")
        if self.redundancy_default_profile not in self.redundancy_similarity:
            raise ValueError(
                f"redundancy_default_profile {self.redundancy_default_profile!r} is not in redundancy_similarity"
            )
        unknown = sorted(set(self.cold_statuses) - ({s.value for s in Status} - {"active"}))
        if unknown:
            raise ValueError(f"cold_statuses must be non-active statuses, got {unknown}")
        return self

    def redundancy_threshold(self, profile: str) -> float:
        """The redundancy cosine of an embedder profile (the default profile's when unlisted)."""
        return self.redundancy_similarity.get(profile, self.redundancy_similarity[self.redundancy_default_profile])
