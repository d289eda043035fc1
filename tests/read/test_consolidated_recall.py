"""Recall through consolidation on both backends: a fact told once and never searched is still found
by a plain search half a year later, after nightly dreams consolidated it into the cold store; a
summary's members are followed; the cold store is searched when the hot store's best match is weak;
facts replaced by a newer one never come back this way."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from reverie import Memory, SettableClock
from reverie.model import Status, StoreTier
from reverie.read import consolidated

#: one afternoon's chat about the same trip: similar enough to be consolidated together once it fades
TRIP = [
    "Maya said the trip to Porto starts on June 3 with her sister Ana",
    "Maya said the trip to Porto includes a port wine tasting with her sister Ana",
    "Maya said the trip to Porto hotel is the Pestana by the river with her sister Ana",
    "Maya said the trip to Porto ends on June 9 with her sister Ana",
    "Maya said the trip to Porto needs a rental car for her sister Ana",
    "Maya said the trip to Porto costs 1200 euros for her and her sister Ana",
]
OTHER_DAYS = [
    "Maya started a pottery class on Wednesdays",
    "Maya's laptop is a ThinkPad X1 Carbon",
    "Maya prefers green tea in the morning",
    "Maya is reading a novel by Elena Ferrante",
]


def _nightly(mem: Memory, clock: SettableClock, days: int, *, adds: list[str] | None = None) -> None:
    for day in range(days):
        clock.advance(days=1)
        if adds and day < len(adds):
            mem.add(adds[day], user_id="maya", infer=False)
        mem.dream()


def _every(mem: Memory) -> dict[str, Any]:
    rows = mem.list(user_id="maya", limit=1000, filters={"status": [s.value for s in Status], "store": ["hot", "cold"]})
    return {r.id: r for r in rows}


def test_fact_told_once_on_day_1_is_found_on_day_180(make_memory: Any, clock: SettableClock) -> None:
    mem = make_memory()
    ids = [r.id for r in mem.add_many(TRIP, user_id="maya", infer=False)]
    rental = ids[4]
    _nightly(mem, clock, 180, adds=OTHER_DAYS)
    every = _every(mem)
    fact = every[rental]
    # the lifecycle did its job: the fact left the hot store, held by an active summary
    assert fact.store is StoreTier.COLD and fact.status is Status.SUPERSEDED
    summary = every[fact.superseded_by or ""]
    assert summary.status is Status.ACTIVE and rental in consolidated.members_of(summary)
    hits = mem.search("Does the Porto trip need a rental car?", user_id="maya", k=5)
    found = [h for h in hits if h.memory.id == rental]
    assert found, [h.memory.content for h in hits]
    # found by the search of the cold store, explained with the summary that holds it
    assert found[0].explain["stage"] == "cold"
    assert found[0].explain["channels"]["cold"]["summary"] == summary.id
    # the member took its summary's slot
    assert summary.id not in {h.memory.id for h in hits}
    # the same through the summary's links alone (the cold store itself not searched)
    mem.settings.read.cold_search = "never"
    linked = [
        h for h in mem.search("Does the Porto trip need a rental car?", user_id="maya", k=5) if h.memory.id == rental
    ]
    assert linked and linked[0].explain["stage"] == "summary"
    assert linked[0].explain["channels"]["summary"]["summary"] == summary.id


def _spare_key_in_cold(mem: Memory) -> str:
    """Where the spare key is, cold-migrated (e.g. after months unused) beside one unrelated hot memory."""
    kept = mem.add("The spare house key is under the blue flower pot", user_id="maya", infer=False).id
    mem.add("Maya likes jazz records", user_id="maya", infer=False)
    mem.store.update_fields(kept, {"store": StoreTier.COLD})
    return kept


def test_cold_store_is_searched_with_the_hot_store(make_memory: Any, clock: SettableClock) -> None:
    mem = make_memory()
    kept = _spare_key_in_cold(mem)
    hits = mem.search("where is the spare house key?", user_id="maya", k=3)
    assert [h.memory.id for h in hits][:1] == [kept]
    assert hits[0].explain["stage"] == "cold"


def test_when_weak_searches_the_cold_store_only_after_a_weak_hot_match(make_memory: Any, clock: SettableClock) -> None:
    mem = make_memory(read={"cold_search": "when_weak"})
    kept = _spare_key_in_cold(mem)
    weak = mem.search("where is the spare house key?", user_id="maya", k=3)
    assert weak[0].memory.id == kept and weak[0].explain["stage"] == "cold"
    mem.add("The spare house key hides under the blue flower pot by the door", user_id="maya", infer=False)
    strong = mem.search("where is the spare house key under the blue flower pot?", user_id="maya", k=3)
    assert strong and all(h.explain["stage"] != "cold" for h in strong)
    never = make_memory(read={"cold_search": "never"})  # the same store, another user
    cold = never.add("The spare house key is under the blue flower pot", user_id="lena", infer=False).id
    never.store.update_fields(cold, {"store": StoreTier.COLD})
    assert never.search("where is the spare house key?", user_id="lena", k=3) == []
    assert never.search("where is the spare house key?", user_id="lena", k=3, deep=True)[0].memory.id == cold


def test_replaced_facts_never_come_back_through_the_cold_store(make_memory: Any, clock: SettableClock) -> None:
    mem = make_memory()
    old = mem.add("The office wifi password is sunflower", user_id="maya", infer=False).id
    new = mem.add("Maya's gym opens at seven", user_id="maya", infer=False).id
    # superseded by a newer fact (not by a summary), then moved to the cold store
    mem.store.update_fields(old, {"status": Status.SUPERSEDED, "superseded_by": new, "store": StoreTier.COLD})
    hits = mem.search("what is the office wifi password?", user_id="maya", k=5)
    assert old not in {h.memory.id for h in hits}
    deep = mem.search("what is the office wifi password?", user_id="maya", k=5, deep=True)
    assert old in {h.memory.id for h in deep}


def test_drop_covered_gives_the_summary_slot_to_its_member() -> None:
    from reverie.model import MemoryRecord

    summary = MemoryRecord(content="s", metadata={"consolidation": {"kind": "summary", "members": ["m1", "m2"]}})
    records = {
        "s": summary,
        "m1": MemoryRecord(content="m1"),
        "x": MemoryRecord(content="x"),
        "y": MemoryRecord(content="y"),
    }
    ids = ["s", "x", "m1", "y"]
    order = [(0, None), (1, None), (2, None), (3, None)]
    assert [ids[i] for i, _ in consolidated.drop_covered(order, ids, records, 3)] == ["x", "m1", "y"]
    # without its member in the top k, the summary keeps its place
    assert [ids[i] for i, _ in consolidated.drop_covered(order[:2] + order[3:], ids, records, 2)] == ["s", "x"]


def test_deep_search_still_reaches_everything_cold(make_memory: Any, clock: SettableClock) -> None:
    mem = make_memory()
    rid = mem.add("Maya's passport expires in 2031", user_id="maya", infer=False).id
    mem.store.update_fields(rid, {"status": Status.DORMANT, "store": StoreTier.COLD})
    clock.advance(timedelta(days=1))
    assert rid in {h.memory.id for h in mem.search("passport expiry", user_id="maya", deep=True)}


#: errands and facts of one user; half of them are moved to the cold store below
ERRANDS = [
    f"Maya wrote down that the {thing} {verb} on {day}"
    for thing, verb, day in zip(
        [
            "dentist appointment",
            "car service",
            "library book",
            "gym membership",
            "passport photo",
            "bike repair",
            "piano lesson",
            "water bill",
            "flu shot",
            "tax return",
            "parcel pickup",
            "hair cut",
        ],
        [
            "is due",
            "is booked",
            "must be returned",
            "renews",
            "is ready",
            "is finished",
            "moves",
            "is paid",
            "is scheduled",
            "is filed",
            "waits",
            "is booked",
        ],
        [
            "Monday",
            "Tuesday",
            "Wednesday",
            "Thursday",
            "Friday",
            "Saturday",
            "Sunday",
            "Monday",
            "Tuesday",
            "Wednesday",
            "Thursday",
            "Friday",
        ],
        strict=True,
    )
]


def test_merged_cold_search_is_one_search_over_both_stores(make_memory: Any, clock: SettableClock) -> None:
    from reverie.embed.base import embed_queries
    from reverie.read import hybrid
    from reverie.store.base import MemoryFilter

    mem = make_memory()
    ids = [r.id for r in mem.add_many(ERRANDS, user_id="maya", infer=False)]
    for mid in ids[::2]:  # every other memory cold-migrated, still true
        mem.store.update_fields(mid, {"store": StoreTier.COLD})
    active = frozenset({Status.ACTIVE})
    hot = MemoryFilter(user_id="maya", statuses=active, stores=frozenset({StoreTier.HOT}))
    cold = MemoryFilter(user_id="maya", statuses=active, stores=frozenset({StoreTier.COLD}))
    both = MemoryFilter(user_id="maya", statuses=active, stores=None)
    query = "when is the dentist appointment or the car service booked?"
    fusion: dict[str, Any] = {
        "subqueries": [query],
        "vectors": embed_queries(mem.embedder, [query]),
        "weights": {"vector": 1.0, "text": 1.0},
        "pool": 4,
        "k": 60,
    }
    merged, errors, (found_hot, found_cold) = hybrid.merged_search(
        mem.store, (hot, cold), sparse=[None, None], **fusion
    )
    one = hybrid.merged_search(mem.store, (both,), sparse=[None], **fusion)[0]
    # the same pool as one search over both stores: the best 4 of each channel by raw score, fused
    assert errors == []
    assert [c.id for c in merged] == [c.id for c in one]
    assert {c.id: c.channels for c in merged} == {c.id: c.channels for c in one}
    assert found_cold <= set(ids[::2]) and found_hot <= set(ids[1::2]) and found_cold and found_hot


def test_merged_cold_search_marks_what_the_cold_store_found(make_memory: Any, clock: SettableClock) -> None:
    mem = make_memory(read={"cold_search": "merged"})
    kept = _spare_key_in_cold(mem)
    hits = mem.search("where is the spare house key?", user_id="maya", k=3)
    assert hits[0].memory.id == kept
    assert hits[0].explain["stage"] == "cold" and hits[0].explain["channels"]["cold"]["rank"] == 1
    assert all(h.explain["stage"] != "cold" for h in hits[1:])
