"""The first hour of a new user: short ids and prefixes, and a search without a user (both backends).

Each test here failed on the behaviour a new user met before: ``id[:8]`` of time-ordered ids that
written within a minute all share, no prefix lookup, and a silent empty answer for a search
without a ``user_id`` when every memory belongs to a user.
"""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from fastapi.testclient import TestClient

from reverie import Memory
from reverie.errors import AmbiguousIdError, InvalidInputError, NotFoundError
from reverie.http import create_app
from reverie.ids import short_ids

FACTS = [
    "Maya prefers window seats on long flights",
    "Maya is allergic to penicillin",
    "Tom collects vintage cameras",
    "Tom's sister lives in Porto",
]


def _fill(mem: Memory) -> list[str]:
    maya = mem.add_many(FACTS[:2], user_id="maya", infer=False)
    tom = mem.add_many(FACTS[2:], user_id="tom", infer=False)
    return [r.id for r in (*maya, *tom) if r.id]


def test_ids_written_together_share_eight_characters_and_short_forms_tell_them_apart(mem: Memory) -> None:
    ids = _fill(mem)
    assert len({i[:8] for i in ids}) == 1  # the old display: one "id" for four memories
    shorts = mem.short_ids(ids)
    assert len(set(shorts.values())) == len(ids)
    for full, short in shorts.items():
        assert full.startswith(short) and len(short) < len(full)
        assert mem.resolve_id(short) == full
        assert mem.get(short).id == full  # every id-taking method accepts the short form
        assert mem.history(short)[0].memory_id == full
    assert short_ids([]) == {} and short_ids(["abc"]) == {"abc": "abc"}


def test_an_ambiguous_prefix_lists_the_candidates_and_an_unknown_one_is_not_found(mem: Memory) -> None:
    ids = _fill(mem)
    with pytest.raises(AmbiguousIdError) as err:
        mem.get(ids[0][:8])
    message = str(err.value)
    assert "matches several memories" in message and "Type more characters" in message
    assert set(err.value.candidates) <= set(ids) and len(err.value.candidates) >= 2
    assert ids[0] in message and "window seats" in message  # candidates with a snippet of their content
    assert mem.get(ids[0][:8].upper() + ids[0][8:]).id == ids[0]  # typed in capitals
    with pytest.raises(NotFoundError):
        mem.get("ffffffff")
    with pytest.raises(AmbiguousIdError):  # editing through an ambiguous prefix changes nothing
        mem.update(ids[0][:8], "changed")
    assert mem.peek(ids[0]).content == FACTS[0]
    before = mem.peek(ids[0]).access_count
    assert mem.peek(mem.short_ids([ids[0]])[ids[0]]).access_count == before  # peek counts no access


def test_rest_mcp_and_dashboard_accept_a_unique_prefix(mem: Memory) -> None:
    from mcp import Client

    from reverie.mcp_server import build_server, parse_tools

    ids = _fill(mem)
    short = mem.short_ids(ids)[ids[2]]
    with TestClient(create_app(mem, dashboard=True)) as client:
        assert client.get(f"/v1/memories/{short}").json()["id"] == ids[2]
        assert client.post(f"/v1/memories/{short}/pin").json()["pinned"] is True
        assert client.get(f"/v1/memories/{short}/relations").status_code == 200
        page = client.get(f"/memories/{short}")
        assert page.status_code == 200 and FACTS[2] in page.text
        res = client.get(f"/v1/memories/{ids[0][:8]}")
        assert res.status_code == 409 and "matches several memories" in res.json()["detail"]

    async def body() -> dict[str, Any]:
        async with Client(build_server(mem, tools=parse_tools("all"))) as client:  # get is an operator tool
            res = await client.call_tool("get", {"memory_id": short})
            assert not res.is_error, res.content
            return dict(res.structured_content or {})

    assert anyio.run(body)["id"] == ids[2]


