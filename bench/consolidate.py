"""Consolidate-step benchmark: seed 003 consolidation alone over N fading memories in ONE scope.

For each size N a fresh store receives N episodic memories of one user, all 60 days old (so every one
is fading: seed-003 retention < 0.20), with 384-dimensional vectors: ``--planted`` of them in planted
groups of 5–8 (each member cosine ≈ 0.8 to its group's centre), the rest random unit vectors (no
neighbour above the threshold). Then ``Memory.dream(steps=["consolidate"])`` runs once and reports:

* the step's own phase times: ``scan`` (walk the scope, seed-003 retention per memory), ``group``
  (load candidate vectors, k-nearest neighbours, disjoint groups) and ``write`` (claim, summarise,
  embed and write ``max_groups_per_run`` groups, one transaction each);
* groups found, groups written, the neighbour method (exact / hnsw);
* recall of the planted groups: the share of planted groups whose members all ended in one group.

Loading (``store.insert``) is not timed. Embedder: the hash embedder (384 dims; summaries get a fresh
embedding from it). No LLM: the extractive summary (which keeps every member; the bench's short texts never
reach the length budget). The themes and abstraction steps write only LLM texts, so without an LLM they stop
at once (reported as ``skipped``) and their clustering is not timed here.

Usage::

    PYTHONPATH=src .venv/bin/python bench/consolidate.py --sizes 10000,100000
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np
from _benchlib import RESULTS_DIR, Timer, load_average, machine_info, now_iso, write_json

DIM = 384
START = datetime(2025, 1, 1, tzinfo=UTC)


def make_vectors(
    n: int, planted: float, rng: np.random.Generator, background: str = "random"
) -> tuple[np.ndarray, list[list[int]]]:
    """``n`` unit vectors: planted groups of 5–8 (about ``planted·n`` rows), then the background:
    ``random`` unit vectors (no structure: the worst case for any neighbour graph) or ``mixture`` —
    each a noisy mix of two of 2,000 topic directions, structured like real text embeddings, with no
    neighbour above the threshold of the ``hash`` profile (0.40) except by chance."""
    rows: list[np.ndarray] = []
    groups: list[list[int]] = []
    while len(rows) < int(planted * n):
        size = int(rng.integers(5, 9))
        centre = rng.standard_normal(DIM)
        centre /= np.linalg.norm(centre)
        members = centre + rng.standard_normal((size, DIM)) * (0.75 / np.sqrt(DIM))
        groups.append(list(range(len(rows), len(rows) + size)))
        rows.extend(members)
    rest = n - len(rows)
    if background == "random":
        others = rng.standard_normal((rest, DIM))
    else:
        topics = rng.standard_normal((2000, DIM))
        topics /= np.linalg.norm(topics, axis=1, keepdims=True)
        a, b = rng.integers(0, 2000, rest), rng.integers(0, 2000, rest)
        others = topics[a] * 0.55 + topics[b] * 0.55 + rng.standard_normal((rest, DIM)) * (1.0 / np.sqrt(DIM))
    x = np.vstack([np.asarray(rows).reshape(-1, DIM), others]).astype(np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True), groups


def load(mem: Any, x: np.ndarray) -> list[str]:
    from reverie.model import Layer, MemoryRecord

    ids: list[str] = []
    batch: list[MemoryRecord] = []
    for i, vec in enumerate(x):
        rec = MemoryRecord(
            content=f"User noted item {i} of topic {i // 7} on day {i % 28 + 1}",
            user_id="bench",
            layer=Layer.EPISODIC,
            embedding=vec,
            created_at=START,
            recorded_at=START,
            updated_at=START,
            valid_from=START,
            storage_strength=1.0,
        )
        ids.append(rec.id)
        batch.append(rec)
        if len(batch) == 5000:
            mem.store.insert(batch)
            batch = []
    if batch:
        mem.store.insert(batch)
    return ids


def run(n: int, planted: float, workdir: Path, background: str) -> dict[str, Any]:
    from reverie import Memory, SettableClock
    from reverie.embed.testing import HashEmbedder

    rng = np.random.default_rng(n)
    x, groups = make_vectors(n, planted, rng, background)
    clock = SettableClock(START)
    with Memory(
        workdir / f"c{n}.db", config={"opslog": {"enabled": False}}, clock=clock, embedder=HashEmbedder(DIM)
    ) as mem:
        with Timer() as t_load:
            ids = load(mem, x)
        clock.set(START + timedelta(days=60))
        load_avg = load_average()
        with Timer() as t_step:
            report = mem.dream(steps=["consolidate"])
        step = report["steps"][0]
        owner = {}
        for start in range(0, len(ids), 2000):
            owner.update({r.id: r.superseded_by for r in mem.store.get(ids[start : start + 2000]).values()})
        written = {s for s in owner.values() if s is not None}
        whole = sum(1 for g in groups if len({owner[ids[i]] for i in g}) == 1 and owner[ids[g[0]]] is not None)
        d = step["details"]
        others = {}
        for name in ("themes", "abstraction"):  # the other two consolidation steps on the same store
            with Timer() as t_other:
                other = mem.dream(steps=[name])["steps"][0]
            others[name] = {
                "s": round(t_other.seconds, 2),
                "changed": other["changed"],
                "examined": other["examined"],
                **({"skipped": other["details"]["skipped"]} if "skipped" in other["details"] else {}),
            }
        return {
            "other_steps": others,
            "n": n,
            "background": background,
            "planted_groups": len(groups),
            "load_s": round(t_load.seconds, 2),
            "step_s": round(t_step.seconds, 2),
            "phases_s": d["seconds"],
            "candidates": d["candidates"],
            "groups_found": d["groups_found"],
            "groups_written": d["groups"],
            "neighbours": d["neighbours"],
            "written_groups_whole_planted": whole,
            "written_summaries": len(written),
            "load_average_before": load_avg,
            "load_average_after": load_average(),
        }


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="10000,100000")
    ap.add_argument("--planted", type=float, default=0.5, help="share of memories in planted groups")
    ap.add_argument("--background", choices=("random", "mixture"), default="random")
    ap.add_argument("--out", default=str(RESULTS_DIR / "consolidate.json"))
    args = ap.parse_args(argv)
    results = []
    with tempfile.TemporaryDirectory(prefix="rv-consolidate-") as tmp:
        for n in (int(s) for s in args.sizes.split(",")):
            res = run(n, args.planted, Path(tmp), args.background)
            print(
                f"n={n:>7} step {res['step_s']:6.2f}s phases {res['phases_s']} found {res['groups_found']} "
                f"written {res['groups_written']} ({res['neighbours']}) planted whole "
                f"{res['written_groups_whole_planted']}/{res['groups_written']} load {res['load_average_before']}; "
                f"themes/abstraction {res['other_steps']}"
            )
            results.append(res)
    write_json({"at": now_iso(), "machine": machine_info(), "results": results}, Path(args.out))


if __name__ == "__main__":
    main()
