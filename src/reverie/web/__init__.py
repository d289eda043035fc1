"""The dashboard served by ``reverie serve`` at ``/``: server-rendered pages (Jinja2), inline SVG
charts and one small local script for the buttons (which call the REST API). Nothing from a CDN.

Pages: ``/`` (health check: counts per layer and status, chart, last dream report),
``/memories`` (search, filters, sorting, pages, bulk pin/invalidate/forget, a new memory),
``/memories/{id}`` (content and edit, what decides its forgetting in words with its one curve,
relations graph, recalls, history, buttons), ``/dream`` (reports and the memories each changed),
``/agents`` (who wrote what), ``/keys`` (API keys), ``/topics`` (a user's topic index and recent memory
boxes), ``/documents`` (a user's profile, entity profiles, reflections, compression guidelines, write
decisions and verbatim artifacts; :mod:`reverie.web.documents`). ``/dream`` also shows the maintenance
schedule. Every link carries the proxy's root path.
Looking at a memory does not count as an access; a text search does (it is a real recall).
"""

from __future__ import annotations

import time
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, urlencode

from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from fastapi.staticfiles import StaticFiles
from markupsafe import Markup
from starlette.templating import Jinja2Templates

from reverie import __version__
from reverie.errors import InvalidInputError, NotFoundError, ReverieError
from reverie.inspection import redact_target
from reverie.model import Layer, Status
from reverie.web import documents, svg

if TYPE_CHECKING:
    from reverie.http.security import Authenticator
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


def _root(request: Request) -> str:
    """The path prefix a proxy serves the app under (``--root-path``), for every link a page makes."""
    return str(request.scope.get("root_path", "")).rstrip("/")


def _render(request: Request, name: str, status_code: int = 200, **context: Any) -> HTMLResponse:
    context.setdefault("version", __version__)
    context.setdefault("root", _root(request))
    context.setdefault("current_user", request.query_params.get("user_id", ""))
    if "users" not in context:
        context["users"] = _switcher_users(request)
    return templates.TemplateResponse(request, name, context, status_code=status_code)


#: the user switcher's list is read at most this often (it counts over every memory)
USERS_TTL_S = 10.0


def _switcher_users(request: Request) -> list[str | None]:
    cached = getattr(request.app.state, "switcher_users", None)
    now = time.monotonic()
    if cached is not None and now - cached[0] < USERS_TTL_S:
        users: list[str | None] = cached[1]
        return users
    try:
        users = [u for u, _n in _mem(request).users(limit=200)]
    except ReverieError:
        return []
    request.app.state.switcher_users = (now, users)
    return users


def _error_page(request: Request, exc: ReverieError) -> HTMLResponse:
    code = 404 if isinstance(exc, NotFoundError) else 422 if isinstance(exc, InvalidInputError) else 500
    return _render(request, "error.html", status_code=code, error=type(exc).__name__, detail=str(exc))


def forgetting_view(mem: Memory, rec: MemoryRecord, strengths: dict[str, Any]) -> dict[str, Any]:
    """The one curve that decides whether the dream cycle lets the memory go — its retention under the
    configured curve — from now to ``CURVE_DAYS`` ahead if nobody recalls it, with the archive line, and
    the rule in plain sentences. Evaluated with the engine's own ``explain_strength`` at each instant."""
    from reverie.dynamics.explain import explain_strength

    pc = mem.settings.dynamics.promotion
    now = mem.now()
    access_times = mem.access_times(rec.id)
    xs: list[float] = []
    ys: list[float] = []
    for i in range(CURVE_POINTS):
        at = now + timedelta(days=CURVE_DAYS * i / (CURVE_POINTS - 1))
        values = explain_strength(rec, now=at, cfg=mem.settings.dynamics, access_times=access_times)
        xs.append(CURVE_DAYS * i / (CURVE_POINTS - 1))
        ys.append(min(1.0, float(values["retention"]["value"])))
    line = float(pc.archive_retention)
    crossing = next((x for x, y in zip(xs, ys, strict=True) if y < line), None)
    protected = [
        why
        for why, on in (
            ("pinned", rec.pinned),
            ("immutable", rec.immutable),
            ("a flashbulb memory (strong emotion)", rec.flashbulb),
            (f"in its category's minimum retention ({rec.category})", _value(strengths, "min_retention") is True),
        )
        if on
    ]
    in_30 = ys[min(range(len(xs)), key=lambda i: abs(xs[i] - 30))]
    plot = svg.line_plot(
        xs,
        {"retention if not recalled": ys},
        x_label="days from now",
        y_max=1.0,
        marker_x=crossing,
        marker_label="archive line crossed",
        hlines={f"archive line {line:.0%}": line},
    )
    return {
        "svg": Markup(plot),
        "now": ys[0],
        "in_30": in_30,
        "line": line,
        "crossing": crossing,
        "crossing_at": None if crossing is None else now + timedelta(days=crossing),
        "protected": protected,
        "mode": mem.settings.dynamics.retention.mode,
        "age_days": pc.archive_age_days,
        "importance_max": pc.archive_importance,
        "accesses_max": pc.archive_accesses,
        "importance": rec.importance,
        "accesses": rec.access_count,
    }


