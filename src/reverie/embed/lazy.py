"""A local embedder that loads its model on first use.

Loading a local model (reading and checking the weights, building or loading the ONNX graph) takes a
second or more. Most operations never embed — ``reverie users``, ``list``, ``stats``, ``get``,
``history``, a server's ``/healthz`` — so :class:`~reverie.Memory` builds its default embedder as a
:class:`LazyEmbedder`: it knows what a store records about the model (name, dimension, similarity
profile, identity) from the settings alone, and builds the real model the first time a text is
embedded. The model it builds is checked against what was declared, so the two can never disagree.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from reverie.embed.base import Embedder, identity_of
from reverie.errors import EmbeddingError

F32 = npt.NDArray[np.float32]


@dataclass(frozen=True)
class ModelSpec:
    """What is known about a local model before it is loaded (see :func:`reverie.embed.base.identity_of`)."""

    name: str
    dim: int
    profile: str
    identity: dict[str, Any]
    asymmetric: bool = False  # whether it embeds search queries apart (``embed_query``)


class LazyEmbedder:
    """An :class:`~reverie.embed.base.Embedder` that builds the model with ``build()`` on first use
    (thread-safe: one build, whichever thread embeds first). ``loaded`` says whether it was built."""

    def __init__(self, build: Callable[[], Embedder], spec: ModelSpec) -> None:
        self._build = build
        self.spec = spec
        self.name = spec.name
        self.dim = spec.dim
        self.profile = spec.profile
        self._model: Embedder | None = None
        self._lock = threading.Lock()
        if spec.asymmetric:
            self.embed_query = self._embed_query

    @property
    def identity(self) -> dict[str, Any]:
        return dict(self.spec.identity)

    @property
    def loaded(self) -> bool:
        return self._model is not None

    @property
    def model(self) -> Embedder:
        """The model itself (built now if it was not yet)."""
        model = self._model
        if model is not None:
            return model
        with self._lock:
            if self._model is None:
                built = self._build()
                _check(built, self)
                self._model = built
            return self._model

    def embed(self, texts: Sequence[str]) -> F32:
        return np.asarray(self.model.embed(texts), dtype=np.float32)

    def _embed_query(self, texts: Sequence[str]) -> F32:
        encode = getattr(self.model, "embed_query", None)
        return np.asarray(encode(texts) if callable(encode) else self.model.embed(texts), dtype=np.float32)

    def __repr__(self) -> str:
        return f"LazyEmbedder({self.name!r}, loaded={self.loaded})"


def _check(model: Embedder, declared: LazyEmbedder) -> None:
    """The built model is what was declared (a store may already have recorded the declared identity)."""
    got = (str(model.name), int(model.dim), str(model.profile), identity_of(model))
    want = (declared.name, declared.dim, declared.profile, identity_of(declared))
    if got != want:
        raise EmbeddingError(f"the local model loaded as {got}, not as declared {want}")
    if declared.spec.asymmetric != callable(getattr(model, "embed_query", None)):
        raise EmbeddingError(f"the local model {declared.name} does not embed queries as declared")


__all__ = ["LazyEmbedder", "ModelSpec"]
