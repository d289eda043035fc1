"""Concurrent load against ``reverie serve``: throughput at saturation, latency against offered load, errors.

The store is a seeded multi-user memory (``tenants.py``'s data: ``--users`` x ``--per-user`` memories), copied
fresh for each run. For each backend a server is started on loopback (``reverie serve --workers 2`` on PostgreSQL,
one worker on SQLite, which takes one writer at a time), then a bounded load generator in this process drives it
with ``--clients`` concurrent clients, each request a search (80%) or an add (20%) for a random user:

1. **offered load**: open-loop phases at rising request rates (``--rates``, requests per second), ``--phase-s``
   seconds each; a request waits for a free client when all are busy, and its latency is counted from the moment
   it was due (so queueing shows, as a user would see it). The phases stop at the first one whose p95 exceeds
   ``--max-p95-s`` or whose throughput falls below 90% of the rate offered;
2. **saturation**: every client sends its next request as soon as the last returns, for ``--phase-s`` seconds,
   with a full dream cycle (``reverie dream``, every user) running in another process from the start of the phase
   until it ends.

Every phase is bounded in time and requests, every request goes to 127.0.0.1, and the servers and the dream are
stopped at the end. Reported per backend and phase: requests, errors (non-2xx or failed), throughput, p50 / p95 /
p99, the load average; and a PNG plot of latency against offered load (``--plot``).

Usage::

    PYTHONPATH=src .venv/bin/python bench/load.py --workdir /tmp/reverie-load --plot bench/results/load.png
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import cold_search
import scale
import tenants
from _benchlib import RESULTS_DIR, console, finish, fmt, latency_stats, load_average, machine_info, now_iso

#: share of requests that are searches (the rest are adds)
SEARCH_SHARE = 0.8
#: seconds a server may take to answer /readyz after start
START_TIMEOUT_S = 120.0
#: seconds any one request may take before it counts as an error
REQUEST_TIMEOUT_S = 60.0
#: seconds a client keeps an idle connection: below the server's keep-alive timeout (uvicorn: 5 s), so that a client
#: never sends on a connection the server is closing at that moment (a ReadError that says nothing of the server)
KEEPALIVE_S = 4.0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_server(target: str, workers: int, workdir: Path) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    env = {**os.environ, "REVERIE_OPSLOG__PATH": str(workdir / "ops-log.jsonl")}
    cmd = [sys.executable, "-m", "reverie", "serve", "--db", target, "--host", "127.0.0.1", "--port", str(port)]
    cmd += ["--workers", str(workers), "--no-access-log"]
    with (workdir / f"serve-{port}.log").open("wb") as log:  # the child keeps its own copy of the descriptor
        proc = subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    import httpx

    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"the server stopped at start: see {workdir}/serve-{port}.log")
        try:
            if httpx.get(f"{base}/readyz", timeout=2.0).status_code == 200:
                return proc, base
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    stop(proc)
    raise SystemExit(f"the server did not get ready in {START_TIMEOUT_S:.0f} s")


def stop(proc: subprocess.Popen[bytes]) -> None:
    """SIGTERM to the process group (the server and its workers), SIGKILL if it lingers."""
    if proc.poll() is not None:
        return
    os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)


class Workload:
    """The requests: a search (80%) or an add (20%) for a random user, with fresh texts."""

    def __init__(self, users: int, seed: int) -> None:
        self.rng = random.Random(seed)
        self.users = users
        self.queries = scale.make_queries(2000, seed=seed)
        self.texts = scale.sample_texts(2000, seed=seed + 1)
        self.n = 0

    def next(self) -> tuple[str, str, dict[str, Any]]:
        self.n += 1
        user = tenants.user_name(self.rng.randrange(self.users))
        if self.rng.random() < SEARCH_SHARE:
            query = f"{self.rng.choice(self.queries)} #{self.n}"
            return "search", "/v1/search", {"query": query, "user_id": user, "k": 10}
        return "add", "/v1/memories", {"content": f"{self.rng.choice(self.texts)} (note {self.n})", "user_id": user}


async def run_phase(
    base: str, work: Workload, *, clients: int, seconds: float, rate: float | None, max_requests: int
) -> dict[str, Any]:
    """One phase: open loop at ``rate`` requests/s (``None``: closed loop, every client back to back)."""
    import httpx

    lat: dict[str, list[float]] = {"search": [], "add": []}
    errors: list[str] = []
    start = time.perf_counter()
    end = start + seconds
    queue: asyncio.Queue[float | None] = asyncio.Queue()

    async def client(http: httpx.AsyncClient) -> None:
        while True:
            due = await queue.get() if rate is not None else time.perf_counter()
            if due is None or time.perf_counter() >= end + REQUEST_TIMEOUT_S:
                return
            if rate is None and due >= end:
                return
            kind, path, body = work.next()
            try:
                resp = await http.post(path, json=body)
                if resp.status_code >= 300:
                    errors.append(f"{kind} {resp.status_code} {resp.text[:200]}")
            except httpx.HTTPError as exc:
                errors.append(f"{kind} {type(exc).__name__}: {exc}")
            lat[kind].append(time.perf_counter() - due)
            if sum(len(v) for v in lat.values()) + len(errors) >= max_requests:
                return

    limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients, keepalive_expiry=KEEPALIVE_S)
    async with httpx.AsyncClient(base_url=base, timeout=REQUEST_TIMEOUT_S, limits=limits) as http:
        tasks = [asyncio.create_task(client(http)) for _ in range(clients)]
        if rate is not None:
            sent = 0
            while (due := start + sent / rate) < end and sent < max_requests:
                await asyncio.sleep(max(0.0, due - time.perf_counter()))
                queue.put_nowait(due)
                sent += 1
            for _ in tasks:
                queue.put_nowait(None)
        await asyncio.gather(*tasks)
    elapsed = time.perf_counter() - start
    every = lat["search"] + lat["add"]
    return {
        "offered_per_s": rate,
        "seconds": round(elapsed, 1),
        "requests": len(every) + len(errors),
        "errors": len(errors),
        "error_samples": errors[:5],
        "throughput_per_s": round(len(every) / elapsed, 2),
        "latency": latency_stats(every),
        "search": latency_stats(lat["search"]),
        "add": latency_stats(lat["add"]),
        "load_average": load_average(),
    }


def run_backend(name: str, target: str, workers: int, args: argparse.Namespace) -> dict[str, Any]:
    log = console()
    proc, base = start_server(target, workers, args.workdir)
    work = Workload(args.users, args.seed)
    out: dict[str, Any] = {"backend": name, "workers": workers, "phases": []}
    try:
        asyncio.run(run_phase(base, work, clients=args.clients, seconds=5, rate=None, max_requests=50))  # warm-up
        for rate in (float(r) for r in args.rates.split(",")):
            res = asyncio.run(
                run_phase(base, work, clients=args.clients, seconds=args.phase_s, rate=rate, max_requests=args.max_req)
            )
            out["phases"].append(res)
            log.print(
                f"{name} offered {rate:5.1f}/s: {res['throughput_per_s']:6.2f}/s"
                f" p50 {fmt(res['latency'].get('p50_ms'), 1)}"
                f" p95 {fmt(res['latency'].get('p95_ms'), 1)} p99 {fmt(res['latency'].get('p99_ms'), 1)} ms,"
                f" errors {res['errors']}, load {res['load_average']}"
            )
            p95 = res["latency"].get("p95_ms", 0.0) / 1000
            if p95 > args.max_p95_s or res["throughput_per_s"] < 0.9 * rate:
                break
        dream_cmd = [sys.executable, "-m", "reverie", "dream", "--db", target]
        env = {**os.environ, "REVERIE_OPSLOG__PATH": str(args.workdir / "ops-log.jsonl")}
        with (args.workdir / f"dream-{name}.log").open("wb") as dream_log:
            started = time.perf_counter()
            dreamer = subprocess.Popen(
                dream_cmd, env=env, stdout=dream_log, stderr=subprocess.STDOUT, start_new_session=True
            )
            try:
                res = asyncio.run(
                    run_phase(
                        base, work, clients=args.clients, seconds=args.phase_s, rate=None, max_requests=args.max_req
                    )
                )
            finally:
                dream_running = dreamer.poll() is None
                stop(dreamer)
        res["dream"] = {
            "ran_s": round(time.perf_counter() - started, 1),
            "still_running_at_end": dream_running,
            "exit_code": dreamer.returncode,
        }
        out["saturation"] = res
        log.print(
            f"{name} saturation: {res['throughput_per_s']:.2f}/s p50 {fmt(res['latency'].get('p50_ms'), 1)}"
            f" p95 {fmt(res['latency'].get('p95_ms'), 1)} p99 {fmt(res['latency'].get('p99_ms'), 1)} ms,"
            f" errors {res['errors']}, dream {res['dream']}, load {res['load_average']}"
        )
    finally:
        stop(proc)
    return out


def plot(doc: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 5))
    colours = {"postgres": "tab:blue", "sqlite": "tab:orange"}
    for res in doc["results"]:
        name = res["backend"]
        xs = [p["throughput_per_s"] for p in res["phases"]]
        for pct, style in (("p50_ms", "-"), ("p95_ms", "--"), ("p99_ms", ":")):
            ys = [p["latency"].get(pct, float("nan")) for p in res["phases"]]
            label = f"{name} ({res['workers']} worker{'s' if res['workers'] > 1 else ''}) {pct[:3]}"
            ax.plot(xs, ys, style, marker="o", color=colours.get(name), label=label)
        sat = res["saturation"]
        ax.scatter(
            [sat["throughput_per_s"]],
            [sat["latency"]["p99_ms"]],
            marker="*",
            s=150,
            color=colours.get(name),
            label=f"{name} saturation p99 (dream running)",
        )
    ax.set_xlabel("throughput (requests/s: 80% search, 20% add)")
    ax.set_ylabel("latency (ms, from the moment a request was due)")
    ax.set_yscale("log")
    ax.set_title(f"reverie serve under load, {doc['clients']} clients ({doc['date'][:10]})")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)


def fresh_copies(info: dict[str, Any], workdir: Path, pg: str) -> dict[str, str]:
    """Copies of the seeded stores that this run may change."""
    db = Path(info["targets"]["sqlite"])
    copy = workdir / "load-run.db"
    for old in workdir.glob("load-run.db*"):
        shutil.rmtree(old) if old.is_dir() else old.unlink()
    shutil.copy2(db, copy)
    if (ann := Path(f"{db}.ann")).is_dir():
        shutil.copytree(ann, Path(f"{copy}.ann"))
    name = f"tenants_{info['users']}x{info['per_user']}"
    cold_search.create_database(pg, "load_run", template=name)
    return {"sqlite": str(copy), "postgres": cold_search.database(pg, "load_run")}


def show(doc: dict[str, Any]) -> None:
    for res in doc["results"]:
        sat = res["saturation"]
        console().print(
            f"{res['backend']:9s} ({res['workers']} workers): saturation {sat['throughput_per_s']:.2f}/s,"
            f" p50 {fmt(sat['latency']['p50_ms'], 1)} p95 {fmt(sat['latency']['p95_ms'], 1)}"
            f" p99 {fmt(sat['latency']['p99_ms'], 1)} ms,"
            f" errors {sum(p['errors'] for p in res['phases']) + sat['errors']}"
        )


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--users", type=int, default=1000)
    p.add_argument("--per-user", type=int, default=100)
    p.add_argument("--workdir", type=Path, default=Path("/tmp/reverie-load"))
    p.add_argument("--clients", type=int, default=32)
    p.add_argument("--rates", default="2,4,8,12,16,24,32,48", help="offered loads, requests per second")
    p.add_argument("--phase-s", type=float, default=30.0)
    p.add_argument("--max-req", type=int, default=5000, help="requests per phase at most")
    p.add_argument("--max-p95-s", type=float, default=5.0, help="stop raising the load past this p95")
    p.add_argument("--backends", default="postgres,sqlite")
    p.add_argument("--seed", type=int, default=41)
    p.add_argument("--plot", type=Path, default=RESULTS_DIR / "load.png")
    p.add_argument("--out", type=Path, default=RESULTS_DIR / "load.json")
    args = p.parse_args(argv)
    args.workdir.mkdir(parents=True, exist_ok=True)
    pg = cold_search.server_url(args.workdir)
    info = tenants.prepare(args.users, args.per_user, args.workdir, pg)
    targets = fresh_copies(info, args.workdir, pg)
    doc: dict[str, Any] = {
        "benchmark": "load",
        "date": now_iso(),
        "machine": machine_info(),
        "clients": args.clients,
        "store": {k: info[k] for k in ("users", "per_user", "sqlite_load", "pg_load")},
        "results": [],
    }
    for name in args.backends.split(","):
        doc["results"].append(run_backend(name, targets[name], 2 if name == "postgres" else 1, args))
    plot(doc, args.plot)
    doc["plot"] = str(args.plot)
    return finish(doc, args.out, quiet=False, show=show)


if __name__ == "__main__":
    main(sys.argv[1:])
