"""Edits come back: ``reverie sync`` and :meth:`Memory.sync_mirror() <reverie.Memory.sync_mirror>`.

A sync first reads what people changed in ``facts/``, then writes what the store holds:

* a memory's file whose text (or category, or ``pinned``) was edited becomes an ``update`` (``pin`` /
  ``unpin``) of its memory, recorded in its history with the reason "edited in the markdown mirror";
  ``status: invalidated`` in its front matter invalidates it; other front-matter changes are reported and
  not applied (a memory's id, scope and times are not a file's to change);
* a memory's file that was deleted invalidates its memory — never forgets it — and the file stays deleted;
* a new file in ``facts/`` (with or without front matter) is added as a memory, stored as written
  (``add(..., infer=False)``), and takes its place in the layout;
* an edit (or deletion) of a file whose memory also changed in the store since the file was written
  changes neither: the file stays as the person left it, the store's version is written to
  ``conflicts/<path>``, and the pair is reported. Copy the store's version over the file to keep it, or
  delete the copy to keep yours: the next sync applies your edit.

Every file is read as ``reverie import`` reads one: regular files of bounded size, YAML safe-loaded without
anchors or aliases, every field checked; a file that fails is reported with the reason and left as it is.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from reverie.errors import ConfigError, InvalidInputError, ReverieError
from reverie.mirror import layout
from reverie.mirror.index import MEMORY, Entry
from reverie.mirror.writer import FAILURE_KEY, Mirror, WriteReport
from reverie.model import MemoryRecord, Status
from reverie.validation import RecordLimits

if TYPE_CHECKING:
    from reverie.memory import Memory

#: the reasons recorded in a memory's history
EDITED = "edited in the markdown mirror"
DELETED = "its file was deleted from the markdown mirror"
MARKED = "marked invalidated in the markdown mirror"
ADDED = "added from the markdown mirror"
#: how long the watcher waits for a first event before the first sync runs (ms); it wakes this often when idle
_IDLE_WAKE_MS = 500


@dataclass(slots=True)
class SyncReport:
    """What a sync did: memories ``added``, ``updated`` and ``invalidated`` from files; ``conflicts``
    (``memory_id``, ``file``, ``store_copy``: both kept); ``errors`` (``file``, ``error``: files left as they
    are); ``notes`` (``file``, ``note``: what was not applied and why); files ``written`` and ``removed``;
    ``failure``: the mirror's last failure to write before this sync (``None`` if none)."""

    dir: str
    added: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    invalidated: list[str] = field(default_factory=list)
    conflicts: list[dict[str, str]] = field(default_factory=list)
    errors: list[dict[str, str]] = field(default_factory=list)
    notes: list[dict[str, str]] = field(default_factory=list)
    written: int = 0
    removed: int = 0
    failure: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def mirror_of(mem: Memory, path: str | Path | None) -> Mirror:
    """The live mirror of ``mem`` (``mirror.dir``), or a mirror at ``path``."""
    live: Mirror | None = getattr(mem._store, "mirror", None)
    if path is None:
        if live is None:
            raise ConfigError("no markdown mirror: set mirror.dir (REVERIE_MIRROR__DIR), or name a directory")
        return live
    root = Path(path).expanduser()
    if root.exists() and not root.is_dir():
        raise InvalidInputError(f"{root} exists and is not a directory")
    if live is not None and live.root.resolve() == root.resolve():
        return live
    inner = getattr(mem._store, "inner", mem.store)
    return Mirror(root, inner, mem.settings.mirror, ops_log=mem.ops.log)


def sync(mem: Memory, mirror: Mirror, *, paths: Collection[str] | None = None) -> SyncReport:
    """Read people's changes under ``facts/`` (all of them, or those at ``paths``, relative to the mirror),
    then write the store's state (all of it, or the memories those files belong to)."""
    report = SyncReport(str(mirror.root))
    failure = mem.store.get_state(FAILURE_KEY)
    report.failure = failure if isinstance(failure, dict) else None
    before = (mirror.totals.written, mirror.totals.removed)
    with mirror.lock.held():
        mirror.prepare()
        mirror.index.refresh()
        reader = _Reader(mem, mirror, report)
        if paths is None:
            candidates = set(mirror.fact_files())
            candidates.update(e.path for e in mirror.index.entries([MEMORY]) if e.sum is not None)
        else:
            candidates = {p for p in paths if p.startswith(layout.FACTS + "/") and p.endswith(".md")}
        # new files first: a file moved (or renamed) away from its place is found before its old place is
        # read as deleted
        for rel in sorted(candidates, key=lambda p: (mirror.index.get(p) is not None, p)):
            reader.one(rel)
            mirror.index.commit()
        written = WriteReport()
        if paths is None:
            mirror.write_all(written)
        else:
            mirror.write(reader.touched, written)
    report.written = mirror.totals.written - before[0]  # with the writes of the edits applied meanwhile
    report.removed = mirror.totals.removed - before[1] + reader.removed
    seen: set[str] = set()
    for conflict in written.conflicts:
        if conflict["file"] not in seen:
            seen.add(conflict["file"])
            report.conflicts.append(conflict)
    report.conflicts.extend(c for c in reader.conflicts if c["file"] not in seen)
    if paths is None:
        mirror.clear_failure()
    mem.ops.log(
        "mirror_sync",
        added=len(report.added),
        updated=len(report.updated),
        invalidated=len(report.invalidated),
        conflicts=len(report.conflicts),
        errors=len(report.errors),
        written=report.written,
        removed=report.removed,
    )
    return report