def _value(data: dict[str, Any], name: str) -> Any:
    item = data.get(name)
    return item.get("value") if isinstance(item, dict) else item


def relations_view(mem: Memory, rec: MemoryRecord, root: str = "") -> dict[str, Any]:
    rels = mem.relations(rec.id)
    other_ids = sorted({r.dst_id if r.src_id == rec.id else r.src_id for r in rels} - {rec.id})
    others = mem.peek_many(other_ids)
    nodes = [svg.Node(i, others[i].content if i in others else i[:8], f"{root}/memories/{i}") for i in other_ids]
    edges = [svg.Edge(r.src_id, r.dst_id, r.type.value.replace("_", " ")) for r in rels]
    centre = svg.Node(rec.id, rec.content, f"{root}/memories/{rec.id}")
    return {
        "svg": Markup(svg.relation_graph(centre, nodes[: svg.MAX_GRAPH_NODES], edges)),
        "relations": rels,
        "others": others,
        "hidden": max(0, len(nodes) - svg.MAX_GRAPH_NODES),
    }


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
        out["store"] = ["hot", "cold"]
    if params.get("category"):
        out["category"] = params["category"]
    if params.get("pinned") in ("yes", "no"):
        out["pinned"] = params["pinned"] == "yes"
    return out


def _int(value: str | None, default: int, lo: int, hi: int) -> int:
    try:
        return min(max(int(value or default), lo), hi)
    except ValueError:
        return default


#: the columns a list can be sorted by: label → record field
SORTS = {
    "recorded": "created_at",
    "happened": "valid_from",
    "last recalled": "last_accessed_at",
    "recalls": "access_count",
    "importance": "importance",
    "energy": "energy",
    "edited": "updated_at",
}


def _page_url(request: Request, **changes: Any) -> str:
    params = dict(request.query_params)
    for key, value in changes.items():
        if value is None:
            params.pop(key, None)
        else:
            params[key] = str(value)
    return f"{_root(request)}/memories?{urlencode(params)}"


def mount_dashboard(app: FastAPI) -> None:
    """Add the dashboard pages, ``/login`` and ``/static`` to ``app``."""
    app.mount("/static", StaticFiles(directory=str(HERE / "static")), name="static")
    app.get("/", response_class=HTMLResponse, include_in_schema=False)(_overview)
    app.get("/memories", response_class=HTMLResponse, include_in_schema=False)(_memories)
    app.get("/memories/{memory_id}", response_class=HTMLResponse, include_in_schema=False)(_memory_page)
    _mount_maintenance(app)
    documents.mount(app, _render)
    _mount_login(app)


def _overview(request: Request) -> HTMLResponse:
    mem = _mem(request)
    try:
        stats = mem.stats()
    except ReverieError as exc:
        return _error_page(request, exc)
    stats["target"] = redact_target(stats["target"])
    table: dict[str, dict[str, int]] = {}
    for row in stats["rows"]:
        table.setdefault(row["layer"], {})[row["status"]] = row["count"]
    return _render(
        request,
        "overview.html",
        stats=stats,
        table=table,
        statuses=STATUSES,
        chart=Markup(svg.layer_status_chart(stats["rows"])),
        last_dream=mem.last_dream(),
    )


