"""Embedding quantisation codecs (the layered-memory design's "embedding compression") and the mixed-precision
similarity.

Each vector is quantised on its own (per-vector scalar quantisation): ``x ≈ lo + step·c`` with
integer codes ``c`` in ``[0, 2^bits - 1]``. int8 keeps one code per byte, int4 two (high nibble
first) and int2 four (most significant bits first); the last byte is zero-padded.

A code blob is a 12-byte header — ``lo`` and ``step`` (float32), ``fidelity`` (float16) and a
uint16 holding the precision (2 high bits) and the dimension (14 low bits), little-endian —
followed by the packed codes: a blob decodes on its own. ``lo`` and ``step`` are rescaled at
encoding time so that the dequantised vector has the original vector's norm (a unit embedding
comes back as a unit vector); ``fidelity`` is the cosine between the original and the
dequantised vector, measured when the vector was encoded.

Choice of the range. The layered-memory design's source maps ``[min, max]`` of the vector onto the code range and
truncates; that reproduces its fidelity table (int4 0.97, int2 0.59) but wastes most of
the int2 levels on the two extreme coordinates. Here the codes are rounded and the range is the
one, among ``[mean + t·(min - mean), mean + t·(max - mean)]`` for ``t`` in :data:`CLIP_GRID`,
with the smallest squared error (coordinates outside it are clipped). Measured on all-MiniLM-L6-v2
vectors of LoCoMo turns (``tests/test_vector_codec.py``): mean cosine fidelity int8 0.99998,
int4 0.9945, int2 0.937.

Mixed-precision similarity (the layered-memory design's "FRQAD for mixed-precision comparison"). A float32 query is
compared with stored codes through the dequantised vector. Quantisation noise is (nearly)
orthogonal to any query, so ``cos(q, x̂) ≈ fidelity · cos(q, x)``: quantised memories score too
low and lose to float32 memories of equal true similarity. :func:`mixed_similarity` divides by
the recorded fidelity, which removes that bias. That source does the opposite (it divides
by a penalty that grows as precision falls); measured on MiniLM/LoCoMo that pushes quantised
memories out of the results (recall@10 against the float32 ranking 0.51 with half the memories at
int2, against 0.90 for the debiased similarity) — see the tests for the numbers.

Pure numpy, no I/O.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Final

import numpy as np
import numpy.typing as npt

from reverie.errors import InvalidInputError
from reverie.model import Precision

F32 = npt.NDArray[np.float32]
U8 = npt.NDArray[np.uint8]
Codes = U8 | Sequence[bytes]

#: bits per coordinate of each quantised precision (float32 is stored as is)
BITS: Final[dict[Precision, int]] = {Precision.INT8: 8, Precision.INT4: 4, Precision.INT2: 2}
#: bits per coordinate of every precision, float32 included (most bits first)
PRECISION_BITS: Final[dict[Precision, int]] = {Precision.FLOAT32: 32, **BITS}
#: the header of a code blob (little-endian); ``meta`` = precision code << 14 | dimension
HEADER_DTYPE: Final = np.dtype([("lo", "<f4"), ("step", "<f4"), ("fidelity", "<f2"), ("meta", "<u2")])
HEADER_BYTES: Final = HEADER_DTYPE.itemsize
#: the largest dimension a blob header can record
MAX_DIM: Final = (1 << 14) - 1
#: clip fractions tried for each vector (1.0 = the full [min, max] range)
CLIP_GRID: Final[tuple[float, ...]] = (1.0, 0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3)
#: rows quantised together (bounds the (rows, grid, dim) temporaries of the range search)
_BLOCK_ROWS: Final = 64
_CODE: Final[dict[Precision, int]] = {Precision.INT8: 0, Precision.INT4: 1, Precision.INT2: 2}
_FROM_CODE: Final[dict[int, Precision]] = {code: p for p, code in _CODE.items()}


def bits_of(precision: Precision | str) -> int:
    """Bits per coordinate of ``precision`` (32 for float32)."""
    return PRECISION_BITS[_precision(precision)]


def code_bytes(precision: Precision | str, dim: int) -> int:
    """Bytes of one code blob (header + packed codes) of a ``dim``-dimensional vector."""
    per_byte = 8 // BITS[_quantised(precision)]
    return HEADER_BYTES + -(-dim // per_byte)


def stored_bytes(precision: Precision | str, dim: int) -> int:
    """Bytes one embedding takes at ``precision`` (float32: ``4·dim``)."""
    if _precision(precision) is Precision.FLOAT32:
        return 4 * dim
    return code_bytes(precision, dim)


def quantize(vectors: npt.ArrayLike, precision: Precision | str) -> U8:
    """Code blobs of ``vectors`` (one row per vector, ``code_bytes`` wide)."""
    p = _quantised(precision)
    bits = BITS[p]
    x = _matrix(vectors)
    levels = (1 << bits) - 1
    lo, step = _best_range(x, levels)
    codes = _codes(x, lo, step, levels)
    approx = lo[:, None] + step[:, None] * codes
    norm_x = np.linalg.norm(x, axis=1)
    norm_a = np.linalg.norm(approx, axis=1)
    both = (norm_x > 0) & (norm_a > 0)
    scale = np.where(both, norm_x / np.where(both, norm_a, 1.0), 1.0)
    dots = np.einsum("ij,ij->i", x, approx)
    header = np.zeros(len(x), dtype=HEADER_DTYPE)
    header["lo"] = lo * scale
    header["step"] = step * scale
    header["fidelity"] = np.where(both, dots / np.where(both, norm_x * norm_a, 1.0), 1.0)
    header["meta"] = (_CODE[p] << 14) | x.shape[1]
    packed = _pack(codes.astype(np.uint8), bits)
    return np.concatenate([header.view(np.uint8).reshape(len(x), HEADER_BYTES), packed], axis=1)


def encode(vector: npt.ArrayLike, precision: Precision | str) -> bytes:
    """The code blob of one vector."""
    arr = np.asarray(vector, dtype=np.float32)
    if arr.ndim != 1:
        raise InvalidInputError(f"encode takes one vector, got shape {arr.shape}")
    return bytes(quantize(arr[None, :], precision)[0].tobytes())


def blob_precision(blob: bytes) -> Precision:
    """The precision a code blob was encoded at."""
    return _FROM_CODE[_parse([blob], None)[2]]


def dequantize(codes: Codes, precision: Precision | str | None = None) -> F32:
    """The float32 vectors of code blobs of one precision and dimension (rows of a uint8 matrix,
    or a sequence of ``bytes``), each with the norm of its original vector.

    ``precision``, when given, is checked against the blobs' own."""
    blob, header, code, dim = _parse(codes, precision)
    values = _unpack(blob[:, HEADER_BYTES:], BITS[_FROM_CODE[code]], dim)
    lo = header["lo"].astype(np.float32)[:, None]
    step = header["step"].astype(np.float32)[:, None]
    out: F32 = lo + step * values
    return out


