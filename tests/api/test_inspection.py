"""What operators' tools read through ``Memory`` (no access counted), and that the interfaces — the CLI, the
REST API, the dashboard, the MCP server, the simulator and the demo — read through it instead of reaching into the
store."""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from pathlib import Path

import pytest

import reverie
from reverie import Memory
from reverie.clock import SettableClock
from reverie.errors import InvalidInputError, NotFoundError
from reverie.model import Relation, RelationType

SRC = Path(reverie.__file__).parent
INTERFACES = [
    *sorted((SRC / "cli").glob("*.py")),
    SRC / "mcp_server.py",
    SRC / "mcp_format.py",
    SRC / "simulate.py",
    SRC / "_demo.py",
    SRC / "scoped.py",
    *sorted((SRC / "http").glob("*.py")),
    *sorted((SRC / "web").glob("*.py")),
]
#: a Memory object's store reached from an interface (``rec.store`` — a record's storage tier — is fine)
REACH_IN = re.compile(r"\b(mem|memory|self\.mem|self\.memory|get_memory\(request\)|_mem\(request\))\.store\b")


def test_interfaces_do_not_reach_into_the_store() -> None:
    found = [
        f"{p.relative_to(SRC)}:{n}: {line.strip()}"
        for p in INTERFACES
        for n, line in enumerate(p.read_text("utf-8").splitlines(), 1)
        if REACH_IN.search(line)
    ]
    assert found == []


def test_export_counts_and_relations_see_every_status(mem: Memory) -> None:
    kept = mem.add("Ana keeps bees in the garden", user_id="ana", infer=False)
    gone = mem.add("Ana's old hive was by the shed", user_id="ana", infer=False)
    mem.add("Ben plays the cello", user_id="ben", infer=False)
    mem.invalidate(gone.id, reason="moved")
    mem.store.add_relations([Relation(kept.id, gone.id, RelationType.RELATED_TO)])
    accesses_before = mem.peek(kept.id).access_count

    assert {r.id for r in mem.export(user_id="ana")} == {kept.id, gone.id}
    assert len(list(mem.export())) == 3  # every user
    assert mem.count_all(user_id="ana") == 2 and mem.count_all(user_id="ana", cold_only=True) == 0
    short = mem.short_ids([kept.id, gone.id])[kept.id]
    assert [(r.src_id, r.dst_id) for r in mem.relations(short)] == [(kept.id, gone.id)]
    related = mem.relations_in(user_id="ana", types=frozenset({RelationType.RELATED_TO}))
    assert [(r.src_id, r.dst_id) for r in related] == [(kept.id, gone.id)]
    assert {(s["user_id"], s["memories"]) for s in mem.scopes()} == {("ana", 2), ("ben", 1)}
    assert set(mem.peek_many([kept.id, gone.id, "no-such-id"])) == {kept.id, gone.id}
    assert mem.peek(kept.id).access_count == accesses_before  # looking is not recalling
    with pytest.raises(NotFoundError):
        mem.relations("no-such-id")


def test_access_times_reports_and_readiness(mem: Memory, clock: SettableClock) -> None:
    rec = mem.add("The boiler is serviced every October", user_id="u", infer=False)
    assert mem.access_times(rec.id) == []
    mem.search("when is the boiler serviced", user_id="u", k=1)
    assert len(mem.access_times(rec.id)) == 1
    assert mem.last_dream() is None
    clock.advance(timedelta(days=1))
    mem.dream()
    report = mem.last_dream()
    assert report is not None and report["steps"]
    at = datetime.fromisoformat(report["at"])
    assert all(e.actor == "dream" and e.at == at for e in mem.dream_changes(at))
    mem.check_ready()
    assert mem.info().backend == mem.backend in {"sqlite", "postgres"}
    with pytest.raises(InvalidInputError):
        mem.access_times(rec.id, limit=0)


def test_api_keys_through_memory(mem: Memory) -> None:
    key, token = mem.create_api_key(name="bot", users=["maya"])
    assert token and key.name == "bot" and [k.id for k in mem.api_keys()] == [key.id]
    assert mem.key_ring().authenticate(token) is not None
    mem.revoke_api_key(key.id)
    assert mem.api_keys() == [] and [k.id for k in mem.api_keys(include_revoked=True)] == [key.id]
    with pytest.raises(NotFoundError):
        mem.revoke_api_key(key.id)
