"""Many tenants: U users x M memories (default 10,000 x 100 = 1M rows) on SQLite and PostgreSQL.

The common production shape, unlike one big scope: each search filters one small partition out of a large table
(index selectivity, the partition filter, each user's vector index or graph state).

* The SQLite store gets ``scale.py``'s synthetic memories, ``--per-user`` consecutive ones per user, through
  ``add_many`` with the vectors given (the bulk rate is reported); it is built once in ``--workdir`` and reused.
* The same memories are copied into PostgreSQL with ``COPY`` (``cold_search.copy_to_postgres``: indexes built after
  the load), once.
* One process then alternates the two backends per operation, so the machine's load falls alike on both:
  - ``Memory.search`` for a random user (k = 10, the whole read path with the query's embedding): p50 / p95;
  - ``Memory.add`` of a new text to a random user (embedded, the write path's gate against that user's memories);
  - ``Memory.add_many`` of ``--batch`` new memories with their vectors to a random user (the store's own cost).

Usage::

    PYTHONPATH=src .venv/bin/python bench/tenants.py --users 10000 --per-user 100 --workdir /tmp/reverie-tenants
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import cold_search
import numpy as np
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


def user_name(u: int) -> str:
    return f"tenant-{u:05d}"


def build_sqlite(db: Path, users: int, per_user: int) -> dict[str, Any]:
    """``users`` x ``per_user`` memories, each user's in one ``add_many`` call (vectors given)."""
    from reverie import Memory
    from reverie.config import Settings
    from reverie.embed import make_embedder

    protos = scale.Prototypes(4000, seed=7)
    protos.embed(make_embedder(Settings.load().embedding), RESULTS_DIR / "cache")
    batch = max(per_user, 10_000 // per_user * per_user)
    done = 0
    with Memory(str(db), config=memory_config(db.parent)) as mem, Timer() as t:
        for texts, vecs in scale.bulk_batches(protos, users * per_user, batch, 7):
            for start in range(0, len(texts), per_user):
                mem.add_many(
                    texts[start : start + per_user],
                    user_id=user_name((done + start) // per_user),
                    vectors=vecs[start : start + per_user],
                    infer=False,
                    batch_size=per_user,
                )
            done += len(texts)
            if done % 100_000 == 0:
                console().print(f"[dim]loaded {done:,} memories for {done // per_user:,} users[/dim]")
    return {"memories": done, "load_s": round(t.seconds, 1), "add_many_per_s": round(done / t.seconds)}


def prepare(users: int, per_user: int, workdir: Path, pg: str) -> dict[str, Any]:
    info: dict[str, Any] = {"users": users, "per_user": per_user}
    db = workdir / f"tenants-{users}x{per_user}.db"
    marker = workdir / f"{db.name}.json"
    if not db.exists() or not marker.exists():
        for old in workdir.glob(f"{db.name}*"):
            if old.is_file():
                old.unlink()
        console().print(f"building the SQLite store: {users:,} users x {per_user}")
        marker.write_text(json.dumps(build_sqlite(db, users, per_user)))
    info["sqlite_load"] = json.loads(marker.read_text())
    name = f"tenants_{users}x{per_user}"
    pg_marker = workdir / f"{name}.json"
    if not cold_search.has_database(pg, name) or not pg_marker.exists():
        console().print("copying the memories to PostgreSQL")
        cold_search.create_database(pg, name)
        pg_marker.write_text(json.dumps(cold_search.copy_to_postgres(db, cold_search.database(pg, name))))
    info["pg_load"] = json.loads(pg_marker.read_text())
    info["targets"] = {"sqlite": str(db), "postgres": cold_search.database(pg, name)}
    return info


def measure(info: dict[str, Any], *, searches: int, adds: int, batch: int, k: int, seed: int) -> dict[str, Any]:
    from reverie import Memory
    from reverie.config import Settings
    from reverie.embed import make_provider

    settings = Settings.load()
    mems = {
        name: Memory(target, config=memory_config(RESULTS_DIR), embedder=make_provider(settings.embedding))
        for name, target in info["targets"].items()
    }
    rng = random.Random(seed)
    users = info["users"]
    queries = scale.make_queries(searches + 10, seed=seed)
    texts = scale.sample_texts(adds * (batch + 1), seed=seed + 1)
    vecs = np.asarray(next(iter(mems.values())).embedder.embed(texts[: adds * batch]), dtype=np.float32)
    search: dict[str, list[float]] = {n: [] for n in mems}
    add: dict[str, list[float]] = {n: [] for n in mems}
    add_many: dict[str, list[float]] = {n: [] for n in mems}
    load = [load_average()]
    try:
        for q in queries[:10]:  # warm-up
            for mem in mems.values():
                mem.search(q, user_id=user_name(rng.randrange(users)), k=k)
        for i, q in enumerate(queries[10:]):
            user = user_name(rng.randrange(users))
            for name in list(mems) if i % 2 == 0 else list(reversed(mems)):
                with Timer() as t:
                    mems[name].search(q, user_id=user, k=k)
                search[name].append(t.seconds)
        load.append(load_average())
        for i in range(adds):
            user = user_name(rng.randrange(users))
            for j, name in enumerate(list(mems) if i % 2 == 0 else list(reversed(mems))):
                with Timer() as t:
                    mems[name].add(f"{texts[adds * batch + i]} ({name} {j})", user_id=user, infer=False)
                add[name].append(t.seconds)
                chunk = slice(i * batch, (i + 1) * batch)
                with Timer() as t:
                    mems[name].add_many(
                        [f"{s} ({name})" for s in texts[chunk]], user_id=user, vectors=vecs[chunk], infer=False
                    )
                add_many[name].append(t.seconds)
        load.append(load_average())
    finally:
        for mem in mems.values():
            mem.close()
    out: dict[str, Any] = {"load_average": load, "search": {}, "add": {}, "add_many": {}}
    for name in mems:
        out["search"][name] = latency_stats(search[name])
        out["add"][name] = {**latency_stats(add[name]), "per_s": round(len(add[name]) / sum(add[name]), 1)}
        out["add_many"][name] = {
            **latency_stats(add_many[name]),
            "batch": batch,
            "memories_per_s": round(batch * len(add_many[name]) / sum(add_many[name]), 1),
        }
    return out


def show(doc: dict[str, Any]) -> None:
    log = console()
    for res in doc["results"]:
        log.print(f"{res['users']:,} users x {res['per_user']} memories; load {res['load_average']}")
        for name in ("sqlite", "postgres"):
            s, a, m = res["search"][name], res["add"][name], res["add_many"][name]
            log.print(
                f"  {name:9s} search p50 {fmt(s['p50_ms'], 2)} p95 {fmt(s['p95_ms'], 2)} ms"
                f" | add {fmt(a['per_s'], 1)}/s"
                f" (p50 {fmt(a['p50_ms'], 2)} ms) | add_many({m['batch']}) {fmt(m['memories_per_s'], 0)} memories/s"
            )


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--users", type=int, default=10_000)
    p.add_argument("--per-user", type=int, default=100)
    p.add_argument("--workdir", type=Path, default=Path("/tmp/reverie-tenants"))
    p.add_argument("--searches", type=int, default=200)
    p.add_argument("--adds", type=int, default=100)
    p.add_argument("--batch", type=int, default=20, help="memories per add_many call")
    p.add_argument("--k", type=int, default=10)
    p.add_argument("--seed", type=int, default=31)
    p.add_argument("--prepare-only", action="store_true")
    p.add_argument("--out", type=Path, default=RESULTS_DIR / "tenants.json")
    args = p.parse_args(argv)
    args.workdir.mkdir(parents=True, exist_ok=True)
    pg = cold_search.server_url(args.workdir)
    info = prepare(args.users, args.per_user, args.workdir, pg)
    doc: dict[str, Any] = {"benchmark": "tenants", "date": now_iso(), "machine": machine_info(), "results": [info]}
    if args.prepare_only:
        console().print(json.dumps(info, default=str))
        return doc
    info.update(measure(info, searches=args.searches, adds=args.adds, batch=args.batch, k=args.k, seed=args.seed))
    return finish(doc, args.out, quiet=False, show=show)


if __name__ == "__main__":
    main(sys.argv[1:])
