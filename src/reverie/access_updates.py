"""What every access to a memory writes: the access update of the dynamics (energy, FSRS, dual strength,
counts, access log), Hebbian co-activation of the memories a session used together, and spreading activation
to their neighbours.

A search returns as soon as it has ranked; its access update is deferred and written by the next use of the
store (:meth:`AccessUpdates._settle`). The methods are mixed into :class:`~reverie.memory.Memory`.
"""

from __future__ import annotations

import builtins
import threading
from collections import OrderedDict
from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from reverie.errors import ReverieError
from reverie.memory_base import MemoryBase
from reverie.model import AccessEvent, MemoryRecord, RelationType, Status
from reverie.store.base import Store

if TYPE_CHECKING:
    pass


class AccessUpdates(MemoryBase):
    """The access updates of ``Memory`` (mixed into it)."""

    def _settle(self) -> None:
        """Write the access updates searches left behind, in the calling thread.

        A search returns as soon as it has ranked; its access update (energy, FSRS, counts, access
        log, Hebbian pairs) is written by the next use of the store, so that every later read sees it.
        The next search writes it while its query is being embedded on the other core, off its
        critical path. A failed update is logged (``search.access_failed``) and never fails the
        operation that happened to write it."""
        with self._deferred_lock:
            tasks, self._deferred = self._deferred, []
        for task in tasks:
            try:
                task()
            except ReverieError as exc:
                self.ops.log("search.access_failed", error=str(exc))

    def _touch(
        self,
        records: Sequence[MemoryRecord],
        *,
        kind: str,
        session_id: str | None,
        hebbian: bool = False,
        defer: bool = False,
    ) -> list[MemoryRecord]:
        """What runs on every memory access: update energy, FSRS, dual strength, counts and
        the access log of each record, in one transaction; returns the updated records. ``hebbian``: Hebbian
        co-activation — the best ``read.hebbian_top`` records are co-activated pairwise and get
        +2% stability on top of the access update. ``defer``: computed and written by the next use of the
        store (:meth:`_settle`) instead of now, at the time of the access (returns no records)."""
        if not records:
            return []
        now = self.now()
        if defer:
            chosen = list(records)

            def later() -> None:
                self._access(chosen, now, kind, session_id, hebbian, updated=False)

            with self._deferred_lock:
                self._deferred.append(later)
            return []
        self._settle()
        return self._access(records, now, kind, session_id, hebbian)

    def _access(
        self,
        records: Sequence[MemoryRecord],
        now: datetime,
        kind: str,
        session_id: str | None,
        hebbian: bool,
        *,
        updated: bool = True,
    ) -> list[MemoryRecord]:
        """The access update of ``records`` at ``now``, written in one transaction (see :meth:`_touch`); the
        updated records (``updated``: none when nobody reads them)."""
        from reverie.dynamics.access import on_access
        from reverie.dynamics.tagging import hebbian_stability

        cfg = self.settings.dynamics
        top = self.settings.read.hebbian_top if hebbian else 0
        together = [r.id for r in records[:top]] if top >= 2 and len(records) >= 2 else []
        out: list[MemoryRecord] = []
        batch: list[tuple[str, dict[str, Any]]] = []
        for rec in records:
            changes = on_access(rec, now=now, cfg=cfg)
            if rec.id in together:
                changes["stability"] = hebbian_stability(stability=changes["stability"], cfg=cfg.tagging)
            batch.append((rec.id, changes))
            if updated:
                out.append(rec.copy(**changes, version=rec.version + 1))
        events = [AccessEvent(r.id, now, kind, session_id) for r in records]
        # the memories this access used: a search's best hits (``read.hebbian_top``), a get's memory
        used = [r.id for r in records[: self.settings.read.hebbian_top]] if hebbian else [r.id for r in records]
        pairs = self._sessions.co_accessed(records, used, session_id)
        store = self._store
        with store.transaction():
            store.update_many(batch)
            store.log_access(events)
            if pairs:
                store.bump_coactivations(pairs, now)
            if cfg.tagging.spreading_boost > 0 and used:
                spread_activation(store, used, {r.id for r in records}, cfg.tagging)
        return out


