"""Settings: Consolidation and synthesis steps: seed 003 consolidation, seed 001 themes/abstraction/category summaries, seed 002 peer cards, bridges and belief probing."""

from __future__ import annotations

from reverie.config.core import Section


class ConsolidationSettings(Section):
    """Consolidation and synthesis steps: seed 003 consolidation, seed 001 themes/abstraction/category summaries, seed 002 peer cards, bridges and belief probing."""
