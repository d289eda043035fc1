"""Write-path settings: observer, buffer, formation, prediction-error gate, relations, boxes.

Similarity thresholds are a property of the embedder (see "Similarity thresholds depend
on the embedding model" in docs/design-notes.md): :class:`SimilarityProfile` carries one set per embedder profile —
the designs' values for API embedders (``api``), values measured with multilingual-e5-small (``e5``,
the local default) and all-MiniLM-L6-v2 (``minilm``; evidence in ``tests/write/test_write_calibration.py``)
and values for the unit-test
``HashEmbedder`` (``hash``).
"""

from __future__ import annotations

import warnings

from pydantic import Field, field_validator, model_validator

from reverie.config.core import Section
from reverie.config.sources import COGNITIVE_MEMORY, ENERGY, LAYERED, LIFECYCLE, PE_GATE, REVERIE, source
from reverie.legacy import RENAMED_STAGES


class SimilarityProfile(Section):
    """The cosine thresholds of one embedder profile (prediction-error gate, retroactive strengthening)."""

    SOURCE = PE_GATE

    contradiction_min: float = Field(
        description="From this similarity a contradiction SUPERSEDEs (the design applies its 0.70)."
    )
    create_below: float = Field(description="Similarity below this → CREATE (the design's 0.70).")
    update_min: float = Field(
        description="[create_below, update_min) is the gap (CREATE if important, else SKIP); "
        "from here UPDATE (the design's 0.75)."
    )
    reinforce_min: float = Field(description="Similarity >= this → REINFORCE (the design's 0.92).")
    retroactive_min: float = Field(
        description="Older memories with similarity > this are strengthened retroactively (0.7).",
        json_schema_extra=source(ENERGY),
    )
    change_min: float = Field(
        description="SUPERSEDE for explicit change statements ('uses Vim' → 'switched to Neovim', "
        "'geçti'): worded apart from what they replace, they are checked for contradiction from this "
        "similarity (<= contradiction_min; the design's 0.70 for API embedders)."
    )
    update_candidate_min: float = Field(
        default=0.0,
        description="Knowledge updates: a stored memory at least this similar to a new statement is read "
        "against it for an update ('Priya left, I report to Daniel now' against 'My manager is Priya'). "
        "People word a change apart from the fact it changes, so this sits well below the gate's other "
        "thresholds; the text decides (reverie.text.updates), this only bounds which memories are read.",
    )

    @model_validator(mode="after")
    def _ordered(self) -> SimilarityProfile:
        if not self.update_candidate_min <= self.change_min:
            raise ValueError(
                f"need update_candidate_min <= change_min, got {self.update_candidate_min} / {self.change_min}"
            )
        if not self.change_min <= self.contradiction_min:
            raise ValueError(f"need change_min <= contradiction_min, got {self.change_min} / {self.contradiction_min}")
        if not self.contradiction_min <= self.create_below <= self.update_min <= self.reinforce_min:
            raise ValueError(
                f"need contradiction_min <= create_below <= update_min <= reinforce_min, got "
                f"{self.contradiction_min} / {self.create_below} / {self.update_min} / {self.reinforce_min}"
            )
        return self


