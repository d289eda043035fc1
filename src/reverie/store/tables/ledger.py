"""The ledger: history, access log, action telemetry and co-activations, written once for both SQL backends."""

from __future__ import annotations

import builtins
from collections import Counter
from collections.abc import Sequence
from datetime import datetime
from typing import Any, Final

from reverie.model import AccessEvent, ActionEvent, CoActivation, HistoryEvent
from reverie.store.base import MemoryFilter
from reverie.store.tables.backend import SqlBackend
from reverie.store.tables.dialect import Columns, Dialect

_HISTORY: Final[Columns] = (
    ("memory_id", "text"),
    ("event", "text"),
    ("at", "timestamptz"),
    ("reason", "text"),
    ("actor", "text"),
    ("data", "jsonb"),
)
_ACCESS: Final[Columns] = (("memory_id", "text"), ("at", "timestamptz"), ("kind", "text"), ("session_id", "text"))
_ACTIONS: Final[Columns] = (
    ('"partition"', "text"),
    ("agent_id", "text"),
    ("memory_id", "text"),
    ("at", "timestamptz"),
    ("action", "text"),
    ("outcome", "text"),
    ("confidence", "float8"),
    ("lifecycle_state", "text"),
    ("importance", "float8"),
    ("source", "text"),
)
_COACTIVATION: Final[Columns] = (
    ("a_id", "text"),
    ("b_id", "text"),
    ("weight", "int8"),
    ("first_at", "timestamptz"),
    ("last_at", "timestamptz"),
)
_SELECT_HISTORY: Final = "SELECT memory_id, event, at, reason, actor, data, id FROM history"
_SELECT_ACTIONS: Final = (
    'SELECT "partition", agent_id, memory_id, at, action, outcome, confidence, lifecycle_state, importance, '
    "source, id FROM memory_actions"
)


def _history(d: Dialect, r: Sequence[Any]) -> HistoryEvent:
    return HistoryEvent(r[0], r[1], d.from_ts(r[2]), r[3], r[4], d.from_json(r[5]), int(r[6]))


def _action(d: Dialect, r: Sequence[Any]) -> ActionEvent:
    return ActionEvent(
        r[4],
        r[5],
        d.from_ts(r[3]),
        user_id=r[0] or None,
        agent_id=r[1],
        memory_id=r[2],
        confidence=r[6],
        lifecycle_state=r[7],
        importance=r[8],
        source=r[9],
        id=int(r[10]),
    )


class HistoryTables(SqlBackend):
    """History events and per-scope counts."""

    def add_history(self, events: Sequence[HistoryEvent]) -> None:
        if not events:
            return
        d = self.dialect
        rows = [(e.memory_id, e.event, d.ts(e.at), e.reason, e.actor, d.json(e.data, "history data")) for e in events]
        with self._writing("add_history") as s:
            ids = s.insert_ids("history", _HISTORY, rows)
        for event, event_id in zip(events, ids, strict=True):
            event.id = event_id

    def history(self, memory_id: str) -> builtins.list[HistoryEvent]:
        with self._reading("history") as s:
            rows = s.rows(f"{_SELECT_HISTORY} WHERE memory_id = %s ORDER BY at, id", [memory_id])
        return [_history(self.dialect, r) for r in rows]

    def history_at(self, at: datetime, *, actor: str, limit: int = 1000) -> builtins.list[HistoryEvent]:
        with self._reading("history_at") as s:
            rows = s.rows(
                f"{_SELECT_HISTORY} WHERE at = %s AND actor = %s ORDER BY id LIMIT %s",
                [self.dialect.ts(at), actor, max(limit, 0)],
            )
        return [_history(self.dialect, r) for r in rows]

    def redact_history(self, flt: MemoryFilter, mentioning: Sequence[str], *, note: str) -> int:
        """Redact the history events of the memories of ``flt`` whose reason or data name any of the ids
        ``mentioning`` (a reason may quote what a forgotten memory said): the reason becomes ``note`` and the
        data ``{"redacted": note}``. Returns how many events were redacted."""
        names = [m for m in dict.fromkeys(mentioning) if m]
        if not names:
            return 0
        d = self.dialect
        where, params = self._memory_condition(flt, "m")
        with self._writing("redact_history") as s:
            rows = s.rows(
                f"SELECT h.id, h.reason, h.data FROM history h JOIN memories m ON m.id = h.memory_id WHERE {where}",
                params,
            )
            doomed = [
                (note, d.json({"redacted": note}, "history data"), int(r[0]))
                for r in rows
                if any(n in r[1] or n in str(r[2]) for n in names)
            ]
            if doomed:
                s.run_many("UPDATE history SET reason = %s, data = %s WHERE id = %s", doomed)
        return len(doomed)

    def scope_counts(self, *, limit: int = 500) -> builtins.list[dict[str, Any]]:
        d = self.dialect
        with self._reading("scope_counts") as s:
            rows = s.rows(
                "SELECT user_id, agent_id, count(*) AS n, sum(access_count), max(created_at), max(last_accessed_at) "
                "FROM memories GROUP BY user_id, agent_id "
                "ORDER BY n DESC, user_id NULLS FIRST, agent_id NULLS FIRST LIMIT %s",
                [max(limit, 0)],
            )
        return [
            {
                "user_id": r[0],
                "agent_id": r[1],
                "memories": int(r[2]),
                "accesses": int(r[3] or 0),
                "last_written": d.opt_from_ts(r[4]),
                "last_accessed": d.opt_from_ts(r[5]),
            }
            for r in rows
        ]


