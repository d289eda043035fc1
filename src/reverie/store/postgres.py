"""PostgreSQL + pgvector backend: one memory shared by many agent processes.

* psycopg 3 with a connection pool (``psycopg_pool``); every pooled connection is in autocommit
  mode and every write runs in an explicit transaction (a savepoint when it joins an outer
  :meth:`PostgresStore.transaction`), so a failed statement never poisons the caller's
  transaction.
* Schema changes are named migrations recorded in ``schema_migrations``, applied in one
  transaction under a ``pg_advisory_xact_lock`` so that processes opening the same database at
  once do not race.
* Vector search is cosine distance (``<=>``) over an HNSW index with pgvector 0.8's iterative
  scan, so filtered queries still return ``k`` rows; full text is a generated ``tsvector``
  (english) with a GIN index, ranked by ``ts_rank`` (2x cheaper than ``ts_rank_cd`` per matched row);
  which query words are too common to rank by is read from the planner's statistics
  (``pg_stats.most_common_elems``), not counted through the index.

Only this module (and the other ``store`` modules) knows SQL.
"""

from __future__ import annotations

import builtins
import json
import math
import os
import re
import threading
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any, Final, LiteralString, cast

import numpy as np
import psycopg
import psycopg.conninfo
from pgvector import Bit
from pgvector.psycopg import register_vector
from psycopg import Connection, sql
from psycopg.rows import TupleRow
from psycopg.types.json import Jsonb, set_json_loads
from psycopg_pool import ConnectionPool

from reverie import vector_codec
from reverie.config.core import StorageSettings
from reverie.errors import (
    ConflictError,
    InvalidInputError,
    MigrationError,
    NotFoundError,
    StoreError,
)
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
from reverie.store.tables import Columns, Dialect, Session, SqlTables
from reverie.store.textquery import query_terms

Conn = Connection[TupleRow]
Query = sql.Composed | sql.SQL | LiteralString
Params = Sequence[Any] | Mapping[str, Any]

#: pg_advisory_xact_lock key serialising migrations ("reverie" in ASCII)
_MIGRATION_LOCK: Final = 0x72657665726965
#: pg_advisory_lock key serialising concurrent index rebuilds
_REBUILD_LOCK: Final = 0x72657665726966
_HNSW_INDEX: Final = "memories_embedding_hnsw"
#: the tables compact() vacuums (every table reverie creates)
_COMPACT_TABLES: Final = (
    "memories",
    "relations",
    "coactivations",
    "history",
    "access_log",
    "claims",
    "state",
    "clusters",
    "cluster_members",
    "synaptic_tags",
    "boxes",
    "working_memory",
    "dream_runs",
    "meta",
    "schema_migrations",
    "memory_actions",
)
#: VACUUM VERBOSE's summary line: 'finished vacuuming "db.public.t": … tuples: N removed, …'
_VACUUM_REMOVED: Final = re.compile(r'vacuuming "([^"]+)".*?tuples: (\d+) removed', re.DOTALL)

# ----------------------------------------------------------------------------------------
# memory columns: (name, kind) in table order; kinds drive encoding and decoding
# ----------------------------------------------------------------------------------------

