"""Maintenance commands: ``dream``, ``compact``, ``maintain``, ``tick``, ``doctor`` and the scheduled runs behind
``--every``."""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from typing import Annotated, Any

import typer
import typer.core
from rich.markup import escape
from rich.table import Table

from reverie.cli.common import (
    DbOpt,
    JsonOpt,
    UserOpt,
    _fail,
    _memory,
    _print_json,
    _say,
    _short,
    app,
    console,
    err_console,
    safe_json,
)
from reverie.errors import InvalidInputError, ReverieError


@app.command()
def dream(
    db: DbOpt = None,
    steps: Annotated[
        str | None, typer.Option(metavar="NAMES", help="Comma-separated step names to run (default: all enabled).")
    ] = None,
    user: UserOpt = None,
    every: Annotated[
        str | None,
        typer.Option(
            "--every",
            metavar="DURATION",
            help="Keep running on a schedule: 30s, 15m, 1h, 1d, 1h30m … Stop with Ctrl-C or SIGTERM "
            "(it finishes the current run; a second signal aborts it, leaving the store consistent).",
        ),
    ] = None,
    max_runs: Annotated[
        int | None,
        typer.Option(
            "--max-runs", min=1, metavar="N", help="With --every: stop after N full cycles (or N runs of --steps)."
        ),
    ] = None,
    no_jobs: Annotated[
        bool,
        typer.Option("--no-jobs", help="With --every: only the full cycle, without the maintenance jobs in between."),
    ] = False,
    as_json: JsonOpt = False,
) -> None:
    """Run the dream cycle (decay, promotion, expiry, consolidation, forgetting …) and print, per step,
    what it changed. Many processes may dream at once: each claims the memories it works on.

    With --every the full cycle runs every DURATION and, in between, each maintenance job on its own
    interval (setting dream.schedule.jobs: promotion every 10 minutes, decay and clustering every 60);
    with --steps only those steps run, every DURATION."""
    names = [s.strip() for s in steps.split(",") if s.strip()] if steps is not None else None
    if names == []:
        _fail(InvalidInputError("--steps names no step; give step names (decay, promote, …) or leave it out"))
    interval = _interval(every, max_runs)
    with _memory(db) as mem:

        def once() -> dict[str, Any]:
            report: dict[str, Any] = (
                mem.dream(steps=names, user_id=user) if user is not None else mem.dream(steps=names)
            )
            return report

        if interval is None:
            _print_run_report(once(), as_json=as_json, title="dream cycle")
            return
        if names is None and not no_jobs and mem.settings.dream.schedule.jobs:
            _run_jobs(mem, interval, user=user, max_runs=max_runs, as_json=as_json)
            return
        _run_scheduled(mem, once, interval, max_runs=max_runs, as_json=as_json, title="dream cycle")


def _bytes(n: int) -> str:
    size = float(n)
    for unit in ("B", "KB", "MB", "GB"):
        if abs(size) < 1024 or unit == "GB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{n} B"  # pragma: no cover


@app.command()
def compact(
    db: DbOpt = None,
    user: Annotated[
        str | None,
        typer.Option(
            "--user",
            "-u",
            metavar="NAME",
            help="Deduplicate only this user's memories (the indexes are optimised for everyone).",
        ),
    ] = None,
    no_dedup: Annotated[
        bool, typer.Option("--no-dedup", help="Only optimise the store; keep duplicate memories as they are.")
    ] = False,
    as_json: JsonOpt = False,
) -> None:
    """Deduplicate memories and optimise the store, then say what it reclaimed. Identical active memories
    of one user and agent keep one copy (the others are superseded, kept in cold storage); SQLite:
    VACUUM, ANALYZE, full-text optimisation, vector index rebuild; PostgreSQL: VACUUM ANALYZE and
    REINDEX CONCURRENTLY."""
    with _memory(db) as mem:
        report = mem.compact(dedup=not no_dedup, user_id=user)
    if as_json:
        _print_json(report)
        return
    st = report["store"]
    if "dedup" in report:
        d = report["dedup"]
        _say(f"dedup: {d['superseded']} duplicate memories superseded in {d['groups']} group(s)")
    _say(
        f"store ({st['backend']}): {_bytes(st['bytes_before'])} → {_bytes(st['bytes_after'])}, reclaimed "
        f"{_bytes(st['reclaimed_bytes'])} in {st['seconds']:.1f} s"
    )
    rows = {k: v for k, v in st["rows_removed"].items() if v}
    if rows or report.get("claims_removed"):
        rows = {**rows, **({"claims": report["claims_removed"]} if report.get("claims_removed") else {})}
        _say("rows removed: " + ", ".join(f"{k} {v}" for k, v in rows.items()))
    removed = {k: v for k, v in st["index_entries_removed"].items() if v}
    _say(
        "index entries: "
        + ", ".join(
            f"{k} {st['index_entries_before'][k]} → {st['index_entries_after'].get(k, 0)}"
            for k in st["index_entries_before"]
        )
        + (f" ({', '.join(f'{k} −{v}' for k, v in removed.items())})" if removed else "")
    )
    _say("done: " + "; ".join(st["actions"]))