def test_a_search_without_a_user_names_the_users_instead_of_answering_nothing(mem: Memory) -> None:
    assert mem.search("seats") == [] and mem.list() == []  # an empty store: nothing to name
    _fill(mem)
    for call in (lambda: mem.search("seats"), lambda: mem.list(), lambda: mem.context("seats")):
        with pytest.raises(InvalidInputError) as err:
            call()
        message = str(err.value)
        assert "maya (2)" in message and "tom (2)" in message and "user_id" in message
    hits = mem.search("window seats", all_users=True, k=3)
    assert hits[0].memory.content == FACTS[0]
    assert {h.memory.user_id for h in mem.search("vintage cameras and window seats", all_users=True)} == {"maya", "tom"}
    assert len(mem.list(all_users=True)) == 4
    assert mem.users() == [("maya", 2), ("tom", 2)]
    with pytest.raises(InvalidInputError):
        mem.search("seats", user_id="maya", all_users=True)
    mem.add("A note without a user", infer=False)  # now the anonymous partition exists: searched as asked
    assert [h.memory.content for h in mem.search("note without a user")] == ["A note without a user"]


def test_dashboard_all_users_search_finds_every_users_memories(mem: Memory) -> None:
    _fill(mem)
    with TestClient(create_app(mem, dashboard=True)) as client:
        page = client.get("/memories", params={"q": "vintage cameras"})
        assert page.status_code == 200 and FACTS[2] in page.text
        res = client.post("/v1/search", json={"query": "cameras"})
        assert res.status_code == 409 and "tom (2)" in res.json()["detail"]


CHAT = [
    {"role": "system", "content": "You are a travel assistant."},
    {"role": "user", "content": "I went hiking at Mount Rainier last weekend with my sister"},
    {"role": "assistant", "content": "That sounds lovely! How was the weather?"},
    {"role": "user", "content": [{"type": "text", "text": "My sister Lena lives in Seattle near the lake"}]},
]


def test_add_takes_a_list_of_chat_messages_and_stores_them_through_the_observer(mem: Memory) -> None:
    res = mem.add(CHAT, user_id="maya", session_id="s1")
    assert res.id is not None and res.ids and "4 message(s), 3 observed" in res.reason
    stored = mem.store.get(list(res.ids))
    texts = " ".join(r.content for r in stored.values())
    assert "Mount Rainier" in texts and "Lena" in texts and "travel assistant" not in texts
    assert all(r.write_source == "observer" for r in stored.values())
    assert mem.buffered(user_id="maya", session_id="s1") == []  # nothing left waiting
    assert any("Lena" in h.memory.content for h in mem.search("where does Lena live", user_id="maya"))
    verbatim = mem.add(CHAT[1:2], user_id="tom", infer=False)
    assert verbatim.action.value == "CREATE"
    assert mem.peek(verbatim.id).metadata["role"] == "user"
    one = mem.add({"role": "user", "content": "I keep my bike in the hallway"}, user_id="ana")
    assert one.id is not None
    for bad in ([{"role": "robot", "content": "x"}], [{"role": "user"}], [{"role": "user", "content": 5}]):
        with pytest.raises(InvalidInputError):
            mem.add(bad, user_id="maya")


def test_a_buffered_turn_says_so_is_visible_and_can_be_flushed(mem: Memory) -> None:
    res = mem.observe("My sister Lena lives in Seattle near the lake", user_id="u", session_id="s")
    assert [r.action.value for r in res] == ["BUFFERED"]
    assert "not stored yet" in res[0].reason and "flush()" in res[0].reason
    waiting = mem.buffered(user_id="u", session_id="s")
    assert len(waiting) == 1 and "Lena lives in Seattle" in waiting[0]["text"] and waiting[0]["role"] == "user"
    assert mem.search("where does Lena live", user_id="u") == []  # not recallable while it waits ...
    flushed = mem.flush(user_id="u", session_id="s")
    assert flushed and flushed[0].id is not None
    assert mem.buffered(user_id="u", session_id="s") == []
    assert "Lena" in mem.search("where does Lena live", user_id="u")[0].memory.content  # ... recallable now
    assert mem.flush(user_id="u", session_id="s") == []
    now = mem.observe("We saw three deer on the trail near the summit", user_id="u", session_id="s", flush=True)
    assert now and now[0].id is not None and "deer" in mem.peek(now[0].id).content
