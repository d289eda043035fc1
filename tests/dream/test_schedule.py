"""The maintenance schedule: each job on its own interval (the three-tier energy design's
ConsolidationConfig: promotion every 10 minutes in transactions of 10, decay every 60 minutes in
transactions of 100, clustering every 60 minutes), between full dream cycles — on the settable clock."""

from __future__ import annotations

import itertools
import json
import threading
import time
from collections import Counter
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from reverie import Memory, SettableClock
from reverie.cli import app
from reverie.dream.schedule import BackgroundSchedule, JobSchedule, configured_jobs, run_jobs
from reverie.errors import ConfigError, InvalidInputError
from reverie.model import Layer, Status


def _simulate(schedule: JobSchedule, clock: SettableClock, hours: float) -> list[dict[str, Any]]:
    """Run the schedule's loop for ``hours`` of clock time; its waits move the settable clock."""
    end = clock() + timedelta(hours=hours)
    stop = threading.Event()
    reports: list[dict[str, Any]] = []

    def wait(seconds: float) -> None:
        if clock() + timedelta(seconds=seconds) > end:
            stop.set()
            return
        clock.advance(seconds=seconds)

    run_jobs(schedule, stop=stop, wait=wait, on_report=lambda r: reports.append({**r, "t": clock()}))
    return reports


def test_default_jobs_are_the_three_tier_design(mem: Memory) -> None:
    jobs = {j.name: j for j in configured_jobs(mem, cycle_every=None)}
    assert set(jobs) == {"promotion", "decay", "clustering"}
    assert (jobs["promotion"].steps, jobs["promotion"].every, jobs["promotion"].batch_size) == (
        ("promote",),
        timedelta(minutes=10),
        10,
    )
    assert (jobs["decay"].steps, jobs["decay"].every, jobs["decay"].batch_size) == (
        ("decay", "expire"),
        timedelta(minutes=60),
        100,
    )
    assert (jobs["clustering"].steps, jobs["clustering"].every) == (("cluster",), timedelta(minutes=60))
    # run order: the dream cycle's order of their steps
    assert [j.name for j in configured_jobs(mem, cycle_every=None)] == ["decay", "promotion", "clustering"]
    assert configured_jobs(mem, cycle_every=timedelta(days=1))[0].is_cycle


def test_each_job_runs_on_its_own_interval(make_memory, clock: SettableClock) -> None:
    m = make_memory()
    schedule = JobSchedule(m, configured_jobs(m, cycle_every=None))
    t0 = clock()
    assert [j.name for j in schedule.due()] == ["decay", "promotion", "clustering"]  # nothing ran yet
    first = schedule.run_due()
    assert [r["job"]["name"] for r in first] == ["decay", "promotion", "clustering"]
    assert schedule.due() == []
    clock.advance(minutes=9, seconds=59)
    assert schedule.due() == []
    clock.advance(seconds=1)
    assert [j.name for j in schedule.due()] == ["promotion"]
    schedule.run_due()
    clock.set(t0 + timedelta(minutes=60))
    assert [j.name for j in schedule.due()] == ["decay", "promotion", "clustering"]

    # two simulated hours of the loop: promotion 12 more times, decay and clustering twice
    clock.set(t0 + timedelta(minutes=60))
    reports = _simulate(schedule, clock, hours=2)
    runs = Counter(r["job"]["name"] for r in reports)
    assert runs == {"promotion": 13, "decay": 3, "clustering": 3}
    promo_times = [r["t"] for r in reports if r["job"]["name"] == "promotion"]
    assert all(b - a == timedelta(minutes=10) for a, b in itertools.pairwise(promo_times))
    assert all(r["kind"] == f"job:{r['job']['name']}" for r in reports)
    assert len(m.store.get_state("job:promotion:reports")) == 2 + 13  # kept apart from the dream reports


