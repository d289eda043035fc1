"""The memory-action policy: a strict taxonomy of write actions with a bounded eligibility context.

Every write decision is one of seven actions (the lifecycle design's action-policy contracts):

=================== ==========================================================================
``store_episode``   a new memory of something that happened (an episode)
``store_note``      a new memory of a stable belief, decision or preference (a note)
``update_note``     an existing memory updated or confirmed by what arrived
``create_artifact`` the exact words a memory was extracted from kept beside it
``summarize_node``  memories compressed into a summary (consolidation, merge)
``discard``         nothing stored (a duplicate, a trivial or filtered message)
``link_graph``      relations between memories added
=================== ==========================================================================

Each comes with its **eligibility context**: ``confidence`` (0..1, how sure the extraction was),
``lifecycle_state`` (``active``, ``validated``, ``candidate``, ``stale``, ``archived``), ``importance``
(0..1) and ``source`` (``extraction``, ``consolidation``, ``replay``, ``manual``, ``unknown``).

Parsing is strict where a schema is validated (:func:`validate_action`, :func:`validate_eligibility`
raise :class:`~reverie.InvalidInputError` naming every problem) and fail-open in the runtime helpers
(:func:`parse_action` gives ``discard`` for anything invalid; :func:`parse_eligibility` gives the
default context ``confidence 0, candidate, importance 0, unknown``). Pure functions, no I/O.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from reverie.errors import InvalidInputError
from reverie.results import Action


class PolicyAction(StrEnum):
    STORE_EPISODE = "store_episode"
    STORE_NOTE = "store_note"
    UPDATE_NOTE = "update_note"
    CREATE_ARTIFACT = "create_artifact"
    SUMMARIZE_NODE = "summarize_node"
    DISCARD = "discard"
    LINK_GRAPH = "link_graph"


LIFECYCLE_STATES = ("active", "validated", "candidate", "stale", "archived")
SOURCES = ("extraction", "consolidation", "replay", "manual", "unknown")
_FIELDS = ("confidence", "lifecycle_state", "importance", "source")
#: how a memory's ``write_source`` reads as a policy source
_SOURCE_OF_WRITE = {
    "manual": "manual",
    "observer": "extraction",
    "dream": "consolidation",
    "import": "replay",
    "restore": "replay",
    "code_scan": "extraction",
}


@dataclass(frozen=True, slots=True)
class Eligibility:
    """The bounded context a write action is decided in."""

    confidence: float = 0.0
    lifecycle_state: str = "candidate"
    importance: float = 0.0
    source: str = "unknown"

    def to_dict(self) -> dict[str, Any]:
        return {
            "confidence": self.confidence,
            "lifecycle_state": self.lifecycle_state,
            "importance": self.importance,
            "source": self.source,
        }


DEFAULT_ELIGIBILITY = Eligibility()


def validate_action(value: Any) -> PolicyAction:
    """The action ``value`` names, exactly (strict: anything else is an :class:`InvalidInputError`)."""
    if isinstance(value, str):
        try:
            return PolicyAction(value)
        except ValueError:
            pass
    raise InvalidInputError(
        f"unknown memory action {value!r}; expected one of {', '.join(a.value for a in PolicyAction)}"
    )


def parse_action(value: Any) -> PolicyAction:
    """The action ``value`` names; ``discard`` for anything invalid (fail-open: nothing is stored)."""
    try:
        return validate_action(value)
    except InvalidInputError:
        return PolicyAction.DISCARD


def _unit(value: Any, name: str, problems: list[str]) -> float:
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or not math.isfinite(value)
        or not 0.0 <= value <= 1.0
    ):
        problems.append(f"{name} must be a number in [0, 1], got {value!r}")
        return 0.0
    return float(value)


def validate_eligibility(payload: Any) -> Eligibility:
    """An eligibility context from a mapping with exactly its four fields, each valid (strict: every
    problem is named in one :class:`InvalidInputError`)."""
    if not isinstance(payload, Mapping):
        raise InvalidInputError(f"an eligibility context must be an object, got {type(payload).__name__}")
    problems: list[str] = []
    extra = sorted(str(k) for k in payload if k not in _FIELDS)
    missing = [k for k in _FIELDS if k not in payload]
    if extra:
        problems.append(f"unknown field(s) {', '.join(extra)}")
    if missing:
        problems.append(f"missing field(s) {', '.join(missing)}")
    confidence = _unit(payload.get("confidence", 0.0), "confidence", problems)
    importance = _unit(payload.get("importance", 0.0), "importance", problems)
    state = payload.get("lifecycle_state", "candidate")
    if state not in LIFECYCLE_STATES:
        problems.append(f"lifecycle_state must be one of {', '.join(LIFECYCLE_STATES)}, got {state!r}")
    source = payload.get("source", "unknown")
    if source not in SOURCES:
        problems.append(f"source must be one of {', '.join(SOURCES)}, got {source!r}")
    if problems:
        raise InvalidInputError("invalid eligibility context: " + "; ".join(problems))
    return Eligibility(confidence, str(state), importance, str(source))


def parse_eligibility(payload: Any) -> Eligibility:
    """The eligibility context of ``payload``; the default context (confidence 0, candidate, importance
    0, unknown) when it is invalid in any way (fail-open)."""
    try:
        return validate_eligibility(payload)
    except InvalidInputError:
        return DEFAULT_ELIGIBILITY


def policy_source(write_source: str | None) -> str:
    """The policy source of a memory's ``write_source`` (``observer`` → ``extraction``, ``dream`` →
    ``consolidation``, ``import`` → ``replay``, ``manual``; anything else ``unknown``)."""
    return _SOURCE_OF_WRITE.get(write_source or "", "unknown")


def lifecycle_of(state: str | None) -> str:
    """A memory's lifecycle state as the policy names it (unknown values read as ``candidate``)."""
    return state if state in LIFECYCLE_STATES else "candidate"


