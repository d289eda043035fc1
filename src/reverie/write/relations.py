"""Seed 001 relations: heuristic detection rules and capacity pruning (1,000 → 900).

Rules (fallback of the LLM path): entity overlap >= 2 → same_entity (0.7); word overlap > 30% and
entity overlap >= 1 → elaborates (0.5); same category and word overlap > 15% → related_to (0.4).
Pruning counts and removes only the prunable types (lowest priority first, lowest confidence first)
and never touches supersedes / contradicts / causes, which are kept for good and not counted.
"""

from __future__ import annotations

from collections.abc import Sequence

from reverie.config.write import RelationSettings
from reverie.model import MemoryRecord, Relation, RelationType
from reverie.store.base import MemoryFilter, Store
from reverie.write.text import content_words, overlap

PROTECTED = frozenset({RelationType.SUPERSEDES, RelationType.CONTRADICTS, RelationType.CAUSES})
#: the relations seed 001's 1,000 → 900 pruning counts: every type but the dream's ``summarizes``
#: links (a summary or card links each member; those links are the dream's, never counted or pruned)
PRUNE_COUNTED = frozenset(RelationType) - {RelationType.SUMMARIZES}


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
    return Relation(new.id, other.id, rtype, confidence=conf, created_at=new.created_at,
                    metadata={"path": "heuristic", "word_overlap": round(words, 4), "entities": shared_entities})


def detect(new: MemoryRecord, others: Sequence[MemoryRecord], cfg: RelationSettings) -> list[Relation]:
    """Heuristic relations from ``new`` to each of ``others`` (one per pair at most)."""
    found = (detect_one(new, o, cfg) for o in others if o.id != new.id)
    return [r for r in found if r is not None]


def dedup(relations: Sequence[Relation], existing: Sequence[Relation]) -> list[Relation]:
    """Seed 001 B5: drop relations whose (src, dst, type) exists already or repeats in the batch."""
    seen = {(r.src_id, r.dst_id, r.type) for r in existing}
    out: list[Relation] = []
    for rel in relations:
        key = (rel.src_id, rel.dst_id, rel.type)
        if key not in seen:
            seen.add(key)
            out.append(rel)
    return out


def prunable_types(cfg: RelationSettings) -> frozenset[RelationType]:
    """The relation types pruning may delete (``type_priority``'s; never supersedes, contradicts, causes)."""
    return frozenset(RelationType(t) for t in cfg.type_priority) - PROTECTED


def prune_scope(store: Store, user_id: str | None, cfg: RelationSettings) -> int:
    """Seed 001's relation pruning for one user partition: once more than ``prune_at`` prunable relations
    exist, delete by :func:`prune_plan` down to ``prune_to``. Returns how many were deleted.

    Only relations pruning may delete are counted: a user's supersedes / contradicts / causes history
    (kept for good) never crosses the threshold, so the check stays one bounded count per write
    instead of a reload of every relation of the user on each one (write cost does not grow with
    history)."""
    flt = MemoryFilter.everything(user_id=user_id, all_users=False)
    types = prunable_types(cfg)
    if not types or store.count_relations(flt, types=types) <= cfg.prune_at:
        return 0
    doomed = prune_plan(store.scope_relations(flt, types=types), cfg)
    return store.delete_relations(doomed) if doomed else 0


def prune_plan(relations: Sequence[Relation], cfg: RelationSettings) -> list[str]:
    """Ids to delete so that at most ``prune_to`` prunable relations remain, once more than ``prune_at``
    prunable ones exist (protected relations in ``relations`` are neither counted nor deleted)."""
    prunable = [r for r in relations if r.type not in PROTECTED and r.type.value in cfg.type_priority]
    if len(prunable) <= cfg.prune_at:
        return []
    excess = len(prunable) - cfg.prune_to
    prunable.sort(key=lambda r: (cfg.type_priority[r.type.value], r.confidence, r.created_at, r.id))
    return [r.id for r in prunable[:excess]]
