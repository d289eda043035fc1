"""Request and response models of the REST API (they make the OpenAPI schema complete).

``MemoryOut`` is generated from :class:`reverie.model.MemoryRecord`'s fields (without the
embedding), so the schema never drifts from the record.
"""

from __future__ import annotations

import base64
import dataclasses
import json
import typing
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, create_model

from reverie.model import MemoryRecord, Relation

LayerName = Literal["working", "episodic", "semantic", "procedural", "codebase"]
StatusName = Literal["active", "superseded", "dormant", "archived", "expired", "invalidated"]
StoreName = Literal["hot", "cold"]


def _memory_out() -> type[BaseModel]:
    hints = typing.get_type_hints(MemoryRecord)
    fields: dict[str, Any] = {}
    for f in dataclasses.fields(MemoryRecord):
        if f.name == "embedding":
            continue
        fields[f.name] = (hints[f.name], ...)
    model: type[BaseModel] = create_model(
        "MemoryOut",
        __config__=ConfigDict(extra="forbid"),
        __doc__="One memory with every field of the record (the embedding is left out).",
        **fields,
    )
    return model


MemoryOut = _memory_out()


OrderName = Literal[
    "created_at",
    "updated_at",
    "recorded_at",
    "valid_from",
    "last_accessed_at",
    "importance",
    "utility",
    "energy",
    "access_count",
]


class MemoryPage(BaseModel):
    """One page of a list: its memories, how many there are in all, and the cursor of the next page."""

    items: list[MemoryOut]  # type: ignore[valid-type]
    total: int = Field(description="How many memories match, over every page.")
    limit: int
    offset: int = Field(description="How many memories come before this page.")
    next_cursor: str | None = Field(description="Pass as `cursor` for the next page; null on the last page.")


def encode_cursor(offset: int, *, order_by: str, descending: bool) -> str:
    """An opaque cursor: the position of the next page in one sort order."""
    raw = json.dumps({"o": offset, "by": order_by, "desc": descending}, separators=(",", ":"))
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


def decode_cursor(cursor: str, *, order_by: str, descending: bool) -> int:
    """The offset a cursor names; :class:`InvalidInputError` for a damaged cursor or one of another order."""
    from reverie.errors import InvalidInputError

    try:
        data = json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
        offset = data["o"]
        if not isinstance(offset, int) or isinstance(offset, bool) or not 0 <= offset <= 10_000_000:
            raise ValueError(offset)
    except (ValueError, KeyError, TypeError) as exc:
        raise InvalidInputError("cursor is not one this API gave out (use next_cursor as it is)") from exc
    if data.get("by") != order_by or data.get("desc") != descending:
        raise InvalidInputError("this cursor belongs to another sort order: keep order_by and descending while paging")
    return offset


class UserCount(BaseModel):
    user_id: str | None = Field(description="The user (null: memories stored without a user).")
    memories: int = Field(description="Memories in any status or store.")


class UserList(BaseModel):
    items: list[UserCount]
    total: int


class ForgetUserReport(BaseModel):
    """What erasing a user removed (or, in a dry run, would remove)."""

    user_id: str | None
    dry_run: bool
    memories: int = Field(description="Memories in any status or store, with everything that hangs on them.")
    boxes: int = Field(description="Memory boxes (topic groups of a conversation).")
    clusters: int = Field(description="Clusters the dream cycle formed.")
    state_entries: int = Field(description="Conversation buffers, schedule counters and cursors naming the user.")


class Problem(BaseModel):
    """An RFC 7807 problem response; ``error`` is the reverie error type."""

    type: str = Field(description="A URI naming the problem type, e.g. urn:reverie:error:NotFoundError.")
    title: str = Field(description="Short summary of the problem type.")
    status: int = Field(description="The HTTP status code.")
    detail: str = Field(description="What went wrong, for this request.")
    error: str = Field(description="The reverie error class (NotFoundError, InvalidInputError, …).")
    errors: list[dict[str, Any]] | None = Field(default=None, description="Per-field validation errors.")


class _Body(BaseModel):
    """A request body: unknown fields are refused, and so are values of the wrong JSON type (no
    ``"5"`` for a number, no ``1`` or ``"yes"`` for a boolean)."""

    model_config = ConfigDict(extra="forbid", strict=True)


class AddRequest(_Body):
    """A memory to store."""

    content: str = Field(description="What to remember.", examples=["Maya is allergic to penicillin"])
    user_id: str | None = Field(default=None, description="User scope (the isolation boundary).")
    agent_id: str | None = Field(default=None, description="Agent scope.")
    session_id: str | None = Field(default=None, description="Session id.")
    metadata: dict[str, Any] | None = Field(default=None, description="Free-form JSON metadata.")
    when: str | None = Field(default=None, description="ISO 8601 time the content refers to (default: now).")
    source: str | None = Field(default=None, description="human, ai, interaction, ingest, code_scan or dream.")
    infer: bool = Field(default=True, description="false stores the content verbatim (no dedup, no inference).")