class _Reader:
    """Reads the files people changed and applies what they say (one sync, under the mirror's lock)."""

    def __init__(self, mem: Memory, mirror: Mirror, report: SyncReport) -> None:
        self.mem = mem
        self.mirror = mirror
        self.report = report
        limits = mem.settings.limits
        self.limits = RecordLimits(limits.max_content_bytes, limits.max_metadata_bytes, limits.max_metadata_depth)
        self.touched: set[str] = set()
        self.conflicts: list[dict[str, str]] = []
        self.removed = 0

    def one(self, rel: str) -> None:
        entry = self.mirror.index.get(rel)
        try:
            if entry is None:
                self._new_file(rel)
            elif entry.kind == MEMORY:
                self._known_file(rel, entry)
        except ReverieError as exc:  # one file's trouble never stops the others
            self.report.errors.append({"file": rel, "error": str(exc)})

    def _note(self, rel: str, note: str) -> None:
        self.report.notes.append({"file": rel, "note": note})

    def _stored(self, memory_id: str) -> MemoryRecord | None:
        return self.mirror.read([memory_id]).get(memory_id)

    # a file the mirror wrote ------------------------------------------------------------------------
    def _known_file(self, rel: str, entry: Entry) -> None:
        data = self.mirror.disk_bytes(rel)
        if entry.sum is None:  # deleted before, its memory invalidated
            if data is not None:
                self._note(rel, f"memory {entry.id} was invalidated when this file was deleted; the file is not read")
            return
        now = layout.digest(data) if data is not None else None
        if now == entry.sum or entry.id is None:
            return
        rec = self._stored(entry.id)
        if rec is None:
            return  # forgotten: the write pass removes the file
        self.touched.add(rec.id)
        _path, store_bytes = self.mirror.render([rec])[rec.id]
        store_sum = layout.digest(store_bytes)
        if store_sum == now:
            return  # the file says what the store says
        if entry.conflict is not None:
            if self.mirror.disk_bytes(self.mirror.conflict_path(rel)) is not None:
                return  # still in conflict: the write pass reports it
            # the person deleted the store's copy: their version wins
        elif store_sum != entry.sum:
            return  # changed on both sides: the write pass keeps both and reports the pair
        self._apply(rel, entry, rec, data)

    def _apply(self, rel: str, entry: Entry, rec: MemoryRecord, data: bytes | None) -> None:
        """Apply a person's version of a memory's file (``None``: they deleted it)."""
        if data is None:  # the memory stays without a file from now on
            self.mirror.index.put(Entry(rel, MEMORY, None, rec.id, rec.box_id, rec.user_id))
            if rec.status is not Status.INVALIDATED:
                try:
                    self.mem.invalidate(rec.id, DELETED)
                except ReverieError:
                    self.mirror.index.put(entry)
                    raise
                self.report.invalidated.append(rec.id)
            self._drop_copy(rel)
            return
        read = layout.parse_memory_text(data, rel, limits=self.limits)
        changes = layout.changed_fields(rec, read)
        fixed = sorted(k for k in changes if k not in layout.EDITABLE)
        if fixed:
            self._note(rel, f"not applied: {', '.join(fixed)} cannot be changed from a file")
        # the file is this edit's base now: the write that follows rewrites it from the store
        self.mirror.index.put(Entry(rel, MEMORY, layout.digest(data), rec.id, rec.box_id, rec.user_id))
        try:
            applied = self._edit(rel, rec, changes)
        except ReverieError:
            self.mirror.index.put(entry)  # nothing applied: the file stays an edit to report again
            raise
        self._drop_copy(rel)
        if applied:
            self.report.updated.append(rec.id)

    def _edit(self, rel: str, rec: MemoryRecord, changes: dict[str, Any]) -> bool:
        applied = False
        content = changes.get("content")
        category = changes.get("category")
        if content is not None or category is not None:
            self.mem.update(rec.id, content, category=category, reason=EDITED)
            applied = True
        if "pinned" in changes:
            (self.mem.pin if changes["pinned"] else self.mem.unpin)(rec.id)
            applied = True
        status = changes.get("status")
        if status == Status.INVALIDATED.value:
            self.mem.invalidate(rec.id, MARKED)
            self.report.invalidated.append(rec.id)
        elif status is not None:
            self._note(rel, f"status {status!r} cannot be set from a file (only 'invalidated')")
        return applied

    def _drop_copy(self, rel: str) -> None:
        copy = self.mirror.target(self.mirror.conflict_path(rel))
        if copy.exists():
            copy.unlink()
            self.removed += 1

    # a file a person added --------------------------------------------------------------------------
    def _new_file(self, rel: str) -> None:
        data, read = layout.read_memory_file(
            self.mirror.target(rel), rel, limits=self.limits, max_bytes=self.mirror.settings.max_file_bytes
        )
        if "id" in read.keys:
            rec = self._stored(read.record.id)
            if rec is not None:
                self._file_of_stored(rel, rec, read, data)
                return
            self._note(rel, f"id {read.record.id} names no stored memory: added as a new memory")
        self._add(rel, read)

    def _file_of_stored(self, rel: str, rec: MemoryRecord, read: layout.FileFields, data: bytes) -> None:
        """A new file carrying a stored memory's id: its own file moved (its edits apply), a copy of a file
        that still exists (reported), or a file the mirror never wrote (an export: kept if it differs)."""
        entry = self.mirror.index.find(MEMORY, rec.id)
        if entry is not None and entry.sum is not None and self.mirror.disk_bytes(entry.path) is None:
            moved = Entry(rel, MEMORY, entry.sum, rec.id, rec.box_id, rec.user_id)
            self.mirror.index.remove(entry.path)  # the write pass writes it in its place again
            if layout.digest(data) != entry.sum:
                self._apply(rel, moved, rec, data)
                self.mirror.index.remove(rel)
            self._unlink(rel)
            self.touched.add(rec.id)
            self._note(rel, f"the file of memory {rec.id}: back at {layout.memory_path(rec)}")
            return
        if entry is not None:
            self.report.errors.append(
                {
                    "file": rel,
                    "error": f"a copy of memory {rec.id}'s file {entry.path}: remove one, or remove the id "
                    "from the copy to add it as a new memory",
                }
            )
            return
        self.touched.add(rec.id)
        if rel == layout.memory_path(rec):
            return  # in its own place: the write pass takes it, or keeps both and reports them
        if layout.says_the_same(rec, read):
            self._unlink(rel)  # says what the store says: the write pass writes it in the layout
            return
        self.conflicts.append({"memory_id": rec.id, "file": rel, "store_copy": layout.memory_path(rec)})

    def _add(self, rel: str, read: layout.FileFields) -> None:
        rec, keys = read.record, read.keys
        given = {key: getattr(rec, key) for key in ("user_id", "agent_id", "session_id", "source") if key in keys}
        result = self.mem.add(
            rec.content,
            metadata=rec.metadata if "metadata" in keys else None,
            when=rec.valid_from if "valid_from" in keys else None,
            infer=False,
            **given,
        )
        if result.id is None:
            raise InvalidInputError(f"{rel}: not stored ({result.reason})")
        new_id = result.id
        if "category" in keys and rec.category != "fact":
            self.mem.update(new_id, category=rec.category, reason=ADDED)
        if "pinned" in keys and rec.pinned:
            self.mem.pin(new_id)
        self._unlink(rel)
        self.touched.add(new_id)
        self.report.added.append(new_id)

    def _unlink(self, rel: str) -> None:
        target = self.mirror.target(rel)
        target.unlink(missing_ok=True)
        self.removed += 1


