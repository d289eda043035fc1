"""seed 003 ``tick()``: the cheap maintenance subset, run by itself every N ingestion cycles, and the
``reverie dream --every`` schedule (duration parsing, the fixed-rate loop, signals, the CLI)."""

from __future__ import annotations

import json
import logging
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Mapping
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from reverie import InvalidInputError, Layer, Memory, SettableClock, Status, StoreError
from reverie.cli import app
from reverie.dream.schedule import COUNTER_KEY, format_duration, known_steps, parse_duration, run_every
from reverie.errors import ConfigError

SRC = Path(__file__).resolve().parents[2] / "src"
# expiry observable: promotion by age and energy off (as in test_dream.py's expiry test)
NO_PROMOTION = {"promotion": {"working_after_minutes": 10_000, "working_use_energy": False}}


def _tick_config(every: int, steps: list[str] | None = None) -> dict[str, Any]:
    return {"dream": {"schedule": {"tick_every": every, "tick_steps": steps or ["expire"]}}, "dynamics": NO_PROMOTION}


# durations -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("30s", 30),
        ("15m", 900),
        ("1h", 3600),
        ("1d", 86400),
        ("1w", 604800),
        ("1h30m", 5400),
        ("1.5h", 5400),
        ("2 days", 172800),
        ("500ms", 0.5),
        (" 45 min ", 2700),
        ("1H", 3600),
        ("1d2h3m4s", 93784),
    ],
)
def test_parse_duration(text: str, seconds: float) -> None:
    assert parse_duration(text).total_seconds() == pytest.approx(seconds)


@pytest.mark.parametrize("text", ["", "   ", "10", "1x", "0s", "0h0m", "h", "1h junk", "-1h", "1h-5m", "one hour"])
def test_parse_duration_refuses_bad_input(text: str) -> None:
    with pytest.raises(InvalidInputError):
        parse_duration(text)


def test_bare_number_gets_a_hint() -> None:
    with pytest.raises(InvalidInputError, match="add a unit"):
        parse_duration("3600")


def test_format_duration_round_trips() -> None:
    for text in ("30s", "15m", "1h", "1d", "1h30m", "2d3h"):
        assert parse_duration(format_duration(parse_duration(text))) == parse_duration(text)
    assert format_duration(timedelta(hours=1, minutes=30)) == "1h30m"


# the fixed-rate loop, on a fake monotonic clock -----------------------------------------------


class FakeTime:
    """A monotonic clock and a stop event whose ``wait`` moves the clock instead of sleeping."""

    def __init__(self) -> None:
        self.t = 1000.0
        self.waits: list[float] = []
        self.event = threading.Event()
        real_wait = self.event.wait

        def wait(timeout: float | None = None) -> bool:
            assert timeout is not None
            self.waits.append(round(timeout, 6))
            self.t += timeout
            return real_wait(0)

        self.event.wait = wait  # type: ignore[method-assign]

    def clock(self) -> float:
        return self.t


def test_run_every_is_fixed_rate_and_skips_missed_slots() -> None:
    ft = FakeTime()
    starts: list[float] = []
    durations = iter([10.0, 10.0, 250.0, 10.0, 10.0])  # the third run overruns two slots

    def run() -> dict[str, Any]:
        starts.append(ft.t)
        ft.t += next(durations)
        return {"n": len(starts)}

    reports: list[Mapping[str, Any]] = []
    done = run_every(run, timedelta(seconds=100), stop=ft.event, max_runs=5, on_report=reports.append, clock=ft.clock)
    assert done == 5 and [r["n"] for r in reports] == [1, 2, 3, 4, 5]
    # runs start at 0, 100, 200 (overruns to 450) → next free slot 500, then 600
    assert [s - 1000.0 for s in starts] == [0, 100, 200, 500, 600]
    assert ft.waits == [90, 90, 50, 90]


