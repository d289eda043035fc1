"""``ScopedMemory``: a :class:`~reverie.Memory` as one caller may use it.

The REST API and the MCP server hand every call to a ``ScopedMemory`` built from the caller's
:class:`~reverie.auth.Credential`; it checks the call against the credential and then calls the
same ``Memory`` method:

* scope arguments (``user_id``, ``agent_id``) are resolved by the credential: a user or agent it
  does not cover raises :class:`~reverie.PermissionDeniedError`; with none given, the credential's
  only user (and agent, if it is narrowed to one) is used;
* every by-id operation reads the memory's owner first: a memory outside the credential's scope is
  reported exactly like an unknown id (:class:`~reverie.NotFoundError`), so other scopes cannot be
  probed;
* all-users views, stats over all users, export and the dream reports need an admin credential;
* agent narrowing holds on every read path: search, context (its working memory and hot tier
  too), the hot tier, working memory, relations, stats and the topic index;
* one scope filter (:meth:`ScopedMemory.visible`) goes over every answer before it is returned: a memory
  the credential may not see is left out, and the id of one is never named — not in a record's
  ``superseded_by``, a search explanation (``coactivated_with``, a graph walk's ``via``), a history, a
  context block or a write's reason (list entries are dropped; in text and fields it reads
  :data:`FOREIGN_ID`);
* an import (:meth:`restore`) stores the records in the credential's scope and rejects the others. It
  never tells whether an id exists outside the scope: a record keeps its id only when the id is free
  or already one of the caller's memories (then it is skipped, as a re-run); otherwise it is stored
  under an id derived from the original and the record's scope (the same one on every run, so a
  re-run skips it) — whether the original belonged to another scope or to nobody. Its
  ``superseded_by`` and ``box_id`` are kept only when they name something in the caller's scope.

With :data:`~reverie.auth.FULL_ACCESS` (the single-tenant default) every check passes.
"""

from __future__ import annotations

import builtins
import dataclasses
import os
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from reverie import scoped_import
from reverie.auth import FULL_ACCESS, Credential
from reverie.errors import InvalidInputError, NotFoundError, PermissionDeniedError
from reverie.model import AccessEvent, HistoryEvent, Layer, MemoryRecord, Relation, Status, StoreTier
from reverie.results import AddResult, DreamReport, SessionEndReport, Stats, UndoneConsolidation
from reverie.validation import clean_id, clean_scope, printable, typed_arguments

if TYPE_CHECKING:
    from reverie.memory import Memory
    from reverie.read.inject import ContextBlock
    from reverie.results import Hit


#: ids read per prefix when a scoped caller names a memory by a prefix of its id
_PREFIX_SCAN = 1000


