"""Write cost against a user's history, and the cost of forgetting.

Three numbers, each measured in one run on fresh stores:

* **add latency vs relations** — ``Memory.add`` (the default write path, ``infer=True``) of texts that
  each relate to stored memories (so every add stores relations and runs seed 001's relation-pruning
  check), in an empty store and in a store whose user already has ``--relations`` ``supersedes``
  relations (never prunable: before the fix every add past 1,000 of them reloaded all of the user's
  relations). Target: the median at 6,000 relations within 1.5× of the empty store.
* **forget latency** — ``Memory.forget`` of one memory in a store of ``--forget-size`` memories (it
  merges the SQLite full-text index so that the words are gone from the file, and truncates the WAL).
* **bulk load with secure_delete** — ``add_many`` with precomputed vectors, SQLite's
  ``secure_delete`` on (the default) against off, in one process (A/B).

Usage::

    PYTHONPATH=src .venv/bin/python bench/history.py [--backend sqlite|postgres|both] [--embedder hash|local]
        [--relations 6000] [--adds 200] [--forget-size 100000] [--out bench/results/history.json] [--quiet]
"""

from __future__ import annotations

import argparse
import random
import sqlite3
import sys
import tempfile
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _benchlib import (
    RESULTS_DIR,
    PgServer,
    Timer,
    console,
    finish,
    fmt,
    latency_stats,
    load_average,
    machine_info,
    make_bench_embedder,
    memory_config,
    now_iso,
)

NAMES = ["Maya", "Omar", "Lena", "Ravi", "Ines", "Tomas", "Yuki", "Ada", "Noor", "Felix"]
PLACES = ["museum", "harbour", "library", "bakery", "stadium", "garden", "market", "cinema", "gallery", "lake"]
VERBS = ["visited", "photographed", "described", "painted", "recommended", "reviewed"]
FRIENDS = ["Bruno", "Clara", "Dmitri", "Esme", "Goran", "Hana", "Ivo", "Jana", "Kofi", "Lior", "Mira", "Nils"]
ACTIVITIES = [
    "sketching birds",
    "eating ramen",
    "arguing about chess",
    "planning a wedding",
    "fixing a bicycle",
    "learning Portuguese",
    "training for a marathon",
    "reading poetry",
    "repairing a drone",
    "baking bread",
]
SEASONS = ["spring", "summer", "autumn", "winter"]


def texts(n: int, seed: int) -> list[str]:
    """Distinct facts that share words with each other: with the local model most adds CREATE a memory
    and store relations to earlier ones (the path whose cost the relation-pruning check adds to)."""
    rng = random.Random(seed)
    return [
        f"{rng.choice(NAMES)} {rng.choice(VERBS)} the {rng.choice(PLACES)} with {rng.choice(FRIENDS)} while "
        f"{rng.choice(ACTIVITIES)} in {rng.choice(SEASONS)} {rng.randrange(1990, 2025)}"
        for _ in range(n)
    ]


def _memory(target: str, workdir: Path, embedder: Any) -> Any:
    from reverie import Memory

    # the maintenance tick is off: the add itself is timed (it is measured separately in bench/dream.py)
    return Memory(target, embedder=embedder, config=memory_config(workdir, dream={"schedule": {"tick_every": 0}}))


def add_latency(target: str, workdir: Path, embedder: Any, *, relations: int, adds: int) -> dict[str, Any]:
    """Median add latency for a user with ``relations`` supersedes relations already stored."""
    from reverie.model import Relation, RelationType

    with _memory(target, workdir, embedder) as mem:
        base = mem.add_many(texts(60, 1), user_id="u", infer=False)  # something to relate to
        if relations:
            # a long chain of corrections of one fact, on other words than the timed adds: each version
            # superseded the one before (status superseded, a supersedes relation)
            chain = [f"Noor's locker number at the climbing gym is now {i:05d}" for i in range(relations + 1)]
            ids = [r.id for r in mem.add_many(chain, user_id="u", infer=False)]
            mem.store.update_many([(mid, {"status": "superseded"}) for mid in ids[:-1]])
            rels = [Relation(ids[i + 1], ids[i], RelationType.SUPERSEDES) for i in range(relations)]
            for start in range(0, len(rels), 1000):
                mem.store.add_relations(rels[start : start + 1000])
        lat = []
        before = mem.stats(user_id="u")["relations"]
        for text in texts(adds, 3):
            with Timer() as t:
                mem.add(text, user_id="u")
            lat.append(t.seconds)
        return {
            "relations_before": relations,
            "memories_before": len(base) + (relations + 1 if relations else 0),
            "relations_added": mem.stats(user_id="u")["relations"] - before,
            "add_ms": latency_stats(lat),
        }


def forget_latency(target: str, workdir: Path, embedder: Any, *, size: int, runs: int = 5) -> dict[str, Any]:
    from reverie.model import new_id

    rng = np.random.default_rng(0)
    with _memory(target, workdir, embedder) as mem:
        pool = texts(size, 4)
        with Timer() as load:
            for start in range(0, size, 10_000):
                chunk = pool[start : start + 10_000]
                vecs = rng.standard_normal((len(chunk), embedder.dim)).astype(np.float32)
                mem.add_many([{"content": c, "id": new_id()} for c in chunk], user_id="u", infer=False, vectors=vecs)
        victims = [r.id for r in mem.list(user_id="u", limit=runs)]
        lat = []
        for mid in victims:
            with Timer() as t:
                mem.forget(mid)
            lat.append(t.seconds)
        return {"memories": size, "load_s": round(load.seconds, 2), "forget_ms": latency_stats(lat)}


