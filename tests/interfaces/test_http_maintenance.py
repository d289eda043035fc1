"""REST: compaction, the maintenance schedule and the topic index (both storage backends)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta

import pytest
from fastapi.testclient import TestClient

from reverie import Memory, SettableClock
from reverie.http import create_app


@pytest.fixture
def client(mem: Memory) -> Iterator[TestClient]:
    with TestClient(create_app(mem, dashboard=False)) as c:
        yield c


def test_compact_over_rest(client: TestClient, mem: Memory) -> None:
    for _ in range(3):
        mem.add("The printer on floor 2 needs A4 paper", user_id="u", infer=False)
    res = client.post("/v1/compact", json={"user_id": "u"})
    assert res.status_code == 200, res.text
    body = res.json()
    assert body["dedup"]["superseded"] == 2 and body["store"]["backend"] == mem.store.backend
    assert body["store"]["reclaimed_bytes"] >= 0 and body["store"]["actions"]
    assert client.post("/v1/compact", json={"dedup": False}).json()["dedup"] is None
    bad = client.post("/v1/compact", json={"dedup": "maybe"})
    assert bad.status_code == 422
    assert client.post("/v1/compact", json={"user_id": "\x00"}).status_code == 422


def test_maintenance_schedule_over_rest(client: TestClient, clock: SettableClock) -> None:
    jobs = {j["name"]: j for j in client.get("/v1/maintenance").json()["jobs"]}
    assert jobs["promotion"]["every"] == "10m" and jobs["cycle"]["next_run"] == "now"
    first = client.post("/v1/maintenance/run").json()["reports"]
    assert [r["owner"] != "" for r in first] == [True] and len(first) == 1  # the full cycle
    assert client.post("/v1/maintenance/run").json()["reports"] == []
    clock.advance(timedelta(minutes=10))
    assert len(client.post("/v1/maintenance/run").json()["reports"]) == 1  # promotion
    jobs = {j["name"]: j for j in client.get("/v1/maintenance").json()["jobs"]}
    assert jobs["promotion"]["last_run"] == clock().isoformat()


def test_topics_over_rest(client: TestClient, mem: Memory, clock: SettableClock) -> None:
    for text in ("My sister Lena lives in Hamburg with her two dogs.", "Lena works at the Hamburg clinic."):
        mem.observe(text, user_id="maya", session_id="s1")
    mem.end_session("s1", user_id="maya")
    body = client.get("/v1/topics", params={"user_id": "maya", "refresh": True}).json()
    assert body["user_id"] == "maya" and body["sealed_boxes"] == 1
    assert "hamburg" in [t["topic"] for t in body["topics"]]