def test_run_every_stops_on_the_event_and_between_runs() -> None:
    ft = FakeTime()
    calls = 0

    def run() -> dict[str, Any]:
        nonlocal calls
        calls += 1
        if calls == 3:
            ft.event.set()  # a signal arrives during the third run: it finishes, no fourth
        return {}

    assert run_every(run, timedelta(minutes=1), stop=ft.event, clock=ft.clock) == 3
    assert calls == 3


def test_run_every_survives_transient_errors_and_propagates_others() -> None:
    ft = FakeTime()
    outcomes: list[Any] = [StoreError("database restarting"), {"ok": 1}]
    errors: list[Exception] = []

    def run() -> dict[str, Any]:
        out = outcomes.pop(0)
        if isinstance(out, Exception):
            raise out
        return dict(out)

    assert run_every(run, timedelta(seconds=5), stop=ft.event, max_runs=2, on_error=errors.append, clock=ft.clock) == 1
    assert len(errors) == 1 and isinstance(errors[0], StoreError)

    def broken() -> dict[str, Any]:
        raise InvalidInputError("unknown dream steps ['teleport']")

    with pytest.raises(InvalidInputError):
        run_every(broken, timedelta(seconds=5), stop=threading.Event(), max_runs=3, clock=ft.clock)
    with pytest.raises(InvalidInputError):
        run_every(lambda: {}, timedelta(seconds=5), stop=threading.Event(), max_runs=0)


def test_run_every_really_waits_and_wakes_on_stop() -> None:
    stop = threading.Event()
    threading.Timer(0.3, stop.set).start()
    t0 = time.monotonic()
    runs = run_every(lambda: {}, timedelta(hours=1), stop=stop)
    assert runs == 1 and 0.25 <= time.monotonic() - t0 < 5


# settings ------------------------------------------------------------------------------------


def test_schedule_settings_are_validated(make_memory) -> None:
    with pytest.raises(ConfigError, match="tick_every"):
        make_memory(dream={"schedule": {"tick_every": -1}})
    with pytest.raises(ConfigError, match="listed twice"):
        make_memory(dream={"schedule": {"tick_steps": ["expire", "expire"]}})


def test_default_tick_steps_are_registered_and_part_of_the_cycle(mem: Memory) -> None:
    """seed 003's tick (cold migration, TTL expiry, consolidation) names steps of the dream cycle."""
    ticks = mem.settings.dream.schedule.tick_steps
    assert set(ticks) <= set(known_steps())
    cycle = mem.settings.dream.steps
    assert set(ticks) <= set(cycle)
    assert ticks == sorted(ticks, key=cycle.index)  # the tick keeps the cycle's order of its steps
    assert {"cold_migration", "consolidate"} <= set(ticks)  # seed 003: cold migration, TTL expiry, consolidation
    assert mem.settings.dream.schedule.tick_every == 5  # seed 003: every 5 ingestion cycles


def test_default_tick_consolidates_a_fading_group(make_memory, clock: SettableClock) -> None:
    """seed 003's example: alike memories that faded are consolidated by the tick into one hot summary
    (the originals go cold, superseded) — cold migration must not take them out of the hot store first."""
    m = make_memory()
    texts = [f"User went hiking at Mount Rainier with boots and backpack on March {d}" for d in (12, 15, 20, 25, 28)]
    ids = [r.id for r in m.add_many(texts, user_id="u", infer=False)]
    clock.advance(hours=1)
    m.dream(steps=["promote"])  # working → episodic (seed 002: after 30 minutes), as the nightly cycle does
    assert all(r.layer is Layer.EPISODIC for r in m.store.get(ids).values())
    clock.advance(days=120)
    report = m.tick(user_id="u")
    steps = {s["name"]: s for s in report["steps"]}
    assert steps["consolidate"]["changed"] >= 1, steps["consolidate"]
    recs = m.store.get(ids)
    summaries = {r.superseded_by for r in recs.values()}
    assert len(summaries) == 1 and None not in summaries
    assert all(r.status is Status.SUPERSEDED and r.store.value == "cold" for r in recs.values())
    (summary_id,) = summaries
    summary = m.store.get([summary_id])[summary_id]
    assert summary.status is Status.ACTIVE and summary.store.value == "hot" and summary.write_source == "dream"


