"""The read path, composed (the retrieval design's order; every stage switchable in ``settings.read``):

gate → intent router → decomposition → HyDE (one embed call for all texts, in a worker thread
while the full-text searches run) → vector search per sub-query → weighted RRF (K = 60) → graph expansion + entity
hub → bulk fetch → bitemporal check → composite scoring (relevance — the hybrid similarity with an
absolute lexical score, entity and time boosts — plus a bounded prior: ACT-R, importance, episode context,
penalties) → MMR (λ = 0.7) over the whole pool → current version first → hot-tier merge → top-k.

The candidate pool never depends on ``k`` (``read.candidate_pool``) and the whole pool is ordered
before the first ``k`` are taken, so the first n results of ``search(k=n)`` are those of
``search(k=50)``. Current version first (``read.current_first``, current mode only): a superseded
memory in the pool (the temporal intent includes them) is placed right after the memory that replaced
it, which is fetched when the search did not find it; and of two candidates where the newer updates
the older (:func:`reverie.text.updates.judge`), the newer takes the older's place and the older
follows it. Both are marked ``superseded`` in the explanation, with the reason.

Store round trips per search: two per sub-query, one ``get`` for the whole pool, one
``relations`` per graph hop, one ``coactivations``, one ``text_search`` per entity-hub name, and
the hot tier at most once per five minutes. Each hit's ``explain`` names the stage that admitted
it, the channels with their ranks, every score term (and the cosine and lexical parts of the
similarity), boost and multiplier, and its MMR step.
"""

from __future__ import annotations

import dataclasses
import itertools
import os
import re
import threading
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import numpy as np
import numpy.typing as npt

from reverie.config import Settings
from reverie.dynamics.lifecycle import filtered_as_stale
from reverie.embed.base import Embedder
from reverie.embed.quantize import query_shrink
from reverie.model import MemoryRecord, Status
from reverie.read import consolidated, filters, gate, graph, hybrid, hyde, intent, scoring, when
from reverie.read.decompose import decompose
from reverie.read.hot import HotTier
from reverie.read.mmr import mmr_select
from reverie.results import Hit
from reverie.store.base import MemoryFilter, ScoredId, Store

