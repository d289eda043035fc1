"""Forgetting by disuse with the floating threshold (BCM theory, as the Cognitive Memory design prunes:
threshold = average access count), and the layers forgetting leaves alone — through Memory, both backends."""

from __future__ import annotations

from datetime import timedelta

from reverie import SettableClock
from reverie.model import Layer, MemoryRecord, Status, StoreTier


def _old(
    clock: SettableClock, text: str, *, accesses: int, utility: float, user: str = "u", layer: Layer = Layer.EPISODIC
) -> MemoryRecord:
    now = clock()
    return MemoryRecord(
        text,
        user_id=user,
        layer=layer,
        category="fact",
        access_count=accesses,
        utility=utility,
        utility_updated_at=now,
        created_at=now - timedelta(days=90),
        last_accessed_at=now - timedelta(days=40),
        recorded_at=now - timedelta(days=90),
    )


def test_the_utility_floor_spares_memories_used_more_than_average(make_memory, clock: SettableClock) -> None:
    m = make_memory()
    used = _old(clock, "The build server is called hopper", accesses=10, utility=0.05)
    idle = [_old(clock, f"A passing remark number {i} about the weather", accesses=0, utility=0.05) for i in range(2)]
    m.restore([used, *idle])
    report = m.dream(steps=["forget"])["steps"][0]
    assert report["details"]["rules"]["utility_floor"] == 2
    assert report["details"]["spared_above_average_use"] == 1  # 10 accesses > the average 3.33
    recs = m.store.get([used.id, *(r.id for r in idle)])
    assert recs[used.id].status is Status.ACTIVE
    assert all(recs[r.id].status is Status.DORMANT for r in idle)
    why = m.history(idle[0].id)[-1]
    assert "average 3.33" in why.reason


def test_without_the_floating_threshold_the_utility_floor_takes_all(make_memory, clock: SettableClock) -> None:
    # ablation: the floating threshold switched off, to show what the default mechanism changes
    m = make_memory(dream={"forgetting": {"floating_threshold": False}})
    used = _old(clock, "The build server is called hopper", accesses=10, utility=0.05)
    idle = _old(clock, "A passing remark about the weather", accesses=0, utility=0.05)
    m.restore([used, idle])
    assert m.dream(steps=["forget"])["steps"][0]["details"]["rules"]["utility_floor"] == 2
    assert m.store.get([used.id])[used.id].status is Status.DORMANT


def test_capacity_trim_takes_memories_used_at_most_average_first(make_memory, clock: SettableClock) -> None:
    m = make_memory(dream={"forgetting": {"capacity_max": 4, "capacity_target": 3}})
    favourite = _old(clock, "Maya's favourite tea is genmaicha", accesses=30, utility=0.3)  # lowest utility
    rest = [_old(clock, f"Ordinary note {i} on topic {i}", accesses=i % 2, utility=0.4 + i / 100) for i in range(5)]
    # codebase memories neither count towards the capacity nor are trimmed
    code = [
        _old(clock, f"function helper_{i}(x) in src/app/util.py", accesses=0, utility=0.01, layer=Layer.CODEBASE)
        for i in range(5)
    ]
    m.restore([favourite, *rest, *code])
    report = m.dream(steps=["forget"])["steps"][0]
    assert report["details"]["rules"]["capacity"] == 3  # 6 active outside the codebase layer → 3
    recs = m.store.get([r.id for r in (favourite, *rest, *code)])
    assert recs[favourite.id].status is Status.ACTIVE  # used 30 times: trimmed last despite the lowest utility
    assert all(recs[r.id].status is Status.ACTIVE and recs[r.id].store is StoreTier.HOT for r in code)
    trimmed = [r for r in rest if recs[r.id].status is Status.DORMANT]
    assert len(trimmed) == 3
    assert [r.id for r in trimmed] == [r.id for r in sorted(rest, key=lambda r: r.utility)][:3]
