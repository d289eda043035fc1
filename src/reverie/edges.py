"""Relation edges, shared by the write path and the dream: an edge's identity, its verification state,
its reinforcement when it is observed again, and capacity pruning (1,000 → 900).

Pruning counts and removes only the prunable types (lowest priority first, lowest confidence first) and
never touches supersedes / contradicts / causes, which are kept for good and not counted.

Graph-edge lifecycle (the lifecycle design's edge confidence): a relation observed again strengthens the
stored edge instead of being dropped as a duplicate — its confidence rises by
``dynamics.lifecycle.edge_reinforce_delta`` (capped at 1), ``last_reinforced_at`` restarts its decay
window, and its verification state moves from ``unverified`` (one observation by the heuristic rules) to
``system_inferred`` (seen again, or found by an LLM). An edge whose source memory was contradicted is
``disputed``. Pruning removes disputed edges first, then by type priority, unverified edges before
inferred ones of the same type, lowest confidence first.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from reverie.config.dynamics import LifecycleSettings
from reverie.config.write import RelationSettings
from reverie.dynamics.lifecycle import reinforce_edge
from reverie.model import Relation, RelationType
from reverie.store.base import MemoryFilter, Store

PROTECTED = frozenset({RelationType.SUPERSEDES, RelationType.CONTRADICTS, RelationType.CAUSES, RelationType.MAY_UPDATE})
#: the relations the Cognitive Memory design's 1,000 → 900 pruning counts: every type but the dream's ``summarizes``
#: links (a summary or card links each member; those links are the dream's, never counted or pruned)
PRUNE_COUNTED = frozenset(RelationType) - {RelationType.SUMMARIZES}
#: relation types without a direction: A same_entity B is the edge B same_entity A
SYMMETRIC = frozenset({RelationType.SAME_ENTITY, RelationType.RELATED_TO})
#: the relation metadata key holding the edge's verification state
VERIFICATION = "verification"
UNVERIFIED, INFERRED, DISPUTED = "unverified", "system_inferred", "disputed"
#: pruning order of verification states: the first are pruned first
_PRUNE_RANK = {DISPUTED: 0, UNVERIFIED: 1, INFERRED: 2, "user_confirmed": 3}


def verification(rel: Relation) -> str:
    """The edge's verification state (``unverified`` for an edge stored before the state was kept)."""
    state = rel.metadata.get(VERIFICATION)
    return state if isinstance(state, str) and state in _PRUNE_RANK else UNVERIFIED


def edge_key(rel: Relation) -> tuple[str, str, RelationType]:
    """The identity of an edge: (src, dst, type), both directions being one edge for a symmetric type."""
    if rel.type in SYMMETRIC and rel.dst_id < rel.src_id:
        return rel.dst_id, rel.src_id, rel.type
    return rel.src_id, rel.dst_id, rel.type


def dedup(relations: Sequence[Relation], existing: Sequence[Relation]) -> list[Relation]:
    """Drop relations whose edge exists already or repeats in the batch."""
    return split_seen(relations, existing)[0]


def split_seen(relations: Sequence[Relation], existing: Sequence[Relation]) -> tuple[list[Relation], list[Relation]]:
    """(new edges, stored edges observed again): each of ``relations`` is either new (first of its edge in
    the batch) or an observation of a stored edge of ``existing`` (each stored edge listed once)."""
    stored = {edge_key(r): r for r in existing}
    seen: set[tuple[str, str, RelationType]] = set()
    fresh: list[Relation] = []
    again: list[Relation] = []
    for rel in relations:
        key = edge_key(rel)
        if key in seen:
            continue
        seen.add(key)
        if key in stored:
            again.append(stored[key])
        else:
            fresh.append(rel)
    return fresh, again


def reinforced(rel: Relation, *, now: datetime, cfg: LifecycleSettings) -> dict[str, Any]:
    """The field changes of a stored edge observed again: confidence + ``edge_reinforce_delta`` (capped at
    1), its decay window restarted, one more observation counted, and ``unverified`` becoming
    ``system_inferred`` (a disputed edge stays disputed)."""
    state = verification(rel)
    observations = rel.metadata.get("observations", 1)
    count = observations if isinstance(observations, int) and observations >= 1 else 1
    return {
        "confidence": reinforce_edge(confidence=rel.confidence, cfg=cfg),
        "last_reinforced_at": now,
        "metadata": {
            **rel.metadata,
            "observations": count + 1,
            VERIFICATION: INFERRED if state == UNVERIFIED else state,
        },
    }


def prunable_types(cfg: RelationSettings) -> frozenset[RelationType]:
    """The relation types pruning may delete (``type_priority``'s; never supersedes, contradicts, causes)."""
    return frozenset(RelationType(t) for t in cfg.type_priority) - PROTECTED


def prune_scope(store: Store, user_id: str | None, cfg: RelationSettings) -> int:
    """The Cognitive Memory design's relation pruning for one user partition: once more than ``prune_at`` prunable
    relations
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
    prunable.sort(
        key=lambda r: (
            verification(r) != DISPUTED,
            cfg.type_priority[r.type.value],
            _PRUNE_RANK[verification(r)],
            r.confidence,
            r.created_at,
            r.id,
        )
    )
    return [r.id for r in prunable[:excess]]
