"""The codebase layer: a source tree's file tree and public signatures as memories (``Memory.ingest_code``).

The layered-memory design keeps "compressed code knowledge — file trees, function signatures" in a
layer of its own. :func:`ingest` walks a directory (or one file) and makes one codebase-layer memory per

* **directory** — the files and subdirectories it holds (``kind="directory"``);
* **module** — a Python file's dotted name, its docstring's first line and what it defines
  (``kind="module"``); other text files appear in their directory's listing;
* **class**, **function**, **method** — the public signature (parameters, annotations, return type,
  decorators such as ``@property``) and the docstring's first line, read with the standard library's
  :mod:`ast` (the code is parsed, never imported or run).

Every memory's metadata names ``code_root`` (the absolute root), ``path`` (relative, ``/``-separated),
``kind``, ``qualname``, ``line`` and ``file_hash`` (sha256 of the file's bytes). Ingesting the same root
again compares each file's hash with the one stored: an unchanged file is not even parsed; a changed
one has exactly its memories updated (re-embedded only when their text changed), new, or invalidated
(a name that disappeared); a deleted file's memories are invalidated (never deleted). Drift detection
(the dream's ``drift`` step) invalidates the memories of files that disappear between ingestions.

Bad input: a missing path raises :class:`~reverie.errors.NotFoundError`; a file that does not parse
(or is not UTF-8), a binary file, a file over ``codebase.max_file_bytes``, an unreadable file and a
symbolic link (not followed by default; a loop or a link out of the tree when followed) are skipped,
each with its reason in the report — and the memories of a file that stopped parsing are kept as they
were, so nothing is lost.
"""

from __future__ import annotations

import ast
import hashlib
import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path, PurePosixPath
from typing import Any

import numpy as np

from reverie.config import Settings
from reverie.errors import InvalidInputError, NotFoundError
from reverie.model import HistoryEvent, Layer, MemoryKind, MemoryRecord, Status, content_hash
from reverie.store.base import MemoryFilter, Store

#: metadata keys of a codebase memory (top-level: usable in ``filters={"metadata": {...}}``)
ROOT, PATH, KIND, QUALNAME, LINE, FILE_HASH = "code_root", "path", "kind", "qualname", "line", "file_hash"
ROOT_IS_FILE = "code_root_is_file"
KINDS = ("directory", "module", "class", "function", "method")
#: files whose first bytes hold a NUL are binary
_SNIFF = 8192
#: source files parsed for signatures (other text files only appear in directory listings)
PARSED_SUFFIXES = (".py", ".pyi")


@dataclass(frozen=True, slots=True)
class Unit:
    """One memory-to-be: what it says and where it comes from."""

    kind: str
    path: str
    qualname: str
    content: str
    line: int | None = None
    file_hash: str | None = None

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.kind, self.path, self.qualname)


@dataclass(slots=True)
class Walk:
    """The result of walking a tree: directories with their entries, files to read, and what was skipped."""

    dirs: dict[str, list[str]] = field(default_factory=dict)  # rel dir → entries ("name/" for subdirs)
    files: dict[str, Path] = field(default_factory=dict)  # rel path → real path (parsed suffixes only)
    skipped: dict[str, str] = field(default_factory=dict)  # rel path → why


@dataclass(slots=True)
class IngestReport:
    """What one ingestion changed (``Memory.ingest_code`` returns :meth:`to_dict`)."""

    root: str
    files_seen: int = 0
    files_parsed: int = 0
    files_unchanged: int = 0
    created: int = 0
    updated: int = 0
    unchanged: int = 0
    reactivated: int = 0
    invalidated: int = 0
    skipped: dict[str, str] = field(default_factory=dict)
    changed_files: list[str] = field(default_factory=list)
    ids: dict[str, list[str]] = field(default_factory=lambda: {"created": [], "updated": [], "invalidated": []})

    def to_dict(self) -> dict[str, Any]:
        return {
            "root": self.root,
            "files_seen": self.files_seen,
            "files_parsed": self.files_parsed,
            "files_unchanged": self.files_unchanged,
            "created": self.created,
            "updated": self.updated,
            "reactivated": self.reactivated,
            "unchanged": self.unchanged,
            "invalidated": self.invalidated,
            "changed_files": sorted(self.changed_files),
            "skipped": dict(sorted(self.skipped.items())),
            "ids": {k: v[:1000] for k, v in self.ids.items()},
        }


