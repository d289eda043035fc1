"""The LLM-primary versions of the write stages. Each returns ``None`` when the model is
unavailable or its answer does not validate, and the caller falls back to the heuristic path.

Prompts are bounded: every text is clipped to ``limit`` characters before it is sent. Answers of
the observer, emotion and topic stages are validated strictly: a missing key, a wrong type (a
boolean is not a number), an out-of-range number or an unknown label rejects the whole answer.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from reverie.model import RelationType, TemporalType
from reverie.text.llm_update import INPUT_CHARS, clip
from reverie.text.words import slug
from reverie.write.emotion import EKMAN, Emotion
from reverie.write.entities import extract_entities
from reverie.write.formation import FormedFact

if TYPE_CHECKING:
    from reverie.llm.client import ChatJSON

CATEGORIES = (
    "preference",
    "fact",
    "decision",
    "correction",
    "plan",
    "entity",
    "relationship",
    "principle",
    "commitment",
    "moment",
    "skill",
)
#: Observer types (entity = entity-rich) plus "other" (no pattern)
KINDS = ("correction", "preference", "decision", "entity", "fact", "other")
_EXTRACT = (
    "You turn conversation turns into standalone, third-person memory facts. Resolve pronouns, split "
    "compound statements into atomic facts, rewrite relative dates as ISO dates using the message time, "
    "and mark plans/intentions as time_bounded with valid_until (ISO). Keep every fact a later question "
    'could ask about; drop greetings and filler. Answer JSON: {"facts": [{"text": str, "category": '
    "one of " + "|".join(CATEGORIES) + " (relationship: how people relate; principle: a standing rule or belief; "
    "commitment: a promise or obligation someone took on; moment: a notable experience; skill: something someone "
    'can do), "temporal_type": "persistent"|"time_bounded", '
    '"valid_until": ISO or null, "entities": [str], "confidence": 0..1}]}'
)
_MERGE = (
    "Merge an existing memory with new information into one memory text. Preserve every fact, resolve "
    'contradictions in favour of the new information. Answer JSON: {"text": str}'
)
_CLASSIFY = (
    "Classify one conversation message for a long-term memory. kind: correction (it fixes something said "
    "before), preference (likes, dislikes, prefers), decision (decided, chose, going with), entity (mostly about "
    "named tools, organisations or people), fact (a stable fact about someone or something), other (none of "
    "these). confidence: how sure you are, 0..1. The message may be in any language (English, Turkish, ...). "
    'Answer JSON: {"kind": one of ' + "|".join(KINDS) + ', "confidence": number 0..1}'
)
_EMOTION = (
    "Rate the emotion expressed in the text. valence: -1 (very negative) .. 1 (very positive), 0 neutral. "
    "arousal: 0 (calm) .. 1 (urgent, alarmed, furious, ecstatic). label: the Ekman basic emotion ("
    + ", ".join(EKMAN)
    + ") or null when none. The text may be in any language. Answer JSON: "
    '{"valence": number, "arousal": number, "label": str or null}'
)
_TOPICS = (
    "Give the topic keywords of a memory, used to group memories about the same topic: 1 to {n} single "
    "lower-case words (names, places, things, activities; in the language of the text), most specific first, "
    'no stop words. Answer JSON: {{"topics": [str]}}'
)
_RELATE = (
    "For the NEW memory and each numbered CANDIDATE, give the relation from NEW to it, if any: one of "
    'supersedes, contradicts, causes, elaborates, same_entity, related_to. Answer JSON: {"relations": '
    '[{"index": int, "type": str, "confidence": 0..1}]}'
)


def _number(value: Any, low: float, high: float) -> float | None:
    """``value`` as a float when it is a finite JSON number within [low, high] (not a boolean)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    number = float(value)
    return number if math.isfinite(number) and low <= number <= high else None


def classify_message(llm: ChatJSON, text: str, *, limit: int = INPUT_CHARS) -> tuple[str, float] | None:
    """Observer classification by the LLM: ``(kind, confidence)``, or ``None``."""
    answer = llm.chat_json(system=_CLASSIFY, user=clip(text, limit), op="classification")
    if answer is None:
        return None
    kind, confidence = answer.get("kind"), _number(answer.get("confidence"), 0.0, 1.0)
    if not isinstance(kind, str) or kind not in KINDS or confidence is None:
        return None
    return kind, round(confidence, 4)


