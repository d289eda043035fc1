"""Input validation shared by the library and every interface.

Bad input gets a clear :class:`~reverie.errors.InvalidInputError` before anything is written.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from reverie.clock import ensure_aware
from reverie.errors import ContentTooLargeError, InvalidInputError
from reverie.model import Layer, Status, StoreTier

SOURCES = ("human", "ai", "interaction", "ingest", "code_scan", "dream")
MAX_SCOPE_CHARS = 256


def clean_content(content: Any, *, max_bytes: int, what: str = "content") -> str:
    """Return ``content`` as valid text or raise: empty, whitespace-only, NUL, undecodable, too large."""
    if isinstance(content, bytes | bytearray | memoryview):
        try:
            content = bytes(content).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise InvalidInputError(f"{what} is not valid UTF-8 text ({exc.reason} at byte {exc.start})") from exc
    if not isinstance(content, str):
        raise InvalidInputError(f"{what} must be a string, got {type(content).__name__}")
    if "\x00" in content:
        raise InvalidInputError(f"{what} contains a NUL character")
    try:
        size = len(content.encode("utf-8"))
    except UnicodeEncodeError as exc:
        raise InvalidInputError(f"{what} contains undecodable characters (lone surrogates)") from exc
    if size > max_bytes:
        raise ContentTooLargeError(f"{what} is {size} bytes; the maximum is {max_bytes} (limits.max_content_bytes)")
    if not content.strip():
        raise InvalidInputError(f"{what} is empty or whitespace only")
    return content


def clean_scope(value: Any, name: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise InvalidInputError(f"{name} must be a string or None, got {type(value).__name__}")
    if not value.strip() or "\x00" in value or len(value) > MAX_SCOPE_CHARS:
        raise InvalidInputError(f"{name} must be 1–{MAX_SCOPE_CHARS} printable characters")
    return value


def clean_id(value: Any) -> str:
    if not isinstance(value, str) or not value.strip() or len(value) > 128 or "\x00" in value:
        raise InvalidInputError(f"memory id must be a non-empty string, got {value!r:.60}")
    return value


def clean_metadata(metadata: Any, *, max_bytes: int) -> dict[str, Any]:
    """A JSON-serialisable dict with string keys and finite numbers, within the size limit."""
    if metadata is None:
        return {}
    if not isinstance(metadata, Mapping):
        raise InvalidInputError(f"metadata must be a mapping, got {type(metadata).__name__}")
    try:
        text = json.dumps(metadata, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise InvalidInputError(f"metadata must be JSON-serialisable: {exc}") from exc
    if "\\u0000" in text:
        raise InvalidInputError("metadata contains a NUL character")
    if len(text.encode("utf-8")) > max_bytes:
        raise ContentTooLargeError(f"metadata is larger than {max_bytes} bytes (limits.max_metadata_bytes)")
    loaded: dict[str, Any] = json.loads(text)
    return loaded


def clean_when(when: Any) -> datetime | None:
    if when is None:
        return None
    if isinstance(when, str):
        try:
            when = datetime.fromisoformat(when)
        except ValueError as exc:
            raise InvalidInputError(f"when={when!r} is not an ISO 8601 datetime") from exc
    return ensure_aware(when)


def clean_source(source: Any) -> str:
    if source is None:
        return "interaction"
    if source not in SOURCES:
        raise InvalidInputError(f"source must be one of {', '.join(SOURCES)}; got {source!r}")
    return str(source)


def clean_k(k: Any, *, max_k: int) -> int:
    if isinstance(k, bool) or not isinstance(k, int):
        raise InvalidInputError(f"k must be an integer, got {type(k).__name__}")
    if not 1 <= k <= max_k:
        raise InvalidInputError(f"k must be between 1 and {max_k}, got {k}")
    return k


def clean_unit(value: Any, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise InvalidInputError(f"{name} must be a finite number")
    if not 0.0 <= float(value) <= 1.0:
        raise InvalidInputError(f"{name} must be within [0, 1], got {value}")
    return float(value)


def _enum_set(value: Any, enum: type[Layer] | type[Status] | type[StoreTier], name: str) -> frozenset[Any]:
    values = [value] if isinstance(value, str) else value
    if not isinstance(values, list | tuple | set | frozenset) or not values:
        raise InvalidInputError(f"filter {name!r} must be a value or a non-empty list of values")
    try:
        return frozenset(enum(v) for v in values)
    except ValueError as exc:
        allowed = ", ".join(e.value for e in enum)
        raise InvalidInputError(f"filter {name!r}: {exc}; allowed: {allowed}") from exc


def _str_set(value: Any, name: str) -> frozenset[str]:
    values = [value] if isinstance(value, str) else value
    if not isinstance(values, list | tuple | set | frozenset) or not values:
        raise InvalidInputError(f"filter {name!r} must be a string or a non-empty list of strings")
    if not all(isinstance(v, str) for v in values):
        raise InvalidInputError(f"filter {name!r} must contain strings only")
    return frozenset(values)


FILTER_KEYS = ("layer", "status", "store", "category", "pinned", "metadata", "valid_at", "recorded_before",
               "session_id", "ids")


def parse_filters(filters: Any) -> dict[str, Any]:
    """Turn the public ``filters=`` mapping into MemoryFilter keyword arguments."""
    if filters is None:
        return {}
    if not isinstance(filters, Mapping):
        raise InvalidInputError(f"filters must be a mapping, got {type(filters).__name__}")
    unknown = set(filters) - set(FILTER_KEYS)
    if unknown:
        raise InvalidInputError(f"unknown filter keys {sorted(unknown)}; allowed: {', '.join(FILTER_KEYS)}")
    out: dict[str, Any] = {}
    for key, (target, enum) in _ENUM_FILTERS.items():
        if key in filters:
            out[target] = _enum_set(filters[key], enum, key)
    for key, target in (("category", "categories"), ("ids", "ids")):
        if key in filters:
            out[target] = _str_set(filters[key], key)
    if "pinned" in filters:
        if not isinstance(filters["pinned"], bool):
            raise InvalidInputError("filter 'pinned' must be true or false")
        out["pinned"] = filters["pinned"]
    if "session_id" in filters:
        out["session_id"] = clean_scope(filters["session_id"], "session_id")
    if "metadata" in filters:
        out["metadata"] = _metadata_filter(filters["metadata"])
    for key in ("valid_at", "recorded_before"):
        if key in filters:
            out[key] = clean_when(filters[key])
    return out


_ENUM_FILTERS: dict[str, tuple[str, Any]] = {
    "layer": ("layers", Layer),
    "status": ("statuses", Status),
    "store": ("stores", StoreTier),
}


def _metadata_filter(md: Any) -> dict[str, Any]:
    if not isinstance(md, Mapping) or not all(
        isinstance(k, str) and (isinstance(v, str | int | float | bool) or v is None) for k, v in md.items()
    ):
        raise InvalidInputError("filter 'metadata' must map string keys to JSON scalars")
    return dict(md)
