"""The REST API (``reverie serve``): a thin FastAPI adapter over one :class:`reverie.Memory`.

Every endpoint calls one method of a :class:`~reverie.scoped.ScopedMemory` — the memory as the
caller's credential (attached by the :class:`~reverie.http.security.Guard`) may use it — and
returns its result; reverie errors become RFC 7807 problem responses (see
:mod:`reverie.http.problems`). Sync endpoints run in FastAPI's thread pool; ``Memory`` and its
store are thread-safe.
"""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, Annotated, Any

from fastapi import APIRouter, Body, FastAPI, Query, Request, Response
from fastapi.responses import StreamingResponse
from starlette.concurrency import run_in_threadpool

from reverie import __version__
from reverie.errors import InvalidInputError
from reverie.http import documents, keys, maintenance, problems
from reverie.http import models as m
from reverie.http.ops import Metrics, Observe, swagger_assets
from reverie.http.security import Authenticator, Guard, credential_of
from reverie.inspection import redact_target
from reverie.model import MemoryRecord
from reverie.scoped import ScopedMemory

if TYPE_CHECKING:
    from reverie.memory import Memory

#: 4 MiB is far above any valid request (content is at most limits.max_content_bytes)
DEFAULT_MAX_BODY = 4 * 1024 * 1024

MemoryIdPath = m.MemoryIdPath
_PROBLEM_REF = {"schema": {"$ref": "#/components/schemas/Problem"}}
_ERRORS: dict[int | str, dict[str, Any]] = {
    code: {"model": m.Problem, "description": desc, "content": {problems.PROBLEM_JSON: _PROBLEM_REF}}
    for code, desc in (
        (400, "The body is not JSON (or not UTF-8)"),
        (401, "Missing or wrong bearer token"),
        (403, "The credential does not cover this scope or operation"),
        (404, "No memory with this id (or one the credential may not see)"),
        (409, "Immutable memory, a state that does not allow it, or a concurrent change"),
        (413, "Request too large"),
        (422, "Invalid input"),
    )
}


def get_memory(request: Request) -> Memory:
    """The app's ``Memory`` itself (no credential check: the dashboard's admin pages use it)."""
    mem: Memory = request.app.state.memory
    return mem


def metrics(request: Request) -> Metrics | None:
    """The app's Prometheus metrics (``None`` when they are off)."""
    found: Metrics | None = getattr(request.app.state, "metrics", None)
    return found


def scoped(request: Request) -> ScopedMemory:
    """The memory as this request's credential may use it."""
    return ScopedMemory(get_memory(request), credential_of(request.scope))


def peek(mem: Memory, memory_id: str) -> MemoryRecord:
    """Read a memory (by id or unique id prefix) without counting an access (people looking are
    not the agent recalling)."""
    return mem.peek(memory_id)


def memory_filters(
    *,
    layer: str | None = None,
    status: str | None = None,
    category: str | None = None,
    pinned: bool | None = None,
    session_id: str | None = None,
    store: str | None = None,
) -> dict[str, Any] | None:
    """Query parameters → ``Memory.list``/``search`` filters (only the ones given)."""
    given = {
        "layer": layer,
        "status": status,
        "category": category,
        "pinned": pinned,
        "session_id": session_id,
        "store": store,
    }
    out = {k: v for k, v in given.items() if v is not None and v != ""}
    return out or None


def _history(mem: ScopedMemory, memory_id: str) -> list[dict[str, Any]]:
    return [
        {"at": e.at.isoformat(), "event": e.event, "reason": e.reason, "actor": e.actor, "data": e.data}
        for e in mem.history(memory_id)
    ]


def build_router() -> APIRouter:
    r = APIRouter(prefix="/v1", responses=_ERRORS)
    _memory_routes(r)
    _memory_id_routes(r)
    _user_routes(r)
    _lifecycle_routes(r)
    _engine_routes(r)
    _session_routes(r)
    _health_routes(r)
    _export_routes(r)
    _me_routes(r)
    keys.routes(r)
    maintenance.routes(r)
    documents.routes(r)
    return r


