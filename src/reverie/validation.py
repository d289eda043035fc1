"""Input validation shared by the library and every interface.

Bad input gets a clear :class:`~reverie.errors.InvalidInputError` before anything is written.
Every path that stores a memory — ``add``, ``observe``, ``restore``, the JSONL, markdown and
conversation importers, the REST import — checks its input here, field by field: types,
finiteness, ranges, enum values, metadata depth and size, text that cannot be stored (NUL
characters, lone surrogates) and datetimes outside the range the engine can compute with.
"""

from __future__ import annotations

import dataclasses
import difflib
import functools
import inspect
import json
import math
import os
import types
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from reverie.errors import ContentTooLargeError, InvalidInputError
from reverie.model import (
    Layer,
    MemoryKind,
    MemoryRecord,
    Precision,
    Status,
    StoreTier,
    TemporalType,
    content_hash,
    new_id,
)

SOURCES = ("human", "ai", "interaction", "ingest", "code_scan", "dream")
MAX_SCOPE_CHARS = 256
MAX_ID_CHARS = 128
MAX_LABEL_CHARS = 64
MAX_REASON_CHARS = 1000
MAX_FILTER_VALUES = 10_000
#: default of ``limits.max_metadata_depth``: nesting deeper than this is refused at write time
DEFAULT_METADATA_DEPTH = 16
#: the largest magnitude of a number in metadata: the 64-bit range every store keeps an integer in exactly
JSON_NUMBER_LIMIT = 2**63 - 1
#: datetimes the engine accepts: far enough from datetime's limits that decay and expiry arithmetic
#: (a TTL added, a span subtracted) can never overflow
EARLIEST = datetime(1000, 1, 1, tzinfo=UTC)
LATEST = datetime(9000, 1, 1, tzinfo=UTC)


# text -----------------------------------------------------------------------------------------


def has_surrogates(text: str) -> bool:
    """Whether ``text`` holds lone surrogates (it then has no UTF-8 form and no database can store it)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def printable(value: Any, *, limit: int = 60) -> str:
    """``value`` for an error message: repr'd (lone surrogates and control characters escaped) and cut."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def clean_text(value: Any, name: str, *, max_chars: int, allow_empty: bool = False) -> str:
    """A string that every backend can store: no NUL, no lone surrogates, at most ``max_chars``."""
    if not isinstance(value, str):
        raise InvalidInputError(f"{name} must be a string, got {type(value).__name__}")
    if "\x00" in value:
        raise InvalidInputError(f"{name} contains a NUL character")
    if has_surrogates(value):
        raise InvalidInputError(f"{name} contains undecodable characters (lone surrogates)")
    if len(value) > max_chars:
        raise InvalidInputError(f"{name} is longer than {max_chars} characters")
    if not allow_empty and not value.strip():
        raise InvalidInputError(f"{name} is empty or whitespace only")
    return value


def clean_content(
    content: Any,
    *,
    max_bytes: int,
    what: str = "content",
    max_chars: int | None = None,
    setting: str = "limits.max_content_bytes",
) -> str:
    """Return ``content`` as valid text or raise: empty, whitespace-only, NUL, undecodable, too large (more
    than ``max_bytes`` UTF-8 bytes, or ``max_chars`` characters when given; the error names ``setting``)."""
    if isinstance(content, bytes | bytearray | memoryview):
        try:
            content = bytes(content).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise InvalidInputError(f"{what} is not valid UTF-8 text ({exc.reason} at byte {exc.start})") from exc
    if not isinstance(content, str):
        raise InvalidInputError(f"{what} must be a string, got {type(content).__name__}")
    if max_chars is not None and len(content) > max_chars:
        raise ContentTooLargeError(f"{what} is {len(content)} characters; the maximum is {max_chars} ({setting})")
    if "\x00" in content:
        raise InvalidInputError(f"{what} contains a NUL character")
    try:
        size = len(content.encode("utf-8"))
    except UnicodeEncodeError as exc:
        raise InvalidInputError(f"{what} contains undecodable characters (lone surrogates)") from exc
    if size > max_bytes:
        raise ContentTooLargeError(f"{what} is {size} bytes; the maximum is {max_bytes} ({setting})")
    if not content.strip():
        raise InvalidInputError(f"{what} is empty or whitespace only")
    return content


