"""``reverie simulate``: months of a synthetic agent's life on a settable clock, in seconds.

One user talks to an agent for ``days`` days. Every day brings a few sessions of messages of
varied importance, emotion and repetition — lasting facts about the user that come back now and
then (reinforcement), everyday activities that are alike and soon irrelevant (material for
consolidation and forgetting), plans with a date (foresight), rare emotional events (flashbulb
memories), corrections of earlier facts (supersession), small talk the observer filters out —
and the agent's searches, which are the accesses that promote memories. Every message goes
through ``Memory.observe`` (so the automatic tick runs as configured), every session ends with
``end_session``, and every night at ``dream_hour`` the full dream cycle runs.

After each night the count of memories per layer (active ones) and per status, and the number in
cold storage, are recorded. The result is a PNG plot of those counts over time, the timeline as
JSON, and a summary (JSON and printed) of what was promoted, consolidated and forgotten, taken
from the dream and tick reports and cross-checked against the store's history and relations.

Deterministic for a seed: the workload is drawn from ``random.Random(seed)`` and time comes only
from the settable clock. Memory ids are random UUIDs, so a step whose choices depend on id order
may differ in detail between runs; the workload itself never does.
"""

from __future__ import annotations

import json
import random
import time
from collections import Counter
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from reverie.clock import SettableClock
from reverie.errors import InvalidInputError, MissingDependencyError, install_extra
from reverie.model import Layer, MemoryRecord, RelationType, Status, StoreTier

if TYPE_CHECKING:
    from reverie.embed.base import Embedder
    from reverie.memory import Memory

PLOT_INSTALL_HINT = install_extra("plot")

# the synthetic user --------------------------------------------------------------------------

#: lasting facts: (statement variants, question). Variants repeat the fact in other words.
CORE_FACTS: list[tuple[list[str], str]] = [
    (
        [
            "Remember that I am allergic to peanuts.",
            "I'm allergic to peanuts, so no satay for me.",
            "Peanuts make me sick, I am allergic to them.",
        ],
        "What am I allergic to?",
    ),
    (
        [
            "My sister Ana lives in Lisbon with her two kids.",
            "Ana, my sister, still lives in Lisbon.",
            "I visited my sister Ana in Lisbon again.",
        ],
        "Where does my sister Ana live?",
    ),
    (
        [
            "I prefer green tea over coffee in the morning.",
            "Green tea is my morning drink, never coffee.",
            "I always start the day with green tea.",
        ],
        "What do I drink in the morning?",
    ),
    (
        [
            "I work as a data engineer on the Meridian project.",
            "The Meridian project keeps me busy as a data engineer.",
            "Still the data engineer for Meridian.",
        ],
        "What is my job?",
    ),
    (
        [
            "My dog Biscuit is a four year old beagle.",
            "Biscuit, my beagle, turned four.",
            "Took Biscuit the beagle to the vet for his checkup.",
        ],
        "What is my dog's name?",
    ),
    (
        [
            "I am learning Japanese on Tuesday evenings.",
            "Japanese class is every Tuesday evening.",
            "My Japanese lessons on Tuesdays are going well.",
        ],
        "What language am I learning?",
    ),
    (
        ["Important: my passport expires in November 2026.", "Note that my passport runs out in November 2026."],
        "When does my passport expire?",
    ),
    (
        [
            "I decided to run the Berlin marathon in September.",
            "Training for the Berlin marathon in September.",
            "The Berlin marathon in September is my big goal this year.",
        ],
        "Which marathon am I training for?",
    ),
    (
        ["My manager is Priya and we meet every Monday.", "Weekly one-on-one with Priya, my manager, on Monday."],
        "Who is my manager?",
    ),
    (
        ["I prefer window seats on long flights.", "Always book me a window seat on flights."],
        "Which seat do I like on planes?",
    ),
]

