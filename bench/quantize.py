"""Seed 002 embedding quantisation: bytes per embedding, deep-recall quality and search latency.

Data: the LoCoMo development turns (``../shared/data/locomo/locomo_dev5.json``; read from there,
never copied) and its questions of categories 1–4, embedded with all-MiniLM-L6-v2. The vectors are
cached in ``--cache-dir`` (outside the repository). Every turn is one memory of ONE user scope.

For each backend and each variant — ``float32`` (the reference), ``int8``, ``int4``, ``int2`` (every
memory at that precision) and ``tiers`` (the ``quantize`` dream step picks each memory's precision
from its retention: last accesses spread evenly over the last 90 days) — a fresh store gets the
same memories in the cold store, and every question is asked as a deep recall
(``store.vector_search`` over every store and status, k = 10, query vectors precomputed):

* **overlap@10**: the share of the float32 store's top 10 that the variant also returns;
* **evidence recall@10**: the share of the question's LoCoMo evidence turns among the top 10;
* deep-recall latency p50/p95; and, with half of the memories hot (float32) and the other half
  cold at the variant's precision, the latency of a hot-only search (what quantised cold rows cost
  the default search path);
* bytes of stored embeddings, and for ``tiers`` the dream step's time, transitions and bytes saved.

``--scale N`` adds a PostgreSQL/SQLite run with N int4 memories (the LoCoMo vectors tiled with
noise) to show how deep-recall latency grows with the cold quantised set.

Usage::

    PYTHONPATH=src .venv/bin/python bench/quantize.py --backend both
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np
from _benchlib import (
    RESULTS_DIR,
    PgServer,
    console,
    fmt,
    latency_stats,
    machine_info,
    memory_config,
    now_iso,
    shared_data,
    write_json,
)

from reverie import Memory, SettableClock
from reverie import vector_codec as quantize
from reverie.config.core import StorageSettings
from reverie.embed.testing import HashEmbedder
from reverie.model import Layer, MemoryRecord, Precision, Status, StoreTier
from reverie.store.base import MemoryFilter, Store

DEFAULT_DATA = shared_data("locomo", "locomo_dev5.json")
NOW = datetime(2024, 1, 1, tzinfo=UTC)
DIM = 384
DEEP = MemoryFilter(user_id="u", stores=None, statuses=None)
HOT = MemoryFilter(user_id="u", statuses=None)
VARIANTS = ("float32", "int8", "int4", "int2", "tiers")


def load_locomo(path: Path, cache_dir: Path) -> tuple[list[str], np.ndarray, np.ndarray, list[list[int]]]:
    """Turn ids, turn vectors, question vectors and each question's evidence (turn indexes)."""
    convs = json.loads(path.read_text("utf-8"))
    ids: list[str] = []
    texts: list[str] = []
    for ci, conv in enumerate(convs):
        for key, turns in conv["conversation"].items():
            if key.startswith("session_") and isinstance(turns, list):
                for t in turns:
                    ids.append(f"{ci}:{t['dia_id']}")
                    texts.append(f"{t['speaker']}: {t['text']}")
    index = {turn: i for i, turn in enumerate(ids)}
    questions: list[str] = []
    evidence: list[list[int]] = []
    for ci, conv in enumerate(convs):
        for q in conv["qa"]:
            found = [index[f"{ci}:{e}"] for e in q.get("evidence", []) if f"{ci}:{e}" in index]
            if q.get("category") in (1, 2, 3, 4) and found:
                questions.append(q["question"])
                evidence.append(found)
    cache_dir.mkdir(parents=True, exist_ok=True)
    cache = cache_dir / f"locomo-minilm-{len(texts)}-{len(questions)}.npz"
    if cache.exists():
        data = np.load(cache)
        return ids, data["turns"], data["questions"], evidence
    from reverie.embed.minilm import MiniLMEmbedder

    model = MiniLMEmbedder()
    turns_vec, q_vec = model.embed(texts), model.embed(questions)
    np.savez(cache, turns=turns_vec, questions=q_vec)
    return ids, turns_vec, q_vec, evidence


