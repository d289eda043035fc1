"""What the mirror last wrote: ``.reverie/index.jsonl``, one JSON line per file written or removed.

The index is how the mirror tells a person's edit from its own write: each entry holds the SHA-256 of the
bytes last written to a path, so a file whose bytes differ was edited since, and a path whose file is gone
was deleted by someone. It is a journal: a write appends one line per file (no rewrite of the whole index
per change, so a bulk load stays linear), every process replays the lines another one appended before it
writes (under the mirror's lock), and the journal is compacted when it holds more dead lines than live ones,
and at once after a file is removed (no line of the index names a forgotten memory or user afterwards).

Entries name no text, only paths, ids and hashes. A line that cannot be read (a process killed mid-write)
is skipped; a path that is absolute or climbs out of the mirror is ignored.
"""

from __future__ import annotations

import json
import os
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

#: entry kinds: a memory's file, its verbatim artifact, a sealed box, a user's document, the topic index
MEMORY, ARTIFACT, BOX, DOC, TOPICS = "memory", "artifact", "box", "doc", "topics"
KINDS = frozenset({MEMORY, ARTIFACT, BOX, DOC, TOPICS})
#: compact when dead lines exceed live entries by this many
_SLACK = 1000


@dataclass(slots=True)
class Entry:
    """One file the mirror wrote.

    ``sum``: SHA-256 of the bytes written (``None``: a person deleted the file and its memory was
    invalidated: never written again). ``id``: the memory (memory, artifact) or box id. ``box`` and
    ``user``: the memory's box and user (a box's members, a user's files). ``conflict``: the SHA-256 of the
    store's version written to ``conflicts/<path>`` when a person's edit met a change in the store."""

    path: str
    kind: str
    sum: str | None
    id: str | None = None
    box: str | None = None
    user: str | None = None
    conflict: str | None = None

    def line(self) -> dict[str, Any]:
        out: dict[str, Any] = {"p": self.path, "k": self.kind, "s": self.sum}
        for key, value in (("i", self.id), ("b", self.box), ("u", self.user), ("c", self.conflict)):
            if value is not None:
                out[key] = value
        return out


