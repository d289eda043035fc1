"""The embedded SQLite backend of the :class:`~reverie.store.base.Store` contract.

One database file (WAL mode, owner-only permissions) holds every table; full text runs on
FTS5 (porter + unicode61) kept in sync by triggers in the same transaction; vectors are
float32 BLOBs searched through the in-process :class:`~reverie.store.vector_index.VectorIndex`
(exact for small partitions, HNSW above ``exact_search_max``), which follows a change log so
that several processes may share one file.

Conventions of this backend (the PostgreSQL backend matches them):

* datetimes are stored as REAL epoch seconds UTC and come back as aware UTC datetimes with
  microsecond precision (naive datetimes are taken to be UTC);
* ``list`` sorts NULLs as the smallest value and breaks ties by id in the same direction;
* ``scan`` walks ids in binary (byte) order;
* nested transactions are savepoints: an exception leaving an inner block undoes that block.
"""

from __future__ import annotations

import builtins
import contextlib
import dataclasses
import functools
import json
import operator
import os
import sqlite3
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final

import numpy as np

from reverie import vector_codec
from reverie.config.core import StorageSettings
from reverie.errors import ConflictError, InvalidInputError, MigrationError, NotFoundError, StoreError
from reverie.model import (
    Layer,
    MemoryRecord,
    Precision,
    Status,
    StoreTier,
    Vector,
)
from reverie.store._common import (
    ENUM_FIELDS,
    ID_PREFIX_UPPER,
    INDEXED_FIELDS,
    StoredVector,
    check_vector,
    field_changes,
    grouped_plain_changes,
    precision_changes,
    precision_value,
    reencode,
    resolve_embedding,
    safe_json_loads,
    scan_fields,
    stored_vector,
    unique_changes,
)
from reverie.store.base import (
    ORDERABLE_FIELDS,
    CompactReport,
    LayerStats,
    MemoryFilter,
    ScoredId,
    StoreInfo,
)
from reverie.store.tables import Columns, Dialect, Session, SqlTables, dump_json
from reverie.store.textquery import query_terms
from reverie.store.vector_index import (
    DELETE,
    QUANTIZED_SUFFIX,
    UPSERT,
    IndexParams,
    Matrix,
    PendingOp,
    Rids,
    VectorChange,
    VectorIndex,
    is_quantized_partition,
    quantized_partition,
)

#: a filter naming at most this many ids is searched exactly over those rows
_EXACT_IDS_MAX: Final = 2_000
#: SQLite page cache per connection (KiB). The operating system's page cache holds the file too:
#: 16 MiB against 64 MiB gave the same 100k load rate (7.3k, 6.7k vs 6.9k, 6.3k/s), text search p50 5.15 vs
#: 4.90 ms at 100k (A/B in one process), and 50 MB less resident in a serving process
_CACHE_KIB: Final = 16 * 1024
_TEXT_PROBE: Final = 8  # text search: matches ranked before the filter, per requested hit
#: text search: a filter whose scope (partition, statuses, stores) holds at most this many rows is applied
#: before the ranking. 100k memories, ~1,700 matches a query: 0.2 ms with no row in scope, 1.0 ms with
#: 3,000, 8.5 ms with 30,000, against 7–9 ms for the join and 2–4 ms for ranking the matches alone
_TEXT_FILTER_FIRST: Final = 5_000
#: vector search: a filter on the cold store whose scope (partition, statuses, stores) holds fewer rows than
#: this is scored exactly over those rows (2.6 µs a row) instead of through the user's index partition and the
#: filter (0.7 ms at 100k memories for a cold store that holds none of them)
_VECTOR_SCAN_FIRST: Final = 256
#: the full-text index's structure record (FTS5_STRUCTURE_ROWID): rewritten by every write to the index
_FTS_STRUCTURE_ID: Final = 10
#: full-text terms whose row counts are remembered at most (the memo is dropped and started again)
_TERM_DOCS_CACHED: Final = 4_096
_WAL_CHECKPOINT_PAGES: Final = 10_000

# ----------------------------------------------------------------------------------------
# schema and migrations
# ----------------------------------------------------------------------------------------

