"""Credentials fail closed under every change of the keys.

A server bound beyond loopback, with API keys and no ``REVERIE_API_TOKEN``, must keep needing a credential
when its keys go away: revoking the last admin key is refused unless forced, and once it is forced and no
key is left the server denies every request (it never falls back to the tokenless laptop default). Every
path that changes keys is tried: REST ``DELETE /v1/keys/{id}``, ``reverie keys revoke`` while the server
runs, and the Python API.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from reverie import Memory
from reverie.auth import key_id_of
from reverie.errors import LastAdminKeyError
from reverie.http.server import build

#: what an anonymous caller tried in the red-team run, and what it got (200, 200, 201)
OPEN_DOORS: list[tuple[str, str, Any]] = [
    ("GET", "/v1/memories?all_users=true", None),
    ("GET", "/v1/export", None),
    ("POST", "/v1/keys", {"name": "mine now", "admin": True}),
    ("GET", "/v1/me", None),
    ("GET", "/v1/stats", None),
]


def _public_server(mem: Memory) -> TestClient:
    """The app ``reverie serve --host 0.0.0.0`` runs (no token), its key cache off so that a revocation
    counts at once (by default within 5 s)."""
    app = build(mem, host="0.0.0.0", token=None)
    app.state.auth.keys.ttl = 0.0
    return TestClient(app)


def _assert_denies_everything(client: TestClient, *bearers: str) -> None:
    for headers in [{}, *({"Authorization": f"Bearer {b}"} for b in bearers)]:
        for method, path, body in OPEN_DOORS:
            res = client.request(method, path, json=body, headers=headers)
            assert res.status_code == 401, (method, path, headers, res.status_code, res.text[:200])


def test_rest_revoking_the_last_admin_key_is_refused_then_forced_closes_the_server(mem: Memory) -> None:
    mem.add("Alice's door code is 4321", user_id="alice", infer=False)
    _, admin = mem.create_api_key(name="ops", admin=True)
    _, alice = mem.create_api_key(name="alice", users=["alice"])
    adm = {"Authorization": f"Bearer {admin}"}
    with _public_server(mem) as client:
        assert client.get("/v1/export").status_code == 401
        # a scoped key goes: the admin key still works, anonymous callers are still refused
        assert client.delete(f"/v1/keys/{key_id_of(alice)}", headers=adm).status_code == 200
        assert client.get("/v1/me", headers=adm).json()["admin"] is True
        _assert_denies_everything(client, alice)
        # the last admin key: refused without force
        refused = client.delete(f"/v1/keys/{key_id_of(admin)}", headers=adm)
        assert refused.status_code == 409 and refused.json()["error"] == "LastAdminKeyError"
        assert "last active admin key" in refused.json()["detail"] and "force" in refused.json()["detail"]
        assert [k.id for k in mem.api_keys()] == [key_id_of(admin)]
        # forced: no key is left, and the server denies everything (before: 200, 200, 201)
        forced = client.delete(f"/v1/keys/{key_id_of(admin)}", params={"force": "true"}, headers=adm)
        assert forced.status_code == 200 and forced.json()["revoked_at"]
        assert mem.api_keys() == []
        _assert_denies_everything(client, admin, alice)
        assert client.get("/healthz").status_code == 200  # liveness stays public
    assert mem.api_keys() == []  # nobody minted a key


def test_a_loopback_server_that_had_keys_keeps_needing_them(mem: Memory) -> None:
    """The same on 127.0.0.1: keys at start mean credentials for as long as the server runs."""
    _, admin = mem.create_api_key(name="ops", admin=True)
    app = build(mem, host="127.0.0.1", token=None, allow_hosts=["testserver"])
    app.state.auth.keys.ttl = 0.0
    with TestClient(app) as client:
        assert client.get("/v1/me").status_code == 401
        mem.revoke_api_key(key_id_of(admin) or "", force=True)
        _assert_denies_everything(client, admin)


def test_a_key_made_while_serving_closes_a_loopback_server_for_good(mem: Memory) -> None:
    """No key at start (the tokenless laptop default: full access); the first key closes the server, and
    revoking it does not open it again."""
    app = build(mem, host="127.0.0.1", token=None, allow_hosts=["testserver"])
    app.state.auth.keys.ttl = 0.0
    with TestClient(app) as client:
        assert client.get("/v1/me").json()["admin"] is True
        made = client.post("/v1/keys", json={"name": "ops", "admin": True})
        assert made.status_code == 201
        admin = made.json()["key"]
        assert client.get("/v1/me").status_code == 401
        adm = {"Authorization": f"Bearer {admin}"}
        assert client.delete(f"/v1/keys/{made.json()['id']}", headers=adm).status_code == 409
        assert client.delete(f"/v1/keys/{made.json()['id']}?force=true", headers=adm).status_code == 200
        _assert_denies_everything(client, admin)


def test_python_api_keeps_the_last_admin_key_unless_forced(mem: Memory) -> None:
    first, _ = mem.create_api_key(name="ops", admin=True)
    second, _ = mem.create_api_key(name="ops 2", admin=True)
    scoped, _ = mem.create_api_key(name="alice", users=["alice"])
    mem.revoke_api_key(first.id)  # another admin key remains
    with pytest.raises(LastAdminKeyError, match="last active admin key"):
        mem.revoke_api_key(second.id)
    assert {k.id for k in mem.api_keys()} == {second.id, scoped.id}
    mem.revoke_api_key(scoped.id)  # a scoped key is never the last admin key
    assert mem.revoke_api_key(second.id, force=True).revoked_at is not None
    assert mem.api_keys() == []


@pytest.mark.model
def test_cli_revoke_while_serving(store_target: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``reverie keys revoke`` in another process's shoes (its own Memory on the same store) while the server
    runs: the last admin key is refused without --force; with it, the server denies everything."""
    from typer.testing import CliRunner

    from reverie.cli import app

    monkeypatch.setenv("REVERIE_OPSLOG__PATH", str(tmp_path / "ops.jsonl"))
    runner = CliRunner()
    with Memory(store_target) as mem:  # the default embedder: the CLI opens the store with it
        mem.add("Bob's locker is number 12", user_id="bob", infer=False)
        key, admin = mem.create_api_key(name="ops", admin=True)
        with _public_server(mem) as client:
            assert client.get("/v1/export", headers={"Authorization": f"Bearer {admin}"}).status_code == 200
            refused = runner.invoke(app, ["keys", "revoke", key.id, "--db", store_target])
            assert refused.exit_code == 1 and "LastAdminKeyError" in refused.output and "--force" in refused.output
            assert client.get("/v1/export", headers={"Authorization": f"Bearer {admin}"}).status_code == 200
            forced = runner.invoke(app, ["keys", "revoke", key.id, "--force", "--db", store_target])
            assert forced.exit_code == 0, forced.output
            _assert_denies_everything(client, admin)
