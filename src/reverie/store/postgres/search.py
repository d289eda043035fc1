"""Search on PostgreSQL: pgvector's HNSW index with quantised rows re-ranked, full text through tsvector."""

from __future__ import annotations

import builtins
from typing import Final, LiteralString

import numpy as np
from psycopg import sql

from reverie import vector_codec
from reverie.model import StoreTier, Vector
from reverie.store.base import MemoryFilter, ScoredId
from reverie.store.postgres.codec import cosine_from_distance, filter_sql
from reverie.store.postgres.core import PostgresCore
from reverie.store.postgres.schema import query_half
from reverie.store.tables.search import SearchOperations

#: nearest neighbours through the HNSW index (iterative scan, relaxed order: re-sorted outside),
#: plus quantised rows passing the filter. pgvector has no int4/int2 type: codes live in
#: ``embedding_codes`` and are scored with the mixed-precision similarity in numpy. When the
#: filter excludes the cold store that part is a probe of the partial index memories_quantized_idx
#: (normally no row); when it reaches the cold store, the quantised rows nearest by their unit vectors in half
#: precision (``embedding_half``) come from their own HNSW graph (``schema.cold_hnsw_ddl``), the scope's filter
#: pushed into the iterative scan, or from a sort of the scope's rows where the planner finds that cheaper (a
#: small scope: one user of many); only the best ``_COLD_DEPTH`` ids and code blobs are sent and scored again
_SEARCH_QUERY: Final = sql.SQL(
    "WITH hits AS MATERIALIZED ("
    "SELECT id, embedding <=> %s AS distance FROM memories "
    "WHERE embedding IS NOT NULL AND {where} ORDER BY distance LIMIT %s) "
    "SELECT id, distance, NULL::bytea FROM hits "
    "UNION ALL SELECT id, NULL, embedding_codes FROM memories WHERE embedding_codes IS NOT NULL AND {where}"
)
_SEARCH_COLD_QUERY: Final = sql.SQL(
    "WITH hits AS MATERIALIZED ("
    "SELECT id, embedding <=> %s AS distance FROM memories "
    "WHERE embedding IS NOT NULL AND {where} ORDER BY distance LIMIT %s), "
    "coded AS MATERIALIZED ("
    "SELECT id, embedding_codes FROM memories "
    "WHERE embedding_codes IS NOT NULL AND embedding_half IS NOT NULL AND {where} "
    "ORDER BY embedding_half <-> %s LIMIT %s) "
    "SELECT id, distance, NULL::bytea FROM hits UNION ALL SELECT id, NULL, embedding_codes FROM coded"
)
#: quantised candidates scored again per query: at least this many, and this many per result asked. The graph's
#: order is the cosine with the dequantised vector (the score before the precision's correction), approximate; the
#: depth makes up for it. On the 20k store after a dream (bench/cold_search.py, e5, int8, 80 questions), the share of
#: the exact top 10 / top 60 found with a pool of 60: 0.991 / 0.986 scoring 240 again, 0.998 / 0.996 scoring 480 (the
#: sign-bit prefilter before, scoring 400 / 2,400: 0.988 / 0.997)
_COLD_DEPTH: Final = (200, 8)
#: the quantised rows of a scope, exact (``+ 0`` keeps the planner off the graph): when the graph's scan gave up
#: before finding ``k`` of them (hnsw.max_scan_tuples), the filter passes few rows and sorting them is cheap
_EXACT_COLD_QUERY: Final = sql.SQL(
    "SELECT id, embedding_codes FROM memories WHERE embedding_codes IS NOT NULL AND embedding_half IS NOT NULL "
    "AND {} ORDER BY (embedding_half <-> %s) + 0, id LIMIT %s"
)
#: the same, exact: ``+ 0`` keeps the planner off the HNSW index
_EXACT_QUERY: Final = sql.SQL(
    "SELECT id, (embedding <=> %s) + 0 AS distance FROM memories "
    "WHERE embedding IS NOT NULL AND {} ORDER BY distance, id LIMIT %s"
)
#: every record column, then the code blob of a quantised embedding (``decode_record`` reads both)