F32 = npt.NDArray[np.float32]


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
class _Plan:
    route: intent.Route
    subqueries: list[str]
    raw: F32  # one raw query vector per sub-query
    search: F32  # one search vector (HyDE centroid) per sub-query
    hyde: dict[str, Any]


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
    def route(self, query: str) -> tuple[intent.Route, list[str]]:
        """Intent and sub-queries (no embedding yet)."""
        cfg = self.settings.read
        rt = self.router.route(query)
        subs = decompose(query, max_parts=cfg.max_subqueries) if cfg.decompose else [query]
        return rt, subs

    def plan(self, query: str, routed: tuple[intent.Route, list[str]] | None = None) -> _Plan:
        """Intent, sub-queries and their vectors (HyDE variants embedded in the same call)."""
        cfg = self.settings.read
        rt, subs = routed if routed is not None else self.route(query)
        texts: list[str] = []
        spans: list[tuple[int, int]] = []
        hyde_info: dict[str, Any] = {}
        for sub in subs:
            h_intent, docs = hyde.variants(sub, count=cfg.hyde_variants) if cfg.hyde else ("off", [])
            spans.append((len(texts), len(docs)))
            texts.extend([sub, *docs])
            hyde_info[sub] = {"intent": h_intent, "variants": docs}
        vecs = np.asarray(self.embedder.embed(texts), dtype=np.float32)
        raw = np.stack([vecs[start] for start, _ in spans])
        search = np.stack(
            [hyde.centroid(vecs[s], vecs[s + 1 : s + 1 + n], query_weight=cfg.hyde_query_weight) for s, n in spans]
        )
        return _Plan(rt, subs, raw, search, hyde_info)

    def plan_async(self, query: str, routed: tuple[intent.Route, list[str]]) -> Callable[[], _Plan]:
        """:meth:`plan`, started now; the returned callable waits for it. With
        ``read.overlap_embedding`` the query (and its HyDE variants) is embedded in a worker thread
        while the caller runs the full-text searches, which need no query vector. The worker never
        touches the store, so a caller holding a store transaction cannot deadlock it."""
        if not self.settings.read.overlap_embedding:
            done = self.plan(query, routed)
            return lambda: done
        started = threading.Event()

        def task() -> _Plan:
            started.set()
            return self.plan(query, routed)

        future = _executor().submit(task)
        # the worker takes the interpreter lock first: it tokenises and enters the model, which runs without
        # the lock, before the caller's Python work (access updates, full-text searches) goes on; otherwise
        # the worker can wait out the interpreter's switch interval (5 ms) before the model starts
        started.wait(0.05)
        return future.result

    def candidates(
        self,
        plan: _Plan,
        flt: MemoryFilter,
        *,
        pool: int,
        sparse: Sequence[tuple[list[ScoredId], str | None]] | None = None,
    ) -> list[hybrid.Candidate]:
        cfg = self.settings.read
        weights = {"vector": plan.route.strategy.vector_weight, "text": plan.route.strategy.text_weight}
        results = [
            hybrid.run_channels(
                self.store,
                flt,
                text=sub,
                vector=plan.search[i],
                pool=pool,
                sparse=sparse[i] if sparse is not None else None,
            )
            for i, sub in enumerate(plan.subqueries)
        ]
        cands = hybrid.fuse_channels(results, weights=weights, k=cfg.rrf_k)[:pool]
        errors = [r.text_error for r in results if r.text_error]
        if errors:
            for c in cands:
                c.channels.setdefault("text", {"rank": None, "fallback": errors[0]})
        return cands

    def expand(
        self, cands: list[hybrid.Candidate], plan: _Plan, flt: MemoryFilter, now: datetime, entities: Sequence[str]
    ) -> list[hybrid.Candidate]:
        """Graph walk from the best candidates and the entity hub; new memories join the pool."""
        cfg = self.settings.read
        strat = plan.route.strategy
        have = {c.id for c in cands}
        added: list[hybrid.Candidate] = []
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
            for rank, (mid, info) in enumerate(ranked, start=1):
                info = {**info, "rank": rank, "pruned_edges": walked.pruned}
                if mid in have:
                    next(c for c in cands if c.id == mid).channels["graph"] = info
                elif len(added) < cfg.graph_max_added:
                    added.append(hybrid.Candidate(mid, float(info["score"]) * top, "graph", {"graph": info}))
                    have.add(mid)
        if cfg.graph and strat.entity_hub and entities:
            added.extend(self._hub(flt, entities, have, top))
        return cands + added

    def _hub(self, flt: MemoryFilter, entities: Sequence[str], have: set[str], top: float) -> list[hybrid.Candidate]:
        cfg = self.settings.read
        out: list[hybrid.Candidate] = []
        for name, ids in graph.entity_hub(self.store, flt, entities, limit=cfg.entity_hub_limit).items():
            for rank, mid in enumerate(ids, start=1):
                if mid in have:
                    continue
                have.add(mid)
                score = top * (cfg.rrf_k + 1) / (cfg.rrf_k + rank) * cfg.graph_hop_decay
                out.append(hybrid.Candidate(mid, score, "entity_hub", {"entity_hub": {"rank": rank, "entity": name}}))
        return out

    # run ---------------------------------------------------------------------------------
    def run(self, req: Request, *, now: datetime, ready: Callable[[], None] | None = None) -> Outcome:
        """The ranked hits of ``req``. ``ready`` runs once the query's embedding has started in the
        worker thread, before the first store read (the caller's pending writes go there)."""
        cfg = self.settings.read
        if cfg.gate:
            decision = gate.check(req.query)
            if decision.skip:
                return Outcome([], {"gate": decision.reason}, gated=True)
        routed = self.route(req.query)
        strat = routed[0].strategy
        flt = filters.widen(
            req.flt, mode=req.mode, as_of=req.as_of, deep=req.deep, include_superseded=strat.include_superseded
        )
        current = self._current_first(req)
        # current version first: superseded memories are searched too, so that a question worded like the old
        # statement finds its successor ("Which marathon?" → "… signed up for the Chicago one instead")
        search = flt
        if current and flt.statuses == filters.DEFAULT_STATUSES:
            search = dataclasses.replace(flt, statuses=frozenset({Status.ACTIVE, Status.SUPERSEDED}))
        pool = max(cfg.candidate_pool, strat.limit * cfg.overfetch, req.k)
        planned = self.plan_async(req.query, routed)
        if ready is not None:
            ready()
        sparse = [hybrid.text_channel(self.store, search, text=sub, pool=pool) for sub in routed[1]]
        follow = not consolidated.reaches_cold(flt)
        # the full-text searches need no query vector: the cold store's too runs while the query is embedded
        cold_sparse = (
            [hybrid.text_channel(self.store, consolidated.cold_filter(flt), text=sub, pool=pool) for sub in routed[1]]
            if follow and cfg.cold_search == "always"
            else None
        )
        entities = graph.query_entities(req.query)
        windows = tuple(when.query_windows(req.query, now)) if cfg.time_anchor else ()
        plan = planned()
        cands = self.expand(self.candidates(plan, search, pool=pool, sparse=sparse), plan, flt, now, entities)
        cold = follow and (cfg.cold_search == "always" or (cfg.cold_search == "when_weak" and self._weak(cands)))
        if cold:
            cands = _merged(
                cands,
                self._channels(plan, consolidated.cold_filter(flt), pool, "cold", _found(cands), sparse=cold_sparse),
            )
        records = self.store.get([c.id for c in cands])
        if cold:
            self._check_cold(cands, records)
        proxies = self._proxies(
            cands,
            records,
            search is not flt,
            lambda c: self._admissible(records[c.id], c, flt, req, now, strat.include_superseded),
        )
        held = [c for c in cands if c.id in proxies]
        cands = [
            c
            for c in cands
            if c.id in records
            and c.id not in proxies
            and self._admissible(records[c.id], c, flt, req, now, strat.include_superseded)
        ]
        if cfg.filter_stale:  # the lifecycle design's lifecycleFilterStaleEnabled

            def stale(c: Any) -> bool:
                rec = records.get(c.id)
                return rec is not None and filtered_as_stale(
                    lifecycle_state=rec.lifecycle_state, heat_score=rec.heat_score
                )

            cands = [c for c in cands if not stale(c)]
            held = [c for c in held if not stale(c)]
        followed = self._follow_summaries(cands, records, plan, flt, now) if follow and cfg.follow_summaries else 0
        have = {c.id for c in cands}
        cands += [c for c in held if c.id not in have]
        proxies -= have  # a member its summary brought back is itself, not a proxy
        if current:
            cands += self._successors(cands, records, flt, now)
        query_info = self._query_info(req, plan, entities, windows)
        if follow:
            query_info["consolidation"] = {"cold_searched": cold, "summaries_followed": followed}
        if not [c for c in cands if c.id not in proxies]:
            return Outcome([], query_info)
        hits, sims = self._rank(
            cands, records, plan, req, flt, now, entities, windows, text_ok=plan_text_ok(cands), proxies=proxies
        )
        return Outcome(hits, query_info, similarities=sims)

    def _current_first(self, req: Request) -> bool:
        """Current version first: in the current mode, for a question about now — one that asks about
        the past ("When did Maya live in Berlin?") wants the superseded memory itself."""
        return (
            self.settings.read.current_first
            and req.mode == "current"
            and req.as_of is None
            and not asks_about_past(req.query)
        )

    def _proxies(
        self,
        cands: Sequence[hybrid.Candidate],
        records: dict[str, MemoryRecord],
        widened: bool,
        admissible: Callable[[hybrid.Candidate], bool],
    ) -> set[str]:
        """Candidates superseded by a newer fact, found by the current-version search (``widened``): they
        hand their score to what replaced them. A member held by its consolidation summary is no such
        memory (recall through consolidation brings it back itself)."""
        if not widened:
            return set()
        old = [c for c in cands if c.id in records and records[c.id].status is Status.SUPERSEDED and not admissible(c)]
        wanted = [records[c.id].superseded_by for c in old if records[c.id].superseded_by not in records]
        parents = {**records, **(self.store.get([w for w in wanted if w]) if wanted else {})}
        out: set[str] = set()
        for c in old:
            parent = parents.get(records[c.id].superseded_by or "")
            if parent is None or c.id not in consolidated.members_of(parent):
                out.add(c.id)
        return out

    def _successors(
        self, cands: list[hybrid.Candidate], records: dict[str, MemoryRecord], flt: MemoryFilter, now: datetime
    ) -> list[hybrid.Candidate]:
        """The memories that replaced the superseded candidates, when the search did not find them (the
        current version of what a superseded memory said), following a chain of at most three updates."""
        have = {c.id for c in cands}
        added: list[hybrid.Candidate] = []
        wanted = {
            records[c.id].superseded_by: c
            for c in cands
            if records[c.id].status is Status.SUPERSEDED and records[c.id].superseded_by
        }
        for _ in range(3):
            missing = {mid: c for mid, c in wanted.items() if mid and mid not in have}
            if not missing:
                break
            found = self.store.get(list(missing))
            wanted = {}
            for mid, rec in found.items():
                origin = missing[mid]
                if not filters.matches(
                    dataclasses.replace(rec, status=Status.ACTIVE), flt
                ) or origin.id in consolidated.members_of(rec):
                    continue  # out of scope, or the consolidation summary holding it (not a newer fact)
                records[mid] = rec
                have.add(mid)
                if rec.status is Status.SUPERSEDED and rec.superseded_by:
                    wanted[rec.superseded_by] = origin
                if rec.status is Status.ACTIVE or rec.superseded_by:
                    added.append(
                        hybrid.Candidate(mid, origin.rrf, "successor", {"successor": {"of": origin.id, "rank": None}})
                    )
        return added

    # recall through consolidation (read.consolidated) -----------------------------------------
    def _weak(self, cands: Sequence[hybrid.Candidate]) -> bool:
        """Whether the hot store's best vector match is below ``read.cold_weak_below``."""
        floor = self.settings.read.for_profile("cold_weak_below", self.profile)
        best = max((float(c.channels["vector"]["similarity"]) for c in cands if "vector" in c.channels), default=-1.0)
        return best < floor

    def _channels(
        self,
        plan: _Plan,
        flt: MemoryFilter,
        pool: int,
        stage: str,
        have: set[str],
        info: dict[str, dict[str, Any]] | None = None,
        sparse: Sequence[tuple[list[ScoredId], str | None]] | None = None,
    ) -> list[hybrid.Candidate]:
        """Both channels over ``flt`` for every sub-query, fused as the main search is; the new
        candidates are marked with the ``stage`` that found them (and ``info`` per id). ``sparse``: the
        full-text results per sub-query, when already run."""
        cfg = self.settings.read
        weights = {"vector": plan.route.strategy.vector_weight, "text": plan.route.strategy.text_weight}
        results = [
            hybrid.run_channels(
                self.store,
                flt,
                text=sub,
                vector=plan.search[i],
                pool=pool,
                sparse=sparse[i] if sparse is not None else None,
            )
            for i, sub in enumerate(plan.subqueries)
        ]
        found = [c for c in hybrid.fuse_channels(results, weights=weights, k=cfg.rrf_k)[:pool] if c.id not in have]
        for rank, c in enumerate(found, start=1):
            c.stage = stage
            c.channels[stage] = {"rank": rank, **(info or {}).get(c.id, {})}
        return found

    def _check_cold(self, cands: list[hybrid.Candidate], records: dict[str, MemoryRecord]) -> None:
        """Drop cold-store candidates that are no longer true (superseded by a newer fact, not by the
        consolidation summary that holds them); reads the summaries they name in one call."""
        cold = [c.id for c in cands if c.stage == "cold" and c.id in records]
        wanted = {records[i].superseded_by for i in cold if records[i].status is Status.SUPERSEDED}
        wanted.discard(None)
        parents = dict(records)
        missing = [i for i in wanted if i is not None and i not in parents]
        if missing:
            parents.update(self.store.get(missing))
        by_id = {c.id: c for c in cands}
        for mid in cold:
            rec = records[mid]
            if not consolidated.recallable(rec, parents):
                del records[mid]
            elif rec.status is Status.SUPERSEDED:  # an original held by this summary
                by_id[mid].channels["cold"]["summary"] = rec.superseded_by

    def _follow_summaries(
        self,
        cands: list[hybrid.Candidate],
        records: dict[str, MemoryRecord],
        plan: _Plan,
        flt: MemoryFilter,
        now: datetime,
    ) -> int:
        """Members of the consolidation summaries among the best ``read.summaries_followed`` candidates
        join the pool, scored on their own relevance; returns how many summaries were followed."""
        have = {c.id for c in cands}
        parent: dict[str, str] = {}
        best = sorted(cands, key=lambda c: (-c.rrf, c.id))[: self.settings.read.summaries_followed]
        followed = 0
        for c in best:
            members = [m for m in consolidated.members_of(records[c.id]) if m not in have and m not in parent]
            followed += bool(members)
            parent.update(dict.fromkeys(members, c.id))
        if not parent:
            return 0
        info = {mid: {"summary": sid} for mid, sid in parent.items()}
        found = self._channels(plan, consolidated.member_filter(flt, parent), len(parent), "summary", have, info)
        fetched = self.store.get([c.id for c in found])
        summaries = {sid: records[sid] for sid in set(parent.values())}
        for c in found:
            rec = fetched.get(c.id)
            if rec is not None and consolidated.recallable(rec, summaries) and filters.currently_valid(rec, now):
                records[c.id] = rec
                cands.append(c)
        return followed

    def _admissible(
        self,
        rec: MemoryRecord,
        cand: hybrid.Candidate,
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
        self, req: Request, plan: _Plan, entities: Sequence[str], windows: Sequence[when.Window]
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

    def _rank(
        self,
        cands: list[hybrid.Candidate],
        records: dict[str, MemoryRecord],
        plan: _Plan,
        req: Request,
        flt: MemoryFilter,
        now: datetime,
        entities: Sequence[str],
        windows: Sequence[when.Window] = (),
        text_ok: bool = True,
        proxies: set[str] | frozenset[str] = frozenset(),
    ) -> tuple[list[Hit], dict[str, float]]:
        cfg = self.settings.read
        vecs = _matrix([records[c.id] for c in cands], plan.raw.shape[1])
        sims = (vecs @ plan.raw.T).max(axis=1) if len(vecs) else np.zeros(0)
        # a quantised (cold) memory's dequantised vector is shrunk towards noise: cos(q, x̂) ≈ shrink·cos(q, x)
        sims = (
            sims
            / np.asarray(
                [query_shrink(self.profile, records[c.id].embedding_precision) for c in cands], dtype=np.float32
            ).reshape(sims.shape)
            if len(vecs)
            else sims
        )
        ctx = self._context(req, plan, now, entities, windows)
        inputs = self._inputs(
            cands, records, sims, ctx, text_ok=text_ok, subqueries=len(plan.subqueries), queries=plan.subqueries
        )
        # the scores of the whole pool; each explanation is written only for a memory that is returned
        scored: list[tuple[float, dict[str, Any]]] = [
            (scoring.score(records[c.id], inputs[c.id], ctx, cfg, self.settings.dynamics, explain=False)[0], {})
            if cfg.scoring
            else (c.rrf, {})
            for c in cands
        ]
        if proxies:
            cands, scored, vecs, sims = _through_proxies(cands, scored, vecs, sims, records, proxies)
        order = self._select(cands, scored, vecs, len(cands))
        order = _members_take_slots(order, [c.id for c in cands], records)
        if self._current_first(req):
            order = self._current_version_first(order, cands, records, vecs, [sc for sc, _ in scored])

        # the whole pool is ordered, the hot tier merged into it, and only then the first k taken: the
        # first n results do not depend on how many were asked for
        # merging the hot tier only moves results down: the first k of the order are all it can show
        def explained(i: int) -> tuple[float, dict[str, Any]]:
            total, extra = scored[i]
            if not cfg.scoring:
                return total, extra
            _, terms = scoring.score(records[cands[i].id], inputs[cands[i].id], ctx, cfg, self.settings.dynamics)
            return total, {**terms, **extra}

        hits = [self._hit(cands[i], records[cands[i].id], explained(i), mmr, plan) for i, mmr in order[: req.k]]
        sim_by_id = {c.id: float(s) for c, s in zip(cands, sims, strict=True)}
        if cfg.hot_tier:
            hits = self._merge_hot(hits, flt, plan, ctx, req, now)
        hits = hits[: req.k]
        _explain_order(hits)
        if req.mode == "timeline":
            hits.sort(key=lambda h: (h.memory.valid_from or h.memory.created_at, h.memory.id))
        for h in hits:
            sim_by_id.setdefault(h.memory.id, float(h.explain.get("terms", {}).get("similarity", 0.0)))
        return hits, sim_by_id

    def _context(
        self, req: Request, plan: _Plan, now: datetime, entities: Sequence[str], windows: Sequence[when.Window]
    ) -> scoring.QueryContext:
        cfg = self.settings.read
        episodes: frozenset[str] = frozenset()
        source = ""
        if req.session_id is not None:
            episodes, source = frozenset({req.session_id}), "session"
        elif cfg.episode_context:
            source = "inferred: best similarity in the episode / best overall"
        return scoring.QueryContext(
            plan.route.intent,
            plan.route.strategy,
            now,
            frozenset(entities),
            episodes,
            source,
            scoring.detect_mood(req.query),
            tuple(windows),
        )

    def _inputs(
        self,
        cands: list[hybrid.Candidate],
        records: dict[str, MemoryRecord],
        sims: np.ndarray,
        ctx: scoring.QueryContext,
        *,
        text_ok: bool = True,
        subqueries: int = 1,
        queries: Sequence[str] = (),
    ) -> dict[str, scoring.Inputs]:
        cfg = self.settings.read
        strat = ctx.strategy
        # largest possible RRF: rank 1 on both channels, or (several sub-queries) rank 1 in every list
        best_rrf = (subqueries if subqueries > 1 else strat.vector_weight + strat.text_weight) / (cfg.rrf_k + 1)
        rrf_norm = _rrf_scaled([c.rrf for c in cands], cfg.rrf_scale, best_rrf)
        sort_values = _sort_values([records[c.id] for c in cands], strat.sort)
        tw = strat.text_weight if text_ok and cfg.hybrid_similarity else 0.0
        lexical = (
            hybrid.lexical_scores(queries, [records[c.id].content for c in cands]) if tw > 0 else [0.0] * len(cands)
        )
        scale = cfg.cosine_scale.get(self.profile)
        calibrated = [scoring.calibrated_cosine(float(s), scale) for s in sims]
        hyb = [
            scoring.hybrid_similarity(c, lx, vector_weight=strat.vector_weight, text_weight=tw)
            for c, lx in zip(calibrated, lexical, strict=True)
        ]
        strength: dict[str, float] = {}
        if cfg.episode_context and not ctx.episodes:
            strength = scoring.episode_strengths(
                [records[c.id].session_id for c in cands], hyb, power=cfg.episode_context_power
            )
        out: dict[str, scoring.Inputs] = {}
        for c, s, cal, h, r, lx in zip(cands, sims, calibrated, hyb, rrf_norm, lexical, strict=True):
            sid = records[c.id].session_id
            out[c.id] = scoring.Inputs(
                h,
                r,
                sort_values.get(c.id, 0.0),
                cosine=float(s),
                lexical=lx,
                text_weight=tw,
                episode=strength.get(sid, 0.0) if sid is not None else 0.0,
                calibrated=cal,
            )
        if cfg.coactivation:
            self._coactivation(out)
        return out

    def _coactivation(self, inputs: dict[str, scoring.Inputs]) -> None:
        from reverie.dynamics.tagging import coactivation_bonus

        tag = self.settings.dynamics.tagging
        for pair in self.store.coactivations(list(inputs), min_weight=tag.coactivation_threshold):
            bonus = coactivation_bonus(count=pair.weight, cfg=tag)
            if bonus and pair.a_id in inputs and pair.b_id in inputs:
                for me, other in ((pair.a_id, pair.b_id), (pair.b_id, pair.a_id)):
                    inputs[me].coactivation = bonus
                    inputs[me].coactivated_with.append(other)

    def _newer_of_close_answers(
        self,
        ranked: list[tuple[int, dict[str, Any]]],
        cands: list[hybrid.Candidate],
        records: dict[str, MemoryRecord],
        vecs: F32,
        scores: Sequence[float],
        skip: set[str],
    ) -> list[tuple[int, dict[str, Any]]]:
        """Of two close answers about one thing (similar to each other from the embedder's ``change_min``,
        scores within ``read.recency_margin``), the newer comes first: for a question about now, what was
        said last is more likely what holds (read.recency_margin)."""
        cfg = self.settings.read
        if cfg.recency_margin <= 0:
            return ranked
        close = self.settings.write.gate.profile(self.profile).change_min
        top = min(len(ranked), cfg.update_check_top)
        for p in range(top):
            for q in range(p + 1, top):
                i, j = ranked[p][0], ranked[q][0]
                a, b = records[cands[i].id], records[cands[j].id]
                if a.id in skip or b.id in skip or a.status is not Status.ACTIVE or b.status is not Status.ACTIVE:
                    continue
                if (b.valid_from or b.created_at) <= (a.valid_from or a.created_at):
                    continue
                if scores[j] < scores[i] - cfg.recency_margin or float(vecs[i] @ vecs[j]) < close:
                    continue
                item = ranked.pop(q)
                ranked.insert(
                    p,
                    (
                        item[0],
                        {
                            **item[1],
                            "newer_first": {
                                "over": a.id,
                                "note": "the newer of two close answers about one thing comes first",
                            },
                        },
                    ),
                )
                break
        return ranked

    def _current_version_first(
        self,
        order: list[tuple[int, dict[str, Any]]],
        cands: list[hybrid.Candidate],
        records: dict[str, MemoryRecord],
        vecs: F32,
        scores: Sequence[float] = (),
    ) -> list[tuple[int, dict[str, Any]]]:
        """``order`` with each superseded memory right after the one that replaced it (module docs)."""
        cfg = self.settings.read
        index = {cands[i].id: pos for pos, (i, _) in enumerate(order)}
        successor: dict[str, tuple[str, str, str]] = {}  # old id -> (new id, how, reason)
        for i, _ in order:
            rec = records[cands[i].id]
            if (
                rec.status is Status.SUPERSEDED
                and rec.superseded_by in index
                and cands[i].stage not in ("cold", "summary")
            ):  # a member held by its summary is still true
                successor[rec.id] = (rec.superseded_by, "stored", "superseded when the newer memory was written")
        top = [i for i, _ in order[: cfg.update_check_top]]
        floor = self.settings.write.gate.profile(self.profile).update_candidate_min
        for a, b, verdict in _read_time_updates(top, cands, records, vecs, floor):
            old, new = cands[a].id, cands[b].id
            if old not in successor and new not in successor:
                successor[old] = (new, "read", f"the newer memory updates it: {verdict.reason}")
        ranked = self._newer_of_close_answers(list(order), cands, records, vecs, scores, set(successor))
        if not successor:
            return ranked
        for old, (new, how, reason) in successor.items():
            pos_old = next(p for p, (i, _) in enumerate(ranked) if cands[i].id == old)
            pos_new = next(p for p, (i, _) in enumerate(ranked) if cands[i].id == new)
            i_old, mmr_old = ranked[pos_old]
            mark = {**mmr_old, "superseded": {"by": new, "how": how, "reason": reason[:300]}}
            if pos_new < pos_old:
                ranked[pos_old] = (i_old, mark)
                continue
            # the newer version takes the older one's place; the older follows right after it
            i_new, mmr_new = ranked.pop(pos_new)
            ranked.pop(pos_old)
            ranked[pos_old:pos_old] = [(i_new, {**mmr_new, "current_version_of": old}), (i_old, mark)]
        return ranked

    def _select(
        self, cands: list[hybrid.Candidate], scored: list[tuple[float, dict[str, Any]]], vecs: F32, k: int
    ) -> list[tuple[int, dict[str, Any]]]:
        cfg = self.settings.read
        by_score = sorted(range(len(cands)), key=lambda i: (-scored[i][0], cands[i].id))
        if not cfg.mmr:
            return [(i, {}) for i in by_score[:k]]
        scores = [max(scored[i][0], 0.0) for i in by_score]
        picked = mmr_select(scores, vecs[by_score], k=k, lam=cfg.mmr_lambda)
        return [
            (
                by_score[j],
                {
                    "lambda": cfg.mmr_lambda,
                    "step": step,
                    "value": round(value, 6),
                    "max_similarity": round(msim, 6),
                    "score_rank": j + 1,
                },
            )
            for step, (j, value, msim) in enumerate(picked, start=1)
        ]

    def _hit(
        self,
        cand: hybrid.Candidate,
        rec: MemoryRecord,
        scored: tuple[float, dict[str, Any]],
        mmr: dict[str, Any],
        plan: _Plan,
    ) -> Hit:
        score, terms = scored
        weights = {"vector": plan.route.strategy.vector_weight, "text": plan.route.strategy.text_weight}
        explain: dict[str, Any] = {
            "stage": cand.stage,
            "intent": plan.route.intent,
            "channels": cand.channels,
            "rrf": {"k": self.settings.read.rrf_k, "score": cand.rrf, "weights": weights},
            **terms,
        }
        mmr = dict(mmr)
        for key in ("superseded", "current_version_of", "newer_first", "took_slot_of"):
            if key in mmr:
                explain[key] = mmr.pop(key)
        if rec.status is Status.SUPERSEDED and "superseded" not in explain and cand.stage not in ("cold", "summary"):
            explain["superseded"] = {
                "by": rec.superseded_by,
                "how": "stored",
                "reason": "superseded when the newer memory was written",
            }
        if mmr:
            explain["mmr"] = mmr
        explain["score"] = score
        return Hit(rec, score, explain)

    def _merge_hot(
        self, hits: list[Hit], flt: MemoryFilter, plan: _Plan, ctx: scoring.QueryContext, req: Request, now: datetime
    ) -> list[Hit]:
        cfg = self.settings.read
        floor = cfg.for_profile("hot_min_similarity", self.profile)
        have = {h.memory.id for h in hits}
        extra: list[Hit] = []
        for rec in self.hot.get(self.store, flt, now=now, cfg=cfg):
            if rec.id in have or rec.embedding is None or not filters.matches(rec, flt):
                continue
            sim = float((plan.raw @ rec.embedding).max())
            if sim < floor:
                continue
            score, terms = scoring.score(
                rec,
                scoring.Inputs(scoring.calibrated_cosine(sim, cfg.cosine_scale.get(self.profile)), 0.0, cosine=sim),
                ctx,
                cfg,
                self.settings.dynamics,
            )
            cand = hybrid.Candidate(rec.id, 0.0, "hot", {"hot": {"rank": len(extra) + 1, "similarity": round(sim, 6)}})
            extra.append(self._hit(cand, rec, (score, terms), {}, plan))
        if not extra:
            return hits
        # each hot memory goes before the first result that scores lower; the results keep their order
        # (MMR, current version first), so the first n of a longer list are the same n
        merged = list(hits)
        for h in sorted(extra, key=lambda x: -x.score):
            at = next((i for i, x in enumerate(merged) if x.score < h.score), len(merged))
            merged.insert(at, h)
        return merged


def _members_take_slots(
    order: list[tuple[int, dict[str, Any]]], ids: Sequence[str], records: Mapping[str, MemoryRecord]
) -> list[tuple[int, dict[str, Any]]]:
    """No consolidation summary appears together with one of its own members: the member is the more
    specific answer and takes the summary's slot (the best-ranked member moves up to it; one ranked
    above the summary already holds a slot, and the summary leaves). Decided over the whole ordered
    pool, so that how many results are asked for does not change which are shown."""
    position = {ids[i]: p for p, (i, _) in enumerate(order)}
    if not any(consolidated.members_of(records[ids[i]]) for i, _ in order):
        return order
    out = list(order)
    p = 0
    while p < len(out):
        i, _extra = out[p]
        members = [m for m in consolidated.members_of(records[ids[i]]) if m in position]
        present = [q for q, (j, _) in enumerate(out) if ids[j] in members]
        if not present:
            p += 1
            continue
        out.pop(p)  # the summary leaves
        below = [q - 1 for q in present if q > p]
        if below and not any(q < p for q in present):
            j, member_extra = out.pop(below[0])
            out.insert(p, (j, {**member_extra, "took_slot_of": ids[i]}))
            p += 1
    return out


def _found(cands: Sequence[hybrid.Candidate]) -> set[str]:
    """Ids the main hybrid search already admitted (the graph and the entity hub admit memories that
    the caller's filter may still reject: a cold one among them can be found again by a later stage)."""
    return {c.id for c in cands if c.stage == "hybrid"}


def _merged(cands: list[hybrid.Candidate], found: Sequence[hybrid.Candidate]) -> list[hybrid.Candidate]:
    """``cands`` plus ``found``; a memory in both keeps the later stage and every channel that found it."""
    by_id = {c.id: c for c in cands}
    out = list(cands)
    for f in found:
        old = by_id.get(f.id)
        if old is None:
            out.append(f)
            continue
        old.channels.update(f.channels)
        old.stage, old.rrf = f.stage, max(old.rrf, f.rrf)
    return out


def _matrix(records: Sequence[MemoryRecord], dim: int) -> F32:
    out = np.zeros((len(records), dim), dtype=np.float32)
    for i, rec in enumerate(records):
        if rec.embedding is not None and rec.embedding.shape == (dim,):
            out[i] = rec.embedding
    return out


_EXECUTOR: ThreadPoolExecutor | None = None
_EXECUTOR_LOCK = threading.Lock()


def _executor() -> ThreadPoolExecutor:
    """The process's worker threads for overlapped query embedding (built on first use, rebuilt in
    a forked child, whose copy would hold its parent's threads)."""
    global _EXECUTOR
    if _EXECUTOR is None:
        with _EXECUTOR_LOCK:
            if _EXECUTOR is None:
                _EXECUTOR = ThreadPoolExecutor(max_workers=4, thread_name_prefix="reverie-read")
    return _EXECUTOR


def _reset_executor() -> None:
    global _EXECUTOR
    _EXECUTOR = None


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_reset_executor)