#: corrections: (day offset ratio, message, question): a fact that changes once
CORRECTIONS: list[tuple[float, str, str]] = [
    (0.35, "Actually, Ana moved from Lisbon to Porto last month.", "Where does my sister Ana live?"),
    (0.6, "Correction: I switched from green tea to matcha in the mornings.", "What do I drink in the morning?"),
    (0.8, "Update: I now work on the Atlas project instead of Meridian.", "What is my job?"),
]

#: everyday activities: (template, slot options) per category — alike within a category, seldom identical
ACTIVITIES: dict[str, tuple[str, dict[str, list[str]]]] = {
    "exercise": (
        "went {sport} {where}",
        {
            "sport": ["running", "swimming", "cycling", "climbing", "hiking", "rowing", "skating"],
            "where": [
                "along the river",
                "at Green Lake",
                "in Discovery Park",
                "on Tiger Mountain",
                "at the community pool",
                "downtown",
                "near the harbour",
                "on the coast trail",
            ],
        },
    ),
    "food": (
        "{how} {dish}",
        {
            "how": ["cooked", "ate", "baked", "ordered", "tried", "shared"],
            "dish": [
                "mushroom risotto",
                "ramen",
                "sourdough bread",
                "Ethiopian injera",
                "pork dumplings",
                "margherita pizza",
                "pad thai",
                "lentil soup",
                "tacos al pastor",
                "shakshuka",
            ],
        },
    ),
    "work": (
        "{task} {thing}",
        {
            "task": [
                "fixed a bug in",
                "reviewed a pull request for",
                "wrote tests for",
                "refactored",
                "deployed",
                "documented",
                "profiled",
            ],
            "thing": [
                "the ingestion pipeline",
                "the billing service",
                "the quarterly report",
                "the data migration",
                "the nightly batch job",
                "the search API",
                "the auth module",
                "the dashboard",
            ],
        },
    ),
    "errands": (
        "{errand} at {place}",
        {
            "errand": [
                "picked up a parcel",
                "bought groceries",
                "returned books",
                "got a haircut",
                "paid a bill",
                "dropped off laundry",
            ],
            "place": [
                "the post office",
                "the farmers market",
                "the library",
                "the mall",
                "the corner shop",
                "the bank",
            ],
        },
    ),
}

COMPANIONS: list[str] = [
    "",
    "",
    " with Omar",
    " with Ana",
    " with Biscuit",
    " with the team",
    " alone",
    " after work",
    " in the morning",
    " in the evening",
]

EMOTIONAL: list[str] = [
    "I'm so thrilled, I got promoted to lead engineer today!!",
    "I am heartbroken, my grandmother passed away this morning.",
    "I'm terrified, Biscuit got hit by a bike and is at the emergency vet NOW!",
    "Best day ever, Ana had a baby girl and I'm an aunt!!",
    "I'm furious, someone broke into my car and stole my laptop!",
]

PLANS: list[str] = [
    "I will call the dentist on {day} to book a cleaning.",
    "I'm going to visit Ana next {day}.",
    "I plan to finish the Meridian slides by {day}.",
    "I will pick up the new glasses on {day}.",
]

SMALL_TALK: list[str] = ["ok", "thanks!", "lol", "hmm", "sure", "cool, thanks", "👍", "yes"]

ASSISTANT: list[str] = [
    "Got it, I'll keep that in mind.",
    "Noted.",
    "Thanks for telling me.",
    "Understood — anything else?",
]

ACTIVITY_QUESTIONS: list[str] = [
    "What did I cook recently?",
    "What exercise did I do last week?",
    "What did I work on recently?",
    "What errands did I run?",
]

WEEKDAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]


