"""Credentials: who may touch which memories.

A :class:`Credential` carries the scopes a caller may read and write — user ids, optionally
narrowed to agent ids within them — and an ``admin`` flag (every user, the all-users views,
stats over all users, export, dream reports, key management). Interfaces hand a caller's
credential to :class:`reverie.scoped.ScopedMemory`, which checks every call against it.

Where credentials come from:

* **Full access** (:data:`FULL_ACCESS`, an admin credential) is the single-tenant laptop default:
  the Python API and the CLI, the REST server on loopback without a token, the REST server's
  ``REVERIE_API_TOKEN``, and ``reverie mcp`` without ``--user``. Whoever holds it sees everything.
* **API keys**, for many users or agents on one memory: ``reverie keys create --user alice`` prints
  a key once (``rvk_<id>_<secret>``); only its SHA-256 is stored, in the memory's own store. REST
  callers present it as ``Authorization: Bearer <key>``. As soon as one active key exists, the REST
  server requires a credential on every request (a key, or the ``REVERIE_API_TOKEN``).
* ``reverie mcp --user alice [--agent x]`` locks the MCP server to that scope: a tool call naming
  another user gets an error, not that user's memories.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from reverie.errors import InvalidInputError, LastAdminKeyError, NotFoundError, PermissionDeniedError
from reverie.store.base import ApiKey
from reverie.validation import clean_scope, clean_text, printable

if TYPE_CHECKING:
    from reverie.model import MemoryRecord
    from reverie.store.base import Store

KEY_PREFIX = "rvk_"
_KEY_ID_HEX = 12


@dataclass(frozen=True, slots=True)
class Credential:
    """What a caller may touch.

    ``admin``: every memory and every operation. Otherwise ``users`` names the user ids the caller
    may read and write (at least one; the anonymous partition, ``user_id=None``, is admin-only) and
    ``agents`` — when not ``None`` — narrows it to memories of those agents."""

    name: str
    admin: bool = False
    users: frozenset[str] = field(default_factory=frozenset)
    agents: frozenset[str] | None = None
    key_id: str | None = None

    @classmethod
    def scoped(cls, user_id: str, agent_id: str | None = None, *, name: str | None = None) -> Credential:
        """A credential for one user (and optionally one agent of that user)."""
        user = clean_scope(user_id, "user_id")
        if user is None:
            raise InvalidInputError("a scoped credential needs a user_id")
        agent = clean_scope(agent_id, "agent_id")
        return cls(
            name or f"user {user}" + (f", agent {agent}" if agent else ""),
            users=frozenset({user}),
            agents=None if agent is None else frozenset({agent}),
        )

    @classmethod
    def from_key(cls, key: ApiKey) -> Credential:
        if key.admin:
            return cls(key.name, admin=True, key_id=key.id)
        return cls(
            key.name,
            users=frozenset(key.user_ids),
            agents=None if key.agent_ids is None else frozenset(key.agent_ids),
            key_id=key.id,
        )

    # checks ------------------------------------------------------------------------------
    def may_see(self, rec: MemoryRecord) -> bool:
        """Whether the memory lies in this credential's scope."""
        if self.admin:
            return True
        return (
            rec.user_id is not None
            and rec.user_id in self.users
            and (self.agents is None or rec.agent_id in self.agents)
        )

    def user_id(self, requested: Any) -> str | None:
        """The user a call runs as: ``requested`` if this credential covers it; with none requested, the
        credential's only user. :class:`PermissionDeniedError` for a user it does not cover."""
        user = clean_scope(requested, "user_id")
        if self.admin:
            return user
        if user is None:
            if len(self.users) == 1:
                return next(iter(self.users))
            raise InvalidInputError(f"user_id is required: this credential covers {_names(self.users)}")
        if user not in self.users:
            raise PermissionDeniedError(f"this credential does not cover user_id {printable(user)}")
        return user

    def agent_id(self, requested: Any) -> str | None:
        """The agent a call runs as (``None``: any agent of the user, if the credential allows that)."""
        agent = clean_scope(requested, "agent_id")
        if self.admin or self.agents is None:
            return agent
        if agent is None:
            if len(self.agents) == 1:
                return next(iter(self.agents))
            raise InvalidInputError(f"agent_id is required: this credential covers {_names(self.agents)}")
        if agent not in self.agents:
            raise PermissionDeniedError(f"this credential does not cover agent_id {printable(agent)}")
        return agent

    def require_admin(self, what: str) -> None:
        if not self.admin:
            raise PermissionDeniedError(f"{what} needs an admin credential")

    def require_visible(self, rec: MemoryRecord | None, memory_id: str) -> MemoryRecord:
        """``rec`` if this credential may see it; :class:`NotFoundError` otherwise (the same answer as
        for an id that does not exist, so a caller cannot probe other scopes)."""
        if rec is None or not self.may_see(rec):
            raise NotFoundError(f"no memory with id {memory_id}")
        return rec

    def describe(self) -> dict[str, Any]:
        """The credential as JSON (no secret): name, key id, admin, users, agents."""
        return {
            "name": self.name,
            "key_id": self.key_id,
            "admin": self.admin,
            "users": None if self.admin else sorted(self.users),
            "agents": None if self.admin or self.agents is None else sorted(self.agents),
        }


