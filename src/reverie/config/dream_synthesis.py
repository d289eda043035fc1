"""Settings: synthesis steps — seed 001 category summaries, seed 002 peer/entity cards, cross-domain bridges and belief probing."""

from __future__ import annotations

from reverie.config.core import Section


class SynthesisSettings(Section):
    """Synthesis steps: seed 001 category summaries, seed 002 peer/entity cards, bridges and belief probing."""
