"""Cross-domain bridges: entity pairs whose memories come from different
contexts, never mention each other, and whose centroids lie in the "related, not the same domain"
band. An LLM confirms a bridge (a bridge memory plus a related_to edge); without one (or when it
fails, or its text states a name or number the facts do not) the rule alone gives a low-confidence
related_to edge and no text.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass
from typing import Any

import numpy as np

from reverie.config.dream_synthesis import BridgeSettings, SynthesisSettings
from reverie.dream.context import DreamContext, DreamStep, StepReport
from reverie.dream.derived import (
    KIND_BRIDGE,
    SEP,
    SYNTHESIS_KEY,
    Group,
    dream_llm,
    entity_name,
    groups_by,
    inputs_of,
    new_note,
    snapshot,
    synthesis_id,
)
from reverie.dream.summarize import grounding_problem
from reverie.model import (
    HistoryEvent,
    Relation,
    RelationType,
)

_BRIDGE = (
    "Two entities appear in different contexts of one person's memories. From the facts given about each, "
    "decide whether there is a genuine, non-trivial connection between them; do not force one. Answer JSON: "
    '{"connected": true|false, "synthesis": "one or two sentences saying what connects them"}'
)


_BRIDGE_FACT_CHARS = 300  # each fact is shown to the LLM up to this many characters


@dataclass(slots=True)
class _EntityPair:
    user_id: str | None
    a: str
    b: str
    similarity: float
    rep_a: str
    rep_b: str

    @property
    def pair(self) -> str:
        return self.a + SEP + self.b


def _bridge_state_key(user_id: str | None) -> str:
    return "dream:synthesis:bridges:" + (user_id or "")


def _bridge_candidates(
    ctx: DreamContext, user_id: str | None, groups: list[Group], judged: set[str], cfg: SynthesisSettings
) -> tuple[list[_EntityPair], int]:
    """Pairs of this user's top entities that qualify, most similar first, and how many pairs were compared."""
    bcfg = cfg.bridges
    band = bcfg.band(ctx.profile)
    top = sorted((g for g in groups if len(g.members) >= bcfg.min_members), key=lambda g: (-len(g.members), g.key))[
        : bcfg.max_entities
    ]
    if len(top) < 2:
        return [], 0
    names = [g.key for g in top]
    index = {k: i for i, k in enumerate(names)}
    together: set[tuple[int, int]] = set()
    contexts: list[set[str]] = [set() for _ in top]
    seen_rows: set[str] = set()
    for i, g in enumerate(top):
        for r in g.members:
            contexts[i].add(r.context)
            if r.id in seen_rows:
                continue
            seen_rows.add(r.id)
            mine = sorted(index[e] for e in r.entities if e in index)
            together.update((x, y) for n, x in enumerate(mine) for y in mine[n + 1 :])
    samples = [[r.id for r in inputs_of(g.members, bcfg.sample)] for g in top]
    vectors = ctx.store.embeddings([rid for s in samples for rid in s])
    member_vecs: list[tuple[list[str], np.ndarray]] = []
    centroids = np.zeros((len(top), _dim(vectors)), dtype=np.float32)
    for i, ids in enumerate(samples):
        have = [rid for rid in ids if rid in vectors]
        mat = np.stack([vectors[rid] for rid in have]) if have else np.zeros((0, centroids.shape[1]), np.float32)
        member_vecs.append((have, mat))
        if have:
            c = mat.mean(axis=0)
            norm = float(np.linalg.norm(c))
            centroids[i] = c / norm if norm > 0 else c
    sims = centroids @ centroids.T
    out: list[_EntityPair] = []
    compared = 0
    for i in range(len(top)):
        for j in range(i + 1, len(top)):
            compared += 1
            s = float(sims[i, j])
            if not band.min_similarity <= s <= band.max_similarity or (i, j) in together:
                continue
            if _jaccard(contexts[i], contexts[j]) > bcfg.max_context_overlap:
                continue
            a, b = sorted((names[i], names[j]))
            if a + SEP + b in judged or not member_vecs[i][0] or not member_vecs[j][0]:
                continue
            ia, ib = (i, j) if names[i] == a else (j, i)
            out.append(
                _EntityPair(
                    user_id, a, b, s, _closest(member_vecs[ia], centroids[ib]), _closest(member_vecs[ib], centroids[ia])
                )
            )
    out.sort(key=lambda c: (-c.similarity, c.a, c.b))
    return out, compared