def _names(values: Iterable[str]) -> str:
    return ", ".join(printable(v) for v in sorted(values)[:10])


#: the single-tenant default: everything (the laptop, the CLI, a tokenless loopback server)
FULL_ACCESS = Credential("full access", admin=True)


# API keys ----------------------------------------------------------------------------------------


def hash_key(token: str) -> str:
    """The stored form of a key: SHA-256 hex (keys are 256-bit random, so no slow hash is needed)."""
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


def key_id_of(token: str) -> str | None:
    """The id part of an ``rvk_<id>_<secret>`` key, or ``None`` if ``token`` is not shaped like one."""
    if not token.startswith(KEY_PREFIX):
        return None
    key_id, sep, secret = token[len(KEY_PREFIX) :].partition("_")
    if not sep or len(key_id) != _KEY_ID_HEX or not secret or any(c not in "0123456789abcdef" for c in key_id):
        return None
    return key_id


def new_key(
    *, name: str, users: Sequence[str] = (), agents: Sequence[str] | None = None, admin: bool = False, now: datetime
) -> tuple[ApiKey, str]:
    """A new key record and the key itself (shown once; only its hash is stored)."""
    label = clean_text(name, "key name", max_chars=64)
    user_ids = tuple(dict.fromkeys(_scope_value(u, "user_id") for u in users))
    agent_ids = None if agents is None else tuple(dict.fromkeys(_scope_value(a, "agent_id") for a in agents))
    if admin and (user_ids or agent_ids):
        raise InvalidInputError("an admin key covers every user; give it no --user or --agent")
    if not admin and not user_ids:
        raise InvalidInputError("a key needs at least one user (--user), or --admin")
    if agent_ids is not None and not agent_ids:
        agent_ids = None
    key_id = secrets.token_hex(_KEY_ID_HEX // 2)
    token = f"{KEY_PREFIX}{key_id}_{secrets.token_urlsafe(32)}"
    return ApiKey(
        id=key_id,
        name=label,
        key_hash=hash_key(token),
        created_at=now,
        admin=admin,
        user_ids=user_ids,
        agent_ids=agent_ids,
    ), token


def _scope_value(value: Any, name: str) -> str:
    cleaned = clean_scope(value, name)
    if cleaned is None:
        raise InvalidInputError(f"{name} must not be empty")
    return cleaned


def create_key(
    store: Store,
    *,
    name: str,
    users: Sequence[str] = (),
    agents: Sequence[str] | None = None,
    admin: bool = False,
    now: datetime,
) -> tuple[ApiKey, str]:
    """Create and store a key; returns the record and the key (the only time it is seen)."""
    key, token = new_key(name=name, users=users, agents=agents, admin=admin, now=now)
    store.put_api_key(key)
    return key, token


def revoke_key(store: Store, key_id: str, *, now: datetime, force: bool = False) -> ApiKey:
    """Revoke a key by id; :class:`NotFoundError` if there is no such active key.

    The last active admin key is kept unless ``force``: :class:`~reverie.errors.LastAdminKeyError`. Without
    it no key may manage keys or see every user, and a server that needs credentials (any server bound
    beyond loopback, and any server that had keys) denies every request once no key is left."""
    kid = clean_text(key_id, "key id", max_chars=64)
    if not isinstance(force, bool):
        raise InvalidInputError("force must be true or false")
    active = store.api_keys()
    target = next((k for k in active if k.id == kid), None)
    if target is not None and target.admin and not force and not any(k.admin and k.id != kid for k in active):
        raise LastAdminKeyError(
            f"key {printable(kid)} is the last active admin key: once it is revoked no key may manage keys or "
            "see every user, and a server that needs credentials denies every request when no key is left. "
            "Create another admin key first, or revoke it anyway with --force (REST: ?force=true; "
            "Python: force=True)"
        )
    if not store.revoke_api_key(kid, now):
        raise NotFoundError(f"no active API key with id {printable(kid)}")
    key = store.api_key(kid)
    assert key is not None
    return key


def authenticate(store: Store, token: str) -> Credential | None:
    """The credential of an API key, or ``None`` (not a key, unknown, revoked or wrong secret)."""
    key_id = key_id_of(token)
    if key_id is None:
        return None
    key = store.api_key(key_id)
    if key is None or key.revoked_at is not None:
        return None
    if not hmac.compare_digest(hash_key(token).encode(), key.key_hash.encode()):
        return None
    return Credential.from_key(key)


class KeyRing:
    """Resolves API keys through the store with a short cache (``ttl`` seconds: a revoked key stops
    working within it) and knows whether any key is active (then credentials are required).

    ``store`` is a zero-argument callable returning the store (so that the ring follows a
    ``Memory`` object's store); ``clock`` gives the time written as a key's ``last_used_at``."""

    def __init__(self, store: Callable[[], Store], *, clock: Callable[[], datetime], ttl: float = 5.0) -> None:
        self._store = store
        self._clock = clock
        self.ttl = ttl
        self._lock = threading.Lock()
        self._cache: dict[str, tuple[float, Credential | None]] = {}
        self._active: tuple[float, bool] | None = None

    def authenticate(self, token: str) -> Credential | None:
        digest = hash_key(token)
        now = time.monotonic()
        with self._lock:
            hit = self._cache.get(digest)
            if hit is not None and now - hit[0] < self.ttl:
                return hit[1]
        cred = authenticate(self._store(), token)
        if cred is not None and cred.key_id is not None:
            self._store().touch_api_key(cred.key_id, self._clock())  # at most once per ttl per key
        with self._lock:
            if len(self._cache) > 10_000:
                self._cache.clear()
            self._cache[digest] = (now, cred)
        return cred

    def any_active(self) -> bool:
        """Whether at least one active key exists (cached for ``ttl`` seconds)."""
        now = time.monotonic()
        with self._lock:
            if self._active is not None and now - self._active[0] < self.ttl:
                return self._active[1]
        active = bool(self._store().api_keys())
        with self._lock:
            self._active = (now, active)
        return active

    def forget_cache(self) -> None:
        with self._lock:
            self._cache.clear()
            self._active = None


__all__ = [
    "FULL_ACCESS",
    "KEY_PREFIX",
    "Credential",
    "KeyRing",
    "authenticate",
    "create_key",
    "hash_key",
    "key_id_of",
    "new_key",
    "revoke_key",
]