# --- walking the tree -----------------------------------------------------------------------------


def resolve_root(path: Any) -> Path:
    """The absolute, existing directory or file to ingest (NotFoundError / InvalidInputError otherwise)."""
    if isinstance(path, bytes) or not isinstance(path, str | os.PathLike):
        raise InvalidInputError(f"path must be a file-system path, got {type(path).__name__}")
    text = os.fspath(path)
    if not text or "\x00" in text:
        raise InvalidInputError("path must be a non-empty path without NUL characters")
    root = Path(text).expanduser()
    if not root.exists():
        raise NotFoundError(f"no such file or directory: {root}")
    resolved = root.resolve()
    if not (resolved.is_dir() or resolved.is_file()):
        raise InvalidInputError(f"{root} is neither a directory nor a regular file")
    return resolved


def walk(root: Path, cfg: Settings) -> Walk:
    """Every directory and source file under ``root`` (a file: just that file), without following links
    unless ``codebase.follow_symlinks``; loops and links out of the tree are skipped with the reason."""
    cc = cfg.codebase
    out = Walk()
    if root.is_file():
        out.dirs["."] = [root.name]
        _take_file(root, root.name, root, out, cc.max_file_bytes)
        return out
    visited = {_inode(root)}
    stack: list[tuple[Path, str]] = [(root, ".")]
    count = 0
    while stack:
        here, rel = stack.pop()
        try:
            entries = sorted(os.scandir(here), key=lambda e: e.name)
        except OSError as exc:
            out.skipped[rel] = f"cannot list the directory: {exc.strerror or exc}"
            continue
        listing: list[str] = []
        for entry in entries:
            name = entry.name
            child = name if rel == "." else f"{rel}/{name}"
            if cc.skip_hidden and name.startswith("."):
                continue
            path = Path(entry.path)
            if entry.is_symlink():
                target = _link_target(path, root, visited, cc.follow_symlinks)
                if isinstance(target, str):
                    out.skipped[child] = target
                    continue
                path = target
            if path.is_dir():
                if name in cc.exclude_dirs:
                    continue
                listing.append(name + "/")
                visited.add(_inode(path))
                stack.append((path, child))
            elif path.is_file():
                count += 1
                if count > cc.max_files:
                    raise InvalidInputError(
                        f"{root} holds more than codebase.max_files = {cc.max_files} files; ingest a part of it "
                        "(a subdirectory) or raise the setting"
                    )
                listing.append(name)
                if path.suffix in PARSED_SUFFIXES:
                    _take_file(path, child, root, out, cc.max_file_bytes)
            else:
                out.skipped[child] = "not a regular file or directory"
        out.dirs[rel] = listing
    return out


def _inode(path: Path) -> tuple[int, int]:
    st = path.stat()
    return (st.st_dev, st.st_ino)


def _link_target(path: Path, root: Path, visited: set[tuple[int, int]], follow: bool) -> Path | str:
    """Where a symbolic link leads, or why it is skipped."""
    if not follow:
        return "symbolic link (not followed; codebase.follow_symlinks)"
    try:
        target = path.resolve(strict=True)
    except (OSError, RuntimeError):
        return "broken or looping symbolic link"
    if target != root and root not in target.parents:
        return f"symbolic link out of the tree (to {target})"
    if target.is_dir() and _inode(target) in visited:
        return "symbolic link loop (the directory is already being read)"
    return target


