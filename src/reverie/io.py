"""Import and export formats: JSONL records, conversation JSON, and the lifecycle design's markdown tree.

Readers never trust a file: they read regular files only (a FIFO or a device named ``*.md`` would
block an import forever), bound what they read, refuse YAML aliases and anchors (a 325-byte file
could expand to megabytes), and turn each bad line or file into an :class:`Entry` naming where it
was and what is wrong, so that one bad record never discards the good ones around it.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import stat
import uuid
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import yaml

from reverie.errors import ContentTooLargeError, InvalidInputError
from reverie.model import MemoryRecord
from reverie.validation import printable

#: the largest file (a markdown memory, a conversation JSON) or JSONL line a reader accepts by default
DEFAULT_MAX_FILE_BYTES = 64 * 1024 * 1024
DEFAULT_MAX_LINE_BYTES = 8 * 1024 * 1024


@dataclass(slots=True)
class Entry:
    """One record read from a file: where it was (``file:line`` or a path), its data, or the reason
    it could not be read. :meth:`reverie.Memory.restore` reports rejected entries by ``where``."""

    where: str
    data: Any = None
    error: str | None = None


def open_regular(path: Path, *, max_bytes: int | None = None) -> int:
    """A file descriptor of ``path`` opened for reading, if it is a regular file (not a FIFO, device,
    socket or directory) of at most ``max_bytes``; :class:`InvalidInputError` otherwise. Opening
    never blocks (a FIFO without a writer would hang ``open`` forever)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise InvalidInputError(f"{path}: cannot be read ({exc.strerror or exc})") from exc
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise InvalidInputError(f"{path}: not a regular file")
        if max_bytes is not None and info.st_size > max_bytes:
            raise ContentTooLargeError(f"{path}: {info.st_size} bytes; files larger than {max_bytes} are refused")
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


def read_regular_text(path: Path, *, max_bytes: int = DEFAULT_MAX_FILE_BYTES) -> str:
    """The UTF-8 text of a regular file of at most ``max_bytes`` (newlines kept exactly)."""
    fd = open_regular(path, max_bytes=max_bytes)
    with os.fdopen(fd, "rb") as fh:
        data = fh.read(max_bytes + 1)
    if len(data) > max_bytes:  # it grew while we read
        raise ContentTooLargeError(f"{path}: larger than {max_bytes} bytes")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidInputError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from exc


@dataclass(slots=True)
class Turn:
    """One conversation turn, ready to be added as a memory."""

    turn_id: str
    speaker: str
    text: str
    when: datetime | None
    session_id: str
    role: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True)
class Conversation:
    """A conversation file: its turns and (optionally) questions with evidence turn ids."""

    turns: list[Turn]
    questions: list[dict[str, Any]]
    user_id: str | None = None
    agent_id: str | None = None
    title: str = ""


_LOCOMO_DATE = re.compile(r"(\d{1,2}):(\d{2})\s*(am|pm)\s+on\s+(\d{1,2})\s+(\w+),?\s+(\d{4})", re.I)
_MONTHS = {
    m: i
    for i, m in enumerate(
        [
            "january",
            "february",
            "march",
            "april",
            "may",
            "june",
            "july",
            "august",
            "september",
            "october",
            "november",
            "december",
        ],
        start=1,
    )
}


def parse_locomo_date(text: str) -> datetime | None:
    """LoCoMo's session dates look like "1:56 pm on 8 May, 2023"."""
    m = _LOCOMO_DATE.search(text or "")
    if not m:
        return None
    hour, minute, ampm, day, month, year = m.groups()
    month_no = _MONTHS.get(month.lower())
    if month_no is None:
        return None
    h = int(hour) % 12 + (12 if ampm.lower() == "pm" else 0)
    return datetime(int(year), month_no, int(day), h, int(minute), tzinfo=UTC)


