"""Dream-cycle benchmark: one full default dream cycle over N memories in ONE scope (heuristic paths).

For each size N a fresh store receives N memories of one user whose ages, accesses, layers,
strengths, importance, emotion and pins are spread the way months of use leave them (so that every
step finds work: working memories to expire or promote, fading episodic groups to consolidate,
idle ones to forget or archive, cold ones to quantize). Then the whole default dream cycle runs
once (``Memory.dream()``, no LLM configured: every step takes its heuristic path), and:

* total seconds and seconds per step, what each step changed and examined;
* a second cycle right after (the steady state: little left to do);
* the log-log slope of time against N between consecutive sizes, total and per step, against
  the n·log n slope between the same sizes (the promise: cost grows no faster than n·log n).

Data (honest description, also in the JSON): texts and vectors come from ``bench/scale.py``'s
generator (template sentences; each memory a variant of one of ``--prototypes`` prototypes, its
vector a noisy mixture of two real prototype embeddings), so near-duplicates and groups of similar
memories exist as they do in real use. The record fields are drawn with a fixed seed; see
``make_records``. Loading (``Memory.restore``) is not timed.

Usage::

    PYTHONPATH=src .venv/bin/python bench/dream.py --sizes 10000,100000
    PYTHONPATH=src .venv/bin/python bench/dream.py --sizes 10000,100000,1000000 --with-1m
"""

from __future__ import annotations

import argparse
import itertools
import math
import random
import sys
import tempfile
from collections.abc import Sequence
from contextlib import ExitStack
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np
from _benchlib import (
    RESULTS_DIR,
    PgServer,
    Timer,
    console,
    finish,
    fmt,
    load_average,
    machine_info,
    make_bench_embedder,
    memory_config,
    now_iso,
    peak_rss_mb,
    rss_mb,
)
from scale import TEMPLATES, Prototypes, bulk_batches

SCOPE = "bench-user"
NOW = datetime(2025, 7, 1, 12, 0, tzinfo=UTC)
ONE_MILLION = 1_000_000

#: category of each scale.py template (seed 001 categories)
TEMPLATE_CATEGORY = [
    "fact",
    "preference",
    "decision",
    "fact",
    "event",
    "fact",
    "plan",
    "event",
    "fact",
    "event",
    "plan",
    "event",
    "preference",
    "event",
    "fact",
    "event",
]
assert len(TEMPLATE_CATEGORY) == len(TEMPLATES)


def _template_of(text: str) -> int:
    """Which template a generated text came from (first matching literal prefix)."""
    for i, (tpl, _) in enumerate(TEMPLATES):
        head = tpl.split("{", 1)[0]
        tail = tpl.rsplit("}", 1)[-1]
        if text.startswith(head) and text.endswith(tail) and (head or tail):
            return i
    return 0


