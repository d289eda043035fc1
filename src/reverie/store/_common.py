"""Backend-independent pieces of the two stores: value checks that must behave the same on both."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Final

import numpy as np

from reverie import vector_codec
from reverie.errors import InvalidInputError
from reverie.model import (
    Layer,
    MemoryKind,
    Precision,
    RelationType,
    Status,
    StoreTier,
    TemporalType,
    Vector,
    content_hash,
)

#: record fields stored as their enum's value
ENUM_FIELDS: Final[dict[str, type[StrEnum]]] = {
    "layer": Layer,
    "store": StoreTier,
    "status": Status,
    "memory_kind": MemoryKind,
    "temporal_type": TemporalType,
    "embedding_precision": Precision,
}


#: what a stored JSON value that cannot be read back (nested deeper than the parser's recursion limit,
#: written before writes were depth-limited) reads as: a read of the memory must never fail
UNREADABLE_JSON: Final = {"_unreadable": "stored JSON nested too deep to read"}


def safe_json_loads(text: str | bytes) -> Any:
    """``json.loads`` that turns a RecursionError (absurdly nested stored data) into :data:`UNREADABLE_JSON`."""
    try:
        return json.loads(text)
    except RecursionError:
        return dict(UNREADABLE_JSON)


def check_vector(value: Any, dim: int) -> Vector:
    """A finite float32 vector of shape ``(dim,)`` (numeric input is converted), else InvalidInputError."""
    if isinstance(value, np.ndarray) and value.dtype == np.float32 and value.shape == (dim,):
        vec: Vector = value
    else:
        try:
            vec = np.asarray(value, dtype=np.float32)
        except (TypeError, ValueError) as exc:
            raise InvalidInputError(f"embedding is not a numeric vector: {exc}") from exc
        if vec.shape != (dim,):
            raise InvalidInputError(f"embedding shape {vec.shape} does not match the store's ({dim},)")
    if not np.isfinite(vec).all():
        raise InvalidInputError("embedding contains NaN or infinite values")
    return vec


def relation_type(value: Any) -> str:
    """The stored value of a relation type, or InvalidInputError."""
    try:
        return RelationType(value).value
    except ValueError as exc:
        raise InvalidInputError(f"invalid relation type: {value!r}") from exc


def field_changes(fields: Mapping[str, Any], writable: frozenset[str]) -> dict[str, Any]:
    """Validated ``update_fields`` changes: only writable fields; new content gets its new hash."""
    bad = sorted(set(fields) - writable)
    if bad:
        raise InvalidInputError(f"cannot update memory fields {bad}")
    changes = dict(fields)
    if "content" in changes and "content_hash" not in changes:
        changes["content_hash"] = content_hash(changes["content"])
    return changes


#: fields whose change must also update the full-text index, the vector index or the partition
#: (``embedding_precision`` re-encodes the stored embedding)
INDEXED_FIELDS: Final = frozenset({"content", "embedding", "embedding_precision", "user_id"})

#: fields every ``Store.scan`` reads whatever it omits (identity, and the version a compare-and-set needs)
SCAN_ALWAYS_READ: Final = frozenset({"id", "version", "content", "content_hash"})


def scan_fields(omit: frozenset[str], fields: tuple[str, ...]) -> tuple[str, ...]:
    """The fields (in ``fields`` order) a ``Store.scan`` reads when it leaves out ``omit``."""
    bad = sorted(set(omit) - (set(fields) - SCAN_ALWAYS_READ))
    if bad:
        raise InvalidInputError(
            f"scan cannot omit {bad}; every memory field but {sorted(SCAN_ALWAYS_READ)} may be omitted"
        )
    return tuple(name for name in fields if name not in omit)


def unique_changes(
    changes: Sequence[tuple[str, Mapping[str, Any], int | None]], writable: frozenset[str]
) -> tuple[dict[tuple[str, ...], list[tuple[str, dict[str, Any]]]], dict[str, int | None]]:
    """``update_fields_many`` input validated: changes grouped by field set, and each id's expected
    version (an id given twice is an error: its second write could never match)."""
    versions: dict[str, int | None] = {}
    for memory_id, _, expected in changes:
        if memory_id in versions:
            raise InvalidInputError(f"update_fields_many got memory {memory_id!r} twice")
        versions[memory_id] = expected
    groups = grouped_plain_changes([(memory_id, fields) for memory_id, fields, _ in changes], writable)
    return groups, versions


def grouped_plain_changes(
    changes: Sequence[tuple[str, Mapping[str, Any]]], writable: frozenset[str]
) -> dict[tuple[str, ...], list[tuple[str, dict[str, Any]]]]:
    """``update_many`` input validated and grouped by field set (one statement per group)."""
    groups: dict[tuple[str, ...], list[tuple[str, dict[str, Any]]]] = {}
    for memory_id, fields in changes:
        checked = field_changes(fields, writable)
        indexed = sorted(INDEXED_FIELDS & checked.keys())
        if indexed:
            raise InvalidInputError(f"update_many cannot change {indexed}; use update_fields")
        if checked:
            groups.setdefault(tuple(sorted(checked)), []).append((memory_id, checked))
    return groups


# -- quantised embeddings ------------------------------------------------------


@dataclass(frozen=True, slots=True)
class StoredVector:
    """How a memory's embedding is stored: float32 (``vector``) or a code blob (``codes``) at
    ``precision`` — never both. A memory without an embedding has neither."""

    vector: Vector | None
    codes: bytes | None
    precision: Precision

    def embedding(self) -> Vector | None:
        """The float32 embedding (dequantised when stored as codes)."""
        if self.codes is not None:
            return vector_codec.decode(self.codes, self.precision)
        return self.vector


def precision_value(value: Any) -> Precision:
    """A :class:`Precision` from its value, or InvalidInputError."""
    try:
        return Precision(value)
    except ValueError as exc:
        raise InvalidInputError(f"invalid embedding_precision: {value!r}") from exc


def stored_vector(vector: Vector | None, precision: Precision) -> StoredVector:
    """The stored form of a checked float32 ``vector`` at ``precision`` (quantised unless float32)."""
    if vector is None or precision is Precision.FLOAT32:
        return StoredVector(vector, None, precision)
    return StoredVector(None, vector_codec.encode(vector, precision), precision)


def resolve_embedding(fields: Mapping[str, Any], current: StoredVector, dim: int) -> StoredVector | None:
    """The new stored embedding of a write naming ``embedding`` and/or ``embedding_precision``.

    ``None`` when the write names neither. A new vector is stored at the new precision (the
    current one when none is named); a vector equal to the dequantised current codes at the same
    precision keeps those codes (a read-modify-write of a record never re-quantises). A precision
    change alone re-encodes the stored embedding (a raise to float32 stores the dequantised
    vector: call :func:`reverie.dream.vector_codec.restore_precision` to re-embed instead).
    """
    if "embedding" not in fields and "embedding_precision" not in fields:
        return None
    target = precision_value(fields.get("embedding_precision", current.precision))
    if "embedding" in fields:
        value = fields["embedding"]
        if value is None:
            return StoredVector(None, None, target)
        vec = check_vector(value, dim)
        codes = current.codes if target is current.precision else None
        if codes is not None and np.array_equal(vec, vector_codec.decode(codes)):
            return current
        return stored_vector(vec, target)
    if target is current.precision:
        return current
    return stored_vector(current.embedding(), target)


def precision_changes(
    changes: Sequence[tuple[str, Any, int | None]],
) -> tuple[dict[str, Precision], dict[str, int | None]]:
    """``set_embedding_precision`` input validated: each id's target precision and expected version
    (an id given twice is an error: its second write could never match)."""
    targets: dict[str, Precision] = {}
    versions: dict[str, int | None] = {}
    for memory_id, precision, expected in changes:
        if memory_id in targets:
            raise InvalidInputError(f"set_embedding_precision got memory {memory_id!r} twice")
        targets[memory_id] = precision_value(precision)
        versions[memory_id] = expected
    return targets, versions


def reencode(
    current: Mapping[str, StoredVector], targets: Mapping[str, Precision], dim: int
) -> dict[str, StoredVector]:
    """Each memory of ``current`` re-encoded at its target precision, quantised in one batch per
    precision; memories without an embedding or already at their target are left out."""
    groups: dict[Precision, list[str]] = {}
    for memory_id, target in targets.items():
        cur = current.get(memory_id)
        if cur is not None and (cur.vector is not None or cur.codes is not None) and cur.precision is not target:
            groups.setdefault(target, []).append(memory_id)
    out: dict[str, StoredVector] = {}
    for target, ids in groups.items():
        source = np.empty((len(ids), dim), dtype=np.float32)
        coded = [i for i, memory_id in enumerate(ids) if current[memory_id].codes is not None]
        for i, memory_id in enumerate(ids):
            vector = current[memory_id].vector
            if vector is not None:
                source[i] = vector
        if coded:
            source[coded] = vector_codec.decode_rows([current[ids[i]].codes or b"" for i in coded], dim)
        if target is Precision.FLOAT32:
            out.update((memory_id, StoredVector(source[i].copy(), None, target)) for i, memory_id in enumerate(ids))
            continue
        blobs = vector_codec.quantize(source, target)
        out.update((memory_id, StoredVector(None, blobs[i].tobytes(), target)) for i, memory_id in enumerate(ids))
    return out


#: the upper end of a prefix range on ids (``id >= p AND id < p + ID_PREFIX_UPPER``): the largest code
#: point sorts after every character an id can hold, in SQLite's binary and PostgreSQL's "C" order
ID_PREFIX_UPPER: Final[str] = "\U0010ffff"