def _parse_when(value: Any) -> datetime | None:
    if not value:
        return None
    if not isinstance(value, str) or len(value) > 200:
        raise InvalidInputError(f"a session date must be text, got {printable(value)}")
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        return parse_locomo_date(value)
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def load_conversation(data: Any) -> Conversation:
    """Parse reverie's conversation JSON (``sessions`` list) or a LoCoMo sample (``conversation``)."""
    if isinstance(data, list):
        if len(data) != 1:
            raise InvalidInputError("a conversation file with a list must hold exactly one conversation")
        data = data[0]
    if not isinstance(data, dict):
        raise InvalidInputError("a conversation file must be a JSON object")
    if "sessions" in data:
        return _load_reverie(data)
    if "conversation" in data:
        return _load_locomo(data)
    raise InvalidInputError("not a conversation: expected a 'sessions' list or a LoCoMo 'conversation' object")


def _load_reverie(data: dict[str, Any]) -> Conversation:
    roles = data.get("speakers") or {}
    if not isinstance(roles, dict):
        raise InvalidInputError("'speakers' must map speaker names to roles")
    sessions = data["sessions"]
    if not isinstance(sessions, list):
        raise InvalidInputError("'sessions' must be a list")
    turns: list[Turn] = []
    for sess in sessions:
        if not isinstance(sess, dict) or not isinstance(sess.get("turns"), list):
            raise InvalidInputError("each session needs a 'turns' list")
        sid = f"session-{_label(sess.get('id', len(turns)), 'session id')}"
        when = _parse_when(sess.get("date"))
        for i, t in enumerate(sess["turns"]):
            if not isinstance(t, dict) or not isinstance(t.get("text"), str):
                raise InvalidInputError(f"turn {i} of {sid} needs a 'text' string")
            speaker = _label(t.get("speaker", "user"), "speaker")
            role = roles.get(speaker)
            turns.append(
                Turn(
                    _label(t.get("id", f"{sid}:{i + 1}"), "turn id"),
                    speaker,
                    t["text"],
                    when,
                    sid,
                    role=role if isinstance(role, str) else None,
                )
            )
    questions = data.get("questions", [])
    return Conversation(
        turns,
        list(questions) if isinstance(questions, list) else [],
        _opt_label(data.get("user_id"), "user_id"),
        _opt_label(data.get("agent_id"), "agent_id"),
        str(data.get("title", ""))[:200],
    )


def _label(value: Any, name: str) -> str:
    """A short identifier from a conversation file (ids, speakers): strings and numbers only."""
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise InvalidInputError(f"{name} must be text, got {printable(value)}")
    text = str(value)
    if len(text) > 256:
        raise InvalidInputError(f"{name} is longer than 256 characters")
    return text


def _opt_label(value: Any, name: str) -> str | None:
    return None if value is None else _label(value, name)


def _load_locomo(data: dict[str, Any]) -> Conversation:
    conv = data["conversation"]
    if not isinstance(conv, dict):
        raise InvalidInputError("'conversation' must be an object")
    turns: list[Turn] = []
    n = 1
    while f"session_{n}" in conv:
        when = parse_locomo_date(str(conv.get(f"session_{n}_date_time", ""))[:200])
        session = conv[f"session_{n}"]
        if not isinstance(session, list):
            raise InvalidInputError(f"session_{n} must be a list of turns")
        for t in session:
            if not isinstance(t, dict) or not isinstance(t.get("text", ""), str) or "dia_id" not in t:
                raise InvalidInputError(f"each turn of session_{n} needs 'dia_id', 'speaker' and 'text'")
            text = t.get("text", "")
            caption = t.get("blip_caption")
            if caption:
                text = f"{text} [shares a photo: {caption if isinstance(caption, str) else printable(caption)}]"
            turns.append(
                Turn(
                    _label(t["dia_id"], "dia_id"), _label(t.get("speaker", "?"), "speaker"), text, when, f"session-{n}"
                )
            )
        n += 1
    qa = data.get("qa", [])
    sample = _opt_label(data.get("sample_id"), "sample_id")
    return Conversation(turns, list(qa) if isinstance(qa, list) else [], sample, None, sample or "")


