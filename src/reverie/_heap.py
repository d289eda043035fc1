"""Handing freed heap memory back to the operating system.

glibc keeps the pages of large, short-lived allocations (a vector-graph build, the transient copies
of the model weights while the embedder loads) in the process; ``malloc_trim`` returns them, so the
resident size reflects what is still in use. Elsewhere (musl, macOS, Windows) this does nothing.
"""

from __future__ import annotations

import contextlib
import ctypes


def return_freed_memory() -> None:
    """``malloc_trim(0)`` where glibc provides it; a no-op otherwise."""
    try:
        libc = ctypes.CDLL("libc.so.6")
    except OSError:
        return
    with contextlib.suppress(AttributeError):
        libc.malloc_trim(0)


__all__ = ["return_freed_memory"]
