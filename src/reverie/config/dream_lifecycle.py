"""Settings: Lifecycle steps: emotional consolidation, synaptic replay, utility decay, rehearsal, foresight expiry, strategic forgetting, redundancy, clustering, drift, archival, cold migration, edge decay."""

from __future__ import annotations

from reverie.config.core import Section


class LifecycleStepSettings(Section):
    """Lifecycle steps: emotional consolidation, synaptic replay, utility decay, rehearsal, foresight expiry, strategic forgetting, redundancy, clustering, drift, archival, cold migration, edge decay."""
