"""How a memory record is stored in PostgreSQL (columns, values) and the filter every read uses."""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any, Final, LiteralString

import numpy as np
import psycopg
import psycopg.conninfo
from psycopg import Connection, sql
from psycopg.rows import TupleRow
from psycopg.types.json import Jsonb

from reverie import vector_codec
from reverie.errors import InvalidInputError
from reverie.model import MemoryRecord
from reverie.store._common import ENUM_FIELDS, check_vector
from reverie.store.base import MemoryFilter

Conn = Connection[TupleRow]
Query = sql.Composed | sql.SQL | LiteralString
Params = Sequence[Any] | Mapping[str, Any]

# ----------------------------------------------------------------------------------------
# memory columns: (name, kind) in table order; kinds drive encoding and decoding
# ----------------------------------------------------------------------------------------

COLUMNS: Final[tuple[tuple[str, str], ...]] = (
    ("id", "text"),
    ("content", "text"),
    ("content_hash", "text"),
    ("user_id", "text"),
    ("agent_id", "text"),
    ("session_id", "text"),
    ("instance_id", "text"),
    ("layer", "enum"),
    ("store", "enum"),
    ("status", "enum"),
    ("category", "text"),
    ("memory_kind", "enum"),
    ("sub_tier", "text"),
    ("temporal_type", "enum"),
    ("entities", "json"),
    ("embedding", "vector"),
    ("embedding_precision", "enum"),
    ("importance", "float"),
    ("importance_channels", "json"),
    ("surprise", "float"),
    ("utility", "float"),
    ("utility_updated_at", "ts"),
    ("energy", "float"),
    ("energy_updated_at", "ts"),
    ("stability", "float"),
    ("difficulty", "float"),
    ("storage_strength", "float"),
    ("retrieval_strength", "float"),
    ("reinforcement_count", "int"),
    ("last_reinforced_at", "ts"),
    ("confirmations", "int"),
    ("emotion_valence", "float"),
    ("emotion_arousal", "float"),
    ("emotion_label", "text"),
    ("flashbulb", "bool"),
    ("source", "text"),
    ("trust", "float"),
    ("source_confidence", "float"),
    ("write_source", "text"),
    ("data_source", "text"),
    ("inputs", "json"),
    ("valid_from", "ts"),
    ("valid_until", "ts"),
    ("recorded_at", "ts"),
    ("created_at", "ts"),
    ("updated_at", "ts"),
    ("access_count", "int"),
    ("last_accessed_at", "ts"),
    ("pinned", "bool"),
    ("immutable", "bool"),
    ("core", "bool"),
    ("lifecycle_state", "text"),
    ("verification_state", "text"),
    ("policy_class", "text"),
    ("confidence", "float"),
    ("heat_score", "float"),
    ("decay_score", "float"),
    ("superseded_by", "text"),
    ("box_id", "text"),
    ("metadata", "json"),
    ("version", "int"),
)
COLUMN_NAMES: Final = tuple(name for name, _ in COLUMNS)
COLUMN_KIND: Final = dict(COLUMNS)
EMBEDDING_INDEX: Final = COLUMN_NAMES.index("embedding")
PRECISION_INDEX: Final = COLUMN_NAMES.index("embedding_precision")
COPY_TYPES: Final = {
    "text": "text",
    "enum": "text",
    "json": "jsonb",
    "vector": "vector",
    "float": "float8",
    "int": "int8",
    "bool": "bool",
    "ts": "timestamptz",
}

SELECT_MEMORY: Final = sql.SQL("SELECT {} FROM memories").format(
    sql.SQL(", ").join(sql.Identifier(n) for n in (*COLUMN_NAMES, "embedding_codes"))
)

# ----------------------------------------------------------------------------------------
# value encoding and decoding
# ----------------------------------------------------------------------------------------


def utc(value: datetime | None) -> datetime | None:
    """Aware UTC (naive datetimes are taken to be UTC)."""
    if value is None:
        return None
    if not isinstance(value, datetime):
        raise InvalidInputError(f"expected a datetime, got {type(value).__name__}")
    if value.tzinfo is None:
        return value.replace(tzinfo=UTC)
    return value.astimezone(UTC)


def encode_value(name: str, kind: str, value: Any, dim: int) -> Any:
    if value is None:
        return None
    if kind == "enum":
        try:
            return ENUM_FIELDS[name](value).value
        except ValueError as exc:
            raise InvalidInputError(f"invalid {name}: {value!r}") from exc
    if kind == "json":
        return jsonb_param(value, name)
    if kind == "ts":
        return utc(value)
    if kind == "vector":
        return check_vector(value, dim)
    return value


def jsonb_param(value: Any, what: str) -> Jsonb:
    """JSON for a jsonb parameter, serialised (and checked) here rather than in the driver."""
    try:
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise InvalidInputError(f"{what} is not JSON-serialisable: {exc}") from exc
    except RecursionError:
        raise InvalidInputError(f"{what} is nested too deep") from None
    return Jsonb(text, dumps=_as_is)


def _as_is(text: str) -> str:
    return text


def cosine_from_distance(distance: float | None) -> float:
    """Cosine similarity from pgvector's distance, clipped to [-1, 1] (NaN for zero vectors: 0)."""
    if distance is None or math.isnan(distance):
        return 0.0
    return min(1.0, max(-1.0, 1.0 - float(distance)))


