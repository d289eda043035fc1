"""The reverie exception tree.

Every error reverie raises on purpose derives from :class:`ReverieError`::

    ReverieError
    ├── ConfigError            invalid settings (every bad value reported at once)
    ├── InvalidInputError      bad content, wrong types, bad filters (also a ValueError)
    │   ├── ContentTooLargeError
    │   ├── AmbiguousIdError   a short id that more than one memory starts with
    │   └── MemoryStateError   the memory's state does not allow it (demote the lowest layer, promote an
    │                          invalidated memory, undo what is no consolidation …): REST answers 409
    ├── NotFoundError          unknown memory id (also a KeyError); also what a credential may not see
    ├── PermissionDeniedError  the credential does not cover the scope or the operation asked for
    ├── ImmutableMemoryError   an edit of a memory flagged immutable
    ├── ConflictError          a concurrent change won (optimistic concurrency, claims)
    │   └── LastAdminKeyError  revoking the last admin API key, which would lock admins out (force it)
    ├── StoreError             the storage backend failed (wraps the driver's error)
    │   └── MigrationError
    ├── EmbeddingError         the embedder failed or is not installed
    │   └── EmbedderMismatchError  the store's vectors were written by another embedder
    ├── LLMError               the LLM endpoint failed (the caller falls back to heuristics)
    └── MissingDependencyError an optional extra is not installed

Backend errors are translated at the store boundary with ``raise ... from exc``.
"""

from __future__ import annotations


class ReverieError(Exception):
    """Root of every error reverie raises on purpose."""


class ConfigError(ReverieError):
    """The settings hold invalid values; the message lists all of them."""


class InvalidInputError(ReverieError, ValueError):
    """Content, ids, filters or arguments that reverie cannot accept."""


class ContentTooLargeError(InvalidInputError):
    """Content longer than ``limits.max_content_bytes``."""


class AmbiguousIdError(InvalidInputError):
    """A short id (an id prefix) that several memories start with; ``candidates`` holds some of them."""

    def __init__(self, message: str, candidates: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.candidates = candidates


class MemoryStateError(InvalidInputError):
    """The request is well formed, but the current state of the memory does not allow it: demoting a memory
    in the lowest layer (or a pinned one), promoting one that is not active or is already at the top,
    reactivating an invalidated one, undoing what is no consolidation (or one already undone), searching
    the memories stored without a user when there are none but other users have some. The REST API
    answers 409."""


class NotFoundError(ReverieError, KeyError):
    """No memory (or relation, or run) with the given id."""

    def __str__(self) -> str:  # KeyError quotes its message; keep it readable
        return str(self.args[0]) if self.args else "not found"


class PermissionDeniedError(ReverieError):
    """The caller's credential does not cover this scope (a user or agent it may not use) or this
    operation (all-users views, export, key management need an admin credential). A memory the
    caller may not see is reported as :class:`NotFoundError` instead, so that its existence is not
    revealed."""


class ImmutableMemoryError(ReverieError):
    """The memory is flagged immutable (a truth anchor) and cannot be edited."""


class ConflictError(ReverieError):
    """Another writer changed or claimed the same memory first."""


class LastAdminKeyError(ConflictError):
    """The API key to revoke is the last active admin key: afterwards no key may manage keys or see every
    user, and a server that needs credentials with no key left denies every request. Revoking it anyway
    takes an explicit ``force``."""


class StoreError(ReverieError):
    """The storage backend failed; ``__cause__`` holds the driver's exception."""


class MigrationError(StoreError):
    """A schema migration failed or the database is newer than this reverie."""


class EmbeddingError(ReverieError):
    """The embedder could not produce vectors."""


class EmbedderMismatchError(EmbeddingError):
    """The store's vectors were written by another embedder (the message names both and how to
    move the store: ``reverie reembed``)."""


class LLMError(ReverieError):
    """The LLM endpoint failed, timed out or answered something unusable."""


class MissingDependencyError(ReverieError, ImportError):
    """An optional dependency is missing; the message says what to install."""


def install_extra(extra: str) -> str:
    """How to install one of reverie's extras, for an error message. reverie is installed from a checkout
    of its repository until it is published on the package index."""
    return f"pip install '.[{extra}]' in reverie's checkout (once published: pip install 'reverie[{extra}]')"


__all__ = [
    "AmbiguousIdError",
    "ConfigError",
    "ConflictError",
    "ContentTooLargeError",
    "EmbedderMismatchError",
    "EmbeddingError",
    "ImmutableMemoryError",
    "InvalidInputError",
    "LLMError",
    "LastAdminKeyError",
    "MemoryStateError",
    "MigrationError",
    "MissingDependencyError",
    "NotFoundError",
    "PermissionDeniedError",
    "ReverieError",
    "StoreError",
    "install_extra",
]
