"""A randomized multi-tenant run: 10,000 operations over REST (API keys) and MCP (servers locked with
``--user``/``--agent``), by-id routes included, aimed at every user's and agent's memories.

Proof: no response carries a memory (its record, or its words in a context block) outside the caller's
scope; no operation on a memory outside the scope changes or deletes it (it answers 404 / NotFoundError);
every memory written lands in the writer's scope; agent narrowing holds in ``context()`` (working memory
and hot tier included).
"""

from __future__ import annotations

import json
import random
import re
from collections import Counter
from dataclasses import dataclass
from typing import Any

import anyio
import pytest

from reverie import Memory
from reverie.auth import create_key
from reverie.model import MemoryRecord

USERS = ["alice", "bob", "carol"]
AGENTS = ["a1", "a2", None]
TAG = re.compile(r"tag-(alice|bob|carol)-(a1|a2|none)")
UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
WORDS = ["garden", "violin", "passport", "ferry", "recipe", "marathon", "dentist", "invoice", "kayak", "library"]
WORKING = ["Monday dentist appointment moved to nine thirty", "Thursday ferry tickets booked for the islands"]
REST_OPS = 6000
MCP_OPS = 4000


def tag(user: str, agent: str | None) -> str:
    return f"tag-{user}-{agent or 'none'}"


@dataclass(frozen=True)
class Scope:
    users: frozenset[str]
    agents: frozenset[str] | None

    def covers(self, user: str | None, agent: str | None) -> bool:
        return user in self.users and (self.agents is None or agent in self.agents)


class World:
    """The ground truth: who owns each memory, and the violations found."""

    def __init__(self, mem: Memory) -> None:
        self.mem = mem
        self.owner: dict[str, tuple[str | None, str | None]] = {}
        self.violations: list[str] = []
        self.id_mentions: list[str] = []
        self.ops: Counter[str] = Counter()
        self.refused: Counter[int | str] = Counter()

    def learn(self, ids: list[str]) -> None:
        unknown = [i for i in ids if i not in self.owner]
        for mid, rec in self.mem.store.get(unknown).items():
            self.owner[mid] = (rec.user_id, rec.agent_id)

    def check_payload(self, who: str, scope: Scope, op: str, payload: Any) -> None:
        """Every memory record and every tagged text in ``payload`` must lie in ``scope``."""
        text = json.dumps(payload, ensure_ascii=False)
        # words of another user can reach no answer (a user is a partition); words written at user level
        # may legitimately sit in an agent's memory (the whole user's credential wrote them and the write
        # path merged them there): agents are checked by the records and ids below
        for user, agent in TAG.findall(text):
            if user not in scope.users:
                self.violations.append(f"{who} {op}: words of {user}/{agent} in the answer")
        for rec in _records(payload):
            if not scope.covers(rec.get("user_id"), rec.get("agent_id")):
                self.violations.append(f"{who} {op}: record of {rec.get('user_id')}/{rec.get('agent_id')}")
        ids = set(UUID.findall(text))
        self.learn(sorted(ids))
        for mid in ids:
            if mid in self.owner and not scope.covers(*self.owner[mid]):
                self.id_mentions.append(f"{who} {op}: {mid}")
        items = payload.get("items", []) if isinstance(payload, dict) else []
        for item in items if op == "context" else []:  # a context block's memories, each by id
            owner = self.owner.get(item.get("id", ""))
            if owner is not None and not scope.covers(*owner):
                self.violations.append(f"{who} context: {item.get('section')} memory of {owner}")


def _records(payload: Any) -> list[dict[str, Any]]:
    out = []
    stack = [payload]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            if "content" in item and "user_id" in item and "agent_id" in item:
                out.append(item)
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return out


