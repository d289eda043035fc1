"""When maintenance runs by itself: the consolidation design's ``tick()`` and ``reverie dream --every``.

* :func:`run_tick` runs the cheap maintenance subset of the dream steps
  (``dream.schedule.tick_steps``: cold migration, TTL expiry, consolidation) through the
  same runner as the dream cycle, so the steps keep their claims, optimistic writes and history.
* :func:`note_ingestion` counts ingestion cycles and runs the tick every
  ``dream.schedule.tick_every`` of them (every 5 ingestion cycles; the lifecycle design
  consolidates every N extractions). The count lives in the store, one counter per user partition: it survives
  restarts, short-lived processes (one ``reverie add`` per process) still reach N, and many
  processes on one database share it, so maintenance follows the store's ingestion rate rather
  than each process's. The tick runs in that user's partition only, so its cost is the size of
  one user's memory, not the whole store's.
* :func:`run_every` is the ``--every`` loop of named steps: a fixed-rate schedule on the monotonic
  clock that skips missed slots (no catch-up burst after a long run) and stops cleanly between runs.
* :class:`JobSchedule` and :func:`run_jobs` are the maintenance schedule of a long-running process
  (``reverie dream --every DURATION`` without ``--steps``, and ``reverie serve`` with
  ``dream.schedule.server_jobs``): the full dream cycle every DURATION and, in between, each job of
  ``dream.schedule.jobs`` on its own interval (the three-tier energy design: promotion every 10
  minutes in transactions of 10 memories, decay every 60 minutes in transactions of 100, clustering
  every 60 minutes). A job is due when its interval has passed since *all* of its steps last ran —
  by the job itself, a full cycle or any other run: :func:`reverie.dream.run_dream` records when each
  step ran, in the store, so a restart or a second process does not run a job again too early. Time
  is the engine's clock (a settable clock in tests); the loop waits with an injectable ``wait``.
"""

from __future__ import annotations

import logging
import math
import re
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from reverie.config.dream_schedule import CYCLE_JOB
from reverie.errors import EmbeddingError, InvalidInputError, LLMError, StoreError
from reverie.results import DreamReport, ScheduledJob

if TYPE_CHECKING:
    from reverie.memory import Memory

log = logging.getLogger("reverie.schedule")

#: state key prefix of the per-user ingestion counters
COUNTER_KEY = "schedule:ingest:"
LAST_TICK_KEY = "schedule:last_tick:"