_COLUMNS: Final[tuple[tuple[str, str], ...]] = (
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
_COLUMN_NAMES: Final = tuple(name for name, _ in _COLUMNS)
_COLUMN_KIND: Final = dict(_COLUMNS)
_WRITABLE: Final = frozenset(_COLUMN_NAMES) - {"id", "version"}
_EMBEDDING: Final = _COLUMN_NAMES.index("embedding")
_PRECISION: Final = _COLUMN_NAMES.index("embedding_precision")
_COPY_TYPES: Final = {
    "text": "text",
    "enum": "text",
    "json": "jsonb",
    "vector": "vector",
    "float": "float8",
    "int": "int8",
    "bool": "bool",
    "ts": "timestamptz",
}
#: nearest neighbours through the HNSW index (iterative scan, relaxed order: re-sorted outside),
#: plus quantised rows passing the filter. pgvector has no int4/int2 type: codes live in
#: ``embedding_codes`` and are scored with the mixed-precision similarity in numpy. When the
#: filter excludes the cold store that part is a probe of the partial index memories_quantized_idx
#: (normally no row); when it reaches the cold store, the server ranks the quantised rows by the
#: Hamming distance of their sign bits (``embedding_bits``, 48 bytes at 384 dimensions) and only the
#: best ``_PREFILTER`` of them are sent and re-ranked (a full transfer of every code blob took
#: 0.86 s per query at 30k int4 rows; the prefilter 37 ms, bench/vector_codec.py)
_SEARCH_QUERY: Final = sql.SQL(
    "WITH hits AS MATERIALIZED ("
    "SELECT id, embedding <=> %s AS distance FROM memories "
    "WHERE embedding IS NOT NULL AND {where} ORDER BY distance LIMIT %s) "
    "SELECT id, distance, NULL::bytea FROM hits "
    "UNION ALL SELECT id, NULL, embedding_codes FROM memories WHERE embedding_codes IS NOT NULL AND {where}"
)
_SEARCH_COLD_QUERY: Final = sql.SQL(
    "WITH hits AS MATERIALIZED ("
    "SELECT id, embedding <=> %s AS distance FROM memories "
    "WHERE embedding IS NOT NULL AND {where} ORDER BY distance LIMIT %s), "
    "coded AS MATERIALIZED ("
    "SELECT id, embedding_codes FROM memories WHERE embedding_codes IS NOT NULL AND {where} "
    "ORDER BY embedding_bits <~> %s LIMIT %s) "
    "SELECT id, distance, NULL::bytea FROM hits UNION ALL SELECT id, NULL, embedding_codes FROM coded"
)
#: quantised candidates re-ranked per query: at least this many, and this many per result asked
#: (on MiniLM/LoCoMo the 200 nearest by sign bits hold 99.7% of the float32 top 10, 400 hold 100%)
_PREFILTER: Final = (400, 40)
#: the same, exact: ``+ 0`` keeps the planner off the HNSW index
_EXACT_QUERY: Final = sql.SQL(
    "SELECT id, (embedding <=> %s) + 0 AS distance FROM memories "
    "WHERE embedding IS NOT NULL AND {} ORDER BY distance, id LIMIT %s"
)
#: every record column, then the code blob of a quantised embedding (``_decode_record`` reads both)
_SELECT_MEMORY: Final = sql.SQL("SELECT {} FROM memories").format(
    sql.SQL(", ").join(sql.Identifier(n) for n in (*_COLUMN_NAMES, "embedding_codes"))
)

# ----------------------------------------------------------------------------------------
# migrations
# ----------------------------------------------------------------------------------------

#: ids are compared and sorted byte-wise (COLLATE "C"), as in SQLite, whatever the server locale
_M0001_CORE: Final[LiteralString] = """
CREATE TABLE meta (key text PRIMARY KEY, value jsonb NOT NULL);
CREATE TABLE memories (
    id text COLLATE "C" PRIMARY KEY,
    content text NOT NULL,
    content_hash text NOT NULL,
    user_id text,
    agent_id text,
    session_id text,
    instance_id text,
    layer text NOT NULL,
    store text NOT NULL,
    status text NOT NULL,
    category text NOT NULL,
    memory_kind text NOT NULL,
    sub_tier text,
    temporal_type text NOT NULL,
    entities jsonb NOT NULL,
    embedding vector({dim}),
    embedding_precision text NOT NULL,
    importance double precision NOT NULL,
    importance_channels jsonb NOT NULL,
    surprise double precision,
    utility double precision NOT NULL,
    utility_updated_at timestamptz,
    energy double precision NOT NULL,
    energy_updated_at timestamptz,
    stability double precision NOT NULL,
    difficulty double precision NOT NULL,
    storage_strength double precision NOT NULL,
    retrieval_strength double precision NOT NULL,
    reinforcement_count bigint NOT NULL,
    last_reinforced_at timestamptz,
    confirmations bigint NOT NULL,
    emotion_valence double precision NOT NULL,
    emotion_arousal double precision NOT NULL,
    emotion_label text,
    flashbulb boolean NOT NULL,
    source text NOT NULL,
    trust double precision NOT NULL,
    source_confidence double precision NOT NULL,
    write_source text NOT NULL,
    data_source text NOT NULL,
    inputs jsonb NOT NULL,
    valid_from timestamptz,
    valid_until timestamptz,
    recorded_at timestamptz NOT NULL,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL,
    access_count bigint NOT NULL,
    last_accessed_at timestamptz,
    pinned boolean NOT NULL,
    immutable boolean NOT NULL,
    core boolean NOT NULL,
    lifecycle_state text NOT NULL,
    verification_state text NOT NULL,
    policy_class text NOT NULL,
    confidence double precision NOT NULL,
    heat_score double precision,
    decay_score double precision,
    superseded_by text,
    box_id text,
    metadata jsonb NOT NULL,
    version bigint NOT NULL,
    partition text GENERATED ALWAYS AS (coalesce(user_id, '')) STORED,
    tsv tsvector GENERATED ALWAYS AS (to_tsvector('english'::regconfig, content)) STORED
);
CREATE INDEX memories_scope_idx ON memories (partition, status, store);
CREATE INDEX memories_created_idx ON memories (partition, created_at);
CREATE INDEX memories_hash_idx ON memories (content_hash);
CREATE INDEX memories_session_idx ON memories (session_id);
CREATE INDEX memories_tsv_idx ON memories USING gin (tsv);
CREATE TABLE relations (
    id text COLLATE "C" PRIMARY KEY,
    src_id text COLLATE "C" NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
    dst_id text COLLATE "C" NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
    type text NOT NULL,
    confidence double precision NOT NULL,
    weight double precision NOT NULL,
    created_at timestamptz NOT NULL,
    last_reinforced_at timestamptz,
    metadata jsonb NOT NULL,
    UNIQUE (src_id, dst_id, type)
);
CREATE INDEX relations_dst_idx ON relations (dst_id);
CREATE TABLE coactivations (
    a_id text COLLATE "C" NOT NULL,
    b_id text COLLATE "C" NOT NULL,
    weight bigint NOT NULL,
    first_at timestamptz NOT NULL,
    last_at timestamptz NOT NULL,
    PRIMARY KEY (a_id, b_id),
    CHECK (a_id < b_id)
);
CREATE INDEX coactivations_b_idx ON coactivations (b_id);
CREATE TABLE history (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    memory_id text COLLATE "C" NOT NULL,
    event text NOT NULL,
    at timestamptz NOT NULL,
    reason text NOT NULL,
    actor text NOT NULL,
    data jsonb NOT NULL
);
CREATE INDEX history_memory_idx ON history (memory_id, at, id);
CREATE TABLE access_log (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    memory_id text COLLATE "C" NOT NULL,
    at timestamptz NOT NULL,
    kind text NOT NULL,
    session_id text
);
CREATE INDEX access_log_memory_idx ON access_log (memory_id, at DESC, id DESC);
CREATE INDEX access_log_at_idx ON access_log (at);
CREATE TABLE claims (
    memory_id text COLLATE "C" PRIMARY KEY,
    owner text NOT NULL,
    phase text NOT NULL,
    claimed_at timestamptz NOT NULL,
    expires_at timestamptz NOT NULL
);
CREATE INDEX claims_owner_idx ON claims (owner);
CREATE TABLE state (key text PRIMARY KEY, value jsonb NOT NULL);
"""

#: tables the engine's later stages fill (same shapes as the SQLite backend's)
_M0002_ENGINE_TABLES: Final[LiteralString] = """
CREATE TABLE clusters (
    id text COLLATE "C" PRIMARY KEY,
    partition text NOT NULL,
    kind text NOT NULL,
    label text,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL,
    metadata jsonb NOT NULL DEFAULT '{}'
);
CREATE TABLE cluster_members (
    cluster_id text COLLATE "C" NOT NULL REFERENCES clusters (id) ON DELETE CASCADE,
    memory_id text COLLATE "C" NOT NULL,
    weight double precision NOT NULL DEFAULT 1,
    PRIMARY KEY (cluster_id, memory_id)
);
CREATE INDEX cluster_members_memory_idx ON cluster_members (memory_id);
CREATE TABLE synaptic_tags (
    memory_id text COLLATE "C" NOT NULL,
    session_id text NOT NULL,
    tagged_at timestamptz NOT NULL,
    expires_at timestamptz NOT NULL,
    captured boolean NOT NULL DEFAULT false,
    PRIMARY KEY (memory_id, session_id)
);
CREATE INDEX synaptic_tags_session_idx ON synaptic_tags (session_id);
CREATE TABLE boxes (
    id text COLLATE "C" PRIMARY KEY,
    partition text NOT NULL,
    session_id text,
    topic jsonb NOT NULL DEFAULT '[]',
    opened_at timestamptz NOT NULL,
    sealed_at timestamptz,
    trace_id text,
    memory_count bigint NOT NULL DEFAULT 0
);
CREATE INDEX boxes_partition_idx ON boxes (partition, opened_at);
CREATE TABLE working_memory (
    session_id text NOT NULL,
    memory_id text COLLATE "C" NOT NULL,
    importance double precision NOT NULL,
    access_count bigint NOT NULL DEFAULT 0,
    added_at timestamptz NOT NULL,
    last_accessed timestamptz NOT NULL,
    PRIMARY KEY (session_id, memory_id)
);
CREATE INDEX working_memory_memory_idx ON working_memory (memory_id);
CREATE TABLE dream_runs (
    id text COLLATE "C" PRIMARY KEY,
    started_at timestamptz NOT NULL,
    finished_at timestamptz,
    owner text NOT NULL,
    report jsonb NOT NULL DEFAULT '{}'
);
"""

#: rows about a memory that go when it is hard-deleted (relations cascade; history goes too)
_DEPENDENT_TABLES: Final = (
    "access_log",
    "claims",
    "synaptic_tags",
    "working_memory",
    "cluster_members",
    "history",
    "memory_actions",
)


def _migrate_core(conn: Conn, dim: int, settings: StorageSettings) -> None:
    conn.execute(sql.SQL(_M0001_CORE).format(dim=sql.Literal(dim)))
    conn.execute(_hnsw_ddl(settings))
    conn.execute("INSERT INTO meta (key, value) VALUES ('dim', %s)", (_json(dim, "dim"),))


def _migrate_engine_tables(conn: Conn, dim: int, settings: StorageSettings) -> None:
    conn.execute(_M0002_ENGINE_TABLES)


def _hnsw_ddl(settings: StorageSettings, *, name: str = _HNSW_INDEX, concurrently: bool = False) -> sql.Composed:
    return sql.SQL(
        "CREATE INDEX {} {} ON memories USING hnsw (embedding vector_cosine_ops) WITH (m = {}, ef_construction = {})"
    ).format(
        sql.SQL("CONCURRENTLY" if concurrently else ""),
        sql.Identifier(name),
        sql.Literal(settings.hnsw_m),
        sql.Literal(settings.hnsw_ef_construction),
    )


_M0003_WRITE_PATH: Final[LiteralString] = """
ALTER TABLE boxes ADD COLUMN user_id text;
ALTER TABLE boxes ADD COLUMN last_at timestamptz;
UPDATE boxes SET last_at = opened_at WHERE last_at IS NULL;
CREATE INDEX boxes_open_idx ON boxes (partition, session_id, sealed_at);
CREATE INDEX synaptic_tags_alive_idx ON synaptic_tags (session_id, expires_at);
"""


def _migrate_write_path(conn: Conn, dim: int, settings: StorageSettings) -> None:
    conn.execute(_M0003_WRITE_PATH)


#: quantised embeddings: a quantised memory keeps its code blob in ``embedding_codes`` and
#: NULL in ``embedding`` (so the HNSW index holds float32 rows only); before this migration nothing
#: was quantised, so every stored vector is float32
_M0004_QUANTIZED_EMBEDDINGS: Final[LiteralString] = """
ALTER TABLE memories ADD COLUMN embedding_codes bytea;
UPDATE memories SET embedding_precision = 'float32' WHERE embedding_precision <> 'float32';
CREATE INDEX memories_quantized_idx ON memories (partition, store, status) WHERE embedding_codes IS NOT NULL;
"""


def _migrate_quantized_embeddings(conn: Conn, dim: int, settings: StorageSettings) -> None:
    conn.execute(_M0004_QUANTIZED_EMBEDDINGS)
    # the sign bits of a quantised embedding: the server-side prefilter of a deep recall
    conn.execute(sql.SQL("ALTER TABLE memories ADD COLUMN embedding_bits bit({})").format(sql.Literal(dim)))


def _sign_bits(blobs: Sequence[bytes], dim: int) -> builtins.list[Bit]:
    """The ``embedding_bits`` of code blobs: the signs of their dequantised vectors."""
    if not blobs:
        return []
    return [Bit(row > 0) for row in vector_codec.decode_rows(blobs, dim)]


def _batch_bits(codes: Sequence[bytes | None], dim: int) -> builtins.list[Bit | None]:
    """:func:`_sign_bits` of the blobs among ``codes`` (``None`` where there is none), in order."""
    present = [c for c in codes if c is not None]
    bits = iter(_sign_bits(present, dim))
    return [next(bits) if c is not None else None for c in codes]


#: entity hub: MemoryFilter.entities (any-of) is ``entities ?| array`` over this GIN index
_M0005_ENTITY_INDEX: Final[LiteralString] = "CREATE INDEX memories_entities_idx ON memories USING gin (entities)"


def _migrate_entity_index(conn: Conn, dim: int, settings: StorageSettings) -> None:
    conn.execute(_M0005_ENTITY_INDEX)


def _migrate_scan_index(conn: Conn, dim: int, settings: StorageSettings) -> None:
    """A user-scoped scan (the dream cycle's passes) walks (partition, id) in order instead of sorting
    the partition for every batch."""
    conn.execute("CREATE INDEX memories_partition_id_idx ON memories (partition, id)")


def _migrate_read_latency(conn: Conn, dim: int, settings: StorageSettings) -> None:
    """Two layouts that keep reads off avoidable work (measured at 100k, bench/scale.py).

    * Free space in every heap page written from now on (``storage.pg_fillfactor``): the access
      updates of a search change no indexed column, so with room on the page they are HOT updates
      instead of new entries in all ten indexes, the HNSW graph among them (with full pages 95% of
      them were not, and the access update of one search's 10 hits took ~30 ms; with free space
      ~3 ms). Pages written before keep their layout until the table is rewritten (VACUUM FULL).
    * No pending list on the GIN indexes: with ``fastupdate`` every query scans the whole list of
      not yet merged entries (up to 4 MB; 380 pages after a bulk load, 4–10 ms a query) before the
      index proper (0.4 ms). Entries now go straight into the index; the list left is merged here.
    """
    conn.execute(sql.SQL("ALTER TABLE memories SET (fillfactor = {})").format(sql.Literal(settings.pg_fillfactor)))
    for index in ("memories_tsv_idx", "memories_entities_idx"):
        conn.execute(sql.SQL("ALTER INDEX {} SET (fastupdate = off)").format(sql.Identifier(index)))
        conn.execute("SELECT gin_clean_pending_list(%s::regclass)", (index,))


def _migrate_sealed_boxes(conn: Conn, dim: int, settings: StorageSettings) -> None:
    """The newest sealed boxes of a user (read on every seal by the write path) come from an index
    in order instead of a sort of every sealed box of the partition."""
    conn.execute(
        "CREATE INDEX boxes_sealed_idx ON boxes (partition, sealed_at DESC, id DESC) WHERE sealed_at IS NOT NULL"
    )


def _migrate_api_keys(conn: Conn, dim: int, settings: StorageSettings) -> None:
    """API keys (reverie.auth): only the SHA-256 of each key is stored."""
    conn.execute(
        'CREATE TABLE api_keys (id text COLLATE "C" PRIMARY KEY, name text NOT NULL, key_hash text NOT NULL, '
        "admin boolean NOT NULL, user_ids jsonb NOT NULL, agent_ids jsonb, created_at timestamptz NOT NULL, "
        "revoked_at timestamptz, last_used_at timestamptz)"
    )


def _migrate_memory_actions(conn: Conn, dim: int, settings: StorageSettings) -> None:
    """Action telemetry (the memory-action policy): one row per write decision, no memory text."""
    conn.execute(
        "CREATE TABLE memory_actions (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, "
        'partition text COLLATE "C" NOT NULL, agent_id text, memory_id text COLLATE "C", '
        "at timestamptz NOT NULL, action text NOT NULL, outcome text NOT NULL, confidence double precision NOT NULL, "
        "lifecycle_state text NOT NULL, importance double precision NOT NULL, source text NOT NULL)"
    )
    conn.execute("CREATE INDEX memory_actions_partition_at_idx ON memory_actions (partition, at DESC, id DESC)")
    conn.execute("CREATE INDEX memory_actions_at_idx ON memory_actions (at)")
    conn.execute("CREATE INDEX memory_actions_memory_idx ON memory_actions (memory_id)")


Migration = Callable[[Conn, int, StorageSettings], None]

#: every migration ever shipped, in order; names are never reused or renamed
MIGRATIONS: Final[tuple[tuple[str, Migration], ...]] = (
    ("0001_core", _migrate_core),
    ("0002_engine_tables", _migrate_engine_tables),
    ("0003_write_path", _migrate_write_path),
    ("0004_quantized_embeddings", _migrate_quantized_embeddings),
    ("0005_entity_index", _migrate_entity_index),
    ("0006_scan_index", _migrate_scan_index),
    ("0007_read_latency", _migrate_read_latency),
    ("0008_sealed_boxes", _migrate_sealed_boxes),
    ("0009_api_keys", _migrate_api_keys),
    ("0010_memory_actions", _migrate_memory_actions),
)


def _run_migrations(conn: Conn, dim: int, settings: StorageSettings) -> int:
    """Apply pending migrations under an advisory lock; returns the schema version."""
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (_MIGRATION_LOCK,))
        conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
        conn.execute(
            "CREATE TABLE IF NOT EXISTS schema_migrations "
            "(name text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())"
        )
        applied = {row[0] for row in conn.execute("SELECT name FROM schema_migrations")}
        known = {name for name, _ in MIGRATIONS}
        if applied - known:
            raise MigrationError(
                f"the database has migrations this reverie does not know: {sorted(applied - known)}; upgrade reverie"
            )
        if applied:
            _check_dim(conn, dim)
        for name, migrate in MIGRATIONS:
            if name not in applied:
                migrate(conn, dim, settings)
                conn.execute("INSERT INTO schema_migrations (name) VALUES (%s)", (name,))
        return len(MIGRATIONS)


