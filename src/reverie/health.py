"""What is wrong, in one screen: :meth:`Memory.health() <reverie.memory.Memory.health>` and ``reverie doctor``.

A health report is a list of named checks, each ``ok``, ``warn`` or ``error`` with one line that says
what was found (and, when something is wrong, what to do). The checks run in the order of :data:`CHECKS`:

* ``store`` — the store answers; its backend, schema version, memories and users;
* ``embedder`` — the embedding model loads and embeds a text (a unit vector of its dimension), and it is
  the model the store's vectors were written with;
* ``llm`` — the configured LLM endpoint answers a one-line JSON request (none configured is fine: rules
  decide);
* ``schedule`` — maintenance runs: when the dream cycle last ran, and whether it is overdue;
* ``mirror`` — the markdown mirror (when ``mirror.dir`` is set) is written and in step with the store.

The embedder check also compares a local model's reference vectors with the ones reverie ships and with
the ones recorded in the store when its vectors were written: other vectors on this machine are a warning.

A check is a function ``check(memory) -> Check``; adding one is adding it to :data:`CHECKS`. A check that
raises is reported as an ``error`` of that check, never as a failure of the report.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

if TYPE_CHECKING:
    from reverie.memory import Memory

Status = Literal["ok", "warn", "error"]
_RANK: dict[str, int] = {"ok": 0, "warn": 1, "error": 2}
#: a dream cycle is overdue when it last ran more than this many cycle intervals ago
OVERDUE_CYCLES = 2
_PROBE_TEXT = "reverie health check"


@dataclass(frozen=True)
class Check:
    """One named check: ``status`` (ok / warn / error), a one-line ``message``, and what it measured."""

    name: str
    status: Status
    message: str
    details: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "status": self.status, "message": self.message, "details": self.details}


@dataclass(frozen=True)
class Health:
    """Every check's result; ``status`` is the worst of them."""

    checks: tuple[Check, ...]

    @property
    def status(self) -> Status:
        worst: Status = "ok"
        for c in self.checks:
            if _RANK[c.status] > _RANK[worst]:
                worst = c.status
        return worst

    @property
    def ok(self) -> bool:
        """No check found an error (warnings allowed)."""
        return self.status != "error"

    def __getitem__(self, name: str) -> Check:
        for c in self.checks:
            if c.name == name:
                return c
        raise KeyError(name)

    def to_dict(self) -> dict[str, Any]:
        return {"status": self.status, "checks": [c.to_dict() for c in self.checks]}


CheckFn = Callable[["Memory"], Check]


def check_store(mem: Memory) -> Check:
    from reverie.inspection import redact_target

    mem.check_ready()
    info = mem.info()
    users = [u for u, _n in mem.users(limit=1001) if u is not None]
    count = info.details.get("memories")
    if not isinstance(count, int):
        count = sum(r.count for r in mem.layer_counts())
    shown_users = f"{len(users)}{'+' if len(users) > 1000 else ''}"
    where = redact_target(str(mem.target))
    message = f"{info.backend} at {where}, schema {info.schema_version}: {count} memories, {shown_users} users"
    details = {"backend": info.backend, "schema_version": info.schema_version, "memories": count, "users": len(users)}
    return Check("store", "ok", message, details)


def check_embedder(mem: Memory) -> Check:
    embedder = mem.embedder
    loaded = "embeds" if getattr(getattr(embedder, "inner", embedder), "loaded", True) else "loads and embeds"
    if mem._space_mismatch is not None:
        return Check("embedder", "error", mem._space_mismatch)
    start = time.perf_counter()
    vectors = np.asarray(embedder.embed([_PROBE_TEXT]), dtype=np.float32)
    seconds = time.perf_counter() - start
    details: dict[str, Any] = {"name": embedder.name, "dim": embedder.dim, "seconds": round(seconds, 3)}
    if vectors.shape != (1, embedder.dim):
        return Check("embedder", "error", f"{embedder.name} returned shape {vectors.shape}, not (1, {embedder.dim})")
    norm = float(np.linalg.norm(vectors[0]))
    if not math.isfinite(norm) or abs(norm - 1.0) > 1e-3:
        return Check("embedder", "error", f"{embedder.name} returned a vector of length {norm:.4g}, not a unit vector")
    drift = _fingerprint_drift(mem, details)
    if drift is not None:
        return Check("embedder", "warn", drift, details)
    message = f"{embedder.name} ({embedder.dim}-d) {loaded} a text ({seconds:.2f} s)"
    fp = details.get("fingerprint")
    if fp:  # a local model: where its vectors come from, and how far they are from the expected ones
        message += f" on {fp['runtime']}, {fp['kernel']}"
        if fp.get("drift_from_shipped") is not None:
            message += f"; reference vectors {fp['drift_from_shipped']:.0e} from the expected (1 - cosine)"
    return Check("embedder", "ok", message, details)


