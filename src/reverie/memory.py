"""The public library object: ``Memory``.

A thin orchestrator: it validates input, asks the embedder for vectors, runs the write path,
the read path, the access updates of the dynamics and the dream cycle, and talks to storage
only through the :class:`~reverie.store.base.Store` contract.
"""

from __future__ import annotations

import atexit
import builtins
import contextlib
import dataclasses
import threading
import weakref
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any

import numpy as np

from reverie._threads import single_blas_thread
from reverie.clock import Clock, ensure_aware, system_clock
from reverie.config import Settings
from reverie.dream.documents import scrub as scrub_documents
from reverie.embed.base import Embedder
from reverie.errors import (
    AmbiguousIdError,
    EmbedderMismatchError,
    ImmutableMemoryError,
    InvalidInputError,
    NotFoundError,
    ReverieError,
)
from reverie.inspection import Inspection
from reverie.model import (
    AccessEvent,
    HistoryEvent,
    Layer,
    MemoryRecord,
    RelationType,
    Status,
    Vector,
    content_hash,
)
from reverie.opslog import OpsLog
from reverie.results import (
    Action,
    AddResult,
    DreamReport,
    Hit,
    SessionEndReport,
    Stats,
    UndoneConsolidation,
)
from reverie.store import open_store
from reverie.store.base import LayerStats, MemoryFilter, Store
from reverie.validation import (
    RecordLimits,
    clean_content,
    clean_count,
    clean_id,
    clean_k,
    clean_label,
    clean_metadata,
    clean_reason,
    clean_record,
    clean_scope,
    clean_source,
    clean_unit,
    clean_when,
    describe_error,
    items_list,
    parse_filters,
    printable,
)
from reverie.write.items import PreparedItem
from reverie.write.pipeline import WritePipeline
from reverie.write.recording import verbatim_actions
from reverie.write.signals.buffer import buffer_key

if TYPE_CHECKING:
    from reverie.dream import DreamServices
    from reverie.dream.schedule import JobSchedule
    from reverie.llm.client import ChatJSON
    from reverie.read.inject import ContextBlock
    from reverie.read.pipeline import ReadPipeline
    from reverie.read.pipeline import Request as ReadRequest

DEFAULT_DB_NAME = "memory.db"


def default_target(settings: Settings) -> Path:
    """The default SQLite file: ``storage.data_dir`` or the user's data directory."""
    if settings.storage.data_dir is not None:
        return Path(settings.storage.data_dir) / DEFAULT_DB_NAME
    import platformdirs

    return Path(platformdirs.user_data_dir("reverie", appauthor=False)) / DEFAULT_DB_NAME


def _resolve_settings(config: Settings | Mapping[str, Any] | None) -> Settings:
    if config is None:
        return Settings.load()
    if isinstance(config, Settings):
        return config
    if isinstance(config, Mapping):
        return Settings.load(**dict(config))
    raise InvalidInputError(f"config must be a Settings object or a mapping, got {type(config).__name__}")


