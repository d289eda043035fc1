"""What the mirror's files look like, and how a file a person wrote is read back.

The layout is the markdown export's (:mod:`reverie.io`, :mod:`reverie.documents`): one file per memory at
``facts/YYYY-MM-DD/<category>-<timestamp>-<hash>.md``, each sealed box at ``boxes/YYYY-MM-DD/box-<id>.md``,
each user's documents under ``users/<user>/``, the topic index in ``topics.md``, verbatim artifacts under
``artifacts/``. A memory's file keeps to what a person reads and what changes only when the memory does:
its front matter names the memory (id, scope, category, layer, status, validity, its successor) but none
of the strengths that move with every search (energy, access counts, stability), so a file changes when
its memory changes and at no other time. Every file is UTF-8 with ``\\n`` line ends and ends with a line
break (``* text eol=lf`` in ``.gitattributes`` keeps it byte for byte).

Reading back goes through the import's own reader and checks: YAML safe-loaded without anchors or aliases
(:func:`reverie.io.markdown_fields`), regular files of bounded size only, every field checked as
``reverie import`` checks it (:func:`reverie.validation.clean_record`).
"""

from __future__ import annotations

import hashlib
import posixpath
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from reverie import io
from reverie.errors import InvalidInputError
from reverie.model import MemoryRecord
from reverie.validation import RECORD_FIELDS, RecordLimits, clean_record, printable

#: the mirror's own state (the index, the lock), kept out of git by its own .gitignore
STATE_DIR = ".reverie"
FACTS = "facts"
#: where the store's side of a conflict is written (the person's file stays where it is)
CONFLICTS = "conflicts"
#: the front matter of a memory's file: what identifies the memory and what a person may change
FRONT_FIELDS = (
    "id",
    "user_id",
    "agent_id",
    "session_id",
    "category",
    "layer",
    "status",
    "memory_kind",
    "temporal_type",
    "entities",
    "pinned",
    "immutable",
    "source",
    "created_at",
    "valid_from",
    "valid_until",
    "superseded_by",
    "box_id",
)
#: the front-matter key of a superseded memory's link to its successor's file (not a record field)
SUCCESSOR = "successor"
#: record fields whose change rewrites a file (the front matter, the text, the metadata holding an artifact)
WATCHED_FIELDS = frozenset({*FRONT_FIELDS, "content", "metadata"})
#: what an edited file changes in its memory (anything else in the front matter is reported, not applied)
EDITABLE = ("content", "category", "pinned", "status")
#: the fields :func:`read_memory_file` needs from the store (a scan leaves out the rest)
RENDERED_FIELDS = frozenset({*FRONT_FIELDS, "content", "metadata"})
#: what a scan of the store may leave out when only files are rendered (vectors, strengths, provenance)
SCAN_OMIT = frozenset(RECORD_FIELDS - RENDERED_FIELDS - {"id", "version", "content_hash"})

GITIGNORE = "# reverie's mirror state (the index of what it wrote, the lock): local to this machine\n*\n"
GITATTRIBUTES = "# reverie writes UTF-8 with \\n line ends\n*.md text eol=lf\n"


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def memory_path(rec: MemoryRecord) -> str:
    """The file of a memory, relative to the mirror (the export's name: category, creation time, id hash)."""
    return io.markdown_path(rec).as_posix()


def memory_text(rec: MemoryRecord, successor: str | None = None) -> str:
    """A memory's file: its front matter (:data:`FRONT_FIELDS`, and the relative path of its successor's
    file when it was superseded), then its text and a final line break."""
    meta = rec.to_dict(only=FRONT_FIELDS)
    if successor is not None:
        meta[SUCCESSOR] = successor
    return io.markdown_text(meta, rec.content + "\n", one_line_values=True)


def relative_link(from_path: str, to_path: str) -> str:
    """``to_path`` as seen from the directory of ``from_path`` (both relative to the mirror)."""
    return posixpath.relpath(to_path, posixpath.dirname(from_path))


