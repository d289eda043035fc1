"""all-MiniLM-L6-v2's encoder as an ONNX graph, built from the safetensors weights (no torch).

No package ships an ONNX export of the model and exporting one needs torch, so the
graph is written here with ``onnx.helper`` from the same weights the numpy forward pass uses
(:func:`reverie.embed.minilm._load_weights`): the same operations in the same order — embeddings
+ LayerNorm, six layers of masked multi-head self-attention and an exact (erf) GELU feed-forward,
each followed by a residual LayerNorm — then mean pooling over the attention mask and L2
normalisation. onnxruntime then runs it with its fused kernels, faster than numpy.

Inputs: ``inputs_embeds`` (float32, batch × tokens × 384: the tokens' rows of the word-embedding
table, which stays memory-mapped outside the graph — a text touches a few of its 30,522 rows) and
``attention_mask`` (float32, batch × tokens, 1 = real token).
Output: ``sentence_embedding`` (float32, batch × 384, unit length).

The graph is built once and kept in a cache directory (:func:`cached_model`), from which
onnxruntime maps its weights; when that directory cannot be written it is built in memory at
each load instead. Either way the embedder checks the graph on a reference sentence before use.
"""

from __future__ import annotations

import math
import os
import shutil
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from reverie.errors import EmbeddingError, MissingDependencyError

if TYPE_CHECKING:
    from reverie.embed.minilm import _Layer, _Weights

OPSET = 17  # LayerNormalization is a standard operator from opset 17
GRAPH_VERSION = 1  # bump when the graph changes: cached graphs of other versions are not used
MODEL_NAME = "all-MiniLM-L6-v2"
MODEL_FILE = "model.onnx"
DATA_FILE = "model.data"
INPUTS_EMBEDS = "inputs_embeds"
ATTENTION_MASK = "attention_mask"
OUTPUT = "sentence_embedding"
INSTALL_HINT = "pip install onnxruntime onnx"


class _Builder:
    """Collects nodes and initializers; names are made unique by a counter."""

    def __init__(self) -> None:
        from onnx import helper, numpy_helper

        self.helper = helper
        self.numpy_helper = numpy_helper
        self.nodes: list[Any] = []
        self.initializers: list[Any] = []
        self._count = 0

    def name(self, hint: str) -> str:
        self._count += 1
        return f"{hint}_{self._count}"

    def const(self, hint: str, value: Any) -> str:
        name = self.name(hint)
        self.initializers.append(self.numpy_helper.from_array(np.asarray(value), name))
        return name

    def op(self, op_type: str, inputs: list[str], hint: str = "", **attrs: Any) -> str:
        out = self.name(hint or op_type.lower())
        self.nodes.append(self.helper.make_node(op_type, inputs, [out], name=out, **attrs))
        return out

    def linear(self, x: str, weight: np.ndarray, bias: np.ndarray, hint: str) -> str:
        """``x @ weight + bias`` (weight already transposed to (in, out))."""
        return self.op(
            "Add", [self.op("MatMul", [x, self.const(f"{hint}_w", weight)]), self.const(f"{hint}_b", bias)], hint
        )

    def layer_norm(self, x: str, gamma: np.ndarray, beta: np.ndarray, eps: float, hint: str) -> str:
        return self.op(
            "LayerNormalization",
            [x, self.const(f"{hint}_g", gamma), self.const(f"{hint}_b", beta)],
            hint,
            axis=-1,
            epsilon=eps,
        )


