"""Fuzz every operation of the OpenAPI schema with schemathesis: no input may cause a 500, and
every response must match the documented schema."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

schemathesis = pytest.importorskip("schemathesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from schemathesis.specs.openapi.checks import (  # noqa: E402
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from reverie import Memory, SettableClock  # noqa: E402
from reverie.embed.testing import HashEmbedder  # noqa: E402
from reverie.http import create_app  # noqa: E402


@schemathesis.serializer("application/x-ndjson")
def _ndjson(_ctx: Any, value: Any) -> bytes:
    """The import endpoint takes JSON lines: a generated string is sent as it is."""
    return value.encode("utf-8", "surrogatepass") if isinstance(value, str) else str(value).encode()


@pytest.fixture
def api_schema(tmp_path: Path, clock: SettableClock) -> Iterator[Any]:
    mem = Memory(tmp_path / "fuzz.db", embedder=HashEmbedder(64), clock=clock,
                 config={"opslog": {"path": str(tmp_path / "ops.jsonl")}})
    for i, text in enumerate(["Maya is allergic to penicillin", "The standup moved to 9:30",
                              "Bob prefers aisle seats"]):
        mem.add(text, user_id="maya" if i < 2 else "bob", infer=False)
    app = create_app(mem, dashboard=False)
    yield schemathesis.openapi.from_asgi("/openapi.json", app)
    mem.close()


def operations(api_schema: Any) -> list[Any]:
    return [result.ok() for result in api_schema.get_all_operations()]


def test_schema_covers_every_operation(api_schema: Any) -> None:
    found = {(op.method.upper(), op.path) for op in operations(api_schema)}
    assert len(found) >= 20
    assert {("POST", "/v1/memories"), ("POST", "/v1/search"), ("DELETE", "/v1/memories/{memory_id}"),
            ("POST", "/v1/dream"), ("GET", "/v1/export")} <= found


def test_no_server_errors_and_responses_match_schema(api_schema: Any) -> None:
    """Up to 25 generated requests per operation (the pytest plugin's lazy fixtures do not work with
    pytest 9, so each operation's hypothesis strategy is driven directly)."""
    failures: list[str] = []
    for op in operations(api_schema):

        @given(case=op.as_strategy())
        @settings(max_examples=25, deadline=None, derandomize=True, database=None,
                  suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much,
                                         HealthCheck.data_too_large])
        def check(case: Any) -> None:
            response = case.call()
            assert response.status_code < 500, f"{case.method} {case.formatted_path}: {response.text[:300]}"
            case.validate_response(response, checks=[response_schema_conformance, status_code_conformance,
                                                     content_type_conformance])

        try:
            check()
        except Exception as exc:  # collect every failing operation, then fail once
            failures.append(f"{op.method.upper()} {op.path}: {str(exc)[:1500]}")
    assert not failures, "\n\n".join(failures)
