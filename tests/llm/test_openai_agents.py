"""The OpenAI Agents SDK recipe: reverie's memory tools in a real ``agents`` run, the model being the
loopback OpenAI-compatible server (scripted tool calls), on both storage backends."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from reverie import AsyncMemory, Memory

agents = pytest.importorskip("agents")
openai = pytest.importorskip("openai")

from reverie.integrations.openai_agents import memory_tools  # noqa: E402


def _call(name: str, args: dict[str, Any], n: int) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": f"call_{n}", "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}
        ],
    }


def _model(server: Any) -> Any:
    client = openai.AsyncOpenAI(base_url=server.url, api_key="test-key", max_retries=0)
    return agents.OpenAIChatCompletionsModel(model="test-model", openai_client=client), client


def test_an_agent_remembers_and_recalls_through_the_tools(mem: Memory, chat_server: Any) -> None:
    agents.set_tracing_disabled(True)
    turns = iter(
        [
            _call("remember", {"fact": "Maya is allergic to penicillin"}, 1),
            "Noted.",
            _call("recall", {"query": "what is Maya allergic to"}, 2),
            "You are allergic to penicillin.",
        ]
    )
    seen: list[dict[str, Any]] = []

    def script(req: dict[str, Any]) -> tuple[int, Any, float]:
        seen.append(req)
        return 200, next(turns), 0.0

    chat_server.script = script

    async def main() -> tuple[str, str]:
        model, client = _model(chat_server)
        agent = agents.Agent(
            name="assistant", instructions="Use your memory.", model=model, tools=memory_tools(AsyncMemory(memory=mem))
        )
        first = await agents.Runner.run(agent, "I'm allergic to penicillin", context={"user_id": "maya"})
        second = await agents.Runner.run(agent, "What am I allergic to?", context={"user_id": "maya"})
        await client.close()
        return str(first.final_output), str(second.final_output)

    first, second = asyncio.run(main())
    assert first == "Noted." and second == "You are allergic to penicillin."
    stored = mem.list(user_id="maya")
    assert [r.content for r in stored] == ["Maya is allergic to penicillin"]
    # the tool's answer that went back to the model holds the recalled memory and its id
    tool_answers = [m["content"] for r in seen for m in r["messages"] if m.get("role") == "tool"]
    assert any("Maya is allergic to penicillin" in a and stored[0].id in a for a in tool_answers)
    tools = {t["function"]["name"]: t["function"] for t in seen[0]["tools"]}
    assert set(tools) == {"remember", "recall", "mark_outdated"}
    assert tools["remember"]["parameters"]["required"] == ["fact"] and tools["recall"]["description"]


def test_tools_keep_users_apart_and_report_errors_to_the_model(mem: Memory) -> None:
    from agents.tool_context import ToolContext

    remember, recall, outdated = memory_tools(mem)

    def ctx(user: str | None, name: str, args: dict[str, Any]) -> Any:
        return ToolContext(
            context={"user_id": user} if user else {}, tool_name=name, tool_call_id="c", tool_arguments=json.dumps(args)
        )

    async def invoke(tool: Any, user: str | None, **args: Any) -> str:
        return str(await tool.on_invoke_tool(ctx(user, tool.name, args), json.dumps(args)))

    async def main() -> None:
        stored = await invoke(remember, "maya", fact="Maya's cat is called Pixel")
        assert stored.startswith("create:")
        assert "Pixel" in await invoke(recall, "maya", query="cat's name")
        assert await invoke(recall, "tom", query="cat's name") == "nothing remembered about that"
        assert "no user" in await invoke(recall, None, query="cat")
        assert "empty" in await invoke(remember, "maya", fact="   ")
        mid = mem.list(user_id="maya")[0].id
        assert "no memory with id" in await invoke(outdated, "tom", memory_id=mid, reason="x")
        assert "marked outdated" in await invoke(outdated, "maya", memory_id=mid[:16], reason="the cat was renamed")
        assert await invoke(recall, "maya", query="cat's name") == "nothing remembered about that"

    asyncio.run(main())
