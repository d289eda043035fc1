"""How a memory record is stored in SQLite (values, the vector columns) and the filter every read uses."""

from __future__ import annotations

import builtins
import dataclasses
import json
import operator
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Final

import numpy as np

from reverie import vector_codec
from reverie.errors import InvalidInputError
from reverie.model import MemoryRecord, Precision
from reverie.store._common import (
    ENUM_FIELDS,
    StoredVector,
    check_vector,
    precision_value,
    safe_json_loads,
    stored_vector,
)
from reverie.store.base import MemoryFilter, ScoredId
from reverie.store.tables.dialect import dump_json
from reverie.store.vector_index import DELETE, UPSERT, Matrix, PendingOp, quantized_partition

# ----------------------------------------------------------------------------------------
# value encoding
# ----------------------------------------------------------------------------------------


def _field_kind(f: dataclasses.Field[Any]) -> str:
    kind_of_type = str(f.type)
    if f.name == "embedding":
        return "vector"
    if f.name in ENUM_FIELDS:
        return "enum"
    if "datetime" in kind_of_type:
        return "time"
    if kind_of_type.startswith(("list[", "dict[")):
        return "json"
    if kind_of_type == "bool":
        return "bool"
    return "plain"


FIELDS: Final[tuple[str, ...]] = tuple(f.name for f in dataclasses.fields(MemoryRecord))
#: the record's constructor parameters in order (every field is one)
_INIT_ORDER: Final[tuple[str, ...]] = tuple(f.name for f in dataclasses.fields(MemoryRecord) if f.init)
_KIND: Final[dict[str, str]] = {f.name: _field_kind(f) for f in dataclasses.fields(MemoryRecord)}
#: every record field, then the code blob of a quantised embedding (``decode_record`` reads both)
SELECT_COLUMNS: Final = ", ".join(f"m.{name}" for name in (*FIELDS, "embedding_codes"))


def to_epoch(value: datetime) -> float:
    """Epoch seconds of an aware datetime (naive ones are taken to be UTC)."""
    if not isinstance(value, datetime):
        raise InvalidInputError(f"expected a datetime, got {type(value).__name__}")
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    return value.timestamp()


def from_epoch(value: float) -> datetime:
    return datetime.fromtimestamp(value, UTC)


def _opt_from_epoch(value: float | None) -> datetime | None:
    return None if value is None else from_epoch(value)


def _opt_epoch(value: datetime | None) -> float | None:
    return None if value is None else to_epoch(value)


def _opt_datetime(value: float | None) -> datetime | None:
    return None if value is None else from_epoch(value)


def _encode_enum(name: str) -> Callable[[Any, int], Any]:
    enum = ENUM_FIELDS[name]

    def encode(value: Any, dim: int) -> Any:
        if type(value) is enum:
            return value.value
        try:
            return enum(value).value
        except ValueError as exc:
            raise InvalidInputError(f"invalid {name}: {value!r}") from exc

    return encode


def _encode_json(name: str) -> Callable[[Any, int], Any]:
    def encode(value: Any, dim: int) -> Any:
        if not value and isinstance(value, list | dict):
            return "[]" if isinstance(value, list) else "{}"
        return dump_json(value, name)

    return encode


def _encoder(name: str) -> Callable[[Any, int], Any]:
    kind = _KIND[name]
    if kind == "enum":
        return _encode_enum(name)
    if kind == "json":
        return _encode_json(name)
    simple: dict[str, Callable[[Any, int], Any]] = {
        "time": lambda value, dim: to_epoch(value),
        "bool": lambda value, dim: int(bool(value)),
        "vector": lambda value, dim: check_vector(value, dim).tobytes(),
        "plain": lambda value, dim: value,
    }
    return simple[kind]


_ENCODERS: Final[dict[str, Callable[[Any, int], Any]]] = {name: _encoder(name) for name in FIELDS}
_ENCODER_LIST: Final = tuple(_ENCODERS.items())


def encode_value(name: str, value: Any, dim: int) -> Any:
    return None if value is None else _ENCODERS[name](value, dim)


