"""Result types of the public API."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

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


@dataclass(slots=True)
class Hit:
    """One search result: the memory, its final score, and how the score was made."""

    memory: MemoryRecord
    score: float
    explain: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"memory": self.memory.to_dict(), "score": self.score, "explain": self.explain}


__all__ = ["Action", "AddResult", "Hit"]