def _memory_routes(r: APIRouter) -> None:

    @r.post("/memories", status_code=201, response_model=m.AddResponse, tags=["memories"], summary="Remember something")
    def add_memory(request: Request, body: m.AddRequest) -> dict[str, Any]:
        res = scoped(request).add(
            body.content,
            user_id=body.user_id,
            agent_id=body.agent_id,
            session_id=body.session_id,
            metadata=body.metadata,
            when=body.when,
            source=body.source,
            infer=body.infer,
        )
        if (counter := metrics(request)) is not None:
            counter.added([res.action.value])
        return res.to_dict()

    @r.get(
        "/memories",
        response_model=m.MemoryPage,
        tags=["memories"],
        summary="List memories in a scope, a page at a time (no access is counted)",
    )
    def list_memories(
        request: Request,
        user_id: m.ScopeParam = None,
        agent_id: m.ScopeParam = None,
        all_users: bool = False,
        layer: m.LayerName | None = None,
        status: m.StatusName | None = None,
        store: m.StoreName | None = None,
        category: m.CategoryParam = None,
        pinned: bool | None = None,
        session_id: m.ScopeParam = None,
        order_by: m.OrderName = "created_at",
        descending: bool = True,
        limit: Annotated[int, Query(ge=1, le=1000, description="Memories per page.")] = 50,
        cursor: Annotated[
            str | None,
            Query(
                max_length=40,
                pattern=m.CURSOR_PATTERN,
                description="The `next_cursor` of the page before: the next page, in the order of that listing "
                "(order_by and descending are then taken from it).",
            ),
        ] = None,
        offset: Annotated[int, Query(ge=0, le=10_000_000, description="Skip this many (ignored with a cursor).")] = 0,
    ) -> dict[str, Any]:
        flt = memory_filters(
            layer=layer, status=status, category=category, pinned=pinned, session_id=session_id, store=store
        )
        start, order = offset, str(order_by)
        if cursor:  # a cursor continues the listing it came from, in its order
            start, order, descending = m.decode_cursor(cursor)
        mem = scoped(request)
        recs = mem.list(
            user_id=user_id,
            agent_id=agent_id,
            all_users=all_users,
            filters=flt,
            limit=limit,
            offset=start,
            order_by=order,
            descending=descending,
        )
        total = mem.count(user_id=user_id, agent_id=agent_id, all_users=all_users, filters=flt)
        more = start + len(recs) < total
        return {
            "items": [rec.to_dict() for rec in recs],
            "total": total,
            "limit": limit,
            "offset": start,
            "next_cursor": m.encode_cursor(start + len(recs), order_by=order, descending=descending) if more else None,
        }


def _memory_id_routes(r: APIRouter) -> None:
    @r.get(
        "/memories/{memory_id}",
        response_model=m.MemoryOut,
        tags=["memories"],
        summary="One memory (counts as an access)",
    )
    def get_one(request: Request, memory_id: MemoryIdPath) -> dict[str, Any]:
        return scoped(request).get(memory_id).to_dict()

    @r.patch("/memories/{memory_id}", response_model=m.MemoryOut, tags=["memories"], summary="Edit a memory")
    def update_one(request: Request, memory_id: MemoryIdPath, body: m.UpdateRequest) -> dict[str, Any]:
        rec = scoped(request).update(
            memory_id,
            body.content,
            metadata=body.metadata,
            category=body.category,
            importance=body.importance,
            reason=body.reason,
        )
        return rec.to_dict()

    @r.delete("/memories/{memory_id}", status_code=204, tags=["memories"], summary="Forget a memory for good (logged)")
    def forget_one(request: Request, memory_id: MemoryIdPath) -> Response:
        scoped(request).forget(memory_id)
        return Response(status_code=204)