def clean_scope(value: Any, name: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise InvalidInputError(f"{name} must be a string or None, got {type(value).__name__}")
    if not value.strip() or "\x00" in value or len(value) > MAX_SCOPE_CHARS or has_surrogates(value):
        raise InvalidInputError(f"{name} must be 1–{MAX_SCOPE_CHARS} printable characters")
    return value


def clean_id(value: Any, name: str = "memory id") -> str:
    if (
        not isinstance(value, str)
        or not value.strip()
        or len(value) > MAX_ID_CHARS
        or "\x00" in value
        or has_surrogates(value)
    ):
        raise InvalidInputError(
            f"{name} must be a non-empty string of at most {MAX_ID_CHARS} printable characters, got {printable(value)}"
        )
    return value


def clean_reason(value: Any, name: str = "reason", *, required: bool = False) -> str:
    """A free-text reason kept in a memory's history: at most 1,000 characters."""
    text = clean_text(value, name, max_chars=MAX_REASON_CHARS * 4, allow_empty=not required)
    return text[:MAX_REASON_CHARS]


def clean_label(value: Any, name: str) -> str:
    """A short non-empty label (category, state names): at most 64 characters."""
    return clean_text(value, name, max_chars=MAX_LABEL_CHARS)


# metadata -------------------------------------------------------------------------------------


def json_shape(value: Any, name: str, *, max_depth: int) -> Any:
    """``value`` as plain JSON data (dicts with string keys, lists, strings, finite numbers, booleans,
    null), nested at most ``max_depth`` levels; walked without recursion, so no input can exhaust
    the stack. Tuples become lists."""
    root: list[Any] = [None]
    stack: list[tuple[Any, list[Any] | dict[str, Any], Any, int]] = [(value, root, 0, 1)]
    while stack:
        item, parent, key, depth = stack.pop()
        if isinstance(item, Mapping | list | tuple):
            if depth > max_depth:
                raise InvalidInputError(f"{name} is nested deeper than {max_depth} levels (limits.max_metadata_depth)")
            if isinstance(item, Mapping):
                out_d: dict[str, Any] = {}
                parent[key] = out_d
                for k, v in item.items():
                    if not isinstance(k, str):
                        raise InvalidInputError(f"{name} keys must be strings, got {type(k).__name__}")
                    _check_json_str(k, name)
                    out_d[k] = None
                    stack.append((v, out_d, k, depth + 1))
            else:
                out_l: list[Any] = [None] * len(item)
                parent[key] = out_l
                stack.extend((v, out_l, i, depth + 1) for i, v in enumerate(item))
        else:
            parent[key] = _json_scalar(item, name)
    return root[0]


def _json_scalar(item: Any, name: str) -> Any:
    if isinstance(item, str):
        _check_json_str(item, name)
        return item
    if item is None or isinstance(item, bool):
        return item
    if isinstance(item, int):
        if abs(item) > JSON_NUMBER_LIMIT:
            raise InvalidInputError(f"{name} holds an integer outside the 64-bit range")
        return int(item)
    if isinstance(item, float):
        if not math.isfinite(item):
            raise InvalidInputError(f"{name} holds NaN or infinity (not JSON)")
        if abs(item) > JSON_NUMBER_LIMIT:
            raise InvalidInputError(f"{name} holds a number outside the 64-bit range (at most {JSON_NUMBER_LIMIT})")
        return float(item)
    raise InvalidInputError(f"{name} must be JSON data; {type(item).__name__} is not")


def _check_json_str(text: str, name: str) -> None:
    if "\x00" in text:
        raise InvalidInputError(f"{name} contains a NUL character")
    if has_surrogates(text):
        raise InvalidInputError(f"{name} contains undecodable characters (lone surrogates)")


def json_size(value: Any) -> int:
    """Bytes of ``value`` as compact UTF-8 JSON (``value`` must have passed :func:`json_shape`)."""
    return len(json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8"))


def clean_metadata(
    metadata: Any, *, max_bytes: int, max_depth: int = DEFAULT_METADATA_DEPTH, name: str = "metadata"
) -> dict[str, Any]:
    """A JSON object with string keys and finite numbers, nested at most ``max_depth`` levels and
    at most ``max_bytes`` as JSON."""
    if metadata is None:
        return {}
    if not isinstance(metadata, Mapping):
        raise InvalidInputError(f"{name} must be a mapping, got {type(metadata).__name__}")
    shaped: dict[str, Any] = json_shape(metadata, name, max_depth=max_depth)
    if json_size(shaped) > max_bytes:
        raise ContentTooLargeError(f"{name} is larger than {max_bytes} bytes (limits.max_metadata_bytes)")
    return shaped


# time -----------------------------------------------------------------------------------------


def clean_datetime(value: Any, name: str) -> datetime:
    """An aware datetime (or ISO 8601 text with a UTC offset; naive text is taken as UTC) in UTC,
    between the years 1000 and 9000."""
    if isinstance(value, str):
        if len(value) > 64 or has_surrogates(value) or "\x00" in value:
            raise InvalidInputError(f"{name}={printable(value)} is not an ISO 8601 datetime")
        try:
            value = datetime.fromisoformat(value)
        except ValueError as exc:
            raise InvalidInputError(f"{name}={printable(value)} is not an ISO 8601 datetime") from exc
        if value.tzinfo is None:
            value = value.replace(tzinfo=UTC)
    if not isinstance(value, datetime):
        raise InvalidInputError(f"{name} must be a datetime or ISO 8601 text, got {type(value).__name__}")
    if value.tzinfo is None or value.utcoffset() is None:
        raise InvalidInputError(f"{name}={value.isoformat()} has no timezone; pass an aware datetime")
    try:
        utc = value.astimezone(UTC)
    except (OverflowError, ValueError) as exc:
        raise InvalidInputError(f"{name}={value.isoformat()} is outside the supported range") from exc
    if not EARLIEST <= utc < LATEST:
        raise InvalidInputError(
            f"{name}={value.isoformat()} must lie between the years {EARLIEST.year} and {LATEST.year}"
        )
    return utc


def clean_when(when: Any, name: str = "when") -> datetime | None:
    if when is None:
        return None
    if isinstance(when, str):
        if len(when) > 64 or has_surrogates(when) or "\x00" in when:
            raise InvalidInputError(f"{name}={printable(when)} is not an ISO 8601 datetime")
        try:
            parsed = datetime.fromisoformat(when)
        except ValueError as exc:
            raise InvalidInputError(f"{name}={printable(when)} is not an ISO 8601 datetime") from exc
        if parsed.tzinfo is None:
            raise InvalidInputError(f"{name}={printable(when)} has no timezone; add an offset such as +00:00")
        when = parsed
    return clean_datetime(when, name)


# small values ---------------------------------------------------------------------------------


def clean_source(source: Any) -> str:
    if source is None:
        return "interaction"
    if not isinstance(source, str) or source not in SOURCES:
        raise InvalidInputError(f"source must be one of {', '.join(SOURCES)}; got {printable(source)}")
    return source


def clean_k(k: Any, *, max_k: int) -> int:
    if isinstance(k, bool) or not isinstance(k, int):
        raise InvalidInputError(f"k must be an integer, got {type(k).__name__}")
    if not 1 <= k <= max_k:
        raise InvalidInputError(f"k must be between 1 and {max_k}, got {k}")
    return k


def clean_number(value: Any, name: str, *, low: float | None = None, high: float | None = None) -> float:
    """A finite number (not a bool) within [low, high]."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InvalidInputError(f"{name} must be a number, got {type(value).__name__}")
    try:
        number = float(value)
    except OverflowError:
        raise InvalidInputError(f"{name} is too large") from None
    if not math.isfinite(number):
        raise InvalidInputError(f"{name} must be a finite number, got {number}")
    if (low is not None and number < low) or (high is not None and number > high):
        raise InvalidInputError(f"{name} must be within [{low}, {high}], got {number}")
    return number


def clean_unit(value: Any, name: str) -> float:
    return clean_number(value, name, low=0.0, high=1.0)


def clean_count(value: Any, name: str, *, low: int = 0, high: int = 10**15) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidInputError(f"{name} must be an integer, got {type(value).__name__}")
    if not low <= value <= high:
        raise InvalidInputError(f"{name} must be between {low} and {high}, got {value}")
    return int(value)


def clean_bool(value: Any, name: str) -> bool:
    if not isinstance(value, bool):
        raise InvalidInputError(f"{name} must be true or false, got {printable(value)}")
    return value


def clean_path(value: Any, name: str = "path") -> Path:
    """A file system path given as text (or an ``os.PathLike``): not empty, no NUL, no lone surrogates."""
    raw = os.fspath(value) if isinstance(value, os.PathLike) else value
    if not isinstance(raw, str):
        raise InvalidInputError(f"{name} must be a path (text), got {type(value).__name__}")
    if not raw.strip():
        raise InvalidInputError(f"{name} is empty")
    if "\x00" in raw:
        raise InvalidInputError(f"{name} contains a NUL character")
    if has_surrogates(raw):
        raise InvalidInputError(f"{name} contains undecodable characters (lone surrogates)")
    return Path(raw).expanduser()


C = TypeVar("C", bound=type)


def typed_arguments(cls: C) -> C:
    """Class decorator: calling a public method of ``cls`` (its own or inherited) with arguments its
    signature does not take — an unknown keyword, a missing or surplus argument — raises
    :class:`InvalidInputError` naming them and what the method takes, instead of ``TypeError``. The
    signature is consulted only when the call fails, so a valid call costs nothing extra."""
    for klass in cls.__mro__:  # each method where it is defined (the class's own attributes stay its own)
        if not klass.__module__.startswith("reverie."):
            continue
        for name, fn in list(vars(klass).items()):
            if not name.startswith("_") and isinstance(fn, types.FunctionType) and not hasattr(fn, "__wrapped__"):
                setattr(klass, name, _checked_call(fn))
    return cls


def _checked_call(fn: Callable[..., Any]) -> Callable[..., Any]:
    signature = inspect.signature(fn)
    params = [p for p in signature.parameters if p != "self"]

    @functools.wraps(fn)
    def call(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except TypeError as exc:
            try:
                signature.bind(*args, **kwargs)
            except TypeError as bad:
                unknown = [k for k in kwargs if k not in signature.parameters]
                hints = [
                    f" (did you mean {close[0]!r}?)"
                    if (close := difflib.get_close_matches(k, params, n=1, cutoff=0.75))
                    else ""
                    for k in unknown
                ]
                said = (
                    "no argument " + ", ".join(f"{printable(k)}{h}" for k, h in zip(unknown, hints, strict=True))
                    if unknown
                    else str(bad)
                )
                raise InvalidInputError(f"{fn.__name__}(): {said}. It takes: {', '.join(params)}") from exc
            raise

    return call


def clean_enum(value: Any, enum: type[Any], name: str) -> Any:
    if isinstance(value, enum):
        return value
    if not isinstance(value, str):
        raise InvalidInputError(f"{name} must be one of {[e.value for e in enum]}, got {printable(value)}")
    try:
        return enum(value)
    except ValueError:
        raise InvalidInputError(f"{name} must be one of {[e.value for e in enum]}, got {printable(value)}") from None


# items given to add_many -------------------------------------------------------------------------


def items_list(items: Any) -> list[Any]:
    """``add_many``'s items as a list: a sequence or iterable of items, never a single string, bytes
    or mapping (``add_many("abc")`` would otherwise store three memories ``a``, ``b``, ``c``)."""
    if isinstance(items, str | bytes | bytearray | memoryview):
        raise InvalidInputError("items must be a list of items, not a single string; use add() for one memory")
    if isinstance(items, Mapping):
        raise InvalidInputError("items must be a list of items, not a single mapping; use add() for one memory")
    try:
        return list(items)
    except TypeError:
        raise InvalidInputError(f"items must be a list of items, got {type(items).__name__}") from None


# filters ----------------------------------------------------------------------------------------


def _enum_set(value: Any, enum: type[Layer] | type[Status] | type[StoreTier], name: str) -> frozenset[Any]:
    values = [value] if isinstance(value, str) else value
    if not isinstance(values, list | tuple | set | frozenset) or not values:
        raise InvalidInputError(f"filter {name!r} must be a value or a non-empty list of values")
    return frozenset(clean_enum(v, enum, f"filter {name!r}") for v in values)


def _str_set(value: Any, name: str, clean: Callable[[Any, str], str]) -> frozenset[str]:
    values = [value] if isinstance(value, str) else value
    if not isinstance(values, list | tuple | set | frozenset) or not values:
        raise InvalidInputError(f"filter {name!r} must be a string or a non-empty list of strings")
    if len(values) > MAX_FILTER_VALUES:
        raise InvalidInputError(f"filter {name!r} holds more than {MAX_FILTER_VALUES} values")
    return frozenset(clean(v, f"filter {name!r}") for v in values)


FILTER_KEYS = (
    "layer",
    "status",
    "store",
    "category",
    "pinned",
    "metadata",
    "valid_at",
    "recorded_before",
    "session_id",
    "ids",
)


def parse_filters(filters: Any) -> dict[str, Any]:
    """Turn the public ``filters=`` mapping into MemoryFilter keyword arguments."""
    if filters is None:
        return {}
    if not isinstance(filters, Mapping):
        raise InvalidInputError(f"filters must be a mapping, got {type(filters).__name__}")
    unknown = [k for k in filters if k not in FILTER_KEYS]
    if unknown:
        raise InvalidInputError(
            f"unknown filter keys {printable(sorted(map(str, unknown)), limit=200)}; allowed: {', '.join(FILTER_KEYS)}"
        )
    out: dict[str, Any] = {}
    for key, (target, enum) in _ENUM_FILTERS.items():
        if key in filters:
            out[target] = _enum_set(filters[key], enum, key)
    if "category" in filters:
        out["categories"] = _str_set(
            filters["category"], "category", lambda v, n: clean_text(v, n, max_chars=MAX_LABEL_CHARS)
        )
    if "ids" in filters:
        out["ids"] = _str_set(filters["ids"], "ids", clean_id)
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
            out[key] = clean_when(filters[key], f"filter {key!r}")
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
    if len(md) > 64:
        raise InvalidInputError("filter 'metadata' names more than 64 keys")
    for k, v in md.items():
        clean_text(k, "filter 'metadata' key", max_chars=MAX_SCOPE_CHARS)
        if isinstance(v, str):
            clean_text(v, "filter 'metadata' value", max_chars=4096, allow_empty=True)
        elif isinstance(v, float) and not math.isfinite(v):
            raise InvalidInputError("filter 'metadata' values must be finite numbers")
        elif isinstance(v, int) and not isinstance(v, bool) and abs(v) > 2**63 - 1:
            raise InvalidInputError("filter 'metadata' holds an integer outside the 64-bit range")
    return dict(md)


# whole records (restore, import) ------------------------------------------------------------------


@dataclasses.dataclass(frozen=True, slots=True)
class RecordLimits:
    """The limits a restored record is checked against (from the ``limits`` settings)."""

    max_content_bytes: int
    max_metadata_bytes: int
    max_metadata_depth: int = DEFAULT_METADATA_DEPTH
    dim: int | None = None


_UNIT_FIELDS = (
    "importance",
    "utility",
    "trust",
    "source_confidence",
    "confidence",
    "retrieval_strength",
    "emotion_arousal",
)
_OPT_UNIT_FIELDS = ("surprise",)
_POSITIVE_FIELDS = {
    "energy": (0.0, 1e9),
    "stability": (1e-9, 1e9),
    "storage_strength": (0.0, 1e9),
    "difficulty": (0.0, 10.0),
    "emotion_valence": (-1.0, 1.0),
}
_OPT_SCORE_FIELDS = ("heat_score", "decay_score")
_COUNT_FIELDS = ("reinforcement_count", "confirmations", "access_count")
_BOOL_FIELDS = ("flashbulb", "pinned", "immutable", "core")
_SCOPE_FIELDS = ("user_id", "agent_id", "session_id", "instance_id")
_LABEL_FIELDS = ("category", "write_source", "data_source", "lifecycle_state", "verification_state", "policy_class")
_OPT_LABEL_FIELDS = ("sub_tier", "emotion_label")
_OPT_ID_FIELDS = ("superseded_by", "box_id")
_ENUMS: dict[str, type[Any]] = {
    "layer": Layer,
    "store": StoreTier,
    "status": Status,
    "memory_kind": MemoryKind,
    "temporal_type": TemporalType,
    "embedding_precision": Precision,
}
_REQUIRED_TIMES = ("recorded_at", "created_at", "updated_at")
_OPT_TIMES = (
    "utility_updated_at",
    "energy_updated_at",
    "last_reinforced_at",
    "valid_from",
    "valid_until",
    "last_accessed_at",
)
RECORD_FIELDS = frozenset(f.name for f in dataclasses.fields(MemoryRecord))


def record_fields(rec: MemoryRecord) -> dict[str, Any]:
    """A record's fields as they are (no copy, no serialisation): what :func:`clean_record` checks."""
    return {name: getattr(rec, name) for name in RECORD_FIELDS}


def clean_record(data: Any, limits: RecordLimits) -> MemoryRecord:
    """One exported record (a mapping of :class:`MemoryRecord` fields, or a record) checked field by
    field as ``add`` checks its input; raises :class:`InvalidInputError` naming the first bad field.

    The content hash is recomputed from the content (a stale or forged hash would defeat dedup); an
    embedding of another dimension is dropped (the memory is embedded again); timestamps a record
    lacks default to now."""
    if isinstance(data, MemoryRecord):
        data = record_fields(data)
    if not isinstance(data, Mapping):
        raise InvalidInputError(f"a record must be a JSON object, got {type(data).__name__}")
    unknown = [k for k in data if k not in RECORD_FIELDS]
    if unknown:
        raise InvalidInputError(f"unknown memory fields: {printable(sorted(map(str, unknown)), limit=200)}")
    if "content" not in data:
        raise InvalidInputError("a record needs 'content'")
    out: dict[str, Any] = {"content": clean_content(data["content"], max_bytes=limits.max_content_bytes)}
    out["content_hash"] = content_hash(out["content"])
    out["id"] = clean_id(data["id"], "id") if data.get("id") is not None else new_id()
    for key, value in data.items():
        if key in ("content", "content_hash", "id"):
            continue
        out[key] = _clean_field(key, value, limits)
    return MemoryRecord(**out)


def _clean_field(key: str, value: Any, limits: RecordLimits) -> Any:  # noqa: C901 - one branch per field kind
    if key in _REQUIRED_TIMES:
        return clean_datetime(value, key)
    if value is None and key not in _BOOL_FIELDS and key not in _UNIT_FIELDS and key not in _COUNT_FIELDS:
        if (
            key in _ENUMS
            or key in _LABEL_FIELDS
            or key in _POSITIVE_FIELDS
            or key in ("entities", "importance_channels", "inputs", "metadata", "source", "version")
        ):
            raise InvalidInputError(f"{key} must not be null")
        return None
    if key in _OPT_TIMES:
        return clean_datetime(value, key)
    if key in _SCOPE_FIELDS:
        return clean_scope(value, key)
    if key in _ENUMS:
        return clean_enum(value, _ENUMS[key], key)
    if key in _UNIT_FIELDS or key in _OPT_UNIT_FIELDS:
        return clean_unit(value, key)
    if key in _POSITIVE_FIELDS:
        low, high = _POSITIVE_FIELDS[key]
        return clean_number(value, key, low=low, high=high)
    if key in _OPT_SCORE_FIELDS:
        return clean_number(value, key, low=-1e9, high=1e9)
    if key in _COUNT_FIELDS:
        return clean_count(value, key)
    if key == "version":
        return clean_count(value, key, low=1, high=2**62)
    if key in _BOOL_FIELDS:
        return clean_bool(value, key)
    if key in _LABEL_FIELDS or key in _OPT_LABEL_FIELDS:
        return clean_label(value, key)
    if key in _OPT_ID_FIELDS:
        return clean_id(value, key)
    if key == "source":
        return clean_source(value)
    if key == "entities":
        return _clean_entities(value)
    if key == "importance_channels":
        return _clean_channels(value)
    if key == "metadata":
        return clean_metadata(value, max_bytes=limits.max_metadata_bytes, max_depth=limits.max_metadata_depth)
    if key == "inputs":
        return _clean_inputs(value, limits)
    if key == "embedding":
        return clean_embedding(value, dim=limits.dim)
    raise InvalidInputError(f"unknown memory field {key!r}")  # pragma: no cover - RECORD_FIELDS is exhaustive


def _clean_entities(value: Any) -> list[str]:
    if not isinstance(value, list | tuple) or len(value) > 256:
        raise InvalidInputError("entities must be a list of at most 256 strings")
    return [clean_text(v, "entities", max_chars=MAX_SCOPE_CHARS) for v in value]


def _clean_channels(value: Any) -> dict[str, float]:
    if not isinstance(value, Mapping) or len(value) > 64:
        raise InvalidInputError("importance_channels must map at most 64 names to numbers")
    return {
        clean_text(k, "importance_channels", max_chars=MAX_LABEL_CHARS): clean_number(
            v, "importance_channels value", low=-1e9, high=1e9
        )
        for k, v in value.items()
    }


def _clean_inputs(value: Any, limits: RecordLimits) -> list[dict[str, Any]]:
    if not isinstance(value, list | tuple) or not all(isinstance(v, Mapping) for v in value):
        raise InvalidInputError("inputs must be a list of JSON objects")
    shaped: list[dict[str, Any]] = json_shape(list(value), "inputs", max_depth=limits.max_metadata_depth)
    if json_size(shaped) > limits.max_metadata_bytes:
        raise ContentTooLargeError(
            f"inputs are larger than {limits.max_metadata_bytes} bytes (limits.max_metadata_bytes)"
        )
    return shaped


def clean_embedding(value: Any, *, dim: int | None) -> Any:
    """A stored embedding: finite numbers, not all zero. One of another dimension than the
    engine's (``dim``) comes back as ``None`` (to be embedded again)."""
    if value is None:
        return None
    if isinstance(value, str | bytes | Mapping):
        raise InvalidInputError("embedding must be a list of numbers")
    try:
        arr = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError, OverflowError) as exc:
        raise InvalidInputError(f"embedding must be a list of numbers: {exc}") from exc
    if arr.ndim != 1 or arr.size == 0 or arr.size > 65_536:
        raise InvalidInputError("embedding must be a flat, non-empty list of numbers")
    if not np.all(np.isfinite(arr)):
        raise InvalidInputError("embedding holds NaN or infinity")
    vec = arr.astype(np.float32)
    if not np.all(np.isfinite(vec)) or not np.any(vec):
        raise InvalidInputError("embedding must be finite float32 numbers, not all zero")
    if dim is not None and vec.shape != (dim,):
        return None
    return vec


def describe_error(exc: BaseException) -> str:
    """An error as one printable line (lone surrogates and control characters escaped)."""
    text = f"{type(exc).__name__}: {exc}"
    return text.encode("utf-8", "backslashreplace").decode("utf-8").replace("\n", " ")[:2000]


__all__ = [
    "DEFAULT_METADATA_DEPTH",
    "EARLIEST",
    "FILTER_KEYS",
    "JSON_NUMBER_LIMIT",
    "LATEST",
    "RECORD_FIELDS",
    "SOURCES",
    "RecordLimits",
    "clean_bool",
    "clean_content",
    "clean_count",
    "clean_datetime",
    "clean_embedding",
    "clean_enum",
    "clean_id",
    "clean_k",
    "clean_label",
    "clean_metadata",
    "clean_number",
    "clean_path",
    "clean_reason",
    "clean_record",
    "clean_scope",
    "clean_source",
    "clean_text",
    "clean_unit",
    "clean_when",
    "describe_error",
    "has_surrogates",
    "items_list",
    "json_shape",
    "json_size",
    "parse_filters",
    "printable",
    "record_fields",
    "typed_arguments",
]
