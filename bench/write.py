"""Write-path throughput (issue 4): messages/s of ``Memory.observe`` on the heuristic path, on LoCoMo turns.

Every turn of the chosen LoCoMo conversations goes through ``Memory.observe`` (observer, signal scan,
smart buffer, formation, content-hash dedup, PE gate, importance, emotion, tagging, relations, boxes,
working memory), session by session with the clock at the session date, and ``end_session`` closes each
session (its final flush, box sealing and promotion). No LLM is configured: every stage takes its
heuristic path; the automatic dream tick (``dream.schedule.tick_every``) is off so that only the write
path is timed. Two embedders:

* ``hash`` — the deterministic test embedder, nearly free: the number is the pipeline's own cost;
* ``local`` — all-MiniLM-L6-v2, the engine's default (with its query cache, no disk cache): the number
  a default installation sees.

Reported per embedder: messages/s over the whole run (``end_session`` included), the p50/p95 latency of
one ``observe`` call, the time spent inside the embedder, the memories stored (active and in every
status) and what the turns did (CREATE / UPDATE / REINFORCE / SUPERSEDE, filtered, buffered, duplicates).
The data (``../shared/data/locomo``) is read in place and never copied.

Usage::

    PYTHONPATH=src .venv/bin/python bench/write.py [--embedder hash|local|both] [--conversations N]
                                                   [--limit-turns N] [--backend sqlite|postgres]
                                                   [--out bench/results/write.json] [--quiet]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from contextlib import ExitStack
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import locomo
from _benchlib import (
    RESULTS_DIR,
    PgServer,
    console,
    finish,
    fmt,
    latency_stats,
    load_average,
    machine_info,
    make_bench_embedder,
    memory_config,
    now_iso,
    peak_rss_mb,
)


class TimedEmbedder:
    """Wraps an embedder and adds up the seconds spent inside ``embed`` (to separate pipeline cost)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.name, self.dim, self.profile = inner.name, inner.dim, inner.profile
        self.seconds = 0.0
        self.texts = 0

    def embed(self, texts: Sequence[str]) -> Any:
        start = time.perf_counter()
        try:
            return self.inner.embed(texts)
        finally:
            self.seconds += time.perf_counter() - start
            self.texts += len(texts)


def outcome(action: str, reason: str) -> str:
    """A coarse label of what one write result did (for the outcome histogram)."""
    if action != "SKIP":
        return action
    for prefix, label in (
        ("buffered", "buffered"),
        ("filtered", "filtered"),
        ("rejected", "rejected"),
        ("trivial", "trivial"),
        ("low information density", "low density"),
        ("duplicate", "duplicate"),
    ):
        if reason.startswith(prefix):
            return f"SKIP {label}"
    return "SKIP gate"


def run_one(
    samples: Sequence[Any], *, kind: str, target: str, workdir: Path, hash_dim: int, limit_turns: int | None
) -> dict[str, Any]:
    """Observe every turn of ``samples`` into a fresh store at ``target``; returns the measurements."""
    from reverie import Memory, SettableClock
    from reverie.store.base import MemoryFilter

    clock = SettableClock()
    emb = TimedEmbedder(make_bench_embedder(kind, hash_dim=hash_dim, cached=True))
    # no LLM (heuristic path) and no automatic dream tick (seed 003 runs one every N ingestion cycles):
    # the number is the write path's own
    config = memory_config(
        workdir, llm={"base_url": None}, write={"use_llm": False}, dream={"schedule": {"tick_every": 0}}
    )
    outcomes: Counter[str] = Counter()
    latencies: list[float] = []
    turns = 0
    load_before = load_average()
    with Memory(target, config=config, clock=clock, embedder=emb) as mem:
        start = time.perf_counter()
        for sample in samples:
            for number, when, session_turns in sample.sessions:
                if limit_turns is not None and turns >= limit_turns:
                    break
                if when is not None:
                    clock.set(when)
                sid = session_turns[0].session_id if session_turns else f"session-{number}"
                for t in session_turns:
                    if limit_turns is not None and turns >= limit_turns:
                        break
                    t0 = time.perf_counter()
                    results = mem.observe(
                        t.text,
                        user_id=sample.sample_id,
                        session_id=sid,
                        when=t.when,
                        metadata={"turn_id": t.turn_id, "speaker": t.speaker, "session": number},
                    )
                    latencies.append(time.perf_counter() - t0)
                    outcomes.update(outcome(r.action.value, r.reason) for r in results)
                    turns += 1
                report = mem.end_session(sid, user_id=sample.sample_id)
                outcomes.update(outcome(r["action"], r["reason"]) for r in report["flushed"])
        seconds = time.perf_counter() - start
        users = [s.sample_id for s in samples]
        active = sum(mem.store.count(MemoryFilter(user_id=u)) for u in users)
        every = sum(mem.store.count(MemoryFilter.everything(user_id=u, all_users=False)) for u in users)
        model = mem.embedder.name
    return {
        "embedder": model,
        "turns": turns,
        "seconds": round(seconds, 3),
        "messages_per_s": round(turns / seconds, 1) if seconds else None,
        "embed_s": round(emb.seconds, 3),
        "embedded_texts": emb.texts,
        "pipeline_s": round(seconds - emb.seconds, 3),
        "messages_per_s_without_embedding": round(turns / (seconds - emb.seconds), 1)
        if seconds > emb.seconds
        else None,
        "observe_latency": latency_stats(latencies),
        "memories_active": active,
        "memories_all_statuses": every,
        "outcomes": dict(sorted(outcomes.items())),
        "load_average_before": load_before,
        "load_average_after": load_average(),
    }


