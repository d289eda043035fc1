"""Confidence-gated context injection within a token budget.

Sections, in priority order: the session's working memory, the hot tier (both always included),
then the retrieved memories gated by confidence — the cosine similarity of the memory to the
query, against per-embedder-profile thresholds (>= 0.7 full text with metadata,
0.4–0.7 abbreviated, < 0.4 skipped and logged; calibrated values for the local model).

A memory that a newer one replaced (the temporal intent, or two results where the newer updates the
older) is marked "superseded by a newer memory" in its line, right after the memory that replaced it,
so an agent never reads it as what is true now.

Token estimate: ``ceil(characters / 4)`` (``read.chars_per_token``), the usual rule of thumb for
English BPE tokenizers; no tokenizer is loaded. The budget is filled greedily: no single item may
take more than ``item_budget_share`` of it (a large memory is truncated with "…", never allowed to
push everything else out), an item that does not fit is shortened to what is left, and the walk
continues past an item that cannot fit at all, so later small items still get in.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from reverie.config.read import ReadSettings
from reverie.model import MemoryRecord

MIN_ITEM_TOKENS = 8
HEADERS = {
    "working": "## Working memory (this session)",
    "hot": "## Core memories",
    "retrieved": "## Relevant memories",
}


def estimate_tokens(text: str, *, chars_per_token: float = 4.0) -> int:
    """``ceil(len(text) / chars_per_token)``; 0 for empty text."""
    return math.ceil(len(text) / chars_per_token) if text else 0


@dataclass(slots=True)
class ContextItem:
    id: str
    section: str
    style: str  # "full" | "abbreviated"
    confidence: float | None
    text: str
    tokens: int
    truncated: bool = False
    superseded: bool = False


@dataclass(slots=True)
class ContextBlock:
    """What ``Memory.context`` returns: ``text`` goes into the prompt; the rest explains it."""

    text: str
    items: list[ContextItem] = field(default_factory=list)
    skipped: list[dict[str, Any]] = field(default_factory=list)
    budget_tokens: int = 0
    used_tokens: int = 0

    def __str__(self) -> str:
        return self.text


@dataclass(slots=True)
class Entry:
    """A memory offered for injection: section, and (for retrieved ones) its confidence."""

    record: MemoryRecord
    section: str
    confidence: float | None = None
    superseded: dict[str, Any] | None = None  # the hit's explain["superseded"]: replaced by a newer memory


def style_of(confidence: float | None, *, full: float, abbreviated: float) -> str | None:
    """Gating: 'full', 'abbreviated', or None (skip). Always-included entries have no confidence."""
    if confidence is None or confidence >= full:
        return "full"
    if confidence >= abbreviated:
        return "abbreviated"
    return None


SUPERSEDED = "superseded by a newer memory"


def render(
    rec: MemoryRecord, style: str, confidence: float | None, *, abbreviated_chars: int, superseded: bool = False
) -> str:
    mark = f" [{SUPERSEDED}]" if superseded else ""
    if style == "abbreviated":
        body = rec.content if len(rec.content) <= abbreviated_chars else rec.content[: abbreviated_chars - 1] + "…"
        return f"- {body}{mark}"
    when = (rec.valid_from or rec.created_at).date().isoformat()
    meta = [rec.category, rec.layer.value, when]
    if confidence is not None:
        meta.append(f"confidence {confidence:.2f}")
    if superseded:
        meta.append(SUPERSEDED)
    return f"- {rec.content} [{', '.join(meta)}]"


def _fit(line: str, tokens_left: int, cpt: float) -> str | None:
    """``line`` cut (with "…") to ``tokens_left`` tokens, or None when too little room is left."""
    if estimate_tokens(line, chars_per_token=cpt) <= tokens_left:
        return line
    if tokens_left < MIN_ITEM_TOKENS:
        return None
    return line[: int(tokens_left * cpt) - 1] + "…"


class _Budget:
    def __init__(self, total: int, cfg: ReadSettings) -> None:
        self.left = total
        self.cap = max(MIN_ITEM_TOKENS, int(total * cfg.item_budget_share))
        self.cpt = cfg.chars_per_token

    def take(self, line: str) -> tuple[str, int] | None:
        fitted = _fit(line, min(self.cap, self.left), self.cpt)
        if fitted is None:
            return None
        cost = estimate_tokens(fitted, chars_per_token=self.cpt)
        self.left -= cost
        return fitted, cost


def build(
    entries: Sequence[Entry], *, budget_tokens: int, cfg: ReadSettings, full: float, abbreviated: float
) -> ContextBlock:
    """Assemble the block (see module docs). Duplicate memories appear once, in their first section."""
    block = ContextBlock("", budget_tokens=budget_tokens)
    budget = _Budget(budget_tokens, cfg)
    lines: list[str] = []
    seen: set[str] = set()
    current: str | None = None
    for e in entries:
        if e.record.id in seen:
            continue
        seen.add(e.record.id)
        style = style_of(e.confidence, full=full, abbreviated=abbreviated)
        if style is None:
            block.skipped.append({"id": e.record.id, "reason": "low confidence", "confidence": e.confidence})
            continue
        line = render(
            e.record, style, e.confidence, abbreviated_chars=cfg.abbreviated_chars, superseded=e.superseded is not None
        )
        header = HEADERS[e.section] if e.section != current else None
        taken = _take_with_header(budget, header, line)
        if taken is None:
            block.skipped.append({"id": e.record.id, "reason": "budget", "confidence": e.confidence})
            continue
        if header is not None:
            lines.append(header)
            current = e.section
        lines.append(taken[0])
        block.items.append(
            ContextItem(
                e.record.id,
                e.section,
                style,
                e.confidence,
                taken[0],
                taken[1],
                truncated=taken[0] != line,
                superseded=e.superseded is not None,
            )
        )
    block.text = "\n".join(lines)
    block.used_tokens = budget_tokens - budget.left
    return block


def _take_with_header(budget: _Budget, header: str | None, line: str) -> tuple[str, int] | None:
    if header is None:
        return budget.take(line)
    head_cost = estimate_tokens(header, chars_per_token=budget.cpt)
    if budget.left - head_cost < MIN_ITEM_TOKENS:
        return None
    budget.left -= head_cost
    taken = budget.take(line)
    if taken is None:
        budget.left += head_cost
        return None
    return taken[0], taken[1] + head_cost


__all__ = ["ContextBlock", "ContextItem", "Entry", "build", "estimate_tokens", "render", "style_of"]
