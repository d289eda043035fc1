"""The mirror's line in a health report (``reverie doctor``): is it written, did a write fail, do conflicts wait."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from reverie.mirror.index import MEMORY
from reverie.mirror.writer import FAILURE_KEY, Mirror

if TYPE_CHECKING:
    from reverie.memory import Memory


def check_mirror(mem: Memory) -> dict[str, Any]:
    """``{"name": "mirror", "status": "ok" | "warn" | "error", "message", "details"}``: ``warn`` when a write to
    the mirror failed since the last whole sync (the store's writes were kept; ``reverie sync`` catches the
    mirror up) or when conflicts wait to be resolved; ``error`` when the directory cannot be written."""
    failure = mem.store.get_state(FAILURE_KEY)
    configured = mem.settings.mirror.dir
    if isinstance(failure, dict):
        return _check(
            "warn",
            f"the markdown mirror {failure.get('dir')} could not be written at {failure.get('at')} "
            f"({failure.get('error')}); the memory's changes were kept: run `reverie sync` to write them",
            dict(failure),
        )
    if configured is None:
        return _check("ok", "no markdown mirror (mirror.dir is not set)", {})
    root = Path(configured).expanduser()
    usable = root if root.exists() else next((p for p in root.parents if p.exists()), root)
    if (root.exists() and not root.is_dir()) or not os.access(usable, os.W_OK | os.X_OK):
        return _check("error", f"the markdown mirror {root} cannot be written: check mirror.dir", {"dir": str(root)})
    mirror = getattr(mem._store, "mirror", None)
    if not isinstance(mirror, Mirror):
        return _check("ok", f"markdown mirror at {root}", {"dir": str(root)})
    with mirror.lock.held():
        mirror.index.refresh()
        memories = mirror.index.entries([MEMORY])
    conflicts = sorted(e.path for e in memories if e.conflict is not None)
    details = {"dir": str(root), "memory_files": sum(e.sum is not None for e in memories), "conflicts": conflicts}
    if conflicts:
        return _check(
            "warn",
            f"{len(conflicts)} file(s) of the markdown mirror {root} were edited while their memory changed in the "
            "store: both kept, see conflicts/ (`reverie sync` lists them)",
            details,
        )
    return _check("ok", f"markdown mirror at {root}: {details['memory_files']} memory files, in step", details)


def _check(status: str, message: str, details: dict[str, Any]) -> dict[str, Any]:
    return {"name": "mirror", "status": status, "message": message, "details": details}


__all__ = ["check_mirror"]