def _profiles() -> dict[str, SimilarityProfile]:
    return {
        # the prediction-error gate's values, set for large API embedders
        "api": SimilarityProfile(
            contradiction_min=0.70,
            create_below=0.70,
            update_min=0.75,
            reinforce_min=0.92,
            retroactive_min=0.70,
            change_min=0.70,
            update_candidate_min=0.40,
        ),
        # measured with all-MiniLM-L6-v2 (tests/write/test_write_calibration.py): paraphrases 0.89–0.97,
        # elaborations 0.78–0.94, contradictions 0.77–0.79, unrelated facts -0.03–0.08; distinct turns of one
        # LoCoMo conversation sit at 0.62–0.76 (bench/locomo_observe.py) and must stay separate memories;
        # change statements sit at 0.54–0.67 (EN) and 0.77–0.78 (TR) from the line they replace; corrections
        # in people's words (tests/write/data/knowledge_updates.json) sit at 0.32–0.83 from what they correct,
        # compatible facts about the same subject at 0.47–0.91: the text decides, the floor only bounds
        "minilm": SimilarityProfile(
            contradiction_min=0.70,
            create_below=0.80,
            update_min=0.82,
            reinforce_min=0.88,
            retroactive_min=0.55,
            change_min=0.50,
            update_candidate_min=0.25,
        ),
        # measured with multilingual-e5-small (tests/write/test_write_calibration.py), whose cosines are
        # compressed: paraphrases 0.97–0.99 (EN and TR), contradictions 0.88–0.98, change statements 0.88–0.93,
        # unrelated facts 0.77–0.86, the consolidation design's related March activities 0.89–0.92; the nearest
        # earlier turn of a LoCoMo turn sits at 0.93 (median), 0.95 (86th percentile) — as high as elaborations
        # (0.92–0.97), which cosine cannot tell from distinct turns with this model. So no gap: below 0.95 a
        # memory is created beside its neighbour (nothing is skipped), from 0.95 it updates it (~14% of LoCoMo
        # turns, as with minilm's 0.80); corrections in people's words (tests/write/data/knowledge_updates.json)
        # sit at 0.81–0.96 from what they correct, unrelated chat at 0.75–0.88: the text decides, the floor only bounds
        "e5": SimilarityProfile(
            contradiction_min=0.89,
            create_below=0.95,
            update_min=0.95,
            reinforce_min=0.965,
            retroactive_min=0.88,
            change_min=0.86,
            update_candidate_min=0.80,
        ),
        # HashEmbedder (unit tests only): near-identical short texts ("memory 0"/"memory 1", "alpha fact"/
        # "beta fact") sit at 0.52–0.63 and stay distinct; the designs' examples used by tests/write (paraphrase
        # 0.79, elaboration 0.67, contradictions 0.75–0.83) sit above; change statements 0.54–0.61 when they
        # share a clause ("… for the API")
        "hash": SimilarityProfile(
            contradiction_min=0.64,
            create_below=0.64,
            update_min=0.66,
            reinforce_min=0.78,
            retroactive_min=0.60,
            change_min=0.50,
            update_candidate_min=0.20,
        ),
    }


class ObserverSettings(Section):
    """The observer: the 7-layer filter, classification, density gate."""

    SOURCE = COGNITIVE_MEMORY

    min_chars: int = Field(default=10, ge=0, description="Length gate: 10 < length …")
    max_chars: int = Field(default=5000, ge=1, description="Length gate: … < 5000.")
    markdown_lines: int = Field(default=5, ge=1, description="Markdown-heavy at 5+ bullet/bold lines.")
    code_ratio: float = Field(default=0.5, ge=0, le=1, description="Code-heavy when > 50% is code blocks.")
    max_emoji: int = Field(default=3, ge=0, description="Emoji-heavy at > 3 emoji.")
    binary_ratio: float = Field(
        default=0.1,
        ge=0,
        le=1,
        description="Hostile-input guard: text with more than this "
        "share of control, unassigned or private-use characters is binary content, filtered in observe() and "
        "add(infer=True).",
        json_schema_extra=source(REVERIE),
    )
    min_density: int = Field(default=2, ge=0, description="Information density: messages with density < 2 are skipped.")
    max_entities: int = Field(default=8, ge=1, description="At most 8 entities per observation.")
    max_rewrite_chars: int = Field(default=500, ge=20, description="Standalone rewriting: max 500 chars.")
    base_confidence: dict[str, float] = Field(
        default_factory=lambda: {
            "correction": 0.4,
            "preference": 0.3,
            "decision": 0.35,
            "entity": 0.3,
            "fact": 0.25,
        },
        description="Classification base confidences (correction 0.4, preference 0.3, decision 0.35, "
        "entity-rich 0.3, fact 0.25).",
    )
    match_bonus: float = Field(
        default=0.15,
        ge=0,
        le=1,
        description="Confidence added per extra matching trigger (capped at 1).",
        json_schema_extra=source(REVERIE),
    )
    source_confidence_floor: float = Field(
        default=0.5,
        ge=0,
        le=1,
        description="A message that passed every observer filter is stored with source confidence "
        "floor + (1 - floor)·classification confidence (0.2 → 0.6, 0.4 → 0.7), above the read path's < 0.3 "
        "'low confidence' read penalty, which is meant for unreliable sources, not for untyped facts.",
    )
    default_confidence: float = Field(
        default=0.2,
        ge=0,
        le=1,
        description="Source confidence of an observation no pattern matched.",
        json_schema_extra=source(REVERIE),
    )


