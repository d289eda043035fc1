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
    mem = Memory(
        tmp_path / "fuzz.db",
        embedder=HashEmbedder(64),
        clock=clock,
        config={"opslog": {"path": str(tmp_path / "ops.jsonl")}},
    )
    for i, text in enumerate(
        ["Maya is allergic to penicillin", "The standup moved to 9:30", "Bob prefers aisle seats"]
    ):
        mem.add(text, user_id="maya" if i < 2 else "bob", infer=False)
    app = create_app(mem, dashboard=False)
    yield schemathesis.openapi.from_asgi("/openapi.json", app)
    mem.close()


def operations(api_schema: Any) -> list[Any]:
    return [result.ok() for result in api_schema.get_all_operations()]


def test_schema_covers_every_operation(api_schema: Any) -> None:
    found = {(op.method.upper(), op.path) for op in operations(api_schema)}
    assert len(found) >= 20
    assert {
        ("POST", "/v1/memories"),
        ("POST", "/v1/search"),
        ("DELETE", "/v1/memories/{memory_id}"),
        ("POST", "/v1/dream"),
        ("GET", "/v1/export"),
    } <= found


def _fuzz(api_schema: Any, *, headers: dict[str, str] | None = None, examples: int = 25) -> dict[int, int]:
    """Up to ``examples`` generated requests per operation (the pytest plugin's lazy fixtures do not
    work with pytest 9, so each operation's hypothesis strategy is driven directly). Fails on any 5xx
    or schema mismatch; returns the status codes seen."""
    failures: list[str] = []
    statuses: dict[int, int] = {}
    for op in operations(api_schema):

        @given(case=op.as_strategy())
        @settings(
            max_examples=examples,
            deadline=None,
            derandomize=True,
            database=None,
            suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large],
        )
        def check(case: Any) -> None:
            response = case.call(headers=headers)
            statuses[response.status_code] = statuses.get(response.status_code, 0) + 1
            assert response.status_code < 500, f"{case.method} {case.formatted_path}: {response.text[:300]}"
            case.validate_response(
                response, checks=[response_schema_conformance, status_code_conformance, content_type_conformance]
            )

        try:
            check()
        except Exception as exc:  # collect every failing operation, then fail once
            failures.append(f"{op.method.upper()} {op.path}: {str(exc)[:1500]}")
    assert not failures, "\n\n".join(failures)
    return statuses


def test_no_server_errors_and_responses_match_schema(api_schema: Any) -> None:
    _fuzz(api_schema)


@pytest.fixture
def keyed_schema(tmp_path: Path, clock: SettableClock) -> Iterator[tuple[Any, dict[str, str]]]:
    """The API with credentials on: an API token and API keys (admin, one user, one user's agent)."""
    from reverie.auth import create_key

    mem = Memory(
        tmp_path / "fuzz.db",
        embedder=HashEmbedder(64),
        clock=clock,
        config={"opslog": {"path": str(tmp_path / "ops.jsonl")}},
    )
    for i, text in enumerate(
        ["Maya is allergic to penicillin", "The standup moved to 9:30", "Bob prefers aisle seats"]
    ):
        mem.add(text, user_id="maya" if i < 2 else "bob", agent_id="a1" if i == 1 else None, infer=False)
    keys = {
        "admin": create_key(mem.store, name="admin", admin=True, now=clock())[1],
        "maya": create_key(mem.store, name="maya", users=["maya"], now=clock())[1],
        "maya-a1": create_key(mem.store, name="maya-a1", users=["maya"], agents=["a1"], now=clock())[1],
        "token": "t" * 32,
    }
    app = create_app(mem, token=keys["token"], dashboard=False)
    auth = {"Authorization": f"Bearer {keys['token']}"}
    yield schemathesis.openapi.from_asgi("/openapi.json", app, headers=auth), keys
    mem.close()


@pytest.mark.parametrize("who", ["token", "admin", "maya", "maya-a1", "nobody"])
def test_no_server_errors_and_no_schema_mismatch_with_credentials_on(keyed_schema: Any, who: str) -> None:
    api_schema, keys = keyed_schema
    headers = {"Authorization": f"Bearer {keys[who]}"} if who in keys else {}
    statuses = _fuzz(api_schema, headers=headers, examples=25 if who in ("admin", "maya-a1") else 10)
    print(
        f"schemathesis as {who}: {sum(statuses.values())} requests, statuses {dict(sorted(statuses.items()))}, "
        "0 5xx, 0 schema mismatches"
    )
    if who == "nobody":
        assert set(statuses) <= {200, 401}  # only /healthz answers without a credential
    elif who.startswith("maya"):
        assert 403 in statuses and 404 in statuses  # other users' scope refused, other memories unseen
