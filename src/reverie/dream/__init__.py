"""The dream cycle: an ordered list of named, switchable, idempotent steps over the memories.

:mod:`reverie.dream.context` holds the core types (the services a run is given, the context each step gets, the
step report, a batched write), :mod:`reverie.dream.run` runs the steps, :mod:`reverie.dream.registry` lists them
in cycle order and :mod:`reverie.dream.scope_pass` is the shared read-only pass. The steps themselves live in one
module per concern: upkeep, reinforce, forgetting, graph, drift, archival, consolidate, themes, category_notes,
bridges, belief_probe, quantize and documents (with group_notes, derived, summarize and neighbors as their
helpers, and schedule running them on intervals).
"""

from __future__ import annotations

from reverie.dream.context import (
    STEP_RUNS_KEY,
    Collector,
    DreamContext,
    DreamServices,
    DreamStep,
    Rejections,
    Step,
    StepReport,
    Write,
    cutoff,
    omit_except,
    step_runs_key,
)
from reverie.dream.run import run_dream

__all__ = [
    "STEP_RUNS_KEY",
    "Collector",
    "DreamContext",
    "DreamServices",
    "DreamStep",
    "Rejections",
    "Step",
    "StepReport",
    "Write",
    "cutoff",
    "omit_except",
    "run_dream",
    "step_runs_key",
]