class BufferSettings(Section):
    """Smart buffer: HIGH signal extracts now, otherwise buffer N turns or T minutes."""

    SOURCE = LIFECYCLE

    max_turns: int = Field(default=5, ge=1, description="Extract a batch when the buffer holds N turns.")
    max_minutes: float = Field(
        default=15.0, gt=0, description="Extract a batch when the oldest buffered turn is T minutes old."
    )


class FormationSettings(Section):
    """Formation: foresight and splitting."""

    SOURCE = COGNITIVE_MEMORY

    foresight_days: float = Field(
        default=7.0, gt=0, description="plan/will/going to → validUntil = +7 days by default."
    )
    min_split_words: int = Field(
        default=3,
        ge=1,
        description="Each side of an atomic split keeps at least 3 words.",
        json_schema_extra=source(REVERIE),
    )


class GateSettings(Section):
    """The prediction-error gate with per-embedder similarity thresholds."""

    SOURCE = PE_GATE

    profiles: dict[str, SimilarityProfile] = Field(
        default_factory=_profiles,
        description="Similarity thresholds per embedder profile (api = the design's values; minilm, hash "
        "calibrated by measurement).",
    )
    default_profile: str = Field(default="api", description="Profile used when the embedder's is not listed.")
    gap_importance: float = Field(
        default=0.6, ge=0, le=1, description="In the gap, CREATE if importance is high (>= 0.6), else SKIP."
    )
    neighbours: int = Field(
        default=5,
        ge=1,
        description="Compare with the k = 5 nearest memories.",
        json_schema_extra=source(LAYERED),
    )
    update_candidates: int = Field(
        default=16,
        ge=1,
        le=50,
        description="Knowledge updates: how many stored memories a new statement is read against for an "
        "update — its nearest by meaning (the gate's neighbours) and its best full-text matches, which "
        "find 'Priya left' for 'My manager is Priya' when other memories are nearer in meaning. 16, not 8: "
        "with multilingual-e5-small a correction sits at 0.81–0.85 from what it corrects while unrelated chat "
        "sits at 0.75–0.88, so weeks of chat between them pushed the old statement out of the nearest 8 "
        "(bench/updates.py: missed supersedes 0.102 → 0.092 on the original 196 scenarios, no compatible pair "
        "lost; 24 found no more).",
    )
    llm_update_candidates: int = Field(
        default=2,
        ge=0,
        le=10,
        description="With an LLM configured: when the text finds no update, the LLM reads at most this many "
        "candidates (those with some evidence, or similar from change_min) against the new statement; each "
        "verdict and its reason go to the memory's history.",
    )
    elaboration_max_dropped: int = Field(
        default=1,
        ge=0,
        description="From update_min, a new text that keeps what the nearest memory says (at most this many "
        "of its informative words missing) and adds detail is merged into it (the gate's UPDATE, 'overlaps but "
        "adds detail'); a different statement at that similarity is created beside it, so that two facts "
        "are never merged into one.",
    )
    reinforce_max_new_words: int = Field(
        default=1,
        ge=0,
        description="A near-duplicate that adds at most this many new content words REINFORCEs; one "
        "that adds more UPDATEs (the gate's 'overlaps but adds detail').",
        json_schema_extra=source(REVERIE),
    )
    reinforce_stability: float = Field(
        default=1.2,
        ge=1,
        description="REINFORCE multiplies stability by 1.2 (the gate's 'boost stability').",
        json_schema_extra=source(REVERIE),
    )

    def profile(self, name: str) -> SimilarityProfile:
        return self.profiles.get(name) or self.profiles[self.default_profile]


