"""Drift detection: a memory naming a file or directory that existed at an earlier dream and no longer does is
invalidated (never deleted)."""

from __future__ import annotations

import os
import re

from reverie.codebase import code_path
from reverie.dream.context import Collector, DreamContext, DreamStep, StepReport, Write
from reverie.dream.scope_pass import apply, scope_pass
from reverie.model import MemoryRecord, Status

#: metadata key: the paths a memory names that this engine has seen exist
DRIFT_SEEN = "drift_seen"


# --- drift detection ---------------------------------------------------------------------------------------

#: an absolute (or ~) path of at least two components; not inside a URL, a fraction or "and/or"
_ABSOLUTE = re.compile(r"(?<![\w/.:~@-])(~?/(?:[\w.@+-]+/)+[\w.@+-]*[\w@+-])")
#: a relative path with a directory and a file extension ("src/app/main.py", "./conf/app.yaml")
_RELATIVE = re.compile(r"(?<![\w/.:~@-])((?:\.{1,2}/)*(?:[\w@+-][\w.@+-]*/)+[\w@+-][\w.@+-]*\.[A-Za-z0-9]{1,10})\b")


def named_paths(text: str, project_root: str | None) -> list[str]:
    """The file-system paths a memory names, resolved: absolute and ``~`` paths always, relative ones
    only against a configured project root (conservative: a bare word is never a path)."""
    if "/" not in text:
        return []
    found: list[str] = []
    for m in _ABSOLUTE.finditer(text):
        raw = m.group(1)
        if raw.startswith("~/"):
            raw = os.path.expanduser(raw)
            if raw.startswith("~"):
                continue
        found.append(os.path.normpath(raw))
    if project_root is not None:
        spans = [m.span(1) for m in _ABSOLUTE.finditer(text)]
        for m in _RELATIVE.finditer(text):
            if any(s <= m.start(1) < e for s, e in spans):
                continue
            found.append(os.path.normpath(os.path.join(project_root, m.group(1))))
    return list(dict.fromkeys(found))


def _drift_check(rec: MemoryRecord, root: str | None, max_paths: int) -> tuple[list[str], list[str]] | None:
    """(paths seen before that are gone now, paths existing now not yet recorded), or None when neither.

    A codebase memory's own file or directory (``Memory.ingest_code``) counts as seen: it existed when it
    was ingested."""
    own = code_path(rec)
    paths = list(dict.fromkeys([*([own] if own else []), *named_paths(rec.content, root)]))[:max_paths]
    if not paths:
        return None
    seen = set(rec.metadata.get(DRIFT_SEEN) or []) | ({own} if own else set())
    exists = {p for p in paths if os.path.exists(p)}
    gone = sorted(p for p in paths if p in seen and p not in exists)
    new = sorted(exists - seen)
    return (gone, new) if gone or new else None


def step_drift(ctx: DreamContext) -> StepReport:
    """Drift detection: a memory naming a file or directory that existed at an earlier
    dream and no longer does is invalidated (never deleted). Conservative: only absolute/~ paths (and
    relative ones under ``drift_project_root``), and only paths this engine has seen exist — a path of
    another machine is never taken for a dead reference. Pinned and immutable memories are reported only."""
    lc = ctx.settings.dream.forgetting
    report = StepReport("drift", details={"invalidated": 0, "recorded": 0, "protected": 0})
    p = scope_pass(ctx)
    report.examined = p.examined
    invalid: set[str] = set()

    def change(rec: MemoryRecord) -> Write | None:
        found = _drift_check(rec, lc.drift_project_root, lc.drift_max_paths) if rec.status is Status.ACTIVE else None
        if found is None:
            return None
        gone, new = found
        seen = sorted(set(rec.metadata.get(DRIFT_SEEN) or []) | set(new))
        if gone and (rec.pinned or rec.immutable):
            report.details["protected"] += 1
            gone = []
        if gone:
            meta = {**rec.metadata, DRIFT_SEEN: seen, "drift_missing": gone}
            changes = {
                "status": Status.INVALIDATED,
                "valid_until": rec.valid_until or ctx.now,
                "updated_at": ctx.now,
                "metadata": meta,
            }
            reason = f"drift: {', '.join(gone[:3])} no longer exist{'s' if len(gone) == 1 else ''}"
            invalid.add(rec.id)
            return Write(rec, changes, "invalidated", reason, {"rule": "drift", "missing": gone})
        if not new:
            return None
        return Write(rec, {"metadata": {**rec.metadata, DRIFT_SEEN: seen}})

    candidates: list[MemoryRecord] = p.take(DRIFTING)
    done = set(apply(ctx, candidates, "drift", change))
    report.details["invalidated"] = len(done & invalid)
    report.details["recorded"] = len(done - invalid)
    report.changed = report.details["invalidated"]
    return report


def _collect_drifting(ctx: DreamContext, found: list[MemoryRecord], rec: MemoryRecord) -> None:
    lc = ctx.settings.dream.forgetting
    if rec.status is Status.ACTIVE and _drift_check(rec, lc.drift_project_root, lc.drift_max_paths) is not None:
        found.append(rec)


DRIFTING: Collector[list[MemoryRecord]] = Collector("drift", list, _collect_drifting)

STEPS: tuple[DreamStep, ...] = (DreamStep("drift", step_drift, (DRIFTING,)),)

__all__ = ["DRIFTING", "DRIFT_SEEN", "STEPS", "named_paths"]