def _dim(vectors: dict[str, Any]) -> int:
    for v in vectors.values():
        return int(np.asarray(v).shape[0])
    return 1


def _closest(members: tuple[list[str], np.ndarray], target: np.ndarray) -> str:
    """The member whose vector is most similar to ``target`` (the memory that carries the bridge)."""
    ids, mat = members
    return ids[int(np.argmax(mat @ target))]


def _jaccard(a: set[str], b: set[str]) -> float:
    union = a | b
    return len(a & b) / len(union) if union else 0.0


def _ask_bridge(
    llm: Any, a: str, b: str, facts_a: list[str], facts_b: list[str], sim: float
) -> tuple[bool, str] | None:
    """The LLM's verdict on a bridge, or ``None`` when it is unavailable or its answer does not validate."""
    cut = _BRIDGE_FACT_CHARS
    user = (
        f"Entity A: {a}\nFacts about A:\n"
        + "\n".join(f"- {t[:cut]}" for t in facts_a)
        + f"\n\nEntity B: {b}\nFacts about B:\n"
        + "\n".join(f"- {t[:cut]}" for t in facts_b)
        + f"\n\nEmbedding similarity: {sim:.2f}"
    )
    answer = llm.chat_json(system=_BRIDGE, user=user, op="dream.bridges")
    if not isinstance(answer, dict) or not isinstance(answer.get("connected"), bool):
        return None
    text = answer.get("synthesis")
    if not answer["connected"]:
        return False, ""
    if not isinstance(text, str) or not text.strip():
        return None
    return True, " ".join(text.split())


def step_bridges(ctx: DreamContext) -> StepReport:
    """Cross-domain synthesis (see module docs)."""
    cfg = ctx.settings.dream.synthesis
    bcfg = cfg.bridges
    report = StepReport("bridges")
    outcome: Counter[str] = Counter()
    by_user: dict[str | None, dict[str, Group]] = defaultdict(dict)
    for g in groups_by(snapshot(ctx), lambda r: r.entities):
        by_user[g.user_id][g.key] = g
    budget = bcfg.max_per_run
    compared_total = 0
    llm = dream_llm(ctx)
    for user_id in sorted(by_user, key=lambda u: u or ""):
        if budget <= 0 or ctx.embed is None:
            break
        groups = by_user[user_id]
        state = ctx.store.get_state(_bridge_state_key(user_id)) or {}
        judged_list: list[list[str]] = [list(p) for p in state.get("judged", [])]
        candidates, compared = _bridge_candidates(ctx, user_id, list(groups.values()), {p[0] for p in judged_list}, cfg)
        compared_total += compared
        report.examined += len(candidates)
        for cand in candidates[:budget]:
            budget -= 1
            facts = _bridge_facts(ctx, cand, groups)
            verdict, text = _judge_bridge(llm, cand, facts)
            outcome[verdict] += 1
            judged_list = [*judged_list, [cand.pair, verdict]][-bcfg.judged_kept :]
            with ctx.store.transaction():
                report.changed += _record_bridge(ctx, cand, verdict, text, facts, bcfg)
                ctx.store.set_state(_bridge_state_key(user_id), {"judged": judged_list})
    report.details.update(
        {
            "outcome": dict(outcome),
            "pairs_compared": compared_total,
            "band": bcfg.band(ctx.profile).model_dump(),
            "profile": ctx.profile,
        }
    )
    return report


