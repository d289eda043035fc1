"""Lifecycle dream steps: emotional consolidation, synaptic replay, utility decay, rehearsal, foresight
expiry, redundancy, strategic forgetting, co-activation clustering, drift, archival, cold migration
and graph-edge confidence decay."""

from __future__ import annotations

from reverie.dream import Step

STEPS: list[tuple[str, Step]] = []
