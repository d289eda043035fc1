"""``reverie keys``: API keys for the REST API (create, list, revoke)."""

from __future__ import annotations

import sys
from typing import Annotated, Any

import typer
import typer.core
from rich.table import Table

from reverie.cli.common import DbOpt, JsonOpt, _memory, _print_json, app, console

keys_app = typer.Typer(
    name="keys",
    help="API keys for the REST API: each key covers some users (optionally some of their agents), or "
    "everything (--admin). Only a key's SHA-256 is stored, in the memory's own store. As soon as one "
    "active key exists, `reverie serve` requires a key (or REVERIE_API_TOKEN) on every request, and "
    "keeps requiring one while it runs: with every key revoked it denies every request.",
    no_args_is_help=True,
)
app.add_typer(keys_app)


@keys_app.command("create")
def keys_create(
    name: Annotated[str, typer.Option("--name", "-n", help="A label for the key (who or what uses it).")],
    db: DbOpt = None,
    users: Annotated[
        list[str] | None, typer.Option("--user", "-u", help="A user the key may read and write (repeat for several).")
    ] = None,
    agents: Annotated[
        list[str] | None,
        typer.Option("--agent", "-a", help="Narrow the key to this agent of its users (repeat for several)."),
    ] = None,
    admin: Annotated[
        bool, typer.Option("--admin", help="Every user, the all-users views, export and the dashboard.")
    ] = False,
    as_json: JsonOpt = False,
) -> None:
    """Create an API key and print it — the only time it is shown."""
    with _memory(db, create=True) as mem:
        key, token = mem.create_api_key(name=name, users=users or (), agents=agents or None, admin=admin)
        if as_json:
            _print_json({**_key_dict(key), "key": token})
            return
        console.print(f"created key [bold]{key.id}[/bold] ({_key_scope(key)})")
        console.print("the key (shown once; give it as 'Authorization: Bearer <key>'):", style="dim")
        sys.stdout.write(token + "\n")


@keys_app.command("list")
def keys_list(
    db: DbOpt = None,
    revoked: Annotated[bool, typer.Option("--all", help="Also list revoked keys.")] = False,
    as_json: JsonOpt = False,
) -> None:
    """List the API keys (never the keys themselves): id, name, scope, created, last used."""
    with _memory(db) as mem:
        keys = mem.api_keys(include_revoked=revoked)
        if as_json:
            _print_json([_key_dict(k) for k in keys])
            return
        table = Table("id", "name", "scope", "created", "last used", "revoked")
        for k in keys:
            table.add_row(k.id, k.name, _key_scope(k), _when(k.created_at), _when(k.last_used_at), _when(k.revoked_at))
        console.print(table if keys else "[dim]no API keys[/dim]")


@keys_app.command("revoke")
def keys_revoke(
    key_id: Annotated[str, typer.Argument(help="The key's id (from `reverie keys list`).")],
    db: DbOpt = None,
    force: Annotated[
        bool,
        typer.Option(
            "--force",
            help="Revoke the last active admin key too (refused otherwise: with no admin key no key may manage "
            "keys, and a server with no key left denies every request).",
        ),
    ] = False,
) -> None:
    """Revoke an API key: it stops working within seconds. A server that needed keys keeps needing them:
    with no key left it denies every request."""
    with _memory(db) as mem:
        key = mem.revoke_api_key(key_id, force=force)
        console.print(f"revoked key {key.id} ({key.name})")


def _key_dict(key: Any) -> dict[str, Any]:
    return {
        "id": key.id,
        "name": key.name,
        "admin": key.admin,
        "users": list(key.user_ids),
        "agents": None if key.agent_ids is None else list(key.agent_ids),
        "created_at": key.created_at.isoformat(),
        "revoked_at": _iso(key.revoked_at),
        "last_used_at": _iso(key.last_used_at),
    }


def _key_scope(key: Any) -> str:
    if key.admin:
        return "admin (every user)"
    scope = "users " + ", ".join(key.user_ids)
    return scope + ("; agents " + ", ".join(key.agent_ids) if key.agent_ids else "")


def _iso(value: Any) -> str | None:
    return None if value is None else str(value.isoformat())


def _when(value: Any) -> str:
    return "—" if value is None else str(value.strftime("%Y-%m-%d %H:%M"))
