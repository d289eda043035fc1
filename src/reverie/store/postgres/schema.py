"""The PostgreSQL schema: named migrations applied once, in one transaction, under an advisory lock."""

from __future__ import annotations

import builtins
from collections.abc import Callable, Sequence
from typing import Final, LiteralString

import numpy as np
from pgvector import Bit, HalfVector
from pgvector.psycopg import register_vector
from psycopg import sql

from reverie import vector_codec
from reverie.config.core import StorageSettings
from reverie.errors import MigrationError, StoreError
from reverie.store.postgres.codec import Conn, jsonb_param

#: pg_advisory_xact_lock key serialising migrations ("reverie" in ASCII)
_MIGRATION_LOCK: Final = 0x72657665726965
#: pg_advisory_lock key serialising concurrent index rebuilds
REBUILD_LOCK: Final = 0x72657665726966
HNSW_INDEX: Final = "memories_embedding_hnsw"
#: the HNSW graph over the quantised (cold) memories' vectors (``embedding_half``)
COLD_HNSW_INDEX: Final = "memories_cold_hnsw"
#: ef_construction of that graph. The default model's vectors share one direction, so their neighbourhoods are
#: close together and the graph needs a wider build to find them: on 20k quantised ``scale.py`` vectors (e5, int8),
#: searched with ef_search 96 for 200 candidates, the share of the exact top 10 found was 0.973 built with 128
#: (the float32 graph's default), 0.989 with 200; the top 60: 0.975 and 0.988
COLD_EF_CONSTRUCTION: Final = 200

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


def _migrate_core(conn: Conn, dim: int, settings: StorageSettings) -> None:
    conn.execute(sql.SQL(_M0001_CORE).format(dim=sql.Literal(dim)))
    conn.execute(hnsw_ddl(settings))
    conn.execute("INSERT INTO meta (key, value) VALUES ('dim', %s)", (jsonb_param(dim, "dim"),))


def _migrate_engine_tables(conn: Conn, dim: int, settings: StorageSettings) -> None:
    conn.execute(_M0002_ENGINE_TABLES)


def hnsw_ddl(settings: StorageSettings, *, name: str = HNSW_INDEX, concurrently: bool = False) -> sql.Composed:
    """The HNSW graph over the float32 vectors."""
    return _hnsw(name, "embedding vector_cosine_ops", settings.hnsw_m, settings.hnsw_ef_construction, concurrently)


def cold_hnsw_ddl(
    settings: StorageSettings, *, name: str = COLD_HNSW_INDEX, concurrently: bool = False
) -> sql.Composed:
    """The HNSW graph over the quantised memories' unit vectors in half precision: L2 between unit vectors orders as
    the cosine does, and it is the cheapest distance pgvector computes."""
    ef_construction = max(settings.hnsw_ef_construction, COLD_EF_CONSTRUCTION)
    return _hnsw(name, "embedding_half halfvec_l2_ops", settings.hnsw_m, ef_construction, concurrently)