class Memory(Inspection):
    """A long-term memory for agents.

    ``target`` is a SQLite file path (default: under the user's data directory) or a
    ``postgresql://`` URL. ``clock`` is any zero-argument callable returning an aware datetime.
    ``embedder`` defaults to the local multilingual-e5-small (offline); ``llm`` is an optional
    OpenAI-compatible chat client used by the write path and the dream cycle.

    The store remembers which embedder wrote its vectors; opening it with another raises
    :class:`~reverie.EmbedderMismatchError`. ``reembed=True`` opens it anyway, for one purpose:
    call :meth:`reembed` to move every vector to this embedder (any other use raises until then).
    """

    def __init__(
        self,
        target: str | Path | None = None,
        *,
        config: Settings | Mapping[str, Any] | None = None,
        clock: Clock | None = None,
        embedder: Embedder | None = None,
        llm: Any | None = None,
        reembed: bool = False,
    ) -> None:
        self.settings = _resolve_settings(config)
        self._clock_fn: Clock = clock or system_clock
        if embedder is None:
            from reverie.embed import make_embedder

            embedder = make_embedder(self.settings.embedding, clock=self.now)
        if not isinstance(embedder, Embedder):
            raise InvalidInputError("embedder must implement the Embedder protocol (name, dim, profile, embed)")
        self.embedder: Embedder = embedder
        from reverie.llm.official import as_llm

        #: the LLM (``None`` until built from ``llm.base_url`` on first use, or none configured)
        self.llm: ChatJSON | None = as_llm(llm, self.settings.llm, on_call=self._log_llm_call)
        self._owns_llm = self.llm is not None and self.llm is not llm  # built here: closed here
        resolved = default_target(self.settings) if target is None else target
        if not isinstance(resolved, str | Path):
            raise InvalidInputError(f"target must be a path or a postgresql:// URL, got {type(resolved).__name__}")
        if isinstance(resolved, Path) or not str(resolved).startswith(("postgresql://", "postgres://")):
            resolved = Path(resolved).expanduser()
            resolved.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        self.target = resolved
        self._store: Store = open_store(resolved, settings=self.settings.storage, dim=self.embedder.dim)
        try:  # which embedder wrote the store's vectors (recorded on first use)
            from reverie.embed import space

            self._space_mismatch: str | None = space.check(self._store, self.embedder)
        except BaseException:
            self._store.close()
            raise
        if self._space_mismatch is not None and not reembed:
            self._store.close()
            raise EmbedderMismatchError(self._space_mismatch)
        #: access updates of searches not written yet (see :meth:`_settle`)
        self._deferred: builtins.list[Callable[[], None]] = []
        self._deferred_lock = threading.Lock()
        #: what each open session used (co-activation counts memories a session used together)
        self._sessions = _SessionUse(self.settings.read.session_coaccess_max)
        _OPEN.add(self)  # a script that never closes loses no update (see _settle_open_at_exit)
        self.ops = OpsLog(
            self._opslog_path(),
            clock=self.now,
            rotate_bytes=self.settings.opslog.rotate_bytes,
            queue_size=self.settings.opslog.queue_size,
            log_text=self.settings.opslog.log_text,
        )
        self._closed = False
        self._lock = threading.RLock()

    # lifecycle ---------------------------------------------------------------------------
    def _opslog_path(self) -> Path | None:
        cfg = self.settings.opslog
        if not cfg.enabled:
            return None
        if cfg.path is not None:
            return Path(cfg.path)
        if isinstance(self.target, Path):
            return self.target.with_name("ops-log.jsonl")
        import platformdirs

        return Path(platformdirs.user_data_dir("reverie", appauthor=False)) / "ops-log.jsonl"

    def now(self) -> datetime:
        """The engine's current time, from the injected clock (aware UTC)."""
        return ensure_aware(self._clock_fn())

    @property
    def store(self) -> Store:
        """The storage backend; the access updates of earlier searches are written before it is used."""
        if self._space_mismatch is not None:
            raise EmbedderMismatchError(f"{self._space_mismatch}. This Memory was opened to re-embed: call reembed()")
        if self._deferred:
            self._settle()
        return self._store

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

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        _OPEN.discard(self)
        try:
            self._settle()
        finally:
            self.ops.close()
            self._store.close()
            if self._owns_llm and callable(close_llm := getattr(self.llm, "close", None)):
                close_llm()

    def __enter__(self) -> Memory:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Memory({str(self.target)!r}, backend={self._store.backend!r}, embedder={self.embedder.name!r})"

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

    # helpers -------------------------------------------------------------------------------
    def _embed(self, texts: Sequence[str]) -> np.ndarray:
        vectors = self.embedder.embed(list(texts))
        return np.asarray(vectors, dtype=np.float32)

    def _scope_filter(
        self,
        user_id: Any,
        agent_id: Any,
        filters: Any,
        **extra: Any,
    ) -> MemoryFilter:
        kwargs = parse_filters(filters)
        kwargs.update(extra)
        return MemoryFilter(
            user_id=clean_scope(user_id, "user_id"),
            agent_id=clean_scope(agent_id, "agent_id"),
            **kwargs,
        )

    def _require(self, memory_id: Any) -> MemoryRecord:
        mid = clean_id(memory_id)
        found = self.store.get([mid]).get(mid)
        if found is None:
            found = self.store.get([mid := self.resolve_id(mid)]).get(mid)
        if found is None:  # deleted between the lookup and the read
            raise NotFoundError(f"no memory with id {mid}")
        return found

    def resolve_id(self, memory_id: Any) -> str:
        """The full id of the memory that ``memory_id`` names: a whole id, or any prefix of one that
        no other memory shares (ids are case-sensitive; an upper-case prefix is tried in lower case
        too). Unknown → :class:`NotFoundError`; a prefix several memories share →
        :class:`AmbiguousIdError` listing them. Counts no access."""
        mid = clean_id(memory_id)
        store = self.store
        if mid in store.get([mid]):
            return mid
        shown = 5
        for candidate in dict.fromkeys((mid, mid.lower())):
            found = store.ids_with_prefix(candidate, limit=shown + 1)
            if len(found) == 1:
                return found[0]
            if found:
                records = store.get(found[:shown])
                listed = "; ".join(
                    f"{i} ({_snippet(records[i].content)})" if i in records else i for i in found[:shown]
                )
                more = " and more" if len(found) > shown else ""
                raise AmbiguousIdError(
                    f"id prefix {mid!r} matches several memories: {listed}{more}. Type more characters of the id.",
                    tuple(found[:shown]),
                )
        raise NotFoundError(f"no memory with id {mid}")

    def peek(self, memory_id: str) -> MemoryRecord:
        """The memory with this id (or unique id prefix) without counting an access: a person
        looking is not the agent recalling. :meth:`get` counts the access."""
        return self._require(memory_id)

    def short_ids(self, ids: Iterable[str], *, min_len: int = 8) -> dict[str, str]:
        """``{id: short form}`` for showing ``ids`` to a person: the shortest prefix (at least
        ``min_len`` characters) that no other shown id shares and that names this memory alone in
        the store, so that typing it back (:meth:`resolve_id`) finds it."""
        from reverie.ids import common_prefix_len, short_ids

        out = short_ids(ids, min_len=min_len)
        store = self.store
        for full, cut in out.items():
            length = len(cut)
            while length < len(full):
                others = [i for i in store.ids_with_prefix(full[:length], limit=50) if i != full]
                if not others:
                    break
                common = max(common_prefix_len(full, o) for o in others)
                length = max(length + 1, common + 1) if len(others) < 49 else max(length + 4, common + 1)
            if full[length - 1 : length] == "-":
                length += 1
            out[full] = full[: min(length, len(full))]
        return out

    def _new_record(
        self,
        content: str,
        *,
        vector: Vector,
        user_id: str | None,
        agent_id: str | None,
        session_id: str | None,
        metadata: dict[str, Any],
        when: datetime | None,
        source: str,
        now: datetime,
        write_source: str,
    ) -> MemoryRecord:
        from reverie.dynamics.access import initial_values

        rec = MemoryRecord(
            content=content,
            user_id=user_id,
            agent_id=agent_id,
            session_id=session_id,
            instance_id=self.settings.instance_id,
            layer=Layer.WORKING,  # the energy model: every new memory starts in the working tier
            embedding=vector,
            source=source,
            write_source=write_source,
            metadata=metadata,
            valid_from=when or now,
            recorded_at=now,
            created_at=now,
            updated_at=now,
        )
        for key, value in initial_values(rec, now=now, cfg=self.settings.dynamics).items():
            setattr(rec, key, value)
        return rec

    # write -------------------------------------------------------------------------------
    def add(
        self,
        content: Any,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        session_id: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        when: datetime | str | None = None,
        source: str | None = None,
        infer: bool = True,
    ) -> AddResult:
        """Remember ``content``. ``infer=False`` stores it verbatim as one memory; ``infer=True``
        runs the write path (content-hash dedup first). Atomic: stored entirely or not at all.

        ``content`` may also be a chat message or a list of them, ``[{"role": "user", "content":
        "..."}, ...]`` (the OpenAI / mem0 shape): each user and assistant message goes through the
        observer as :meth:`observe` does, then whatever is still buffered is stored, so the facts of
        the conversation are stored when ``add`` returns (system and tool messages are not kept).
        The result combines the writes: ``ids`` every memory written, ``action`` the main one."""
        from reverie.messages import looks_like_messages

        if looks_like_messages(content):
            return self._add_messages(
                content,
                user_id=user_id,
                agent_id=agent_id,
                session_id=session_id,
                metadata=metadata,
                when=when,
                source=source,
                infer=infer,
            )
        results = self.add_many(
            [content],
            user_id=user_id,
            agent_id=agent_id,
            session_id=session_id,
            metadata=metadata,
            when=when,
            source=source,
            infer=infer,
        )
        return results[0]

    def _add_messages(
        self,
        content: Any,
        *,
        user_id: Any,
        agent_id: Any,
        session_id: Any,
        metadata: Any,
        when: Any,
        source: Any,
        infer: Any,
    ) -> AddResult:
        """``add`` of chat messages (see :meth:`add`)."""
        from reverie.messages import OBSERVED_ROLES, as_messages

        messages = as_messages(content)
        kept = [m for m in messages if m.role in OBSERVED_ROLES and m.text.strip()]
        meta = dict(metadata) if isinstance(metadata, Mapping) else metadata
        results: builtins.list[AddResult] = []
        if not infer:  # each message verbatim, its role in the metadata
            items = [{"content": m.text, "metadata": {**(meta or {}), "role": m.role}} for m in kept]
            results = (
                self.add_many(
                    items,
                    user_id=user_id,
                    agent_id=agent_id,
                    session_id=session_id,
                    when=when,
                    source=source,
                    infer=False,
                )
                if items
                else []
            )
        else:
            for m in kept:
                extra = {"speaker": m.name} if m.name else {}
                results += [
                    r
                    for r in self.observe(
                        m.text,
                        role=m.role,
                        user_id=user_id,
                        agent_id=agent_id,
                        session_id=session_id,
                        when=when,
                        metadata={**(meta or {}), **extra} if extra else meta,
                    )
                    if r.id is not None
                ]
            results += self.flush(user_id=user_id, session_id=session_id)
        written = [r for r in results if r.id is not None]
        counts: dict[str, int] = {}
        for r in written:
            counts[r.action.value] = counts.get(r.action.value, 0) + 1
        summary = f"{len(messages)} message(s), {len(kept)} observed: " + (
            ", ".join(f"{n} {a}" for a, n in counts.items()) if counts else "nothing worth remembering"
        )
        if not written:
            return AddResult(None, Action.SKIP, (), summary)
        main = next((r for r in written if r.action is not Action.SKIP), written[0])
        ids = tuple(dict.fromkeys(i for r in written for i in r.ids))
        return AddResult(main.id, main.action, ids, summary)

    def add_many(
        self,
        items: Iterable[Any],
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        session_id: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        when: datetime | str | None = None,
        source: str | None = None,
        infer: bool = True,
        vectors: Sequence[Sequence[float]] | np.ndarray | None = None,
        batch_size: int = 500,
    ) -> list[AddResult]:
        """Add many memories. ``items`` is a list (or any iterable, never a single string) of strings
        or mappings with ``content`` and any of ``metadata, when, source`` (overriding the keyword
        defaults) and ``user_id, agent_id, session_id`` (used only where the keyword is not given: an
        item may not move itself into another scope than the call's). With ``infer=False`` an item may
        also carry an ``id``: an id already stored is skipped (SKIP), which makes a re-run of an import
        add nothing twice. ``vectors`` supplies precomputed embeddings (one per item). Every item is
        validated before anything is written; batches of ``batch_size`` commit atomically. A returned
        result means the memory is committed: it survives the crash of any process, and with
        ``storage.synchronous = "FULL"`` (SQLite) also a power loss."""
        prepared = [
            self._prepare_item(item, user_id, agent_id, session_id, metadata, when, source)
            for item in items_list(items)
        ]
        if not prepared:
            return []
        if infer and any(p.id is not None for p in prepared):
            raise InvalidInputError("an item 'id' is accepted only with infer=False (the write path chooses ids)")
        given = self._check_vectors(vectors, len(prepared))
        results: list[AddResult] = []
        for start in range(0, len(prepared), batch_size):
            chunk = prepared[start : start + batch_size]
            chunk_vecs = (
                given[start : start + batch_size] if given is not None else self._embed([p.content for p in chunk])
            )
            if infer:
                results.extend(self._write_path().add_items(chunk, chunk_vecs))
            else:
                results.extend(self._write_verbatim(chunk, chunk_vecs))
        self._after_ingest({p.user_id for p in prepared})
        return results

    def _after_ingest(self, users: Iterable[str | None]) -> None:
        """One ingestion cycle happened for these user partitions: run the maintenance tick when it is
        due (``dream.schedule.tick_every``). Never raises (see :mod:`reverie.dream.schedule`)."""
        if self.settings.dream.schedule.tick_every > 0:
            from reverie.dream.schedule import note_ingestion

            note_ingestion(self, users)

    def tick(self, *, user_id: str | None = None, all_users: bool = True) -> DreamReport:
        """Run the cheap maintenance subset of the dream cycle now (the consolidation design's ``tick()``: cold
        migration, TTL expiry, consolidation — ``dream.schedule.tick_steps``); returns its report.
        It also runs by itself every ``dream.schedule.tick_every`` ingestion cycles."""
        from reverie.dream.schedule import run_tick

        if user_id is not None:
            all_users = False
        return run_tick(self, user_id=clean_scope(user_id, "user_id"), all_users=bool(all_users))

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
        return JobSchedule(self, configured_jobs(self, cycle_every=every), user_id=clean_scope(user_id, "user_id"))

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

    def topic_index(self, *, user_id: str | None = None, refresh: bool = False) -> dict[str, Any]:
        """What this user's memory is about: the topic words of its sealed memory boxes and the entities its
        active memories name, each with ``memories``, ``boxes``, ``traces``, ``first_seen`` and ``last_seen``
        (most mentioned first). The dream's ``topics`` step keeps it current; ``refresh=True`` (or no index
        yet) builds it now. No access is counted."""
        from reverie.documents import refresh_topic_indexes, topics_key

        if not isinstance(refresh, bool):
            raise InvalidInputError("refresh must be true or false")
        user = clean_scope(user_id, "user_id")
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
        root = Path(path).expanduser()
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

    def _prepare_item(
        self,
        item: Any,
        user_id: Any,
        agent_id: Any,
        session_id: Any,
        metadata: Any,
        when: Any,
        source: Any,
    ) -> PreparedItem:
        fields = {
            "user_id": user_id,
            "agent_id": agent_id,
            "session_id": session_id,
            "metadata": metadata,
            "when": when,
            "source": source,
        }
        item_id = None
        if isinstance(item, Mapping):
            unknown = [k for k in item if k not in ("content", "id", *fields)]
            if unknown:
                raise InvalidInputError(f"unknown keys in item: {printable(sorted(map(str, unknown)), limit=200)}")
            if "content" not in item:
                raise InvalidInputError("each item mapping needs a 'content' key")
            for key, value in item.items():
                if key in ("content", "id"):
                    continue
                if key in _SCOPE_KEYS and fields[key] is not None:
                    # scope comes from the arguments (and the caller's credential): an item cannot move itself
                    if value is not None and value != fields[key]:
                        raise InvalidInputError(
                            f"an item names {key}={printable(value)} but the call is scoped to "
                            f"{key}={printable(fields[key])}"
                        )
                    continue
                fields[key] = value
            if item.get("id") is not None:
                item_id = clean_id(item["id"], "item id")
            item = item["content"]
        limits = self.settings.limits
        return PreparedItem(
            content=clean_content(item, max_bytes=limits.max_content_bytes),
            user_id=clean_scope(fields["user_id"], "user_id"),
            agent_id=clean_scope(fields["agent_id"], "agent_id"),
            session_id=clean_scope(fields["session_id"], "session_id"),
            metadata=clean_metadata(
                fields["metadata"], max_bytes=limits.max_metadata_bytes, max_depth=limits.max_metadata_depth
            ),
            when=clean_when(fields["when"]),
            source=clean_source(fields["source"]),
            id=item_id,
        )

    def _check_vectors(self, vectors: Any, n: int) -> np.ndarray | None:
        if vectors is None:
            return None
        try:
            arr = np.asarray(vectors, dtype=np.float32)
        except (TypeError, ValueError) as exc:
            raise InvalidInputError(f"vectors must be numeric: {exc}") from exc
        if arr.shape != (n, self.embedder.dim):
            raise InvalidInputError(f"vectors must have shape ({n}, {self.embedder.dim}), got {arr.shape}")
        if not np.all(np.isfinite(arr)):
            raise InvalidInputError("vectors contain NaN or infinity")
        norms = np.linalg.norm(arr, axis=1, keepdims=True)
        if np.any(norms == 0):
            raise InvalidInputError("vectors must not be all zeros")
        normalised: np.ndarray = (arr / norms).astype(np.float32)
        return normalised

    def _write_verbatim(self, chunk: Sequence[PreparedItem], vecs: np.ndarray) -> list[AddResult]:
        """``infer=False``: each item becomes one memory exactly as given, in one transaction."""
        now = self.now()
        records = [
            self._new_record(
                item.content,
                vector=vec,
                user_id=item.user_id,
                agent_id=item.agent_id,
                session_id=item.session_id,
                metadata=item.metadata,
                when=item.when,
                source=item.source,
                now=now,
                write_source="manual",
            )
            for item, vec in zip(chunk, vecs, strict=True)
        ]
        for item, rec in zip(chunk, records, strict=True):
            if item.id is not None:
                rec.id = item.id
        reason = "stored verbatim (infer=False)"
        skip_reason = "already stored (an item with this id was added before)"
        with self.store.transaction():
            given = [r.id for item, r in zip(chunk, records, strict=True) if item.id is not None]
            seen = set(self.store.get(given)) if given else set()
            fresh: list[MemoryRecord] = []
            results: list[AddResult] = []
            for rec in records:
                if rec.id in seen:
                    results.append(AddResult(rec.id, Action.SKIP, (rec.id,), skip_reason))
                    continue
                seen.add(rec.id)
                fresh.append(rec)
                results.append(AddResult(rec.id, Action.CREATE, (rec.id,), reason))
            self.store.insert(fresh)
            self.store.add_history(
                [
                    HistoryEvent(
                        r.id, "created", now, reason=reason, actor="add", data={"layer": r.layer.value, "infer": False}
                    )
                    for r in fresh
                ]
            )
            if self.settings.write.policy.telemetry:
                self.store.log_actions(verbatim_actions(records, results, now))
        # one line per batch (its ids), as the dream logs its batches: per-memory lines cost ~6% of a bulk load
        self.ops.log(
            "add",
            action=Action.CREATE.value,
            ids=[r.id for r in fresh],
            count=len(fresh),
            skipped=len(records) - len(fresh),
            reason=reason,
            infer=False,
        )
        return results

    def restore(self, records: Iterable[Any], *, batch_size: int = 500, max_errors: int = 1000) -> dict[str, Any]:
        """Insert exported records exactly as they were (ids, strengths, timestamps, scope).

        Each record (a :class:`MemoryRecord`, a mapping of its fields, or a :class:`reverie.io.Entry`
        naming where it came from) is checked field by field as ``add`` checks its input — types,
        finite numbers in range, enum values, metadata depth and size, storable text, datetimes — and
        a bad record is rejected on its own: the good records of the same batch are stored. Records
        without an embedding (or with another embedder's) are embedded again; ids that already exist
        are skipped, so a restore can be run again. Returns ``{"restored", "skipped", "rejected",
        "errors"}``; ``errors`` lists ``{"where", "error"}`` of the first ``max_errors`` rejections.
        """
        limits = self.settings.limits
        rlimits = RecordLimits(
            limits.max_content_bytes, limits.max_metadata_bytes, limits.max_metadata_depth, self.embedder.dim
        )
        report: dict[str, Any] = {"restored": 0, "skipped": 0, "rejected": 0, "errors": []}
        batch: list[MemoryRecord] = []

        def reject(where: str, error: str) -> None:
            report["rejected"] += 1
            if len(report["errors"]) < max_errors:
                report["errors"].append({"where": where, "error": error})

        def flush() -> None:
            if not batch:
                return
            pending = list(batch)
            batch.clear()
            existing = set(self.store.get([r.id for r in pending]))
            fresh: list[MemoryRecord] = []
            for rec in pending:
                if rec.id in existing:
                    report["skipped"] += 1
                else:
                    existing.add(rec.id)  # the same id twice in one batch: the first wins
                    fresh.append(rec)
            missing = [r for r in fresh if r.embedding is None]
            if missing:
                for rec, vec in zip(missing, self._embed([r.content for r in missing]), strict=True):
                    rec.embedding = vec
            now = self.now()
            with self.store.transaction():
                self.store.insert(fresh)
                self.store.add_history(
                    [HistoryEvent(r.id, "restored", now, reason="import", actor="restore") for r in fresh]
                )
            report["restored"] += len(fresh)

        if isinstance(records, str | bytes | Mapping | MemoryRecord) or not isinstance(records, Iterable):
            raise InvalidInputError("records must be a list (or an iterable) of records")
        try:
            for n, item in enumerate(records, start=1):
                where = getattr(item, "where", None) or f"record {n}"
                error = getattr(item, "error", None)
                if error is not None:
                    reject(where, str(error))
                    continue
                data = item if isinstance(item, Mapping | MemoryRecord) else getattr(item, "data", item)
                try:
                    batch.append(clean_record(data, rlimits))
                except InvalidInputError as exc:
                    reject(where, describe_error(exc))
                    continue
                if len(batch) >= batch_size:
                    flush()
        finally:  # a reader that fails midway keeps what was read before it failed
            flush()
        self.ops.log("restore", restored=report["restored"], skipped=report["skipped"], rejected=report["rejected"])
        return report

    # read --------------------------------------------------------------------------------
    @property
    def _reader(self) -> ReadPipeline:
        """The read path (built on first use; holds the hot-tier cache)."""
        pipe: ReadPipeline | None = self.__dict__.get("_read_pipeline")
        if pipe is None:
            from reverie.embed import query_view
            from reverie.read.pipeline import ReadPipeline

            # queries go through the model's query encoder (e5: "query: "; stored texts are "passage: ")
            pipe = self.__dict__["_read_pipeline"] = ReadPipeline(self.store, query_view(self.embedder), self.settings)
            pipe.router.llm = self._get_llm()  # the intent router asks the LLM first, when one is configured
        return pipe

    def _read_request(
        self,
        query: Any,
        *,
        user_id: Any,
        agent_id: Any,
        session_id: Any,
        k: Any,
        filters: Any,
        as_of: Any = None,
        mode: Any = "current",
        deep: Any = False,
    ) -> ReadRequest:
        from reverie.read.filters import MODES
        from reverie.read.pipeline import Request

        limits = self.settings.limits
        text = clean_content(query, max_bytes=limits.max_query_chars * 4, what="query")
        if len(text) > limits.max_query_chars:
            raise InvalidInputError(f"query is longer than {limits.max_query_chars} characters")
        if mode not in MODES:
            raise InvalidInputError(f"mode must be one of {list(MODES)}, got {mode!r}")
        if not isinstance(deep, bool):
            raise InvalidInputError("deep must be true or false")
        return Request(
            text,
            self._scope_filter(user_id, agent_id, filters),
            clean_k(k, max_k=limits.max_k),
            session_id=clean_scope(session_id, "session_id"),
            mode=mode,
            as_of=clean_when(as_of) if as_of is not None else None,
            deep=deep,
        )

    def search(
        self,
        query: Any,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        session_id: str | None = None,
        k: int = 10,
        filters: Mapping[str, Any] | None = None,
        as_of: datetime | str | None = None,
        mode: str = "current",
        deep: bool = False,
        all_users: bool = False,
    ) -> list[Hit]:
        """The ``k`` memories most relevant to ``query`` in this user's scope, best first.

        Without ``user_id`` it searches the memories stored without one; if there are none but other
        users have memories, it raises :class:`InvalidInputError` naming them rather than answer an
        empty list. ``all_users=True`` searches every user's partition and merges them by score.

        ``session_id`` names the current session (its memories get the episode boost); to
        restrict results to one session use ``filters={"session_id": ...}``. ``mode="current"``
        (default) sees what is true now, ``mode="timeline"`` every version in time order, and
        ``as_of=`` what was true and known at that instant; ``deep=True`` searches cold storage
        too (deep recall). Trivial messages ("ok", "/help") return no hits (the retrieval gate).
        Every returned hit counts as an access; the best hits are co-activated (Hebbian).
        """
        if not isinstance(all_users, bool):
            raise InvalidInputError("all_users must be true or false")
        if all_users and user_id is not None:
            raise InvalidInputError("pass either user_id or all_users=True, not both")
        req = self._read_request(
            query,
            user_id=user_id,
            agent_id=agent_id,
            session_id=session_id,
            k=k,
            filters=filters,
            as_of=as_of,
            mode=mode,
            deep=deep,
        )
        users: builtins.list[str | None] = [req.flt.user_id]
        if all_users:
            users = [u for u, _n in self.store.users(limit=self.settings.limits.max_users_searched)]
        else:
            self._check_scope(req.flt.user_id)
        with single_blas_thread():
            out = self._reader.run(req, now=self.now(), ready=self._settle)
            hits = out.hits
            if all_users:  # every user partition in turn, merged by score (admin views)
                for user in users:
                    if user is not None:
                        each = dataclasses.replace(req, flt=dataclasses.replace(req.flt, user_id=user))
                        hits = hits + self._reader.run(each, now=self.now(), ready=self._settle).hits
                hits = sorted(hits, key=lambda h: -h.score)[: req.k]
        self._touch([h.memory for h in hits], kind="search", session_id=req.session_id, hebbian=True, defer=True)
        self.ops.log(
            "search",
            query=req.query[:200],
            results=len(hits),
            k=req.k,
            intent=out.query.get("intent"),
            gate=out.query.get("gate"),
            avgRelevance=(sum(h.score for h in hits) / len(hits)) if hits else 0.0,
        )
        return hits

    def context(
        self,
        query: Any,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        session_id: str | None = None,
        budget_tokens: int | None = None,
        k: int = 10,
        filters: Mapping[str, Any] | None = None,
    ) -> ContextBlock:
        """The memory block an agent puts in its prompt (confidence-gated injection).

        Always the session's working memory and the hot tier, then the retrieved memories by
        confidence (full with metadata / abbreviated / skipped and logged), within
        ``budget_tokens`` (estimated as characters / 4). ``str(block)`` or ``block.text`` is the text.
        """
        from reverie.read import inject

        cfg = self.settings.read
        budget = cfg.context_budget_tokens if budget_tokens is None else budget_tokens
        if isinstance(budget, bool) or not isinstance(budget, int) or budget < 1:
            raise InvalidInputError("budget_tokens must be a positive integer")
        req = self._read_request(query, user_id=user_id, agent_id=agent_id, session_id=session_id, k=k, filters=filters)
        self._check_scope(req.flt.user_id)
        with single_blas_thread():
            out = self._reader.run(req, now=self.now(), ready=self._settle)
        working = (
            self.working_memory(req.session_id, user_id=req.flt.user_id, agent_id=req.flt.agent_id)
            if req.session_id
            else []
        )
        entries = [inject.Entry(r, "working") for r in working]
        entries += [inject.Entry(r, "hot") for r in self._reader.hot.get(self.store, req.flt, now=self.now(), cfg=cfg)]
        entries += [
            inject.Entry(h.memory, "retrieved", out.similarities.get(h.memory.id), h.explain.get("superseded"))
            for h in out.hits
        ]
        profile = self._reader.profile
        block = inject.build(
            entries,
            budget_tokens=budget,
            cfg=cfg,
            full=cfg.for_profile("inject_full", profile),
            abbreviated=cfg.for_profile("inject_abbreviated", profile),
        )
        used = {i.id for i in block.items if i.section == "retrieved"}
        self._touch(
            [h.memory for h in out.hits if h.memory.id in used],
            kind="search",
            session_id=req.session_id,
            hebbian=True,
            defer=True,
        )
        self.ops.log(
            "context",
            query=req.query[:200],
            injected=len(block.items),
            tokens=block.used_tokens,
            skipped=block.skipped[:20],
            gate=out.query.get("gate"),
        )
        return block

    def _check_scope(self, user_id: str | None) -> None:
        """A search or list without a user sees only the memories stored without one. When there are
        none but other users have memories, say so (naming them) instead of answering nothing."""
        if user_id is not None:
            return
        store = self.store
        if store.list(MemoryFilter(user_id=None, statuses=None, stores=None), limit=1):
            return
        shown = 10
        users = [(u, n) for u, n in store.users(limit=shown + 2) if u is not None]
        if not users:
            return
        names = ", ".join(f"{u} ({n})" for u, n in users[:shown]) + (" and more" if len(users) > shown else "")
        raise InvalidInputError(
            f"no memories are stored without a user_id, so this would find nothing. Users with memories "
            f"(count): {names}. Pass user_id=... (CLI: -u NAME), or all_users=True (CLI: --all-users) "
            "to look at every user's memories."
        )

    def users(self, *, limit: int = 1000) -> builtins.list[tuple[str | None, int]]:
        """Each user with memories (``None``: memories stored without a user) and how many, in any
        status or store, largest first."""
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            raise InvalidInputError("limit must be a positive integer")
        return self.store.users(limit=limit)

    def working_memory(
        self, session_id: str, *, user_id: str | None = None, agent_id: str | None = None
    ) -> builtins.list[MemoryRecord]:
        """A session's working memory (at most 9 items), most recently used first; with
        ``agent_id``, only that agent's memories. No access is counted."""
        from reverie.write.working_memory import session_key

        sid = clean_scope(session_id, "session_id")
        if sid is None:
            raise InvalidInputError("working_memory() needs a session_id")
        user, agent = clean_scope(user_id, "user_id"), clean_scope(agent_id, "agent_id")
        items = self.store.working(session_key(user, sid))
        records = self.store.get([i.memory_id for i in items])
        ordered = sorted(items, key=lambda i: (i.last_accessed, i.memory_id), reverse=True)
        return [
            records[i.memory_id]
            for i in ordered
            if i.memory_id in records
            and records[i.memory_id].user_id == user
            and (agent is None or records[i.memory_id].agent_id == agent)
        ]

    def hot_tier(self, *, user_id: str | None = None, agent_id: str | None = None) -> builtins.list[MemoryRecord]:
        """The hot tier: the scope's proven memories (utility >= 0.8, >= 10 accesses, younger
        than 30 days, active; at most 15) that are always injected. Cached 5 minutes; no access counted."""
        flt = self._scope_filter(user_id, agent_id, None)
        return self._reader.hot.get(self.store, flt, now=self.now(), cfg=self.settings.read)

    def get(self, memory_id: str) -> MemoryRecord:
        """The memory with this id (any status or store). Counts as an access."""
        rec = self._require(memory_id)
        touched = self._touch([rec], kind="get", session_id=None)
        return touched[0]

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
        the access log of each record, in one transaction. ``hebbian``: Hebbian
        co-activation — the best ``read.hebbian_top`` records are co-activated pairwise and get
        +2% stability on top of the access update. ``defer``: written by the next use of the store
        (:meth:`_settle`) instead of now."""
        if not records:
            return []
        from reverie.dynamics.access import on_access
        from reverie.dynamics.tagging import hebbian_stability

        now = self.now()
        cfg = self.settings.dynamics
        top = self.settings.read.hebbian_top if hebbian else 0
        together = [r.id for r in records[:top]] if top >= 2 and len(records) >= 2 else []
        updated: list[MemoryRecord] = []
        batch: list[tuple[str, dict[str, Any]]] = []
        for rec in records:
            changes = on_access(rec, now=now, cfg=cfg)
            if rec.id in together:
                changes["stability"] = hebbian_stability(stability=changes["stability"], cfg=cfg.tagging)
            batch.append((rec.id, changes))
            updated.append(rec.copy(**changes, version=rec.version + 1))
        events = [AccessEvent(r.id, now, kind, session_id) for r in records]
        # the memories this access used: a search's best hits (``read.hebbian_top``), a get's memory
        used = [r.id for r in records[: self.settings.read.hebbian_top]] if hebbian else [r.id for r in records]
        pairs = self._sessions.co_accessed(records, used, session_id)
        store = self._store
        spread = cfg.tagging.spreading_boost > 0 and bool(used)

        def write() -> None:
            with store.transaction():
                store.update_many(batch)
                store.log_access(events)
                if pairs:
                    store.bump_coactivations(pairs, now)
                if spread:
                    _spread_activation(store, used, {r.id for r in records}, cfg.tagging)

        if defer:
            with self._deferred_lock:
                self._deferred.append(write)
        else:
            self._settle()
            write()
        return updated

    def list(
        self,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        filters: Mapping[str, Any] | None = None,
        all_users: bool = False,
        limit: int = 100,
        offset: int = 0,
        order_by: str = "created_at",
        descending: bool = True,
    ) -> builtins.list[MemoryRecord]:
        """Memories in a scope (no access is counted). Defaults to active, hot memories;
        ``filters={"status": [...], "store": [...]}`` widens it."""
        from reverie.store.base import ORDERABLE_FIELDS

        if order_by not in ORDERABLE_FIELDS:
            raise InvalidInputError(f"order_by must be one of {sorted(ORDERABLE_FIELDS)}")
        if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= 10_000:
            raise InvalidInputError("limit must be an integer between 1 and 10000")
        if isinstance(offset, bool) or not isinstance(offset, int) or offset < 0:
            raise InvalidInputError("offset must be a non-negative integer")
        flt = self._scope_filter(user_id, agent_id, filters, all_users=bool(all_users))
        if not flt.all_users:
            self._check_scope(flt.user_id)
        return self.store.list(flt, limit=limit, offset=offset, order_by=order_by, descending=descending)

    def history(self, memory_id: str) -> builtins.list[HistoryEvent]:
        """Every recorded transition of the memory, oldest first."""
        rec = self._require(memory_id)
        return self.store.history(rec.id)

    def accesses(self, memory_id: str, *, limit: int = 50) -> builtins.list[AccessEvent]:
        """The memory's most recent recalls (when, how — search, get, rehearsal … — and in which
        session), newest first; looking does not count as one."""
        if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= 10_000:
            raise InvalidInputError("limit must be an integer between 1 and 10000")
        rec = self._require(memory_id)
        return self.store.access_events(rec.id, limit=limit)

    def backup(self, dest: str | Path) -> dict[str, Any]:
        """A consistent copy of the live store in the new file ``dest`` (SQLite's online-backup API:
        every write committed before the backup began, while writers go on); PostgreSQL raises
        ConfigError pointing to ``pg_dump``. Returns what was written (path, bytes, integrity, memories)."""
        report = self.store.backup(dest)
        self.ops.log("backup", path=report.get("path"), bytes=report.get("bytes"), memories=report.get("memories"))
        return report

    def count(
        self,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        filters: Mapping[str, Any] | None = None,
        all_users: bool = False,
    ) -> int:
        """How many memories :meth:`list` with the same scope and filters pages through."""
        flt = self._scope_filter(user_id, agent_id, filters, all_users=bool(all_users))
        if not flt.all_users:
            self._check_scope(flt.user_id)
        return self.store.count(flt)

    def stats(self, *, user_id: str | None = None, all_users: bool = True) -> Stats:
        """The health check: count and energy avg/min/max per layer and status."""
        if user_id is not None:
            all_users = False
        flt = MemoryFilter.everything(user_id=clean_scope(user_id, "user_id"), all_users=all_users)
        rows: builtins.list[LayerStats] = self.store.stats(flt)
        total = sum(r.count for r in rows)
        return {
            "backend": self.store.backend,
            "target": str(self.target),
            "embedder": self.embedder.name,
            "total": total,
            "rows": [
                {
                    "layer": r.layer.value,
                    "status": r.status.value,
                    "count": r.count,
                    "energy_avg": r.energy_avg,
                    "energy_min": r.energy_min,
                    "energy_max": r.energy_max,
                }
                for r in rows
            ],
            "by_layer": _sum_by(rows, "layer"),
            "by_status": _sum_by(rows, "status"),
            "relations": self.store.count_relations(flt),
            "opslog": {"written": self.ops.written, "dropped": self.ops.dropped, "errors": self.ops.errors},
        }

    # edit --------------------------------------------------------------------------------
    def update(
        self,
        memory_id: str,
        content: Any = None,
        *,
        metadata: Mapping[str, Any] | None = None,
        category: str | None = None,
        importance: float | None = None,
        reason: str = "",
    ) -> MemoryRecord:
        """Edit a memory (content is re-embedded). Immutable memories refuse every edit."""
        limits = self.settings.limits
        text = clean_content(content, max_bytes=limits.max_content_bytes) if content is not None else None
        meta = (
            clean_metadata(metadata, max_bytes=limits.max_metadata_bytes, max_depth=limits.max_metadata_depth)
            if metadata is not None
            else None
        )
        cat = clean_label(category, "category") if category is not None else None
        imp = clean_unit(importance, "importance") if importance is not None else None
        reason = clean_reason(reason)
        rec = self._require(memory_id)
        if rec.immutable:
            raise ImmutableMemoryError(f"memory {rec.id} is immutable (a truth anchor)")
        now = self.now()
        changes: dict[str, Any] = {}
        if text is not None and text != rec.content:
            changes.update(content=text, content_hash=content_hash(text), embedding=self._embed([text])[0])
        if meta is not None:
            changes["metadata"] = meta
        if cat is not None:
            changes["category"] = cat
        if imp is not None:
            changes["importance"] = imp
        if not changes:
            return rec
        changes["updated_at"] = now
        old = {k: (rec.to_dict().get(k)) for k in changes if k not in ("embedding", "updated_at")}
        self._apply(rec, changes, "updated", reason or "user edit", actor="update", data={"before": old})
        updated = self._require(rec.id)
        if self.settings.write.policy.telemetry:  # an edit is a write decision too: update_note, by hand
            self.store.log_actions(
                verbatim_actions([updated], [AddResult(updated.id, Action.UPDATE, (updated.id,))], now)
            )
        return updated

    def _apply(
        self,
        rec: MemoryRecord,
        changes: dict[str, Any],
        event: str,
        reason: str,
        *,
        actor: str,
        data: dict[str, Any] | None = None,
    ) -> None:
        now = self.now()
        with self.store.transaction():
            self.store.update_fields(rec.id, changes, expected_version=rec.version)
            self.store.add_history([HistoryEvent(rec.id, event, now, reason=reason, actor=actor, data=data or {})])
        self.ops.log(event, id=rec.id, reason=reason, actor=actor)

    def pin(self, memory_id: str) -> MemoryRecord:
        """Pin a memory: immune to forgetting and demotion (a truth anchor)."""
        rec = self._require(memory_id)
        if not rec.pinned:
            self._apply(
                rec,
                {"pinned": True, "policy_class": "protected", "updated_at": self.now()},
                "pinned",
                "user pin",
                actor="pin",
            )
        return self._require(rec.id)

    def unpin(self, memory_id: str) -> MemoryRecord:
        """Unpin a memory: forgetting and demotion apply to it again."""
        rec = self._require(memory_id)
        if rec.pinned:
            from reverie.write.pipeline import policy_class

            rec.pinned = False
            cls = policy_class(rec, self.settings.dynamics.lifecycle.protected_categories)
            self._apply(
                rec,
                {"pinned": False, "policy_class": cls, "updated_at": self.now()},
                "unpinned",
                "user unpin",
                actor="unpin",
            )
        return self._require(rec.id)

    def invalidate(self, memory_id: str, reason: str) -> MemoryRecord:
        """Mark a memory no longer true (never deleted: "invalidate, don't delete")."""
        reason = clean_reason(reason, required=True)
        rec = self._require(memory_id)
        if rec.status is Status.INVALIDATED:
            return rec
        now = self.now()
        changes = {"status": Status.INVALIDATED, "valid_until": rec.valid_until or now, "updated_at": now}
        self._apply(
            rec, changes, "invalidated", reason[:1000], actor="invalidate", data={"from_status": rec.status.value}
        )
        return self._require(rec.id)

    def reactivate(self, memory_id: str, *, reason: str = "") -> MemoryRecord:
        """Bring a forgotten memory back: dormant or archived → active, cold store → hot
        (dormant memories can be reactivated; cold ones come back to the hot store). Counts as an access, so it
        starts decaying afresh. Superseded, expired and invalidated memories refuse (they were
        replaced or stopped being true); an active memory in the hot store is returned unchanged."""
        from reverie.model import StoreTier

        reason = clean_reason(reason)
        rec = self._require(memory_id)
        if rec.status in (Status.SUPERSEDED, Status.EXPIRED, Status.INVALIDATED):
            raise InvalidInputError(
                f"memory {rec.id} is {rec.status.value}; only dormant, archived or cold memories can be reactivated"
            )
        if rec.status is Status.ACTIVE and rec.store is StoreTier.HOT:
            return rec
        changes = {"status": Status.ACTIVE, "store": StoreTier.HOT, "updated_at": self.now()}
        self._apply(
            rec,
            changes,
            "reactivated",
            reason[:1000] or "user reactivation",
            actor="reactivate",
            data={"from_status": rec.status.value, "from_store": rec.store.value},
        )
        self._restore_precision([rec.id], actor="reactivate")
        return self._touch([self._require(rec.id)], kind="get", session_id=None)[0]

    def forget(self, memory_id: str) -> None:
        """Hard delete (an explicit "forget me" request): nothing of the memory's words remains.

        Gone with it: every row about it (relations, co-activations, access log, history, claims,
        working memory, tags, cluster memberships); every memory made from its words — the dream's
        summaries, themes and cards that include it (their other members come back to everyday
        recall first, as with :meth:`undo_consolidation`), and what was made from those; its words
        in its memory box's topic; and its text in the full-text index (SQLite merges the index
        pages and overwrites freed space with zeros). A memory it superseded stays superseded. The
        ops log records the forgetting by id only."""
        from reverie.model import RelationType

        rec = self._require(memory_id)
        derived = self._made_from(rec.id)
        now = self.now()
        for summary in reversed(derived):  # the outermost first: undoing it brings back what it replaced
            with contextlib.suppress(ReverieError):  # not a consolidation, or already undone: deleted anyway
                undo_reason = "a memory it was made from was forgotten"
                self.undo_consolidation(summary, reason=undo_reason)
        doomed = [rec.id, *derived]
        with self.store.transaction():
            gone = self.store.get(doomed)
            successors = self.store.relations(doomed, types=frozenset({RelationType.SUPERSEDES}), direction="in")
            older = self.store.get(sorted({r.dst_id for r in successors} - set(doomed)))
            for old in older.values():
                if old.superseded_by in gone:
                    self.store.update_fields(old.id, {"superseded_by": None, "updated_at": now})
            self._scrub_boxes(gone.values())
            for user in {r.user_id for r in gone.values()}:
                scrub_documents(self.store, user, doomed)
            self.store.delete(doomed)
        self.ops.log("forget", id=rec.id, user_id=rec.user_id, derived=derived)

    def forget_user(self, user_id: str | None, *, dry_run: bool = False) -> dict[str, Any]:
        """Erase everything of one user (the right to be forgotten): every memory in any status or store
        with all that hangs on it (relations, access log, history, working memory, tags, the full-text
        and vector index entries), the user's memory boxes and clusters, and the state entries that name
        the user (conversation buffers holding unsaved turns, schedule counters, cursors).

        With ``dry_run`` nothing changes: the counts of what would go are returned. Returns
        ``{"user_id", "dry_run", "memories", "boxes", "clusters", "state_entries"}``. The ops log
        records the erasure with its counts, never a text. ``None`` is the anonymous partition."""
        user = clean_scope(user_id, "user_id")
        flt = MemoryFilter.everything(user_id=user, all_users=False)
        keys = [k for k, v in self.store.state_items() if _names_user(k, v, user)]
        report: dict[str, Any] = {"user_id": user, "dry_run": bool(dry_run)}
        if dry_run:
            report.update(
                {
                    "memories": self.store.count(flt),
                    **self.store.delete_partition_rows(user, dry_run=True),
                    "state_entries": len(keys),
                }
            )
            return report
        ids = [r.id for batch in self.store.scan(flt, omit=_ERASE_OMIT) for r in batch]
        deleted = 0
        for start in range(0, len(ids), _ERASE_BATCH):
            with self.store.transaction():
                deleted += self.store.delete(ids[start : start + _ERASE_BATCH])
        with self.store.transaction():
            rows = self.store.delete_partition_rows(user)
            report["state_entries"] = self.store.delete_state(keys)
        report.update({"memories": deleted, **rows})
        self.store.reclaim()  # PostgreSQL: the old row versions and index entries go from disk now
        clear = getattr(self.embedder, "clear", None)
        if callable(clear):
            clear()
        self.ops.log("forget_user", user_id=user, **{k: v for k, v in report.items() if k != "user_id"})
        return report

    def _made_from(self, memory_id: str) -> builtins.list[str]:
        """Ids of the memories made from this one's words (summaries, themes, cards — linked to what
        they were made from by ``summarizes`` relations), and of those made from them; nearest first."""
        from reverie.model import RelationType

        found: builtins.list[str] = []
        frontier = [memory_id]
        seen = {memory_id}
        while frontier:
            links = self.store.relations(frontier, types=frozenset({RelationType.SUMMARIZES}), direction="in")
            frontier = sorted({r.src_id for r in links} - seen)
            seen.update(frontier)
            found.extend(frontier)
        return found

    def _scrub_boxes(self, records: Iterable[MemoryRecord]) -> None:
        """Take the words of forgotten memories out of their memory boxes' topics."""
        from reverie.text.words import content_words

        for rec in records:
            box = self.store.box(rec.box_id) if rec.box_id else None
            if box is None:
                continue
            text = rec.content.casefold()
            words = content_words(rec.content) | {e.rsplit("/", 1)[-1].casefold() for e in rec.entities}
            box.topic = [w for w in box.topic if w.casefold() not in words and w.casefold() not in text]
            box.memory_count = max(0, box.memory_count - 1)
            self.store.put_box(box)

    # dynamics ----------------------------------------------------------------------------
    def feedback(self, memory_id: str, *, useful: bool) -> MemoryRecord:
        """Tell reverie whether a memory helped (the utility update, α = 0.1)."""
        if not isinstance(useful, bool):
            raise InvalidInputError("useful must be true or false")
        from reverie.dynamics.access import on_feedback

        rec = self._require(memory_id)
        now = self.now()
        changes = on_feedback(rec, useful=useful, now=now, cfg=self.settings.dynamics)
        with self.store.transaction():
            self.store.update_fields(rec.id, changes)
            self.store.log_access([AccessEvent(rec.id, now, "feedback")])
            self.store.add_history(
                [
                    HistoryEvent(
                        rec.id,
                        "feedback",
                        now,
                        reason="useful" if useful else "not useful",
                        actor="feedback",
                        data={"utility": changes.get("utility")},
                    )
                ]
            )
        self.ops.log("feedback", id=rec.id, useful=useful)
        return self._require(rec.id)

    def explain_strength(self, memory_id: str) -> dict[str, Any]:
        """Every current strength value of a memory with the formula terms behind it (no access counted)."""
        from reverie.dynamics.explain import explain_strength

        rec = self._require(memory_id)
        times = self.store.access_times([rec.id]).get(rec.id, [])
        return explain_strength(rec, now=self.now(), cfg=self.settings.dynamics, access_times=times)

    def _log_llm_call(self, event: dict[str, Any]) -> None:
        self.ops.log(str(event.get("op", "llm")), **{k: v for k, v in event.items() if k != "op"})

    def _get_llm(self) -> ChatJSON | None:
        """The LLM client (built from settings on first use; ``None`` when none is configured)."""
        if self.llm is None and not getattr(self, "_llm_built", False):
            from reverie.llm import make_llm

            self.llm = make_llm(self.settings.llm, on_call=self._log_llm_call)
            self._llm_built = True
            self._owns_llm = self.llm is not None
        return self.llm

    # write path ------------------------------------------------------------------------
    def _write_path(self) -> WritePipeline:
        """The write pipeline (built on first use; the LLM is optional). Searches' pending access
        updates are written first: the pipeline holds the store itself."""
        self._settle()
        pipeline: WritePipeline | None = getattr(self, "_pipeline", None)
        if pipeline is None:
            pipeline = WritePipeline(
                store=self.store,
                settings=self.settings,
                embed=self._embed,
                profile=self.embedder.profile,
                clock=self.now,
                ops=self.ops,
                llm=self._get_llm(),
            )
            self._pipeline = pipeline
        return pipeline

    def observe(
        self,
        message: Any,
        *,
        role: str = "user",
        user_id: str | None = None,
        agent_id: str | None = None,
        session_id: str | None = None,
        when: datetime | str | None = None,
        metadata: Mapping[str, Any] | None = None,
        flush: bool = False,
    ) -> builtins.list[AddResult]:
        """Take one raw conversation turn (user or assistant) through the observer, the smart buffer
        and the write path. Returns what was written now: a filtered turn gives one SKIP result with
        its reason; a turn kept but waiting in the conversation's buffer (not stored yet) gives one
        BUFFERED result — it is stored when the buffer fills (``write.buffer``), at
        :meth:`end_session`, or at once with ``flush=True`` / :meth:`flush`. Hostile or undecodable
        content is rejected with a reason, never raised."""
        if role not in ("user", "assistant"):
            raise InvalidInputError("role must be 'user' or 'assistant'")
        limits = self.settings.limits
        try:
            text = clean_content(message, max_bytes=limits.max_content_bytes, what="message")
        except InvalidInputError as exc:
            self.ops.log("observe", action="SKIP", reason=f"rejected: {exc}", path="heuristic")
            return [AddResult(None, Action.SKIP, (), f"rejected: {exc}")]
        if not isinstance(flush, bool):
            raise InvalidInputError("flush must be true or false")
        user = clean_scope(user_id, "user_id")
        sid = clean_scope(session_id, "session_id")
        pipeline = self._write_path()
        key = buffer_key(user, None, sid)
        waiting = len(pipeline.buffer.turns(key))
        results = pipeline.observe(
            text,
            role=role,
            user_id=user,
            agent_id=clean_scope(agent_id, "agent_id"),
            session_id=sid,
            when=clean_when(when),
            metadata=clean_metadata(metadata, max_bytes=limits.max_metadata_bytes, max_depth=limits.max_metadata_depth),
        )
        if len(results) == 1 and results[0].id is None and results[0].action is Action.SKIP:
            now_waiting = len(pipeline.buffer.turns(key))
            if now_waiting > waiting:  # kept, but waiting in the buffer: say so, not "SKIP"
                results = [
                    AddResult(
                        None,
                        Action.BUFFERED,
                        (),
                        f"{results[0].reason}; not stored yet — stored when "
                        "the buffer fills, at end_session(), or now with flush()",
                    )
                ]
            if flush and now_waiting:
                return self.flush(user_id=user, session_id=sid)
            # the lifecycle policy counts extractions: a buffered or filtered turn is no cycle
            return results
        self._after_ingest([user])
        return results

    def flush(self, *, user_id: str | None = None, session_id: str | None = None) -> builtins.list[AddResult]:
        """Store now what :meth:`observe` buffered for this conversation (``user_id``, ``session_id``)
        instead of waiting for the buffer to fill; returns what was written (``[]``: nothing waited).
        A just-stated fact is recallable by :meth:`search` once flushed."""
        user = clean_scope(user_id, "user_id")
        sid = clean_scope(session_id, "session_id")
        results = self._write_path().flush(user_id=user, session_id=sid, reason="flush requested")
        if results:
            self._after_ingest([user])
        return results

    def buffered(self, *, user_id: str | None = None, session_id: str | None = None) -> builtins.list[dict[str, Any]]:
        """The turns :meth:`observe` holds for this conversation, not stored yet (oldest first):
        ``text``, ``role``, ``at``, ``kind``. :meth:`flush` stores them now."""
        key = buffer_key(clean_scope(user_id, "user_id"), None, clean_scope(session_id, "session_id"))
        return [
            {"text": t.text, "role": t.role, "at": t.at, "kind": t.kind} for t in self._write_path().buffer.turns(key)
        ]

    def end_session(self, session_id: str, *, user_id: str | None = None) -> SessionEndReport:
        """End a session: store everything still buffered, seal its memory box, run the energy model's
        session-end promotion and clear its working memory. Returns a report."""
        sid = clean_scope(session_id, "session_id")
        if sid is None:
            raise InvalidInputError("end_session needs a session_id")
        user = clean_scope(user_id, "user_id")
        report = self._write_path().end_session(sid, user_id=user)
        self._sessions.end(user, sid)
        from reverie.embed.cache import CachedEmbedder

        # the embedding cache is session-scoped: what a session embedded is not kept past its end
        cleared = 0
        if isinstance(self.embedder, CachedEmbedder):
            cleared = len(self.embedder)
            self.embedder.clear()
        report["embedding_cache_cleared"] = cleared
        if report.get("flushed"):  # the buffered turns were extracted now: one ingestion cycle
            self._after_ingest([user])
        return report

    def _restore_precision(self, ids: Sequence[str], *, actor: str) -> None:
        """Memories back in the hot store get a float32 embedding again (re-embedded from their
        content) if the dream cycle quantised them while they were cold (embedding quantization)."""
        from reverie.dream.quantize import restore_precision

        if ids:
            restore_precision(self.store, self._embed, ids, self.now(), actor=actor)

    def undo_consolidation(self, summary_id: str, *, reason: str = "") -> UndoneConsolidation:
        """Undo a dream consolidation ("consolidation can be undone"): the originals a summary,
        theme or pattern replaced go back to the hot store as active memories (and are not grouped
        again), the summary is invalidated — never deleted — and every side gets a history event.
        Returns ``{"summary_id", "kind", "restored", "untouched"}``; an id that is not a consolidation
        summary, or one already undone, raises :class:`InvalidInputError`."""
        from reverie.dream.consolidate import undo_consolidation

        reason = clean_reason(reason)
        result = undo_consolidation(
            self.store,
            self.resolve_id(summary_id),
            now=self.now(),
            reason=reason[:1000],
            telemetry=self.settings.write.policy.telemetry,
        )
        self._restore_precision(result["restored"], actor="undo_consolidation")
        self.ops.log("consolidation_undone", id=result["summary_id"], restored=len(result["restored"]))
        return result

    def dream_reports(self) -> builtins.list[dict[str, Any]]:
        """The reports of the last dream cycles (``dream.reports_kept`` of them), newest first."""
        reports = self.store.get_state("dream:reports")
        return list(reports) if isinstance(reports, list) else []

    def dream(self, *, steps: Sequence[str] | None = None, user_id: str | None = None) -> DreamReport:
        """Run the dream cycle (see :mod:`reverie.dream`); returns its report. ``steps`` names the steps
        to run (default: every enabled one, ``dream.steps``), ``user_id`` limits the run to one user."""
        from reverie.dream import run_dream

        names = None
        if steps is not None:
            if (
                isinstance(steps, str)
                or not isinstance(steps, list | tuple)
                or not all(isinstance(s, str) for s in steps)
            ):
                raise InvalidInputError("steps must be a list of step names")
            names = [clean_label(s, "step name") for s in steps]
        return run_dream(self.dream_services, steps=names, user_id=clean_scope(user_id, "user_id"))

    @property
    def dream_services(self) -> DreamServices:
        """What a dream run works with: the store, the settings, the clock, the ops log, the embedder and the
        LLM (built on first use)."""
        from reverie.dream import DreamServices

        return DreamServices(
            store=self.store,
            settings=self.settings,
            clock=self.now,
            ops_log=self.ops.log,
            embed=self._embed,
            profile=self.embedder.profile,
            llm=self._get_llm(),
        )

    # manual layer moves (promote/demote from MCP tools or the dashboard) -------------
    def promote(self, memory_id: str, layer: Layer | str | None = None) -> MemoryRecord:
        """Move an active memory up one layer (working → episodic → semantic) or to ``layer``,
        which must rank above its current one (procedural and codebase rank with semantic).

        Pinned and flashbulb memories may be promoted (pinning protects from forgetting, not from
        promotion); immutable ones refuse (:class:`ImmutableMemoryError`). The id stays; a ``promoted``
        history event records it."""
        rec = self._require(memory_id)
        if rec.immutable:
            raise ImmutableMemoryError(f"memory {rec.id} is immutable and keeps its layer (a truth anchor)")
        _require_active(rec, "promoted")
        current = _LAYER_RANK[rec.layer]
        if layer is None:
            if current >= _LAYER_RANK[Layer.SEMANTIC]:
                raise InvalidInputError(f"memory {rec.id} is already in the top layer ({rec.layer.value})")
            target = _LAYER_ORDER[current + 1]
        else:
            target = _clean_layer(layer)
            if _LAYER_RANK[target] <= current:
                raise InvalidInputError(
                    f"cannot promote memory {rec.id} from {rec.layer.value} to {target.value}: "
                    "the target layer must rank above the current one (use demote to move down)"
                )
        self._move_layer(rec, target, "promoted", actor="promote")
        return self._require(rec.id)

    def demote(self, memory_id: str) -> MemoryRecord:
        """Move an active memory down one layer: semantic (or procedural, codebase) → episodic →
        working. Documented choice: a manual demotion changes the *layer*; the dream cycle's
        "semantic → dormant" changes the *status* and stays automatic.

        Pinned, flashbulb and immutable memories refuse demotion (the forgetting exemptions);
        a working memory has no lower layer (invalidate or forget it instead)."""
        rec = self._require(memory_id)
        if rec.immutable:
            raise ImmutableMemoryError(f"memory {rec.id} is immutable and keeps its layer (a truth anchor)")
        if rec.pinned or rec.flashbulb:
            why = "pinned" if rec.pinned else "a flashbulb memory"
            raise InvalidInputError(
                f"memory {rec.id} is {why} and protected from demotion" + ("; unpin it first" if rec.pinned else "")
            )
        _require_active(rec, "demoted")
        current = _LAYER_RANK[rec.layer]
        if current == 0:
            raise InvalidInputError(
                f"memory {rec.id} is already in the lowest layer (working); invalidate or forget it instead"
            )
        self._move_layer(rec, _LAYER_ORDER[current - 1], "demoted", actor="demote")
        return self._require(rec.id)

    def _move_layer(self, rec: MemoryRecord, target: Layer, event: str, *, actor: str) -> None:
        reason = f"{rec.layer.value} → {target.value} (manual)"
        from reverie.text.classify import sub_tier_for

        self._apply(
            rec,
            {"layer": target, "updated_at": self.now(), "sub_tier": sub_tier_for(rec, target)},
            event,
            reason,
            actor=actor,
            data={"from": rec.layer.value, "to": target.value, "rule": "manual"},
        )


