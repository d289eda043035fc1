"""Settings: Embedding quantization of cold memories (the layered-memory design).

The retention tiers themselves (R > 0.8 float32, > 0.5 int8, > 0.2 int4, else int2) are shared
constants of the dynamics (``dynamics.retention.precision_tiers``); this section holds what only
the ``quantize`` dream step uses.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from reverie.config.core import Section
from reverie.config.sources import EMOTION, LAYERED, source


class QuantizeSettings(Section):
    """Embedding quantization of cold memories."""

    SOURCE = LAYERED

    lowest_precision: Literal["int8", "int4", "int2"] = Field(
        default="int2",
        description="Embedding compression: the lowest precision the quantize step stores "
        "(the layered-memory design's archive tier is int2, cosine fidelity 0.94 with reverie's codec on "
        "MiniLM); raise it to int4 or int8 to keep deep recall of old memories closer to float32.",
    )
    protect_anchored: bool = Field(
        default=True,
        description="Pinned memories, truth anchors and flashbulb memories: pinned, immutable "
        "and flashbulb memories keep a float32 embedding even in the cold store.",
        json_schema_extra=source(EMOTION),
    )
