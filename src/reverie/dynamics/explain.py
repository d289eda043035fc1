"""``explain_strength``: every current value of a memory with its formula and the terms behind it.

Each entry is ``{"value": …, "formula": "…", "terms": {…}}``; the whole result is JSON-serialisable
(``json.dumps(..., allow_nan=False)``: ∞ is written as the string ``"inf"``, datetimes as ISO text). Every
formula string is written with the numbers of the settings in force (a tuned decay rate or weight shows as
tuned), so formula, terms and value agree. One function per quantity (:mod:`reverie.dynamics.explain_decay`:
how a memory fades; :mod:`reverie.dynamics.explain_scores`: its scores); :func:`explain_strength` composes them.

Clocks used (documented choices):
* "since the last access" = ``last_accessed_at`` or, never accessed, ``created_at`` (the encoding
  counts as the first review) — FSRS R, retrieval strength, retention and fading retention, ACT-R
  single form, category decay, the lifecycle policy's recency/stale access;
* energy decays from ``energy_updated_at`` (or ``created_at``), utility drifts from
  ``utility_updated_at`` (or ``created_at``); the lifecycle policy's age and archival age from
  ``created_at``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any

from reverie.config.dynamics import DynamicsSettings
from reverie.dynamics.explain_decay import energy_entries, fsrs_entries, retention_entries, strength_entries
from reverie.dynamics.explain_scores import (
    actr_entries,
    importance_entries,
    lifecycle_entries,
    promotion_entries,
    utility_entries,
    working_entries,
)
from reverie.dynamics.explain_terms import Entries, Moment, entry
from reverie.model import MemoryRecord

__all__ = ["explain_strength"]

#: one explaining function per quantity (or family of quantities), in the order of the result
Part = Callable[[MemoryRecord, Moment, DynamicsSettings, Sequence[datetime]], Entries]
PARTS: tuple[Part, ...] = (
    energy_entries,
    fsrs_entries,
    strength_entries,
    retention_entries,
    actr_entries,
    utility_entries,
    importance_entries,
    lifecycle_entries,
    working_entries,
    promotion_entries,
)


def explain_strength(
    record: MemoryRecord,
    *,
    now: datetime,
    cfg: DynamicsSettings,
    access_times: Sequence[datetime] = (),
) -> dict[str, Any]:
    """Every derived value of ``record`` at ``now`` with formula and terms (pure, JSON-ready)."""
    m = Moment.of(record, now)
    out: Entries = {
        "at": entry(now, "the memory's clock time of this evaluation", created_at=record.created_at, last_access=m.last)
    }
    for part in PARTS:
        out.update(part(record, m, cfg, access_times))
    return out
