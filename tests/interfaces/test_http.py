"""The REST API through FastAPI's TestClient (both storage backends) and one real uvicorn process."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, Protocol

import httpx
import pytest
from fastapi.testclient import TestClient

from reverie import Memory
from reverie.errors import ConfigError
from reverie.http import create_app
from reverie.http.app import redact_target
from reverie.http.server import build, check_binding
from reverie.model import Status, StoreTier

TOKEN = "s3cret-token-for-tests-0123456789"


@pytest.fixture
def client(mem: Memory) -> Iterator[TestClient]:
    with TestClient(create_app(mem, dashboard=False)) as c:
        yield c


def add(client: TestClient, content: str, **kw: Any) -> str:
    res = client.post("/v1/memories", json={"content": content, **kw})
    assert res.status_code == 201, res.text
    mid: str = res.json()["id"]
    return mid


class Response(Protocol):
    """What a problem check reads of a response (an httpx one, or the test client's)."""

    @property
    def status_code(self) -> int: ...

    @property
    def text(self) -> str: ...

    @property
    def headers(self) -> Mapping[str, str]: ...

    def json(self) -> Any: ...


def assert_problem(res: Response, status: int, error: str) -> dict[str, Any]:
    assert res.status_code == status, res.text
    assert res.headers["content-type"].startswith("application/problem+json")
    body: dict[str, Any] = res.json()
    assert body["status"] == status and body["error"] == error
    assert body["type"] == f"urn:reverie:error:{error}" and body["title"] and body["detail"]
    assert "Traceback" not in res.text
    return body


def test_memory_crud(client: TestClient) -> None:
    res = client.post(
        "/v1/memories",
        json={
            "content": "Maya is allergic to penicillin",
            "user_id": "maya",
            "metadata": {"turn": "S1:3"},
            "source": "human",
        },
    )
    assert res.status_code == 201
    created = res.json()
    assert created["action"] == "CREATE" and created["ids"] == [created["id"]]
    mid = created["id"]
    again = client.post("/v1/memories", json={"content": "Maya is allergic to penicillin.", "user_id": "maya"})
    assert again.json()["action"] == "SKIP" and again.json()["id"] == mid

    got = client.get(f"/v1/memories/{mid}").json()
    assert got["content"] == "Maya is allergic to penicillin" and got["metadata"] == {"turn": "S1:3"}
    assert got["access_count"] == 1 and "embedding" not in got

    listed = client.get("/v1/memories", params={"user_id": "maya"}).json()
    assert [m["id"] for m in listed["items"]] == [mid] and listed["total"] == 1 and listed["next_cursor"] is None
    assert client.get("/v1/memories", params={"user_id": "bob"}).json()["items"] == []

    patched = client.patch(
        f"/v1/memories/{mid}",
        json={"content": "Maya is allergic to amoxicillin", "category": "health", "reason": "corrected"},
    ).json()
    assert patched["content"] == "Maya is allergic to amoxicillin" and patched["category"] == "health"
    assert client.delete(f"/v1/memories/{mid}").status_code == 204
    assert_problem(client.get(f"/v1/memories/{mid}"), 404, "NotFoundError")


def test_search_with_filters_and_explanations(client: TestClient) -> None:
    tea = add(client, "Maya drinks green tea every morning", user_id="maya", metadata={"topic": "food"})
    add(client, "Maya's flight to Lisbon leaves Friday", user_id="maya")
    add(client, "Bob drinks green tea too", user_id="bob")
    res = client.post("/v1/search", json={"query": "green tea", "user_id": "maya", "k": 5})
    results = res.json()["results"]
    assert results[0]["memory"]["id"] == tea and all(r["memory"]["user_id"] == "maya" for r in results)
    assert results[0]["explain"]["channels"] and results[0]["score"] > 0
    only_food = client.post(
        "/v1/search", json={"query": "Maya", "user_id": "maya", "filters": {"metadata": {"topic": "food"}}}
    ).json()["results"]
    assert [r["memory"]["id"] for r in only_food] == [tea]
    none = client.post("/v1/search", json={"query": "tea", "user_id": "maya", "filters": {"layer": ["semantic"]}})
    assert none.json()["results"] == []
    assert_problem(client.post("/v1/search", json={"query": "  ", "user_id": "maya"}), 422, "InvalidInputError")


def test_lifecycle_endpoints(client: TestClient, mem: Memory) -> None:
    mid = add(client, "The deploy key rotates monthly", user_id="ops")
    assert client.post(f"/v1/memories/{mid}/pin").json()["pinned"] is True
    assert client.post(f"/v1/memories/{mid}/promote").json()["layer"] == "episodic"
    body = assert_problem(client.post(f"/v1/memories/{mid}/demote"), 409, "MemoryStateError")
    assert "pinned" in body["detail"]
    assert client.post(f"/v1/memories/{mid}/unpin").json()["pinned"] is False
    assert client.post(f"/v1/memories/{mid}/promote", json={"layer": "semantic"}).json()["layer"] == "semantic"
    assert client.post(f"/v1/memories/{mid}/demote").json()["layer"] == "episodic"
    before = client.get(f"/v1/memories/{mid}").json()["utility"]
    assert client.post(f"/v1/memories/{mid}/feedback", json={"useful": True}).json()["utility"] > before
    inv = client.post(f"/v1/memories/{mid}/invalidate", json={"reason": "moved to OIDC"}).json()
    assert inv["status"] == "invalidated"
    events = client.get(f"/v1/memories/{mid}/history").json()
    assert [e["event"] for e in events] == [
        "created",
        "pinned",
        "promoted",
        "unpinned",
        "promoted",
        "demoted",
        "feedback",
        "invalidated",
    ]
    assert events[2]["data"] == {"from": "working", "to": "episodic", "rule": "manual"}
    strength = client.get(f"/v1/memories/{mid}/strength").json()
    assert {"energy", "retrievability", "retention"} <= set(strength)
    other = add(client, "The staging database moved to a new host", user_id="ops")
    mem.store.update_fields(other, {"status": Status.DORMANT, "store": StoreTier.COLD})
    back = client.post(f"/v1/memories/{other}/reactivate").json()
    assert (back["status"], back["store"]) == ("active", "hot")
    body = assert_problem(client.post(f"/v1/memories/{other}/undo-consolidation"), 409, "MemoryStateError")
    assert "not a consolidation summary" in body["detail"]
    assert strength["energy"]["formula"] and "E0" in strength["energy"]["terms"]
    mem.store.update_fields(mid, {"immutable": True})
    assert_problem(client.patch(f"/v1/memories/{mid}", json={"content": "x"}), 409, "ImmutableMemoryError")
    assert_problem(client.post(f"/v1/memories/{mid}/promote"), 409, "ImmutableMemoryError")


def test_relations_endpoint(client: TestClient, mem: Memory) -> None:
    from reverie.model import Relation, RelationType

    a = add(client, "Maya moved to Lisbon", user_id="maya", infer=False)
    b = add(client, "Maya lives in Porto", user_id="maya", infer=False)
    mem.store.add_relations([Relation(a, b, RelationType.SUPERSEDES, confidence=0.9)])
    rels = [r for r in client.get(f"/v1/memories/{a}/relations").json() if r["type"] == "supersedes"]
    assert [(r["src_id"], r["dst_id"], r["confidence"]) for r in rels] == [(a, b, 0.9)]
    back = client.get(f"/v1/memories/{b}/relations").json()
    assert any(r["src_id"] == a and r["type"] == "supersedes" for r in back)
    assert_problem(client.get("/v1/memories/nope/relations"), 404, "NotFoundError")


def test_stats_dream_reports_and_export(client: TestClient, clock: Any) -> None:
    assert client.get("/v1/dream/reports").json() == {"reports": []}
    facts = [
        "Maya owns a grey cat",
        "The release train leaves Thursdays",
        "Bob's printer is on floor 3",
        "Lisbon trip booked for May",
    ]
    ids = {add(client, fact, user_id="u1" if i % 2 else "u2", infer=False) for i, fact in enumerate(facts)}
    stats = client.get("/v1/stats").json()
    assert stats["total"] == 4 and stats["by_layer"] == {"working": 4}
    assert client.get("/v1/stats", params={"user_id": "u1"}).json()["total"] == 2
    clock.advance(hours=2)
    report = client.post("/v1/dream", json={"steps": ["promote"]}).json()
    assert report["changed"] == 4 and [s["name"] for s in report["steps"]] == ["promote"]
    assert client.get("/v1/dream/reports").json()["reports"] == [report]
    second = client.post("/v1/dream")  # no body: every enabled step
    assert second.status_code == 200
    assert client.get("/v1/dream/reports").json()["reports"] == [second.json(), report]
    assert_problem(client.post("/v1/dream", json={"steps": ["nap"]}), 422, "InvalidInputError")
    res = client.get("/v1/export")
    assert res.headers["content-type"].startswith("application/x-ndjson")
    rows = [json.loads(line) for line in res.text.splitlines()]
    assert {r["id"] for r in rows} == ids and all(r["layer"] == "episodic" for r in rows)
    assert len(client.get("/v1/export", params={"user_id": "u2"}).text.splitlines()) == 2


def test_observe_context_and_end_session(client: TestClient) -> None:
    seen = client.post(
        "/v1/observe", json={"message": "I moved to Lisbon last week!", "user_id": "maya", "session_id": "s1"}
    )
    assert seen.status_code == 200 and seen.json()["results"]
    add(client, "Maya lives in Lisbon", user_id="maya", infer=False)
    block = client.post(
        "/v1/context",
        json={"query": "where does Maya live?", "user_id": "maya", "session_id": "s1", "budget_tokens": 400},
    ).json()
    assert "Lisbon" in block["text"] and block["used_tokens"] <= 400
    report = client.post("/v1/sessions/s1/end", json={"user_id": "maya"}).json()
    assert report["session_id"] == "s1" and isinstance(report["working_cleared"], int)
    assert_problem(client.post("/v1/observe", json={"message": "x", "role": "system"}), 422, "InvalidInputError")
    assert_problem(client.post("/v1/context", json={"query": "x", "budget_tokens": 0}), 422, "InvalidInputError")


def test_validation_errors_are_problems_without_echo(client: TestClient) -> None:
    body = assert_problem(
        client.post("/v1/memories", json={"content": 42, "secret_field": "hunter2"}), 422, "InvalidInputError"
    )
    assert "hunter2" not in json.dumps(body) and body["errors"]
    assert_problem(client.post("/v1/memories", json={"content": "x\u0000y"}), 422, "InvalidInputError")
    assert_problem(client.post("/v1/memories", json={"content": "x", "when": "not a date"}), 422, "InvalidInputError")
    assert_problem(client.get("/v1/memories", params={"limit": 0}), 422, "InvalidInputError")
    assert_problem(client.post("/v1/memories/abc/promote", json={"layer": "attic"}), 422, "InvalidInputError")
    assert_problem(client.get("/v1/nowhere"), 404, "NotFound")
    assert_problem(client.put("/v1/stats"), 405, "MethodNotAllowed")
    assert_problem(
        client.post("/v1/memories", content=b"{not json", headers={"content-type": "application/json"}),
        422,
        "InvalidInputError",
    )


def test_content_too_large(mem: Memory) -> None:
    with TestClient(create_app(mem, max_body=2048, dashboard=False)) as client:
        assert_problem(client.post("/v1/memories", json={"content": "x" * 4000}), 413, "ContentTooLarge")

        def chunks() -> Iterator[bytes]:  # no Content-Length: a streamed body is counted too
            yield b'{"content": "'
            for _ in range(10):
                yield b"y" * 500
            yield b'"}'

        assert_problem(
            client.post("/v1/memories", content=chunks(), headers={"content-type": "application/json"}),
            413,
            "ContentTooLarge",
        )
        assert client.post("/v1/memories", json={"content": "small enough"}).status_code == 201
    with TestClient(create_app(mem, dashboard=False)) as client:  # reverie's own limit (100 KB content)
        assert_problem(client.post("/v1/memories", json={"content": "z" * 150_000}), 413, "ContentTooLargeError")
    assert mem.stats()["total"] == 1


def test_unexpected_errors_never_leak_a_trace(mem: Memory, monkeypatch: pytest.MonkeyPatch) -> None:
    def boom(**_: Any) -> None:
        raise RuntimeError("internal secret /etc/shadow")

    monkeypatch.setattr(mem, "stats", boom)
    with TestClient(create_app(mem, dashboard=False), raise_server_exceptions=False) as client:
        res = client.get("/v1/stats")
        body = assert_problem(res, 500, "InternalError")
        assert "secret" not in res.text and "RuntimeError" not in json.dumps(body)


def test_token_required_when_configured(mem: Memory) -> None:
    with TestClient(create_app(mem, token=TOKEN)) as client:
        assert client.get("/healthz").json()["status"] == "ok"  # liveness stays public
        res = client.get("/v1/stats")
        assert_problem(res, 401, "Unauthorized")
        assert res.headers["www-authenticate"].startswith("Bearer")
        assert_problem(client.get("/v1/stats", headers={"Authorization": "Bearer wrong"}), 401, "Unauthorized")
        assert_problem(client.get("/v1/stats", headers={"Authorization": f"Basic {TOKEN}"}), 401, "Unauthorized")
        assert_problem(client.post("/v1/memories", json={"content": "x"}), 401, "Unauthorized")
        ok = client.get("/v1/stats", headers={"Authorization": f"Bearer {TOKEN}"})
        assert ok.status_code == 200 and ok.json()["total"] == 0
        # the dashboard: browsers are sent to /login, which sets an HMAC cookie (never the token)
        page = client.get("/", headers={"Accept": "text/html"}, follow_redirects=False)
        assert page.status_code == 303 and page.headers["location"] == "/login"
        bad = client.post("/login", data={"token": "nope"}, follow_redirects=False)
        assert bad.status_code == 401 and "neither an API key" in bad.text
        good = client.post("/login", data={"token": TOKEN}, follow_redirects=False)
        assert good.status_code == 303
        cookie = good.headers["set-cookie"]
        assert TOKEN not in cookie and "httponly" in cookie.lower() and "samesite=strict" in cookie.lower()
        assert client.get("/", headers={"Accept": "text/html"}).status_code == 200
        assert client.get("/v1/stats").status_code == 200  # the cookie works for the API calls of the page


def test_host_and_origin_checks(mem: Memory) -> None:
    with TestClient(create_app(mem, allowed_hosts=["testserver"], dashboard=False)) as client:
        assert client.get("/v1/stats").status_code == 200
        assert_problem(client.get("/v1/stats", headers={"Host": "evil.example"}), 403, "Forbidden")
        res = client.post("/v1/memories", json={"content": "x"}, headers={"Origin": "http://evil.example"})
        assert_problem(res, 403, "Forbidden")
        same = client.post("/v1/memories", json={"content": "x"}, headers={"Origin": "http://testserver"})
        assert same.status_code == 201


def test_binding_rules() -> None:
    check_binding("127.0.0.1", None)
    check_binding("::1", None)
    with pytest.raises(ConfigError, match="REVERIE_API_TOKEN"):
        check_binding("0.0.0.0", None)
    with pytest.raises(ConfigError, match="at least 16"):
        check_binding("0.0.0.0", "short")
    check_binding("0.0.0.0", TOKEN)


def test_build_applies_loopback_host_check(mem: Memory) -> None:
    with TestClient(build(mem, host="127.0.0.1", token=None), base_url="http://127.0.0.1:8080") as client:
        assert client.get("/v1/stats").status_code == 200
        assert_problem(client.get("/v1/stats", headers={"Host": "attacker.test:8080"}), 403, "Forbidden")
    with pytest.raises(ConfigError):
        build(mem, host="0.0.0.0", token=None)


def test_redact_target() -> None:
    assert redact_target("postgresql://app:hunter2@db:5432/mem") == "postgresql://app@db:5432/mem"
    assert redact_target("/home/maya/.local/share/reverie/memory.db") == "/home/maya/.local/share/reverie/memory.db"


def test_openapi_schema_is_complete(client: TestClient) -> None:
    spec = client.get("/openapi.json").json()
    paths = spec["paths"]
    for path, ops in {
        "/v1/memories": {"get", "post"},
        "/v1/memories/{memory_id}": {"get", "patch", "delete"},
        "/v1/search": {"post"},
        "/v1/stats": {"get"},
        "/v1/dream": {"post"},
        "/v1/dream/reports": {"get"},
        "/v1/export": {"get"},
        "/v1/memories/{memory_id}/promote": {"post"},
        "/v1/memories/{memory_id}/demote": {"post"},
        "/v1/memories/{memory_id}/history": {"get"},
    }.items():
        assert ops <= set(paths[path]), path
    schemas = spec["components"]["schemas"]
    assert {"MemoryOut", "Problem", "SearchResponse", "StatsOut", "DreamReport"} <= set(schemas)
    assert {"layer", "status", "energy", "stability", "valid_from", "pinned"} <= set(schemas["MemoryOut"]["properties"])
    for path, ops in paths.items():
        for method, op in ops.items():
            assert op.get("summary"), f"{method} {path}"
            if path.startswith("/v1/"):
                assert "404" in op["responses"] and "422" in op["responses"], f"{method} {path}"


def test_real_server_process(tmp_path: Path, spawn: Any) -> None:
    server = spawn("rest", str(tmp_path / "rest.db"))
    with httpx.Client(base_url=server.url, timeout=30) as http:
        assert http.get("/healthz").json()["status"] == "ok"
        mid = http.post("/v1/memories", json={"content": "Standup moved to 9:30", "user_id": "team"}).json()["id"]
        hits = http.post("/v1/search", json={"query": "standup time", "user_id": "team"}).json()["results"]
        assert hits[0]["memory"]["id"] == mid
        res = http.get("/v1/memories/missing")
        assert res.status_code == 404 and res.json()["error"] == "NotFoundError"
        assert "Memory health" in http.get("/").text
        assert http.get("/v1/stats", headers={"Host": "evil.example"}).status_code == 403


def test_real_server_process_with_token(tmp_path: Path, spawn: Any) -> None:
    server = spawn("rest", str(tmp_path / "rest.db"), REVERIE_API_TOKEN=TOKEN)
    with httpx.Client(base_url=server.url, timeout=30) as http:
        assert http.get("/v1/stats").status_code == 401
        assert http.get("/v1/stats", headers={"Authorization": f"Bearer {TOKEN}"}).json()["total"] == 0


def test_lists_page_with_totals_and_a_cursor(client: TestClient) -> None:
    ids = [add(client, f"note number {i} about paging", user_id="pager", infer=False) for i in range(7)]
    seen: list[str] = []
    cursor = None
    pages = 0
    while True:
        params: dict[str, Any] = {"user_id": "pager", "limit": 3, "order_by": "created_at", "descending": False}
        if cursor:
            params["cursor"] = cursor
        page = client.get("/v1/memories", params=params).json()
        assert page["total"] == 7 and len(page["items"]) <= 3
        seen += [m["id"] for m in page["items"]]
        pages += 1
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert pages == 3 and seen == ids  # oldest first, each once
    # a cursor continues the listing it came from, in its order, whatever order the call names
    ascending = client.get("/v1/memories", params={"user_id": "pager", "cursor": page_cursor(client)}).json()
    assert [m["id"] for m in ascending["items"]] == ids[3:] and ascending["offset"] == 3
    for bad in ("garbage!", "3", "3.created_at", "3.colour.asc", "99999999.created_at.asc"):
        assert_problem(client.get("/v1/memories", params={"user_id": "pager", "cursor": bad}), 422, "InvalidInputError")
    users = client.get("/v1/users").json()
    assert {"user_id": "pager", "memories": 7} in users["items"] and users["total"] >= 1


def page_cursor(client: TestClient) -> str:
    """A cursor made for the ascending order (used with the default, descending one)."""
    page = client.get("/v1/memories", params={"user_id": "pager", "limit": 3, "descending": False}).json()
    cursor: str = page["next_cursor"]
    return cursor


def test_a_memory_s_recalls_are_listed(client: TestClient) -> None:
    mid = add(client, "Maya's locker is number 12", user_id="maya", infer=False)
    assert client.get(f"/v1/memories/{mid}/accesses").json() == {"items": [], "total": 0}
    client.get(f"/v1/memories/{mid}")
    client.post("/v1/search", json={"query": "locker number", "user_id": "maya", "session_id": "s9"})
    got = client.get(f"/v1/memories/{mid}/accesses").json()
    assert got["total"] == 2 and [a["kind"] for a in got["items"]] == ["search", "get"]
    assert got["items"][0]["session_id"] == "s9"
    assert client.get(f"/v1/memories/{mid}/accesses", params={"limit": 1}).json()["total"] == 1
    assert_problem(client.get("/v1/memories/nope/accesses"), 404, "NotFoundError")


def test_the_api_names_the_same_values_as_the_engine() -> None:
    """The REST models spell out layers, statuses, stores and sort fields for the OpenAPI schema; they
    are the engine's, no more and no fewer."""
    import typing

    from reverie.http import models
    from reverie.model import Layer
    from reverie.store.base import ORDERABLE_FIELDS

    assert set(typing.get_args(models.LayerName)) == {v.value for v in Layer}
    assert set(typing.get_args(models.StatusName)) == {v.value for v in Status}
    assert set(typing.get_args(models.StoreName)) == {v.value for v in StoreTier}
    assert set(typing.get_args(models.OrderName)) == set(ORDERABLE_FIELDS)