def _seed(mem: Memory) -> list[str]:
    ids = []
    for user in USERS:
        for agent in AGENTS:
            texts = [
                f"{tag(user, agent)} note {i}: the {WORDS[i % len(WORDS)]} and the {WORDS[(i * 3) % len(WORDS)]}"
                for i in range(8)
            ]
            notes = [r.id for r in mem.add_many(texts, user_id=user, agent_id=agent, session_id="s1", infer=False)]
            mem.store.update_fields(notes[0], {"utility": 0.95, "access_count": 15})  # the hot tier
            ids += notes
            for text in WORKING:  # through the write path: working memory of session s1, boxes, relations
                res = mem.add(f"{tag(user, agent)} {text}", user_id=user, agent_id=agent, session_id="s1")
                ids += list(res.ids)
    return ids


def _targets(world: World, rng: random.Random) -> str:
    return rng.choice(sorted(world.owner))


def _landing(scope: Scope, args: dict[str, Any]) -> tuple[str, str | None]:
    """Where a write with these scope arguments lands (if it is allowed): what its words are tagged with."""
    user = args.get("user_id") or (next(iter(scope.users)) if len(scope.users) == 1 else "nobody")
    agent = args.get("agent_id") or (next(iter(scope.agents)) if scope.agents and len(scope.agents) == 1 else None)
    return user, agent


def _pick_scope_args(rng: random.Random, scope: Scope) -> dict[str, Any]:
    user = rng.choice([*sorted(scope.users), *USERS, None])
    agent = rng.choice([*(sorted(scope.agents) if scope.agents else []), *AGENTS])
    return {"user_id": user, "agent_id": agent}


def _by_id_unchanged(
    world: World, who: str, scope: Scope, op: str, mid: str, before: MemoryRecord | None, ok: bool
) -> None:
    owner = world.owner.get(mid)
    if owner is None or scope.covers(*owner):
        return
    after = world.mem.store.get([mid]).get(mid)
    if ok:
        world.violations.append(f"{who} {op}: succeeded on {owner}'s memory")
    if before is not None and (after is None or after.version != before.version):
        world.violations.append(f"{who} {op}: changed {owner}'s memory")


# REST ------------------------------------------------------------------------------------------------


def _rest_phase(world: World, rng: random.Random, n: int) -> None:
    from fastapi.testclient import TestClient

    from reverie.http import create_app

    mem = world.mem
    specs = {
        "alice": (["alice"], None),
        "alice-a1": (["alice"], ["a1"]),
        "bob-a2": (["bob"], ["a2"]),
        "carol": (["carol"], None),
        "alice+bob": (["alice", "bob"], None),
    }
    keys = {}
    for name, (users, agents) in specs.items():
        keys[name] = create_key(mem.store, name=name, users=users, agents=agents, now=mem.now())[1]
    scopes = {name: Scope(frozenset(u), frozenset(a) if a else None) for name, (u, a) in specs.items()}
    with TestClient(create_app(mem, dashboard=False)) as client:
        for _ in range(n):
            who = rng.choice(sorted(keys))
            scope = scopes[who]
            headers = {"Authorization": f"Bearer {keys[who]}"}
            op = rng.choice(
                [
                    "search",
                    "context",
                    "list",
                    "add",
                    "observe",
                    "get",
                    "patch",
                    "delete",
                    "pin",
                    "history",
                    "strength",
                    "relations",
                    "feedback",
                    "invalidate",
                    "promote",
                    "stats",
                    "export",
                    "import",
                    "end_session",
                    "get",
                    "search",
                    "context",
                ]
            )
            world.ops[f"rest {op}"] += 1
            _rest_op(world, rng, client, who, scope, headers, op)


