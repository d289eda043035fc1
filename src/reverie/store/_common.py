"""Backend-independent pieces of the two stores: value checks that must behave the same on both."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from enum import StrEnum
from typing import Any, Final

import numpy as np

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
INDEXED_FIELDS: Final = frozenset({"content", "embedding", "user_id"})


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
