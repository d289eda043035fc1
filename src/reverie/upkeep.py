"""Maintenance, export and backup offered by :class:`~reverie.memory.Memory`: the maintenance tick and job
schedule, compaction, re-embedding, code ingestion, the topic index and readable documents, the action
telemetry, the markdown export and the online backup. The methods are mixed into ``Memory``.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from reverie.errors import InvalidInputError
from reverie.memory_base import MemoryBase
from reverie.model import MemoryRecord, Status
from reverie.results import DreamReport
from reverie.store.base import MemoryFilter
from reverie.validation import clean_count, clean_path, clean_scope, clean_when

if TYPE_CHECKING:
    from reverie.dream.schedule import JobSchedule


class Upkeep(MemoryBase):
    """Maintenance, export and backup (mixed into ``Memory``)."""

    def reembed(self, *, batch_size: int = 128, progress: Callable[[int, int], None] | None = None) -> dict[str, Any]:
        """Embed every memory again with this Memory's embedder and record it as the store's embedder.

        For a store written by another embedder (open it with ``Memory(target, reembed=True)``) or a
        re-embedding that was interrupted (it continues where it stopped: each batch's vectors are
        written with the position reached, in one transaction). ``progress(done, total)`` is called
        after each batch. Stop other processes using the store first. Returns what was done
        (``reembedded``, ``total``, ``source`` and ``target`` identities, ``resumed``)."""
        from reverie.embed import space

        self._settle()
        report = space.reembed(self._store, self.embedder, batch_size=batch_size, progress=progress)
        self._space_mismatch = None
        self.__dict__.pop("_read_pipeline", None)
        self.ops.log("embedder.reembed", **report.as_dict())
        return report.as_dict()

    def tick(self, *, user_id: str | None = None, all_users: bool = True) -> DreamReport:
        """Run the cheap maintenance subset of the dream cycle now (the consolidation design's ``tick()``: cold
        migration, TTL expiry, consolidation — ``dream.schedule.tick_steps``); returns its report.
        It also runs by itself every ``dream.schedule.tick_every`` ingestion cycles."""
        from reverie.dream.schedule import run_tick

        if user_id is not None:
            all_users = False
        return run_tick(self._memory(), user_id=clean_scope(user_id, "user_id"), all_users=bool(all_users))

    def maintain(self, *, user_id: str | None = None, cycle_every: Any = None) -> builtins.list[DreamReport]:
        """Run the maintenance jobs that are due now and return their reports (``[]``: nothing due).

        The jobs of ``dream.schedule.jobs`` each run on their own interval (promotion every 10
        minutes, decay and clustering every 60), and the full dream cycle every ``cycle_every``
        (a duration such as ``"1d"`` or a timedelta; default ``dream.schedule.cycle_every_hours``).
        A job is due when its interval has passed since its steps last ran, by any run: call this as
        often as you like (e.g. once a minute from your own loop); ``reverie dream --every`` and
        ``reverie serve`` (``dream.schedule.server_jobs``) run the same schedule."""
        return self._schedule(user_id=user_id, cycle_every=cycle_every).run_due()

    def maintenance_status(
        self, *, user_id: str | None = None, cycle_every: Any = None
    ) -> builtins.list[dict[str, Any]]:
        """Each scheduled maintenance job: its steps, interval, batch size, last run and next run."""
        return self._schedule(user_id=user_id, cycle_every=cycle_every).status()

    def _schedule(self, *, user_id: Any, cycle_every: Any) -> JobSchedule:
        from datetime import timedelta

        from reverie.dream.schedule import JobSchedule, configured_jobs, parse_duration

        if cycle_every is None:
            every = timedelta(hours=self.settings.dream.schedule.cycle_every_hours)
        elif isinstance(cycle_every, timedelta):
            every = cycle_every
        elif isinstance(cycle_every, str):
            every = parse_duration(cycle_every)
        else:
            raise InvalidInputError("cycle_every must be a duration such as '1d' or a timedelta")
        mem = self._memory()
        return JobSchedule(mem, configured_jobs(mem, cycle_every=every), user_id=clean_scope(user_id, "user_id"))

    def compact(self, *, dedup: bool = True, user_id: str | None = None) -> dict[str, Any]:
        """Memory dedup and index optimisation; returns what it reclaimed.

        ``dedup``: identical active memories of one user and agent (same normalised content) keep one
        copy — the others become superseded by it in the cold store (never deleted), and it counts them
        as confirmations; ``user_id`` limits the dedup to one user. Then expired claims are deleted and
        the store compacts itself (SQLite: vector change-log trim, full-text optimisation, vector index
        rebuild, VACUUM, ANALYZE, WAL truncation; PostgreSQL: VACUUM (ANALYZE), REINDEX CONCURRENTLY).
        The report: ``dedup``, ``claims_removed`` and ``store`` (``bytes_before``, ``bytes_after``,
        ``reclaimed_bytes``, ``rows_removed``, ``index_entries_before``/``after``/``removed``)."""
        from reverie.compaction import deduplicate

        if not isinstance(dedup, bool):
            raise InvalidInputError("dedup must be true or false")
        user = clean_scope(user_id, "user_id")
        now = self.now()
        store = self.store
        report: dict[str, Any] = {"at": now.isoformat()}
        if dedup:
            flt = MemoryFilter(user_id=user, all_users=user is None, statuses=frozenset({Status.ACTIVE}), stores=None)
            report["dedup"] = deduplicate(store, flt, now=now)
        report["claims_removed"] = store.prune_claims(now)
        report["store"] = store.compact().to_dict()
        self.ops.log(
            "compact",
            superseded=report.get("dedup", {}).get("superseded", 0),
            reclaimed_bytes=report["store"]["reclaimed_bytes"],
            seconds=report["store"]["seconds"],
        )
        return report

    def ingest_code(
        self, path: str | Path, *, user_id: str | None = None, agent_id: str | None = None
    ) -> dict[str, Any]:
        """Remember a source tree (or one file) in the codebase layer: one memory per directory (its files),
        per Python module (its docstring and what it defines) and per public class, function and method (its
        signature and docstring's first line), each with its path in the metadata (``code_root``, ``path``,
        ``kind``, ``qualname``, ``line``, ``file_hash``). Python is read with the standard library's ``ast``
        (never imported or run).

        Ingesting the same path again updates exactly what changed: files whose hash is unchanged are not
        parsed, changed memories are updated (re-embedded), new names added, vanished ones and deleted files
        invalidated (never deleted). Returns the report: ``created``, ``updated``, ``unchanged``,
        ``invalidated``, ``changed_files`` and ``skipped`` (path → why: binary, not UTF-8, does not parse, too
        large, symbolic link …; a file that stops parsing keeps the memories of its last good version).
        A missing path raises :class:`NotFoundError`."""
        from reverie import codebase

        root = codebase.resolve_root(path)
        user = clean_scope(user_id, "user_id")
        agent = clean_scope(agent_id, "agent_id")
        report = codebase.IngestReport(str(root))
        walked = codebase.walk(root, self.settings)
        stored = codebase.existing(self.store, str(root), user_id=user, agent_id=agent)
        todo = codebase.plan(walked, stored, self.settings, root=root, report=report)
        codebase.apply(
            self.store,
            todo,
            root=root,
            user_id=user,
            agent_id=agent,
            now=self.now(),
            settings=self.settings,
            embed=self._embed,
            report=report,
        )
        out = report.to_dict()
        self.ops.log(
            "ingest_code",
            root=str(root),
            created=report.created,
            updated=report.updated,
            invalidated=report.invalidated,
            skipped=len(report.skipped),
        )
        return out

    def topic_index(
        self, *, user_id: str | None = None, agent_id: str | None = None, refresh: bool = False
    ) -> dict[str, Any]:
        """What this user's memory is about: the topic words of its sealed memory boxes and the entities its
        active memories name, each with ``memories``, ``boxes``, ``traces``, ``first_seen`` and ``last_seen``
        (most mentioned first). The dream's ``topics`` step keeps it current; ``refresh=True`` (or no index
        yet) builds it now. With ``agent_id``: the entities that agent's memories name, built now (a box holds
        a conversation of every agent, so none is counted). No access is counted."""
        from reverie.documents import agent_topic_index, refresh_topic_indexes, topics_key

        if not isinstance(refresh, bool):
            raise InvalidInputError("refresh must be true or false")
        user = clean_scope(user_id, "user_id")
        agent = clean_scope(agent_id, "agent_id")
        if agent is not None:
            return agent_topic_index(
                self.store, user, agent, now=self.now(), max_topics=self.settings.dream.topics.max_topics
            )
        stored = None if refresh else self.store.get_state(topics_key(user))
        if isinstance(stored, dict):
            return stored
        tc = self.settings.dream.topics
        return refresh_topic_indexes(
            self.store, [user], now=self.now(), max_topics=tc.max_topics, max_boxes=tc.max_boxes
        )[user]

    def documents(self, *, user_id: str | None = None, refresh: bool = False) -> dict[str, Any]:
        """The readable documents the consolidation pass keeps for this user: ``profile`` (the behavioural
        profile, with its line cap), ``entities`` (entity profiles), ``reflections`` (consolidated past 8 KB),
        ``guidelines`` (compression guidelines learned from the action telemetry) and ``topics`` (the topic
        index); a document not made yet is ``None``. ``refresh=True`` builds them all now (as the dream steps
        ``profile``, ``entity_profiles``, ``reflections``, ``guidelines`` and ``topics`` do). No access is
        counted."""
        from reverie.dream.documents import KINDS, state_key

        if not isinstance(refresh, bool):
            raise InvalidInputError("refresh must be true or false")
        user = clean_scope(user_id, "user_id")
        if refresh:
            self.dream(user_id=user, steps=["topics", "profile", "entity_profiles", "reflections", "guidelines"])
        docs: dict[str, Any] = {kind: self.store.get_state(state_key(kind, user)) for kind in KINDS}
        docs["topics"] = self.topic_index(user_id=user)
        return docs

    def action_telemetry(
        self, *, user_id: str | None = None, limit: int = 100, since: datetime | str | None = None
    ) -> builtins.list[dict[str, Any]]:
        """This user's recent write decisions as action telemetry, newest first: each ``action`` of the
        memory-action policy (store_episode, store_note, update_note, create_artifact, summarize_node,
        discard, link_graph) with its ``outcome`` and eligibility context (``confidence``,
        ``lifecycle_state``, ``importance``, ``source``), ``memory_id`` and ``at``."""
        user = clean_scope(user_id, "user_id")
        count = clean_count(limit, "limit", low=1, high=100_000)
        start = clean_when(since, "since")
        return [e.to_dict() for e in self.store.memory_actions(user, since=start, limit=count)]

    def export_markdown(self, path: str | Path, *, user_id: str | None = None) -> dict[str, int]:
        """Write the memory as a markdown tree people can read (the lifecycle design's files): one file per
        memory under ``facts/YYYY-MM-DD/`` (every status and store; ``reverie import`` reads them back), each
        sealed memory box as ``boxes/YYYY-MM-DD/box-<id>.md`` with its memories linked, and the topic index as
        ``state/topics.json`` and ``topics.md``; each user's documents under ``users/<user>/`` (``profile.md``,
        ``entities.md`` and ``entities/<name>.md``, ``reflections.md``, ``compression-guidelines.md``), the recent
        action telemetry as ``state/memory-actions.jsonl``, and each verbatim artifact as
        ``artifacts/YYYY-MM-DD/artifact-<id>.md``. ``user_id``: one user's memories (default: everyone's).
        Returns ``{"memories", "boxes", "topic_indexes", "documents", "entity_profiles", "action_events",
        "artifacts"}``."""
        from reverie import io
        from reverie.documents import artifact_markdown, artifact_path, export_documents, export_user_documents
        from reverie.write.pipeline import ARTIFACT

        user = clean_scope(user_id, "user_id")
        root = clean_path(path)
        if root.exists() and not root.is_dir():
            raise InvalidInputError(f"{root} exists and is not a directory")
        flt = MemoryFilter.everything(user_id=user, all_users=user_id is None)
        users: set[str | None] = {user} if user_id is not None else set()
        records: builtins.list[MemoryRecord] = []
        artifacts: builtins.list[MemoryRecord] = []

        def each() -> Any:
            for batch in self.store.scan(flt):
                for rec in batch:
                    if user_id is None:
                        users.add(rec.user_id)
                    if rec.box_id:
                        records.append(rec.copy(embedding=None))
                    if isinstance(rec.metadata.get(ARTIFACT), dict):
                        artifacts.append(rec.copy(embedding=None))
                    yield rec

        written = io.export_markdown(each(), root)
        ordered = sorted(users, key=lambda u: (u is not None, u or ""))
        indexes = {u: self.topic_index(user_id=u) for u in ordered}
        docs = export_documents(
            self.store,
            records,
            root,
            users=ordered,
            max_boxes=self.settings.dream.topics.max_boxes,
            topic_indexes=indexes,
        )
        docs.update(
            export_user_documents(
                self.store, root, ordered, max_events=self.settings.dream.documents.guidelines.max_events
            )
        )
        docs["artifacts"] = 0
        for rec in artifacts:
            target = root / artifact_path(rec)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(artifact_markdown(rec, rec.metadata[ARTIFACT]), encoding="utf-8")
            docs["artifacts"] += 1
        self.ops.log("export_markdown", memories=written, **docs)
        return {"memories": written, **docs}

    def sync_mirror(self, path: str | Path | None = None) -> dict[str, Any]:
        """Bring the markdown mirror (``mirror.dir``, or the directory ``path``) in step with the memory, both
        ways: what people changed in its files comes back (an edited file updates its memory, with history; a
        deleted file invalidates it; a new file under ``facts/`` is added), then every memory, sealed box and
        document is written (a new directory gets the whole memory). An edit that meets a change in the store is
        a conflict: both are kept (the store's version in ``conflicts/``) and reported. Returns ``{"dir",
        "added", "updated", "invalidated", "conflicts", "errors", "notes", "written", "removed", "failure"}``."""
        from reverie.mirror import mirror_of, sync

        return sync(self._memory(), mirror_of(self._memory(), path)).to_dict()

    def backup(self, dest: str | Path) -> dict[str, Any]:
        """A consistent copy of the live store in the new file ``dest`` (SQLite's online-backup API:
        every write committed before the backup began, while writers go on); PostgreSQL raises
        ConfigError pointing to ``pg_dump``. Returns what was written (path, bytes, integrity, memories)."""
        report = self.store.backup(clean_path(dest, "dest"))
        self.ops.log("backup", path=report.get("path"), bytes=report.get("bytes"), memories=report.get("memories"))
        return report
