"""Request and response models of the REST API (they make the OpenAPI schema complete).

``MemoryOut`` is generated from :class:`reverie.model.MemoryRecord`'s fields (without the
embedding), so the schema never drifts from the record.
"""

from __future__ import annotations

import dataclasses
import re
import typing
from typing import Annotated, Any, Literal

from fastapi import Path as PathParam
from fastapi import Query as QueryParam
from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, create_model, model_validator

from reverie.model import MemoryRecord, Relation
from reverie.validation import JSON_NUMBER_LIMIT

LayerName = Literal["working", "episodic", "semantic", "procedural", "codebase"]

# the text reverie takes, described as the engine checks it (so that the OpenAPI document says what the
# server does): no NUL character, at least one character that is not white space, a length limit
TEXT_PATTERN = r"^[^\x00]*\S[^\x00]*$"
_TEXT = TEXT_PATTERN
#: a user, agent or session id (the isolation scopes)
ScopeId = Annotated[str, Field(min_length=1, max_length=256, pattern=_TEXT)]
#: content to remember: reverie's own limit is limits.max_content_bytes of UTF-8 (checked by the engine, 413)
Content = Annotated[str, Field(min_length=1, pattern=_TEXT)]
#: a query: at most limits.max_query_chars (4,000) characters
QueryText = Annotated[str, Field(min_length=1, max_length=4000, pattern=_TEXT)]
#: a category name
Category = Annotated[str, Field(min_length=1, max_length=64, pattern=_TEXT)]
#: JSON Schema's integer, which a number with no fraction (``5.0``) is too (strict bodies take no float for int)
_WHOLE = BeforeValidator(lambda v: int(v) if isinstance(v, float) and v.is_integer() else v)


def whole_number(low: int, high: int) -> Any:
    """An integer from ``low`` to ``high`` (the bounds where the schema shows them: before the converter)."""
    return Annotated[int, Field(ge=low, le=high), _WHOLE]


#: the same as query and path parameters
ScopeParam = Annotated[str | None, QueryParam(min_length=1, max_length=256, pattern=_TEXT)]
CategoryParam = Annotated[str | None, QueryParam(min_length=1, max_length=64, pattern=_TEXT)]
ScopePath = Annotated[str, PathParam(min_length=1, max_length=256, pattern=_TEXT)]
MemoryIdPath = Annotated[str, PathParam(description="The memory's id.", min_length=1, max_length=128, pattern=_TEXT)]
KeyIdPath = Annotated[str, PathParam(description="The key's id.", min_length=1, max_length=64, pattern=_TEXT)]
#: who says what a memory holds
SourceName = Literal["human", "ai", "interaction", "ingest", "code_scan", "dream"]
#: a time: RFC 3339, with its UTC offset, in the years 1000 to 8999 (the range reverie stores)
IsoTime = Annotated[
    str,
    Field(
        max_length=64,
        pattern=r"^(1\d{3}|[2-8]\d{3})-",
        json_schema_extra={"format": "date-time"},
        description="RFC 3339 date and time with its UTC offset, years 1000-8999.",
    ),
]
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


#: a page cursor (``next_cursor`` of the page before): the next page's position in the order it was made for
CURSOR_PATTERN = (
    r"^[0-9]{1,7}\.(created_at|updated_at|recorded_at|valid_from|last_accessed_at|importance|utility|energy|"
    r"access_count)\.(asc|desc)$"
)


def encode_cursor(offset: int, *, order_by: str, descending: bool) -> str:
    """The cursor of the page starting at ``offset`` of a listing in this order."""
    return f"{offset}.{order_by}.{'desc' if descending else 'asc'}"