def _user_routes(r: APIRouter) -> None:
    @r.get(
        "/users", response_model=m.UserList, tags=["users"], summary="The users with memories, and how many each has"
    )
    def users(request: Request, limit: Annotated[int, Query(ge=1, le=10_000)] = 1000) -> dict[str, Any]:
        found = scoped(request).users(limit=limit)
        return {"items": [{"user_id": u, "memories": n} for u, n in found], "total": len(found)}

    @r.delete(
        "/users/{user_id}",
        response_model=m.ForgetUserReport,
        tags=["users"],
        summary="Forget everything of one user (the right to be forgotten; logged, dry run first)",
    )
    def forget_user(
        request: Request,
        user_id: m.ScopePath,
        dry_run: Annotated[bool, Query(description="Only count what would be erased.")] = False,
    ) -> dict[str, Any]:
        """Erase every memory of the user (any status or store) with its relations, access log, history,
        full-text and vector index entries, and the user's memory boxes, clusters and conversation
        buffers. Other users are untouched. With `dry_run=true` nothing changes: the counts of what
        would go are returned. The ops log records the erasure and its counts, never a text."""
        return scoped(request).forget_user(user_id, dry_run=dry_run)


def _lifecycle_routes(r: APIRouter) -> None:
    @r.post("/memories/{memory_id}/pin", response_model=m.MemoryOut, tags=["lifecycle"], summary="Pin")
    def pin(request: Request, memory_id: MemoryIdPath) -> dict[str, Any]:
        return scoped(request).pin(memory_id).to_dict()

    @r.post("/memories/{memory_id}/unpin", response_model=m.MemoryOut, tags=["lifecycle"], summary="Unpin")
    def unpin(request: Request, memory_id: MemoryIdPath) -> dict[str, Any]:
        return scoped(request).unpin(memory_id).to_dict()

    @r.post(
        "/memories/{memory_id}/reactivate",
        response_model=m.MemoryOut,
        tags=["lifecycle"],
        summary="Bring a dormant or archived memory back to the hot store",
    )
    def reactivate(request: Request, memory_id: MemoryIdPath) -> dict[str, Any]:
        return scoped(request).reactivate(memory_id).to_dict()

    @r.post(
        "/memories/{memory_id}/undo-consolidation",
        tags=["lifecycle"],
        summary="Undo a dream consolidation (originals back to hot, summary invalidated)",
    )
    def undo_consolidation(request: Request, memory_id: MemoryIdPath) -> dict[str, Any]:
        return dict(scoped(request).undo_consolidation(memory_id))

    @r.post(
        "/memories/{memory_id}/promote",
        response_model=m.MemoryOut,
        tags=["lifecycle"],
        summary="Move up a layer (or to the given one)",
    )
    def promote(
        request: Request, memory_id: MemoryIdPath, body: Annotated[m.PromoteRequest | None, Body()] = None
    ) -> dict[str, Any]:
        layer = body.layer if body is not None else None
        return scoped(request).promote(memory_id, layer).to_dict()

    @r.post(
        "/memories/{memory_id}/demote", response_model=m.MemoryOut, tags=["lifecycle"], summary="Move down one layer"
    )
    def demote(request: Request, memory_id: MemoryIdPath) -> dict[str, Any]:
        return scoped(request).demote(memory_id).to_dict()

    @r.post(
        "/memories/{memory_id}/invalidate",
        response_model=m.MemoryOut,
        tags=["lifecycle"],
        summary="Mark as no longer true (kept)",
    )
    def invalidate(request: Request, memory_id: MemoryIdPath, body: m.InvalidateRequest) -> dict[str, Any]:
        return scoped(request).invalidate(memory_id, body.reason).to_dict()

    @r.post(
        "/memories/{memory_id}/feedback",
        response_model=m.MemoryOut,
        tags=["lifecycle"],
        summary="Say whether a memory helped (utility)",
    )
    def feedback(request: Request, memory_id: MemoryIdPath, body: m.FeedbackRequest) -> dict[str, Any]:
        return scoped(request).feedback(memory_id, useful=body.useful).to_dict()


