"""The LLM-primary versions of the write stages (seed 001). Each returns ``None`` when the model is
unavailable or its answer does not validate, and the caller falls back to the heuristic path."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from reverie.model import RelationType, TemporalType
from reverie.write.formation import FormedFact

if TYPE_CHECKING:
    from reverie.llm.client import ChatJSON

CATEGORIES = ("preference", "fact", "decision", "correction", "plan", "entity")

_EXTRACT = (
    "You turn conversation turns into standalone, third-person memory facts. Resolve pronouns, split "
    "compound statements into atomic facts, rewrite relative dates as ISO dates using the message time, "
    "and mark plans/intentions as time_bounded with valid_until (ISO). Keep every fact a later question "
    "could ask about; drop greetings and filler. Answer JSON: {\"facts\": [{\"text\": str, \"category\": "
    "one of " + "|".join(CATEGORIES) + ", \"temporal_type\": \"persistent\"|\"time_bounded\", "
    "\"valid_until\": ISO or null, \"entities\": [str], \"confidence\": 0..1}]}"
)
_MERGE = (
    "Merge an existing memory with new information into one memory text. Preserve every fact, resolve "
    "contradictions in favour of the new information. Answer JSON: {\"text\": str}"
)
_CONTRADICT = (
    "Do these two statements contradict each other (cannot both be true now)? Answer JSON: "
    "{\"contradicts\": true|false}"
)
_RELATE = (
    "For the NEW memory and each numbered CANDIDATE, give the relation from NEW to it, if any: one of "
    "supersedes, contradicts, causes, elaborates, same_entity, related_to. Answer JSON: {\"relations\": "
    "[{\"index\": int, \"type\": str, \"confidence\": 0..1}]}"
)


def extract_facts(
    llm: ChatJSON, turns: Sequence[tuple[str, str, datetime]]
) -> list[tuple[FormedFact, str, float]] | None:
    """Facts (with category and confidence) from ``(speaker, text, time)`` turns, or ``None``."""
    lines = [f"[{when.isoformat()}] {speaker}: {text}" for speaker, text, when in turns]
    answer = llm.chat_json(system=_EXTRACT, user="\n".join(lines), op="formation")
    if answer is None or not isinstance(answer.get("facts"), list):
        return None
    out: list[tuple[FormedFact, str, float]] = []
    for item in answer["facts"]:
        parsed = _fact(item)
        if parsed is None:
            return None
        out.append(parsed)
    return out


def _fact(item: Any) -> tuple[FormedFact, str, float] | None:
    if not isinstance(item, dict) or not isinstance(item.get("text"), str) or not item["text"].strip():
        return None
    category = item.get("category") if item.get("category") in CATEGORIES else "fact"
    until = _datetime(item.get("valid_until"))
    temporal = TemporalType.TIME_BOUNDED if item.get("temporal_type") == "time_bounded" or until else (
        TemporalType.PERSISTENT
    )
    entities = [str(e) for e in item.get("entities", []) if isinstance(e, str)][:8]
    uris = [e if e.startswith("entity://") else f"entity://name/{e.casefold().replace(' ', '-')}" for e in entities]
    confidence = item.get("confidence")
    conf = float(confidence) if isinstance(confidence, int | float) and 0 <= confidence <= 1 else 0.5
    fact = FormedFact(item["text"].strip(), uris, temporal, until, foresight=until is not None)
    return fact, str(category), conf


def _datetime(value: Any) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        return None
    if parsed.tzinfo is None:
        from datetime import UTC

        parsed = parsed.replace(tzinfo=UTC)
    return parsed


def merge(llm: ChatJSON, old: str, new: str) -> str | None:
    answer = llm.chat_json(system=_MERGE, user=f"EXISTING: {old}\nNEW: {new}", op="synthesis")
    text = answer.get("text") if answer else None
    return text.strip() if isinstance(text, str) and text.strip() else None


def contradicts(llm: ChatJSON, old: str, new: str) -> bool | None:
    answer = llm.chat_json(system=_CONTRADICT, user=f"A: {old}\nB: {new}", op="contradiction")
    value = answer.get("contradicts") if answer else None
    return value if isinstance(value, bool) else None


def relations(llm: ChatJSON, new: str, candidates: Sequence[str]) -> list[tuple[int, RelationType, float]] | None:
    listing = "\n".join(f"{i}. {c}" for i, c in enumerate(candidates))
    answer = llm.chat_json(system=_RELATE, user=f"NEW: {new}\nCANDIDATES:\n{listing}", op="relations")
    if answer is None or not isinstance(answer.get("relations"), list):
        return None
    out: list[tuple[int, RelationType, float]] = []
    for item in answer["relations"]:
        try:
            index, rtype = int(item["index"]), RelationType(item["type"])
            conf = float(item.get("confidence", 0.5))
        except (KeyError, ValueError, TypeError):
            return None
        if 0 <= index < len(candidates) and rtype not in (RelationType.REINFORCES, RelationType.SUMMARIZES):
            out.append((index, rtype, min(1.0, max(0.0, conf))))
    return out
