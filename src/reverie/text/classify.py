"""Category and episode/note classification (in its priority order).

Priority (the lifecycle design's): 1. true temporal markers → episode; 2. extraction category (note categories
vs episode categories); 3. tag signals (note tags win); 4. past-tense action verbs → episode;
5. note-signal keywords → note; 6. default → episode.
"""

from __future__ import annotations

from collections.abc import Sequence

from reverie import lexicon
from reverie.model import Layer, MemoryKind, MemoryRecord

_TEMPORAL_MARKER = lexicon.pattern("temporal_marker")
NOTE_CATEGORIES = frozenset(
    {"preference", "decision", "commitment", "principle", "correction", "entity", "skill", "relationship", "plan"}
)
EPISODE_CATEGORIES = frozenset({"event", "action", "moment"})
NOTE_TAGS = frozenset({"note", "belief", "rule", "preference", "decision", "policy"})
EPISODE_TAGS = frozenset({"episode", "event", "log", "incident"})
_PAST_ACTION = lexicon.pattern("past_action")
_NOTE_SIGNAL = lexicon.pattern("note_signal")
_PLAN = lexicon.pattern("plan")


#: a promise or obligation the speaker takes on (EN + TR): the lifecycle design's commitment category
_COMMITMENT = lexicon.pattern("commitment", word_end=False)
#: categories an extraction (the LLM's) may give beside the observer's kinds: the lifecycle design's ten
EXTRACTED_CATEGORIES = frozenset({"relationship", "principle", "commitment", "moment", "skill", "plan", "entity"})


def category_of(kind: str, text: str, *, foresight: bool) -> str:
    """The category of a fact: the observer's kind (correction, preference, decision) or the extraction's
    category (relationship, principle, commitment, moment, skill, plan, entity) first; then a promise or
    obligation (commitment), a plan or intention (plan), entity-rich (entity), else fact."""
    if kind in ("correction", "preference", "decision"):
        return kind
    if kind in EXTRACTED_CATEGORIES - {"plan", "entity"}:
        return kind
    if _COMMITMENT.search(text):
        return "commitment"
    if kind == "plan" or foresight or _PLAN.search(text):
        return "plan"
    if kind == "entity":
        return "entity"
    return "fact"


def memory_kind(text: str, *, category: str, tags: Sequence[str] = ()) -> tuple[MemoryKind, str]:
    """Episode or note, and the rule of the lifecycle design's priority list that decided it."""
    if _TEMPORAL_MARKER.search(text):
        return MemoryKind.EPISODE, "temporal marker"
    if category in NOTE_CATEGORIES:
        return MemoryKind.NOTE, f"category {category}"
    if category in EPISODE_CATEGORIES:
        return MemoryKind.EPISODE, f"category {category}"
    lowered = {t.casefold() for t in tags}
    if lowered & NOTE_TAGS:
        return MemoryKind.NOTE, "note tag"
    if lowered & EPISODE_TAGS:
        return MemoryKind.EPISODE, "episode tag"
    if _PAST_ACTION.search(text):
        return MemoryKind.EPISODE, "past-tense action"
    if _NOTE_SIGNAL.search(text):
        return MemoryKind.NOTE, "note signal"
    return MemoryKind.EPISODE, "default"


#: where a memory came from, for its episodic sub-tier: another agent's memory shared with this one
VICARIOUS_SOURCES = frozenset({"federation"})
#: what the agent inferred or observed rather than what the user said
OBSERVED_SOURCES = frozenset({"assistant_message", "system"})
_SCHEMATIC = lexicon.pattern("schematic")
_PROCEDURAL = lexicon.pattern("procedural")
SCHEMATIC_CATEGORIES = frozenset({"pattern", "principle"})
PROCEDURAL_CATEGORIES = frozenset({"procedure", "skill", "howto"})


#: trust sources (the source-trust table) that are not the user's own words
OBSERVED_TRUST_SOURCES = frozenset({"ai", "ingest", "code_scan", "dream"})


def episodic_sub_tier(*, data_source: str, write_source: str, source: str) -> str:
    """The episodic sub-tier by where a memory came from: ``vicarious`` for another agent's memory
    (federation), ``observed`` for what the agent said or inferred (assistant messages, system input, AI-written,
    ingested or scanned text, the dream), ``personal`` for what the user said."""
    if data_source in VICARIOUS_SOURCES:
        return "vicarious"
    if data_source in OBSERVED_SOURCES or write_source == "dream" or source in OBSERVED_TRUST_SOURCES:
        return "observed"
    return "personal"


def semantic_sub_tier(text: str, *, category: str) -> str:
    """The semantic sub-tier by the kind of knowledge: ``schematic`` for patterns and standing rules
    (always / never / rule), ``procedural`` for skills and how-to, ``factual`` otherwise."""
    if category in SCHEMATIC_CATEGORIES or _SCHEMATIC.search(text):
        return "schematic"
    if category in PROCEDURAL_CATEGORIES or _PROCEDURAL.search(text):
        return "procedural"
    return "factual"


def sub_tier_for(rec: MemoryRecord, layer: Layer) -> str | None:
    """The sub-tier of ``rec`` in ``layer``: by its source in the episodic (and working) layer, by its kind of
    knowledge in the semantic and procedural layers; none in the codebase layer."""
    if layer in (Layer.SEMANTIC, Layer.PROCEDURAL):
        return semantic_sub_tier(rec.content, category=rec.category)
    if layer in (Layer.WORKING, Layer.EPISODIC):
        return episodic_sub_tier(data_source=rec.data_source, write_source=rec.write_source, source=rec.source)
    return None