def test_the_full_cycle_covers_the_jobs_it_ran(make_memory, clock: SettableClock) -> None:
    m = make_memory()
    schedule = JobSchedule(m, configured_jobs(m, cycle_every=timedelta(minutes=30)))
    reports = _simulate(schedule, clock, hours=1)
    # cycle at 0, 30, 60; promotion between them at 10, 20, 40, 50; decay and clustering never alone
    assert [(r["job"]["name"], int((r["t"] - reports[0]["t"]).total_seconds() // 60)) for r in reports] == [
        ("cycle", 0),
        ("promotion", 10),
        ("promotion", 20),
        ("cycle", 30),
        ("promotion", 40),
        ("promotion", 50),
        ("cycle", 60),
    ]
    cycle = reports[0]
    assert cycle["kind"] == "dream" and [s["name"] for s in cycle["steps"]] == list(m.settings.dream.steps)
    assert m.dream_reports()[0]["job"]["name"] == "cycle"


def test_any_run_counts_for_the_schedule_even_in_another_process(make_memory, clock: SettableClock) -> None:
    m = make_memory()
    m.dream(steps=["decay", "expire"])  # e.g. a manual run, or another process
    status = {s["name"]: s for s in m.maintenance_status(cycle_every="1d")}
    assert status["decay"]["last_run"] == clock().isoformat()
    assert status["decay"]["next_run"] == (clock() + timedelta(hours=1)).isoformat()
    assert status["promotion"]["last_run"] is None and status["promotion"]["next_run"] == "now"
    assert status["cycle"]["last_run"] is None
    other = make_memory()  # a second Memory on the same store sees the same schedule
    due = JobSchedule(other, configured_jobs(other, cycle_every=None)).due()
    assert [j.name for j in due] == ["promotion", "clustering"]
    # a run for one user counts for that user's schedule, not for every user's
    m.dream(steps=["promote"], user_id="u")
    assert [j.name for j in JobSchedule(m, configured_jobs(m, cycle_every=None), user_id="u").due()] == ["clustering"]
    assert "promotion" in [j.name for j in JobSchedule(m, configured_jobs(m, cycle_every=None)).due()]


def test_memory_maintain_runs_what_is_due(make_memory, clock: SettableClock) -> None:
    m = make_memory()
    first = m.maintain(cycle_every="1d")
    assert [r["job"]["name"] for r in first] == ["cycle"]
    assert m.maintain(cycle_every="1d") == []
    clock.advance(minutes=10)
    assert [r["job"]["name"] for r in m.maintain(cycle_every="1d")] == ["promotion"]
    clock.advance(minutes=50)
    assert [r["job"]["name"] for r in m.maintain(cycle_every="1d")] == ["decay", "promotion", "clustering"]
    clock.advance(days=1)
    assert [r["job"]["name"] for r in m.maintain()] == ["cycle"]  # dream.schedule.cycle_every_hours = 24
    with pytest.raises(InvalidInputError, match="unit"):
        m.maintain(cycle_every="10")
    with pytest.raises(InvalidInputError):
        m.maintain(cycle_every=5)


def test_the_promotion_job_writes_in_transactions_of_ten(make_memory, clock: SettableClock) -> None:
    m = make_memory()
    ids = [r.id for r in m.add_many([f"note number {i} about topic {i}" for i in range(25)], user_id="u", infer=False)]
    clock.advance(hours=1)  # working → episodic after 30 minutes
    schedule = JobSchedule(m, configured_jobs(m, cycle_every=None))
    (promo,) = [schedule.run(j) for j in schedule.jobs if j.name == "promotion"]
    step = promo["steps"][0]
    assert step["changed"] == 25 and step["details"]["batches"] == 3  # 10 + 10 + 5
    assert all(r.layer is Layer.EPISODIC for r in m.store.get(ids).values())
    (decay,) = [schedule.run(j) for j in schedule.jobs if j.name == "decay"]
    assert decay["steps"][0]["details"]["batches"] == 1  # 25 memories, batches of 100
    full = m.dream(steps=["decay"])  # the full cycle keeps dream.batch_size (500)
    assert full["steps"][0]["details"]["batches"] == 1


def test_job_settings_are_validated(make_memory) -> None:
    with pytest.raises(ConfigError, match="every_minutes"):
        make_memory(dream={"schedule": {"jobs": {"x": {"steps": ["promote"], "every_minutes": 0}}}})
    with pytest.raises(ConfigError, match="distinct"):
        make_memory(dream={"schedule": {"jobs": {"x": {"steps": ["promote", "promote"], "every_minutes": 5}}}})
    with pytest.raises(ConfigError, match="full cycle"):
        make_memory(dream={"schedule": {"jobs": {"cycle": {"steps": ["promote"], "every_minutes": 5}}}})
    m = make_memory(dream={"schedule": {"jobs": {"x": {"steps": ["teleport"], "every_minutes": 5}}}})
    with pytest.raises(InvalidInputError, match="teleport"):
        m.maintain()
    empty = make_memory(dream={"schedule": {"jobs": {}}})
    assert [j.name for j in configured_jobs(empty, cycle_every=timedelta(hours=1))] == ["cycle"]
    with pytest.raises(InvalidInputError):
        JobSchedule(empty, configured_jobs(empty, cycle_every=None))


def test_the_server_schedule_runs_in_the_background_and_stops(tmp_path: Path) -> None:
    from reverie.embed.testing import HashEmbedder

    cfg = {
        "opslog": {"enabled": False},
        "dream": {
            "schedule": {
                "jobs": {"promotion": {"steps": ["promote"], "every_minutes": 0.004}},
                "min_every_s": 0.05,
                "server_jobs": True,
            }
        },
    }
    with Memory(tmp_path / "bg.db", config=cfg, embedder=HashEmbedder(64)) as m:
        m.add("a working memory", user_id="u", infer=False)
        schedule = JobSchedule(m, configured_jobs(m, cycle_every=timedelta(hours=1)))
        bg = BackgroundSchedule(schedule).start()
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and len(m.store.get_state("job:promotion:reports") or []) < 2:
            time.sleep(0.05)
        bg.stop(timeout=10)
        assert not bg.alive and bg.error is None
        assert m.dream_reports()[0]["job"]["name"] == "cycle"  # the full cycle first
        assert len(m.store.get_state("job:promotion:reports")) >= 2


runner = CliRunner()


def test_cli_dream_every_runs_the_cycle_and_the_jobs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REVERIE_OPSLOG__PATH", str(tmp_path / "ops.jsonl"))
    db = str(tmp_path / "cli.db")
    assert runner.invoke(app, ["init", "--db", db]).exit_code == 0
    res = runner.invoke(app, ["dream", "--db", db, "--every", "1s", "--max-runs", "2", "--json"])
    assert res.exit_code == 0, res.output
    lines = [json.loads(line) for line in res.stdout.splitlines() if line.startswith("{")]
    assert [r["job"]["name"] for r in lines] == ["cycle", "cycle"]  # the jobs are covered by a 1 s cycle
    assert "promotion every 10m" in res.stderr and "stopped after 2 run(s)" in res.stderr
    status = runner.invoke(app, ["maintain", "--db", db, "--status", "--json"])
    assert status.exit_code == 0, status.output
    rows = {r["name"]: r for r in json.loads(status.stdout)}
    assert rows["promotion"]["every"] == "10m" and rows["promotion"]["batch_size"] == 10
    assert rows["decay"]["last_run"] is not None
    table = runner.invoke(app, ["maintain", "--db", db, "--status"])
    assert table.exit_code == 0 and "clustering" in table.output
    due = runner.invoke(app, ["maintain", "--db", db])
    assert due.exit_code == 0 and "nothing due" in due.output
    bad = runner.invoke(app, ["maintain", "--db", db, "--cycle-every", "10"])
    assert bad.exit_code == 1 and "unit" in bad.output
    assert "--no-jobs" in runner.invoke(app, ["dream", "--help"]).output


def test_dream_every_no_jobs_keeps_the_plain_loop(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REVERIE_OPSLOG__PATH", str(tmp_path / "ops.jsonl"))
    db = str(tmp_path / "cli.db")
    assert runner.invoke(app, ["init", "--db", db]).exit_code == 0
    res = runner.invoke(app, ["dream", "--db", db, "--every", "1s", "--max-runs", "1", "--no-jobs", "--json"])
    assert res.exit_code == 0, res.output
    (line,) = [json.loads(x) for x in res.stdout.splitlines() if x.startswith("{")]
    assert "job" not in line and line["kind"] == "dream"


def test_expiry_follows_the_decay_job(make_memory, clock: SettableClock) -> None:
    """A working memory left alone expires at the first decay job after its energy fell below 0.1 (seed 000
    decay + expiry), without any full cycle."""
    m = make_memory(
        dream={"schedule": {"jobs": {"decay": {"steps": ["decay", "expire"], "every_minutes": 60, "batch_size": 100}}}}
    )
    rid = m.add("a passing thought", user_id="u", infer=False).id
    schedule = JobSchedule(m, configured_jobs(m, cycle_every=None))
    reports = _simulate(schedule, clock, hours=6)
    assert len(reports) == 7  # at 0, 1, …, 6 hours
    expired_at = [r["t"] for r in reports if r["steps"][1]["changed"]]
    assert len(expired_at) == 1 and expired_at[0] - reports[0]["t"] == timedelta(hours=5)  # 0.5·5 > ln 10
    assert m.store.get([rid])[rid].status is Status.EXPIRED


def test_know_how_lands_in_the_procedural_layer_by_itself(make_memory, clock: SettableClock) -> None:
    """Through Memory, on both backends: the dream's promotion puts an instruction, a decision and a rule
    into the procedural layer, a plain fact into the semantic one; the history says why."""
    m = make_memory()
    texts = {
        "howto": "To release the app, first run make dist and upload the wheel",
        "rule": "Never use the production database for integration tests",
        "fact": "The staging server runs in the Frankfurt region",
    }
    ids = {k: m.add(v, user_id="u", infer=False).id for k, v in texts.items()}
    decision = m.add("We decided to keep SQLite as the default store", user_id="u").id  # the write path
    assert m.store.get([decision])[decision].category == "decision"
    for _ in range(3):  # seed 001 rule 1: accessed three times → long-term knowledge
        for mid in [*ids.values(), decision]:
            m.get(mid)
    clock.advance(hours=1)
    m.dream(steps=["promote"])  # working → episodic
    m.dream(steps=["promote"])  # episodic → long-term
    layers = {k: m.store.get([v])[v].layer for k, v in ids.items()}
    assert layers == {"howto": Layer.PROCEDURAL, "rule": Layer.PROCEDURAL, "fact": Layer.SEMANTIC}
    assert m.store.get([decision])[decision].layer is Layer.PROCEDURAL
    last = m.history(ids["howto"])[-1]
    assert last.event == "promoted" and "procedural: how-to or rule" in last.reason
    assert "category decision" in m.history(decision)[-1].reason
