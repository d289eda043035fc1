"""The ASGI guard in front of the REST API and the dashboard.

* **Bearer token** (``REVERIE_API_TOKEN``): when set, every request except ``/healthz``,
  ``/login`` and ``/static/…`` must carry ``Authorization: Bearer <token>`` or the dashboard's
  session cookie (an HMAC of the token, never the token itself). Compared with
  :func:`hmac.compare_digest`. Missing or wrong → 401 problem (browsers asking for HTML are
  sent to ``/login``).
* **Host check** (DNS rebinding): with ``allowed_hosts`` set (loopback binds), other ``Host``
  headers get 403.
* **Cross-origin writes**: an unsafe method whose ``Origin`` differs from its ``Host`` → 403.
* **Request size limit**: bodies above ``max_body`` bytes → 413, whether announced by
  ``Content-Length`` or streamed.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Iterable
from http.cookies import SimpleCookie
from urllib.parse import urlsplit

from starlette.responses import RedirectResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from reverie.http.problems import problem

COOKIE = "reverie_session"
PUBLIC_PREFIXES = ("/healthz", "/login", "/static/")
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1", "[::1]")


def session_value(token: str) -> str:
    """The cookie value for ``token``: an HMAC, so the cookie never holds the token itself."""
    return hmac.new(token.encode("utf-8"), b"reverie-dashboard-session", hashlib.sha256).hexdigest()


def token_matches(given: str, token: str) -> bool:
    return hmac.compare_digest(given.encode("utf-8"), token.encode("utf-8"))


def is_loopback(host: str) -> bool:
    return host in LOOPBACK_HOSTS or host.startswith("127.")


def _host_name(value: str) -> str:
    if value.startswith("["):
        return value[: value.find("]") + 1] if "]" in value else value
    return value.rsplit(":", 1)[0] if value.count(":") == 1 else value


class Guard:
    """ASGI middleware applying the checks above before the app sees a request."""

    def __init__(self, app: ASGIApp, *, token: str | None, max_body: int,
                 allowed_hosts: Iterable[str] | None = None) -> None:
        self.app = app
        self.token = token or None
        self.cookie = session_value(token) if token else None
        self.max_body = max_body
        self.allowed_hosts = frozenset(allowed_hosts) if allowed_hosts is not None else None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        refusal = self._refuse(scope, headers)
        if refusal is not None:
            await refusal(scope, receive, send)
            return
        body = await self._read_body(headers, receive)
        if body is None:
            await problem(413, "ContentTooLarge", f"request body is larger than {self.max_body} bytes",
                          "ContentTooLarge")(scope, receive, send)
            return
        await self.app(scope, _replay(body, receive), send)

    def _refuse(self, scope: Scope, headers: dict[str, str]) -> Response | None:
        host = headers.get("host", "")
        if self.allowed_hosts is not None and _host_name(host) not in self.allowed_hosts:
            return problem(403, "Forbidden", "this Host is not served here", "Forbidden")
        method = scope.get("method", "GET")
        origin = headers.get("origin")
        if method not in SAFE_METHODS and origin and origin != "null" and urlsplit(origin).netloc != host:
            return problem(403, "Forbidden", "cross-origin writes are refused", "Forbidden")
        path: str = scope.get("path", "/")
        if self.token is None or path.startswith(PUBLIC_PREFIXES) or self._authorised(headers):
            return None
        if method == "GET" and "text/html" in headers.get("accept", "") and not path.startswith("/v1/"):
            return RedirectResponse("/login", status_code=303)
        return problem(401, "Unauthorized", "a valid bearer token is required (REVERIE_API_TOKEN)", "Unauthorized",
                       headers={"WWW-Authenticate": 'Bearer realm="reverie"'})

    def _authorised(self, headers: dict[str, str]) -> bool:
        assert self.token is not None and self.cookie is not None
        auth = headers.get("authorization", "")
        scheme, _, given = auth.partition(" ")
        if scheme.lower() == "bearer" and token_matches(given.strip(), self.token):
            return True
        cookies: SimpleCookie = SimpleCookie()
        try:
            cookies.load(headers.get("cookie", ""))
        except Exception:  # a malformed Cookie header is just "no cookie"
            return False
        morsel = cookies.get(COOKIE)
        return morsel is not None and token_matches(morsel.value, self.cookie)

    async def _read_body(self, headers: dict[str, str], receive: Receive) -> bytes | None:
        declared = headers.get("content-length")
        if declared is not None:
            try:
                if int(declared) > self.max_body:
                    return None
            except ValueError:
                return None
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":
                break
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.max_body:
                return None
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        return b"".join(chunks)


def _replay(body: bytes, receive: Receive) -> Receive:
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()  # http.disconnect when the client goes away

    return replay


def loopback_hosts(extra: Iterable[str] = ()) -> list[str]:
    return [*LOOPBACK_HOSTS, *extra]


__all__ = ["COOKIE", "Guard", "is_loopback", "loopback_hosts", "session_value", "token_matches"]
