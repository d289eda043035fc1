"""The storage contract: the only interface between the engine and SQL.

Two backends implement :class:`Store` — :mod:`reverie.store.sqlite` (embedded default) and
:mod:`reverie.store.postgres` (pgvector, many processes). Both pass one contract test suite
(``tests/store/test_contract.py``). Nothing outside ``store/`` knows which one it talks to.

:class:`Store` is the union of role interfaces, each a protocol of its own: :class:`StoreAdmin`
(transactions, maintenance), :class:`MemoryStore`, :class:`SearchStore`, :class:`GraphStore`
(relations, clusters), :class:`SessionStore` (working memory, synaptic tags, memory boxes),
:class:`LedgerStore` (history, access log, action telemetry, co-activations),
:class:`CoordinationStore` (claims, key/value state) and :class:`KeyStore` (API keys).

Conventions every backend follows:

* ``user_id`` is the isolation boundary: a :class:`MemoryFilter` always names one user
  partition (``None`` is the anonymous user, matched by SQL ``NULL``), unless ``all_users``.
* Writes inside ``with store.transaction():`` commit together or not at all; outside, each call
  is its own transaction. Transactions nest (inner ones join the outer one).
* Every write of a memory bumps ``version``; ``expected_version`` turns a write into an
  optimistic compare-and-set that raises :class:`~reverie.errors.ConflictError` on mismatch.
* Driver exceptions never escape: they are re-raised as :class:`~reverie.errors.StoreError`
  (``raise StoreError(...) from exc``).
* Vector similarity is cosine similarity in [-1, 1] (vectors are L2-normalised), higher first.
  Text scores are "higher is better" (BM25 negated on SQLite, ``ts_rank`` on PostgreSQL).
* Quantised embeddings: a memory's ``embedding_precision`` says how its embedding is
  stored — float32, or codes of :mod:`reverie.vector_codec` (int8/int4/int2). Records and
  :meth:`Store.embeddings` always carry float32 (dequantised) vectors. A write of ``embedding``
  stores it at the memory's (or the written) precision; a write of ``embedding_precision`` alone
  re-encodes the stored embedding; writing back an unchanged dequantised vector keeps the codes.
  Quantised memories are never in the float32 ANN index: a vector search that reaches the cold
  store ranks them with the mixed-precision similarity (``vector_codec.mixed_similarity``), and a
  search of the hot store alone still finds a quantised memory that was moved back to hot.
"""

from __future__ import annotations

import builtins
import os
from collections.abc import Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol, runtime_checkable

from reverie.model import (
    AccessEvent,
    ActionEvent,
    CoActivation,
    HistoryEvent,
    Layer,
    MemoryRecord,
    Precision,
    Relation,
    RelationType,
    Status,
    StoreTier,
    Vector,
)


@dataclass(slots=True)
class MemoryFilter:
    """Which memories an operation sees.

    ``None`` in a set-valued field means "any". ``statuses`` and ``stores`` default to what a
    plain search sees: active memories in the hot store.
    """

    user_id: str | None = None
    all_users: bool = False
    agent_id: str | None = None
    session_id: str | None = None
    layers: frozenset[Layer] | None = None
    statuses: frozenset[Status] | None = frozenset({Status.ACTIVE})
    stores: frozenset[StoreTier] | None = frozenset({StoreTier.HOT})
    categories: frozenset[str] | None = None
    pinned: bool | None = None
    ids: frozenset[str] | None = None
    #: bitemporal point-in-time: valid_from <= t < valid_until (NULLs are open ends)
    valid_at: datetime | None = None
    #: only memories recorded at or before this instant (bitemporal "as known then")
    recorded_before: datetime | None = None
    #: only memories recorded at or after this instant (a session's turns after one of them)
    recorded_after: datetime | None = None
    #: equality on top-level metadata keys (JSON scalars)
    metadata: Mapping[str, Any] | None = None
    #: memories naming any of these entity URIs (exact, e.g. ``entity://tech/react``; the entity hub)
    entities: frozenset[str] | None = None

    @property
    def partition(self) -> str:
        return self.user_id or ""

    @classmethod
    def everything(cls, **kw: Any) -> MemoryFilter:
        """Every memory of every user, in every status and store (admin views, dream cycle)."""
        kw.setdefault("all_users", True)
        kw.setdefault("statuses", None)
        kw.setdefault("stores", None)
        return cls(**kw)


