"""Embeddings from any OpenAI-compatible ``/embeddings`` endpoint (OpenAI, Ollama, vLLM, llama.cpp).

Texts are sent in batches of ``batch_size``; 429, 5xx, timeouts and connection errors are retried a
few times with a short, capped exponential backoff (``Retry-After`` is honoured up to the cap).
Rows are put back in input order by their ``index``, checked, and L2-normalised. Every failure is
an :class:`~reverie.errors.EmbeddingError` carrying the endpoint's own message; the API key never
appears in a message.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

import httpx
import numpy as np
import numpy.typing as npt

from reverie.config.core import EmbeddingSettings
from reverie.errors import EmbeddingError, InvalidInputError

F32 = npt.NDArray[np.float32]

DEFAULT_RETRIES = 2
BACKOFF_BASE_S = 0.25
BACKOFF_MAX_S = 4.0
MAX_ERROR_CHARS = 300
RETRY_STATUSES = frozenset({408, 429, 500, 502, 503, 504})
# Output sizes of well-known models, so ``dim`` is known before the first call.
KNOWN_DIMS = {
    "text-embedding-3-small": 1536,
    "text-embedding-3-large": 3072,
    "text-embedding-ada-002": 1536,
}
_PROBE_TEXT = "dimension probe"


class _Retryable(Exception):
    """A failed attempt worth retrying; ``delay`` is the server's Retry-After, if any."""

    def __init__(self, message: str, delay: float | None = None) -> None:
        super().__init__(message)
        self.delay = delay


