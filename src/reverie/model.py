"""The memory record and its companion record types.

One record carries every field the five designs need (see "One data model" in docs/design-notes.md): three
orthogonal fields — ``layer`` (what kind of memory), ``store`` (hot or cold) and ``status``
(lifecycle) — instead of one overloaded "tier", plus strengths, provenance, emotion,
bitemporal validity and scope.

All datetimes are timezone-aware UTC. Embeddings are float32 numpy vectors (L2-normalised by
the embedder); ``embedding_precision`` records how the stored copy is quantised.
"""

from __future__ import annotations

import dataclasses
import hashlib
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any

import numpy as np
import numpy.typing as npt
import uuid6

from reverie.legacy import current_event_data, current_reason

Vector = npt.NDArray[np.float32]


class Layer(StrEnum):
    """What kind of memory (the layered-memory design's layers; the energy model's short-term = episodic, long-term =
    semantic)."""

    WORKING = "working"
    EPISODIC = "episodic"
    SEMANTIC = "semantic"
    PROCEDURAL = "procedural"
    CODEBASE = "codebase"


class StoreTier(StrEnum):
    """Where a memory lives: hot is searched by default, cold by deep recall."""

    HOT = "hot"
    COLD = "cold"


class Status(StrEnum):
    """Lifecycle status. Never delete — invalidate."""

    ACTIVE = "active"
    SUPERSEDED = "superseded"
    DORMANT = "dormant"
    ARCHIVED = "archived"
    EXPIRED = "expired"
    INVALIDATED = "invalidated"


class MemoryKind(StrEnum):
    """The lifecycle design's episode/note classification."""

    EPISODE = "episode"
    NOTE = "note"


class TemporalType(StrEnum):
    """Bitemporal facts: persistent or time-bounded."""

    PERSISTENT = "persistent"
    TIME_BOUNDED = "time_bounded"


class Precision(StrEnum):
    """Embedding quantisation tiers."""

    FLOAT32 = "float32"
    INT8 = "int8"
    INT4 = "int4"
    INT2 = "int2"


class RelationType(StrEnum):
    """The Cognitive Memory design's six relation types, plus links made by the engine itself."""

    SUPERSEDES = "supersedes"
    CONTRADICTS = "contradicts"
    CAUSES = "causes"
    ELABORATES = "elaborates"
    SAME_ENTITY = "same_entity"
    RELATED_TO = "related_to"
    REINFORCES = "reinforces"  # Retroactive strengthening
    SUMMARIZES = "summarizes"  # Consolidation links (weight 0.8)
    #: a newer statement that may update an older one, kept beside it because the reading was unsure (the same
    #: subject and a change said, values not aligned): ranking by relevance decides, the newer first only when
    #: both answer the question
    MAY_UPDATE = "may_update"


def utcnow() -> datetime:
    return datetime.now(UTC)


def new_id() -> str:
    """A new memory id: a UUIDv7 (RFC 9562), time-ordered, so that ids sort by creation and new rows
    land at the end of every index keyed by id (a random UUIDv4 touched a random page per insert)."""
    return str(uuid6.uuid7())


_WS = re.compile(r"\s+")
_PUNCT = re.compile(r"[^\w\s]", re.UNICODE)


def normalize_content(text: str) -> str:
    """Normalisation for content-hash dedup: lowercase, strip punctuation, collapse spaces."""
    text = unicodedata.normalize("NFKC", text).casefold()
    text = _PUNCT.sub(" ", text)
    return _WS.sub(" ", text).strip()


def content_hash(text: str) -> str:
    """SHA-256 of the normalised content (content-hash deduplication)."""
    return hashlib.sha256(normalize_content(text).encode("utf-8")).hexdigest()


@dataclass(frozen=True, slots=True)
class Scope:
    """Who a memory belongs to. ``user_id`` is the isolation boundary (the vector partition)."""

    user_id: str | None = None
    agent_id: str | None = None
    session_id: str | None = None

    @property
    def partition(self) -> str:
        """The key searches are partitioned by: one user's memories never meet another's."""
        return self.user_id or ""