def watch(
    mem: Memory,
    mirror: Mirror,
    *,
    on_report: Callable[[SyncReport], None],
    stop_event: Any = None,
) -> None:
    """Sync once, then again whenever a memory's file (or its conflict copy) changes (``reverie sync --watch``), until
    ``stop_event`` is set (anything with ``is_set()``) or the process is interrupted. Needs the
    ``watchfiles`` package (``pip install 'reverie[mirror]'``)."""
    try:
        import watchfiles
    except ImportError as exc:
        from reverie.errors import MissingDependencyError

        raise MissingDependencyError(
            "watching the mirror needs the watchfiles package: pip install 'reverie[mirror]'"
        ) from exc
    mirror.prepare()
    state = mirror.root / layout.STATE_DIR

    def wanted(_change: Any, path: str) -> bool:  # markdown files, not reverie's own state or temporary files
        name = Path(path).name
        return name.endswith(".md") and not name.startswith(".") and state not in Path(path).parents

    watching = False
    for changes in watchfiles.watch(
        mirror.root,
        watch_filter=wanted,
        debounce=mirror.settings.watch_debounce_ms,
        stop_event=stop_event,
        raise_interrupt=False,
        yield_on_timeout=True,
        rust_timeout=_IDLE_WAKE_MS,
    ):
        if not watching:  # the watcher runs now: a file saved during the first sync is seen after it
            watching = True
            on_report(sync(mem, mirror))
        paths = set()
        for _change, path in changes:
            try:
                rel = Path(path).relative_to(mirror.root).as_posix()
            except ValueError:
                continue
            # a conflict copy deleted (or copied over its file): the file it belongs to is read again
            paths.add(rel.removeprefix(layout.CONFLICTS + "/"))
        if paths:
            on_report(sync(mem, mirror, paths=paths))


__all__ = ["ADDED", "DELETED", "EDITED", "MARKED", "SyncReport", "mirror_of", "sync", "watch"]