# Memory.tick() and the automatic tick ---------------------------------------------------------


def test_tick_runs_the_configured_subset_and_keeps_its_own_reports(make_memory, clock: SettableClock) -> None:
    m = make_memory(**_tick_config(0, ["decay", "expire"]))
    faded = m.add("a passing thought", user_id="u").id
    clock.advance(hours=5)  # working energy 1.0·exp(-0.5·5) = 0.082 < 0.1 (seed 000)
    report = m.tick()
    assert report["kind"] == "tick" and [s["name"] for s in report["steps"]] == ["decay", "expire"]
    assert report["steps"][1]["changed"] == 1
    assert m.store.get([faded])[faded].status is Status.EXPIRED
    assert m.store.get_state("tick:last")["owner"] == report["owner"]
    assert m.dream_reports() == []  # ticks do not push the dream reports out
    assert [e.event for e in m.history(faded)][-1] == "expired"
    m.dream(steps=["prune"])
    assert len(m.dream_reports()) == 1 and m.dream_reports()[0]["kind"] == "dream"


def test_tick_rejects_unknown_steps(make_memory) -> None:
    m = make_memory(**_tick_config(0, ["expire", "teleport"]))
    with pytest.raises(InvalidInputError, match="teleport"):
        m.tick()


def test_automatic_tick_every_n_ingestion_cycles(make_memory, clock: SettableClock) -> None:
    m = make_memory(**_tick_config(3))
    faded = m.add("an idea that fades", user_id="u").id  # cycle 1
    clock.advance(hours=5)
    m.add_many(["second thing", "third thing", "fourth thing"], user_id="u")  # cycle 2: one call, one cycle
    assert m.store.get([faded])[faded].status is Status.ACTIVE
    assert m.store.get_state("tick:last") is None
    m.add("the third cycle", user_id="u")  # cycle 3: the tick runs
    assert m.store.get([faded])[faded].status is Status.EXPIRED
    last = m.store.get_state("tick:last")
    assert last["kind"] == "tick" and last["steps"][0]["name"] == "expire"
    assert m.store.get_state(COUNTER_KEY + "u")["count"] == 3
    events = [e for e in m.history(faded) if e.event == "expired"]
    assert len(events) == 1 and events[0].actor == "dream"


def test_automatic_tick_runs_at_most_once_per_min_interval(make_memory, clock: SettableClock) -> None:
    """A bulk load does not pay a pass over the user's memories every N calls: one tick per interval."""
    cfg = _tick_config(1)
    cfg["dream"]["schedule"]["tick_min_interval_s"] = 300
    m = make_memory(**cfg)
    for i in range(4):
        m.add(f"bulk memory number {i}", user_id="u")
    reports = m.store.get_state("tick:reports")
    assert len(reports) == 1
    clock.advance(seconds=299)
    m.add("still inside the interval", user_id="u")
    assert len(m.store.get_state("tick:reports")) == 1
    clock.advance(seconds=2)
    m.add("after the interval", user_id="u")
    assert len(m.store.get_state("tick:reports")) == 2
    assert m.store.get_state(COUNTER_KEY + "u")["count"] == 6
    m.tick(user_id="u")  # an explicit tick ignores the interval
    assert len(m.store.get_state("tick:reports")) == 3