def _rest_op(  # noqa: C901 - one branch per route
    world: World, rng: random.Random, client: Any, who: str, scope: Scope, headers: dict[str, str], op: str
) -> None:
    args = _pick_scope_args(rng, scope)
    query = f"{rng.choice(WORDS)} note {rng.randrange(8)} and the {rng.choice(WORDS)}"
    if op in ("search", "context"):
        body = {"query": query, **{k: v for k, v in args.items() if v is not None}}
        if op == "context":
            body["session_id"] = "s1"
        res = client.post(f"/v1/{op}", json=body, headers=headers)
    elif op == "list":
        res = client.get("/v1/memories", params={k: v for k, v in args.items() if v is not None}, headers=headers)
    elif op in ("add", "observe"):
        text = f"{tag(*_landing(scope, args))} new fact about the {rng.choice(WORDS)} #{rng.randrange(10**6)}"
        body = {
            ("content" if op == "add" else "message"): text,
            "session_id": "s1",
            **{k: v for k, v in args.items() if v is not None},
        }
        if op == "add":
            body["infer"] = rng.random() < 0.5
        res = client.post("/v1/memories" if op == "add" else "/v1/observe", json=body, headers=headers)
        if res.status_code < 300:
            ids = [res.json()["id"]] if op == "add" else [r["id"] for r in res.json()["results"]]
            ids = [i for i in ids if i]
            world.learn(ids)
            for mid in ids:
                if not scope.covers(*world.owner[mid]):
                    world.violations.append(f"{who} {op}: wrote into {world.owner[mid]}")
            # a CREATE's words must be its writer's
            return
    elif op in ("stats", "export"):
        path = "/v1/stats" if op == "stats" else "/v1/export"
        params = {"user_id": args["user_id"]} if args["user_id"] and rng.random() < 0.7 else {}
        res = client.get(path, params=params, headers=headers)
        if op == "export" and res.status_code == 200:
            world.violations.append(f"{who} export: allowed without admin")
    elif op == "import":
        user = rng.choice(USERS)
        rec = MemoryRecord(content=f"{tag(user, None)} imported", user_id=user).to_dict()
        res = client.post("/v1/import", content=json.dumps(rec), headers=headers)
        if res.status_code == 200 and res.json()["restored"] and not scope.covers(user, None):
            world.violations.append(f"{who} import: stored a record of {user}")
        if res.status_code == 200 and res.json()["restored"]:
            world.owner[rec["id"]] = (user, None)
    elif op == "end_session":
        res = client.post(
            "/v1/sessions/s1/end", json={"user_id": args["user_id"]} if args["user_id"] else None, headers=headers
        )
    else:
        mid = _targets(world, rng)
        before = world.mem.store.get([mid]).get(mid)
        routes: dict[str, tuple[str, str, dict[str, Any] | None]] = {
            "get": ("GET", f"/v1/memories/{mid}", None),
            "patch": ("PATCH", f"/v1/memories/{mid}", {"category": "edited"}),
            "delete": ("DELETE", f"/v1/memories/{mid}", None),
            "pin": ("POST", f"/v1/memories/{mid}/pin", None),
            "history": ("GET", f"/v1/memories/{mid}/history", None),
            "strength": ("GET", f"/v1/memories/{mid}/strength", None),
            "relations": ("GET", f"/v1/memories/{mid}/relations", None),
            "feedback": ("POST", f"/v1/memories/{mid}/feedback", {"useful": True}),
            "invalidate": ("POST", f"/v1/memories/{mid}/invalidate", {"reason": "test"}),
            "promote": ("POST", f"/v1/memories/{mid}/promote", None),
        }
        method, path, body = routes[op]
        if op == "delete" and rng.random() < 0.8:
            method, path = "GET", f"/v1/memories/{mid}"  # keep most memories around
        res = client.request(method, path, json=body, headers=headers)
        owner = world.owner.get(mid)
        if owner is not None and not scope.covers(*owner) and res.status_code != 404:
            world.violations.append(f"{who} {op}: {res.status_code} (not 404) on {owner}'s memory")
        _by_id_unchanged(world, who, scope, op, mid, before, res.status_code < 300)
        if method == "DELETE" and res.status_code == 204:
            world.owner.pop(mid, None)
    assert res.status_code < 500, (op, res.status_code, res.text[:300])
    if res.status_code in (403, 404, 422):
        world.refused[res.status_code] += 1
    if res.status_code < 300 and res.content and res.headers.get("content-type", "").startswith("application/"):
        payload = [json.loads(line) for line in res.text.splitlines()] if op == "export" else res.json()
        world.check_payload(who, scope, op, payload)


