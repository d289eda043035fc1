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
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from reverie.model import MemoryRecord, Status, StoreTier
from reverie.store.base import MemoryFilter

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


__all__ = [
    "META",
    "RECALLABLE_STATUSES",
    "REPLACING_KINDS",
    "cold_filter",
    "drop_covered",
    "is_summary",
    "member_filter",
    "members_of",
    "reaches_cold",
    "recallable",
]
