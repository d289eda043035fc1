"""The live markdown mirror: the memory as files people can read, edit, grep and keep in git.

With ``mirror.dir`` set, every change a ``Memory`` commits is written to the mirror as it happens
(:mod:`reverie.mirror.observed` is the one place that learns of changes: the store's write methods);
``reverie sync`` / :meth:`Memory.sync_mirror() <reverie.Memory.sync_mirror>` reads back what people changed
(:mod:`reverie.mirror.sync`). The parts: :mod:`~reverie.mirror.layout` (what a file looks like),
:mod:`~reverie.mirror.writer` (rendering the store into files), :mod:`~reverie.mirror.index` (what was
written, to tell a person's edit from reverie's own), :mod:`~reverie.mirror.lock` (one writer at a time).
"""

from __future__ import annotations

from typing import Any

from reverie.config.mirror import MirrorSettings
from reverie.mirror.observed import MirroredStore, mirrored
from reverie.mirror.sync import SyncReport, mirror_of, sync, watch
from reverie.mirror.writer import FAILURE_KEY, Mirror, WriteReport
from reverie.store.base import Store


def attach(store: Store, settings: MirrorSettings, *, ops_log: Any = None) -> Store:
    """``store`` with every committed change written to the mirror at ``settings.dir``."""
    if settings.dir is None:
        return store
    return mirrored(store, Mirror(settings.dir, store, settings, ops_log=ops_log))


__all__ = [
    "FAILURE_KEY",
    "Mirror",
    "MirroredStore",
    "SyncReport",
    "WriteReport",
    "attach",
    "mirror_of",
    "mirrored",
    "sync",
    "watch",
]
