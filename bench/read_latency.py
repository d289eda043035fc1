"""Focused A/B of read-path settings: ``Memory.search`` latency at N memories in one scope.

The store is ``scale.py``'s synthetic data (template sentences, stand-in vectors; see
bench/README.md), built once at ``--db`` and reused by later runs. ONE ``Memory`` serves every
configuration — one store, one vector index, one model — and the read pipeline is swapped per
query, in rotating order, so that machine load, page cache and index state fall alike on every
configuration (on a shared machine, separate runs are not comparable). Every timed query is a
distinct text embedded by the uncached local model, so the query embedding is always included.

With ``--after-dream DAYS`` the searches run on a copy of the store after one full dream run that many days
after its newest memory, at that time: the state the lifecycle leaves a store in when it is left alone with
``reverie dream`` on a schedule (most memories dormant, quantised and in the cold store, some consolidated),
which the default search (``read.cold_search = "always"``) reads on every query.

Usage::

    PYTHONPATH=src .venv/bin/python bench/read_latency.py --db /tmp/reverie-100k.db \\
        --configs '{"defaults": {}, "hyde-2": {"hyde_variants": 2}}'
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from collections.abc import Sequence
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import scale
from _benchlib import (
    RESULTS_DIR,
    Timer,
    console,
    latency_stats,
    load_average,
    machine_info,
    memory_config,
    now_iso,
    write_json,
)


def build(db: Path, size: int, workdir: Path) -> float:
    """Load ``size`` synthetic memories into one scope and build the vector index; returns seconds."""
    from reverie import Memory
    from reverie.config import Settings
    from reverie.embed import make_embedder

    protos = scale.Prototypes(4000, seed=7)
    protos.embed(make_embedder(Settings.load().embedding), RESULTS_DIR / "cache")
    with Timer() as t, Memory(str(db), config=memory_config(workdir)) as mem:
        for texts, vecs in scale.bulk_batches(protos, size, 10_000, 7):
            mem.add_many(texts, user_id=scale.SCOPE, vectors=vecs, infer=False, batch_size=500)
        mem.search("build the index", user_id=scale.SCOPE, k=10)
    return t.seconds


def dreamed(db: Path, days: int) -> tuple[Path, datetime, dict[str, Any]]:
    """A copy of the store at ``db`` after one full dream run ``days`` after its newest memory, as a user's
    store looks after being left alone that long with ``reverie dream`` on a schedule (built once, reused):
    its path, the clock's time and what the dream did."""
    from reverie import Memory, SettableClock, Status, StoreTier

    out = db.with_name(f"{db.stem}.dream{days}d{db.suffix}")
    info_path = out.with_name(out.name + ".json")
    if out.exists() and info_path.exists():
        info = json.loads(info_path.read_text(encoding="utf-8"))
        return out, datetime.fromisoformat(info["at"]), info
    for suffix in ("", "-wal", "-shm", ".ann"):  # a copy left by an interrupted run is replaced whole
        src, dst = Path(f"{db}{suffix}"), Path(f"{out}{suffix}")
        if dst.is_dir():
            shutil.rmtree(dst)
        elif dst.exists():
            dst.unlink()
        if src.is_dir():
            shutil.copytree(src, dst)
        elif src.exists():
            shutil.copy2(src, dst)
    with Memory(str(out), config=memory_config(out.parent)) as mem:
        newest = mem.list(user_id=scale.SCOPE, limit=1, filters={"status": list(Status)})[0]
        at = newest.created_at + timedelta(days=days)
    clock = SettableClock(at)
    with Memory(str(out), config=memory_config(out.parent), clock=clock) as mem, Timer() as t:
        report = mem.dream(user_id=scale.SCOPE)
    with Memory(str(out), config=memory_config(out.parent), clock=clock) as mem:
        composition = {
            f"{store.value} {status.value}": n
            for store in StoreTier
            for status in Status
            if (n := mem.count(user_id=scale.SCOPE, filters={"store": [store.value], "status": [status.value]}))
        }
    info = {
        "at": at.isoformat(),
        "days": days,
        "dream_s": round(t.seconds, 1),
        "changed": {step["name"]: step["changed"] for step in report["steps"] if step["changed"]},
        "composition": composition,
    }
    info_path.write_text(json.dumps(info, indent=2), encoding="utf-8")
    return out, at, info