def turn_content(turn: Turn) -> str:
    """The text stored for a turn: who said it and what."""
    return f"{turn.speaker}: {turn.text}"


# JSONL ---------------------------------------------------------------------------------------


def dump_jsonl(records: Iterable[MemoryRecord], path: Path, *, with_embedding: bool = False) -> int:
    n = 0
    with path.open("w", encoding="utf-8") as fh:
        for rec in records:
            fh.write(json.dumps(rec.to_dict(with_embedding=with_embedding), ensure_ascii=False) + "\n")
            n += 1
    return n


def jsonl_entries(path: Path, *, max_line_bytes: int = DEFAULT_MAX_LINE_BYTES) -> Iterator[Entry]:
    """Each non-empty line of a JSONL file as an :class:`Entry` (``where`` = ``path:line``): a JSON
    object, or the reason the line is not one. Reads regular files only."""
    fd = open_regular(path)
    with os.fdopen(fd, "rb") as fh:
        lineno = 0
        while True:
            raw = fh.readline(max_line_bytes + 1)
            if not raw:
                return
            lineno += 1
            if len(raw) > max_line_bytes and not raw.endswith(b"\n"):
                while raw and not raw.endswith(b"\n"):  # skip the rest of the overlong line
                    raw = fh.readline(max_line_bytes)
                yield Entry(f"{path}:{lineno}", error=f"line longer than {max_line_bytes} bytes")
                continue
            entry = line_entry(raw, f"{path}:{lineno}")
            if entry is not None:
                yield entry


def jsonl_bytes_entries(data: bytes, *, where: str = "line") -> Iterator[Entry]:
    """:func:`jsonl_entries` of JSON lines held in memory (a request body); ``where`` = ``<where> N``."""
    for lineno, raw in enumerate(data.split(b"\n"), start=1):
        entry = line_entry(raw, f"{where} {lineno}")
        if entry is not None:
            yield entry


def line_entry(raw: bytes, where: str) -> Entry | None:
    """One JSONL line as an :class:`Entry` (``None`` for a blank line)."""
    try:
        line = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return Entry(where, error=f"not UTF-8 text ({exc.reason} at byte {exc.start})")
    if not line.strip():
        return None
    try:
        obj = json.loads(line)
    except json.JSONDecodeError as exc:
        return Entry(where, error=f"malformed JSON ({exc.msg})")
    except RecursionError:
        return Entry(where, error="JSON nested too deep")
    if not isinstance(obj, dict):
        return Entry(where, error="each line must be a JSON object")
    return Entry(where, obj)


def read_jsonl(path: Path) -> Iterator[dict[str, Any]]:
    """The objects of a JSONL file; the first bad line raises :class:`InvalidInputError` naming it
    (:func:`jsonl_entries` reports bad lines instead)."""
    for entry in jsonl_entries(path):
        if entry.error is not None:
            raise InvalidInputError(f"{entry.where}: {entry.error}")
        yield entry.data


# markdown (facts/YYYY-MM-DD/<category>-<timestamp>-<hash>.md) ---------------------

_SLUG = re.compile(r"[^a-z0-9_]+")


def slug(text: str, *, default: str = "fact", max_len: int = 40) -> str:
    """A safe file-name part: lowercase ascii letters, digits and underscores only."""
    s = _SLUG.sub("_", text.lower()).strip("_")[:max_len]
    return s or default


def markdown_path(rec: MemoryRecord) -> Path:
    """Relative path of a memory in the lifecycle design's layout; never absolute, never with '..'.

    ``<hash>`` is the first 12 hex digits of sha256(id): built from hex digits only (nothing from the
    record reaches the path unsanitised) and unique per memory, so two memories with the same content
    written in the same instant (two users, one batch) never share a file. Only the category and the
    creation time name the file besides: an edit of the text keeps its name (the live mirror, git)."""
    created = rec.created_at.astimezone(UTC)
    stamp = created.strftime("%Y%m%dT%H%M%S") + f"{created.microsecond:06d}Z"
    digest = hashlib.sha256(rec.id.encode("utf-8", "backslashreplace")).hexdigest()[:12]
    return Path("facts") / created.strftime("%Y-%m-%d") / f"{slug(rec.category)}-{stamp}-{digest}.md"


