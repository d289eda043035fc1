"""Hot tier: the memories always at hand, TTL-cached.

Selection: active, utility >= 0.8, >= 10 accesses, younger than 30 days, at most 15, utility
descending. The selection is cached per scope for 5 minutes of the injected clock (time is an
input), so a burst of searches costs one query. Age is measured from ``created_at``.

The cache is bounded: at most :data:`MAX_SCOPES` scopes (users and agents) are kept, the least recently
used leaving first, and selections past their TTL are dropped as new ones arrive — a server for many
users holds the hot tiers of the users it served lately, not of every user it ever served.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from datetime import datetime, timedelta

from reverie.config.read import ReadSettings
from reverie.model import MemoryRecord, Status
from reverie.store.base import MemoryFilter, Store

ScopeKey = tuple[str | None, str | None, bool]
#: scopes whose selection is kept at once (a hot tier is at most 15 records: ~1,000 scopes are a few MB)
MAX_SCOPES = 1024


def qualifies(rec: MemoryRecord, *, now: datetime, cfg: ReadSettings) -> bool:
    """The hot-tier filters."""
    age_days = (now - rec.created_at).total_seconds() / 86400.0
    return (
        rec.status is Status.ACTIVE
        and rec.utility >= cfg.hot_min_utility
        and rec.access_count >= cfg.hot_min_accesses
        and age_days < cfg.hot_max_age_days
    )


class HotTier:
    """Per-scope cache of the hot-tier selection (thread-safe)."""

    def __init__(self, max_scopes: int = MAX_SCOPES) -> None:
        self.max_scopes = max_scopes
        self._cache: OrderedDict[ScopeKey, tuple[datetime, list[MemoryRecord]]] = OrderedDict()
        self._lock = threading.Lock()
        self.loads = 0  # how many selections reached the store (tests count them)

    def get(self, store: Store, flt: MemoryFilter, *, now: datetime, cfg: ReadSettings) -> list[MemoryRecord]:
        key: ScopeKey = (flt.user_id, flt.agent_id, flt.all_users)
        ttl = timedelta(seconds=cfg.hot_ttl_s)
        with self._lock:
            cached = self._cache.get(key)
            if cached is not None and now - cached[0] < ttl and now >= cached[0]:
                self._cache.move_to_end(key)
                return list(cached[1])
        selected = self._select(store, flt, now=now, cfg=cfg)
        with self._lock:
            self._cache[key] = (now, selected)
            self._cache.move_to_end(key)
            self.loads += 1
            self._trim(now, ttl)
        return list(selected)

    def _trim(self, now: datetime, ttl: timedelta) -> None:
        """Drop the selections past their TTL (oldest use first) and keep at most ``max_scopes``."""
        while self._cache:
            key, (at, _records) = next(iter(self._cache.items()))
            if len(self._cache) <= self.max_scopes and now - at < ttl and now >= at:
                break
            del self._cache[key]

    def __len__(self) -> int:
        with self._lock:
            return len(self._cache)

    def clear(self) -> None:
        with self._lock:
            self._cache.clear()

    @staticmethod
    def _select(store: Store, flt: MemoryFilter, *, now: datetime, cfg: ReadSettings) -> list[MemoryRecord]:
        if cfg.hot_max_items <= 0:
            return []
        scope = MemoryFilter(user_id=flt.user_id, all_users=flt.all_users, agent_id=flt.agent_id)
        pool = store.list(scope, limit=cfg.hot_max_items * 4, order_by="utility", descending=True)
        return [r for r in pool if qualifies(r, now=now, cfg=cfg)][: cfg.hot_max_items]


__all__ = ["MAX_SCOPES", "HotTier", "qualifies"]
