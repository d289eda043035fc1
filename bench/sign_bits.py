"""How well the sign bits of quantised vectors prefilter a cold-store search (PostgreSQL's deep recall).

PostgreSQL ranks a user's quantised memories by the Hamming distance of their sign bits and re-scores only the
nearest few hundred (``store/postgres/search.py``, ``_PREFILTER``). This measures, on real text with the
default embedder, which share of the exact top k (cosine over the int8 vectors the dream cycle stores) is among
the nearest ``depth`` by sign bits, for the bits taken around zero and around the corpus's mean unit vector (what
the store does: ``schema.sign_bits``).

Data: the LoCoMo development turns (read from ``../shared/data``, never copied) and ``scale.py``'s prototype
texts in one corpus; the LoCoMo questions as queries.

Usage::

    PYTHONPATH=src .venv/bin/python bench/sign_bits.py
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np
from _benchlib import RESULTS_DIR, console, machine_info, now_iso, shared_data, write_json

DEPTHS = (200, 400, 600, 1200, 2400)


def corpus(conversations: int | None, prototypes: int) -> tuple[list[str], list[str], Any]:
    """The corpus texts, the questions, and the embedder that embeds them."""
    import locomo
    import scale

    from reverie.config import Settings
    from reverie.embed import make_embedder

    embedder = make_embedder(Settings.load().embedding)
    samples = locomo.load_samples(
        shared_data("locomo", "locomo_dev5.json"),
        limit_conversations=conversations,
        limit_sessions=None,
        limit_questions=None,
        stats=locomo.EvidenceStats(),
    )
    turns = [t.text for s in samples for _, _, ts in s.sessions for t in ts]
    questions = [q.text for s in samples for q in s.questions]
    return turns + scale.Prototypes(prototypes, seed=7).texts, questions, embedder


def _units(v: np.ndarray) -> np.ndarray:
    return v / np.where((n := np.linalg.norm(v, axis=-1, keepdims=True)) == 0, 1.0, n)


def capture(docs: np.ndarray, queries: np.ndarray, *, center: np.ndarray | None, k: int, depth: int) -> float:
    """Mean over queries of the share of the exact top ``k`` among the ``depth`` nearest by sign bits."""
    shift = center if center is not None else 0.0
    bits = (docs - shift) > 0
    shares = []
    for q in queries:
        top = set(np.argsort(-(docs @ q))[:k].tolist())
        hamming = (((q - shift) > 0) != bits).sum(axis=1)
        near = set(np.argsort(hamming, kind="stable")[:depth].tolist())
        shares.append(len(top & near) / k)
    return float(np.mean(shares))


def measure(texts: Sequence[str], questions: Sequence[str], embedder: Any, ks: Sequence[int]) -> dict[str, Any]:
    from reverie import vector_codec
    from reverie.embed.base import embed_queries
    from reverie.model import Precision

    vectors = np.asarray(embedder.embed(list(texts)), dtype=np.float32)
    blobs = [vector_codec.encode(v, Precision.INT8) for v in vectors]
    docs = _units(vector_codec.decode_rows(blobs, vectors.shape[1]))
    queries = _units(np.asarray(embed_queries(embedder, list(questions)), dtype=np.float32))
    mean = docs.mean(axis=0)
    rows: dict[str, Any] = {}
    for name, center in (("around zero", None), ("around the mean", mean)):
        rows[name] = {
            f"top{k}@{depth}": round(capture(docs, queries, center=center, k=k, depth=depth), 4)
            for k in ks
            for depth in DEPTHS
            if depth < len(docs)
        }
    return {"corpus": len(docs), "queries": len(queries), "capture": rows}


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--conversations", type=int, default=None, help="LoCoMo conversations (default: all)")
    p.add_argument("--prototypes", type=int, default=4000, help="scale.py prototype texts added to the corpus")
    p.add_argument("--out", type=Path, default=RESULTS_DIR / "sign_bits.json")
    args = p.parse_args(argv)
    texts, questions, embedder = corpus(args.conversations, args.prototypes)
    doc = {
        "benchmark": "sign-bits-prefilter",
        "date": now_iso(),
        "machine": machine_info(),
        "embedder": embedder.name,
        **measure(texts, questions, embedder, ks=(10, 60)),
    }
    for name, row in doc["capture"].items():
        console().print(f"{name:16s} " + "  ".join(f"{key} {value:.3f}" for key, value in row.items()))
    write_json(doc, args.out)
    return doc


if __name__ == "__main__":
    main()
