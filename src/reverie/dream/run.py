"""Running the dream cycle: the named steps in order over one run's context, with a heartbeat that keeps the
run's claims alive, and the run's report kept in the store's state.

A run that is killed midway leaves every finished batch committed and the rest for the next run.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
import uuid
from collections.abc import Sequence
from datetime import datetime, timedelta

from reverie.dream.context import DreamContext, DreamServices, StepReport, step_runs_key
from reverie.dream.registry import steps_by_name
from reverie.errors import InvalidInputError, ReverieError
from reverie.results import DreamReport, ScheduledJob

log = logging.getLogger("reverie.dream")


class ClaimHeartbeat:
    """While a run lasts, a background thread renews the run's claims every third of ``ttl`` seconds
    (the energy model's consolidation attempts with a heartbeat): a live dreamer keeps what it claimed however
    long it works, and a killed one stops renewing, so its claims lapse and another process takes the
    work over at most ``ttl`` seconds later. At the end every claim the run still holds is released."""

    def __init__(self, ctx: DreamContext, ttl: float) -> None:
        self.ctx = ctx
        self.ttl = ttl
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._beat, name="reverie-claims", daemon=True)
        self.beats = 0

    def __enter__(self) -> ClaimHeartbeat:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=max(5.0, self.ttl))
        with contextlib.suppress(ReverieError):
            self.ctx.store.release(self.ctx.owner)

    def _beat(self) -> None:
        while not self._stop.wait(self.ttl / 3):
            try:
                self.ctx.store.renew_claims(self.ctx.owner, until=self.ctx.claim_now() + timedelta(seconds=self.ttl))
                self.beats += 1
            except ReverieError as exc:  # a failed beat is retried at the next one; the run goes on
                if self.ctx.ops_log is not None:
                    self.ctx.ops_log("dream.heartbeat_failed", error=str(exc)[:200])


def _log_skip(report: StepReport) -> None:
    """Say on the ``reverie.dream`` logger that a step did nothing because something it needs is missing:
    WARNING, or INFO when what it needs is an LLM (running without one, or with its use in the dream off,
    is a documented choice; an LLM that is configured but fails is reported by the LLM client)."""
    skipped = report.details.get("skipped")
    if skipped:
        level = logging.INFO if "needs an LLM" in str(skipped) else logging.WARNING
        log.log(level, "dream step %r skipped: %s", report.name, skipped)


def run_dream(
    services: DreamServices,
    *,
    steps: Sequence[str] | None = None,
    user_id: str | None = None,
    all_users: bool = True,
    now: datetime | None = None,
    kind: str = "dream",
    reports_kept: int | None = None,
    batch_size: int | None = None,
    job: ScheduledJob | None = None,
) -> DreamReport:
    """Run the configured (or the named) steps in order; returns the run's report.

    ``kind`` names the run ("dream", or "tick" for the maintenance subset): the report is kept under
    the state keys ``{kind}:last`` and ``{kind}:reports`` (the newest ``reports_kept``). ``batch_size``
    replaces ``dream.batch_size`` for this run (a scheduled job's transaction size). The time each step
    ran is recorded (:data:`STEP_RUNS_KEY`), so that a schedule knows what a full cycle already did. ``job``
    names the scheduled job the run belongs to (kept in the report)."""
    registry = steps_by_name()
    names = list(steps) if steps is not None else list(services.settings.dream.steps)
    unknown = [n for n in names if n not in registry]
    if unknown:
        raise InvalidInputError(f"unknown dream steps {unknown}; known: {', '.join(registry)}")
    if user_id is not None:
        all_users = False
    settings = services.settings
    if batch_size is not None and batch_size != settings.dream.batch_size:
        settings = settings.model_copy(deep=True)
        settings.dream.batch_size = batch_size
    ctx = DreamContext.for_run(
        services,
        settings=settings,
        now=now or services.clock(),
        owner=f"{services.settings.instance_id or 'reverie'}:{uuid.uuid4().hex[:12]}",
        user_id=user_id,
        all_users=all_users,
    )
    started = time.perf_counter()
    reports: list[StepReport] = []
    with ClaimHeartbeat(ctx, services.settings.dream.claim_ttl_s):
        for name in names:
            t0 = time.perf_counter()
            report = registry[name].run(ctx)
            report.seconds = time.perf_counter() - t0
            reports.append(report)
            _log_skip(report)
            if services.ops_log is None:
                continue
            services.ops_log(
                "dream.step",
                step=name,
                changed=report.changed,
                examined=report.examined,
                latencyMs=round(report.seconds * 1000, 2),
            )
    result: DreamReport = {
        "kind": kind,
        "owner": ctx.owner,
        "at": ctx.now.isoformat(),
        "steps": [r.to_dict() for r in reports],
        "changed": sum(r.changed for r in reports),
        "seconds": time.perf_counter() - started,
    }
    if job is not None:
        result["job"] = job
    keep = services.settings.dream.reports_kept if reports_kept is None else reports_kept
    runs_key = step_runs_key(None if all_users else user_id, all_users=all_users)
    store = services.store
    with store.transaction():
        store.set_state(f"{kind}:last", result)
        kept = store.get_state(f"{kind}:reports") or []
        store.set_state(f"{kind}:reports", [result, *kept][:keep])
        ran = store.get_state(runs_key)
        ran = dict(ran) if isinstance(ran, dict) else {}
        ran.update(dict.fromkeys(names, ctx.now.isoformat()))
        store.set_state(runs_key, ran)
    return result


__all__ = ["ClaimHeartbeat", "run_dream"]
