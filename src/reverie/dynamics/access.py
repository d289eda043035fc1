"""Per-access and per-feedback field updates, and the current derived values of a record.

``on_access`` is called for every ``get`` and every returned search hit (the energy model's "run on every
memory access"); the integrator writes the returned fields in one transaction together with the
access-log row. Decisions documented here:

* FSRS: an access is a successful review, rating Good. Elapsed days are measured since
  ``last_accessed_at`` or, for a never-accessed memory, since ``created_at`` — the encoding is the
  first review. Accesses less than a day apart use FSRS-6's same-day formula.
* ``retrieval_strength`` = 1.0 right after the access; storage grows per
  :func:`reverie.dynamics.strength.storage_after_retrieval` (capped at 10).
* energy: lazy decay from ``energy_updated_at`` (or ``created_at``), then +1.0.
* utility changes only when a success signal is given (drift first, then ``α·(target - u)``).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from reverie.config.dynamics import DynamicsSettings
from reverie.dynamics import emotion, energy, fsrs, retention, strength, utility
from reverie.dynamics._util import days_between
from reverie.dynamics.explain import explain_strength
from reverie.model import MemoryRecord


def _utility_update(record: MemoryRecord, *, success: bool, now: datetime, cfg: DynamicsSettings) -> dict[str, Any]:
    drifted = utility.utility_at(
        utility=record.utility,
        updated_at=record.utility_updated_at or record.created_at,
        now=now,
        cfg=cfg.utility,
    )
    return {
        "utility": utility.utility_after_use(utility=drifted, success=success, cfg=cfg.utility),
        "utility_updated_at": now,
    }


def on_access(
    record: MemoryRecord, *, now: datetime, cfg: DynamicsSettings, success: bool | None = None
) -> dict[str, Any]:
    """Field updates for one access of ``record`` at ``now`` (the record itself is not changed)."""
    last = record.last_accessed_at or record.created_at
    elapsed = days_between(last, now)
    state = fsrs.review(
        stability=record.stability,
        difficulty=record.difficulty,
        elapsed_days=elapsed,
        rating=fsrs.Rating.GOOD,
        cfg=cfg.fsrs,
    )
    updates: dict[str, Any] = {
        "energy": energy.energy_after_access(
            energy=record.energy,
            updated_at=record.energy_updated_at or record.created_at,
            now=now,
            layer=record.layer,
            cfg=cfg.energy,
        ),
        "energy_updated_at": now,
        "stability": state.stability,
        "difficulty": state.difficulty,
        "retrieval_strength": 1.0,
        "storage_strength": strength.storage_after_retrieval(
            storage=record.storage_strength, days_since_last_access=elapsed, cfg=cfg.strength
        ),
        "access_count": record.access_count + 1,
        "last_accessed_at": now,
    }
    if success is not None:
        updates.update(_utility_update(record, success=success, now=now, cfg=cfg))
    return updates


def on_feedback(record: MemoryRecord, *, useful: bool, now: datetime, cfg: DynamicsSettings) -> dict[str, Any]:
    """``mem.feedback(id, useful=…)``: drift utility to ``now``, then ``u + 0.1·(target - u)``."""
    return _utility_update(record, success=useful, now=now, cfg=cfg)


def current_values(
    record: MemoryRecord,
    *,
    now: datetime,
    cfg: DynamicsSettings,
    access_times: Sequence[datetime] = (),
) -> dict[str, Any]:
    """All derived values of ``record`` at ``now`` (the ``value`` of each explain entry)."""
    return {k: v["value"] for k, v in explain_strength(record, now=now, cfg=cfg, access_times=access_times).items()}


def apply(record: MemoryRecord, updates: dict[str, Any]) -> MemoryRecord:
    """A copy of ``record`` with ``updates`` applied (for simulations and tests)."""
    return record.copy(**updates)


def initial_values(record: MemoryRecord, *, now: datetime, cfg: DynamicsSettings) -> dict[str, Any]:
    """Dynamic fields of a memory being created at ``now``.

    Energy ``initial`` (1.0); FSRS state after the encoding review rated Good (S0 = w2,
    D0(Good)); storage strength at its minimum, retrieval 1.0; utility at the prior
    ("Utility (init 0.5)"); trust from the source table; flashbulb
    encoding when arousal >= 0.8. ``access_count`` stays 0: creation is not an access.
    """
    first = fsrs.first_review(rating=fsrs.Rating.GOOD, cfg=cfg.fsrs)
    values: dict[str, Any] = {
        "energy": cfg.energy.initial,
        "energy_updated_at": now,
        "stability": first.stability,
        "difficulty": first.difficulty,
        "storage_strength": cfg.strength.storage_min,
        "retrieval_strength": 1.0,
        "utility": cfg.utility.prior,
        "utility_updated_at": now,
        "trust": retention.source_trust(source=record.source, cfg=cfg.retention),
    }
    values.update(
        emotion.flashbulb_updates(
            arousal=record.emotion_arousal,
            importance=record.importance,
            stability=first.stability,
            cfg=cfg.emotion,
        )
    )
    return values
