"""Settings: when maintenance runs by itself — tick() every N ingestion cycles, the dream schedule."""

from __future__ import annotations

from pydantic import Field, field_validator

from reverie.config.core import Section
from reverie.config.sources import CONSOLIDATION, LIFECYCLE, source


class JobSettings(Section):
    """One maintenance job: some dream steps, run on their own interval."""

    steps: list[str] = Field(
        min_length=1,
        description="The dream steps this job runs, in the dream cycle's order (names from the step registry).",
    )
    every_minutes: float = Field(gt=0, description="How often the job runs, in minutes of clock time.")
    batch_size: int | None = Field(
        default=None,
        ge=1,
        le=100_000,
        description="Memories claimed and written per transaction while this job runs (dream.batch_size when "
        "unset): small batches hold few memories at a time, so a frequent job never blocks other writers for long.",
    )

    @field_validator("steps")
    @classmethod
    def _names(cls, value: list[str]) -> list[str]:
        names = [v.strip() for v in value]
        if any(not n for n in names) or len(set(names)) != len(names):
            raise ValueError(f"job steps must be distinct, non-empty names, got {value}")
        return names


def _default_jobs() -> dict[str, JobSettings]:
    return {
        "promotion": JobSettings(steps=["promote"], every_minutes=10, batch_size=10),
        "decay": JobSettings(steps=["decay", "expire"], every_minutes=60, batch_size=100),
        "clustering": JobSettings(steps=["cluster"], every_minutes=60),
    }


#: the name of the full dream cycle in a schedule's reports
CYCLE_JOB = "cycle"


class ScheduleSettings(Section):
    """When maintenance runs by itself: tick() every N ingestion cycles and the dream schedule."""

    tick_every: int = Field(
        default=5,
        ge=0,
        le=1_000_000,
        description="The maintenance tick() runs by itself every 5 ingestion cycles (the lifecycle design "
        "runs its consolidation pass every 3 extractions). An ingestion cycle is one add()/add_many() "
        "call, or one observe() call that extracted (a buffered or filtered turn does not count). Counted per "
        "user partition in the store, so the count survives restarts and is shared by every process. 0 disables "
        "the automatic tick (Memory.tick() and `reverie tick` still work).",
        json_schema_extra=source(LIFECYCLE),
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
        description="Ordered dream steps the cheap maintenance tick runs: the consolidation design's tick() = cold "
        "migration, TTL expiry and consolidation (the working-memory expiry and the foresight expiry are the TTL "
        "expiries here), in the dream cycle's order: promotion by energy before the working-memory expiry (without it "
        "every working memory older than ~4.6 h would expire before it could become episodic), consolidation before "
        "cold migration, which would otherwise "
        "move the fading memories that consolidation groups out of the hot store first. Names come from the "
        "dream step registry; an unknown name is refused with the list of known ones.",
        json_schema_extra=source(CONSOLIDATION),
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

    jobs: dict[str, JobSettings] = Field(
        default_factory=_default_jobs,
        description="Maintenance jobs that a long-running scheduler (`reverie dream --every`, or `reverie serve` "
        "with server_jobs on) runs each on its own interval between full dream cycles: promotion every 10 minutes "
        "(10 memories per transaction), decay and working-memory expiry every 60 minutes (100 per transaction), "
        "co-activation clustering every 60 minutes. A job runs when its interval has passed since all of its steps "
        "last ran, by the job or by a full cycle (the time each step last ran is kept in the store, so restarts "
        "and other processes count). An empty table leaves only the full cycle. (From the three-tier energy "
        "design's ConsolidationConfig: promotionIntervalMinutes 10, clusteringIntervalMinutes 60, "
        "decayIntervalMinutes 60, promotionBatchSize 10, decayBatchSize 100.)",
    )
    server_jobs: bool = Field(
        default=False,
        description="`reverie serve` also runs the maintenance schedule in the background: the jobs above on "
        "their intervals and the full dream cycle every cycle_every_hours. Off by default: where several "
        "processes share one database, one `reverie dream --every` usually does this for all of them.",
    )
    cycle_every_hours: float = Field(
        default=24.0,
        gt=0,
        description="Hours between two full dream cycles in the schedule that `reverie serve` (server_jobs) and "
        "Memory.maintain() run; `reverie dream --every DURATION` sets it on its command line. Daily by default, "
        "as the dream cycle is meant to run.",
    )

    @field_validator("jobs")
    @classmethod
    def _job_names(cls, value: dict[str, JobSettings]) -> dict[str, JobSettings]:
        bad = [k for k in value if not k.strip() or k == CYCLE_JOB]
        if bad:
            raise ValueError(f"job names must be non-empty and not {CYCLE_JOB!r} (the full cycle), got {bad}")
        return value

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