class RelationSettings(Section):
    """Relations: heuristic rules and pruning."""

    SOURCE = COGNITIVE_MEMORY

    same_entity_overlap: int = Field(default=2, ge=1, description="Entity overlap >= 2 → same_entity.")
    same_entity_confidence: float = Field(default=0.7, ge=0, le=1, description="same_entity confidence 0.7.")
    elaborates_word_overlap: float = Field(
        default=0.30, ge=0, le=1, description="Word overlap > 30% + entity >= 1 → elaborates."
    )
    elaborates_confidence: float = Field(default=0.5, ge=0, le=1, description="Elaborates confidence 0.5.")
    related_word_overlap: float = Field(
        default=0.15, ge=0, le=1, description="Same category + word overlap > 15% → related_to."
    )
    related_confidence: float = Field(default=0.4, ge=0, le=1, description="related_to confidence 0.4.")
    prune_at: int = Field(
        default=1000,
        ge=1,
        description="Pruning triggers at 1000 prunable relations "
        "of a user (supersedes, contradicts and causes are kept for good and not counted) …",
    )
    prune_to: int = Field(default=900, ge=0, description="… and trims to 900.")
    type_priority: dict[str, int] = Field(
        default_factory=lambda: {"related_to": 0, "same_entity": 1, "elaborates": 2, "reinforces": 3},
        description="Prunable types, lowest priority pruned first (related_to 0, same_entity 1, "
        "elaborates 2; reverie adds the energy model's reinforces at 3). supersedes/contradicts/causes never pruned.",
    )

    @model_validator(mode="after")
    def _check(self) -> RelationSettings:
        if self.prune_to > self.prune_at:
            raise ValueError(f"prune_to {self.prune_to} must be <= prune_at {self.prune_at}")
        protected = {"supersedes", "contradicts", "causes"} & set(self.type_priority)
        if protected:
            raise ValueError(f"relations of types {sorted(protected)} are never pruned")
        return self


class BoxSettings(Section):
    """Memory boxes and trace weaving."""

    SOURCE = LIFECYCLE

    topic_shift: float = Field(
        default=0.35, ge=0, le=1, description="Seal the box when topic overlap drops below 0.35."
    )
    time_gap_minutes: float = Field(default=30.0, gt=0, description="Seal after 30 minutes of inactivity.")
    max_memories: int = Field(default=50, ge=1, description="Seal when the box exceeds 50 memories.")
    max_topics: int = Field(
        default=12,
        ge=1,
        description="Topic words kept per box.",
        json_schema_extra=source(REVERIE),
    )
    trace_overlap: float = Field(
        default=0.35,
        ge=0,
        le=1,
        description="Trace weaver: sealed boxes with overlapping topics share a "
        "trace (same overlap measure as the topic shift).",
    )
    trace_lookback: int = Field(
        default=50,
        ge=1,
        description="Sealed boxes compared when weaving a trace.",
        json_schema_extra=source(REVERIE),
    )


class ActionPolicySettings(Section):
    """The memory-action policy: every write decision recorded as action telemetry, and verbatim artifacts."""

    SOURCE = LIFECYCLE

    telemetry: bool = Field(
        default=True,
        description="Record every write decision as action telemetry (the lifecycle design's memory-action "
        "policy: which action — store an episode or a note, update a note, keep a verbatim artifact, summarise, "
        "discard, link — with its confidence, lifecycle state, importance and source; never the memory's words). "
        "The dream's guidelines step learns from it.",
    )
    telemetry_retention_days: float = Field(
        default=90.0, gt=0, description="Action telemetry older than this is pruned by the dream's prune step."
    )
    artifacts: bool = Field(
        default=True,
        description="Keep the exact words a memory was extracted from (a verbatim artifact, the lifecycle "
        "design's create_artifact action) when the stored memory is a rewording of a message and the memory is "
        "eligible: one of artifact_categories, extracted with at least artifact_min_confidence and at least "
        "artifact_min_importance. The words stay with the memory (forgetting it removes them).",
    )
    artifact_categories: list[str] = Field(
        default_factory=lambda: ["decision", "commitment", "correction", "principle", "preference", "plan"],
        description="Categories whose memories may keep a verbatim artifact (what someone decided, promised, "
        "corrected or prefers is worth quoting exactly).",
    )
    artifact_min_confidence: float = Field(
        default=0.6, ge=0, le=1, description="Least extraction confidence for a verbatim artifact."
    )
    artifact_min_importance: float = Field(
        default=0.4, ge=0, le=1, description="Least importance for a verbatim artifact."
    )
    artifact_max_chars: int = Field(
        default=2000, ge=50, le=100_000, description="A verbatim artifact keeps at most this many characters."
    )


