"""When maintenance runs by itself: seed 003's ``tick()`` and ``reverie dream --every``.

* :func:`run_tick` runs the cheap maintenance subset of the dream steps
  (``dream.schedule.tick_steps``; seed 003: cold migration, TTL expiry, consolidation) through the
  same runner as the dream cycle, so the steps keep their claims, optimistic writes and history.
* :func:`note_ingestion` counts ingestion cycles and runs the tick every
  ``dream.schedule.tick_every`` of them (seed 003: every 5 ingestion cycles; seed 004: every N
  extractions). The count lives in the store, one counter per user partition: it survives
  restarts, short-lived processes (one ``reverie add`` per process) still reach N, and many
  processes on one database share it, so maintenance follows the store's ingestion rate rather
  than each process's. The tick runs in that user's partition only, so its cost is the size of
  one user's memory, not the whole store's.
* :func:`run_every` is the ``--every`` loop: a fixed-rate schedule on the monotonic clock that
  skips missed slots (no catch-up burst after a long run) and stops cleanly between runs.
"""

from __future__ import annotations

import logging
import math
import re
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from reverie.errors import EmbeddingError, InvalidInputError, LLMError, StoreError

if TYPE_CHECKING:
    from reverie.memory import Memory

log = logging.getLogger("reverie.schedule")

#: state key prefix of the per-user ingestion counters
COUNTER_KEY = "schedule:ingest:"
LAST_TICK_KEY = "schedule:last_tick:"

_UNITS: dict[str, float] = {
    "ms": 0.001, "msec": 0.001,
    "s": 1.0, "sec": 1.0, "secs": 1.0, "second": 1.0, "seconds": 1.0,
    "m": 60.0, "min": 60.0, "mins": 60.0, "minute": 60.0, "minutes": 60.0,
    "h": 3600.0, "hr": 3600.0, "hrs": 3600.0, "hour": 3600.0, "hours": 3600.0,
    "d": 86400.0, "day": 86400.0, "days": 86400.0,
    "w": 604800.0, "week": 604800.0, "weeks": 604800.0,
}
_PART = re.compile(r"\s*(\d+(?:\.\d+)?)\s*([a-z]+)", re.IGNORECASE)


def parse_duration(text: str) -> timedelta:
    """``"30s"``, ``"15m"``, ``"1h"``, ``"1d"``, ``"1h30m"``, ``"1.5h"``, ``"2 days"`` → a timedelta.

    A bare number is refused (seconds or minutes? say which), as are unknown units and zero."""
    if not isinstance(text, str) or not text.strip():
        raise InvalidInputError("a duration is needed, e.g. 30s, 15m, 1h or 1d")
    raw = text.strip()
    pos, total = 0, 0.0
    while pos < len(raw):
        m = _PART.match(raw, pos)
        if m is None:
            break
        unit = m.group(2).lower()
        if unit not in _UNITS:
            raise InvalidInputError(f"unknown unit {m.group(2)!r} in duration {text!r}; use ms, s, m, h, d or w")
        total += float(m.group(1)) * _UNITS[unit]
        pos = m.end()
    if pos == 0 or raw[pos:].strip():
        hint = " (a bare number is ambiguous: add a unit)" if re.fullmatch(r"\d+(\.\d+)?", raw) else ""
        raise InvalidInputError(f"cannot read duration {text!r}{hint}; examples: 30s, 15m, 1h, 1d, 1h30m")
    if not math.isfinite(total) or total <= 0:
        raise InvalidInputError(f"duration {text!r} must be longer than zero")
    return timedelta(seconds=total)