def _attention(b: _Builder, x: str, layer: _Layer, mask_bias: str, heads: int, i: int) -> str:
    hidden = layer.out_w.shape[0]
    head_dim = hidden // heads
    # Q (with the 1/√d scale already folded in), K and V from one fused product: (3, B, H, L, D)
    qkv = b.op(
        "Transpose",
        [
            b.op(
                "Reshape",
                [
                    b.linear(x, layer.qkv_w, layer.qkv_b, f"l{i}_qkv"),
                    b.const("qkv_shape", np.array([0, 0, 3, heads, head_dim], np.int64)),
                ],
            )
        ],
        perm=[2, 0, 3, 1, 4],
    )
    q, k_rows, v = (
        b.op("Gather", [qkv, b.const(f"pick_{n}", np.array(j, dtype=np.int64))], axis=0) for j, n in enumerate("qkv")
    )
    k = b.op("Transpose", [k_rows], perm=[0, 1, 3, 2])  # (B, H, D, L)
    scores = b.op("Add", [b.op("MatMul", [q, k]), mask_bias])
    probs = b.op("Softmax", [scores], axis=-1)
    context = b.op("Transpose", [b.op("MatMul", [probs, v])], perm=[0, 2, 1, 3])  # (B, L, H, D)
    merged = b.op("Reshape", [context, b.const("merge_shape", np.array([0, 0, hidden], dtype=np.int64))])
    return b.linear(merged, layer.out_w, layer.out_b, f"l{i}_out")


def _feed_forward(b: _Builder, x: str, layer: _Layer, i: int) -> str:
    h = b.linear(x, layer.ffn_in_w, layer.ffn_in_b, f"l{i}_ffn_in")
    # exact GELU: 0.5·h·(1 + erf(h/√2))
    erf = b.op("Erf", [b.op("Mul", [h, b.const("inv_sqrt2", np.float32(1.0 / math.sqrt(2.0)))])])
    gelu = b.op(
        "Mul", [b.op("Mul", [h, b.const("half", np.float32(0.5))]), b.op("Add", [erf, b.const("one", np.float32(1.0))])]
    )
    return b.linear(gelu, layer.ffn_out_w, layer.ffn_out_b, f"l{i}_ffn_out")


def build_model(weights: _Weights, *, eps: float) -> Any:
    """The ONNX model (an ``onnx.ModelProto``) of the encoder with these weights."""
    try:
        from onnx import TensorProto, helper
    except ImportError as exc:
        raise MissingDependencyError(f"the ONNX runtime of the local embedder needs onnx: {INSTALL_HINT}") from exc
    b = _Builder()
    ids_shape = b.op("Shape", [INPUTS_EMBEDS])
    seq = b.op(
        "Slice",
        [ids_shape, b.const("one_i", np.array([1], dtype=np.int64)), b.const("two_i", np.array([2], dtype=np.int64))],
    )
    positions = b.op(
        "Slice", [b.const("position", weights.position), b.const("zero_i", np.array([0], dtype=np.int64)), seq]
    )
    embedded = b.op("Add", [INPUTS_EMBEDS, positions])
    x = b.layer_norm(embedded, weights.ln_g, weights.ln_b, eps, "emb_ln")
    # 0 for real tokens, -1e9 for padding, broadcast over heads and query positions: (B, 1, 1, L)
    bias = b.op(
        "Mul", [b.op("Sub", [ATTENTION_MASK, b.const("one", np.float32(1.0))]), b.const("big", np.float32(1e9))]
    )
    mask_bias = b.op("Unsqueeze", [bias, b.const("axes12", np.array([1, 2], dtype=np.int64))])
    for i, layer in enumerate(weights.layers):
        x = b.layer_norm(
            b.op("Add", [x, _attention(b, x, layer, mask_bias, weights.heads, i)]),
            layer.ln1_g,
            layer.ln1_b,
            eps,
            f"l{i}_ln1",
        )
        x = b.layer_norm(b.op("Add", [x, _feed_forward(b, x, layer, i)]), layer.ln2_g, layer.ln2_b, eps, f"l{i}_ln2")
    # mean pooling over the real tokens, then L2 normalisation
    mask3 = b.op("Unsqueeze", [ATTENTION_MASK, b.const("axis2", np.array([2], dtype=np.int64))])
    axis1 = b.const("axis1", np.array([1], dtype=np.int64))
    summed = b.op("ReduceSum", [b.op("Mul", [x, mask3]), axis1], keepdims=0)
    counts = b.op("ReduceSum", [ATTENTION_MASK, axis1], keepdims=1)
    pooled = b.op("Div", [summed, counts])
    norm = b.op("Max", [b.op("ReduceL2", [pooled], axes=[-1], keepdims=1), b.const("tiny", np.float32(1e-12))])
    b.nodes.append(helper.make_node("Div", [pooled, norm], [OUTPUT], name=OUTPUT))
    graph = helper.make_graph(
        b.nodes,
        "all-MiniLM-L6-v2",
        [
            helper.make_tensor_value_info(INPUTS_EMBEDS, TensorProto.FLOAT, ["batch", "tokens", weights.ln_g.shape[0]]),
            helper.make_tensor_value_info(ATTENTION_MASK, TensorProto.FLOAT, ["batch", "tokens"]),
        ],
        [helper.make_tensor_value_info(OUTPUT, TensorProto.FLOAT, ["batch", weights.ln_g.shape[0]])],
        initializer=b.initializers,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)], producer_name="reverie")
    model.ir_version = 8  # readable by every onnxruntime release since 1.10
    return model


