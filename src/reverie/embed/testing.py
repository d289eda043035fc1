"""A tiny deterministic embedder for unit tests (not for real use).

Feature-hashes lower-cased words and their character trigrams into ``dim`` buckets with
signed hashes (blake2b, stable across processes and platforms), then L2-normalises. Texts
that share words get similar vectors, which is all unit tests of the plumbing need; quality
tests use the real local model.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

_WORD = re.compile(r"\w+", re.UNICODE)


class HashEmbedder:
    """Deterministic bag-of-words/trigram hashing embedder (unit tests only)."""

    profile = "hash"

    def __init__(self, dim: int = 64) -> None:
        self.dim = dim
        self.name = f"hash-{dim}"
        self.calls = 0  # how many embed() calls reached the model (cache tests count them)

    def _features(self, text: str) -> list[tuple[str, float]]:
        words = _WORD.findall(text.casefold())
        feats: list[tuple[str, float]] = [(f"w:{w}", 1.0) for w in words]
        for w in words:
            padded = f"#{w}#"
            feats.extend((f"t:{padded[i : i + 3]}", 0.3) for i in range(len(padded) - 2))
        return feats

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        self.calls += 1
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for feat, weight in self._features(text):
                digest = hashlib.blake2b(feat.encode("utf-8"), digest_size=8).digest()
                h = int.from_bytes(digest, "little")
                sign = 1.0 if (h >> 63) & 1 else -1.0
                out[row, h % self.dim] += sign * weight
            norm = float(np.linalg.norm(out[row]))
            if norm == 0.0:
                out[row, 0] = 1.0
            else:
                out[row] /= norm
        return out
