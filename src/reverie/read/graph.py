"""Graph expansion: BFS over relations and entity hubs, edge confidence.

From the best fused hits, a breadth-first walk follows the intent's relation types for the
intent's number of hops (one ``store.relations`` call per hop, never one per memory). Each edge's
confidence is decayed lazily (:func:`~reverie.dynamics.lifecycle.edge_confidence_at`),
edges below the traversal floor (0.2) are pruned, and a reached memory scores
``parent · confidence · weight · hop_decay``. A personalised PageRank over the walked subgraph
(8 iterations) then refines that score: ``score · (0.5 + 0.5 · pr / max pr)``, so
memories reachable along many confident paths rank above those hanging off one weak edge.

Entity hubs ("find all memories mentioning a specific entity") go through the existing
store contract: one full-text search per query entity. A dedicated ``store.entity_hub(name)``
over an entities index would be exact and cheaper; noted for the storage owner.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from reverie.config.dynamics import LifecycleSettings
from reverie.dynamics.lifecycle import edge_confidence_at, edge_traversable
from reverie.errors import StoreError
from reverie.model import Relation, RelationType
from reverie.read.decompose import STOPWORDS
from reverie.store.base import MemoryFilter, Store

_NAME = re.compile(r"\b[A-ZÇĞİÖŞÜ][\w'’-]+(?:\s+[A-ZÇĞİÖŞÜ][\w'’-]+)*")
_POSSESSIVE = re.compile(r"['’]s$")
_QUOTED = re.compile(r"[\"“']([^\"”']{2,60})[\"”']")


@dataclass(slots=True)
class Edge:
    src: str
    dst: str
    weight: float
    confidence: float
    type: str


@dataclass(slots=True)
class Walk:
    """What the walk reached: best score per memory and how it was reached, plus pruning counts."""

    reached: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: seeds that are also reached along a traversable edge from another seed (annotated, not rescored)
    seed_links: dict[str, dict[str, Any]] = field(default_factory=dict)
    edges: list[Edge] = field(default_factory=list)
    pruned: int = 0


def query_entities(text: str) -> list[str]:
    """Capitalised names and quoted phrases of a query (lower-cased), minus stop words."""
    found: list[str] = []
    for m in [*_NAME.findall(text), *_QUOTED.findall(text)]:
        name = _POSSESSIVE.sub("", m.strip().casefold()).strip()
        if name and name not in STOPWORDS and name not in found and len(name) > 1:
            found.append(name)
    return found


def entity_key(entity: str) -> str:
    """Comparable form of a stored entity ("entity://tech/react" → "react")."""
    tail = entity.rsplit("/", 1)[-1]
    return tail.replace("-", " ").replace("_", " ").casefold().strip()


def _edge_of(rel: Relation, now: datetime, cfg: LifecycleSettings) -> Edge:
    conf = edge_confidence_at(
        confidence=rel.confidence, last_reinforced_at=rel.last_reinforced_at or rel.created_at, now=now, cfg=cfg
    )
    return Edge(rel.src_id, rel.dst_id, float(rel.weight), conf, rel.type.value)


def walk(
    store: Store,
    seeds: Mapping[str, float],
    *,
    types: Sequence[str],
    hops: int,
    hop_decay: float,
    now: datetime,
    cfg: LifecycleSettings,
) -> Walk:
    """BFS from ``seeds`` (id → score); one relations query per hop."""
    out = Walk()
    wanted = frozenset(RelationType(t) for t in types if t in RelationType.__members__.values())
    scores = dict(seeds)
    frontier = list(seeds)
    for hop in range(1, hops + 1):
        if not frontier:
            break
        nxt: list[str] = []
        for rel in store.relations(frontier, types=wanted or None, direction="both"):
            edge = _edge_of(rel, now, cfg)
            if not edge_traversable(confidence=edge.confidence, cfg=cfg):
                out.pruned += 1
                continue
            out.edges.append(edge)
            for parent, child in ((edge.src, edge.dst), (edge.dst, edge.src)):
                if parent not in scores or parent not in frontier:
                    continue
                if child in seeds:
                    out.seed_links.setdefault(
                        child,
                        {"via": parent, "type": edge.type, "hops": hop, "edge_confidence": round(edge.confidence, 4)},
                    )
                    continue
                score = scores[parent] * edge.confidence * edge.weight * hop_decay**hop
                if score > scores.get(child, 0.0):
                    scores[child] = score
                    out.reached[child] = {
                        "via": parent,
                        "type": edge.type,
                        "hops": hop,
                        "edge_confidence": round(edge.confidence, 4),
                        "propagated": score,
                    }
                    nxt.append(child)
        frontier = list(dict.fromkeys(nxt))
    return out


def pagerank(
    nodes: Sequence[str], edges: Sequence[Edge], personal: Mapping[str, float], *, iterations: int, damping: float
) -> dict[str, float]:
    """Personalised PageRank over an undirected, confidence-weighted subgraph (the refinement of the graph score)."""
    if not nodes:
        return {}
    total_p = sum(personal.values()) or 1.0
    base = {n: personal.get(n, 0.0) / total_p for n in nodes}
    out_w: dict[str, float] = {n: 0.0 for n in nodes}
    links: dict[str, list[tuple[str, float]]] = {n: [] for n in nodes}
    for e in edges:
        w = e.confidence * e.weight
        if e.src in links and e.dst in links and w > 0:
            links[e.src].append((e.dst, w))
            links[e.dst].append((e.src, w))
            out_w[e.src] += w
            out_w[e.dst] += w
    rank = dict(base)
    for _ in range(iterations):
        new = {n: (1.0 - damping) * base[n] for n in nodes}
        for n in nodes:
            if out_w[n] == 0:
                new[n] += damping * rank[n]
                continue
            for m, w in links[n]:
                new[m] += damping * rank[n] * w / out_w[n]
        rank = new
    return rank


def refine(result: Walk, seeds: Mapping[str, float], *, iterations: int, damping: float) -> None:
    """Scale each reached memory's score by its PageRank share (in place), recording both in the explain."""
    if not result.reached:
        return
    nodes = list(dict.fromkeys([*seeds, *result.reached]))
    pr = pagerank(nodes, result.edges, seeds, iterations=iterations, damping=damping)
    top = max(pr.values()) or 1.0
    for mid, info in result.reached.items():
        share = pr.get(mid, 0.0) / top
        info["pagerank"] = round(share, 4)
        info["score"] = info["propagated"] * (0.5 + 0.5 * share)


def entity_hub(store: Store, flt: MemoryFilter, names: Sequence[str], *, limit: int) -> dict[str, list[str]]:
    """Memory ids mentioning each entity name (through full-text search; empty on a store error)."""
    out: dict[str, list[str]] = {}
    for name in names:
        try:
            out[name] = [h.id for h in store.text_search(f'"{name}"' if " " in name else name, flt, limit)]
        except StoreError:
            out[name] = []
    return out


__all__ = ["Edge", "Walk", "entity_hub", "entity_key", "pagerank", "query_entities", "refine", "walk"]