def cached_model(cache_dir: Path, key: str, weights: Callable[[], _Weights], *, eps: float) -> Path:
    """The encoder graph saved under ``cache_dir`` (built from ``weights()`` on first use), as the
    path of its ``model.onnx``; the weights lie beside it in ``model.data``.

    Loaded from a file, onnxruntime maps the weights file instead of copying the graph's bytes
    into the process a second time (about half the resident memory, and loading is much faster
    than building). ``key`` names the weights (their sha256); :data:`GRAPH_VERSION`
    names this builder, so a changed graph gets a new directory. Several processes may build at
    once: each writes a private directory and renames it into place; the first rename wins.
    Raises OSError when the directory cannot be written.
    """
    final = cache_dir / f"{MODEL_NAME}-{key[:16]}-g{GRAPH_VERSION}"
    if (final / MODEL_FILE).is_file() and (final / DATA_FILE).is_file():
        return final / MODEL_FILE
    try:
        import onnx
    except ImportError as exc:
        raise MissingDependencyError(f"building the encoder graph needs onnx: {INSTALL_HINT}") from exc
    cache_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    tmp = Path(tempfile.mkdtemp(dir=cache_dir, prefix=".build-"))
    try:
        onnx.save_model(
            build_model(weights(), eps=eps),
            str(tmp / MODEL_FILE),
            save_as_external_data=True,
            all_tensors_to_one_file=True,
            location=DATA_FILE,
            size_threshold=1024,
        )
        for name in (DATA_FILE, MODEL_FILE):
            os.chmod(tmp / name, 0o600)
        try:
            os.rename(tmp, final)
        except OSError:
            if not (final / MODEL_FILE).is_file():  # not another process's finished build
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return final / MODEL_FILE


def discard_cached(model: Path) -> None:
    """Remove a cached graph (its directory), e.g. after it failed the self-check."""
    shutil.rmtree(model.parent, ignore_errors=True)


#: graph optimisation levels a session may be made with (onnxruntime's names)
OPTIMIZATIONS = ("all", "basic")


def onnxruntime_module() -> Any:
    """``onnxruntime``, imported with its telemetry switched off: an offline memory engine sends nothing
    anywhere and leaves no files behind. onnxruntime starts its telemetry (a device id and an event database
    under ``~/.cache/Microsoft/DeveloperTools``, uploads when it can reach them) as it is imported, unless
    ``ORT_DISABLE_TELEMETRY`` is set then: reverie sets it to 1 unless the application set it, and also
    calls onnxruntime's switch in case another package imported it first."""
    os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
    try:
        import onnxruntime as ort
    except ImportError as exc:
        raise MissingDependencyError(f"the local embedder's ONNX runtime needs onnxruntime: {INSTALL_HINT}") from exc
    disable = getattr(ort, "disable_telemetry_events", None)
    if disable is not None:
        disable()
    return ort


