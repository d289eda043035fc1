"""Observer: the 7-layer filter, pattern classification, trivial-message skip, information
density and standalone (third-person) rewriting, in English and Turkish.

Each function is pure and answers one question; :func:`observe_message` composes them into an
:class:`Observation` that says what to do with a message and why.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, field

from reverie import lexicon
from reverie.config.write import ObserverSettings
from reverie.text.words import content_words, words
from reverie.write.emotion import Emotion, detect_emotion
from reverie.write.entities import Entity, extract_entities

# -- the 7-layer filter -------------------------------------------------------------------------

_SYSTEM = re.compile(
    r"<\s*/?\s*(system|system-reminder|assistant_instructions|tool_result|function_results)\b|"
    r"^\s*\[?heartbeat\b|\bheartbeat_\w+|\[system\]|^\s*system\s*:",  # heartbeat pings, not "my heartbeat"
    re.IGNORECASE | re.MULTILINE,
)
_INJECTION = re.compile("|".join(lexicon.terms("observer_injection")), re.IGNORECASE)
_XML_BLOCK = re.compile(r"^\s*<([A-Za-z][\w:-]*)[^>]*>.*</\1>\s*$", re.DOTALL)
_MD_LINE = re.compile(r"^\s*(?:[-*+]\s|\d+[.)]\s|#{1,6}\s|>\s)|\*\*[^*]+\*\*")
_CODE_BLOCK = re.compile(r"```.*?(?:```|$)", re.DOTALL)


def is_emoji(ch: str) -> bool:
    """A pictographic character (emoji and symbols, not letters, digits or punctuation)."""
    code = ord(ch)
    return unicodedata.category(ch) == "So" or 0x1F000 <= code <= 0x1FAFF or 0x2600 <= code <= 0x27BF


def binary_share(text: str) -> float:
    """Share of characters that no text carries: controls (other than tab and line breaks), unassigned,
    private-use and surrogate code points — what decoded binary data looks like."""
    if not text:
        return 0.0
    odd = sum(unicodedata.category(ch) in ("Cc", "Cn", "Co", "Cs") and ch not in "\t\n\r" for ch in text)
    return odd / len(text)


def hostile_reason(text: str, cfg: ObserverSettings) -> str | None:
    """The hostile-input layers that guard every write path, ``add(infer=True)`` included: binary content
    (reverie), system content and prompt injection. ``None`` = not hostile."""
    stripped = text.strip()
    if binary_share(stripped) > cfg.binary_ratio:
        return "binary content"
    if _SYSTEM.search(stripped) is not None:
        return "system content"
    if _INJECTION.search(stripped) is not None:
        return "prompt injection"
    return None


def filter_reason(text: str, cfg: ObserverSettings) -> str | None:
    """The first of the Cognitive Memory design's seven filter layers that rejects ``text`` (``None`` = it passes), with
    reverie's binary-content guard beside system content."""
    stripped = text.strip()
    if not cfg.min_chars < len(stripped) < cfg.max_chars:
        return f"length {len(stripped)} outside ({cfg.min_chars}, {cfg.max_chars})"
    hostile = hostile_reason(stripped, cfg)
    if hostile is not None:
        return hostile
    checks: tuple[tuple[str, Callable[[], bool]], ...] = (
        ("xml block", lambda: _XML_BLOCK.match(stripped) is not None),
        ("markdown-heavy", lambda: _markdown_lines(stripped) >= cfg.markdown_lines),
        ("code-heavy", lambda: _code_ratio(stripped) > cfg.code_ratio),
        ("emoji-heavy", lambda: sum(map(is_emoji, stripped)) > cfg.max_emoji),
    )
    for name, failed in checks:
        if failed():
            return name
    return None


def _markdown_lines(text: str) -> int:
    return sum(bool(_MD_LINE.search(line)) for line in text.splitlines())


def _code_ratio(text: str) -> float:
    code = sum(len(m.group(0)) for m in _CODE_BLOCK.finditer(text))
    return code / len(text) if text else 0.0


