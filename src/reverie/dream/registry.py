"""The ordered list of every dream step, and the collectors of the shared pass they declare.

A step module lists its steps as :class:`~reverie.dream.context.DreamStep` values (name, step, collectors);
this module puts them in the order a full cycle runs them (``dream.steps`` picks and orders the ones a run
uses).
"""

from __future__ import annotations

from functools import cache
from typing import Any

from reverie.dream.context import Collector, DreamStep


@cache
def registered_steps() -> tuple[DreamStep, ...]:
    """Every step, in cycle order (the step modules are imported on first use)."""
    from reverie.dream import (
        archival,
        belief_probe,
        bridges,
        category_notes,
        consolidate,
        documents,
        drift,
        forgetting,
        graph,
        quantize,
        reinforce,
        themes,
        upkeep,
    )

    return (
        *upkeep.STEPS,
        *reinforce.STEPS,
        *forgetting.STEPS,
        graph.CLUSTER_STEP,
        *drift.STEPS,
        *archival.STEPS,
        graph.EDGE_DECAY_STEP,
        *consolidate.STEPS,
        *themes.STEPS,
        *category_notes.STEPS,
        *bridges.STEPS,
        *belief_probe.STEPS,
        *quantize.STEPS,
        *documents.STEPS,
    )


def steps_by_name() -> dict[str, DreamStep]:
    """The registered steps by name, in cycle order."""
    return {s.name: s for s in registered_steps()}


def collectors() -> tuple[Collector[Any], ...]:
    """The collectors every registered step declares, each once, in step order: the shared pass runs them all."""
    seen: dict[str, Collector[Any]] = {}
    for step in registered_steps():
        for c in step.collects:
            seen.setdefault(c.name, c)
    return tuple(seen.values())


__all__ = ["collectors", "registered_steps", "steps_by_name"]
