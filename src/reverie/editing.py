"""The edit rules of :class:`~reverie.memory.Memory`: editing, pinning, invalidating, reactivating, feedback,
manual layer moves, undoing a consolidation, and forgetting (one memory with what was made from it, or every
memory of a user). Each change is one transaction with its history event. The methods are mixed into ``Memory``.
"""

from __future__ import annotations

import builtins
import contextlib
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from reverie.dream.documents import scrub as scrub_documents
from reverie.errors import ImmutableMemoryError, InvalidInputError, MemoryStateError, ReverieError
from reverie.memory_base import MemoryBase
from reverie.model import AccessEvent, HistoryEvent, Layer, MemoryRecord, Status, content_hash
from reverie.results import Action, AddResult, UndoneConsolidation
from reverie.store.base import MemoryFilter
from reverie.validation import clean_content, clean_label, clean_metadata, clean_reason, clean_scope, clean_unit
from reverie.write.recording import verbatim_actions

if TYPE_CHECKING:
    pass


_LAYER_ORDER = (Layer.WORKING, Layer.EPISODIC, Layer.SEMANTIC)


_LAYER_RANK = {Layer.WORKING: 0, Layer.EPISODIC: 1, Layer.SEMANTIC: 2, Layer.PROCEDURAL: 2, Layer.CODEBASE: 2}


def _clean_layer(layer: Any) -> Layer:
    try:
        return Layer(layer)
    except (ValueError, TypeError):
        raise InvalidInputError(f"layer must be one of {[v.value for v in Layer]}, got {layer!r}") from None


def _require_active(rec: MemoryRecord, verb: str) -> None:
    if rec.status is not Status.ACTIVE:
        raise MemoryStateError(f"memory {rec.id} is {rec.status.value}; only active memories are {verb}")


#: memories erased per transaction by :meth:`Memory.forget_user` (each batch merges the full-text index once)
_ERASE_BATCH = 5000
#: what a history event that named a forgotten memory says instead (its reason may have quoted it)
FORGOTTEN_NOTE = "(reason removed: it named a memory that was forgotten)"


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


class Editing(MemoryBase):
    """Changes to stored memories (mixed into ``Memory``)."""

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
            cls = policy_class(rec, self.settings.dynamics.lifecycle)
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
            raise MemoryStateError(
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
        pages and overwrites freed space with zeros). A memory it superseded stays superseded. What other
        memories' history and the ops log said of it (a supersede quotes the value it replaced) is rewritten
        without the text. The ops log records the forgetting by id only."""
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
            # what other memories' history says of these (a supersede quotes the value it replaced)
            for user in {r.user_id for r in gone.values()}:
                scope = MemoryFilter.everything(user_id=user, all_users=False)
                self.store.redact_history(scope, doomed, note=FORGOTTEN_NOTE)
        self.ops.forget(doomed)  # and what the ops log says of them
        self.ops.log("forget", id=rec.id, user_id=rec.user_id, derived=derived)

    def forget_user(self, user_id: str | None, *, dry_run: bool = False) -> dict[str, Any]:
        """Erase everything of one user (the right to be forgotten): every memory in any status or store
        with all that hangs on it (relations, access log, history, working memory, tags, the full-text
        and vector index entries), the user's memory boxes and clusters, the state entries that name
        the user (conversation buffers holding unsaved turns, schedule counters, cursors), and the text of
        every ops-log entry about the user's memories or the user in this store.

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
        self.ops.forget(ids, user_id=user, whole_user=True)
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
                raise MemoryStateError(f"memory {rec.id} is already in the top layer ({rec.layer.value})")
            target = _LAYER_ORDER[current + 1]
        else:
            target = _clean_layer(layer)
            if _LAYER_RANK[target] <= current:
                raise MemoryStateError(
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
            raise MemoryStateError(
                f"memory {rec.id} is {why} and protected from demotion" + ("; unpin it first" if rec.pinned else "")
            )
        _require_active(rec, "demoted")
        current = _LAYER_RANK[rec.layer]
        if current == 0:
            raise MemoryStateError(
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
