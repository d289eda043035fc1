"""Embedding quantization of cold memories (seed 002): precision chosen by retention."""

from __future__ import annotations

from reverie.dream import Step

STEPS: list[tuple[str, Step]] = []