@dataclass(frozen=True, slots=True)
class SimulationConfig:
    """The workload's shape. Defaults: half a year, ~2 sessions a day, a nightly dream at 03:00."""

    days: int = 180
    seed: int = 0
    start: datetime = datetime(2025, 1, 6, tzinfo=UTC)
    user_id: str = "sim-user"
    sessions_per_day: tuple[int, int] = (0, 3)
    messages_per_session: tuple[int, int] = (3, 8)
    searches_per_session: tuple[int, int] = (1, 3)
    dream_hour: int = 3

    def __post_init__(self) -> None:
        if isinstance(self.days, bool) or not isinstance(self.days, int) or not 1 <= self.days <= 3650:
            raise InvalidInputError("days must be an integer between 1 and 3650")
        for name in ("sessions_per_day", "messages_per_session", "searches_per_session"):
            lo, hi = getattr(self, name)
            if not 0 <= lo <= hi <= 1000:
                raise InvalidInputError(f"{name} must be a (low, high) range with 0 <= low <= high <= 1000")
        if not 0 <= self.dream_hour <= 23:
            raise InvalidInputError("dream_hour must be between 0 and 23")


@dataclass(slots=True)
class Turn:
    """One step of the workload: a message (``role`` user/assistant) or a search (``role`` search)."""

    at: datetime
    role: str
    text: str
    kind: str


@dataclass(slots=True)
class Session:
    id: str
    turns: list[Turn]


class Workload:
    """The synthetic agent workload, drawn day by day from ``random.Random(seed)``."""

    def __init__(self, cfg: SimulationConfig) -> None:
        self.cfg = cfg
        self.rng = random.Random(cfg.seed)
        self.corrections = {max(1, round(r * cfg.days)): (msg, q) for r, msg, q in CORRECTIONS if r * cfg.days >= 1}
        self.emotional = list(EMOTIONAL)
        self.rng.shuffle(self.emotional)
        self.told: list[str] = []  # questions about facts the user has told (searched later)

    def day(self, index: int) -> list[Session]:
        """The sessions of day ``index`` (0-based), in time order."""
        rng, cfg = self.rng, self.cfg
        midnight = cfg.start + timedelta(days=index)
        n_sessions = rng.randint(*cfg.sessions_per_day)
        starts = sorted(rng.sample(range(8 * 60, 22 * 60, 30), n_sessions))
        sessions = []
        for s, minute in enumerate(starts):
            at = midnight + timedelta(minutes=minute)
            turns = self._session(index, at, first=s == 0)
            sessions.append(Session(f"day{index:04d}-s{s}", turns))
        return sessions

    def _session(self, day: int, at: datetime, *, first: bool) -> list[Turn]:
        rng = self.rng
        turns: list[Turn] = []

        def say(text: str, kind: str, role: str = "user") -> None:
            nonlocal at
            at += timedelta(minutes=rng.randint(1, 4))
            turns.append(Turn(at, role, text, kind))

        for _ in range(rng.randint(*self.cfg.messages_per_session)):
            roll = rng.random()
            if roll < 0.30:
                cat = rng.choice(sorted(ACTIVITIES))
                when = f"{at:%B} {at.day}"
                template, slots = ACTIVITIES[cat]
                what = template.format(**{k: rng.choice(v) for k, v in sorted(slots.items())})
                say(f"On {when} I {what}{rng.choice(COMPANIONS)}.", f"activity:{cat}")
            elif roll < 0.50:
                variants, question = rng.choice(CORE_FACTS)
                say(rng.choice(variants), "core")
                self.told.append(question)
            elif roll < 0.62:
                say(rng.choice(PLANS).format(day=rng.choice(WEEKDAYS)), "plan")
            elif roll < 0.80:
                say(rng.choice(SMALL_TALK), "small_talk")
            else:
                say(rng.choice(ASSISTANT), "assistant", role="assistant")
        if first and day in self.corrections:
            msg, question = self.corrections[day]
            say(msg, "correction")
            self.told.append(question)
        if first and self.emotional and rng.random() < 0.06:
            say(self.emotional.pop(), "emotional")
        for _ in range(rng.randint(*self.cfg.searches_per_session)):
            pool = self.told if self.told and rng.random() < 0.75 else ACTIVITY_QUESTIONS
            say(rng.choice(pool), "search", role="search")
        return turns


# running it ----------------------------------------------------------------------------------


@dataclass(slots=True)
class Snapshot:
    """The store after one night: active memories per layer, all memories per status, cold count."""

    day: int
    at: str
    active_by_layer: dict[str, int]
    by_status: dict[str, int]
    cold: int
    total: int