def _check_dim(conn: Conn, dim: int) -> None:
    row = conn.execute("SELECT value FROM meta WHERE key = 'dim'").fetchone()
    if row is not None and int(row[0]) != dim:
        raise StoreError(
            f"this database stores {row[0]}-dimensional embeddings but the embedder makes "
            f"{dim}-dimensional ones; use the embedder the memory was built with, or a new database"
        )


# ----------------------------------------------------------------------------------------
# value encoding and decoding
# ----------------------------------------------------------------------------------------


def _utc(value: datetime | None) -> datetime | None:
    """Aware UTC (naive datetimes are taken to be UTC)."""
    if value is None:
        return None
    if not isinstance(value, datetime):
        raise InvalidInputError(f"expected a datetime, got {type(value).__name__}")
    if value.tzinfo is None:
        return value.replace(tzinfo=UTC)
    return value.astimezone(UTC)


def _encode_value(name: str, kind: str, value: Any, dim: int) -> Any:
    if value is None:
        return None
    if kind == "enum":
        try:
            return ENUM_FIELDS[name](value).value
        except ValueError as exc:
            raise InvalidInputError(f"invalid {name}: {value!r}") from exc
    if kind == "json":
        return _json(value, name)
    if kind == "ts":
        return _utc(value)
    if kind == "vector":
        return check_vector(value, dim)
    return value


