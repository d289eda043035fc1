"""Recall through consolidation: a summary is an index over its members, not a replacement.

When the dream cycle consolidates fading memories, the originals move to the cold store
(``superseded`` by the summary, linked to it with weight 0.8) and the summary takes their place in
the hot store. A plain search must still reach the facts they hold:

* **members of a matched summary** — when a consolidation summary (or theme) is in the candidate
  pool, its members are searched too (both channels, restricted to those ids) and compete on their
  own relevance; the members that answer the query can rank above their summary, and a summary
  whose member made it into the results gives its slot to the member (:func:`drop_covered`);
* **the cold store** — among the memories still true there (cold active, dormant, archived, and
  originals whose consolidation summary still holds them), searched with the hot store by default
  (``read.cold_search = "always"``), or only when the hot store's best cosine is below
  ``read.cold_weak_below`` (``"when_weak"``). ``deep=True`` searches everything.

Originals that were superseded by a *newer fact* (a correction, an update) are never brought back
this way: only a member whose ``superseded_by`` is the summary that holds it counts.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

from reverie.model import MemoryRecord, Status, StoreTier
from reverie.read import filters
from reverie.read.hybrid import PoolEntry
from reverie.store.base import MemoryFilter, Store

#: metadata key of memories made by consolidation (summary, theme, pattern), and the kinds that
#: replace their members (a pattern's evidence stays active)
META = "consolidation"
REPLACING_KINDS = frozenset({"summary", "theme"})
#: statuses under which a cold memory still states something true
RECALLABLE_STATUSES = frozenset({Status.ACTIVE, Status.SUPERSEDED, Status.DORMANT, Status.ARCHIVED})


def members_of(rec: MemoryRecord) -> list[str]:
    """The ids a consolidation summary or theme replaced, in member order (``[]`` for any other memory)."""
    info = rec.metadata.get(META)
    if not isinstance(info, Mapping) or info.get("kind") not in REPLACING_KINDS:
        return []
    members = info.get("members")
    return [str(m) for m in members] if isinstance(members, list) else []


def is_summary(rec: MemoryRecord) -> bool:
    return bool(members_of(rec))


#: statuses of a consolidation summary under which its members still hold (a faded summary — dormant,
#: archived — still stands for true facts; an invalidated one was undone, a superseded one replaced)
_HOLDING = frozenset({Status.ACTIVE, Status.DORMANT, Status.ARCHIVED})


def recallable(rec: MemoryRecord, summaries: Mapping[str, MemoryRecord]) -> bool:
    """Whether a cold (or consolidated) memory may be returned by a current-state search: it is still
    true — not superseded by a newer fact, not expired or invalidated. A superseded memory counts only
    when the memory that superseded it is a consolidation summary (in ``summaries``) that holds it."""
    if rec.status not in RECALLABLE_STATUSES:
        return False
    if rec.status is not Status.SUPERSEDED:
        return True
    parent = summaries.get(rec.superseded_by or "")
    return parent is not None and parent.status in _HOLDING and rec.id in members_of(parent)


def member_filter(flt: MemoryFilter, ids: Iterable[str]) -> MemoryFilter:
    """The caller's scope narrowed to ``ids``, in every store and in the recallable statuses."""
    return dataclasses.replace(flt, ids=frozenset(ids), statuses=RECALLABLE_STATUSES, stores=None)


def cold_filter(flt: MemoryFilter) -> MemoryFilter:
    """The caller's scope in the cold store, recallable statuses."""
    return dataclasses.replace(flt, statuses=RECALLABLE_STATUSES, stores=frozenset({StoreTier.COLD}))


def reaches_cold(flt: MemoryFilter) -> bool:
    """Whether ``flt`` already searches the cold store (``deep=True``, or a caller's own ``store`` filter)."""
    return flt.stores is None or StoreTier.COLD in flt.stores


def drop_covered(
    order: Sequence[tuple[int, Any]], ids: Sequence[str], records: Mapping[str, MemoryRecord], k: int
) -> list[tuple[int, Any]]:
    """The best ``k`` of ``order`` (ranked indexes into ``ids``) in which no summary appears together
    with one of its own members: the member is the more specific answer and takes the summary's slot
    (the summary's other facts stay one search away: its members are followed whenever it matches)."""
    dropped: set[int] = set()
    while True:
        top = [(i, extra) for i, extra in order if i not in dropped][:k]
        shown = {ids[i] for i, _ in top}
        covered = {i for i, _ in top if shown.intersection(members_of(records[ids[i]]))}
        if not covered:
            return top
        dropped |= covered