def eligibility(
    *, confidence: float, lifecycle_state: str | None, importance: float, write_source: str | None
) -> Eligibility:
    """The eligibility context of a write, from the values the write path has (clamped, fail-open)."""
    return parse_eligibility(
        {
            "confidence": min(1.0, max(0.0, float(confidence))),
            "lifecycle_state": lifecycle_of(lifecycle_state),
            "importance": min(1.0, max(0.0, float(importance))),
            "source": policy_source(write_source),
        }
    )


def action_for(outcome: Action, kind: str | None) -> PolicyAction | None:
    """The policy action of a write gate decision: a new memory is ``store_note`` or ``store_episode`` by
    its memory kind, an update or confirmation of one is ``update_note``, a skip is ``discard``; a message
    still waiting in the buffer is no decision yet (``None``)."""
    if outcome in (Action.CREATE, Action.SUPERSEDE):
        return PolicyAction.STORE_NOTE if kind == "note" else PolicyAction.STORE_EPISODE
    if outcome in (Action.UPDATE, Action.REINFORCE):
        return PolicyAction.UPDATE_NOTE
    if outcome is Action.SKIP:
        return PolicyAction.DISCARD
    return None


def artifact_eligible(
    *,
    category: str,
    confidence: float,
    importance: float,
    stored: str,
    verbatim: str | None,
    categories: frozenset[str] | set[str] | list[str],
    min_confidence: float,
    min_importance: float,
) -> bool:
    """Whether a new memory keeps the exact words it came from: only when there are words other than the
    stored text (a rewording: a verbatim memory is its own artifact), and the memory is of an artifact
    category with enough confidence and importance."""
    if not verbatim or not verbatim.strip():
        return False
    if " ".join(verbatim.split()).casefold() == " ".join(stored.split()).casefold():
        return False
    return category in categories and confidence >= min_confidence and importance >= min_importance


__all__ = [
    "DEFAULT_ELIGIBILITY",
    "LIFECYCLE_STATES",
    "SOURCES",
    "Eligibility",
    "PolicyAction",
    "action_for",
    "artifact_eligible",
    "eligibility",
    "lifecycle_of",
    "parse_action",
    "parse_eligibility",
    "policy_source",
    "validate_action",
    "validate_eligibility",
]
