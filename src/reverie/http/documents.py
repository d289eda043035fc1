"""REST routes for a user's readable documents and its action telemetry.

``GET /v1/documents`` (the behavioural profile, entity profiles, reflections, compression guidelines and the
topic index the consolidation pass keeps) and ``GET /v1/actions`` (the recent write decisions: each action of
the memory-action policy with its outcome and eligibility context).
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query, Request
from pydantic import BaseModel, Field

from reverie.http import models as m


class Documents(BaseModel):
    profile: dict[str, Any] | None = Field(description="The behavioural profile (sections of lines, its line cap).")
    entities: dict[str, Any] | None = Field(description="Entity profiles, by entity.")
    reflections: dict[str, Any] | None = Field(description="Reflections, consolidated past their size limit.")
    guidelines: dict[str, Any] | None = Field(description="Compression guidelines learned from the action telemetry.")
    topics: dict[str, Any] = Field(description="The topic index.")


class ActionEventModel(BaseModel):
    action: str = Field(
        description="store_episode, store_note, update_note, create_artifact, summarize_node, discard or link_graph."
    )
    outcome: str
    at: str
    user_id: str | None
    agent_id: str | None
    memory_id: str | None
    confidence: float
    lifecycle_state: str
    importance: float
    source: str


class ActionTelemetry(BaseModel):
    actions: list[ActionEventModel]


def routes(r: APIRouter) -> None:
    from reverie.http.app import scoped

    @r.get(
        "/documents",
        response_model=Documents,
        tags=["health"],
        summary="A user's profile, entity profiles, reflections, compression guidelines and topic index",
    )
    def documents(
        request: Request,
        user_id: m.ScopeParam = None,
        refresh: Annotated[bool, Query(description="Build them now.")] = False,
    ) -> dict[str, Any]:
        return scoped(request).documents(user_id=user_id, refresh=refresh)

    @r.get(
        "/actions",
        response_model=ActionTelemetry,
        tags=["health"],
        summary="A user's recent write decisions (action telemetry), newest first",
    )
    def actions(
        request: Request,
        user_id: m.ScopeParam = None,
        limit: Annotated[int, Query(ge=1, le=10_000)] = 100,
        since: Annotated[
            str | None,
            Query(
                max_length=64,
                pattern=r"^(1\d{3}|[2-8]\d{3})-",
                json_schema_extra={"format": "date-time"},
                description="Only decisions at or after this time (RFC 3339 with its UTC offset).",
            ),
        ] = None,
    ) -> dict[str, Any]:
        return {"actions": scoped(request).action_telemetry(user_id=user_id, limit=limit, since=since)}


__all__ = ["routes"]
