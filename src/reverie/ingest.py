"""The write side of :class:`~reverie.memory.Memory`: ``add`` and ``add_many`` (validated items through the
write path, or stored verbatim), chat messages, the observer and its conversation buffer, ``end_session`` and
``restore`` of exported records. The methods are mixed into ``Memory``.
"""

from __future__ import annotations

import builtins
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

import numpy as np

from reverie.errors import InvalidInputError
from reverie.memory_base import MemoryBase
from reverie.model import HistoryEvent, Layer, MemoryRecord, Vector
from reverie.results import Action, AddResult, SessionEndReport
from reverie.validation import (
    RecordLimits,
    clean_bool,
    clean_content,
    clean_count,
    clean_id,
    clean_metadata,
    clean_record,
    clean_scope,
    clean_source,
    clean_when,
    describe_error,
    items_list,
    printable,
)
from reverie.write.items import PreparedItem
from reverie.write.pipeline import WritePipeline
from reverie.write.recording import verbatim_actions
from reverie.write.signals.buffer import buffer_key

_SCOPE_KEYS = ("user_id", "agent_id", "session_id")
#: the largest ``add_many`` batch (one transaction; far above what is useful)
MAX_BATCH = 100_000


class Ingest(MemoryBase):
    """Everything that stores new memories (mixed into ``Memory``)."""

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

        infer = clean_bool(infer, "infer")
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
        infer = clean_bool(infer, "infer")
        batch_size = clean_count(batch_size, "batch_size", low=1, high=MAX_BATCH)
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

            note_ingestion(self._memory(), users)

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
        # one line per batch (its ids), as the dream logs its batches: a line per memory would slow a bulk load
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
