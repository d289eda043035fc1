"""Which stored memories a statement may retire. A statement written for the whole user (no agent) is read
against every agent's memories of that user, but it supersedes only memories of its own scope: an agent whose
memory it replaced could not read what replaced it, and its record would name a memory outside its scope. And
"new" said of a word the old statement also calls new ("Sam logged a new note on the ferry" / "... a new note on
the garden") tells no change. The sentences are not the suite's."""

from __future__ import annotations

from typing import Any

import pytest

from reverie import Memory
from reverie.model import Status
from reverie.text import updates


def test_a_user_level_correction_leaves_an_agents_memory_to_that_agent(make_memory: Any) -> None:
    mem: Memory = make_memory()
    agent_note = mem.add("Priya lives in Lisbon.", user_id="u1", agent_id="travel-bot").ids[0]
    res = mem.add("Priya moved from Lisbon to Berlin.", user_id="u1")
    assert agent_note not in res.ids, res.reason
    old = mem.store.get([agent_note])[agent_note]
    assert old.status is Status.ACTIVE and old.superseded_by is None
    # the agent still reads its own memory; the whole user reads both
    assert agent_note in [
        h.memory.id for h in mem.search("Where does Priya live?", user_id="u1", agent_id="travel-bot")
    ]
    both = {h.memory.id for h in mem.search("Where does Priya live?", user_id="u1", k=10)}
    assert {agent_note, res.ids[0]} <= both


def test_the_same_correction_in_the_agents_own_scope_retires_its_memory(make_memory: Any) -> None:
    mem: Memory = make_memory()
    agent_note = mem.add("Priya lives in Lisbon.", user_id="u1", agent_id="travel-bot").ids[0]
    res = mem.add("Priya moved from Lisbon to Berlin.", user_id="u1", agent_id="travel-bot")
    assert agent_note in res.ids, res.reason
    old = mem.store.get([agent_note])[agent_note]
    assert old.status is Status.SUPERSEDED and old.superseded_by == res.ids[0]


@pytest.mark.parametrize(
    ("old", "new"),
    [
        (
            "User: tag-alice-a2 new fact about the passport #726752",
            "User: tag-alice-none new fact about the violin #297892",
        ),
        ("Sam logged a new note on the ferry, #48213", "Sam logged a new note on the garden, #90417"),
    ],
)
def test_new_said_in_both_statements_tells_no_change(old: str, new: str) -> None:
    verdict = updates.judge(old, new)
    assert not verdict.updates and not verdict.unaligned, verdict.reason


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("My phone number is 555 0134.", "My new number is 555 0199."),
        ("My address is 4 Oak Road.", "My new address is 12 Elm Street."),
    ],
)
def test_new_before_the_old_attribute_still_tells_a_change(old: str, new: str) -> None:
    verdict = updates.judge(old, new)
    assert verdict.updates or verdict.unaligned, verdict.reason