def decode(blob: bytes, precision: Precision | str | None = None) -> F32:
    """The float32 vector of one code blob."""
    out: F32 = dequantize([blob], precision)[0]
    return out


def fidelity(codes: Codes, precision: Precision | str | None = None) -> F32:
    """Cosine between each original vector and its dequantised copy (recorded at encoding)."""
    out: F32 = _parse(codes, precision)[1]["fidelity"].astype(np.float32)
    return out


def search_vectors(codes: Codes, precision: Precision | str | None = None) -> F32:
    """Rows whose dot product with a unit query is the debiased cosine ``cos(q, x̂) / fidelity``.

    The vector index of the SQLite store keeps these rows for quantised memories, so that one
    exact or HNSW inner-product search ranks them together with float32 memories.
    """
    approx = dequantize(codes, precision)
    fid = fidelity(codes, precision)
    denom = np.linalg.norm(approx, axis=1) * np.where(fid > 0, fid, 1.0)
    denom[denom == 0] = 1.0
    out: F32 = (approx / denom[:, None]).astype(np.float32)
    return out


def mixed_similarity(query: npt.ArrayLike, codes: Codes, precision: Precision | str | None = None) -> F32:
    """The quantisation-aware cosine of a float32 query with each code blob, in [-1, 1]."""
    rows = search_vectors(codes, precision)
    q = np.asarray(query, dtype=np.float32).reshape(-1)
    if len(rows) and q.shape != (rows.shape[1],):
        raise InvalidInputError(f"query shape {q.shape} does not match the codes' ({rows.shape[1]},)")
    norm = float(np.linalg.norm(q))
    if norm == 0 or not len(rows):
        return np.zeros(len(rows), dtype=np.float32)
    scores = np.einsum("ij,j->i", rows, q / norm)
    out: F32 = np.clip(scores, -1.0, 1.0).astype(np.float32)
    return out


#: mean cosine between an embedding and its dequantised copy, per precision (all-MiniLM-L6-v2 vectors of
#: LoCoMo turns, ``tests/test_vector_codec.py``): the shrinkage to expect where only the dequantised
#: vector is at hand (a record read from the store), not its blob's own recorded fidelity
TYPICAL_FIDELITY: Final[dict[Precision, float]] = {
    Precision.FLOAT32: 1.0,
    Precision.INT8: 0.99998,
    Precision.INT4: 0.9945,
    Precision.INT2: 0.937,
}