# the pool's side of recall through consolidation ---------------------------------------------------------
def weak(cands: Sequence[PoolEntry], floor: float) -> bool:
    """Whether the hot store's best vector match is below ``floor`` (``read.cold_weak_below``)."""
    best = max((float(c.channels["vector"]["similarity"]) for c in cands if "vector" in c.channels), default=-1.0)
    return best < floor


def admitted(
    found: Sequence[PoolEntry], stage: str, have: set[str], info: Mapping[str, dict[str, Any]] | None = None
) -> list[PoolEntry]:
    """The entries of ``found`` not in ``have``, marked with the ``stage`` that found them (and ``info`` per id)."""
    out = [c for c in found if c.id not in have]
    for rank, c in enumerate(out, start=1):
        c.stage = stage
        c.channels[stage] = {"rank": rank, **(info or {}).get(c.id, {})}
    return out


def found_ids(cands: Sequence[PoolEntry]) -> set[str]:
    """Ids the main hybrid search already admitted (the graph and the entity hub admit memories that
    the caller's filter may still reject: a cold one among them can be found again by a later stage)."""
    return {c.id for c in cands if c.stage == "hybrid"}


def merged(cands: list[PoolEntry], found: Sequence[PoolEntry]) -> list[PoolEntry]:
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


def check_cold(store: Store, cands: list[PoolEntry], records: dict[str, MemoryRecord]) -> None:
    """Drop cold-store candidates that are no longer true (superseded by a newer fact, not by the
    consolidation summary that holds them); reads the summaries they name in one call."""
    cold = [c.id for c in cands if c.stage == "cold" and c.id in records]
    wanted = {records[i].superseded_by for i in cold if records[i].status is Status.SUPERSEDED}
    wanted.discard(None)
    parents = dict(records)
    missing = [i for i in wanted if i is not None and i not in parents]
    if missing:
        parents.update(store.get(missing))
    by_id = {c.id: c for c in cands}
    for mid in cold:
        rec = records[mid]
        if not recallable(rec, parents):
            del records[mid]
        elif rec.status is Status.SUPERSEDED:  # an original held by this summary
            by_id[mid].channels["cold"]["summary"] = rec.superseded_by


def follow_summaries(
    store: Store,
    cands: list[PoolEntry],
    records: dict[str, MemoryRecord],
    flt: MemoryFilter,
    now: datetime,
    *,
    best: int,
    search: Callable[[MemoryFilter, int], list[PoolEntry]],
) -> int:
    """Members of the consolidation summaries among the ``best`` candidates (``read.summaries_followed``) join
    the pool, scored on their own relevance (``search(filter, pool)``: the fused search of the query); returns
    how many summaries were followed."""
    have = {c.id for c in cands}
    parent: dict[str, str] = {}
    followed = 0
    for c in sorted(cands, key=lambda c: (-c.rrf, c.id))[:best]:
        members = [m for m in members_of(records[c.id]) if m not in have and m not in parent]
        followed += bool(members)
        parent.update(dict.fromkeys(members, c.id))
    if not parent:
        return 0
    info = {mid: {"summary": sid} for mid, sid in parent.items()}
    found = admitted(search(member_filter(flt, parent), len(parent)), "summary", have, info)
    fetched = store.get([c.id for c in found])
    summaries = {sid: records[sid] for sid in set(parent.values())}
    for c in found:
        rec = fetched.get(c.id)
        if rec is not None and recallable(rec, summaries) and filters.currently_valid(rec, now):
            records[c.id] = rec
            cands.append(c)
    return followed


def members_take_slots(
    order: list[tuple[int, dict[str, Any]]], ids: Sequence[str], records: Mapping[str, MemoryRecord]
) -> list[tuple[int, dict[str, Any]]]:
    """No consolidation summary appears together with one of its own members: the member is the more
    specific answer and takes the summary's slot (the best-ranked member moves up to it; one ranked
    above the summary already holds a slot, and the summary leaves). Decided over the whole ordered
    pool, so that how many results are asked for does not change which are shown."""
    position = {ids[i]: p for p, (i, _) in enumerate(order)}
    if not any(members_of(records[ids[i]]) for i, _ in order):
        return order
    out = list(order)
    p = 0
    while p < len(out):
        i, _extra = out[p]
        members = {m for m in members_of(records[ids[i]]) if m in position}
        present = [q for q, (j, _) in enumerate(out) if ids[j] in members] if members else []
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


__all__ = [
    "META",
    "RECALLABLE_STATUSES",
    "REPLACING_KINDS",
    "admitted",
    "check_cold",
    "cold_filter",
    "drop_covered",
    "follow_summaries",
    "found_ids",
    "is_summary",
    "member_filter",
    "members_of",
    "members_take_slots",
    "merged",
    "reaches_cold",
    "recallable",
    "weak",
]
