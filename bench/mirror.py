"""What the live markdown mirror costs a writer: ``Memory.add_many`` throughput with ``mirror.dir`` set against
without, and the cost of a ``sync`` that has nothing to do.

Two stores are filled with the same memories, one with the mirror on and one without, in alternating
batches (which of the two goes first alternates too), so that a change in the machine's load falls on both
alike. Each batch is one ``add_many`` call of ``--batch`` items; the time of every call is summed per arm.
The default is what a user runs: ``add_many`` with its defaults (``infer=True``: the write path, the
engine's local embedding model, not cached, so the second arm embeds as the first did); ``--verbatim``
measures the bulk-load path instead (``infer=False`` with precomputed vectors: no embedding, no write path,
the store's insert alone), where the mirror's file per memory weighs most. Both arms run the default
settings, the automatic maintenance tick included (what the mirror writes when the tick changes memories is
part of its cost).

Reported: memories/s of each arm, the mirror's cost (1 - on/off), the files written (one per memory stored),
and the seconds of a whole ``sync_mirror()`` afterwards (every memory rendered and compared, nothing
written).

Usage::

    python bench/mirror.py [--n 10000] [--batch 500] [--embedder local|hash] [--verbatim]
                           [--backend sqlite|postgres] [--out bench/results/mirror.json] [--quiet]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _benchlib import (
    RESULTS_DIR,
    PgServer,
    console,
    finish,
    load_average,
    machine_info,
    make_bench_embedder,
    memory_config,
    now_iso,
)

SUBJECTS = ["Maya", "Lena", "Omar", "Priya", "Daniel", "Ana", "Kenji", "Sofia", "Tomas", "Aylin"]
FACTS = [
    "keeps a {0} notebook for project {1}",
    "booked room {1} for the {0} workshop",
    "ordered {1} {0} tiles for the kitchen",
    "asked to be reminded about invoice {1} in {0}",
    "moved the {0} meeting to slot {1}",
    "lent book number {1} about {0} to a colleague",
    "measured {1} millimetres of {0} rain last week",
    "wants the {0} report as version {1}",
]
TOPICS = ["garden", "river", "copper", "violin", "harbour", "granite", "orchard", "lantern", "glacier", "meadow"]


def texts(n: int) -> list[str]:
    """``n`` distinct facts (different subjects, numbers and topics: the write path stores each one)."""
    out = []
    for i in range(n):
        subject = SUBJECTS[i % len(SUBJECTS)]
        fact = FACTS[(i // len(SUBJECTS)) % len(FACTS)].format(TOPICS[(i * 7) % len(TOPICS)], 1000 + i)
        out.append(f"{subject} {fact}.")
    return out


def run(args: argparse.Namespace, target: Any, workdir: Path) -> dict[str, Any]:
    import numpy as np

    from reverie import Memory
    from reverie.store.base import MemoryFilter

    embedder = make_bench_embedder(args.embedder, cached=False)
    items = texts(args.n)
    vectors = None
    if args.verbatim:
        vectors = np.asarray(embedder.embed(items), dtype=np.float32)
    mirror_dir = workdir / "mirror"
    base = memory_config(workdir)
    mems = {
        "on": Memory(target("on"), embedder=embedder, config={**base, "mirror": {"dir": str(mirror_dir)}}),
        "off": Memory(target("off"), embedder=embedder, config=base),
    }
    seconds = {"on": 0.0, "off": 0.0}
    batches = 0
    try:
        for start in range(0, args.n, args.batch):
            chunk = items[start : start + args.batch]
            order = ("on", "off") if batches % 2 == 0 else ("off", "on")
            for arm in order:
                kwargs: dict[str, Any] = {"user_id": "bench", "infer": not args.verbatim}
                if vectors is not None:
                    kwargs["vectors"] = vectors[start : start + args.batch]
                t0 = time.perf_counter()
                mems[arm].add_many(chunk, **kwargs)
                seconds[arm] += time.perf_counter() - t0
            batches += 1
            if not args.quiet:
                done = start + len(chunk)
                console().print(
                    f"  {done}/{args.n}: on {done / seconds['on']:.1f}/s, off {done / seconds['off']:.1f}/s",
                    highlight=False,
                )
        stored = {arm: m.store.count(MemoryFilter.everything()) for arm, m in mems.items()}
        files = sum(1 for _ in (mirror_dir / "facts").rglob("*.md"))
        t0 = time.perf_counter()
        report = mems["on"].sync_mirror()
        sync_s = time.perf_counter() - t0
    finally:
        for m in mems.values():
            m.close()
    rate = {arm: args.n / s for arm, s in seconds.items()}
    return {
        "seconds": {arm: round(s, 2) for arm, s in seconds.items()},
        "items_per_s": {arm: round(r, 1) for arm, r in rate.items()},
        "mirror_cost": round(1.0 - rate["on"] / rate["off"], 4),
        "memories_stored": stored,
        "files_written": files,
        "noop_sync_s": round(sync_s, 2),
        "noop_sync_written": report["written"],
        "batches": batches,
    }


def main(argv: list[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=10_000, help="memories added per arm")
    ap.add_argument("--batch", type=int, default=500, help="items per add_many call")
    ap.add_argument("--embedder", choices=["local", "hash"], default="local")
    ap.add_argument("--verbatim", action="store_true", help="infer=False with precomputed vectors (bulk load)")
    ap.add_argument("--backend", choices=["sqlite", "postgres"], default="sqlite")
    ap.add_argument("--out", type=Path, default=RESULTS_DIR / "mirror.json")
    ap.add_argument("--quiet", action="store_true")
    args = ap.parse_args(argv)
    load_before = load_average()
    with ExitStack() as stack:
        workdir = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="reverie-bench-mirror-")))
        if args.backend == "postgres":
            server = stack.enter_context(PgServer())
            urls = {arm: stack.enter_context(server.database()) for arm in ("on", "off")}

            def target(arm: str) -> Any:
                return urls[arm]

        else:

            def target(arm: str) -> Any:
                return workdir / f"{arm}.db"

        result = run(args, target, workdir)
    doc = {
        "benchmark": "mirror-write-cost",
        "at": now_iso(),
        "machine": machine_info(),
        "load_average": {"before": load_before, "after": load_average()},
        "config": {
            "n": args.n,
            "batch": args.batch,
            "embedder": args.embedder,
            "path": "verbatim (infer=False, vectors given)" if args.verbatim else "add_many defaults (infer=True)",
            "backend": args.backend,
        },
        **result,
    }

    def show(d: dict[str, Any]) -> None:
        c = d["config"]
        console().print(
            f"add_many of {c['n']} memories ({c['path']}, {c['embedder']} embedder, {c['backend']}): "
            f"mirror on {d['items_per_s']['on']}/s, off {d['items_per_s']['off']}/s -> cost "
            f"{100 * d['mirror_cost']:.1f}%; {d['files_written']} files; a sync with nothing to do "
            f"{d['noop_sync_s']} s",
            highlight=False,
        )

    return finish(doc, args.out, quiet=args.quiet, show=show)


if __name__ == "__main__":
    main()
