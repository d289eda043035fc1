"""The embedder contract, the optional query encoder, and the identity a store records."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into L2-normalised float32 vectors of a fixed dimension.

    ``profile`` names the similarity scale of the model, which selects the calibrated
    similarity thresholds in the settings (similarity thresholds depend on the embedding model):
    ``"e5"`` for the local default (multilingual-e5-small), ``"minilm"`` for all-MiniLM-L6-v2,
    ``"api"`` for large API models.

    Optional members (looked up with ``getattr``): ``embed_query(texts)`` for models that embed a
    search query differently from a stored text (e5's ``"query: "`` / ``"passage: "`` prefixes;
    :meth:`embed` is then the stored-text side), and ``identity``, the dict that names the vector
    space (see :func:`identity_of`).
    """

    @property
    def name(self) -> str: ...

    @property
    def dim(self) -> int: ...

    @property
    def profile(self) -> str: ...

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """A (len(texts), dim) float32 array, rows L2-normalised. Raises EmbeddingError."""
        ...


#: the fields of an embedder identity, in the order they are shown
IDENTITY_FIELDS = ("model", "dim", "normalized", "query_prefix", "passage_prefix")


def identity_of(embedder: Embedder) -> dict[str, Any]:
    """What defines the vector space of ``embedder``: model, dimension, normalisation and the
    query/passage prefixes. Two embedders with equal identities make vectors that may share a store
    (e.g. one model at two numeric precisions); anything else must not be mixed. An embedder
    without an ``identity`` attribute is named by its ``name`` and ``dim``."""
    own = getattr(embedder, "identity", None)
    if isinstance(own, dict):
        ident = {key: own.get(key) for key in IDENTITY_FIELDS}
    else:
        ident = {
            "model": str(embedder.name),
            "dim": int(embedder.dim),
            "normalized": True,
            "query_prefix": "",
            "passage_prefix": "",
        }
    ident["dim"] = int(embedder.dim)
    return ident


def describe_identity(ident: dict[str, Any]) -> str:
    """A short human description of an identity, e.g. ``multilingual-e5-small (384-d, "query: "/"passage: ")``."""
    prefixes = ""
    if ident.get("query_prefix") or ident.get("passage_prefix"):
        prefixes = f", prefixes {ident.get('query_prefix')!r}/{ident.get('passage_prefix')!r}"
    norm = "" if ident.get("normalized", True) else ", not normalised"
    return f"{ident.get('model')} ({ident.get('dim')}-d{norm}{prefixes})"


def embed_queries(embedder: Embedder, texts: Sequence[str]) -> npt.NDArray[np.float32]:
    """Vectors of search queries: ``embedder.embed_query`` where the model has one, else ``embed``."""
    encode = getattr(embedder, "embed_query", None)
    if callable(encode):
        vectors: npt.NDArray[np.float32] = encode(texts)
        return vectors
    return embedder.embed(texts)


class QueryView:
    """An embedder whose :meth:`embed` embeds search queries (``embed_query`` of the wrapped one).

    The read path embeds queries through this view, so that an asymmetric model (e5) gets its
    ``"query: "`` prefix while everything stored gets ``"passage: "``; for a symmetric model the view
    gives the same vectors as the embedder itself."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner

    @property
    def name(self) -> str:
        return str(self.inner.name)

    @property
    def dim(self) -> int:
        return int(self.inner.dim)

    @property
    def profile(self) -> str:
        return str(self.inner.profile)

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        return embed_queries(self.inner, texts)


def query_view(embedder: Embedder) -> Embedder:
    """``embedder`` itself when it has no query encoder, else a :class:`QueryView` of it."""
    return QueryView(embedder) if callable(getattr(embedder, "embed_query", None)) else embedder


__all__ = [
    "IDENTITY_FIELDS",
    "Embedder",
    "QueryView",
    "describe_identity",
    "embed_queries",
    "identity_of",
    "query_view",
]