# -- trivial messages (pre-retrieval gate patterns) ------------------------------------------------

_TRIVIAL = re.compile("^(" + "|".join(lexicon.terms("observer_trivial")) + r")[\s!.?]*$", re.IGNORECASE)


def is_trivial(text: str) -> bool:
    """Greetings, confirmations, slash commands and single-word acknowledgements (EN + TR)."""
    stripped = text.strip()
    return bool(_TRIVIAL.match(stripped)) or stripped.startswith("/") or len(words(stripped)) <= 1


# -- classification ------------------------------------------------------------------------------

PATTERNS: dict[str, re.Pattern[str]] = {
    "correction": lexicon.pattern("observer_correction"),
    "preference": lexicon.pattern("observer_preference"),
    "decision": lexicon.pattern("observer_decision"),
    "fact": lexicon.pattern("observer_fact"),
}


@dataclass(frozen=True, slots=True)
class Classification:
    """The observation type (correction, preference, decision, entity, fact or other) and its confidence."""

    kind: str
    confidence: float
    matches: dict[str, int] = field(default_factory=dict)


def classify(text: str, entities: list[Entity], cfg: ObserverSettings) -> Classification:
    """Pattern scoring: the matching type with the highest base confidence wins."""
    matches = {kind: len(p.findall(text)) for kind, p in PATTERNS.items()}
    if len(entities) >= 2:
        matches["entity"] = len(entities) - 1
    matches = {k: v for k, v in matches.items() if v > 0}
    if not matches:
        return Classification("other", cfg.default_confidence, {})
    kind = max(matches, key=lambda k: (cfg.base_confidence.get(k, 0.0), matches[k]))
    extra = sum(matches.values()) - 1
    confidence = min(1.0, cfg.base_confidence.get(kind, cfg.default_confidence) + cfg.match_bonus * extra)
    return Classification(kind, round(confidence, 4), matches)


# -- information density --------------------------------------------------------------------------

TEMPORAL = lexicon.pattern("observer_temporal")


_FACT_KINDS = ("preference", "decision", "fact")


def fact_count(text: str, classification: Classification) -> int:
    """'unique facts': one per two distinct informative words (rounded up), plus one per
    matched preference/decision/fact pattern."""
    informative = len(content_words(text))
    return -(-informative // 2) + sum(kind in classification.matches for kind in _FACT_KINDS)


def density(text: str, entities: list[Entity], classification: Classification) -> int:
    """``unique_entities + unique_facts + temporal_signals + correction_signals``."""
    temporal = len({m.group(0).casefold() for m in TEMPORAL.finditer(text)})
    corrections = classification.matches.get("correction", 0)
    return len(entities) + fact_count(text, classification) + temporal + corrections


# -- standalone rewriting --------------------------------------------------------------------------

_FILLER = re.compile(r"\b(" + "|".join(lexicon.terms("observer_filler")) + r")\b[,]?\s*", re.IGNORECASE)
#: adverbs that may stand between "I" and its verb ("I really enjoy" → "Maya really enjoys")
_ADVERBS = "(?:" + "|".join(lexicon.terms("observer_adverbs")) + ")"
_FIRST_PERSON: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"\bI am\b|\bI'm\b", re.IGNORECASE), "{s} is"),
    (re.compile(r"\bI was\b", re.IGNORECASE), "{s} was"),
    (re.compile(r"\bI have\b|\bI've\b", re.IGNORECASE), "{s} has"),
    (re.compile(r"\bI will\b|\bI'll\b", re.IGNORECASE), "{s} will"),
    (re.compile(r"\bI'd\b", re.IGNORECASE), "{s} would"),
    (re.compile(r"\bI do not\b|\bI don't\b", re.IGNORECASE), "{s} does not"),
    (re.compile(r"\bI((?:\s+" + _ADVERBS + r"\b)*)\s+(\w+(?:n['’]t)?)\b(?![\w'’])"), "{s}\\1 \\2{v}"),
    (re.compile(r"\bmy\b", re.IGNORECASE), "{s}'s"),
    (re.compile(r"\bmine\b", re.IGNORECASE), "{s}'s"),
    (re.compile(r"\bme\b", re.IGNORECASE), "{s}"),
    (re.compile(r"\bmyself\b", re.IGNORECASE), "{s}"),
)
_PAST_OR_MODAL = re.compile("(" + "|".join(lexicon.terms("observer_past_or_modal")) + ")$")
#: irregular past forms (a past verb keeps its form: "I took" → "Maya took", never "Maya tooks")
_IRREGULAR_PAST = lexicon.words("observer_irregular_past")
#: irregular present forms ("I actually have" → "Maya actually has")
_IRREGULAR_PRESENT = {"am": "is", "have": "has", "do": "does"}
#: forms that stay: "Sam's mate and I are" keeps its plural verb
_KEEP = lexicon.words("observer_keep_verbs")


