"""The dashboard served by ``reverie serve`` at ``/``: server-rendered pages (Jinja2), inline SVG
charts and one small local script for the buttons (which call the REST API). Nothing from a CDN.

Pages: ``/`` (health check: counts per layer and status, chart, last dream report),
``/memories`` (searchable, filterable list), ``/memories/{id}`` (content, provenance, strengths
with their formula terms, retention curve, relations graph, history, buttons), ``/dream`` (the last
report and the maintenance schedule), ``/topics`` (a user's topic index and recent memory boxes),
``/documents`` (a user's profile, entity profiles, reflections, compression guidelines, write decisions and
verbatim artifacts; :mod:`reverie.web.documents`).
Looking at a memory does not count as an access; a text search does (it is a real recall).
"""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs

from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from fastapi.staticfiles import StaticFiles
from markupsafe import Markup
from starlette.templating import Jinja2Templates

from reverie import __version__
from reverie.errors import InvalidInputError, NotFoundError, ReverieError
from reverie.model import Layer, Status
from reverie.web import documents, svg

if TYPE_CHECKING:
    from reverie.memory import Memory
    from reverie.model import MemoryRecord

HERE = Path(__file__).resolve().parent
templates = Jinja2Templates(directory=str(HERE / "templates"))
STATUSES = [s.value for s in Status]
LAYERS = [v.value for v in Layer]
CURVE_DAYS = 90
CURVE_POINTS = 61


def _mem(request: Request) -> Memory:
    mem: Memory = request.app.state.memory
    return mem


def _render(request: Request, name: str, status_code: int = 200, **context: Any) -> HTMLResponse:
    context.setdefault("version", __version__)
    return templates.TemplateResponse(request, name, context, status_code=status_code)


def _error_page(request: Request, exc: ReverieError) -> HTMLResponse:
    code = 404 if isinstance(exc, NotFoundError) else 422 if isinstance(exc, InvalidInputError) else 500
    return _render(request, "error.html", status_code=code, error=type(exc).__name__, detail=str(exc))


def retention_curve(mem: Memory, rec: MemoryRecord) -> dict[str, Any]:
    """Retrievability (FSRS) and retention (configured seed 002 mode) from the last access to
    ``CURVE_DAYS`` ahead, evaluated with the engine's own ``explain_strength`` at each instant."""
    from reverie.dynamics.explain import explain_strength

    now = mem.now()
    start = min(rec.last_accessed_at or rec.created_at, now)
    end = now + timedelta(days=CURVE_DAYS)
    access_times = mem.store.access_times([rec.id]).get(rec.id, [])
    xs: list[float] = []
    series: dict[str, list[float]] = {"retrievability (FSRS)": [], "retention": []}
    for i in range(CURVE_POINTS):
        at = start + (end - start) * (i / (CURVE_POINTS - 1))
        values = explain_strength(rec, now=at, cfg=mem.settings.dynamics, access_times=access_times)
        xs.append((at - start).total_seconds() / 86400)
        series["retrievability (FSRS)"].append(float(values["retrievability"]["value"]))
        series["retention"].append(float(values["retention"]["value"]))
    marker = (now - start).total_seconds() / 86400
    y_max = max(1.0, *series["retention"])
    return {"svg": Markup(svg.line_plot(xs, series, x_label="days since the last access", marker_x=marker,
                                        y_max=y_max)),
            "start": start}


def relations_view(mem: Memory, rec: MemoryRecord) -> dict[str, Any]:
    rels = mem.store.relations([rec.id])
    other_ids = sorted({r.dst_id if r.src_id == rec.id else r.src_id for r in rels} - {rec.id})
    others = mem.store.get(other_ids) if other_ids else {}
    nodes = [svg.Node(i, others[i].content if i in others else i[:8], f"/memories/{i}") for i in other_ids]
    edges = [svg.Edge(r.src_id, r.dst_id, r.type.value) for r in rels]
    centre = svg.Node(rec.id, rec.content, f"/memories/{rec.id}")
    return {"svg": Markup(svg.relation_graph(centre, nodes, edges)), "relations": rels, "others": others}