class AddResponse(BaseModel):
    """What a write did."""

    id: str | None
    action: Literal["CREATE", "UPDATE", "SUPERSEDE", "REINFORCE", "SKIP", "BUFFERED"]
    ids: list[str]
    reason: str


class UpdateRequest(_Body):
    """Fields to change; omitted fields stay."""

    content: str | None = Field(default=None, description="New content (re-embedded).")
    metadata: dict[str, Any] | None = Field(default=None, description="Replacement metadata.")
    category: str | None = Field(default=None, description="New category.")
    importance: float | None = Field(default=None, ge=0.0, le=1.0, description="New base importance.")
    reason: str = Field(default="", max_length=1000, description="Why (kept in the history).")


class PromoteRequest(_Body):
    layer: LayerName | None = Field(default=None, description="Target layer (default: the next one up).")


class InvalidateRequest(_Body):
    reason: str = Field(min_length=1, max_length=1000, description="Why the memory is no longer true.")


class FeedbackRequest(_Body):
    useful: bool = Field(description="Whether the memory helped.")


class SearchFilters(_Body):
    """Optional narrowing of a search."""

    layer: list[LayerName] | None = None
    status: list[StatusName] | None = None
    store: list[StoreName] | None = None
    category: list[str] | None = None
    pinned: bool | None = None
    session_id: str | None = Field(default=None, description="Only memories of this session.")
    metadata: dict[str, str | int | float | bool | None] | None = Field(
        default=None, description="Equality on top-level metadata keys."
    )
    valid_at: str | None = Field(default=None, description="ISO 8601: only memories valid at that time.")
    recorded_before: str | None = Field(default=None, description="ISO 8601: only memories recorded by then.")


class SearchRequest(_Body):
    query: str = Field(description="What to recall.", examples=["what is Maya allergic to?"])
    user_id: str | None = None
    agent_id: str | None = None
    session_id: str | None = Field(default=None, description="The current session (context for the read path).")
    k: int = Field(default=10, ge=1, le=1000, description="How many results.")
    filters: SearchFilters | None = None


class HitOut(BaseModel):
    memory: MemoryOut  # type: ignore[valid-type]
    score: float
    explain: dict[str, Any] = Field(description="How the score was made: channels, ranks, fusion.")


class SearchResponse(BaseModel):
    results: list[HitOut]


class HistoryEventOut(BaseModel):
    at: str
    event: str
    reason: str
    actor: str
    data: dict[str, Any]


class AccessOut(BaseModel):
    at: str
    kind: str = Field(description="search, get, feedback, rehearsal (the dream cycle) or coactivation.")
    session_id: str | None


class AccessList(BaseModel):
    items: list[AccessOut]
    total: int = Field(description="How many are listed (at most `limit`; the memory's access_count has them all).")


class StatsRow(BaseModel):
    layer: str
    status: str
    count: int
    energy_avg: float
    energy_min: float
    energy_max: float


class StatsOut(BaseModel):
    """The health check: memories per layer and status, with their energy."""

    backend: str
    target: str = Field(
        description="Where the memory lives, credentials removed (the database's name only, unless the caller is "
        "an admin)."
    )
    embedder: str
    total: int
    rows: list[StatsRow]
    by_layer: dict[str, int]
    by_status: dict[str, int]
    relations: int
    opslog: dict[str, int]
    users: list[UserCount] = Field(
        description="The users the caller may see (every user for an admin, at most 1,000) and how many memories "
        "each has."
    )


class DreamRequest(_Body):
    steps: list[str] | None = Field(default=None, description="Step names (default: every enabled step).")


class DreamStep(BaseModel):
    name: str
    changed: int
    examined: int
    details: dict[str, Any]
    seconds: float


class DreamReport(BaseModel):
    owner: str
    at: str
    steps: list[DreamStep]
    changed: int
    seconds: float


class DreamReports(BaseModel):
    reports: list[DreamReport] = Field(description="Stored reports, newest first (dream.reports_kept of them).")


class StrengthTerm(BaseModel):
    """One derived value of a memory with the formula and the terms behind it."""

    value: Any
    formula: str
    terms: dict[str, Any]


class RelationOut(BaseModel):
    """A typed, weighted edge between two memories."""

    id: str
    src_id: str
    dst_id: str
    type: str
    confidence: float
    weight: float
    created_at: str
    last_reinforced_at: str | None
    metadata: dict[str, Any]


def relation_dict(rel: Relation) -> dict[str, Any]:
    return {
        "id": rel.id,
        "src_id": rel.src_id,
        "dst_id": rel.dst_id,
        "type": rel.type.value,
        "confidence": rel.confidence,
        "weight": rel.weight,
        "created_at": rel.created_at.isoformat(),
        "last_reinforced_at": rel.last_reinforced_at.isoformat() if rel.last_reinforced_at else None,
        "metadata": rel.metadata,
    }


