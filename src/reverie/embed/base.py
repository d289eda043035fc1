"""The embedder contract."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into L2-normalised float32 vectors of a fixed dimension.

    ``profile`` names the similarity scale of the model, which selects the calibrated
    similarity thresholds in the settings (SEED-NOTES "Similarity thresholds depend on the
    embedding model"): ``"minilm"`` for the local default, ``"api"`` for large API models.
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