# MCP -------------------------------------------------------------------------------------------------


def _mcp_phase(world: World, rng: random.Random, n: int) -> None:
    from mcp import Client

    from reverie.mcp_server import Defaults, build_server, parse_tools

    every = parse_tools("all")  # the operator's tools too: each one must keep to the lock

    locks = {"mcp alice": ("alice", None), "mcp alice/a1": ("alice", "a1"), "mcp bob/a2": ("bob", "a2")}

    async def main() -> None:
        clients = {}

        def server(user: str, agent: str | None = None) -> Any:
            return build_server(world.mem, Defaults(user_id=user, agent_id=agent, session_id="s1"), tools=every)

        async with (
            Client(server("alice")) as c1,
            Client(server("alice", "a1")) as c2,
            Client(server("bob", "a2")) as c3,
        ):
            clients = {"mcp alice": c1, "mcp alice/a1": c2, "mcp bob/a2": c3}
            for _ in range(n):
                who = rng.choice(sorted(clients))
                user, agent = locks[who]
                scope = Scope(frozenset({user}), frozenset({agent}) if agent else None)
                await _mcp_op(world, rng, clients[who], who, scope)

    anyio.run(main)


async def _mcp_op(world: World, rng: random.Random, client: Any, who: str, scope: Scope) -> None:
    op = rng.choice(
        [
            "recall",
            "context",
            "remember",
            "observe",
            "get",
            "update",
            "forget",
            "pin",
            "history",
            "feedback",
            "stats",
            "hot",
            "working",
            "memory",
            "recall",
            "context",
            "get",
        ]
    )
    world.ops[f"mcp {op}"] += 1
    args = {k: v for k, v in _pick_scope_args(rng, scope).items() if v is not None and rng.random() < 0.5}
    query = f"{rng.choice(WORDS)} note {rng.randrange(8)} and the {rng.choice(WORDS)}"
    mid = _targets(world, rng)
    before = world.mem.store.get([mid]).get(mid)
    payload: Any = None
    if op in ("hot", "working", "memory"):
        user = args.get("user_id", next(iter(scope.users)))
        uri = {
            "hot": f"reverie://users/{user}/hot",
            "working": f"reverie://users/{user}/sessions/s1/working",
            "memory": f"reverie://memories/{mid}",
        }[op]
        try:
            res = await client.read_resource(uri)
            payload = json.loads(res.contents[0].text)
            ok = True
        except Exception as exc:  # an MCP error answer is a refusal
            assert any(t in str(exc) for t in ("NotFoundError", "PermissionDeniedError", "InvalidInputError")), exc
            world.refused["mcp error"] += 1
            ok = False
        if op == "memory":
            _by_id_unchanged(world, who, scope, op, mid, before, ok)
    else:
        call: dict[str, Any] = {
            "recall": {"query": query, **args},
            "context": {"query": query, **args},
            "remember": {"content": f"{tag(*_landing(scope, args))} told by {who} #{rng.randrange(10**6)}", **args},
            "observe": {
                "message": f"{tag(*_landing(scope, args))} I booked the {rng.choice(WORDS)} #{rng.randrange(10**6)}",
                **args,
            },
            "get": {"memory_id": mid},
            "update": {"memory_id": mid, "reason": "edited"},
            "forget": {"memory_id": mid},
            "pin": {"memory_id": mid},
            "history": {"memory_id": mid},
            "feedback": {"memory_id": mid, "useful": False},
            "stats": {k: v for k, v in args.items() if k == "user_id"},
        }[op]
        if op == "forget" and rng.random() < 0.8:
            op, call = "get", {"memory_id": mid}
        res = await client.call_tool(op, call)
        text = res.content[0].text if res.content else ""
        if res.is_error:
            assert any(t in text for t in ("NotFoundError", "PermissionDeniedError", "InvalidInputError")), text
            world.refused["mcp error"] += 1
        payload = res.structured_content if not res.is_error else None
        if op in ("get", "update", "forget", "pin", "history", "feedback"):
            owner = world.owner.get(mid)
            if owner is not None and not scope.covers(*owner) and (not res.is_error or "NotFoundError" not in text):
                world.violations.append(f"{who} {op}: not NotFoundError on {owner}'s memory")
            _by_id_unchanged(world, who, scope, op, mid, before, not res.is_error)
            if op == "forget" and not res.is_error:
                world.owner.pop(mid, None)
        if op in ("remember", "observe") and payload is not None:
            ids = [payload["id"]] if op == "remember" else [r["id"] for r in payload["results"]]
            world.learn([i for i in ids if i])
            for i in ids:
                if i and not scope.covers(*world.owner[i]):
                    world.violations.append(f"{who} {op}: wrote into {world.owner[i]}")
            return
    if payload is not None:
        world.check_payload(who, scope, op, payload)


