"""k-nearest neighbours inside a candidate set, without comparing all pairs at scale.

Dream steps that group memories (consolidation, themes and abstraction) need, for
each candidate, its most similar other candidates. :func:`knn` answers that for a matrix of
L2-normalised vectors:

* up to ``exact_max`` rows: exact cosine, computed in row blocks with numpy (``block × n`` at a time);
* above: an HNSW graph (hnswlib) built over a PCA projection of the rows to ``ann_dims`` dimensions
  proposes ``pool·k`` candidates per row, which are then re-scored with the full vectors, so every
  similarity returned is exact and only the candidate *recall* is approximate. Cost grows as n·log n.

``exact_max`` is where the two cost the same (``bench/consolidate.py`` measures both, and the recall of
planted groups). The graph is built on the projection because a graph on the full vectors costs more to
build than the whole projected search. BLAS runs single-threaded here: threaded BLAS on a busy small
machine makes the projection and the exact blocks slower.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from reverie._threads import single_blas_thread
from reverie.config.dream_consolidation import NeighborSettings
from reverie.errors import InvalidInputError

Matrix = npt.NDArray[np.float32]
Indices = npt.NDArray[np.int64]


@dataclass(frozen=True, slots=True)
class Neighbours:
    """Row ``i``'s neighbours, best first: ``indices[i, j]`` (``-1`` = none) with cosine ``similarities[i, j]``
    (``-inf`` = none). A row is never its own neighbour."""

    indices: Indices
    similarities: Matrix
    method: str  # "exact" | "hnsw"

    def of(self, row: int) -> list[tuple[int, float]]:
        """The neighbours of ``row`` as ``(index, similarity)`` pairs, best first."""
        idx, sims = self.indices[row], self.similarities[row]
        return [(int(i), float(s)) for i, s in zip(idx, sims, strict=True) if i >= 0]


def _normalised(vectors: npt.ArrayLike) -> Matrix:
    x = np.asarray(vectors, dtype=np.float32)
    if x.ndim != 2:
        raise InvalidInputError(f"vectors must be a 2-d matrix, got shape {x.shape}")
    if not np.all(np.isfinite(x)):
        raise InvalidInputError("vectors contain NaN or infinity")
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    out: Matrix = (x / norms).astype(np.float32)
    return out


def knn(
    vectors: npt.ArrayLike,
    k: int,
    *,
    min_similarity: float | None = None,
    cfg: NeighborSettings | None = None,
) -> Neighbours:
    """The ``k`` most cosine-similar other rows of each row (see the module docs).

    ``min_similarity`` drops neighbours below it (they come back as ``-1`` / ``-inf``).
    """
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise InvalidInputError("k must be a positive integer")
    cfg = cfg or NeighborSettings()
    x = _normalised(vectors)
    n = x.shape[0]
    kk = min(k, max(n - 1, 0))
    if kk == 0:
        result = Neighbours(np.full((n, k), -1, dtype=np.int64), np.full((n, k), -np.inf, dtype=np.float32), "exact")
    else:
        # one BLAS thread (see the module docs); hnswlib keeps its own threads
        with single_blas_thread():
            result = _exact(x, kk, cfg.block_rows) if n <= cfg.exact_max else _hnsw(x, kk, cfg)
    return _finish(result, k, min_similarity)


def _finish(res: Neighbours, k: int, min_similarity: float | None) -> Neighbours:
    idx, sims = res.indices, res.similarities
    if idx.shape[1] < k:  # fewer rows than k: pad
        pad = k - idx.shape[1]
        idx = np.hstack([idx, np.full((idx.shape[0], pad), -1, dtype=np.int64)])
        sims = np.hstack([sims, np.full((sims.shape[0], pad), -np.inf, dtype=np.float32)])
    if min_similarity is not None:
        low = sims < min_similarity
        idx = np.where(low, -1, idx)
        sims = np.where(low, np.float32(-np.inf), sims).astype(np.float32)
    return Neighbours(idx.astype(np.int64), sims.astype(np.float32), res.method)


def _top(sims: Matrix, cand: Indices | None, k: int) -> tuple[Indices, Matrix]:
    """The ``k`` best columns of each row of ``sims`` (best first), mapped through ``cand`` when given."""
    if sims.shape[1] > k:
        part = np.argpartition(-sims, k - 1, axis=1)[:, :k]
    else:
        part = np.broadcast_to(np.arange(sims.shape[1]), sims.shape).copy()
    top = np.take_along_axis(sims, part, axis=1)
    order = np.argsort(-top, axis=1, kind="stable")
    part = np.take_along_axis(part, order, axis=1)
    top = np.take_along_axis(top, order, axis=1)
    idx = part if cand is None else np.take_along_axis(cand, part, axis=1)
    idx = np.where(np.isfinite(top), idx, -1)
    return idx.astype(np.int64), top.astype(np.float32)


def _exact(x: Matrix, k: int, block: int) -> Neighbours:
    n = x.shape[0]
    indices = np.empty((n, k), dtype=np.int64)
    sims = np.empty((n, k), dtype=np.float32)
    for start in range(0, n, block):
        stop = min(n, start + block)
        s = x[start:stop] @ x.T
        rows = np.arange(stop - start)
        s[rows, rows + start] = -np.inf  # never your own neighbour
        indices[start:stop], sims[start:stop] = _top(s, None, k)
    return Neighbours(indices, sims, "exact")


def _projection(x: Matrix, cfg: NeighborSettings) -> Matrix:
    """``x`` projected on its top ``ann_dims`` principal directions (fitted on a sample), row-normalised."""
    n, d = x.shape
    if d <= cfg.ann_dims:
        return x
    rng = np.random.default_rng(cfg.seed)
    sample = x[rng.choice(n, size=min(n, cfg.pca_sample), replace=False)]
    mean = sample.mean(axis=0)
    _, vectors = np.linalg.eigh(np.cov(sample - mean, rowvar=False))  # eigenvalues ascending
    basis = vectors[:, ::-1][:, : cfg.ann_dims].astype(np.float32)
    return _normalised(x @ basis - mean @ basis)


def _hnsw(x: Matrix, k: int, cfg: NeighborSettings) -> Neighbours:
    import hnswlib

    n = x.shape[0]
    y = _projection(x, cfg)
    graph = hnswlib.Index(space="ip", dim=int(y.shape[1]))
    graph.init_index(max_elements=n, ef_construction=cfg.hnsw_ef_construction, M=cfg.hnsw_m, random_seed=cfg.seed)
    graph.add_items(y, np.arange(n))
    pool = min(n, cfg.pool * k + 1)  # +1: the row itself is usually its own first hit
    try:
        graph.set_ef(pool + cfg.ef_extra)
        labels, _ = graph.knn_query(y, k=pool)
    except RuntimeError:  # hnswlib could not fill pool results for some row: search wider once
        graph.set_ef(max(64, 8 * pool))
        labels, _ = graph.knn_query(y, k=pool)
    cand = np.asarray(labels, dtype=np.int64)
    indices = np.empty((n, k), dtype=np.int64)
    sims = np.empty((n, k), dtype=np.float32)
    block = max(1, (64 * 1024 * 1024) // (4 * pool * x.shape[1]))  # ≈64 MB of gathered vectors at a time
    for start in range(0, n, block):
        stop = min(n, start + block)
        c = cand[start:stop]
        s = np.einsum("id,ikd->ik", x[start:stop], x[c], optimize=True).astype(np.float32)
        s[c == np.arange(start, stop)[:, None]] = -np.inf
        # a row proposed twice (graph duplicates) would show twice: keep its first occurrence
        sorted_c = np.sort(c, axis=1)
        if np.any(sorted_c[:, 1:] == sorted_c[:, :-1]):
            s = _mask_duplicates(c, s)
        indices[start:stop], sims[start:stop] = _top(s, c, k)
    return Neighbours(indices, sims, "hnsw")


def _mask_duplicates(c: Indices, s: Matrix) -> Matrix:
    out = s.copy()
    for r in range(c.shape[0]):
        _, first = np.unique(c[r], return_index=True)
        keep = np.zeros(c.shape[1], dtype=bool)
        keep[first] = True
        out[r, ~keep] = -np.inf
    return out


__all__ = ["Neighbours", "knn"]