_ALL_VALUES: Final = operator.attrgetter(*FIELDS)
#: (position, encoder) of the fields whose stored form differs from the value (plain ones are copied)
_CONVERTED: Final = tuple((i, enc) for i, (name, enc) in enumerate(_ENCODER_LIST) if _KIND[name] != "plain")


def encode_record(record: MemoryRecord, dim: int) -> builtins.list[Any]:
    out: builtins.list[Any] = list(_ALL_VALUES(record))
    for i, encode in _CONVERTED:
        value = out[i]
        if value is not None:
            out[i] = encode(value, dim)
    return out


def _decode(name: str, value: Any) -> Any:
    if value is None:
        return None
    kind = _KIND[name]
    if kind == "enum":
        return ENUM_FIELDS[name](value)
    if kind == "time":
        return from_epoch(value)
    if kind == "json":
        return safe_json_loads(value)
    if kind == "bool":
        return bool(value)
    if kind == "vector":
        return np.frombuffer(value, dtype=np.float32).copy()
    return value


def decode_record(row: Sequence[Any]) -> MemoryRecord:
    """A record from a ``SELECT_COLUMNS`` row; a quantised embedding comes back dequantised."""
    return _FULL_DECODER(row)


def decode_records(rows: Sequence[Sequence[Any]]) -> builtins.list[MemoryRecord]:
    """:func:`decode_record` of many rows; their quantised embeddings are dequantised together, one pass per
    blob size (a search reads dozens of cold memories at once: one codec call each cost more than the rest of
    their decoding)."""
    count = len(FIELDS)
    records = [_FULL_DECODER(row[:count]) for row in rows]
    coded: dict[int, builtins.list[tuple[MemoryRecord, bytes]]] = {}
    for rec, row in zip(records, rows, strict=True):
        if len(row) > count and row[count] is not None:
            coded.setdefault(len(row[count]), []).append((rec, row[count]))
    for group in coded.values():
        try:
            vectors = list(vector_codec.dequantize([blob for _, blob in group]))
        except InvalidInputError:  # precisions or dimensions that happen to share a blob size: one at a time
            vectors = [vector_codec.decode(blob) for _, blob in group]
        for (rec, _), vector in zip(group, vectors, strict=True):
            rec.embedding = vector
    return records


def scan_columns(names: tuple[str, ...]) -> str:
    """``SELECT`` columns of a scan reading ``names`` (plus the code blob when the embedding is read)."""
    if names == FIELDS:
        return SELECT_COLUMNS
    extra = ("embedding_codes",) if "embedding" in names else ()
    return ", ".join(f"m.{name}" for name in (*names, *extra))


def _json_value(value: str) -> Any:
    return {} if value == "{}" else [] if value == "[]" else safe_json_loads(value)


def _converter(name: str) -> Callable[[Any], Any] | None:
    """The converter of a column's non-NULL values (None: the stored value is the field value)."""
    kind = _KIND[name]
    if kind == "enum":
        return ENUM_FIELDS[name]._value2member_map_.__getitem__  # a dict lookup, not Enum.__call__
    fast: dict[str, Callable[[Any], Any] | None] = {
        "plain": None,
        "time": from_epoch,
        "json": _json_value,
        "bool": bool,
    }
    if kind in fast:
        return fast[kind]
    return lambda value: _decode(name, value)


def partial_decoder(names: tuple[str, ...]) -> Callable[[Sequence[Any]], MemoryRecord]:
    """Decoder of rows read by :func:`scan_columns` (omitted fields keep their defaults)."""
    with_codes = "embedding" in names
    count = len(names)
    # only the columns that need converting are visited per row (a pass over 100k rows decodes
    # millions of values); the rest go straight from the row into the keyword arguments
    converters = tuple((name, conv) for name in names if (conv := _converter(name)) is not None)
    if names == _INIT_ORDER:  # every field, in the record's own order: passed by position (about twice as fast)
        at = tuple((i, conv) for i, name in enumerate(names) if (conv := _converter(name)) is not None)

        def decode_all(row: Sequence[Any]) -> MemoryRecord:
            values = list(row[:count])
            for i, conv in at:
                value = values[i]
                if value is not None:
                    values[i] = conv(value)
            rec = MemoryRecord(*values)
            if len(row) > count and row[count] is not None:
                rec.embedding = vector_codec.decode(row[count])  # the blob names its precision
            return rec

        return decode_all

    def decode(row: Sequence[Any]) -> MemoryRecord:
        kw = dict(zip(names, row, strict=False))  # the row may end with the code blob
        for name, conv in converters:
            value = kw[name]
            if value is not None:
                kw[name] = conv(value)
        rec = MemoryRecord(**kw)
        if with_codes and len(row) > count and row[count] is not None:
            rec.embedding = vector_codec.decode(row[count])  # the blob names its precision
        return rec

    return decode


