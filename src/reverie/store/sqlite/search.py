"""Search on SQLite: vectors through the in-process index (or exactly over few rows), full text through FTS5."""

from __future__ import annotations

import builtins
import sqlite3
import time
from collections.abc import Sequence
from typing import Any, Final

import numpy as np

from reverie import vector_codec
from reverie.model import StoreTier, Vector
from reverie.store.base import MemoryFilter, ScoredId
from reverie.store.sqlite.codec import best_hits, clip_cosine, filter_sql, ids_json, in_list
from reverie.store.sqlite.core import SQLiteCore
from reverie.store.sqlite.session import driver_errors
from reverie.store.tables.search import SearchOperations
from reverie.store.vector_index import Rids, VectorIndex, is_quantized_partition, quantized_partition

#: a filter naming at most this many ids is searched exactly over those rows
_EXACT_IDS_MAX: Final = 2_000
_TEXT_PROBE: Final = 8  # text search: matches ranked before the filter, per requested hit
#: text search: a filter whose scope (partition, statuses, stores) holds at most this many rows is applied
#: before the ranking: filtering a small scope first costs little, while a large one costs more than joining
#: the matches to their rows (bench/scale.py measures both)
_TEXT_FILTER_FIRST: Final = 5_000
#: text search: a filter naming at most this many ids is answered by looking the match up at each of their rows
#: (a summary's members, say). Measured on a 100k store: 10 ids 0.45-2.0 ms, 40 ids 1.6-6.4 ms, against 1.8-17 ms
#: for scoring every match of the words and keeping the listed ones (690-7,430 matches); one lookup costs about
#: as much as scoring 20-60 matches, so a longer list is checked per match instead
_TEXT_IDS_LOOKUP: Final = 48
#: vector search: a filter on the cold store whose scope (partition, statuses, stores) holds fewer rows than
#: this is scored exactly over those rows instead of through the user's index partition and the filter (which
#: costs the same however few cold rows there are)
_VECTOR_SCAN_FIRST: Final = 256
#: the full-text index's structure record (FTS5_STRUCTURE_ROWID): rewritten by every write to the index
_FTS_STRUCTURE_ID: Final = 10
#: how long a scope found to hold at least the rows the full-text search's choice of plan counts up to is taken to
#: still hold them (seconds). Only the plan depends on it — both plans return the same hits — so a scope that
#: shrank since merely runs the other, slower plan for a while; an empty or small scope is counted every time
_LARGE_SCOPE_TTL_S: Final = 30.0
_LARGE_SCOPES_KEPT: Final = 1_024
#: full-text terms whose row counts are remembered at most (the memo is dropped and started again)
_TERM_DOCS_CACHED: Final = 4_096


def _best_first(hit: tuple[float, str]) -> tuple[float, str]:
    """Sort key of (score, id) pairs: the best score first, ties by id (as every search orders its hits)."""
    return -hit[0], hit[1]


