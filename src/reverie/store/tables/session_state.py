"""Session state (working memory, synaptic tags, memory boxes) and clusters, written once for both SQL backends."""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from datetime import datetime
from typing import Any, Final

from reverie.store.base import Box, Cluster, SynapticTag, WorkingItem
from reverie.store.tables.backend import SqlBackend
from reverie.store.tables.dialect import Dialect

_BOX_COLUMNS: Final = "id, user_id, session_id, topic, opened_at, last_at, sealed_at, trace_id, memory_count"
_CLUSTER_COLUMNS: Final = 'id, "partition", kind, label, created_at, updated_at, metadata'


def decode_box(d: Dialect, row: Sequence[Any]) -> Box:
    return Box(
        id=row[0],
        user_id=row[1],
        session_id=row[2],
        topic=builtins.list(d.from_json(row[3])),
        opened_at=d.from_ts(row[4]),
        last_at=d.from_ts(row[5]),
        sealed_at=d.opt_from_ts(row[6]),
        trace_id=row[7],
        memory_count=int(row[8]),
    )


def _decode_cluster(d: Dialect, r: Sequence[Any]) -> Cluster:
    return Cluster(r[0], r[1] or None, r[2], d.from_ts(r[4]), d.from_ts(r[5]), label=r[3], metadata=d.from_json(r[6]))


class WorkingMemoryTables(SqlBackend):
    """Working memory and synaptic tags of a session."""

    def put_working(self, items: Sequence[WorkingItem]) -> None:
        if not items:
            return
        d = self.dialect
        rows = [
            (i.session_id, i.memory_id, float(i.importance), int(i.access_count), d.ts(i.added_at),
             d.ts(i.last_accessed))
            for i in items
        ]  # fmt: skip
        with self._writing("put_working") as s:
            s.run_many(
                "INSERT INTO working_memory (session_id, memory_id, importance, access_count, added_at, "
                "last_accessed) VALUES (%s, %s, %s, %s, %s, %s) ON CONFLICT (session_id, memory_id) DO UPDATE SET "
                "importance = excluded.importance, access_count = excluded.access_count, "
                "last_accessed = excluded.last_accessed",
                rows,
            )

    def working(self, session_id: str) -> builtins.list[WorkingItem]:
        d = self.dialect
        with self._reading("working") as s:
            rows = s.rows(
                "SELECT session_id, memory_id, importance, added_at, last_accessed, access_count "
                "FROM working_memory WHERE session_id = %s ORDER BY added_at, memory_id",
                [session_id],
            )
        return [WorkingItem(r[0], r[1], float(r[2]), d.from_ts(r[3]), d.from_ts(r[4]), int(r[5])) for r in rows]

    def remove_working(self, session_id: str, memory_ids: Sequence[str] | None = None) -> int:
        d = self.dialect
        with self._writing("remove_working") as s:
            if memory_ids is None:
                return s.run("DELETE FROM working_memory WHERE session_id = %s", [session_id])
            return s.run(
                f"DELETE FROM working_memory WHERE session_id = %s AND {d.in_ids('memory_id')}",
                [session_id, d.ids(memory_ids)],
            )

    def put_tags(self, tags: Sequence[SynapticTag]) -> None:
        if not tags:
            return
        d = self.dialect
        rows = [(t.memory_id, t.session_id, d.ts(t.tagged_at), d.ts(t.expires_at), bool(t.captured)) for t in tags]
        with self._writing("put_tags") as s:
            s.run_many(
                "INSERT INTO synaptic_tags (memory_id, session_id, tagged_at, expires_at, captured) "
                "VALUES (%s, %s, %s, %s, %s) ON CONFLICT (memory_id, session_id) DO UPDATE SET "
                "tagged_at = excluded.tagged_at, expires_at = excluded.expires_at, captured = excluded.captured",
                rows,
            )

    def active_tags(self, session_id: str, now: datetime) -> builtins.list[SynapticTag]:
        d = self.dialect
        at = d.ts(now)
        with self._reading("active_tags") as s:
            rows = s.rows(
                "SELECT memory_id, session_id, tagged_at, expires_at, captured FROM synaptic_tags "
                "WHERE session_id = %s AND NOT captured AND tagged_at <= %s AND expires_at >= %s "
                "ORDER BY tagged_at, memory_id",
                [session_id, at, at],
            )
        return [SynapticTag(r[0], r[1], d.from_ts(r[2]), d.from_ts(r[3]), bool(r[4])) for r in rows]

    def capture_tags(self, session_id: str, memory_ids: Sequence[str]) -> int:
        if not memory_ids:
            return 0
        d = self.dialect
        with self._writing("capture_tags") as s:
            return s.run(
                "UPDATE synaptic_tags SET captured = TRUE WHERE session_id = %s AND NOT captured "
                f"AND {d.in_ids('memory_id')}",
                [session_id, d.ids(memory_ids)],
            )

    def prune_tags(self, before: datetime) -> int:
        with self._writing("prune_tags") as s:
            return s.run("DELETE FROM synaptic_tags WHERE expires_at < %s", [self.dialect.ts(before)])