@dataclass(slots=True)
class MemoryRecord:
    """One memory: what kind (layer), where (store), lifecycle (status), strengths, provenance, emotion, validity,
    scope."""

    content: str
    id: str = field(default_factory=new_id)
    content_hash: str = ""
    # scope
    user_id: str | None = None
    agent_id: str | None = None
    session_id: str | None = None
    instance_id: str | None = None
    # kind and place
    layer: Layer = Layer.EPISODIC
    store: StoreTier = StoreTier.HOT
    status: Status = Status.ACTIVE
    category: str = "fact"
    memory_kind: MemoryKind = MemoryKind.EPISODE
    sub_tier: str | None = None
    temporal_type: TemporalType = TemporalType.PERSISTENT
    entities: list[str] = field(default_factory=list)
    # vector
    embedding: Vector | None = None
    embedding_precision: Precision = Precision.FLOAT32
    # importance and value
    importance: float = 0.5
    importance_channels: dict[str, float] = field(default_factory=dict)
    surprise: float | None = None
    utility: float = 0.5
    utility_updated_at: datetime | None = None
    # strengths
    energy: float = 1.0
    energy_updated_at: datetime | None = None
    stability: float = 1.0
    difficulty: float = 5.0
    storage_strength: float = 1.0
    retrieval_strength: float = 1.0
    reinforcement_count: int = 0
    last_reinforced_at: datetime | None = None
    confirmations: int = 0
    # emotion
    emotion_valence: float = 0.0
    emotion_arousal: float = 0.0
    emotion_label: str | None = None
    flashbulb: bool = False
    # provenance
    source: str = "interaction"
    trust: float = 0.6
    source_confidence: float = 1.0
    write_source: str = "manual"
    data_source: str = "user_message"
    inputs: list[dict[str, Any]] = field(default_factory=list)
    # bitemporal
    valid_from: datetime | None = None
    valid_until: datetime | None = None
    recorded_at: datetime = field(default_factory=utcnow)
    created_at: datetime = field(default_factory=utcnow)
    updated_at: datetime = field(default_factory=utcnow)
    # access
    access_count: int = 0
    last_accessed_at: datetime | None = None
    # truth anchors and flags
    pinned: bool = False
    immutable: bool = False
    core: bool = False
    # Lifecycle policy
    lifecycle_state: str = "active"
    verification_state: str = "unverified"
    policy_class: str = "durable"
    confidence: float = 1.0
    heat_score: float | None = None
    decay_score: float | None = None
    # links and free-form
    superseded_by: str | None = None
    box_id: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    version: int = 1

    def __post_init__(self) -> None:
        if not self.content_hash:
            self.content_hash = content_hash(self.content)

    @property
    def scope(self) -> Scope:
        return Scope(self.user_id, self.agent_id, self.session_id)

    def copy(self, **changes: Any) -> MemoryRecord:
        return dataclasses.replace(self, **changes)

    def to_dict(self, *, with_embedding: bool = False, only: Sequence[str] | None = None) -> dict[str, Any]:
        """A JSON-ready dict (datetimes as ISO strings, enums as values); ``only``: these fields, in this order."""
        out: dict[str, Any] = {}
        for name in _FIELD_NAMES if only is None else only:
            f = _FIELDS[name]
            value = getattr(self, f.name)
            if f.name == "embedding":
                if with_embedding and value is not None:
                    out["embedding"] = [float(x) for x in value]
                continue
            if isinstance(value, datetime):
                value = value.isoformat()
            elif isinstance(value, StrEnum):
                value = value.value
            elif isinstance(value, (list, dict)):
                value = _copy_json(value)
            out[f.name] = value
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> MemoryRecord:
        """Inverse of :meth:`to_dict`; unknown keys are rejected."""
        names = {f.name: f for f in dataclasses.fields(cls)}
        unknown = set(data) - set(names)
        if unknown:
            from reverie.errors import InvalidInputError

            raise InvalidInputError(f"unknown memory fields: {sorted(unknown)}")
        kwargs: dict[str, Any] = {}
        for key, value in data.items():
            kwargs[key] = _coerce_field(key, value)
        return cls(**kwargs)


_FIELDS = {f.name: f for f in dataclasses.fields(MemoryRecord)}
_FIELD_NAMES = tuple(_FIELDS)
_DATETIME_FIELDS = {f.name for f in dataclasses.fields(MemoryRecord) if "datetime" in str(f.type)}
_ENUM_FIELDS: dict[str, type[StrEnum]] = {
    "layer": Layer,
    "store": StoreTier,
    "status": Status,
    "memory_kind": MemoryKind,
    "temporal_type": TemporalType,
    "embedding_precision": Precision,
}


def _coerce_field(key: str, value: Any) -> Any:
    if value is None:
        return None
    if key in _DATETIME_FIELDS and isinstance(value, str):
        parsed = datetime.fromisoformat(value)
        return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)
    if key in _ENUM_FIELDS:
        return _ENUM_FIELDS[key](value)
    if key == "embedding":
        return np.asarray(value, dtype=np.float32)
    return value