@dataclass(slots=True)
class Tally:
    """What the workload did and what the dream cycles and ticks reported, per step."""

    sessions: int = 0
    messages: int = 0
    searches: int = 0
    dreams: int = 0
    ticks: int = 0
    actions: Counter[str] = field(default_factory=Counter)
    steps: dict[str, dict[str, Any]] = field(default_factory=dict)

    def add_report(self, report: Mapping[str, Any]) -> None:
        for step in report.get("steps", []):
            agg = self.steps.setdefault(
                step["name"], {"changed": 0, "examined": 0, "runs": 0, "seconds": 0.0, "details": {}}
            )
            agg["changed"] += int(step.get("changed", 0))
            agg["examined"] += int(step.get("examined", 0))
            agg["runs"] += 1
            agg["seconds"] = round(agg["seconds"] + float(step.get("seconds", 0.0)), 4)
            _add_numbers(agg["details"], step.get("details", {}))


def _add_numbers(into: dict[str, Any], details: Any) -> None:
    """Sum the numeric leaves of step details (nested dicts of counts) across runs."""
    if not isinstance(details, dict):
        return
    for key, value in details.items():
        if isinstance(value, bool):
            continue
        if isinstance(value, int | float):
            into[key] = into.get(key, 0) + value if isinstance(into.get(key, 0), int | float) else value
        elif isinstance(value, dict):
            sub = into.setdefault(key, {})
            if isinstance(sub, dict):
                _add_numbers(sub, value)


def _check_plotting() -> None:
    try:
        import matplotlib  # noqa: F401
    except ImportError as exc:
        raise MissingDependencyError(f"`reverie simulate` draws its plot with matplotlib: {PLOT_INSTALL_HINT}") from exc


def make_sim_embedder(kind: str) -> Embedder:
    """``hash`` (default: fast, deterministic, word overlap only) or ``local`` (all-MiniLM-L6-v2)."""
    if kind == "hash":
        from reverie.embed.testing import HashEmbedder

        return HashEmbedder(384)
    if kind == "local":
        from reverie.config import Settings
        from reverie.embed import make_provider

        return make_provider(Settings.load().embedding)
    raise InvalidInputError(f"embedder must be 'hash' or 'local', got {kind!r}")


def simulate(
    out: str | Path,
    *,
    cfg: SimulationConfig | None = None,
    target: str | Path | None = None,
    embedder: str = "hash",
    config: dict[str, Any] | None = None,
    progress: Any | None = None,
) -> dict[str, Any]:
    """Run the simulation; write ``simulation.png``, ``timeline.json`` and ``summary.json`` under ``out``.

    ``target`` is the store (default ``out/simulation.db``; it must be empty). ``config`` holds
    setting overrides (as for ``Memory(config=...)``). ``progress(day, days)`` is called each day.
    Returns the summary."""
    from reverie.memory import Memory

    _check_plotting()
    cfg = cfg or SimulationConfig()
    out_dir = Path(out)
    out_dir.mkdir(parents=True, exist_ok=True)
    db = target if target is not None else out_dir / "simulation.db"
    if isinstance(db, Path) and db.exists():
        raise InvalidInputError(
            f"{db} exists: a simulation starts from an empty store (delete it or use another --out)"
        )
    clock = SettableClock(cfg.start)
    settings = {"opslog": {"path": str(out_dir / "ops-log.jsonl")}, **(config or {})}
    started = time.perf_counter()
    with Memory(db, config=settings, clock=clock, embedder=make_sim_embedder(embedder)) as mem:
        if mem.count_all(user_id=cfg.user_id):
            raise InvalidInputError(f"the store at {db} already holds memories of {cfg.user_id!r}; use an empty one")
        tally, timeline = _run(mem, clock, cfg, progress)
        summary = _summarise(
            mem, cfg, tally, timeline, embedder=mem.embedder.name, seconds=time.perf_counter() - started, target=str(db)
        )
    _write_json([asdict(s) for s in timeline], out_dir / "timeline.json")
    plot(timeline, out_dir / "simulation.png", title=f"reverie simulate: {cfg.days} days, seed {cfg.seed}")
    summary["files"] = {
        "plot": str(out_dir / "simulation.png"),
        "timeline": str(out_dir / "timeline.json"),
        "summary": str(out_dir / "summary.json"),
        "store": str(db),
    }
    _write_json(summary, out_dir / "summary.json")
    return summary


