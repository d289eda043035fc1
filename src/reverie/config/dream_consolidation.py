"""Settings: consolidation steps — consolidation of fading memories (the consolidation design), themes
(clustering + LLM consolidation) and deep abstraction, and the neighbour search they share.

Cosine thresholds are a property of the embedder (see "Similarity thresholds depend on the embedding
model" in docs/design-notes.md): each is a table keyed by the embedder profile — ``api`` (the designs'
values, also the fallback for unknown profiles), ``minilm`` (measured with all-MiniLM-L6-v2; evidence in
``tests/dream/test_consolidate.py::test_minilm_calibration_march_activities``) and ``hash`` (the unit-test
embedder).
"""

from __future__ import annotations

from pydantic import Field, field_validator, model_validator

from reverie.config.core import Section
from reverie.config.sources import COGNITIVE_MEMORY, CONSOLIDATION, EMOTION, LAYERED, REVERIE, source
from reverie.model import Layer


def _profiled(api: float, minilm: float, hash_: float, *, e5: float) -> dict[str, float]:
    return {"api": api, "e5": e5, "minilm": minilm, "hash": hash_}


def _check_profiles(table: dict[str, float], name: str) -> dict[str, float]:
    if "api" not in table:
        raise ValueError(f"{name} needs an 'api' entry (the fallback profile)")
    bad = {k: v for k, v in table.items() if not -1.0 <= v <= 1.0}
    if bad:
        raise ValueError(f"{name}: cosine thresholds must lie in [-1, 1], got {bad}")
    return table


def for_profile(table: dict[str, float], profile: str) -> float:
    """The value of a per-profile table for an embedder profile (``api`` when not listed)."""
    return table.get(profile, table["api"])


class NeighborSettings(Section):
    """k-nearest neighbours inside a candidate set (reverie; no step compares all pairs)."""

    exact_max: int = Field(
        default=4000,
        ge=2,
        description="Candidate sets up to this size get exact neighbours (numpy, in blocks); larger "
        "sets an HNSW graph (hnswlib); 4000 is where the two took the same time when measured (384 dimensions).",
    )
    block_rows: int = Field(default=1024, ge=16, description="Rows per exact similarity block.")
    ann_dims: int = Field(
        default=48,
        ge=8,
        description="The HNSW graph is built on a PCA projection of the vectors to this many "
        "dimensions; its candidates are then re-scored with the full vectors. Measured at 100k×384, the whole "
        "48-dimension search took less time than building a full-dimension graph alone.",
    )
    pca_sample: int = Field(default=5000, ge=100, description="Rows sampled to fit the PCA projection.")
    pool: int = Field(
        default=2,
        ge=1,
        le=20,
        description="The graph proposes pool·k candidates per row for re-scoring (measured at 100k "
        "planted: pool 2 finds 96% of the planted pairs, pool 3 97% at 1.25x the time).",
    )
    hnsw_m: int = Field(default=12, ge=4, le=64, description="HNSW degree M of the neighbour graph.")
    hnsw_ef_construction: int = Field(default=40, ge=8, description="HNSW efConstruction.")
    ef_extra: int = Field(default=8, ge=0, description="HNSW query ef = candidates asked + this.")
    seed: int = Field(default=1234, description="Random seed (PCA sample, graph) — runs are reproducible.")


