"""Soak: one long-running ``Memory`` serving many users with mixed traffic; is its memory flat?

A server for many users must not grow with the number of users it has served: every per-process cache
(the hot tier's selections, the embedding cache, what open sessions used, the intent router's answers)
is bounded. This runs one ``Memory`` on SQLite with the default settings (the automatic maintenance tick
on) for ``--minutes``: first ``--users`` users get ``--per-user`` memories each, then random users send a
mix of adds (the full write path), searches, context blocks in a session, gets and lists. The process's
resident memory (RSS) is sampled every ``--sample-every`` seconds; after the warm-up (the first
``--warmup`` fraction of the run) it should stay flat. Stored data does grow (each add is one more row
and one more vector in the in-process index, 384 float32 = 1.5 KB): the report gives that growth beside
the RSS growth, and the size of every cache at the end.

    python bench/soak.py                              # 2,000 users, 6 minutes, the default local model
    python bench/soak.py --embedder hash --minutes 1  # a quick run
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

from _benchlib import (
    RESULTS_DIR,
    console,
    finish,
    fmt,
    latency_stats,
    load_average,
    machine_info,
    make_bench_embedder,
    memory_config,
    now_iso,
    rss_mb,
)

NAMES = ["Maya", "Leo", "Ana", "Tom", "Priya", "Daniel", "Sara", "Omar", "Lena", "Kai"]
THINGS = ["green tea", "the cello", "rock climbing", "Lisbon", "a red bicycle", "penicillin", "jazz", "sourdough"]
VERBS = ["likes", "dislikes", "is learning", "talks about", "bought", "is allergic to", "visited", "recommends"]
PLACES = ["at work", "on weekends", "since March", "with her sister", "every morning", "in the summer"]
QUESTIONS = ["what does {n} like?", "where did {n} go?", "is {n} allergic to anything?", "what is {n} learning?"]
#: the traffic mix: operation → weight
MIX = {"add": 3, "search": 4, "context": 1, "get": 1, "list": 1}


def _fact(rng: random.Random) -> str:
    words = (rng.choice(NAMES), rng.choice(VERBS), rng.choice(THINGS), rng.choice(PLACES))
    return f"{' '.join(words)} (note {rng.randrange(10**6)})"


def _caches(mem: Any) -> dict[str, Any]:
    """The size of every per-process cache of the memory (and of the text functions' LRU caches)."""
    from reverie.text.updates import clauses, judge, tokens

    embedder = mem.embedder
    reader = mem.__dict__.get("_read_pipeline")
    sessions, window, pairs = mem._sessions.size()
    lru = 0
    for module in (clauses, judge, tokens):
        for value in vars(module).values():
            info = getattr(value, "cache_info", None)
            if callable(info):
                lru += info().currsize
    return {
        "hot_tier_scopes": len(reader.hot) if reader is not None else 0,
        "embedding_cache": len(embedder) if hasattr(embedder, "__len__") else None,
        "sessions": sessions,
        "session_window_memories": window,
        "session_pairs": pairs,
        "intent_router_cache": len(reader.router._cache) if reader is not None else 0,
        "text_lru_entries": lru,
        "vector_index": mem.store.info().details.get("vector_index"),
    }


def _populate(mem: Any, users: list[str], per_user: int, rng: random.Random) -> dict[str, list[str]]:
    batch: list[dict[str, Any]] = []
    for user in users:
        batch += [{"content": _fact(rng), "user_id": user} for _ in range(per_user)]
        if len(batch) >= 256:
            mem.add_many(batch, infer=False)
            batch = []
    if batch:
        mem.add_many(batch, infer=False)
    return {user: [r.id for r in mem.list(user_id=user, limit=per_user)] for user in users}


def _operate(mem: Any, op: str, user: str, ids: dict[str, list[str]], rng: random.Random) -> None:
    if op == "add":
        res = mem.add(_fact(rng), user_id=user)
        if res.id is not None:
            ids[user] = (ids[user] + [res.id])[-20:]
    elif op == "search":
        mem.search(rng.choice(QUESTIONS).format(n=rng.choice(NAMES)), user_id=user, k=5)
    elif op == "context":
        session = f"{user}-s{rng.randrange(3)}"
        mem.context(rng.choice(QUESTIONS).format(n=rng.choice(NAMES)), user_id=user, session_id=session)
    elif op == "get" and ids[user]:
        mem.get(rng.choice(ids[user]))
    else:
        mem.list(user_id=user, limit=10)


def _slope_mb_per_min(samples: list[tuple[float, float]]) -> float:
    if len(samples) < 2:
        return 0.0
    import numpy as np

    t = np.asarray([s[0] for s in samples]) / 60.0
    y = np.asarray([s[1] for s in samples])
    return round(float(np.polyfit(t, y, 1)[0]), 3)


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--users", type=int, default=2000)
    parser.add_argument("--per-user", type=int, default=3, help="memories per user before the traffic starts")
    parser.add_argument("--minutes", type=float, default=6.0, help="minutes of mixed traffic")
    parser.add_argument("--warmup", type=float, default=0.33, help="fraction of the run counted as warm-up")
    parser.add_argument("--sample-every", type=float, default=5.0, help="seconds between RSS samples")
    parser.add_argument("--embedder", choices=["local", "hash"], default="local")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--out", type=Path, default=RESULTS_DIR / "soak.json")
    parser.add_argument("--quiet", action="store_true")
    args = parser.parse_args(argv)
    from reverie import Memory

    rng = random.Random(args.seed)
    users = [f"user-{i:05d}" for i in range(args.users)]
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        rss_open = rss_mb()
        mem = Memory(workdir / "soak.db", config=memory_config(workdir), embedder=make_bench_embedder(args.embedder))
        try:
            started = time.perf_counter()
            ids = _populate(mem, users, args.per_user, rng)
            populate_s = time.perf_counter() - started
            doc = _traffic(mem, users, ids, rng, args)
            doc["populate"] = {"memories": args.users * args.per_user, "seconds": round(populate_s, 1)}
            doc["rss_mb_before_open"] = rss_open
        finally:
            mem.close()
    doc.update(
        {
            "benchmark": "soak",
            "at": now_iso(),
            "machine": machine_info(),
            "load_average_after": load_average(),
            "embedder": args.embedder,
            "users": args.users,
            "minutes": args.minutes,
            "mix": MIX,
        }
    )
    return finish(doc, args.out, quiet=args.quiet, show=_show)


def _traffic(mem: Any, users: list[str], ids: dict[str, list[str]], rng: random.Random, args: Any) -> dict[str, Any]:
    ops = [op for op, weight in MIX.items() for _ in range(weight)]
    latencies: dict[str, list[float]] = {op: [] for op in MIX}
    counts: Counter[str] = Counter()
    samples: list[tuple[float, float]] = []
    done: list[int] = []  # operations run at each sample
    stored: list[tuple[float, int]] = []
    start = time.perf_counter()
    end = start + args.minutes * 60
    next_sample = start
    while (now := time.perf_counter()) < end:
        if now >= next_sample:
            samples.append((now - start, rss_mb()))
            done.append(sum(counts.values()))
            stored.append((now - start, int(mem.info().details.get("memories", 0))))
            next_sample += args.sample_every
        op, user = rng.choice(ops), rng.choice(users)
        t0 = time.perf_counter()
        _operate(mem, op, user, ids, rng)
        latencies[op].append(time.perf_counter() - t0)
        counts[op] += 1
    samples.append((time.perf_counter() - start, rss_mb()))
    done.append(sum(counts.values()))
    warm = args.minutes * 60 * args.warmup
    after = [s for s in samples if s[0] >= warm]
    rows_after = [s for s in stored if s[0] >= warm]
    added_after = rows_after[-1][1] - rows_after[0][1] if len(rows_after) > 1 else 0
    return {
        "operations": dict(counts),
        "ops_per_s": round(sum(counts.values()) / (args.minutes * 60), 1),
        "latency": {op: latency_stats(v) for op, v in latencies.items()},
        "rss_samples": [[round(t, 1), r, n] for (t, r), n in zip(samples, done, strict=True)],
        "rss_mb": {
            "after_populate": samples[0][1],
            "at_warmup_end": after[0][1] if after else None,
            "end": samples[-1][1],
            "max": max(r for _, r in samples),
            "growth_after_warmup": round(samples[-1][1] - after[0][1], 1) if after else None,
            "slope_after_warmup_mb_per_min": _slope_mb_per_min(after),
        },
        "memories_added_after_warmup": added_after,
        "vectors_added_after_warmup_mb": round(added_after * mem.embedder.dim * 4 / 2**20, 2),
        "caches_at_end": _caches(mem),
    }


def _show(doc: dict[str, Any]) -> None:
    from rich.table import Table

    out = console()
    rss = doc["rss_mb"]
    out.print(
        f"soak: {doc['users']} users, {doc['minutes']} min of mixed traffic ({doc['ops_per_s']} ops/s, "
        f"{doc['embedder']} embedder)"
    )
    out.print(
        f"RSS MB: after populate {rss['after_populate']}, at warm-up end {rss['at_warmup_end']}, end {rss['end']}, "
        f"max {rss['max']}; after warm-up {fmt(rss['growth_after_warmup'], 1)} MB "
        f"({rss['slope_after_warmup_mb_per_min']} MB/min) while {doc['memories_added_after_warmup']} memories "
        f"({doc['vectors_added_after_warmup_mb']} MB of vectors) were added"
    )
    table = Table(title="latency by operation")
    for col in ("operation", "n", "p50 ms", "p95 ms"):
        table.add_column(col)
    for op, stats in doc["latency"].items():
        table.add_row(op, str(stats.get("n", 0)), fmt(stats.get("p50_ms"), 1), fmt(stats.get("p95_ms"), 1))
    out.print(table)
    out.print(f"caches at the end: {doc['caches_at_end']}")


if __name__ == "__main__":
    main()