_UNITS: dict[str, float] = {
    "ms": 0.001,
    "msec": 0.001,
    "s": 1.0,
    "sec": 1.0,
    "secs": 1.0,
    "second": 1.0,
    "seconds": 1.0,
    "m": 60.0,
    "min": 60.0,
    "mins": 60.0,
    "minute": 60.0,
    "minutes": 60.0,
    "h": 3600.0,
    "hr": 3600.0,
    "hrs": 3600.0,
    "hour": 3600.0,
    "hours": 3600.0,
    "d": 86400.0,
    "day": 86400.0,
    "days": 86400.0,
    "w": 604800.0,
    "week": 604800.0,
    "weeks": 604800.0,
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


def run_tick(mem: Memory, *, user_id: str | None = None, all_users: bool = True) -> DreamReport:
    """Run ``dream.schedule.tick_steps`` in order (one user's partition, or every user's)."""
    from reverie.dream import run_dream

    cfg = mem.settings.dream.schedule
    return run_dream(
        mem.dream_services,
        steps=list(cfg.tick_steps),
        user_id=user_id,
        all_users=all_users,
        kind="tick",
        reports_kept=cfg.tick_reports_kept,
    )


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


def note_ingestion(mem: Memory, users: Iterable[str | None]) -> list[DreamReport]:
    """Count one ingestion cycle for each user partition in ``users``; run the tick where it is due.

    Never raises: a failing tick (or counter) is logged and the ingestion call goes on."""
    every = mem.settings.dream.schedule.tick_every
    if every <= 0:
        return []
    reports: list[DreamReport] = []
    for user in sorted(set(users), key=lambda u: (u is not None, u or "")):
        try:
            count = _bump(mem, user)
            if count % every or not _interval_elapsed(mem, user):
                continue
            report = run_tick(mem, user_id=user, all_users=False)
            report["trigger"] = {"ingestion_cycles": count, "every": every, "user_id": user}
            mem.ops.log(
                "tick",
                user_id=user,
                cycles=count,
                changed=report["changed"],
                latencyMs=round(report["seconds"] * 1000, 2),
            )
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
    run: Callable[[], Mapping[str, Any]],
    every: timedelta,
    *,
    stop: threading.Event,
    max_runs: int | None = None,
    on_report: Callable[[Mapping[str, Any]], None] | None = None,
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


# the maintenance schedule: jobs on their own intervals ---------------------------------------


@dataclass(frozen=True, slots=True)
class Job:
    """A scheduled maintenance job: dream steps run every ``every`` (``steps=None``: the full cycle)."""

    name: str
    steps: tuple[str, ...] | None
    every: timedelta
    batch_size: int | None = None

    @property
    def is_cycle(self) -> bool:
        return self.steps is None


def configured_jobs(mem: Memory, *, cycle_every: timedelta | None) -> list[Job]:
    """The jobs of ``dream.schedule.jobs`` (in the dream cycle's order of their first step), preceded by
    the full cycle every ``cycle_every`` (none when ``None``). Unknown step names are refused here."""
    registry = set(known_steps())
    cycle = list(mem.settings.dream.steps)
    jobs: list[Job] = []
    for name, cfg in mem.settings.dream.schedule.jobs.items():
        unknown = [s for s in cfg.steps if s not in registry]
        if unknown:
            raise InvalidInputError(f"job {name!r} names unknown dream steps {unknown}; known: {', '.join(registry)}")
        steps = tuple(sorted(cfg.steps, key=lambda s: (cycle.index(s) if s in cycle else len(cycle), s)))
        jobs.append(Job(name, steps, timedelta(minutes=cfg.every_minutes), cfg.batch_size))
    jobs.sort(key=lambda j: (min(cycle.index(s) if s in cycle else len(cycle) for s in j.steps or ()), j.name))
    if cycle_every is not None:
        if cycle_every.total_seconds() <= 0:
            raise InvalidInputError("the interval of the full cycle must be longer than zero")
        jobs.insert(0, Job(CYCLE_JOB, None, cycle_every))
    return jobs


class JobSchedule:
    """Which jobs are due at the engine's ``now``, and running them (see the module docs).

    ``user_id`` restricts every run to one user partition (otherwise every user's memories)."""

    def __init__(self, mem: Memory, jobs: Sequence[Job], *, user_id: str | None = None) -> None:
        if not jobs:
            raise InvalidInputError("a schedule needs at least one job (or the full cycle)")
        names = [j.name for j in jobs]
        if len(set(names)) != len(names):
            raise InvalidInputError(f"job names must be distinct, got {names}")
        self.mem = mem
        self.jobs = list(jobs)
        self.user_id = user_id
        self._retry_at: dict[str, datetime] = {}  # a job that failed waits for its next slot

    def _step_runs(self) -> dict[str, datetime]:
        """When each step last ran over this schedule's scope (a run over every user counts for each)."""
        from reverie.dream import step_runs_key

        keys = [step_runs_key(None, all_users=True)]
        if self.user_id is not None:
            keys.append(step_runs_key(self.user_id, all_users=False))
        out: dict[str, datetime] = {}
        for key in keys:
            stored = self.mem.store.get_state(key)
            for step, at in stored.items() if isinstance(stored, dict) else ():
                try:
                    when = datetime.fromisoformat(str(at))
                except ValueError:
                    continue
                if step not in out or when > out[step]:
                    out[step] = when
        return out

    def last_run(self, job: Job, runs: dict[str, datetime] | None = None) -> datetime | None:
        """When all of the job's steps last ran (the oldest of their times), ``None`` if one never did."""
        runs = self._step_runs() if runs is None else runs
        steps = job.steps if job.steps is not None else tuple(self.mem.settings.dream.steps)
        times = [runs.get(s) for s in steps]
        if not times or any(t is None for t in times):
            return None
        return min(t for t in times if t is not None)

    def next_at(self, job: Job, runs: dict[str, datetime] | None = None) -> datetime | None:
        """When the job is due next (``None``: now, it never ran)."""
        last = self.last_run(job, runs)
        due = None if last is None else last + job.every
        retry = self._retry_at.get(job.name)
        if retry is not None and (due is None or retry > due):
            return retry
        return due

    def due(self, now: datetime | None = None) -> list[Job]:
        """The jobs due at ``now`` (default: the engine's now), in run order. When the full cycle is
        due it is the only one: it runs every job's steps."""
        now = now or self.mem.now()
        runs = self._step_runs()
        due = [j for j in self.jobs if (at := self.next_at(j, runs)) is None or at <= now]
        cycles = [j for j in due if j.is_cycle]
        return cycles[:1] if cycles else due

    def seconds_until_next(self, now: datetime | None = None) -> float:
        """Seconds of clock time until the next job is due (0 when one is due now)."""
        now = now or self.mem.now()
        runs = self._step_runs()
        waits = [0.0 if (at := self.next_at(j, runs)) is None else (at - now).total_seconds() for j in self.jobs]
        return max(0.0, min(waits))

    def run(self, job: Job) -> DreamReport:
        """Run one job now; the report names the job (``report["job"]``) and its interval."""
        from reverie.dream import run_dream

        cfg = self.mem.settings.dream.schedule
        kind = "dream" if job.is_cycle else f"job:{job.name}"
        info: ScheduledJob = {"name": job.name, "every": format_duration(job.every), "batch_size": job.batch_size}
        try:
            report = run_dream(
                self.mem.dream_services,
                steps=list(job.steps) if job.steps is not None else None,
                user_id=self.user_id,
                all_users=self.user_id is None,
                kind=kind,
                reports_kept=None if job.is_cycle else cfg.tick_reports_kept,
                batch_size=job.batch_size,
                job=info,
            )
        except TRANSIENT_ERRORS:
            self._retry_at[job.name] = self.mem.now() + job.every
            raise
        self._retry_at.pop(job.name, None)
        self.mem.ops.log(
            "schedule.job", job=job.name, changed=report["changed"], latencyMs=round(report["seconds"] * 1000, 2)
        )
        return report

    def run_due(self) -> list[DreamReport]:
        """Run every job due now, in order; returns their reports."""
        return [self.run(job) for job in self.due()]

    def status(self) -> list[dict[str, Any]]:
        """Each job: its steps, interval, when it last ran and when it is due next."""
        runs = self._step_runs()
        out = []
        for job in self.jobs:
            last, nxt = self.last_run(job, runs), self.next_at(job, runs)
            out.append(
                {
                    "name": job.name,
                    "steps": list(job.steps) if job.steps is not None else "all",
                    "every": format_duration(job.every),
                    "batch_size": job.batch_size,
                    "last_run": last.isoformat() if last else None,
                    "next_run": nxt.isoformat() if nxt else "now",
                }
            )
        return out


def run_jobs(
    schedule: JobSchedule,
    *,
    stop: threading.Event,
    wait: Callable[[float], Any] | None = None,
    max_cycles: int | None = None,
    on_report: Callable[[Mapping[str, Any]], None] | None = None,
    on_error: Callable[[Exception], None] | None = None,
) -> int:
    """Run the schedule until ``stop`` is set (or ``max_cycles`` full cycles ran): each due job now, then
    wait until the next one is due. ``wait(seconds)`` defaults to ``stop.wait`` (a simulation passes one
    that moves a settable clock). Transient errors are reported and the job waits for its next slot;
    others propagate. Returns the number of job runs that finished (full cycles included)."""
    if max_cycles is not None and max_cycles < 1:
        raise InvalidInputError("max_cycles must be at least 1")
    pause = wait or stop.wait
    floor = schedule.mem.settings.dream.schedule.min_every_s
    done = cycles = 0
    while not stop.is_set():
        for job in schedule.due():
            if stop.is_set():
                break
            try:
                report = schedule.run(job)
            except TRANSIENT_ERRORS as exc:
                if on_error is not None:
                    on_error(exc)
                continue
            done += 1
            cycles += int(job.is_cycle)
            if on_report is not None:
                on_report(report)
        if stop.is_set() or (max_cycles is not None and cycles >= max_cycles):
            break
        pause(max(floor, schedule.seconds_until_next()))
    return done


class BackgroundSchedule:
    """:func:`run_jobs` on a daemon thread (``reverie serve`` with ``dream.schedule.server_jobs``).

    Errors that would stop the loop are logged, and the thread ends; the server goes on."""

    def __init__(self, schedule: JobSchedule) -> None:
        self.schedule = schedule
        self.stop_event = threading.Event()
        self.runs = 0
        self.error: Exception | None = None
        self._thread = threading.Thread(target=self._main, name="reverie-schedule", daemon=True)

    def _main(self) -> None:
        try:
            self.runs = run_jobs(
                self.schedule,
                stop=self.stop_event,
                on_error=lambda e: log.warning("scheduled maintenance failed: %s", e),
            )
        except Exception as exc:  # a bad step name, a bug: log it, leave the server running
            self.error = exc
            log.error("the maintenance schedule stopped: %s", exc, exc_info=True)

    def start(self) -> BackgroundSchedule:
        self._thread.start()
        return self

    def stop(self, timeout: float | None = None) -> None:
        """Stop after the job in progress (if any) and wait for the thread up to ``timeout`` seconds."""
        self.stop_event.set()
        self._thread.join(timeout)

    @property
    def alive(self) -> bool:
        return self._thread.is_alive()


def known_steps() -> Sequence[str]:
    """Every registered dream step name, in registry order."""
    from reverie.dream.registry import steps_by_name

    return list(steps_by_name())


__all__ = [
    "COUNTER_KEY",
    "BackgroundSchedule",
    "Job",
    "JobSchedule",
    "configured_jobs",
    "format_duration",
    "known_steps",
    "note_ingestion",
    "parse_duration",
    "run_every",
    "run_jobs",
    "run_tick",
]
