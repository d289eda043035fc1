"""``AsyncMemory``: Memory's methods, awaitable, under real concurrency on both backends."""

from __future__ import annotations

import asyncio
import hashlib
import inspect
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from reverie import AsyncMemory, InvalidInputError, Memory, NotFoundError, SettableClock
from reverie.embed.testing import HashEmbedder
from reverie.results import Action

TASKS = 50
OPS_PER_TASK = 20  # half adds, half searches
USERS = 10


class ThreadRecordingEmbedder(HashEmbedder):
    """The hash embedder, noting the thread of every call (the loop's thread must never embed)."""

    def __init__(self, dim: int) -> None:
        super().__init__(dim)
        self.threads: set[str] = set()

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.threads.add(threading.current_thread().name)
        return super().embed(texts)


def _word(n: int) -> str:
    """A made-up word of its own for every n (facts that share no word stay apart)."""
    digest = hashlib.blake2b(str(n).encode(), digest_size=8).digest()
    return "".join("bcdfghjklmnpqrstvwxz"[b % 20] + "aeiou"[b // 20 % 5] for b in digest[:4]).capitalize()


def _fact(n: int) -> str:
    return " ".join(_word(5 * n + i) for i in range(5)) + "."


def _open(store_target: str, tmp_path: Path, clock: SettableClock, embedder: HashEmbedder) -> AsyncMemory:
    return AsyncMemory(
        store_target, config={"opslog": {"path": str(tmp_path / "ops.jsonl")}}, clock=clock, embedder=embedder
    )


def test_async_memory_has_every_public_method_of_memory() -> None:
    public = {n for n, v in vars(Memory).items() if not n.startswith("_") and callable(v)} - {"close"}
    missing = {n for n in public if not inspect.iscoroutinefunction(getattr(AsyncMemory, n, None))} - {"now"}
    assert not missing, f"AsyncMemory lacks {sorted(missing)}"
    for name in public - {"now"}:
        assert inspect.signature(getattr(AsyncMemory, name)) == inspect.signature(getattr(Memory, name)), name
        assert (getattr(Memory, name).__doc__ or "").split("\n")[0].strip() in getattr(AsyncMemory, name).__doc__


def test_fifty_tasks_adding_and_searching_one_store(store_target: str, tmp_path: Path, clock: SettableClock) -> None:
    embedder = ThreadRecordingEmbedder(64)
    acknowledged: list[tuple[str, str, Any]] = []  # (user, content, result)
    searches: list[int] = []

    async def worker(mem: AsyncMemory, task: int) -> None:
        user = f"user-{task % USERS}"
        for op in range(OPS_PER_TASK):
            if op % 2 == 0:
                content = _fact(task * OPS_PER_TASK + op)
                res = await mem.add(content, user_id=user, session_id=f"s{task}")
                acknowledged.append((user, content, res))
            else:
                hits = await mem.search(_fact(task * OPS_PER_TASK + op - 1), user_id=user, k=5)
                searches.append(len(hits))

    async def main() -> None:
        async with _open(store_target, tmp_path, clock, embedder) as mem:
            await asyncio.gather(*(worker(mem, t) for t in range(TASKS)))
            assert len(acknowledged) == TASKS * OPS_PER_TASK // 2 and len(searches) == TASKS * OPS_PER_TASK // 2
            for user, content, res in acknowledged:  # every acknowledged add is stored and found
                assert res.id is not None and res.action is Action.CREATE, res
                hits = await mem.search(content, user_id=user, k=5)
                assert res.id in {h.memory.id for h in hits}, (content, res)
            users = dict(await mem.users())
            assert sum(users.values()) >= len(acknowledged) and len(users) == USERS

    asyncio.run(main())
    # the event loop's thread never waited for the model: every embedding ran on reverie's threads
    assert threading.main_thread().name not in embedder.threads and "reverie-async_0" in embedder.threads
    assert sum(searches) > 0


def test_same_semantics_and_errors_as_memory(store_target: str, tmp_path: Path, clock: SettableClock) -> None:
    async def main() -> None:
        async with _open(store_target, tmp_path, clock, HashEmbedder(64)) as mem:
            res = await mem.add("Maya prefers window seats on long flights", user_id="maya")
            assert res.action is Action.CREATE
            assert (await mem.get(res.id)).access_count == 1
            short = (await mem.short_ids([res.id]))[res.id]
            assert (await mem.peek(short)).id == res.id
            await mem.pin(res.id)
            assert (await mem.list(user_id="maya"))[0].pinned
            with pytest.raises(InvalidInputError):
                await mem.add("   ", user_id="maya")
            with pytest.raises(InvalidInputError) as err:
                await mem.search("seats")  # a search without a user names the users, as Memory's does
            assert "maya (1)" in str(err.value)
            with pytest.raises(NotFoundError):
                await mem.get("ffffffff")
            chat = await mem.add(
                [{"role": "user", "content": "My sister Lena lives in Seattle near the lake"}],
                user_id="maya",
                session_id="s",
            )
            assert chat.id is not None
            assert (await mem.history(res.id))[0].event == "created"
            report = await mem.dream()
            assert report["steps"]
            block = await mem.context("sister Lena lives in Seattle near the lake", user_id="maya")
            assert "Lena" in str(block)
            await mem.forget(res.id)
            with pytest.raises(NotFoundError):
                await mem.get(res.id)
        with pytest.raises(Exception, match="closed"):
            await mem.search("x", user_id="maya")

    asyncio.run(main())


def test_wrapping_an_open_memory_and_opening_off_the_loop(tmp_path: Path) -> None:
    async def main() -> None:
        mem = await AsyncMemory.open(
            tmp_path / "a.db", embedder=HashEmbedder(64), config={"opslog": {"enabled": False}}
        )
        await mem.add("one fact", user_id="u")
        await mem.close()
        sync = Memory(tmp_path / "a.db", embedder=HashEmbedder(64), config={"opslog": {"enabled": False}})
        wrapped = AsyncMemory(memory=sync)
        assert len(await wrapped.list(user_id="u")) == 1
        await wrapped.close()

    asyncio.run(main())
    with pytest.raises(InvalidInputError):
        AsyncMemory(tmp_path / "b.db", memory=Memory(tmp_path / "c.db", embedder=HashEmbedder(64)))
