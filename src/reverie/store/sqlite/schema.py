"""The SQLite schema: every table, index and trigger, as named migrations applied in order."""

from __future__ import annotations

from typing import Final

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
#: over one user's memories sorted the whole partition (quadratic over the pass)
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