def _fingerprint_drift(mem: Memory, details: dict[str, Any]) -> str | None:
    """What is wrong with a local model's vectors on this machine, or None: its reference vectors against the
    ones shipped with reverie, and against the ones recorded in the store when its vectors were written (a
    store moved to a machine whose runtime or CPU kernels give other vectors is searched with a shift)."""
    from reverie.embed import fingerprint

    embedder = mem.embedder
    if not fingerprint.is_local(embedder):
        return None
    here = fingerprint.take(embedder)
    details["fingerprint"] = {"runtime": here.runtime, "kernel": here.kernel}
    shipped = fingerprint.check_expected(here)
    if shipped is not None:
        details["fingerprint"]["drift_from_shipped"] = shipped.drift
        if not shipped.ok:
            return (
                f"{embedder.name} gives other vectors on this machine ({here.runtime}, {here.kernel}) than reverie "
                f"expects: 1 - cosine up to {shipped.drift:.1e} (tolerance {shipped.tolerance:.0e}); thresholds "
                "calibrated on the expected vectors may decide otherwise here"
            )
    recorded = fingerprint.Fingerprint.from_state(mem.store.get_state(fingerprint.STATE_KEY) or {})
    if recorded is None or recorded.embedder != embedder.name:
        return None
    stored = fingerprint.check_recorded(here, recorded)
    if stored is None:
        return None
    details["fingerprint"]["drift_from_store"] = stored.drift if math.isfinite(stored.drift) else None
    return None if stored.ok else fingerprint.drift_message(here, recorded, stored)


def check_llm(mem: Memory) -> Check:
    llm = mem._get_llm()
    if llm is None:
        return Check("llm", "ok", "none configured: extraction, merging and summaries are decided by rules")
    breaker = getattr(llm, "breaker", None)
    label = str(getattr(breaker, "label", None) or f"model {llm.model!r}")
    start = time.perf_counter()
    answer = llm.chat_json(system='Answer with the JSON object {"ok": true}.', user="health check", op="health")
    seconds = time.perf_counter() - start
    details = {"model": llm.model, "seconds": round(seconds, 3)}
    if answer is None:
        error = getattr(breaker, "last_error", None) or "no valid answer"
        return Check(
            "llm",
            "error",
            f"{label} did not answer ({error}); writes and the dream cycle fall back to rules. "
            "Check llm.base_url, llm.model and the API key",
            {**details, "error": error},
        )
    return Check("llm", "ok", f"{label} answers ({seconds:.2f} s)", details)


def check_schedule(mem: Memory) -> Check:
    schedule = mem.settings.dream.schedule
    every = timedelta(hours=schedule.cycle_every_hours)
    last = mem.last_dream()
    tick = mem.last_tick()
    auto = f"the tick runs every {schedule.tick_every} writes" if schedule.tick_every > 0 else "no automatic tick"
    details: dict[str, Any] = {
        "last_dream": last.get("at") if last else None,
        "last_tick": tick.get("at") if tick else None,
        "cycle_every_hours": schedule.cycle_every_hours,
        "tick_every": schedule.tick_every,
    }
    how = "run `reverie dream --every 1d` (or Memory.maintain() from your loop, or `reverie serve` with server_jobs)"
    if last is None:
        if not mem.users(limit=1):
            return Check("schedule", "ok", f"nothing to maintain yet; {auto}", details)
        return Check("schedule", "warn", f"the dream cycle never ran on this store: {how}; {auto}", details)
    at = datetime.fromisoformat(str(last["at"]))
    age = mem.now() - at
    ago = _ago(age)
    if age > every * OVERDUE_CYCLES:
        return Check("schedule", "warn", f"the dream cycle last ran {ago} ago, overdue: {how}; {auto}", details)
    return Check("schedule", "ok", f"the dream cycle last ran {ago} ago (every {_ago(every)}); {auto}", details)


def check_mirror(mem: Memory) -> Check:
    from reverie.mirror.health import check_mirror as mirror_state

    found = mirror_state(mem)
    return Check("mirror", found["status"], found["message"], found["details"])


def _ago(delta: timedelta) -> str:
    seconds = max(0.0, delta.total_seconds())
    for unit, size in (("d", 86400.0), ("h", 3600.0), ("min", 60.0)):
        if seconds >= size:
            return f"{seconds / size:.3g} {unit}"
    return f"{seconds:.0f} s"


#: the checks of a health report, in order (name, function)
CHECKS: list[tuple[str, CheckFn]] = [
    ("store", check_store),
    ("embedder", check_embedder),
    ("llm", check_llm),
    ("schedule", check_schedule),
    ("mirror", check_mirror),
]


def run_checks(mem: Memory, names: Sequence[str] | None = None) -> Health:
    """Run the checks of :data:`CHECKS` (or only ``names``) on ``mem``; a check that raises is an error."""
    from reverie.errors import InvalidInputError

    known = [n for n, _ in CHECKS]
    if names is not None:
        unknown = [n for n in names if n not in known]
        if unknown:
            raise InvalidInputError(f"unknown health checks {unknown}; known: {', '.join(known)}")
    results = []
    for name, fn in CHECKS:
        if names is not None and name not in names:
            continue
        try:
            results.append(fn(mem))
        except Exception as exc:  # what a check cannot do is what it found
            results.append(Check(name, "error", f"{type(exc).__name__}: {exc}"))
    return Health(tuple(results))


__all__ = [
    "CHECKS",
    "Check",
    "Health",
    "check_embedder",
    "check_llm",
    "check_mirror",
    "check_schedule",
    "check_store",
    "run_checks",
]