def decode_cursor(cursor: str) -> tuple[int, str, bool]:
    """``(offset, order_by, descending)`` of a cursor (:data:`CURSOR_PATTERN`; :class:`InvalidInputError` for
    anything else): a cursor continues the listing it came from, in that listing's order."""
    from reverie.errors import InvalidInputError

    if not re.fullmatch(CURSOR_PATTERN, cursor):
        raise InvalidInputError("cursor is not one this API gave out (use next_cursor as it is)")
    offset, order_by, direction = cursor.split(".")
    return int(offset), order_by, direction == "desc"


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

    content: Content = Field(description="What to remember.", examples=["Maya is allergic to penicillin"])
    user_id: ScopeId | None = Field(default=None, description="User scope (the isolation boundary).")
    agent_id: ScopeId | None = Field(default=None, description="Agent scope.")
    session_id: ScopeId | None = Field(default=None, description="Session id.")
    metadata: dict[str, Any] | None = Field(default=None, description="Free-form JSON metadata.")
    when: IsoTime | None = Field(default=None, description="The time the content refers to (default: now).")
    source: SourceName | None = Field(default=None, description="Who says so (default: interaction).")
    infer: bool = Field(default=True, description="false stores the content verbatim (no dedup, no inference).")


class AddResponse(BaseModel):
    """What a write did."""

    id: str | None
    action: Literal["CREATE", "UPDATE", "SUPERSEDE", "REINFORCE", "SKIP", "BUFFERED"]
    ids: list[str]
    reason: str


class UpdateRequest(_Body):
    """Fields to change; omitted fields stay."""

    content: Content | None = Field(default=None, description="New content (re-embedded).")
    metadata: dict[str, Any] | None = Field(default=None, description="Replacement metadata.")
    category: Category | None = Field(default=None, description="New category.")
    importance: float | None = Field(default=None, ge=0.0, le=1.0, description="New base importance.")
    reason: str = Field(default="", max_length=1000, pattern=r"^[^\x00]*$", description="Why (kept in the history).")


class PromoteRequest(_Body):
    layer: LayerName | None = Field(default=None, description="Target layer (default: the next one up).")


class InvalidateRequest(_Body):
    reason: str = Field(min_length=1, max_length=1000, pattern=_TEXT, description="Why the memory is no longer true.")


class FeedbackRequest(_Body):
    useful: bool = Field(description="Whether the memory helped.")


MetadataKey = Annotated[str, Field(min_length=1, max_length=256, pattern=r"^[^\x00]*$")]
MetadataValue = (
    Annotated[str, Field(max_length=10_000, pattern=r"^[^\x00]*$")]
    | Annotated[int, Field(ge=-JSON_NUMBER_LIMIT, le=JSON_NUMBER_LIMIT)]
    | Annotated[float, Field(ge=-JSON_NUMBER_LIMIT, le=JSON_NUMBER_LIMIT)]
    | bool
    | None
)


def metadata_schemas(max_depth: int) -> dict[str, Any]:
    """JSON Schemas of metadata as the engine takes it (:func:`reverie.validation.clean_metadata`): an object
    with string keys, its text without NUL characters and its numbers within the 64-bit range. Its nesting
    (at most ``max_depth`` levels, ``limits.max_metadata_depth``) and size (``limits.max_metadata_bytes``)
    are said in words and checked by the engine (422 / 413): a schema spelling out every level is one no
    generator of test requests can walk."""
    text = {"type": "string", "pattern": r"^[^\x00]*$"}
    keys = {"pattern": r"^[^\x00]*$"}
    number = {"type": "number", "minimum": -JSON_NUMBER_LIMIT, "maximum": JSON_NUMBER_LIMIT}
    value = {"$ref": "#/components/schemas/MetadataValue"}
    return {
        "MetadataValue": {
            "anyOf": [
                text,
                number,
                {"type": "boolean"},
                {"type": "null"},
                {"type": "array", "items": value},
                {"type": "object", "propertyNames": keys, "additionalProperties": value},
            ]
        },
        "Metadata": {
            "type": "object",
            "description": f"Free-form JSON metadata: string keys, nested at most {max_depth} levels "
            "(limits.max_metadata_depth) and at most limits.max_metadata_bytes as JSON, no NUL characters, "
            "numbers within the 64-bit range.",
            "propertyNames": keys,
            "additionalProperties": value,
        },
    }


