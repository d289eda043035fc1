"""Signal scan (local regex, no API call) and smart buffer.

HIGH signal (correction, decision, preference, an explicit "remember", a flashbulb-level arousal)
extracts now, together with whatever is buffered; otherwise the turn is buffered until the buffer
holds N turns or its oldest turn is T minutes old (time from the injected clock). The buffer
lives in the store's key/value state, so a restart loses nothing; ``end_session`` drains it.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Any

from reverie import lexicon
from reverie.config.write import BufferSettings
from reverie.dynamics._util import seconds_between
from reverie.store.base import Store
from reverie.write.observer import Observation

_REMEMBER = lexicon.pattern("buffer_remember")
_HIGH_KINDS = frozenset({"correction", "decision", "preference"})
FLASHBULB_AROUSAL = 0.8


class Signal(StrEnum):
    HIGH = "high"
    NORMAL = "normal"


def scan(text: str, observation: Observation) -> tuple[Signal, str]:
    """The signal level of a kept message and why."""
    if observation.classification.kind in _HIGH_KINDS:
        return Signal.HIGH, observation.classification.kind
    if _REMEMBER.search(text):
        return Signal.HIGH, "explicit remember"
    if observation.emotion.arousal >= FLASHBULB_AROUSAL:
        return Signal.HIGH, "high arousal"
    return Signal.NORMAL, "normal"


@dataclass(slots=True)
class Turn:
    """One buffered message, with everything needed to extract it later."""

    text: str
    role: str
    at: str  # ISO time of the message
    subject: str
    kind: str
    confidence: float
    metadata: dict[str, Any] = field(default_factory=dict)
    #: which path classified the turn (``llm`` or ``heuristic``) and the stages that fell back
    classified_by: str = "heuristic"
    fallbacks: list[str] = field(default_factory=list)
    #: the message's own words before the observer normalised them (a verbatim artifact keeps them)
    raw: str | None = None

    @property
    def when(self) -> datetime:
        return datetime.fromisoformat(self.at)


def buffer_key(user_id: str | None, agent_id: str | None, session_id: str | None) -> str:
    """The state key of one conversation's buffer."""
    return "write.buffer\x1f" + "\x1f".join(v or "" for v in (user_id, agent_id, session_id))


class SmartBuffer:
    """The lifecycle design's smart buffer over the store's key/value state."""

    def __init__(self, store: Store, cfg: BufferSettings) -> None:
        self.store = store
        self.cfg = cfg

    def turns(self, key: str) -> list[Turn]:
        raw = self.store.get_state(key) or []
        return [Turn(**item) for item in raw]

    def append(self, key: str, turn: Turn) -> list[Turn]:
        turns = [*self.turns(key), turn]
        self.store.set_state(key, [asdict(t) for t in turns])
        return turns

    def due(self, turns: list[Turn], now: datetime) -> str | None:
        """Why the buffer should be extracted now (N turns or T minutes), or ``None``."""
        if len(turns) >= self.cfg.max_turns:
            return f"buffer holds {len(turns)} turns"
        if turns and seconds_between(turns[0].when, now) / 60.0 >= self.cfg.max_minutes:
            return f"oldest turn is {self.cfg.max_minutes:g}+ minutes old"
        return None

    def drain(self, key: str) -> list[Turn]:
        turns = self.turns(key)
        if turns:
            self.store.set_state(key, [])
        return turns
