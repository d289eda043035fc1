"""Import and export formats: JSONL records, conversation JSON, and seed 004's markdown tree."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import yaml

from reverie.errors import InvalidInputError
from reverie.model import MemoryRecord


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
_MONTHS = {m: i for i, m in enumerate(
    ["january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
     "november", "december"], start=1)}


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
    try:
        parsed = datetime.fromisoformat(str(value))
    except ValueError:
        return parse_locomo_date(str(value))
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
    turns: list[Turn] = []
    for sess in data["sessions"]:
        if not isinstance(sess, dict) or not isinstance(sess.get("turns"), list):
            raise InvalidInputError("each session needs a 'turns' list")
        sid = f"session-{sess.get('id', len(turns))}"
        when = _parse_when(sess.get("date"))
        for i, t in enumerate(sess["turns"]):
            if not isinstance(t, dict) or not isinstance(t.get("text"), str):
                raise InvalidInputError(f"turn {i} of {sid} needs a 'text' string")
            speaker = str(t.get("speaker", "user"))
            turns.append(Turn(str(t.get("id", f"{sid}:{i + 1}")), speaker, t["text"], when, sid,
                              role=roles.get(speaker) if isinstance(roles, dict) else None))
    return Conversation(turns, list(data.get("questions", [])), data.get("user_id"), data.get("agent_id"),
                        str(data.get("title", "")))


def _load_locomo(data: dict[str, Any]) -> Conversation:
    conv = data["conversation"]
    turns: list[Turn] = []
    n = 1
    while f"session_{n}" in conv:
        when = parse_locomo_date(str(conv.get(f"session_{n}_date_time", "")))
        for t in conv[f"session_{n}"]:
            text = t.get("text", "")
            if t.get("blip_caption"):
                text = f"{text} [shares a photo: {t['blip_caption']}]"
            turns.append(Turn(str(t["dia_id"]), str(t["speaker"]), text, when, f"session-{n}"))
        n += 1
    return Conversation(turns, list(data.get("qa", [])), data.get("sample_id"), None, str(data.get("sample_id", "")))


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


def read_jsonl(path: Path) -> Iterator[dict[str, Any]]:
    with path.open("r", encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as exc:
                raise InvalidInputError(f"{path}:{lineno}: malformed JSON ({exc.msg})") from exc
            if not isinstance(obj, dict):
                raise InvalidInputError(f"{path}:{lineno}: each line must be a JSON object")
            yield obj


# markdown (seed 004: facts/YYYY-MM-DD/<category>-<timestamp>-<hash>.md) ---------------------

_SLUG = re.compile(r"[^a-z0-9_]+")


def slug(text: str, *, default: str = "fact", max_len: int = 40) -> str:
    """A safe file-name part: lowercase ascii letters, digits and underscores only."""
    s = _SLUG.sub("_", text.lower()).strip("_")[:max_len]
    return s or default


def markdown_path(rec: MemoryRecord) -> Path:
    """Relative path of a memory in seed 004's layout; never absolute, never with '..'.

    ``<hash>`` is the first 12 hex digits of sha256(id, content hash): built from hex digits only
    (nothing from the record reaches the path unsanitised) and unique per memory, so two memories
    with the same content written in the same instant (two users, one batch) never share a file."""
    created = rec.created_at.astimezone(UTC)
    stamp = created.strftime("%Y%m%dT%H%M%S") + f"{created.microsecond:06d}Z"
    digest = hashlib.sha256(f"{rec.id}\x00{rec.content_hash}".encode()).hexdigest()[:12]
    return Path("facts") / created.strftime("%Y-%m-%d") / f"{slug(rec.category)}-{stamp}-{digest}.md"


# YAML folds line breaks other than \n (NEL, U+2028, U+2029, \r) inside plain and single-quoted
# scalars; double quotes keep every character exactly (escaped).
_YAML_BREAKS = re.compile("[\r\x85\u2028\u2029]|[^\\S ]\\Z|\\A[^\\S ]")


_FrontMatterDumper: Any = type("_FrontMatterDumper", (yaml.SafeDumper,), {})  # own representers, SafeDumper intact


def _represent_str(dumper: Any, value: str) -> Any:
    style = '"' if _YAML_BREAKS.search(value) or "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_FrontMatterDumper.add_representer(str, _represent_str)


def to_markdown(rec: MemoryRecord) -> str:
    meta = rec.to_dict()
    content = meta.pop("content")
    front = yaml.dump(meta, Dumper=_FrontMatterDumper, sort_keys=True, allow_unicode=True)
    return f"---\n{front}---\n{content}"


def from_markdown(text: str, *, where: str = "<markdown>") -> MemoryRecord:
    if not text.startswith("---\n"):
        raise InvalidInputError(f"{where}: missing YAML front matter")
    end = text.find("\n---\n", 4)
    if end < 0:
        raise InvalidInputError(f"{where}: unterminated YAML front matter")
    try:
        meta = yaml.safe_load(text[4:end + 1]) or {}
    except yaml.YAMLError as exc:
        raise InvalidInputError(f"{where}: invalid YAML front matter: {exc}") from exc
    if not isinstance(meta, dict):
        raise InvalidInputError(f"{where}: front matter must be a mapping")
    meta["content"] = text[end + 5:]
    for key, value in list(meta.items()):
        if isinstance(value, datetime):  # YAML may parse timestamps itself
            meta[key] = value.isoformat()
    return MemoryRecord.from_dict(meta)


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


def iter_markdown(root: Path) -> Iterator[MemoryRecord]:
    root = root.resolve()
    for path in sorted((root / "facts").glob("*/*.md")):
        real = path.resolve()
        if root not in real.parents or path.is_symlink():
            continue  # never follow links out of the tree
        with real.open("r", encoding="utf-8", newline="") as fh:  # no newline translation
            text = fh.read()
        yield from_markdown(text, where=str(path.relative_to(root)))


__all__ = [
    "Conversation",
    "Turn",
    "dump_jsonl",
    "export_markdown",
    "from_markdown",
    "iter_markdown",
    "load_conversation",
    "markdown_path",
    "parse_locomo_date",
    "read_jsonl",
    "slug",
    "to_markdown",
    "turn_content",
]