class ConsolidateSettings(Section):
    """Consolidation: disjoint groups of fading, similar memories become one summary."""

    SOURCE = CONSOLIDATION

    retention_threshold: float = Field(
        default=0.20,
        ge=0,
        le=1,
        description="Consolidation retention threshold: memories whose fading retention "
        "max(floor, exp(-Δt/(S·B·β))) is below this are candidates.",
    )
    group_size: int = Field(default=5, ge=2, description="consolidation_group_size: a group needs at least 5 members.")
    max_group_size: int = Field(
        default=10,
        ge=2,
        description="A group grows up to this many members (the consolidation design's loop stops at group_size; "
        "letting 6–10 near-duplicates form one group avoids a summary plus leftovers that never group).",
        json_schema_extra=source(REVERIE),
    )
    similarity: dict[str, float] = Field(
        default_factory=lambda: _profiled(0.70, 0.45, 0.40, e5=0.89),
        description="Consolidation similarity threshold (cosine of each member to the group's "
        "centre), per embedder profile: api 0.70 (the design's); minilm 0.45 — the design's five March activities sit "
        "at 0.41–0.60 pairwise and 0.47–0.60 to their best centre, unrelated memories at -0.08–0.22; e5 0.89 — "
        "multilingual-e5-small's cosines are compressed: the five sit at 0.89–0.92 pairwise (Turkish 0.92–0.94) "
        "and 0.90 (worst) to their best centre, unrelated memories at 0.80–0.82 (Turkish up to 0.89); hash 0.40.",
    )
    layers: list[Layer] = Field(
        default_factory=lambda: [Layer.EPISODIC, Layer.SEMANTIC],
        description="Episodic consolidates with episodic, semantic with semantic (its categories are "
        "reverie's layers); working memories are left to promotion and expiry, procedural/codebase never fade.",
    )
    exempt_flashbulb: bool = Field(
        default=True,
        description="Flashbulb memories are pinned against forgetting; reverie keeps them out of "
        "consolidation too, so they stay individually in the hot store.",
        json_schema_extra=source(EMOTION),
    )
    link_weight: float = Field(
        default=0.8,
        ge=0,
        le=1,
        description="The summary has association links of weight 0.8 to each original.",
    )
    summary_max_chars: int = Field(
        default=1000,
        ge=40,
        description="Length budget of a summary text, in characters. A summary keeps every member's "
        "text, so this bounds how many memories one group takes (a group stops growing when its summary would "
        "be longer; a group that cannot reach group_size within it is not formed). A summary is embedded as one "
        "text, and the default local model (all-MiniLM-L6-v2) reads 256 word pieces, about 1,000 characters of "
        "conversation (measured on LoCoMo turns: 3.9 characters per word piece); 1,000 holds a typical group of 5 "
        "turns (LoCoMo turns: mean 149 characters, p90 261; 91% of random 5-turn groups fit, and 99.9% of those "
        "stay within 256 word pieces).",
        json_schema_extra=source(REVERIE),
    )
    max_llm_calls: int = Field(
        default=50,
        ge=0,
        description="LLM summaries per run (no LLM call storms); further groups get the extractive summary.",
        json_schema_extra=source(COGNITIVE_MEMORY),
    )
    max_candidates: int = Field(
        default=20_000,
        ge=2,
        description="Batch cap against running out of memory: fading memories clustered per "
        "run, the most faded first; the rest wait for the next run (a cut through memories of equal retention "
        "can split groups). Finding the groups grows faster than linearly with the candidates "
        "(bench/consolidate.py). A run writes at most max_groups_per_run "
        "groups (500 × >= 5 members), so clustering more than 20k candidates per run mostly finds groups that "
        "would wait for a later run anyway.",
        json_schema_extra=source(COGNITIVE_MEMORY),
    )
    max_groups_per_run: int = Field(
        default=500,
        ge=0,
        description="Batch cap against running out of memory: groups consolidated per dream run; the rest wait "
        "for the next run (each group is one transaction and one embedding).",
        json_schema_extra=source(COGNITIVE_MEMORY),
    )

    @field_validator("similarity")
    @classmethod
    def _similarity(cls, v: dict[str, float]) -> dict[str, float]:
        return _check_profiles(v, "similarity")

    @model_validator(mode="after")
    def _sizes(self) -> ConsolidateSettings:
        if self.max_group_size < self.group_size:
            raise ValueError(f"max_group_size {self.max_group_size} < group_size {self.group_size}")
        return self


