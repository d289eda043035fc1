"""Writing the store's state into the mirror's files.

:class:`Mirror` renders what the store holds now — never what a caller says changed — so that a write is
always right whatever happened in between: two processes writing one mirror each read the store under the
mirror's lock, and the one that writes last has read the newest state. Every file is written whole to a
temporary file in its directory and renamed over the old one (a reader never sees half a file), and only
when its bytes change (a rewrite of the same memory leaves the file and its time stamp alone).

A file a person edited (its bytes differ from what the mirror last wrote, :mod:`reverie.mirror.index`) is
never overwritten: when its memory changes in the store meanwhile, the store's version goes to
``conflicts/<path>`` beside it and the pair is reported; ``reverie sync`` resolves it. A forgotten memory
is the exception: its file goes, edited or not, with its artifact, its conflict copy and every line of a box
file or document that quoted it (those are rendered again from the store, which no longer holds it).
"""

from __future__ import annotations

import logging
import os
import secrets
from collections.abc import Collection, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from reverie.config.mirror import MirrorSettings
from reverie.errors import InvalidInputError
from reverie.mirror import layout
from reverie.mirror.index import ARTIFACT, BOX, DOC, MEMORY, TOPICS, Entry, MirrorIndex, write_all
from reverie.mirror.lock import MirrorLock
from reverie.model import MemoryRecord
from reverie.store.base import Box, MemoryFilter, Store

log = logging.getLogger("reverie.mirror")
#: the store state entry that records the mirror's last failure (``reverie doctor``, ``reverie sync``)
FAILURE_KEY = "mirror:failure"
#: state keys of the documents the dream writes (``<kind>:<user>``) and of the topic index
DOC_KINDS = ("profile", "entities", "reflections", "guidelines")
TOPICS_PREFIX = "topics:"
_READ_BATCH = 500


def doc_user(key: str) -> tuple[str, str | None] | None:
    """``("doc", user)`` or ``("topics", user)`` for a state key of a user's document, else ``None``."""
    kind, sep, user = key.partition(":")
    if not sep:
        return None
    if kind in DOC_KINDS:
        return "doc", user or None
    if kind + ":" == TOPICS_PREFIX:
        return "topics", user or None
    return None


@dataclass(slots=True)
class WriteReport:
    """What one pass of the mirror wrote: files written and removed, conflicts met (memory id, file, the
    store's copy)."""

    written: int = 0
    removed: int = 0
    conflicts: list[dict[str, str]] = field(default_factory=list)


