"""Every statement on the tables that carry the partition (user) key selects rows by that key or by their ids.

Sharding a PostgreSQL store by user (Citus, or several databases behind a router: docs/production.md) needs each
statement that reads or changes those tables to name one partition, so that it can be sent to the one shard holding
it, or to name rows by primary key (a lookup each shard answers from its own index). A statement that picks rows
by anything else (a session, a hash, a status over every user) has to read every shard.

The statements are the ones a real server receives: the test's database logs every statement (``log_statement``),
and the server's log is read back through ``pg_read_file`` (a superuser's right: the embedded test server's user is
one; against another server without it the test is skipped). The workload is the public API, user-scoped, as an
application runs it: adds, searches (hot and deep), reads by id, edits, the history, a dream 120 days on.
"""

from __future__ import annotations

import os
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

import psycopg
import pytest

from reverie import Memory, SettableClock
from reverie.embed.testing import HashEmbedder

pytestmark = pytest.mark.postgres

#: the tables with a partition column (the user key): memories (generated from user_id), clusters, boxes,
#: memory_actions
PARTITIONED = ("memories", "clusters", "boxes", "memory_actions")
#: a condition that names one partition, or rows by primary key
_BY_PARTITION = re.compile(r'"?partition"?\s*=\s*\$\d+')
_BY_ID = re.compile(r'(?:^|[\s(])"?id"?\s*(?:=\s*\$\d+|=\s*ANY\s*\(\s*\$\d+)')
#: statements that read every partition on purpose, each named with why: they run on every shard of a
#: distributed table (docs/production.md, "Sharding by user")
WHOLE_STORE = {
    "full-text word statistics (is a query word common in the store?)": re.compile(
        r"^WITH st AS \( SELECT s\.most_common_elems.* FROM \(SELECT 1 FROM memories WHERE tsv @@ to_tsquery\("
    ),
    "store information (its size)": re.compile(
        r"^SELECT current_setting\('server_version'\), .*\(SELECT count\(\*\) FROM memories\)"
    ),
    "time-based pruning of the action log": re.compile(r"^DELETE FROM memory_actions WHERE at < \$\d+$"),
    "schema migration": re.compile(r"^(ALTER|CREATE|DROP) |^SELECT (id, )?embedding_codes FROM memories WHERE"),
}
_ENTRY = re.compile(r"\n(?=\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)")
_STATEMENT = re.compile(r"LOG:\s+(?:statement|execute [^:]*):\s(.*)", re.DOTALL)


def _statements(log: str) -> list[str]:
    """The SQL text of every statement entry in a stretch of the server log, whitespace normalised."""
    out = []
    for entry in _ENTRY.split(log):
        found = _STATEMENT.search(entry)
        if found:
            text = found.group(1).split("\nDETAIL:")[0]
            out.append(" ".join(text.split()))
    return out


def _tables(stmt: str) -> set[str]:
    return {t for t in PARTITIONED if re.search(rf"\b(?:FROM|UPDATE|INTO|JOIN)\s+{t}\b", stmt)}


def _unrouted(stmt: str) -> bool:
    """Does this statement on a partitioned table pick its rows by something other than a partition or ids?"""
    if stmt.startswith(("COPY ", "INSERT ")):  # new rows carry their own key
        return False
    if any(p.search(stmt) for p in WHOLE_STORE.values()):
        return False
    where = stmt.split(" WHERE ", 1)[1] if " WHERE " in stmt else ""
    return not (_BY_PARTITION.search(where) or _BY_ID.search(where))


def _log_size(conn: psycopg.Connection) -> tuple[str, int]:
    path = conn.execute("SELECT coalesce(pg_current_logfile(), 'log')").fetchone()
    assert path is not None
    size = conn.execute("SELECT size FROM pg_stat_file(%s)", (path[0],)).fetchone()
    assert size is not None
    return str(path[0]), int(size[0])


