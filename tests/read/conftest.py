"""Fixtures of the read-path tests that need the real local model."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from reverie import Memory, SettableClock


@pytest.fixture(scope="session")
def local_model() -> Any:
    """The default local model: whether two statements are about one thing is the embedder's call."""
    from reverie.config.core import EmbeddingSettings
    from reverie.embed import make_provider

    return make_provider(EmbeddingSettings())


@pytest.fixture
def model_memory(tmp_path: Path, clock: SettableClock, local_model: Any) -> Iterator[Callable[..., Memory]]:
    """Open Memory objects (SQLite) with the default local model and a settable clock."""
    opened: list[Memory] = []

    def factory(**config: object) -> Memory:
        m = Memory(tmp_path / f"m{len(opened)}.db", config=config, clock=clock, embedder=local_model)
        opened.append(m)
        return m

    yield factory
    for m in opened:
        m.close()