def _write_json(data: Any, path: Path) -> None:
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(data, indent=2, ensure_ascii=False, default=str) + "\n", encoding="utf-8")
    tmp.replace(path)


def _run(
    mem: Memory, clock: SettableClock, cfg: SimulationConfig, progress: Any | None
) -> tuple[Tally, list[Snapshot]]:
    work = Workload(cfg)
    tally = Tally()
    timeline: list[Snapshot] = []
    last_tick = _tick_owner(mem)
    for day in range(cfg.days):
        for session in work.day(day):
            tally.sessions += 1
            for turn in session.turns:
                clock.set(turn.at)
                if turn.role == "search":
                    tally.searches += 1
                    mem.search(turn.text, user_id=cfg.user_id, session_id=session.id, k=5)
                    continue
                tally.messages += 1
                for res in mem.observe(turn.text, role=turn.role, user_id=cfg.user_id, session_id=session.id):
                    tally.actions[res.action.value] += 1
                last_tick = _collect_tick(mem, tally, last_tick)
            clock.advance(minutes=5)
            for stored in mem.end_session(session.id, user_id=cfg.user_id)["flushed"]:
                tally.actions[str(stored.get("action"))] += 1
            last_tick = _collect_tick(mem, tally, last_tick)
        clock.set(cfg.start + timedelta(days=day + 1, hours=cfg.dream_hour))
        tally.add_report(mem.dream())
        tally.dreams += 1
        timeline.append(_snapshot(mem, cfg, day + 1))
        if progress is not None:
            progress(day + 1, cfg.days)
    return tally, timeline


def _tick_owner(mem: Memory) -> str | None:
    last = mem.last_tick()
    return str(last.get("owner")) if last is not None else None


def _collect_tick(mem: Memory, tally: Tally, last_owner: str | None) -> str | None:
    """Count an automatic tick that ran during the last ingestion call (its report is ``tick:last``)."""
    if mem.settings.dream.schedule.tick_every <= 0:
        return last_owner
    last = mem.last_tick()
    if last is not None and last.get("owner") != last_owner:
        tally.ticks += 1
        tally.add_report(last)
        return str(last.get("owner"))
    return last_owner


def _snapshot(mem: Memory, cfg: SimulationConfig, day: int) -> Snapshot:
    stats = mem.stats(user_id=cfg.user_id)
    active = {layer.value: 0 for layer in Layer}
    status = {s.value: 0 for s in Status}
    for row in stats["rows"]:
        status[row["status"]] += row["count"]
        if row["status"] == Status.ACTIVE.value:
            active[row["layer"]] += row["count"]
    cold = mem.count_all(user_id=cfg.user_id, cold_only=True)
    return Snapshot(day, mem.now().isoformat(), active, status, cold, int(stats["total"]))