class SessionUse:
    """The memories each open session has used (searched and shown, or read by id), for co-activation
    counting as the energy-model consolidation design counts it: two memories accessed in the same session
    are co-activated once for that session (``weight`` = the number of sessions that used both). A call
    without a session is a session of its own (the memories it used together).

    Bounded, whatever the traffic: at most ``_SESSIONS`` sessions (the least recently used leave first), and
    per session its last ``per_session`` memories with the pairs counted among them (at most
    ``per_session²``). A memory that leaves a session's window takes its counted pairs with it, so it is
    paired again if the session uses it again later. :meth:`end` forgets a session."""

    _SESSIONS = 512

    def __init__(self, per_session: int) -> None:
        self.per_session = per_session
        self._used: OrderedDict[tuple[str | None, str], OrderedDict[str, None]] = OrderedDict()
        #: per session, each memory in its window → the memories it was counted with
        self._counted: dict[tuple[str | None, str], dict[str, set[str]]] = {}
        self._lock = threading.Lock()

    def co_accessed(
        self, records: Sequence[MemoryRecord], used: Sequence[str], session_id: str | None
    ) -> builtins.list[tuple[str, str]]:
        """The co-activation pairs to count for this access: each used memory with every other memory its
        session (per user) used, each pair once per session."""
        from reverie.dynamics.tagging import pair_key

        users = {r.id: r.user_id for r in records}
        pairs: builtins.list[tuple[str, str]] = []
        with self._lock:
            for user in dict.fromkeys(users[i] for i in used if i in users):
                mine = [i for i in used if users.get(i) == user]
                if session_id is None:
                    pairs += [pair_key(a, b) for n, a in enumerate(mine) for b in mine[n + 1 :] if a != b]
                    continue
                seen, counted = self._session((user, session_id))
                for mid in mine:
                    partners = counted.setdefault(mid, set())
                    for other in seen:
                        if other != mid and other not in partners:
                            partners.add(other)
                            counted[other].add(mid)
                            pairs.append(pair_key(mid, other))
                    seen.pop(mid, None)
                    seen[mid] = None
                    while len(seen) > self.per_session:
                        gone, _ = seen.popitem(last=False)
                        for other in counted.pop(gone, ()):
                            counted.get(other, set()).discard(gone)
        return pairs

    def _session(self, key: tuple[str | None, str]) -> tuple[OrderedDict[str, None], dict[str, set[str]]]:
        """The session's window and counted pairs (a new session may push out the least recently used)."""
        seen = self._used.get(key)
        if seen is None:
            seen = self._used[key] = OrderedDict()
            self._counted[key] = {}
            while len(self._used) > self._SESSIONS:
                old, _ = self._used.popitem(last=False)
                self._counted.pop(old, None)
        self._used.move_to_end(key)
        return seen, self._counted[key]

    def size(self) -> tuple[int, int, int]:
        """(sessions, memories in their windows, counted pairs) held now."""
        with self._lock:
            memories = sum(len(s) for s in self._used.values())
            pairs = sum(len(p) for c in self._counted.values() for p in c.values()) // 2
            return len(self._used), memories, pairs

    def end(self, user_id: str | None, session_id: str) -> None:
        with self._lock:
            self._used.pop((user_id, session_id), None)
            self._counted.pop((user_id, session_id), None)


def spread_activation(store: Store, used: Sequence[str], accessed: set[str], cfg: Any) -> None:
    """Neighbour evolution (A-MEM spreading activation): the active memories connected by a relation to a
    memory that was used get ``dynamics.tagging.spreading_boost`` more stability (+2%). Supersedes and
    contradicts links carry no activation; the accessed memories themselves are not boosted again."""
    from reverie.dynamics.tagging import spreading_stability

    types = frozenset(RelationType) - {RelationType.SUPERSEDES, RelationType.CONTRADICTS}
    others = {end for r in store.relations(list(used), types=types) for end in (r.src_id, r.dst_id)} - accessed
    if not others:
        return
    found = store.get(sorted(others))
    store.update_many(
        [
            (mid, {"stability": spreading_stability(stability=rec.stability, cfg=cfg)})
            for mid, rec in found.items()
            if rec.status is Status.ACTIVE
        ]
    )