def test_randomized_multi_tenant_run_leaks_nothing(make_memory: Any) -> None:
    mem: Memory = make_memory()
    world = World(mem)
    world.learn(_seed(mem))
    rng = random.Random(16)
    _rest_phase(world, rng, REST_OPS)
    _mcp_phase(world, rng, MCP_OPS)
    total = sum(world.ops.values())
    assert total == REST_OPS + MCP_OPS >= 10_000
    # every memory's words are its own scope's: its user's, and its agent's or written at user level
    from reverie.store.base import MemoryFilter

    for batch in mem.store.scan(MemoryFilter.everything()):
        for rec in batch:
            for user, agent in TAG.findall(rec.content):
                if user != rec.user_id or agent not in (rec.agent_id or "none", "none"):
                    world.violations.append(f"{rec.user_id}/{rec.agent_id} memory holds words of {user}/{agent}")
    assert not world.violations, "\n".join(world.violations[:50])
    # every memory in the store is where its writer was allowed to write (nothing moved scope)
    print(
        f"multi-tenant: {total} operations ({REST_OPS} REST, {MCP_OPS} MCP), refused {dict(world.refused)}, "
        f"0 cross-scope reads or writes; foreign ids named in answers: {len(world.id_mentions)} "
        f"{world.id_mentions[:10]}"
    )
    assert world.refused[404] > 100 and world.refused[403] > 100 and world.refused["mcp error"] > 100
    assert not world.id_mentions  # not even an id of a memory outside the scope is named


def test_agent_narrowing_holds_in_context_working_memory_and_hot_tier(make_memory: Any) -> None:
    """The reported leak: ``context(agent_id=X)`` showed other agents' working memory of the same session."""
    mem: Memory = make_memory()
    _seed(mem)
    for agent in ("a1", "a2"):
        block = mem.context(f"the garden {tag('alice', agent)}", user_id="alice", agent_id=agent, session_id="s1")
        sections = Counter(i.section for i in block.items)
        assert sections["working"] > 0 and sections["hot"] > 0, sections
        tags = set(TAG.findall(block.text))
        assert tags == {("alice", agent)}, tags
        ids = [i.id for i in block.items]
        assert all(r.agent_id == agent for r in mem.store.get(ids).values())
        assert all(r.agent_id == agent for r in mem.working_memory("s1", user_id="alice", agent_id=agent))
        assert all(r.agent_id == agent for r in mem.hot_tier(user_id="alice", agent_id=agent))
    assert {r.agent_id for r in mem.working_memory("s1", user_id="alice")} >= {"a1", "a2"}


@pytest.mark.parametrize("agent", ["a1", "a2"])
def test_an_agent_key_cannot_end_a_shared_session_or_dream(make_memory: Any, agent: str) -> None:
    from reverie.auth import Credential
    from reverie.errors import PermissionDeniedError
    from reverie.scoped import ScopedMemory

    mem: Memory = make_memory()
    _seed(mem)
    scoped = ScopedMemory(mem, Credential.scoped("alice", agent))
    with pytest.raises(PermissionDeniedError):
        scoped.end_session("s1")
    with pytest.raises(PermissionDeniedError):
        scoped.dream()
    assert len(mem.working_memory("s1", user_id="alice")) > 0  # nothing was cleared
    mem.add(f"{tag('alice', agent)} alone", user_id="alice", agent_id=agent, session_id="own")
    assert scoped.end_session("own")["working_cleared"] == 1


