"""The REST API's key routes (``/v1/keys``): list, create and revoke API keys, for admins."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query, Request

from reverie.http import models as m
from reverie.http.security import credential_of


def _key_dict(key: Any) -> dict[str, Any]:
    return {
        "id": key.id,
        "name": key.name,
        "admin": key.admin,
        "users": list(key.user_ids),
        "agents": None if key.agent_ids is None else list(key.agent_ids),
        "created_at": key.created_at.isoformat(),
        "revoked_at": key.revoked_at.isoformat() if key.revoked_at else None,
        "last_used_at": key.last_used_at.isoformat() if key.last_used_at else None,
    }


def routes(r: APIRouter) -> None:
    """API keys, for admins: the same operations as ``reverie keys`` (only a key's hash is stored)."""
    from reverie.http.app import get_memory

    @r.get("/keys", response_model=m.KeyList, tags=["keys"], summary="The API keys (never the keys themselves)")
    def list_keys(request: Request, include_revoked: bool = False) -> dict[str, Any]:
        credential_of(request.scope).require_admin("managing API keys")
        keys = get_memory(request).api_keys(include_revoked=include_revoked)
        return {"items": [_key_dict(k) for k in keys], "total": len(keys)}

    @r.post(
        "/keys",
        status_code=201,
        response_model=m.KeyCreated,
        tags=["keys"],
        summary="Create an API key; the answer holds the key, the only time it is shown",
    )
    def create(request: Request, body: m.KeyRequest) -> dict[str, Any]:
        credential_of(request.scope).require_admin("managing API keys")
        key, token = get_memory(request).create_api_key(
            name=body.name, users=body.users, agents=body.agents or None, admin=body.admin
        )
        _auth(request).keys.forget_cache()  # a first key makes credentials required at once
        return {**_key_dict(key), "key": token}

    @r.delete(
        "/keys/{key_id}",
        response_model=m.KeyOut,
        tags=["keys"],
        summary="Revoke an API key (it stops working at once on this server)",
    )
    def revoke(
        request: Request,
        key_id: m.KeyIdPath,
        force: Annotated[
            bool,
            Query(
                description="Revoke the last active admin key too (refused otherwise: with no admin key left no "
                "key may manage keys, and with no key left the server denies every request)."
            ),
        ] = False,
    ) -> dict[str, Any]:
        credential_of(request.scope).require_admin("managing API keys")
        key = get_memory(request).revoke_api_key(key_id, force=force)
        _auth(request).keys.forget_cache()
        return _key_dict(key)


def _auth(request: Request) -> Any:
    return request.app.state.auth


__all__ = ["routes"]
