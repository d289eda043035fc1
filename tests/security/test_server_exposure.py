"""What a server gives away about the machine it runs on and the store behind it.

* ``ingest_code`` on an MCP server locked with ``--user`` reads only the directories the operator named
  (``--code-root``): ``/etc``, ``/proc/self``, a ``..`` or a symbolic link leading out are refused — whether
  the path exists or not — and without a code root it reads nothing.
* ``stats`` (REST and MCP) says which users exist (those the caller may see) and names the database
  without its directory: MCP never returns the full path; REST only to an admin.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest
from fastapi.testclient import TestClient

from reverie import Memory


def _package(root: Path) -> Path:
    pkg = root / "app"
    pkg.mkdir(parents=True)
    (pkg / "rates.py").write_text(
        'def convert(amount: float) -> float:\n    """Convert an amount."""\n    return amount\n'
    )
    return pkg


def _call(server: Any, tool: str, **args: Any) -> tuple[bool, Any]:
    from mcp import Client

    from tests.support.mcp_text import text_of

    async def main() -> tuple[bool, Any]:
        async with Client(server) as client:
            res = await client.call_tool(tool, args)
            return bool(res.is_error), text_of(res) if res.is_error else res.structured_content

    return anyio.run(main)


def test_ingest_code_reads_only_the_named_directories(mem: Memory, tmp_path: Path) -> None:
    from reverie.mcp_server import ALL_TOOLS, Defaults, build_server

    roots = tmp_path / "code"
    pkg = _package(roots)
    outside = tmp_path / "private"
    outside.mkdir()
    (outside / "secret.py").write_text("API_KEY = 'hunter2'\n")
    (roots / "link-out").symlink_to(outside)
    server = build_server(mem, Defaults(user_id="maya"), tools=ALL_TOOLS, code_roots=[roots])
    refused = [
        "/etc",
        "/etc/passwd",
        "/proc/self",
        "/proc/self/environ",
        "/nonexistent/at/all",  # refused exactly like a path that exists: no probing
        str(outside),
        str(roots / ".." / "private"),
        str(roots / "link-out"),
        str(roots / "link-out" / "secret.py"),
        "~",
    ]
    for path in refused:
        is_error, said = _call(server, "ingest_code", path=path)
        assert is_error and "PermissionDeniedError:" in said and "outside the directories" in said, path
    assert mem.count(user_id="maya") == 0
    ok, report = _call(server, "ingest_code", path=str(pkg))
    assert not ok and report["created"] >= 2
    is_error, said = _call(server, "ingest_code", path=str(roots / "missing"))
    assert is_error and "NotFoundError:" in said  # inside the roots a missing path is just missing
    assert "hunter2" not in json.dumps([r.content for r in mem.list(user_id="maya", limit=100)])


def test_a_locked_server_without_code_roots_reads_no_code(mem: Memory, tmp_path: Path) -> None:
    from reverie.mcp_server import ALL_TOOLS, Defaults, build_server

    pkg = _package(tmp_path)
    locked = build_server(mem, Defaults(user_id="maya"), tools=ALL_TOOLS)
    is_error, said = _call(locked, "ingest_code", path=str(pkg))
    assert is_error and "PermissionDeniedError:" in said and "--code-root" in said
    # the operator's own full-access server keeps reading what it is given
    ok, report = _call(build_server(mem, tools=ALL_TOOLS), "ingest_code", path=str(pkg), user_id="me")
    assert not ok and report["created"] >= 2


def test_mcp_stats_name_the_users_and_not_the_path(mem: Memory) -> None:
    from reverie.mcp_server import ALL_TOOLS, Defaults, build_server

    mem.add("Maya likes window seats", user_id="maya", infer=False)
    mem.add("Bob likes aisle seats", user_id="bob", infer=False)
    target = str(mem.target)
    locked = build_server(mem, Defaults(user_id="maya"), tools=ALL_TOOLS)
    ok, stats = _call(locked, "stats")
    assert not ok and stats["users"] == [{"user_id": "maya", "memories": 1}]
    full = build_server(mem, tools=ALL_TOOLS)
    ok, everyone = _call(full, "stats")
    assert not ok and {u["user_id"] for u in everyone["users"]} == {"maya", "bob"}
    for data in (stats, everyone):
        assert data["target"] != target and "/" not in data["target"].split("://")[-1].strip("…/"), data["target"]
        if mem.backend == "sqlite":
            assert data["target"] == Path(target).name
        else:
            assert "@" not in data["target"] and "127.0.0.1" not in data["target"]


@pytest.mark.parametrize("admin", [True, False])
def test_rest_stats_name_the_users_the_caller_may_see(mem: Memory, admin: bool) -> None:
    from reverie.http import create_app
    from reverie.inspection import redact_target

    mem.add("Maya likes window seats", user_id="maya", infer=False)
    mem.add("Maya's travel agent booked Lisbon", user_id="maya", agent_id="travel", infer=False)
    mem.add("Bob likes aisle seats", user_id="bob", infer=False)
    _, key = mem.create_api_key(name="k", admin=True) if admin else mem.create_api_key(name="k", users=["maya"])
    _, travel = mem.create_api_key(name="travel", users=["maya"], agents=["travel"])
    with TestClient(create_app(mem, dashboard=False)) as client:
        data = client.get("/v1/stats", headers={"Authorization": f"Bearer {key}"}).json()
        if admin:
            assert {u["user_id"]: u["memories"] for u in data["users"]} == {"maya": 2, "bob": 1}
            assert data["target"] == redact_target(str(mem.target))  # an operator sees where (no password)
        else:
            assert data["users"] == [{"user_id": "maya", "memories": 2}] and data["total"] == 2
            assert "/" not in data["target"].split("://")[-1].strip("…/")
        narrowed = client.get("/v1/stats", headers={"Authorization": f"Bearer {travel}"}).json()
        assert narrowed["users"] == [{"user_id": "maya", "memories": 1}] and narrowed["total"] == 1