class OpenAIEmbedder:
    """An OpenAI-compatible embeddings client (``profile = "api"``).

    Values come from ``settings`` (an :class:`EmbeddingSettings`) unless given as keyword
    arguments. ``dim`` is ``dimensions`` when set, else the known size of the model, else it is
    discovered from the first response (reading ``dim`` before any call sends one probe text).
    ``transport`` and ``sleep`` are for tests and custom networking.
    """

    profile = "api"

    def __init__(
        self,
        settings: EmbeddingSettings | None = None,
        *,
        base_url: str | None = None,
        model: str | None = None,
        api_key: str | None = None,
        dimensions: int | None = None,
        timeout_s: float | None = None,
        batch_size: int | None = None,
        retries: int = DEFAULT_RETRIES,
        transport: httpx.BaseTransport | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        s = settings or EmbeddingSettings.model_validate({})
        secret = s.api_key.get_secret_value() if s.api_key is not None else None
        self.base_url = (base_url or s.base_url).rstrip("/")
        self.name = model or s.model
        self.dimensions = dimensions if dimensions is not None else s.dimensions
        self.batch_size = batch_size or s.batch_size
        self.retries = retries
        if self.batch_size < 1 or retries < 0 or (self.dimensions is not None and self.dimensions < 1):
            raise InvalidInputError("batch_size and dimensions must be >= 1, retries >= 0")
        self._api_key = api_key if api_key is not None else secret
        self._sleep = sleep
        self._dim: int | None = self.dimensions or KNOWN_DIMS.get(self.name)
        self._dim_lock = threading.Lock()
        headers = {"Authorization": f"Bearer {self._api_key}"} if self._api_key else {}
        self._client = httpx.Client(
            timeout=timeout_s if timeout_s is not None else s.timeout_s,
            headers=headers,
            transport=transport,
        )

    # ------------------------------------------------------------------ public

    @property
    def dim(self) -> int:
        """Output dimension (known from settings or the model, else probed once)."""
        if self._dim is None:
            self.embed([_PROBE_TEXT])
        assert self._dim is not None
        return self._dim

    @dim.setter
    def dim(self, value: int) -> None:
        """Declare the output dimension up front (skips the probe)."""
        if value < 1:
            raise InvalidInputError(f"dim must be >= 1, got {value}")
        with self._dim_lock:
            self._dim = value

    def embed(self, texts: Sequence[str]) -> F32:
        """A (len(texts), dim) float32 array of L2-normalised vectors; raises EmbeddingError."""
        if isinstance(texts, str):
            raise InvalidInputError("embed() takes a sequence of strings, not one string")
        for text in texts:
            if not isinstance(text, str):
                raise InvalidInputError(f"embed() takes strings, got {type(text).__name__}")
        if not texts:
            return np.empty((0, self._dim or 0), dtype=np.float32)
        parts = [
            self._embed_batch(list(texts[start : start + self.batch_size]))
            for start in range(0, len(texts), self.batch_size)
        ]
        return np.concatenate(parts) if len(parts) > 1 else parts[0]

    def close(self) -> None:
        self._client.close()

    def __enter__(self) -> OpenAIEmbedder:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:  # never shows the key
        return f"OpenAIEmbedder(base_url={self.base_url!r}, model={self.name!r}, dim={self._dim})"

    # ------------------------------------------------------------------ one batch

    def _embed_batch(self, texts: list[str]) -> F32:
        # OpenAI rejects empty strings; embed a blank instead (the caller validates content).
        payload: dict[str, Any] = {"model": self.name, "input": [t or " " for t in texts]}
        if self.dimensions is not None:
            payload["dimensions"] = self.dimensions
        body = self._post_with_retries(payload)
        vectors = self._parse(body, len(texts))
        self._settle_dim(vectors.shape[1])
        return vectors

    def _post_with_retries(self, payload: dict[str, Any]) -> Any:
        for attempt in range(self.retries + 1):
            try:
                return self._post_once(payload)
            except _Retryable as exc:
                if attempt == self.retries:
                    raise EmbeddingError(
                        f"embedding endpoint {self._url} failed after {attempt + 1} attempts: {exc}"
                    ) from exc
                self._sleep(backoff_delay(attempt, exc.delay))
        raise AssertionError("unreachable")  # pragma: no cover

    @property
    def _url(self) -> str:
        return f"{self.base_url}/embeddings"

    def _post_once(self, payload: dict[str, Any]) -> Any:
        try:
            response = self._client.post(self._url, json=payload)
        except httpx.TimeoutException as exc:
            raise _Retryable(f"timed out ({type(exc).__name__})") from exc
        except httpx.TransportError as exc:
            raise _Retryable(self._scrub(f"connection failed: {exc}")) from exc
        if response.status_code in RETRY_STATUSES:
            raise _Retryable(self._describe(response), _retry_after(response))
        if response.status_code >= 400:
            raise EmbeddingError(f"embedding endpoint {self._url} refused the request: {self._describe(response)}")
        try:
            return response.json()
        except ValueError as exc:
            raise EmbeddingError(
                f"embedding endpoint {self._url} answered malformed JSON: {self._scrub(response.text[:100])!r}"
            ) from exc

    def _parse(self, body: Any, expected: int) -> F32:
        data = body.get("data") if isinstance(body, dict) else None
        if not isinstance(data, list) or len(data) != expected:
            got = len(data) if isinstance(data, list) else "no 'data' list"
            raise EmbeddingError(f"embedding endpoint {self._url} answered {got} rows for {expected} texts")
        try:
            rows = sorted(data, key=lambda item: int(item["index"]))
            indices = [int(item["index"]) for item in rows]
            matrix = np.asarray([item["embedding"] for item in rows], dtype=np.float64)
        except (KeyError, TypeError, ValueError) as exc:
            raise EmbeddingError(f"embedding endpoint {self._url} answered rows of an unexpected shape: {exc}") from exc
        if indices != list(range(expected)):
            raise EmbeddingError(f"embedding endpoint {self._url} answered indices {indices[:10]}…")
        return _normalise(matrix, self._url)

    def _settle_dim(self, dim: int) -> None:
        with self._dim_lock:
            if self._dim is None:
                self._dim = dim
            elif self._dim != dim:
                raise EmbeddingError(f"embedding endpoint {self._url} answered dim {dim}, expected {self._dim}")

    # ------------------------------------------------------------------ messages

    def _describe(self, response: httpx.Response) -> str:
        """``HTTP <status>: <the endpoint's message>``, key scrubbed, length capped."""
        message = response.text
        try:
            body = response.json()
        except ValueError:
            body = None
        if isinstance(body, dict):
            error = body.get("error")
            if isinstance(error, dict) and error.get("message"):
                message = str(error["message"])
            elif isinstance(error, str):
                message = error
            elif body.get("message"):
                message = str(body["message"])
        return self._scrub(f"HTTP {response.status_code}: {message.strip()[:MAX_ERROR_CHARS]}")

    def _scrub(self, text: str) -> str:
        if self._api_key:
            text = text.replace(self._api_key, "***")
        return text


def backoff_delay(attempt: int, retry_after: float | None = None) -> float:
    """Seconds to wait before retry ``attempt + 1``: Retry-After if given, else 0.25·2^attempt; capped."""
    delay = retry_after if retry_after is not None else BACKOFF_BASE_S * (2**attempt)
    return max(0.0, min(delay, BACKOFF_MAX_S))


def _retry_after(response: httpx.Response) -> float | None:
    value = response.headers.get("retry-after")
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None


def _normalise(matrix: npt.NDArray[np.float64], url: str) -> F32:
    if matrix.ndim != 2 or matrix.shape[1] == 0:
        raise EmbeddingError(f"embedding endpoint {url} answered vectors of shape {matrix.shape}")
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    if not np.all(np.isfinite(norms)) or np.any(norms == 0.0):
        raise EmbeddingError(f"embedding endpoint {url} answered a zero or non-finite vector")
    return np.ascontiguousarray(matrix / norms, dtype=np.float32)


__all__ = ["KNOWN_DIMS", "OpenAIEmbedder", "backoff_delay"]