def format_duration(delta: timedelta) -> str:
    """The inverse of :func:`parse_duration` for display: ``timedelta(hours=1, minutes=30)`` → ``"1h30m"``."""
    secs = delta.total_seconds()
    parts: list[str] = []
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if secs >= size:
            n = int(secs // size)
            parts.append(f"{n}{unit}")
            secs -= n * size
    if secs > 0 or not parts:
        parts.append(f"{secs:g}s")
    return "".join(parts)


# the tick -------------------------------------------------------------------------------------


def run_tick(mem: Memory, *, user_id: str | None = None, all_users: bool = True) -> dict[str, Any]:
    """Run ``dream.schedule.tick_steps`` in order (one user's partition, or every user's)."""
    from reverie.dream import run_dream

    cfg = mem.settings.dream.schedule
    return run_dream(mem, steps=list(cfg.tick_steps), user_id=user_id, all_users=all_users, kind="tick",
                     reports_kept=cfg.tick_reports_kept)


def _bump(mem: Memory, user_id: str | None) -> int:
    """Add one ingestion cycle to the user's durable counter; returns the new count.

    Read and write share one transaction: on SQLite (BEGIN IMMEDIATE) increments from several
    processes serialise; on PostgreSQL two racing increments may count once, which only delays a
    tick by one cycle (and a doubled tick is harmless: the steps claim what they work on)."""
    key = COUNTER_KEY + (user_id or "")
    with mem.store.transaction():
        state = mem.store.get_state(key)
        count = int(state.get("count", 0)) + 1 if isinstance(state, dict) else 1
        mem.store.set_state(key, {"count": count, "at": mem.now().isoformat()})
    return count


def _interval_elapsed(mem: Memory, user_id: str | None) -> bool:
    """Whether ``tick_min_interval_s`` has passed since this user's last automatic tick; if so,
    record now as the last one (so racing processes rarely both run it, and if they do the steps'
    claims keep the work single)."""
    gap = mem.settings.dream.schedule.tick_min_interval_s
    key = LAST_TICK_KEY + (user_id or "")
    now = mem.now()
    with mem.store.transaction():
        last = mem.store.get_state(key)
        if gap > 0 and isinstance(last, str):
            try:
                if (now - datetime.fromisoformat(last)).total_seconds() < gap:
                    return False
            except ValueError:
                pass  # an unreadable stamp is replaced below
        mem.store.set_state(key, now.isoformat())
    return True


def note_ingestion(mem: Memory, users: Iterable[str | None]) -> list[dict[str, Any]]:
    """Count one ingestion cycle for each user partition in ``users``; run the tick where it is due.

    Never raises: a failing tick (or counter) is logged and the ingestion call goes on."""
    every = mem.settings.dream.schedule.tick_every
    if every <= 0:
        return []
    reports: list[dict[str, Any]] = []
    for user in sorted(set(users), key=lambda u: (u is not None, u or "")):
        try:
            count = _bump(mem, user)
            if count % every or not _interval_elapsed(mem, user):
                continue
            report = run_tick(mem, user_id=user, all_users=False)
            report["trigger"] = {"ingestion_cycles": count, "every": every, "user_id": user}
            mem.ops.log("tick", user_id=user, cycles=count, changed=report["changed"],
                        latencyMs=round(report["seconds"] * 1000, 2))
            reports.append(report)
        except Exception as exc:  # the ingestion itself succeeded: maintenance never fails it
            log.warning("automatic tick for user %r failed: %s", user, exc, exc_info=True)
            mem.ops.log("tick.error", user_id=user, error=f"{type(exc).__name__}: {exc}"[:500])
    return reports


# the --every loop -----------------------------------------------------------------------------

#: errors after which the loop waits for the next slot instead of stopping (a database restart,
#: an unreachable embedding or LLM endpoint); anything else (a bad step name, a bug) stops it
TRANSIENT_ERRORS: tuple[type[Exception], ...] = (StoreError, EmbeddingError, LLMError)


def run_every(
    run: Callable[[], dict[str, Any]],
    every: timedelta,
    *,
    stop: threading.Event,
    max_runs: int | None = None,
    on_report: Callable[[dict[str, Any]], None] | None = None,
    on_error: Callable[[Exception], None] | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> int:
    """Call ``run`` now and then every ``every`` until ``stop`` is set or ``max_runs`` runs were tried.

    Fixed rate: run k starts at ``start + k·every``; a run that overruns its slot makes the loop
    skip the missed slots rather than start several runs back to back. ``stop`` is checked
    between runs and interrupts the wait at once. Transient errors are reported and the loop
    goes on; others propagate. Returns the number of runs that finished."""
    interval = every.total_seconds()
    if interval <= 0:
        raise InvalidInputError("the interval must be longer than zero")
    if max_runs is not None and max_runs < 1:
        raise InvalidInputError("max_runs must be at least 1")
    done = attempts = 0
    next_at = clock()
    while not stop.is_set():
        attempts += 1
        try:
            report = run()
        except TRANSIENT_ERRORS as exc:
            if on_error is not None:
                on_error(exc)
        else:
            done += 1
            if on_report is not None:
                on_report(report)
        if max_runs is not None and attempts >= max_runs:
            break
        next_at += interval
        now = clock()
        if next_at <= now:  # overran: skip to the next slot still ahead
            next_at += math.ceil((now - next_at) / interval) * interval
            if next_at <= now:
                next_at += interval
        stop.wait(max(0.0, next_at - clock()))
    return done


def known_steps() -> Sequence[str]:
    """Every registered dream step name, in registry order."""
    from reverie.dream import _registry

    return list(_registry())


__all__ = ["COUNTER_KEY", "format_duration", "known_steps", "note_ingestion", "parse_duration", "run_every",
           "run_tick"]
