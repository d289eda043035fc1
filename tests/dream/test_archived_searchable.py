"""Archived memories stay searchable (the lifecycle design: archived facts remain in recall results): the dream's
archival moves a memory to the cold store, and a default search — no ``deep=True`` — still finds it (both
backends)."""

from __future__ import annotations

from datetime import timedelta

from reverie import Layer, Memory, SettableClock, Status, StoreTier


def test_a_default_search_finds_an_archived_memory(mem: Memory, clock: SettableClock) -> None:
    old = clock() - timedelta(days=100)
    mid = mem.add("The spare key to the bike shed hangs behind the garage door", user_id="u", infer=False).id
    other = mem.add("The weekly team lunch is on Thursdays at noon", user_id="u", infer=False).id
    mem.store.update_fields(mid, {"created_at": old, "importance": 0.2, "layer": Layer.EPISODIC})
    report = mem.dream(steps=["archive"])
    assert next(s for s in report["steps"] if s["name"] == "archive")["details"]["faded"] == 1
    rec = mem.store.get([mid])[mid]
    assert (rec.status, rec.store) == (Status.ARCHIVED, StoreTier.COLD)
    hits = mem.search("where is the spare key to the bike shed", user_id="u")
    assert [h.memory.id for h in hits][:1] == [mid]
    assert hits[0].memory.status is Status.ARCHIVED
    assert mem.store.get([other])[other].status is Status.ACTIVE
