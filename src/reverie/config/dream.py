"""Settings of the dream cycle: which steps run, how much each takes on, and the per-step sections."""

from __future__ import annotations

from pydantic import Field

from reverie.config.core import Section
from reverie.config.dream_consolidation import ConsolidationSettings
from reverie.config.dream_documents import DocumentSettings
from reverie.config.dream_forgetting import ForgettingSettings
from reverie.config.dream_quantize import QuantizeSettings
from reverie.config.dream_schedule import ScheduleSettings
from reverie.config.dream_synthesis import SynthesisSettings
from reverie.config.sources import COGNITIVE_MEMORY, CONSOLIDATION, ENERGY, LAYERED, REVERIE, source
from reverie.legacy import RENAMED_SECTIONS


class TopicIndexSettings(Section):
    """The topic index the ``topics`` step keeps per user (what the memory is about, for people)."""

    max_topics: int = Field(default=200, ge=1, description="Topics kept per user, the most mentioned first.")
    max_boxes: int = Field(
        default=5000,
        ge=1,
        description="Sealed boxes read per user to build the topic index (the most recently sealed first); the "
        "markdown export writes at most this many boxes per user too.",
    )
    max_users: int = Field(default=10_000, ge=1, description="Users whose topic index one dream run refreshes.")


class DreamSettings(Section):
    """Which dream steps run, and how much each may take on in one run."""

    SOURCE = COGNITIVE_MEMORY
    RENAMED = RENAMED_SECTIONS["DreamSettings"]

    steps: list[str] = Field(
        default_factory=lambda: [
            "decay",
            "emotional",
            "replay",
            "promote",
            "core",
            "expire",
            "utility_decay",
            "rehearse",
            "foresight",
            "redundancy",
            "forget",
            "cluster",
            "consolidate",
            "merge",
            "themes",
            "abstraction",
            "category_summaries",
            "entity_cards",
            "bridges",
            "probe",
            "drift",
            "archive",
            "cold_migration",
            "edge_decay",
            "quantize",
            "topics",
            "profile",
            "entity_profiles",
            "reflections",
            "guidelines",
            "prune",
        ],
        description="Ordered dream steps to run (one ordered list of named steps, each switchable).",
    )
    batch_size: int = Field(
        default=500,
        ge=1,
        le=100_000,
        description="Memories handled per batch (claimed and written per transaction). The "
        "scheduled maintenance jobs may set their own (dream.schedule.jobs: promotion 10, decay 100).",
    )
    claim_ttl_s: float = Field(
        default=30.0,
        gt=0,
        description="Consolidation attempts: seconds a claim on a memory holds without a heartbeat. "
        "A running dreamer renews its claims every third of this (a heartbeat), so a long run keeps them; "
        "the claims of a dreamer that was killed are taken over by another process at most this long after "
        "it died.",
        json_schema_extra=source(ENERGY),
    )
    core_access_events: int = Field(
        default=200,
        ge=1,
        description="The core step counts the distinct sessions among a memory's newest this many accesses (only "
        "for memories that already reached the access count and storage strength of a core memory). Source: the "
        "consolidation design's core rule (>= 3 sessions); the bound is reverie's.",
        json_schema_extra=source(CONSOLIDATION),
    )
    access_log_retention_days: float = Field(
        default=180.0,
        gt=0,
        description="Access-log rows older than this are pruned (the layered-memory design's dream step 7).",
        json_schema_extra=source(LAYERED),
    )
    reports_kept: int = Field(
        default=20,
        ge=1,
        le=1_000,
        description="How many dream reports are kept (newest first) for the CLI, API and dashboard.",
    )
    llm_rejections_kept: int = Field(
        default=10_000,
        ge=0,
        description="Groups whose LLM-written text a dream step rejected (themes, patterns, category "
        "summaries, entity cards: the text left out or invented a name, date or number) are remembered, up to "
        "this many per step, and not sent to the LLM again until their members change; 0 remembers none.",
        json_schema_extra=source(REVERIE),
    )
    consolidation: ConsolidationSettings = Field(default_factory=ConsolidationSettings)
    forgetting: ForgettingSettings = Field(default_factory=ForgettingSettings)
    synthesis: SynthesisSettings = Field(default_factory=SynthesisSettings)
    quantize: QuantizeSettings = Field(default_factory=QuantizeSettings)
    schedule: ScheduleSettings = Field(default_factory=ScheduleSettings)
    topics: TopicIndexSettings = Field(default_factory=TopicIndexSettings)
    documents: DocumentSettings = Field(default_factory=DocumentSettings)
