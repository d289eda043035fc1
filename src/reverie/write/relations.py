"""Relations between memories by the heuristic rules (the fallback of the LLM path).

Rules: entity overlap >= 2 → same_entity (0.7); word overlap > 30% and entity overlap >= 1 →
elaborates (0.5); same category and word overlap > 15% → related_to (0.4). An edge's identity,
verification state, reinforcement and pruning are :mod:`reverie.edges`'.
"""

from __future__ import annotations

from collections.abc import Sequence

from reverie.config.write import RelationSettings
from reverie.model import MemoryRecord, Relation, RelationType
from reverie.text.words import content_words, overlap


def detect_one(new: MemoryRecord, other: MemoryRecord, cfg: RelationSettings) -> Relation | None:
    """The relation the heuristic rules give from ``new`` to ``other`` (first matching rule)."""
    shared_entities = len(set(new.entities) & set(other.entities))
    words = overlap(content_words(new.content), content_words(other.content))
    if shared_entities >= cfg.same_entity_overlap:
        rtype, conf = RelationType.SAME_ENTITY, cfg.same_entity_confidence
    elif words > cfg.elaborates_word_overlap and shared_entities >= 1:
        rtype, conf = RelationType.ELABORATES, cfg.elaborates_confidence
    elif new.category == other.category and words > cfg.related_word_overlap:
        rtype, conf = RelationType.RELATED_TO, cfg.related_confidence
    else:
        return None
    return Relation(
        new.id,
        other.id,
        rtype,
        confidence=conf,
        created_at=new.created_at,
        metadata={"path": "heuristic", "word_overlap": round(words, 4), "entities": shared_entities},
    )


def detect(new: MemoryRecord, others: Sequence[MemoryRecord], cfg: RelationSettings) -> list[Relation]:
    """Heuristic relations from ``new`` to each of ``others`` (one per pair at most)."""
    found = (detect_one(new, o, cfg) for o in others if o.id != new.id)
    return [r for r in found if r is not None]