_PAST_QUESTION = re.compile(
    r"\b(did|was|were|had|used to|before|previously|originally|at first|first time|back then|in the past|"
    r"formerly|earlier)\b",
    re.IGNORECASE,
)
_PAST_QUESTION_TR = re.compile(
    r"\b(önceden|eskiden|daha önce|ilk)\b|\w+(?:dı|di|du|dü|tı|ti|tu|tü)(?:m|n|k|nız|niz)?\s+m[ıiuü]\b|"
    r"\w+m[ıiuü]yd[ıiuü]\w*|\w+(?:dı|di|du|dü|tı|ti|tu|tü)(?:m|n|k)?\s*\?",
    re.IGNORECASE,
)


def asks_about_past(query: str) -> bool:
    """Whether ``query`` asks about how things were ("When did …", "Where did … live before?", "… taşındı
    mı?"), not about how they are now."""
    from reverie.text.updates import is_turkish

    if _PAST_QUESTION.search(query):
        return True
    return is_turkish(query) and bool(_PAST_QUESTION_TR.search(query))


def _explain_order(hits: Sequence[Hit]) -> None:
    """A result scored higher than the one above it says why it comes later."""
    for above, hit in itertools.pairwise(hits):
        if hit.score <= above.score:
            continue
        if "superseded" in hit.explain:
            why = "superseded: placed right after the memory that replaced it (current version first)"
        elif "current_version_of" in above.explain:
            why = "placed after the current version of a memory, which took that memory's place"
        elif "mmr" in hit.explain:
            why = (
                f"diversity (MMR): it is similar to a memory above it (max similarity "
                f"{hit.explain['mmr'].get('max_similarity', 0):.2f})"
            )
        elif "hot" in hit.explain.get("channels", {}):
            why = "a core memory (hot tier), placed before the first result scoring lower than it"
        else:
            why = "placed by the hot tier merge"
        hit.explain["order"] = why