@dataclass(frozen=True, slots=True)
class LayerStats:
    """The energy model's health check row: count and energy aggregate per layer and status."""

    layer: Layer
    status: Status
    count: int
    energy_avg: float
    energy_min: float
    energy_max: float


@dataclass(frozen=True, slots=True)
class ScoredId:
    """A search hit from one channel: the memory id and that channel's score."""

    id: str
    score: float


@dataclass(slots=True)
class StoreInfo:
    """What a backend reports about itself (``Memory.stats()`` shows it)."""

    backend: str
    target: str
    schema_version: int
    details: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True)
class WorkingItem:
    """One entry of a session's working memory (max 9 per session)."""

    session_id: str
    memory_id: str
    importance: float
    added_at: datetime
    last_accessed: datetime
    access_count: int = 0


@dataclass(slots=True)
class SynapticTag:
    """Synaptic tag: a weak memory waiting, for its TTL, to be captured by a strong one."""

    memory_id: str
    session_id: str
    tagged_at: datetime
    expires_at: datetime
    captured: bool = False


@dataclass(slots=True)
class Box:
    """Memory box: memories of one topic episode; sealed boxes are woven into traces."""

    id: str
    user_id: str | None
    session_id: str | None
    opened_at: datetime
    last_at: datetime
    topic: list[str] = field(default_factory=list)
    sealed_at: datetime | None = None
    trace_id: str | None = None
    memory_count: int = 0


@dataclass(slots=True)
class Cluster:
    """A group of memories (a semantic cluster of the energy model): ``members`` maps memory id → weight.

    ``user_id`` is the partition the cluster belongs to; ``kind`` says which rule formed it
    (e.g. ``"coactivation"``).
    """

    id: str
    user_id: str | None
    kind: str
    created_at: datetime
    updated_at: datetime
    members: dict[str, float] = field(default_factory=dict)
    label: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True)
class CompactReport:
    """What :meth:`Store.compact` did and reclaimed.

    ``bytes_before``/``bytes_after``: the store's size on disk (SQLite: the database, its write-ahead log
    and the vector index files; PostgreSQL: reverie's tables with their indexes and TOAST). ``rows_removed``:
    rows deleted per table (change-log entries no reader needs, dead row versions vacuumed away).
    ``index_entries_before``/``after``: entries per index (SQLite: vectors in the vector index, deleted
    marks included, and the full-text index's segment rows; PostgreSQL: the planner's entry count per index
    of the memories table). ``actions``: what ran, in order."""

    backend: str
    bytes_before: int
    bytes_after: int
    rows_removed: dict[str, int] = field(default_factory=dict)
    index_entries_before: dict[str, int] = field(default_factory=dict)
    index_entries_after: dict[str, int] = field(default_factory=dict)
    actions: builtins.list[str] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def reclaimed_bytes(self) -> int:
        return max(0, self.bytes_before - self.bytes_after)

    def to_dict(self) -> dict[str, Any]:
        return {
            "backend": self.backend,
            "bytes_before": self.bytes_before,
            "bytes_after": self.bytes_after,
            "reclaimed_bytes": self.reclaimed_bytes,
            "rows_removed": dict(self.rows_removed),
            "index_entries_before": dict(self.index_entries_before),
            "index_entries_after": dict(self.index_entries_after),
            "index_entries_removed": {
                k: max(0, v - self.index_entries_after.get(k, 0)) for k, v in self.index_entries_before.items()
            },
            "actions": list(self.actions),
            "seconds": round(self.seconds, 3),
        }


@dataclass(slots=True)
class ApiKey:
    """A stored API key (see :mod:`reverie.auth`): never the key itself, only its SHA-256.

    ``user_ids`` are the users it may read and write; ``agent_ids`` (``None``: any) narrows it to
    those agents; ``admin`` keys reach every user, the all-users views, export and key management."""

    id: str
    name: str
    key_hash: str
    created_at: datetime
    admin: bool = False
    user_ids: tuple[str, ...] = ()
    agent_ids: tuple[str, ...] | None = None
    revoked_at: datetime | None = None
    last_used_at: datetime | None = None


ORDERABLE_FIELDS = frozenset(
    {
        "created_at",
        "updated_at",
        "recorded_at",
        "valid_from",
        "last_accessed_at",
        "importance",
        "utility",
        "energy",
        "access_count",
    }
)


