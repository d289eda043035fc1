"""seed 001's embedding cache: LRU 200, TTL 30 minutes, SHA-256 keys, only misses embedded."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import threading
from collections.abc import Sequence
from datetime import timedelta
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest

from reverie.clock import SettableClock
from reverie.embed import CachedEmbedder, Embedder, HashEmbedder
from reverie.embed.cache import DEFAULT_MAX_ENTRIES, DEFAULT_TTL_S, cache_key
from reverie.errors import EmbeddingError, InvalidInputError


class RecordingEmbedder(HashEmbedder):
    """A HashEmbedder that also remembers which texts reached it."""

    def __init__(self, dim: int = 16) -> None:
        super().__init__(dim)
        self.seen: list[list[str]] = []

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        self.seen.append(list(texts))
        return super().embed(texts)


@pytest.fixture
def clock() -> SettableClock:
    return SettableClock()


@pytest.fixture
def inner() -> RecordingEmbedder:
    return RecordingEmbedder()


@pytest.fixture
def cached(inner: RecordingEmbedder, clock: SettableClock) -> CachedEmbedder:
    return CachedEmbedder(inner, clock=clock)


def test_seed001_defaults() -> None:
    assert DEFAULT_MAX_ENTRIES == 200
    assert DEFAULT_TTL_S == 30 * 60


def test_same_identity_as_the_wrapped_embedder(cached: CachedEmbedder, inner: RecordingEmbedder) -> None:
    assert (cached.name, cached.dim, cached.profile) == (inner.name, inner.dim, inner.profile)
    assert isinstance(cached, Embedder)


def test_vectors_equal_the_wrapped_embedders(cached: CachedEmbedder) -> None:
    texts = ["alpha beta", "gamma", "alpha beta"]
    np.testing.assert_array_equal(cached.embed(texts), HashEmbedder(16).embed(texts))
    out = cached.embed(texts)
    assert out.dtype == np.float32
    assert out.shape == (3, 16)


def test_only_misses_reach_the_wrapped_embedder(cached: CachedEmbedder, inner: RecordingEmbedder) -> None:
    cached.embed(["one", "two"])
    assert inner.calls == 1
    cached.embed(["two", "one"])
    assert inner.calls == 1  # all hits
    cached.embed(["one", "three", "two", "four", "three"])
    assert inner.calls == 2
    assert inner.seen[-1] == ["three", "four"]  # one batch, each miss once
    stats = cached.stats
    assert (stats.hits, stats.misses, stats.size) == (4, 5, 4)
    assert stats.hit_rate == pytest.approx(4 / 9)


def test_lru_eviction_at_200(cached: CachedEmbedder, inner: RecordingEmbedder) -> None:
    texts = [f"memory {i}" for i in range(200)]
    cached.embed(texts)
    assert len(cached) == 200
    cached.embed(["memory 0"])  # now the most recently used
    cached.embed(["memory 200"])  # evicts the least recently used: memory 1
    assert len(cached) == 200
    assert "memory 0" in cached
    assert "memory 1" not in cached
    assert "memory 2" in cached
    calls = inner.calls
    cached.embed(["memory 0", "memory 2"])
    assert inner.calls == calls
    cached.embed(["memory 1"])
    assert inner.calls == calls + 1


def test_small_capacity(inner: RecordingEmbedder, clock: SettableClock) -> None:
    small = CachedEmbedder(inner, max_entries=2, clock=clock)
    small.embed(["a", "b", "c"])
    assert len(small) == 2
    assert "a" not in small
    with pytest.raises(InvalidInputError):
        CachedEmbedder(inner, max_entries=0)


def test_ttl_30_minutes(cached: CachedEmbedder, inner: RecordingEmbedder, clock: SettableClock) -> None:
    cached.embed(["remember me"])
    clock.advance(timedelta(minutes=29, seconds=59))
    cached.embed(["remember me"])
    assert inner.calls == 1
    assert "remember me" in cached
    clock.advance(seconds=1)  # 30 minutes after it was computed (hits do not extend the TTL)
    assert "remember me" not in cached
    cached.embed(["remember me"])
    assert inner.calls == 2
    clock.advance(minutes=29)
    cached.embed(["remember me"])
    assert inner.calls == 2  # the recomputed entry is fresh again


def test_ttl_zero_never_expires(inner: RecordingEmbedder, clock: SettableClock) -> None:
    forever = CachedEmbedder(inner, ttl_s=0, clock=clock)
    forever.embed(["x"])
    clock.advance(timedelta(days=365))
    forever.embed(["x"])
    assert inner.calls == 1


def test_keys_are_sha256_of_model_and_text() -> None:
    expected = hashlib.sha256(b"hash-16\x00hello").hexdigest()
    assert cache_key("hash-16", "hello") == expected
    assert cache_key("model-a", "hello") != cache_key("model-b", "hello")
    assert len(cache_key("m", "\ud800 lone surrogate")) == 64  # never crashes on odd strings


def test_clear(cached: CachedEmbedder, inner: RecordingEmbedder) -> None:
    cached.embed(["a", "b"])
    cached.clear()
    assert len(cached) == 0
    cached.embed(["a"])
    assert inner.calls == 2


def test_results_do_not_alias_the_cache(cached: CachedEmbedder) -> None:
    first = cached.embed(["mutable?"])
    first[0, :] = 0.0
    again = cached.embed(["mutable?"])
    assert np.linalg.norm(again[0]) == pytest.approx(1.0)


def test_empty_input(cached: CachedEmbedder, inner: RecordingEmbedder) -> None:
    out = cached.embed([])
    assert out.shape == (0, 16)
    assert cached.stats.misses == 0
    with pytest.raises(InvalidInputError):
        cached.embed("a string")


def test_a_misbehaving_embedder_is_an_embedding_error(clock: SettableClock) -> None:
    class Broken(HashEmbedder):
        def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
            return super().embed([*texts, "extra"])

    with pytest.raises(EmbeddingError):
        CachedEmbedder(Broken(8), clock=clock).embed(["a"])


def test_thread_safe(inner: RecordingEmbedder, clock: SettableClock) -> None:
    cache = CachedEmbedder(inner, max_entries=50, clock=clock)
    reference = HashEmbedder(16)
    errors: list[BaseException] = []

    def work(seed: int) -> None:
        try:
            for round_ in range(40):
                texts = [f"text {(seed * 7 + round_ * 3 + j) % 80}" for j in range(5)]
                np.testing.assert_array_equal(cache.embed(texts), reference.embed(texts))
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(s,)) for s in range(6)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not errors
    assert len(cache) <= 50
    assert cache.stats.hits + cache.stats.misses == 6 * 40 * 5


def test_importing_reverie_embed_stays_light() -> None:
    code = (
        "import sys, reverie.embed as e\n"
        "heavy = [m for m in ('httpx', 'tokenizers', 'safetensors', 'reverie.embed.minilm') if m in sys.modules]\n"
        "assert not heavy, heavy\n"
        "assert e.OpenAIEmbedder.__name__ == 'OpenAIEmbedder'\n"
    )
    src = str(Path(__file__).resolve().parents[2] / "src")
    env = {**os.environ, "PYTHONPATH": src}
    result = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
