"""Consolidation and synthesis dream steps (seed 003 consolidation, seed 001 themes, abstraction and
category summaries, seed 002 peer cards, cross-domain bridges and belief probing)."""

from __future__ import annotations

from reverie.dream import Step

STEPS: list[tuple[str, Step]] = []