@runtime_checkable
class StoreAdmin(Protocol):
    """Opening, transactions, maintenance and the erasure of a user partition's non-memory rows."""

    backend: str

    def close(self) -> None: ...

    def info(self) -> StoreInfo: ...

    def transaction(self) -> AbstractContextManager[None]: ...

    def rebuild_indexes(self) -> None:
        """Rebuild every derived index (FTS, ANN) from the rows. Idempotent."""
        ...

    def backup(self, dest: str | os.PathLike[str]) -> dict[str, Any]:
        """Copy the live store to ``dest`` consistently (see :mod:`reverie.store.backup`); a backend
        with its own tools for this (PostgreSQL: ``pg_dump``) raises ConfigError saying how."""
        ...

    def compact(self) -> CompactReport:
        """Reclaim space and optimise the indexes; changes no memory (what a search finds stays the same).

        SQLite: trims the vector change log to its last entry (a process whose index is older reloads
        it), optimises the full-text index, rebuilds the vector index without its deleted entries, then
        VACUUM, ANALYZE and a truncating WAL checkpoint. PostgreSQL: VACUUM (ANALYZE) of every reverie
        table and REINDEX CONCURRENTLY of the memories table's indexes (readers and writers go on).
        Not inside a transaction (InvalidInputError)."""
        ...

    def duplicate_groups(self, flt: MemoryFilter) -> builtins.list[builtins.list[str]]:
        """Ids of the memories passing ``flt`` that share their user, agent and content hash, one list per
        group of two or more, each oldest first (ties by id); groups ordered by their first id."""
        ...

    def reclaim(self) -> None:
        """After an erasure: make the deleted rows' old versions and index entries go from disk now
        (PostgreSQL: VACUUM of the tables holding memory data; SQLite: nothing to do, freed pages
        are overwritten as they are freed). Outside any transaction."""
        ...

    def delete_partition_rows(self, user_id: str | None, *, dry_run: bool = False) -> dict[str, int]:
        """Remove the rows of one user partition that are not memories (memory boxes, clusters); the
        memories themselves go through :meth:`delete`. Returns how many rows of each kind went (with
        ``dry_run``: would go; nothing changes)."""
        ...


