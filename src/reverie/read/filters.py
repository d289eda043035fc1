"""Bitemporal query modes and deep recall as store filters, plus an
in-memory check of a record against a filter (for memories admitted by the graph, the entity
hub or the hot tier, which did not come through a filtered search).

* ``current`` (default): active memories whose validity has not ended (``valid_until`` unset or
  after now); the temporal intent also sees superseded facts (strategy table).
* ``timeline``: every version — active, superseded, expired, invalidated — chronological.
* ``as_of=t``: what was valid at ``t`` and recorded by ``t``, in any of those statuses.
* ``deep=True``: cold storage too, with the dormant, archived and superseded originals that
  the consolidation moved there.
"""

from __future__ import annotations

import dataclasses
from datetime import datetime

from reverie.model import MemoryRecord, Status, StoreTier
from reverie.store.base import MemoryFilter

MODES = ("current", "timeline")
DEFAULT_STATUSES = frozenset({Status.ACTIVE})
TIMELINE_STATUSES = frozenset({Status.ACTIVE, Status.SUPERSEDED, Status.EXPIRED, Status.INVALIDATED})
DEEP_STATUSES = frozenset({Status.ACTIVE, Status.SUPERSEDED, Status.DORMANT, Status.ARCHIVED})


def widen(
    flt: MemoryFilter, *, mode: str, as_of: datetime | None, deep: bool, include_superseded: bool
) -> MemoryFilter:
    """The store filter of a query mode. Statuses or stores the caller chose are kept as given."""
    statuses = flt.statuses
    if statuses == DEFAULT_STATUSES:
        if mode == "timeline" or as_of is not None:
            statuses = TIMELINE_STATUSES
        elif include_superseded:
            statuses = frozenset({Status.ACTIVE, Status.SUPERSEDED})
        if deep:
            statuses = (statuses or frozenset()) | DEEP_STATUSES
    stores = flt.stores
    if deep and stores == frozenset({StoreTier.HOT}):
        stores = None
    out = dataclasses.replace(flt, statuses=statuses, stores=stores)
    if as_of is not None:
        out = dataclasses.replace(out, valid_at=as_of, recorded_before=as_of)
    return out


def currently_valid(rec: MemoryRecord, now: datetime) -> bool:
    """Current state: validity not ended (``valid_until`` unset or later than now)."""
    return rec.valid_until is None or rec.valid_until > now


def _valid_at(rec: MemoryRecord, t: datetime) -> bool:
    return (rec.valid_from is None or rec.valid_from <= t) and (rec.valid_until is None or t < rec.valid_until)


def matches(rec: MemoryRecord, flt: MemoryFilter) -> bool:
    """Whether ``rec`` passes ``flt`` (the same semantics as the stores' SQL)."""
    checks = (
        flt.all_users or rec.user_id == flt.user_id,
        flt.agent_id is None or rec.agent_id == flt.agent_id,
        flt.session_id is None or rec.session_id == flt.session_id,
        flt.layers is None or rec.layer in flt.layers,
        flt.statuses is None or rec.status in flt.statuses,
        flt.stores is None or rec.store in flt.stores,
        flt.categories is None or rec.category in flt.categories,
        flt.pinned is None or rec.pinned == flt.pinned,
        flt.ids is None or rec.id in flt.ids,
        flt.valid_at is None or _valid_at(rec, flt.valid_at),
        flt.recorded_before is None or rec.recorded_at <= flt.recorded_before,
        flt.recorded_after is None or rec.recorded_at >= flt.recorded_after,
        flt.metadata is None or all(rec.metadata.get(k) == v for k, v in flt.metadata.items()),
    )
    return all(checks)


__all__ = ["DEEP_STATUSES", "MODES", "TIMELINE_STATUSES", "currently_valid", "matches", "widen"]
