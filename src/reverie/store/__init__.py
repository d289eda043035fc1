"""Storage backends behind one contract (:class:`~reverie.store.base.Store`)."""

from __future__ import annotations

import re
from pathlib import Path

from reverie.config.core import StorageSettings
from reverie.store.base import LayerStats, MemoryFilter, ScoredId, Store, StoreInfo

PG_SCHEMES = ("postgresql://", "postgres://")
#: what a store target may be, for the error that names it
SUPPORTED_TARGETS = "a SQLite file path (e.g. memory.db) or a PostgreSQL URL (postgresql://… or postgres://…)"
_URL = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://")


def check_target(target: str | Path | None) -> None:
    """Refuse a URL of a scheme no backend serves (``mysql://…``): it would otherwise be taken for a
    relative file path and become a new SQLite file in a directory named after the URL."""
    from reverie.errors import InvalidInputError

    if isinstance(target, str) and (m := _URL.match(target)) and not target.startswith(PG_SCHEMES):
        raise InvalidInputError(
            f"{m.group(1)}:// is not a supported store: a memory is {SUPPORTED_TARGETS}; got {target!r}"
        )


def is_postgres_target(target: str | Path) -> bool:
    return isinstance(target, str) and target.startswith(PG_SCHEMES)


def open_store(target: str | Path, *, settings: StorageSettings, dim: int) -> Store:
    """Open the store at ``target``: a ``postgresql://`` URL or a SQLite file path (another URL is refused)."""
    check_target(target)
    if is_postgres_target(target):
        try:
            from reverie.store.postgres import PostgresStore
        except ImportError as exc:  # psycopg / pgvector are the "postgres" extra
            from reverie.errors import MissingDependencyError, install_extra

            raise MissingDependencyError(
                f"the PostgreSQL backend needs the 'postgres' extra: {install_extra('postgres')}"
            ) from exc
        return PostgresStore(str(target), settings=settings, dim=dim)
    from reverie.store.sqlite import SQLiteStore

    return SQLiteStore(Path(target), settings=settings, dim=dim)


__all__ = [
    "LayerStats",
    "MemoryFilter",
    "ScoredId",
    "Store",
    "StoreInfo",
    "check_target",
    "is_postgres_target",
    "open_store",
]
