"""Settings of the memory dynamics (issue: dynamics). Every constant names its seed."""

from __future__ import annotations

from pydantic import Field

from reverie.config.core import Section


class EnergySettings(Section):
    """seed 000: three-tier energy model (SEED-NOTES 3: decay multiplies, computed lazily)."""

    initial: float = Field(1.0, ge=0, description="seed 000: energy of a new memory.")
    access_boost: float = Field(1.0, ge=0, description="seed 000: +1.0 energy per access.")
    decay_working: float = Field(0.5, ge=0, description="seed 000: λ per hour, working tier.")
    decay_episodic: float = Field(0.05, ge=0, description="seed 000: λ per hour, short-term (episodic) tier.")
    decay_semantic: float = Field(0.001, ge=0, description="seed 000: λ per hour, long-term (semantic) tier.")
    promote_working: float = Field(2.0, description="seed 000: working → episodic when energy > 2.0.")
    promote_episodic: float = Field(5.0, description="seed 000: episodic → semantic when energy > 5.0.")
    session_end_threshold: float = Field(1.5, description="seed 000: session-end promotion threshold.")
    working_expiry: float = Field(0.1, description="seed 000: working memories below this energy expire.")
    reinforce_factor: float = Field(0.5, ge=0, description="seed 000: retroactive strengthening +0.5·similarity.")


class DynamicsSettings(Section):
    """All decay, strength and scoring constants (seeds 000–004)."""

    energy: EnergySettings = Field(default_factory=EnergySettings)