def _hnsw(name: str, column_ops: LiteralString, m: int, ef_construction: int, concurrently: bool) -> sql.Composed:
    return sql.SQL("CREATE INDEX {} {} ON memories USING hnsw ({}) WITH (m = {}, ef_construction = {})").format(
        sql.SQL("CONCURRENTLY" if concurrently else ""),
        sql.Identifier(name),
        sql.SQL(column_ops),
        sql.Literal(m),
        sql.Literal(ef_construction),
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


#: the meta key of the centre the sign bits are taken around (a JSON list of floats)
BITS_CENTER_KEY: Final = "bits_center"
#: float32 rows averaged for the centre (a sample: the mean of a model's vectors settles long before this)
_CENTER_SAMPLE: Final = 20_000


def _units(vectors: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(vectors, axis=-1, keepdims=True)
    return vectors / np.where(norms == 0, 1.0, norms)


def sign_bits(blobs: Sequence[bytes], dim: int, center: np.ndarray | None) -> builtins.list[Bit]:
    """The ``embedding_bits`` of code blobs: the signs of their dequantised unit vectors around ``center``.

    Many embedding models put every vector near one common direction (multilingual-e5-small: cosines of
    unrelated texts around 0.75), so most raw signs are the same for every memory and the Hamming distance
    between them hardly tells neighbours apart. Around the mean of the store's vectors the signs split the
    space evenly: on 6,960 texts (LoCoMo's turns and others) with e5, the 400 nearest by signs around zero held
    70.3% of the int8 cosine top 10, around the mean 98.1% (bench/sign_bits.py)."""
    if not blobs:
        return []
    units = _units(vector_codec.decode_rows(blobs, dim))
    if center is not None:
        units = units - center
    return [Bit(row > 0) for row in units]


def half_vectors(codes: Sequence[bytes | None], dim: int) -> builtins.list[HalfVector | None]:
    """The ``embedding_half`` of code blobs (``None`` where there is none), in order: each blob's dequantised
    vector as a unit vector in half precision, what the cold store's HNSW graph (:func:`cold_hnsw_ddl`) holds.
    Its order is only a prefilter: the candidates are scored again from their code blobs."""
    present = [c for c in codes if c is not None]
    units = iter(_units(vector_codec.decode_rows(present, dim)) if present else ())
    return [HalfVector(next(units)) if c is not None else None for c in codes]


def query_half(vector: np.ndarray) -> HalfVector:
    """A query as the cold store's graph compares it (:func:`half_vectors`: a unit vector)."""
    return HalfVector(_units(np.asarray(vector, dtype=np.float32)))


def load_center(conn: Conn) -> np.ndarray | None:
    """The centre of the sign bits, once fixed (:func:`fix_center`; migration 0012 only)."""
    row = conn.execute("SELECT value FROM meta WHERE key = %s", (BITS_CENTER_KEY,)).fetchone()
    return None if row is None else np.asarray(row[0], dtype=np.float32)


def fix_center(conn: Conn, dim: int, blobs: Sequence[bytes]) -> np.ndarray | None:
    """The centre of the sign bits, fixed on first need: the mean unit vector of (a sample of) the float32
    rows, else of the code blobs about to be written. Every bit is taken around it from then on; a concurrent
    writer that fixed it first wins."""
    row = conn.execute(
        "SELECT avg(l2_normalize(embedding))::real[] FROM (SELECT embedding FROM memories "
        "WHERE embedding IS NOT NULL LIMIT %s) s",
        (_CENTER_SAMPLE,),
    ).fetchone()
    if row is not None and row[0] is not None:
        center = np.asarray(row[0], dtype=np.float32)
    elif blobs:
        center = _units(vector_codec.decode_rows(blobs, dim)).mean(axis=0)
    else:
        return None
    conn.execute(
        "INSERT INTO meta (key, value) VALUES (%s, %s) ON CONFLICT (key) DO NOTHING",
        (BITS_CENTER_KEY, jsonb_param([float(x) for x in center], BITS_CENTER_KEY)),
    )
    return load_center(conn)


#: entity hub: MemoryFilter.entities (any-of) is ``entities ?| array`` over this GIN index
_M0005_ENTITY_INDEX: Final[LiteralString] = "CREATE INDEX memories_entities_idx ON memories USING gin (entities)"


def _migrate_entity_index(conn: Conn, dim: int, settings: StorageSettings) -> None:
    conn.execute(_M0005_ENTITY_INDEX)


def _migrate_scan_index(conn: Conn, dim: int, settings: StorageSettings) -> None:
    """A user-scoped scan (the dream cycle's passes) walks (partition, id) in order instead of sorting
    the partition for every batch."""
    conn.execute("CREATE INDEX memories_partition_id_idx ON memories (partition, id)")


def _migrate_read_latency(conn: Conn, dim: int, settings: StorageSettings) -> None:
    """Two layouts that keep reads off avoidable work (bench/scale.py measures them).

    * Free space in every heap page written from now on (``storage.pg_fillfactor``): the access
      updates of a search change no indexed column, so with room on the page they are HOT updates
      instead of new entries in all ten indexes, the HNSW graph among them (with full pages nearly
      none of them are). Pages written before keep their layout until the table is rewritten (VACUUM FULL).
    * No pending list on the GIN indexes: with ``fastupdate`` every query scans the whole list of
      not yet merged entries (up to 4 MB after a bulk load) before the index proper, which costs
      many times the index lookup. Entries now go straight into the index; the list left is merged here.
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


def _migrate_float_index(conn: Conn, dim: int, settings: StorageSettings) -> None:
    """The rows of a scope that hold a float32 vector, found without reading the others: the vector search's
    exact part (and its fallback when a filter rejects most HNSW neighbours) read every row of a scope to keep
    those with a vector. After a dream has quantised a user's cold store, a cold-store search read all of it to
    find none (20k quantised rows: ~20 ms twice per search); the quantised rows have their own index
    (``memories_quantized_idx``)."""
    conn.execute("CREATE INDEX memories_float_idx ON memories (partition, store, status) WHERE embedding IS NOT NULL")


def _migrate_bits_center(conn: Conn, dim: int, settings: StorageSettings) -> None:
    """Sign bits taken around the mean of the store's vectors (:func:`sign_bits`): the quantised rows written
    before get theirs again, in batches."""
    sample = [
        bytes(r[0])
        for r in conn.execute(
            "SELECT embedding_codes FROM memories WHERE embedding_codes IS NOT NULL LIMIT %s", (_CENTER_SAMPLE,)
        )
    ]
    if not sample:
        return  # fixed when the first memory is quantised
    register_vector(conn)  # the migrating connection is not one of the pool's
    center = fix_center(conn, dim, sample)
    _rewrite_quantised(conn, "embedding_bits", lambda blobs: sign_bits(blobs, dim, center))


def _rewrite_quantised(conn: Conn, column: LiteralString, values: Callable[[list[bytes]], Sequence[object]]) -> None:
    """Set ``column`` of every quantised row to ``values`` of its code blob, in batches of 2,000 in id order."""
    last = ""
    while True:
        rows = conn.execute(
            "SELECT id, embedding_codes FROM memories WHERE embedding_codes IS NOT NULL AND id > %s "
            "ORDER BY id LIMIT 2000",
            (last,),
        ).fetchall()
        if not rows:
            return
        computed = values([bytes(r[1]) for r in rows])
        with conn.cursor() as cur:
            cur.executemany(
                sql.SQL("UPDATE memories SET {} = %s WHERE id = %s").format(sql.Identifier(column)),
                [(v, r[0]) for v, r in zip(computed, rows, strict=True)],
            )
        last = rows[-1][0]


def _migrate_cold_index(conn: Conn, dim: int, settings: StorageSettings) -> None:
    """An index the cold store's vector search uses, so that its cost does not grow with the cold store.

    The search ranked every quantised row of the scope by the Hamming distance of its sign bits (``embedding_bits``)
    and sent the best 2,400 code blobs for a pool of 60: ~30 ms of SQL at 20k cold memories, growing with them.
    Each quantised row now also holds its unit vector in half precision (``embedding_half``, 2 bytes a dimension)
    in an HNSW graph (:func:`cold_hnsw_ddl`) that the planner walks with the scope's filter pushed in (iterative
    index scans), or passes over for a scope small enough to sort; a few hundred candidates are sent and scored
    again from their code blobs. The sign bits and their centre are dropped."""
    conn.execute(sql.SQL("ALTER TABLE memories ADD COLUMN embedding_half halfvec({})").format(sql.Literal(dim)))
    register_vector(conn)  # the migrating connection is not one of the pool's
    _rewrite_quantised(conn, "embedding_half", lambda blobs: half_vectors(blobs, dim))
    conn.execute("SET LOCAL maintenance_work_mem = '256MB'")
    conn.execute(cold_hnsw_ddl(settings))
    conn.execute("ALTER TABLE memories DROP COLUMN embedding_bits")
    conn.execute("DELETE FROM meta WHERE key = %s", (BITS_CENTER_KEY,))


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
    ("0011_float_index", _migrate_float_index),
    ("0012_bits_center", _migrate_bits_center),
    ("0013_cold_index", _migrate_cold_index),
)


def run_migrations(conn: Conn, dim: int, settings: StorageSettings) -> int:
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
