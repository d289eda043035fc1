"""Embedders: the :class:`Embedder` protocol, the local default, an API client and the cache.

``make_embedder(settings, clock=...)`` builds the configured provider (``local`` =
all-MiniLM-L6-v2 run offline with onnxruntime or numpy; ``openai`` = an OpenAI-compatible endpoint) wrapped in
seed 001's embedding cache. The model and HTTP modules are imported only when first used.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from reverie.clock import Clock, system_clock
from reverie.config.core import EmbeddingSettings
from reverie.embed.base import Embedder
from reverie.embed.cache import CachedEmbedder
from reverie.embed.testing import HashEmbedder

if TYPE_CHECKING:
    from reverie.embed.minilm import MiniLMEmbedder
    from reverie.embed.openai import OpenAIEmbedder

_LAZY = {
    "MiniLMEmbedder": "reverie.embed.minilm",
    "OpenAIEmbedder": "reverie.embed.openai",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)


def make_provider(settings: EmbeddingSettings) -> Embedder:
    """The configured embedder, without the cache."""
    if settings.provider == "openai":
        from reverie.embed.openai import OpenAIEmbedder

        return OpenAIEmbedder(settings)
    from reverie.embed.minilm import MiniLMEmbedder

    return MiniLMEmbedder(max_tokens=settings.max_tokens, batch_size=settings.batch_size,
                          runtime=settings.runtime, threads=settings.threads, graph_cache=settings.graph_cache_dir)


def make_embedder(settings: EmbeddingSettings, *, clock: Clock = system_clock) -> Embedder:
    """The configured embedder wrapped in the embedding cache (``cache_size = 0``: no cache)."""
    provider = make_provider(settings)
    if settings.cache_size == 0:
        return provider
    return CachedEmbedder(provider, max_entries=settings.cache_size, ttl_s=settings.cache_ttl_s, clock=clock)


__all__ = [
    "CachedEmbedder",
    "Embedder",
    "HashEmbedder",
    "MiniLMEmbedder",
    "OpenAIEmbedder",
    "make_embedder",
    "make_provider",
]