def _through_proxies(
    cands: list[hybrid.Candidate],
    scored: list[tuple[float, dict[str, Any]]],
    vecs: F32,
    sims: np.ndarray,
    records: dict[str, MemoryRecord],
    proxies: set[str] | frozenset[str],
) -> tuple[list[hybrid.Candidate], list[tuple[float, dict[str, Any]]], F32, np.ndarray]:
    """Superseded memories found by the search hand their score to their current version (following the
    chain of updates) and leave the results: the question they answer is answered by what replaced them."""
    index = {c.id: i for i, c in enumerate(cands)}
    for i, c in enumerate(cands):
        if c.id not in proxies:
            continue
        head, hops = records[c.id].superseded_by, 0
        while head in index and head in proxies and hops < 5:
            head, hops = records[head].superseded_by, hops + 1
        j = index.get(head) if head else None
        if j is None or cands[j].id in proxies or scored[i][0] <= scored[j][0]:
            continue
        score, terms = scored[j]
        scored[j] = (
            scored[i][0],
            {
                **terms,
                "found_through": {
                    "id": c.id,
                    "score": round(scored[i][0], 6),
                    "own_score": round(score, 6),
                    "note": "the question matches the memory this one replaced; it answers with the current version",
                },
            },
        )
    keep = [i for i, c in enumerate(cands) if c.id not in proxies]
    return [cands[i] for i in keep], [scored[i] for i in keep], vecs[keep], sims[keep]


