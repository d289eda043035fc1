"""Running the REST service: Prometheus metrics (read back with the Prometheus client's own parser),
readiness, the OpenAPI security scheme, the access log, a proxy's root path, forwarded headers and
host names, ``--workers`` and the API docs rendered in headless Chromium with every request that
leaves the server blocked."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient

from reverie import Memory
from reverie.errors import ConfigError
from reverie.http import create_app
from reverie.http.server import check_workers

from .test_dashboard import browser, screenshots_dir, shoot  # noqa: F401  (the browser fixture)

SECRET_QUERY = "zebracorn7781"


def _families(text: str) -> dict[str, Any]:
    from prometheus_client.parser import text_string_to_metric_families

    return {f.name: f for f in text_string_to_metric_families(text)}


def _sample(families: dict[str, Any], family: str, name: str, **labels: str) -> float:
    total = 0.0
    found = False
    for s in families[family].samples:
        if s.name == name and all(s.labels.get(k) == v for k, v in labels.items()):
            total += s.value
            found = True
    assert found, (family, name, labels)
    return total


def test_metrics_are_scraped_by_the_prometheus_parser(mem: Memory) -> None:
    with TestClient(create_app(mem)) as client:
        for text in ("Maya drinks green tea", "Maya flies to Lisbon on Friday"):
            assert (
                client.post("/v1/memories", json={"content": text, "user_id": "maya", "infer": False}).status_code
                == 201
            )
        assert client.post("/v1/memories", json={"content": "Maya drinks green tea", "user_id": "maya"}).json()[
            "action"
        ] in ("SKIP", "REINFORCE")
        for _ in range(3):
            assert client.post("/v1/search", json={"query": "tea", "user_id": "maya"}).status_code == 200
        assert client.post("/v1/context", json={"query": "trip", "user_id": "maya"}).status_code == 200
        report = client.post("/v1/dream", json={}).json()
        res = client.get("/metrics")
        assert res.status_code == 200 and res.headers["content-type"].startswith("text/plain")
        fams = _families(res.text)

    assert _sample(fams, "reverie_searches", "reverie_searches_total", kind="search") == 3
    assert _sample(fams, "reverie_searches", "reverie_searches_total", kind="context") == 1
    assert _sample(fams, "reverie_adds", "reverie_adds_total", action="CREATE") == 2
    assert _sample(fams, "reverie_adds", "reverie_adds_total") == 3
    lat = "reverie_http_request_duration_seconds"
    assert _sample(fams, lat, lat + "_count", route="/v1/search", method="POST", status="200") == 3
    assert _sample(fams, lat, lat + "_count", route="/v1/memories", method="POST", status="201") == 3
    assert _sample(fams, lat, lat + "_sum", route="/v1/search") > 0
    steps = [s["name"] for s in report["steps"]]
    assert steps and "decay" in steps
    dream = "reverie_dream_step_duration_seconds"
    for step in steps:
        assert _sample(fams, dream, dream + "_count", step=step) == 1
        assert _sample(fams, "reverie_last_dream_step_seconds", "reverie_last_dream_step_seconds", step=step) >= 0
    assert _sample(fams, "reverie_memories", "reverie_memories") == mem.stats()["total"] == 2
    assert _sample(fams, "reverie_store_size_bytes", "reverie_store_size_bytes") > 10_000


def test_readiness_touches_the_store(mem: Memory, make_memory: Any) -> None:
    with TestClient(create_app(mem, dashboard=False)) as client:
        ready = client.get("/readyz")
        assert ready.status_code == 200 and ready.json()["status"] == "ready"
        assert ready.json()["backend"] == mem.store.backend
        assert client.get("/healthz").status_code == 200
    broken = make_memory()
    broken.store.close()  # the store cannot answer any more: alive, but not ready
    with TestClient(create_app(broken, dashboard=False)) as client:
        res = client.get("/readyz")
        assert res.status_code == 503 and res.json()["error"] == "StoreError"
        assert client.get("/healthz").status_code == 200


def test_openapi_declares_the_bearer_scheme_and_plain_summaries(mem: Memory) -> None:
    with TestClient(create_app(mem, dashboard=False)) as client:
        spec = client.get("/openapi.json").json()
    scheme = spec["components"]["securitySchemes"]["bearer"]
    assert scheme["type"] == "http" and scheme["scheme"] == "bearer" and "reverie keys create" in scheme["description"]
    assert spec["security"] == [{"bearer": []}]
    assert spec["paths"]["/healthz"]["get"]["security"] == [] and spec["paths"]["/readyz"]["get"]["security"] == []
    text = json.dumps(spec)
    assert "seed" not in text.lower()
    for path, ops in spec["paths"].items():
        for method, op in ops.items():
            assert op.get("summary"), (method, path)
    listing = spec["paths"]["/v1/memories"]["get"]["responses"]["200"]["content"]["application/json"]["schema"]
    assert listing == {"$ref": "#/components/schemas/MemoryPage"}
    assert "/v1/users/{user_id}" in spec["paths"]


def test_workers_need_postgresql(mem: Memory) -> None:
    check_workers(mem, 1)
    if mem.store.backend != "postgres":
        with pytest.raises(ConfigError, match="needs PostgreSQL"):
            check_workers(mem, 2)
    else:
        check_workers(mem, 4)
    with pytest.raises(ConfigError):
        check_workers(mem, 0)


def _seeded_db(tmp_path: Path) -> Path:
    from reverie.embed.testing import HashEmbedder

    db = tmp_path / "ops.db"
    with Memory(db, embedder=HashEmbedder(64), config={"opslog": {"enabled": False}}) as m:
        m.add("Maya keeps a spare key under the blue pot", user_id="maya", infer=False)
    return db


def _stop_and_read(server: Any) -> str:
    server.proc.terminate()
    server.proc.wait(timeout=15)
    out: str = server.proc.stderr.read()
    return out


def test_access_log_proxy_headers_root_path_and_allowed_hosts(tmp_path: Path, spawn: Any) -> None:
    db = _seeded_db(tmp_path)
    options = {
        "access_log": True,
        "proxy_headers": True,
        "forwarded_allow_ips": "127.0.0.1",
        "root_path": "/memory",
        "allow_hosts": ["memory.example.com"],
    }
    server = spawn("rest", str(db), "--serve-options", json.dumps(options))
    url = server.url
    with httpx.Client(base_url=url) as http:
        listed = http.get(
            "/v1/memories",
            params={"user_id": "maya"},
            headers={"X-Forwarded-For": "203.0.113.9", "X-Forwarded-Proto": "https"},
        )
        assert listed.status_code == 200 and listed.json()["total"] == 1
        assert http.get("/memories", params={"q": SECRET_QUERY, "user_id": "maya"}).status_code == 200
        assert http.post("/v1/search", json={"query": SECRET_QUERY, "user_id": "maya"}).status_code == 200
        docs = http.get("/docs")
        assert docs.status_code == 200
        assert '"/memory/openapi.json"' in docs.text or "'/memory/openapi.json'" in docs.text
        assert "/memory/static/swagger/swagger-ui-bundle.js" in docs.text
        assert http.get("/healthz", headers={"Host": "memory.example.com"}).status_code == 200
        assert http.get("/healthz", headers={"Host": "evil.example.net"}).status_code == 403
        assert http.get("/static/swagger/swagger-ui.css").status_code == 200
    log = _stop_and_read(server)
    lines = [line for line in log.splitlines() if " access " in line]
    # paths as the client asked for them, the proxy's prefix included; the client the proxy names
    assert any('203.0.113.9 "GET /memory/v1/memories" 200' in line for line in lines), log
    assert any('"POST /memory/v1/search" 200' in line for line in lines), log
    assert any('"GET /memory/healthz" 403' in line for line in lines), log
    assert SECRET_QUERY not in log  # neither the dashboard's query string nor a search body


@pytest.mark.browser
def test_api_docs_render_offline_in_chromium(browser: Any, tmp_path: Path, spawn: Any) -> None:  # noqa: F811
    db = _seeded_db(tmp_path)
    url = spawn("rest", str(db)).url
    page = browser.new_page(viewport={"width": 1200, "height": 900})
    outside: list[str] = []

    def only_the_server(route: Any) -> None:
        if route.request.url.startswith(url):
            route.continue_()
        else:  # the network is off: anything not served by reverie itself fails
            outside.append(route.request.url)
            route.abort("internetdisconnected")

    page.route("**/*", only_the_server)
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(url + "/docs")
    page.wait_for_selector(".swagger-ui .opblock", timeout=20_000)
    assert page.locator(".swagger-ui .info .title").inner_text().startswith("reverie")
    assert page.locator(".swagger-ui .opblock").count() >= 25
    assert page.locator(".swagger-ui .btn.authorize").is_visible()  # the bearer scheme is declared
    assert "Forget everything of one user" in page.locator(".swagger-ui").inner_text()
    shoot(page, screenshots_dir(tmp_path) / "docs.png")
    assert outside == [] and errors == []


def test_the_server_dreams_on_a_schedule(tmp_path: Path, spawn: Any) -> None:
    db = _seeded_db(tmp_path)
    server = spawn("rest", str(db), "--serve-options", json.dumps({"dream_every": 0.5, "access_log": False}))
    with httpx.Client(base_url=server.url) as http:
        deadline = time.monotonic() + 30
        reports: list[Any] = []
        while time.monotonic() < deadline and len(reports) < 2:
            time.sleep(0.25)
            reports = http.get("/v1/dream/reports").json()["reports"]
        assert len(reports) >= 2  # it ran, and again one interval later
        fams = _families(http.get("/metrics").text)
    dream = "reverie_dream_step_duration_seconds"
    assert _sample(fams, dream, dream + "_count", step="decay") >= 2
