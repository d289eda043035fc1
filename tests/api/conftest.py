from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from reverie import Memory, SettableClock
from reverie.embed.testing import HashEmbedder


@pytest.fixture
def clock() -> SettableClock:
    return SettableClock(datetime(2025, 3, 1, 9, 0, tzinfo=UTC))


@pytest.fixture
def make_memory(store_target: str, tmp_path: Path, clock: SettableClock) -> Iterator[object]:
    """Open Memory objects on the test backend with the hash embedder and a settable clock."""
    opened: list[Memory] = []

    def factory(**config: object) -> Memory:
        cfg = {"opslog": {"path": str(tmp_path / "ops-log.jsonl")}, **config}
        m = Memory(store_target, config=cfg, clock=clock, embedder=HashEmbedder(64))
        opened.append(m)
        return m

    yield factory
    for m in opened:
        m.close()


@pytest.fixture
def mem(make_memory) -> Memory:  # type: ignore[no-untyped-def]
    return make_memory()  # type: ignore[no-any-return]