@typed_arguments
class ScopedMemory:
    """``memory`` as the holder of ``credential`` may use it (see the module docs)."""

    def __init__(
        self,
        memory: Memory,
        credential: Credential = FULL_ACCESS,
        *,
        code_roots: Sequence[str | os.PathLike[str]] | None = None,
    ) -> None:
        self.memory = memory
        self.credential = credential
        #: the directories :meth:`ingest_code` may read (``None``: any, for an admin credential only)
        self.code_roots: tuple[Path, ...] | None = (
            None if code_roots is None else tuple(Path(os.path.realpath(Path(r).expanduser())) for r in code_roots)
        )

    def __repr__(self) -> str:
        return f"ScopedMemory({self.memory!r}, {self.credential.name!r})"

    # scope helpers -------------------------------------------------------------------------
    def _user(self, user_id: Any) -> str | None:
        return self.credential.user_id(user_id)

    def _agent(self, agent_id: Any) -> str | None:
        return self.credential.agent_id(agent_id)

    def users(self, *, limit: int = 1000) -> builtins.list[tuple[str | None, int]]:
        """Each user with memories and how many: every user for an admin, else the credential's own."""
        if self.credential.admin:
            return self.memory.users(limit=limit)
        mine: builtins.list[tuple[str | None, int]] = [
            (u, n) for u, n in self.memory.users(limit=100_000) if u in self.credential.users
        ]
        if self.credential.agents is not None:  # its agents' memories only, in any status or store
            everything = {"status": [s.value for s in Status], "store": [t.value for t in StoreTier]}
            mine = [
                (u, sum(self.memory.count(user_id=u, agent_id=a, filters=everything) for a in self.credential.agents))
                for u, _n in mine
            ]
            mine = [(u, n) for u, n in mine if n]
        return mine[:limit]

    def peek(self, memory_id: Any) -> MemoryRecord:
        """The memory if the credential may see it, read without counting an access; NotFoundError otherwise
        (exactly as for an id that does not exist). A unique prefix of an id is accepted: unique among
        the memories the credential may see, which are the only ones it ever names."""
        return self._shown(self._own(memory_id))

    def _own(self, memory_id: Any) -> MemoryRecord:
        """The memory as stored, if the credential may see it (the by-id operations read its id and owner)."""
        mid = self.resolve_id(memory_id)
        return self.credential.require_visible(self.memory.peek_many([mid]).get(mid), mid)

    def _shown(self, record: MemoryRecord) -> MemoryRecord:
        shown = self._shown_all([record])
        if not shown:  # a by-id operation checked the owner first: only a changed scope lands here
            raise NotFoundError(f"no memory with id {record.id}")
        return shown[0]

    def _shown_all(self, records: builtins.list[MemoryRecord]) -> builtins.list[MemoryRecord]:
        """``records`` as the credential is shown them: the ones it may not see left out; a ``superseded_by``
        naming a memory it may not see (one another agent of the user wrote, or one a store written by an
        older version linked across scopes) left empty — the record still says it is superseded, but no id
        of another scope is named —, and such ids in its metadata and inputs replaced by :data:`FOREIGN_ID`."""
        if self.credential.admin:
            return records
        kept = [r for r in records if self.credential.may_see(r)]
        named = {r.superseded_by for r in kept if r.superseded_by}
        mentioned = set(_ids_in([[r.metadata, r.inputs] for r in kept])) - {r.id for r in kept}
        foreign = self._foreign(named, strict=True) | self._foreign(mentioned, strict=False)
        if not foreign:
            return kept
        return [
            dataclasses.replace(
                r,
                superseded_by=None if r.superseded_by in foreign else r.superseded_by,
                metadata=_hide_in(r.metadata, foreign),
                inputs=_hide_in(r.inputs, foreign),
            )
            if r.superseded_by in foreign or foreign & set(_ids_in([r.metadata, r.inputs]))
            else r
            for r in kept
        ]

    def _foreign(self, ids: Iterable[str], *, strict: bool) -> set[str]:
        """Which of ``ids`` name a memory the credential may not see. ``strict``: an id that names no memory
        counts too (a memory deleted since, or a field that only ever holds memory ids); otherwise only
        existing memories count (free-form metadata may hold other ids)."""
        wanted = set(ids)
        if self.credential.admin or not wanted:
            return set()
        found = self.memory.peek_many(sorted(wanted))
        return {
            i for i in wanted if (strict and i not in found) or (i in found and not self.credential.may_see(found[i]))
        }

    def visible(self, value: Any) -> Any:
        """``value`` (any answer: JSON-like data, records and their containers) with every memory id the
        credential may not see taken out: dropped from lists and mappings' keys, replaced by
        :data:`FOREIGN_ID` in text and fields. Every id in an answer names a memory, so an id that names
        none is taken out too. With an admin credential, ``value`` itself."""
        if self.credential.admin:
            return value
        foreign = self._foreign(_ids_in(value), strict=True)
        return _scrub(value, foreign) if foreign else value

    def resolve_id(self, memory_id: Any) -> str:
        """The full id a whole id or a unique id prefix names, among the memories the credential may see."""
        if self.credential.admin:
            return self.memory.resolve_id(memory_id)
        mid = clean_id(memory_id)
        rec = self.memory.peek_many([mid]).get(mid)
        if rec is not None and self.credential.may_see(rec):
            return mid
        for candidate in dict.fromkeys((mid, mid.lower())):
            found = self.memory.ids_with_prefix(candidate, limit=_PREFIX_SCAN)
            records = self.memory.peek_many(found)
            visible = [i for i in found if i in records and self.credential.may_see(records[i])]
            if len(visible) == 1 and len(found) < _PREFIX_SCAN:
                return visible[0]
            if visible or len(found) >= _PREFIX_SCAN:
                from reverie.errors import AmbiguousIdError

                raise AmbiguousIdError(
                    f"id prefix {printable(mid)} matches several memories: "
                    f"{'; '.join(visible[:5]) or '…'}. Type more characters of the id.",
                    tuple(visible[:5]),
                )
        raise NotFoundError(f"no memory with id {mid}")

    def _visible_users(self) -> list[str]:
        return sorted(self.credential.users)

    # write -----------------------------------------------------------------------------------
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
        result = self.memory.add(
            content,
            user_id=self._user(user_id),
            agent_id=self._agent(agent_id),
            session_id=session_id,
            metadata=metadata,
            when=when,
            source=source,
            infer=infer,
        )
        return self._visible_result(result)

    def _visible_results(self, results: builtins.list[AddResult]) -> builtins.list[AddResult]:
        """Results without the memories the credential may not see. Chat messages and observed turns go
        through a session's buffer, which the agents of a user share (a conversation): storing it stores
        the turns other agents buffered too — each in its own agent's scope — and those are not shown."""
        if self.credential.admin:
            return results
        if self.credential.agents is None:
            shown: builtins.list[AddResult] = self.visible(results)
            return shown
        ids = sorted({i for r in results for i in (r.id, *r.ids) if i})
        visible = {i for i, rec in self.memory.peek_many(ids).items() if self.credential.may_see(rec)}
        out = []
        for r in results:
            kept = tuple(i for i in r.ids if i in visible)
            if r.id is None or r.id in visible:
                out.append(dataclasses.replace(r, ids=kept) if kept != r.ids else r)
            elif kept:
                out.append(dataclasses.replace(r, id=kept[0], ids=kept))
        kept_out: builtins.list[AddResult] = self.visible(out)
        return kept_out

    def _visible_result(self, result: AddResult) -> AddResult:
        shown = self._visible_results([result])
        if shown:
            return shown[0]
        from reverie.results import Action

        return AddResult(None, Action.SKIP, (), "stored what other agents had buffered in this session")

    def add_many(
        self, items: Iterable[Any], *, user_id: str | None = None, agent_id: str | None = None, **options: Any
    ) -> builtins.list[AddResult]:
        user, agent = self._user(user_id), self._agent(agent_id)
        if not self.credential.admin and user is None:  # pragma: no cover - _user never returns None then
            raise PermissionDeniedError("a scoped credential writes only into its users")
        return self._visible_results(self.memory.add_many(items, user_id=user, agent_id=agent, **options))

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
        """Observe a turn. A session's buffer is shared by the agents of a user (a conversation): when this
        turn makes it due (or ``flush``), the turns other agents buffered are stored too — each in its own
        agent's scope — and only the results the credential may see are returned."""
        results = self.memory.observe(
            message,
            role=role,
            user_id=self._user(user_id),
            agent_id=self._agent(agent_id),
            session_id=session_id,
            when=when,
            metadata=metadata,
            flush=flush,
        )
        return self._visible_results(results)

    def flush(self, *, user_id: str | None = None, session_id: str | None = None) -> builtins.list[AddResult]:
        return self._visible_results(self.memory.flush(user_id=self._user(user_id), session_id=session_id))

    def buffered(self, *, user_id: str | None = None, session_id: str | None = None) -> builtins.list[dict[str, Any]]:
        """The turns waiting in a session's buffer; a credential narrowed to agents may not read it (the
        buffer holds every agent's turns of the conversation)."""
        if not self.credential.admin and self.credential.agents is not None:
            raise PermissionDeniedError(
                "a session's buffer holds every agent's turns; reading it needs a credential not narrowed to agents"
            )
        return self.memory.buffered(user_id=self._user(user_id), session_id=session_id)

    def end_session(self, session_id: str, *, user_id: str | None = None) -> SessionEndReport:
        """End a session. Ending it promotes and clears the working memory of every agent in it, so a
        credential narrowed to agents may end only a session whose working memory is all its own."""
        user = self._user(user_id)
        if not self.credential.admin and self.credential.agents is not None:
            sid = clean_scope(session_id, "session_id")
            if sid is None:
                raise InvalidInputError("end_session needs a session_id")
            others = self.memory.working_memory(sid, user_id=user) + self.memory.session_working_layer(
                sid, user_id=user
            )
            if any(not self.credential.may_see(r) for r in others):
                raise PermissionDeniedError(
                    "this session holds working memories of other agents; ending it "
                    "needs a credential not narrowed to agents"
                )
            return self._only_visible(self.memory.end_session(session_id, user_id=user))
        report: SessionEndReport = self.visible(self.memory.end_session(session_id, user_id=user))
        return report

    def _only_visible(self, report: SessionEndReport) -> SessionEndReport:
        """A session report without the ids of memories the credential may not see (the turns other
        agents had buffered in the session are stored in their own scopes when it ends)."""
        ids: set[str] = set()
        for value in report.values():
            if isinstance(value, list):
                ids.update(v for v in value if isinstance(v, str))
                ids.update(
                    i
                    for v in value
                    if isinstance(v, dict)
                    for i in [v.get("id"), *v.get("ids", ())]
                    if isinstance(i, str)
                )
        visible = {i for i, rec in self.memory.peek_many(sorted(ids)).items() if self.credential.may_see(rec)}
        out: dict[str, Any] = dict(report)
        for key, value in report.items():
            if isinstance(value, list):
                out[key] = [
                    v
                    for v in value
                    if not (isinstance(v, str) and v in ids and v not in visible)
                    and not (isinstance(v, dict) and isinstance(v.get("id"), str) and v["id"] not in visible)
                ]
        return cast(SessionEndReport, self.visible(out))

    def restore(self, records: Iterable[Any], **options: Any) -> dict[str, Any]:
        """Import exported records; a scoped credential's records must lie in its scope (the others
        are rejected with the reason), and their ids are kept or derived as the module docs say."""
        if self.credential.admin:
            return self.memory.restore(records, **options)
        return self.memory.restore(scoped_import.in_scope(self.memory, self.credential, records), **options)

    # by id -------------------------------------------------------------------------------------
    def get(self, memory_id: Any) -> MemoryRecord:
        return self._shown(self.memory.get(self._own(memory_id).id))

    def update(self, memory_id: Any, content: Any = None, **changes: Any) -> MemoryRecord:
        return self._shown(self.memory.update(self._own(memory_id).id, content, **changes))

    def forget(self, memory_id: Any) -> None:
        self.memory.forget(self._own(memory_id).id)

    def forget_user(self, user_id: Any, *, dry_run: bool = False) -> dict[str, Any]:
        """Erase everything of one user (see :meth:`Memory.forget_user`). The credential must cover the
        user and not be narrowed to agents (the erasure takes every agent's memories of the user); the
        anonymous partition needs an admin."""
        if not self.credential.admin:
            if self.credential.agents is not None:
                raise PermissionDeniedError(
                    "erasing a user takes every agent's memories of it; it needs a credential not narrowed to agents"
                )
            if clean_scope(user_id, "user_id") is None:
                raise PermissionDeniedError("erasing the memories stored without a user needs an admin credential")
        return self.memory.forget_user(self._user(user_id), dry_run=dry_run)

    def count(
        self,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        all_users: bool = False,
        filters: Mapping[str, Any] | None = None,
    ) -> int:
        """How many memories :meth:`list` would page through (same scope rules)."""
        if all_users:
            self.credential.require_admin("counting every user's memories")
            return self.memory.count(
                user_id=clean_scope(user_id, "user_id"),
                agent_id=clean_scope(agent_id, "agent_id"),
                all_users=True,
                filters=filters,
            )
        return self.memory.count(user_id=self._user(user_id), agent_id=self._agent(agent_id), filters=filters)

    def pin(self, memory_id: Any) -> MemoryRecord:
        return self._shown(self.memory.pin(self._own(memory_id).id))

    def unpin(self, memory_id: Any) -> MemoryRecord:
        return self._shown(self.memory.unpin(self._own(memory_id).id))

    def invalidate(self, memory_id: Any, reason: str) -> MemoryRecord:
        return self._shown(self.memory.invalidate(self._own(memory_id).id, reason))

    def reactivate(self, memory_id: Any, *, reason: str = "") -> MemoryRecord:
        return self._shown(self.memory.reactivate(self._own(memory_id).id, reason=reason))

    def promote(self, memory_id: Any, layer: Layer | str | None = None) -> MemoryRecord:
        return self._shown(self.memory.promote(self._own(memory_id).id, layer))

    def demote(self, memory_id: Any) -> MemoryRecord:
        return self._shown(self.memory.demote(self._own(memory_id).id))

    def feedback(self, memory_id: Any, *, useful: bool) -> MemoryRecord:
        return self._shown(self.memory.feedback(self._own(memory_id).id, useful=useful))

    def history(self, memory_id: Any) -> builtins.list[HistoryEvent]:
        """The memory's transitions; an id the credential may not see (a successor another agent wrote,
        say) is replaced in the reason and data by :data:`FOREIGN_ID` — not even an id of another scope
        is named."""
        events: builtins.list[HistoryEvent] = self.visible(self.memory.history(self._own(memory_id).id))
        return events

    def accesses(self, memory_id: Any, *, limit: int = 50) -> builtins.list[AccessEvent]:
        return self.memory.accesses(self._own(memory_id).id, limit=limit)

    def explain_strength(self, memory_id: Any) -> dict[str, Any]:
        strengths: dict[str, Any] = self.visible(self.memory.explain_strength(self._own(memory_id).id))
        return strengths

    def relations(self, memory_id: Any) -> builtins.list[Relation]:
        """Relations from and to a memory whose other end the credential may see too."""
        rec = self._own(memory_id)
        rels = self.memory.relations(rec.id)
        if self.credential.admin:
            return rels
        others = {r.dst_id if r.src_id == rec.id else r.src_id for r in rels}
        visible = {i for i, o in self.memory.peek_many(sorted(others)).items() if self.credential.may_see(o)}
        visible.add(rec.id)
        shown: builtins.list[Relation] = self.visible([r for r in rels if r.src_id in visible and r.dst_id in visible])
        return shown

    def undo_consolidation(self, summary_id: Any, *, reason: str = "") -> UndoneConsolidation:
        rec = self._own(summary_id)
        if self.credential.agents is not None and not self.credential.admin:
            raise PermissionDeniedError(
                "undoing a consolidation changes memories of every agent of the user; "
                "it needs a credential not narrowed to agents"
            )
        return self.memory.undo_consolidation(rec.id, reason=reason)

    # read ----------------------------------------------------------------------------------------
    def search(
        self, query: Any, *, user_id: str | None = None, agent_id: str | None = None, **options: Any
    ) -> builtins.list[Hit]:
        hits = self.memory.search(query, user_id=self._user(user_id), agent_id=self._agent(agent_id), **options)
        if self.credential.admin:
            return hits
        shown = {rec.id: rec for rec in self._shown_all([h.memory for h in hits])}
        explains = self.visible([h.explain for h in hits if h.memory.id in shown])
        return [
            dataclasses.replace(h, memory=shown[h.memory.id], explain=explain)
            for h, explain in zip((h for h in hits if h.memory.id in shown), explains, strict=True)
        ]

    def context(
        self, query: Any, *, user_id: str | None = None, agent_id: str | None = None, **options: Any
    ) -> ContextBlock:
        block = self.memory.context(query, user_id=self._user(user_id), agent_id=self._agent(agent_id), **options)
        if self.credential.admin:
            return block
        return self._visible_block(block)

    def _visible_block(self, block: ContextBlock) -> ContextBlock:
        """The block without the memories the credential may not see (its text written again from the items
        left when one is dropped), no id of another scope named in what was skipped."""
        from reverie.read.inject import HEADERS, estimate_tokens

        ids = [i.id for i in block.items] + [str(s.get("id")) for s in block.skipped if s.get("id")]
        records = self.memory.peek_many(sorted(set(ids)))
        foreign = {i for i in ids if i not in records or not self.credential.may_see(records[i])}
        if not foreign:
            return block
        items = [i for i in block.items if i.id not in foreign]
        lines: builtins.list[str] = []
        section: str | None = None
        used = 0
        for item in items:
            if item.section != section:
                section = item.section
                lines.append(HEADERS.get(section, section))
                used += estimate_tokens(lines[-1])
            lines.append(item.text)
            used += estimate_tokens(item.text)
        return dataclasses.replace(
            block,
            text="\n".join(lines),
            items=items,
            skipped=[s for s in block.skipped if s.get("id") not in foreign],
            used_tokens=min(block.used_tokens, used),
        )

    def working_memory(
        self, session_id: str, *, user_id: str | None = None, agent_id: str | None = None
    ) -> builtins.list[MemoryRecord]:
        return self._shown_all(
            self.memory.working_memory(session_id, user_id=self._user(user_id), agent_id=self._agent(agent_id))
        )

    def hot_tier(self, *, user_id: str | None = None, agent_id: str | None = None) -> builtins.list[MemoryRecord]:
        return self._shown_all(self.memory.hot_tier(user_id=self._user(user_id), agent_id=self._agent(agent_id)))

    def list(
        self, *, user_id: str | None = None, agent_id: str | None = None, all_users: bool = False, **options: Any
    ) -> builtins.list[MemoryRecord]:
        if all_users:
            self.credential.require_admin("listing every user's memories")
            return self.memory.list(
                user_id=clean_scope(user_id, "user_id"),
                agent_id=clean_scope(agent_id, "agent_id"),
                all_users=True,
                **options,
            )
        return self._shown_all(self.memory.list(user_id=self._user(user_id), agent_id=self._agent(agent_id), **options))

    def stats(self, *, user_id: str | None = None, all_users: bool = True) -> Stats:
        """Health check. Over every user (``user_id`` omitted) it needs an admin credential; a scoped
        credential gets its user's counts (its agent's, when it is narrowed to agents)."""
        if self.credential.admin:
            return self.memory.stats(user_id=clean_scope(user_id, "user_id"), all_users=all_users)
        return self.memory.stats(user_id=self._user(user_id), agent_id=self._agent(None))

    def served_stats(self, *, user_id: str | None = None, full_target: bool = False) -> dict[str, Any]:
        """The health check as a server answers it: :meth:`stats` with ``users`` (each user the credential
        may see and how many memories it has: every user for an admin) and ``target`` named without
        credentials — and, unless ``full_target`` (an admin asking a REST server), without its directory or
        host: only the database's name."""
        from reverie.inspection import redact_target

        data: dict[str, Any] = dict(self.stats(user_id=user_id))
        data["users"] = [{"user_id": u, "memories": n} for u, n in self.users(limit=1000)]
        shown = redact_target(str(data["target"]))
        data["target"] = shown if full_target and self.credential.admin else _target_name(shown)
        return data

    def export(self, *, user_id: str | None = None) -> Iterator[MemoryRecord]:
        """Every memory (of one user, or of all) in every status and store; needs an admin credential."""
        self.credential.require_admin("export")
        return self.memory.export(user_id=clean_scope(user_id, "user_id"))

    # engine ----------------------------------------------------------------------------------------
    def dream(self, *, steps: Sequence[str] | None = None, user_id: str | None = None) -> DreamReport:
        """Run the dream cycle: over every user with an admin credential, else over the credential's
        users only (one run each; the last report is returned — a run that changed nothing when the
        credential sees no user yet). The cycle works on every agent's memories of a user, so a credential
        narrowed to agents may not run it."""
        if self.credential.admin:
            return self.memory.dream(steps=steps, user_id=user_id)
        if self.credential.agents is not None:
            raise PermissionDeniedError(
                "the dream cycle changes every agent's memories of a user; it needs a credential not narrowed to agents"
            )
        users = (
            [self._user(user_id)] if user_id is not None or len(self.credential.users) == 1 else self._visible_users()
        )
        report: DreamReport = {
            "kind": "dream",
            "owner": "",
            "at": self.memory.now().isoformat(),
            "steps": [],
            "changed": 0,
            "seconds": 0.0,
        }
        for user in users:
            report = self.memory.dream(steps=steps, user_id=user)
        return report

    def tick(self, *, user_id: str | None = None) -> DreamReport:
        if self.credential.admin:
            return self.memory.tick(user_id=clean_scope(user_id, "user_id"))
        if self.credential.agents is not None:
            raise PermissionDeniedError(
                "the maintenance tick changes every agent's memories of a user; it needs "
                "a credential not narrowed to agents"
            )
        return self.memory.tick(user_id=self._user(user_id))

    # keeping the memory in shape -------------------------------------------------------------
    def maintain(self, **options: Any) -> builtins.list[DreamReport]:
        """Run the maintenance jobs that are due (every user's memories): needs an admin credential."""
        self.credential.require_admin("the maintenance schedule")
        return self.memory.maintain(**options)

    def maintenance_status(self, **options: Any) -> builtins.list[dict[str, Any]]:
        """Each scheduled job's interval, last and next run (times only, no memory): any credential."""
        return self.memory.maintenance_status(**options)

    def compact(self, *, dedup: bool = True, user_id: str | None = None) -> dict[str, Any]:
        """Dedup and store optimisation: the store is shared by every user, so it needs an admin credential."""
        self.credential.require_admin("compaction")
        return self.memory.compact(dedup=dedup, user_id=clean_scope(user_id, "user_id"))

    def ingest_code(self, path: Any, *, user_id: str | None = None, agent_id: str | None = None) -> dict[str, Any]:
        """Remember a code base in the credential's scope. The path is on the machine that runs reverie, so it
        must lie in one of the directories the operator named (``code_roots``); without them only an admin
        credential may read code, anywhere. A path outside is refused whether it exists or not."""
        user, agent = self._user(user_id), self._agent(agent_id)
        return self.memory.ingest_code(self._code_path(path), user_id=user, agent_id=agent)

    def _code_path(self, path: Any) -> Any:
        if self.code_roots is None:
            if self.credential.admin:
                return path
            raise PermissionDeniedError(
                "reading code on this machine needs the directories it may read named by the operator "
                "(reverie mcp --code-root DIR)"
            )
        if isinstance(path, bytes) or not isinstance(path, str | os.PathLike) or not os.fspath(path).strip():
            raise InvalidInputError("path must be a file-system path")
        text = os.fspath(path)
        if "\x00" in text:
            raise InvalidInputError("path must be a path without NUL characters")
        # where it leads (links followed), decided before anything about it is read or said
        where = Path(os.path.realpath(Path(text).expanduser()))
        if not any(where == root or root in where.parents for root in self.code_roots):
            roots = ", ".join(str(r) for r in self.code_roots) or "none"
            raise PermissionDeniedError(f"{printable(text)} is outside the directories this server may read ({roots})")
        return where

    def topic_index(
        self, *, user_id: str | None = None, agent_id: str | None = None, refresh: bool = False
    ) -> dict[str, Any]:
        """The user's topic index; a credential narrowed to agents gets the index of its agent's memories
        alone (the user's index is made from every agent's memories and conversations)."""
        agent = self._agent(agent_id)
        index: dict[str, Any] = self.visible(
            self.memory.topic_index(user_id=self._user(user_id), agent_id=agent, refresh=refresh)
        )
        return index

    def documents(self, *, user_id: str | None = None, refresh: bool = False) -> dict[str, Any]:
        """The user's documents. They are made from every agent's memories of the user, so a credential
        narrowed to agents may not read them."""
        if not self.credential.admin and self.credential.agents is not None:
            raise PermissionDeniedError(
                "a user's documents are made from every agent's memories of the user; "
                "they need a credential not narrowed to agents"
            )
        return self.memory.documents(user_id=self._user(user_id), refresh=refresh)

    def action_telemetry(
        self, *, user_id: str | None = None, limit: int = 100, since: Any = None
    ) -> builtins.list[dict[str, Any]]:
        user = self._user(user_id)
        events = self.memory.action_telemetry(user_id=user, limit=limit, since=since)
        if self.credential.agents is not None:
            events = [e for e in events if e.get("agent_id") in self.credential.agents]
        shown: builtins.list[dict[str, Any]] = self.visible(events)
        return shown

    def export_markdown(self, path: Any, *, user_id: str | None = None) -> dict[str, int]:
        self.credential.require_admin("export")
        return self.memory.export_markdown(path, user_id=clean_scope(user_id, "user_id"))

    def dream_reports(self) -> builtins.list[dict[str, Any]]:
        self.credential.require_admin("the dream reports")
        return self.memory.dream_reports()