#: median of cos(q, x̂) / cos(q, x) for questions q and memories x, per embedder profile and precision
#: (LoCoMo questions against LoCoMo turns, ``tests/test_vector_codec.py``): how much a question's cosine
#: with a dequantised memory is shrunk. It differs from the fidelity when the model's vectors share a
#: large common direction (multilingual-e5-small: every cosine sits near 0.8 and the codec keeps that
#: direction), so dividing by the fidelity would overrate a quantised memory against a float32 one.
QUERY_SHRINK: Final[dict[str, dict[Precision, float]]] = {
    "minilm": {Precision.FLOAT32: 1.0, Precision.INT8: 1.0, Precision.INT4: 0.9946, Precision.INT2: 0.9482},
    "e5": {Precision.FLOAT32: 1.0, Precision.INT8: 1.0, Precision.INT4: 0.9984, Precision.INT2: 0.9781},
}


def query_shrink(profile: str, precision: Precision) -> float:
    """The typical shrink of a question's cosine with a memory stored at ``precision``
    (:data:`QUERY_SHRINK`; the typical fidelity for a profile not measured)."""
    table = QUERY_SHRINK.get(profile)
    return table[precision] if table is not None else TYPICAL_FIDELITY[precision]


def search_rows(blobs: Sequence[bytes], dim: int) -> F32:
    """:func:`search_vectors` of blobs of any precisions (of dimension ``dim``), in input order."""
    return _by_precision(search_vectors, blobs, dim)


def decode_rows(blobs: Sequence[bytes], dim: int) -> F32:
    """:func:`dequantize` of blobs of any precisions (of dimension ``dim``), in input order."""
    return _by_precision(dequantize, blobs, dim)


# -- internals --------------------------------------------------------------------------


def _precision(value: Precision | str) -> Precision:
    try:
        return Precision(value)
    except ValueError as exc:
        raise InvalidInputError(f"unknown embedding precision {value!r}") from exc


def _quantised(precision: Precision | str) -> Precision:
    p = _precision(precision)
    if p not in BITS:
        raise InvalidInputError(f"{p.value} is not a quantised precision (choose int8, int4 or int2)")
    return p


def _matrix(vectors: npt.ArrayLike) -> F32:
    x = np.asarray(vectors, dtype=np.float32)
    if x.ndim == 1:
        x = x[None, :]
    if x.ndim != 2 or not 0 < x.shape[1] <= MAX_DIM:
        raise InvalidInputError(f"expected vectors of shape (n, dim) with 0 < dim <= {MAX_DIM}, got {x.shape}")
    if not np.isfinite(x).all():
        raise InvalidInputError("cannot quantise vectors with NaN or infinite values")
    return x


def _codes(x: F32, lo: F32, step: F32, levels: int) -> F32:
    safe = np.where(step > 0, step, 1.0)
    codes = np.rint((x - lo[:, None]) / safe[:, None])
    codes[step == 0] = 0.0
    out: F32 = np.clip(codes, 0, levels)
    return out


def _best_range(x: F32, levels: int) -> tuple[F32, F32]:
    """Per vector, the (lo, step) of :data:`CLIP_GRID` with the least squared error (every clip
    fraction at once; rows in blocks so that the temporaries stay small)."""
    grid = np.asarray(CLIP_GRID, dtype=np.float32)
    lo_all = np.empty(len(x), dtype=np.float32)
    step_all = np.empty(len(x), dtype=np.float32)
    for start in range(0, len(x), _BLOCK_ROWS):
        block = x[start : start + _BLOCK_ROWS]
        mean = block.mean(axis=1, keepdims=True)
        lo = mean + grid * (block.min(axis=1, keepdims=True) - mean)  # (rows, grid)
        step = (mean + grid * (block.max(axis=1, keepdims=True) - mean) - lo) / levels
        safe = np.where(step > 0, step, 1.0)[:, :, None]
        codes = np.clip(np.rint((block[:, None, :] - lo[:, :, None]) / safe), 0, levels)
        diff = lo[:, :, None] + step[:, :, None] * codes - block[:, None, :]
        best = np.argmin(np.einsum("ijk,ijk->ij", diff, diff), axis=1)
        rows = np.arange(len(block))
        lo_all[start : start + len(block)] = lo[rows, best]
        step_all[start : start + len(block)] = step[rows, best]
    return lo_all, step_all


