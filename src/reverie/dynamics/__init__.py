"""The math layer: pure functions of (record fields, ``now``, config).

No I/O, no clock reads, no globals (DESIGN.md "Dynamics"). Every constant comes from
:class:`reverie.config.dynamics.DynamicsSettings`, whose field descriptions name the seed.

Modules: :mod:`energy` (seed 000), :mod:`fsrs` and :mod:`strength` (seed 001 FSRS-6, dual strength),
:mod:`actr` (seed 001 ACT-R), :mod:`importance` and :mod:`surprise` (seeds 001, 002, 004),
:mod:`utility` (seed 001), :mod:`retention` (seeds 001, 002, 003), :mod:`lifecycle` (seed 004),
:mod:`working`, :mod:`tagging`, :mod:`emotion` (seed 001), :mod:`promotion` (seeds 000–003,
SEED-NOTES 6), :mod:`access` (per-access field updates) and :mod:`explain` (``explain_strength``).
"""

from __future__ import annotations

from reverie.dynamics.access import current_values, on_access, on_feedback
from reverie.dynamics.explain import explain_strength

__all__ = ["current_values", "explain_strength", "on_access", "on_feedback"]