def _list_filters(params: dict[str, str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if params.get("layer"):
        out["layer"] = params["layer"]
    status = params.get("status", "")
    if status == "any":
        out["status"] = STATUSES
        out["store"] = ["hot", "cold"]
    elif status:
        out["status"] = status
    if params.get("category"):
        out["category"] = params["category"]
    if params.get("pinned") in ("yes", "no"):
        out["pinned"] = params["pinned"] == "yes"
    return out


def mount_dashboard(app: FastAPI) -> None:
    """Add the dashboard pages, ``/login`` and ``/static`` to ``app``."""
    app.mount("/static", StaticFiles(directory=str(HERE / "static")), name="static")

    @app.get("/", response_class=HTMLResponse, include_in_schema=False)
    def overview(request: Request) -> HTMLResponse:
        from reverie.http.app import redact_target

        mem = _mem(request)
        try:
            stats = mem.stats()
        except ReverieError as exc:
            return _error_page(request, exc)
        stats["target"] = redact_target(stats["target"])
        table: dict[str, dict[str, int]] = {}
        for row in stats["rows"]:
            table.setdefault(row["layer"], {})[row["status"]] = row["count"]
        return _render(request, "overview.html", stats=stats, table=table, statuses=STATUSES,
                       chart=Markup(svg.layer_status_chart(stats["rows"])),
                       last_dream=mem.store.get_state("dream:last"))

    @app.get("/memories", response_class=HTMLResponse, include_in_schema=False)
    def memories(request: Request) -> HTMLResponse:
        mem = _mem(request)
        params = {k: v.strip() for k, v in request.query_params.items()}
        user_id = params.get("user_id") or None
        agent_id = params.get("agent_id") or None
        query = params.get("q", "")
        try:
            limit = min(max(int(params.get("limit") or 50), 1), 500)
        except ValueError:
            limit = 50
        filters = _list_filters(params)
        hits: list[Any] = []
        records: list[MemoryRecord] = []
        error = None
        try:
            if query:
                hits = mem.search(query, user_id=user_id, agent_id=agent_id, k=limit, filters=filters or None,
                                  all_users=user_id is None)
            else:
                records = mem.list(user_id=user_id, agent_id=agent_id, all_users=user_id is None,
                                   filters=filters or None, limit=limit)
        except ReverieError as exc:
            error = f"{type(exc).__name__}: {exc}"
        rows = [(h.memory, h.score) for h in hits] or [(r, None) for r in records]
        return _render(request, "memories.html", rows=rows, params=params, layers=LAYERS, statuses=STATUSES,
                       query=query, error=error)

    @app.get("/memories/{memory_id}", response_class=HTMLResponse, include_in_schema=False)
    def memory_page(request: Request, memory_id: str) -> HTMLResponse:
        from reverie.http.app import peek

        mem = _mem(request)
        try:
            rec = peek(mem, memory_id)
            strengths = mem.explain_strength(rec.id)
            history = mem.history(rec.id)
        except ReverieError as exc:
            return _error_page(request, exc)
        graph = relations_view(mem, rec)
        shown = {rec.id, *(i for r in graph["relations"] for i in (r.src_id, r.dst_id))}
        return _render(request, "memory.html", rec=rec, strengths=strengths, history=history,
                       curve=retention_curve(mem, rec), graph=graph, layers=LAYERS,
                       fields=_field_groups(rec), short=mem.short_ids(shown))

    _mount_maintenance(app)
    documents.mount(app, _render)
    _mount_login(app)


def _mount_maintenance(app: FastAPI) -> None:
    @app.get("/dream", response_class=HTMLResponse, include_in_schema=False)
    def dream_page(request: Request) -> HTMLResponse:
        mem = _mem(request)
        try:
            schedule = mem.maintenance_status()
        except ReverieError as exc:
            return _error_page(request, exc)
        return _render(request, "dream.html", report=mem.store.get_state("dream:last"), schedule=schedule)

    @app.get("/topics", response_class=HTMLResponse, include_in_schema=False)
    def topics_page(request: Request) -> HTMLResponse:
        mem = _mem(request)
        user_id = request.query_params.get("user_id", "").strip() or None
        index, boxes, users, error = None, [], [], None
        try:
            if user_id is None:
                users = [(u, n) for u, n in mem.users(limit=200) if u is not None]
            else:
                index = mem.topic_index(user_id=user_id)
                boxes = mem.store.sealed_boxes(user_id, limit=20)
        except ReverieError as exc:
            error = f"{type(exc).__name__}: {exc}"
        return _render(request, "topics.html", user_id=user_id, index=index, boxes=boxes, users=users, error=error)


def _mount_login(app: FastAPI) -> None:
    @app.get("/login", response_class=HTMLResponse, include_in_schema=False)
    def login_form(request: Request) -> HTMLResponse:
        return _render(request, "login.html", failed=False)

    @app.post("/login", include_in_schema=False)
    async def login(request: Request) -> Response:
        from starlette.concurrency import run_in_threadpool

        from reverie.http.security import COOKIE, Authenticator

        auth: Authenticator = request.app.state.auth
        given = parse_qs((await request.body()).decode("utf-8", "replace")).get("token", [""])[0]
        if not await run_in_threadpool(auth.required):
            return RedirectResponse("/", status_code=303)
        cookie = await run_in_threadpool(auth.login, given)  # the API token or an admin API key
        if cookie is None:
            return _render(request, "login.html", status_code=401, failed=True)
        response = RedirectResponse("/", status_code=303)
        response.set_cookie(COOKIE, cookie, httponly=True, samesite="strict", secure=request.url.scheme == "https")
        return response


def _field_groups(rec: MemoryRecord) -> list[tuple[str, list[tuple[str, Any]]]]:
    d = rec.to_dict()
    groups = {
        "scope": ["user_id", "agent_id", "session_id", "instance_id"],
        "kind and place": ["layer", "store", "status", "category", "memory_kind", "sub_tier", "temporal_type",
                           "entities", "pinned", "immutable", "core", "flashbulb"],
        "provenance": ["source", "trust", "source_confidence", "write_source", "data_source", "inputs",
                       "superseded_by", "box_id"],
        "time": ["valid_from", "valid_until", "recorded_at", "created_at", "updated_at", "last_accessed_at",
                 "access_count"],
        "stored strengths": ["importance", "importance_channels", "surprise", "utility", "energy", "stability",
                             "difficulty", "storage_strength", "retrieval_strength", "reinforcement_count",
                             "confirmations"],
        "emotion": ["emotion_valence", "emotion_arousal", "emotion_label"],
        "lifecycle (seed 004)": ["lifecycle_state", "verification_state", "policy_class", "confidence",
                                 "heat_score", "decay_score"],
    }
    shown = {k for keys in groups.values() for k in keys} | {"content", "id", "content_hash", "metadata", "version"}
    out = [(name, [(k, d.get(k)) for k in keys]) for name, keys in groups.items()]
    rest = [(k, v) for k, v in d.items() if k not in shown]
    out.append(("other", [("id", d["id"]), ("content_hash", d["content_hash"]), ("version", d["version"]),
                          ("metadata", d["metadata"]), *rest]))
    return out


def fmt_value(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.4g}"
    if isinstance(value, datetime):
        return value.isoformat(timespec="seconds")
    if value is None:
        return "—"
    return str(value)


templates.env.filters["v"] = fmt_value

__all__ = ["mount_dashboard", "relations_view", "retention_curve"]
