"""Schemathesis over the REST API with credentials on: every check (server errors, status codes, content
types, headers, response schemas, schema-valid requests accepted and schema-violating ones refused, the
``Allow`` header, authentication …) in every phase (examples, coverage, fuzzing, stateful), run in process
on the ASGI app. The OpenAPI document must describe what the server does: 0 server errors, 0 mismatches."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

schemathesis = pytest.importorskip("schemathesis")
from schemathesis.config import SchemathesisConfig  # noqa: E402
from schemathesis.engine import events, from_schema  # noqa: E402

from reverie import Memory, SettableClock  # noqa: E402
from reverie.embed.testing import HashEmbedder  # noqa: E402
from reverie.http import create_app  # noqa: E402


@schemathesis.serializer("application/x-ndjson")
def _ndjson(_ctx: Any, value: Any) -> bytes:
    """The import endpoint takes JSON lines: a generated string is sent as it is; anything else (a body of
    the wrong type, in negative tests) is no text at all, so it carries no line."""
    return value.encode("utf-8", "surrogatepass") if isinstance(value, str) else b""


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


TOKEN = "t" * 32


@pytest.fixture
def keyed_app(tmp_path: Path, clock: SettableClock) -> Iterator[tuple[Any, dict[str, str]]]:
    """The API with credentials on: an API token and API keys (an admin, one user, one user's agent)."""
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
        "token": TOKEN,
        "admin": mem.create_api_key(name="admin", admin=True)[1],
        "maya": mem.create_api_key(name="maya", users=["maya"])[1],
        "maya-a1": mem.create_api_key(name="maya-a1", users=["maya"], agents=["a1"])[1],
    }
    yield create_app(mem, token=TOKEN, dashboard=False), keys
    mem.close()


def run_schemathesis(app: Any, key: str, *, max_examples: int) -> tuple[dict[tuple[str, str], str], int, list[str]]:
    """Every phase and every check of schemathesis against ``app`` as the holder of ``key``: the failures
    (operation and check → what was sent and answered), how many test cases ran, and the engine's errors."""
    config = SchemathesisConfig.from_dict(
        {
            "seed": 35,
            "checks": {"enabled": True},
            "phases": {name: {"enabled": True} for name in ("examples", "coverage", "fuzzing", "stateful")},
            "generation": {"max-examples": max_examples},
            "headers": {"Authorization": f"Bearer {key}"},
            "workers": 1,
            "continue-on-failure": True,
        }
    )
    schema = schemathesis.openapi.from_asgi(
        "/openapi.json", app, config=config, headers={"Authorization": f"Bearer {TOKEN}"}
    )
    failures: dict[tuple[str, str], str] = {}
    errors: list[str] = []
    cases = 0
    for event in from_schema(schema).execute():
        if isinstance(event, events.ScenarioFinished):
            recorder = event.recorder
            cases += len(recorder.cases)
            for case_id, checks in recorder.checks.items():
                for check in checks:
                    if check.status.name != "FAILURE":
                        continue
                    case = getattr(recorder.cases.get(case_id), "value", None)
                    response = getattr(recorder.interactions.get(case_id), "response", None)
                    failures.setdefault(
                        (recorder.label, check.name),
                        f"sent {getattr(case, 'path_parameters', None)} {getattr(case, 'query', None)} "
                        f"{getattr(case, 'body', None)!r:.300}; answered "
                        f"{getattr(response, 'status_code', '?')} {getattr(response, 'content', b'')[:300]!r}",
                    )
        elif isinstance(event, events.NonFatalError | events.FatalError):
            errors.append(str(getattr(event, "info", None) or getattr(event, "exception", event))[:500])
    return failures, cases, errors


@pytest.mark.parametrize("who", ["token", "maya-a1"])
def test_schemathesis_finds_no_server_error_and_no_mismatch(keyed_app: Any, who: str) -> None:
    app, keys = keyed_app
    failures, cases, errors = run_schemathesis(app, keys[who], max_examples=5)
    assert not errors, errors
    assert not failures, "\n".join(f"{op} {check}: {what}" for (op, check), what in failures.items())
    assert cases >= 1000
    print(f"schemathesis as {who}: {cases} test cases, every check and phase, 0 server errors, 0 mismatches")
