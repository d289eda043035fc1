"""Working memory: per session, at most 9 items, evicted by ``importance·recency·(1+0.1·n)``.

The math is :mod:`reverie.dynamics.working`; this module keeps the per-session entries in the
store (so several processes share them) and answers which entries are promotion candidates.
"""

from __future__ import annotations

from datetime import datetime

from reverie.config.dynamics import WorkingMemorySettings
from reverie.dynamics.working import eviction_score, evictions, is_promotion_candidate
from reverie.store.base import Store, WorkingItem


def session_key(user_id: str | None, session_id: str) -> str:
    """Sessions are per user (no leaks across agents)."""
    return f"{user_id or ''}\x1f{session_id}"


def scores(items: list[WorkingItem], *, now: datetime, cfg: WorkingMemorySettings) -> dict[str, float]:
    return {
        i.memory_id: eviction_score(
            importance=i.importance, access_count=i.access_count, last_accessed_at=i.last_accessed, now=now, cfg=cfg
        )
        for i in items
    }


class WorkingMemory:
    """The working memory of every session, stored through the :class:`Store` contract."""

    def __init__(self, store: Store, cfg: WorkingMemorySettings) -> None:
        self.store = store
        self.cfg = cfg

    def add(self, key: str, memory_id: str, *, importance: float, now: datetime) -> list[str]:
        """Add (or refresh in place) one entry; returns the ids evicted to stay within capacity."""
        items = {i.memory_id: i for i in self.store.working(key)}
        item = items.get(memory_id)
        if item is None:
            item = WorkingItem(key, memory_id, importance, added_at=now, last_accessed=now)
        else:
            item.importance = max(item.importance, importance)
            item.access_count += 1
            item.last_accessed = now
        items[memory_id] = item
        self.store.put_working([item])
        gone = evictions(scores=scores(list(items.values()), now=now, cfg=self.cfg), cfg=self.cfg)
        if gone:
            self.store.remove_working(key, gone)
        return gone

    def items(self, key: str) -> list[WorkingItem]:
        return self.store.working(key)

    def promotion_candidates(self, key: str) -> list[str]:
        """AccessCount >= 2 OR importance >= 0.6."""
        return [
            i.memory_id
            for i in self.store.working(key)
            if is_promotion_candidate(access_count=i.access_count, importance=i.importance, cfg=self.cfg)
        ]

    def clear(self, key: str) -> int:
        return self.store.remove_working(key)
