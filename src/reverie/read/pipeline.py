"""The read path, composed (the retrieval design's order; every stage switchable in ``settings.read``):

trivial-message skip → intent router → decomposition → HyDE (one embed call for all texts, in a worker thread
while the full-text searches run) → vector and full-text search per sub-query → weighted RRF (K = 60) → graph
expansion + entity hub → recall through consolidation (cold store, summaries' members) → bulk fetch →
bitemporal check → composite scoring (relevance — the hybrid similarity with an absolute lexical score, entity,
time and episode boosts — plus a bounded prior: ACT-R, importance, episode context, penalties) → session
neighbours of the best-scored candidates join the pool, scored again, pulled toward their seed's score → MMR
(λ = 0.7) over the whole pool → current version first → hot-tier merge → top-k.

The parts live beside this module: :mod:`~reverie.read.plan` (routing and the query's vectors),
:mod:`~reverie.read.hybrid` (the channels and their fusion), :mod:`~reverie.read.graph`,
:mod:`~reverie.read.consolidated` (recall through consolidation), :mod:`~reverie.read.versions` (current
version first), :mod:`~reverie.read.rank` (scoring inputs, MMR, hits, the hot-tier merge),
:mod:`~reverie.read.neighbours` (the memories recorded next to the best candidates in their session).

The candidate pool never depends on ``k`` (``read.candidate_pool``) and the whole pool is ordered
before the first ``k`` are taken, so the first n results of ``search(k=n)`` are those of
``search(k=50)``.

Store round trips per search: two per sub-query, one ``get`` for the whole pool, one
``relations`` per graph hop, one ``coactivations`` (two when neighbours joined), two ``list`` per
neighbour seed, one ``text_search`` per entity-hub name, and
the hot tier at most once per five minutes. Each hit's ``explain`` names the stage that admitted
it, the channels with their ranks, every score term (and the cosine and lexical parts of the
similarity), boost and multiplier, and its MMR step.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import numpy as np

from reverie.config import Settings
from reverie.dynamics.lifecycle import filtered_as_stale
from reverie.embed.base import Embedder
from reverie.model import MemoryRecord, Status
from reverie.read import (
    consolidated,
    filters,
    graph,
    hybrid,
    intent,
    neighbours,
    rank,
    scoring,
    trivial,
    versions,
    when,
)
from reverie.read import plan as planning
from reverie.read.decompose import decompose
from reverie.read.hot import HotTier
from reverie.read.hybrid import PoolEntry
from reverie.read.plan import F32, QueryPlan, Routed
from reverie.results import Hit
from reverie.store.base import MemoryFilter, ScoredId, Store

#: memories read per batch while the query is embedded (a batch is read and decoded in about half a millisecond)
_READ_AHEAD_BATCH = 12
Sparse = Sequence[tuple[list[ScoredId], str | None]]


@dataclass(slots=True)
class Request:
    """One search: the query, the caller's filter, and the read-path options."""

    query: str
    flt: MemoryFilter
    k: int
    session_id: str | None = None
    mode: str = "current"
    as_of: datetime | None = None
    deep: bool = False


@dataclass(slots=True)
class Outcome:
    """The hits and what the pipeline decided about the query as a whole."""

    hits: list[Hit]
    query: dict[str, Any] = field(default_factory=dict)
    gated: bool = False
    similarities: dict[str, float] = field(default_factory=dict)


@dataclass(slots=True)
class _Pool:
    """The candidate pool of one search and what was learnt while building it."""

    plan: QueryPlan
    flt: MemoryFilter  # the caller's filter, widened for the query mode
    search: MemoryFilter  # what the searches ran over (current version first: superseded memories too)
    cands: list[PoolEntry]
    entities: list[str]
    windows: tuple[when.Window, ...]
    follow: bool  # the cold store and the summaries' members are reachable (recall through consolidation)
    cold: bool = False  # the cold store was searched
    records: dict[str, MemoryRecord] = field(default_factory=dict)  # before screening: the ones read ahead
    proxies: set[str] = field(default_factory=set)
    followed: int = 0
    anchor_of: dict[str, str] = field(default_factory=dict)  # a disputed memory -> the immutable one it contradicts