class BoxTables(SqlBackend):
    """Memory boxes and clusters, and the erasure of a user's rows in them."""

    def put_clusters(self, clusters: Sequence[Cluster]) -> None:
        if not clusters:
            return
        d = self.dialect
        rows = [
            (c.id, c.user_id or "", c.kind, c.label, d.ts(c.created_at), d.ts(c.updated_at),
             d.json(c.metadata, "cluster metadata"))
            for c in clusters
        ]  # fmt: skip
        members = [(c.id, mid, float(w)) for c in clusters for mid, w in c.members.items()]
        with self._writing("put_clusters") as s:
            s.run_many(
                f"INSERT INTO clusters ({_CLUSTER_COLUMNS}) VALUES (%s, %s, %s, %s, %s, %s, %s) "
                'ON CONFLICT (id) DO UPDATE SET "partition" = excluded."partition", kind = excluded.kind, '
                "label = excluded.label, updated_at = excluded.updated_at, metadata = excluded.metadata",
                rows,
            )
            s.run(f"DELETE FROM cluster_members WHERE {d.in_ids('cluster_id')}", [d.ids([c.id for c in clusters])])
            if members:
                s.run_many("INSERT INTO cluster_members (cluster_id, memory_id, weight) VALUES (%s, %s, %s)", members)

    def clusters(
        self, user_id: str | None, *, all_users: bool = False, kind: str | None = None
    ) -> builtins.list[Cluster]:
        d = self.dialect
        where: builtins.list[str] = []
        params: builtins.list[Any] = []
        if not all_users:
            where.append('"partition" = %s')
            params.append(user_id or "")
        if kind is not None:
            where.append("kind = %s")
            params.append(kind)
        clause = f"WHERE {' AND '.join(where)} " if where else ""
        with self._reading("clusters") as s:
            rows = s.rows(f"SELECT {_CLUSTER_COLUMNS} FROM clusters {clause}ORDER BY created_at, id", params)
            found = {r[0]: _decode_cluster(d, r) for r in rows}
            if found:
                members = s.rows(
                    f"SELECT cluster_id, memory_id, weight FROM cluster_members WHERE {d.in_ids('cluster_id')} "
                    "ORDER BY cluster_id, memory_id",
                    [d.ids(builtins.list(found))],
                )
                for cid, mid, weight in members:
                    found[cid].members[mid] = float(weight)
        return builtins.list(found.values())

    def delete_clusters(self, cluster_ids: Sequence[str]) -> int:
        if not cluster_ids:
            return 0
        d = self.dialect
        with self._writing("delete_clusters") as s:
            s.run(f"DELETE FROM cluster_members WHERE {d.in_ids('cluster_id')}", [d.ids(cluster_ids)])
            return s.run(f"DELETE FROM clusters WHERE {d.in_ids('id')}", [d.ids(cluster_ids)])

    def put_box(self, box: Box) -> None:
        d = self.dialect
        row = (
            box.id, box.user_id or "", box.user_id, box.session_id, d.json(list(box.topic), "box topic"),
            d.ts(box.opened_at), d.ts(box.last_at), d.opt_ts(box.sealed_at), box.trace_id, int(box.memory_count),
        )  # fmt: skip
        with self._writing("put_box") as s:
            s.run(
                'INSERT INTO boxes (id, "partition", user_id, session_id, topic, opened_at, last_at, sealed_at, '
                "trace_id, memory_count) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s) "
                "ON CONFLICT (id) DO UPDATE SET topic = excluded.topic, last_at = excluded.last_at, "
                "sealed_at = excluded.sealed_at, trace_id = excluded.trace_id, memory_count = excluded.memory_count",
                row,
            )

    def open_box(self, user_id: str | None, session_id: str | None) -> Box | None:
        same = self.dialect.same
        with self._reading("open_box") as s:
            rows = s.rows(
                f'SELECT {_BOX_COLUMNS} FROM boxes WHERE "partition" = %s AND user_id {same} %s '
                f"AND session_id {same} %s AND sealed_at IS NULL ORDER BY opened_at DESC, id DESC LIMIT 1",
                [user_id or "", user_id, session_id],
            )
        return decode_box(self.dialect, rows[0]) if rows else None

    def sealed_boxes(self, user_id: str | None, *, limit: int = 50) -> builtins.list[Box]:
        with self._reading("sealed_boxes") as s:
            rows = s.rows(
                f'SELECT {_BOX_COLUMNS} FROM boxes WHERE "partition" = %s AND user_id {self.dialect.same} %s '
                "AND sealed_at IS NOT NULL ORDER BY sealed_at DESC, id DESC LIMIT %s",
                [user_id or "", user_id, max(0, int(limit))],
            )
        return [decode_box(self.dialect, r) for r in rows]

    def box(self, box_id: str) -> Box | None:
        with self._reading("box") as s:
            rows = s.rows(f"SELECT {_BOX_COLUMNS} FROM boxes WHERE id = %s", [box_id])
        return decode_box(self.dialect, rows[0]) if rows else None

    def _partition_rows(self, user_id: str | None, *, dry_run: bool) -> dict[str, int]:
        """Count (``dry_run``) or delete the boxes and clusters of a user partition."""
        part = user_id or ""
        if dry_run:
            with self._reading("delete_partition_rows") as s:
                boxes = s.rows('SELECT count(*) FROM boxes WHERE "partition" = %s', [part])[0][0]
                clusters = s.rows('SELECT count(*) FROM clusters WHERE "partition" = %s', [part])[0][0]
            return {"boxes": int(boxes), "clusters": int(clusters)}
        with self._writing("delete_partition_rows") as s:
            boxes = s.run('DELETE FROM boxes WHERE "partition" = %s', [part])
            s.run(
                'DELETE FROM cluster_members WHERE cluster_id IN (SELECT id FROM clusters WHERE "partition" = %s)',
                [part],
            )
            clusters = s.run('DELETE FROM clusters WHERE "partition" = %s', [part])
        return {"boxes": int(boxes), "clusters": int(clusters)}


__all__ = ["BoxTables", "WorkingMemoryTables", "decode_box"]
