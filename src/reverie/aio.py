"""``AsyncMemory``: reverie for asyncio code (agent frameworks are async).

The same methods with the same arguments, results, errors and meaning as :class:`reverie.Memory`,
awaitable. It is not a second implementation: each method hands the call to the one
:class:`~reverie.Memory` it wraps, on a worker thread of its own, and awaits the answer, so the
event loop never waits for the disk, the embedding model or the database, and any number of
coroutines may share one ``AsyncMemory``.

The calls run one at a time, in the order they were made, on that one thread (as aiosqlite runs a
connection): the engine's read-modify-write steps (the prediction-error gate, the observe buffer,
access counters) never race each other. A cancelled call still finishes in the worker, so nothing is
half-written; its result is dropped. Several processes — or several ``AsyncMemory`` objects on one
PostgreSQL database — run in parallel, as several ``Memory`` objects do.

An async LLM client (``openai.AsyncOpenAI``) given to an ``AsyncMemory`` makes its requests on the
caller's event loop, where the client belongs.
"""

from __future__ import annotations

import asyncio
import builtins
import inspect
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, ParamSpec, TypeVar

from reverie._context import CALLER_LOOP
from reverie.memory import Memory
from reverie.model import AccessEvent, HistoryEvent, MemoryRecord
from reverie.results import AddResult, DreamReport, Hit, SessionEndReport, Stats, UndoneConsolidation

if TYPE_CHECKING:
    from reverie.config import Settings
    from reverie.read.inject import ContextBlock

P = ParamSpec("P")
T = TypeVar("T")
F = TypeVar("F", bound=Callable[..., Any])


def _mirrors(method: Callable[..., Any]) -> Callable[[F], F]:
    """Give an async method the signature and documentation of the ``Memory`` method it awaits."""

    def decorate(fn: F) -> F:
        fn.__doc__ = f"Awaitable :meth:`reverie.Memory.{method.__name__}`.\n\n{inspect.getdoc(method) or ''}"
        fn.__signature__ = inspect.signature(method)  # type: ignore[attr-defined]
        return fn

    return decorate