# YAML folds line breaks other than \n (NEL, U+2028, U+2029, \r) inside plain and single-quoted
# scalars; double quotes keep every character exactly (escaped).
_YAML_BREAKS = re.compile("[\r\x85\u2028\u2029]|[^\\S ]\\Z|\\A[^\\S ]")


_FrontMatterDumper: Any = type("_FrontMatterDumper", (yaml.SafeDumper,), {})  # own representers, SafeDumper intact


def _represent_str(dumper: Any, value: str) -> Any:
    style = '"' if _YAML_BREAKS.search(value) or "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_FrontMatterDumper.add_representer(str, _represent_str)
#: a line width no value reaches (YAML folds long scalars at the width; 80 by default)
_NO_FOLDING = 1 << 30


_FastFrontMatterDumper: Any = (
    type("_FastFrontMatterDumper", (yaml.CSafeDumper,), {}) if getattr(yaml, "__with_libyaml__", False) else None
)
if _FastFrontMatterDumper is not None:
    _FastFrontMatterDumper.add_representer(str, _represent_str)


def markdown_text(meta: Mapping[str, Any], content: str, *, one_line_values: bool = False) -> str:
    """A markdown memory file: YAML front matter (``meta``, keys sorted, every string that holds a line
    break double-quoted) between ``---`` lines, then ``content`` exactly.

    ``one_line_values``: no value is folded over several lines (what grep and line-by-line diffs want), and
    libyaml's emitter writes the front matter when PyYAML has it (several times faster; the text differs from
    the pure-Python emitter's only in how a character outside the Basic Multilingual Plane is escaped)."""
    if one_line_values:
        dumper = _FastFrontMatterDumper or _FrontMatterDumper
        front = yaml.dump(dict(meta), Dumper=dumper, sort_keys=True, allow_unicode=True, width=_NO_FOLDING)
    else:
        front = yaml.dump(dict(meta), Dumper=_FrontMatterDumper, sort_keys=True, allow_unicode=True)
    return f"---\n{front}---\n{content}"


def to_markdown(rec: MemoryRecord) -> str:
    meta = rec.to_dict()
    content = meta.pop("content")
    return markdown_text(meta, content)


def _compose_node_without_aliases(self: Any, parent: Any, index: Any) -> Any:
    event = self.peek_event()
    if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None) is not None:
        raise yaml.composer.ComposerError(None, None, "YAML anchors and aliases are not accepted", event.start_mark)
    return yaml.SafeLoader.compose_node(self, parent, index)


#: YAML without anchors and aliases: an alias repeats a node by reference, so a few hundred bytes can
#: expand into megabytes ("billion laughs"); exported front matter never uses them
_NoAliasLoader: Any = type("_NoAliasLoader", (yaml.SafeLoader,), {"compose_node": _compose_node_without_aliases})


def markdown_fields(text: str, *, where: str = "<markdown>") -> dict[str, Any]:
    """The record fields of one markdown memory (front matter + content), unchecked."""
    if not text.startswith("---\n"):
        raise InvalidInputError(f"{where}: missing YAML front matter")
    end = text.find("\n---\n", 4)
    if end < 0:
        raise InvalidInputError(f"{where}: unterminated YAML front matter")
    try:
        meta = yaml.load(text[4 : end + 1], Loader=_NoAliasLoader) or {}  # a SafeLoader subclass
    except yaml.YAMLError as exc:
        raise InvalidInputError(f"{where}: invalid YAML front matter: {exc}") from exc
    except RecursionError:
        raise InvalidInputError(f"{where}: YAML front matter nested too deep") from None
    if not isinstance(meta, dict):
        raise InvalidInputError(f"{where}: front matter must be a mapping")
    meta["content"] = text[end + 5 :]
    for key, value in list(meta.items()):
        if isinstance(value, datetime):  # YAML may parse timestamps itself
            meta[key] = value.isoformat()
    return meta