@dataclass(slots=True)
class FileFields:
    """A memory file read back: its checked fields (as a record) and the front-matter keys it had."""

    record: MemoryRecord
    keys: frozenset[str]
    extra: dict[str, Any] = field(default_factory=dict)


def read_memory_file(path: Path, where: str, *, limits: RecordLimits, max_bytes: int) -> tuple[bytes, FileFields]:
    """The bytes of a memory file and its fields, checked as ``reverie import`` checks a file. A file
    without front matter is all text (a note a person wrote). Raises :class:`InvalidInputError` naming
    what is wrong."""
    fd = io.open_regular(path, max_bytes=max_bytes)
    with open(fd, "rb") as fh:
        data = fh.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise InvalidInputError(f"{where}: larger than {max_bytes} bytes (mirror.max_file_bytes)")
    return data, parse_memory_text(data, where, limits=limits)


def parse_memory_text(data: bytes, where: str, *, limits: RecordLimits) -> FileFields:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidInputError(f"{where}: not UTF-8 text ({exc.reason} at byte {exc.start})") from exc
    # a file without front matter is all text: a note a person wrote
    fields: dict[str, Any] = io.markdown_fields(text, where=where) if text.startswith("---\n") else {"content": text}
    extra = {key: fields.pop(key) for key in (SUCCESSOR,) if key in fields}
    fields["content"] = str(fields.get("content", "")).rstrip("\n")
    unknown = sorted(str(k) for k in fields if k not in RECORD_FIELDS)
    if unknown:
        raise InvalidInputError(f"{where}: unknown front matter keys {printable(unknown, limit=200)}")
    try:
        record = clean_record(fields, limits)
    except InvalidInputError as exc:
        raise InvalidInputError(f"{where}: {exc}") from exc
    return FileFields(record, frozenset(fields), extra)


def changed_fields(stored: MemoryRecord, read: FileFields) -> dict[str, Any]:
    """The fields a file gives other values than the store holds (only those the file names)."""
    out: dict[str, Any] = {}
    theirs = read.record.to_dict()
    ours = stored.to_dict()
    for key in sorted(read.keys):
        if key in ("content_hash",):
            continue
        if key == "content":
            if read.record.content.rstrip() != stored.content.rstrip():
                out["content"] = read.record.content
            continue
        if theirs.get(key) != ours.get(key):
            out[key] = theirs.get(key)
    return out


def says_the_same(stored: MemoryRecord, read: FileFields) -> bool:
    """Whether a file gives its memory the text, category, pin and status the store holds (what a file can
    change; an export's strengths and counts, which move with every search, do not count)."""
    return not any(key in EDITABLE for key in changed_fields(stored, read))


def same_but_stamps(old: str, new: str) -> bool:
    """Two renderings of a document that differ at most in their "Updated …" lines (the time a document
    was last rebuilt changes even when nothing in it did)."""

    def body(text: str) -> list[str]:
        return [line for line in text.splitlines() if not line.startswith("Updated ")]

    return body(old) == body(new)


def with_final_newline(text: str) -> str:
    return text if text.endswith("\n") else text + "\n"


def scope_of(fields: Mapping[str, Any]) -> dict[str, Any]:
    return {key: fields.get(key) for key in ("user_id", "agent_id", "session_id")}


__all__ = [
    "CONFLICTS",
    "EDITABLE",
    "FACTS",
    "FRONT_FIELDS",
    "GITATTRIBUTES",
    "GITIGNORE",
    "RENDERED_FIELDS",
    "SCAN_OMIT",
    "STATE_DIR",
    "SUCCESSOR",
    "WATCHED_FIELDS",
    "FileFields",
    "changed_fields",
    "digest",
    "memory_path",
    "memory_text",
    "parse_memory_text",
    "read_memory_file",
    "relative_link",
    "same_but_stamps",
    "says_the_same",
    "with_final_newline",
]
