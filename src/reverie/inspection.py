"""What the operator's tools read beside searching — the ``reverie`` command, the REST API, the dashboard and
the simulator — offered by :class:`~reverie.memory.Memory` so that none of them reaches into the store.

Nothing here counts an access: a person (or a maintenance tool) looking at the memory is not the agent
recalling. The methods are mixed into ``Memory`` (:class:`Inspection`); they read through its store and
clock only.
"""

from __future__ import annotations

import builtins
from collections.abc import Iterator, Sequence
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit, urlunsplit

from reverie.errors import InvalidInputError
from reverie.memory_base import MemoryBase
from reverie.model import HistoryEvent, Layer, MemoryRecord, Relation, RelationType, StoreTier
from reverie.store.base import ApiKey, Box, LayerStats, MemoryFilter, StoreInfo
from reverie.validation import clean_id, clean_scope

if TYPE_CHECKING:
    from reverie.auth import KeyRing
    from reverie.health import Health

#: the state key the store answers for a readiness probe (any key will do: the read is what counts)
READY_KEY = "reverie:ready"


def redact_target(target: str) -> str:
    """A storage target without credentials (``postgresql://user:secret@host`` → ``…//user@host``)."""
    parts = urlsplit(target)
    if parts.scheme and parts.password:
        netloc = parts.netloc.rsplit("@", 1)[1]
        user = parts.username or ""
        return urlunsplit(parts._replace(netloc=f"{user}@{netloc}" if user else netloc))
    return target


#: fields a listing of records for their scope does not need
_LIGHT = frozenset({"embedding", "inputs", "metadata", "importance_channels", "entities"})


def _limit(value: Any, name: str = "limit", most: int = 10_000) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= most:
        raise InvalidInputError(f"{name} must be a whole number from 1 to {most}")
    return value