def run(
    *,
    data: Path,
    embedders: Sequence[str],
    conversations: int | None,
    limit_turns: int | None,
    backend: str,
    hash_dim: int,
    quiet: bool,
) -> dict[str, Any]:
    stats = locomo.EvidenceStats()
    samples = locomo.load_samples(
        data, limit_conversations=conversations, limit_sessions=None, limit_questions=None, stats=stats
    )
    doc: dict[str, Any] = {
        "benchmark": "write-path-throughput",
        "date": now_iso(),
        "machine": machine_info(),
        "data": str(data),
        "conversations": [s.sample_id for s in samples],
        "backend": backend,
        "path": "heuristic (no LLM configured)",
        "limits": {"conversations": conversations, "turns": limit_turns},
        "runs": {},
    }
    log = console()
    with ExitStack() as stack:
        workdir = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="reverie-write-bench-")))
        pg = PgServer() if backend == "postgres" else None
        for kind in embedders:
            target = stack.enter_context(pg.database()) if pg is not None else str(workdir / f"write-{kind}.db")
            res = run_one(
                samples, kind=kind, target=target, workdir=workdir / kind, hash_dim=hash_dim, limit_turns=limit_turns
            )
            doc["runs"][kind] = res
            if not quiet:
                log.print(f"[dim]{kind}: {res['turns']} turns in {res['seconds']} s[/dim]")
    doc["peak_rss_mb"] = peak_rss_mb()
    return doc


def print_table(doc: dict[str, Any]) -> None:
    from rich.table import Table

    table = Table(title=f"observe() throughput, heuristic path ({doc['backend']})")
    for col in (
        "embedder",
        "turns",
        "msg/s",
        "msg/s w/o embed",
        "observe p50 ms",
        "p95 ms",
        "embed s",
        "memories (active / all)",
    ):
        table.add_column(col, justify="right")
    for run in doc["runs"].values():
        lat = run["observe_latency"]
        table.add_row(
            run["embedder"],
            str(run["turns"]),
            fmt(run["messages_per_s"], 1),
            fmt(run["messages_per_s_without_embedding"], 1),
            fmt(lat.get("p50_ms"), 2),
            fmt(lat.get("p95_ms"), 2),
            fmt(run["embed_s"], 1),
            f"{run['memories_active']} / {run['memories_all_statuses']}",
        )
    console().print(table)


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--data", type=Path, default=locomo.DEFAULT_DATA, help="LoCoMo JSON (default: %(default)s)")
    p.add_argument("--embedder", choices=["hash", "local", "both"], default="both")
    p.add_argument("--hash-dim", type=int, default=384)
    p.add_argument("--conversations", type=int, default=None, help="only the first N conversations")
    p.add_argument("--limit-turns", type=int, default=None, help="stop after N turns (smoke runs)")
    p.add_argument("--backend", choices=["sqlite", "postgres"], default="sqlite")
    p.add_argument("--out", type=Path, default=RESULTS_DIR / "write.json")
    p.add_argument("--quiet", action="store_true")
    return p.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    args = parse_args(argv)
    if not args.data.is_file():
        raise SystemExit(f"LoCoMo data not found: {args.data} (see --data)")
    embedders = ("hash", "local") if args.embedder == "both" else (args.embedder,)
    doc = run(
        data=args.data,
        embedders=embedders,
        conversations=args.conversations,
        limit_turns=args.limit_turns,
        backend=args.backend,
        hash_dim=args.hash_dim,
        quiet=args.quiet,
    )
    return finish(doc, args.out, quiet=args.quiet, show=print_table)


if __name__ == "__main__":
    main(sys.argv[1:])
