"""Settings: synthesis steps — category summaries, peer/entity cards, cross-domain bridges and belief probing.

The layered-memory design's source (raya-ac/engram) gives the numbers the design leaves open: peer cards from
5 memories (up to 50 facts, 50 entities per cycle), bridges between entities of 3+ memories (top 100 entities,
5 bridges per cycle, centroid cosine 0.75–0.90, bridge importance 0.6), belief probing of semantic/procedural
memories idle 14 days (importance × 0.7, floor 0.1). The centroid band is a property of the embedder (see
"Similarity thresholds depend on the embedding model" in docs/design-notes.md); evidence in
``tests/dream/test_synthesis.py``.
"""

from __future__ import annotations

from pydantic import Field, model_validator

from reverie.config.core import Section
from reverie.config.sources import COGNITIVE_MEMORY, LAYERED, REVERIE, source
from reverie.model import Layer


class CategorySummarySettings(Section):
    """Category summaries: one maintained summary memory per category."""

    SOURCE = COGNITIVE_MEMORY

    min_members: int = Field(
        default=10,
        ge=2,
        description="A category with 10+ active memories gets a summary memory — written by the LLM "
        "(keeping every name, date and number of the members it was given), never without one.",
    )
    importance: float = Field(
        default=0.8, ge=0, le=1, description="The summary is a semantic memory with importance 0.8."
    )
    cooldown_s: float = Field(
        default=60.0,
        ge=0,
        description="Debounced, 60-second cooldown per category (a changed category is re-summarised "
        "at most once per cooldown; an unchanged one never).",
    )
    max_inputs: int = Field(
        default=30,
        ge=2,
        le=500,
        description="The most important members (ties: newest) given to the summarizer and linked "
        "(the design's 'all memories of the category' is bounded so that one LLM call stays small).",
        json_schema_extra=source(REVERIE),
    )
    max_chars: int = Field(
        default=800,
        ge=40,
        description="The summary text is at most this long.",
        json_schema_extra=source(REVERIE),
    )
    max_per_run: int = Field(
        default=20,
        ge=0,
        description="'prevent LLM call storms': summaries created or refreshed per dream run; the "
        "rest wait for the next run.",
    )


class EntityCardSettings(Section):
    """Peer cards: one maintained card memory per entity with enough data."""

    SOURCE = LAYERED

    min_members: int = Field(
        default=5,
        ge=2,
        description="A card for each entity with >= 5 memories about it — written by the LLM "
        "(keeping every name, date and number of the memories it was given), never without one.",
    )
    importance: float = Field(default=0.8, ge=0, le=1, description="Peer cards at importance 0.8.")
    cooldown_s: float = Field(
        default=60.0,
        ge=0,
        description="Debounce, applied to cards: a changed entity is re-carded at most once per 60 s.",
        json_schema_extra=source(COGNITIVE_MEMORY),
    )
    max_inputs: int = Field(default=50, ge=2, le=500, description="At most 50 facts of the entity feed its card.")
    max_chars: int = Field(default=1500, ge=40, description="A structured summary of 200–400 words (≈1,500 chars).")
    max_per_run: int = Field(default=50, ge=0, description="Cards generated per cycle (50 entities).")


class BridgeBand(Section):
    """The entity-centroid cosine band of one embedder profile (cross-domain synthesis)."""

    SOURCE = LAYERED

    min_similarity: float = Field(description="Centroids at least this similar may bridge (0.75).")
    max_similarity: float = Field(description="Above this the entities are one domain already, not a bridge (0.90).")

    @model_validator(mode="after")
    def _ordered(self) -> BridgeBand:
        if not -1.0 <= self.min_similarity <= self.max_similarity <= 1.0:
            raise ValueError(
                f"need -1 <= min_similarity <= max_similarity <= 1, got {self.min_similarity} / {self.max_similarity}"
            )
        return self


def _bands() -> dict[str, BridgeBand]:
    return {
        # engram's empirical band for API-sized embedders
        "api": BridgeBand(min_similarity=0.75, max_similarity=0.90),
        # all-MiniLM-L6-v2 (tests/dream/test_synthesis.py::test_minilm_bridge_band): centroids of related entities
        # from different parts of a life (marathon training / a heart-rate app, sourdough / a fermentation start-up)
        # 0.47–0.65, unrelated entities -0.11–0.25, two names of one thing (NYC / New York) 0.88
        "minilm": BridgeBand(min_similarity=0.40, max_similarity=0.80),
        # multilingual-e5-small (tests/dream/test_synthesis.py::test_e5_bridge_band): its cosines are compressed —
        # marathon / heart-rate app 0.94, sourdough / fermentation start-up 0.90, unrelated entities up to 0.91,
        # NYC / New York 0.98: the band keeps the clearer related pair and misses the other (cosine cannot
        # separate it from the unrelated ones with this model)
        "e5": BridgeBand(min_similarity=0.92, max_similarity=0.965),
        # HashEmbedder (unit tests only): the related test pair shares words (0.49), unrelated ones <= 0.40
        "hash": BridgeBand(min_similarity=0.45, max_similarity=0.85),
    }


