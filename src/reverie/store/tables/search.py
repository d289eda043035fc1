"""The parts of search that are the same on both backends: argument checks and reading stored embeddings."""

from __future__ import annotations

import builtins
from collections.abc import Sequence

from reverie import vector_codec
from reverie.model import Vector
from reverie.store._common import check_vector
from reverie.store.base import MemoryFilter, ScoredId
from reverie.store.tables.backend import SqlBackend
from reverie.store.textquery import query_terms


class SearchOperations(SqlBackend):
    """``vector_search``, ``text_search`` and ``embeddings`` over a backend's :meth:`_vector_search` and
    :meth:`_text_search`."""

    dim: int

    def _vector_search(self, query: Vector, flt: MemoryFilter, k: int) -> builtins.list[ScoredId]:
        """The ``k`` best hits for a checked query vector (``k`` positive)."""
        raise NotImplementedError

    def _text_search(self, terms: builtins.list[str], flt: MemoryFilter, k: int) -> builtins.list[ScoredId]:
        """The ``k`` best hits for the query's searchable terms (at least one; ``k`` positive)."""
        raise NotImplementedError

    def vector_search(self, vector: Vector, flt: MemoryFilter, k: int) -> builtins.list[ScoredId]:
        query = check_vector(vector, self.dim)
        if k <= 0:
            return []
        return self._vector_search(query, flt, k)

    def text_search(self, query: str, flt: MemoryFilter, k: int) -> builtins.list[ScoredId]:
        terms = query_terms(query)
        if not terms or k <= 0:
            return []
        return self._text_search(terms, flt, k)

    def embeddings(self, ids: Sequence[str]) -> dict[str, Vector]:
        if not ids:
            return {}
        d = self.dialect
        with self._reading("embeddings") as s:
            rows = s.rows(
                f"SELECT id, embedding, embedding_codes FROM memories WHERE {d.in_ids('id')} "
                "AND (embedding IS NOT NULL OR embedding_codes IS NOT NULL)",
                [d.ids(ids)],
            )
        out = {r[0]: d.from_vector(r[1]) for r in rows if r[1] is not None}
        quantised = [r for r in rows if r[1] is None]
        if quantised:  # dequantised
            vecs = vector_codec.decode_rows([bytes(r[2]) for r in quantised], self.dim)
            out.update({r[0]: vec for r, vec in zip(quantised, vecs, strict=True)})
        return out


__all__ = ["SearchOperations"]