def test_automatic_tick_counts_per_user_and_runs_in_that_partition(make_memory, clock: SettableClock) -> None:
    m = make_memory(**_tick_config(2))
    a = m.add("alpha fades", user_id="a").id
    b = m.add("beta fades", user_id="b").id
    clock.advance(hours=5)
    m.add("alpha again", user_id="a")  # a's second cycle: a's tick, b untouched
    recs = m.store.get([a, b])
    assert recs[a].status is Status.EXPIRED and recs[b].status is Status.ACTIVE
    assert m.store.get_state(COUNTER_KEY + "b")["count"] == 1
    anon = m.add("anonymous fades").id  # the anonymous partition (user_id None) has its own counter
    clock.advance(hours=5)
    m.add("anonymous again")
    assert m.store.get([anon])[anon].status is Status.EXPIRED
    assert m.store.get([b])[b].status is Status.ACTIVE
    # one add_many over two users is one cycle for each of them
    m.add_many([{"content": "for a", "user_id": "a"}, {"content": "for b", "user_id": "b"}])
    assert m.store.get([b])[b].status is Status.EXPIRED
    assert m.store.get_state(COUNTER_KEY + "a")["count"] == 3


def test_tick_counter_is_durable_across_memory_objects(make_memory, clock: SettableClock) -> None:
    first = make_memory(**_tick_config(3))
    faded = first.add("an old note", user_id="u").id
    first.add("another note", user_id="u")
    first.close()
    clock.advance(hours=5)
    second = make_memory(**_tick_config(3))  # a new process would see the same count
    second.add("the third ingestion", user_id="u")
    assert second.store.get([faded])[faded].status is Status.EXPIRED


def test_tick_every_zero_disables_the_automatic_tick(make_memory, clock: SettableClock) -> None:
    m = make_memory(**_tick_config(0))
    faded = m.add("never ticked", user_id="u").id
    clock.advance(hours=5)
    for i in range(6):
        m.add(f"more {i}", user_id="u")
    assert m.store.get([faded])[faded].status is Status.ACTIVE
    assert m.store.get_state(COUNTER_KEY + "u") is None and m.store.get_state("tick:last") is None
    assert m.tick(user_id="u")["steps"][0]["changed"] == 1  # the explicit tick still works


def test_observe_counts_extractions_not_buffered_turns(make_memory, clock: SettableClock) -> None:
    m = make_memory(**_tick_config(2))
    m.observe("ok", user_id="u", session_id="s")  # filtered as trivial: no cycle
    assert m.store.get_state(COUNTER_KEY + "u") is None
    m.observe("Remember that my passport expires in May 2027.", user_id="u", session_id="s")  # HIGH: extracts
    assert m.store.get_state(COUNTER_KEY + "u")["count"] == 1
    buffered = m.observe("Yesterday we walked through the botanical garden near the river", user_id="u", session_id="s")
    assert buffered[0].id is None and "buffered" in buffered[0].reason  # seed 004 smart buffer: no cycle
    assert m.store.get_state(COUNTER_KEY + "u")["count"] == 1
    m.end_session("s", user_id="u")  # flushes the buffered turn: an extraction
    assert m.store.get_state(COUNTER_KEY + "u")["count"] == 2
    assert m.store.get_state("tick:last") is not None


def test_a_failing_tick_never_fails_the_ingestion(
    make_memory, clock: SettableClock, caplog: pytest.LogCaptureFixture
) -> None:
    m = make_memory(**_tick_config(1, ["expire", "no-such-step"]))
    with caplog.at_level(logging.WARNING, logger="reverie.schedule"):
        res = m.add("still stored", user_id="u")
    assert res.id is not None and m.store.get([res.id])[res.id].content == "still stored"
    assert any("automatic tick" in r.getMessage() for r in caplog.records)
    assert m.store.get_state(COUNTER_KEY + "u")["count"] == 1


def test_tick_of_one_user_and_of_all(make_memory, clock: SettableClock) -> None:
    m = make_memory(**_tick_config(0))
    a = m.add("alpha", user_id="a").id
    b = m.add("beta", user_id="b").id
    clock.advance(hours=5)
    assert m.tick(user_id="a")["changed"] == 1
    assert m.store.get([b])[b].status is Status.ACTIVE
    assert m.tick()["changed"] == 1
    assert all(r.status is Status.EXPIRED for r in m.store.get([a, b]).values())
    assert all(r.layer is Layer.WORKING for r in m.store.get([a, b]).values())


# the CLI ---------------------------------------------------------------------------------------

