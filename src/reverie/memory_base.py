"""What the parts of :class:`~reverie.memory.Memory` share: its attributes and the few operations one part
calls on another.

``Memory`` is assembled from mixins, one per concern — :class:`~reverie.inspection.Inspection` (what
operators' tools read), :class:`~reverie.access_updates.AccessUpdates` (what an access writes),
:class:`~reverie.ingest.Ingest` (the write side), :class:`~reverie.editing.Editing` (the edit rules) and
:class:`~reverie.upkeep.Upkeep` (maintenance, export and backup). Each derives from :class:`MemoryBase`,
which declares what ``Memory`` itself provides, so that every part is type-checked against it.
"""

from __future__ import annotations

import builtins
import threading
from collections.abc import Callable, Sequence
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np

    from reverie.access_updates import SessionUse
    from reverie.config import Settings
    from reverie.embed.base import Embedder
    from reverie.llm.client import ChatJSON
    from reverie.memory import Memory
    from reverie.model import MemoryRecord
    from reverie.opslog import OpsLog
    from reverie.results import AddResult, DreamReport, UndoneConsolidation
    from reverie.store.base import MemoryFilter, Store
    from reverie.write.pipeline import WritePipeline


class MemoryBase:
    """The attributes and cross-part operations of ``Memory`` (each is defined by ``Memory`` or one mixin)."""

    settings: Settings
    embedder: Embedder
    ops: OpsLog
    target: str | Path
    llm: ChatJSON | None
    _store: Store
    _sessions: SessionUse
    _deferred: builtins.list[Callable[[], None]]
    _deferred_lock: threading.Lock
    _space_mismatch: str | None

    def _memory(self) -> Memory:
        """This object as the whole ``Memory`` (for the functions that take one: the maintenance schedule)."""
        from reverie.memory import Memory

        assert isinstance(self, Memory)
        return self

    @property
    def store(self) -> Store:  # Memory: the storage backend
        raise NotImplementedError

    def now(self) -> datetime:  # Memory: the injected clock
        raise NotImplementedError

    def _require(self, memory_id: Any) -> MemoryRecord:  # Memory: the id (or prefix) lookup
        raise NotImplementedError

    def resolve_id(self, memory_id: Any) -> str:  # Memory
        raise NotImplementedError

    def _embed(self, texts: Sequence[str]) -> np.ndarray:  # Memory
        raise NotImplementedError

    def _scope_filter(self, user_id: Any, agent_id: Any, filters: Any, **extra: Any) -> MemoryFilter:  # Memory
        raise NotImplementedError

    def _get_llm(self) -> ChatJSON | None:  # Memory
        raise NotImplementedError

    def dream(self, *, steps: Sequence[str] | None = None, user_id: str | None = None) -> DreamReport:  # Memory
        raise NotImplementedError

    def _settle(self) -> None:  # AccessUpdates
        raise NotImplementedError

    def _touch(
        self,
        records: Sequence[MemoryRecord],
        *,
        kind: str,
        session_id: str | None,
        hebbian: bool = False,
        defer: bool = False,
    ) -> builtins.list[MemoryRecord]:  # AccessUpdates
        raise NotImplementedError

    def _write_path(self) -> WritePipeline:  # Ingest
        raise NotImplementedError

    def _after_ingest(self, users: Any) -> None:  # Ingest
        raise NotImplementedError

    def flush(self, *, user_id: str | None = None, session_id: str | None = None) -> builtins.list[AddResult]:
        raise NotImplementedError  # Ingest

    def undo_consolidation(self, summary_id: str, *, reason: str = "") -> UndoneConsolidation:  # Editing
        raise NotImplementedError

    def _restore_precision(self, ids: Sequence[str], *, actor: str) -> None:  # Editing
        raise NotImplementedError

    def topic_index(
        self, *, user_id: str | None = None, agent_id: str | None = None, refresh: bool = False
    ) -> dict[str, Any]:  # Upkeep
        raise NotImplementedError