_FULL_DECODER: Final = partial_decoder(FIELDS)


#: the partition name an erased user's vector changes are given (not a user id: it holds a NUL)
ERASED_PARTITION: Final = "\x00erased"


def partition_of(user_id: str | None) -> str:
    return user_id or ""


def ids_json(ids: Sequence[str] | frozenset[str] | builtins.list[int]) -> str:
    return json.dumps(list(dict.fromkeys(ids)))


def _unique(items: Sequence[str]) -> builtins.list[str]:
    return list(dict.fromkeys(items))


# ----------------------------------------------------------------------------------------
# filters: the one helper every read uses
# ----------------------------------------------------------------------------------------


def in_list(column: str, values: frozenset[Any], params: builtins.list[Any]) -> str:
    if not values:
        return "0"
    params.extend(str(v) for v in sorted(values, key=str))
    return f"{column} IN ({', '.join('?' * len(values))})"


def _metadata_condition(alias: str, key: str, value: Any, params: builtins.list[Any]) -> str:
    """Equality of one top-level metadata key with a JSON scalar (1 == 1.0, True != 1). Stored metadata SQLite
    cannot parse (nested deeper than its JSON limit) matches no key instead of failing the whole query."""
    probe = (
        f"EXISTS (SELECT 1 FROM json_each(CASE WHEN json_valid({alias}.metadata) THEN {alias}.metadata "
        "ELSE '{}' END) AS je WHERE je.key = ? AND "
    )
    params.append(str(key))
    if value is None:
        return probe + "je.type = 'null')"
    if isinstance(value, bool):
        return probe + ("je.type = 'true')" if value else "je.type = 'false')")
    if isinstance(value, int | float):
        params.append(value)
        return probe + "je.type IN ('integer', 'real') AND je.atom = ?)"
    if isinstance(value, str):
        params.append(value)
        return probe + "je.type = 'text' AND je.atom = ?)"
    raise InvalidInputError(f"metadata filter values must be JSON scalars; {key!r} is {type(value).__name__}")


def filter_sql(flt: MemoryFilter, alias: str = "m") -> tuple[str, builtins.list[Any]]:
    """The WHERE condition (without ``WHERE``) over ``memories AS alias`` and its parameters."""
    a = alias
    conds: builtins.list[str] = []
    params: builtins.list[Any] = []
    if not flt.all_users:
        conds.append(f'{a}."partition" = ?')
        params.append(flt.partition)
        if flt.user_id is None:
            conds.append(f"{a}.user_id IS NULL")
    for column, value in (("agent_id", flt.agent_id), ("session_id", flt.session_id)):
        if value is not None:
            conds.append(f"{a}.{column} = ?")
            params.append(value)
    for column, values in (
        ("layer", flt.layers),
        ("status", flt.statuses),
        ("store", flt.stores),
        ("category", flt.categories),
    ):
        if values is not None:
            conds.append(in_list(f"{a}.{column}", values, params))
    if flt.ids is not None:
        conds.append(f"{a}.id IN (SELECT value FROM json_each(?))")
        params.append(ids_json(sorted(flt.ids)))
    if flt.entities is not None:
        # driven by the entity index: the cost follows the number of memories naming the entities
        conds.append(
            f"{a}.rid IN (SELECT me.rid FROM memory_entities AS me WHERE me.entity IN (SELECT value FROM json_each(?)))"
        )
        params.append(ids_json(sorted(flt.entities)))
    if flt.pinned is not None:
        conds.append(f"{a}.pinned = ?")
        params.append(int(flt.pinned))
    if flt.valid_at is not None:
        at = to_epoch(flt.valid_at)
        conds.append(f"({a}.valid_from IS NULL OR {a}.valid_from <= ?)")
        conds.append(f"({a}.valid_until IS NULL OR {a}.valid_until > ?)")
        params.extend((at, at))
    if flt.recorded_before is not None:
        conds.append(f"{a}.recorded_at <= ?")
        params.append(to_epoch(flt.recorded_before))
    if flt.recorded_after is not None:
        conds.append(f"{a}.recorded_at >= ?")
        params.append(to_epoch(flt.recorded_after))
    for key, value in (flt.metadata or {}).items():
        conds.append(_metadata_condition(a, key, value, params))
    return (" AND ".join(conds) or "1"), params


