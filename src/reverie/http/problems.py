"""reverie errors → RFC 7807 problem responses (``application/problem+json``), never a stack trace."""

from __future__ import annotations

import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from reverie.errors import (
    AmbiguousIdError,
    ConfigError,
    ConflictError,
    ContentTooLargeError,
    EmbeddingError,
    ImmutableMemoryError,
    InvalidInputError,
    LLMError,
    MemoryStateError,
    MissingDependencyError,
    NotFoundError,
    PermissionDeniedError,
    ReverieError,
    StoreError,
)

log = logging.getLogger("reverie.http")

PROBLEM_JSON = "application/problem+json"

#: most specific first
STATUS_OF: list[tuple[type[ReverieError], int, str]] = [
    (ContentTooLargeError, 413, "Content too large"),
    (MemoryStateError, 409, "The memory's state does not allow it"),
    (AmbiguousIdError, 409, "The id prefix names several memories"),
    (InvalidInputError, 422, "Invalid input"),
    (NotFoundError, 404, "Not found"),
    (PermissionDeniedError, 403, "Permission denied"),
    (ImmutableMemoryError, 409, "Memory is immutable"),
    (ConflictError, 409, "Conflict"),
    (MissingDependencyError, 501, "Missing dependency"),
    (EmbeddingError, 503, "Embedder unavailable"),
    (LLMError, 502, "LLM endpoint failed"),
    (StoreError, 503, "Storage unavailable"),
    (ConfigError, 500, "Invalid configuration"),
    (ReverieError, 500, "reverie error"),
]

_HTTP_ERRORS = {
    400: "BadRequest",
    401: "Unauthorized",
    403: "Forbidden",
    404: "NotFound",
    405: "MethodNotAllowed",
    413: "ContentTooLarge",
    415: "UnsupportedMediaType",
}


def problem(
    status: int,
    title: str,
    detail: str,
    error: str,
    *,
    errors: list[dict[str, Any]] | None = None,
    headers: dict[str, str] | None = None,
) -> JSONResponse:
    body: dict[str, Any] = {
        "type": f"urn:reverie:error:{error}",
        "title": title,
        "status": status,
        "detail": printable_text(detail),
        "error": error,
    }
    if errors is not None:
        body["errors"] = [
            {
                k: [printable_text(str(p)) for p in v] if isinstance(v, list) else printable_text(str(v))
                for k, v in e.items()
            }
            for e in errors
        ]
    return JSONResponse(body, status_code=status, media_type=PROBLEM_JSON, headers=headers)


def printable_text(text: str) -> str:
    """``text`` with lone surrogates escaped: a problem document must always be encodable as UTF-8."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def reverie_problem(exc: ReverieError) -> JSONResponse:
    for cls, status, title in STATUS_OF:
        if isinstance(exc, cls):
            return problem(status, title, str(exc)[:2000], type(exc).__name__)
    raise AssertionError("unreachable: ReverieError is the last entry")  # pragma: no cover


def install(app: FastAPI) -> None:
    """Register the handlers that turn every failure into a problem response."""

    async def on_reverie(_request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, ReverieError)
        if isinstance(exc, StoreError | ConfigError):
            log.error("reverie %s: %s", type(exc).__name__, exc, exc_info=exc)
        return reverie_problem(exc)

    async def on_validation(_request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, RequestValidationError)
        # loc and msg only: never echo the rejected input back
        errors = [
            {"loc": [str(p) for p in e.get("loc", ())], "msg": str(e.get("msg", "")), "type": str(e.get("type", ""))}
            for e in exc.errors()
        ]
        return problem(
            422, "Invalid input", "the request does not match the schema", "InvalidInputError", errors=errors
        )

    async def on_http(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, StarletteHTTPException)
        name = _HTTP_ERRORS.get(exc.status_code, "HTTPError")
        headers = dict(exc.headers) if exc.headers else None
        if exc.status_code == 405:  # every method the path takes (the router names only its first route's)
            headers = {**(headers or {}), "Allow": ", ".join(allowed_methods(request))}
        return problem(exc.status_code, name, str(exc.detail), name, headers=headers)

    app.add_exception_handler(ReverieError, on_reverie)
    app.add_exception_handler(RequestValidationError, on_validation)
    app.add_exception_handler(StarletteHTTPException, on_http)
    app.add_middleware(CrashGuard)


def allowed_methods(request: Request) -> list[str]:
    """The methods of every route whose path matches the request's."""
    from starlette.routing import Match

    methods: set[str] = set()
    scope = {**request.scope, "method": "GET"}
    for route in request.app.router.routes:
        match, _ = route.matches(scope)
        route_methods = getattr(route, "methods", None)
        if match is not Match.NONE and route_methods:
            methods.update(route_methods)
    return sorted(methods)


def crash_response() -> JSONResponse:
    return problem(500, "Internal error", "an unexpected error occurred; see the server log", "InternalError")


class CrashGuard:
    """ASGI middleware inside the app's error handling: an unexpected exception becomes a 500 problem
    response and is logged — and it is not raised on. (Starlette's own last-resort handler answers 500
    but re-raises, and the server then closes the kept-alive connection, failing the client's next
    valid request on it.) An exception after the response started cannot be answered any more; that
    one is raised on."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False

        async def tracking_send(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, receive, tracking_send)
        except Exception as exc:
            if started:
                raise
            log.error("unexpected error", exc_info=exc)  # the trace stays in the server log
            await crash_response()(scope, receive, send)


__all__ = ["PROBLEM_JSON", "STATUS_OF", "CrashGuard", "install", "problem", "reverie_problem"]