#: containers nested deeper than this are shown as :data:`TOO_DEEP` when a record is serialised: data
#: stored before writes were depth-limited must never make a read fail (a RecursionError in every
#: serialiser of the memory broke list, search and export for every user)
MAX_SERIALISED_DEPTH = 64
TOO_DEEP = "… (nested too deep to show)"


def _copy_json(value: Any) -> Any:
    """A copy of JSON-like ``value`` (string keys), walked without recursion and cut at
    :data:`MAX_SERIALISED_DEPTH` levels."""
    root: list[Any] = [None]
    stack: list[tuple[Any, Any, Any, int]] = [(value, root, 0, 1)]
    while stack:
        item, parent, key, depth = stack.pop()
        if isinstance(item, dict | list) and depth > MAX_SERIALISED_DEPTH:
            parent[key] = TOO_DEEP
        elif isinstance(item, dict):
            out: dict[str, Any] = {}
            parent[key] = out
            for k, v in item.items():
                out[str(k)] = None
                stack.append((v, out, str(k), depth + 1))
        elif isinstance(item, list):
            seq: list[Any] = [None] * len(item)
            parent[key] = seq
            stack.extend((v, seq, i, depth + 1) for i, v in enumerate(item))
        else:
            parent[key] = item
    return root[0]


@dataclass(slots=True)
class Relation:
    """A typed, weighted edge between two memories (typed relations with a confidence that decays and is reinforced)."""

    src_id: str
    dst_id: str
    type: RelationType
    confidence: float = 1.0
    weight: float = 1.0
    id: str = field(default_factory=new_id)
    created_at: datetime = field(default_factory=utcnow)
    last_reinforced_at: datetime | None = None
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True)
class HistoryEvent:
    """One transition of a memory: what changed, why, and by which path (LLM or heuristic)."""

    memory_id: str
    event: str
    at: datetime
    reason: str = ""
    actor: str = "engine"
    data: dict[str, Any] = field(default_factory=dict)
    id: int | None = None

    def __post_init__(self) -> None:
        # history written before the dream's rule ids were renamed reads in the current vocabulary
        self.reason = current_reason(self.reason)
        self.data = current_event_data(self.data)


@dataclass(slots=True)
class AccessEvent:
    """One access of a memory ("run on every memory access"; ACT-R access log)."""

    memory_id: str
    at: datetime
    kind: str = "search"  # search | get | feedback | rehearsal | coactivation
    session_id: str | None = None


@dataclass(slots=True)
class ActionEvent:
    """One write decision as action telemetry (the lifecycle design's memory-action policy): which action of
    the taxonomy was taken (``store_episode``, ``store_note``, ``update_note``, ``create_artifact``,
    ``summarize_node``, ``discard``, ``link_graph``), what the engine did (``outcome``: the write gate's
    CREATE/UPDATE/SUPERSEDE/REINFORCE/SKIP, ``UNDONE`` for an undone summary, ``LINKED`` …), and its
    eligibility context (confidence, lifecycle state, importance, source). No memory text is kept."""

    action: str
    outcome: str
    at: datetime
    user_id: str | None = None
    agent_id: str | None = None
    memory_id: str | None = None
    confidence: float = 0.0
    lifecycle_state: str = "candidate"
    importance: float = 0.0
    source: str = "unknown"
    id: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "action": self.action,
            "outcome": self.outcome,
            "at": self.at.isoformat(),
            "user_id": self.user_id,
            "agent_id": self.agent_id,
            "memory_id": self.memory_id,
            "confidence": self.confidence,
            "lifecycle_state": self.lifecycle_state,
            "importance": self.importance,
            "source": self.source,
        }


@dataclass(slots=True)
class CoActivation:
    """COACTIVATED edge / Hebbian pair. ``a_id < b_id`` always."""

    a_id: str
    b_id: str
    weight: int = 1
    first_at: datetime = field(default_factory=utcnow)
    last_at: datetime = field(default_factory=utcnow)


__all__ = [
    "AccessEvent",
    "ActionEvent",
    "CoActivation",
    "HistoryEvent",
    "Layer",
    "MemoryKind",
    "MemoryRecord",
    "Precision",
    "Relation",
    "RelationType",
    "Scope",
    "Status",
    "StoreTier",
    "TemporalType",
    "Vector",
    "content_hash",
    "new_id",
    "normalize_content",
    "utcnow",
]