def _pack(codes: U8, bits: int) -> U8:
    per_byte = 8 // bits
    n, dim = codes.shape
    width = -(-dim // per_byte)
    padded = np.zeros((n, width * per_byte), dtype=np.uint8)
    padded[:, :dim] = codes
    shifts = (bits * np.arange(per_byte - 1, -1, -1)).astype(np.uint8)
    grouped = padded.reshape(n, width, per_byte) << shifts
    out: U8 = np.bitwise_or.reduce(grouped, axis=2).astype(np.uint8)
    return out


def _unpack_table(bits: int) -> F32:
    """Byte value → its codes (as float32), so that unpacking is one gather per byte."""
    per_byte = 8 // bits
    shifts = (bits * np.arange(per_byte - 1, -1, -1)).astype(np.uint8)
    table = (np.arange(256, dtype=np.uint8)[:, None] >> shifts) & np.uint8((1 << bits) - 1)
    out: F32 = table.astype(np.float32)
    return out


_UNPACK_TABLES: Final[dict[int, F32]] = {bits: _unpack_table(bits) for bits in BITS.values()}


def _unpack(packed: U8, bits: int, dim: int) -> F32:
    values = np.take(_UNPACK_TABLES[bits], packed, axis=0)
    out: F32 = values.reshape(len(packed), -1)[:, :dim]
    return out


def _parse(codes: Codes, precision: Precision | str | None) -> tuple[U8, npt.NDArray[np.void], int, int]:
    """Code blobs as a uint8 matrix, their headers, their precision code and dimension."""
    if isinstance(codes, np.ndarray):
        blob = codes if codes.ndim == 2 else codes.reshape(1, -1)
        if blob.dtype != np.uint8:
            raise InvalidInputError(f"code blobs must be uint8, got {blob.dtype}")
    else:
        raw = [bytes(b) for b in codes]
        widths = {len(b) for b in raw}
        if len(widths) > 1:
            raise InvalidInputError(f"code blobs of different sizes {sorted(widths)} cannot be decoded together")
        blob = np.frombuffer(b"".join(raw), dtype=np.uint8).reshape(len(raw), widths.pop() if widths else 0)
    if not len(blob):
        if precision is None:
            raise InvalidInputError("no code blobs to decode")
        return blob, np.zeros(0, dtype=HEADER_DTYPE), _CODE[_quantised(precision)], 0
    if blob.shape[1] < HEADER_BYTES:
        raise InvalidInputError(f"a code blob of {blob.shape[1]} bytes is shorter than its header")
    header = np.ascontiguousarray(blob[:, :HEADER_BYTES]).view(HEADER_DTYPE).reshape(len(blob))
    metas = np.unique(header["meta"])
    if len(metas) > 1:
        raise InvalidInputError("code blobs of different precisions or dimensions cannot be decoded together")
    code, dim = int(metas[0]) >> 14, int(metas[0]) & MAX_DIM
    if code not in _FROM_CODE or blob.shape[1] != code_bytes(_FROM_CODE[code], dim):
        raise InvalidInputError(f"a {blob.shape[1]}-byte blob is not a valid code blob")
    if precision is not None and _quantised(precision) is not _FROM_CODE[code]:
        raise InvalidInputError(
            f"code blob of precision {_FROM_CODE[code].value} where {_precision(precision).value} was expected"
        )
    return blob, header, code, dim


def _by_precision(fn: Callable[[Codes], F32], blobs: Sequence[bytes], dim: int) -> F32:
    """``fn`` over blobs grouped by their own precision, results in input order."""
    out = np.empty((len(blobs), dim), dtype=np.float32)
    groups: dict[int, list[int]] = {}
    for i, blob in enumerate(blobs):
        meta = int.from_bytes(bytes(blob[HEADER_BYTES - 2 : HEADER_BYTES]), "little")
        groups.setdefault(meta, []).append(i)
    for meta, rows in groups.items():
        if meta & MAX_DIM != dim:
            raise InvalidInputError(f"code blobs of dimension {meta & MAX_DIM} where {dim} was expected")
        out[rows] = fn([blobs[i] for i in rows])
    return out


__all__ = [
    "BITS",
    "CLIP_GRID",
    "HEADER_BYTES",
    "HEADER_DTYPE",
    "MAX_DIM",
    "PRECISION_BITS",
    "QUERY_SHRINK",
    "TYPICAL_FIDELITY",
    "bits_of",
    "blob_precision",
    "code_bytes",
    "decode",
    "decode_rows",
    "dequantize",
    "encode",
    "fidelity",
    "mixed_similarity",
    "quantize",
    "query_shrink",
    "search_rows",
    "search_vectors",
    "stored_bytes",
]