@contextmanager
def open_target(backend: str, workdir: Path, pg: PgServer | None, name: str) -> Iterator[str]:
    if backend == "sqlite":
        yield str(workdir / f"{name}.db")
        return
    assert pg is not None
    with pg.database() as url:
        yield url


def open_store(target: str) -> Store:
    if target.startswith("postgresql"):
        from reverie.store.postgres import PostgresStore

        return PostgresStore(target, settings=StorageSettings(), dim=DIM)
    from reverie.store.sqlite import SQLiteStore

    return SQLiteStore(target, settings=StorageSettings(), dim=DIM)


def records(vectors: np.ndarray, precision: Precision, *, hot_every: int = 0, offset: int = 0) -> list[MemoryRecord]:
    """Cold episodic memories (every ``hot_every``-th one hot at float32), last accesses spread over 90 days."""
    out = []
    n = len(vectors)
    for i, vec in enumerate(vectors, start=offset):
        hot = hot_every > 0 and i % hot_every == 0
        seen = NOW - timedelta(days=90.0 * i / max(n - 1, 1))
        out.append(
            MemoryRecord(
                f"memory {i}",
                id=f"m{i:06d}",
                user_id="u",
                layer=Layer.EPISODIC,
                store=StoreTier.HOT if hot else StoreTier.COLD,
                status=Status.ACTIVE if hot else Status.DORMANT,
                source="human",
                trust=1.0,
                embedding=vec,
                embedding_precision=Precision.FLOAT32 if hot else precision,
                created_at=seen,
                last_accessed_at=seen,
            )
        )
    return out


def searches(st: Store, queries: np.ndarray, flt: MemoryFilter, k: int = 10) -> tuple[list[list[int]], list[float]]:
    st.vector_search(queries[0], flt, k)  # warm-up: loads / builds the index
    tops, times = [], []
    for q in queries:
        t0 = time.perf_counter()
        hits = st.vector_search(q, flt, k)
        times.append(time.perf_counter() - t0)
        tops.append([int(h.id[1:]) for h in hits])
    return tops, times


def run_variant(
    backend: str, variant: str, vectors: np.ndarray, queries: np.ndarray, workdir: Path, pg: PgServer | None
) -> dict[str, Any]:
    out: dict[str, Any] = {"variant": variant}
    precision = Precision.FLOAT32 if variant in ("float32", "tiers") else Precision(variant)
    with open_target(backend, workdir, pg, f"{variant}-deep") as target:
        if variant == "tiers":
            mem = Memory(target, config=memory_config(workdir), clock=SettableClock(NOW), embedder=HashEmbedder(DIM))
            mem.store.insert(records(vectors, Precision.FLOAT32))
            t0 = time.perf_counter()
            report = mem.dream(steps=["quantize"])
            out["step_seconds"] = round(time.perf_counter() - t0, 3)
            out["step"] = report["steps"][0]
            st = mem.store
        else:
            st = open_store(target)
            st.insert(records(vectors, precision))
        counts: dict[str, int] = {}
        for batch in st.scan(DEEP, batch_size=2000, omit=frozenset({"inputs", "importance_channels"})):
            for r in batch:
                counts[r.embedding_precision.value] = counts.get(r.embedding_precision.value, 0) + 1
        out["precisions"] = counts
        out["embedding_bytes"] = sum(quantize.stored_bytes(p, DIM) * n for p, n in counts.items())
        tops, times = searches(st, queries, DEEP)
        out["deep_top10"] = tops
        out["deep_latency"] = latency_stats(times)
        (mem.close() if variant == "tiers" else st.close())
    with open_target(backend, workdir, pg, f"{variant}-hot") as target:
        st = open_store(target)
        st.insert(records(vectors, precision if variant != "tiers" else Precision.INT4, hot_every=2))
        _, times = searches(st, queries, HOT)
        out["hot_latency"] = latency_stats(times)
        st.close()
    return out