#: what an answer shows instead of the id of a memory outside the credential's scope
FOREIGN_ID = "(a memory outside this scope)"
_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
#: records of a scoped import checked together (their ids read in one query)


def _hide(text: str, foreign: set[str]) -> str:
    return _UUID.sub(lambda m: FOREIGN_ID if m.group(0) in foreign else m.group(0), text)


def _hide_in(value: Any, foreign: set[str]) -> Any:
    """``value`` with the ``foreign`` ids replaced by :data:`FOREIGN_ID` wherever they appear (a record's
    own fields keep their shape: lists keep their length)."""
    if isinstance(value, str):
        return _hide(value, foreign)
    if isinstance(value, dict):
        return {k: _hide_in(v, foreign) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_hide_in(v, foreign) for v in value]
    return value


def _ids_in(value: Any) -> set[str]:
    """Every id-shaped string in ``value`` (text, mappings' keys and values, sequences, dataclasses)."""
    found: set[str] = set()
    stack = [value]
    seen = 0
    while stack and seen < _MAX_WALK:
        item = stack.pop()
        seen += 1
        if isinstance(item, str):
            if len(item) >= 36:
                found.update(_UUID.findall(item))
        elif isinstance(item, Mapping):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list | tuple | set | frozenset):
            stack.extend(item)
        elif dataclasses.is_dataclass(item) and not isinstance(item, type):
            stack.extend(getattr(item, f.name) for f in dataclasses.fields(item))
    return found


