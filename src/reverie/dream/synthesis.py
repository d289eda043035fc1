"""Synthesis dream steps: seed 001 category summaries, seed 002 peer/entity cards, cross-domain
bridges and adversarial belief probing."""

from __future__ import annotations

from reverie.dream import Step

STEPS: list[tuple[str, Step]] = []
