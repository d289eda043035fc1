"""Storage backends behind one contract (:class:`~reverie.store.base.Store`)."""

from __future__ import annotations

from pathlib import Path

from reverie.config.core import StorageSettings
from reverie.store.base import LayerStats, MemoryFilter, ScoredId, Store, StoreInfo

PG_SCHEMES = ("postgresql://", "postgres://")


def is_postgres_target(target: str | Path) -> bool:
    return isinstance(target, str) and target.startswith(PG_SCHEMES)


def open_store(target: str | Path, *, settings: StorageSettings, dim: int) -> Store:
    """Open the store at ``target``: a ``postgresql://`` URL or a SQLite file path."""
    if is_postgres_target(target):
        try:
            from reverie.store.postgres import PostgresStore
        except ImportError as exc:  # psycopg / pgvector are the "postgres" extra
            from reverie.errors import MissingDependencyError

            raise MissingDependencyError(
                "the PostgreSQL backend needs the 'postgres' extra: pip install 'reverie[postgres]'"
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
    "is_postgres_target",
    "open_store",
]
