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
        default="int8",
        description="Embedding compression: the lowest precision the quantize step stores. The layered-memory "
        "design's tiers go down to int2 (its archive tier; cosine fidelity 0.94 with reverie's codec on MiniLM), "
        "but consolidated memories are found again through their own vectors in the cold store. So the "
        "default stops at int8, still 4x smaller than float32. Measured with bench/locomo.py, default "
        "lifecycle, R@10: int2 0.678, int4 0.684, int8 0.688, against 0.685 with no lifecycle. With int2, "
        "temporal questions lost 2 points, and one more dream lowered recall. Set int4 or int2 to trade "
        "recall of old memories for space.",
    )
    protect_anchored: bool = Field(
        default=True,
        description="Pinned memories, truth anchors and flashbulb memories: pinned, immutable "
        "and flashbulb memories keep a float32 embedding even in the cold store.",
        json_schema_extra=source(EMOTION),
    )