def _memories(request: Request) -> HTMLResponse:
    mem = _mem(request)
    params = {k: v.strip() for k, v in request.query_params.items()}
    user_id = params.get("user_id") or None
    agent_id = params.get("agent_id") or None
    query = params.get("q", "")
    limit = _int(params.get("limit"), 25, 1, 500)
    page = _int(params.get("page"), 1, 1, 1_000_000)
    sort = params.get("sort") or "recorded"
    sort = sort if sort in SORTS else "recorded"
    descending = params.get("dir", "desc") != "asc"
    filters = _list_filters(params)
    rows: list[tuple[MemoryRecord, float | None]] = []
    total = hidden = 0
    error = None
    try:
        if query:
            hits = mem.search(
                query,
                user_id=user_id,
                agent_id=agent_id,
                k=limit,
                filters=filters or None,
                all_users=user_id is None,
            )
            hits.sort(key=lambda h: h.score, reverse=True)
            cut = _cutoff(params.get("min"), hits[0].score if hits else 0.0)
            shown = [h for h in hits if h.score >= cut]
            hidden = len(hits) - len(shown)
            rows = [(h.memory, h.score) for h in shown]
            total = len(hits)
        else:
            total = mem.count(user_id=user_id, agent_id=agent_id, all_users=user_id is None, filters=filters or None)
            page = min(page, max(1, -(-total // limit)))
            records = mem.list(
                user_id=user_id,
                agent_id=agent_id,
                all_users=user_id is None,
                filters=filters or None,
                limit=limit,
                offset=(page - 1) * limit,
                order_by=SORTS[sort],
                descending=descending,
            )
            rows = [(r, None) for r in records]
    except ReverieError as exc:
        error = f"{type(exc).__name__}: {exc}"
    pages = max(1, -(-total // limit))
    sort_links = {
        label: _page_url(request, sort=label, page=None, dir="asc" if label == sort and descending else "desc")
        for label in SORTS
    }
    return _render(
        request,
        "memories.html",
        rows=rows,
        params=params,
        layers=LAYERS,
        statuses=STATUSES,
        query=query,
        error=error,
        total=total,
        page=page,
        pages=pages,
        limit=limit,
        sort=sort,
        descending=descending,
        sort_links=sort_links,
        hidden=hidden,
        show_all=_page_url(request, min="0"),
        prev_url=_page_url(request, page=page - 1) if page > 1 else None,
        next_url=_page_url(request, page=page + 1) if page < pages else None,
        short=mem.short_ids([r.id for r, _s in rows]),
    )


def _memory_page(request: Request, memory_id: str) -> HTMLResponse:
    mem = _mem(request)
    try:
        rec = mem.peek(memory_id)
        strengths = mem.explain_strength(rec.id)
        history = mem.history(rec.id)
    except ReverieError as exc:
        return _error_page(request, exc)
    graph = relations_view(mem, rec, _root(request))
    shown = {rec.id, *(i for r in graph["relations"] for i in (r.src_id, r.dst_id))}
    return _render(
        request,
        "memory.html",
        rec=rec,
        strengths=strengths,
        history=history,
        forgetting=forgetting_view(mem, rec, strengths),
        graph=graph,
        layers=LAYERS,
        accesses=mem.accesses(rec.id, limit=ACCESS_ROWS),
        access_rows=ACCESS_ROWS,
        fields=_field_groups(rec),
        short=mem.short_ids(shown),
    )


def _mount_maintenance(app: FastAPI) -> None:
    @app.get("/dream", response_class=HTMLResponse, include_in_schema=False)
    def dream_page(request: Request) -> HTMLResponse:
        mem = _mem(request)
        try:
            schedule = mem.maintenance_status()
        except ReverieError as exc:
            return _error_page(request, exc)
        reports = mem.dream_reports()
        index = _int(request.query_params.get("n"), 0, 0, max(0, len(reports) - 1))
        report = reports[index] if reports else mem.last_dream()
        changes = _dream_changes(mem, report) if report else []
        return _render(
            request, "dream.html", report=report, reports=reports, index=index, changes=changes, schedule=schedule
        )

    @app.get("/agents", response_class=HTMLResponse, include_in_schema=False)
    def agents_page(request: Request) -> HTMLResponse:
        return _render(request, "agents.html", scopes=_mem(request).scopes(limit=500))

    @app.get("/keys", response_class=HTMLResponse, include_in_schema=False)
    def keys_page(request: Request) -> HTMLResponse:
        keys = _mem(request).api_keys(include_revoked=True)
        return _render(request, "keys.html", keys=keys)

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
                boxes = mem.sealed_boxes(user_id=user_id, limit=20)
        except ReverieError as exc:
            error = f"{type(exc).__name__}: {exc}"
        return _render(
            request,
            "topics.html",
            user_id=user_id,
            index=index,
            boxes=boxes,
            user_counts=users,
            error=error,
            short=mem.short_ids([b.trace_id or b.id for b in boxes]) if boxes else {},
        )


#: accesses shown on a memory's page
ACCESS_ROWS = 50
#: a search shows the hits scoring at least this share of the best one (``min=`` overrides, 0 shows all)
RELATIVE_CUTOFF = 0.5


def _cutoff(given: str | None, best: float) -> float:
    if given not in (None, ""):
        try:
            return float(given)
        except ValueError:
            pass
    return best * RELATIVE_CUTOFF if best > 0 else 0.0


def _dream_changes(mem: Memory, report: dict[str, Any]) -> list[dict[str, Any]]:
    """What the dream cycle did to each memory it changed: the history rows it stamped with its time,
    grouped per memory, with the memory's text (or "forgotten since" when it no longer exists)."""
    try:
        at = datetime.fromisoformat(str(report.get("at")))
    except ValueError:
        return []
    events = mem.dream_changes(at, limit=DREAM_CHANGES_SHOWN)
    made = [
        i for s in report.get("steps", []) for i in (s.get("details") or {}).get("summaries", []) if isinstance(i, str)
    ]
    order = list(dict.fromkeys([*made, *(e.memory_id for e in events)]))
    records = mem.peek_many(order)
    short = mem.short_ids([i for i in order if i in records])
    by_id: dict[str, list[Any]] = {}
    for e in events:
        by_id.setdefault(e.memory_id, []).append(e)
    out = []
    for mid in order:
        rec = records.get(mid)
        what = [f"{e.event}" + (f" — {e.reason}" if e.reason else "") for e in by_id.get(mid, [])]
        if mid in made and not what:
            what = ["created — a summary of fading memories"]
        out.append(
            {
                "id": mid,
                "short": short.get(mid, mid[:8]),
                "content": rec.content if rec else None,
                "status": rec.status.value if rec else None,
                "what": what,
            }
        )
    return out


#: history rows of one dream run read for its report page
DREAM_CHANGES_SHOWN = 500


#: what the login page says is refused, and why
NOT_RIGHT = "That is neither an API key of this server nor its token."
NOT_ADMIN = (
    "That API key is valid, but it is not an admin key: it covers only some users, and the dashboard "
    "shows every user. Sign in with an admin key (reverie keys create --admin)."
)


def _login_page(request: Request, *, failed: str = "", status_code: int = 200) -> HTMLResponse:
    """The sign-in form and nothing else: no navigation, no user list (the visitor is not signed in)."""
    auth: Authenticator = request.app.state.auth
    accepted = "an admin API key (reverie keys create --admin)"
    if auth.token is not None:
        accepted = "the server's API token (REVERIE_API_TOKEN) or " + accepted
    return _render(
        request, "login.html", status_code=status_code, failed=failed, accepted=accepted, bare=True, users=[]
    )


def _mount_login(app: FastAPI) -> None:
    @app.get("/login", response_class=HTMLResponse, include_in_schema=False)
    def login_form(request: Request) -> HTMLResponse:
        return _login_page(request)

    @app.post("/login", include_in_schema=False)
    async def login(request: Request) -> Response:
        from starlette.concurrency import run_in_threadpool

        auth: Authenticator = request.app.state.auth
        given = parse_qs((await request.body()).decode("utf-8", "replace")).get("token", [""])[0]
        home = _root(request) + "/"
        if not await run_in_threadpool(auth.required):
            return RedirectResponse(home, status_code=303)
        cookie = await run_in_threadpool(auth.login, given)  # the API token or an admin API key
        if cookie is None:
            known = await run_in_threadpool(auth.authenticate, given)
            if known is not None:  # a valid key without the admin right: say exactly that
                return _login_page(request, failed=NOT_ADMIN, status_code=403)
            return _login_page(request, failed=NOT_RIGHT, status_code=401)
        response = RedirectResponse(home, status_code=303)
        response.set_cookie(
            auth.cookie_name, cookie, httponly=True, samesite="strict", secure=request.url.scheme == "https"
        )
        return response


def _field_groups(rec: MemoryRecord) -> list[tuple[str, list[tuple[str, Any]]]]:
    d = rec.to_dict()
    groups = {
        "scope": ["user_id", "agent_id", "session_id", "instance_id"],
        "kind and place": [
            "layer",
            "store",
            "status",
            "category",
            "memory_kind",
            "sub_tier",
            "temporal_type",
            "entities",
            "pinned",
            "immutable",
            "core",
            "flashbulb",
        ],
        "provenance": [
            "source",
            "trust",
            "source_confidence",
            "write_source",
            "data_source",
            "inputs",
            "superseded_by",
            "box_id",
        ],
        "time": [
            "valid_from",
            "valid_until",
            "recorded_at",
            "created_at",
            "updated_at",
            "last_accessed_at",
            "access_count",
        ],
        "stored strengths": [
            "importance",
            "importance_channels",
            "surprise",
            "utility",
            "energy",
            "stability",
            "difficulty",
            "storage_strength",
            "retrieval_strength",
            "reinforcement_count",
            "confirmations",
        ],
        "emotion": ["emotion_valence", "emotion_arousal", "emotion_label"],
        "lifecycle": [
            "lifecycle_state",
            "verification_state",
            "policy_class",
            "confidence",
            "heat_score",
            "decay_score",
        ],
    }
    shown = {k for keys in groups.values() for k in keys} | {"content", "id", "content_hash", "metadata", "version"}
    out = [(name, [(k, d.get(k)) for k in keys]) for name, keys in groups.items()]
    rest = [(k, v) for k, v in d.items() if k not in shown]
    out.append(
        (
            "other",
            [
                ("id", d["id"]),
                ("content_hash", d["content_hash"]),
                ("version", d["version"]),
                ("metadata", d["metadata"]),
                *rest,
            ],
        )
    )
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

__all__ = ["forgetting_view", "mount_dashboard", "relations_view"]