EMBEDDING_INDEX: Final = FIELDS.index("embedding")


def clip_cosine(value: Any) -> float:
    """A similarity clipped to [-1, 1] (float32 rounding can overshoot by an ulp)."""
    return min(1.0, max(-1.0, float(value)))


def best_hits(hits: builtins.list[ScoredId], k: int) -> builtins.list[ScoredId]:
    """The ``k`` best hits of several searches, each id once, best first (ties by id)."""
    unique = {h.id: h for h in hits}
    return sorted(unique.values(), key=lambda h: (-h.score, h.id))[:k]


def _as_vector(blob: bytes | None) -> Matrix | None:
    return None if blob is None else np.frombuffer(blob, dtype=np.float32)


def quantised_codes(record: MemoryRecord, row: builtins.list[Any]) -> bytes | None:
    """The code blob of a record inserted at a quantised precision (its float column becomes NULL)."""
    precision = precision_value(record.embedding_precision)
    if row[EMBEDDING_INDEX] is None or precision is Precision.FLOAT32:
        return None
    stored = stored_vector(np.frombuffer(row[EMBEDDING_INDEX], dtype=np.float32), precision)
    row[EMBEDDING_INDEX] = None
    return stored.codes


def index_key(partition: str, blob: bytes | None, codes: bytes | None) -> tuple[str, bytes] | None:
    """The index partition of a row's vector and the stored bytes it comes from (None: not indexed).

    Quantised rows live in the user's quantised partition, never in the hot graph."""
    if codes is not None:
        return quantized_partition(partition), codes
    if blob is not None:
        return partition, blob
    return None


def index_vector(blob: bytes | None, codes: bytes | None) -> Matrix | None:
    """The vector the index keeps for a row: float32 as stored, or the codes' search vector."""
    if codes is not None:
        vector: Matrix = vector_codec.search_vectors([codes])[0]
        return vector
    return _as_vector(blob)


@dataclass(frozen=True, slots=True)
class StoredRow:
    """What an update needs to know about the stored row."""

    rid: int
    version: int
    partition: str
    content: str
    embedding: bytes | None
    codes: bytes | None = None
    precision: str = "float32"

    def stored(self) -> StoredVector:
        vector = None if self.embedding is None else np.frombuffer(self.embedding, dtype=np.float32)
        return StoredVector(vector, self.codes, precision_value(self.precision))


def vector_transition(
    memory_id: str, cur: StoredRow, partition: str, blob: bytes | None, codes: bytes | None
) -> builtins.list[PendingOp]:
    """The log entries for a row whose (partition, stored vector) went from ``cur`` to the new ones."""
    old = index_key(cur.partition, cur.embedding, cur.codes)
    new = index_key(partition, blob, codes)
    if old == new:
        return []
    ops: builtins.list[PendingOp] = []
    if old is not None and (new is None or new[0] != old[0]):
        ops.append(PendingOp(DELETE, cur.rid, old[0], None, memory_id))
    if new is not None:
        ops.append(PendingOp(UPSERT, cur.rid, new[0], index_vector(blob, codes), memory_id))
    return ops
