"""180 simulated days through the public API: access schedules decide where memories end up."""

from __future__ import annotations

from reverie import Layer, Memory, SettableClock, Status


def test_180_days_of_access_schedules(mem: Memory, clock: SettableClock) -> None:
    ids = {
        name: mem.add(text, user_id="u").id
        for name, text in [
            ("daily", "the team stand-up is at 9:30"),
            ("weekly", "the weekly report goes to Rui on Fridays"),
            ("once", "the office wifi password changed in March"),
            ("never", "a stranger mentioned the weather in Porto"),
        ]
    }
    clock.advance(hours=1)
    for day in range(1, 181):
        mem.get(ids["daily"])
        if day % 7 == 0:
            mem.get(ids["weekly"])
        if day == 1:
            mem.get(ids["once"])
        mem.dream()
        clock.advance(days=1)
    recs = mem.store.get(list(ids.values()))
    daily, weekly, once, never = (recs[ids[n]] for n in ("daily", "weekly", "once", "never"))
    # seed 002: working → episodic after 30 min; seed 001 rule 1: >= 3 accesses → semantic
    assert daily.layer is Layer.SEMANTIC and weekly.layer is Layer.SEMANTIC
    assert once.layer is Layer.EPISODIC and never.layer is Layer.EPISODIC
    assert all(r.status is Status.ACTIVE for r in recs.values())
    # seed 000 energy: daily accesses in the slow semantic tier accumulate; unused episodic fades
    assert daily.energy > 20 > weekly.energy > 1.0
    assert never.energy < 1e-6 and once.energy < 1e-6
    # FSRS retrieval strength (materialised by the decay step) and dual strength
    assert daily.retrieval_strength > weekly.retrieval_strength > once.retrieval_strength > never.retrieval_strength
    assert daily.storage_strength == weekly.storage_strength == 10.0  # the 1–10 scale is capped
    assert weekly.storage_strength > once.storage_strength > never.storage_strength
    # a same-day review leaves FSRS stability where it was (short-term formula, floored at S)
    assert daily.stability > weekly.stability > once.stability >= never.stability
    # every transition is in the history
    assert [e.event for e in mem.history(ids["daily"])].count("promoted") == 2
    assert [e.event for e in mem.history(ids["never"])].count("promoted") == 1