@app.command()
def maintain(
    db: DbOpt = None,
    user: UserOpt = None,
    every: Annotated[
        str | None,
        typer.Option(
            "--cycle-every",
            metavar="DURATION",
            help="Interval of the full dream cycle (default: the setting dream.schedule.cycle_every_hours).",
        ),
    ] = None,
    status: Annotated[bool, typer.Option("--status", help="Only show each job's last and next run.")] = False,
    as_json: JsonOpt = False,
) -> None:
    """Run the maintenance jobs that are due now (each on its own interval: dream.schedule.jobs, plus the
    full dream cycle), then exit: for cron or a systemd timer, e.g. once a minute. --status shows the
    schedule without running anything."""
    with _memory(db) as mem:
        if status:
            rows = mem.maintenance_status(user_id=user, cycle_every=every)
            if as_json:
                _print_json(rows)
                return
            table = Table("job", "steps", "every", "batch", "last run", "next run", title="maintenance schedule")
            for r in rows:
                steps_text = r["steps"] if isinstance(r["steps"], str) else ", ".join(r["steps"])
                table.add_row(
                    r["name"],
                    escape(steps_text),
                    r["every"],
                    str(r["batch_size"] or "—"),
                    r["last_run"] or "never",
                    r["next_run"],
                )
            console.print(table)
            return
        reports = mem.maintain(user_id=user, cycle_every=every)
        if as_json:
            _print_json(reports)
            return
        if not reports:
            _say("nothing due (reverie maintain --status shows when each job runs next)")
        for report in reports:
            _print_run_report(report, as_json=False, title=_job_title(report))


@app.command()
def tick(db: DbOpt = None, user: UserOpt = None, as_json: JsonOpt = False) -> None:
    """Run the cheap maintenance tick now (cold migration, expiry, consolidation: the setting
    dream.schedule.tick_steps). It also runs by itself every dream.schedule.tick_every ingestion calls."""
    with _memory(db) as mem:
        report = mem.tick(user_id=user) if user is not None else mem.tick()
        _print_run_report(report, as_json=as_json, title="tick")


@app.command()
def doctor(
    db: DbOpt = None,
    as_json: JsonOpt = False,
    skip_llm: Annotated[bool, typer.Option("--no-llm", help="Do not send the LLM endpoint a request.")] = False,
) -> None:
    """Check what could be wrong, on one screen: the store answers, the embedding model loads and embeds,
    the LLM endpoint (llm.base_url) answers, and maintenance (the dream cycle) runs on schedule. Exits
    with 1 when a check finds an error."""
    from reverie.cli.common import _target
    from reverie.health import CHECKS, Check, Health
    from reverie.memory import Memory

    try:
        target = _target(db, create=False)
        with Memory(target) as mem:
            report = mem.health(checks=[n for n, _ in CHECKS if not (skip_llm and n == "llm")])
    except ReverieError as exc:  # the store cannot be opened: that is what was found
        target = db or "the default store"
        report = Health((Check("store", "error", f"{type(exc).__name__}: {exc}"),))
    if as_json:
        _print_json({"target": str(target), **report.to_dict()})
    else:
        _say(f"reverie doctor: {target}")
        width = max(len(c.name) for c in report.checks)
        for c in report.checks:
            _say(f"  {c.status:<5}  {c.name:<{width}}  {c.message}")
        counts = {s: sum(c.status == s for c in report.checks) for s in ("error", "warn")}
        _say(f"{counts['error']} error(s), {counts['warn']} warning(s)" if any(counts.values()) else "all checks ok")
    if not report.ok:
        raise typer.Exit(1)


def _interval(every: str | None, max_runs: int | None) -> Any:
    from reverie.dream.schedule import parse_duration

    if every is None:
        if max_runs is not None:
            _fail(InvalidInputError("--max-runs needs --every"))
        return None
    try:
        return parse_duration(every)
    except ReverieError as exc:
        _fail(exc)
    return None  # pragma: no cover - _fail raises


def _print_run_report(report: Mapping[str, Any], *, as_json: bool, title: str, compact: bool = False) -> None:
    """A dream or tick report: per step what it changed and examined, its details and its time."""
    if as_json:
        if compact:  # one JSON object per line while running on a schedule (JSON Lines)
            sys.stdout.write(safe_json(json.dumps(report, ensure_ascii=False, default=str)) + "\n")
            sys.stdout.flush()
        else:
            _print_json(report)
        return
    table = Table("step", "changed", "examined", "s", "details", title=f"{title} at {report.get('at', '?')}")
    for step in report["steps"]:
        table.add_row(
            step["name"],
            str(step["changed"]),
            str(step.get("examined", "")),
            f"{step.get('seconds', 0.0):.2f}",
            escape(_short(json.dumps(step.get("details", {})), 90)),
        )
    console.print(table)
    console.print(f"{title} finished in {report['seconds']:.2f} s: {report['changed']} change(s)")


