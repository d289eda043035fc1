"""The ASGI guard in front of the REST API and the dashboard.

* **Credentials.** Every request gets a :class:`~reverie.auth.Credential` (in the ASGI scope's
  state, ``credential``) that the routes check each call against:

  - ``Authorization: Bearer <REVERIE_API_TOKEN>`` or the dashboard's session cookie made from it:
    full access (single-tenant, admin);
  - ``Authorization: Bearer rvk_…`` (an API key from ``reverie keys create``): that key's scopes;
  - nothing: full access when no ``REVERIE_API_TOKEN`` is set and no API key is active (the
    tokenless loopback laptop default); otherwise 401 (browsers asking for HTML are sent to
    ``/login``).

  Credentials fail closed: a server bound beyond loopback always needs one, and a server that needed
  one once (a token, or an active key when it started or later) keeps needing one whatever happens to
  the keys — revoking the last key makes it deny every request, never serve everyone.

  Tokens and key hashes are compared with :func:`hmac.compare_digest`. The dashboard (every path
  outside ``/v1/``, ``/healthz``, ``/login`` and ``/static/``) shows all users: it needs an admin
  credential (403 otherwise).
* **Host check** (DNS rebinding): with ``allowed_hosts`` set (loopback binds), other ``Host``
  headers get 403.
* **Cross-origin writes**: an unsafe method whose ``Origin`` differs from its ``Host`` → 403. An
  ``Origin: null`` (sandboxed iframes, ``file://`` pages, some redirects) is foreign too.
* **Request size limit**: bodies above ``max_body`` bytes → 413, whether announced by
  ``Content-Length`` or streamed.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Iterable
from http.cookies import SimpleCookie
from urllib.parse import urlsplit

import anyio.to_thread
from starlette.responses import RedirectResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from reverie.auth import FULL_ACCESS, KEY_PREFIX, Credential, KeyRing, key_id_of
from reverie.errors import PermissionDeniedError, ReverieError
from reverie.http.problems import problem, reverie_problem

COOKIE = "reverie_session"
PUBLIC_PREFIXES = ("/healthz", "/readyz", "/login", "/static/")
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1", "[::1]")


def session_value(token: str) -> str:
    """The cookie value for ``token``: an HMAC, so the cookie never holds the token itself. For an
    API key the cookie also names the key's id (``<id>.<hmac>``) so that the key can be looked up."""
    mac = hmac.new(token.encode("utf-8", "surrogatepass"), b"reverie-dashboard-session", hashlib.sha256).hexdigest()
    key_id = key_id_of(token)
    return f"{key_id}.{mac}" if key_id is not None else mac


def token_matches(given: str, token: str) -> bool:
    return hmac.compare_digest(given.encode("utf-8", "surrogatepass"), token.encode("utf-8", "surrogatepass"))


def is_loopback(host: str) -> bool:
    return host in LOOPBACK_HOSTS or host.startswith("127.")


def _host_name(value: str) -> str:
    if value.startswith("["):
        return value[: value.find("]") + 1] if "]" in value else value
    return value.rsplit(":", 1)[0] if value.count(":") == 1 else value


class Authenticator:
    """Turns what a request presents into a :class:`Credential` (see the module docs). Shared by the
    guard and the dashboard's login form (``app.state.auth``)."""

    #: the session cookie the dashboard's login sets
    cookie_name = COOKIE

    def __init__(self, *, token: str | None, keys: KeyRing | None = None, closed: bool = False) -> None:
        self.token = token or None
        self.cookie = session_value(token) if token else None
        self.keys = keys
        #: credentials are required from now on, whatever happens to the keys (see :meth:`required`)
        self.closed = closed or self.token is not None
        #: dashboard sessions of admin API keys: cookie value -> the key (kept in this process only)
        self._sessions: dict[str, str] = {}

    def required(self) -> bool:
        """Whether requests must present a credential: a token is set, the server is bound beyond loopback
        (``closed``), or an API key is active — or was: once required, always required, so that revoking
        the last key closes the server instead of opening it to everyone."""
        if self.closed:
            return True
        try:
            active = self.keys is not None and self.keys.any_active()
        except ReverieError:  # the keys cannot be read (the store is down): closed for now, asked again next time
            return True
        if active:
            self.closed = True
        return self.closed

    def presented(self, headers: dict[str, str]) -> Credential | None:
        """The credential of the request's bearer token or session cookie, or ``None``."""
        auth = headers.get("authorization", "")
        scheme, _, given = auth.partition(" ")
        given = given.strip()
        if scheme.lower() == "bearer" and given:
            return self.authenticate(given)
        cookies: SimpleCookie = SimpleCookie()
        try:
            cookies.load(headers.get("cookie", ""))
        except Exception:  # a malformed Cookie header is just "no cookie"
            return None
        morsel = cookies.get(COOKIE)
        if morsel is None:
            return None
        if self.cookie is not None and token_matches(morsel.value, self.cookie):
            return FULL_ACCESS
        key = self._sessions.get(morsel.value)
        if key is not None:
            cred = self.authenticate(key)
            if cred is not None and cred.admin:
                return cred
        return None

    def authenticate(self, given: str) -> Credential | None:
        """The credential of a bearer token (the API token, or an API key), or ``None``."""
        if self.token is not None and token_matches(given, self.token):
            return FULL_ACCESS
        if self.keys is not None and given.startswith(KEY_PREFIX):
            return self.keys.authenticate(given)
        return None

    def login(self, given: str) -> str | None:
        """The session cookie for a dashboard login with ``given`` (the API token, or an admin API key),
        or ``None`` if it is neither."""
        if self.token is not None and token_matches(given, self.token):
            return self.cookie
        if self.keys is not None and given.startswith(KEY_PREFIX):
            cred = self.keys.authenticate(given)
            if cred is not None and cred.admin:
                value = session_value(given)
                if len(self._sessions) > 1000:
                    self._sessions.clear()
                self._sessions[value] = given
                return value
        return None