def _engine_routes(r: APIRouter) -> None:
    @r.get(
        "/memories/{memory_id}/history",
        response_model=list[m.HistoryEventOut],
        tags=["memories"],
        summary="Every transition, oldest first",
    )
    def history(request: Request, memory_id: MemoryIdPath) -> list[dict[str, Any]]:
        return _history(scoped(request), memory_id)

    @r.get(
        "/memories/{memory_id}/accesses",
        response_model=m.AccessList,
        tags=["memories"],
        summary="Its most recent recalls: when, how and in which session (newest first)",
    )
    def accesses(
        request: Request, memory_id: MemoryIdPath, limit: Annotated[int, Query(ge=1, le=10_000)] = 50
    ) -> dict[str, Any]:
        events = scoped(request).accesses(memory_id, limit=limit)
        return {
            "items": [{"at": e.at.isoformat(), "kind": e.kind, "session_id": e.session_id} for e in events],
            "total": len(events),
        }

    @r.get(
        "/memories/{memory_id}/strength",
        response_model=dict[str, m.StrengthTerm],
        tags=["memories"],
        summary="Every strength value with its formula terms",
    )
    def strength(request: Request, memory_id: MemoryIdPath) -> dict[str, Any]:
        return scoped(request).explain_strength(memory_id)

    @r.get(
        "/memories/{memory_id}/relations",
        response_model=list[m.RelationOut],
        tags=["memories"],
        summary="Relations from and to a memory",
    )
    def relations(request: Request, memory_id: MemoryIdPath) -> list[dict[str, Any]]:
        return [m.relation_dict(rel) for rel in scoped(request).relations(memory_id)]

    @r.post(
        "/search",
        response_model=m.SearchResponse,
        tags=["search"],
        summary="Recall the most relevant memories (each hit counts as an access)",
    )
    def search(request: Request, body: m.SearchRequest) -> dict[str, Any]:
        filters = body.filters.model_dump(exclude_none=True) if body.filters is not None else None
        hits = scoped(request).search(
            body.query,
            user_id=body.user_id,
            agent_id=body.agent_id,
            session_id=body.session_id,
            k=body.k,
            filters=filters or None,
        )
        if (counter := metrics(request)) is not None:
            counter.searched("search")
        return {"results": [h.to_dict() for h in hits]}


def _session_routes(r: APIRouter) -> None:
    @r.post(
        "/observe",
        response_model=m.ObserveResponse,
        tags=["search"],
        summary="Feed one conversation turn to the observer and the write path",
    )
    def observe(request: Request, body: m.ObserveRequest) -> dict[str, Any]:
        results = scoped(request).observe(
            body.message,
            role=body.role,
            user_id=body.user_id,
            agent_id=body.agent_id,
            session_id=body.session_id,
            when=body.when,
            metadata=body.metadata,
        )
        if (counter := metrics(request)) is not None:
            counter.added(res.action.value for res in results)
        return {"results": [res.to_dict() for res in results]}

    @r.post(
        "/context",
        response_model=m.ContextOut,
        tags=["search"],
        summary="The memory block for a prompt, within a token budget",
    )
    def context(request: Request, body: m.ContextRequest) -> dict[str, Any]:
        block = scoped(request).context(
            body.query,
            user_id=body.user_id,
            agent_id=body.agent_id,
            session_id=body.session_id,
            budget_tokens=body.budget_tokens,
            k=body.k,
        )
        if (counter := metrics(request)) is not None:
            counter.searched("context")
        return {
            "text": block.text,
            "items": [dataclasses.asdict(i) for i in block.items],
            "skipped": block.skipped,
            "budget_tokens": block.budget_tokens,
            "used_tokens": block.used_tokens,
        }

    @r.post(
        "/sessions/{session_id}/end",
        response_model=m.EndSessionReport,
        tags=["search"],
        summary="End a session: flush, promote, clear its working memory",
    )
    def end_session(
        request: Request,
        session_id: m.ScopePath,
        body: Annotated[m.EndSessionRequest | None, Body()] = None,
    ) -> dict[str, Any]:
        return dict(scoped(request).end_session(session_id, user_id=body.user_id if body is not None else None))


