"""The servers: ``mcp`` (MCP over stdio or streamable HTTP) and ``serve`` (REST API and dashboard)."""

from __future__ import annotations

import os
from datetime import timedelta
from typing import Annotated, Any

import typer
import typer.core

from reverie.cli.common import DbOpt, _fail, _memory, app, err_console
from reverie.errors import ReverieError

CreateOpt = Annotated[
    bool,
    typer.Option(
        "--create",
        help="Create the database if it does not exist (without it, a --db that names no database is an "
        "error: a mistyped path never gives the server a new, empty memory).",
    ),
]


@app.command("mcp")
def mcp_cmd(
    db: DbOpt = None,
    user: Annotated[
        str | None,
        typer.Option(
            "--user",
            "-u",
            metavar="NAME",
            help="Lock the server to this user_id: tool calls act as it, and naming another user is refused.",
        ),
    ] = None,
    agent: Annotated[
        str | None,
        typer.Option(
            "--agent",
            "-a",
            metavar="NAME",
            help="With --user: lock to this agent_id too. Without --user: the default agent_id.",
        ),
    ] = None,
    session: Annotated[str | None, typer.Option("--session", "-s", metavar="ID", help="Default session_id.")] = None,
    http: Annotated[bool, typer.Option("--http", help="Serve streamable HTTP on 127.0.0.1 instead of stdio.")] = False,
    port: Annotated[
        int, typer.Option(metavar="PORT", min=0, max=65535, help="Port for --http (0 = any free port).")
    ] = 8765,
    tools: Annotated[
        str | None,
        typer.Option(
            "--tools",
            metavar="NAMES",
            help="Which tools to offer: 'default' (remember, recall, context, update, invalidate, forget), 'all', "
            "or a comma-separated list of names and groups, e.g. default,dream,stats.",
        ),
    ] = None,
    create: CreateOpt = False,
    code_roots: Annotated[
        list[str] | None,
        typer.Option(
            "--code-root",
            metavar="DIR",
            help="A directory the ingest_code tool may read (repeat for several). With --user, ingest_code reads "
            "nothing without one; a path outside them is refused.",
        ),
    ] = None,
) -> None:
    """Run reverie as an MCP server (stdio for Claude Desktop/Code, Cursor…; --http for streamable HTTP).
    With --user the server only ever touches that user's memories; without it, it has full access."""
    from reverie.mcp_server import Defaults, build_server, parse_tools, run_http, run_stdio

    try:
        chosen = parse_tools(tools)
    except ReverieError as exc:
        _fail(exc)
    with _memory(db, create=create) as mem:
        server = build_server(
            mem, Defaults(user_id=user, agent_id=agent, session_id=session), tools=chosen, code_roots=code_roots
        )
        if http:
            run_http(server, port=port)
        else:
            run_stdio(server)


HostOpt = Annotated[
    str,
    typer.Option(metavar="HOST", help="Bind address; anything but loopback requires REVERIE_API_TOKEN or an API key."),
]
PortOpt = Annotated[int, typer.Option(metavar="PORT", min=0, max=65535, help="Port (0 = any free port).")]
WorkersOpt = Annotated[int, typer.Option(metavar="N", help="Server processes on one socket (PostgreSQL only).")]
ProxyHeadersOpt = Annotated[
    bool,
    typer.Option(
        "--proxy-headers",
        help="Behind a reverse proxy: take the client address and scheme from "
        "X-Forwarded-For/-Proto (sent by --forwarded-allow-ips).",
    ),
]
ForwardedOpt = Annotated[
    str, typer.Option(metavar="IPS", help="Comma-separated proxy addresses trusted with --proxy-headers ('*': any).")
]
RootPathOpt = Annotated[
    str, typer.Option(metavar="PREFIX", help="The path prefix a proxy serves reverie under, e.g. /memory.")
]
AllowHostOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--allow-host",
        metavar="NAME",
        help="A host name the proxy passes in the Host header (repeat for "
        "several); a loopback bind refuses other names.",
    ),
]
AccessLogOpt = Annotated[
    bool,
    typer.Option(
        "--access-log/--no-access-log", help="One line per request on stderr (never query strings or bodies)."
    ),
]
DreamEveryOpt = Annotated[
    str | None,
    typer.Option(
        "--dream-every",
        metavar="DURATION",
        help="Also run the dream cycle every DURATION (30m, 1h, 1d) in the server process.",
    ),
]


@app.command()
def serve(
    db: DbOpt = None,
    host: HostOpt = "127.0.0.1",
    port: PortOpt = 8080,
    workers: WorkersOpt = 1,
    proxy_headers: ProxyHeadersOpt = False,
    forwarded_allow_ips: ForwardedOpt = "127.0.0.1",
    root_path: RootPathOpt = "",
    allow_host: AllowHostOpt = None,
    access_log: AccessLogOpt = True,
    dream_every: DreamEveryOpt = None,
    create: CreateOpt = False,
) -> None:
    """Serve the REST API (/v1, OpenAPI at /docs, metrics at /metrics, readiness at /readyz) and the web
    dashboard (/). With the setting dream.schedule.server_jobs on, it also runs the maintenance schedule
    in the background (the jobs of dream.schedule.jobs on their intervals, the full dream cycle every
    --dream-every or else dream.schedule.cycle_every_hours).

    Without REVERIE_API_TOKEN and without API keys the server is single-tenant: whoever reaches it
    (loopback only) has full access. REVERIE_API_TOKEN is an admin token; API keys (`reverie keys
    create`) give each caller its own scope. Either makes every request need a credential."""
    from reverie.dream.schedule import parse_duration
    from reverie.http.server import ServeOptions
    from reverie.http.server import serve as run_server

    try:
        every = parse_duration(dream_every).total_seconds() if dream_every else None
    except ReverieError as exc:
        _fail(exc)
    opts = ServeOptions(
        host=host,
        port=port,
        workers=workers,
        proxy_headers=proxy_headers,
        forwarded_allow_ips=forwarded_allow_ips,
        root_path=root_path.rstrip("/"),
        allow_hosts=list(allow_host or []),
        access_log=access_log,
        dream_every=every,
    )
    with _memory(db, create=create) as mem:
        background = _background_schedule(mem, every)
        if background is not None:
            opts.dream_every = None  # the schedule runs the full cycle
        try:
            run_server(mem, token=os.environ.get("REVERIE_API_TOKEN") or None, options=opts)
        finally:
            if background is not None:
                background.stop(timeout=60)


def _background_schedule(mem: Any, every: float | None) -> Any:
    """The maintenance schedule started in the background when ``dream.schedule.server_jobs`` is on (else
    ``None``); the full dream cycle runs every ``every`` seconds, or every ``cycle_every_hours``."""
    if not mem.settings.dream.schedule.server_jobs:
        return None
    from reverie.dream.schedule import BackgroundSchedule, JobSchedule, configured_jobs

    cycle = timedelta(seconds=every) if every else _cycle_every(mem)
    try:
        schedule = JobSchedule(mem, configured_jobs(mem, cycle_every=cycle))
    except ReverieError as exc:
        _fail(exc)
    background = BackgroundSchedule(schedule).start()
    err_console.print("maintenance schedule running in the background (dream.schedule.server_jobs)")
    return background


def _cycle_every(mem: Any) -> timedelta:
    return timedelta(hours=mem.settings.dream.schedule.cycle_every_hours)
