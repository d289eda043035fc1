"""reverie errors → RFC 7807 problem responses (``application/problem+json``), never a stack trace."""

from __future__ import annotations

import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from reverie.errors import (
    ConfigError,
    ConflictError,
    ContentTooLargeError,
    EmbeddingError,
    ImmutableMemoryError,
    InvalidInputError,
    LLMError,
    MissingDependencyError,
    NotFoundError,
    ReverieError,
    StoreError,
)

log = logging.getLogger("reverie.http")

PROBLEM_JSON = "application/problem+json"

#: most specific first
STATUS_OF: list[tuple[type[ReverieError], int, str]] = [
    (ContentTooLargeError, 413, "Content too large"),
    (InvalidInputError, 422, "Invalid input"),
    (NotFoundError, 404, "Not found"),
    (ImmutableMemoryError, 409, "Memory is immutable"),
    (ConflictError, 409, "Conflict"),
    (MissingDependencyError, 501, "Missing dependency"),
    (EmbeddingError, 503, "Embedder unavailable"),
    (LLMError, 502, "LLM endpoint failed"),
    (StoreError, 503, "Storage unavailable"),
    (ConfigError, 500, "Invalid configuration"),
    (ReverieError, 500, "reverie error"),
]

_HTTP_ERRORS = {400: "BadRequest", 401: "Unauthorized", 403: "Forbidden", 404: "NotFound",
                405: "MethodNotAllowed", 413: "ContentTooLarge", 415: "UnsupportedMediaType"}


def problem(status: int, title: str, detail: str, error: str, *, errors: list[dict[str, Any]] | None = None,
            headers: dict[str, str] | None = None) -> JSONResponse:
    body: dict[str, Any] = {"type": f"urn:reverie:error:{error}", "title": title, "status": status,
                            "detail": detail, "error": error}
    if errors is not None:
        body["errors"] = errors
    return JSONResponse(body, status_code=status, media_type=PROBLEM_JSON, headers=headers)


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
        errors = [{"loc": [str(p) for p in e.get("loc", ())], "msg": str(e.get("msg", "")),
                   "type": str(e.get("type", ""))} for e in exc.errors()]
        return problem(422, "Invalid input", "the request does not match the schema", "InvalidInputError",
                       errors=errors)

    async def on_http(_request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, StarletteHTTPException)
        name = _HTTP_ERRORS.get(exc.status_code, "HTTPError")
        headers = dict(exc.headers) if exc.headers else None
        return problem(exc.status_code, name, str(exc.detail), name, headers=headers)

    async def on_crash(_request: Request, exc: Exception) -> JSONResponse:
        log.error("unexpected error", exc_info=exc)  # the trace stays in the server log
        return problem(500, "Internal error", "an unexpected error occurred; see the server log", "InternalError")

    app.add_exception_handler(ReverieError, on_reverie)
    app.add_exception_handler(RequestValidationError, on_validation)
    app.add_exception_handler(StarletteHTTPException, on_http)
    app.add_exception_handler(Exception, on_crash)


__all__ = ["PROBLEM_JSON", "STATUS_OF", "install", "problem", "reverie_problem"]