def make_records(texts: Sequence[str], vecs: np.ndarray, rng: random.Random, start: int) -> list[Any]:
    """MemoryRecords as months of use leave them (fixed seed): ages up to a year, accesses skewed
    to few memories, ~3 % fresh working memories, ~25 % semantic, a few pinned / flashbulb."""
    from reverie.model import Layer, MemoryRecord, content_hash
    from reverie.write.entities import entity_uris

    out = []
    for j, (text, vec) in enumerate(zip(texts, vecs, strict=True)):
        roll = rng.random()
        if roll < 0.03:
            layer, age_days = Layer.WORKING, rng.uniform(0.0, 0.2)
        elif roll < 0.73:
            layer, age_days = Layer.EPISODIC, rng.uniform(0.2, 365.0)
        elif roll < 0.98:
            layer, age_days = Layer.SEMANTIC, rng.uniform(1.0, 365.0)
        else:
            layer, age_days = Layer.PROCEDURAL, rng.uniform(1.0, 365.0)
        created = NOW - timedelta(days=age_days)
        accesses = int(rng.paretovariate(1.6)) - 1 if rng.random() < 0.6 else 0
        accessed = created + timedelta(days=rng.uniform(0.0, age_days)) if accesses else None
        emotional = rng.random() < 0.05
        valence = rng.uniform(-1.0, 1.0) if emotional else 0.0
        arousal = rng.uniform(0.5, 1.0) if emotional else rng.uniform(0.0, 0.3)
        out.append(
            MemoryRecord(
                id=f"bench-{start + j:08d}",
                content=text,
                content_hash=content_hash(text),
                user_id=SCOPE,
                session_id=f"s{(start + j) // 20}",
                layer=layer,
                category=TEMPLATE_CATEGORY[_template_of(text)],
                entities=entity_uris(text, limit=6),
                embedding=vec,
                importance=rng.uniform(0.1, 0.9),
                utility=min(1.0, max(0.0, rng.gauss(0.5, 0.15))),
                utility_updated_at=accessed or created,
                energy=1.0 + 0.5 * min(accesses, 10),
                energy_updated_at=accessed or created,
                stability=math.exp(rng.gauss(math.log(3.0), 1.2)),
                difficulty=rng.uniform(3.0, 8.0),
                retrieval_strength=1.0,
                storage_strength=1.0 + 0.1 * accesses,
                emotion_valence=valence,
                emotion_arousal=arousal,
                flashbulb=emotional and arousal >= 0.9,
                source="interaction",
                trust=0.6,
                valid_from=created,
                recorded_at=created,
                created_at=created,
                updated_at=accessed or created,
                access_count=accesses,
                last_accessed_at=accessed,
                pinned=rng.random() < 0.005,
            )
        )
    return out


def load(mem: Any, protos: Prototypes, size: int, args: argparse.Namespace) -> dict[str, Any]:
    rng = random.Random(args.seed * 7919 + size)
    done = 0
    with Timer() as t:
        for texts, vecs in bulk_batches(protos, size, args.gen_batch, args.seed):
            mem.restore(make_records(texts, vecs, rng, done), batch_size=args.batch_size)
            done += len(texts)
            if not args.quiet and done % (args.gen_batch * 10) == 0:
                console().print(f"[dim]loaded {done:,}[/dim]")
    return {"seconds": round(t.seconds, 2), "items_per_s": round(size / t.seconds, 1)}


def run_cycle(mem: Any, steps: Sequence[str] | None) -> dict[str, Any]:
    with Timer() as t:
        report = mem.dream(steps=list(steps) if steps else None)
    return {
        "wall_s": round(t.seconds, 3),
        "seconds": round(report["seconds"], 3),
        "changed": report["changed"],
        "steps": {
            s["name"]: {
                "seconds": s["seconds"],
                "changed": s["changed"],
                "examined": s["examined"],
                "details": s["details"],
            }
            for s in report["steps"]
        },
    }


def run_one(
    backend: str, size: int, args: argparse.Namespace, protos: Prototypes, pg: PgServer | None
) -> dict[str, Any]:
    from reverie import Memory, SettableClock
    from reverie.store.base import MemoryFilter

    out: dict[str, Any] = {"backend": backend, "size": size, "load_average_start": load_average()}
    with ExitStack() as stack:
        workdir = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="reverie-dream-bench-")))
        if backend == "postgres":
            pg = pg or PgServer()
            target: str = stack.enter_context(pg.database())
        else:
            target = str(workdir / "dream.db")
        clock = SettableClock(NOW)
        cfg = memory_config(workdir, dream={"schedule": {"tick_every": 0}})
        mem = stack.enter_context(
            Memory(target, config=cfg, clock=clock, embedder=make_bench_embedder(args.embedder, hash_dim=args.hash_dim))
        )
        out["embedder"] = mem.embedder.name
        out["steps_configured"] = list(args.steps.split(",")) if args.steps else list(mem.settings.dream.steps)
        out["load"] = load(mem, protos, size, args)
        out["stored"] = mem.store.count(MemoryFilter.everything(user_id=SCOPE, all_users=False))
        out["rss_mb_after_load"] = rss_mb()
        # the first vector search after a bulk load builds the scope's ANN index (persisted, once per
        # store): a loading cost, timed apart so that the cycle measures the dream itself
        with Timer() as t:
            mem.store.vector_search(mem.embedder.embed(["warm up the index"])[0], MemoryFilter(user_id=SCOPE), 1)
        out["index_build_s"] = round(t.seconds, 2)
        if not args.quiet:
            console().print(f"[dim]index built in {t.seconds:.1f} s[/dim]")
        steps = args.steps.split(",") if args.steps else None
        out["first"] = run_cycle(mem, steps)
        if not args.quiet:
            _print_cycle(f"{backend} {size:,} first cycle", out["first"])
        if args.second:
            clock.advance(hours=1)
            out["second"] = run_cycle(mem, steps)
            if not args.quiet:
                _print_cycle(f"{backend} {size:,} second cycle", out["second"])
        out["stats_after"] = mem.stats(user_id=SCOPE)["by_status"]
        out["rss_mb_end"] = rss_mb()
        out["peak_rss_mb"] = peak_rss_mb()
        out["load_average_end"] = load_average()
    return out