class Inspection(MemoryBase):
    """Read-only views of a memory for operators' tools (mixed into ``Memory``)."""

    # the store itself -------------------------------------------------------------------------------
    @property
    def backend(self) -> str:
        """``"sqlite"`` or ``"postgres"``."""
        return self.store.backend

    def info(self) -> StoreInfo:
        """What the backend reports about itself: target, schema version, size and index details."""
        return self.store.info()

    def health(self, *, checks: Sequence[str] | None = None) -> Health:
        """What is wrong, checked now (``reverie doctor``): the store answers, the embedding model loads and
        embeds a text (and gives this machine the vectors the store was written with), the configured LLM
        answers, maintenance runs on schedule, the markdown mirror is in step. Each check is ``ok``, ``warn`` or
        ``error`` with one line saying what it found (:mod:`reverie.health`); ``checks`` names the ones to run
        (default: all). It loads the model and sends one request to the LLM endpoint, when one is set."""
        from reverie.health import run_checks

        return run_checks(self._memory(), checks)

    def check_ready(self) -> None:
        """Read from the store once; raises whatever the store raises when it cannot answer."""
        self.store.get_state(READY_KEY)

    def size_bytes(self) -> float | None:
        """Bytes on disk: what the backend reports, else the SQLite file with its write-ahead log."""
        size = self.store.info().details.get("size_bytes")
        if isinstance(size, int | float):
            return float(size)
        path = getattr(self.store, "path", None)
        if isinstance(path, Path) and path.exists():
            return float(sum(p.stat().st_size for p in (path, Path(f"{path}-wal")) if p.exists()))
        return None

    def layer_counts(self) -> builtins.list[LayerStats]:
        """Every user's memories counted per layer and status (the health metrics)."""
        return self.store.stats(MemoryFilter.everything())

    def scopes(self, *, limit: int = 500) -> builtins.list[dict[str, Any]]:
        """Who wrote what: per user and agent, ``memories`` (any status), ``accesses`` (their summed access
        counts), ``last_written`` and ``last_accessed``; most memories first."""
        return self.store.scope_counts(limit=_limit(limit))

    # memories -------------------------------------------------------------------------------------
    def export(self, *, user_id: str | None = None) -> Iterator[MemoryRecord]:
        """Every memory of ``user_id`` (every user's when ``None``) in any status or store, in id order —
        what an export or a backup writes."""
        user = clean_scope(user_id, "user_id")
        for batch in self.store.scan(MemoryFilter.everything(user_id=user, all_users=user is None)):
            yield from batch

    def count_all(self, *, user_id: str | None, cold_only: bool = False) -> int:
        """How many memories ``user_id`` has in any status (only in the cold store with ``cold_only``)."""
        stores = frozenset({StoreTier.COLD}) if cold_only else None
        flt = MemoryFilter.everything(user_id=clean_scope(user_id, "user_id"), all_users=False, stores=stores)
        return self.store.count(flt)

    def peek_many(self, ids: Sequence[str]) -> dict[str, MemoryRecord]:
        """The memories with these full ids that exist (no access counted)."""
        return self.store.get(list(ids)) if ids else {}

    def ids_with_prefix(self, prefix: str, *, limit: int) -> builtins.list[str]:
        """At most ``limit`` full ids that start with ``prefix``, of any user (for a caller that resolves
        prefixes among the memories it may see)."""
        return self.store.ids_with_prefix(prefix, limit=_limit(limit))

    def session_working_layer(self, session_id: str, *, user_id: str | None) -> builtins.list[MemoryRecord]:
        """Every agent's active memories of one session in the working layer (without their embeddings and
        metadata; no access counted) — what ending the session promotes or clears."""
        flt = MemoryFilter(
            user_id=clean_scope(user_id, "user_id"),
            session_id=clean_scope(session_id, "session_id"),
            layers=frozenset({Layer.WORKING}),
        )
        return [r for batch in self.store.scan(flt, omit=_LIGHT) for r in batch]

    def relations(self, memory_id: str) -> builtins.list[Relation]:
        """The relations (both directions) of the memory with this id or unique id prefix."""
        rec = self._require(memory_id)
        return self.store.relations([rec.id])

    def relations_in(
        self, *, user_id: str | None, types: frozenset[RelationType] | None = None
    ) -> builtins.list[Relation]:
        """The relations whose source is one of ``user_id``'s memories (optionally of these types), oldest
        first."""
        flt = MemoryFilter.everything(user_id=clean_scope(user_id, "user_id"), all_users=False)
        return self.store.scope_relations(flt, types=types)

    def access_times(self, memory_id: str, *, limit: int = 100) -> builtins.list[datetime]:
        """The memory's most recent access instants, newest first (what ACT-R activation reads)."""
        rec = self._require(memory_id)
        return self.store.access_times([rec.id], limit=_limit(limit)).get(rec.id, [])

    def sealed_boxes(self, *, user_id: str | None, limit: int = 50) -> builtins.list[Box]:
        """This user's sealed memory boxes (one per finished conversation), most recently sealed first."""
        return self.store.sealed_boxes(clean_scope(user_id, "user_id"), limit=_limit(limit))

    def box(self, box_id: str) -> Box | None:
        """The memory box with this id (sealed or open), or ``None``."""
        return self.store.box(clean_id(box_id, "box id"))

    def verbatim_artifacts(self, *, user_id: str | None, limit: int = 50) -> builtins.list[dict[str, Any]]:
        """This user's verbatim artifacts (text kept word for word beside the memory made of it), newest
        first: ``id``, ``content`` (the memory), ``verbatim`` and ``at``."""
        from reverie.write.pipeline import ARTIFACT

        most = _limit(limit)
        flt = MemoryFilter(
            user_id=clean_scope(user_id, "user_id"),
            categories=frozenset(self.settings.write.policy.artifact_categories),
        )
        recs = self.store.list(flt, limit=most * 4, order_by="created_at")
        return [
            {
                "id": r.id,
                "content": r.content,
                "verbatim": r.metadata[ARTIFACT].get("verbatim", ""),
                "at": r.metadata[ARTIFACT].get("at"),
            }
            for r in recs
            if isinstance(r.metadata.get(ARTIFACT), dict)
        ][:most]

    # maintenance reports ---------------------------------------------------------------------------
    def last_dream(self) -> dict[str, Any] | None:
        """The report of the last dream cycle (any process), ``None`` before the first."""
        report = self.store.get_state("dream:last")
        return report if isinstance(report, dict) else None

    def last_tick(self) -> dict[str, Any] | None:
        """The report of the last automatic tick (any process), ``None`` before the first."""
        report = self.store.get_state("tick:last")
        return report if isinstance(report, dict) else None

    def dream_changes(self, at: datetime, *, limit: int = 1000) -> builtins.list[HistoryEvent]:
        """The history events one dream cycle recorded (it stamps every change of a run with the run's
        time ``at``), oldest first."""
        return self.store.history_at(at, actor="dream", limit=_limit(limit, most=100_000))

    # API keys -------------------------------------------------------------------------------------
    def api_keys(self, *, include_revoked: bool = False) -> builtins.list[ApiKey]:
        """Every API key (the active ones unless ``include_revoked``), oldest first; no secrets."""
        return self.store.api_keys(include_revoked=bool(include_revoked))

    def key_ring(self) -> KeyRing:
        """What the REST API checks API keys with (a short cache over this memory's keys)."""
        from reverie.auth import KeyRing

        return KeyRing(lambda: self.store, clock=self.now)

    def create_api_key(
        self, *, name: str, users: Sequence[str] = (), agents: Sequence[str] | None = None, admin: bool = False
    ) -> tuple[ApiKey, str]:
        """A new API key for the REST API: its record and the key itself (shown this once only)."""
        from reverie.auth import create_key

        return create_key(self.store, name=name, users=users, agents=agents, admin=admin, now=self.now())

    def revoke_api_key(self, key_id: str, *, force: bool = False) -> ApiKey:
        """Revoke a key by id (:class:`~reverie.errors.NotFoundError` if there is no such active key). The
        last active admin key needs ``force=True`` (:class:`~reverie.errors.LastAdminKeyError` otherwise):
        without one, no key may manage keys, and a server with no key left denies every request."""
        from reverie.auth import revoke_key

        return revoke_key(self.store, key_id, now=self.now(), force=force)


__all__ = ["READY_KEY", "Inspection"]
