"""Fixtures of the dream tests: scripts for the loopback chat server (``tests.support.llm_server``)
that answer with what a dream step sent."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest


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
    return lambda texts: {
        "summary": lead + " " + " ".join(t if t.endswith((".", "!", "?")) else t + "." for t in texts)
    }


@pytest.fixture
def llm_answers() -> Callable[..., Any]:
    """:func:`answering` (a script by prompt keyword whose answers may be built from the memories sent)."""
    return answering


@pytest.fixture
def faithful_summary() -> Callable[..., Any]:
    """:func:`faithful` (a test LLM summary keeping every memory it was given)."""
    return faithful
