"""REST routes for keeping a memory in shape: the maintenance schedule, compaction and the topic index.

``POST /v1/compact`` (dedup and index optimisation), ``GET /v1/maintenance`` (each scheduled job's last and
next run), ``POST /v1/maintenance/run`` (run what is due now), ``GET /v1/topics`` (what a user's memory is
about). Ingesting code is not offered over HTTP: it reads the server's file system (use ``reverie
ingest-code`` or the MCP tool on the machine that holds the code).
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Body, Query, Request
from pydantic import BaseModel, ConfigDict, Field

from reverie.http.models import TEXT_PATTERN, DreamReport, ScopeId, ScopeParam


class CompactRequest(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    dedup: bool = Field(default=True, description="Supersede identical copies of a memory (one user and agent).")
    user_id: ScopeId | None = Field(default=None, description="Deduplicate only this user's memories.")


class StoreCompaction(BaseModel):
    backend: str
    bytes_before: int
    bytes_after: int
    reclaimed_bytes: int
    rows_removed: dict[str, int]
    index_entries_before: dict[str, int]
    index_entries_after: dict[str, int]
    index_entries_removed: dict[str, int]
    actions: list[str]
    seconds: float


class CompactReport(BaseModel):
    at: str
    dedup: dict[str, Any] | None = Field(default=None, description="groups, superseded, ids, skipped_changed.")
    claims_removed: int
    store: StoreCompaction


class MaintenanceJob(BaseModel):
    name: str = Field(description="'cycle' is the full dream cycle.")
    steps: list[str] | str = Field(description="Its dream steps ('all' for the full cycle).")
    every: str
    batch_size: int | None
    last_run: str | None
    next_run: str = Field(description="An ISO time, or 'now'.")


class MaintenanceStatus(BaseModel):
    jobs: list[MaintenanceJob]


class MaintenanceRuns(BaseModel):
    reports: list[DreamReport] = Field(description="The reports of the jobs that were due, in run order.")


class Topic(BaseModel):
    topic: str
    memories: int
    boxes: int
    traces: int
    entity: bool
    first_seen: str | None
    last_seen: str | None


class TopicIndex(BaseModel):
    user_id: str | None
    agent_id: str | None = Field(
        default=None, description="Set when the index covers one agent's memories (a key narrowed to agents)."
    )
    updated_at: str
    sealed_boxes: int
    topics: list[Topic]


def routes(r: APIRouter) -> None:
    from reverie.http.app import scoped

    @r.post(
        "/compact",
        response_model=CompactReport,
        tags=["health"],
        summary="Deduplicate memories and optimise the store; says what it reclaimed",
    )
    def compact(request: Request, body: Annotated[CompactRequest | None, Body()] = None) -> dict[str, Any]:
        req = body or CompactRequest()
        return scoped(request).compact(dedup=req.dedup, user_id=req.user_id)

    @r.get(
        "/maintenance",
        response_model=MaintenanceStatus,
        tags=["dream"],
        summary="The maintenance schedule: each job's interval, last and next run",
    )
    def maintenance(request: Request) -> dict[str, Any]:
        return {"jobs": scoped(request).maintenance_status()}

    @r.post(
        "/maintenance/run",
        response_model=MaintenanceRuns,
        tags=["dream"],
        summary="Run the maintenance jobs that are due now",
    )
    def maintenance_run(request: Request) -> dict[str, Any]:
        return {"reports": scoped(request).maintain()}

    @r.get("/topics", response_model=TopicIndex, tags=["health"], summary="What a user's memory is about")
    def topics(
        request: Request,
        user_id: ScopeParam = None,
        agent_id: Annotated[
            str | None,
            Query(
                min_length=1, max_length=256, pattern=TEXT_PATTERN, description="Only what this agent's memories name."
            ),
        ] = None,
        refresh: Annotated[bool, Query(description="Build it now.")] = False,
    ) -> dict[str, Any]:
        return scoped(request).topic_index(user_id=user_id, agent_id=agent_id, refresh=refresh)


__all__ = ["routes"]