def nlogn_slope(n1: int, n2: int) -> float:
    """The log-log slope of n·log n between n1 and n2 (1.097 from 10k to 100k)."""
    return math.log((n2 * math.log(n2)) / (n1 * math.log(n1))) / math.log(n2 / n1)


def slopes(results: Sequence[dict[str, Any]], *, tolerance: float, min_seconds: float) -> list[dict[str, Any]]:
    """Log-log slope of time against N between consecutive sizes of one backend, total and per step.

    A step faster than ``min_seconds`` at the larger size is timing noise, not growth: its slope is
    reported but not judged. ``ok`` = slope <= n·log n slope + ``tolerance``."""
    out: list[dict[str, Any]] = []
    by_backend: dict[str, list[dict[str, Any]]] = {}
    for r in results:
        if "error" not in r:
            by_backend.setdefault(r["backend"], []).append(r)
    for backend, rs in by_backend.items():
        rs.sort(key=lambda r: r["size"])
        for a, b in itertools.pairwise(rs):
            ref = nlogn_slope(a["size"], b["size"])
            ratio = math.log(b["size"] / a["size"])
            row: dict[str, Any] = {
                "backend": backend,
                "from": a["size"],
                "to": b["size"],
                "nlogn_slope": round(ref, 3),
                "tolerance": tolerance,
            }
            ta, tb = a["first"]["seconds"], b["first"]["seconds"]
            row["total_slope"] = round(math.log(tb / ta) / ratio, 3) if ta > 0 and tb > 0 else None
            row["total_ok"] = row["total_slope"] is not None and row["total_slope"] <= ref + tolerance
            per: dict[str, Any] = {}
            for name, sb in b["first"]["steps"].items():
                sa = a["first"]["steps"].get(name)
                if sa is None or sa["seconds"] <= 0 or sb["seconds"] <= 0:
                    continue
                slope = math.log(sb["seconds"] / sa["seconds"]) / ratio
                judged = sb["seconds"] >= min_seconds
                per[name] = {
                    "slope": round(slope, 3),
                    "judged": judged,
                    "ok": (slope <= ref + tolerance) if judged else None,
                }
            row["steps"] = per
            out.append(row)
    return out


def _print_cycle(label: str, cycle: dict[str, Any]) -> None:
    from rich.table import Table

    table = Table(title=f"{label}: {cycle['seconds']:.2f} s, {cycle['changed']:,} changes")
    for col in ("step", "seconds", "changed", "examined"):
        table.add_column(col, justify="left" if col == "step" else "right")
    for name, s in cycle["steps"].items():
        table.add_row(name, fmt(s["seconds"], 3), f"{s['changed']:,}", f"{s['examined']:,}")
    console().print(table)