def _pool_records(store: Store, ids: Sequence[str], early: dict[str, MemoryRecord]) -> dict[str, MemoryRecord]:
    """The memories of ``ids`` that exist: those read ahead (``early``) and the rest read now."""
    late = store.get([i for i in ids if i not in early])
    return {i: rec for i in ids if (rec := early.get(i) or late.get(i)) is not None}


class ReadPipeline:
    """Stateless apart from the hot-tier cache; one per ``Memory``."""

    def __init__(self, store: Store, embedder: Embedder, settings: Settings) -> None:
        self.store = store
        self.embedder = embedder
        self.settings = settings
        self.hot = HotTier()
        #: the intent router (LLM-primary once :meth:`Memory` hands it the LLM, keywords as fallback)
        self.router = intent.Router(settings.read)

    @property
    def profile(self) -> str:
        return str(getattr(self.embedder, "profile", "api"))

    # stages ------------------------------------------------------------------------------
    def route(self, query: str) -> Routed:
        """Intent and sub-queries (no embedding yet)."""
        cfg = self.settings.read
        rt = self.router.route(query)
        subs = decompose(query, max_parts=cfg.max_subqueries) if cfg.decompose else [query]
        return rt, subs

    def plan(self, query: str, routed: Routed | None = None) -> QueryPlan:
        """Intent, sub-queries and their vectors (HyDE variants embedded in the same call)."""
        return planning.make(self.embedder, self.settings.read, routed if routed is not None else self.route(query))

    def plan_async(self, query: str, routed: Routed) -> planning.Pending:
        """:meth:`plan`, started now (in a worker thread with ``read.overlap_embedding``); calling the returned
        :class:`~reverie.read.plan.Pending` waits for it, its ``done()`` says whether it is there."""
        return planning.start(self.embedder, self.settings.read, routed)

    def candidates(
        self, plan: QueryPlan, flt: MemoryFilter, *, pool: int, sparse: Sparse | None = None
    ) -> list[PoolEntry]:
        """Both channels for every sub-query, fused; a failed full-text channel is recorded on each entry."""
        return self._over((flt,), plan, pool, (sparse,))[0]

    def _fused(
        self, plan: QueryPlan, flt: MemoryFilter, size: int, sparse: Sparse | None = None
    ) -> tuple[list[PoolEntry], list[str]]:
        cands, errors, _ = self._over((flt,), plan, size, (sparse,), mark=False)
        return cands, errors

    def _over(
        self,
        scopes: Sequence[MemoryFilter],
        plan: QueryPlan,
        size: int,
        sparse: Sequence[Sparse | None],
        *,
        mark: bool = True,
    ) -> tuple[list[PoolEntry], list[str], list[set[str]]]:
        """:func:`~reverie.read.hybrid.merged_search` of the query's plan over ``scopes``; ``mark``: a failed
        full-text channel is recorded on each entry."""
        cands, errors, found = hybrid.merged_search(
            self.store,
            scopes,
            subqueries=plan.subqueries,
            vectors=plan.search,
            weights=plan.weights,
            pool=size,
            k=self.settings.read.rrf_k,
            sparse=sparse,
        )
        if mark and errors:
            for c in cands:
                c.channels.setdefault("text", {"rank": None, "fallback": errors[0]})
        return cands, errors, found

    def expand(
        self, cands: list[PoolEntry], plan: QueryPlan, flt: MemoryFilter, now: datetime, entities: Sequence[str]
    ) -> list[PoolEntry]:
        """Graph walk from the best candidates and the entity hub; new memories join the pool."""
        cfg = self.settings.read
        strat = plan.route.strategy
        have = {c.id for c in cands}
        added: list[PoolEntry] = []
        top = max((c.rrf for c in cands), default=0.0) or 1.0
        if cfg.graph and strat.graph_hops > 0 and cands:
            seeds = {c.id: c.rrf / top for c in cands[: cfg.graph_seeds]}
            walked = graph.walk(
                self.store,
                seeds,
                types=strat.graph_types,
                hops=strat.graph_hops,
                hop_decay=cfg.graph_hop_decay,
                now=now,
                cfg=self.settings.dynamics.lifecycle,
            )
            graph.refine(walked, seeds, iterations=cfg.pagerank_iterations, damping=cfg.pagerank_damping)
            for c in cands:
                if c.id in walked.seed_links:
                    c.channels["graph"] = {**walked.seed_links[c.id], "rank": None, "seed": True}
            ranked = sorted(walked.reached.items(), key=lambda kv: -float(kv[1]["score"]))
            for position, (mid, info) in enumerate(ranked, start=1):
                info = {**info, "rank": position, "pruned_edges": walked.pruned}
                if mid in have:
                    next(c for c in cands if c.id == mid).channels["graph"] = info
                elif len(added) < cfg.graph_max_added:
                    added.append(PoolEntry(mid, float(info["score"]) * top, "graph", {"graph": info}))
                    have.add(mid)
        if cfg.graph and strat.entity_hub and entities:
            added.extend(self._hub(flt, entities, have, top))
        return cands + added

    def _hub(self, flt: MemoryFilter, entities: Sequence[str], have: set[str], top: float) -> list[PoolEntry]:
        cfg = self.settings.read
        out: list[PoolEntry] = []
        for name, ids in graph.entity_hub(self.store, flt, entities, limit=cfg.entity_hub_limit).items():
            for position, mid in enumerate(ids, start=1):
                if mid in have:
                    continue
                have.add(mid)
                score = top * (cfg.rrf_k + 1) / (cfg.rrf_k + position) * cfg.graph_hop_decay
                out.append(PoolEntry(mid, score, "entity_hub", {"entity_hub": {"rank": position, "entity": name}}))
        return out

    # run ---------------------------------------------------------------------------------
    def run(self, req: Request, *, now: datetime, ready: Callable[[], None] | None = None) -> Outcome:
        """The ranked hits of ``req``. ``ready`` runs once the query's embedding has started in the
        worker thread, before the first store read (the caller's pending writes go there)."""
        if self.settings.read.gate:
            decision = trivial.check(req.query)
            if decision.skip:
                return Outcome([], {"gate": decision.reason}, gated=True)
        pool = self._gather(req, self.route(req.query), now, ready)
        self._screen(pool, req, now)
        query_info = self._query_info(req, pool.plan, pool.entities, pool.windows)
        if pool.follow:
            query_info["consolidation"] = {"cold_searched": pool.cold, "summaries_followed": pool.followed}
        if not [c for c in pool.cands if c.id not in pool.proxies]:
            return Outcome([], query_info)
        hits, sims = self._rank(pool, req, now)
        return Outcome(hits, query_info, similarities=sims)

    def _gather(self, req: Request, routed: Routed, now: datetime, ready: Callable[[], None] | None) -> _Pool:
        """The candidate pool: the full-text searches run while the query is embedded, then the vector
        searches, their fusion, the graph expansion and (when the hot store's matches call for it) the cold
        store."""
        cfg = self.settings.read
        strat = routed[0].strategy
        flt = filters.widen(
            req.flt, mode=req.mode, as_of=req.as_of, deep=req.deep, include_superseded=strat.include_superseded
        )
        # current version first: superseded memories are searched too, so that a question worded like the old
        # statement finds its successor ("Which marathon?" → "… signed up for the Chicago one instead")
        search = flt
        if self._current_first(req) and flt.statuses == filters.DEFAULT_STATUSES:
            search = dataclasses.replace(flt, statuses=frozenset({Status.ACTIVE, Status.SUPERSEDED}))
        size = max(cfg.candidate_pool, strat.limit * cfg.overfetch, req.k)
        planned = self.plan_async(req.query, routed)
        if ready is not None:
            ready()
        sparse = [hybrid.text_channel(self.store, search, text=sub, pool=size) for sub in routed[1]]
        follow = not consolidated.reaches_cold(flt)
        # the full-text searches need no query vector: the cold store's too runs while the query is embedded
        cold_flt = consolidated.cold_filter(flt)
        cold_sparse = (
            [hybrid.text_channel(self.store, cold_flt, text=sub, pool=size) for sub in routed[1]]
            if follow and cfg.cold_search in ("always", "merged")
            else None
        )
        entities = graph.query_entities(req.query)
        windows = tuple(when.query_windows(req.query, now)) if cfg.time_anchor else ()
        # the full-text matches' memories are read while the query is still being embedded (most of the pool
        # is among them); only the memories the vector search and the graph add are read afterwards
        early = self._read_ahead([h.id for hits, _ in sparse for h in hits], planned.done)
        plan = planned()
        if cold_sparse is not None and cfg.cold_search == "merged":
            cands = self.expand(
                self._merged(plan, (search, cold_flt), size, (sparse, cold_sparse)), plan, flt, now, entities
            )
            return _Pool(plan, flt, search, cands, list(entities), windows, follow, True, early)
        cands = self.expand(self.candidates(plan, search, pool=size, sparse=sparse), plan, flt, now, entities)
        weak = cfg.cold_search == "when_weak" and consolidated.weak(
            cands, cfg.for_profile("cold_weak_below", self.profile)
        )
        cold = follow and (cfg.cold_search == "always" or weak)
        if cold:
            found = self._fused(plan, cold_flt, size, cold_sparse)[0]
            cands = consolidated.merged(cands, consolidated.admitted(found, "cold", consolidated.found_ids(cands)))
        return _Pool(plan, flt, search, cands, list(entities), windows, follow, cold, early)

    def _merged(
        self, plan: QueryPlan, scopes: tuple[MemoryFilter, MemoryFilter], size: int, sparse: tuple[Sparse, Sparse]
    ) -> list[PoolEntry]:
        """The hot and the cold store searched as one pool (``read.cold_search = "merged"``); the entries only
        the cold store's searches found are marked as found there."""
        cands, _, (_, cold) = self._over(scopes, plan, size, sparse)
        rank = 0
        for c in cands:
            if c.id in cold:
                rank += 1
                c.stage = "cold"
                c.channels["cold"] = {"rank": rank}
        return cands

    def _read_ahead(self, ids: Sequence[str], done: Callable[[], bool]) -> dict[str, MemoryRecord]:
        """The memories of ``ids``, read in small batches until the query's embedding is there: the rest of the
        search waits for the embedding, so reading on past it would only delay the search (each batch hands the
        interpreter lock to the embedding's worker while the store reads)."""
        out: dict[str, MemoryRecord] = {}
        todo = list(dict.fromkeys(ids))
        for start in range(0, len(todo), _READ_AHEAD_BATCH):
            if done():
                break
            out.update(self.store.get(todo[start : start + _READ_AHEAD_BATCH]))
        return out

    def _screen(self, pool: _Pool, req: Request, now: datetime) -> None:
        """Fetch the pool's memories and keep those the search may return: valid for the query mode, not
        filtered as stale; superseded memories found only through the widened search become proxies of their
        current version; the summaries' members and the successors of superseded memories join."""
        cfg = self.settings.read
        include = pool.plan.route.strategy.include_superseded
        records = _pool_records(self.store, [c.id for c in pool.cands], pool.records)
        if pool.cold:
            consolidated.check_cold(self.store, pool.cands, records)

        def admissible(c: PoolEntry) -> bool:
            return self._admissible(records[c.id], c, pool.flt, req, now, include)

        proxies = versions.proxies(self.store, pool.cands, records, pool.search is not pool.flt, admissible)
        held = [c for c in pool.cands if c.id in proxies]
        cands = [c for c in pool.cands if c.id in records and c.id not in proxies and admissible(c)]
        if cfg.filter_stale:  # the lifecycle design's lifecycleFilterStaleEnabled

            def stale(c: PoolEntry) -> bool:
                rec = records.get(c.id)
                return rec is not None and filtered_as_stale(
                    lifecycle_state=rec.lifecycle_state, heat_score=rec.heat_score
                )

            cands = [c for c in cands if not stale(c)]
            held = [c for c in held if not stale(c)]
        if pool.follow and cfg.follow_summaries:
            pool.followed = consolidated.follow_summaries(
                self.store,
                cands,
                records,
                pool.flt,
                now,
                best=cfg.summaries_followed,
                search=lambda flt, size: self._fused(pool.plan, flt, size)[0],
            )
        have = {c.id for c in cands}
        cands += [c for c in held if c.id not in have]
        proxies -= have  # a member its summary brought back is itself, not a proxy
        if self._current_first(req):
            cands += versions.successors(self.store, cands, records, pool.flt)
        added, pool.anchor_of = versions.anchors(self.store, cands, records, pool.flt)
        cands += added
        pool.cands, pool.records, pool.proxies = cands, records, proxies

    def _current_first(self, req: Request) -> bool:
        return versions.applies(self.settings, query=req.query, mode=req.mode, as_of=req.as_of)

    def _admissible(
        self,
        rec: MemoryRecord,
        cand: PoolEntry,
        flt: MemoryFilter,
        req: Request,
        now: datetime,
        include_superseded: bool,
    ) -> bool:
        if cand.stage in ("cold", "summary"):  # found through a scope-filtered search and checked above
            return filters.currently_valid(rec, now)
        if cand.stage != "hybrid" and not filters.matches(rec, flt):
            return False
        if req.mode == "timeline" or req.as_of is not None or req.deep or include_superseded:
            return True
        return filters.currently_valid(rec, now)

    def _query_info(
        self, req: Request, plan: QueryPlan, entities: Sequence[str], windows: Sequence[when.Window]
    ) -> dict[str, Any]:
        return {
            "intent": plan.route.intent,
            "matched": plan.route.matched,
            "subqueries": plan.subqueries,
            "hyde": plan.hyde,
            "entities": list(entities),
            "mode": req.mode,
            "time": [{"text": w.text, "start": w.start.isoformat(), "end": w.end.isoformat()} for w in windows],
            "as_of": req.as_of.isoformat() if req.as_of else None,
            "deep": req.deep,
            "profile": self.profile,
        }

    def _score(
        self, pool: _Pool, ctx: scoring.QueryContext
    ) -> tuple[F32, np.ndarray, dict[str, scoring.Inputs], list[rank.Scored]]:
        """The stored vectors, similarities, score inputs and composite scores of the whole pool (each
        explanation is written only for a memory that is returned)."""
        cfg, cands, records, plan = self.settings.read, pool.cands, pool.records, pool.plan
        vecs = rank.matrix([records[c.id] for c in cands], plan.raw.shape[1])
        sims = rank.similarities(plan, vecs, [records[c.id] for c in cands], self.profile)
        inputs = rank.inputs(
            self.store,
            self.settings,
            self.profile,
            cands,
            records,
            sims,
            ctx,
            text_ok=rank.text_ok(cands),
            queries=plan.subqueries,
        )
        dyn = self.settings.dynamics
        scored: list[rank.Scored] = [
            (scoring.score(records[c.id], inputs[c.id], ctx, cfg, dyn, explain=False)[0], {})
            if cfg.scoring
            else (c.rrf, {})
            for c in cands
        ]
        return vecs, sims, inputs, scored

    def _neighbours(self, pool: _Pool, scored: Sequence[rank.Scored], now: datetime) -> neighbours.Windows:
        """The session neighbours of the best-scored candidates (read.neighbour_seeds), joined to the pool."""
        cfg = self.settings.read
        if cfg.neighbour_seeds <= 0 or cfg.neighbour_width <= 0 or not cfg.neighbour_pull:
            return {}
        best = sorted(range(len(scored)), key=lambda i: (-scored[i][0], pool.cands[i].id))
        seeds = [pool.records[pool.cands[i].id] for i in best if pool.cands[i].id not in pool.proxies]
        return neighbours.gather(
            self.store,
            seeds[: cfg.neighbour_seeds],
            pool.cands,
            pool.records,
            pool.flt,
            now,
            width=cfg.neighbour_width,
        )

    def _rank(self, pool: _Pool, req: Request, now: datetime) -> tuple[list[Hit], dict[str, float]]:
        """The whole pool scored and ordered (MMR, consolidation members, current version first), the hot
        tier merged into it, and only then the first k taken: the first n results do not depend on how many
        were asked for (merging the hot tier only moves results down)."""
        cfg = self.settings.read
        plan = pool.plan
        ctx = rank.context(
            cfg,
            plan.route,
            query=req.query,
            session_id=req.session_id,
            now=now,
            entities=pool.entities,
            windows=pool.windows,
        )
        dyn = self.settings.dynamics
        vecs, sims, inputs, scored = self._score(pool, ctx)
        wins = self._neighbours(pool, scored, now)
        if len(pool.cands) > len(scored):
            vecs, sims, inputs, scored = self._score(pool, ctx)  # the pool grew: pool-wide terms change
        cands, records = pool.cands, pool.records
        if pool.proxies:
            cands, scored, vecs, sims = versions.through_proxies(cands, scored, vecs, sims, records, pool.proxies)
        rose = neighbours.pulled([c.id for c in cands], [s for s, _ in scored], wins, cfg.neighbour_pull)
        for i, (new, seed, offset) in rose.items():
            note = {"seed": seed, "offset": offset, "own_score": round(scored[i][0], 6)}
            scored[i] = (new, {**scored[i][1], "neighbour_of": note})
        order = rank.select(cfg, cands, scored, vecs, len(cands))
        order = consolidated.members_take_slots(order, [c.id for c in cands], records)
        if self._current_first(req):
            links = versions.possible_updates(self.store, [cands[i].id for i, _ in order[: cfg.update_check_top]])
            order = versions.first(
                self.settings, self.profile, order, cands, records, vecs, [s for s, _ in scored], links
            )
        order = versions.anchors_first(order, cands, pool.anchor_of)

        def explained(i: int) -> rank.Scored:
            total, extra = scored[i]
            if not cfg.scoring:
                return total, extra
            _, terms = scoring.score(records[cands[i].id], inputs[cands[i].id], ctx, cfg, dyn)
            return total, {**terms, **extra}

        hits = [
            rank.hit(cfg.rrf_k, plan.route, cands[i], records[cands[i].id], explained(i), mmr)
            for i, mmr in order[: req.k]
        ]
        sim_by_id = {c.id: float(s) for c, s in zip(cands, sims, strict=True)}
        if cfg.hot_tier:
            hits = rank.merge_hot(
                self.hot, self.store, self.settings, self.profile, hits, flt=pool.flt, plan=plan, ctx=ctx, now=now
            )
        hits = hits[: req.k]
        rank.explain_order(hits)
        if req.mode == "timeline":
            hits.sort(key=lambda h: (h.memory.valid_from or h.memory.created_at, h.memory.id))
        for h in hits:
            sim_by_id.setdefault(h.memory.id, float(h.explain.get("terms", {}).get("similarity", 0.0)))
        return hits, sim_by_id


__all__ = ["Outcome", "ReadPipeline", "Request"]
