"""Settings: when maintenance runs by itself — tick() every N ingestion cycles (seeds 003/004), the dream schedule."""

from __future__ import annotations

from pydantic import Field, field_validator

from reverie.config.core import Section


class ScheduleSettings(Section):
    """When maintenance runs by itself: tick() every N ingestion cycles (seeds 003/004) and the dream schedule."""

    tick_every: int = Field(
        default=5,
        ge=0,
        le=1_000_000,
        description="seed 003: the maintenance tick() runs by itself every 5 ingestion cycles (seed 004 runs its "
        "consolidation pass every consolidateEveryN = 3 extractions). An ingestion cycle is one add()/add_many() "
        "call, or one observe() call that extracted (a buffered or filtered turn does not count). Counted per "
        "user partition in the store, so the count survives restarts and is shared by every process. 0 disables "
        "the automatic tick (Memory.tick() and `reverie tick` still work).",
    )
    tick_min_interval_s: float = Field(
        default=300.0,
        ge=0,
        description="The automatic tick runs at most once per this many seconds of clock time per user partition "
        "(0: on every tick_every-th cycle). Each tick step passes over the user's memories, so without this a bulk "
        "load of n memories would cost O(n²); with it the tick's cost per ingestion call is bounded. The interval is "
        "kept in the store (state 'schedule:last_tick:<user>'), shared by every process. Memory.tick() ignores it.",
    )
    tick_steps: list[str] = Field(
        default_factory=lambda: ["promote", "expire", "foresight", "consolidate", "cold_migration"],
        description="Ordered dream steps the cheap maintenance tick runs: seed 003's tick() = cold migration, TTL "
        "expiry and consolidation (seed 000's working-memory expiry and seed 001's foresight expiry are the TTL "
        "expiries here), in the dream cycle's order: seed 000's promotion before the working-memory expiry (without it "
        "every working memory older than ~4.6 h would expire before it could become episodic), consolidation before "
        "cold migration, which would otherwise "
        "move the fading memories seed 003 consolidates out of the hot store first. Names come from the dream "
        "step registry; an unknown name is refused with the list of known ones.",
    )
    tick_reports_kept: int = Field(
        default=20,
        ge=1,
        le=1_000,
        description="How many tick reports are kept (newest first, state key 'tick:reports'), apart from the "
        "dream reports so that frequent ticks do not push the dream reports out.",
    )
    min_every_s: float = Field(
        default=1.0,
        gt=0,
        description="Shortest interval `reverie dream --every` accepts, in seconds (guards against a typo such as "
        "'1ms' hammering the store).",
    )

    @field_validator("tick_steps")
    @classmethod
    def _distinct_names(cls, value: list[str]) -> list[str]:
        names = [v.strip() for v in value]
        if any(not n for n in names):
            raise ValueError("step names must be non-empty")
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise ValueError(f"steps listed twice: {dupes}")
        return names