_SCOPE_KEYS = ("user_id", "agent_id", "session_id")
_LAYER_ORDER = (Layer.WORKING, Layer.EPISODIC, Layer.SEMANTIC)
_LAYER_RANK = {Layer.WORKING: 0, Layer.EPISODIC: 1, Layer.SEMANTIC: 2, Layer.PROCEDURAL: 2, Layer.CODEBASE: 2}


def _clean_layer(layer: Any) -> Layer:
    try:
        return Layer(layer)
    except (ValueError, TypeError):
        raise InvalidInputError(f"layer must be one of {[v.value for v in Layer]}, got {layer!r}") from None


def _require_active(rec: MemoryRecord, verb: str) -> None:
    if rec.status is not Status.ACTIVE:
        raise InvalidInputError(f"memory {rec.id} is {rec.status.value}; only active memories are {verb}")


def _snippet(text: str, n: int = 40) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 1] + "…"


def _sum_by(rows: Sequence[LayerStats], attr: str) -> dict[str, int]:
    out: dict[str, int] = {}
    for r in rows:
        key = getattr(r, attr).value
        out[key] = out.get(key, 0) + r.count
    return out


__all__ = ["Memory", "default_target"]


#: Memory objects not closed yet: one exit handler for all of them, no registration left behind per object
class _SessionUse:
    """The memories each open session has used (searched and shown, or read by id), for co-activation
    counting as the energy-model consolidation design counts it: two memories accessed in the same session
    are co-activated once for that session (``weight`` = the number of sessions that used both). A call
    without a session is a session of its own (the memories it used together). Bounded: the last
    ``per_session`` memories of at most ``_SESSIONS`` sessions are kept; :meth:`end` forgets a session."""

    _SESSIONS = 512

    def __init__(self, per_session: int) -> None:
        from collections import OrderedDict

        self.per_session = per_session
        self._used: OrderedDict[tuple[str | None, str], OrderedDict[str, None]] = OrderedDict()
        self._counted: dict[tuple[str | None, str], set[tuple[str, str]]] = {}
        self._lock = threading.Lock()

    def co_accessed(
        self, records: Sequence[MemoryRecord], used: Sequence[str], session_id: str | None
    ) -> builtins.list[tuple[str, str]]:
        """The co-activation pairs to count for this access: each used memory with every other memory its
        session (per user) used, each pair once per session."""
        from collections import OrderedDict

        from reverie.dynamics.tagging import pair_key

        users = {r.id: r.user_id for r in records}
        pairs: builtins.list[tuple[str, str]] = []
        with self._lock:
            for user in dict.fromkeys(users[i] for i in used if i in users):
                mine = [i for i in used if users.get(i) == user]
                if session_id is None:
                    pairs += [pair_key(a, b) for n, a in enumerate(mine) for b in mine[n + 1 :] if a != b]
                    continue
                key = (user, session_id)
                seen = self._used.get(key)
                if seen is None:
                    seen = self._used[key] = OrderedDict()
                    self._counted[key] = set()
                    while len(self._used) > self._SESSIONS:
                        old, _ = self._used.popitem(last=False)
                        self._counted.pop(old, None)
                self._used.move_to_end(key)
                counted = self._counted[key]
                for mid in mine:
                    for other in seen:
                        if other != mid:
                            pair = pair_key(mid, other)
                            if pair not in counted:
                                counted.add(pair)
                                pairs.append(pair)
                    seen.pop(mid, None)
                    seen[mid] = None
                    while len(seen) > self.per_session:
                        seen.popitem(last=False)
        return pairs

    def end(self, user_id: str | None, session_id: str) -> None:
        with self._lock:
            self._used.pop((user_id, session_id), None)
            self._counted.pop((user_id, session_id), None)