def _health_routes(r: APIRouter) -> None:

    @r.get(
        "/stats",
        response_model=m.StatsOut,
        tags=["health"],
        summary="Health check: how many memories per layer and status, with their energy",
    )
    def stats(request: Request, user_id: m.ScopeParam = None) -> dict[str, Any]:
        return scoped(request).served_stats(user_id=user_id, full_target=True)

    @r.post("/dream", response_model=m.DreamReport, tags=["dream"], summary="Run the dream cycle now")
    def dream(request: Request, body: Annotated[m.DreamRequest | None, Body()] = None) -> dict[str, Any]:
        steps = body.steps if body is not None else None
        report = scoped(request).dream(steps=steps)
        if (counter := metrics(request)) is not None:
            counter.dreamed(report)
        return dict(report)

    @r.get(
        "/dream/reports",
        response_model=m.DreamReports,
        tags=["dream"],
        summary="Reports of past dream cycles, newest first",
    )
    def dream_reports(request: Request) -> dict[str, Any]:
        return {"reports": scoped(request).dream_reports()}


def _export_routes(r: APIRouter) -> None:
    @r.get(
        "/export",
        tags=["export"],
        summary="Every memory as JSON lines (all statuses and stores)",
        response_class=StreamingResponse,
        responses={
            200: {
                "content": {"application/x-ndjson": {"schema": {"type": "string"}}},
                "description": "One MemoryOut object per line.",
            }
        },
    )
    def export(
        request: Request,
        user_id: Annotated[
            str | None, Query(min_length=1, max_length=256, pattern=m.TEXT_PATTERN, description="Only this user.")
        ] = None,
    ) -> StreamingResponse:
        records = scoped(request).export(user_id=user_id)

        def lines() -> Iterator[str]:
            for rec in records:
                yield json.dumps(rec.to_dict(), ensure_ascii=False) + "\n"

        return StreamingResponse(
            lines(),
            media_type="application/x-ndjson",
            headers={"Content-Disposition": 'attachment; filename="reverie-export.jsonl"'},
        )

    @r.post(
        "/import",
        response_model=m.ImportReport,
        tags=["export"],
        summary="Import exported records (JSON lines); bad lines are rejected alone",
        openapi_extra={
            "requestBody": {
                "required": True,
                "content": {"application/x-ndjson": {"schema": {"type": "string", "minLength": 1, "pattern": r"\S"}}},
                "description": "One exported memory record (a MemoryOut object, optionally with an "
                "`embedding` list) per line, as GET /v1/export writes them.",
            }
        },
    )
    async def import_records(request: Request) -> dict[str, Any]:
        from reverie import io

        body = await request.body()
        if not body.strip():
            raise InvalidInputError("the body holds no records: send exported records, one JSON object per line")
        entries = list(io.jsonl_bytes_entries(body, where="line"))
        mem = scoped(request)
        report: dict[str, Any] = await run_in_threadpool(mem.restore, entries)
        return report


def _me_routes(r: APIRouter) -> None:
    @r.get(
        "/me",
        response_model=m.CredentialOut,
        tags=["health"],
        summary="The caller's credential: its users, agents and whether it is an admin",
    )
    def me(request: Request) -> dict[str, Any]:
        return scoped(request).credential.describe()