#: the write stages with an LLM path (``write.llm_stages``)
LLM_STAGES = ("observer", "formation", "emotion", "merge", "contradiction", "relations", "topics")


#: the reward channel's prior by category (the Cognitive Memory design's importance channels)
CATEGORY_REWARD = {"correction": 0.8, "decision": 0.7, "preference": 0.7, "plan": 0.6, "entity": 0.5, "fact": 0.5}


class WriteSettings(Section):
    """The write path: observer → buffer → formation → gate → score → store."""

    SOURCE = COGNITIVE_MEMORY

    observer: ObserverSettings = Field(default_factory=ObserverSettings)
    buffer: BufferSettings = Field(default_factory=BufferSettings)
    formation: FormationSettings = Field(default_factory=FormationSettings)
    gate: GateSettings = Field(default_factory=GateSettings)
    relations: RelationSettings = Field(default_factory=RelationSettings)
    boxes: BoxSettings = Field(default_factory=BoxSettings)
    policy: ActionPolicySettings = Field(default_factory=ActionPolicySettings)
    use_llm: bool = Field(
        default=True, description="LLM-primary stages when an LLM is configured (heuristics otherwise)."
    )
    llm_stages: list[str] = Field(
        default_factory=lambda: list(LLM_STAGES),
        description="The write stages that ask the LLM first (observer classification, formation, "
        "emotion, merge of an updated text, contradiction, relations, box topics); the others use their "
        "heuristic only.",
    )
    category_reward: dict[str, float] = Field(
        default_factory=lambda: dict(CATEGORY_REWARD),
        description="How rewarding a new memory of each category is, 0..1, before feedback on similar "
        "memories moves it (the reward channel of a new memory's importance): a correction matters most, "
        "then decisions and preferences, then plans, then entities and plain facts.",
    )
    other_category_reward: float = Field(
        default=0.5,
        ge=0.0,
        le=1.0,
        description="The reward of a new memory whose category has no entry in ``category_reward``.",
    )
    llm_input_chars: int = Field(
        default=4000,
        ge=200,
        description="Bounded prompts — at most this many characters of one text "
        "are sent to the LLM (the observer already caps messages at 5000).",
        json_schema_extra=source(REVERIE),
    )

    @field_validator("category_reward")
    @classmethod
    def _rewards_in_range(cls, v: dict[str, float]) -> dict[str, float]:
        bad = sorted(k for k, x in v.items() if not 0.0 <= x <= 1.0)
        if bad:
            raise ValueError(f"write.category_reward must be within 0..1; out of range: {bad}")
        return v

    @field_validator("llm_stages", mode="before")
    @classmethod
    def _former_stage_names(cls, value: object) -> object:
        if not isinstance(value, list | tuple):
            return value
        former = [s for s in value if isinstance(s, str) and s in RENAMED_STAGES]
        for name in former:
            warnings.warn(
                f"write.llm_stages {name!r} is now {RENAMED_STAGES[name]!r}; the old name goes away in the next "
                "release",
                DeprecationWarning,
                stacklevel=2,
            )
        return [RENAMED_STAGES.get(s, s) if isinstance(s, str) else s for s in value]

    @model_validator(mode="after")
    def _known_stages(self) -> WriteSettings:
        unknown = sorted(set(self.llm_stages) - set(LLM_STAGES))
        if unknown:
            raise ValueError(f"unknown write.llm_stages {unknown}; known: {list(LLM_STAGES)}")
        return self


__all__ = [
    "LLM_STAGES",
    "BoxSettings",
    "BufferSettings",
    "FormationSettings",
    "GateSettings",
    "ObserverSettings",
    "RelationSettings",
    "SimilarityProfile",
    "WriteSettings",
]
