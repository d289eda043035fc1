"""Maximal Marginal Relevance (Carbonell & Goldstein 1998), λ = 0.7.

``MMR(d) = λ·relevance(d) - (1 - λ)·max_{s ∈ selected} sim(d, s)``, selected greedily. Relevance
is the candidate's score scaled to [0, 1] by the best score of the pool; similarity is the cosine
of the stored embeddings (a text-based cosine as the diversity proxy). Candidates without
an embedding have similarity 0 to everything.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt


def mmr_select(
    scores: Sequence[float], vectors: npt.NDArray[np.float32], *, k: int, lam: float
) -> list[tuple[int, float, float]]:
    """Indices of the ``k`` selected candidates in selection order, each with its MMR value and its
    max similarity to the ones selected before it. ``vectors`` rows are L2-normalised (zeros allowed)."""
    n = len(scores)
    if n == 0 or k <= 0:
        return []
    rel = np.asarray(scores, dtype=np.float64)
    top = float(rel.max())
    rel = rel / top if top > 0 else rel
    sims = (vectors @ vectors.T).astype(np.float64) if len(vectors) else np.zeros((n, n))
    max_sim = np.zeros(n)  # nothing selected yet: no redundancy penalty
    base = lam * rel  # a selected candidate's base becomes -inf, and so its value
    value = base.copy()
    penalty = np.empty(n)
    out: list[tuple[int, float, float]] = []
    for _ in range(min(k, n)):
        i = int(np.argmax(value))
        out.append((i, float(value[i]), float(max_sim[i])))
        base[i] = -np.inf
        np.maximum(max_sim, sims[i], out=max_sim)
        np.multiply(max_sim, 1.0 - lam, out=penalty)
        np.subtract(base, penalty, out=value)
    return out


__all__ = ["mmr_select"]
