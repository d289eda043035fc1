"""``ReverieStore`` against the real ``langgraph`` package, on both storage backends.

LangGraph ships no store contract tests in its package, so the same operations run on LangGraph's
own ``InMemoryStore`` (the reference) and on ``ReverieStore``, and must answer alike; then what only
reverie does: namespaces mapped onto user scopes, semantic search, the async API, and a compiled
graph whose node reads and writes memories through the store LangGraph hands it.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from reverie import AsyncMemory, Memory

pytest.importorskip("langgraph")

from langgraph.store.base import BaseStore, Item, SearchItem
from langgraph.store.memory import InMemoryStore

from reverie.integrations.langgraph import ReverieStore

ITEMS: list[tuple[tuple[str, ...], str, dict[str, Any]]] = [
    (
        ("memories", "maya"),
        "seat",
        {"content": "Maya prefers window seats on long flights", "kind": "preference", "weight": 3},
    ),
    (("memories", "maya"), "allergy", {"content": "Maya is allergic to penicillin", "kind": "health", "weight": 5}),
    (
        ("memories", "maya", "travel"),
        "flight",
        {"content": "Maya booked TP 571 to Lisbon", "kind": "plan", "weight": 1},
    ),
    (("memories", "tom"), "cat", {"content": "Tom's cat is called Pixel", "kind": "fact", "weight": 2}),
    (("profiles", "tom"), "city", {"text": "Tom lives in Porto", "kind": "fact", "nested": {"lang": "pt"}}),
]


def _fill(store: BaseStore) -> None:
    for namespace, key, value in ITEMS:
        store.put(namespace, key, value)


def _shape(result: Any) -> Any:
    """Comparable form of a store answer (timestamps and scores differ by nature)."""
    if isinstance(result, list):
        return [_shape(r) for r in result]
    if isinstance(result, Item | SearchItem):
        return (result.namespace, result.key, result.value)
    return result


@pytest.fixture
def store(mem: Memory) -> ReverieStore:
    return ReverieStore(mem)


def test_answers_like_langgraphs_in_memory_store(store: ReverieStore) -> None:
    reference = InMemoryStore()
    calls: list[tuple[str, tuple[Any, ...], dict[str, Any]]] = [
        ("get", (("memories", "maya"), "seat"), {}),
        ("get", (("memories", "maya"), "nope"), {}),
        ("get", (("memories", "tom"), "seat"), {}),
        ("search", (("memories", "maya"),), {}),
        ("search", (("memories",),), {"limit": 2}),
        ("search", (("memories",),), {"limit": 2, "offset": 2}),
        ("search", ((),), {}),
        ("search", (("memories",),), {"filter": {"kind": "fact"}}),
        ("search", (("memories",),), {"filter": {"weight": {"$gte": 3}}}),
        ("search", ((),), {"filter": {"nested": {"lang": "pt"}}}),
        ("search", (("memories",),), {"filter": {"kind": {"$ne": "fact"}, "weight": {"$lt": 5}}}),
        ("list_namespaces", (), {}),
        ("list_namespaces", (), {"prefix": ("memories",)}),
        ("list_namespaces", (), {"suffix": ("tom",)}),
        ("list_namespaces", (), {"prefix": ("memories", "*", "travel")}),
        ("list_namespaces", (), {"max_depth": 1}),
        ("list_namespaces", (), {"limit": 2, "offset": 1}),
    ]
    _fill(reference)
    _fill(store)
    for name, args, kwargs in calls:
        want = getattr(reference, name)(*args, **kwargs)
        got = getattr(store, name)(*args, **kwargs)
        if name == "search" and "limit" not in kwargs and "offset" not in kwargs:  # same set, any order
            order = lambda rows: sorted(rows, key=lambda r: (r[0], r[1]))  # noqa: E731
            assert order(_shape(got)) == order(_shape(want)), (name, args, kwargs)
        else:
            assert _shape(got) == _shape(want), (name, args, kwargs)
    # put replaces, delete removes, a second delete is harmless: on both
    for s in (reference, store):
        s.put(("memories", "maya"), "seat", {"content": "Maya now prefers aisle seats", "kind": "preference"})
        s.delete(("memories", "tom"), "cat")
        s.delete(("memories", "tom"), "cat")
    assert _shape(store.get(("memories", "maya"), "seat")) == _shape(reference.get(("memories", "maya"), "seat"))
    assert store.get(("memories", "tom"), "cat") is None
    # the in-memory store keeps listing a namespace whose last item was deleted (an artifact of its dict;
    # LangGraph's PostgreSQL store lists only namespaces that hold items, as reverie does)
    assert store.list_namespaces() == [ns for ns in reference.list_namespaces() if reference.search(ns)]


def test_namespaces_map_onto_user_scopes(store: ReverieStore, mem: Memory) -> None:
    _fill(store)
    assert dict(mem.users()) == {"maya": 3, "tom": 2}
    item = store.get(("memories", "maya"), "seat")
    assert item is not None and isinstance(item.created_at, type(item.updated_at))
    rec = mem.list(user_id="maya", filters={"metadata": {"langgraph_key": "seat"}})[0]
    assert rec.content == "Maya prefers window seats on long flights" and rec.pinned  # the value's content field
    assert rec.access_count == 1  # the get above was a recall
    # the value's text field and index= paths decide what is embedded
    tom = mem.list(user_id="tom", filters={"metadata": {"langgraph_key": "city"}})[0]
    assert tom.content == "Tom lives in Porto"
    store.put(("memories", "ana"), "pets", {"pets": [{"name": "Rex"}, {"name": "Mia"}], "x": 1}, index=["pets[*].name"])
    assert mem.list(user_id="ana")[0].content == "Rex\nMia"
    fixed = ReverieStore(mem, user_id="zoe")
    fixed.put(("notes",), "one", {"content": "Zoe likes jazz"})
    assert dict(mem.users())["zoe"] == 1 and fixed.get(("notes",), "one") is not None


def test_semantic_search_ranks_by_meaning_within_the_namespace(store: ReverieStore) -> None:
    _fill(store)
    hits = store.search(("memories", "maya"), query="what is Maya allergic to", limit=2)
    assert hits[0].key == "allergy" and hits[0].score is not None
    assert all(h.namespace[:2] == ("memories", "maya") for h in hits)
    everyone = store.search(("memories",), query="Pixel the cat", limit=3)
    assert everyone[0].key == "cat" and everyone[0].namespace == ("memories", "tom")
    assert [h.key for h in store.search(("memories",), query="cat", filter={"kind": "fact"})] == ["cat"]
    assert store.search(("profiles",), query="Maya window seats") == [] or all(
        h.namespace[0] == "profiles" for h in store.search(("profiles",), query="Maya window seats")
    )


def test_the_async_api(mem: Memory) -> None:
    async def main() -> None:
        amem = AsyncMemory(memory=mem)
        store = ReverieStore(amem)
        await store.aput(("memories", "maya"), "seat", {"content": "Maya prefers window seats"})
        got = await store.aget(("memories", "maya"), "seat")
        assert got is not None and got.value["content"] == "Maya prefers window seats"
        found, spaces = await asyncio.gather(
            store.asearch(("memories", "maya"), query="seat"), store.alist_namespaces()
        )
        assert found[0].key == "seat" and spaces == [("memories", "maya")]
        store.put(("memories", "maya"), "cat", {"content": "Maya's cat is Pixel"})  # sync and async together
        await store.adelete(("memories", "maya"), "seat")
        assert await store.aget(("memories", "maya"), "seat") is None
        assert [i.key for i in await store.asearch(("memories", "maya"))] == ["cat"]

    asyncio.run(main())


def test_a_graph_node_remembers_through_the_store_langgraph_hands_it(mem: Memory) -> None:
    from typing import TypedDict

    from langgraph.graph import END, START, StateGraph

    class State(TypedDict):
        user: str
        said: str
        recalled: list[str]

    def remember(state: State, *, store: BaseStore) -> dict[str, Any]:
        store.put(("memories", state["user"]), f"m{len(state['said'])}", {"content": state["said"]})
        return {}

    def recall(state: State, *, store: BaseStore) -> dict[str, Any]:
        hits = store.search(("memories", state["user"]), query="where does the sister live", limit=1)
        return {"recalled": [h.value["content"] for h in hits]}

    graph = StateGraph(State)
    graph.add_node("remember", remember)
    graph.add_node("recall", recall)
    graph.add_edge(START, "remember")
    graph.add_edge("remember", "recall")
    graph.add_edge("recall", END)
    app = graph.compile(store=ReverieStore(mem))
    app.invoke({"user": "maya", "said": "Maya's cat is called Pixel", "recalled": []})
    out = app.invoke({"user": "maya", "said": "Maya's sister Lena lives in Hamburg", "recalled": []})
    assert out["recalled"] == ["Maya's sister Lena lives in Hamburg"]
    assert dict(mem.users()) == {"maya": 2}


def test_create_agent_tools_reach_reverie_through_the_store(mem: Memory) -> None:
    """LangChain's current agent (``langchain.agents.create_agent``, which replaced LangGraph's deprecated
    ``create_react_agent``) with the store: its tools reach reverie through ``get_store()``."""
    from langchain.agents import create_agent
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
    from langchain_core.messages import AIMessage, HumanMessage
    from langchain_core.tools import tool
    from langgraph.config import get_store

    class ToolCallingModel(GenericFakeChatModel):
        """langchain-core's scripted chat model, accepting tools (it answers from its script)."""

        def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
            return self

    @tool
    def save_memory(text: str) -> str:
        """Save something about the user for later conversations."""
        get_store().put(("memories", "maya"), "jazz", {"content": text})
        return "saved"

    @tool
    def search_memory(query: str) -> str:
        """Search what is remembered about the user."""
        return "\n".join(h.value["content"] for h in get_store().search(("memories", "maya"), query=query))

    script = iter(
        [
            AIMessage(
                content="", tool_calls=[{"name": "save_memory", "args": {"text": "Maya loves jazz"}, "id": "c1"}]
            ),
            AIMessage(content="Saved."),
            AIMessage(content="", tool_calls=[{"name": "search_memory", "args": {"query": "music"}, "id": "c2"}]),
            AIMessage(content="You love jazz."),
        ]
    )
    agent = create_agent(ToolCallingModel(messages=script), [save_memory, search_memory], store=ReverieStore(mem))
    agent.invoke({"messages": [HumanMessage("Remember that I love jazz")]})
    out = agent.invoke({"messages": [HumanMessage("What music do I like?")]})
    assert out["messages"][-2].content == "Maya loves jazz"  # the tool's answer, read back from reverie
    assert [r.content for r in mem.list(user_id="maya")] == ["Maya loves jazz"]
