"""Agent narrowing on every read: a credential narrowed to alice's agent ``a1`` runs every read operation of
every interface that takes credentials (the Python ``ScopedMemory``, REST with an API key, MCP locked with
``--user``/``--agent``), and no answer names a memory of another agent or user — not its words, not its id —
in its records, a search explanation (``coactivated_with``, a graph walk's ``via``), a context block, a
history, the topic index or the stats.

The store is built to tempt every path: the other agent's memories share words with a1's, relations lead
from a1's memories through the other agent's and back, co-activations pair them, a conversation both agents
took part in was sealed into a box, a1's records name the other agent's ids in ``superseded_by``, metadata
and history (as a store written by an older version may), and a dream ran over the user.

A scoped import answers alike for an id that exists in another scope and one that exists nowhere, and
never stores a link to a memory of another scope.
"""

from __future__ import annotations

import dataclasses
import inspect
import json
import re
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import anyio
import pytest
from fastapi.testclient import TestClient

from reverie import Memory
from reverie.auth import Credential
from reverie.errors import PermissionDeniedError
from reverie.model import HistoryEvent, Relation, RelationType
from reverie.scoped import ScopedMemory
from reverie.store.base import MemoryFilter

#: the other agent's and the other user's words: none may reach a1
FOREIGN_WORDS = ("zanzibar", "quokka", "saffron", "trombone")
UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


@dataclass
class World:
    mem: Memory
    mine: list[str]
    theirs: list[str]
    bobs: list[str]
    foreign: set[str]

    def leaks(self, answer: Any) -> list[str]:
        text = answer if isinstance(answer, str) else json.dumps(_plain(answer), default=str)
        found = [f"id {i}" for i in sorted(self.foreign) if i in text]
        found += [f"word {w!r}" for w in FOREIGN_WORDS if w in text.lower()]
        return found


