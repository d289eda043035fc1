"""Run the REST API and dashboard with uvicorn (``reverie serve``).

One process by default. ``workers`` > 1 starts that many server processes on one socket (uvicorn's
supervisor), each with its own :class:`~reverie.Memory` and connection pool — on PostgreSQL only:
a SQLite file takes one writer at a time, so more processes would only queue on its lock.

Behind a reverse proxy: ``proxy_headers`` trusts ``X-Forwarded-For``/``-Proto`` from
``forwarded_allow_ips``, ``root_path`` is the path prefix the proxy serves the app under, and
``allow_hosts`` names the public host names the proxy passes on in ``Host`` (a loopback bind
otherwise refuses other hosts, against DNS rebinding).
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import shutil
import socket
import sys
import tempfile
import threading
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from reverie.errors import ConfigError
from reverie.http.security import is_loopback, loopback_hosts

if TYPE_CHECKING:
    from fastapi import FastAPI

    from reverie.memory import Memory

MIN_TOKEN_CHARS = 16
#: the worker processes read their options from this environment variable (JSON of :class:`ServeOptions`)
WORKER_ENV = "REVERIE_SERVE_OPTIONS"


@dataclass(slots=True)
class ServeOptions:
    """How ``reverie serve`` runs (see the module docs)."""

    host: str = "127.0.0.1"
    port: int = 8080
    workers: int = 1
    proxy_headers: bool = False
    forwarded_allow_ips: str = "127.0.0.1"
    root_path: str = ""
    allow_hosts: list[str] = field(default_factory=list)
    access_log: bool = True
    log_level: str = "warning"
    #: run the dream cycle in the server process every this long (``None``: never)
    dream_every: float | None = None


def check_binding(host: str, token: str | None, *, keys_active: bool = False) -> None:
    """127.0.0.1 (or another loopback address) needs no credential; any other bind requires
    ``REVERIE_API_TOKEN`` or at least one active API key (then every request needs a credential, for as
    long as the server runs: revoking every key afterwards makes it deny every request)."""
    if token is not None and len(token) < MIN_TOKEN_CHARS:
        raise ConfigError(f"REVERIE_API_TOKEN must be at least {MIN_TOKEN_CHARS} characters")
    if not is_loopback(host) and not token and not keys_active:
        raise ConfigError(
            f"binding to {host} exposes the memory beyond this machine: set REVERIE_API_TOKEN "
            f"(at least {MIN_TOKEN_CHARS} characters), create API keys (reverie keys create), "
            "or bind to 127.0.0.1"
        )


def check_workers(mem: Memory, workers: int) -> None:
    """Several worker processes need PostgreSQL (see the module docs)."""
    if workers < 1:
        raise ConfigError("--workers must be at least 1")
    if workers > 1 and mem.backend != "postgres":
        raise ConfigError(
            f"--workers {workers} needs PostgreSQL: a SQLite file takes one writer at a time, so "
            "more server processes would only wait for each other. Serve SQLite with one worker, or "
            "move the memory to PostgreSQL (reverie export, then reverie import into "
            "postgresql://…; see docs/production.md)"
        )


def build(
    mem: Memory,
    *,
    host: str,
    token: str | None,
    max_body: int | None = None,
    allow_hosts: Sequence[str] = (),
    access_log: bool = False,
) -> FastAPI:
    from reverie.http.app import DEFAULT_MAX_BODY, create_app

    check_binding(host, token, keys_active=not is_loopback(host) and bool(mem.api_keys()))
    allowed = loopback_hosts(allow_hosts) if is_loopback(host) else None
    return create_app(
        mem,
        token=token,
        allowed_hosts=allowed,
        max_body=max_body or DEFAULT_MAX_BODY,
        access_log=access_log,
        require_credentials=not is_loopback(host),
    )


def _uvicorn_config(app: Any, opts: ServeOptions, **extra: Any) -> Any:
    import uvicorn

    configure_access_log(opts.access_log)
    return uvicorn.Config(
        app,
        log_level=opts.log_level,
        server_header=False,
        access_log=False,
        proxy_headers=opts.proxy_headers,
        forwarded_allow_ips=opts.forwarded_allow_ips,
        root_path=opts.root_path,
        **extra,
    )


def configure_access_log(enabled: bool) -> None:
    """Send the ``reverie.access`` lines to stderr (uvicorn's own access log stays off: it prints
    query strings, where a dashboard search carries its words)."""
    from reverie.http.ops import ACCESS_LOGGER

    log = logging.getLogger(ACCESS_LOGGER)
    if enabled and not log.handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("%(asctime)s access %(message)s"))
        log.addHandler(handler)
        log.setLevel(logging.INFO)
        log.propagate = False


def _bind(host: str, port: int, root_path: str = "") -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(128)  # connections queue from now on: the URL below is usable at once
    bound = sock.getsockname()[1]
    shown = f"[{host}]" if ":" in host else host
    sys.stderr.write(f"reverie serving on http://{shown}:{bound}/ (API docs at /docs{_behind(root_path)})\n")
    sys.stderr.flush()
    return sock


def _behind(root_path: str) -> str:
    return f"; behind the proxy under {root_path}/" if root_path else ""


def serve(
    mem: Memory,
    *,
    host: str = "127.0.0.1",
    port: int = 8080,
    token: str | None = None,
    log_level: str = "warning",
    options: ServeOptions | None = None,
) -> None:
    """Serve until interrupted. ``port=0`` picks a free port; the URL is written to stderr."""
    import uvicorn

    opts = options or ServeOptions(host=host, port=port, log_level=log_level)
    check_workers(mem, opts.workers)
    metrics_dir = _shared_metrics_dir() if opts.workers > 1 else None
    app = build(mem, host=opts.host, token=token, allow_hosts=opts.allow_hosts, access_log=opts.access_log)
    stop = threading.Event()
    dreamer = _start_dreamer(mem, opts, app, stop)
    try:
        if opts.workers > 1:
            from uvicorn.supervisors import Multiprocess

            os.environ[WORKER_ENV] = json.dumps({**asdict(opts), "target": str(mem.target)})
            config = _uvicorn_config("reverie.http.server:worker_app", opts, factory=True, workers=opts.workers)
            sock = _bind(opts.host, opts.port, opts.root_path)
            Multiprocess(config, sockets=[sock]).run()
        else:
            sock = _bind(opts.host, opts.port, opts.root_path)
            uvicorn.Server(_uvicorn_config(app, opts)).run(sockets=[sock])
    finally:
        stop.set()
        if dreamer is not None:
            dreamer.join(timeout=30)
        if metrics_dir is not None:
            shutil.rmtree(metrics_dir, ignore_errors=True)


def _shared_metrics_dir() -> str | None:
    """A fresh directory where every worker's metrics go (prometheus_client's multiprocess mode), set
    before any worker starts; ``None`` when the operator set ``PROMETHEUS_MULTIPROC_DIR`` themselves."""
    from reverie.http.ops import MULTIPROC_ENV

    if os.environ.get(MULTIPROC_ENV):
        return None
    path = tempfile.mkdtemp(prefix="reverie-metrics-")
    os.environ[MULTIPROC_ENV] = path
    return path


def _start_dreamer(mem: Memory, opts: ServeOptions, app: FastAPI, stop: threading.Event) -> threading.Thread | None:
    """With ``dream_every``: a thread running the dream cycle on that schedule until ``stop``; each
    report feeds the step-duration metric."""
    if opts.dream_every is None:
        return None
    from reverie.dream.schedule import run_every

    metrics = getattr(app.state, "metrics", None)

    def report(result: Mapping[str, Any]) -> None:
        if metrics is not None:
            metrics.dreamed(result)

    def failed(exc: Exception) -> None:
        sys.stderr.write(f"reverie: dream cycle failed, retrying at the next slot: {type(exc).__name__}: {exc}\n")

    def loop() -> None:
        # the first cycle waits one interval: starting a server is not a reason to dream
        if not stop.wait(opts.dream_every or 0):
            run_every(mem.dream, timedelta(seconds=opts.dream_every or 0), stop=stop, on_report=report, on_error=failed)

    thread = threading.Thread(target=loop, name="reverie-dream", daemon=True)
    thread.start()
    return thread


def worker_app() -> FastAPI:
    """The app of one worker process (``--workers``): its own Memory on the target the parent opened,
    closed when the worker stops."""
    from reverie.memory import Memory

    raw = json.loads(os.environ[WORKER_ENV])
    target = raw.pop("target")
    opts = ServeOptions(**raw)
    mem = Memory(target)
    app = build(
        mem,
        host=opts.host,
        token=os.environ.get("REVERIE_API_TOKEN") or None,
        allow_hosts=opts.allow_hosts,
        access_log=opts.access_log,
    )
    configure_access_log(opts.access_log)

    @contextlib.asynccontextmanager
    async def lifespan(_app: Any) -> AsyncIterator[None]:
        try:
            yield
        finally:
            mem.close()

    app.router.lifespan_context = lifespan
    return app


__all__ = ["MIN_TOKEN_CHARS", "ServeOptions", "build", "check_binding", "check_workers", "serve", "worker_app"]