def detect_emotion(llm: ChatJSON, text: str, *, limit: int = INPUT_CHARS) -> Emotion | None:
    """Emotion by the LLM: valence in [-1, 1], arousal in [0, 1], an Ekman label or null."""
    answer = llm.chat_json(system=_EMOTION, user=clip(text, limit), op="emotion")
    if answer is None or "label" not in answer:
        return None
    valence, arousal = _number(answer.get("valence"), -1.0, 1.0), _number(answer.get("arousal"), 0.0, 1.0)
    label = answer["label"]
    if valence is None or arousal is None or not (label is None or (isinstance(label, str) and label in EKMAN)):
        return None
    return Emotion(round(valence, 4), round(arousal, 4), label)


_TOPIC_WORD = re.compile(r"^[^\W_][\w'’.+#-]{0,39}$")


def box_topics(llm: ChatJSON, text: str, *, max_topics: int, limit: int = INPUT_CHARS) -> list[str] | None:
    """Box topic by the LLM: 1..``max_topics`` distinct single lower-case words, or ``None``."""
    answer = llm.chat_json(system=_TOPICS.format(n=max_topics), user=clip(text, limit), op="topics")
    topics = answer.get("topics") if answer else None
    if not isinstance(topics, list) or not 1 <= len(topics) <= max_topics:
        return None
    out: list[str] = []
    for item in topics:
        if not isinstance(item, str) or not _TOPIC_WORD.match(item.strip()):
            return None
        out.append(item.strip().casefold())
    return list(dict.fromkeys(out))


def extract_facts(
    llm: ChatJSON, turns: Sequence[tuple[str, str, datetime]], *, limit: int = INPUT_CHARS
) -> list[tuple[FormedFact, str, float]] | None:
    """Facts (with category and confidence) from ``(speaker, text, time)`` turns, or ``None``."""
    lines = [f"[{when.isoformat()}] {speaker}: {clip(text, limit)}" for speaker, text, when in turns]
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
    temporal = (
        TemporalType.TIME_BOUNDED if item.get("temporal_type") == "time_bounded" or until else (TemporalType.PERSISTENT)
    )
    entities = [str(e) for e in item.get("entities", []) if isinstance(e, str)][:8]
    # the heuristic path's URIs (entity://kind/slug), so that both paths name an entity alike
    uris = list(dict.fromkeys(e if e.startswith("entity://") else _entity_uri(e) for e in entities if e.strip()))
    confidence = item.get("confidence")
    conf = float(confidence) if isinstance(confidence, int | float) and 0 <= confidence <= 1 else 0.5
    fact = FormedFact(item["text"].strip(), uris, temporal, until, foresight=until is not None)
    return fact, str(category), conf


def _entity_uri(name: str) -> str:
    """``entity://tech|org|name/slug`` as the regex extractor would name ``name``."""
    found = extract_entities(name.strip(), limit=1)
    if found and found[0].text.casefold() == name.strip().casefold():
        return found[0].uri
    return f"entity://name/{slug(name.strip())}"


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


def merge(llm: ChatJSON, old: str, new: str, *, limit: int = INPUT_CHARS) -> str | None:
    """The write-time merge by the LLM: one text holding both, or ``None``."""
    answer = llm.chat_json(system=_MERGE, user=f"EXISTING: {clip(old, limit)}\nNEW: {clip(new, limit)}", op="merge")
    text = answer.get("text") if answer else None
    return text.strip() if isinstance(text, str) and text.strip() else None


def relations(
    llm: ChatJSON, new: str, candidates: Sequence[str], *, limit: int = INPUT_CHARS
) -> list[tuple[int, RelationType, float]] | None:
    """Relations by the LLM: ``(candidate index, type, confidence)``, or ``None``."""
    each = max(200, limit // max(1, len(candidates)))
    listing = "\n".join(f"{i}. {clip(c, each)}" for i, c in enumerate(candidates))
    answer = llm.chat_json(system=_RELATE, user=f"NEW: {clip(new, limit)}\nCANDIDATES:\n{listing}", op="relations")
    if answer is None or not isinstance(answer.get("relations"), list):
        return None
    out: list[tuple[int, RelationType, float]] = []
    for item in answer["relations"]:
        if not isinstance(item, dict):
            return None
        index, conf = item.get("index"), _number(item.get("confidence", 0.5), 0.0, 1.0)
        try:
            rtype = RelationType(str(item.get("type")))
        except ValueError:
            return None
        if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < len(candidates) or conf is None:
            return None
        if rtype not in (RelationType.REINFORCES, RelationType.SUMMARIZES):
            out.append((index, rtype, conf))
    return out