def _plain(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if hasattr(value, "to_dict"):
        return _plain(value.to_dict())
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [_plain(v) for v in value]
    return value


@pytest.fixture
def world(make_memory: Any) -> World:
    mem: Memory = make_memory()
    mine = [
        mem.add(text, user_id="alice", agent_id="a1", session_id="s1", infer=False).id
        for text in (
            "Alice's garden has tomatoes and basil",
            "Alice waters the garden every morning",
            "The garden shed key is blue",
        )
    ]
    theirs = [
        mem.add(text, user_id="alice", agent_id="a2", session_id="s1", infer=False).id
        for text in (
            "Alice's garden trip to Zanzibar with Quokka Tours",
            "Zanzibar garden shed tour booked with Quokka",
            "Alice hums a trombone tune in the garden",
        )
    ]
    bobs = [mem.add("Bob's garden grows saffron by the shed", user_id="bob", infer=False).id]
    # a conversation both agents of alice took part in, sealed into a box (the topic index reads it)
    for agent, text in (
        ("a2", "I am planning a trip to Zanzibar with Quokka Tours next spring"),
        ("a1", "My garden needs more basil this year"),
        ("a2", "Quokka Tours said Zanzibar is lovely in April"),
    ):
        mem.observe(text, user_id="alice", agent_id=agent, session_id="s2", flush=True)
    mem.end_session("s2", user_id="alice")
    # relations leading from a1's memories through a2's and back (the graph walk's "via"), co-activations
    store = mem.store
    store.add_relations(
        [
            Relation(mine[2], theirs[1], RelationType.ELABORATES),
            Relation(theirs[1], mine[0], RelationType.ELABORATES),
            Relation(mine[1], theirs[0], RelationType.RELATED_TO),
            Relation(mine[0], bobs[0], RelationType.CAUSES),
        ]
    )
    store.bump_coactivations([(mine[0], theirs[0]), (mine[1], theirs[2]), (mine[0], mine[1])] * 8, mem.now())
    for _ in range(4):  # co-retrieval across the agents (an admin's user-wide search)
        mem.search("garden shed", user_id="alice", k=10)
    # what a store written by an older version may hold: a1's records naming a2's ids
    old = mem.store.get([mine[1]])[mine[1]]
    old.metadata = {"see": theirs[0], "notes": f"copied from {theirs[1]}"}
    old.inputs = [{"id": theirs[2], "text": "a tune"}]
    mem.store.update(old)
    mem.store.add_history(
        [HistoryEvent(mine[0], "linked", mem.now(), reason=f"near {theirs[0]}", data={"near": [mine[1], theirs[0]]})]
    )
    mem.dream(user_id="alice")
    everything = [r for batch in mem.store.scan(MemoryFilter.everything()) for r in batch]
    foreign = {r.id for r in everything if (r.user_id, r.agent_id) != ("alice", "a1")}
    mine = [r.id for r in everything if (r.user_id, r.agent_id) == ("alice", "a1")]
    assert len(foreign) >= 5 and len(mine) >= 3
    # the words that make a leak visible are in the other agent's memories (and nowhere in a1's)
    assert not any(w in r.content.lower() for r in everything if r.id in mine for w in FOREIGN_WORDS)
    return World(mem, mine, theirs, bobs, foreign)


QUERIES = ("why is the garden shed key blue", "garden shed tour", "what does Alice grow in the garden", "Zanzibar")

#: ScopedMemory's public methods that change memories or need a credential this test does not hold:
#: each is exercised below for what it returns (write results) or checked to be refused
WRITES = {"add", "add_many", "observe", "flush", "update", "forget", "forget_user", "pin", "unpin", "invalidate"}
WRITES |= {"reactivate", "promote", "demote", "feedback", "undo_consolidation", "end_session", "restore", "dream"}
WRITES |= {"tick", "maintain", "compact", "ingest_code", "export_markdown"}
REFUSED = {"buffered", "documents", "export", "dream_reports"}


def _reads(sm: ScopedMemory, w: World) -> dict[str, Callable[[], Any]]:
    """Every read of a ScopedMemory, through the a1 credential."""
    calls: dict[str, Callable[[], Any]] = {
        "users": lambda: sm.users(),
        "list": lambda: sm.list(limit=100),
        "count": lambda: sm.count(),
        "stats": lambda: sm.stats(),
        "served_stats": lambda: sm.served_stats(),
        "hot_tier": lambda: sm.hot_tier(),
        "working_memory": lambda: sm.working_memory("s1") + sm.working_memory("s2"),
        "topic_index": lambda: [sm.topic_index(), sm.topic_index(refresh=True)],
        "action_telemetry": lambda: sm.action_telemetry(),
        "maintenance_status": lambda: sm.maintenance_status(),
        "search": lambda: [sm.search(q, k=20) for q in QUERIES],
        "context": lambda: [sm.context(q, session_id="s1") for q in QUERIES],
    }
    by_id = {
        "peek": sm.peek,
        "get": sm.get,
        "resolve_id": sm.resolve_id,
        "history": sm.history,
        "accesses": sm.accesses,
        "explain_strength": sm.explain_strength,
        "relations": sm.relations,
    }
    for name, fn in by_id.items():
        calls[name] = lambda fn=fn: [fn(i) for i in w.mine]  # type: ignore[misc]
    return calls


def test_every_python_read_through_a_narrowed_credential(world: World) -> None:
    sm = ScopedMemory(world.mem, Credential.scoped("alice", "a1"))
    reads = _reads(sm, world)
    public = {n for n, _ in inspect.getmembers(ScopedMemory, inspect.isfunction) if not n.startswith("_")}
    assert public - {"visible"} == set(reads) | WRITES | REFUSED, "classify every ScopedMemory method here"
    leaks = {name: found for name, call in reads.items() if (found := world.leaks(call()))}
    # what writes answer names nothing of another scope either
    own = world.mine[1]
    answers = [
        sm.add("The garden shed key is blue and hangs by the door", session_id="s1"),
        sm.observe("I watered the basil in the garden shed", session_id="s1", flush=True),
        sm.update(own, metadata={"checked": True}),
        sm.pin(own),
        sm.unpin(own),
        sm.feedback(own, useful=True),
        sm.promote(own),
        sm.demote(own),
        sm.add_many(["Alice keeps seeds in the garden shed"]),
    ]
    leaks.update({f"write {n}": found for n, a in enumerate(answers) if (found := world.leaks(a))})
    assert not leaks, leaks
    for name in REFUSED:
        with pytest.raises(PermissionDeniedError):
            getattr(sm, name)()
    # the library itself (and an admin) still sees everything
    assert world.leaks(world.mem.history(world.mine[0]))
    assert sm.topic_index()["agent_id"] == "a1" and "agent_id" not in world.mem.topic_index(user_id="alice")


def test_every_rest_read_through_a_narrowed_key(world: World) -> None:
    from reverie.http import create_app

    _, key = world.mem.create_api_key(name="a1", users=["alice"], agents=["a1"])
    h = {"Authorization": f"Bearer {key}"}
    calls: list[tuple[str, str, Any]] = [
        ("GET", "/v1/memories?limit=100", None),
        ("GET", "/v1/users", None),
        ("GET", "/v1/stats", None),
        ("GET", "/v1/topics", None),
        ("GET", "/v1/topics?refresh=true", None),
        ("GET", "/v1/actions", None),
        ("GET", "/v1/maintenance", None),
        ("GET", "/v1/me", None),
    ]
    calls += [("POST", "/v1/search", {"query": q, "k": 20}) for q in QUERIES]
    calls += [("POST", "/v1/context", {"query": q, "session_id": "s1"}) for q in QUERIES]
    for mid in world.mine:
        for suffix in ("", "/history", "/accesses", "/strength", "/relations"):
            calls.append(("GET", f"/v1/memories/{mid}{suffix}", None))
    with TestClient(create_app(world.mem, dashboard=False)) as client:
        leaks = {}
        for method, path, body in calls:
            res = client.request(method, path, json=body, headers=h)
            assert res.status_code == 200, (path, res.status_code, res.text[:300])
            if found := world.leaks(res.text):
                leaks[f"{method} {path} {body or ''}"] = found
        assert not leaks, leaks
        for path in ("/v1/documents", "/v1/export", "/v1/dream/reports", "/v1/memories?all_users=true"):
            assert client.get(path, headers=h).status_code == 403, path
        for mid in sorted(world.foreign):
            assert client.get(f"/v1/memories/{mid}", headers=h).status_code == 404


def test_every_mcp_read_through_a_narrowed_server(world: World) -> None:
    from mcp import Client

    from reverie.mcp_server import ALL_TOOLS, Defaults, build_server
    from tests.support.mcp_text import text_of

    server = build_server(world.mem, Defaults(user_id="alice", agent_id="a1", session_id="s1"), tools=ALL_TOOLS)
    tools: list[tuple[str, dict[str, Any]]] = [("stats", {}), ("topics", {})]
    tools += [("recall", {"query": q, "k": 20}) for q in QUERIES]
    tools += [("context", {"query": q}) for q in QUERIES]
    tools += [(tool, {"memory_id": mid}) for mid in world.mine for tool in ("get", "history")]
    resources = ["reverie://hot", "reverie://users/alice/hot", "reverie://stats"]
    resources += ["reverie://sessions/s1/working", "reverie://users/alice/sessions/s2/working"]
    resources += [f"reverie://memories/{mid}" for mid in world.mine]
    leaks: dict[str, list[str]] = {}

    async def main() -> None:
        async with Client(server) as client:
            for tool, args in tools:
                res = await client.call_tool(tool, args)
                assert not res.is_error, (tool, text_of(res))
                found = world.leaks(text_of(res)) + world.leaks(res.structured_content)
                if found:
                    leaks[f"{tool} {args}"] = found
            for uri in resources:
                if found := world.leaks(text_of(await client.read_resource(uri))):
                    leaks[uri] = found
            res = await client.call_tool("documents", {})
            assert res.is_error and "PermissionDeniedError" in text_of(res)

    anyio.run(main)
    assert not leaks, leaks


def test_a_scoped_import_never_tells_whether_an_id_exists(world: World) -> None:
    """A foreign id and an unknown one get the same answer and the same treatment; no link to another scope
    is stored; running the import again skips what it stored."""
    from reverie.http import create_app

    _, key = world.mem.create_api_key(name="a1", users=["alice"], agents=["a1"])
    h = {"Authorization": f"Bearer {key}", "Content-Type": "application/x-ndjson"}
    unknown = str(uuid.UUID(int=uuid.UUID(world.theirs[0]).int ^ 0xFFFF))
    assert not world.mem.peek_many([unknown])

    def record(rid: str, text: str, **extra: Any) -> str:
        return json.dumps({"id": rid, "content": text, "user_id": "alice", "agent_id": "a1", **extra})

    lines = [
        record(world.theirs[0], "Alice's imported note one"),  # the id of a2's memory
        record(unknown, "Alice's imported note two"),  # an id nobody has
        record(world.mine[0], "Alice's own memory again"),  # the caller's own: a re-run
        record(str(uuid.uuid4()), "Alice's note superseded by bob's", status="superseded", superseded_by=world.bobs[0]),
        record(
            str(uuid.uuid4()), "Alice's note superseded by a2's", status="superseded", superseded_by=world.theirs[1]
        ),
        record(str(uuid.uuid4()), "Alice's note superseded by nobody", status="superseded", superseded_by=unknown),
    ]
    body = "\n".join(lines).encode()
    with TestClient(create_app(world.mem, dashboard=False)) as client:
        first = client.post("/v1/import", content=body, headers=h).json()
        assert first == {"restored": 5, "skipped": 1, "rejected": 0, "errors": []}
        again = client.post("/v1/import", content=body, headers=h).json()
        assert again == {"restored": 0, "skipped": 6, "rejected": 0, "errors": []}
        auth = {"Authorization": h["Authorization"]}
        # neither original id was taken: the foreign one still names a2's memory, the unknown one nothing
        assert client.get(f"/v1/memories/{world.theirs[0]}", headers=auth).status_code == 404
        assert client.get(f"/v1/memories/{unknown}", headers=auth).status_code == 404
        assert world.mem.peek(world.theirs[0]).agent_id == "a2"
        assert not world.mem.peek_many([unknown])
    imported = [r for r in world.mem.export(user_id="alice") if r.agent_id == "a1" and "note" in r.content]
    assert len(imported) == 5
    everyone = {r.id for batch in world.mem.store.scan(MemoryFilter.everything()) for r in batch}
    for rec in imported:
        assert rec.id not in world.foreign and rec.id != unknown
        # a successor is one of its own scope's ids (derived, like the record's own), never another scope's
        assert rec.superseded_by is None or (rec.superseded_by not in world.foreign and rec.superseded_by != unknown)
        if rec.superseded_by is not None:
            assert rec.superseded_by not in everyone or world.mem.peek(rec.superseded_by).agent_id == "a1"
    # the two notes whose original ids differ only in whether they exist were treated alike
    one, two = (next(r for r in imported if r.content.endswith(n)) for n in ("note one", "note two"))
    assert one.id[:14] == world.theirs[0][:14] and two.id[:14] == unknown[:14]  # the original's time is kept