class AccessTables(SqlBackend):
    """The access log, the action telemetry and co-activation counts."""

    def log_access(self, events: Sequence[AccessEvent]) -> None:
        if not events:
            return
        rows = [(e.memory_id, self.dialect.ts(e.at), e.kind, e.session_id) for e in events]
        with self._writing("log_access") as s:
            s.insert("access_log", _ACCESS, rows)

    def access_events(self, memory_id: str, *, limit: int = 50) -> builtins.list[AccessEvent]:
        with self._reading("access_events") as s:
            rows = s.rows(
                "SELECT memory_id, at, kind, session_id FROM access_log WHERE memory_id = %s "
                "ORDER BY at DESC, id DESC LIMIT %s",
                [memory_id, max(limit, 0)],
            )
        return [AccessEvent(r[0], self.dialect.from_ts(r[1]), r[2], r[3]) for r in rows]

    def access_times(self, memory_ids: Sequence[str], *, limit: int = 100) -> dict[str, builtins.list[datetime]]:
        if not memory_ids or limit <= 0:
            return {}
        d = self.dialect
        with self._reading("access_times") as s:
            rows = s.rows(
                "SELECT memory_id, at FROM (SELECT memory_id, at, row_number() OVER "
                "(PARTITION BY memory_id ORDER BY at DESC, id DESC) AS n FROM access_log "
                f"WHERE {d.in_ids('memory_id')}) AS recent WHERE n <= %s ORDER BY memory_id, at DESC",
                [d.ids(memory_ids), limit],
            )
        out: dict[str, builtins.list[datetime]] = {}
        for memory_id, at in rows:
            out.setdefault(memory_id, []).append(d.from_ts(at))
        return out

    def prune_access_log(self, before: datetime) -> int:
        with self._writing("prune_access_log") as s:
            return s.run("DELETE FROM access_log WHERE at < %s", [self.dialect.ts(before)])

    def log_actions(self, events: Sequence[ActionEvent]) -> None:
        if not events:
            return
        d = self.dialect
        rows = [
            (e.user_id or "", e.agent_id, e.memory_id, d.ts(e.at), e.action, e.outcome, float(e.confidence),
             e.lifecycle_state, float(e.importance), e.source)
            for e in events
        ]  # fmt: skip
        with self._writing("log_actions") as s:
            s.insert("memory_actions", _ACTIONS, rows)

    def memory_actions(
        self, user_id: str | None, *, since: datetime | None = None, limit: int = 1000
    ) -> builtins.list[ActionEvent]:
        if limit <= 0:
            return []
        where, params = '"partition" = %s', [user_id or ""]
        if since is not None:
            where += " AND at >= %s"
            params.append(self.dialect.ts(since))
        with self._reading("memory_actions") as s:
            rows = s.rows(f"{_SELECT_ACTIONS} WHERE {where} ORDER BY at DESC, id DESC LIMIT %s", [*params, limit])
        return [_action(self.dialect, r) for r in rows]

    def prune_memory_actions(self, before: datetime) -> int:
        with self._writing("prune_memory_actions") as s:
            return s.run("DELETE FROM memory_actions WHERE at < %s", [self.dialect.ts(before)])

    def bump_coactivations(self, pairs: Sequence[tuple[str, str]], at: datetime) -> None:
        counts = Counter((min(a, b), max(a, b)) for a, b in pairs if a != b)
        if not counts:
            return
        when = self.dialect.ts(at)
        rows = [(a, b, n, when, when) for (a, b), n in sorted(counts.items())]  # a fixed lock order: no deadlock
        tail = (
            "ON CONFLICT (a_id, b_id) DO UPDATE SET weight = coactivations.weight + excluded.weight, "
            f"last_at = {self.dialect.greatest}(coactivations.last_at, excluded.last_at)"
        )
        with self._writing("bump_coactivations") as s:
            s.insert("coactivations", _COACTIVATION, rows, tail)

    def coactivations(
        self, memory_ids: Sequence[str] | None = None, *, min_weight: int = 1
    ) -> builtins.list[CoActivation]:
        d = self.dialect
        where, params = "weight >= %s", [min_weight]
        if memory_ids is not None:
            if not memory_ids:
                return []
            where += f" AND ({d.in_ids('a_id')} OR {d.in_ids('b_id')})"
            params += [d.ids(memory_ids)] * 2
        with self._reading("coactivations") as s:
            rows = s.rows(
                f"SELECT a_id, b_id, weight, first_at, last_at FROM coactivations WHERE {where} "
                "ORDER BY weight DESC, a_id, b_id",
                params,
            )
        return [CoActivation(r[0], r[1], int(r[2]), d.from_ts(r[3]), d.from_ts(r[4])) for r in rows]


__all__ = ["AccessTables", "HistoryTables"]