def secure_delete_ab(workdir: Path, dim: int, *, n: int = 50_000, rounds: int = 3) -> dict[str, Any]:
    """add_many throughput with SQLite secure_delete on (the default) and off, alternating in one process."""
    from reverie import Memory
    from reverie.embed.testing import HashEmbedder

    rng = np.random.default_rng(1)
    pool = texts(n, 5)
    vecs = rng.standard_normal((n, dim)).astype(np.float32)
    rates: dict[str, list[float]] = {"on": [], "off": []}
    for r in range(rounds):
        for mode in ("on", "off"):
            path = workdir / f"sd-{mode}-{r}.db"
            with Memory(
                path, embedder=HashEmbedder(dim), config=memory_config(workdir, dream={"schedule": {"tick_every": 0}})
            ) as mem:
                if mode == "off":
                    mem.store._conn.execute("PRAGMA secure_delete = OFF")
                with Timer() as t:
                    mem.add_many(pool, user_id="u", infer=False, vectors=vecs)
                # and the dream's field updates: every memory rewritten once
                with Timer() as u:
                    for batch in mem.store.scan(mem._scope_filter("u", None, None), batch_size=2000):
                        mem.store.update_many([(rec.id, {"energy": 0.5}) for rec in batch])
            rates[mode].append(n / t.seconds)
            rates[f"{mode}_update"] = [*rates.get(f"{mode}_update", []), n / u.seconds]
    return {
        "memories": n,
        "sqlite": sqlite3.sqlite_version,
        **{k: {"median": float(np.median(v)), "runs": [round(x) for x in v]} for k, v in rates.items()},
    }


def main(argv: list[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--backend", choices=["sqlite", "postgres", "both"], default="sqlite")
    ap.add_argument("--embedder", choices=["hash", "local"], default="local")
    ap.add_argument("--relations", type=int, default=6000)
    ap.add_argument("--adds", type=int, default=200)
    ap.add_argument("--forget-size", type=int, default=100_000)
    ap.add_argument("--no-ab", action="store_true", help="skip the secure_delete A/B")
    ap.add_argument("--out", type=Path, default=RESULTS_DIR / "history.json")
    ap.add_argument("--quiet", action="store_true")
    args = ap.parse_args(argv)
    embedder = make_bench_embedder(args.embedder)
    backends = ["sqlite", "postgres"] if args.backend == "both" else [args.backend]
    doc: dict[str, Any] = {
        "at": now_iso(),
        "machine": machine_info(),
        "load_average": load_average(),
        "embedder": args.embedder,
        "results": {},
    }
    with ExitStack() as stack:
        pg = PgServer() if "postgres" in backends else None
        for backend in backends:
            out: dict[str, Any] = {}
            for label, rels in (("empty", 0), ("history", args.relations)):
                workdir = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="reverie-hist-")))
                target = (
                    stack.enter_context(pg.database())
                    if backend == "postgres" and pg is not None
                    else str(workdir / "m.db")
                )
                out[label] = add_latency(target, workdir, embedder, relations=rels, adds=args.adds)
            out["ratio_p50"] = out["history"]["add_ms"]["p50_ms"] / out["empty"]["add_ms"]["p50_ms"]
            out["ratio_mean"] = out["history"]["add_ms"]["mean_ms"] / out["empty"]["add_ms"]["mean_ms"]
            if args.forget_size:
                workdir = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="reverie-forget-")))
                target = (
                    stack.enter_context(pg.database())
                    if backend == "postgres" and pg is not None
                    else str(workdir / "m.db")
                )
                out["forget"] = forget_latency(target, workdir, embedder, size=args.forget_size)
            doc["results"][backend] = out
        if not args.no_ab and "sqlite" in backends:
            workdir = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="reverie-sd-")))
            doc["secure_delete_ab"] = secure_delete_ab(workdir, embedder.dim)
    return finish(doc, args.out, quiet=args.quiet, show=show)


def show(doc: dict[str, Any]) -> None:
    from rich.table import Table

    table = Table(title=f"add latency vs a user's relations ({doc['embedder']} embedder)")
    for col in (
        "backend",
        "store",
        "relations",
        "memories",
        "added",
        "add p50 ms",
        "p95 ms",
        "mean ms",
        "ratio p50",
        "ratio mean",
    ):
        table.add_column(col)
    for backend, res in doc["results"].items():
        for label in ("empty", "history"):
            r = res[label]
            hist = label == "history"
            table.add_row(
                backend,
                label,
                str(r["relations_before"]),
                str(r["memories_before"]),
                str(r["relations_added"]),
                fmt(r["add_ms"]["p50_ms"], 2),
                fmt(r["add_ms"]["p95_ms"], 2),
                fmt(r["add_ms"]["mean_ms"], 2),
                fmt(res["ratio_p50"], 2) if hist else "",
                fmt(res["ratio_mean"], 2) if hist else "",
            )
        if "forget" in res:
            f = res["forget"]
            console().print(f"{backend}: forget p50 {fmt(f['forget_ms']['p50_ms'], 1)} ms at {f['memories']} memories")
    console().print(table)
    ab = doc.get("secure_delete_ab")
    if ab:
        console().print(
            f"secure_delete A/B, add_many with vectors ({ab['memories']} memories): on "
            f"{ab['on']['median']:.0f}/s, off {ab['off']['median']:.0f}/s; update_many on "
            f"{ab['on_update']['median']:.0f}/s, off {ab['off_update']['median']:.0f}/s"
        )


if __name__ == "__main__":
    main()
