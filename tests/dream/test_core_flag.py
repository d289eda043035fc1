"""The core flag (the consolidation design): the dream marks a memory used >= 10 times, with high storage strength,
in >= 3 distinct sessions as core; core memories are exempt from consolidation and their fading retention is
floored at 0.60 (through ``Memory``, both backends). The consolidation exemption of core memories is
tested in ``test_consolidate.py::test_protected_memories_are_never_merged``."""

from __future__ import annotations

import pytest

from reverie import Memory, SettableClock
from reverie.dream.consolidate import fading_retention_of


def _use(mem: Memory, query: str, sessions: list[str], clock: SettableClock) -> None:
    for i in range(12):
        mem.search(query, user_id="u", session_id=sessions[i % len(sessions)], k=1)
        clock.advance(days=8)  # spaced retrievals grow storage strength


def test_dream_marks_core_and_floors_its_retention(mem: Memory, clock: SettableClock) -> None:
    core = mem.add("The production database password rotates on the first of every month", user_id="u", infer=False).id
    one = mem.add("The team retro board lives in the shared Miro workspace", user_id="u", infer=False).id
    _use(mem, "when does the production database password rotate", ["s1", "s2", "s3"], clock)
    _use(mem, "where does the retro board live", ["s9"], clock)  # used as often, in one session only
    recs = mem.store.get([core, one])
    assert recs[core].access_count >= 10 and recs[one].access_count >= 10
    report = mem.dream(steps=["core"])
    step = report["steps"][0]
    assert step["changed"] == 1
    recs = mem.store.get([core, one])
    assert recs[core].core and not recs[one].core
    assert [e.event for e in mem.history(core)].count("core") == 1
    assert mem.dream(steps=["core"])["steps"][0]["changed"] == 0  # idempotent
    # retention floor 0.60 for core memories, a year without use
    clock.advance(days=365)
    cfg = mem.settings.dynamics
    assert fading_retention_of(mem.store.get([core])[core], now=mem.now(), cfg=cfg) == pytest.approx(0.60)
    assert fading_retention_of(mem.store.get([one])[one], now=mem.now(), cfg=cfg) < 0.60
