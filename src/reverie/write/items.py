"""What the write path works on: one validated item of ``add`` / ``add_many`` (or a conversation turn), and
each fact formed from it, pending the write gate's decision."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from reverie.model import TemporalType, Vector
from reverie.write.emotion import Emotion


@dataclass(frozen=True, slots=True)
class PreparedItem:
    """One item after validation: its text, its scope, its metadata and when it was said.

    ``id`` is the caller's own id (``add_many(..., infer=False)`` only: an id already stored is skipped).
    ``source`` names who wrote it (the source trust table's keys: ``human``, ``ai``, ``interaction`` …)."""

    content: str
    user_id: str | None = None
    agent_id: str | None = None
    session_id: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    when: datetime | None = None
    source: str = "interaction"
    id: str | None = None


@dataclass(slots=True)
class PendingFact:
    """One formed fact pending the write gate, with everything the earlier stages decided about it."""

    text: str
    user_id: str | None
    agent_id: str | None
    session_id: str | None
    metadata: dict[str, Any]
    when: datetime | None
    source: str
    category: str
    confidence: float
    emotion: Emotion
    entities: list[str]
    temporal_type: TemporalType = TemporalType.PERSISTENT
    valid_until: datetime | None = None
    write_source: str = "formation"
    data_source: str = "user_message"
    path: str = "heuristic"
    #: Extraction confidence of the fact itself (the speaker's own words are explicit: 1.0)
    fact_confidence: float = 1.0
    vector: Vector | None = None
    decisions: dict[str, Any] = field(default_factory=dict)
    #: the exact words the fact was extracted from (a conversation turn), for a verbatim artifact
    verbatim: str | None = None
    #: the importance the write path gave it (0 until scored), for the action telemetry
    importance: float = 0.0


def fallbacks_of(cand: PendingFact) -> list[str]:
    """The stages of this fact whose LLM answer was missing or invalid (recorded with its decisions)."""
    found = cand.decisions.setdefault("fallbacks", [])
    assert isinstance(found, list)
    return found