def test_every_statement_on_a_partitioned_table_names_the_partition_or_ids(pg_url: str) -> None:
    clock = SettableClock(datetime(2026, 1, 1, tzinfo=UTC))
    # the first open of a new store migrates it and records the embedder (a sample of any memories' vectors,
    # once per store): logged from the next open on
    Memory(pg_url, embedder=HashEmbedder(64), config={"opslog": {"enabled": False}}, clock=clock).close()
    with psycopg.connect(pg_url, autocommit=True) as conn:
        try:
            path, start = _log_size(conn)
            conn.execute("SELECT pg_read_file(%s, 0, 1)", (path,))
        except psycopg.Error:
            pytest.skip("the server's log cannot be read over SQL here (needs a superuser and a log file)")
        database = conn.execute("SELECT current_database()").fetchone()
        assert database is not None
        conn.execute(
            psycopg.sql.SQL("ALTER DATABASE {} SET log_statement = 'all'").format(psycopg.sql.Identifier(database[0]))
        )
    with Memory(pg_url, embedder=HashEmbedder(64), config={"opslog": {"enabled": False}}, clock=clock) as mem:
        for user in ("ann", "bob"):
            for i in range(25):
                mem.add(f"{user} keeps item {i} in the {'red' if i % 2 else 'blue'} box", user_id=user, infer=False)
        mem.observe("I moved to Lisbon last spring and I prefer green tea now.", user_id="ann")
        hits = mem.search("which box holds item 3", user_id="ann")
        assert hits
        first = hits[0].memory.id
        mem.get(first)
        mem.history(first)
        mem.accesses(first)
        mem.list(user_id="ann", limit=5)
        mem.count(user_id="ann")
        mem.stats(user_id="ann", all_users=False)
        mem.working_memory("s1", user_id="ann")
        mem.hot_tier(user_id="ann")
        mem.update(first, "ann keeps item 3 in the green box")
        clock.advance(timedelta(days=120))
        mem.dream(user_id="ann")
        mem.search("which box holds item 3", user_id="ann", deep=True)
        mem.search("which box holds item 4", user_id="ann")
        mem.forget(hits[-1].memory.id)
    with psycopg.connect(pg_url, autocommit=True) as conn:
        log = conn.execute("SELECT pg_read_file(%s, %s, 1000000000)", (path, start)).fetchone()
    assert log is not None
    statements = [s for s in _statements(str(log[0])) if _tables(s)]
    assert len(statements) > 200  # the workload was logged (searches, reads, writes, the dream's passes)
    assert any(_BY_PARTITION.search(s) for s in statements)
    unrouted = sorted({s for s in statements if _unrouted(s)})
    if unrouted:
        Path(os.environ.get("REVERIE_TEST_DUMP", "/dev/null")).write_text("\n\n".join(unrouted))
    assert not unrouted, "\n\n".join(s[-600:] for s in unrouted)


def test_the_check_flags_a_statement_that_reads_every_partition() -> None:
    # the check itself: a scope filter without the partition is caught, a by-id or by-partition one is not
    assert _unrouted('SELECT id FROM memories WHERE "status" = ANY($1) AND "store" = ANY($2)')
    assert _unrouted("SELECT id FROM memories WHERE content_hash = $1 ORDER BY created_at DESC")
    assert _unrouted("SELECT user_id, count(*) FROM memories GROUP BY user_id")
    assert not _unrouted('SELECT id FROM memories WHERE "partition" = $1 AND "status" = ANY($2)')
    assert not _unrouted("UPDATE memories SET energy = $1, version = version + 1 WHERE id = $2")
    assert not _unrouted("SELECT id, version FROM memories WHERE id = ANY($1)")
    assert not _unrouted('COPY memories ("id", "content") FROM STDIN (FORMAT BINARY)')
    assert _tables("SELECT 1 FROM boxes WHERE partition = $1") == {"boxes"}
    assert _tables("SELECT 1 FROM relations WHERE src_id = $1") == set()
