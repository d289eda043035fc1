"""LoCoMo ablation of the read path: the full pipeline vs a plain hybrid baseline, stage by stage.

Every turn of each conversation is stored once with ``add_many(infer=False)`` (bench/locomo.py's
``ingest``: one user scope per conversation, ``when`` = session date). The store is then copied
for every configuration, so each one starts from the same untouched memories (searches change
access counts and co-activations, which later questions then see — as in real use, and the same
for every configuration).

* ``baseline``: BM25 (``store.text_search``) + dense (``store.vector_search``, the same embedder
  model) fused by RRF K = 60, pool 60 per channel, nothing else (bench/locomo.py ``ask_baseline``).
* ``full``: ``Memory.search(k=20)`` with every read stage on (the defaults).
* ``no-<stage>``: the full pipeline with one stage switched off (``settings.read.<stage> = False``).

Recall@k (k = 5/10/20) of evidence turns and session recall, per category; categories 1–4 are the
headline, 5 (adversarial) is reported separately.

Usage::

    PYTHONPATH=src .venv/bin/python bench/locomo_ablation.py            # all configurations
    PYTHONPATH=src .venv/bin/python bench/locomo_ablation.py --only full  # just one
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from collections.abc import Sequence
from datetime import timedelta
from pathlib import Path
from typing import Any

from _benchlib import RESULTS_DIR, console, finish, fmt, machine_info, memory_config, now_iso
from locomo import (
    DEFAULT_DATA,
    HEADLINE_CATEGORIES,
    KS,
    NO_LIFECYCLE,
    EvidenceStats,
    RunResult,
    Sample,
    ask_baseline,
    ask_memory,
    bench_embedder,
    ingest,
    load_samples,
    summarise,
)

STAGES = (
    "gate",
    "intent",
    "decompose",
    "hyde",
    "graph",
    "hybrid_similarity",
    "episode_context",
    "time_anchor",
    "coactivation",
    "scoring",
    "mmr",
    "hot_tier",
)
#: single-setting variants of the full pipeline: the choices issue 5's tuning made, each undone alone
EXTRA: dict[str, dict[str, Any]] = {
    "rrf-possible": {"rrf_scale": "possible"},  # RRF term over its largest possible value
    "rrf-minmax": {"rrf_scale": "minmax"},  # RRF term min-max scaled over the pool (the earlier default)
    "episode-0.15": {"episode_context_boost": 0.15},  # inferred episode at the full seed boost
    "hyde-2": {"hyde_variants": 2},  # the seed's 2 variants (default 1)
    "no-sort": {"sort_weight": 0.0},  # temporal/utility intents without their secondary sort key
    "no-actr": {"w_activation": 0.0},  # the composite without its ACT-R term (diagnostic, not a stage)
    "no-hebbian": {"hebbian_top": 0},
    "actr-1s": {"activation_min_age_s": 1.0},  # the dynamics' own 1-second floor (no read calibration)
}


def configurations(only: Sequence[str] | None) -> dict[str, dict[str, Any]]:
    configs: dict[str, dict[str, Any]] = {"full": {}}
    configs.update({f"no-{s}": {s: False} for s in STAGES})
    configs.update(EXTRA)
    if only:
        configs = {k: v for k, v in configs.items() if k in only}
    return configs


def build_master(
    target: Path, workdir: Path, samples: Sequence[Sample], embedder: str, hash_dim: int
) -> tuple[dict[str, dict[str, list[str]]], dict[str, Any], RunResult]:
    """Ingest every sample once; returns memory → dia_ids per sample and the clock after each."""
    from reverie import Memory, SettableClock

    held_all: dict[str, dict[str, list[str]]] = {}
    ends: dict[str, Any] = {}
    res = RunResult()
    clock = SettableClock()
    emb = bench_embedder(embedder, hash_dim=hash_dim)
    with Memory(str(target), config=memory_config(workdir, **NO_LIFECYCLE), clock=clock, embedder=emb) as mem:
        for sample in samples:
            held_all[sample.sample_id] = ingest(mem, clock, sample, infer=False, result=res)
            last = sample.sessions[-1][1] if sample.sessions else None
            ends[sample.sample_id] = (last + timedelta(days=1)) if last is not None else clock()
    return held_all, ends, res


def run_baseline(
    target: Path, samples: Sequence[Sample], held: dict[str, dict[str, list[str]]], embedder: str, hash_dim: int
) -> dict[str, Any]:
    from reverie.config.core import StorageSettings
    from reverie.store import open_store

    res = RunResult()
    base_emb = bench_embedder(embedder, hash_dim=hash_dim, engine_cache=False)
    store = open_store(target, settings=StorageSettings(), dim=base_emb.dim)
    try:
        for sample in samples:
            ask_baseline(store, base_emb, sample, held[sample.sample_id], res, pool=60)
    finally:
        store.close()
    return summarise(res, method="BM25 + dense (same embedder), RRF K=60, pool 60 per channel, nothing else")


def run_config(
    name: str,
    read: dict[str, Any],
    master: Path,
    workdir: Path,
    samples: Sequence[Sample],
    held: dict[str, dict[str, list[str]]],
    ends: dict[str, Any],
    embedder: str,
    hash_dim: int,
) -> dict[str, Any]:
    from reverie import Memory, SettableClock

    db = workdir / f"{name}.db"
    shutil.copyfile(master, db)
    res = RunResult()
    clock = SettableClock()
    emb = bench_embedder(embedder, hash_dim=hash_dim)
    with Memory(str(db), config=memory_config(workdir, read=read, **NO_LIFECYCLE), clock=clock, embedder=emb) as mem:
        for sample in samples:
            clock.set(ends[sample.sample_id])
            ask_memory(mem, sample, held[sample.sample_id], res)
    db.unlink(missing_ok=True)
    return summarise(res, method=f"Memory.search(k=20), read settings {read or 'defaults'}")


def delta(run: dict[str, Any], base: dict[str, Any]) -> dict[str, Any]:
    """Run minus baseline, headline and per category, at every k (points = ×100)."""
    out: dict[str, Any] = {}
    rows = {"headline": ("headline_1_4", None), **{c: ("by_category", str(c)) for c in HEADLINE_CATEGORIES}}
    for label, (key, cat) in rows.items():
        a = run["recall"][key] if cat is None else run["recall"][key].get(cat, {})
        b = base["recall"][key] if cat is None else base["recall"][key].get(cat, {})
        out[str(label)] = {m: round(a[m] - b[m], 4) for m in a if m not in ("n", "name") and m in b}
    return out


def run(
    *,
    data: Path,
    embedder: str,
    hash_dim: int,
    only: Sequence[str] | None,
    limit_conversations: int | None,
    quiet: bool,
) -> dict[str, Any]:
    stats = EvidenceStats()
    samples = load_samples(
        data, limit_conversations=limit_conversations, limit_sessions=None, limit_questions=None, stats=stats
    )
    log = console()
    doc: dict[str, Any] = {
        "benchmark": "locomo-read-ablation",
        "date": now_iso(),
        "machine": machine_info(),
        "data": str(data),
        "embedder": embedder,
        "ks": list(KS),
        "runs": {},
    }
    with tempfile.TemporaryDirectory(prefix="reverie-ablation-") as tmp:
        workdir = Path(tmp)
        master = workdir / "master.db"
        held, ends, ingest_res = build_master(master, workdir, samples, embedder, hash_dim)
        doc["turns"] = ingest_res.turns
        doc["runs"]["baseline"] = run_baseline(master, samples, held, embedder, hash_dim)
        for name, read in configurations(only).items():
            doc["runs"][name] = run_config(name, read, master, workdir, samples, held, ends, embedder, hash_dim)
            if not quiet:
                head = doc["runs"][name]["recall"]["headline_1_4"]
                log.print(f"[dim]{name}: r@10 {fmt(head.get('r@10'))}[/dim]")
    base = doc["runs"]["baseline"]
    doc["vs_baseline"] = {n: delta(r, base) for n, r in doc["runs"].items() if n != "baseline"}
    return doc


def print_tables(doc: dict[str, Any]) -> None:
    from rich.table import Table

    log = console()
    runs = doc["runs"]
    table = Table(title=f"LoCoMo headline (categories 1–4), embedder {doc['embedder']}")
    cols = (
        "run",
        *[f"R@{k}" for k in KS],
        *[f"S@{k}" for k in KS],
        "Δ R@10",
        *[f"R@10 c{c}" for c in HEADLINE_CATEGORIES],
        "p50 ms",
    )
    for col in cols:
        table.add_column(col, justify="right")
    for name, r in runs.items():
        head = r["recall"]["headline_1_4"]
        d = doc["vs_baseline"].get(name, {}).get("headline", {}).get("r@10")
        cats = r["recall"]["by_category"]
        table.add_row(
            name,
            *[fmt(head.get(f"r@{k}")) for k in KS],
            *[fmt(head.get(f"s@{k}")) for k in KS],
            fmt(d) if d is not None else "",
            *[fmt(cats.get(str(c), {}).get("r@10")) for c in HEADLINE_CATEGORIES],
            fmt(r["search_latency"].get("p50_ms"), 2),
        )
    log.print(table)
    if "full" not in runs:
        return
    cats_t = Table(title="per category, baseline → full")
    for col in ("category", "n", *[f"R@{k}" for k in KS], *[f"S@{k}" for k in KS]):
        cats_t.add_column(col, justify="right")
    for cat, row in runs["baseline"]["recall"]["by_category"].items():
        full = runs["full"]["recall"]["by_category"][cat]
        cats_t.add_row(
            f"{cat} {row['name']}",
            str(row["n"]),
            *[f"{fmt(row[f'r@{k}'])} → {fmt(full[f'r@{k}'])}" for k in KS],
            *[f"{fmt(row[f's@{k}'])} → {fmt(full[f's@{k}'])}" for k in KS],
        )
    log.print(cats_t)


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--data", type=Path, default=DEFAULT_DATA)
    p.add_argument("--embedder", choices=["local", "hash"], default="local")
    p.add_argument("--hash-dim", type=int, default=384)
    p.add_argument("--only", nargs="*", default=None, help="configuration names (full, no-mmr, …)")
    p.add_argument("--limit-conversations", type=int, default=None)
    p.add_argument("--out", type=Path, default=RESULTS_DIR / "locomo_ablation.json")
    p.add_argument("--quiet", action="store_true")
    args = p.parse_args(argv)
    doc = run(
        data=args.data,
        embedder=args.embedder,
        hash_dim=args.hash_dim,
        only=args.only,
        limit_conversations=args.limit_conversations,
        quiet=args.quiet,
    )
    return finish(doc, args.out, quiet=args.quiet, show=print_tables)


if __name__ == "__main__":
    main(sys.argv[1:])
