"""Memory boxes and trace weaving.

A memory joins the open box of its user and session; the box is sealed first when the topic
overlap drops below 0.35, when it has been inactive for 30 minutes, or when it already holds 50
memories. A sealed box joins the trace of the most overlapping recent sealed box (or starts one).
"""

from __future__ import annotations

from collections import Counter
from datetime import datetime

from reverie.config.write import BoxSettings
from reverie.dynamics._util import seconds_between
from reverie.model import new_id
from reverie.store.base import Box, Store
from reverie.text.words import content_words, overlap


def topic_words(text: str, *, entities: list[str], limit: int) -> list[str]:
    """The topic of a memory: its entity names and its longest informative words."""
    names = [e.rsplit("/", 1)[-1] for e in entities]
    words = sorted(content_words(text), key=lambda w: (-len(w), w))
    return list(dict.fromkeys([*names, *words]))[:limit]


def topic_overlap(a: list[str], b: list[str]) -> float:
    """Overlap of a memory's topic with a box's: the share of the smaller set found in the larger."""
    sa, sb = set(a), set(b)
    if not sa or not sb:
        return 0.0
    return max(overlap(sa, sb), len(sa & sb) / min(len(sa), len(sb)))


def seal_reason(box: Box, *, topic: list[str], now: datetime, cfg: BoxSettings) -> str | None:
    """Why ``box`` must be sealed before a memory with ``topic`` arriving at ``now`` joins it."""
    if box.memory_count >= cfg.max_memories:
        return f"holds {box.memory_count} memories"
    if seconds_between(box.last_at, now) / 60.0 > cfg.time_gap_minutes:
        return f"inactive > {cfg.time_gap_minutes:g} minutes"
    if box.topic and topic_overlap(topic, box.topic) < cfg.topic_shift:
        return f"topic shift (overlap < {cfg.topic_shift})"
    return None


def weave(box: Box, sealed: list[Box], cfg: BoxSettings) -> str:
    """The trace id of a newly sealed box: that of the most overlapping sealed box, or a new one."""
    best: tuple[float, Box] | None = None
    for other in sealed:
        if other.id == box.id:
            continue
        score = topic_overlap(box.topic, other.topic)
        if score >= cfg.trace_overlap and (best is None or score > best[0]):
            best = (score, other)
    if best is None:
        return box.id
    return best[1].trace_id or best[1].id


def _merge_topic(box_topic: list[str], topic: list[str], limit: int) -> list[str]:
    counts = Counter(box_topic)
    counts.update(topic)
    return [w for w, _ in counts.most_common(limit)]


class BoxBuilder:
    """Assigns memories to boxes through the store; returns the box id and any sealing note."""

    def __init__(self, store: Store, cfg: BoxSettings) -> None:
        self.store = store
        self.cfg = cfg

    def assign(
        self, *, user_id: str | None, session_id: str | None, topic: list[str], now: datetime
    ) -> tuple[str, str]:
        box = self.store.open_box(user_id, session_id)
        note = "joined open box"
        if box is not None:
            reason = seal_reason(box, topic=topic, now=now, cfg=self.cfg)
            if reason is not None:
                self.seal(box, now=now)
                note = f"sealed previous box: {reason}"
                box = None
        if box is None:
            box = Box(id=new_id(), user_id=user_id, session_id=session_id, opened_at=now, last_at=now)
            note = note if note != "joined open box" else "opened a box"
        box.topic = _merge_topic(box.topic, topic, self.cfg.max_topics)
        box.last_at = now
        box.memory_count += 1
        self.store.put_box(box)
        return box.id, note

    def seal(self, box: Box, *, now: datetime) -> Box:
        box.sealed_at = now
        box.trace_id = weave(box, self.store.sealed_boxes(box.user_id, limit=self.cfg.trace_lookback), self.cfg)
        self.store.put_box(box)
        return box

    def seal_open(self, *, user_id: str | None, session_id: str | None, now: datetime) -> Box | None:
        box = self.store.open_box(user_id, session_id)
        return self.seal(box, now=now) if box is not None else None
