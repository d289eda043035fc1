"""The Cognitive Memory design's embedding cache: LRU, 200 entries, 30-minute TTL, keyed by SHA-256 of the text.

:class:`CachedEmbedder` wraps any :class:`~reverie.embed.base.Embedder` and has its name, dim,
profile, identity and (when the wrapped model has one) query encoder. Only the texts not in the
cache (each once, in one batch) reach the wrapped embedder. The key also holds the model name (and
whether the text was embedded as a query), so two models never share vectors. Time comes from the
injected ``clock`` (time is an input), which makes the TTL testable.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import numpy as np
import numpy.typing as npt

from reverie.clock import Clock, system_clock
from reverie.embed.base import Embedder, identity_of
from reverie.errors import EmbeddingError, InvalidInputError

F32 = npt.NDArray[np.float32]

DEFAULT_MAX_ENTRIES = 200  # the Cognitive Memory design's cache size
DEFAULT_TTL_S = 30 * 60.0  # 30 minutes


@dataclass(frozen=True)
class CacheStats:
    """Counters of a :class:`CachedEmbedder` since it was built (``clear()`` keeps them)."""

    hits: int
    misses: int
    size: int

    @property
    def hit_rate(self) -> float:
        total = self.hits + self.misses
        return self.hits / total if total else 0.0


def cache_key(model: str, text: str) -> str:
    """Hex SHA-256 of ``model``, a NUL separator and ``text`` (UTF-8)."""
    data = f"{model}\x00{text}".encode("utf-8", "surrogatepass")
    return hashlib.sha256(data).hexdigest()


class CachedEmbedder:
    """An LRU + TTL cache in front of an embedder; thread-safe.

    ``max_entries`` >= 1; ``ttl_s`` <= 0 keeps entries until evicted by size. Two threads
    missing the same text at the same moment may both compute it (the result is the same).
    """

    def __init__(
        self,
        inner: Embedder,
        *,
        max_entries: int = DEFAULT_MAX_ENTRIES,
        ttl_s: float = DEFAULT_TTL_S,
        clock: Clock = system_clock,
    ) -> None:
        if max_entries < 1:
            raise InvalidInputError(f"max_entries must be >= 1, got {max_entries}")
        self.inner = inner
        self.name = inner.name
        self.profile = inner.profile
        self.max_entries = max_entries
        self.ttl = timedelta(seconds=ttl_s) if ttl_s > 0 else None
        self._clock = clock
        self._entries: OrderedDict[str, tuple[datetime, F32]] = OrderedDict()
        self._lock = threading.Lock()
        self._hits = 0
        self._misses = 0
        query = getattr(inner, "embed_query", None)
        if callable(query):  # an asymmetric model: queries are cached apart from stored texts
            self.embed_query = lambda texts: self._cached(texts, query, f"{self.name}\x00query")

    @property
    def dim(self) -> int:
        """The wrapped embedder's dimension (read through: an API embedder may learn it late)."""
        return self.inner.dim

    @property
    def identity(self) -> dict[str, object]:
        """The wrapped embedder's identity (see :func:`reverie.embed.base.identity_of`)."""
        return identity_of(self.inner)

    def embed(self, texts: Sequence[str]) -> F32:
        """Vectors of ``texts``: cached rows are reused, only misses reach the wrapped embedder."""
        return self._cached(texts, self.inner.embed, self.name)

    def _cached(self, texts: Sequence[str], compute: Callable[[list[str]], Any], model: str) -> F32:
        if isinstance(texts, str):
            raise InvalidInputError("embed() takes a sequence of strings, not one string")
        if not texts:
            return np.asarray(compute([]), dtype=np.float32)
        keys = [cache_key(model, text) for text in texts]
        found = self._lookup(keys)
        missing = {key: text for key, text in zip(keys, texts, strict=True) if key not in found}
        if missing:
            found.update(self._compute(missing, compute))
        return np.stack([found[key] for key in keys]).astype(np.float32, copy=False)

    def clear(self) -> None:
        """Forget every cached vector (the cache is session-scoped)."""
        with self._lock:
            self._entries.clear()

    @property
    def stats(self) -> CacheStats:
        with self._lock:
            return CacheStats(hits=self._hits, misses=self._misses, size=len(self._entries))

    def __len__(self) -> int:
        with self._lock:
            return len(self._entries)

    def __contains__(self, text: object) -> bool:
        """Whether an unexpired vector of ``text`` is cached (does not refresh recency)."""
        if not isinstance(text, str):
            return False
        now = self._clock()
        with self._lock:
            entry = self._entries.get(cache_key(self.name, text))
            return entry is not None and not self._expired(entry[0], now)

    # ------------------------------------------------------------------ internals

    def _expired(self, stored_at: datetime, now: datetime) -> bool:
        return self.ttl is not None and now - stored_at >= self.ttl

    def _lookup(self, keys: list[str]) -> dict[str, F32]:
        """Unexpired cached vectors of ``keys`` (refreshing their recency); counts hits/misses."""
        now = self._clock()
        found: dict[str, F32] = {}
        with self._lock:
            for key in keys:
                entry = self._entries.get(key)
                if entry is not None and self._expired(entry[0], now):
                    del self._entries[key]
                    entry = None
                if entry is None:
                    self._misses += 1
                    continue
                self._hits += 1
                self._entries.move_to_end(key)
                found[key] = entry[1]
        return found

    def _compute(self, missing: dict[str, str], compute: Callable[[list[str]], Any]) -> dict[str, F32]:
        vectors = np.asarray(compute(list(missing.values())), dtype=np.float32)
        if vectors.ndim != 2 or vectors.shape[0] != len(missing):
            raise EmbeddingError(f"embedder {self.name} returned shape {vectors.shape} for {len(missing)} texts")
        now = self._clock()
        computed: dict[str, F32] = {}
        with self._lock:
            for key, row in zip(missing, vectors, strict=True):
                vector = row.copy()
                vector.flags.writeable = False
                computed[key] = vector
                self._entries[key] = (now, vector)
                self._entries.move_to_end(key)
            while len(self._entries) > self.max_entries:
                self._entries.popitem(last=False)
        return computed


__all__ = ["DEFAULT_MAX_ENTRIES", "DEFAULT_TTL_S", "CacheStats", "CachedEmbedder", "cache_key"]