def print_summary(doc: dict[str, Any]) -> None:
    from rich.table import Table

    table = Table(title=f"reverie dream cycle benchmark ({doc['date']}, target <= {doc['target_s_100k']} s at 100k)")
    for col in ("backend", "N", "load /s", "cycle s", "second cycle s", "changes", "slowest step"):
        table.add_column(col, justify="left" if col == "backend" else "right")
    for r in doc["results"]:
        if "error" in r:
            table.add_row(r["backend"], f"{r['size']:,}", r["error"], "", "", "", "")
            continue
        slowest = max(r["first"]["steps"].items(), key=lambda kv: kv[1]["seconds"], default=("—", {"seconds": 0}))
        table.add_row(
            r["backend"],
            f"{r['size']:,}",
            f"{r['load']['items_per_s']:,.0f}",
            fmt(r["first"]["seconds"], 2),
            fmt(r.get("second", {}).get("seconds"), 2),
            f"{r['first']['changed']:,}",
            f"{slowest[0]} {slowest[1]['seconds']:.2f} s",
        )
    console().print(table)
    for row in doc["slopes"]:
        bad = [n for n, s in row["steps"].items() if s["ok"] is False]
        console().print(
            f"{row['backend']} {row['from']:,} → {row['to']:,}: total slope {row['total_slope']} "
            f"(n·log n {row['nlogn_slope']}, tolerance {row['tolerance']}) "
            f"{'OK' if row['total_ok'] else 'TOO STEEP'}"
            + (f"; steps steeper than n·log n: {', '.join(bad)}" if bad else "")
        )


def run(args: argparse.Namespace) -> dict[str, Any]:
    sizes = [int(s.replace("_", "")) for s in str(args.sizes).split(",") if s.strip()]
    if any(s >= ONE_MILLION for s in sizes) and not args.with_1m:
        raise SystemExit("sizes of 1,000,000 and more take long (load + cycle): pass --with-1m to run them")
    backends = ["sqlite", "postgres"] if args.backend == "both" else [args.backend]
    doc: dict[str, Any] = {
        "benchmark": "dream",
        "date": now_iso(),
        "machine": machine_info(),
        "sizes": sizes,
        "backends": backends,
        "target_s_100k": 60,
        "data": (
            "scale.py's template sentences and mixed prototype vectors (seed "
            f"{args.seed}, {args.prototypes} prototypes, {args.embedder} embedder); record fields drawn by "
            "make_records: ages 0–365 days, ~3% fresh working, ~70% episodic, ~25% semantic, ~2% procedural, "
            "Pareto-skewed accesses on 60%, 5% emotional, 0.5% pinned; no LLM (heuristic paths)"
        ),
        "results": [],
    }
    raw = make_bench_embedder(args.embedder, hash_dim=args.hash_dim, cached=False)
    protos = Prototypes(args.prototypes, args.seed)
    protos.embed(raw, None if args.embedder == "hash" else RESULTS_DIR / "cache")
    pg = PgServer() if "postgres" in backends else None
    for size in sizes:
        for backend in backends:
            doc["results"].append(run_one(backend, size, args, protos, pg if backend == "postgres" else None))
    doc["slopes"] = slopes(doc["results"], tolerance=args.slope_tolerance, min_seconds=args.min_step_seconds)
    return doc


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--sizes", default="10000,100000", help="comma-separated memory counts")
    p.add_argument("--with-1m", action="store_true", help="allow sizes >= 1,000,000 (long: load ~4 min + cycle)")
    p.add_argument("--backend", choices=["sqlite", "postgres", "both"], default="sqlite")
    p.add_argument(
        "--embedder",
        choices=["local", "hash"],
        default="local",
        help="embeds the prototypes and any summary the cycle writes",
    )
    p.add_argument("--hash-dim", type=int, default=384)
    p.add_argument("--prototypes", type=int, default=4000)
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--gen-batch", type=int, default=10_000)
    p.add_argument("--batch-size", type=int, default=1000, help="records per restore transaction")
    p.add_argument("--steps", default=None, help="comma-separated steps (default: the configured cycle)")
    p.add_argument("--no-second", dest="second", action="store_false", help="skip the second (steady) cycle")
    p.add_argument("--slope-tolerance", type=float, default=0.15)
    p.add_argument("--min-step-seconds", type=float, default=0.5, help="steps faster than this are not judged")
    p.add_argument("--out", type=Path, default=RESULTS_DIR / "dream.json")
    p.add_argument("--quiet", action="store_true")
    return p.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    args = parse_args(argv)
    doc = run(args)
    return finish(doc, args.out, quiet=args.quiet, show=print_summary)


if __name__ == "__main__":
    main(sys.argv[1:])