def _json(value: Any, what: str) -> Jsonb:
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


def _cosine(distance: float | None) -> float:
    """Cosine similarity from pgvector's distance, clipped to [-1, 1] (NaN for zero vectors: 0)."""
    if distance is None or math.isnan(distance):
        return 0.0
    return min(1.0, max(-1.0, 1.0 - float(distance)))


def _encode_record(record: MemoryRecord, dim: int) -> list[Any]:
    return [_encode_value(n, k, getattr(record, n), dim) for n, k in _COLUMNS]


def _decode_value(name: str, kind: str, value: Any) -> Any:
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


def _decode_record(row: Sequence[Any]) -> MemoryRecord:
    """A record from a ``_SELECT_MEMORY`` row; a quantised embedding comes back dequantised."""
    kwargs = {n: _decode_value(n, k, v) for (n, k), v in zip(_COLUMNS, row[: len(_COLUMNS)], strict=True)}
    rec = MemoryRecord(**kwargs)
    if len(row) > len(_COLUMNS) and row[-1] is not None:
        rec.embedding = vector_codec.decode(bytes(row[-1]))
    return rec


def _partial_select(names: tuple[str, ...]) -> tuple[sql.Composed, Callable[[Sequence[Any]], MemoryRecord]]:
    """``SELECT`` and decoder of a scan reading only ``names`` (the other fields keep their defaults;
    reading the embedding reads the code blob of a quantised one too)."""
    columns = (*names, "embedding_codes") if "embedding" in names else names
    select = sql.SQL("SELECT {} FROM memories").format(sql.SQL(", ").join(sql.Identifier(n) for n in columns))
    kinds = [(n, _COLUMN_KIND[n]) for n in names]

    def decode(row: Sequence[Any]) -> MemoryRecord:
        rec = MemoryRecord(**{n: _decode_value(n, k, v) for (n, k), v in zip(kinds, row[: len(kinds)], strict=True)})
        if len(row) > len(kinds) and row[-1] is not None:
            rec.embedding = vector_codec.decode(bytes(row[-1]))
        return rec

    return select, decode


def _unique(items: Sequence[str]) -> list[str]:
    return list(dict.fromkeys(items))


class PostgresDialect(Dialect):
    """Instants as ``timestamptz``, JSON as ``jsonb``, id lists as ``text[]`` matched with ``= ANY``."""

    def ids(self, values: Sequence[str]) -> list[str]:
        return _unique(values)

    def in_ids(self, column: str) -> str:
        return f"{column} = ANY(%s)"

    def ts(self, value: datetime) -> datetime | None:
        return _utc(value)

    def from_ts(self, value: Any) -> datetime:
        return cast(datetime, value).astimezone(UTC)

    def json(self, value: Any, what: str) -> Jsonb:
        return _json(value, what)

    def from_json(self, value: Any) -> Any:
        return value  # the driver decodes jsonb


POSTGRES: Final = PostgresDialect()


