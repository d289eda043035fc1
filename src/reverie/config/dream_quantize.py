"""Settings: Embedding quantization of cold memories (seed 002)."""

from __future__ import annotations

from reverie.config.core import Section


class QuantizeSettings(Section):
    """Embedding quantization of cold memories (seed 002)."""