class Mirror:
    """One mirror directory over one store. Thread-safe; every method takes the mirror's lock."""

    def __init__(self, root: str | Path, store: Store, settings: MirrorSettings, *, ops_log: Any = None) -> None:
        self.root = Path(root).expanduser().absolute()
        self.store = store
        self.settings = settings
        self.lock = MirrorLock(self.root / layout.STATE_DIR / "lock", timeout_s=settings.lock_timeout_s)
        self.index = MirrorIndex(self.root / layout.STATE_DIR / "index.jsonl")
        self._ops_log = ops_log
        self._dirs: set[Path] = set()
        self._inside: set[Path] = set()  # directories checked to be inside the mirror
        self._prepared = False
        #: the last failure to write (``None`` since the last success)
        self.failure: dict[str, Any] | None = None
        #: files written and removed by this object so far
        self.totals = WriteReport()

    # the live path: what the store committed ---------------------------------------------------
    def changed(
        self,
        *,
        ids: Collection[str] = (),
        boxes: Collection[str] = (),
        doc_users: Collection[str | None] = (),
        topics: bool = False,
        users_gone: Collection[str | None] = (),
    ) -> WriteReport | None:
        """Write what a committed change touched. Never raises: a failure is logged, recorded and returned
        as ``None`` (the store's write stands; ``reverie sync`` catches the mirror up)."""
        try:
            with self.lock.held():
                self.prepare()
                self.index.refresh()
                report = WriteReport()
                more_boxes = self._memories(ids, report)
                for user in users_gone:
                    self._user_gone(user, report)
                for box_id in sorted({*boxes, *more_boxes}):
                    self._box(box_id, report)
                for user in dict.fromkeys(doc_users):
                    self._docs(user, report)
                if topics or users_gone:
                    self._topics(report)
                self.index.commit()
        except Exception as exc:  # the store's write stands whatever the disk says
            self._keep_what_was_written()
            self._failed(exc)
            return None
        self._succeeded()
        return report

    def write_all(self, report: WriteReport) -> None:
        """Render everything the store holds and remove files of what it no longer holds (``reverie sync``,
        ``reverie mirror``). Call under :attr:`lock`; raises on failure."""
        self.prepare()
        self.index.refresh()
        seen: set[str] = set()
        for batch in self.store.scan(MemoryFilter.everything(), batch_size=_READ_BATCH, omit=layout.SCAN_OMIT):
            seen.update(r.id for r in batch)
            self._render(batch, report)
        for entry in self.index.entries([MEMORY]):
            if entry.id is not None and entry.id not in seen:
                self._forgotten(entry, report)
        state = self.store.state_items()
        users: set[str | None] = {None}
        users.update(u for u, _n in self.store.users(limit=1_000_000))
        produced: set[str] = set()
        for user in sorted(users, key=lambda u: u or ""):
            for box in self.store.sealed_boxes(user, limit=1_000_000):
                produced.add(self._box_file(box, report))
        doc_owners = {found[1] for key, _v in state if (found := doc_user(key)) is not None and found[0] == "doc"}
        for user in sorted(doc_owners, key=lambda u: u or ""):
            produced.update(self._docs(user, report))
        for entry in self.index.entries([BOX, DOC]):
            if entry.path not in produced:
                self._remove(entry.path, report)
        self._topics(report, state=state)
        self.index.commit()

    def write(self, ids: Collection[str], report: WriteReport) -> None:
        """Render these memories (and the boxes they are in) now. Call under :attr:`lock`."""
        self.prepare()
        self.index.refresh()
        for box_id in sorted(self._memories(ids, report)):
            self._box(box_id, report)
        self.index.commit()

    # failure reporting --------------------------------------------------------------------------
    def _keep_what_was_written(self) -> None:
        """After a failure midway: record the files that were written (an entry is made only once its file
        is), so that they are not taken for a person's edits later; if even that fails, reread the journal."""
        try:
            self.index.commit()
        except Exception:
            self.index.discard()

    def _failed(self, exc: BaseException) -> None:
        first = self.failure is None
        self.failure = {
            "dir": str(self.root),
            "at": datetime.now(UTC).isoformat(timespec="seconds"),
            "error": f"{type(exc).__name__}: {exc}",
        }
        (log.warning if first else log.debug)(
            "the markdown mirror %s could not be written (%s); the memory's change is kept, "
            "`reverie sync` brings the mirror up to date",
            self.root,
            self.failure["error"],
        )
        if self._ops_log is not None:
            self._ops_log("mirror_failed", error=self.failure["error"])
        try:
            self.store.set_state(FAILURE_KEY, self.failure)
        except Exception:  # the store may be what failed
            log.debug("could not record the mirror's failure in the store", exc_info=True)

    def _succeeded(self) -> None:
        if self.failure is not None:
            self.failure = None
            log.info("the markdown mirror %s is written again", self.root)

    def clear_failure(self) -> None:
        """After a whole sync: the mirror is up to date, whatever failed before."""
        self.failure = None
        if self.store.get_state(FAILURE_KEY) is not None:
            self.store.delete_state([FAILURE_KEY])

    # memories -------------------------------------------------------------------------------------
    def _memories(self, ids: Collection[str], report: WriteReport) -> set[str]:
        """Render these memories (or remove their files); returns the ids of the boxes they are in."""
        wanted = sorted(set(ids))
        boxes: set[str] = set()
        for start in range(0, len(wanted), _READ_BATCH):
            chunk = wanted[start : start + _READ_BATCH]
            found = self.read(chunk)
            for memory_id in chunk:
                if memory_id not in found:
                    entry = self.index.find(MEMORY, memory_id)
                    if entry is not None:
                        if entry.box is not None:
                            boxes.add(entry.box)
                        self._forgotten(entry, report)
            records = list(found.values())
            boxes.update(r.box_id for r in records if r.box_id)
            self._render(records, report)
        return {b for b in boxes if self.index.find(BOX, b) is not None}

    def read(self, ids: Collection[str]) -> dict[str, MemoryRecord]:
        """The memories with these ids, without the fields no file shows (vectors, strengths)."""
        if not ids:
            return {}
        flt = MemoryFilter.everything(ids=frozenset(ids))
        return {r.id: r for batch in self.store.scan(flt, batch_size=_READ_BATCH, omit=layout.SCAN_OMIT) for r in batch}

    def render(self, records: Iterable[MemoryRecord]) -> dict[str, tuple[str, bytes]]:
        """Each memory's file: ``id -> (path, bytes)`` (a superseded memory links to its successor's file)."""
        records = list(records)
        known = {r.id: r for r in records}
        known.update(self.read([r.superseded_by for r in records if r.superseded_by and r.superseded_by not in known]))
        out: dict[str, tuple[str, bytes]] = {}
        for rec in records:
            path = layout.memory_path(rec)
            successor = known.get(rec.superseded_by) if rec.superseded_by else None
            link = layout.relative_link(path, layout.memory_path(successor)) if successor is not None else None
            out[rec.id] = (path, layout.memory_text(rec, link).encode("utf-8"))
        return out

    def _render(self, records: Iterable[MemoryRecord], report: WriteReport) -> None:
        records = list(records)
        files = self.render(records)
        for rec in records:
            path, data = files[rec.id]
            self._memory_file(rec, path, data, report)
            self._artifact(rec, report)

    def _memory_file(self, rec: MemoryRecord, path: str, data: bytes, report: WriteReport) -> None:
        entry = self.index.find(MEMORY, rec.id)
        new_sum = layout.digest(data)
        if entry is not None and entry.sum is None:
            return  # a person deleted the file and the memory was invalidated: it stays without one
        if entry is not None and entry.path != path:  # its category changed: the file takes its new name
            if self._disk_sum(entry.path) != entry.sum:
                self._conflict(rec, entry, data, report)  # the old file was edited or deleted meanwhile
                return
            self._remove(entry.path, report)
            entry = None
        if entry is not None and entry.sum == new_sum:
            return  # nothing a file shows has changed (or a person's edit waits for `reverie sync`)
        disk = self._disk_sum(path) if entry is not None or self.target(path).exists() else None
        if entry is None:
            if disk is not None and disk != new_sum and not self._same_memory(path, rec):
                # a file not written by this mirror holds another version: keep both
                entry = Entry(path, MEMORY, "", rec.id, rec.box_id, rec.user_id)
                self._conflict(rec, entry, data, report)
                return
        elif disk not in (entry.sum, new_sum):  # edited (or deleted) by a person since it was written
            self._conflict(rec, entry, data, report)
            return
        if disk != new_sum:
            self._put(path, data, report)
        self.index.put(Entry(path, MEMORY, new_sum, rec.id, rec.box_id, rec.user_id))
        if entry is not None and entry.conflict is not None:  # the conflict is over: the file says what the store says
            self._remove(self.conflict_path(path), report)

    def _same_memory(self, path: str, rec: MemoryRecord) -> bool:
        """Whether a file the mirror did not write says what the store says (an earlier export)."""
        from reverie.validation import RecordLimits

        limits = RecordLimits(10**9, 10**9)
        try:
            _data, read = layout.read_memory_file(
                self.root / path, path, limits=limits, max_bytes=self.settings.max_file_bytes
            )
        except InvalidInputError:
            return False
        return read.record.id == rec.id and layout.says_the_same(rec, read)

    def conflict_path(self, path: str) -> str:
        return f"{layout.CONFLICTS}/{path}"

    def _conflict(self, rec: MemoryRecord, entry: Entry, data: bytes, report: WriteReport) -> None:
        """A person's edit (or deletion) met a change in the store: the file stays, the store's version is
        written to ``conflicts/<path>``, and the pair is reported."""
        copy = self.conflict_path(entry.path)
        new_sum = layout.digest(data)
        if entry.conflict != new_sum or self._disk_sum(copy) != new_sum:
            self._put(copy, data, report)
            self.index.put(
                Entry(entry.path, MEMORY, entry.sum, rec.id, rec.box_id or entry.box, rec.user_id, conflict=new_sum)
            )
            log.warning(
                "mirror conflict: %s was changed in the mirror and memory %s in the store; both are kept "
                "(the store's version is in %s); `reverie sync` reports it",
                entry.path,
                rec.id,
                copy,
            )
        report.conflicts.append({"memory_id": rec.id, "file": entry.path, "store_copy": copy})

    def _forgotten(self, entry: Entry, report: WriteReport) -> None:
        """The memory is no longer in the store: its file, its conflict copy and its artifact go."""
        self._remove(entry.path, report)
        self._remove(self.conflict_path(entry.path), report)
        if entry.id is not None:
            artifact = self.index.find(ARTIFACT, entry.id)
            if artifact is not None:
                self._remove(artifact.path, report)

    def _artifact(self, rec: MemoryRecord, report: WriteReport) -> None:
        from reverie.documents import artifact_markdown, artifact_path
        from reverie.write.pipeline import ARTIFACT as ARTIFACT_KEY

        found = rec.metadata.get(ARTIFACT_KEY)
        entry = self.index.find(ARTIFACT, rec.id)
        if not isinstance(found, dict):
            if entry is not None:
                self._remove(entry.path, report)
            return
        path = artifact_path(rec).as_posix()
        self._generated(path, ARTIFACT, artifact_markdown(rec, found), report, key=rec.id, user=rec.user_id)

    # boxes, documents, topics --------------------------------------------------------------------
    def _box(self, box_id: str, report: WriteReport) -> None:
        box = self.store.box(box_id)
        if box is None or box.sealed_at is None:
            entry = self.index.find(BOX, box_id)
            if entry is not None:
                self._remove(entry.path, report)
            return
        self._box_file(box, report)

    def _box_file(self, box: Box, report: WriteReport) -> str:
        from reverie.documents import box_markdown, box_path

        members = self.read(self.index.members(box.id))
        path = box_path(box).as_posix()
        self._generated(path, BOX, box_markdown(box, list(members.values())), report, key=box.id, user=box.user_id)
        return path

    def _docs(self, user: str | None, report: WriteReport) -> set[str]:
        """Write one user's documents; remove those the store no longer has. Returns their paths."""
        from reverie.documents import user_document_files

        files = {rel.as_posix(): text for rel, text in user_document_files(self.store, user).items()}
        for path, text in sorted(files.items()):
            self._generated(path, DOC, text, report, user=user, stamps=True)
        for entry in self.index.entries([DOC]):
            if entry.user == user and entry.path not in files:
                self._remove(entry.path, report)
        return set(files)

    def _topics(self, report: WriteReport, *, state: list[tuple[str, Any]] | None = None) -> None:
        from reverie.documents import topics_markdown

        items = self.store.state_items() if state is None else state
        indexes = {
            (key[len(TOPICS_PREFIX) :] or None): value
            for key, value in items
            if key.startswith(TOPICS_PREFIX) and isinstance(value, dict)
        }
        if not indexes:
            entry = self.index.get("topics.md")
            if entry is not None:
                self._remove(entry.path, report)
            return
        self._generated("topics.md", TOPICS, topics_markdown(indexes), report, stamps=True)

    def _user_gone(self, user: str | None, report: WriteReport) -> None:
        """Every box and document file of an erased user goes (its memories go one by one)."""
        for entry in self.index.entries([BOX, DOC]):
            if entry.user == user:
                self._remove(entry.path, report)

    def _generated(
        self,
        path: str,
        kind: str,
        text: str,
        report: WriteReport,
        *,
        key: str | None = None,
        user: str | None = None,
        stamps: bool = False,
    ) -> None:
        """A file reverie writes and people only read (boxes, documents, topics, artifacts): written when
        its text changes (with ``stamps``, not when only its "Updated …" lines do)."""
        data = layout.with_final_newline(text).encode("utf-8")
        entry = self.index.get(path)
        new_sum = layout.digest(data)
        if entry is not None and entry.sum == new_sum and self._disk_sum(path) == new_sum:
            return
        if stamps and entry is not None and entry.sum is not None:
            old = self._disk_text(path)
            unedited = old is not None and layout.digest(old.encode("utf-8")) == entry.sum
            if unedited and old is not None and layout.same_but_stamps(old, text):
                return
        if self._disk_sum(path) != new_sum:
            self._put(path, data, report)
        self.index.put(Entry(path, kind, new_sum, key, None, user))

    # files ------------------------------------------------------------------------------------------
    def prepare(self) -> None:
        """Create the mirror directory and its state directory (with a .gitignore keeping it out of git) and
        a .gitattributes naming the line format."""
        if self._prepared:
            return
        if self.root.exists() and not self.root.is_dir():
            raise InvalidInputError(f"the mirror directory {self.root} exists and is not a directory")
        state = self.root / layout.STATE_DIR
        state.mkdir(parents=True, exist_ok=True, mode=0o700)
        for name, text in (
            (state / ".gitignore", layout.GITIGNORE),
            (self.root / ".gitattributes", layout.GITATTRIBUTES),
        ):
            if not name.exists():
                self._write_file(name, text.encode("utf-8"))
        self._prepared = True

    def target(self, path: str) -> Path:
        """The absolute file of a mirror path; refuses a path that leads out of the mirror (a link)."""
        target = self.root / path
        parent = target.parent
        if parent not in self._inside:
            real_root = self.root.resolve()
            real = parent.resolve()
            if real != real_root and real_root not in real.parents:
                raise InvalidInputError(f"refusing to write outside the mirror {self.root}: {path}")
            if parent.is_dir():  # a directory not made yet is checked again once it exists
                self._inside.add(parent)
        return target

    def _disk_sum(self, path: str) -> str | None:
        """SHA-256 of a file's bytes (``None``: no regular file there)."""
        try:
            with open(self.target(path), "rb") as fh:
                return layout.digest(fh.read())
        except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
            return None

    def disk_bytes(self, path: str) -> bytes | None:
        try:
            with open(self.target(path), "rb") as fh:
                return fh.read()
        except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
            return None

    def _disk_text(self, path: str) -> str | None:
        data = self.disk_bytes(path)
        if data is None:
            return None
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError:
            return None

    def _put(self, path: str, data: bytes, report: WriteReport) -> None:
        self._write_file(self.target(path), data)
        report.written += 1
        self.totals.written += 1

    def _write_file(self, target: Path, data: bytes) -> None:
        """Write ``data`` to a temporary file beside ``target`` and rename it over ``target``."""
        parent = target.parent
        if parent not in self._dirs:
            parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            self._dirs.add(parent)
        tmp = parent / f".{target.name}.{secrets.token_hex(6)}.tmp"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), 0o600)
        try:
            try:
                write_all(fd, data)
            finally:
                os.close(fd)
            os.replace(tmp, target)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise

    def _remove(self, path: str, report: WriteReport) -> None:
        """Remove a file (and its directory when it is left empty), then its index entry (a file that could not
        be removed stays in the index: it is never taken for a new file a person added)."""
        target = self.target(path)
        try:
            target.unlink()
        except FileNotFoundError:
            self.index.remove(path)
            return
        self.index.remove(path)
        report.removed += 1
        self.totals.removed += 1
        parent = target.parent
        if parent != self.root:
            try:
                parent.rmdir()
                self._dirs.discard(parent)
                self._inside.discard(parent)
            except OSError:
                pass

    def fact_files(self) -> list[str]:
        """Every markdown file under ``facts/`` (regular files; links and hidden files are skipped)."""
        base = self.root / layout.FACTS
        found: list[str] = []
        if not base.is_dir() or base.is_symlink():
            return found
        for dirpath, dirnames, filenames in os.walk(base):
            dirnames[:] = sorted(d for d in dirnames if not d.startswith(".") and not Path(dirpath, d).is_symlink())
            for name in sorted(filenames):
                full = Path(dirpath, name)
                if name.endswith(".md") and not name.startswith(".") and not full.is_symlink():
                    found.append(full.relative_to(self.root).as_posix())
        return found


__all__ = ["FAILURE_KEY", "Mirror", "WriteReport", "doc_user"]