@runtime_checkable
class MemoryStore(Protocol):
    """Memories: insert, read, update, delete, list and count."""

    def insert(self, records: Sequence[MemoryRecord]) -> None:
        """Insert new memories atomically (all or none). Duplicate ids raise ConflictError."""
        ...

    def get(self, ids: Sequence[str]) -> dict[str, MemoryRecord]:
        """The memories with these ids, in any status or store; unknown ids are absent."""
        ...

    def update(self, record: MemoryRecord, *, expected_version: int | None = None) -> int:
        """Write every field of ``record`` (which must exist). Returns the new version.

        Re-embeds nothing: the caller sets ``record.embedding``. Content changes refresh the
        text index; embedding changes refresh the vector index.
        """
        ...

    def update_fields(
        self,
        memory_id: str,
        fields: Mapping[str, Any],
        *,
        expected_version: int | None = None,
    ) -> int:
        """Write some fields (names of :class:`MemoryRecord` fields). Returns the new version."""
        ...

    def update_fields_many(self, changes: Sequence[tuple[str, Mapping[str, Any], int | None]]) -> builtins.list[str]:
        """Batched :meth:`update_fields`: ``(id, fields, expected_version)`` triples in one round trip.

        Each write is a compare-and-set of its own: a memory whose version is not the expected one
        (or an unknown id) is skipped, not raised. Returns the ids written, in input order. Indexed
        fields are refused as in :meth:`update_many`; an id given twice raises InvalidInputError.
        """
        ...

    def set_embedding_precision(self, changes: Sequence[tuple[str, Precision, int | None]]) -> builtins.list[str]:
        """Re-encode the stored embeddings of many memories (quantisation) in one round trip.

        ``(id, precision, expected_version)`` triples, each a compare-and-set of its own (a version
        mismatch or an unknown id is skipped, not raised); memories without an embedding or already
        at the precision are skipped too. The vectors are quantised in one batch per precision. Each
        written memory's version is bumped. Returns the ids re-encoded, in input order; an id given
        twice or an unknown precision raises InvalidInputError.
        """
        ...

    def update_many(self, changes: Sequence[tuple[str, Mapping[str, Any]]]) -> None:
        """Write field changes to many memories in one round trip (the access updates of a search).

        Each memory's version is bumped; there is no version check and unknown ids are skipped.
        Fields that feed an index (``content``, ``embedding``, ``user_id``) are refused with
        InvalidInputError: change those with :meth:`update_fields`.
        """
        ...

    def delete(self, ids: Sequence[str]) -> int:
        """Hard delete (explicit user action only) with every dependent row: relations, co-activations,
        tags, claims, access log and history (nothing of the content remains)."""
        ...

    def list(
        self,
        flt: MemoryFilter,
        *,
        limit: int = 100,
        offset: int = 0,
        order_by: str = "created_at",
        descending: bool = True,
    ) -> builtins.list[MemoryRecord]: ...

    def scan(
        self, flt: MemoryFilter, *, batch_size: int = 1000, omit: frozenset[str] = frozenset(), after: str = ""
    ) -> Iterator[builtins.list[MemoryRecord]]:
        """Every matching memory in batches, in id order (the dream cycle walks with this); with
        ``after``, only the memories whose id sorts after it (a walk resumed where it stopped).

        ``omit`` names fields not read (they keep their defaults: ``embedding`` None, empty
        ``inputs``…), so a pass over many memories skips the heavy columns. ``id``, ``version``,
        ``content`` and ``content_hash`` are always read; unknown names raise InvalidInputError.
        """
        ...

    def count(self, flt: MemoryFilter) -> int: ...

    def ids_with_prefix(self, prefix: str, *, limit: int = 10) -> builtins.list[str]:
        """Ids of memories (any user, status or store) that start with ``prefix`` exactly, in id
        order, at most ``limit`` (a short id typed by a person resolves through this)."""
        ...

    def users(self, *, limit: int = 50) -> builtins.list[tuple[str | None, int]]:
        """Each user partition (``None``: memories without a user) with its number of memories in
        any status or store, largest first, at most ``limit``."""
        ...

    def versions(self, ids: Sequence[str]) -> dict[str, int]:
        """The stored version of each existing memory among ``ids`` (a cheap staleness check)."""
        ...

    def entity_counts(self, flt: MemoryFilter) -> dict[tuple[str | None, str], int]:
        """How many matching memories name each entity, per user: ``(user_id, entity) -> count``
        (a memory naming an entity twice counts once; the shared-entity promotion rule)."""
        ...

    def stats(self, flt: MemoryFilter) -> builtins.list[LayerStats]: ...

    def find_by_hash(self, flt: MemoryFilter, content_hash: str) -> MemoryRecord | None:
        """The newest matching memory with this normalised-content hash (deduplication)."""
        ...


@runtime_checkable
class SearchStore(Protocol):
    """Vector and full-text search, and the stored embeddings."""

    def vector_search(self, vector: Vector, flt: MemoryFilter, k: int) -> builtins.list[ScoredId]:
        """The ``k`` most cosine-similar memories that pass ``flt``, best first (quantised memories
        scored with the mixed-precision similarity)."""
        ...

    def text_search(self, query: str, flt: MemoryFilter, k: int) -> builtins.list[ScoredId]:
        """Full-text (BM25 / ts_rank) hits that pass ``flt``, best first.

        Any query text is safe (it is tokenised, never spliced into query syntax); a query
        with no searchable terms returns ``[]``.
        """
        ...

    def embeddings(self, ids: Sequence[str]) -> dict[str, Vector]:
        """The stored float32 embeddings of these memories (dequantised if needed)."""
        ...


@runtime_checkable
class GraphStore(Protocol):
    """Relations between memories and clusters of memories."""

    def add_relations(self, relations: Sequence[Relation]) -> int:
        """Insert relations, skipping any (src, dst, type) that exists. Returns how many were new."""
        ...

    def relations(
        self,
        memory_ids: Sequence[str],
        *,
        types: frozenset[RelationType] | None = None,
        direction: str = "both",  # "out" | "in" | "both"
    ) -> builtins.list[Relation]: ...

    def update_relation(self, relation_id: str, fields: Mapping[str, Any]) -> None: ...

    def update_relations(self, changes: Sequence[tuple[str, Mapping[str, Any]]]) -> int:
        """Write field changes to many relations in one round trip; unknown ids are skipped.
        Returns how many relations were updated."""
        ...

    def delete_relations(self, relation_ids: Sequence[str]) -> int: ...

    def count_relations(self, flt: MemoryFilter, *, types: frozenset[RelationType] | None = None) -> int:
        """Relations whose source memory passes ``flt`` (optionally of these types; relation pruning at 1,000)."""
        ...

    def scope_relations(
        self, flt: MemoryFilter, *, types: frozenset[RelationType] | None = None
    ) -> builtins.list[Relation]:
        """Relations whose source memory passes ``flt`` (optionally of these types), oldest first."""
        ...

    # clusters (semantic clusters of co-activated memories) ---------------------------------------
    def put_clusters(self, clusters: Sequence[Cluster]) -> None:
        """Insert or replace clusters by id, each with exactly its ``members`` (old members go)."""
        ...

    def clusters(
        self, user_id: str | None, *, all_users: bool = False, kind: str | None = None
    ) -> builtins.list[Cluster]:
        """The clusters of a user partition (or of all), optionally of one kind, oldest first."""
        ...

    def delete_clusters(self, cluster_ids: Sequence[str]) -> int:
        """Delete clusters with their memberships (the memories stay). Returns how many."""
        ...