class ObserveRequest(_Body):
    """One raw conversation turn for the observer and the write path."""

    message: str = Field(description="The turn, as said.", examples=["I just moved to Lisbon!"])
    role: Literal["user", "assistant"] = "user"
    user_id: str | None = None
    agent_id: str | None = None
    session_id: str | None = None
    when: str | None = Field(default=None, description="ISO 8601 time of the turn (default: now).")
    metadata: dict[str, Any] | None = None


class ObserveResponse(BaseModel):
    results: list[AddResponse] = Field(
        description="What was written now (a filtered turn: one SKIP; a turn waiting in the buffer, "
        "not stored yet: one BUFFERED)."
    )


class ContextRequest(_Body):
    query: str = Field(description="What the agent is about to answer or do.")
    user_id: str | None = None
    agent_id: str | None = None
    session_id: str | None = None
    budget_tokens: int | None = Field(default=None, ge=1, le=100_000, description="Default: configured budget.")
    k: int = Field(default=10, ge=1, le=1000)


class ContextItemOut(BaseModel):
    id: str
    section: str = Field(description="working, hot or retrieved.")
    style: str = Field(description="full or abbreviated.")
    confidence: float | None
    text: str
    tokens: int
    truncated: bool


class ContextOut(BaseModel):
    """The memory block for a prompt: the most confident memories in full, weaker ones abbreviated, within
    the token budget."""

    text: str
    items: list[ContextItemOut]
    skipped: list[dict[str, Any]]
    budget_tokens: int
    used_tokens: int


class EndSessionRequest(_Body):
    user_id: str | None = None


class EndSessionReport(BaseModel):
    model_config = ConfigDict(extra="allow")

    session_id: str
    flushed: list[AddResponse]
    working_cleared: int
    box_sealed: str | None


class ImportRejection(BaseModel):
    where: str = Field(description="Where the rejected record was (line N).")
    error: str = Field(description="Why it was rejected.")


class ImportReport(BaseModel):
    """What an import stored: records restored, ids already present (skipped), records rejected."""

    restored: int
    skipped: int
    rejected: int
    errors: list[ImportRejection] = Field(description="The first rejections, with where and why.")


class CredentialOut(BaseModel):
    """The caller's credential (never a secret)."""

    name: str
    key_id: str | None = Field(description="The API key's id, if the credential is an API key.")
    admin: bool = Field(description="Admin credentials reach every user, all-users views and export.")
    users: list[str] | None = Field(description="The users it covers (null: every user).")
    agents: list[str] | None = Field(description="The agents it is narrowed to (null: every agent).")


class KeyRequest(_Body):
    """A new API key: for some users (optionally narrowed to some of their agents), or an admin key."""

    name: str = Field(min_length=1, max_length=64, description="Who or what uses the key.")
    users: list[str] = Field(default_factory=list, max_length=1000, description="The users it may read and write.")
    agents: list[str] | None = Field(
        default=None, max_length=1000, description="Narrow it to these agents of its users (default: every agent)."
    )
    admin: bool = Field(default=False, description="Every user, the all-users views, export, the dashboard.")


class KeyOut(BaseModel):
    """An API key's record (its secret is never stored: only its SHA-256)."""

    id: str
    name: str
    admin: bool
    users: list[str]
    agents: list[str] | None
    created_at: str
    revoked_at: str | None
    last_used_at: str | None


class KeyCreated(KeyOut):
    key: str = Field(description="The key: send it as 'Authorization: Bearer <key>'. It is not shown again.")


class KeyList(BaseModel):
    items: list[KeyOut]
    total: int


class Health(BaseModel):
    status: Literal["ok"]
    version: str


class Ready(BaseModel):
    status: Literal["ready"]
    backend: str = Field(description="sqlite or postgresql.")
    store_ms: float = Field(description="How long the store took to answer, in milliseconds.")


__all__ = [
    "AccessList",
    "AccessOut",
    "AddRequest",
    "AddResponse",
    "ContextItemOut",
    "ContextOut",
    "ContextRequest",
    "CredentialOut",
    "DreamReport",
    "DreamReports",
    "DreamRequest",
    "EndSessionReport",
    "EndSessionRequest",
    "FeedbackRequest",
    "ForgetUserReport",
    "Health",
    "HistoryEventOut",
    "HitOut",
    "ImportReport",
    "InvalidateRequest",
    "KeyCreated",
    "KeyList",
    "KeyOut",
    "KeyRequest",
    "MemoryOut",
    "MemoryPage",
    "ObserveRequest",
    "ObserveResponse",
    "Problem",
    "PromoteRequest",
    "Ready",
    "RelationOut",
    "SearchFilters",
    "SearchRequest",
    "SearchResponse",
    "StatsOut",
    "StrengthTerm",
    "UpdateRequest",
    "UserCount",
    "UserList",
    "decode_cursor",
    "encode_cursor",
    "relation_dict",
]
