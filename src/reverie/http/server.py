"""Run the REST API and dashboard with uvicorn (``reverie serve``)."""

from __future__ import annotations

import socket
import sys
from typing import TYPE_CHECKING

from reverie.errors import ConfigError
from reverie.http.security import is_loopback, loopback_hosts

if TYPE_CHECKING:
    from fastapi import FastAPI

    from reverie.memory import Memory

MIN_TOKEN_CHARS = 16


def check_binding(host: str, token: str | None, *, keys_active: bool = False) -> None:
    """127.0.0.1 (or another loopback address) needs no credential; any other bind requires
    ``REVERIE_API_TOKEN`` or at least one active API key (then every request needs a credential)."""
    if token is not None and len(token) < MIN_TOKEN_CHARS:
        raise ConfigError(f"REVERIE_API_TOKEN must be at least {MIN_TOKEN_CHARS} characters")
    if not is_loopback(host) and not token and not keys_active:
        raise ConfigError(f"binding to {host} exposes the memory beyond this machine: set REVERIE_API_TOKEN "
                          f"(at least {MIN_TOKEN_CHARS} characters), create API keys (reverie keys create), "
                          "or bind to 127.0.0.1")


def build(mem: Memory, *, host: str, token: str | None, max_body: int | None = None) -> FastAPI:
    from reverie.http.app import DEFAULT_MAX_BODY, create_app

    check_binding(host, token, keys_active=not is_loopback(host) and bool(mem.store.api_keys()))
    allowed = loopback_hosts() if is_loopback(host) else None
    return create_app(mem, token=token, allowed_hosts=allowed, max_body=max_body or DEFAULT_MAX_BODY)


def serve(mem: Memory, *, host: str = "127.0.0.1", port: int = 8080, token: str | None = None,
          log_level: str = "warning") -> None:
    """Serve until interrupted. ``port=0`` picks a free port; the URL is written to stderr."""
    import uvicorn

    app = build(mem, host=host, token=token)
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(128)  # connections queue from now on: the URL below is usable at once
    bound = sock.getsockname()[1]
    shown = f"[{host}]" if ":" in host else host
    sys.stderr.write(f"reverie serving on http://{shown}:{bound}/ (API docs at /docs)\n")
    sys.stderr.flush()
    server = uvicorn.Server(uvicorn.Config(app, log_level=log_level, server_header=False))
    server.run(sockets=[sock])


__all__ = ["MIN_TOKEN_CHARS", "build", "check_binding", "serve"]