class ThemeSettings(Section):
    """Clustering + LLM consolidation: theme memories replace clusters of idle memories."""

    SOURCE = COGNITIVE_MEMORY

    min_cluster: int = Field(default=3, ge=2, description="min 3 memories per cluster.")
    max_cluster: int = Field(
        default=8,
        ge=2,
        description="At most 8 members per theme (one LLM call stays small and specific).",
        json_schema_extra=source(REVERIE),
    )
    entity_overlap: int = Field(default=1, ge=1, description="Cluster by entity overlap (>= 1 shared).")
    importance_proximity: float = Field(
        default=0.3, gt=0, le=1, description="Or by category match + importance proximity (< 0.3)."
    )
    category_similarity: dict[str, float] = Field(
        default_factory=lambda: _profiled(0.60, 0.40, 0.35, e5=0.87),
        description="Members of a category cluster must also be this similar (cosine) to its first "
        "member — the category + importance rule alone would put unrelated facts into one theme. "
        "Per embedder profile (api 0.60; minilm 0.40 measured on the design's 'API routing' cluster; e5 0.87, above "
        "unrelated facts' 0.77–0.86 and below related ones' 0.89+; hash 0.35).",
        json_schema_extra=source(REVERIE),
    )
    max_llm_calls: int = Field(
        default=5,
        ge=0,
        description="Merge clusters via the LLM, max 5 calls per cycle. Themes are written only by the "
        "LLM (and only when its text keeps every name, date and number of the members): without one, no themes.",
    )
    importance: float = Field(default=0.8, ge=0, le=1, description="Theme-level memories at importance 0.8.")
    min_idle_days: float = Field(
        default=30.0,
        ge=0,
        description="reverie (recall guard): only memories not accessed (or, never accessed, not created) for this "
        "many days join a theme — memories in use stay individually searchable; 30 days is the hot tier's "
        "age limit.",
        json_schema_extra=source(REVERIE),
    )
    max_utility: float = Field(
        default=0.8,
        ge=0,
        le=1,
        description="reverie (recall guard): memories with utility >= the hot tier's 0.8 (proven useful) are "
        "never folded into a theme.",
        json_schema_extra=source(REVERIE),
    )
    max_access_count: int = Field(
        default=10,
        ge=0,
        description="reverie (recall guard): memories accessed >= the hot tier's 10 times stay individual.",
        json_schema_extra=source(REVERIE),
    )
    layers: list[Layer] = Field(
        default_factory=lambda: [Layer.EPISODIC, Layer.SEMANTIC],
        description="Layers whose memories may join a theme (working ones are still being formed).",
        json_schema_extra=source(REVERIE),
    )
    max_candidates: int = Field(
        default=5000,
        ge=3,
        description="Batch cap: at most this many eligible memories (longest idle first) per scope are "
        "clustered in one cycle.",
    )
    summary_max_chars: int = Field(
        default=800,
        ge=40,
        description="Length budget of a theme text.",
        json_schema_extra=source(REVERIE),
    )
    link_weight: float = Field(
        default=0.8,
        ge=0,
        le=1,
        description="Link weight, reused: a theme links to each original (0.8).",
        json_schema_extra=source(CONSOLIDATION),
    )

    @field_validator("category_similarity")
    @classmethod
    def _similarity(cls, v: dict[str, float]) -> dict[str, float]:
        return _check_profiles(v, "category_similarity")

    @model_validator(mode="after")
    def _sizes(self) -> ThemeSettings:
        if self.max_cluster < self.min_cluster:
            raise ValueError(f"max_cluster {self.max_cluster} < min_cluster {self.min_cluster}")
        return self


class AbstractionSettings(Section):
    """Deep abstraction: behavioural patterns from the top clusters (originals stay)."""

    SOURCE = COGNITIVE_MEMORY

    top_clusters: int = Field(
        default=3,
        ge=0,
        description="Patterns from the top 3 clusters per cycle. Patterns are written only by the LLM "
        "(and only when its text keeps the evidence's names, dates and numbers): without one, no patterns.",
    )
    min_cluster: int = Field(default=3, ge=2, description="Clusters have at least 3 memories.")
    max_evidence: int = Field(
        default=12,
        ge=2,
        description="At most 12 memories of a cluster are given as evidence and linked.",
        json_schema_extra=source(REVERIE),
    )
    importance: float = Field(default=0.85, ge=0, le=1, description="Pattern-level memories at 0.85.")
    covered_share: float = Field(
        default=0.5,
        gt=0,
        le=1,
        description="reverie (idempotency): a cluster of which an active pattern already links at least this "
        "share is not abstracted again.",
        json_schema_extra=source(REVERIE),
    )
    max_candidates: int = Field(
        default=5000,
        ge=3,
        description="Batch cap: at most this many memories (most recently used first) per scope are clustered.",
    )
    summary_max_chars: int = Field(
        default=600,
        ge=40,
        description="Length budget of a pattern text.",
        json_schema_extra=source(REVERIE),
    )
    link_weight: float = Field(
        default=0.8,
        ge=0,
        le=1,
        description="Link weight, reused: a pattern links to its evidence (0.8).",
        json_schema_extra=source(CONSOLIDATION),
    )


