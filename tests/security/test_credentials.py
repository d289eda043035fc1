"""Credentials: API keys stored hashed, created/listed/revoked from the CLI, presented to REST as bearer
tokens; the single-tenant defaults (tokenless loopback, ``REVERIE_API_TOKEN``); admin-only views; the
dashboard's login; ``Origin: null``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from reverie import InvalidInputError, Memory, NotFoundError
from reverie.auth import FULL_ACCESS, Credential, authenticate, create_key, hash_key, key_id_of, new_key, revoke_key
from reverie.errors import ConfigError, PermissionDeniedError
from reverie.http import create_app


def test_credential_resolves_and_checks_scopes() -> None:
    one = Credential.scoped("alice")
    assert one.user_id(None) == "alice" and one.user_id("alice") == "alice" and one.agent_id("x") == "x"
    with pytest.raises(PermissionDeniedError):
        one.user_id("bob")
    two = Credential("two", users=frozenset({"alice", "bob"}), agents=frozenset({"a1", "a2"}))
    with pytest.raises(InvalidInputError, match="user_id is required"):
        two.user_id(None)
    with pytest.raises(InvalidInputError, match="agent_id is required"):
        two.agent_id(None)
    with pytest.raises(PermissionDeniedError):
        two.agent_id("a3")
    assert Credential.scoped("alice", "a1").agent_id(None) == "a1"
    assert FULL_ACCESS.user_id(None) is None and FULL_ACCESS.admin
    with pytest.raises(PermissionDeniedError):
        one.require_admin("export")
    with pytest.raises(NotFoundError, match="no memory with id m1"):
        one.require_visible(None, "m1")


def test_keys_are_stored_only_as_hashes(mem: Memory) -> None:
    key, token = create_key(mem.store, name="alice's bot", users=["alice"], agents=["bot"], now=mem.now())
    assert key_id_of(token) == key.id and key.key_hash == hash_key(token) and token not in key.key_hash
    stored = mem.store.api_key(key.id)
    assert stored is not None and stored.key_hash == hash_key(token) and stored.user_ids == ("alice",)
    cred = authenticate(mem.store, token)
    assert cred is not None and cred.users == {"alice"} and cred.agents == {"bot"} and cred.key_id == key.id
    assert authenticate(mem.store, token[:-1] + ("A" if token[-1] != "A" else "B")) is None  # wrong secret
    assert authenticate(mem.store, "rvk_" + "0" * 12 + "_x") is None and authenticate(mem.store, "nope") is None
    revoke_key(mem.store, key.id, now=mem.now())
    assert authenticate(mem.store, token) is None
    with pytest.raises(NotFoundError):
        revoke_key(mem.store, key.id, now=mem.now())
    bad_keys: list[dict[str, Any]] = [
        {"users": []},
        {"users": ["alice"], "admin": True},
        {"users": [""]},
        {"users": ["\ud800"]},
    ]
    for bad in bad_keys:
        with pytest.raises(InvalidInputError):
            new_key(name="x", now=mem.now(), **bad)
    if isinstance(mem.target, Path):  # the key is nowhere in the file
        mem.store.rebuild_indexes()
        data = b"".join(p.read_bytes() for p in mem.target.parent.glob("mem.db*") if p.is_file())
        assert token.encode() not in data


def _client(mem: Memory, **kw: Any) -> TestClient:
    app = create_app(mem, **kw)
    app.state.auth.keys.ttl = 0.0  # no cache: a revoked key is refused at once (default: within 5 s)
    return TestClient(app)


def test_rest_with_keys(mem: Memory) -> None:
    alice_id = mem.add("Alice's secret recipe uses cardamom", user_id="alice", infer=False).id
    bob_id = mem.add("Bob's secret recipe uses saffron", user_id="bob", infer=False).id
    with _client(mem) as client:
        # no token, no key: the single-tenant laptop default, full access
        assert client.get("/v1/me").json()["admin"] is True
        assert client.get("/v1/export").status_code == 200
        _, alice = create_key(mem.store, name="alice", users=["alice"], now=mem.now())
        _, admin = create_key(mem.store, name="ops", admin=True, now=mem.now())
        # one active key: every request needs a credential now
        assert client.get("/v1/memories", params={"user_id": "alice"}).status_code == 401
        a = {"Authorization": f"Bearer {alice}"}
        assert client.get("/v1/me", headers=a).json() == {
            "name": "alice",
            "key_id": key_id_of(alice),
            "admin": False,
            "users": ["alice"],
            "agents": None,
        }
        assert client.get(f"/v1/memories/{alice_id}", headers=a).status_code == 200
        for method, path in (
            ("GET", f"/v1/memories/{bob_id}"),
            ("DELETE", f"/v1/memories/{bob_id}"),
            ("PATCH", f"/v1/memories/{bob_id}"),
            ("POST", f"/v1/memories/{bob_id}/pin"),
            ("GET", f"/v1/memories/{bob_id}/history"),
            ("GET", f"/v1/memories/{bob_id}/relations"),
        ):
            res = client.request(method, path, headers=a, json={"category": "x"} if method == "PATCH" else None)
            assert res.status_code == 404, (method, path, res.status_code)
            assert res.json()["detail"] == f"no memory with id {bob_id}"  # the same answer as for no memory
        assert mem.store.get([bob_id])[bob_id].version == 1
        hits = client.post("/v1/search", json={"query": "secret recipe"}, headers=a).json()["results"]
        assert [h["memory"]["id"] for h in hits] == [alice_id]
        for method, path, body in (
            ("POST", "/v1/search", {"query": "recipe", "user_id": "bob"}),
            ("GET", "/v1/memories?all_users=true", None),
            ("GET", "/v1/export", None),
            ("GET", "/v1/stats?user_id=bob", None),
            ("GET", "/v1/dream/reports", None),
            ("POST", "/v1/memories", {"content": "x", "user_id": "bob"}),
        ):
            assert client.request(method, path, json=body, headers=a).status_code == 403, path
        assert client.get("/v1/stats", headers=a).json()["total"] == 1  # its own user's counts
        adm = {"Authorization": f"Bearer {admin}"}
        assert len(client.get("/v1/export", headers=adm).text.splitlines()) == 2
        assert client.get("/v1/stats", headers=adm).json()["total"] == 2
        revoke_key(mem.store, key_id_of(alice) or "", now=mem.now())
        assert client.get("/v1/me", headers=a).status_code == 401


def test_api_token_is_single_tenant_full_access_and_keys_work_beside_it(mem: Memory) -> None:
    token = "t" * 32
    _, alice = create_key(mem.store, name="alice", users=["alice"], now=mem.now())
    with _client(mem, token=token) as client:
        assert client.get("/v1/me").status_code == 401
        assert client.get("/v1/me", headers={"Authorization": f"Bearer {token}"}).json()["admin"] is True
        assert client.get("/v1/me", headers={"Authorization": f"Bearer {alice}"}).json()["users"] == ["alice"]
        assert client.get("/v1/me", headers={"Authorization": "Bearer rvk_000000000000_guess"}).status_code == 401


def test_dashboard_needs_an_admin_credential(mem: Memory) -> None:
    _, alice = create_key(mem.store, name="alice", users=["alice"], now=mem.now())
    _, admin = create_key(mem.store, name="ops", admin=True, now=mem.now())
    with _client(mem) as client:
        assert client.get("/", headers={"Authorization": f"Bearer {alice}"}).status_code == 403
        assert client.get("/", headers={"Accept": "text/html"}, follow_redirects=False).status_code == 303
        assert client.post("/login", data={"token": alice}, follow_redirects=False).status_code == 403
        res = client.post("/login", data={"token": admin}, follow_redirects=False)
        assert res.status_code == 303 and "reverie_session" in res.cookies
        assert admin not in res.headers["set-cookie"]  # the cookie never holds the key
        assert client.get("/").status_code == 200  # the session cookie
        assert client.get("/v1/me").json()["admin"] is True


def test_origin_null_is_foreign(mem: Memory) -> None:
    mid = mem.add("pin me", infer=False).id
    with TestClient(create_app(mem)) as client:
        for origin in ("null", "NULL", " null", "http://evil.example"):
            res = client.post(f"/v1/memories/{mid}/pin", headers={"Origin": origin})
            assert res.status_code == 403, origin
            assert client.post("/v1/dream", headers={"Origin": origin}).status_code == 403
        assert not mem.store.get([mid])[mid].pinned
        assert client.post(f"/v1/memories/{mid}/pin", headers={"Origin": "http://testserver"}).status_code == 200


def test_binding_beyond_loopback_needs_a_token_or_keys() -> None:
    from reverie.http.server import check_binding

    with pytest.raises(ConfigError):
        check_binding("0.0.0.0", None)
    check_binding("0.0.0.0", None, keys_active=True)
    check_binding("0.0.0.0", "t" * 16)
    check_binding("127.0.0.1", None)


@pytest.mark.model
def test_keys_cli_create_list_revoke(store_target: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from typer.testing import CliRunner

    from reverie.cli import app

    monkeypatch.setenv("REVERIE_OPSLOG__PATH", str(tmp_path / "ops.jsonl"))
    runner = CliRunner()
    made = runner.invoke(
        app, ["keys", "create", "--name", "alice's bot", "-u", "alice", "-a", "bot", "--db", store_target, "--json"]
    )
    assert made.exit_code == 0, made.output
    created = json.loads(made.output)
    assert created["users"] == ["alice"] and created["agents"] == ["bot"] and created["key"].startswith("rvk_")
    listed = runner.invoke(app, ["keys", "list", "--db", store_target, "--json"])
    assert [k["id"] for k in json.loads(listed.output)] == [created["id"]] and created["key"] not in listed.output
    bad = runner.invoke(app, ["keys", "create", "--name", "x", "--db", store_target])
    assert bad.exit_code == 1 and "--user" in bad.output
    assert runner.invoke(app, ["keys", "revoke", created["id"], "--db", store_target]).exit_code == 0
    assert json.loads(runner.invoke(app, ["keys", "list", "--db", store_target, "--json"]).output) == []
    assert runner.invoke(app, ["keys", "revoke", created["id"], "--db", store_target]).exit_code == 1


def test_id_prefixes_resolve_only_within_the_scope(mem: Memory) -> None:
    from reverie.scoped import ScopedMemory

    alice = ScopedMemory(mem, Credential.scoped("alice"))
    mine = mem.add("Alice's note", user_id="alice", infer=False).id
    theirs = mem.add("Bob's note", user_id="bob", infer=False).id
    shared = next(n for n in range(len(mine), 0, -1) if theirs.startswith(mine[:n]))  # ids are time-ordered
    assert shared >= 1
    assert alice.peek(mine[:shared]).id == mine  # unique among what alice may see
    assert alice.get(mine[: shared + 1]).id == mine
    with pytest.raises(NotFoundError):
        alice.peek(theirs[: shared + 1])  # bob's memory: the same answer as an unknown id
    with pytest.raises(NotFoundError):
        alice.peek(theirs)