def from_markdown(text: str, *, where: str = "<markdown>") -> MemoryRecord:
    return MemoryRecord.from_dict(markdown_fields(text, where=where))


def export_markdown(records: Iterable[MemoryRecord], root: Path) -> int:
    root = root.resolve()
    n = 0
    for rec in records:
        target = (root / markdown_path(rec)).resolve()
        if root not in target.parents:  # defence in depth: the path is built from slugs only
            raise InvalidInputError(f"refusing to write outside {root}: {target}")
        target.parent.mkdir(parents=True, exist_ok=True)
        with target.open("w", encoding="utf-8", newline="") as fh:  # content keeps \r\n and \r exactly
            fh.write(to_markdown(rec))
        n += 1
    return n


def markdown_entries(root: Path, *, max_file_bytes: int = DEFAULT_MAX_FILE_BYTES) -> Iterator[Entry]:
    """Each ``facts/<day>/<name>.md`` file of a markdown tree as an :class:`Entry` (``where`` = its
    path in the tree): its record fields, or why it cannot be read. Symbolic links are never followed
    (they are skipped); anything but a regular file, a file over ``max_file_bytes``, text that is not
    UTF-8 and YAML with anchors or aliases are reported."""
    root = root.resolve()
    for path in sorted((root / "facts").glob("*/*.md")):
        if path.is_symlink() or path.parent.is_symlink() or root not in path.resolve().parents:
            continue  # never follow links out of the tree
        where = str(path.relative_to(root))
        try:
            text = read_regular_text(path, max_bytes=max_file_bytes)
            yield Entry(where, markdown_fields(text, where=where))
        except InvalidInputError as exc:
            yield Entry(where, error=str(exc).removeprefix(f"{path}: ").removeprefix(f"{where}: "))


def iter_markdown(root: Path) -> Iterator[MemoryRecord]:
    """The records of a markdown tree; the first unreadable file raises :class:`InvalidInputError`
    (:func:`markdown_entries` reports bad files instead)."""
    for entry in markdown_entries(root):
        if entry.error is not None:
            raise InvalidInputError(f"{entry.where}: {entry.error}")
        yield MemoryRecord.from_dict(entry.data)


# idempotent imports ------------------------------------------------------------------------------


def stable_id(*parts: Any, when: datetime | None = None) -> str:
    """A memory id made from what identifies an imported item (its scope, its place in the source and
    its content), so that importing the same file again names the same memories and stores nothing
    twice. A UUIDv7 whose time is ``when`` (ids still sort by time) and whose other bits come from
    SHA-256 of the parts."""
    digest = bytearray(
        hashlib.sha256("\x1f".join(str(p) for p in parts).encode("utf-8", "backslashreplace")).digest()[:16]
    )
    ms = 0
    if when is not None:
        try:
            ms = min(max(int(when.timestamp() * 1000), 0), (1 << 48) - 1)
        except (OverflowError, ValueError, OSError):  # a date no clock can hold: the import rejects it anyway
            ms = 0
    digest[0:6] = ms.to_bytes(6, "big")
    digest[6] = (digest[6] & 0x0F) | 0x70  # version 7
    digest[8] = (digest[8] & 0x3F) | 0x80  # RFC 9562 variant
    return str(uuid.UUID(bytes=bytes(digest)))


__all__ = [
    "DEFAULT_MAX_FILE_BYTES",
    "DEFAULT_MAX_LINE_BYTES",
    "Conversation",
    "Entry",
    "Turn",
    "dump_jsonl",
    "export_markdown",
    "from_markdown",
    "iter_markdown",
    "jsonl_bytes_entries",
    "jsonl_entries",
    "line_entry",
    "load_conversation",
    "markdown_entries",
    "markdown_fields",
    "markdown_path",
    "markdown_text",
    "open_regular",
    "parse_locomo_date",
    "read_jsonl",
    "read_regular_text",
    "slug",
    "stable_id",
    "to_markdown",
    "turn_content",
]
