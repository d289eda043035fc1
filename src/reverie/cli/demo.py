"""``demo`` and ``simulate``: a guided tour and a simulated year of memory dynamics."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
import typer.core

from reverie.cli.common import JsonOpt, _fail, _print_json, _progress, _say, _target, app
from reverie.errors import ReverieError


@app.command()
def demo(
    db: Annotated[
        str | None, typer.Option("--db", "-d", metavar="PATH|URL", help="Where to store (default: a temporary file).")
    ] = None,
    k: Annotated[int, typer.Option("--k", "-k", metavar="N", help="Results considered per question.")] = 3,
    months: Annotated[
        int, typer.Option(min=0, max=24, metavar="N", help="Months of simulated life after the conversation.")
    ] = 6,
    explain: Annotated[bool, typer.Option("--explain", "-e", help="Show how each answer's score was made.")] = False,
) -> None:
    """The main job, end to end: remember a sample conversation shipped with reverie, answer its
    questions, then live six months on a simulated clock (a dream cycle every night) and show what
    the memory became and what it still answers."""
    import tempfile

    from reverie._demo import run_demo

    tmp = None
    if db is None:
        tmp = tempfile.TemporaryDirectory(prefix="reverie-demo-")
        db = str(Path(tmp.name) / "demo.db")
    try:
        run_demo(_target(db, create=True), k=k, months=months, explain=explain, keep=tmp is None)
    except ReverieError as exc:
        _fail(exc)
    finally:
        if tmp is not None:
            tmp.cleanup()


@app.command()
def simulate(
    days: Annotated[int, typer.Option(min=1, max=3650, metavar="N", help="Days of agent life to simulate.")] = 180,
    out: Annotated[
        Path,
        typer.Option(
            metavar="DIR",
            help="Directory for simulation.png, summary.json, timeline.json and the store (simulation.db).",
        ),
    ] = Path("reverie-simulation"),
    seed: Annotated[
        int, typer.Option(metavar="N", help="Seed of the synthetic workload (same seed, same workload).")
    ] = 0,
    embedder: Annotated[
        str, typer.Option(metavar="NAME", help="hash (fast, word overlap) or local (all-MiniLM-L6-v2).")
    ] = "hash",
    db: Annotated[
        str | None,
        typer.Option(
            "--db",
            "-d",
            metavar="PATH|URL",
            help="An empty store to use instead of OUT/simulation.db (e.g. a postgresql:// URL).",
        ),
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """Simulate months of a synthetic agent's life on a settable clock (sessions, searches, a nightly
    dream cycle) and write a PNG of the memories per layer and status over time, plus a summary of
    what was promoted, consolidated and forgotten. Needs matplotlib: pip install '.[plot]' (reverie's plot extra)."""
    from reverie import simulate as sim

    try:
        cfg = sim.SimulationConfig(days=days, seed=seed)
        with _progress() as progress:
            task = progress.add_task(f"simulating {days} days", total=days)
            summary = sim.simulate(
                out,
                cfg=cfg,
                target=db,
                embedder=embedder,
                progress=lambda done, _total: progress.update(task, completed=done),
            )
    except ReverieError as exc:
        _fail(exc)
    if as_json:
        _print_json(summary)
        return
    for line in sim.summary_lines(summary):
        _say(line)
    _say(f"plot: {summary['files']['plot']}  summary: {summary['files']['summary']}")