@dataclass
class _Census:
    """One pass over a user's memories and their histories: what the simulation's summary counts."""

    records: dict[str, MemoryRecord] = field(default_factory=dict)
    events: Counter[str] = field(default_factory=Counter)
    promoted: Counter[str] = field(default_factory=Counter)
    promoted_by: Counter[str] = field(default_factory=Counter)
    by_store: Counter[str] = field(default_factory=Counter)
    examples: dict[str, list[str]] = field(default_factory=lambda: {"semantic": [], "summaries": [], "forgotten": []})

    @classmethod
    def of(cls, mem: Memory, user_id: str | None, forgotten_statuses: set[Status]) -> _Census:
        out = cls()
        examples = out.examples
        for rec in mem.export(user_id=user_id):
            out.records[rec.id] = rec
            out.by_store[rec.store.value] += 1
            for ev in mem.history(rec.id):
                out.events[f"{ev.event}:{ev.actor}"] += 1
                if ev.event == "promoted" and isinstance(ev.data, dict) and "to" in ev.data:
                    out.promoted[f"{ev.data.get('from')}→{ev.data.get('to')}"] += 1
                    out.promoted_by[ev.actor] += 1
            if rec.status is Status.ACTIVE and rec.layer is Layer.SEMANTIC and len(examples["semantic"]) < 5:
                examples["semantic"].append(rec.content[:160])
            if (rec.status in forgotten_statuses or rec.store is StoreTier.COLD) and len(examples["forgotten"]) < 5:
                examples["forgotten"].append(f"[{rec.status.value}/{rec.store.value}] {rec.content[:140]}")
        return out


def _summarise(
    mem: Memory,
    cfg: SimulationConfig,
    tally: Tally,
    timeline: list[Snapshot],
    *,
    embedder: str,
    seconds: float,
    target: str,
) -> dict[str, Any]:
    """What was promoted, consolidated and forgotten — from the reports and from the store itself."""
    forgotten_statuses = {Status.DORMANT, Status.ARCHIVED, Status.EXPIRED, Status.INVALIDATED}
    census = _Census.of(mem, cfg.user_id, forgotten_statuses)
    records, examples, by_store = census.records, census.examples, census.by_store
    events, promoted, promoted_by = census.events, census.promoted, census.promoted_by
    # consolidation: originals superseded by a memory the dream cycle wrote
    into: dict[str, list[str]] = {}
    for rec in records.values():
        newer = records.get(rec.superseded_by or "")
        if newer is not None and newer.write_source == "dream":
            into.setdefault(newer.id, []).append(rec.id)
    for sid in sorted(into, key=lambda i: (-len(into[i]), i))[:5]:
        examples["summaries"].append(f"{records[sid].content[:200]} ({len(into[sid])} originals)")
    written = Counter(_dream_kind(r) for r in records.values() if r.write_source == "dream")
    links = mem.relations_in(user_id=cfg.user_id, types=frozenset({RelationType.SUMMARIZES}))
    ids = list(records)
    final = timeline[-1] if timeline else None
    superseded = final.by_status.get(Status.SUPERSEDED.value, 0) if final else 0
    return {
        "days": cfg.days,
        "seed": cfg.seed,
        "start": cfg.start.isoformat(),
        "end": mem.now().isoformat(),
        "embedder": embedder,
        "store": target,
        "seconds": round(seconds, 2),
        "workload": {
            "sessions": tally.sessions,
            "messages": tally.messages,
            "searches": tally.searches,
            "dreams": tally.dreams,
            "ticks": tally.ticks,
            "write_actions": dict(sorted(tally.actions.items())),
        },
        "promoted": dict(sorted(promoted.items())),
        "promoted_by": dict(sorted(promoted_by.items())),
        "consolidated": {
            "summaries": len(into),
            "originals": sum(len(v) for v in into.values()),
            "superseded": superseded,
        },
        "dream_written": dict(sorted(written.items())),
        "summarizes_links": {
            "summaries": len({r.src_id for r in links}),
            "members": len({r.dst_id for r in links}),
            "links": len(links),
        },
        "forgotten": {
            **{s.value: (final.by_status.get(s.value, 0) if final else 0) for s in sorted(forgotten_statuses)},
            "cold": by_store.get(StoreTier.COLD.value, 0),
        },
        "final": {
            "total": len(ids),
            "active_by_layer": final.active_by_layer if final else {},
            "by_status": final.by_status if final else {},
            "by_store": dict(sorted(by_store.items())),
        },
        "steps": tally.steps,
        "history_events": dict(sorted(events.items())),
        "examples": examples,
    }