@runtime_checkable
class SessionStore(Protocol):
    """Session state: working memory, synaptic tags and memory boxes."""

    def put_working(self, items: Sequence[WorkingItem]) -> None:
        """Insert or replace entries by (session_id, memory_id): a duplicate id updates in place."""
        ...

    def working(self, session_id: str) -> builtins.list[WorkingItem]:
        """The working memory of a session, oldest entry first (ties by memory id)."""
        ...

    def remove_working(self, session_id: str, memory_ids: Sequence[str] | None = None) -> int:
        """Remove entries of a session (all of them when ``memory_ids`` is None). Returns how many."""
        ...

    # synaptic tags ----------------------------------------------------------------
    def put_tags(self, tags: Sequence[SynapticTag]) -> None:
        """Insert or replace tags by (memory_id, session_id)."""
        ...

    def active_tags(self, session_id: str, now: datetime) -> builtins.list[SynapticTag]:
        """Uncaptured tags of a session alive at ``now`` (tagged_at <= now <= expires_at), oldest first."""
        ...

    def capture_tags(self, session_id: str, memory_ids: Sequence[str]) -> int:
        """Mark these tags of a session captured. Returns how many changed."""
        ...

    def prune_tags(self, before: datetime) -> int:
        """Delete synaptic tags whose TTL ended before ``before`` (captured or not). Returns how many."""
        ...

    # memory boxes and traces -------------------------------------------------------
    def put_box(self, box: Box) -> None:
        """Insert or replace a box by id."""
        ...

    def open_box(self, user_id: str | None, session_id: str | None) -> Box | None:
        """The newest unsealed box of this user and session (``None`` session matches NULL)."""
        ...

    def sealed_boxes(self, user_id: str | None, *, limit: int = 50) -> builtins.list[Box]:
        """This user's sealed boxes, most recently sealed first."""
        ...

    def box(self, box_id: str) -> Box | None:
        """The box with this id (sealed or open), or ``None``."""
        ...


@runtime_checkable
class LedgerStore(Protocol):
    """What happened to memories: history, access log, action telemetry and co-activations."""

    def add_history(self, events: Sequence[HistoryEvent]) -> None: ...

    def history(self, memory_id: str) -> builtins.list[HistoryEvent]:
        """Every recorded transition of the memory, oldest first."""
        ...

    def redact_history(self, flt: MemoryFilter, mentioning: Sequence[str], *, note: str) -> int:
        """Redact the history events of the memories of ``flt`` whose reason or data name any of the ids
        ``mentioning``: reason → ``note``, data → ``{"redacted": note}``; how many were redacted."""
        ...

    def log_access(self, events: Sequence[AccessEvent]) -> None: ...

    def access_events(self, memory_id: str, *, limit: int = 50) -> builtins.list[AccessEvent]:
        """The memory's most recent accesses (when, what kind, which session), newest first."""
        ...

    def history_at(self, at: datetime, *, actor: str, limit: int = 1000) -> builtins.list[HistoryEvent]:
        """The history events ``actor`` recorded at exactly ``at`` (a dream cycle stamps every change of one
        run with the run's time), oldest first, at most ``limit``."""
        ...

    def scope_counts(self, *, limit: int = 500) -> builtins.list[dict[str, Any]]:
        """Per (user, agent): ``user_id``, ``agent_id``, ``memories`` (any status), ``accesses`` (their
        summed access counts), ``last_written`` and ``last_accessed``; most memories first."""
        ...

    def access_times(self, memory_ids: Sequence[str], *, limit: int = 100) -> dict[str, builtins.list[datetime]]:
        """The most recent access instants of each memory, newest first (ACT-R full form)."""
        ...

    def prune_access_log(self, before: datetime) -> int: ...

    def log_actions(self, events: Sequence[ActionEvent]) -> None:
        """Append write decisions to the action telemetry (the memory-action policy)."""
        ...

    def memory_actions(
        self, user_id: str | None, *, since: datetime | None = None, limit: int = 1000
    ) -> builtins.list[ActionEvent]:
        """One user's action telemetry (``None``: memories without a user), newest first, at most ``limit``
        events recorded at or after ``since``."""
        ...

    def prune_memory_actions(self, before: datetime) -> int:
        """Delete action telemetry recorded before ``before``. Returns how many events."""
        ...

    def bump_coactivations(self, pairs: Sequence[tuple[str, str]], at: datetime) -> None:
        """Add 1 to the weight of each unordered pair (created at weight 1)."""
        ...

    def coactivations(
        self, memory_ids: Sequence[str] | None = None, *, min_weight: int = 1
    ) -> builtins.list[CoActivation]: ...