#: per query word: is it in at least %(cap)s rows? Estimated from the tsv column's statistics
#: (most_common_elem_freqs holds the share of rows per listed lexeme, then the least and the
#: largest share) where they place the word, else counted up to the cap; a word the english
#: configuration drops entirely (no lexeme) is in no row
_COMMON_WORDS_QUERY: Final[LiteralString] = """
WITH st AS (
    SELECT s.most_common_elems::text::text[] AS elems, s.most_common_elem_freqs AS freqs,
           greatest(c.reltuples, 0) * (1 - s.null_frac) AS n
    FROM pg_stats s JOIN pg_class c ON c.oid = 'memories'::regclass
    WHERE s.schemaname = current_schema() AND s.tablename = 'memories' AND s.attname = 'tsv'
),
w AS (
    SELECT t, tsvector_to_array(to_tsvector('english', t)) AS lex FROM unnest(%(words)s::text[]) AS t
),
e AS (
    SELECT w.t, w.lex, st.n, st.freqs, array_position(st.elems, w.lex[1]) AS pos, cardinality(st.elems) AS listed
    FROM w LEFT JOIN st ON cardinality(w.lex) = 1
)
SELECT t, CASE
    WHEN cardinality(lex) = 0 THEN false
    WHEN n > 0 AND pos IS NOT NULL THEN freqs[pos] * n >= %(cap)s
    WHEN n > 0 AND listed > 0 AND freqs[listed + 1] * n < %(cap)s THEN false
    ELSE (SELECT count(*) FROM (SELECT 1 FROM memories
          WHERE tsv @@ to_tsquery('english', quote_literal(t)) LIMIT %(cap)s) x) >= %(cap)s
END FROM e
"""


class PostgresSearch(PostgresCore, SearchOperations):
    """Vector and full-text search."""

    def _vector_search(self, query_vec: Vector, flt: MemoryFilter, k: int) -> builtins.list[ScoredId]:
        where, params = filter_sql(flt)
        cold = flt.stores is None or StoreTier.COLD in flt.stores
        if cold:
            depth = max(_COLD_DEPTH[0], _COLD_DEPTH[1] * k)
            half = query_half(query_vec)
            found = self._rows(
                _SEARCH_COLD_QUERY.format(where=where), [query_vec, *params, k, *params, half, depth], binary=True
            )
        else:
            found = self._rows(_SEARCH_QUERY.format(where=where), [query_vec, *params, k, *params], binary=True)
        rows = [row for row in found if row[2] is None]
        if len(rows) < k:
            # the HNSW scan stops after hnsw.max_scan_tuples: when a filter the planner cannot
            # see through rejects most neighbours, fall back to an exact scan of what passes
            rows = self._rows(_EXACT_QUERY.format(where), [query_vec, *params, k])
        hits = [ScoredId(row[0], cosine_from_distance(row[1])) for row in rows]
        coded = [row for row in found if row[2] is not None]
        if cold and len(coded) < k:  # the same for the quantised rows' graph
            coded = [(r[0], None, r[1]) for r in self._rows(_EXACT_COLD_QUERY.format(where), [*params, half, depth])]
        if coded:  # quantised rows, scored exactly with the mixed-precision similarity
            unit = query_vec / (float(np.linalg.norm(query_vec)) or 1.0)
            scores = np.einsum("ij,j->i", vector_codec.search_rows([row[2] for row in coded], self.dim), unit)
            hits += [ScoredId(row[0], min(1.0, max(-1.0, float(s)))) for row, s in zip(coded, scores, strict=True)]
        hits.sort(key=lambda h: (-h.score, h.id))
        return hits[:k]

    def _text_search(self, words: builtins.list[str], flt: MemoryFilter, k: int) -> builtins.list[ScoredId]:
        terms = self._selective_tsquery(words)
        where, params = filter_sql(flt)
        stmt = sql.SQL(
            "SELECT id, ts_rank(tsv, q) AS score FROM memories, to_tsquery('english', %s) AS q "
            "WHERE tsv @@ q AND {} ORDER BY score DESC, id LIMIT %s"
        ).format(where)
        return [ScoredId(row[0], float(row[1])) for row in self._rows(stmt, [terms, *params, k])]

    def _selective_tsquery(self, words: builtins.list[str]) -> str:
        """An OR tsquery of the selective words (the same rule as SQLite's: a word found in at least
        ``storage.fts_common_docs`` rows is left out when rarer words exist, ANDed when none do)."""
        if len(words) == 1:
            return f"'{words[0]}'"
        common = self._common_words(words, self.settings.fts_common_docs)
        rare = [w for w in words if w not in common]
        if rare:
            return " | ".join(f"'{w}'" for w in rare)
        return " & ".join(f"'{w}'" for w in words)

    def _common_words(self, words: builtins.list[str], cap: int) -> set[str]:
        """The words found in at least ``cap`` rows: counted up to ``cap``, or estimated from the
        planner's statistics where they decide it.

        Counting reads a heap row per match through the GIN index (~2,000 random page reads for a
        word near the cap). Once ANALYZE has run, ``pg_stats.most_common_elems`` holds the share of
        rows containing each frequent lexeme (from a 30,000-row sample, so exact for a smaller table
        as of that ANALYZE; this store analyses after ``storage.pg_analyze_after_rows`` inserts,
        autovacuum too); a lexeme missing from the list is rarer than its least frequent entry.
        Only a word the statistics cannot place (no statistics yet, a list cut off above the cap,
        a word that is several lexemes) is counted.
        """
        return {row[0] for row in self._rows(_COMMON_WORDS_QUERY, {"words": words, "cap": cap}) if row[1]}
