"""A LangChain retriever over reverie: ``ReverieRetriever(memory=mem, user_id="maya")``.

Each ``invoke(query)`` is one :meth:`reverie.Memory.search` in the user's scope; each hit becomes a
``Document`` whose ``page_content`` is the memory and whose ``metadata`` holds its id, score, layer,
category, times and the memory's own metadata. Returned hits count as recalls, as every search
does. ``ainvoke`` runs the search on the memory's worker thread (an :class:`~reverie.AsyncMemory`),
so the event loop never waits for it.
"""

from __future__ import annotations

from typing import Any

from reverie.aio import AsyncMemory
from reverie.integrations import require
from reverie.memory import Memory
from reverie.results import Hit

_retrievers = require("langchain_core.retrievers", "langchain")
_documents = require("langchain_core.documents", "langchain")
_pydantic = require("pydantic", "langchain")
BaseRetriever = _retrievers.BaseRetriever
Document = _documents.Document


def to_document(hit: Hit) -> Any:
    """One search hit as a LangChain ``Document``."""
    rec = hit.memory
    meta = {
        "id": rec.id,
        "score": hit.score,
        "user_id": rec.user_id,
        "agent_id": rec.agent_id,
        "session_id": rec.session_id,
        "layer": rec.layer.value,
        "category": rec.category,
        "created_at": rec.created_at.isoformat(),
        "valid_from": rec.valid_from.isoformat() if rec.valid_from else None,
        "metadata": dict(rec.metadata),
    }
    return Document(page_content=rec.content, metadata=meta, id=rec.id)


class ReverieRetriever(BaseRetriever):  # type: ignore[misc, valid-type]
    """Retrieve from a reverie memory (see the module docs).

    ``memory``: a :class:`~reverie.Memory` or :class:`~reverie.AsyncMemory`; ``user_id``,
    ``agent_id``, ``session_id``: the scope; ``k``: how many documents; ``filters``: reverie's search
    filters (``layer``, ``category``, ``metadata`` …); ``deep``: search the cold store too."""

    model_config = _pydantic.ConfigDict(arbitrary_types_allowed=True)

    memory: Any
    user_id: str | None = None
    agent_id: str | None = None
    session_id: str | None = None
    k: int = 5
    filters: dict[str, Any] | None = None
    deep: bool = False
    _amem: AsyncMemory | None = _pydantic.PrivateAttr(default=None)

    def _amemory(self) -> AsyncMemory:
        if self._amem is None:
            self._amem = self.memory if isinstance(self.memory, AsyncMemory) else AsyncMemory(memory=self._memory())
        return self._amem

    def _memory(self) -> Memory:
        mem = self.memory.memory if isinstance(self.memory, AsyncMemory) else self.memory
        if not isinstance(mem, Memory):
            from reverie.errors import InvalidInputError

            raise InvalidInputError("memory must be a reverie Memory or AsyncMemory")
        return mem

    def _search(self, query: str) -> list[Any]:
        hits = self._memory().search(
            query,
            user_id=self.user_id,
            agent_id=self.agent_id,
            session_id=self.session_id,
            k=self.k,
            filters=self.filters,
            deep=self.deep,
        )
        return [to_document(h) for h in hits]

    def _get_relevant_documents(self, query: str, *, run_manager: Any = None) -> list[Any]:
        return self._amemory().run_blocking(self._search, query)

    async def _aget_relevant_documents(self, query: str, *, run_manager: Any = None) -> list[Any]:
        return await self._amemory().run(self._search, query)


__all__ = ["ReverieRetriever", "to_document"]