class AsyncMemory:
    """A long-term memory for asyncio code: :class:`reverie.Memory`'s methods, awaitable.

    ``AsyncMemory(target, config=..., clock=..., embedder=..., llm=...)`` opens a ``Memory`` with
    the same arguments (on the worker thread); ``AsyncMemory(memory=mem)`` wraps an open one.
    ``async with AsyncMemory(...) as mem:`` closes it at the end. See the module docs for how the
    calls run."""

    def __init__(
        self,
        target: str | Path | None = None,
        *,
        config: Settings | Any | None = None,
        clock: Any | None = None,
        embedder: Any | None = None,
        llm: Any | None = None,
        memory: Memory | None = None,
    ) -> None:
        self._worker: int | None = None  # the worker thread's ident, noted when it starts
        self._executor = ThreadPoolExecutor(
            max_workers=1, thread_name_prefix="reverie-async", initializer=self._note_worker
        )
        self._closed = False
        if memory is not None:
            if any(v is not None for v in (target, config, clock, embedder, llm)):
                self._executor.shutdown(wait=False)
                from reverie.errors import InvalidInputError

                raise InvalidInputError("AsyncMemory(memory=...) takes an open Memory and no other arguments")
            self.memory = memory
            return
        try:
            self.memory = self._executor.submit(
                Memory, target, config=config, clock=clock, embedder=embedder, llm=llm
            ).result()
        except BaseException:
            self._executor.shutdown(wait=False)
            raise

    def _note_worker(self) -> None:
        self._worker = threading.get_ident()

    @classmethod
    async def open(cls, target: str | Path | None = None, **kwargs: Any) -> AsyncMemory:
        """Open without blocking the event loop while the store and the embedding model load."""
        return await asyncio.to_thread(cls, target, **kwargs)

    async def _call(self, fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
        if self._closed:
            from reverie.errors import StoreError

            raise StoreError("this AsyncMemory is closed")
        loop = asyncio.get_running_loop()

        def run() -> T:
            token = CALLER_LOOP.set(loop)
            try:
                return fn(*args, **kwargs)
            finally:
                CALLER_LOOP.reset(token)

        return await loop.run_in_executor(self._executor, run)

    async def run(self, fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
        """Await ``fn(*args, **kwargs)`` on this memory's worker thread, in turn with every other call
        (for code that works with ``self.memory`` directly, e.g. an integration doing several steps)."""
        return await self._call(fn, *args, **kwargs)

    def run_blocking(self, fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
        """Run ``fn(*args, **kwargs)`` on the worker thread and wait for it, from synchronous code (a
        synchronous API over the same memory stays in turn with the awaited calls)."""
        if self._closed:
            from reverie.errors import StoreError

            raise StoreError("this AsyncMemory is closed")
        if threading.get_ident() == self._worker:
            return fn(*args, **kwargs)  # already on the worker: waiting for it would never end
        return self._executor.submit(fn, *args, **kwargs).result()

    # lifecycle ---------------------------------------------------------------------------
    async def close(self) -> None:
        """Write what is pending, close the store, stop the worker thread."""
        if self._closed:
            return
        await self._call(self.memory.close)
        self._closed = True
        self._executor.shutdown(wait=True)

    async def __aenter__(self) -> AsyncMemory:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.close()

    @property
    def settings(self) -> Settings:
        return self.memory.settings

    @property
    def target(self) -> str | Path:
        return self.memory.target

    def now(self) -> datetime:
        """The engine's current time (from its clock; no I/O)."""
        return self.memory.now()

    def __repr__(self) -> str:
        return f"AsyncMemory({str(self.memory.target)!r}, embedder={self.memory.embedder.name!r})"

    # write -------------------------------------------------------------------------------
    @_mirrors(Memory.add)
    async def add(self, content: Any, **kwargs: Any) -> AddResult:
        return await self._call(self.memory.add, content, **kwargs)

    @_mirrors(Memory.add_many)
    async def add_many(self, items: Any, **kwargs: Any) -> builtins.list[AddResult]:
        return await self._call(self.memory.add_many, items, **kwargs)

    @_mirrors(Memory.observe)
    async def observe(self, message: Any, **kwargs: Any) -> builtins.list[AddResult]:
        return await self._call(self.memory.observe, message, **kwargs)

    @_mirrors(Memory.flush)
    async def flush(self, **kwargs: Any) -> builtins.list[AddResult]:
        return await self._call(self.memory.flush, **kwargs)

    @_mirrors(Memory.buffered)
    async def buffered(self, **kwargs: Any) -> builtins.list[dict[str, Any]]:
        return await self._call(self.memory.buffered, **kwargs)

    @_mirrors(Memory.end_session)
    async def end_session(self, session_id: str, **kwargs: Any) -> SessionEndReport:
        return await self._call(self.memory.end_session, session_id, **kwargs)

    @_mirrors(Memory.restore)
    async def restore(self, records: Any, **kwargs: Any) -> dict[str, int]:
        return await self._call(self.memory.restore, records, **kwargs)

    # read --------------------------------------------------------------------------------
    @_mirrors(Memory.search)
    async def search(self, query: Any, **kwargs: Any) -> builtins.list[Hit]:
        return await self._call(self.memory.search, query, **kwargs)

    @_mirrors(Memory.context)
    async def context(self, query: Any, **kwargs: Any) -> ContextBlock:
        return await self._call(self.memory.context, query, **kwargs)

    @_mirrors(Memory.get)
    async def get(self, memory_id: str) -> MemoryRecord:
        return await self._call(self.memory.get, memory_id)

    @_mirrors(Memory.peek)
    async def peek(self, memory_id: str) -> MemoryRecord:
        return await self._call(self.memory.peek, memory_id)

    @_mirrors(Memory.resolve_id)
    async def resolve_id(self, memory_id: Any) -> str:
        return await self._call(self.memory.resolve_id, memory_id)

    @_mirrors(Memory.short_ids)
    async def short_ids(self, ids: Any, **kwargs: Any) -> dict[str, str]:
        return await self._call(self.memory.short_ids, ids, **kwargs)

    @_mirrors(Memory.list)
    async def list(self, **kwargs: Any) -> builtins.list[MemoryRecord]:
        return await self._call(self.memory.list, **kwargs)

    @_mirrors(Memory.users)
    async def users(self, **kwargs: Any) -> builtins.list[tuple[str | None, int]]:
        return await self._call(self.memory.users, **kwargs)

    @_mirrors(Memory.accesses)
    async def accesses(self, memory_id: str, *, limit: int = 50) -> builtins.list[AccessEvent]:
        return await self._call(self.memory.accesses, memory_id, limit=limit)

    @_mirrors(Memory.history)
    async def history(self, memory_id: str) -> builtins.list[HistoryEvent]:
        return await self._call(self.memory.history, memory_id)

    @_mirrors(Memory.stats)
    async def stats(self, **kwargs: Any) -> Stats:
        return await self._call(self.memory.stats, **kwargs)

    @_mirrors(Memory.working_memory)
    async def working_memory(self, session_id: str, **kwargs: Any) -> builtins.list[MemoryRecord]:
        return await self._call(self.memory.working_memory, session_id, **kwargs)

    @_mirrors(Memory.hot_tier)
    async def hot_tier(self, **kwargs: Any) -> builtins.list[MemoryRecord]:
        return await self._call(self.memory.hot_tier, **kwargs)

    @_mirrors(Memory.explain_strength)
    async def explain_strength(self, memory_id: str) -> dict[str, Any]:
        return await self._call(self.memory.explain_strength, memory_id)

    # edit and lifecycle ------------------------------------------------------------------
    @_mirrors(Memory.update)
    async def update(self, memory_id: str, content: Any = None, **kwargs: Any) -> MemoryRecord:
        return await self._call(self.memory.update, memory_id, content, **kwargs)

    @_mirrors(Memory.pin)
    async def pin(self, memory_id: str) -> MemoryRecord:
        return await self._call(self.memory.pin, memory_id)

    @_mirrors(Memory.unpin)
    async def unpin(self, memory_id: str) -> MemoryRecord:
        return await self._call(self.memory.unpin, memory_id)

    @_mirrors(Memory.invalidate)
    async def invalidate(self, memory_id: str, reason: str) -> MemoryRecord:
        return await self._call(self.memory.invalidate, memory_id, reason)

    @_mirrors(Memory.reactivate)
    async def reactivate(self, memory_id: str, **kwargs: Any) -> MemoryRecord:
        return await self._call(self.memory.reactivate, memory_id, **kwargs)

    @_mirrors(Memory.forget)
    async def forget(self, memory_id: str) -> None:
        await self._call(self.memory.forget, memory_id)

    @_mirrors(Memory.forget_user)
    async def forget_user(self, user_id: str | None, *, dry_run: bool = False) -> dict[str, Any]:
        return await self._call(self.memory.forget_user, user_id, dry_run=dry_run)

    @_mirrors(Memory.count)
    async def count(self, **kwargs: Any) -> int:
        return await self._call(self.memory.count, **kwargs)

    @_mirrors(Memory.backup)
    async def backup(self, dest: str | Path) -> dict[str, Any]:
        return await self._call(self.memory.backup, dest)

    @_mirrors(Memory.feedback)
    async def feedback(self, memory_id: str, *, useful: bool) -> MemoryRecord:
        return await self._call(self.memory.feedback, memory_id, useful=useful)

    @_mirrors(Memory.promote)
    async def promote(self, memory_id: str, layer: Any = None) -> MemoryRecord:
        return await self._call(self.memory.promote, memory_id, layer)

    @_mirrors(Memory.demote)
    async def demote(self, memory_id: str) -> MemoryRecord:
        return await self._call(self.memory.demote, memory_id)

    @_mirrors(Memory.undo_consolidation)
    async def undo_consolidation(self, summary_id: str, **kwargs: Any) -> UndoneConsolidation:
        return await self._call(self.memory.undo_consolidation, summary_id, **kwargs)

    # maintenance -------------------------------------------------------------------------
    @_mirrors(Memory.dream)
    async def dream(self, *, steps: Sequence[str] | None = None, user_id: str | None = None) -> DreamReport:
        return await self._call(self.memory.dream, steps=steps, user_id=user_id)

    @_mirrors(Memory.dream_reports)
    async def dream_reports(self) -> builtins.list[dict[str, Any]]:
        return await self._call(self.memory.dream_reports)

    @_mirrors(Memory.tick)
    async def tick(self, **kwargs: Any) -> DreamReport:
        return await self._call(self.memory.tick, **kwargs)

    @_mirrors(Memory.maintain)
    async def maintain(self, **kwargs: Any) -> builtins.list[DreamReport]:
        return await self._call(self.memory.maintain, **kwargs)

    @_mirrors(Memory.maintenance_status)
    async def maintenance_status(self, **kwargs: Any) -> builtins.list[dict[str, Any]]:
        return await self._call(self.memory.maintenance_status, **kwargs)

    @_mirrors(Memory.compact)
    async def compact(self, **kwargs: Any) -> dict[str, Any]:
        return await self._call(self.memory.compact, **kwargs)

    @_mirrors(Memory.ingest_code)
    async def ingest_code(self, path: Any, **kwargs: Any) -> dict[str, Any]:
        return await self._call(self.memory.ingest_code, path, **kwargs)

    # readable documents ------------------------------------------------------------------
    @_mirrors(Memory.topic_index)
    async def topic_index(self, **kwargs: Any) -> dict[str, Any]:
        return await self._call(self.memory.topic_index, **kwargs)

    @_mirrors(Memory.documents)
    async def documents(self, **kwargs: Any) -> dict[str, Any]:
        return await self._call(self.memory.documents, **kwargs)

    @_mirrors(Memory.action_telemetry)
    async def action_telemetry(self, **kwargs: Any) -> builtins.list[dict[str, Any]]:
        return await self._call(self.memory.action_telemetry, **kwargs)

    @_mirrors(Memory.export_markdown)
    async def export_markdown(self, path: Any, **kwargs: Any) -> dict[str, int]:
        return await self._call(self.memory.export_markdown, path, **kwargs)

    @_mirrors(Memory.reembed)
    async def reembed(self, **kwargs: Any) -> dict[str, Any]:
        return await self._call(self.memory.reembed, **kwargs)


__all__ = ["AsyncMemory"]
