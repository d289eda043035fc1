"""Ops log: fire-and-forget JSONL telemetry of every decision.

Events are queued and written by one background thread, so logging never blocks or fails
the operation that logged: a full queue drops the event (and counts it), a write error is
swallowed (and counted). Files rotate at ``rotate_bytes`` (10 MB) to
``ops-log-YYYY-MM-DD.jsonl`` (``-N`` suffixes when a day rotates more than once).
Nothing leaves the machine.

Every entry names its store (``"store"``: the database file, or the PostgreSQL URL without its
password), so that stores sharing one log — every SQLite file of a directory writes ``ops-log.jsonl``
beside itself, every PostgreSQL store the one in the user's data directory — are told apart.

The raw text of queries and messages is not written unless ``opslog.log_text`` is on: fields
named in :data:`TEXT_FIELDS` are replaced by their length (``query`` → ``query_chars``). A write
decision's reason may still quote what a memory said (``another value in the same place: '4321' →
'9876'``): when memories are forgotten (:meth:`OpsLog.forget`), every entry that names one of them —
or, for ``forget_user``, that user in this store — is rewritten in the log and its rotated files,
keeping only what carries no text (time, operation, store, action, ids, counts). The rewrite holds an
exclusive lock on the file (appends hold a shared one), so another process's lines are never lost.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import threading
from collections.abc import Callable, Collection, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

try:  # POSIX advisory locks: appends (shared) against a rewrite (exclusive), across processes
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

_STOP = object()
#: event fields that carry text a user wrote (a query, a message, content): logged as their length
#: unless the log is told to keep text
TEXT_FIELDS = frozenset({"query", "text", "content", "message", "messages"})
#: what an entry keeps once it names a forgotten memory or user: nothing that can hold a text
KEPT_WHEN_FORGOTTEN = frozenset(
    {"ts", "op", "store", "action", "id", "ids", "user_id", "path", "fallback", "success", "latencyMs", "results"}
)
FORGOTTEN = "forgotten"


def redact(fields: dict[str, Any]) -> dict[str, Any]:
    """``fields`` with every :data:`TEXT_FIELDS` value replaced by its length (``<name>_chars``)."""
    if not TEXT_FIELDS.intersection(fields):
        return fields
    out: dict[str, Any] = {}
    for key, value in fields.items():
        if key in TEXT_FIELDS:
            out[f"{key}_chars"] = len(value) if isinstance(value, str | list | tuple) else None
        else:
            out[key] = value
    return out


@dataclass
class _Forget:
    """A request to the writer thread: rewrite the entries naming these ids (or this user of this store)."""

    ids: frozenset[str]
    user: tuple[str | None] | None  # (user_id,) for forget_user; None when only ids are forgotten
    done: threading.Event = field(default_factory=threading.Event)
    rewritten: int = 0


class OpsLog:
    """An append-only JSONL log written by a daemon thread. ``store`` names the store in every entry."""

    def __init__(
        self,
        path: Path | None,
        *,
        clock: Callable[[], datetime],
        rotate_bytes: int = 10 * 1024 * 1024,
        queue_size: int = 10_000,
        log_text: bool = False,
        store: str | None = None,
    ) -> None:
        self.path = path
        self.log_text = log_text
        self.rotate_bytes = rotate_bytes
        self.store = store
        self._clock = clock
        self._queue: queue.Queue[Any] = queue.Queue(maxsize=queue_size)
        self.dropped = 0
        self.errors = 0
        self.written = 0
        self._thread: threading.Thread | None = None
        if path is not None:
            self._thread = threading.Thread(target=self._run, name="reverie-opslog", daemon=True)
            self._thread.start()

    @property
    def enabled(self) -> bool:
        return self.path is not None

    def log(self, op: str, **fields: Any) -> None:
        """Queue one event; never raises, never blocks."""
        if self.path is None:
            return
        try:
            head = {"ts": self._clock().isoformat(), "op": op}
            if self.store is not None:
                head["store"] = self.store
            event = {**head, **(fields if self.log_text else redact(fields))}
            self._queue.put_nowait(event)
        except queue.Full:
            self.dropped += 1
        except Exception:  # a clock or field that cannot be read must not fail the caller
            self.errors += 1

    def forget(self, ids: Collection[str] = (), *, user_id: str | None = None, whole_user: bool = False) -> int:
        """Rewrite every entry (in the log and its rotated files) that names one of ``ids`` — or, with
        ``whole_user``, that names ``user_id`` in this store — keeping only what carries no text. Waits
        for the events queued before it and for the rewrite; returns how many entries were rewritten.
        Never raises (a failure is counted in ``errors``)."""
        if self._thread is None or not (ids or whole_user):
            return 0
        request = _Forget(frozenset(i for i in ids if i), (user_id,) if whole_user else None)
        try:
            self._queue.put(request, timeout=30.0)
        except queue.Full:
            self.errors += 1
            return 0
        request.done.wait(120.0)
        return request.rewritten

    def flush(self, timeout: float = 5.0) -> None:
        """Wait until every queued event is written (tests, shutdown)."""
        if self._thread is None:
            return
        done = threading.Event()
        try:
            self._queue.put(done, timeout=timeout)
        except queue.Full:
            return
        done.wait(timeout)

    def close(self) -> None:
        if self._thread is None:
            return
        self.flush()
        try:
            self._queue.put(_STOP, timeout=1.0)
        except queue.Full:
            return
        self._thread.join(timeout=5.0)
        self._thread = None

    # writer thread -----------------------------------------------------------------------
    def _run(self) -> None:
        while True:
            item = self._queue.get()
            if item is _STOP:
                return
            if isinstance(item, threading.Event):
                item.set()
                continue
            if isinstance(item, _Forget):
                try:
                    item.rewritten = self._rewrite(item)
                except Exception:
                    self.errors += 1
                finally:
                    item.done.set()
                continue
            try:
                self._write(item)
                self.written += 1
            except Exception:
                self.errors += 1

    def _write(self, event: dict[str, Any]) -> None:
        assert self.path is not None
        line = json.dumps(event, ensure_ascii=False, default=str) + "\n"
        data = line.encode("utf-8")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            size = self.path.stat().st_size
        except FileNotFoundError:
            size = 0
        if size and size + len(data) > self.rotate_bytes:
            self._rotate()
        with _locked(self.path, exclusive=False) as fd:
            os.write(fd, data)

    def _rotate(self) -> None:
        assert self.path is not None
        day = self._clock().strftime("%Y-%m-%d")
        stem = self.path.stem
        target = self.path.with_name(f"{stem}-{day}{self.path.suffix}")
        n = 1
        while target.exists():
            target = self.path.with_name(f"{stem}-{day}-{n}{self.path.suffix}")
            n += 1
        with _locked(self.path, exclusive=True):
            os.replace(self.path, target)

    def files(self) -> list[Path]:
        """The log and its rotated files."""
        if self.path is None:
            return []
        rotated = sorted(self.path.parent.glob(f"{self.path.stem}-*{self.path.suffix}"))
        return [p for p in (self.path, *rotated) if p.is_file()]

    def _rewrite(self, request: _Forget) -> int:
        rewritten = 0
        for path in self.files():
            with _locked(path, exclusive=True) as fd:
                with os.fdopen(os.dup(fd), "rb") as f:
                    lines = f.read().decode("utf-8", errors="replace").splitlines(keepends=True)
                out, changed = [], 0
                for line in lines:
                    kept = self._forgotten(line, request)
                    changed += kept is not line
                    out.append(kept)
                if changed:
                    tmp = path.with_name(f".{path.name}.forget")
                    fd_tmp = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
                    try:
                        os.write(fd_tmp, "".join(out).encode("utf-8"))
                        os.fsync(fd_tmp)
                    finally:
                        os.close(fd_tmp)
                    os.replace(tmp, path)
                rewritten += changed
        return rewritten

    def _forgotten(self, line: str, request: _Forget) -> str:
        """The line as it stays: the same line, or its entry without text when it names what was forgotten."""
        named = any(i in line for i in request.ids)
        if not named and request.user is None:
            return line
        try:
            event = json.loads(line)
        except ValueError:
            return line if not named else ""
        if not isinstance(event, dict):
            return line
        if not named:
            assert request.user is not None
            named = "user_id" in event and event["user_id"] == request.user[0] and event.get("store") == self.store
        if not named or event.get("redacted") == FORGOTTEN:
            return line
        kept = {k: v for k, v in event.items() if k in KEPT_WHEN_FORGOTTEN and not isinstance(v, dict)}
        kept["redacted"] = FORGOTTEN
        return json.dumps(kept, ensure_ascii=False, default=str) + "\n"


@contextlib.contextmanager
def _locked(path: Path, *, exclusive: bool) -> Iterator[int]:
    """The file at ``path`` opened for appending, locked shared (an append) or exclusive (a rewrite or
    rotation). When the lock is won on a file that another process has meanwhile replaced, the lock is
    taken again on the file now at ``path``."""
    while True:
        fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            if fcntl is not None:
                fcntl.flock(fd, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
                try:
                    same = os.fstat(fd).st_ino == os.stat(path).st_ino
                except FileNotFoundError:
                    same = False
                if not same:
                    continue
            yield fd
            return
        finally:
            os.close(fd)


__all__ = ["FORGOTTEN", "KEPT_WHEN_FORGOTTEN", "TEXT_FIELDS", "OpsLog", "redact"]