class Guard:
    """ASGI middleware applying the checks above before the app sees a request."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        token: str | None = None,
        max_body: int,
        allowed_hosts: Iterable[str] | None = None,
        auth: Authenticator | None = None,
    ) -> None:
        self.app = app
        self.auth = auth if auth is not None else Authenticator(token=token)
        self.max_body = max_body
        self.allowed_hosts = frozenset(allowed_hosts) if allowed_hosts is not None else None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        refusal = self._refuse(scope, headers)
        if refusal is None:
            credential, refusal = await self._credential(scope, headers)
            if credential is not None:
                scope.setdefault("state", {})["credential"] = credential
        if refusal is not None:
            await refusal(scope, receive, send)
            return
        body = await self._read_body(headers, receive)
        if body is None:
            await problem(
                413, "ContentTooLarge", f"request body is larger than {self.max_body} bytes", "ContentTooLarge"
            )(scope, receive, send)
            return
        await self.app(scope, _replay(body, receive), send)

    def _refuse(self, scope: Scope, headers: dict[str, str]) -> Response | None:
        host = headers.get("host", "")
        if self.allowed_hosts is not None and _host_name(host) not in self.allowed_hosts:
            return problem(403, "Forbidden", "this Host is not served here", "Forbidden")
        method = scope.get("method", "GET")
        origin = headers.get("origin")
        if (
            method not in SAFE_METHODS
            and origin is not None
            and (origin.strip().lower() == "null" or urlsplit(origin).netloc != host)
        ):
            return problem(403, "Forbidden", "cross-origin writes are refused", "Forbidden")
        return None

    async def _credential(self, scope: Scope, headers: dict[str, str]) -> tuple[Credential | None, Response | None]:
        """The request's credential, or the response refusing it."""
        path: str = scope.get("path", "/")
        if path.startswith(PUBLIC_PREFIXES):
            return None, None
        try:
            credential = await anyio.to_thread.run_sync(self._resolve, headers)
        except ReverieError as exc:  # the store could not be asked about a key
            return None, reverie_problem(exc)
        if credential is None:
            method = scope.get("method", "GET")
            if method == "GET" and "text/html" in headers.get("accept", "") and not path.startswith("/v1/"):
                return None, RedirectResponse(str(scope.get("root_path", "")).rstrip("/") + "/login", status_code=303)
            return None, problem(
                401,
                "Unauthorized",
                "a valid bearer token or API key is required",
                "Unauthorized",
                headers={"WWW-Authenticate": 'Bearer realm="reverie"'},
            )
        if not path.startswith("/v1/") and not credential.admin:
            return None, problem(
                403, "Forbidden", "the dashboard shows every user: it needs an admin credential", "Forbidden"
            )
        return credential, None

    def _resolve(self, headers: dict[str, str]) -> Credential | None:
        credential = self.auth.presented(headers)
        if credential is None and not self.auth.required():
            credential = FULL_ACCESS  # the single-tenant default: no token, no active key
        return credential

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


def credential_of(scope: Scope) -> Credential:
    """The credential the guard attached to a request (:class:`PermissionDeniedError` if none: a route
    behind no guard serves nobody)."""
    state = scope.get("state") or {}
    cred = state.get("credential") if isinstance(state, dict) else None
    if not isinstance(cred, Credential):
        raise PermissionDeniedError("no credential: the request did not pass the guard")
    return cred


def loopback_hosts(extra: Iterable[str] = ()) -> list[str]:
    return [*LOOPBACK_HOSTS, *extra]


__all__ = [
    "COOKIE",
    "Authenticator",
    "Guard",
    "credential_of",
    "is_loopback",
    "loopback_hosts",
    "session_value",
    "token_matches",
]