class BridgeSettings(Section):
    """Cross-domain synthesis: entity pairs in different contexts, LLM-confirmed bridges."""

    SOURCE = LAYERED

    min_members: int = Field(default=3, ge=1, description="Entities with >= 3 memories take part in bridging.")
    max_entities: int = Field(
        default=100,
        ge=2,
        le=2_000,
        description="The 100 entities with most memories (per user) are compared pairwise "
        "by centroid — bounded, never all pairs of memories.",
    )
    sample: int = Field(default=50, ge=1, le=500, description="Up to 50 memories per entity form its centroid.")
    bands: dict[str, BridgeBand] = Field(
        default_factory=_bands,
        description="(engram 0.75–0.90 for api) per embedder profile (minilm, hash measured): "
        "centroid cosine of a bridge candidate.",
    )
    default_band: str = Field(default="api", description="Band used when the embedder's profile is not listed.")
    max_context_overlap: float = Field(
        default=0.1,
        ge=0,
        le=1,
        description="'entity pairs in different contexts': Jaccard overlap of the two entities' "
        "contexts (box, else session, else category) at most this (0.1: at most one shared context in ten; "
        "pairs mentioned together in one memory never qualify).",
    )
    max_per_run: int = Field(default=5, ge=0, description="At most 5 bridges judged per cycle.")
    importance: float = Field(default=0.6, ge=0, le=1, description="An LLM-confirmed bridge memory has importance 0.6.")
    llm_confidence: float = Field(
        default=0.8,
        ge=0,
        le=1,
        description="Confidence of the related_to edge of an LLM-confirmed bridge.",
        json_schema_extra=source(REVERIE),
    )
    heuristic_confidence: float = Field(
        default=0.4,
        ge=0,
        le=1,
        description="related_to confidence 0.4: a bridge found by the rule alone (no LLM) is only an edge.",
        json_schema_extra=source(COGNITIVE_MEMORY),
    )
    judged_kept: int = Field(
        default=10_000,
        ge=1,
        description="Judged entity pairs remembered per user (so a rejected pair is not asked again).",
        json_schema_extra=source(REVERIE),
    )

    def band(self, profile: str) -> BridgeBand:
        return self.bands.get(profile) or self.bands[self.default_band]


class ProbeSettings(Section):
    """Adversarial belief probing: challenge old beliefs with newer memories."""

    SOURCE = LAYERED

    layers: list[Layer] = Field(
        default_factory=lambda: [Layer.SEMANTIC, Layer.PROCEDURAL],
        description="Beliefs are semantic and procedural memories.",
    )
    min_idle_days: float = Field(default=14.0, ge=0, description="A belief is probed once not accessed for 14 days.")
    max_per_run: int = Field(
        default=100,
        ge=0,
        description="Beliefs probed per dream run, round-robin over runs (engram samples 5 per cycle "
        "with the LLM; the heuristic check is cheap).",
        json_schema_extra=source(REVERIE),
    )
    max_llm_calls: int = Field(
        default=20,
        ge=0,
        description="LLM contradiction judgements per run (the heuristic decides the rest).",
        json_schema_extra=source(REVERIE),
    )
    neighbours: int = Field(
        default=5, ge=1, le=100, description="A belief is compared with its k = 5 nearest newer memories."
    )
    importance_factor: float = Field(
        default=0.7, ge=0, le=1, description="A disputed belief's importance is multiplied by 0.7 …"
    )
    importance_floor: float = Field(default=0.1, ge=0, le=1, description="… but not below 0.1.")


class SynthesisSettings(Section):
    """Synthesis steps: category summaries, peer/entity cards, bridges and belief probing."""

    SOURCE = LAYERED

    member_layers: list[Layer] = Field(
        default_factory=lambda: [Layer.EPISODIC, Layer.SEMANTIC, Layer.PROCEDURAL, Layer.CODEBASE],
        description="Working memories are ephemeral (auto-promote after 30 min) and are not "
        "summarised, carded or bridged until they are promoted.",
    )
    use_llm: bool = Field(
        default=True,
        description="LLM synthesis when an LLM is configured. Off (or no LLM): no category summaries, "
        "entity cards or bridge texts are written; bridges are then related_to edges found by the rule alone, and "
        "belief probing uses the heuristic contradiction check.",
        json_schema_extra=source(COGNITIVE_MEMORY),
    )
    category: CategorySummarySettings = Field(default_factory=CategorySummarySettings)
    cards: EntityCardSettings = Field(default_factory=EntityCardSettings)
    bridges: BridgeSettings = Field(default_factory=BridgeSettings)
    probe: ProbeSettings = Field(default_factory=ProbeSettings)


__all__ = [
    "BridgeBand",
    "BridgeSettings",
    "CategorySummarySettings",
    "EntityCardSettings",
    "ProbeSettings",
    "SynthesisSettings",
]