class _Session:
    """The shared tables' view of a connection (the store's error translation is around it)."""

    def __init__(self, conn: Conn) -> None:
        self._conn = conn

    def run(self, query: str, params: Sequence[Any] = ()) -> int:
        return self._conn.execute(query, params).rowcount

    def run_many(self, query: str, rows: Sequence[Sequence[Any]]) -> int:
        with self._conn.cursor() as cur:
            cur.executemany(query, rows)
            return max(0, cur.rowcount)

    def rows(self, query: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        return self._conn.execute(query, params).fetchall()

    def insert(self, table: str, columns: Columns, rows: Sequence[Sequence[Any]], tail: str = "") -> int:
        """One ``INSERT … SELECT FROM unnest(…)`` of column arrays: one round trip for any number of rows."""
        if not rows:
            return 0
        names = ", ".join(name for name, _ in columns)
        arrays = ", ".join(f"%s::{kind}[]" for _, kind in columns)
        query = f"INSERT INTO {table} ({names}) SELECT * FROM unnest({arrays}) {tail}"
        return self.run(query, [list(c) for c in zip(*rows, strict=True)])

    def insert_ids(self, table: str, columns: Columns, rows: Sequence[Sequence[Any]]) -> list[int]:
        names = ", ".join(name for name, _ in columns)
        values = ", ".join(["%s"] * len(columns))
        query = f"INSERT INTO {table} ({names}) VALUES ({values}) RETURNING id"
        ids: list[int] = []
        with self._conn.cursor() as cur:
            cur.executemany(query, rows, returning=True)
            for _ in rows:
                row = cur.fetchone()
                ids.append(int(row[0]) if row else 0)
                cur.nextset()
        return ids


def _redact(url: str) -> str:
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


def _filter_sql(flt: MemoryFilter, alias: str = "") -> tuple[sql.Composed | sql.SQL, list[Any]]:
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
    if flt.valid_at is not None:
        at = _utc(flt.valid_at)
        add("({c} IS NULL OR {c} <= %s)", "valid_from", at)
        add("({c} IS NULL OR {c} > %s)", "valid_until", at)
    if flt.recorded_before is not None:
        add("{c} <= %s", "recorded_at", _utc(flt.recorded_before))
    for key, value in (flt.metadata or {}).items():
        if value is not None and not isinstance(value, str | int | float | bool):
            raise InvalidInputError(f"metadata filter values must be JSON scalars; {key!r} is {type(value).__name__}")
        # jsonb equality: 1 == 1.0, true != 1, None matches an explicit null
        add("{c} -> %s = %s", "metadata", str(key), _json(value, "metadata filter"))
    if not parts:
        return sql.SQL("TRUE"), params
    return sql.SQL(" AND ").join(parts), params


#: per query word: is it in at least %(cap)s rows? Estimated from the tsv column's statistics
#: (most_common_elem_freqs holds the share of rows per listed lexeme, then the least and the
#: largest share) where they place the word, else counted up to the cap; a word the english
#: configuration drops entirely (no lexeme) is in no row
_COMMON_WORDS_QUERY: Final[LiteralString] = """
WITH st AS (
    SELECT s.most_common_elems::text::text[] AS elems, s.most_common_elem_freqs AS freqs,
           greatest(c.reltuples, 0) * (1 - s.null_frac) AS n
    FROM pg_stats s JOIN pg_class c ON c.oid = 'memories'::regclass
    WHERE s.schemaname = current_schema() AND s.tablename = 'memories' AND s.attname = 'tsv'
),
w AS (
    SELECT t, tsvector_to_array(to_tsvector('english', t)) AS lex FROM unnest(%(words)s::text[]) AS t
),
e AS (
    SELECT w.t, w.lex, st.n, st.freqs, array_position(st.elems, w.lex[1]) AS pos, cardinality(st.elems) AS listed
    FROM w LEFT JOIN st ON cardinality(w.lex) = 1
)
SELECT t, CASE
    WHEN cardinality(lex) = 0 THEN false
    WHEN n > 0 AND pos IS NOT NULL THEN freqs[pos] * n >= %(cap)s
    WHEN n > 0 AND listed > 0 AND freqs[listed + 1] * n < %(cap)s THEN false
    ELSE (SELECT count(*) FROM (SELECT 1 FROM memories
          WHERE tsv @@ to_tsquery('english', quote_literal(t)) LIMIT %(cap)s) x) >= %(cap)s
END FROM e
"""

# ----------------------------------------------------------------------------------------
# the store
# ----------------------------------------------------------------------------------------


class PostgresStore(SqlTables):
    """The :class:`~reverie.store.base.Store` contract on PostgreSQL + pgvector."""

    backend = "postgres"
    dialect = POSTGRES

    def __init__(self, url: str, *, settings: StorageSettings, dim: int) -> None:
        if dim < 1:
            raise InvalidInputError(f"dim must be positive, got {dim}")
        self.url = url
        self.settings = settings
        self.dim = dim
        self._local = threading.local()
        self._closed = False
        self._unanalyzed = 0  # rows inserted by this process since its last ANALYZE
        self._analyze_lock = threading.Lock()
        with self._errors("could not open the PostgreSQL store"):
            with psycopg.connect(url, autocommit=True) as conn:
                self._schema_version = _run_migrations(conn, dim, settings)
            self._pool: ConnectionPool[Conn] = ConnectionPool(
                url,
                min_size=1,
                max_size=settings.pg_pool_size,
                kwargs={"autocommit": True},
                configure=self._configure,
                open=True,
                name="reverie",
            )

    def _configure(self, conn: Conn) -> None:
        register_vector(conn)
        set_json_loads(safe_json_loads, conn)  # absurdly nested stored JSON must not make a read fail
        conn.execute("SELECT set_config('hnsw.ef_search', %s, false)", (str(self.settings.hnsw_ef_search),))
        conn.execute("SELECT set_config('hnsw.iterative_scan', 'relaxed_order', false)")
        conn.execute("SET TIME ZONE 'UTC'")

    # plumbing ----------------------------------------------------------------------------

    @staticmethod
    @contextmanager
    def _errors(what: str = "PostgreSQL operation failed") -> Iterator[None]:
        """Translate driver errors into reverie errors at the boundary."""
        try:
            yield
        except psycopg.errors.UniqueViolation as exc:
            raise ConflictError(f"{what}: {exc.diag.message_detail or exc}") from exc
        except (psycopg.errors.NotNullViolation, psycopg.errors.CheckViolation) as exc:
            raise InvalidInputError(f"{what}: {exc}") from exc
        except psycopg.errors.ForeignKeyViolation as exc:
            raise NotFoundError(f"{what}: {exc.diag.message_detail or exc}") from exc
        except psycopg.DataError as exc:
            raise InvalidInputError(f"{what}: {exc}") from exc
        except psycopg.Error as exc:
            raise StoreError(f"{what}: {exc}") from exc

    @contextmanager
    def _conn(self) -> Iterator[Conn]:
        """The thread's transaction connection, or a pooled one (autocommit) for one call."""
        if self._closed:
            raise StoreError("the PostgreSQL store is closed")
        conn: Conn | None = getattr(self._local, "conn", None)
        with self._errors():
            if conn is not None:
                yield conn
                return
            with self._pool.connection() as pooled:
                yield pooled

    @contextmanager
    def _write(self) -> Iterator[Conn]:
        """A transaction (or a savepoint inside the thread's outer transaction)."""
        with self._conn() as conn, conn.transaction():
            yield conn

    def _rows(self, query: Query, params: Params = (), *, binary: bool = False) -> builtins.list[TupleRow]:
        with self._conn() as conn:
            return conn.execute(query, params, binary=binary).fetchall()

    def _records(self, query: Query, params: Params) -> builtins.list[MemoryRecord]:
        """Whole records, fetched in binary: a vector as text is ~4 kB of digits to parse (getting
        35 records took 8–11 ms in text, 3–5 ms in binary at 100k)."""
        return [_decode_record(row) for row in self._rows(query, params, binary=True)]

    # lifecycle ---------------------------------------------------------------------------

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self._pool.close()

    def __enter__(self) -> PostgresStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def backup(self, dest: str | os.PathLike[str]) -> dict[str, Any]:
        from reverie.store.backup import refuse_postgres

        refuse_postgres()
        return {}

    def info(self) -> StoreInfo:
        row = self._rows(
            "SELECT current_setting('server_version'), "
            "(SELECT extversion FROM pg_extension WHERE extname = 'vector'), "
            "(SELECT count(*) FROM memories), pg_database_size(current_database())"
        )[0]
        return StoreInfo(
            backend=self.backend,
            target=_redact(self.url),
            schema_version=self._schema_version,
            details={
                "dim": self.dim,
                "server_version": row[0],
                "pgvector_version": row[1],
                "memories": int(row[2]),
                "size_bytes": int(row[3]),
                "pool_size": self.settings.pg_pool_size,
                "hnsw_m": self.settings.hnsw_m,
                "hnsw_ef_construction": self.settings.hnsw_ef_construction,
                "hnsw_ef_search": self.settings.hnsw_ef_search,
            },
        )

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """Re-entrant per thread: inner blocks are savepoints of the thread's outer transaction."""
        outer: Conn | None = getattr(self._local, "conn", None)
        if outer is not None:
            with self._errors("savepoint failed"), outer.transaction():
                yield
            return
        if self._closed:
            raise StoreError("the PostgreSQL store is closed")
        with self._errors("transaction failed"), self._pool.connection() as conn, conn.transaction():
            self._local.conn = conn
            try:
                yield
            finally:
                self._local.conn = None
        self._maybe_analyze()

    def _maybe_analyze(self) -> None:
        """Refresh the planner's statistics after bulk inserts (outside any transaction).

        Autovacuum analyses a grown table only after a delay; until then the planner believes the
        new rows are not there and sorts whole partitions instead of using the HNSW index
        (measured: 26 ms instead of 1.2 ms for a k-NN query on 10k fresh rows).
        """
        if self._unanalyzed < self.settings.pg_analyze_after_rows or getattr(self._local, "conn", None) is not None:
            return
        with self._analyze_lock:
            if self._unanalyzed < self.settings.pg_analyze_after_rows:
                return
            self._unanalyzed = 0
            with self._errors("ANALYZE failed"), self._pool.connection() as conn:
                conn.execute("ANALYZE memories")

    def rebuild_indexes(self) -> None:
        """Rebuild the text index and the HNSW index (with the current m/ef_construction).

        Outside a transaction the indexes are rebuilt ``CONCURRENTLY``: other processes keep
        reading and writing meanwhile. Inside one, the rebuild locks the table until commit.
        """
        if getattr(self._local, "conn", None) is not None:
            with self._write() as conn:
                conn.execute("SET LOCAL maintenance_work_mem = '256MB'")
                conn.execute("REINDEX INDEX memories_tsv_idx")
                conn.execute(sql.SQL("DROP INDEX {}").format(sql.Identifier(_HNSW_INDEX)))
                conn.execute(_hnsw_ddl(self.settings))
            return
        with self._conn() as conn:
            conn.execute("SELECT pg_advisory_lock(%s)", (_REBUILD_LOCK,))
            try:
                self._rebuild_concurrently(conn)
            finally:
                conn.execute("SELECT pg_advisory_unlock(%s)", (_REBUILD_LOCK,))
                conn.execute("RESET maintenance_work_mem")

    def _rebuild_concurrently(self, conn: Conn) -> None:
        fresh = sql.Identifier(f"{_HNSW_INDEX}_new")
        conn.execute("SET maintenance_work_mem = '256MB'")
        conn.execute("REINDEX INDEX CONCURRENTLY memories_tsv_idx")
        conn.execute(sql.SQL("DROP INDEX CONCURRENTLY IF EXISTS {}").format(fresh))  # a failed earlier run
        conn.execute(_hnsw_ddl(self.settings, name=f"{_HNSW_INDEX}_new", concurrently=True))
        conn.execute(sql.SQL("DROP INDEX CONCURRENTLY {}").format(sql.Identifier(_HNSW_INDEX)))
        conn.execute(sql.SQL("ALTER INDEX {} RENAME TO {}").format(fresh, sql.Identifier(_HNSW_INDEX)))
        conn.execute("ANALYZE memories")

    # compaction --------------------------------------------------------------------------

    def _total_bytes(self, conn: Conn) -> int:
        row = conn.execute(
            "SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0) FROM pg_class c "
            "WHERE c.relkind = 'r' AND c.relname = ANY(%s) AND c.relnamespace = current_schema()::regnamespace",
            (list(_COMPACT_TABLES),),
        ).fetchone()
        return int(row[0]) if row else 0

    @staticmethod
    def _index_entries(conn: Conn) -> dict[str, int]:
        rows = conn.execute(
            "SELECT i.relname, i.reltuples FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid "
            "WHERE x.indrelid = 'memories'::regclass ORDER BY i.relname"
        ).fetchall()
        return {str(name): max(0, int(n)) for name, n in rows}

    def compact(self) -> CompactReport:
        import time as _time

        if getattr(self._local, "conn", None) is not None:
            raise InvalidInputError(
                "compact() cannot run inside a transaction (VACUUM and REINDEX CONCURRENTLY run on their own)"
            )
        started = _time.perf_counter()
        removed: Counter[str] = Counter()

        def on_notice(diag: psycopg.errors.Diagnostic) -> None:
            found = _VACUUM_REMOVED.search(diag.message_primary or "")
            if found:
                removed[found.group(1).rsplit(".", 1)[-1]] += int(found.group(2))

        with self._conn() as conn:
            conn.execute("SELECT pg_advisory_lock(%s)", (_REBUILD_LOCK,))
            conn.add_notice_handler(on_notice)
            try:
                report = CompactReport(
                    self.backend, self._total_bytes(conn), 0, index_entries_before=self._index_entries(conn)
                )
                conn.execute("SET maintenance_work_mem = '256MB'")
                for table in _COMPACT_TABLES:
                    conn.execute(sql.SQL("VACUUM (ANALYZE, VERBOSE) {}").format(sql.Identifier(table)))
                report.actions.append(f"VACUUM (ANALYZE) of {len(_COMPACT_TABLES)} tables")
                conn.execute("REINDEX TABLE CONCURRENTLY memories")
                conn.execute("ANALYZE memories")
                report.actions.append("REINDEX TABLE CONCURRENTLY memories (text, vector and column indexes)")
                report.index_entries_after = self._index_entries(conn)
                report.bytes_after = self._total_bytes(conn)
            finally:
                conn.remove_notice_handler(on_notice)
                conn.execute("RESET maintenance_work_mem")
                conn.execute("SELECT pg_advisory_unlock(%s)", (_REBUILD_LOCK,))
        report.rows_removed = {t: removed.get(t, 0) for t in _COMPACT_TABLES}
        report.seconds = _time.perf_counter() - started
        return report

    def duplicate_groups(self, flt: MemoryFilter) -> builtins.list[builtins.list[str]]:
        where, params = _filter_sql(flt)
        query = sql.SQL(
            "SELECT array_agg(id ORDER BY created_at, id) FROM memories WHERE {} "
            "GROUP BY partition, agent_id, content_hash HAVING count(*) > 1"
        ).format(where)
        return sorted(([str(i) for i in r[0]] for r in self._rows(query, params)), key=lambda g: g[0])

    # memories ----------------------------------------------------------------------------

    def insert(self, records: Sequence[MemoryRecord]) -> None:
        if not records:
            return
        rows = [_encode_record(r, self.dim) for r in records]
        for row in rows:  # a record at a quantised precision is stored as codes (+ sign bits)
            stored = stored_vector(row[_EMBEDDING], precision_value(row[_PRECISION]))
            row[_EMBEDDING] = stored.vector
            row += [stored.codes, _sign_bits([stored.codes], self.dim)[0] if stored.codes else None]
        query = sql.SQL("COPY memories ({}) FROM STDIN (FORMAT BINARY)").format(
            sql.SQL(", ").join(sql.Identifier(n) for n in (*_COLUMN_NAMES, "embedding_codes", "embedding_bits"))
        )
        with self._write() as conn, conn.cursor() as cur, cur.copy(query) as copy:
            copy.set_types([*(_COPY_TYPES[k] for _, k in _COLUMNS), "bytea", "bit"])
            for row in rows:
                copy.write_row(row)
        self._unanalyzed += len(records)
        self._maybe_analyze()

    def get(self, ids: Sequence[str]) -> dict[str, MemoryRecord]:
        if not ids:
            return {}
        query = sql.SQL("{} WHERE id = ANY(%s)").format(_SELECT_MEMORY)
        return {r.id: r for r in self._records(query, [_unique(ids)])}

    def update(self, record: MemoryRecord, *, expected_version: int | None = None) -> int:
        fields = {name: getattr(record, name) for name in _WRITABLE}
        return self._update(record.id, fields, expected_version)

    def update_fields(
        self,
        memory_id: str,
        fields: Mapping[str, Any],
        *,
        expected_version: int | None = None,
    ) -> int:
        return self._update(memory_id, field_changes(fields, _WRITABLE), expected_version)

    def _update(self, memory_id: str, fields: Mapping[str, Any], expected_version: int | None) -> int:
        assigns: builtins.list[sql.Composable] = [sql.SQL("version = version + 1")]
        params: builtins.list[Any] = []
        encoded = {name: _encode_value(name, _COLUMN_KIND[name], fields[name], self.dim) for name in sorted(fields)}
        with self._write() as conn:
            if "embedding" in fields or "embedding_precision" in fields:
                encoded.update(self._stored_embedding(conn, memory_id, fields))
            for name, value in encoded.items():
                assigns.append(sql.SQL("{} = %s").format(sql.Identifier(name)))
                params.append(value)
            query = sql.SQL("UPDATE memories SET {} WHERE id = %s").format(sql.SQL(", ").join(assigns))
            params.append(memory_id)
            if expected_version is not None:
                query = sql.SQL("{} AND version = %s").format(query)
                params.append(expected_version)
            query = sql.SQL("{} RETURNING version").format(query)
            row = conn.execute(query, params).fetchone()
            if row is not None:
                return int(row[0])
            current = conn.execute("SELECT version FROM memories WHERE id = %s", (memory_id,)).fetchone()
        if current is None:
            raise NotFoundError(f"no memory with id {memory_id!r}")
        raise ConflictError(f"memory {memory_id!r} is at version {current[0]}, not the expected {expected_version}")

    def _stored_embedding(self, conn: Conn, memory_id: str, fields: Mapping[str, Any]) -> dict[str, Any]:
        """The embedding columns a write of ``embedding``/``embedding_precision`` stores (embedding quantization:
        float32 in ``embedding``, or codes in ``embedding_codes``), from the locked current row."""
        row = conn.execute(
            "SELECT embedding, embedding_codes, embedding_precision FROM memories WHERE id = %s FOR UPDATE",
            (memory_id,),
        ).fetchone()
        if row is None:
            return {}  # the UPDATE finds no row and reports it
        vector = None if row[0] is None else _decode_value("embedding", "vector", row[0])
        current = StoredVector(vector, None if row[1] is None else bytes(row[1]), precision_value(row[2]))
        resolved = resolve_embedding(fields, current, self.dim)
        if resolved is None:
            return {}
        bits = _sign_bits([resolved.codes], self.dim)[0] if resolved.codes is not None else None
        return {
            "embedding": resolved.vector,
            "embedding_codes": resolved.codes,
            "embedding_bits": bits,
            "embedding_precision": resolved.precision.value,
        }

    def update_many(self, changes: Sequence[tuple[str, Mapping[str, Any]]]) -> None:
        groups = grouped_plain_changes(changes, _WRITABLE)
        if not groups:
            return
        with self._write() as conn, conn.cursor() as cur:
            for names, rows in groups.items():
                assigns = sql.SQL(", ").join(sql.SQL("{} = %s").format(sql.Identifier(n)) for n in names)
                query = sql.SQL("UPDATE memories SET {}, version = version + 1 WHERE id = %s").format(assigns)
                params = [
                    [*(_encode_value(n, _COLUMN_KIND[n], fields[n], self.dim) for n in names), mid]
                    for mid, fields in rows
                ]
                cur.executemany(query, params)

    def update_fields_many(self, changes: Sequence[tuple[str, Mapping[str, Any], int | None]]) -> builtins.list[str]:
        groups, versions = unique_changes(changes, _WRITABLE)
        if not groups:
            return []
        written: set[str] = set()
        with self._write() as conn, conn.cursor() as cur:
            for names, rows in groups.items():
                assigns = sql.SQL(", ").join(sql.SQL("{} = %s").format(sql.Identifier(n)) for n in names)
                query = sql.SQL(
                    "UPDATE memories SET {}, version = version + 1 "
                    "WHERE id = %s AND (%s::bigint IS NULL OR version = %s) RETURNING id"
                ).format(assigns)
                params = [
                    [
                        *(_encode_value(n, _COLUMN_KIND[n], fields[n], self.dim) for n in names),
                        mid,
                        versions[mid],
                        versions[mid],
                    ]
                    for mid, fields in rows
                ]
                cur.executemany(query, params, returning=True)
                while True:  # one result per row: the id when the compare-and-set matched
                    row = cur.fetchone()
                    if row is not None:
                        written.add(row[0])
                    if not cur.nextset():
                        break
        return [mid for mid in versions if mid in written]

    def set_embedding_precision(self, changes: Sequence[tuple[str, Precision, int | None]]) -> builtins.list[str]:
        targets, versions = precision_changes(changes)
        if not targets:
            return []
        with self._write() as conn, conn.cursor() as cur:
            rows = cur.execute(
                "SELECT id, version, embedding, embedding_codes, embedding_precision FROM memories "
                "WHERE id = ANY(%s) FOR UPDATE",
                [list(targets)],
            ).fetchall()
            current = {
                r[0]: StoredVector(
                    None if r[2] is None else _decode_value("embedding", "vector", r[2]),
                    None if r[3] is None else bytes(r[3]),
                    precision_value(r[4]),
                )
                for r in rows
                if versions[r[0]] in (None, int(r[1]))
            }
            new = reencode(current, targets, self.dim)
            if new:
                cur.executemany(
                    "UPDATE memories SET embedding = %s, embedding_codes = %s, embedding_bits = %s, "
                    "embedding_precision = %s, version = version + 1 WHERE id = %s",
                    [
                        (sv.vector, sv.codes, bits, sv.precision.value, mid)
                        for (mid, sv), bits in zip(
                            new.items(), _batch_bits([sv.codes for sv in new.values()], self.dim), strict=True
                        )
                    ],
                )
        return [mid for mid in targets if mid in new]

    def delete(self, ids: Sequence[str]) -> int:
        if not ids:
            return 0
        id_list = _unique(ids)
        with self._write() as conn:
            for table in _DEPENDENT_TABLES:
                conn.execute(
                    sql.SQL("DELETE FROM {} WHERE memory_id = ANY(%s)").format(sql.Identifier(table)),
                    (id_list,),
                )
            conn.execute("DELETE FROM coactivations WHERE a_id = ANY(%s) OR b_id = ANY(%s)", (id_list, id_list))
            cur = conn.execute("DELETE FROM memories WHERE id = ANY(%s)", (id_list,))
            return cur.rowcount

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
        where, params = _filter_sql(flt)
        # NULLs sort as the smallest value (as in SQLite): first ascending, last descending
        direction = sql.SQL("DESC NULLS LAST" if descending else "ASC NULLS FIRST")
        id_direction = sql.SQL("DESC" if descending else "ASC")
        query = sql.SQL("{} WHERE {} ORDER BY {} {}, id {} LIMIT %s OFFSET %s").format(
            _SELECT_MEMORY, where, sql.Identifier(order_by), direction, id_direction
        )
        return self._records(query, [*params, limit, offset])

    def scan(
        self, flt: MemoryFilter, *, batch_size: int = 1000, omit: frozenset[str] = frozenset(), after: str = ""
    ) -> Iterator[builtins.list[MemoryRecord]]:
        if batch_size < 1:
            raise InvalidInputError("batch_size must be positive")
        names = scan_fields(omit, _COLUMN_NAMES)
        select, decode = (_SELECT_MEMORY, _decode_record) if names == _COLUMN_NAMES else _partial_select(names)
        where, params = _filter_sql(flt)
        query = sql.SQL("{} WHERE {} AND id > %s ORDER BY id LIMIT %s").format(select, where)
        while True:
            batch = [decode(row) for row in self._rows(query, [*params, after, batch_size], binary=True)]
            if not batch:
                return
            yield batch
            if len(batch) < batch_size:
                return
            after = batch[-1].id

    def count(self, flt: MemoryFilter) -> int:
        where, params = _filter_sql(flt)
        return int(self._rows(sql.SQL("SELECT count(*) FROM memories WHERE {}").format(where), params)[0][0])

    def ids_with_prefix(self, prefix: str, *, limit: int = 10) -> builtins.list[str]:
        if not prefix or limit < 1:
            return []
        # a range on the primary key (COLLATE "C": byte order), not LIKE: uses the index, no wildcards
        rows = self._rows(
            sql.SQL("SELECT id FROM memories WHERE id >= %s AND id < %s ORDER BY id LIMIT %s"),
            [prefix, prefix + ID_PREFIX_UPPER, limit],
        )
        return [str(r[0]) for r in rows]

    def users(self, *, limit: int = 50) -> builtins.list[tuple[str | None, int]]:
        rows = self._rows(
            sql.SQL(
                "SELECT user_id, count(*) AS n FROM memories GROUP BY user_id "
                "ORDER BY n DESC, user_id NULLS FIRST LIMIT %s"
            ),
            [max(limit, 0)],
        )
        return [(None if r[0] is None else str(r[0]), int(r[1])) for r in rows]

    def versions(self, ids: Sequence[str]) -> dict[str, int]:
        if not ids:
            return {}
        rows = self._rows(sql.SQL("SELECT id, version FROM memories WHERE id = ANY(%s)"), [list(dict.fromkeys(ids))])
        return {str(mid): int(version) for mid, version in rows}

    def entity_counts(self, flt: MemoryFilter) -> dict[tuple[str | None, str], int]:
        where, params = _filter_sql(flt)
        query = sql.SQL(
            "SELECT user_id, e.entity, count(*) FROM memories, "
            "LATERAL (SELECT DISTINCT value AS entity FROM jsonb_array_elements_text(entities)) AS e "
            "WHERE {} GROUP BY user_id, e.entity"
        ).format(where)
        return {(user, entity): int(n) for user, entity, n in self._rows(query, params)}

    def stats(self, flt: MemoryFilter) -> builtins.list[LayerStats]:
        where, params = _filter_sql(flt)
        query = sql.SQL(
            "SELECT layer, status, count(*), avg(energy), min(energy), max(energy) FROM memories "
            "WHERE {} GROUP BY layer, status ORDER BY layer, status"
        ).format(where)
        return [
            LayerStats(Layer(r[0]), Status(r[1]), int(r[2]), float(r[3]), float(r[4]), float(r[5]))
            for r in self._rows(query, params)
        ]

    def find_by_hash(self, flt: MemoryFilter, content_hash: str) -> MemoryRecord | None:
        where, params = _filter_sql(flt)
        query = sql.SQL("{} WHERE content_hash = %s AND {} ORDER BY created_at DESC, id DESC LIMIT 1").format(
            _SELECT_MEMORY, where
        )
        found = self._records(query, [content_hash, *params])
        return found[0] if found else None

    # search ------------------------------------------------------------------------------

    def vector_search(self, vector: Vector, flt: MemoryFilter, k: int) -> builtins.list[ScoredId]:
        query_vec = check_vector(vector, self.dim)
        if k <= 0:
            return []
        where, params = _filter_sql(flt)
        if flt.stores is None or StoreTier.COLD in flt.stores:
            depth = max(_PREFILTER[0], _PREFILTER[1] * k)
            found = self._rows(
                _SEARCH_COLD_QUERY.format(where=where), [query_vec, *params, k, *params, Bit(query_vec > 0), depth]
            )
        else:
            found = self._rows(_SEARCH_QUERY.format(where=where), [query_vec, *params, k, *params])
        rows = [row for row in found if row[2] is None]
        if len(rows) < k:
            # the HNSW scan stops after hnsw.max_scan_tuples: when a filter the planner cannot
            # see through rejects most neighbours, fall back to an exact scan of what passes
            rows = self._rows(_EXACT_QUERY.format(where), [query_vec, *params, k])
        hits = [ScoredId(row[0], _cosine(row[1])) for row in rows]
        coded = [row for row in found if row[2] is not None]
        if coded:  # quantised rows, scored exactly with the mixed-precision similarity
            unit = query_vec / (float(np.linalg.norm(query_vec)) or 1.0)
            scores = np.einsum("ij,j->i", vector_codec.search_rows([row[2] for row in coded], self.dim), unit)
            hits += [ScoredId(row[0], min(1.0, max(-1.0, float(s)))) for row, s in zip(coded, scores, strict=True)]
        hits.sort(key=lambda h: (-h.score, h.id))
        return hits[:k]

    def text_search(self, query: str, flt: MemoryFilter, k: int) -> builtins.list[ScoredId]:
        words = query_terms(query)
        if not words or k <= 0:
            return []
        terms = self._selective_tsquery(words)
        where, params = _filter_sql(flt)
        stmt = sql.SQL(
            "SELECT id, ts_rank(tsv, q) AS score FROM memories, to_tsquery('english', %s) AS q "
            "WHERE tsv @@ q AND {} ORDER BY score DESC, id LIMIT %s"
        ).format(where)
        return [ScoredId(row[0], float(row[1])) for row in self._rows(stmt, [terms, *params, k])]

    def _selective_tsquery(self, words: builtins.list[str]) -> str:
        """An OR tsquery of the selective words (the same rule as SQLite's: a word found in at least
        ``storage.fts_common_docs`` rows is left out when rarer words exist, ANDed when none do)."""
        if len(words) == 1:
            return f"'{words[0]}'"
        common = self._common_words(words, self.settings.fts_common_docs)
        rare = [w for w in words if w not in common]
        if rare:
            return " | ".join(f"'{w}'" for w in rare)
        return " & ".join(f"'{w}'" for w in words)

    def _common_words(self, words: builtins.list[str], cap: int) -> set[str]:
        """The words found in at least ``cap`` rows: counted up to ``cap``, or estimated from the
        planner's statistics where they decide it.

        Counting reads a heap row per match through the GIN index (~2,000 random page reads for a
        word near the cap). Once ANALYZE has run, ``pg_stats.most_common_elems`` holds the share of
        rows containing each frequent lexeme (from a 30,000-row sample, so exact for a smaller table
        as of that ANALYZE; this store analyses after ``storage.pg_analyze_after_rows`` inserts,
        autovacuum too); a lexeme missing from the list is rarer than its least frequent entry.
        Only a word the statistics cannot place (no statistics yet, a list cut off above the cap,
        a word that is several lexemes) is counted.
        """
        return {row[0] for row in self._rows(_COMMON_WORDS_QUERY, {"words": words, "cap": cap}) if row[1]}

    def embeddings(self, ids: Sequence[str]) -> dict[str, Vector]:
        if not ids:
            return {}
        rows = self._rows(
            "SELECT id, embedding, embedding_codes FROM memories WHERE id = ANY(%s) "
            "AND (embedding IS NOT NULL OR embedding_codes IS NOT NULL)",
            [_unique(ids)],
        )
        out = {row[0]: _decode_value("embedding", "vector", row[1]) for row in rows if row[1] is not None}
        quantised = [row for row in rows if row[1] is None]
        if quantised:  # dequantised
            vecs = vector_codec.decode_rows([bytes(row[2]) for row in quantised], self.dim)
            out.update({row[0]: vec for row, vec in zip(quantised, vecs, strict=True)})
        return out

    # hooks of the shared tables --------------------------------------------------------------

    @contextmanager
    def _reading(self, what: str) -> Iterator[Session]:
        with self._conn() as conn:
            yield _Session(conn)

    @contextmanager
    def _writing(self, what: str) -> Iterator[Session]:
        with self._write() as conn:
            yield _Session(conn)

    def _memory_condition(self, flt: MemoryFilter, alias: str) -> tuple[str, builtins.list[Any]]:
        where, params = _filter_sql(flt, alias=alias)
        return where.as_string(), params

    # erasure of one user -----------------------------------------------------------------------

    def reclaim(self) -> None:
        # VACUUM removes dead row versions and their entries in every index (the HNSW graph and the text
        # index included); it cannot run inside a transaction: a pooled autocommit connection
        with self._errors("VACUUM failed"), self._pool.connection() as conn:
            for table in _RECLAIMED:
                conn.execute(sql.SQL("VACUUM {}").format(sql.Identifier(table)))

    def delete_partition_rows(self, user_id: str | None, *, dry_run: bool = False) -> dict[str, int]:
        return self._partition_rows(user_id, dry_run=dry_run)


#: tables that hold a memory's words or scope, vacuumed after an erasure
_RECLAIMED: Final = (
    "memories",
    "relations",
    "history",
    "access_log",
    "boxes",
    "state",
    "clusters",
    "cluster_members",
    "working_memory",
    "synaptic_tags",
    "coactivations",
)

__all__ = ["MIGRATIONS", "PostgresStore"]
