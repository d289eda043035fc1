"""Fixtures of the interface tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from .helpers import LAUNCHER, ServerProcess, child_env


@pytest.fixture
def spawn() -> Iterator[object]:
    started: list[ServerProcess] = []

    def factory(*args: str, **env: str) -> ServerProcess:
        server = ServerProcess([str(LAUNCHER), *args], child_env(**env))
        started.append(server)
        return server

    yield factory
    for server in started:
        server.stop()
