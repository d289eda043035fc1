"""The Python API calls the red team found answered with a TypeError or ValueError (or taken as true) get a
reverie error that says what is wrong, and change nothing."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from reverie import ContentTooLargeError, InvalidInputError, Memory
from reverie.auth import Credential
from reverie.scoped import ScopedMemory


@pytest.fixture
def seeded(mem: Memory) -> tuple[Memory, str]:
    return mem, mem.add("Alice keeps her bike in the hallway", user_id="alice", infer=False).id


def cases(memory: Memory, mid: str, tmp: Path) -> dict[str, tuple[Callable[[], Any], str]]:
    """name -> (the call, a phrase its message must hold)"""
    mem: Any = memory  # the calls are wrong on purpose: the type checker would refuse them
    return {
        "add(evil=1)": (lambda: mem.add("a fact", user_id="alice", evil=1), "add(): no argument 'evil'"),
        "update(user_id=…)": (lambda: mem.update(mid, "new text", user_id="bob"), "update(): no argument 'user_id'"),
        "dream(bogus=1)": (lambda: mem.dream(bogus=1), "dream(): no argument 'bogus'. It takes: steps"),
        "add_many(batch_size=0)": (lambda: mem.add_many(["a b"], user_id="alice", batch_size=0), "batch_size"),
        "add_many(batch_size=-1)": (lambda: mem.add_many(["a b"], user_id="alice", batch_size=-1), "batch_size"),
        'add_many(batch_size="2")': (lambda: mem.add_many(["a b"], user_id="alice", batch_size="2"), "batch_size"),
        "list(order_by=[…])": (lambda: mem.list(user_id="alice", order_by=["created_at"]), "order_by must be one of"),
        "list(offset=10**30)": (lambda: mem.list(user_id="alice", offset=10**30), "offset must be an integer"),
        "export_markdown(NUL)": (lambda: mem.export_markdown(str(tmp / "a\x00b")), "NUL"),
        "backup(5)": (lambda: mem.backup(5), "dest must be a path"),
        'add(infer="no")': (lambda: mem.add("the sky is green", user_id="alice", infer="no"), "infer must be true"),
        'list(descending="no")': (lambda: mem.list(user_id="alice", descending="no"), "descending must be true"),
        "missing argument": (lambda: mem.get(), "get(): missing a required argument: 'memory_id'"),
        "surplus argument": (lambda: mem.pin(mid, True), "pin(): too many positional arguments"),
    }


def test_each_call_gets_a_reverie_error_and_changes_nothing(seeded: tuple[Memory, str], tmp_path: Path) -> None:
    mem, mid = seeded
    out = tmp_path / "out"
    out.mkdir()
    before = [(r.id, r.version, r.content) for r in mem.export()]
    for name, (call, phrase) in cases(mem, mid, out).items():
        with pytest.raises(InvalidInputError) as err:
            call()
        assert phrase in str(err.value), (name, str(err.value))
    assert [(r.id, r.version, r.content) for r in mem.export()] == before
    assert not list(out.iterdir())  # nothing was exported or backed up


def test_a_long_query_is_refused_naming_the_query_limit(mem: Memory) -> None:
    limit = mem.settings.limits.max_query_chars
    for query in ("q" * 100_000, "q" * (limit + 1), ("ü" * (limit + 1)).encode()):
        with pytest.raises(ContentTooLargeError) as err:
            mem.search(query, user_id="alice")
        assert f"the maximum is {limit} (limits.max_query_chars)" in str(err.value)
        assert "max_content_bytes" not in str(err.value)
    mem.search("q" * limit, user_id="alice")  # the limit itself is accepted


def test_scoped_memory_names_unknown_arguments_too(mem: Memory) -> None:
    scoped: Any = ScopedMemory(mem, Credential.scoped("alice"))
    with pytest.raises(InvalidInputError, match=r"add\(\): no argument 'evil'"):
        scoped.add("a fact", evil=1)
    with pytest.raises(InvalidInputError, match=r"search\(\): no argument 'bogus'"):
        scoped.search("a fact", bogus=1)  # passed on to Memory.search, which names it
    assert mem.count(user_id="alice") == 0