def write_all(fd: int, data: bytes) -> None:
    """Write every byte (``os.write`` may write fewer than asked)."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def safe_relative(path: Any) -> str | None:
    """``path`` if it is a relative POSIX path inside the mirror (no ``..``, no drive, no backslash)."""
    if not isinstance(path, str) or not path or "\\" in path or "\x00" in path:
        return None
    pure = PurePosixPath(path)
    if pure.is_absolute() or any(part in ("..", ".", "") for part in path.split("/")):
        return None
    return pure.as_posix()


def _entry(data: Any) -> Entry | None:
    if not isinstance(data, dict):
        return None
    path = safe_relative(data.get("p"))
    kind = data.get("k")
    if path is None or kind not in KINDS:
        return None
    fields = {key: data.get(short) for key, short in (("id", "i"), ("box", "b"), ("user", "u"), ("conflict", "c"))}
    if not all(v is None or isinstance(v, str) for v in (data.get("s"), *fields.values())):
        return None
    return Entry(path, kind, data.get("s"), **fields)


class MirrorIndex:
    """The journal of one mirror, replayed into memory. Use it under the mirror's lock only."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._by_path: dict[str, Entry] = {}
        self._by_key: dict[tuple[str, str], str] = {}  # (kind, id) -> path
        self._members: dict[str, set[str]] = defaultdict(set)  # box id -> memory ids
        self._pending: list[dict[str, Any]] = []
        self._lines = 0
        self._offset = 0
        self._ino: int | None = None
        self._compact_due = False

    # reading ------------------------------------------------------------------------------------
    def refresh(self) -> None:
        """Replay what other processes appended since this one last read (or reread a compacted journal)."""
        try:
            info = self.path.stat()
        except FileNotFoundError:
            if self._ino is not None:
                self._reset()
            return
        if info.st_ino != self._ino or info.st_size < self._offset:
            self._reset()
            self._ino = info.st_ino
        if info.st_size == self._offset:
            return
        with self.path.open("rb") as fh:
            fh.seek(self._offset)
            data = fh.read()
        end = data.rfind(b"\n") + 1  # a line still being written (or torn by a crash) waits
        for raw in data[:end].splitlines():
            self._lines += 1
            try:
                obj = json.loads(raw)
            except (ValueError, RecursionError):
                continue
            self._apply(obj)
        self._offset += end

    def _reset(self) -> None:
        self._by_path.clear()
        self._by_key.clear()
        self._members.clear()
        self._lines = 0
        self._offset = 0
        self._ino = None

    def _apply(self, obj: Any) -> None:
        if isinstance(obj, dict) and obj.get("del") is not None:
            path = safe_relative(obj.get("del"))
            if path is not None:
                self._drop(path)
            return
        entry = _entry(obj)
        if entry is not None:
            self._set(entry)

    def _set(self, entry: Entry) -> None:
        self._drop(entry.path)
        if entry.id is not None:
            old = self._by_key.get((entry.kind, entry.id))
            if old is not None and old != entry.path:
                self._drop(old)
            self._by_key[(entry.kind, entry.id)] = entry.path
        self._by_path[entry.path] = entry
        if entry.kind == MEMORY and entry.box is not None and entry.id is not None:
            self._members[entry.box].add(entry.id)

    def _drop(self, path: str) -> Entry | None:
        entry = self._by_path.pop(path, None)
        if entry is not None and entry.id is not None:
            if self._by_key.get((entry.kind, entry.id)) == path:
                del self._by_key[(entry.kind, entry.id)]
            if entry.kind == MEMORY and entry.box is not None:
                self._members[entry.box].discard(entry.id)
                if not self._members[entry.box]:
                    del self._members[entry.box]
        return entry

    def get(self, path: str) -> Entry | None:
        return self._by_path.get(path)

    def find(self, kind: str, key: str) -> Entry | None:
        """The entry of a memory (``MEMORY``, ``ARTIFACT``) or a box (``BOX``) by its id."""
        path = self._by_key.get((kind, key))
        return None if path is None else self._by_path.get(path)

    def members(self, box_id: str) -> list[str]:
        """The ids of the mirrored memories of a box."""
        return sorted(self._members.get(box_id, ()))

    def entries(self, kinds: Iterable[str] | None = None) -> list[Entry]:
        wanted = None if kinds is None else frozenset(kinds)
        return [e for e in self._by_path.values() if wanted is None or e.kind in wanted]

    def __len__(self) -> int:
        return len(self._by_path)

    # writing ------------------------------------------------------------------------------------
    def put(self, entry: Entry) -> None:
        self._set(entry)
        self._pending.append(entry.line())

    def remove(self, path: str) -> Entry | None:
        entry = self._drop(path)
        if entry is not None:
            self._pending.append({"del": path})
            self._compact_due = True  # a forgotten memory or user: no line may name it afterwards
        return entry

    def commit(self) -> None:
        """Append the pending lines in one write; compact when due."""
        if self._compact_due or self._lines + len(self._pending) > 2 * len(self._by_path) + _SLACK:
            self._compact()
            return
        if not self._pending:
            return
        data = "".join(json.dumps(line, ensure_ascii=False, separators=(",", ":")) + "\n" for line in self._pending)
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o600)
        try:
            write_all(fd, data.encode("utf-8"))
            info = os.fstat(fd)
        finally:
            os.close(fd)
        self._lines += len(self._pending)
        self._pending.clear()
        self._offset, self._ino = info.st_size, info.st_ino

    def discard(self) -> None:
        """Forget pending lines (a failed write: the next refresh rereads the journal)."""
        self._pending.clear()
        self._reset()

    def _compact(self) -> None:
        """Rewrite the journal with the live entries only (a new file renamed over the old one)."""
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        tmp = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
        lines = [
            json.dumps(e.line(), ensure_ascii=False, separators=(",", ":")) + "\n"
            for e in sorted(self._by_path.values(), key=lambda e: e.path)
        ]
        data = "".join(lines).encode("utf-8")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_CLOEXEC", 0), 0o600)
        try:
            write_all(fd, data)
        finally:
            os.close(fd)
        os.replace(tmp, self.path)
        info = self.path.stat()
        self._lines = len(lines)
        self._pending.clear()
        self._compact_due = False
        self._offset, self._ino = info.st_size, info.st_ino


__all__ = ["ARTIFACT", "BOX", "DOC", "KINDS", "MEMORY", "TOPICS", "Entry", "MirrorIndex", "safe_relative", "write_all"]
