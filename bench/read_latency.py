"""Focused A/B of read-path settings: ``Memory.search`` latency at N memories in one scope.

The store is ``scale.py``'s synthetic data (template sentences, stand-in vectors; see
bench/README.md), built once at ``--db`` and reused by later runs. ONE ``Memory`` serves every
configuration — one store, one vector index, one model — and the read pipeline is swapped per
query, in rotating order, so that machine load, page cache and index state fall alike on every
configuration (on a shared machine, separate runs are not comparable). Every timed query is a
distinct text embedded by the uncached local model, so the query embedding is always included.

Usage::

    PYTHONPATH=src .venv/bin/python bench/read_latency.py --db /tmp/reverie-100k.db \\
        --configs '{"defaults": {}, "hyde-2": {"hyde_variants": 2}}'
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
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


def run(db: Path, configs: dict[str, dict[str, Any]], *, queries: int, rounds: int, k: int) -> dict[str, Any]:
    from reverie import Memory
    from reverie.config import Settings
    from reverie.embed import make_provider
    from reverie.read.pipeline import ReadPipeline

    settings = Settings.load()
    mem = Memory(str(db), config=memory_config(db.parent), embedder=make_provider(settings.embedding))
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
    doc.update(run(args.db, doc["configs"], queries=args.queries, rounds=args.rounds, k=args.k))
    write_json(doc, args.out)
    log = console()
    for name, st in doc["latency"].items():
        log.print(f"{name:24s} p50 {st['p50_ms']:7.2f} ms  p95 {st['p95_ms']:7.2f} ms  n {st['n']}")
    log.print(f"load average during the run: {doc['load_average']}")
    return doc


if __name__ == "__main__":
    main(sys.argv[1:])
