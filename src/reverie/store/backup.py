"""Backups of a live store (``reverie backup``).

**SQLite**: SQLite's online-backup API copies the database page by page from a connection of its
own, inside one read transaction: the copy is the database exactly as it was when the backup began
(every write committed before then, none after), while other connections and processes go on
reading and writing — in WAL mode a reader never blocks a writer. The copy is written to a
temporary file beside the destination (owner-only, 0600), checked with ``PRAGMA integrity_check``
and only then renamed into place, so a destination file is always a complete, checked backup.
The vector index files beside the database are derived data and are not copied: the restored store
rebuilds them from its rows on first search.

**PostgreSQL** has its own tools for this: ``pg_dump`` (a consistent snapshot of a live database)
and ``pg_restore``; :data:`PG_DUMP_HELP` says how.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import time
from pathlib import Path
from typing import Any

from reverie.errors import ConfigError, InvalidInputError, StoreError

PG_DUMP_HELP = (
    "reverie backup copies SQLite files; a PostgreSQL memory is backed up with PostgreSQL's own tools, "
    "while it runs: pg_dump --format=custom --file=reverie.dump 'postgresql://USER@HOST/DB', and restored into "
    "an empty database that has the vector extension with pg_restore --no-owner --dbname='postgresql://…' "
    "reverie.dump (see docs/production.md)"
)


def backup_sqlite(source: Path, dest: Path | str, *, busy_timeout_ms: int = 30_000) -> dict[str, Any]:
    """Copy the live SQLite database ``source`` to the new file ``dest`` (see the module docs).

    Returns ``{"path", "bytes", "pages", "seconds", "integrity", "memories"}``. A ``dest`` that exists
    is refused (:class:`InvalidInputError`): a backup never overwrites anything."""
    target = Path(dest).expanduser()
    if target.exists():
        raise InvalidInputError(f"{target} exists: a backup never overwrites a file; choose a new name")
    if not target.parent.is_dir():
        raise InvalidInputError(f"{target.parent} is not a directory")
    if target.resolve() == Path(source).resolve():
        raise InvalidInputError("the backup must go to another file than the database itself")
    partial = target.with_name(f".{target.name}.partial-{os.getpid()}")
    start = time.perf_counter()
    try:
        fd = os.open(partial, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
        os.close(fd)
        src = sqlite3.connect(source, timeout=busy_timeout_ms / 1000)
        try:
            dst = sqlite3.connect(partial)
            try:
                src.execute(f"PRAGMA busy_timeout = {int(busy_timeout_ms)}")
                src.backup(dst)  # all pages in one step: one read transaction, one consistent snapshot
                integrity = str(dst.execute("PRAGMA integrity_check").fetchone()[0])
                pages = int(dst.execute("PRAGMA page_count").fetchone()[0])
                memories = int(dst.execute("SELECT count(*) FROM memories").fetchone()[0])
                # the copy's own write-ahead log (if any) goes into the file: one self-contained file
                dst.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            finally:
                dst.close()
        finally:
            src.close()
        if integrity != "ok":
            raise StoreError(f"the backup copy failed its integrity check ({integrity}); nothing was written")
        for suffix in ("-wal", "-shm"):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(f"{partial}{suffix}")
        os.replace(partial, target)
    except sqlite3.Error as exc:
        raise StoreError(f"backing up {source} failed: {exc}") from exc
    except OSError as exc:
        raise StoreError(f"writing the backup {target} failed: {exc}") from exc
    finally:
        for leftover in (partial, Path(f"{partial}-wal"), Path(f"{partial}-shm")):
            with contextlib.suppress(FileNotFoundError):
                leftover.unlink()
    return {
        "path": str(target),
        "bytes": target.stat().st_size,
        "pages": pages,
        "seconds": round(time.perf_counter() - start, 3),
        "integrity": integrity,
        "memories": memories,
    }


def refuse_postgres() -> None:
    raise ConfigError(PG_DUMP_HELP)


__all__ = ["PG_DUMP_HELP", "backup_sqlite", "refuse_postgres"]
