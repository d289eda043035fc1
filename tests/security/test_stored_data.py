"""Data stored before writes were checked must never make a read fail: a memory whose metadata is
nested hundreds or thousands of levels deep (written straight into the database, as an old version of
reverie accepted it) still lists, searches, exports and serialises — for every user."""

from __future__ import annotations

import json
from typing import Any

import pytest

from reverie import Memory
from reverie.model import MAX_SERIALISED_DEPTH, TOO_DEEP


def _deep_text(levels: int) -> str:
    return '{"k":' * levels + "1" + "}" * levels


def _poison(mem: Memory, memory_id: str, levels: int) -> None:
    target = str(mem.target)
    if target.startswith("postgresql://"):
        import psycopg

        with psycopg.connect(target, autocommit=True) as conn:
            conn.execute("UPDATE memories SET metadata = %s::jsonb WHERE id = %s", [_deep_text(levels), memory_id])
        return
    import sqlite3

    with sqlite3.connect(target) as conn:
        conn.execute("UPDATE memories SET metadata = ? WHERE id = ?", (_deep_text(levels), memory_id))


def _depth(value: Any) -> int:
    depth, stack = 0, [(value, 1)]
    while stack:
        item, d = stack.pop()
        if isinstance(item, dict):
            depth = max(depth, d)
            stack.extend((v, d + 1) for v in item.values())
    return depth


@pytest.mark.parametrize("levels", [600, 990, 5000])
def test_deeply_nested_stored_metadata_never_breaks_a_read(mem: Memory, levels: int) -> None:
    from fastapi.testclient import TestClient

    from reverie.http import create_app

    bad = mem.add("Alice's old note about the harbour", user_id="alice", infer=False).id
    mem.add("Bob's note about the harbour", user_id="bob", infer=False)
    try:
        _poison(mem, bad, levels)
    except Exception as exc:  # PostgreSQL itself refuses JSON that deep: nothing can be stored
        pytest.skip(f"the database refuses {levels} levels: {type(exc).__name__}")
    rec = mem.get(bad)
    data = rec.to_dict()
    json.dumps(data)
    assert _depth(data["metadata"]) <= MAX_SERIALISED_DEPTH + 1
    assert TOO_DEEP in json.dumps(data, ensure_ascii=False) or "_unreadable" in json.dumps(data)
    assert mem.search("harbour", user_id="alice")[0].memory.id == bad
    assert len(mem.list(all_users=True)) == 2
    with TestClient(create_app(mem, dashboard=False)) as client:
        assert client.get("/v1/memories", params={"all_users": "true"}).status_code == 200
        assert client.post("/v1/search", json={"query": "harbour", "user_id": "alice"}).status_code == 200
        assert client.get(f"/v1/memories/{bad}").status_code == 200
        export = client.get("/v1/export")
        assert export.status_code == 200 and len(export.text.splitlines()) == 2
    mem.dream()