def _judge_bridge(llm: Any | None, cand: _EntityPair, facts: tuple[list[str], list[str]]) -> tuple[str, str]:
    """(verdict, text): ``llm`` (confirmed, with the LLM's synthesis), ``rejected`` (the LLM saw no
    connection) or ``heuristic`` (no LLM, it failed, or its text states a name or number the facts do not:
    the candidate rule alone decides, and no text is written)."""
    if llm is None:
        return "heuristic", ""
    names = entity_name(cand.a, facts[0]), entity_name(cand.b, facts[1])
    answer = _ask_bridge(llm, names[0], names[1], facts[0], facts[1], cand.similarity)
    if answer is None:
        return "heuristic", ""
    connected, text = answer
    if not connected:
        return "rejected", ""
    # the bridge text must be true of the facts it was given: no name or number they do not state
    given = [*names, *(t[:_BRIDGE_FACT_CHARS] for t in (*facts[0], *facts[1]))]
    if grounding_problem(text, given, keep_all=False) is not None:
        return "heuristic", ""
    return "llm", text


def _bridge_facts(ctx: DreamContext, cand: _EntityPair, groups: dict[str, Group]) -> tuple[list[str], list[str]]:
    """Up to five facts of each entity, the bridge-carrying memory first."""
    out: list[list[str]] = []
    for ent, rep in ((cand.a, cand.rep_a), (cand.b, cand.rep_b)):
        ids = [rep, *(r.id for r in inputs_of([r for r in groups[ent].members if r.id != rep], 4))]
        recs = ctx.store.get(ids)
        out.append([recs[i].content for i in ids if i in recs])
    return out[0], out[1]


def _record_bridge(
    ctx: DreamContext,
    cand: _EntityPair,
    verdict: str,
    text: str,
    facts: tuple[list[str], list[str]],
    bcfg: BridgeSettings,
) -> int:
    """Write what the verdict calls for (inside the caller's transaction); returns the memories/edges added."""
    if verdict == "rejected":
        return 0
    path = "llm" if verdict == "llm" else "heuristic"
    edge_meta: dict[str, Any] = {
        "bridge": [cand.a, cand.b],
        "similarity": round(cand.similarity, 4),
        "path": path,
        "by": "dream.bridges",
    }
    added = 0
    if verdict == "llm":
        content = f"Bridge between {entity_name(cand.a, facts[0])} and {entity_name(cand.b, facts[1])}: {text}"
        sid = synthesis_id(KIND_BRIDGE, cand.user_id, cand.pair)
        assert ctx.embed is not None
        vector = np.asarray(ctx.embed([content]), dtype=np.float32)[0]
        rec = new_note(
            ctx,
            sid,
            cand.user_id,
            content,
            vector,
            category="fact",
            entities=[cand.a, cand.b],
            importance=bcfg.importance,
            metadata={
                SYNTHESIS_KEY: KIND_BRIDGE,
                "key": cand.pair,
                "similarity": round(cand.similarity, 4),
                "method": "llm",
            },
        )
        if not ctx.store.get([sid]):
            ctx.store.insert([rec])
            ctx.store.add_history(
                [
                    HistoryEvent(
                        sid,
                        "created",
                        ctx.now,
                        reason="cross-domain bridge confirmed by the LLM",
                        actor="dream",
                        data={
                            "entities": [cand.a, cand.b],
                            "similarity": cand.similarity,
                            "members": [cand.rep_a, cand.rep_b],
                        },
                    )
                ]
            )
            ctx.store.add_relations(
                [
                    Relation(sid, m, RelationType.SUMMARIZES, weight=0.8, created_at=ctx.now, metadata=dict(edge_meta))
                    for m in (cand.rep_a, cand.rep_b)
                ]
            )
            added += 1
        edge_meta["memory"] = sid
    conf = bcfg.llm_confidence if verdict == "llm" else bcfg.heuristic_confidence
    added += ctx.store.add_relations(
        [
            Relation(
                cand.rep_a, cand.rep_b, RelationType.RELATED_TO, confidence=conf, created_at=ctx.now, metadata=edge_meta
            )
        ]
    )
    return added


STEPS: tuple[DreamStep, ...] = (DreamStep("bridges", step_bridges),)

__all__ = ["STEPS", "step_bridges"]
