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


def memories_in(request: dict[str, Any]) -> list[str]:
    """The numbered memories a dream step sent to the LLM ("Memories:\\n1. …\\n2. …")."""
    user = request["messages"][1]["content"]
    return [line.split(". ", 1)[1] for line in user.splitlines()[1:] if ". " in line]


def answering(answers: dict[str, Any]) -> Callable[[dict[str, Any]], tuple[int, str, float]]:
    """A script answering by a keyword of the system prompt; a callable answer gets the memories sent
    (so a test LLM can write a faithful text of whatever group the step chose)."""
    import json

    def script(req: dict[str, Any]) -> tuple[int, str, float]:
        system = req["messages"][0]["content"]
        for key, value in answers.items():
            if key in system:
                out = value(memories_in(req)) if callable(value) else value
                return 200, json.dumps(out), 0.0
        return 200, "{}", 0.0

    return script


def faithful(lead: str) -> Callable[[list[str]], dict[str, str]]:
    """A test LLM's summary that keeps every memory it was given: ``lead`` and the memories in turn."""
    return lambda texts: {"summary": lead + " " + " ".join(t if t.endswith((".", "!", "?")) else t + "."
                                                           for t in texts)}


@pytest.fixture
def llm_answers() -> Callable[..., Any]:
    """:func:`answering` (a script by prompt keyword whose answers may be built from the memories sent)."""
    return answering


@pytest.fixture
def faithful_summary() -> Callable[..., Any]:
    """:func:`faithful` (a test LLM summary keeping every memory it was given)."""
    return faithful
