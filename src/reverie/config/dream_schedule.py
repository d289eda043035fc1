"""Settings: When maintenance runs by itself: tick() every N ingestion cycles (seed 003 / seed 004) and the dream schedule."""

from __future__ import annotations

from reverie.config.core import Section


class ScheduleSettings(Section):
    """When maintenance runs by itself: tick() every N ingestion cycles (seed 003 / seed 004) and the dream schedule."""