def run(
    db: Path,
    configs: dict[str, dict[str, Any]],
    *,
    queries: int,
    rounds: int,
    k: int,
    at: datetime | None = None,
) -> dict[str, Any]:
    from reverie import Memory, SettableClock
    from reverie.config import Settings
    from reverie.embed import make_provider
    from reverie.read.pipeline import ReadPipeline

    settings = Settings.load()
    clock = SettableClock(at) if at is not None else None
    mem = Memory(str(db), config=memory_config(db.parent), embedder=make_provider(settings.embedding), clock=clock)
    try:
        pipes = {
            name: ReadPipeline(
                mem.store,
                mem.embedder,
                mem.settings.model_copy(update={"read": mem.settings.read.model_copy(update=read)}),
            )
            for name, read in configs.items()
        }
        texts = scale.make_queries(queries + 5, seed=11)
        for q in texts[:5]:
            mem.search(q, user_id=scale.SCOPE, k=k)
        lat: dict[str, list[float]] = {name: [] for name in pipes}
        load = [load_average()]
        for r in range(rounds):
            for i, q in enumerate(texts[5:]):
                names = list(pipes)
                names = names[i % len(names) :] + names[: i % len(names)]
                for j, name in enumerate(names):
                    mem.__dict__["_read_pipeline"] = pipes[name]  # the Memory's read pipeline, swapped
                    query = f"{q}{' ' * (r + 1)}{'.' * j}"  # distinct text: never an embedding-cache hit
                    with Timer() as t:
                        mem.search(query, user_id=scale.SCOPE, k=k)
                    lat[name].append(t.seconds)
            load.append(load_average())
    finally:
        mem.close()
    return {"latency": {name: latency_stats(v) for name, v in lat.items()}, "load_average": load}


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--db", type=Path, required=True, help="SQLite file; built when missing")
    p.add_argument("--size", type=int, default=100_000)
    p.add_argument("--configs", default='{"defaults": {}}', help="JSON: name -> read settings")
    p.add_argument("--queries", type=int, default=150)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--k", type=int, default=10)
    p.add_argument(
        "--after-dream",
        type=int,
        metavar="DAYS",
        help="search a copy of the store after one full dream run DAYS days after its newest memory (what the "
        "lifecycle makes of a store left alone that long: most memories dormant, quantised and in the cold store, "
        "some consolidated), built beside --db once and reused",
    )
    p.add_argument("--out", type=Path, default=RESULTS_DIR / "read_latency.json")
    args = p.parse_args(argv)
    doc: dict[str, Any] = {
        "benchmark": "read-latency",
        "date": now_iso(),
        "machine": machine_info(),
        "size": args.size,
        "k": args.k,
        "configs": json.loads(args.configs),
    }
    if not args.db.exists():
        doc["build_s"] = round(build(args.db, args.size, args.db.parent), 1)
    db, at = args.db, None
    if args.after_dream is not None:
        db, at, doc["after_dream"] = dreamed(args.db, args.after_dream)
    doc.update(run(db, doc["configs"], queries=args.queries, rounds=args.rounds, k=args.k, at=at))
    write_json(doc, args.out)
    log = console()
    for name, st in doc["latency"].items():
        log.print(f"{name:24s} p50 {st['p50_ms']:7.2f} ms  p95 {st['p95_ms']:7.2f} ms  n {st['n']}")
    if "after_dream" in doc:
        log.print(f"after one dream {args.after_dream} days on: {doc['after_dream']['composition']}")
    log.print(f"load average during the run: {doc['load_average']}")
    return doc


if __name__ == "__main__":
    main(sys.argv[1:])