def _spread_activation(store: Store, used: Sequence[str], accessed: set[str], cfg: Any) -> None:
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


_OPEN: weakref.WeakSet[Memory] = weakref.WeakSet()


@atexit.register
def _settle_open_at_exit() -> None:
    for mem in list(_OPEN):
        if not mem._closed:
            with contextlib.suppress(Exception):
                mem._settle()


#: memories erased per transaction by :meth:`Memory.forget_user` (each batch merges the full-text index
#: once; measured on SQLite: 20k memories of one user in 1.9 s beside 20k of another, 100k in 12 s)
_ERASE_BATCH = 5000
#: fields an erasure never needs to read
_ERASE_OMIT = frozenset({"embedding", "inputs", "metadata", "importance_channels", "entities"})
#: separators of the state keys that embed a user id (``schedule:ingest:<user>``, ``write.buffer\x1f<user>\x1f…``)
_STATE_SEPARATORS = (":", "\x1f")


def _names_user(key: str, value: Any, user: str | None) -> bool:
    """Whether a state entry belongs to ``user``: its key ends with the user after a separator, or has
    the user as a ``\x1f``-separated part (a conversation buffer), or its value is a cursor that
    starts with the user (``<user>\x1f<memory id>``)."""
    name = user or ""
    parts = key.split("\x1f")
    if len(parts) > 1 and parts[1] == name:
        return True
    if user is not None and any(key.endswith(sep + name) for sep in _STATE_SEPARATORS):
        return True
    if isinstance(value, dict):
        after = value.get("after")
        if isinstance(after, str) and user is not None and after.startswith(name + "\x1f"):
            return True
    return False
