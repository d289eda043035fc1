"""Adversarial belief probing: old semantic/procedural beliefs are challenged by
their nearest newer memories with the write path's own contradiction check (LLM or heuristic);
a contradicted belief gets a contradicts edge, ``verification_state = "disputed"`` and a lower
importance, with history. Pinned and immutable beliefs are never touched. Probing writes no text.
"""

from __future__ import annotations

from collections import Counter
from datetime import timedelta

from reverie.dream.context import DreamContext, DreamStep, StepReport
from reverie.dream.derived import (
    SEP,
    Row,
    dream_llm,
    get_many,
    restates_others,
    snapshot,
)
from reverie.model import (
    MemoryRecord,
    Relation,
    RelationType,
    Status,
)
from reverie.store.base import MemoryFilter
from reverie.text import llm_update, updates


def _probe_state_key(ctx: DreamContext) -> str:
    return "dream:synthesis:probe:" + ("*" if ctx.all_users else (ctx.user_id or ""))


def _beliefs(ctx: DreamContext) -> list[Row]:
    """This run's beliefs to probe: old, idle semantic/procedural memories, round-robin after the cursor."""
    pcfg = ctx.settings.dream.synthesis.probe
    layers = frozenset(pcfg.layers)
    idle_before = ctx.now - timedelta(days=pcfg.min_idle_days)
    rows = sorted(
        (
            r
            for r in snapshot(ctx)
            if not r.derived and r.layer in layers and not r.pinned and not r.immutable and r.last_touch <= idle_before
        ),
        key=lambda r: ((r.user_id or ""), r.id),
    )
    if not rows or pcfg.max_per_run == 0:
        return []
    state = ctx.store.get_state(_probe_state_key(ctx)) or {}
    after = str(state.get("after", ""))
    start = next((i for i, r in enumerate(rows) if (r.user_id or "") + SEP + r.id > after), 0)
    ordered = rows[start:] + rows[:start]
    return ordered[: pcfg.max_per_run]


def step_probe(ctx: DreamContext) -> StepReport:
    """Adversarial belief probing (see module docs)."""
    pcfg = ctx.settings.dream.synthesis.probe
    report = StepReport("probe")
    paths: Counter[str] = Counter()
    chosen = _beliefs(ctx)
    llm = dream_llm(ctx)
    llm_calls = 0
    min_sim = ctx.settings.write.gate.profile(ctx.profile).contradiction_min
    held = (
        ctx.store.claim(
            [r.id for r in chosen],
            owner=ctx.owner,
            phase="probe",
            now=ctx.claim_now(),
            ttl_seconds=ctx.settings.dream.claim_ttl_s,
        )
        if chosen
        else []
    )
    try:
        fresh = get_many(ctx.store, held)
        for row in chosen:
            belief = fresh.get(row.id)
            if belief is None or belief.status is not Status.ACTIVE or belief.pinned or belief.immutable:
                continue
            report.examined += 1
            challengers = _challengers(ctx, belief, min_sim, pcfg.neighbours)
            found: list[tuple[MemoryRecord, float, str]] = []
            for other, sim in challengers:
                verdict: bool | None = None
                path = "heuristic"
                if llm is not None and llm_calls < pcfg.max_llm_calls:
                    llm_calls += 1
                    verdict = llm_update.contradicts(llm, belief.content, other.content)
                    path = "llm" if verdict is not None else "heuristic"
                if verdict is None:
                    verdict = updates.contradicts(
                        belief.content, other.content, correction=other.category == "correction"
                    )
                if verdict:
                    found.append((other, sim, path))
            if found and _dispute(ctx, belief, found, pcfg.importance_factor, pcfg.importance_floor):
                report.changed += 1
                paths.update(p for _, _, p in found)
    finally:
        if held:
            ctx.store.release(ctx.owner, held)
    if chosen:
        last = chosen[-1]
        ctx.store.set_state(
            _probe_state_key(ctx), {"after": (last.user_id or "") + SEP + last.id, "at": ctx.now.isoformat()}
        )
    report.details.update(
        {"probed": report.examined, "disputed": report.changed, "paths": dict(paths), "llm_calls": llm_calls}
    )
    return report


def _challengers(ctx: DreamContext, belief: MemoryRecord, min_sim: float, k: int) -> list[tuple[MemoryRecord, float]]:
    """The belief's nearest newer memories (similar enough for the write gate to weigh a contradiction)
    that have not disputed it already."""
    vec = belief.embedding
    if vec is None:
        return []
    hits = ctx.store.vector_search(vec, MemoryFilter(user_id=belief.user_id), k + 1)
    hits = [h for h in hits if h.id != belief.id and h.score >= min_sim]
    if not hits:
        return []
    done = {
        r.src_id for r in ctx.store.relations([belief.id], types=frozenset({RelationType.CONTRADICTS}), direction="in")
    }
    recs = ctx.store.get([h.id for h in hits if h.id not in done])
    out: list[tuple[MemoryRecord, float]] = []
    for h in hits:
        other = recs.get(h.id)
        if other is None or restates_others(other) or other.recorded_at <= belief.recorded_at:
            continue
        out.append((other, h.score))
    return out[:k]


def _dispute(
    ctx: DreamContext, belief: MemoryRecord, found: list[tuple[MemoryRecord, float, str]], factor: float, floor: float
) -> bool:
    """Lower a contradicted belief's importance (with history) and link its challengers."""
    new_importance = max(min(floor, belief.importance), belief.importance * factor)
    by = [o.id for o, _, _ in found]
    changes = {"importance": new_importance, "verification_state": "disputed", "updated_at": ctx.now}
    data = {
        "from": belief.importance,
        "to": new_importance,
        "by": by,
        "paths": sorted({p for _, _, p in found}),
        "what": "adversarial belief probing",
    }
    edges = [
        Relation(
            o.id,
            belief.id,
            RelationType.CONTRADICTS,
            confidence=1.0,
            created_at=ctx.now,
            metadata={"path": p, "similarity": round(s, 4), "by": "dream.probe"},
        )
        for o, s, p in found
    ]
    with ctx.store.transaction():
        if not ctx.write(belief, changes, "disputed", f"contradicted by newer memories {', '.join(by)}", data):
            return False
        ctx.store.add_relations(edges)
    return True


STEPS: tuple[DreamStep, ...] = (DreamStep("probe", step_probe),)

__all__ = ["STEPS", "step_probe"]