def _dream_kind(rec: MemoryRecord) -> str:
    """What a dream-written memory is: the ``kind`` a step recorded in its metadata (summary, theme,
    pattern, entity card …), else its category."""
    for value in rec.metadata.values():
        if isinstance(value, dict) and isinstance(value.get("kind"), str):
            return str(value["kind"])
    synthesis = rec.metadata.get("synthesis")
    return synthesis if isinstance(synthesis, str) else rec.category


# the plot ------------------------------------------------------------------------------------

_LAYER_COLOURS = {
    "working": "#f4a261",
    "episodic": "#2a9d8f",
    "semantic": "#264653",
    "procedural": "#8ab17d",
    "codebase": "#b5838d",
}
_STATUS_COLOURS = {
    "active": "#2a9d8f",
    "superseded": "#e9c46a",
    "dormant": "#a8dadc",
    "archived": "#6d6875",
    "expired": "#e76f51",
    "invalidated": "#9d0208",
}


def plot(timeline: list[Snapshot], path: Path, *, title: str) -> Path:
    """Stacked counts over time: active memories per layer (top), all memories per status with the
    cold-store count as a line (bottom). Drawn with matplotlib's Agg backend (no display needed)."""
    _check_plotting()
    import matplotlib

    matplotlib.use("Agg", force=True)
    from matplotlib.figure import Figure

    days = [s.day for s in timeline]
    fig = Figure(figsize=(10, 7), dpi=100, layout="constrained")
    top, bottom = fig.subplots(2, 1, sharex=True)
    layers = [k for k in _LAYER_COLOURS if any(s.active_by_layer.get(k, 0) for s in timeline)] or ["episodic"]
    top.stackplot(
        days,
        [[s.active_by_layer.get(k, 0) for s in timeline] for k in layers],
        labels=layers,
        colors=[_LAYER_COLOURS[k] for k in layers],
        alpha=0.9,
    )
    top.set_ylabel("active memories")
    top.set_title("active memories per layer")
    top.legend(loc="upper left", fontsize="small")
    statuses = [k for k in _STATUS_COLOURS if any(s.by_status.get(k, 0) for s in timeline)] or ["active"]
    bottom.stackplot(
        days,
        [[s.by_status.get(k, 0) for s in timeline] for k in statuses],
        labels=statuses,
        colors=[_STATUS_COLOURS[k] for k in statuses],
        alpha=0.9,
    )
    bottom.plot(days, [s.cold for s in timeline], color="black", linestyle="--", linewidth=1.5, label="in cold store")
    bottom.set_ylabel("memories")
    bottom.set_xlabel("day")
    bottom.set_title("all memories per status")
    bottom.legend(loc="upper left", fontsize="small")
    fig.suptitle(title)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, format="png")
    return path


def summary_lines(summary: dict[str, Any]) -> list[str]:
    """The summary as a few lines of text (the CLI prints these)."""
    w, final = summary["workload"], summary["final"]
    lines = [
        f"{summary['days']} days simulated in {summary['seconds']:.1f} s ({summary['embedder']}): "
        f"{w['sessions']} sessions, {w['messages']} messages, {w['searches']} searches, "
        f"{w['dreams']} dream cycles, {w['ticks']} ticks",
        f"write path: {json.dumps(w['write_actions'])}",
        f"promoted: {json.dumps(summary['promoted'], ensure_ascii=False)}",
        f"consolidated: {summary['consolidated']['originals']} originals into "
        f"{summary['consolidated']['summaries']} summaries ({summary['consolidated']['superseded']} superseded in all)",
        f"written by the dream cycle: {json.dumps(summary['dream_written'])}",
        f"forgotten: {json.dumps(summary['forgotten'])}",
        f"final: {final['total']} memories; active per layer {json.dumps(final['active_by_layer'])}; "
        f"per status {json.dumps(final['by_status'])}",
        "per step (changed over all runs): "
        + ", ".join(f"{name} {agg['changed']}" for name, agg in summary["steps"].items()),
    ]
    return lines


__all__ = ["PLOT_INSTALL_HINT", "SimulationConfig", "Workload", "plot", "simulate", "summary_lines"]