def _run_scheduled(mem: Any, run: Any, every: Any, *, max_runs: int | None, as_json: bool, title: str) -> None:
    """``--every``: run on a fixed-rate schedule until SIGINT/SIGTERM (finish the run, then stop)
    or ``--max-runs``; a second signal aborts the run in progress (exit code 130)."""
    import signal
    import threading

    from reverie.dream.schedule import format_duration, run_every

    if every.total_seconds() < mem.settings.dream.schedule.min_every_s:
        _fail(
            InvalidInputError(
                f"--every must be at least {mem.settings.dream.schedule.min_every_s:g} s (dream.schedule.min_every_s)"
            )
        )
    stop = threading.Event()

    def on_signal(signum: int, _frame: Any) -> None:
        if stop.is_set():
            raise KeyboardInterrupt
        stop.set()
        err_console.print(f"{signal.Signals(signum).name}: stopping after the current run (send it again to abort)")

    previous: dict[int, Any] = {}
    if threading.current_thread() is threading.main_thread():
        for signum in (signal.SIGINT, signal.SIGTERM):
            previous[signum] = signal.signal(signum, on_signal)
    err_console.print(
        f"{title} every {format_duration(every)}"
        + (f", {max_runs} run(s)" if max_runs else "")
        + " — Ctrl-C or SIGTERM stops"
    )
    try:
        runs = run_every(
            run,
            every,
            stop=stop,
            max_runs=max_runs,
            on_report=lambda r: _print_run_report(r, as_json=as_json, title=title, compact=True),
            on_error=lambda e: err_console.print(
                f"[red]error[/red] ({type(e).__name__}): {e} — trying again at the next slot"
            ),
        )
    except KeyboardInterrupt:
        err_console.print("aborted during a run: finished batches are kept, the next run does the rest")
        raise typer.Exit(130) from None
    finally:
        for restored, handler in previous.items():
            signal.signal(restored, handler)
    err_console.print(f"stopped after {runs} run(s)")


def _job_title(report: Mapping[str, Any]) -> str:
    job = report.get("job") or {}
    return "dream cycle" if job.get("name") in (None, "cycle") else f"job {job['name']}"


def _run_jobs(mem: Any, every: Any, *, user: str | None, max_runs: int | None, as_json: bool) -> None:
    """``dream --every`` without ``--steps``: the full cycle every ``every`` and each maintenance job on its
    own interval in between, until SIGINT/SIGTERM (finish the job in progress, then stop) or ``max_runs``
    full cycles; a second signal aborts the run in progress (exit code 130)."""
    import signal
    import threading

    from reverie.dream.schedule import JobSchedule, configured_jobs, format_duration, run_jobs

    if every.total_seconds() < mem.settings.dream.schedule.min_every_s:
        _fail(
            InvalidInputError(
                f"--every must be at least {mem.settings.dream.schedule.min_every_s:g} s (dream.schedule.min_every_s)"
            )
        )
    schedule = JobSchedule(mem, configured_jobs(mem, cycle_every=every), user_id=user)
    stop = threading.Event()

    def on_signal(signum: int, _frame: Any) -> None:
        if stop.is_set():
            raise KeyboardInterrupt
        stop.set()
        err_console.print(f"{signal.Signals(signum).name}: stopping after the current run (send it again to abort)")

    previous: dict[int, Any] = {}
    if threading.current_thread() is threading.main_thread():
        for signum in (signal.SIGINT, signal.SIGTERM):
            previous[signum] = signal.signal(signum, on_signal)
    jobs = ", ".join(f"{j.name} every {format_duration(j.every)}" for j in schedule.jobs if not j.is_cycle)
    err_console.print(
        f"dream cycle every {format_duration(every)}; in between: {jobs}"
        + (f"; {max_runs} cycle(s)" if max_runs else "")
        + " — Ctrl-C or SIGTERM stops"
    )
    try:
        runs = run_jobs(
            schedule,
            stop=stop,
            max_cycles=max_runs,
            on_report=lambda r: _print_run_report(r, as_json=as_json, title=_job_title(r), compact=True),
            on_error=lambda e: err_console.print(
                f"[red]error[/red] ({type(e).__name__}): {e} — trying again at the next slot"
            ),
        )
    except KeyboardInterrupt:
        err_console.print("aborted during a run: finished batches are kept, the next run does the rest")
        raise typer.Exit(130) from None
    except ReverieError as exc:
        _fail(exc)
    finally:
        for restored, handler in previous.items():
            signal.signal(restored, handler)
    err_console.print(f"stopped after {runs} run(s)")
