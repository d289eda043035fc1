"""Fixtures of the dream tests: the loopback OpenAI-compatible chat server of ``tests/llm``.

The server lives in ``tests/llm/conftest.py``; it is loaded here under its own module name (test
directories are not packages) so that the LLM paths of dream steps run against real HTTP too.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

_LLM_CONFTEST = Path(__file__).parent.parent / "llm" / "conftest.py"
_spec = importlib.util.spec_from_file_location("_reverie_llm_fixtures", _LLM_CONFTEST)
assert _spec is not None and _spec.loader is not None
_llm = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_llm)

ChatServer = _llm.ChatServer
by_prompt: Callable[..., Any] = _llm.by_prompt


@pytest.fixture
def chat_server() -> Iterator[Any]:
    server = ChatServer()
    yield server
    server.close()


@pytest.fixture
def script_by_prompt() -> Callable[..., Any]:
    return by_prompt
