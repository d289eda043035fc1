"""Neighbours of the best candidates: the memories written just before and after them in the same session.

The turn that answers a question often shares few words with it: a reply ("Yes, I did!") after the turn
that names the topic, a short remark next to a strong one. The session is found, its answering turn is not.
So the best candidates by composite score (``read.neighbour_seeds``) bring the memories recorded next to
them in their session (``read.neighbour_width`` on each side) into the pool, and once the pool is scored
each neighbour's score is pulled toward its seed's (:func:`pulled`): a neighbour at distance ``d`` moves the
share ``read.neighbour_pull[d - 1]`` of the way, never down. A result that rose this way is still one memory;
its explanation names the seed (``neighbour_of``).

:func:`gather` reads the store (two ordered lists per seed, through :meth:`Store.list`, the same on every
backend); :func:`pulled` is pure.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from datetime import datetime

from reverie.model import MemoryRecord, Status, StoreTier
from reverie.read import consolidated, filters
from reverie.read.hybrid import PoolEntry
from reverie.store.base import MemoryFilter, Store

#: seed id -> [(neighbour id, offset)]: offset -1 is the memory recorded just before the seed, +1 just after
Windows = dict[str, list[tuple[str, int]]]

#: the pool stage of a memory that joined as a neighbour (its explanation's ``stage``)
STAGE = "neighbour"


def _side(store: Store, scope: MemoryFilter, seed: MemoryRecord, width: int, *, before: bool) -> list[MemoryRecord]:
    """The ``width`` memories of the seed's session recorded closest before (or after) it, nearest first."""
    if before:
        bound = seed.recorded_at if scope.recorded_before is None else min(scope.recorded_before, seed.recorded_at)
        flt = dataclasses.replace(scope, recorded_before=bound)
    else:
        flt = dataclasses.replace(scope, recorded_after=seed.recorded_at)
    rows = store.list(flt, limit=width + 1, order_by="recorded_at", descending=before)
    return [r for r in rows if r.id != seed.id][:width]


def _admissible(rec: MemoryRecord, flt: MemoryFilter, parents: Mapping[str, MemoryRecord], now: datetime) -> bool:
    """What a search of ``flt`` could return: a hot memory the filter passes, or a cold or consolidated one
    still true (:func:`consolidated.recallable`); either valid now."""
    if not filters.currently_valid(rec, now):
        return False
    if rec.store is StoreTier.HOT and filters.matches(rec, flt):
        return True
    return consolidated.recallable(rec, parents)


def gather(
    store: Store,
    seeds: Sequence[MemoryRecord],
    cands: list[PoolEntry],
    records: dict[str, MemoryRecord],
    flt: MemoryFilter,
    now: datetime,
    *,
    width: int,
) -> Windows:
    """Each seed's neighbours in its session (``width`` on each side); the admissible ones not yet in the pool
    join ``cands`` and ``records`` (stage :data:`STAGE`). Returns each seed's admissible neighbours."""
    fetched: dict[str, MemoryRecord] = {}
    raw: Windows = {}
    for seed in seeds:
        if seed.session_id is None or width <= 0:
            continue
        scope = dataclasses.replace(
            flt, session_id=seed.session_id, statuses=consolidated.RECALLABLE_STATUSES, stores=None, ids=None
        )
        win: list[tuple[str, int]] = []
        for before in (True, False):
            for d, rec in enumerate(_side(store, scope, seed, width, before=before), start=1):
                fetched[rec.id] = rec
                win.append((rec.id, -d if before else d))
        raw[seed.id] = win
    parents = dict(records)
    missing = [
        r.superseded_by
        for r in fetched.values()
        if r.status is Status.SUPERSEDED and r.superseded_by and r.superseded_by not in parents
    ]
    if missing:
        parents.update(store.get([m for m in missing if m]))
    have = {c.id for c in cands}
    ok = {mid for mid, rec in fetched.items() if mid in have or _admissible(rec, flt, parents, now)}
    for mid in sorted(ok - have):
        records[mid] = fetched[mid]
        cands.append(PoolEntry(mid, 0.0, STAGE, {STAGE: {"rank": None}}))
    return {seed: [(m, d) for m, d in win if m in ok] for seed, win in raw.items()}


def pulled(
    ids: Sequence[str], scores: Sequence[float], windows: Windows, pull: Sequence[float]
) -> dict[int, tuple[float, str, int]]:
    """New scores for the neighbours that rise: ``index -> (score, seed id, offset)``. A neighbour at distance
    ``d`` from its seed moves ``pull[d - 1]`` of the way from its own score to the seed's (beyond
    ``len(pull)``: not at all); of several seeds the one that lifts it most counts; a score never drops."""
    index = {mid: i for i, mid in enumerate(ids)}
    out: dict[int, tuple[float, str, int]] = {}
    for seed, win in windows.items():
        j = index.get(seed)
        if j is None:
            continue
        for mid, d in win:
            i = index.get(mid)
            if i is None or abs(d) > len(pull) or i == j:
                continue
            new = scores[i] + pull[abs(d) - 1] * (scores[j] - scores[i])
            if new > max(scores[i], out.get(i, (scores[i], "", 0))[0]):
                out[i] = (new, seed, d)
    return out


__all__ = ["STAGE", "Windows", "gather", "pulled"]