def _read_time_updates(
    top: Sequence[int], cands: Sequence[hybrid.Candidate], records: dict[str, MemoryRecord], vecs: F32, floor: float
) -> list[tuple[int, int, Any]]:
    """Pairs (older, newer, verdict) among the ``top`` candidates where the newer one likely updates the
    older (same speaker or none named, similar from ``floor`` — the write gate's ``update_candidate_min``
    — and the newer says that something changed: a change or correction word, a value let go, a
    negation)."""
    from reverie.text import updates as wupdates

    out: list[tuple[int, int, Any]] = []
    when = {i: records[cands[i].id].valid_from or records[cands[i].id].created_at for i in top}
    active = [i for i in top if records[cands[i].id].status is Status.ACTIVE]
    # a newer memory that says no change updates nothing: read once per memory, not once per pair
    changes = [i for i in active if wupdates.says_change(records[cands[i].id].content)]
    if not changes:
        return out
    for a in active:
        for b in changes:
            if a == b or when[b] <= when[a]:
                continue
            old, new = records[cands[a].id], records[cands[b].id]
            speaker = new.metadata.get("speaker")
            if wupdates.other_speaker(old, speaker if isinstance(speaker, str) else None):
                continue
            if float(vecs[a] @ vecs[b]) < floor:
                continue
            verdict = wupdates.judge(old.content, new.content)
            if verdict.likely:
                out.append((a, b, verdict))
    out.sort(key=lambda t: -t[2].score)
    return out


