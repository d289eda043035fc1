"""What the write path receives: one validated item of ``add`` / ``add_many``, or a conversation turn."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any


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
