"""Running the REST service: Prometheus metrics, the access log, readiness, local API docs.

* **Metrics** (``GET /metrics``, the Prometheus text format, made by ``prometheus_client``):
  request latency per route, method and status; searches; adds per write action; dream step
  durations of cycles this server ran; and, read from the store at each scrape (so they hold for
  every process sharing it), the number of memories per status and store, the size of the store
  and the step durations of the last dream cycle whoever ran it.
* **Access log**: one line per request on the ``reverie.access`` logger — client, method, path
  (never the query string: a dashboard search puts its words there), status, milliseconds and the
  credential's name. Request bodies are never logged.
* **Readiness** (``GET /readyz``): answers 200 only when a read from the store succeeds.
* **API docs** (``GET /docs``): Swagger UI from the assets of the ``fastapi-offline`` package,
  served by this server — no CDN, so the page works offline.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Iterable, Iterator, Mapping
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

if TYPE_CHECKING:
    from prometheus_client.metrics_core import Metric

    from reverie.memory import Memory

ACCESS_LOGGER = "reverie.access"
#: where prometheus_client keeps the metrics of several processes (one directory shared by the workers)
MULTIPROC_ENV = "PROMETHEUS_MULTIPROC_DIR"
#: latency buckets (seconds): a recall takes milliseconds, a dream cycle or an import many seconds
LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)
STEP_BUCKETS = (0.01, 0.05, 0.1, 0.5, 1.0, 5.0, 10.0, 30.0, 60.0, 300.0, 1800.0)
#: store-wide gauges are read from the store at most this often (a count over every memory is not free)
STORE_GAUGE_TTL_S = 15.0


def swagger_assets() -> Path:
    """The directory holding ``swagger-ui-bundle.js``, ``swagger-ui.css`` and ``favicon.png``."""
    try:
        root = resources.files("fastapi_offline") / "static"
    except ModuleNotFoundError as exc:  # pragma: no cover - the server extra installs it
        from reverie.errors import ConfigError

        raise ConfigError("the API docs need the fastapi-offline package: pip install 'reverie[server]'") from exc
    return Path(str(root))


class Metrics:
    """The server's Prometheus metrics, in a registry of its own (one per app)."""

    def __init__(self, mem: Memory) -> None:
        from prometheus_client import CollectorRegistry, Counter, Histogram

        self.registry = CollectorRegistry(auto_describe=True)
        self.latency = Histogram(
            "reverie_http_request_duration_seconds",
            "Time to answer an HTTP request.",
            ["method", "route", "status"],
            buckets=LATENCY_BUCKETS,
            registry=self.registry,
        )
        self.searches = Counter(
            "reverie_searches", "Searches (recall and context) answered.", ["kind"], registry=self.registry
        )
        self.adds = Counter(
            "reverie_adds",
            "Writes, by what the write path did (CREATE, UPDATE, SKIP, …).",
            ["action"],
            registry=self.registry,
        )
        self.dream_steps = Histogram(
            "reverie_dream_step_duration_seconds",
            "Duration of each dream-cycle step run by this server.",
            ["step"],
            buckets=STEP_BUCKETS,
            registry=self.registry,
        )
        self.store_collector = StoreCollector(mem)
        self.registry.register(self.store_collector)

    def searched(self, kind: str = "search") -> None:
        self.searches.labels(kind=kind).inc()

    def added(self, actions: Iterable[str]) -> None:
        for action in actions:
            self.adds.labels(action=action).inc()

    def dreamed(self, report: Mapping[str, Any]) -> None:
        for step in report.get("steps", []):
            self.dream_steps.labels(step=str(step.get("name"))).observe(float(step.get("seconds") or 0.0))

    def exposition(self) -> bytes:
        """The text format. With several worker processes (``PROMETHEUS_MULTIPROC_DIR`` set, as
        ``reverie serve --workers`` does) the counters and histograms are summed over every worker."""
        from prometheus_client import CollectorRegistry, generate_latest

        if not os.environ.get(MULTIPROC_ENV):
            return bytes(generate_latest(self.registry))
        from prometheus_client import multiprocess

        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry)  # type: ignore[no-untyped-call]
        registry.register(self.store_collector)
        return bytes(generate_latest(registry))


class StoreCollector:
    """Gauges read from the store (cached ``STORE_GAUGE_TTL_S``): memories per status and store, the
    store's size in bytes where the backend can tell, and the last dream cycle's step durations."""

    def __init__(self, mem: Memory) -> None:
        self.mem = mem
        self._cached: tuple[float, list[Metric]] | None = None

    def describe(self) -> list[Metric]:
        return []  # read at scrape time only (registering must not touch the store)

    def collect(self) -> Iterator[Metric]:
        now = time.monotonic()
        if self._cached is None or now - self._cached[0] > STORE_GAUGE_TTL_S:
            self._cached = (now, self._read())
        yield from self._cached[1]

    def _read(self) -> list[Metric]:
        from prometheus_client.core import GaugeMetricFamily

        mem = self.mem
        memories = GaugeMetricFamily(
            "reverie_memories", "Memories in the store, by status and layer.", labels=["status", "layer"]
        )
        for row in mem.layer_counts():
            memories.add_metric([row.status.value, row.layer.value], row.count)
        out: list[Metric] = [memories]
        size = mem.size_bytes()
        if size is not None:
            gauge = GaugeMetricFamily("reverie_store_size_bytes", "Size of the store on disk.")
            gauge.add_metric([], size)
            out.append(gauge)
        last = mem.last_dream()
        if last is not None and last.get("steps"):
            steps = GaugeMetricFamily(
                "reverie_last_dream_step_seconds",
                "Duration of each step of the last dream cycle (any process).",
                labels=["step"],
            )
            for step in last["steps"]:
                steps.add_metric([str(step.get("name"))], float(step.get("seconds") or 0.0))
            out.append(steps)
        return out


class Observe:
    """Outermost ASGI middleware: times every request for the latency histogram and writes the access
    log line (after the guard, so refused requests are counted and logged too)."""

    def __init__(self, app: ASGIApp, *, metrics: Metrics | None, access_log: bool) -> None:
        self.app = app
        self.metrics = metrics
        self.log = logging.getLogger(ACCESS_LOGGER) if access_log else None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        start = time.perf_counter()
        status = 500

        async def send_wrapper(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
            await send(message)

        try:
            await self.app(scope, receive, send_wrapper)
        finally:
            elapsed = time.perf_counter() - start
            route = scope.get("route")
            template = getattr(route, "path", None) or "(unmatched)"
            if self.metrics is not None:
                self.metrics.latency.labels(method=scope.get("method", ""), route=template, status=str(status)).observe(
                    elapsed
                )
            if self.log is not None:
                client = scope.get("client") or ("-", 0)
                state = scope.get("state") or {}
                cred = state.get("credential") if isinstance(state, dict) else None
                self.log.info(
                    '%s "%s %s" %d %.1fms %s',
                    client[0],
                    scope.get("method", ""),
                    scope.get("path", ""),
                    status,
                    elapsed * 1000,
                    getattr(cred, "name", "-"),
                )


__all__ = ["ACCESS_LOGGER", "MULTIPROC_ENV", "Metrics", "Observe", "StoreCollector", "swagger_assets"]