@runtime_checkable
class CoordinationStore(Protocol):
    """Coordination between processes: claims on memories and key/value state (debounce timestamps,
    cursors, cache epochs)."""

    def claim(
        self, memory_ids: Sequence[str], *, owner: str, phase: str, now: datetime, ttl_seconds: float
    ) -> builtins.list[str]:
        """Claim memories for a dream step. Returns the ids this owner now holds.

        A memory already claimed by another owner (and not expired) is not claimed: the
        earlier claim wins, the later caller retries on a later run.
        """
        ...

    def release(self, owner: str, memory_ids: Sequence[str] | None = None) -> int: ...

    def renew_claims(self, owner: str, *, until: datetime) -> int:
        """Heartbeat: every claim of ``owner`` that would expire before ``until`` now expires at ``until``.
        Returns how many were renewed."""
        ...

    def prune_claims(self, before: datetime) -> int:
        """Delete claims that expired before ``before`` (a crashed dreamer's leftovers). Returns how many."""
        ...

    # key/value state ---------------------------------------------------------------
    def get_state(self, key: str) -> Any | None: ...

    def set_state(self, key: str, value: Any) -> None: ...

    def state_items(self) -> builtins.list[tuple[str, Any]]:
        """Every key/value state entry, in key order (a user's erasure looks for the entries naming it)."""
        ...

    def delete_state(self, keys: Sequence[str]) -> int:
        """Remove these state entries; returns how many existed."""
        ...


@runtime_checkable
class KeyStore(Protocol):
    """API keys (:mod:`reverie.auth`)."""

    def put_api_key(self, key: ApiKey) -> None:
        """Store a new key (an existing id raises ConflictError)."""
        ...

    def api_key(self, key_id: str) -> ApiKey | None:
        """The key with this id, revoked or not, or ``None``."""
        ...

    def api_keys(self, *, include_revoked: bool = False) -> builtins.list[ApiKey]:
        """Every key (the active ones unless ``include_revoked``), oldest first."""
        ...

    def revoke_api_key(self, key_id: str, at: datetime) -> bool:
        """Mark a key revoked at ``at``; False if there is no such active key."""
        ...

    def touch_api_key(self, key_id: str, at: datetime) -> None:
        """Record that the key was used at ``at`` (unknown ids are ignored)."""
        ...


@runtime_checkable
class Store(
    StoreAdmin, MemoryStore, SearchStore, GraphStore, SessionStore, LedgerStore, CoordinationStore, KeyStore, Protocol
):
    """The typed storage contract (see module docs for conventions): every role a backend plays.

    :class:`~reverie.memory.Memory` holds a ``Store``; code that needs one role can ask for that
    role's protocol instead."""


__all__ = [
    "ORDERABLE_FIELDS",
    "ApiKey",
    "Box",
    "Cluster",
    "CompactReport",
    "CoordinationStore",
    "GraphStore",
    "KeyStore",
    "LayerStats",
    "LedgerStore",
    "MemoryFilter",
    "MemoryStore",
    "ScoredId",
    "SearchStore",
    "SessionStore",
    "Store",
    "StoreAdmin",
    "StoreInfo",
    "SynapticTag",
    "WorkingItem",
]
