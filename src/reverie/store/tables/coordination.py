"""Coordination between processes (claims on memories, key/value state) and API keys, written once for both SQL
backends."""

from __future__ import annotations

import builtins
import math
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any, Final

from reverie.errors import InvalidInputError
from reverie.store.base import ApiKey
from reverie.store.tables.backend import SqlBackend
from reverie.store.tables.dialect import Columns, Dialect

_CLAIM: Final[Columns] = (
    ("memory_id", "text"),
    ("owner", "text"),
    ("phase", "text"),
    ("claimed_at", "timestamptz"),
    ("expires_at", "timestamptz"),
)
_KEY_COLUMNS: Final = "id, name, key_hash, admin, user_ids, agent_ids, created_at, revoked_at, last_used_at"


def decode_key(d: Dialect, row: Sequence[Any]) -> ApiKey:
    return ApiKey(
        id=row[0],
        name=row[1],
        key_hash=row[2],
        admin=bool(row[3]),
        user_ids=tuple(d.from_json(row[4])),
        agent_ids=None if row[5] is None else tuple(d.from_json(row[5])),
        created_at=d.from_ts(row[6]),
        revoked_at=d.opt_from_ts(row[7]),
        last_used_at=d.opt_from_ts(row[8]),
    )


class CoordinationTables(SqlBackend):
    """Claims of dream steps on memories and the key/value state."""

    def claim(
        self, memory_ids: Sequence[str], *, owner: str, phase: str, now: datetime, ttl_seconds: float
    ) -> builtins.list[str]:
        if not memory_ids:
            return []
        if not math.isfinite(ttl_seconds) or ttl_seconds <= 0:
            raise InvalidInputError("ttl_seconds must be a positive number")
        d = self.dialect
        ids = builtins.list(dict.fromkeys(memory_ids))
        start, expires = d.ts(now), d.ts(now + timedelta(seconds=ttl_seconds))
        tail = (
            "ON CONFLICT (memory_id) DO UPDATE SET owner = excluded.owner, phase = excluded.phase, "
            "claimed_at = excluded.claimed_at, expires_at = excluded.expires_at "
            "WHERE claims.expires_at < excluded.claimed_at OR claims.owner = excluded.owner"
        )
        with self._writing("claim") as s:
            s.insert("claims", _CLAIM, [(i, owner, phase, start, expires) for i in sorted(ids)], tail)
            held = {
                r[0]
                for r in s.rows(
                    f"SELECT memory_id FROM claims WHERE owner = %s AND {d.in_ids('memory_id')}", [owner, d.ids(ids)]
                )
            }
        return [i for i in ids if i in held]

    def release(self, owner: str, memory_ids: Sequence[str] | None = None) -> int:
        d = self.dialect
        with self._writing("release") as s:
            if memory_ids is None:
                return s.run("DELETE FROM claims WHERE owner = %s", [owner])
            return s.run(f"DELETE FROM claims WHERE owner = %s AND {d.in_ids('memory_id')}", [owner, d.ids(memory_ids)])

    def renew_claims(self, owner: str, *, until: datetime) -> int:
        end = self.dialect.ts(until)
        with self._writing("renew_claims") as s:
            return s.run("UPDATE claims SET expires_at = %s WHERE owner = %s AND expires_at < %s", [end, owner, end])

    def prune_claims(self, before: datetime) -> int:
        with self._writing("prune_claims") as s:
            return s.run("DELETE FROM claims WHERE expires_at < %s", [self.dialect.ts(before)])

    def get_state(self, key: str) -> Any | None:
        with self._reading("get_state") as s:
            rows = s.rows("SELECT value FROM state WHERE key = %s", [key])
        return self.dialect.from_json(rows[0][0]) if rows else None

    def set_state(self, key: str, value: Any) -> None:
        payload = self.dialect.json(value, f"state {key!r}")
        with self._writing("set_state") as s:
            s.run(
                "INSERT INTO state (key, value) VALUES (%s, %s) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                [key, payload],
            )

    def state_items(self) -> builtins.list[tuple[str, Any]]:
        with self._reading("state_items") as s:
            rows = s.rows("SELECT key, value FROM state ORDER BY key")
        return [(r[0], self.dialect.from_json(r[1])) for r in rows]

    def delete_state(self, keys: Sequence[str]) -> int:
        if not keys:
            return 0
        d = self.dialect
        with self._writing("delete_state") as s:
            return s.run(f"DELETE FROM state WHERE {d.in_ids('key')}", [d.ids(keys)])


class KeyTables(SqlBackend):
    """API keys (only their hashes are stored)."""

    def put_api_key(self, key: ApiKey) -> None:
        d = self.dialect
        row = (
            key.id, key.name, key.key_hash, bool(key.admin), d.json(list(key.user_ids), "user_ids"),
            None if key.agent_ids is None else d.json(list(key.agent_ids), "agent_ids"),
            d.ts(key.created_at), d.opt_ts(key.revoked_at), d.opt_ts(key.last_used_at),
        )  # fmt: skip
        with self._writing("put_api_key") as s:
            s.run(f"INSERT INTO api_keys ({_KEY_COLUMNS}) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)", row)

    def api_key(self, key_id: str) -> ApiKey | None:
        with self._reading("api_key") as s:
            rows = s.rows(f"SELECT {_KEY_COLUMNS} FROM api_keys WHERE id = %s", [key_id])
        return decode_key(self.dialect, rows[0]) if rows else None

    def api_keys(self, *, include_revoked: bool = False) -> builtins.list[ApiKey]:
        where = "" if include_revoked else " WHERE revoked_at IS NULL"
        with self._reading("api_keys") as s:
            rows = s.rows(f"SELECT {_KEY_COLUMNS} FROM api_keys{where} ORDER BY created_at, id")
        return [decode_key(self.dialect, r) for r in rows]

    def revoke_api_key(self, key_id: str, at: datetime) -> bool:
        with self._writing("revoke_api_key") as s:
            return (
                s.run(
                    "UPDATE api_keys SET revoked_at = %s WHERE id = %s AND revoked_at IS NULL",
                    [self.dialect.ts(at), key_id],
                )
                > 0
            )

    def touch_api_key(self, key_id: str, at: datetime) -> None:
        with self._writing("touch_api_key") as s:
            s.run("UPDATE api_keys SET last_used_at = %s WHERE id = %s", [self.dialect.ts(at), key_id])


__all__ = ["CoordinationTables", "KeyTables", "decode_key"]
