"""The query plan: the intent, the sub-queries and their vectors.

Each sub-query is embedded together with its HyDE variants in one embed call (the search vector is their
centroid). With ``read.overlap_embedding`` the embedding runs in a worker thread while the caller runs the
full-text searches, which need no query vector.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from reverie.config.read import ReadSettings
from reverie.embed.base import Embedder
from reverie.read import hyde, intent

F32 = npt.NDArray[np.float32]
Routed = tuple[intent.Route, list[str]]


@dataclass(slots=True)
class QueryPlan:
    """What the search runs: the route, the sub-queries and one raw and one search vector per sub-query."""

    route: intent.Route
    subqueries: list[str]
    raw: F32  # one raw query vector per sub-query
    search: F32  # one search vector (HyDE centroid) per sub-query
    hyde: dict[str, Any]

    @property
    def weights(self) -> dict[str, float]:
        """The channel weights of the intent's strategy."""
        return {"vector": self.route.strategy.vector_weight, "text": self.route.strategy.text_weight}


def make(embedder: Embedder, cfg: ReadSettings, routed: Routed) -> QueryPlan:
    """The sub-queries' vectors (HyDE variants embedded in the same call)."""
    rt, subs = routed
    texts: list[str] = []
    spans: list[tuple[int, int]] = []
    hyde_info: dict[str, Any] = {}
    for sub in subs:
        h_intent, docs = hyde.variants(sub, count=cfg.hyde_variants) if cfg.hyde else ("off", [])
        spans.append((len(texts), len(docs)))
        texts.extend([sub, *docs])
        hyde_info[sub] = {"intent": h_intent, "variants": docs}
    vecs = np.asarray(embedder.embed(texts), dtype=np.float32)
    raw = np.stack([vecs[start] for start, _ in spans])
    search = np.stack(
        [hyde.centroid(vecs[s], vecs[s + 1 : s + 1 + n], query_weight=cfg.hyde_query_weight) for s, n in spans]
    )
    return QueryPlan(rt, subs, raw, search, hyde_info)


class Pending:
    """A query plan being made: calling it waits for the plan; :meth:`done` says whether it is there."""

    def __init__(self, result: Callable[[], QueryPlan], done: Callable[[], bool]) -> None:
        self._result = result
        self.done = done

    def __call__(self) -> QueryPlan:
        return self._result()


def start(embedder: Embedder, cfg: ReadSettings, routed: Routed) -> Pending:
    """:func:`make`, started now; the returned :class:`Pending` waits for it. With ``read.overlap_embedding`` it
    runs in a worker thread. The worker never touches the store, so a caller holding a store transaction cannot
    deadlock it."""
    if not cfg.overlap_embedding:
        made = make(embedder, cfg, routed)
        return Pending(lambda: made, lambda: True)
    started = threading.Event()

    def task() -> QueryPlan:
        started.set()
        return make(embedder, cfg, routed)

    future = _executor().submit(task)
    # the worker takes the interpreter lock first: it tokenises and enters the model, which runs without
    # the lock, before the caller's Python work (access updates, full-text searches) goes on; otherwise
    # the worker can wait out the interpreter's switch interval before the model starts
    started.wait(0.05)
    return Pending(future.result, future.done)


_EXECUTOR: ThreadPoolExecutor | None = None
_EXECUTOR_LOCK = threading.Lock()


def _executor() -> ThreadPoolExecutor:
    """The process's worker threads for overlapped query embedding (built on first use, rebuilt in
    a forked child, whose copy would hold its parent's threads)."""
    global _EXECUTOR
    if _EXECUTOR is None:
        with _EXECUTOR_LOCK:
            if _EXECUTOR is None:
                _EXECUTOR = ThreadPoolExecutor(max_workers=4, thread_name_prefix="reverie-read")
    return _EXECUTOR


def _reset_executor() -> None:
    global _EXECUTOR
    _EXECUTOR = None


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_reset_executor)


__all__ = ["Pending", "QueryPlan", "Routed", "make", "start"]