runner = CliRunner()


@pytest.fixture
def cli_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("REVERIE_OPSLOG__PATH", str(tmp_path / "ops.jsonl"))
    monkeypatch.setenv("REVERIE_DREAM__SCHEDULE__TICK_STEPS", '["expire"]')
    db = str(tmp_path / "cli.db")
    assert runner.invoke(app, ["init", "--db", db]).exit_code == 0  # dream and tick never create a store
    return db


def test_cli_help_lists_the_schedule_commands() -> None:
    out = runner.invoke(app, ["--help"]).output
    assert "tick" in out and "simulate" in out
    dream_help = runner.invoke(app, ["dream", "--help"]).output
    for word in ("--every", "--max-runs", "SIGTERM", "--user"):
        assert word in dream_help


def test_cli_dream_every_runs_on_schedule_as_json_lines(cli_env: str) -> None:
    res = runner.invoke(
        app, ["dream", "--db", cli_env, "--every", "1s", "--max-runs", "2", "--steps", "decay,prune", "--json"]
    )
    assert res.exit_code == 0, res.output
    lines = [json.loads(line) for line in res.stdout.splitlines() if line.startswith("{")]
    assert len(lines) == 2
    assert all([s["name"] for s in r["steps"]] == ["decay", "prune"] for r in lines)
    assert lines[0]["owner"] != lines[1]["owner"]
    assert "stopped after 2 run(s)" in res.stderr


def test_cli_dream_every_refuses_bad_input(cli_env: str) -> None:
    for args, needle in (
        (["--every", "10"], "add a unit"),
        (["--every", "5 fortnights"], "unknown unit"),
        (["--max-runs", "2"], "--max-runs needs --every"),
        (["--every", "100ms"], "at least"),
    ):
        res = runner.invoke(app, ["dream", "--db", cli_env, *args])
        assert res.exit_code == 1, (args, res.output)
        assert needle in res.output, (args, res.output)


def test_cli_tick_prints_its_report(cli_env: str) -> None:
    res = runner.invoke(app, ["tick", "--db", cli_env, "--json"])
    assert res.exit_code == 0, res.output
    report = json.loads(res.stdout)
    assert report["kind"] == "tick" and [s["name"] for s in report["steps"]] == ["expire"]
    table = runner.invoke(app, ["tick", "--db", cli_env, "--user", "u"])
    assert table.exit_code == 0 and "expire" in table.output and "tick finished" in table.output


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_cli_dream_every_stops_cleanly_on_a_signal(tmp_path: Path, sig: signal.Signals) -> None:
    env = {**os.environ, "PYTHONPATH": str(SRC), "REVERIE_OPSLOG__PATH": str(tmp_path / "ops.jsonl")}
    subprocess.run(
        [sys.executable, "-m", "reverie.cli", "init", "--db", str(tmp_path / "d.db")],
        env=env,
        check=True,
        capture_output=True,
    )  # dream never creates a store
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "reverie.cli",
            "dream",
            "--db",
            str(tmp_path / "d.db"),
            "--every",
            "1h",
            "--steps",
            "decay",
            "--json",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline()  # the first run's report: the loop now waits an hour
        assert json.loads(first)["steps"][0]["name"] == "decay"
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, err
    assert "stopping after the current run" in err and "stopped after 1 run(s)" in err
    assert out.strip() == ""


def test_default_tick_promotes_before_it_expires(make_memory, clock: SettableClock) -> None:
    """A working memory that waited through a long gap becomes episodic, it does not expire (seed 000 order)."""
    m = make_memory(dream={"schedule": {"tick_every": 1}})
    first = m.add("the kickoff meeting is on the 3rd floor", user_id="u").id
    clock.advance(hours=6)  # working energy 1.0·exp(-0.5·6) = 0.05 < 0.1 expiry threshold
    m.add("a message after a long gap", user_id="u")
    rec = m.store.get([first])[first]
    assert (rec.status, rec.layer) == (Status.ACTIVE, Layer.EPISODIC)
