"""Time is an input: the engine reads ``now`` from an injected clock."""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

from reverie.errors import InvalidInputError

Clock = Callable[[], datetime]


def system_clock() -> datetime:
    """The default clock: aware UTC system time."""
    return datetime.now(UTC)


class SettableClock:
    """A clock for tests and simulations: starts at ``start`` and moves only when told."""

    def __init__(self, start: datetime | None = None) -> None:
        self._now = ensure_aware(start or datetime(2025, 1, 1, tzinfo=UTC))
        self._lock = threading.Lock()

    def __call__(self) -> datetime:
        with self._lock:
            return self._now

    def set(self, when: datetime) -> None:
        with self._lock:
            self._now = ensure_aware(when)

    def advance(self, delta: timedelta | None = None, **kwargs: float) -> datetime:
        """Move forward by ``delta`` or by ``timedelta(**kwargs)``; returns the new time."""
        step = delta if delta is not None else timedelta(**kwargs)
        with self._lock:
            self._now = self._now + step
            return self._now


def ensure_aware(when: datetime) -> datetime:
    """Reject naive datetimes (ambiguous) and normalise aware ones to UTC."""
    if not isinstance(when, datetime):
        raise InvalidInputError(f"expected a datetime, got {type(when).__name__}")
    if when.tzinfo is None or when.utcoffset() is None:
        raise InvalidInputError(f"datetime {when.isoformat()} has no timezone; pass an aware datetime")
    return when.astimezone(UTC)


__all__ = ["Clock", "SettableClock", "ensure_aware", "system_clock"]
