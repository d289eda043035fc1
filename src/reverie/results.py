"""Result types of the public API.

No postponed annotations here: the report types are ``TypedDict``s whose optional keys (``NotRequired``) must be
known at runtime (``__optional_keys__``).
"""

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, NotRequired, TypedDict

from reverie.model import MemoryRecord


class Action(StrEnum):
    """What a write did (the prediction-error gate's vocabulary)."""

    CREATE = "CREATE"
    UPDATE = "UPDATE"
    SUPERSEDE = "SUPERSEDE"
    REINFORCE = "REINFORCE"
    SKIP = "SKIP"
    #: ``observe``: the turn waits in the conversation's buffer and is NOT stored yet (it is stored
    #: when the buffer fills, at ``end_session``, or now with ``flush``)
    BUFFERED = "BUFFERED"


@dataclass(frozen=True, slots=True)
class AddResult:
    """The outcome of one ``add``: the main memory id, the action, every affected id, and why."""

    id: str | None
    action: Action
    ids: tuple[str, ...] = ()
    reason: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "action": self.action.value, "ids": list(self.ids), "reason": self.reason}


#: what a person calls each retrieval channel
CHANNEL_WORDS = {"vector": "meaning", "text": "words", "graph": "a linked memory", "neighbour": "the match next to it"}


@dataclass(slots=True)
class Hit:
    """One search result: the memory, its final score, and how the score was made."""

    memory: MemoryRecord
    score: float
    explain: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"memory": self.memory.to_dict(), "score": self.score, "explain": self.explain}

    @property
    def why(self) -> str:
        """One line of why it was found, for a person: the channels that found it with their ranks
        (``found by meaning #1 and words #3``) and the stage when it was not the hybrid search. The whole
        account of the score is :attr:`explain`."""
        found = []
        for name, channel in self.explain.get("channels", {}).items():
            rank = channel.get("rank") if isinstance(channel, dict) else None
            word = CHANNEL_WORDS.get(name, name)
            found.append(f"{word} #{rank}" if rank else word)
        parts = ["found by " + " and ".join(found)] if found else []
        stage = self.explain.get("stage")
        if stage and stage != "hybrid":
            parts.append(f"stage {stage}")
        if "neighbour_of" in self.explain and stage != "neighbour":
            parts.append("raised by the match next to it")
        return " · ".join(parts) or "no explanation recorded"


class DreamStepReport(TypedDict):
    """What one dream step did: how many memories it changed and examined, its own counts, and its time."""

    name: str
    changed: int
    examined: int
    details: dict[str, Any]
    seconds: float


class ScheduledJob(TypedDict):
    """The maintenance job a scheduled run belonged to."""

    name: str
    every: str
    batch_size: int | None


class TickTrigger(TypedDict):
    """Why an automatic maintenance tick ran: the user's ingestion cycles since the last one."""

    ingestion_cycles: int
    every: int
    user_id: str | None


class DreamReport(TypedDict):
    """The report of a dream cycle or a maintenance tick (``Memory.dream``, ``Memory.tick``)."""

    #: ``"dream"``, ``"tick"`` or a scheduled job's kind
    kind: str
    #: the claim owner that ran it (one per process and run)
    owner: str
    #: the run's time, ISO 8601
    at: str
    steps: list[DreamStepReport]
    #: memories changed by all steps together
    changed: int
    seconds: float
    #: set on runs of the maintenance schedule
    job: NotRequired[ScheduledJob]
    #: set on the automatic tick that ingestion triggers
    trigger: NotRequired[TickTrigger]


class LayerStatusCount(TypedDict):
    """Memories of one layer in one status, with their energy."""

    layer: str
    status: str
    count: int
    energy_avg: float
    energy_min: float
    energy_max: float


class OpsLogCounts(TypedDict):
    """Lines the operations log wrote, dropped (queue full) and failed to write."""

    written: int
    dropped: int
    errors: int


class Stats(TypedDict):
    """``Memory.stats``: the store's health at a glance."""

    backend: str
    target: str
    embedder: str
    total: int
    rows: list[LayerStatusCount]
    by_layer: dict[str, int]
    by_status: dict[str, int]
    relations: int
    opslog: OpsLogCounts


class SessionEndReport(TypedDict):
    """``Memory.end_session``: what ending a session stored, promoted, sealed and cleared."""

    session_id: str
    #: the buffered turns stored now (each an :class:`AddResult` as a dict)
    flushed: list[dict[str, Any]]
    #: working memories promoted to long-term memory
    promoted: list[str]
    #: working memories that qualified for promotion when the session ended
    promotion_candidates: list[str]
    #: working memories cleared
    working_cleared: int
    #: the id of the memory box sealed, if one was open
    box_sealed: str | None
    #: query embeddings dropped from the session-scoped cache
    embedding_cache_cleared: NotRequired[int]


class UndoneConsolidation(TypedDict):
    """``Memory.undo_consolidation``: the summary undone and the originals restored."""

    summary_id: str
    #: what the summary was (a consolidation summary, a theme, a pattern …)
    kind: str
    #: originals back in the hot store as active memories
    restored: list[str]
    #: originals left as they were (changed or removed since)
    untouched: list[str]


__all__ = [
    "Action",
    "AddResult",
    "DreamReport",
    "DreamStepReport",
    "Hit",
    "LayerStatusCount",
    "OpsLogCounts",
    "ScheduledJob",
    "SessionEndReport",
    "Stats",
    "TickTrigger",
    "UndoneConsolidation",
]