class SQLiteSearch(SQLiteCore, SearchOperations):
    """Vector and full-text search."""

    def _vector_search(self, query: Vector, flt: MemoryFilter, k: int) -> builtins.list[ScoredId]:
        where, params = filter_sql(flt)
        with self._read("vector search"), driver_errors("vector search failed", RuntimeError, OSError):
            if flt.ids is not None and len(flt.ids) <= _EXACT_IDS_MAX:
                return self._scan_search(query, where, params, k)
            if (
                flt.ids is None
                and flt.stores is not None
                and StoreTier.HOT not in flt.stores
                and (scope := self._scope_rows(flt, _VECTOR_SCAN_FIRST)) is not None
                and scope < _VECTOR_SCAN_FIRST
            ):
                if not scope:
                    return []  # an empty cold store
                # a small cold store is scored exactly: the index partitions are per user, so the index
                # would walk the user's hot memories only for the filter to drop them
                return self._scan_search(query, where, params, k, scoped=True)
            # quantised memories have index partitions of their own, searched when the
            # filter reaches the cold store (the only store the dream cycle quantises)
            cold = flt.stores is None or StoreTier.COLD in flt.stores
            names = None if flt.all_users else [flt.partition, *([quantized_partition(flt.partition)] if cold else [])]
            self._index.sync(names)
            if self._tx.depth:
                self._tx.synced = True
            searched = names or [n for n in self._index.loaded_partitions() if cold or not is_quantized_partition(n)]
            scoped = flt.ids is None and not flt.all_users
            hits = self._index_search(query, searched, where, params, k, scoped=scoped)
            if cold:
                return hits
            # a quantised memory moved back to hot without re-embedding stays findable (exactly)
            return best_hits(hits + self._scan_search(query, where, params, k, quantised_only=True), k)

    def _index_search(
        self, query: Vector, names: Sequence[str], where: str, params: Sequence[Any], k: int, *, scoped: bool
    ) -> builtins.list[ScoredId]:
        """Over-fetch from the index, keep what passes the filter, widen until k pass."""
        fetch = max(2 * k, k + 16)
        while True:
            rids, scores, exhausted = self._index.search(names, query, fetch)
            hits = self._passing(rids, scores, where, params)
            if len(hits) >= k or exhausted:
                return [ScoredId(mid, score) for score, mid in hits[:k]]
            # widen by the observed pass rate; a filter too selective for that is cheaper to scan
            rate = len(hits) / max(len(rids), 1)
            need = int(1.5 * k / rate) + 1 if rate > 0 else VectorIndex.max_fetch() + 1
            if need > VectorIndex.max_fetch():
                return self._scan_search(query, where, params, k, scoped=scoped)
            fetch = max(need, 2 * fetch)

    def _passing(self, rids: Rids, scores: Any, where: str, params: Sequence[Any]) -> builtins.list[tuple[float, str]]:
        """(score, id) of the index hits that pass the filter, best first (ties by id)."""
        if len(rids) == 0:
            return []
        listed = rids.tolist()  # Python ints and floats: the loop below is per hit
        ids = self._ids_passing(listed, where, params)
        hits = [
            (min(1.0, max(-1.0, s)), ids[rid])  # clipped as clip_cosine clips
            for rid, s in zip(listed, np.asarray(scores, dtype=np.float64).tolist(), strict=True)
            if rid in ids
        ]
        hits.sort(key=_best_first)
        return hits

    def _ids_passing(self, rids: builtins.list[int], where: str, params: Sequence[Any]) -> dict[int, str]:
        """rid -> id of the rows of ``rids`` that pass the filter ``where``."""
        rows = self._conn.execute(  # NOT INDEXED: by rowid, not through the scope index with a rowid probe (faster)
            f"SELECT m.rid, m.id FROM memories m NOT INDEXED WHERE m.rid IN (SELECT value FROM json_each(?)) "
            f"AND {where}",
            (ids_json(rids), *params),
        ).fetchall()
        return dict(rows)

    def _scan_search(
        self,
        query: Vector,
        where: str,
        params: Sequence[Any],
        k: int,
        *,
        quantised_only: bool = False,
        scoped: bool = False,
    ) -> builtins.list[ScoredId]:
        """Exact search over every row passing the filter (small id sets, selective filters);
        quantised rows are scored with the mixed-precision similarity.

        The index is named where the filter is a user's status/store scope: with ANALYZE statistics
        (``compact``) the planner took the partition's id index for a selective scope (the cold store of
        a user whose memories are nearly all hot) and read every row of the partition."""
        if quantised_only:  # answered from the partial index memories_quantized: a probe, not a scan
            cond, source = "m.embedding_codes IS NOT NULL", "memories m INDEXED BY memories_quantized"
        else:
            cond = "(m.embedding IS NOT NULL OR m.embedding_codes IS NOT NULL)"
            source = "memories m INDEXED BY memories_scope" if scoped else "memories m"
        query_sql = f"SELECT m.id, m.embedding, m.embedding_codes FROM {source} WHERE {cond} AND {where}"
        try:
            rows = self._conn.execute(query_sql, params).fetchall()
        except sqlite3.OperationalError as exc:  # a filter that matches nothing by itself (an empty set)
            if "no query solution" not in str(exc):
                raise
            rows = self._conn.execute(query_sql.replace(source, "memories m", 1), params).fetchall()
        if not rows:
            return []
        qn = float(np.linalg.norm(query)) or 1.0
        scores = np.empty(len(rows), dtype=np.float32)
        plain = [i for i, r in enumerate(rows) if r[1] is not None]
        coded = [i for i, r in enumerate(rows) if r[1] is None]
        if plain:
            matrix = np.frombuffer(b"".join(rows[i][1] for i in plain), dtype=np.float32).reshape(len(plain), self.dim)
            norms = np.linalg.norm(matrix, axis=1)
            norms[norms == 0] = 1.0
            scores[plain] = np.einsum("ij,j->i", matrix, query) / norms / qn  # one thread: no BLAS contention
        if coded:
            matrix = vector_codec.search_rows([rows[i][2] for i in coded], self.dim)
            scores[coded] = np.einsum("ij,j->i", matrix, query) / qn
        hits = [ScoredId(r[0], clip_cosine(s)) for r, s in zip(rows, scores, strict=True)]
        hits.sort(key=lambda h: (-h.score, h.id))
        return hits[:k]

    def _text_search(self, terms: builtins.list[str], flt: MemoryFilter, k: int) -> builtins.list[ScoredId]:
        with self._read("text search terms"):
            match = self._selective_match(terms)
        where, params = filter_sql(flt)
        with self._read("text search"):
            if flt.ids is not None and len(flt.ids) <= _TEXT_IDS_LOOKUP:
                return self._filtered_then_ranked(match, flt, k, lookup=True)
            scope = self._scope_rows(flt, _TEXT_FILTER_FIRST, remember=True)
            if scope == 0:
                return []  # nothing to rank (an empty cold store: BM25 would still score every match)
            if scope is not None and scope < _TEXT_FILTER_FIRST:
                return self._filtered_then_ranked(match, flt, k)
            hits = self._ranked_then_filtered(match, where, params, k)
            if hits is not None:
                return hits
            stmt = (
                "SELECT m.id, -bm25(memories_fts) AS score FROM memories_fts "
                "JOIN memories m ON m.rid = memories_fts.rowid "
                f"WHERE memories_fts MATCH ? AND {where} ORDER BY score DESC, m.id LIMIT ?"
            )
            rows = self._conn.execute(stmt, (match, *params, k)).fetchall()
        return [ScoredId(r[0], float(r[1])) for r in rows]

    def _ranked_then_filtered(
        self, match: str, where: str, params: builtins.list[Any], k: int
    ) -> builtins.list[ScoredId] | None:
        """The text search ranked in the FTS index alone, then filtered; None when that cannot be
        proven to equal the filtered ranking (the caller then joins every match to its row).

        Joining each matching row to ``memories`` to test the filter costs more than the BM25
        ranking itself (about three times as much on a large store). So the best
        ``_TEXT_PROBE × k`` matches are ranked without the filter, and their rows are looked up
        best first, 2k at a time, until k pass and every ranked row scoring at least as well as
        the k-th passing one was looked up (ties included). The result is exact when every match
        was ranked, or when the worst ranked match scores below that k-th one: nothing left out
        can then reach the top k.
        """
        probe = _TEXT_PROBE * k
        ranked: builtins.list[tuple[int, float]] = self._conn.execute(
            "SELECT rowid, -bm25(memories_fts) AS score FROM memories_fts WHERE memories_fts MATCH ? "
            "ORDER BY score DESC LIMIT ?",
            (match, probe),
        ).fetchall()
        every_match = len(ranked) < probe
        passing: builtins.list[tuple[float, str]] = []  # (score, id): ScoredIds are made for the k returned only
        checked = 0
        while checked < len(ranked):
            chunk = ranked[checked : checked + 2 * k]
            checked += len(chunk)
            ids = self._ids_passing([rid for rid, _ in chunk], where, params)
            passing.extend((score, ids[rid]) for rid, score in chunk if rid in ids)
            if len(passing) < k:
                continue
            passing.sort(key=_best_first)
            kth = passing[k - 1][0]
            if checked < len(ranked) and ranked[checked][1] >= kth:
                continue  # unchecked rows could still tie with or beat the k-th hit
            if every_match or ranked[-1][1] < kth:
                return [ScoredId(mid, score) for score, mid in passing[:k]]
            return None
        passing.sort(key=_best_first)
        return [ScoredId(mid, score) for score, mid in passing[:k]] if every_match else None

    def _scope_rows(self, flt: MemoryFilter, cap: int, *, remember: bool = False) -> int | None:
        """How many rows ``flt``'s partition holds in its statuses and stores — what the scope index finds
        without reading a row — counted up to ``cap`` in the index; None for a filter over every user.
        ``remember``: a scope counted at ``cap`` is answered as ``cap`` for ``_LARGE_SCOPE_TTL_S`` without
        counting again (for a choice between plans that return the same hits)."""
        if flt.all_users:
            return None
        key = (flt.partition, flt.statuses, flt.stores, cap)
        if remember and self._large_scopes.get(key, 0.0) > time.monotonic():
            return cap  # counting up to cap costs ~0.4 ms at cap 5,000; a scope that large rarely shrinks below it
        params: builtins.list[Any] = [flt.partition]
        conds = ['m."partition" = ?']
        for column, values in (("status", flt.statuses), ("store", flt.stores)):
            if values is not None:
                conds.append(in_list(f"m.{column}", values, params))
        row = self._conn.execute(
            f"SELECT count(*) FROM (SELECT 1 FROM memories m WHERE {' AND '.join(conds)} LIMIT ?)",
            (*params, cap),
        ).fetchone()
        if remember and int(row[0]) >= cap:
            if len(self._large_scopes) > _LARGE_SCOPES_KEPT:
                self._large_scopes.clear()
            self._large_scopes[key] = time.monotonic() + _LARGE_SCOPE_TTL_S
        return int(row[0])

    def _filtered_then_ranked(
        self, match: str, flt: MemoryFilter, k: int, *, lookup: bool = False
    ) -> builtins.list[ScoredId]:
        """The text search over a scope of few rows (:meth:`_scope_rows`): the rows passing the filter
        are listed once, and only the matches among them are scored (``+rowid``: the list is checked
        per match, not searched once per listed row, which would re-run the match for each).
        ``lookup``: the filter lists a few ids (the members of the summaries a search follows): the match
        is looked up at each listed row instead, whatever the number of rows matching the words."""
        where, params = filter_sql(flt, alias="s")
        rowid = "memories_fts.rowid" if lookup else "+memories_fts.rowid"
        rows = self._conn.execute(
            "SELECT m.id, -bm25(memories_fts) AS score FROM memories_fts JOIN memories m ON m.rid = memories_fts.rowid "
            f"WHERE memories_fts MATCH ? AND {rowid} IN (SELECT s.rid FROM memories s WHERE {where}) "
            "ORDER BY score DESC, m.id LIMIT ?",
            (match, *params, k),
        ).fetchall()
        return [ScoredId(r[0], float(r[1])) for r in rows]

    def _selective_match(self, terms: builtins.list[str]) -> str:
        """The FTS5 expression for ``terms``: an OR of the selective ones.

        BM25 has to score every row a query matches; a term found in more than
        ``storage.fts_common_docs`` rows (a speaker's name, a topic word) makes that millions of
        rows and adds almost nothing to the ranking (its IDF is near zero). Such terms are left
        out of the OR when rarer terms exist; when every term is that common they are ANDed.
        """
        if len(terms) == 1:
            return f'"{terms[0]}"'
        cap = self.settings.fts_common_docs
        counts = self._term_counts(terms, cap)
        common = [t for t in terms if counts[t] >= cap]
        rare = [t for t in terms if t not in common]
        if rare:
            return " OR ".join(f'"{t}"' for t in rare)
        return " AND ".join(f'"{t}"' for t in common)

    def _term_counts(self, terms: builtins.list[str], cap: int) -> dict[str, int]:
        """:meth:`_term_docs` of each term, remembered while the full-text index is unchanged (outside a
        transaction of this connection, whose pending terms the index's structure record does not show
        yet). A search runs the full-text query twice (hot and cold store) and its words recur."""
        if self._tx.depth:
            return {t: self._term_docs(t, cap) for t in terms}
        row = self._conn.execute(f"SELECT block FROM memories_fts_data WHERE id = {_FTS_STRUCTURE_ID}").fetchone()
        key = bytes(row[0]) if row is not None else b""
        if key != self._term_docs_key or len(self._term_docs_cache) > _TERM_DOCS_CACHED:
            self._term_docs_cache, self._term_docs_key = {}, key
        cache = self._term_docs_cache
        for t in terms:
            if t not in cache:
                cache[t] = self._term_docs(t, cap)
        return {t: cache[t] for t in terms}

    def _term_docs(self, term: str, cap: int) -> int:
        """How many rows contain ``term``, counted up to ``cap`` (cheap: no ranking)."""
        row = self._conn.execute(
            "SELECT count(*) FROM (SELECT 1 FROM memories_fts WHERE memories_fts MATCH ? LIMIT ?)",
            (f'"{term}"', cap),
        ).fetchone()
        return int(row[0])