def create_app(
    mem: Memory,
    *,
    token: str | None = None,
    allowed_hosts: list[str] | None = None,
    max_body: int = DEFAULT_MAX_BODY,
    dashboard: bool = True,
    with_metrics: bool = True,
    access_log: bool = False,
    require_credentials: bool = False,
) -> FastAPI:
    """The FastAPI app over ``mem``; wrap it in the :class:`Guard` (credentials — ``token`` and the
    API keys in ``mem``'s store —, hosts, body size). ``with_metrics`` serves ``/metrics``;
    ``access_log`` writes a line per request to the ``reverie.access`` logger. ``require_credentials``
    (a bind beyond loopback) makes every request need a credential whatever happens to the keys; so does
    an active key at start (see :class:`~reverie.http.security.Authenticator`).

    The caller owns ``mem`` (the app never closes it)."""
    app = FastAPI(
        docs_url=None,
        redoc_url=None,
        title="reverie",
        version=__version__,
        description="Long-term memory for AI agents: remember, recall, consolidate, forget. "
        "Errors are RFC 7807 problem documents whose `error` names the reverie error type.",
        openapi_tags=[
            {"name": "memories"},
            {"name": "lifecycle"},
            {"name": "search"},
            {"name": "health"},
            {"name": "dream"},
            {"name": "export"},
            {"name": "users"},
            {"name": "keys"},
        ],
    )
    app.state.memory = mem
    app.state.token = token
    app.state.auth = Authenticator(token=token, keys=mem.key_ring(), closed=require_credentials)
    app.state.auth.required()  # an active key now: credentials are required for good
    problems.install(app)

    app.state.metadata_depth = mem.settings.limits.max_metadata_depth
    app.state.metrics = Metrics(mem) if with_metrics else None
    _ops_routes(app)
    app.include_router(build_router())
    if dashboard:
        from reverie.web import mount_dashboard

        mount_dashboard(app)
    app.add_middleware(Guard, auth=app.state.auth, max_body=max_body, allowed_hosts=allowed_hosts)
    app.add_middleware(Observe, metrics=app.state.metrics, access_log=access_log)
    _problem_media_type_only(app)
    return app


def _ops_routes(app: FastAPI) -> None:
    from fastapi.openapi.docs import get_swagger_ui_html
    from fastapi.staticfiles import StaticFiles

    @app.get(
        "/healthz",
        response_model=m.Health,
        tags=["health"],
        summary="Liveness: the process answers (no credential needed)",
    )
    def healthz() -> dict[str, str]:
        return {"status": "ok", "version": __version__}

    @app.get(
        "/readyz",
        response_model=m.Ready,
        tags=["health"],
        summary="Readiness: the store answers a read (no credential needed; 503 when it does not)",
        responses={
            503: {
                "model": m.Problem,
                "description": "The store cannot be read",
                "content": {problems.PROBLEM_JSON: _PROBLEM_REF},
            }
        },
    )
    def readyz(request: Request) -> Any:
        mem = get_memory(request)
        start = time.perf_counter()
        try:
            mem.check_ready()
        except Exception as exc:  # any failure to read means: not ready
            return problems.problem(
                503, "Service Unavailable", f"the store cannot be read: {type(exc).__name__}", "StoreError"
            )
        return {"status": "ready", "backend": mem.backend, "store_ms": round((time.perf_counter() - start) * 1000, 3)}

    @app.get(
        "/metrics",
        tags=["health"],
        summary="Prometheus metrics (text exposition format)",
        response_class=Response,
        responses={
            200: {
                "content": {"text/plain": {"schema": {"type": "string"}}},
                "description": "Prometheus text format 0.0.4.",
            },
            **{code: _ERRORS[code] for code in (401, 403, 404)},
        },
    )
    async def metrics_page(request: Request) -> Response:
        from prometheus_client import CONTENT_TYPE_LATEST

        found = metrics(request)
        if found is None:
            return problems.problem(404, "Not Found", "metrics are off for this server", "NotFoundError")
        body = await run_in_threadpool(found.exposition)
        return Response(body, media_type=CONTENT_TYPE_LATEST)

    app.mount("/static/swagger", StaticFiles(directory=str(swagger_assets())), name="swagger")

    @app.get("/docs", include_in_schema=False)
    def docs(request: Request) -> Response:
        root = request.scope.get("root_path", "")
        return get_swagger_ui_html(
            openapi_url=f"{root}/openapi.json",
            title="reverie API",
            swagger_js_url=f"{root}/static/swagger/swagger-ui-bundle.js",
            swagger_css_url=f"{root}/static/swagger/swagger-ui.css",
            swagger_favicon_url=f"{root}/static/swagger/favicon.png",
        )