def make_session(model: Path | bytes, *, threads: int = 0, optimization: str = "all") -> Any:
    """An onnxruntime session of the encoder graph (a cached ``model.onnx``, or the serialized
    model) with ``threads`` intra-op threads (0 = one per core).

    Idle worker threads sleep instead of spinning: the read path runs the full-text search on the
    other core while the query is embedded, and a spinning thread would take that core.
    ``optimization`` ``"basic"`` keeps every node as written (constant folding and the like only):
    onnxruntime's extended fusions swap an integer product (exact on every CPU) for fused kernels
    whose results depend on the CPU's instruction set (see :mod:`reverie.embed.e5`).
    """
    if optimization not in OPTIMIZATIONS:
        raise ValueError(f"optimization must be one of {OPTIMIZATIONS}, got {optimization!r}")
    ort = onnxruntime_module()
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.enable_cpu_mem_arena = False  # a smaller resident set, no slower
    options.graph_optimization_level = (
        ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        if optimization == "all"
        else ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
    )
    options.log_severity_level = 3  # errors only: no warnings on stderr
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    try:
        return ort.InferenceSession(
            str(model) if isinstance(model, Path) else model, options, providers=["CPUExecutionProvider"]
        )
    except Exception as exc:  # onnxruntime raises its own exception types, not exported stably
        raise EmbeddingError(f"onnxruntime cannot load the encoder graph: {exc}") from exc


#: a batch of at most this many texts runs on the small-input session (a search query and its variants)
SMALL_INPUT = 4


class Sessions:
    """The encoder graph's onnxruntime sessions: ``main`` (``threads`` intra-op threads) for batches and,
    built on first use, one with ``small_threads`` for a few texts at a time.

    A single query is too small to split well across threads: they mostly wait for each other, and the
    read path runs its full-text search on the other core while the query is embedded, so a second thread
    only takes that core away. ``small_threads`` equal to ``threads`` (or a graph that cannot be loaded
    again, ``source=None``) runs everything on ``main``.
    """

    def __init__(
        self, main: Any, source: Path | bytes | None, *, threads: int, small_threads: int, optimization: str = "all"
    ) -> None:
        self.main = main
        self._source = source
        self._optimization = optimization
        self._small_threads = small_threads
        self._same = source is None or small_threads == threads
        self._small: Any = None
        self._lock = threading.Lock()

    def session(self, *, small: bool) -> Any:
        """The session for a few texts at a time (``small``: at most ``SMALL_INPUT``) or for a batch."""
        if self._same or not small:
            return self.main
        if self._small is None:
            with self._lock:
                if self._small is None:
                    assert self._source is not None
                    self._small = make_session(
                        self._source, threads=self._small_threads, optimization=self._optimization
                    )
        return self._small


def run_session(
    session: Any, word: npt.NDArray[np.float32], ids: npt.NDArray[np.int64], mask: npt.NDArray[np.float32]
) -> npt.NDArray[np.float32]:
    """The unit-length sentence vectors of one padded batch (B, L) -> (B, 384); ``word`` is the
    word-embedding table."""
    try:
        out = session.run([OUTPUT], {INPUTS_EMBEDS: np.asarray(word[ids]), ATTENTION_MASK: mask})[0]
    except Exception as exc:
        raise EmbeddingError(f"onnxruntime failed on a batch of {ids.shape[0]} texts: {exc}") from exc
    result: npt.NDArray[np.float32] = np.ascontiguousarray(out, dtype=np.float32)
    return result


__all__ = [
    "ATTENTION_MASK",
    "GRAPH_VERSION",
    "INPUTS_EMBEDS",
    "OPTIMIZATIONS",
    "OUTPUT",
    "SMALL_INPUT",
    "Sessions",
    "build_model",
    "cached_model",
    "discard_cached",
    "make_session",
    "onnxruntime_module",
    "run_session",
]