def test_a_history_never_names_a_memory_of_another_scope(make_memory: Any) -> None:
    from reverie.auth import Credential
    from reverie.model import HistoryEvent
    from reverie.scoped import FOREIGN_ID, ScopedMemory

    mem: Memory = make_memory()
    mine = mem.add("bob's agent a2 wrote this", user_id="bob", agent_id="a2", infer=False).id
    theirs = mem.add("bob's agent a1 wrote that", user_id="bob", agent_id="a1", infer=False).id
    also_mine = mem.add("another of a2", user_id="bob", agent_id="a2", infer=False).id
    assert mine and theirs and also_mine
    mem.store.add_history(
        [
            HistoryEvent(
                mine,
                "superseded",
                mem.now(),
                reason=f"superseded by {theirs}",
                actor="write",
                data={"by": theirs, "near": [also_mine, theirs]},
            )
        ]
    )
    scoped = ScopedMemory(mem, Credential.scoped("bob", "a2"))
    event = scoped.history(mine)[-1]
    assert event.reason == f"superseded by {FOREIGN_ID}"
    # its own scope's ids stay; a foreign one is dropped from a list, and reads FOREIGN_ID as a value
    assert event.data == {"by": FOREIGN_ID, "near": [also_mine]}
    assert theirs in mem.history(mine)[-1].reason  # the library itself (and an admin) sees everything
    assert ScopedMemory(mem, Credential.scoped("bob")).history(mine)[-1].data["by"] == theirs


def test_a_record_view_never_names_a_successor_of_another_scope(make_memory: Any) -> None:
    """A store written before successors were kept within one scope may hold a ``superseded_by`` that names
    another agent's memory: a scoped caller's record views (by id, list, search, working memory, hot tier)
    leave it empty; the library itself and an admin see it."""
    from reverie.auth import Credential
    from reverie.scoped import ScopedMemory

    mem: Memory = make_memory()
    mine = mem.add("The dentist appointment is on Tuesday", user_id="bob", agent_id="a2", session_id="s", infer=False)
    theirs = mem.add("The dentist appointment moved to Friday", user_id="bob", agent_id="a1", infer=False).id
    own = mem.add("The car service is on Monday", user_id="bob", agent_id="a2", infer=False).id
    newer = mem.add("The car service moved to Wednesday", user_id="bob", agent_id="a2", infer=False).id
    assert mine.id and theirs and own and newer
    mem.store.update_many(
        [
            (mine.id, {"status": "superseded", "superseded_by": theirs}),
            (own, {"status": "superseded", "superseded_by": newer}),
        ]
    )
    narrowed = ScopedMemory(mem, Credential.scoped("bob", "a2"))
    views = {
        "peek": narrowed.peek(mine.id),
        "get": narrowed.get(mine.id),
        "pin": narrowed.pin(mine.id),
        "list": next(r for r in narrowed.list(filters={"status": ["superseded"]}) if r.id == mine.id),
        "search": next(h.memory for h in narrowed.search("dentist appointment", deep=True) if h.memory.id == mine.id),
    }
    for name, rec in views.items():
        assert rec.superseded_by is None and rec.status.value == "superseded", name
    assert narrowed.get(own).superseded_by == newer  # a successor in its own scope stays named
    assert all(r.superseded_by in (None, newer) for r in narrowed.working_memory("s") + narrowed.hot_tier())
    assert mem.get(mine.id).superseded_by == theirs  # the library itself sees everything
    assert ScopedMemory(mem, Credential.scoped("bob")).get(mine.id).superseded_by == theirs
    assert mem.store.get([mine.id])[mine.id].superseded_by == theirs  # nothing was written
