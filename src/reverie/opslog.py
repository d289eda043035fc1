"""Ops log: fire-and-forget JSONL telemetry of every decision.

Events are queued and written by one background thread, so logging never blocks or fails
the operation that logged: a full queue drops the event (and counts it), a write error is
swallowed (and counted). Files rotate at ``rotate_bytes`` (10 MB) to
``ops-log-YYYY-MM-DD.jsonl`` (``-N`` suffixes when a day rotates more than once).
Nothing leaves the machine.

The raw text of queries and messages is not written unless ``opslog.log_text`` is on: fields
named in :data:`TEXT_FIELDS` are replaced by their length (``query`` → ``query_chars``), so a
memory that is forgotten leaves no copy of its words in the log.
"""

from __future__ import annotations

import json
import os
import queue
import threading
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

_STOP = object()
#: event fields that carry text a user wrote (a query, a message, content): logged as their length
#: unless the log is told to keep text
TEXT_FIELDS = frozenset({"query", "text", "content", "message", "messages"})


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


class OpsLog:
    """An append-only JSONL log written by a daemon thread."""

    def __init__(
        self,
        path: Path | None,
        *,
        clock: Callable[[], datetime],
        rotate_bytes: int = 10 * 1024 * 1024,
        queue_size: int = 10_000,
        log_text: bool = False,
    ) -> None:
        self.path = path
        self.log_text = log_text
        self.rotate_bytes = rotate_bytes
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
            event = {"ts": self._clock().isoformat(), "op": op, **(fields if self.log_text else redact(fields))}
            self._queue.put_nowait(event)
        except queue.Full:
            self.dropped += 1
        except Exception:  # a clock or field that cannot be read must not fail the caller
            self.errors += 1

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
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(fd, data)
        finally:
            os.close(fd)

    def _rotate(self) -> None:
        assert self.path is not None
        day = self._clock().strftime("%Y-%m-%d")
        stem = self.path.stem
        target = self.path.with_name(f"{stem}-{day}{self.path.suffix}")
        n = 1
        while target.exists():
            target = self.path.with_name(f"{stem}-{day}-{n}{self.path.suffix}")
            n += 1
        os.replace(self.path, target)


__all__ = ["TEXT_FIELDS", "OpsLog", "redact"]