_M0001_CORE: Final[tuple[str, ...]] = (
    "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    """CREATE TABLE memories (
    rid INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    "partition" TEXT NOT NULL,
    content TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    user_id TEXT,
    agent_id TEXT,
    session_id TEXT,
    instance_id TEXT,
    layer TEXT NOT NULL,
    store TEXT NOT NULL,
    status TEXT NOT NULL,
    category TEXT NOT NULL,
    memory_kind TEXT NOT NULL,
    sub_tier TEXT,
    temporal_type TEXT NOT NULL,
    entities TEXT NOT NULL,
    embedding BLOB,
    embedding_precision TEXT NOT NULL,
    importance REAL NOT NULL,
    importance_channels TEXT NOT NULL,
    surprise REAL,
    utility REAL NOT NULL,
    utility_updated_at REAL,
    energy REAL NOT NULL,
    energy_updated_at REAL,
    stability REAL NOT NULL,
    difficulty REAL NOT NULL,
    storage_strength REAL NOT NULL,
    retrieval_strength REAL NOT NULL,
    reinforcement_count INTEGER NOT NULL,
    last_reinforced_at REAL,
    confirmations INTEGER NOT NULL,
    emotion_valence REAL NOT NULL,
    emotion_arousal REAL NOT NULL,
    emotion_label TEXT,
    flashbulb INTEGER NOT NULL,
    source TEXT NOT NULL,
    trust REAL NOT NULL,
    source_confidence REAL NOT NULL,
    write_source TEXT NOT NULL,
    data_source TEXT NOT NULL,
    inputs TEXT NOT NULL,
    valid_from REAL,
    valid_until REAL,
    recorded_at REAL NOT NULL,
    created_at REAL NOT NULL,
    updated_at REAL NOT NULL,
    access_count INTEGER NOT NULL,
    last_accessed_at REAL,
    pinned INTEGER NOT NULL,
    immutable INTEGER NOT NULL,
    core INTEGER NOT NULL,
    lifecycle_state TEXT NOT NULL,
    verification_state TEXT NOT NULL,
    policy_class TEXT NOT NULL,
    confidence REAL NOT NULL,
    heat_score REAL,
    decay_score REAL,
    superseded_by TEXT,
    box_id TEXT,
    metadata TEXT NOT NULL,
    version INTEGER NOT NULL
)""",
    'CREATE INDEX memories_scope ON memories ("partition", status, store)',
    'CREATE INDEX memories_created ON memories ("partition", created_at)',
    "CREATE INDEX memories_hash ON memories (content_hash)",
    "CREATE INDEX memories_session ON memories (session_id)",
    "CREATE VIRTUAL TABLE memories_fts USING fts5("
    "content, content='memories', content_rowid='rid', tokenize='porter unicode61')",
    "CREATE TRIGGER memories_fts_ai AFTER INSERT ON memories BEGIN "
    "INSERT INTO memories_fts (rowid, content) VALUES (new.rid, new.content); END",
    "CREATE TRIGGER memories_fts_ad AFTER DELETE ON memories BEGIN "
    "INSERT INTO memories_fts (memories_fts, rowid, content) VALUES ('delete', old.rid, old.content); END",
    "CREATE TRIGGER memories_fts_au AFTER UPDATE OF content ON memories BEGIN "
    "INSERT INTO memories_fts (memories_fts, rowid, content) VALUES ('delete', old.rid, old.content); "
    "INSERT INTO memories_fts (rowid, content) VALUES (new.rid, new.content); END",
    """CREATE TABLE vector_changes (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    rid INTEGER NOT NULL,
    memory_id TEXT NOT NULL,
    "partition" TEXT NOT NULL,
    op TEXT NOT NULL CHECK (op IN ('upsert', 'delete'))
)""",
    """CREATE TABLE relations (
    id TEXT PRIMARY KEY,
    src_id TEXT NOT NULL,
    dst_id TEXT NOT NULL,
    type TEXT NOT NULL,
    confidence REAL NOT NULL,
    weight REAL NOT NULL,
    created_at REAL NOT NULL,
    last_reinforced_at REAL,
    metadata TEXT NOT NULL,
    UNIQUE (src_id, dst_id, type)
)""",
    "CREATE INDEX relations_dst ON relations (dst_id)",
    """CREATE TABLE coactivations (
    a_id TEXT NOT NULL,
    b_id TEXT NOT NULL,
    weight INTEGER NOT NULL,
    first_at REAL NOT NULL,
    last_at REAL NOT NULL,
    PRIMARY KEY (a_id, b_id),
    CHECK (a_id < b_id)
)""",
    "CREATE INDEX coactivations_b ON coactivations (b_id)",
    """CREATE TABLE history (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    memory_id TEXT NOT NULL,
    event TEXT NOT NULL,
    at REAL NOT NULL,
    reason TEXT NOT NULL,
    actor TEXT NOT NULL,
    data TEXT NOT NULL
)""",
    "CREATE INDEX history_memory ON history (memory_id, at, id)",
    """CREATE TABLE access_log (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    memory_id TEXT NOT NULL,
    at REAL NOT NULL,
    kind TEXT NOT NULL,
    session_id TEXT
)""",
    "CREATE INDEX access_log_memory ON access_log (memory_id, at)",
    "CREATE INDEX access_log_at ON access_log (at)",
    """CREATE TABLE claims (
    memory_id TEXT PRIMARY KEY,
    owner TEXT NOT NULL,
    phase TEXT NOT NULL,
    claimed_at REAL NOT NULL,
    expires_at REAL NOT NULL
)""",
    "CREATE INDEX claims_owner ON claims (owner)",
    "CREATE TABLE state (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
)

_M0002_ENGINE_TABLES: Final[tuple[str, ...]] = (
    """CREATE TABLE clusters (
    id TEXT PRIMARY KEY,
    "partition" TEXT NOT NULL,
    kind TEXT NOT NULL,
    label TEXT,
    created_at REAL NOT NULL,
    updated_at REAL NOT NULL,
    metadata TEXT NOT NULL DEFAULT '{}'
)""",
    """CREATE TABLE cluster_members (
    cluster_id TEXT NOT NULL REFERENCES clusters (id) ON DELETE CASCADE,
    memory_id TEXT NOT NULL,
    weight REAL NOT NULL DEFAULT 1,
    PRIMARY KEY (cluster_id, memory_id)
)""",
    "CREATE INDEX cluster_members_memory ON cluster_members (memory_id)",
    """CREATE TABLE synaptic_tags (
    memory_id TEXT NOT NULL,
    session_id TEXT NOT NULL,
    tagged_at REAL NOT NULL,
    expires_at REAL NOT NULL,
    captured INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (memory_id, session_id)
)""",
    "CREATE INDEX synaptic_tags_session ON synaptic_tags (session_id)",
    """CREATE TABLE boxes (
    id TEXT PRIMARY KEY,
    "partition" TEXT NOT NULL,
    session_id TEXT,
    topic TEXT NOT NULL DEFAULT '[]',
    opened_at REAL NOT NULL,
    sealed_at REAL,
    trace_id TEXT,
    memory_count INTEGER NOT NULL DEFAULT 0
)""",
    'CREATE INDEX boxes_partition ON boxes ("partition", opened_at)',
    """CREATE TABLE working_memory (
    session_id TEXT NOT NULL,
    memory_id TEXT NOT NULL,
    importance REAL NOT NULL,
    access_count INTEGER NOT NULL DEFAULT 0,
    added_at REAL NOT NULL,
    last_accessed REAL NOT NULL,
    PRIMARY KEY (session_id, memory_id)
)""",
    "CREATE INDEX working_memory_memory ON working_memory (memory_id)",
    """CREATE TABLE dream_runs (
    id TEXT PRIMARY KEY,
    started_at REAL NOT NULL,
    finished_at REAL,
    owner TEXT NOT NULL,
    report TEXT NOT NULL DEFAULT '{}'
)""",
)

_M0003_WRITE_PATH: Final[tuple[str, ...]] = (
    "ALTER TABLE boxes ADD COLUMN user_id TEXT",
    "ALTER TABLE boxes ADD COLUMN last_at REAL",
    "UPDATE boxes SET last_at = opened_at WHERE last_at IS NULL",
    'CREATE INDEX boxes_open ON boxes ("partition", session_id, sealed_at)',
    "CREATE INDEX synaptic_tags_alive ON synaptic_tags (session_id, expires_at)",
)

#: quantised embeddings: a quantised memory keeps its code blob here and NULL in
#: ``embedding``; before this migration nothing was quantised, so every stored vector is float32
_M0004_QUANTIZED_EMBEDDINGS: Final[tuple[str, ...]] = (
    "ALTER TABLE memories ADD COLUMN embedding_codes BLOB",
    "UPDATE memories SET embedding_precision = 'float32' WHERE embedding_precision <> 'float32'",
    # store before status, so that the planner prefers it for a quantised-rows probe of the hot
    # store with or without a status condition (tests/store/test_quantize_migration.py checks)
    'CREATE INDEX memories_quantized ON memories ("partition", store, status) WHERE embedding_codes IS NOT NULL',
)

#: entity hub: an index of every memory's entity URIs, kept by triggers in the same
#: transaction as the row (MemoryFilter.entities reads it instead of parsing every row's JSON)
_ENTITY_ROWS: Final = "SELECT DISTINCT value, NEW.rid FROM json_each(NEW.entities) WHERE type = 'text'"
_M0005_ENTITY_INDEX: Final[tuple[str, ...]] = (
    "CREATE TABLE memory_entities (entity TEXT NOT NULL, rid INTEGER NOT NULL, PRIMARY KEY (entity, rid)) "
    "WITHOUT ROWID",
    "CREATE INDEX memory_entities_rid ON memory_entities (rid, entity)",
    "INSERT OR IGNORE INTO memory_entities (entity, rid) SELECT DISTINCT je.value, m.rid "
    "FROM memories AS m, json_each(m.entities) AS je WHERE je.type = 'text'",
    "CREATE TRIGGER memory_entities_ai AFTER INSERT ON memories BEGIN "
    f"INSERT OR IGNORE INTO memory_entities (entity, rid) {_ENTITY_ROWS}; END",
    "CREATE TRIGGER memory_entities_ad AFTER DELETE ON memories BEGIN "
    "DELETE FROM memory_entities WHERE rid = OLD.rid; END",
    "CREATE TRIGGER memory_entities_au AFTER UPDATE OF entities ON memories BEGIN "
    "DELETE FROM memory_entities WHERE rid = OLD.rid; "
    f"INSERT OR IGNORE INTO memory_entities (entity, rid) {_ENTITY_ROWS}; END",
)

#: API keys (reverie.auth): only the SHA-256 of each key is stored
_M0008_API_KEYS: Final[tuple[str, ...]] = (
    """CREATE TABLE api_keys (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    key_hash TEXT NOT NULL,
    admin INTEGER NOT NULL,
    user_ids TEXT NOT NULL,
    agent_ids TEXT,
    created_at REAL NOT NULL,
    revoked_at REAL,
    last_used_at REAL
)""",
)

#: Named migrations, applied in order, each in its own transaction, recorded in schema_migrations.
#: a user-scoped scan walks ("partition", id) in order: without this index every batch of a dream pass
#: over one user's 100k memories sorted the whole partition (measured: 0.25 s a batch, quadratic overall)
_M0006_SCAN_INDEX: Final[tuple[str, ...]] = ('CREATE INDEX memories_partition_id ON memories ("partition", id)',)

#: the write path reads the newest sealed boxes of a user on every seal: without this index it read
#: and sorted every sealed box of the partition (19% of a 4k-turn observe run, helper's profile)
_M0007_SEALED_BOXES: Final[tuple[str, ...]] = (
    'CREATE INDEX boxes_sealed ON boxes ("partition", sealed_at, id) WHERE sealed_at IS NOT NULL',
)

#: action telemetry (the memory-action policy): one row per write decision, no memory text
_M0009_MEMORY_ACTIONS: Final[tuple[str, ...]] = (
    """CREATE TABLE memory_actions (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    "partition" TEXT NOT NULL,
    agent_id TEXT,
    memory_id TEXT,
    at REAL NOT NULL,
    action TEXT NOT NULL,
    outcome TEXT NOT NULL,
    confidence REAL NOT NULL,
    lifecycle_state TEXT NOT NULL,
    importance REAL NOT NULL,
    source TEXT NOT NULL
)""",
    'CREATE INDEX memory_actions_partition_at ON memory_actions ("partition", at)',
    "CREATE INDEX memory_actions_at ON memory_actions (at)",
    "CREATE INDEX memory_actions_memory ON memory_actions (memory_id)",
)

MIGRATIONS: Final[tuple[tuple[str, tuple[str, ...]], ...]] = (
    ("0001_core", _M0001_CORE),
    ("0002_engine_tables", _M0002_ENGINE_TABLES),
    ("0003_write_path", _M0003_WRITE_PATH),
    ("0004_quantized_embeddings", _M0004_QUANTIZED_EMBEDDINGS),
    ("0005_entity_index", _M0005_ENTITY_INDEX),
    ("0006_scan_index", _M0006_SCAN_INDEX),
    ("0007_sealed_boxes", _M0007_SEALED_BOXES),
    ("0008_api_keys", _M0008_API_KEYS),
    ("0009_memory_actions", _M0009_MEMORY_ACTIONS),
)

#: tables whose rows about a memory go when the memory is hard-deleted (its history too: nothing of it remains)
_DEPENDENT_TABLES: Final = (
    "access_log",
    "claims",
    "synaptic_tags",
    "working_memory",
    "cluster_members",
    "history",
    "memory_actions",
)

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


_FIELDS: Final[tuple[str, ...]] = tuple(f.name for f in dataclasses.fields(MemoryRecord))
_KIND: Final[dict[str, str]] = {f.name: _field_kind(f) for f in dataclasses.fields(MemoryRecord)}
_WRITABLE: Final = frozenset(_FIELDS) - {"id", "version"}
#: every record field, then the code blob of a quantised embedding (``_decode_record`` reads both)
_SELECT_COLUMNS: Final = ", ".join(f"m.{name}" for name in (*_FIELDS, "embedding_codes"))


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


def to_json(value: Any, what: str) -> str:
    try:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise InvalidInputError(f"{what} is not JSON-serialisable: {exc}") from exc
    except RecursionError:
        raise InvalidInputError(f"{what} is nested too deep") from None


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
        return to_json(value, name)

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


_ENCODERS: Final[dict[str, Callable[[Any, int], Any]]] = {name: _encoder(name) for name in _FIELDS}
_ENCODER_LIST: Final = tuple(_ENCODERS.items())


def _encode(name: str, value: Any, dim: int) -> Any:
    return None if value is None else _ENCODERS[name](value, dim)


_ALL_VALUES: Final = operator.attrgetter(*_FIELDS)
#: (position, encoder) of the fields whose stored form differs from the value (plain ones are copied)
_CONVERTED: Final = tuple((i, enc) for i, (name, enc) in enumerate(_ENCODER_LIST) if _KIND[name] != "plain")


def _encode_record(record: MemoryRecord, dim: int) -> builtins.list[Any]:
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


def _decode_record(row: Sequence[Any]) -> MemoryRecord:
    """A record from a ``_SELECT_COLUMNS`` row; a quantised embedding comes back dequantised."""
    return _FULL_DECODER(row)


def _scan_columns(names: tuple[str, ...]) -> str:
    """``SELECT`` columns of a scan reading ``names`` (plus the code blob when the embedding is read)."""
    if names == _FIELDS:
        return _SELECT_COLUMNS
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


def _partial_decoder(names: tuple[str, ...]) -> Callable[[Sequence[Any]], MemoryRecord]:
    """Decoder of rows read by :func:`_scan_columns` (omitted fields keep their defaults)."""
    with_codes = "embedding" in names
    count = len(names)
    # only the columns that need converting are visited per row (a pass over 100k rows decodes
    # millions of values); the rest go straight from the row into the keyword arguments
    converters = tuple((name, conv) for name in names if (conv := _converter(name)) is not None)

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


_FULL_DECODER: Final = _partial_decoder(_FIELDS)


#: the partition name an erased user's vector changes are given (not a user id: it holds a NUL)
_ERASED_PARTITION: Final = "\x00erased"


def _partition(user_id: str | None) -> str:
    return user_id or ""


def _ids_json(ids: Sequence[str] | frozenset[str] | builtins.list[int]) -> str:
    return json.dumps(list(dict.fromkeys(ids)))


def _unique(items: Sequence[str]) -> builtins.list[str]:
    return list(dict.fromkeys(items))


# ----------------------------------------------------------------------------------------
# filters: the one helper every read uses
# ----------------------------------------------------------------------------------------


def _in_list(column: str, values: frozenset[Any], params: builtins.list[Any]) -> str:
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
            conds.append(_in_list(f"{a}.{column}", values, params))
    if flt.ids is not None:
        conds.append(f"{a}.id IN (SELECT value FROM json_each(?))")
        params.append(_ids_json(sorted(flt.ids)))
    if flt.entities is not None:
        # driven by the entity index: the cost follows the number of memories naming the entities
        conds.append(
            f"{a}.rid IN (SELECT me.rid FROM memory_entities AS me WHERE me.entity IN (SELECT value FROM json_each(?)))"
        )
        params.append(_ids_json(sorted(flt.entities)))
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
    for key, value in (flt.metadata or {}).items():
        conds.append(_metadata_condition(a, key, value, params))
    return (" AND ".join(conds) or "1"), params


def insert_rows(conn: sqlite3.Connection, head: str, rows: Sequence[Sequence[Any]], tail: str = "") -> None:
    """``head`` + multi-row ``VALUES`` for ``rows``: as few statements as the bound-parameter limit allows.

    One statement per row (executemany) pays SQLite's per-statement work for every row: the
    statement journal, and for ``memories`` the FTS5 savepoint, which flushes the pending terms
    to a new segment each time (bench/scale.py, 100k verbatim rows into one scope: 4.6k/s row
    by row, 7.8k/s in statements of a few hundred rows). The chunks are of equal size so that
    a batch size reuses the same few cached statements. Atomic like executemany: a failing
    row aborts its statement, and the caller's transaction rolls back the earlier ones."""
    if not rows:
        return
    width = len(rows[0])
    per = max(1, conn.getlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER) // width)
    chunks = -(-len(rows) // per)
    size = -(-len(rows) // chunks)
    one = "(" + ", ".join("?" * width) + ")"
    end = f" {tail}" if tail else ""
    for start in range(0, len(rows), size):
        part = rows[start : start + size]
        conn.execute(head + ", ".join([one] * len(part)) + end, [v for row in part for v in row])


class SQLiteDialect(Dialect):
    """Instants as epoch seconds, JSON as text, id lists as a JSON array read by ``json_each``."""

    same = "IS"
    greatest = "max"

    def ids(self, values: Sequence[str]) -> str:
        return _ids_json(values)

    def in_ids(self, column: str) -> str:
        return f"{column} IN (SELECT value FROM json_each(%s))"

    def ts(self, value: datetime) -> float:
        return to_epoch(value)

    def from_ts(self, value: Any) -> datetime:
        return from_epoch(value)

    def json(self, value: Any, what: str) -> str:
        return dump_json(value, what)

    def from_json(self, value: Any) -> Any:
        return safe_json_loads(value)


@functools.lru_cache(maxsize=512)
def _placeholders(query: str) -> str:
    return query.replace("%s", "?")


class _Session:
    """The shared tables' view of the connection (inside the store's read or write block)."""

    def __init__(self, conn: sqlite3.Connection, what: str) -> None:
        self._conn = conn
        self._what = what

    @contextlib.contextmanager
    def _constraints(self) -> Iterator[None]:
        try:
            yield
        except sqlite3.IntegrityError as exc:
            raise _integrity_error(exc, self._what) from exc

    def run(self, query: str, params: Sequence[Any] = ()) -> int:
        with self._constraints():
            return int(self._conn.execute(_placeholders(query), params).rowcount)

    def run_many(self, query: str, rows: Sequence[Sequence[Any]]) -> int:
        with self._constraints():
            return int(self._conn.executemany(_placeholders(query), rows).rowcount)

    def rows(self, query: str, params: Sequence[Any] = ()) -> builtins.list[tuple[Any, ...]]:
        return self._conn.execute(_placeholders(query), params).fetchall()

    def insert(self, table: str, columns: Columns, rows: Sequence[Sequence[Any]], tail: str = "") -> int:
        before = self._conn.total_changes
        head = f"INSERT INTO {table} ({', '.join(name for name, _ in columns)}) VALUES "
        with self._constraints():
            insert_rows(self._conn, head, rows, tail)
        return self._conn.total_changes - before

    def insert_ids(self, table: str, columns: Columns, rows: Sequence[Sequence[Any]]) -> builtins.list[int]:
        self.insert(table, columns, rows)  # in a write transaction (BEGIN IMMEDIATE): consecutive ids
        last = int(self._conn.execute("SELECT last_insert_rowid()").fetchone()[0])
        return builtins.list(range(last - len(rows) + 1, last + 1))


SQLITE: Final = SQLiteDialect()


# ----------------------------------------------------------------------------------------
# transactions
# ----------------------------------------------------------------------------------------


@dataclass
class _Tx:
    """The state of the open transaction of this connection."""

    depth: int = 0
    ops: builtins.list[builtins.list[PendingOp]] = field(default_factory=list)
    seq_before: int | None = None
    synced: bool = False  # the index caught up inside this transaction (it saw uncommitted rows)
    checkpoint: bool = False  # a hard delete: copy the WAL into the file and truncate it after the commit


@dataclass(frozen=True, slots=True)
class _Current:
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


# ----------------------------------------------------------------------------------------
# the store
# ----------------------------------------------------------------------------------------


class SQLiteStore(SqlTables):
    """The :class:`~reverie.store.base.Store` contract on one SQLite file."""

    backend = "sqlite"
    dialect = SQLITE

    def __init__(self, path: str | Path, *, settings: StorageSettings, dim: int) -> None:
        if dim < 1:
            raise InvalidInputError(f"dim must be positive, got {dim}")
        self.path = Path(path)
        self.settings = settings
        self.dim = dim
        self._lock = threading.RLock()
        self._tx = _Tx()
        self._closed = False
        #: rows per full-text term (counted up to ``storage.fts_common_docs``), valid for one state of the
        #: full-text index: the key is its structure record, which every flush of new terms rewrites
        self._term_docs_cache: dict[str, int] = {}
        self._term_docs_key: bytes | None = None
        self._conn = self._connect()
        try:
            self._schema_version = self._migrate()
            instance = self._check_meta()
        except BaseException:
            self._conn.close()
            raise
        params = IndexParams(
            dim=dim,
            exact_search_max=settings.exact_search_max,
            hnsw_m=settings.hnsw_m,
            hnsw_ef_construction=settings.hnsw_ef_construction,
            hnsw_ef_search=settings.hnsw_ef_search,
            rebuild_delta=settings.ann_rebuild_delta,
        )
        ann_dir = Path(f"{self.path}.ann")
        self._index = VectorIndex(params, _RowSource(self), ann_dir, instance)

    # -- opening -------------------------------------------------------------------------
    def _connect(self) -> sqlite3.Connection:
        with _errors(f"could not open the SQLite database {self.path}", OSError):
            self.path.parent.mkdir(parents=True, exist_ok=True)
            if not self.path.exists():
                os.close(os.open(self.path, os.O_CREAT | os.O_RDWR, 0o600))
            old_umask = os.umask(0o077)  # the -wal and -shm files: owner only
            try:
                conn = sqlite3.connect(
                    self.path,
                    timeout=self.settings.sqlite_busy_timeout_ms / 1000,
                    isolation_level=None,
                    check_same_thread=False,
                )
                try:
                    self._configure(conn)
                except BaseException:
                    conn.close()
                    raise
            finally:
                os.umask(old_umask)
        return conn

    def _configure(self, conn: sqlite3.Connection) -> None:
        conn.execute(f"PRAGMA busy_timeout = {int(self.settings.sqlite_busy_timeout_ms)}")
        mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
        if str(mode).lower() != "wal":
            raise StoreError(f"could not switch {self.path} to WAL mode (got {mode})")
        # storage.synchronous: NORMAL survives process crashes; FULL also fsyncs the WAL at every commit
        conn.execute(f"PRAGMA synchronous = {'FULL' if self.settings.synchronous == 'FULL' else 'NORMAL'}")
        # freed space is overwritten with zeros: the words of a forgotten (or edited) memory do not
        # linger in free pages of the file
        conn.execute("PRAGMA secure_delete = ON")
        conn.execute(f"PRAGMA cache_size = {-_CACHE_KIB}")
        conn.execute(f"PRAGMA wal_autocheckpoint = {_WAL_CHECKPOINT_PAGES}")  # fewer checkpoint stalls
        conn.execute("PRAGMA foreign_keys = ON")

    def _migrate(self) -> int:
        with self.transaction(), _errors("schema migration failed", wrap=MigrationError):
            self._conn.execute(
                "CREATE TABLE IF NOT EXISTS schema_migrations (name TEXT PRIMARY KEY, applied_at REAL NOT NULL)"
            )
            applied = {r[0] for r in self._conn.execute("SELECT name FROM schema_migrations")}
            known = [name for name, _ in MIGRATIONS]
            unknown = sorted(applied - set(known))
            if unknown:
                raise MigrationError(
                    f"{self.path} was written by a newer reverie (unknown migrations {unknown}); upgrade reverie"
                )
            for name, statements in MIGRATIONS:
                if name in applied:
                    continue
                for statement in statements:
                    self._conn.execute(statement)
                self._conn.execute(
                    "INSERT INTO schema_migrations (name, applied_at) VALUES (?, ?)", (name, time.time())
                )
        return len(MIGRATIONS)

    def _check_meta(self) -> str:
        """Record (first open) or check the embedding dimension; return the database instance id."""
        with self.transaction():
            meta = dict(self._conn.execute("SELECT key, value FROM meta").fetchall())
            if "dim" not in meta:
                meta = {"dim": str(self.dim), "created": str(time.time()), "instance": uuid.uuid4().hex}
                self._conn.executemany("INSERT INTO meta (key, value) VALUES (?, ?)", meta.items())
        if int(meta["dim"]) != self.dim:
            raise StoreError(
                f"{self.path} stores {meta['dim']}-dimensional embeddings but the embedder makes "
                f"{self.dim}-dimensional ones; use the embedder the memory was built with, or a new database"
            )
        return str(meta["instance"])

    # -- lifecycle -----------------------------------------------------------------------
    def close(self) -> None:
        with self._lock:
            if self._closed:
                return
            with contextlib.suppress(OSError, RuntimeError, sqlite3.Error):
                self._index.save_if_stale()
            self._closed = True
            with _errors("could not close the SQLite database"):
                self._conn.close()

    def __enter__(self) -> SQLiteStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def info(self) -> StoreInfo:
        with self._read("info"):
            memories = self._conn.execute("SELECT count(*) FROM memories").fetchone()[0]
            details: dict[str, Any] = {
                "dim": self.dim,
                "path": str(self.path),
                "sqlite_version": sqlite3.sqlite_version,
                "memories": int(memories),
                "exact_search_max": self.settings.exact_search_max,
                "vector_index": self._index.describe(),
            }
        return StoreInfo(self.backend, str(self.path), self._schema_version, details)

    @contextlib.contextmanager
    def transaction(self) -> Iterator[None]:
        """Re-entrant and thread-safe; inner blocks are savepoints of the outer transaction."""
        with self._lock:
            self._check_open()
            if self._tx.depth == 0:
                yield from self._outer_transaction()
            else:
                yield from self._savepoint()

    def _outer_transaction(self) -> Iterator[None]:
        with _errors("could not begin a transaction"):
            self._conn.execute("BEGIN IMMEDIATE")
        self._tx = _Tx(depth=1, ops=[[]])
        try:
            yield
        except BaseException:
            self._rollback()
            raise
        self._commit()

    def _savepoint(self) -> Iterator[None]:
        name = f"sp{self._tx.depth}"
        with _errors("could not open a savepoint"):
            self._conn.execute(f"SAVEPOINT {name}")
        self._tx.depth += 1
        self._tx.ops.append([])
        try:
            yield
        except BaseException:
            self._tx.depth -= 1
            self._tx.ops.pop()
            with _errors("could not roll back a savepoint"):
                self._conn.execute(f"ROLLBACK TO {name}")
                self._conn.execute(f"RELEASE {name}")
            if self._tx.synced:
                self._index.reset()
            raise
        self._tx.depth -= 1
        inner = self._tx.ops.pop()
        self._tx.ops[-1].extend(inner)
        with _errors("could not release a savepoint"):
            self._conn.execute(f"RELEASE {name}")

    def _commit(self) -> None:
        tx = self._tx
        ops = [op for level in tx.ops for op in level]
        try:
            with _errors("could not commit"):
                seq_after = self._max_seq() if ops else 0
                self._conn.execute("COMMIT")
        except BaseException:
            self._rollback()
            raise
        self._tx = _Tx()
        if ops and not tx.synced and tx.seq_before is not None:
            self._index.apply_committed(ops, tx.seq_before, seq_after)
        if tx.checkpoint:  # best effort: a reader in another process may keep older frames alive a while
            with contextlib.suppress(sqlite3.Error):
                self._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    def _rollback(self) -> None:
        synced = self._tx.synced
        self._tx = _Tx()
        with contextlib.suppress(sqlite3.Error):
            self._conn.execute("ROLLBACK")
        if synced:
            self._index.reset()

    @contextlib.contextmanager
    def _read(self, what: str) -> Iterator[None]:
        with self._lock, _errors(f"{what} failed"):
            self._check_open()
            yield

    @contextlib.contextmanager
    def _write(self, what: str) -> Iterator[None]:
        with self.transaction(), _errors(f"{what} failed"):
            yield

    def _check_open(self) -> None:
        if self._closed:
            raise StoreError(f"the SQLite store {self.path} is closed")

    def backup(self, dest: str | os.PathLike[str]) -> dict[str, Any]:
        from reverie.store.backup import backup_sqlite

        self._check_open()
        return backup_sqlite(self.path, Path(dest), busy_timeout_ms=int(self.settings.sqlite_busy_timeout_ms))

    def rebuild_indexes(self) -> None:
        with self._write("rebuilding the text index"):
            self._conn.execute("INSERT INTO memories_fts (memories_fts) VALUES ('rebuild')")
        with self._read("rebuilding the vector index"), _errors("rebuilding the vector index", RuntimeError):
            self._index.rebuild()

    # -- compaction -------------------------------------------------------------------------
    def _disk_bytes(self) -> int:
        """The database file, its write-ahead log and the vector index files, in bytes."""
        total = 0
        for path in (self.path, Path(f"{self.path}-wal")):
            with contextlib.suppress(OSError):
                total += path.stat().st_size
        ann = Path(f"{self.path}.ann")
        if ann.is_dir():
            for entry in ann.iterdir():
                with contextlib.suppress(OSError):
                    total += entry.stat().st_size
        return total

    def _index_entries(self) -> dict[str, int]:
        fts = int(self._conn.execute("SELECT count(*) FROM memories_fts_data").fetchone()[0])
        return {**self._index.entry_counts(), "fulltext_segment_rows": fts}

    def compact(self) -> CompactReport:
        started = time.perf_counter()
        with self._lock:
            self._check_open()
            if self._tx.depth:
                raise InvalidInputError("compact() cannot run inside a transaction")
            with _errors("compaction failed", RuntimeError, OSError):
                self._index.sync(None)  # every partition loaded: its entries are counted and rebuilt
                report = CompactReport(self.backend, self._disk_bytes(), 0, index_entries_before=self._index_entries())
                with self.transaction():
                    head = self._max_seq()
                    trimmed = self._conn.execute("DELETE FROM vector_changes WHERE seq < ?", (head,)).rowcount
                    self._conn.execute(
                        "INSERT INTO meta (key, value) VALUES ('vector_log_floor', ?) "
                        "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                        (str(head),),
                    )
                report.rows_removed["vector_changes"] = int(trimmed)
                report.actions.append(f"trimmed the vector change log to position {head}")
                with self.transaction():
                    self._conn.execute("INSERT INTO memories_fts (memories_fts) VALUES ('optimize')")
                report.actions.append("optimised the full-text index (segments merged)")
                self._index.rebuild()
                report.actions.append("rebuilt the vector index from the rows (deleted entries dropped)")
                self._conn.execute("VACUUM")
                report.actions.append("VACUUM")
                self._conn.execute("ANALYZE")
                report.actions.append("ANALYZE")
                self._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
                report.actions.append("WAL checkpoint (truncate)")
                report.index_entries_after = self._index_entries()
                report.bytes_after = self._disk_bytes()
        report.seconds = time.perf_counter() - started
        return report

    def duplicate_groups(self, flt: MemoryFilter) -> builtins.list[builtins.list[str]]:
        where, params = filter_sql(flt)
        query = (
            "SELECT json_group_array(json_array(m.created_at, m.id)) FROM memories m "
            f'WHERE {where} GROUP BY m."partition", m.agent_id, m.content_hash HAVING count(*) > 1'
        )
        with self._read("duplicate_groups"):
            groups = [[mid for _, mid in sorted(json.loads(r[0]))] for r in self._conn.execute(query, params)]
        return sorted(groups, key=lambda g: g[0])

    # -- vector change log ----------------------------------------------------------------
    def _max_seq(self) -> int:
        # a bare max() is answered from the end of the b-tree; coalesce() would scan the log
        top = self._conn.execute("SELECT max(seq) FROM vector_changes").fetchone()[0]
        return int(top or 0)

    def _log_vectors(self, ops: Sequence[PendingOp]) -> None:
        """Append vector changes to the log (inside the current write transaction)."""
        if not ops:
            return
        if self._tx.seq_before is None:
            self._tx.seq_before = self._max_seq()
        self._insert_rows(
            'INSERT INTO vector_changes (rid, memory_id, "partition", op) VALUES ',
            [(op.rid, op.memory_id, op.partition, op.op) for op in ops],
        )
        self._tx.ops[-1].extend(ops)

    # -- memories ------------------------------------------------------------------------
    def _next_rid(self) -> int:
        row = self._conn.execute("SELECT seq FROM sqlite_sequence WHERE name = 'memories'").fetchone()
        top = self._conn.execute("SELECT max(rid) FROM memories").fetchone()[0]
        return max(int(row[0]) if row else 0, int(top or 0)) + 1

    def _insert_rows(self, head: str, rows: Sequence[Sequence[Any]]) -> None:
        insert_rows(self._conn, head, rows)

    def insert(self, records: Sequence[MemoryRecord]) -> None:
        if not records:
            return
        rows = [_encode_record(r, self.dim) for r in records]
        codes = [_quantised_codes(r, row) for r, row in zip(records, rows, strict=True)]
        columns = ", ".join(("rid", '"partition"', *_FIELDS, "embedding_codes"))
        with self._write("insert"):
            first = self._next_rid()
            params = [
                (first + i, _partition(r.user_id), *row, code)
                for i, (r, row, code) in enumerate(zip(records, rows, codes, strict=True))
            ]
            try:
                self._insert_rows(f"INSERT INTO memories ({columns}) VALUES ", params)
            except sqlite3.IntegrityError as exc:
                raise _integrity_error(exc, "insert") from exc
            self._log_vectors(
                [
                    PendingOp(UPSERT, first + i, key[0], _index_vector(row[_EMBEDDING], code), r.id)
                    for i, (r, row, code) in enumerate(zip(records, rows, codes, strict=True))
                    if (key := _index_key(_partition(r.user_id), row[_EMBEDDING], code)) is not None
                ]
            )

    def get(self, ids: Sequence[str]) -> dict[str, MemoryRecord]:
        if not ids:
            return {}
        with self._read("get"):
            rows = self._conn.execute(
                f"SELECT {_SELECT_COLUMNS} FROM memories m WHERE m.id IN (SELECT value FROM json_each(?))",
                (_ids_json(ids),),
            ).fetchall()
        records = (_decode_record(row) for row in rows)
        return {r.id: r for r in records}

    def update(self, record: MemoryRecord, *, expected_version: int | None = None) -> int:
        values = {name: getattr(record, name) for name in _WRITABLE}
        return self._update(record.id, values, expected_version)

    def update_fields(
        self,
        memory_id: str,
        fields: Mapping[str, Any],
        *,
        expected_version: int | None = None,
    ) -> int:
        return self._update(memory_id, field_changes(fields, _WRITABLE), expected_version)

    def _current(self, memory_id: str) -> _Current:
        row = self._conn.execute(
            'SELECT rid, version, "partition", content, embedding, embedding_codes, embedding_precision '
            "FROM memories WHERE id = ?",
            (memory_id,),
        ).fetchone()
        if row is None:
            raise NotFoundError(f"no memory with id {memory_id!r}")
        return _Current(int(row[0]), int(row[1]), row[2], row[3], row[4], row[5], row[6])

    def _update(self, memory_id: str, fields: Mapping[str, Any], expected_version: int | None) -> int:
        encoded = {name: _encode(name, value, self.dim) for name, value in fields.items()}
        if not INDEXED_FIELDS & encoded.keys():
            return self._update_plain(memory_id, encoded, expected_version)
        with self._write("update"):
            cur = self._current(memory_id)
            if expected_version is not None and cur.version != expected_version:
                raise ConflictError(
                    f"memory {memory_id!r} is at version {cur.version}, not the expected {expected_version}"
                )
            if encoded.get("content") == cur.content:
                del encoded["content"]  # unchanged text: leave the FTS index alone
            resolved = resolve_embedding(fields, cur.stored(), self.dim)
            if resolved is not None:  # the embedding is stored at its precision
                encoded["embedding"] = None if resolved.vector is None else resolved.vector.tobytes()
                encoded["embedding_codes"] = resolved.codes
                encoded["embedding_precision"] = resolved.precision.value
            new_partition = _partition(encoded["user_id"]) if "user_id" in encoded else cur.partition
            encoded["partition"] = new_partition
            encoded["version"] = cur.version + 1
            assigns = ", ".join(f'"{name}" = ?' for name in encoded)
            try:
                self._conn.execute(f"UPDATE memories SET {assigns} WHERE rid = ?", (*encoded.values(), cur.rid))
            except sqlite3.IntegrityError as exc:
                raise _integrity_error(exc, "update") from exc
            new_blob = encoded.get("embedding", cur.embedding)
            new_codes = encoded.get("embedding_codes", cur.codes)
            self._log_vectors(_vector_transition(memory_id, cur, new_partition, new_blob, new_codes))
        return cur.version + 1

    def _update_plain(self, memory_id: str, encoded: dict[str, Any], expected_version: int | None) -> int:
        """An update that touches neither the text, the vector nor the partition (access counters,
        strengths, flags): one statement, no read of the row first."""
        assigns = ", ".join(f'"{name}" = ?' for name in encoded)
        params: builtins.list[Any] = [*encoded.values(), memory_id]
        check = ""
        if expected_version is not None:
            check = " AND version = ?"
            params.append(expected_version)
        with self._write("update"):
            row = self._conn.execute(
                f"UPDATE memories SET {assigns}, version = version + 1 WHERE id = ?{check} RETURNING version",
                params,
            ).fetchone()
            if row is not None:
                return int(row[0])
            cur = self._current(memory_id)  # raises NotFoundError for an unknown id
        raise ConflictError(f"memory {memory_id!r} is at version {cur.version}, not the expected {expected_version}")

    def update_many(self, changes: Sequence[tuple[str, Mapping[str, Any]]]) -> None:
        groups = grouped_plain_changes(changes, _WRITABLE)
        with self._write("update_many"):
            for names, rows in groups.items():
                assigns = ", ".join(f'"{name}" = ?' for name in names)
                self._conn.executemany(
                    f"UPDATE memories SET {assigns}, version = version + 1 WHERE id = ?",
                    [[*(_encode(n, fields[n], self.dim) for n in names), mid] for mid, fields in rows],
                )

    def update_fields_many(self, changes: Sequence[tuple[str, Mapping[str, Any], int | None]]) -> builtins.list[str]:
        groups, versions = unique_changes(changes, _WRITABLE)
        wanted = [mid for rows in groups.values() for mid, _ in rows]
        if not wanted:
            return []
        with self._write("update_fields_many"):  # BEGIN IMMEDIATE: no writer between the check and the write
            current = dict(
                self._conn.execute(
                    "SELECT id, version FROM memories WHERE id IN (SELECT value FROM json_each(?))",
                    (_ids_json(wanted),),
                ).fetchall()
            )
            ok = {mid for mid in wanted if mid in current and versions[mid] in (None, current[mid])}
            for names, rows in groups.items():
                assigns = ", ".join(f'"{name}" = ?' for name in names)
                params = [[*(_encode(n, fields[n], self.dim) for n in names), mid] for mid, fields in rows if mid in ok]
                if params:
                    self._conn.executemany(f"UPDATE memories SET {assigns}, version = version + 1 WHERE id = ?", params)
        return [mid for mid in versions if mid in ok]

    def set_embedding_precision(self, changes: Sequence[tuple[str, Precision, int | None]]) -> builtins.list[str]:
        targets, versions = precision_changes(changes)
        if not targets:
            return []
        with self._write("set_embedding_precision"):  # BEGIN IMMEDIATE: no writer between the check and the write
            rows = self._conn.execute(
                'SELECT id, rid, version, "partition", content, embedding, embedding_codes, embedding_precision '
                "FROM memories WHERE id IN (SELECT value FROM json_each(?))",
                (_ids_json(list(targets)),),
            ).fetchall()
            current = {
                r[0]: _Current(int(r[1]), int(r[2]), r[3], r[4], r[5], r[6], r[7])
                for r in rows
                if versions[r[0]] in (None, int(r[2]))
            }
            new = reencode({mid: cur.stored() for mid, cur in current.items()}, targets, self.dim)
            self._conn.executemany(
                "UPDATE memories SET embedding = ?, embedding_codes = ?, embedding_precision = ?, "
                "version = version + 1 WHERE rid = ?",
                [
                    (None if sv.vector is None else sv.vector.tobytes(), sv.codes, sv.precision.value, current[mid].rid)
                    for mid, sv in new.items()
                ],
            )
            coded = [mid for mid, sv in new.items() if sv.codes is not None]
            search = dict(
                zip(coded, vector_codec.search_rows([new[m].codes or b"" for m in coded], self.dim), strict=True)
            )
            ops: builtins.list[PendingOp] = []
            for mid, sv in new.items():
                cur = current[mid]
                blob = None if sv.vector is None else sv.vector.tobytes()
                old_key = _index_key(cur.partition, cur.embedding, cur.codes)
                new_key = _index_key(cur.partition, blob, sv.codes)
                if old_key is not None and new_key is not None and old_key[0] != new_key[0]:
                    ops.append(PendingOp(DELETE, cur.rid, old_key[0], None, mid))
                if new_key is not None:
                    ops.append(PendingOp(UPSERT, cur.rid, new_key[0], search.get(mid, sv.vector), mid))
            self._log_vectors(ops)
        return [mid for mid in targets if mid in new]

    def delete(self, ids: Sequence[str]) -> int:
        if not ids:
            return 0
        payload = _ids_json(ids)
        with self._write("delete"):
            gone = self._conn.execute(
                'SELECT rid, id, "partition", embedding IS NOT NULL, embedding_codes IS NOT NULL FROM memories '
                "WHERE id IN (SELECT value FROM json_each(?))",
                (payload,),
            ).fetchall()
            for table in _DEPENDENT_TABLES:
                self._conn.execute(
                    f"DELETE FROM {table} WHERE memory_id IN (SELECT value FROM json_each(?))", (payload,)
                )
            self._conn.execute(
                "DELETE FROM relations WHERE src_id IN (SELECT value FROM json_each(?1)) "
                "OR dst_id IN (SELECT value FROM json_each(?1))",
                (payload,),
            )
            self._conn.execute(
                "DELETE FROM coactivations WHERE a_id IN (SELECT value FROM json_each(?1)) "
                "OR b_id IN (SELECT value FROM json_each(?1))",
                (payload,),
            )
            self._conn.execute("DELETE FROM memories WHERE id IN (SELECT value FROM json_each(?))", (payload,))
            if gone:
                # the text index keeps a deleted row's words in its old segments until they are merged:
                # merge them all now, so that a forgotten memory's words are not in the file any more
                self._conn.execute("INSERT INTO memories_fts (memories_fts) VALUES ('optimize')")
                self._tx.checkpoint = True  # and, once committed, no copy stays in the write-ahead log
            self._log_vectors(
                [
                    PendingOp(DELETE, int(r[0]), r[2] if r[3] else quantized_partition(r[2]), None, r[1])
                    for r in gone
                    if r[3] or r[4]
                ]
            )
        return len(gone)

    def list(
        self,
        flt: MemoryFilter,
        *,
        limit: int = 100,
        offset: int = 0,
        order_by: str = "created_at",
        descending: bool = True,
    ) -> builtins.list[MemoryRecord]:
        if order_by not in ORDERABLE_FIELDS:
            raise InvalidInputError(f"cannot order by {order_by!r}; choose one of {sorted(ORDERABLE_FIELDS)}")
        if limit < 0 or offset < 0:
            raise InvalidInputError("limit and offset must not be negative")
        where, params = filter_sql(flt)
        direction = "DESC" if descending else "ASC"  # NULLs are the smallest value in SQLite
        query = (
            f"SELECT {_SELECT_COLUMNS} FROM memories m WHERE {where} "
            f"ORDER BY m.{order_by} {direction}, m.id {direction} LIMIT ? OFFSET ?"
        )
        with self._read("list"):
            rows = self._conn.execute(query, (*params, limit, offset)).fetchall()
        return [_decode_record(row) for row in rows]

    def scan(
        self, flt: MemoryFilter, *, batch_size: int = 1000, omit: frozenset[str] = frozenset(), after: str = ""
    ) -> Iterator[builtins.list[MemoryRecord]]:
        if batch_size < 1:
            raise InvalidInputError("batch_size must be positive")
        names = scan_fields(omit, _FIELDS)
        decode = _partial_decoder(names)
        where, params = filter_sql(flt)
        query = f"SELECT {_scan_columns(names)} FROM memories m WHERE {where} AND m.id > ? ORDER BY m.id LIMIT ?"
        while True:
            with self._read("scan"):
                rows = self._conn.execute(query, (*params, after, batch_size)).fetchall()
            batch = [decode(row) for row in rows]
            if not batch:
                return
            yield batch
            if len(batch) < batch_size:
                return
            after = batch[-1].id

    def count(self, flt: MemoryFilter) -> int:
        where, params = filter_sql(flt)
        with self._read("count"):
            return int(self._conn.execute(f"SELECT count(*) FROM memories m WHERE {where}", params).fetchone()[0])

    def ids_with_prefix(self, prefix: str, *, limit: int = 10) -> builtins.list[str]:
        if not prefix or limit < 1:
            return []
        # a range on the primary key (binary collation), not LIKE: uses the index and has no wildcards
        with self._read("ids_with_prefix"):
            rows = self._conn.execute(
                "SELECT id FROM memories WHERE id >= ? AND id < ? ORDER BY id LIMIT ?",
                (prefix, prefix + ID_PREFIX_UPPER, limit),
            ).fetchall()
        return [str(r[0]) for r in rows]

    def users(self, *, limit: int = 50) -> builtins.list[tuple[str | None, int]]:
        query = (
            'SELECT "partition", count(*) AS n FROM memories GROUP BY "partition" ORDER BY n DESC, "partition" LIMIT ?'
        )
        with self._read("users"):
            rows = self._conn.execute(query, (max(limit, 0),)).fetchall()
        return [(str(r[0]) or None, int(r[1])) for r in rows]

    def versions(self, ids: Sequence[str]) -> dict[str, int]:
        if not ids:
            return {}
        with self._read("versions"):
            return dict(
                self._conn.execute(
                    "SELECT id, version FROM memories WHERE id IN (SELECT value FROM json_each(?))", (_ids_json(ids),)
                ).fetchall()
            )

    def entity_counts(self, flt: MemoryFilter) -> dict[tuple[str | None, str], int]:
        where, params = filter_sql(flt)
        query = (  # memory_entities holds each (entity, memory) once
            "SELECT m.user_id, e.entity, count(*) FROM memory_entities e JOIN memories m ON m.rid = e.rid "
            f"WHERE {where} GROUP BY m.user_id, e.entity"
        )
        with self._read("entity_counts"):
            return {(user, entity): int(n) for user, entity, n in self._conn.execute(query, params)}

    def stats(self, flt: MemoryFilter) -> builtins.list[LayerStats]:
        where, params = filter_sql(flt)
        query = (
            "SELECT m.layer, m.status, count(*), avg(m.energy), min(m.energy), max(m.energy) "
            f"FROM memories m WHERE {where} GROUP BY m.layer, m.status ORDER BY m.layer, m.status"
        )
        with self._read("stats"):
            rows = self._conn.execute(query, params).fetchall()
        return [LayerStats(Layer(r[0]), Status(r[1]), int(r[2]), float(r[3]), float(r[4]), float(r[5])) for r in rows]

    def find_by_hash(self, flt: MemoryFilter, content_hash: str) -> MemoryRecord | None:
        where, params = filter_sql(flt)
        # without INDEXED BY the planner (no ANALYZE statistics) took memories_created for its
        # ORDER BY and walked the whole partition: 40 ms a probe at 30k rows, once per item of the
        # write path's dedup; a hash names a handful of rows, so the hash index always wins (0.04 ms)
        query = (
            f"SELECT {_SELECT_COLUMNS} FROM memories m INDEXED BY memories_hash WHERE m.content_hash = ? AND {where} "
            "ORDER BY m.created_at DESC, m.id DESC LIMIT 1"
        )
        with self._read("find_by_hash"):
            row = self._conn.execute(query, (content_hash, *params)).fetchone()
        return _decode_record(row) if row else None

    # -- search ----------------------------------------------------------------------------
    def vector_search(self, vector: Vector, flt: MemoryFilter, k: int) -> builtins.list[ScoredId]:
        query = check_vector(vector, self.dim)
        if k <= 0:
            return []
        where, params = filter_sql(flt)
        with self._read("vector search"), _errors("vector search failed", RuntimeError, OSError):
            if flt.ids is not None and len(flt.ids) <= _EXACT_IDS_MAX:
                return self._scan_search(query, where, params, k)
            if (
                flt.ids is None
                and flt.stores is not None
                and StoreTier.HOT not in flt.stores
                and self._narrow_scope(flt, _VECTOR_SCAN_FIRST)
            ):
                # a small cold store is scored exactly: the index partitions are per user, so the index
                # would walk the user's hot memories only for the filter to drop them
                return self._scan_search(query, where, params, k, scoped=True)
            # quantised memories have index partitions of their own, searched when the
            # filter reaches the cold store (the only store the dream cycle quantises)
            cold = flt.stores is None or StoreTier.COLD in flt.stores
            names = None if flt.all_users else [flt.partition, *([quantized_partition(flt.partition)] if cold else [])]
            self._index.sync(names)
            if self._tx.depth:
                self._tx.synced = True
            searched = names or [n for n in self._index.loaded_partitions() if cold or not is_quantized_partition(n)]
            scoped = flt.ids is None and not flt.all_users
            hits = self._index_search(query, searched, where, params, k, scoped=scoped)
            if cold:
                return hits
            # a quantised memory moved back to hot without re-embedding stays findable (exactly)
            return _best(hits + self._scan_search(query, where, params, k, quantised_only=True), k)

    def _index_search(
        self, query: Vector, names: Sequence[str], where: str, params: Sequence[Any], k: int, *, scoped: bool
    ) -> builtins.list[ScoredId]:
        """Over-fetch from the index, keep what passes the filter, widen until k pass."""
        fetch = max(2 * k, k + 16)
        while True:
            rids, scores, exhausted = self._index.search(names, query, fetch)
            hits = self._passing(rids, scores, where, params)
            if len(hits) >= k or exhausted:
                return hits[:k]
            # widen by the observed pass rate; a filter too selective for that is cheaper to scan
            rate = len(hits) / max(len(rids), 1)
            need = int(1.5 * k / rate) + 1 if rate > 0 else VectorIndex.max_fetch() + 1
            if need > VectorIndex.max_fetch():
                return self._scan_search(query, where, params, k, scoped=scoped)
            fetch = max(need, 2 * fetch)

    def _passing(self, rids: Rids, scores: Any, where: str, params: Sequence[Any]) -> builtins.list[ScoredId]:
        if len(rids) == 0:
            return []
        listed = rids.tolist()  # Python ints and floats: the loop below is per hit
        rows = self._conn.execute(  # NOT INDEXED: by rowid, not through the scope index with a rowid probe
            f"SELECT m.rid, m.id FROM memories m NOT INDEXED WHERE m.rid IN (SELECT value FROM json_each(?)) "
            f"AND {where}",
            (json.dumps(listed), *params),
        ).fetchall()
        ids = dict(rows)
        hits = [
            ScoredId(ids[rid], min(1.0, max(-1.0, s)))  # clipped as _cosine clips
            for rid, s in zip(listed, np.asarray(scores, dtype=np.float64).tolist(), strict=True)
            if rid in ids
        ]
        hits.sort(key=lambda h: (-h.score, h.id))
        return hits

    def _scan_search(
        self,
        query: Vector,
        where: str,
        params: Sequence[Any],
        k: int,
        *,
        quantised_only: bool = False,
        scoped: bool = False,
    ) -> builtins.list[ScoredId]:
        """Exact search over every row passing the filter (small id sets, selective filters);
        quantised rows are scored with the mixed-precision similarity.

        The index is named where the filter is a user's status/store scope: with ANALYZE statistics
        (``compact``) the planner took the partition's id index for a selective scope (the cold store of
        a user whose memories are nearly all hot) and read every row of the partition — a search at 30k
        took 3x as long."""
        if quantised_only:  # answered from the partial index memories_quantized: a probe, not a scan
            cond, source = "m.embedding_codes IS NOT NULL", "memories m INDEXED BY memories_quantized"
        else:
            cond = "(m.embedding IS NOT NULL OR m.embedding_codes IS NOT NULL)"
            source = "memories m INDEXED BY memories_scope" if scoped else "memories m"
        query_sql = f"SELECT m.id, m.embedding, m.embedding_codes FROM {source} WHERE {cond} AND {where}"
        try:
            rows = self._conn.execute(query_sql, params).fetchall()
        except sqlite3.OperationalError as exc:  # a filter that matches nothing by itself (an empty set)
            if "no query solution" not in str(exc):
                raise
            rows = self._conn.execute(query_sql.replace(source, "memories m", 1), params).fetchall()
        if not rows:
            return []
        qn = float(np.linalg.norm(query)) or 1.0
        scores = np.empty(len(rows), dtype=np.float32)
        plain = [i for i, r in enumerate(rows) if r[1] is not None]
        coded = [i for i, r in enumerate(rows) if r[1] is None]
        if plain:
            matrix = np.frombuffer(b"".join(rows[i][1] for i in plain), dtype=np.float32).reshape(len(plain), self.dim)
            norms = np.linalg.norm(matrix, axis=1)
            norms[norms == 0] = 1.0
            scores[plain] = np.einsum("ij,j->i", matrix, query) / norms / qn  # one thread: no BLAS contention
        if coded:
            matrix = vector_codec.search_rows([rows[i][2] for i in coded], self.dim)
            scores[coded] = np.einsum("ij,j->i", matrix, query) / qn
        hits = [ScoredId(r[0], _cosine(s)) for r, s in zip(rows, scores, strict=True)]
        hits.sort(key=lambda h: (-h.score, h.id))
        return hits[:k]

    def text_search(self, query: str, flt: MemoryFilter, k: int) -> builtins.list[ScoredId]:
        terms = query_terms(query)
        if not terms or k <= 0:
            return []
        with self._read("text search terms"):
            match = self._selective_match(terms)
        where, params = filter_sql(flt)
        with self._read("text search"):
            if self._narrow_scope(flt, _TEXT_FILTER_FIRST):
                return self._filtered_then_ranked(match, flt, k)
            hits = self._ranked_then_filtered(match, where, params, k)
            if hits is not None:
                return hits
            stmt = (
                "SELECT m.id, -bm25(memories_fts) AS score FROM memories_fts "
                "JOIN memories m ON m.rid = memories_fts.rowid "
                f"WHERE memories_fts MATCH ? AND {where} ORDER BY score DESC, m.id LIMIT ?"
            )
            rows = self._conn.execute(stmt, (match, *params, k)).fetchall()
        return [ScoredId(r[0], float(r[1])) for r in rows]

    def _ranked_then_filtered(
        self, match: str, where: str, params: builtins.list[Any], k: int
    ) -> builtins.list[ScoredId] | None:
        """The text search ranked in the FTS index alone, then filtered; None when that cannot be
        proven to equal the filtered ranking (the caller then joins every match to its row).

        Joining each matching row to ``memories`` to test the filter costs more than the BM25
        ranking itself (100k rows, ~3,000 matches: 5.9 ms against 2.0 ms). So the best
        ``_TEXT_PROBE × k`` matches are ranked without the filter, and their rows are looked up
        best first, 2k at a time, until k pass and every ranked row scoring at least as well as
        the k-th passing one was looked up (ties included). The result is exact when every match
        was ranked, or when the worst ranked match scores below that k-th one: nothing left out
        can then reach the top k.
        """
        probe = _TEXT_PROBE * k
        ranked = [
            (int(r[0]), float(r[1]))
            for r in self._conn.execute(
                "SELECT rowid, -bm25(memories_fts) AS score FROM memories_fts WHERE memories_fts MATCH ? "
                "ORDER BY score DESC LIMIT ?",
                (match, probe),
            )
        ]
        every_match = len(ranked) < probe
        score_of = dict(ranked)
        hits: builtins.list[ScoredId] = []
        checked = 0
        while checked < len(ranked):
            chunk = [rid for rid, _ in ranked[checked : checked + 2 * k]]
            checked += len(chunk)
            hits.extend(
                ScoredId(r[1], score_of[int(r[0])])
                for r in self._conn.execute(
                    f"SELECT m.rid, m.id FROM memories m NOT INDEXED WHERE m.rid IN (SELECT value FROM json_each(?)) "
                    f"AND {where}",  # NOT INDEXED: by rowid, not through a scope index (0.6–0.9 -> 0.4 ms)
                    (_ids_json(chunk), *params),
                )
            )
            if len(hits) < k:
                continue
            hits.sort(key=lambda h: (-h.score, h.id))
            kth = hits[k - 1].score
            if checked < len(ranked) and ranked[checked][1] >= kth:
                continue  # unchecked rows could still tie with or beat the k-th hit
            return hits[:k] if every_match or ranked[-1][1] < kth else None
        hits.sort(key=lambda h: (-h.score, h.id))
        return hits[:k] if every_match else None

    def _narrow_scope(self, flt: MemoryFilter, cap: int) -> bool:
        """Whether the rows of ``flt``'s partition in its statuses and stores — what the scope index
        finds without reading a row — number fewer than ``cap`` (counted up to ``cap``, in the index)."""
        if flt.all_users:
            return False
        params: builtins.list[Any] = [flt.partition]
        conds = ['m."partition" = ?']
        for column, values in (("status", flt.statuses), ("store", flt.stores)):
            if values is not None:
                conds.append(_in_list(f"m.{column}", values, params))
        row = self._conn.execute(
            f"SELECT count(*) FROM (SELECT 1 FROM memories m WHERE {' AND '.join(conds)} LIMIT ?)",
            (*params, cap),
        ).fetchone()
        return int(row[0]) < cap

    def _filtered_then_ranked(self, match: str, flt: MemoryFilter, k: int) -> builtins.list[ScoredId]:
        """The text search over a scope of few rows (:meth:`_narrow_scope`): the rows passing the filter
        are listed once, and only the matches among them are scored (``+rowid``: the list is checked
        per match, not searched once per listed row, which would re-run the match for each)."""
        where, params = filter_sql(flt, alias="s")
        rows = self._conn.execute(
            "SELECT m.id, -bm25(memories_fts) AS score FROM memories_fts JOIN memories m ON m.rid = memories_fts.rowid "
            f"WHERE memories_fts MATCH ? AND +memories_fts.rowid IN (SELECT s.rid FROM memories s WHERE {where}) "
            "ORDER BY score DESC, m.id LIMIT ?",
            (match, *params, k),
        ).fetchall()
        return [ScoredId(r[0], float(r[1])) for r in rows]

    def _selective_match(self, terms: builtins.list[str]) -> str:
        """The FTS5 expression for ``terms``: an OR of the selective ones.

        BM25 has to score every row a query matches; a term found in more than
        ``storage.fts_common_docs`` rows (a speaker's name, a topic word) makes that millions of
        rows and adds almost nothing to the ranking (its IDF is near zero). Such terms are left
        out of the OR when rarer terms exist; when every term is that common they are ANDed.
        """
        if len(terms) == 1:
            return f'"{terms[0]}"'
        cap = self.settings.fts_common_docs
        counts = self._term_counts(terms, cap)
        common = [t for t in terms if counts[t] >= cap]
        rare = [t for t in terms if t not in common]
        if rare:
            return " OR ".join(f'"{t}"' for t in rare)
        return " AND ".join(f'"{t}"' for t in common)

    def _term_counts(self, terms: builtins.list[str], cap: int) -> dict[str, int]:
        """:meth:`_term_docs` of each term, remembered while the full-text index is unchanged (outside a
        transaction of this connection, whose pending terms the index's structure record does not show
        yet). A search runs the full-text query twice (hot and cold store) and its words recur."""
        if self._tx.depth:
            return {t: self._term_docs(t, cap) for t in terms}
        row = self._conn.execute(f"SELECT block FROM memories_fts_data WHERE id = {_FTS_STRUCTURE_ID}").fetchone()
        key = bytes(row[0]) if row is not None else b""
        if key != self._term_docs_key or len(self._term_docs_cache) > _TERM_DOCS_CACHED:
            self._term_docs_cache, self._term_docs_key = {}, key
        cache = self._term_docs_cache
        for t in terms:
            if t not in cache:
                cache[t] = self._term_docs(t, cap)
        return {t: cache[t] for t in terms}

    def _term_docs(self, term: str, cap: int) -> int:
        """How many rows contain ``term``, counted up to ``cap`` (cheap: no ranking)."""
        row = self._conn.execute(
            "SELECT count(*) FROM (SELECT 1 FROM memories_fts WHERE memories_fts MATCH ? LIMIT ?)",
            (f'"{term}"', cap),
        ).fetchone()
        return int(row[0])

    def embeddings(self, ids: Sequence[str]) -> dict[str, Vector]:
        if not ids:
            return {}
        with self._read("embeddings"):
            rows = self._conn.execute(
                "SELECT id, embedding, embedding_codes FROM memories WHERE id IN (SELECT value FROM json_each(?)) "
                "AND (embedding IS NOT NULL OR embedding_codes IS NOT NULL)",
                (_ids_json(ids),),
            ).fetchall()
        out = {r[0]: np.frombuffer(r[1], dtype=np.float32).copy() for r in rows if r[1] is not None}
        quantised = [r for r in rows if r[1] is None]
        if quantised:  # dequantised
            vecs = vector_codec.decode_rows([r[2] for r in quantised], self.dim)
            out.update({r[0]: vec for r, vec in zip(quantised, vecs, strict=True)})
        return out

    # -- hooks of the shared tables ------------------------------------------------------------
    @contextlib.contextmanager
    def _reading(self, what: str) -> Iterator[Session]:
        with self._read(what):
            yield _Session(self._conn, what)

    @contextlib.contextmanager
    def _writing(self, what: str) -> Iterator[Session]:
        with self._write(what):
            yield _Session(self._conn, what)

    def _memory_condition(self, flt: MemoryFilter, alias: str) -> tuple[str, builtins.list[Any]]:
        return filter_sql(flt, alias)

    # -- erasure of one user -------------------------------------------------------------------
    def reclaim(self) -> None:
        return None  # secure_delete overwrites freed pages; delete() merged the text index

    def delete_partition_rows(self, user_id: str | None, *, dry_run: bool = False) -> dict[str, int]:
        if dry_run:
            return self._partition_rows(user_id, dry_run=True)
        part = _partition(user_id)
        with self._write("delete_partition_rows"):
            counts = self._partition_rows(user_id, dry_run=False)
            # the vector change log keeps which partition each change was in: name none after the erasure
            # (other processes then have no change of this partition to apply; their searches check rows)
            self._conn.execute(
                'UPDATE vector_changes SET "partition" = ?, memory_id = \'\' WHERE "partition" IN (?, ?)',
                (_ERASED_PARTITION, part, quantized_partition(part)),
            )
            self._tx.checkpoint = True  # no copy of a box topic stays in the write-ahead log
        # graphs on disk keep a deleted vector's data (hnswlib only marks it) and the manifest names the
        # partition: drop them all; the next search rebuilds them from the rows
        with self._read("dropping the vector index files"), _errors("dropping the vector index", RuntimeError):
            self._index.drop_persisted()
            self._index.reset()
        return counts


# ----------------------------------------------------------------------------------------
# helpers
# ----------------------------------------------------------------------------------------

_EMBEDDING: Final = _FIELDS.index("embedding")


def _cosine(value: Any) -> float:
    """A similarity clipped to [-1, 1] (float32 rounding can overshoot by an ulp)."""
    return min(1.0, max(-1.0, float(value)))


def _best(hits: builtins.list[ScoredId], k: int) -> builtins.list[ScoredId]:
    """The ``k`` best hits of several searches, each id once, best first (ties by id)."""
    unique = {h.id: h for h in hits}
    return sorted(unique.values(), key=lambda h: (-h.score, h.id))[:k]


def _as_vector(blob: bytes | None) -> Matrix | None:
    return None if blob is None else np.frombuffer(blob, dtype=np.float32)


def _quantised_codes(record: MemoryRecord, row: builtins.list[Any]) -> bytes | None:
    """The code blob of a record inserted at a quantised precision (its float column becomes NULL)."""
    precision = precision_value(record.embedding_precision)
    if row[_EMBEDDING] is None or precision is Precision.FLOAT32:
        return None
    stored = stored_vector(np.frombuffer(row[_EMBEDDING], dtype=np.float32), precision)
    row[_EMBEDDING] = None
    return stored.codes


def _index_key(partition: str, blob: bytes | None, codes: bytes | None) -> tuple[str, bytes] | None:
    """The index partition of a row's vector and the stored bytes it comes from (None: not indexed).

    Quantised rows live in the user's quantised partition, never in the hot graph."""
    if codes is not None:
        return quantized_partition(partition), codes
    if blob is not None:
        return partition, blob
    return None


def _index_vector(blob: bytes | None, codes: bytes | None) -> Matrix | None:
    """The vector the index keeps for a row: float32 as stored, or the codes' search vector."""
    if codes is not None:
        vector: Matrix = vector_codec.search_vectors([codes])[0]
        return vector
    return _as_vector(blob)


def _vector_transition(
    memory_id: str, cur: _Current, partition: str, blob: bytes | None, codes: bytes | None
) -> builtins.list[PendingOp]:
    """The log entries for a row whose (partition, stored vector) went from ``cur`` to the new ones."""
    old = _index_key(cur.partition, cur.embedding, cur.codes)
    new = _index_key(partition, blob, codes)
    if old == new:
        return []
    ops: builtins.list[PendingOp] = []
    if old is not None and (new is None or new[0] != old[0]):
        ops.append(PendingOp(DELETE, cur.rid, old[0], None, memory_id))
    if new is not None:
        ops.append(PendingOp(UPSERT, cur.rid, new[0], _index_vector(blob, codes), memory_id))
    return ops


def _integrity_error(exc: sqlite3.IntegrityError, what: str) -> Exception:
    message = str(exc)
    if "UNIQUE" in message or "PRIMARY KEY" in message:
        return ConflictError(f"{what}: a row with the same key exists ({message})")
    return InvalidInputError(f"{what}: {message}")


@contextlib.contextmanager
def _errors(what: str, *extra: type[Exception], wrap: type[StoreError] = StoreError) -> Iterator[None]:
    """Re-raise driver errors (and ``extra`` ones) as reverie's StoreError."""
    catch: tuple[type[Exception], ...] = (sqlite3.Error, *extra)
    try:
        yield
    except catch as exc:
        if isinstance(exc, StoreError):
            raise
        raise wrap(f"{what}: {exc}") from exc


class _RowSource:
    """The vector index's view of the database (runs under the store's lock)."""

    def __init__(self, store: SQLiteStore) -> None:
        self._store = store

    @property
    def _conn(self) -> sqlite3.Connection:
        return self._store._conn

    @contextlib.contextmanager
    def snapshot(self) -> Iterator[None]:
        if self._store._tx.depth:
            yield  # inside our own transaction: it is the snapshot
            return
        self._conn.execute("BEGIN")
        try:
            yield
        finally:
            self._conn.execute("COMMIT")

    def max_seq(self) -> int:
        return self._store._max_seq()

    def changes_since(self, seq: int) -> builtins.list[VectorChange]:
        rows = self._conn.execute(
            'SELECT seq, rid, "partition", op FROM vector_changes WHERE seq > ? ORDER BY seq', (seq,)
        ).fetchall()
        return [VectorChange(int(r[0]), int(r[1]), r[2], r[3]) for r in rows]

    def current_vectors(self, rids: Sequence[int]) -> builtins.list[tuple[int, str, Matrix]]:
        if not rids:
            return []
        rows = self._conn.execute(
            'SELECT rid, "partition", embedding, embedding_codes FROM memories '
            "WHERE rid IN (SELECT value FROM json_each(?)) AND (embedding IS NOT NULL OR embedding_codes IS NOT NULL)",
            (json.dumps(list(rids)),),
        ).fetchall()
        out = [(int(r[0]), r[1], np.frombuffer(r[2], dtype=np.float32)) for r in rows if r[2] is not None]
        quantised = [r for r in rows if r[2] is None]
        if quantised:  # quantised rows go to the user's quantised partition as search vectors
            vecs = vector_codec.search_rows([r[3] for r in quantised], self._store.dim)
            out += [(int(r[0]), quantized_partition(r[1]), vec) for r, vec in zip(quantised, vecs, strict=True)]
        return out

    def partition_size(self, partition: str) -> int:
        if is_quantized_partition(partition):
            query = 'SELECT count(*) FROM memories WHERE "partition" = ? AND embedding_codes IS NOT NULL'
            partition = partition.removesuffix(QUANTIZED_SUFFIX)
        else:
            query = 'SELECT count(*) FROM memories WHERE "partition" = ? AND embedding IS NOT NULL'
        return int(self._conn.execute(query, (partition,)).fetchone()[0])

    def partition_vectors(self, partition: str, batch_size: int) -> Iterator[tuple[Rids, Matrix]]:
        dim = self._store.dim
        quantised = is_quantized_partition(partition)
        column = "embedding_codes" if quantised else "embedding"
        partition = partition.removesuffix(QUANTIZED_SUFFIX) if quantised else partition
        after = 0
        while True:
            rows = self._conn.execute(
                f'SELECT rid, {column} FROM memories WHERE +"partition" = ? AND rid > ? '
                f"AND {column} IS NOT NULL ORDER BY rid LIMIT ?",
                (partition, after, batch_size),
            ).fetchall()
            if not rows:
                return
            rids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
            if quantised:
                vecs = vector_codec.search_rows([r[1] for r in rows], dim)
            else:
                vecs = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32).reshape(len(rows), dim)
            yield rids, vecs
            after = int(rids[-1])

    def log_floor(self) -> int:
        row = self._conn.execute("SELECT value FROM meta WHERE key = 'vector_log_floor'").fetchone()
        return int(row[0]) if row else 0

    def partitions(self) -> builtins.list[str]:
        names = [r[0] for r in self._conn.execute('SELECT DISTINCT "partition" FROM memories')]
        quantised = self._conn.execute(
            'SELECT DISTINCT "partition" FROM memories WHERE embedding_codes IS NOT NULL'
        ).fetchall()
        return names + [quantized_partition(r[0]) for r in quantised]


__all__ = ["MIGRATIONS", "SQLiteStore", "filter_sql"]