def scale_run(
    backend: str, n: int, vectors: np.ndarray, queries: np.ndarray, workdir: Path, pg: PgServer | None
) -> dict[str, Any]:
    rng = np.random.default_rng(0)
    reps = -(-n // len(vectors))
    tiled = np.concatenate(
        [vectors + 0.05 * rng.standard_normal(vectors.shape).astype(np.float32) for _ in range(reps)]
    )[:n]
    tiled /= np.linalg.norm(tiled, axis=1, keepdims=True)
    out: dict[str, Any] = {"n": n}
    for precision in (Precision.FLOAT32, Precision.INT4):
        with open_target(backend, workdir, pg, f"scale-{precision.value}") as target:
            st = open_store(target)
            for start in range(0, n, 5000):
                st.insert(records(tiled[start : start + 5000], precision, offset=start))
            _, times = searches(st, queries[:200], DEEP)
            out[precision.value] = latency_stats(times)
            st.close()
    return out


def summarise(results: dict[str, Any], evidence: list[list[int]]) -> None:
    con = console()
    for backend, variants in results["backends"].items():
        ref = {v["variant"]: v for v in variants["variants"]}["float32"]["deep_top10"]
        con.print(f"\n[bold]{backend}[/bold]")
        con.print(
            f"{'variant':8} {'bytes/emb':>9} {'overlap@10':>10} {'evidence R@10':>13} "
            f"{'deep p50 ms':>11} {'deep p95 ms':>11} {'hot p50 ms':>10}"
        )
        for v in variants["variants"]:
            tops = v["deep_top10"]
            overlap = float(np.mean([len(set(a) & set(b)) / 10 for a, b in zip(ref, tops, strict=True)]))
            recall = float(np.mean([len(set(e) & set(t)) / len(e) for e, t in zip(evidence, tops, strict=True)]))
            v["overlap_at_10"], v["evidence_recall_at_10"] = round(overlap, 4), round(recall, 4)
            n = sum(v["precisions"].values())
            con.print(
                f"{v['variant']:8} {v['embedding_bytes'] / n:9.0f} {overlap:10.3f} {recall:13.3f} "
                f"{fmt(v['deep_latency']['p50_ms'])!s:>11} {fmt(v['deep_latency']['p95_ms'])!s:>11} "
                f"{fmt(v['hot_latency']['p50_ms'])!s:>10}"
            )
            del v["deep_top10"]
        tiers = {v["variant"]: v for v in variants["variants"]}["tiers"]
        con.print(f"tiers: {tiers['precisions']}, quantize step {tiers['step_seconds']} s, {tiers['step']['details']}")
        if "scale" in variants:
            con.print(f"scale: {variants['scale']}")


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--backend", choices=("sqlite", "postgres", "both"), default="sqlite")
    ap.add_argument("--limit-turns", type=int, default=0, help="use only the first N turns (0: all)")
    ap.add_argument("--scale", type=int, default=0, help="also time deep recall over N int4 memories")
    ap.add_argument("--cache-dir", type=Path, default=Path(tempfile.gettempdir()) / "reverie-bench-quantize")
    ap.add_argument("--out", type=Path, default=RESULTS_DIR / "quantize.json")
    args = ap.parse_args(argv)
    _, vectors, queries, evidence = load_locomo(args.data, args.cache_dir)
    if args.limit_turns:
        vectors = vectors[: args.limit_turns]
        keep = [i for i, e in enumerate(evidence) if all(x < args.limit_turns for x in e)]
        queries, evidence = queries[keep], [evidence[i] for i in keep]
    backends = ["sqlite", "postgres"] if args.backend == "both" else [args.backend]
    pg = PgServer() if "postgres" in backends else None
    results: dict[str, Any] = {
        "at": now_iso(),
        "machine": machine_info(),
        "turns": len(vectors),
        "questions": len(queries),
        "backends": {},
    }
    with tempfile.TemporaryDirectory(prefix="reverie-bench-quantize-") as tmp:
        for backend in backends:
            variants = [run_variant(backend, v, vectors, queries, Path(tmp), pg) for v in VARIANTS]
            results["backends"][backend] = {"variants": variants}
            if args.scale:
                results["backends"][backend]["scale"] = scale_run(backend, args.scale, vectors, queries, Path(tmp), pg)
    summarise(results, evidence)
    write_json(results, args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
