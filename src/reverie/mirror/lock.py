"""One writer at a time in a mirror directory: an exclusive lock on ``.reverie/lock``.

Every process (and every ``Memory`` object) that writes or syncs a mirror takes the lock before it reads
the store and writes files, so two writers on one PostgreSQL store never interleave partial files, and the
one that writes last has read the newest state. The lock is re-entrant within one :class:`MirrorLock`
(a sync applies an edit, whose change is mirrored inside the same sync); the operating system releases it
when a process dies.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from reverie.errors import ConflictError

try:  # POSIX
    import fcntl

    def _try_lock(fd: int) -> bool:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        return True

    def _unlock(fd: int) -> None:
        fcntl.flock(fd, fcntl.LOCK_UN)

except ImportError:  # pragma: no cover - Windows
    import msvcrt

    def _try_lock(fd: int) -> bool:
        try:
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)  # type: ignore[attr-defined]
        except OSError:
            return False
        return True

    def _unlock(fd: int) -> None:
        os.lseek(fd, 0, os.SEEK_SET)
        msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)  # type: ignore[attr-defined]


#: how long a waiting writer sleeps between two tries (seconds; grows to the maximum)
_FIRST_WAIT = 0.002
_MAX_WAIT = 0.01


class MirrorLock:
    """The mirror's lock file, held by :meth:`held` (re-entrant; waits at most ``timeout_s``)."""

    def __init__(self, path: Path, *, timeout_s: float) -> None:
        self.path = path
        self.timeout_s = timeout_s
        self._thread = threading.RLock()
        self._depth = 0
        self._fd: int | None = None
        self._fd_pid = 0

    @contextmanager
    def held(self) -> Iterator[None]:
        if not self._thread.acquire(timeout=self.timeout_s):
            raise ConflictError(
                f"another thread kept the mirror {self.path.parent.parent} busy for {self.timeout_s:g} s"
            )
        try:
            if self._depth == 0:
                self._acquire()
            self._depth += 1
            try:
                yield
            finally:
                self._depth -= 1
                if self._depth == 0 and self._fd is not None:
                    _unlock(self._fd)
        finally:
            self._thread.release()

    def _acquire(self) -> None:
        deadline = time.monotonic() + self.timeout_s
        wait = _FIRST_WAIT
        while True:
            fd = self._open()
            if _try_lock(fd):
                if self._same_file(fd):
                    return
                _unlock(fd)  # the lock file was deleted and made anew meanwhile: lock the one on disk
                self._drop()
                continue
            if time.monotonic() >= deadline:
                raise ConflictError(
                    f"another process kept the mirror {self.path.parent.parent} locked for {self.timeout_s:g} s "
                    "(mirror.lock_timeout_s)"
                )
            time.sleep(wait)
            wait = min(wait * 2, _MAX_WAIT)

    def _open(self) -> int:
        """The lock file's descriptor (kept open between two writes; opened anew in a forked child)."""
        if self._fd is None or self._fd_pid != os.getpid():
            self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            self._fd = os.open(self.path, os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o600)
            self._fd_pid = os.getpid()
        return self._fd

    def _same_file(self, fd: int) -> bool:
        try:
            return os.fstat(fd).st_ino == os.stat(self.path).st_ino
        except FileNotFoundError:
            return False

    def _drop(self) -> None:
        if self._fd is not None:
            fd, self._fd = self._fd, None
            os.close(fd)

    def close(self) -> None:
        """Close the lock file (the lock is not held between two writes)."""
        with self._thread:
            if self._depth == 0:
                self._drop()


__all__ = ["MirrorLock"]