def _take_file(path: Path, rel: str, root: Path, out: Walk, max_bytes: int) -> None:
    try:
        size = path.stat().st_size
    except OSError as exc:
        out.skipped[rel] = f"cannot read: {exc.strerror or exc}"
        return
    if size > max_bytes:
        out.skipped[rel] = f"too large ({size} bytes > codebase.max_file_bytes = {max_bytes})"
        return
    out.files[rel] = path


# --- reading a Python file --------------------------------------------------------------------------


class SkipFile(Exception):
    """A file that cannot become memories now (binary, not UTF-8, does not parse); the message says why."""


def read_source(path: Path) -> tuple[str, str]:
    """The file's text and the sha256 of its bytes; :class:`SkipFile` for binary or undecodable files."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise SkipFile(f"cannot read: {exc.strerror or exc}") from exc
    if b"\x00" in data[:_SNIFF]:
        raise SkipFile("binary file (NUL bytes)")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise SkipFile(f"not UTF-8 text (byte {exc.start})") from exc
    return text, hashlib.sha256(data).hexdigest()


def module_name(rel: str) -> str:
    """``src/reverie/dynamics/fsrs.py`` → ``reverie.dynamics.fsrs`` (a leading ``src/`` and ``__init__`` dropped)."""
    parts = list(PurePosixPath(rel).with_suffix("").parts)
    if parts and parts[0] in ("src", "lib") and len(parts) > 1:
        parts = parts[1:]
    if parts and parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(p for p in parts if p not in (".",)) or PurePosixPath(rel).stem


def _first_line(node: ast.AST) -> str:
    doc = (
        ast.get_docstring(node, clean=True)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        else None
    )
    if not doc:
        return ""
    para = doc.strip().split("\n\n", 1)[0]
    return " ".join(para.split())[:240]


#: a signature keeps annotations and defaults up to these lengths (longer ones become "…"): the memory
#: is embedded as one text, and the local model reads at most 256 word pieces
_MAX_ANNOTATION, _MAX_DEFAULT = 32, 16


def _short(node: ast.expr | None, limit: int) -> str | None:
    if node is None:
        return None
    text = ast.unparse(node)
    return text if len(text) <= limit else "…"


def _params(args: ast.arguments, *, drop_self: bool = False) -> str:
    """The parameter list, with long annotations and defaults shortened."""

    def one(arg: ast.arg, default: ast.expr | None = None, star: str = "") -> str:
        note = _short(arg.annotation, _MAX_ANNOTATION)
        text = star + arg.arg + (f": {note}" if note else "")
        value = _short(default, _MAX_DEFAULT)
        return text + (f"={value}" if value is not None else "")

    positional = [*args.posonlyargs, *args.args]
    defaults: list[ast.expr | None] = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)
    parts = [one(a, d) for a, d in zip(positional, defaults, strict=True)]
    if args.posonlyargs:
        parts.insert(len(args.posonlyargs), "/")
    if args.vararg is not None:
        parts.append(one(args.vararg, star="*"))
    elif args.kwonlyargs:
        parts.append("*")
    parts += [one(a, d) for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True)]
    if args.kwarg is not None:
        parts.append(one(args.kwarg, star="**"))
    if drop_self and parts and parts[0] in ("self", "cls"):
        parts = parts[1:]
    return ", ".join(parts)


def _signature(fn: ast.FunctionDef | ast.AsyncFunctionDef, *, method: bool = False) -> str:
    returns = _short(fn.returns, _MAX_ANNOTATION)
    return f"{fn.name}({_params(fn.args, drop_self=method)})" + (f" -> {returns}" if returns else "")


def _decorators(fn: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> str:
    """The decorators by name (``@property``, ``@app.command``), without their arguments."""
    names = []
    for dec in fn.decorator_list:
        target = dec.func if isinstance(dec, ast.Call) else dec
        text = ast.unparse(target)
        if len(text) <= 40:
            names.append("@" + text)
    return " ".join(names)


def _public(name: str, include_private: bool) -> bool:
    return include_private or not name.startswith("_")


def python_units(rel: str, text: str, file_hash: str, *, include_private: bool = False) -> list[Unit]:
    """The module, its public classes (with their public methods) and functions, as memories-to-be.
    :class:`SkipFile` when the file does not parse."""
    try:
        tree = ast.parse(text, filename=rel, type_comments=False)
    except (SyntaxError, ValueError) as exc:
        where = f"line {exc.lineno}: " if isinstance(exc, SyntaxError) and exc.lineno else ""
        msg = exc.msg if isinstance(exc, SyntaxError) else str(exc)
        raise SkipFile(f"does not parse ({where}{msg})") from exc
    mod = module_name(rel)
    units: list[Unit] = []
    functions: list[str] = []
    classes: list[str] = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and _public(node.name, include_private):
            functions.append(node.name)
            units.append(_function_unit(node, rel, file_hash, owner=None))
        elif isinstance(node, ast.ClassDef) and _public(node.name, include_private):
            classes.append(node.name)
            units.extend(_class_units(node, rel, file_hash, include_private))
    doc = _first_line(tree)
    defines = "; ".join(
        part
        for part in (
            f"classes {', '.join(classes)}" if classes else "",
            f"functions {', '.join(functions)}" if functions else "",
        )
        if part
    )
    head = f"Python module {mod} ({rel})" + (f" — {doc.rstrip('.')}" if doc else "")
    tail = f"Defines {defines}." if defines else "Defines no public classes or functions."
    units.insert(0, Unit("module", rel, "", f"{head}. {tail}", 1, file_hash))
    return units


def _function_unit(fn: ast.FunctionDef | ast.AsyncFunctionDef, rel: str, file_hash: str, *, owner: str | None) -> Unit:
    kind = "method" if owner else "function"
    qual = f"{owner}.{fn.name}" if owner else fn.name
    prefix = "async " if isinstance(fn, ast.AsyncFunctionDef) else ""
    deco = _decorators(fn)
    sig = _signature(fn, method=owner is not None)
    shown = f"{owner}.{sig}" if owner else sig
    doc = _first_line(fn)
    head = f"{deco + ' ' if deco else ''}{prefix}{kind} {shown}"
    content = f"{head} — {doc} [{rel}]" if doc else f"{head} [{rel}]"
    return Unit(kind, rel, qual, content, fn.lineno, file_hash)


def _class_units(cls: ast.ClassDef, rel: str, file_hash: str, include_private: bool) -> list[Unit]:
    bases = ", ".join(b for b in (_short(base, _MAX_ANNOTATION) for base in cls.bases) if b)
    methods = [n for n in cls.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)]
    init = next((m for m in methods if m.name == "__init__"), None)
    public = [m for m in methods if _public(m.name, include_private) or m.name == "__init__"]
    sig = (
        f"{cls.name}({_params(init.args, drop_self=True)})" if init else (f"{cls.name}({bases})" if bases else cls.name)
    )
    doc = _first_line(cls)
    deco = _decorators(cls)
    head = f"{deco + ' ' if deco else ''}class {sig}" + (f" (subclass of {bases})" if bases and init else "")
    names = [m.name for m in public if m.name != "__init__"]
    tail = f" Methods: {', '.join(names)}." if names else ""
    content = f"{head} — {doc} [{rel}].{tail}" if doc else f"{head} [{rel}].{tail}"
    units = [Unit("class", rel, cls.name, content, cls.lineno, file_hash)]
    units += [_function_unit(m, rel, file_hash, owner=cls.name) for m in public if m.name != "__init__"]
    return units


def directory_unit(rel: str, entries: Sequence[str], max_entries: int, *, root_name: str) -> Unit:
    subdirs = [e[:-1] for e in entries if e.endswith("/")]
    files = [e for e in entries if not e.endswith("/")]
    shown_path = root_name if rel == "." else f"{root_name}/{rel}"

    def listing(items: list[str], what: str) -> str:
        if not items:
            return ""
        more = f" and {len(items) - max_entries} more" if len(items) > max_entries else ""
        return f"{what}: {', '.join(items[:max_entries])}{more}"

    parts = [p for p in (listing(files, "files"), listing(subdirs, "subdirectories")) if p]
    body = "; ".join(parts) if parts else "empty"
    return Unit("directory", rel, "", f"Directory {shown_path}/ — {body}.")


# --- ingesting -------------------------------------------------------------------------------------


@dataclass(slots=True)
class _Plan:
    inserts: list[Unit] = field(default_factory=list)
    updates: list[tuple[MemoryRecord, Unit]] = field(default_factory=list)  # text changed (re-embed)
    retouch: list[tuple[MemoryRecord, Unit]] = field(default_factory=list)  # same text, new line/hash
    invalidate: list[tuple[MemoryRecord, str]] = field(default_factory=list)


def existing(
    store: Store, root: str, *, user_id: str | None, agent_id: str | None
) -> dict[tuple[str, str, str], MemoryRecord]:
    """The codebase memories of ``root`` in this scope, by (kind, path, qualname); an active one wins over
    an invalidated one, the newest over older ones."""
    flt = MemoryFilter(
        user_id=user_id,
        agent_id=agent_id,
        layers=frozenset({Layer.CODEBASE}),
        statuses=None,
        stores=None,
        metadata={ROOT: root},
    )
    found: dict[tuple[str, str, str], MemoryRecord] = {}
    for batch in store.scan(flt, omit=frozenset({"embedding", "inputs"})):
        for rec in batch:
            meta = rec.metadata
            key = (str(meta.get(KIND, "")), str(meta.get(PATH, "")), str(meta.get(QUALNAME, "")))
            old = found.get(key)
            if old is None or (rec.status is Status.ACTIVE, rec.created_at) > (
                old.status is Status.ACTIVE,
                old.created_at,
            ):
                found[key] = rec
    return found


def _wanted_units(
    walked: Walk, by_file: dict[str, list[MemoryRecord]], cfg: Settings, report: IngestReport
) -> tuple[dict[tuple[str, str, str], Unit], set[str]]:
    """The memories-to-be of every changed file, and the files whose memories stay as they are (unchanged,
    or unreadable / unparsable now: nothing is lost)."""
    wanted: dict[tuple[str, str, str], Unit] = {}
    kept: set[str] = set(walked.skipped)
    for rel, file in sorted(walked.files.items()):
        try:
            text, digest = read_source(file)
            recs = by_file.get(rel, [])
            if recs and all(r.status is Status.ACTIVE and r.metadata.get(FILE_HASH) == digest for r in recs):
                report.files_unchanged += 1
                report.unchanged += len(recs)
                kept.add(rel)
                continue
            units = python_units(rel, text, digest, include_private=cfg.codebase.include_private)
        except SkipFile as exc:
            report.skipped[rel] = str(exc)
            kept.add(rel)
            continue
        report.files_parsed += 1
        wanted.update((u.key, u) for u in units)
    return wanted, kept


def plan(
    walked: Walk, stored: dict[tuple[str, str, str], MemoryRecord], cfg: Settings, *, root: Path, report: IngestReport
) -> _Plan:
    """What to insert, update and invalidate so the memories match the tree (unchanged files not parsed)."""
    out = _Plan()
    by_file: dict[str, list[MemoryRecord]] = {}
    for (kind, rel, _), rec in stored.items():
        if kind != "directory":
            by_file.setdefault(rel, []).append(rec)
    report.files_seen = len(walked.files)
    wanted, kept = _wanted_units(walked, by_file, cfg, report)
    report.skipped.update(walked.skipped)
    if root.is_dir():
        for rel, entries in walked.dirs.items():
            unit = directory_unit(rel, entries, cfg.codebase.listing_max_entries, root_name=root.name)
            wanted[unit.key] = unit
    for key, unit in wanted.items():
        old = stored.get(key)
        if old is None:
            out.inserts.append(unit)
        elif old.content != unit.content or old.status is not Status.ACTIVE:
            out.updates.append((old, unit))
        elif old.metadata.get(LINE) != unit.line or old.metadata.get(FILE_HASH) != unit.file_hash:
            out.retouch.append((old, unit))
        else:
            report.unchanged += 1
    for key, old in stored.items():
        kind, rel, _ = key
        if key in wanted or old.status is not Status.ACTIVE or rel in kept:
            continue
        if kind == "directory":
            if root.is_dir() and rel not in walked.dirs:
                out.invalidate.append((old, "the directory no longer exists"))
        else:
            why = "no longer in the file" if rel in walked.files else "the file no longer exists"
            out.invalidate.append((old, why))
    report.changed_files = sorted(
        {u.path for u in out.inserts}
        | {u.path for _, u in out.updates}
        | {str(r.metadata.get(PATH, "")) for r, _ in out.invalidate} - {""}
    )
    return out


def _meta(root: Path, unit: Unit, base: dict[str, Any] | None = None) -> dict[str, Any]:
    meta = dict(base or {})
    meta.update(
        {
            ROOT: str(root),
            PATH: unit.path,
            KIND: unit.kind,
            QUALNAME: unit.qualname,
            LINE: unit.line,
            FILE_HASH: unit.file_hash,
            "language": "python" if unit.kind != "directory" else None,
            ROOT_IS_FILE: True if root.is_file() else None,
        }
    )
    return {k: v for k, v in meta.items() if v is not None or k in (LINE, FILE_HASH)}


def apply(
    store: Store,
    todo: _Plan,
    *,
    root: Path,
    user_id: str | None,
    agent_id: str | None,
    now: datetime,
    settings: Settings,
    embed: Callable[[Sequence[str]], np.ndarray],
    report: IngestReport,
) -> None:
    """Write the plan: new memories, changed ones (re-embedded), moved ones, invalidated ones — in batches,
    each batch one transaction with history for every memory it touches."""
    writer = _Writer(store, root, user_id, agent_id, now, settings, embed, report)
    size = settings.codebase.embed_batch
    for batch in _chunks(todo.inserts, size):
        writer.insert(batch)
    for batch in _chunks(todo.updates, size):
        writer.update(batch)
    for batch in _chunks(todo.retouch, size * 4):
        writer.retouch(batch)
    for batch in _chunks(todo.invalidate, size * 4):
        writer.invalidate(batch)


@dataclass
class _Writer:
    """Writes a plan's batches: each batch one transaction with history for every memory it touches."""

    store: Store
    root: Path
    user_id: str | None
    agent_id: str | None
    now: datetime
    settings: Settings
    embed: Callable[[Sequence[str]], np.ndarray]
    report: IngestReport

    def insert(self, batch: Sequence[Any]) -> None:
        """New memories, one per new unit."""
        from reverie.dynamics.access import initial_values

        vectors = self.embed([u.content for u in batch])
        records = []
        for unit, vec in zip(batch, vectors, strict=True):
            rec = MemoryRecord(
                content=unit.content,
                user_id=self.user_id,
                agent_id=self.agent_id,
                instance_id=self.settings.instance_id,
                layer=Layer.CODEBASE,
                category="code",
                memory_kind=MemoryKind.NOTE,
                embedding=vec,
                source="code_scan",
                write_source="ingest",
                data_source="code_scan",
                metadata=_meta(self.root, unit),
                valid_from=self.now,
                recorded_at=self.now,
                created_at=self.now,
                updated_at=self.now,
                inputs=[{"action": "INGEST_CODE", "at": self.now.isoformat(), "path": unit.path}],
            )
            for key, value in initial_values(rec, now=self.now, cfg=self.settings.dynamics).items():
                setattr(rec, key, value)
            records.append(rec)
        with self.store.transaction():
            self.store.insert(records)
            self.store.add_history(
                [
                    HistoryEvent(
                        r.id,
                        "created",
                        self.now,
                        reason=f"code ingested from {r.metadata[PATH]}",
                        actor="ingest_code",
                        data={"kind": r.metadata[KIND], "layer": "codebase"},
                    )
                    for r in records
                ]
            )
        self.report.created += len(records)
        self.report.ids["created"] += [r.id for r in records]

    def update(self, batch: Sequence[Any]) -> None:
        """Changed units: new text, re-embedded (an invalidated memory comes back)."""
        vectors = self.embed([u.content for _, u in batch])
        with self.store.transaction():
            for (rec, unit), vec in zip(batch, vectors, strict=True):
                was = rec.status
                self.store.update_fields(
                    rec.id,
                    {
                        "content": unit.content,
                        "content_hash": content_hash(unit.content),
                        "embedding": vec,
                        "metadata": _meta(self.root, unit, rec.metadata),
                        "status": Status.ACTIVE,
                        "valid_until": None,
                        "updated_at": self.now,
                    },
                    expected_version=rec.version,
                )
                event = "reactivated" if was is not Status.ACTIVE else "updated"
                self.store.add_history(
                    [
                        HistoryEvent(
                            rec.id,
                            event,
                            self.now,
                            reason=f"code changed in {unit.path}",
                            actor="ingest_code",
                            data={"before": rec.content[:500], "from_status": was.value},
                        )
                    ]
                )
                if event == "reactivated":
                    self.report.reactivated += 1
                self.report.updated += 1
                self.report.ids["updated"].append(rec.id)

    def retouch(self, batch: Sequence[Any]) -> None:
        """Unchanged units whose place moved: only their metadata."""
        with self.store.transaction():
            for rec, unit in batch:
                self.store.update_fields(
                    rec.id,
                    {"metadata": _meta(self.root, unit, rec.metadata), "updated_at": self.now},
                    expected_version=rec.version,
                )
        self.report.unchanged += len(batch)

    def invalidate(self, batch: Sequence[Any]) -> None:
        """Units gone: their memories are invalidated, never deleted."""
        with self.store.transaction():
            for rec, _ in batch:
                self.store.update_fields(
                    rec.id,
                    {"status": Status.INVALIDATED, "valid_until": rec.valid_until or self.now, "updated_at": self.now},
                    expected_version=rec.version,
                )
            self.store.add_history(
                [
                    HistoryEvent(
                        rec.id,
                        "invalidated",
                        self.now,
                        reason=f"{why} ({rec.metadata.get(PATH)})",
                        actor="ingest_code",
                        data={"rule": "code_gone"},
                    )
                    for rec, why in batch
                ]
            )
        self.report.invalidated += len(batch)
        self.report.ids["invalidated"] += [rec.id for rec, _ in batch]


def _chunks(items: Sequence[Any], size: int) -> Iterator[Sequence[Any]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def code_path(rec: MemoryRecord) -> str | None:
    """The absolute file or directory a codebase memory describes (``None`` for any other memory)."""
    if rec.layer is not Layer.CODEBASE:
        return None
    root, rel = rec.metadata.get(ROOT), rec.metadata.get(PATH)
    if not isinstance(root, str) or not isinstance(rel, str):
        return None
    if rec.metadata.get(ROOT_IS_FILE) or rel == ".":
        return root
    return os.path.join(root, *rel.split("/"))


__all__ = [
    "KINDS",
    "IngestReport",
    "SkipFile",
    "Unit",
    "Walk",
    "apply",
    "code_path",
    "directory_unit",
    "existing",
    "module_name",
    "plan",
    "python_units",
    "read_source",
    "resolve_root",
    "walk",
]