def encode_record(record: MemoryRecord, dim: int) -> list[Any]:
    return [encode_value(n, k, getattr(record, n), dim) for n, k in COLUMNS]


def decode_value(name: str, kind: str, value: Any) -> Any:
    if value is None:
        return None
    if kind == "enum":
        return ENUM_FIELDS[name](value)
    if kind == "ts":
        return value.astimezone(UTC)
    if kind == "vector":
        return np.array(value.to_numpy(), dtype=np.float32)
    if kind == "float":
        return float(value)
    return value


def decode_record(row: Sequence[Any]) -> MemoryRecord:
    """A record from a ``SELECT_MEMORY`` row; a quantised embedding comes back dequantised."""
    kwargs = {n: decode_value(n, k, v) for (n, k), v in zip(COLUMNS, row[: len(COLUMNS)], strict=True)}
    rec = MemoryRecord(**kwargs)
    if len(row) > len(COLUMNS) and row[-1] is not None:
        rec.embedding = vector_codec.decode(bytes(row[-1]))
    return rec


def partial_select(names: tuple[str, ...]) -> tuple[sql.Composed, Callable[[Sequence[Any]], MemoryRecord]]:
    """``SELECT`` and decoder of a scan reading only ``names`` (the other fields keep their defaults;
    reading the embedding reads the code blob of a quantised one too)."""
    columns = (*names, "embedding_codes") if "embedding" in names else names
    select = sql.SQL("SELECT {} FROM memories").format(sql.SQL(", ").join(sql.Identifier(n) for n in columns))
    kinds = [(n, COLUMN_KIND[n]) for n in names]

    def decode(row: Sequence[Any]) -> MemoryRecord:
        rec = MemoryRecord(**{n: decode_value(n, k, v) for (n, k), v in zip(kinds, row[: len(kinds)], strict=True)})
        if len(row) > len(kinds) and row[-1] is not None:
            rec.embedding = vector_codec.decode(bytes(row[-1]))
        return rec

    return select, decode


def unique_ids(items: Sequence[str]) -> list[str]:
    return list(dict.fromkeys(items))


def redact_url(url: str) -> str:
    try:
        params = psycopg.conninfo.conninfo_to_dict(url)
    except psycopg.Error:
        return "postgresql://<unparseable>"
    user = f"{params['user']}@" if params.get("user") else ""
    host = params.get("host") or "localhost"
    port = f":{params['port']}" if params.get("port") else ""
    return f"postgresql://{user}{host}{port}/{params.get('dbname', '')}"


# ----------------------------------------------------------------------------------------
# filters
# ----------------------------------------------------------------------------------------


def _time_conditions(flt: MemoryFilter, add: Callable[..., None]) -> None:
    """The bitemporal conditions: valid at an instant, recorded before or after one."""
    if flt.valid_at is not None:
        at = utc(flt.valid_at)
        add("({c} IS NULL OR {c} <= %s)", "valid_from", at)
        add("({c} IS NULL OR {c} > %s)", "valid_until", at)
    bounds: tuple[tuple[LiteralString, datetime | None], ...] = (
        ("{c} <= %s", flt.recorded_before),
        ("{c} >= %s", flt.recorded_after),
    )
    for template, bound in bounds:
        if bound is not None:
            add(template, "recorded_at", utc(bound))


def filter_sql(flt: MemoryFilter, alias: str = "") -> tuple[sql.Composed | sql.SQL, list[Any]]:
    """The WHERE condition (without ``WHERE``) and its parameters."""
    col = (lambda n: sql.Identifier(alias, n)) if alias else sql.Identifier
    parts: list[sql.Composable] = []
    params: list[Any] = []

    def add(template: LiteralString, name: str, *values: Any) -> None:
        parts.append(sql.SQL(template).format(c=col(name)))
        params.extend(values)

    if not flt.all_users:
        add("{c} = %s", "partition", flt.partition)
        if flt.user_id is None:
            add("{c} IS NULL", "user_id")
    for name in ("agent_id", "session_id"):
        if getattr(flt, name) is not None:
            add("{c} = %s", name, getattr(flt, name))
    any_of: tuple[tuple[LiteralString, str, frozenset[Any] | None], ...] = (
        ("{c} = ANY(%s)", "layer", flt.layers),
        ("{c} = ANY(%s)", "status", flt.statuses),
        ("{c} = ANY(%s)", "store", flt.stores),
        ("{c} = ANY(%s)", "category", flt.categories),
        ("{c} = ANY(%s)", "id", flt.ids),
        ("{c} ?| %s::text[]", "entities", flt.entities),  # jsonb array holds any of them (GIN index)
    )
    for template, name, values in any_of:
        if values is not None:
            add(template, name, sorted(str(v) for v in values))
    if flt.pinned is not None:
        add("{c} = %s", "pinned", flt.pinned)
    _time_conditions(flt, add)
    for key, value in (flt.metadata or {}).items():
        if value is not None and not isinstance(value, str | int | float | bool):
            raise InvalidInputError(f"metadata filter values must be JSON scalars; {key!r} is {type(value).__name__}")
        # jsonb equality: 1 == 1.0, true != 1, None matches an explicit null
        add("{c} -> %s = %s", "metadata", str(key), jsonb_param(value, "metadata filter"))
    if not parts:
        return sql.SQL("TRUE"), params
    return sql.SQL(" AND ").join(parts), params
