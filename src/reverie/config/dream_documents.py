"""Settings of the readable documents the dream keeps per user: the compression guidelines learned from the
action telemetry, the behavioural profile, entity profiles and the reflections document."""

from __future__ import annotations

from pydantic import Field

from reverie.config.core import Section
from reverie.model import Layer


class GuidelineSettings(Section):
    """Compression-guideline learning (the ``guidelines`` dream step)."""

    window_days: float = Field(
        default=30.0, gt=0, description="The step reads the action telemetry of this many past days."
    )
    max_events: int = Field(
        default=5000, ge=1, description="It reads at most this many recent write decisions per user."
    )
    min_summaries: int = Field(
        default=5,
        ge=1,
        description="Guidance about consolidation needs at least this many summaries made in the "
        "window (fewer say too little about how well compression works for this user).",
    )
    undo_rate: float = Field(
        default=0.2,
        ge=0,
        le=1,
        description="When at least this share of the summaries made in the window were undone (undo_consolidation), "
        "later consolidation passes for the user become more conservative: they ask members to be more alike.",
    )
    raise_step: float = Field(
        default=0.02,
        ge=0,
        le=0.2,
        description="How much more alike (cosine) members must be per multiple of undo_rate undone — added to the "
        "consolidate and merge thresholds of the user's embedder profile.",
    )
    max_raise: float = Field(
        default=0.06,
        ge=0,
        le=0.3,
        description="The learned guidance never raises a "
        "consolidation threshold by more than this (guidance only ever makes compression more "
        "conservative, never looser than the configured thresholds).",
    )


class ProfileSettings(Section):
    """The behavioural profile (the ``profile`` dream step): one document per user."""

    max_lines: int = Field(
        default=60,
        ge=1,
        le=10_000,
        description="The profile's line cap: at most this many lines; when more memories qualify, the least "
        "important (then the oldest) are left out and the document says how many.",
    )
    categories: list[str] = Field(
        default_factory=lambda: ["preference", "decision", "commitment", "principle", "plan", "skill", "pattern"],
        description="Memories of these categories describe how the user behaves and what they want (patterns are "
        "the dream's behavioural patterns); procedural memories (know-how) are included too.",
    )
    max_users: int = Field(default=10_000, ge=1, description="Users whose documents one dream run refreshes.")


class EntityProfileSettings(Section):
    """Entity profiles (the ``entity_profiles`` dream step): per user, one profile per entity it often names."""

    max_entities: int = Field(
        default=50, ge=1, le=10_000, description="Entities profiled per user, the most mentioned first."
    )
    min_memories: int = Field(
        default=3, ge=1, description="An entity gets a profile once this many active memories name it."
    )
    max_facts: int = Field(
        default=12, ge=1, le=1000, description="Facts listed per entity profile, the most recently updated first."
    )


class ReflectionSettings(Section):
    """The reflections document (the ``reflections`` dream step): an identity-style page of what the agent learned
    about the user and itself — the dream's behavioural patterns and memories added as reflections (metadata
    ``{"reflection": true}`` or category ``reflection``)."""

    max_bytes: int = Field(
        default=8192,
        ge=256,
        le=10_000_000,
        description="When the document grows past this size (8 KB, as an IDENTITY file's auto-consolidation), it "
        "is consolidated: near-identical reflections fold into the newest one, then the least important, oldest "
        "ones are folded out (listed by id) until it fits — or, with an LLM, condensed into one line.",
    )
    fold_similarity: float = Field(
        default=0.6,
        ge=0,
        le=1,
        description="Reflections sharing at least this share of their words (lexical "
        "Jaccard overlap, not cosine) are near-identical and fold into one line.",
    )
    max_reflections: int = Field(default=2000, ge=1, description="Reflections read per user.")
    use_llm: bool = Field(
        default=True,
        description="With an LLM configured, the reflections that would fold out are condensed by it into one line "
        "instead (kept only when the answer keeps every name, date and number and the page still fits).",
    )
    condensed_max_chars: int = Field(default=1000, ge=40, description="The LLM's condensed line is at most this long.")


class DocumentSettings(Section):
    """Readable documents kept by the consolidation pass (dashboard, markdown export, ``Memory.documents``)."""

    guidelines: GuidelineSettings = Field(default_factory=GuidelineSettings)
    profile: ProfileSettings = Field(default_factory=ProfileSettings)
    entity_profiles: EntityProfileSettings = Field(default_factory=EntityProfileSettings)
    reflections: ReflectionSettings = Field(default_factory=ReflectionSettings)
    profile_layers: list[Layer] = Field(
        default_factory=lambda: [Layer.PROCEDURAL],
        description="Whole layers that belong in the behavioural profile (know-how: how the user does things).",
    )