class SearchFilters(_Body):
    """Optional narrowing of a search."""

    layer: list[LayerName] | None = Field(default=None, min_length=1)
    status: list[StatusName] | None = Field(default=None, min_length=1)
    store: list[StoreName] | None = Field(default=None, min_length=1)
    category: list[Category] | None = Field(default=None, min_length=1)
    pinned: bool | None = None
    session_id: ScopeId | None = Field(default=None, description="Only memories of this session.")
    metadata: dict[MetadataKey, MetadataValue] | None = Field(
        default=None, description="Equality on top-level metadata keys."
    )
    valid_at: IsoTime | None = Field(default=None, description="Only memories valid at that time.")
    recorded_before: IsoTime | None = Field(default=None, description="Only memories recorded by then.")


class SearchRequest(_Body):
    query: QueryText = Field(description="What to recall.", examples=["what is Maya allergic to?"])
    user_id: ScopeId | None = None
    agent_id: ScopeId | None = None
    session_id: ScopeId | None = Field(default=None, description="The current session (context for the read path).")
    k: whole_number(1, 1000) = Field(default=10, description="How many results.")  # type: ignore[valid-type]
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


def _step_names() -> Any:
    from reverie.dream.registry import steps_by_name

    return Literal.__getitem__(tuple(steps_by_name()))


StepName = _step_names()


class DreamRequest(_Body):
    steps: list[StepName] | None = Field(  # type: ignore[valid-type]
        default=None, max_length=100, description="Step names (default: every enabled step)."
    )


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

    message: Content = Field(description="The turn, as said.", examples=["I just moved to Lisbon!"])
    role: Literal["user", "assistant"] = "user"
    user_id: ScopeId | None = None
    agent_id: ScopeId | None = None
    session_id: ScopeId | None = None
    when: IsoTime | None = Field(default=None, description="The time of the turn (default: now).")
    metadata: dict[str, Any] | None = None


class ObserveResponse(BaseModel):
    results: list[AddResponse] = Field(
        description="What was written now (a filtered turn: one SKIP; a turn waiting in the buffer, "
        "not stored yet: one BUFFERED)."
    )


class ContextRequest(_Body):
    query: QueryText = Field(description="What the agent is about to answer or do.")
    user_id: ScopeId | None = None
    agent_id: ScopeId | None = None
    session_id: ScopeId | None = None
    budget_tokens: whole_number(1, 100_000) | None = Field(  # type: ignore[valid-type]
        default=None, description="Default: configured budget."
    )
    k: whole_number(1, 1000) = Field(default=10)  # type: ignore[valid-type]


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
    user_id: ScopeId | None = None


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
    """A new API key: for some users (optionally narrowed to some of their agents), or an admin key (no users,
    no agents)."""

    model_config = ConfigDict(
        extra="forbid",
        strict=True,
        json_schema_extra={
            "anyOf": [
                {
                    "properties": {
                        "admin": {"const": True},
                        "users": {"maxItems": 0},
                        "agents": {"anyOf": [{"type": "null"}, {"type": "array", "maxItems": 0}]},
                    },
                    "required": ["admin"],
                },
                {
                    "properties": {"admin": {"const": False}, "users": {"minItems": 1}},
                    "required": ["users"],
                },
            ]
        },
    )

    name: str = Field(min_length=1, max_length=64, pattern=_TEXT, description="Who or what uses the key.")
    users: list[ScopeId] = Field(
        default_factory=list, max_length=1000, description="The users it may read and write (none for an admin key)."
    )
    agents: list[ScopeId] | None = Field(
        default=None, max_length=1000, description="Narrow it to these agents of its users (default: every agent)."
    )
    admin: bool = Field(default=False, description="Every user, the all-users views, export, the dashboard.")

    @model_validator(mode="after")
    def _admin_or_users(self) -> KeyRequest:
        if self.admin and (self.users or self.agents):
            raise ValueError("an admin key covers every user: give it no users or agents")
        if not self.admin and not self.users:
            raise ValueError("a key needs at least one user, or admin: true")
        return self


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
    "metadata_schemas",
    "relation_dict",
]
