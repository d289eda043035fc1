"""The math layer: pure functions of (record fields, ``now``, config).

No I/O, no clock reads, no globals. Every constant comes from
:class:`reverie.config.dynamics.DynamicsSettings`, whose fields name the idea they come from (``source``).

Modules: :mod:`energy`, :mod:`fsrs` and :mod:`strength` (FSRS-6, dual strength),
:mod:`actr` (ACT-R), :mod:`importance` and :mod:`surprise`,
:mod:`utility`, :mod:`retention`, :mod:`lifecycle`,
:mod:`working`, :mod:`tagging`, :mod:`emotion`, :mod:`promotion` (layer
transitions), :mod:`access` (per-access field updates) and :mod:`explain` (``explain_strength``).
"""

from __future__ import annotations

from reverie.dynamics.access import current_values, on_access, on_feedback
from reverie.dynamics.explain import explain_strength

__all__ = ["current_values", "explain_strength", "on_access", "on_feedback"]
