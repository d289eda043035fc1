"""The shared validation: scope from arguments only, lists never single strings, ids that make a
verbatim import idempotent, datetimes that cannot overflow, metadata depth walked without recursion."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta, timezone

import pytest

from reverie import InvalidInputError, Memory
from reverie.io import stable_id
from reverie.results import Action
from reverie.validation import DEFAULT_METADATA_DEPTH, clean_metadata, clean_when, items_list

from .corpus import deep_dict, deep_list


def test_an_item_cannot_move_out_of_the_calls_scope(mem: Memory) -> None:
    with pytest.raises(InvalidInputError, match="scoped to user_id='alice'"):
        mem.add({"content": "x", "user_id": "bob"}, user_id="alice")
    with pytest.raises(InvalidInputError, match="agent_id"):
        mem.add_many([{"content": "x", "agent_id": "other"}], user_id="alice", agent_id="mine")
    assert mem.stats()["total"] == 0
    same = mem.add({"content": "same scope is fine", "user_id": "alice"}, user_id="alice", infer=False)
    assert mem.get(same.id or "").user_id == "alice"
    free = mem.add_many([{"content": "no call scope: the item's own", "user_id": "bob"}], infer=False)
    assert mem.get(free[0].id or "").user_id == "bob"


@pytest.mark.parametrize("items", ["abc", b"abc", {"content": "x"}, 5, None])
def test_add_many_needs_a_list(mem: Memory, items: object) -> None:
    with pytest.raises(InvalidInputError):
        mem.add_many(items, user_id="alice")  # type: ignore[arg-type]
    assert mem.stats()["total"] == 0
    assert items_list(("a", "b")) == ["a", "b"] and items_list(x for x in "ab") == ["a", "b"]


def test_item_ids_make_verbatim_adds_idempotent(mem: Memory) -> None:
    items = [{"content": f"line {i}", "id": stable_id("test", i)} for i in range(5)]
    first = mem.add_many(items, user_id="alice", infer=False)
    assert [r.action for r in first] == [Action.CREATE] * 5 and [r.id for r in first] == [i["id"] for i in items]
    again = mem.add_many([*items, items[0]], user_id="alice", infer=False)
    assert [r.action for r in again] == [Action.SKIP] * 6
    assert mem.stats()["total"] == 5
    with pytest.raises(InvalidInputError, match="infer=False"):
        mem.add_many(items, user_id="alice", infer=True)
    assert stable_id("a", 1) == stable_id("a", 1) != stable_id("a", 2)
    when = datetime(2024, 5, 1, tzinfo=UTC)
    assert stable_id("a", when=when) < stable_id("a", when=when + timedelta(days=1))  # sorts by time
    assert stable_id("a", when=datetime(1, 1, 1, tzinfo=timezone(timedelta(hours=14))))  # no overflow


@pytest.mark.parametrize(
    "when",
    [
        "0001-01-01T00:00:00+14:00",
        "9999-12-31T23:59:59-14:00",
        datetime(1, 1, 1, tzinfo=timezone(timedelta(hours=14))),
        "0999-12-31T00:00:00+00:00",
        "9000-01-01T00:00:00+00:00",
        "2024-01-01T00:00:00",
        datetime(2024, 1, 1),
    ],
)
def test_datetimes_outside_the_range_are_refused(when: object) -> None:
    with pytest.raises(InvalidInputError):
        clean_when(when)


def test_metadata_depth_is_limited_without_recursion() -> None:
    assert clean_metadata(deep_dict(DEFAULT_METADATA_DEPTH), max_bytes=10_000) is not None
    for deep in (deep_dict(DEFAULT_METADATA_DEPTH + 1), {"l": deep_list(DEFAULT_METADATA_DEPTH)}, deep_dict(100_000)):
        with pytest.raises(InvalidInputError, match="nested deeper"):
            clean_metadata(deep, max_bytes=10_000)
    assert clean_metadata({"t": (1, 2)}, max_bytes=100) == {"t": [1, 2]}


def test_metadata_depth_is_a_setting(make_memory: Callable[..., Memory]) -> None:
    mem = make_memory(limits={"max_metadata_depth": 3})
    mem.add("ok", metadata={"a": {"b": {"c": 1}}}, infer=False)  # three levels of objects
    with pytest.raises(InvalidInputError, match=r"limits\.max_metadata_depth"):
        mem.add("too deep", metadata={"a": {"b": {"c": {"d": 1}}}}, infer=False)