class MergeSettings(Section):
    """Clusters of near-identical memories that are still in use merge into one summary (the ``merge`` step)."""

    SOURCE = LAYERED

    similarity: dict[str, float] = Field(
        default_factory=lambda: _profiled(0.80, 0.75, 0.80, e5=0.937),
        description="How alike memories must be to merge (cosine of each member to the cluster's founder), per "
        "embedder profile: api 0.80 (the layered-memory design's dream step 2: cosine > 0.8); minilm 0.75 — "
        "measured with all-MiniLM-L6-v2: six paraphrases of one fact sit at 0.81–0.96 to their best founder, six "
        "distinct facts on one topic (a pet, a job, the consolidation design's March activities) at 0.22–0.60 "
        "(six distinct facts sharing a long frame — 'Maya said the trip to Porto … with her sister Ana' — sit at "
        "0.81–0.82, inside the paraphrases' range: they merge, every member's words kept in the summary); e5 0.937 "
        "— measured with multilingual-e5-small, whose cosines are compressed: the same paraphrase sets sit at "
        "0.942–0.967 to their best founder, the six trip facts at 0.933 and no five of the other distinct facts "
        "above 0.905 (tests/dream/test_merge.py); hash 0.80 (the unit-test embedder: near-identical notes 0.94, "
        "the trip facts 0.68).",
    )
    group_size: int = Field(
        default=5,
        ge=2,
        description="A cluster needs at least 5 members to merge (the layered-memory design: merge clusters of 5+).",
    )
    max_group_size: int = Field(default=10, ge=2, description="A merged cluster takes at most this many members.")
    layers: list[Layer] = Field(
        default_factory=lambda: [Layer.EPISODIC, Layer.SEMANTIC],
        description="Layers whose memories may merge (working memories are still being formed; procedural and "
        "codebase memories stay individual).",
    )
    min_age_days: float = Field(
        default=1.0,
        ge=0,
        description="Only memories at least this old merge, so a conversation in progress keeps its fresh "
        "memories as they were written.",
    )
    summary_max_chars: int = Field(
        default=1000,
        ge=40,
        description="Length budget of a merged summary (it keeps every member's text, so this bounds how many "
        "members one cluster takes; see consolidate.summary_max_chars).",
    )
    max_candidates: int = Field(
        default=5000,
        ge=2,
        description="At most this many memories (the most recent first) are clustered per run; the step finds "
        "neighbours among them without comparing all pairs (bench/dream.py measures the cost).",
    )
    max_groups_per_run: int = Field(default=200, ge=0, description="Clusters merged per dream run at most.")
    max_llm_calls: int = Field(
        default=20,
        ge=0,
        description="LLM summaries per run (when an LLM is configured and its text keeps every name, date and "
        "number); further clusters get the extractive summary, which keeps every member's words.",
    )
    link_weight: float = Field(
        default=0.8,
        ge=0,
        le=1,
        description="Weight of the link from the summary to each merged memory (as consolidation's).",
    )

    @field_validator("similarity")
    @classmethod
    def _similarity(cls, v: dict[str, float]) -> dict[str, float]:
        return _check_profiles(v, "similarity")

    @model_validator(mode="after")
    def _sizes(self) -> MergeSettings:
        if self.max_group_size < self.group_size:
            raise ValueError(f"max_group_size {self.max_group_size} < group_size {self.group_size}")
        return self


class ConsolidationSettings(Section):
    """Consolidation steps: consolidation of fading memories, themes and deep abstraction, and the merge of
    near-identical memories still in use."""

    consolidate: ConsolidateSettings = Field(default_factory=ConsolidateSettings)
    merge: MergeSettings = Field(default_factory=MergeSettings)
    themes: ThemeSettings = Field(default_factory=ThemeSettings)
    abstraction: AbstractionSettings = Field(default_factory=AbstractionSettings)
    neighbors: NeighborSettings = Field(default_factory=NeighborSettings)


__all__ = [
    "AbstractionSettings",
    "ConsolidateSettings",
    "ConsolidationSettings",
    "MergeSettings",
    "NeighborSettings",
    "ThemeSettings",
    "for_profile",
]
