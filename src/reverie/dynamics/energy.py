"""Energy: ``E(t) = E0·exp(-λ·h)``, +1.0 per access, retroactive strengthening.

Decay multiplies, λ per hour per layer, ``h`` in fractional hours, computed lazily
from the time of the last update — a stored energy is never decayed twice (no compounding).
"""

from __future__ import annotations

import math
from datetime import datetime
from typing import Any

from reverie.config.dynamics import EnergySettings
from reverie.dynamics._util import hours_between, layer_name


def decay_rate(*, layer: object, cfg: EnergySettings) -> float:
    """λ per hour of a layer (working 0.5, shortTerm/episodic 0.05, longTerm/semantic 0.001)."""
    name = layer_name(layer)
    rates = {
        "working": cfg.decay_working,
        "episodic": cfg.decay_episodic,
        "semantic": cfg.decay_semantic,
        "procedural": cfg.decay_procedural,
        "codebase": cfg.decay_codebase,
    }
    if name not in rates:
        raise ValueError(f"unknown layer {name!r}")
    return rates[name]


def decayed_energy(*, energy: float, hours: float, rate: float) -> float:
    """``E0·exp(-λ·h)`` (h < 0 counts as 0, so energy never rises with time)."""
    return energy * math.exp(-rate * max(0.0, hours))


def energy_at(*, energy: float, updated_at: datetime, now: datetime, layer: object, cfg: EnergySettings) -> float:
    """Energy now, from the value stored at ``updated_at`` (lazy, never compounding)."""
    return decayed_energy(energy=energy, hours=hours_between(updated_at, now), rate=decay_rate(layer=layer, cfg=cfg))


def energy_after_access(
    *, energy: float, updated_at: datetime, now: datetime, layer: object, cfg: EnergySettings
) -> float:
    """The energy model's "run on every memory access": decay to ``now``, then ``+ access_boost`` (1.0)."""
    return energy_at(energy=energy, updated_at=updated_at, now=now, layer=layer, cfg=cfg) + cfg.access_boost


def retroactive_boost(*, similarity: float, cfg: EnergySettings) -> float:
    """``0.5·similarity`` when similarity > 0.7 (exclusive), else 0."""
    if similarity > cfg.reinforce_similarity:
        return cfg.reinforce_factor * similarity
    return 0.0


def retroactive_update(
    *,
    energy: float,
    updated_at: datetime,
    now: datetime,
    layer: object,
    similarity: float,
    reinforcement_count: int,
    cfg: EnergySettings,
) -> dict[str, Any]:
    """Field updates for an older memory strengthened by a new similar one.

    Only episodic/semantic (and the durable layers) qualify; the result is empty when the memory
    does not qualify. The energy is decayed to ``now`` first (lazy form), then raised; the
    strengthening is counted and timestamped.
    """
    boost = retroactive_boost(similarity=similarity, cfg=cfg)
    if boost <= 0.0 or layer_name(layer) not in cfg.reinforce_layers:
        return {}
    current = energy_at(energy=energy, updated_at=updated_at, now=now, layer=layer, cfg=cfg)
    return {
        "energy": current + boost,
        "energy_updated_at": now,
        "reinforcement_count": reinforcement_count + 1,
        "last_reinforced_at": now,
    }


def hours_until(*, energy: float, threshold: float, layer: object, cfg: EnergySettings) -> float:
    """Hours until ``energy`` decays to ``threshold`` (0 if already at/below; ∞ if it never does)."""
    if energy <= threshold:
        return 0.0
    rate = decay_rate(layer=layer, cfg=cfg)
    if rate == 0.0 or threshold <= 0.0:
        return math.inf
    return math.log(energy / threshold) / rate


def is_working_expired(*, energy: float, cfg: EnergySettings) -> bool:
    """A working memory with energy < 0.1 expires."""
    return energy < cfg.working_expiry