def plan_text_ok(cands: Sequence[hybrid.Candidate]) -> bool:
    """False when the full-text channel failed (its fallback is recorded on the candidates)."""
    return not any(c.channels.get("text", {}).get("fallback") for c in cands)


def _rrf_scaled(values: Sequence[float], how: str, best: float) -> list[float]:
    """The RRF scores as read.rrf_scale says: raw, over the largest possible value ``best``, or min-max."""
    if how == "raw":
        return list(values)
    if how == "possible":
        return [min(v / best, 1.0) if best > 0 else 0.0 for v in values]
    return _minmax(values)


def _minmax(values: Sequence[float]) -> list[float]:
    """Min-max scaling to [0, 1] over the pool (all 1.0 when the values are equal). RRF scores with
    K = 60 differ by a few percent between rank 1 and rank 60, so dividing by the best would make
    the 0.15 RRF term nearly constant; min-max keeps the fused order visible in the composite."""
    if not values:
        return []
    lo, hi = min(values), max(values)
    if hi - lo <= 1e-12:
        return [1.0 for _ in values]
    return [(v - lo) / (hi - lo) for v in values]


def _sort_values(records: Sequence[MemoryRecord], sort: str) -> dict[str, float]:
    """The intent's sort column scaled to [0, 1]: utility as is, valid_from as a rank (newest = 1)."""
    if sort == "utility":
        return {r.id: r.utility for r in records}
    if sort != "valid_from" or len(records) < 2:
        return {}
    ordered = sorted(records, key=lambda r: r.valid_from or r.created_at)
    return {r.id: i / (len(ordered) - 1) for i, r in enumerate(ordered)}


__all__ = ["Outcome", "ReadPipeline", "Request"]