#: values walked at most when looking for ids in one answer (an answer is far smaller)
_MAX_WALK = 1_000_000


def _scrub(value: Any, foreign: set[str]) -> Any:
    """``value`` without the ``foreign`` ids: a list entry or mapping key that is one is dropped, one inside
    text or as a field's value reads :data:`FOREIGN_ID`; dataclasses are rebuilt with scrubbed fields."""
    if isinstance(value, str):
        return _hide(value, foreign) if len(value) >= 36 else value
    if isinstance(value, Mapping):
        return {
            _scrub(k, foreign): _scrub(v, foreign)
            for k, v in value.items()
            if not (isinstance(k, str) and k in foreign)
        }
    if isinstance(value, list | tuple):
        kept = [_scrub(v, foreign) for v in value if not (isinstance(v, str) and v in foreign)]
        return tuple(kept) if isinstance(value, tuple) else kept
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        changes = {}
        for f in dataclasses.fields(value):
            if not f.init:
                continue
            old = getattr(value, f.name)
            new = _scrub(old, foreign)
            if new is not old and new != old:
                changes[f.name] = new
        return dataclasses.replace(value, **changes) if changes else value
    return value


def _target_name(target: str) -> str:
    """A store's name without where it lives: a SQLite file's name, a PostgreSQL database's name."""
    from urllib.parse import urlsplit

    parts = urlsplit(target)
    if parts.scheme.startswith("postgres"):
        return f"{parts.scheme}://…/{parts.path.lstrip('/')}"
    return Path(target).name


__all__ = ["FOREIGN_ID", "ScopedMemory"]
