"""The public library object: ``Memory``.

A thin orchestrator: it validates input, asks the embedder for vectors, runs the write path,
the read path, the access updates of the dynamics and the dream cycle, and talks to storage
only through the :class:`~reverie.store.base.Store` contract.

This module holds the object itself — opening and closing, id lookup, the read path (``search``,
``context``, ``list`` …) and the dream cycle. Its other operations are mixed in from one module per
concern (see :mod:`reverie.memory_base`): :mod:`reverie.ingest` (the write side),
:mod:`reverie.access_updates` (what an access writes), :mod:`reverie.editing` (the edit rules),
:mod:`reverie.upkeep` (maintenance, export, backup) and :mod:`reverie.inspection` (operators' views).
"""

from __future__ import annotations

import atexit
import builtins
import contextlib
import dataclasses
import logging
import threading
import weakref
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any

import numpy as np

from reverie._threads import single_blas_thread
from reverie.access_updates import AccessUpdates, SessionUse
from reverie.clock import Clock, ensure_aware, system_clock
from reverie.config import Settings
from reverie.editing import Editing
from reverie.embed.base import Embedder
from reverie.errors import AmbiguousIdError, EmbedderMismatchError, InvalidInputError, MemoryStateError, NotFoundError
from reverie.ingest import Ingest
from reverie.inspection import Inspection, redact_target
from reverie.model import AccessEvent, HistoryEvent, MemoryRecord
from reverie.opslog import OpsLog
from reverie.results import DreamReport, Hit, Stats
from reverie.store import check_target, open_store
from reverie.store.base import LayerStats, MemoryFilter, Store
from reverie.upkeep import Upkeep
from reverie.validation import (
    clean_bool,
    clean_content,
    clean_id,
    clean_k,
    clean_label,
    clean_scope,
    clean_when,
    parse_filters,
    typed_arguments,
)

if TYPE_CHECKING:
    from reverie.dream import DreamServices
    from reverie.llm.client import ChatJSON
    from reverie.read.inject import ContextBlock
    from reverie.read.pipeline import ReadPipeline
    from reverie.read.pipeline import Request as ReadRequest

DEFAULT_DB_NAME = "memory.db"
log = logging.getLogger("reverie")
#: the largest token budget of a context block (as the REST API and the MCP tool take)
MAX_BUDGET_TOKENS = 100_000
#: the largest offset a listing takes (a store never holds more memories; a larger one overflows SQL)
MAX_OFFSET = 10**12


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


@typed_arguments
class Memory(Inspection, AccessUpdates, Ingest, Editing, Upkeep):
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

            # the local model is loaded when a text is first embedded: reading a store never loads it
            embedder = make_embedder(self.settings.embedding, clock=self.now, lazy=True)
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
        check_target(resolved)
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
        self._sessions = SessionUse(self.settings.read.session_coaccess_max)
        _OPEN.add(self)  # a script that never closes loses no update (see _settle_open_at_exit)
        self.ops = OpsLog(
            self._opslog_path(),
            clock=self.now,
            rotate_bytes=self.settings.opslog.rotate_bytes,
            queue_size=self.settings.opslog.queue_size,
            log_text=self.settings.opslog.log_text,
            store=redact_target(str(self.target)),
        )
        if self.settings.mirror.dir is not None:  # the live markdown mirror sees every change the store commits
            from reverie.mirror import attach

            self._store = attach(self._store, self.settings.mirror, ops_log=self.ops.log)
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
        text = clean_content(
            query,
            max_bytes=limits.max_query_chars * 4,
            max_chars=limits.max_query_chars,
            what="query",
            setting="limits.max_query_chars",
        )
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
        if not hits and not all_users:
            self._note_empty_scope(req.flt.user_id)
        self._touch([h.memory for h in hits], kind="search", session_id=req.session_id, hebbian=True, defer=True)
        self.ops.log(
            "search",
            user_id=req.flt.user_id,
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
        if isinstance(budget, bool) or not isinstance(budget, int) or not 1 <= budget <= MAX_BUDGET_TOKENS:
            raise InvalidInputError(f"budget_tokens must be an integer from 1 to {MAX_BUDGET_TOKENS}")
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
            user_id=req.flt.user_id,
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
        if user_id is not None or self._has_memories(None):
            return
        names = self._named_users()
        if not names:
            return
        raise MemoryStateError(
            f"no memories are stored without a user_id, so this would find nothing. Users with memories "
            f"(count): {names}. Pass user_id=... (CLI: -u NAME), or all_users=True (CLI: --all-users) "
            "to look at every user's memories."
        )

    def _note_empty_scope(self, user_id: str | None) -> None:
        """A search found nothing: when the user has no memories at all, say so at DEBUG on the ``reverie``
        logger, naming the users that have some (a new user is normal, a mistyped user_id is not)."""
        if user_id is None or not log.isEnabledFor(logging.DEBUG) or self._has_memories(user_id):
            return
        names = self._named_users() or "none"
        log.debug("search: no memories are stored for user_id %r; users with memories (count): %s", user_id, names)

    def _has_memories(self, user_id: str | None) -> bool:
        return bool(self.store.list(MemoryFilter(user_id=user_id, statuses=None, stores=None), limit=1))

    def _named_users(self, shown: int = 10) -> str:
        """The users with memories and their counts, largest first (at most ``shown``), for a message."""
        users = [(u, n) for u, n in self.store.users(limit=shown + 2) if u is not None]
        return ", ".join(f"{u} ({n})" for u, n in users[:shown]) + (" and more" if len(users) > shown else "")

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

        if not isinstance(order_by, str) or order_by not in ORDERABLE_FIELDS:
            raise InvalidInputError(f"order_by must be one of {sorted(ORDERABLE_FIELDS)}")
        if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= 10_000:
            raise InvalidInputError("limit must be an integer between 1 and 10000")
        if isinstance(offset, bool) or not isinstance(offset, int) or not 0 <= offset <= MAX_OFFSET:
            raise InvalidInputError(f"offset must be an integer between 0 and {MAX_OFFSET}")
        descending = clean_bool(descending, "descending")
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

    def stats(self, *, user_id: str | None = None, agent_id: str | None = None, all_users: bool = True) -> Stats:
        """The health check: count and energy avg/min/max per layer and status (of one user, and of one of its
        agents, when given)."""
        if user_id is not None:
            all_users = False
        flt = MemoryFilter.everything(
            user_id=clean_scope(user_id, "user_id"), agent_id=clean_scope(agent_id, "agent_id"), all_users=all_users
        )
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

    # dynamics ----------------------------------------------------------------------------
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

    # dream -----------------------------------------------------------------------------------
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
_OPEN: weakref.WeakSet[Memory] = weakref.WeakSet()


@atexit.register
def _settle_open_at_exit() -> None:
    for mem in list(_OPEN):
        if not mem._closed:
            with contextlib.suppress(Exception):
                mem._settle()