def _third_person(match: re.Match[str], subject: str) -> str:
    adverbs, verb = match.group(1), match.group(2)
    lead = f"{subject}{adverbs} "
    folded = verb.casefold()
    if folded in _IRREGULAR_PRESENT:
        return f"{lead}{_IRREGULAR_PRESENT[folded]}"
    if _PAST_OR_MODAL.search(folded) or folded in _IRREGULAR_PAST or folded in _KEEP or folded.endswith(("n't", "n’t")):
        return f"{lead}{verb}"
    if folded.endswith(("s", "sh", "ch", "x", "o")):
        return f"{lead}{verb}es"
    if folded.endswith("y") and len(verb) > 2 and verb[-2].casefold() not in "aeiou":
        return f"{lead}{verb[:-1]}ies"
    return f"{lead}{verb}s"


def standalone(text: str, *, subject: str, max_chars: int) -> str:
    """First person → third person ("I prefer X" → "User prefers X"), fillers removed. A
    message that names neither its speaker nor itself in the first person ("We made pizza!") is
    attributed: ``"Maya: We made pizza!"`` — a memory says whose words it holds."""
    out = _FILLER.sub("", text).strip()
    for pattern, template in _FIRST_PERSON:
        if "{v}" in template:
            out = pattern.sub(lambda m: _third_person(m, subject), out)
        else:
            out = pattern.sub(template.format(s=subject), out)
    out = re.sub(r"\s{2,}", " ", out).strip()
    if subject.strip() and re.search(rf"(?<!\w){re.escape(subject.strip())}(?!\w)", out, re.IGNORECASE) is None:
        out = f"{subject.strip()}: {out}"
    return out[:max_chars].rstrip()


# -- the observer ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Observation:
    """What the observer made of one message."""

    text: str
    keep: bool
    reason: str
    classification: Classification
    entities: list[Entity]
    emotion: Emotion
    density: int

    @property
    def entity_uris(self) -> list[str]:
        return [e.uri for e in self.entities]


def observe_message(text: str, *, subject: str, cfg: ObserverSettings) -> Observation:
    """Filter, classify, measure and rewrite one message (``keep`` says whether to go on)."""
    rewritten = standalone(text, subject=subject, max_chars=cfg.max_rewrite_chars)
    entities = extract_entities(text, limit=cfg.max_entities)
    cls = classify(text, entities, cfg)
    emotion = detect_emotion(text)
    dens = density(text, entities, cls)
    reason = filter_reason(text, cfg)
    if reason is not None:
        return Observation(rewritten, False, f"filtered: {reason}", cls, entities, emotion, dens)
    if is_trivial(text):
        return Observation(rewritten, False, "trivial message", cls, entities, emotion, dens)
    if dens < cfg.min_density:
        return Observation(
            rewritten, False, f"low information density ({dens} < {cfg.min_density})", cls, entities, emotion, dens
        )
    return Observation(rewritten, True, f"{cls.kind} (density {dens})", cls, entities, emotion, dens)