#: the record's enumerations described for API users (the record's own docstrings name design sources)
SCHEMA_DESCRIPTIONS = {
    "Layer": "What kind of memory: working (this conversation), episodic (events), semantic (facts), procedural "
    "(how to do things), codebase.",
    "Status": "Lifecycle: active, superseded (replaced by a newer memory), dormant, archived, expired, "
    "invalidated (no longer true, kept). Only an explicit forget deletes.",
    "StoreTier": "hot (searched by default) or cold (deep recall, direct reads; reactivatable).",
    "Precision": "How the memory's vector is stored: float32, or quantised to int8, int4 or int2 as it fades.",
    "TemporalType": "persistent (true until changed) or time_bounded (true for a period).",
    "MemoryKind": "episode (something that happened) or note (a standing fact or preference).",
}

#: operations anyone may call (no credential): the OpenAPI document says so per operation
PUBLIC_OPERATIONS = frozenset({"/healthz", "/readyz"})
SECURITY_SCHEMES = {
    "bearer": {
        "type": "http",
        "scheme": "bearer",
        "description": "An API key from `reverie keys create` (rvk_…), or REVERIE_API_TOKEN (admin). "
        "Without either configured, a server on 127.0.0.1 needs no credential.",
    },
}


#: request bodies whose ``metadata`` is a memory's metadata (checked by the engine as written)
METADATA_BODIES = ("AddRequest", "UpdateRequest", "ObserveRequest")


def _describe_metadata(spec: dict[str, Any], depth: int) -> None:
    """Every request body's ``metadata`` described as the engine takes it (see :func:`m.metadata_schemas`)."""
    schemas = spec.setdefault("components", {}).setdefault("schemas", {})
    schemas.update(m.metadata_schemas(depth))
    for name in METADATA_BODIES:
        prop = schemas.get(name, {}).get("properties", {}).get("metadata")
        if prop is not None:
            description = prop.get("description")
            prop.clear()
            prop.update({"anyOf": [{"$ref": "#/components/schemas/Metadata"}, {"type": "null"}], "default": None})
            if description:
                prop["description"] = description


def _problem_media_type_only(app: FastAPI) -> None:
    """Error responses are documented as ``application/problem+json`` (what they are), not JSON; the
    document declares the bearer security scheme."""
    original = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            spec = original()
            spec.setdefault("components", {})["securitySchemes"] = SECURITY_SCHEMES
            for name, text in SCHEMA_DESCRIPTIONS.items():
                schema = spec["components"].get("schemas", {}).get(name)
                if schema is not None:
                    schema["description"] = text
            _describe_metadata(spec, app.state.metadata_depth)
            spec["security"] = [{"bearer": []}]
            for path in PUBLIC_OPERATIONS:
                for op in spec.get("paths", {}).get(path, {}).values():
                    op["security"] = []
            for ops in spec.get("paths", {}).values():
                for op in ops.values():
                    for code, resp in op.get("responses", {}).items():
                        content = resp.get("content", {})
                        if code.isdigit() and int(code) >= 400 and problems.PROBLEM_JSON in content:
                            content.pop("application/json", None)
            app.openapi_schema = spec
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]


__all__ = ["DEFAULT_MAX_BODY", "create_app", "get_memory", "memory_filters", "peek", "redact_target", "scoped"]
