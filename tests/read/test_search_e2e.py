"""End-to-end read path on a small hand-written memory set, on SQLite and PostgreSQL."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta

import pytest

from reverie import Memory, SettableClock
from reverie.model import Relation, RelationType, Status, StoreTier
from reverie.read.pipeline import ReadPipeline, Request
from reverie.store.base import MemoryFilter

FACTS = [
    "Maya is allergic to penicillin",
    "Maya prefers oat milk in her coffee",
    "The staging deploy failed because the disk on build-02 was full",
    "Maya's brother Tomas is a marine biologist in Porto",
    "The office wifi password is stored in the team vault",
    "Maya went hiking in the Alps last summer",
]


def _load(mem: Memory) -> dict[str, str]:
    res = mem.add_many(FACTS, user_id="u", infer=False)
    return {f: r.id for f, r in zip(FACTS, res, strict=True) if r.id is not None}


def test_each_intent_puts_the_right_memory_first(mem: Memory) -> None:
    ids = _load(mem)
    mem.store.update_fields(ids[FACTS[1]], {"category": "preference"})
    cases = {
        "What is Maya allergic to?": (FACTS[0], "factual"),
        "What milk does Maya prefer?": (FACTS[1], "preference"),
        "Why did the staging deploy fail?": (FACTS[2], "causal"),
        "Who is Tomas?": (FACTS[3], "entity_profile"),
        "When did Maya go hiking?": (FACTS[5], "temporal"),
        "office wifi password": (FACTS[4], "general"),
    }
    for query, (fact, expected_intent) in cases.items():
        hits = mem.search(query, user_id="u", k=3)
        assert hits[0].memory.id == ids[fact], query
        assert hits[0].explain["intent"] == expected_intent


def test_explain_names_channels_terms_and_stage(mem: Memory) -> None:
    _load(mem)
    hit = mem.search("penicillin allergy", user_id="u")[0]
    ex = hit.explain
    assert ex["stage"] == "hybrid" and ex["channels"]["text"]["rank"] == 1 and "vector" in ex["channels"]
    assert set(ex["terms"]) == {"similarity", "activation", "importance", "rrf"}
    assert ex["rrf"]["k"] == 60 and ex["mmr"]["lambda"] == 0.7 and ex["score"] == hit.score
    assert "boosts" in ex and "multipliers" in ex


def test_gate_returns_nothing_for_trivial_messages(mem: Memory) -> None:
    _load(mem)
    assert mem.search("thanks!", user_id="u") == []
    assert mem.search("/status", user_id="u") == []


def test_superseded_facts_per_mode(mem: Memory, clock: SettableClock) -> None:
    old = mem.add("Maya lives in Berlin", user_id="u", infer=False).id
    assert old is not None
    clock.advance(timedelta(days=30))
    moved = clock()
    new = mem.add("Maya lives in Lisbon", user_id="u", infer=False, when=moved).id
    mem.store.update_fields(old, {"status": Status.SUPERSEDED, "valid_until": moved, "superseded_by": new})
    clock.advance(timedelta(days=1))
    current = [h.memory.id for h in mem.search("where does Maya live", user_id="u")]
    assert current == [new]
    timeline = [h.memory.id for h in mem.search("where does Maya live", user_id="u", mode="timeline")]
    assert timeline == [old, new]
    then = [h.memory.id for h in mem.search("where does Maya live", user_id="u", as_of=moved - timedelta(days=1))]
    assert then == [old]
    temporal = mem.search("When did Maya live in Berlin?", user_id="u")
    assert temporal[0].memory.id == old and temporal[0].explain["intent"] == "temporal"


def test_deep_recall_reaches_cold_storage(mem: Memory) -> None:
    cold = mem.add("User went kayaking at Lake Washington on March 15", user_id="u", infer=False).id
    assert cold is not None
    mem.store.update_fields(cold, {"store": StoreTier.COLD, "status": Status.SUPERSEDED})
    assert mem.search("kayaking Lake Washington", user_id="u") == []
    deep = mem.search("kayaking Lake Washington", user_id="u", deep=True)
    assert [h.memory.id for h in deep] == [cold]


def test_mmr_removes_near_duplicates(mem: Memory) -> None:
    dupes = [
        "the build server build-02 disk is full",
        "the build server build-02 disk is full!",
        "the build server build-02 disk is full again",
    ]
    other = "build server disk usage on build-03 is fine"
    ids = [r.id for r in mem.add_many([*dupes, other], user_id="u", infer=False)]
    hits = mem.search("build server disk", user_id="u", k=4)
    top2 = [h.memory.id for h in hits[:2]]
    assert ids[3] in top2 and len(set(top2) & set(ids[:3])) == 1
    later_dupes = [h for h in hits[2:] if h.memory.id in ids[:3]]
    assert later_dupes and all(h.explain["mmr"]["max_similarity"] > 0.9 for h in later_dupes)


def test_graph_expansion_follows_confident_edges(mem: Memory) -> None:
    ids = _load(mem)
    cause = mem.add("Log rotation was disabled on build-02 in January", user_id="u", infer=False).id
    weak = mem.add("Quarterly budget review moved to Thursday", user_id="u", infer=False).id
    assert cause is not None and weak is not None
    mem.store.add_relations(
        [
            Relation(cause, ids[FACTS[2]], RelationType.CAUSES, confidence=0.9),
            Relation(weak, ids[FACTS[2]], RelationType.CAUSES, confidence=0.1),
        ]
    )
    hits = mem.search("Why did the staging deploy fail?", user_id="u", k=10)
    by_id = {h.memory.id: h for h in hits}
    assert cause in by_id and "graph" in by_id[cause].explain["channels"]
    assert by_id[cause].explain["channels"]["graph"]["edge_confidence"] == 0.9
    assert weak not in by_id or "graph" not in by_id[weak].explain["channels"]


def test_hebbian_coactivation_after_search(mem: Memory) -> None:
    _load(mem)
    before = {r.id: r.stability for r in mem.list(user_id="u")}
    hits = mem.search("Maya", user_id="u", k=3)
    assert len(hits) >= 2
    pairs = mem.store.coactivations([h.memory.id for h in hits])
    assert pairs and all(p.weight == 1 for p in pairs)
    for _ in range(2):
        mem.search("Maya", user_id="u", k=3)
    strong = mem.store.coactivations([h.memory.id for h in hits], min_weight=3)
    assert strong
    again = mem.search("Maya", user_id="u", k=3)
    assert any(h.explain["boosts"].get("coactivation") == 0.05 for h in again)
    after = mem.get(hits[0].memory.id)
    assert after.stability > before[hits[0].memory.id]


def test_same_session_episode_boost(mem: Memory) -> None:
    a = mem.add("We talked about the garden shed roof", user_id="u", session_id="s1", infer=False).id
    b = mem.add("We talked about the garden shed door", user_id="u", session_id="s2", infer=False).id
    hits = mem.search("garden shed", user_id="u", session_id="s2")
    assert hits[0].memory.id == b and hits[0].explain["boosts"]["episode"] == 0.15
    assert a in [h.memory.id for h in hits]


def test_context_block_is_gated_and_budgeted(mem: Memory) -> None:
    _load(mem)
    big = mem.add("Runbook: " + "restart the worker, check the queue, " * 200, user_id="u", infer=False).id
    block = mem.context("What is Maya allergic to and what does the runbook say?", user_id="u", budget_tokens=120)
    assert block.used_tokens <= 120
    assert "penicillin" in block.text
    assert str(block) == block.text
    assert any(i.id == big and i.truncated for i in block.items) or any(s["id"] == big for s in block.skipped)
    assert mem.context("ok", user_id="u").text == ""


def test_hybrid_similarity_explained(mem: Memory) -> None:
    _load(mem)
    hit = mem.search("penicillin allergy", user_id="u")[0]
    sim = hit.explain["similarity"]
    assert sim["lexical"] == 1.0 and 0.0 < sim["cosine"] < 1.0
    w_v, w_t = sim["vector_weight"], sim["text_weight"]
    expected = (w_v * sim["cosine"] + w_t * sim["lexical"]) / (w_v + w_t)
    assert hit.explain["terms"]["similarity"] == pytest.approx(expected, abs=1e-5)


def test_time_anchor_prefers_memories_from_the_named_period(make_memory: Callable[..., Memory]) -> None:
    mem = make_memory()
    may = mem.add(
        "We had dinner at the harbour restaurant with Lena",
        user_id="u",
        infer=False,
        when=datetime(2023, 5, 12, tzinfo=UTC),
    ).id
    aug = mem.add(
        "We had dinner at the harbour restaurant with Omar",
        user_id="u",
        infer=False,
        when=datetime(2023, 8, 20, tzinfo=UTC),
    ).id
    for month, want, other in (("August", aug, may), ("May", may, aug)):
        hits = mem.search(f"Who did we have dinner with in {month} 2023?", user_id="u", k=2)
        assert [h.memory.id for h in hits] == [want, other], month
        assert hits[0].explain["boosts"]["time"] == pytest.approx(0.1)
        assert "time" not in hits[1].explain["boosts"]
    off = make_memory(read={"time_anchor": False})
    assert all(
        "time" not in h.explain["boosts"]
        for h in off.search("Who did we have dinner with in May 2023?", user_id="u", k=2)
    )


def test_inferred_episode_context_is_graded(mem: Memory) -> None:
    trip = [
        "We planned the Kyoto trip for April",
        "The ryokan is booked for three nights",
        "Train tickets from Tokyo are in the shared folder",
    ]
    other = ["The dentist appointment is booked for Tuesday", "Car service is booked for the weekend"]
    ids = {t: r.id for t, r in zip(trip, mem.add_many(trip, user_id="u", session_id="trip", infer=False), strict=True)}
    ids.update(
        {
            t: r.id
            for t, r in zip(other, mem.add_many(other, user_id="u", session_id="errands", infer=False), strict=True)
        }
    )
    hits = mem.search("what is booked for the Kyoto trip", user_id="u", k=5)
    by_id = {h.memory.id: h for h in hits}
    assert hits[0].memory.id == ids[trip[0]]
    top = hits[0].explain["boosts"]["episode_context"]
    assert top == pytest.approx(mem.settings.read.episode_context_boost)  # the strongest episode: full
    ryokan = by_id[ids[trip[1]]].explain["boosts"]["episode_context"]
    dentist = by_id[ids[other[0]]].explain["boosts"].get("episode_context", 0.0)
    assert ryokan == pytest.approx(top) and dentist < ryokan  # the weaker episode gets less
    assert hits.index(by_id[ids[trip[1]]]) < hits.index(by_id[ids[other[0]]])
    assert by_id[ids[trip[1]]].explain["episode_source"].startswith("inferred")


def test_overlapped_embedding_gives_the_same_hits(mem: Memory, clock: SettableClock) -> None:
    _load(mem)
    serial_settings = mem.settings.model_copy(
        update={"read": mem.settings.read.model_copy(update={"overlap_embedding": False})}
    )
    overlapped = ReadPipeline(mem.store, mem.embedder, mem.settings)
    serial = ReadPipeline(mem.store, mem.embedder, serial_settings)
    for query in ("What is Maya allergic to?", "Why did the staging deploy fail?", "Maya's brother"):
        req = Request(query, MemoryFilter(user_id="u"), 4)
        a = [(h.memory.id, h.score) for h in overlapped.run(req, now=clock()).hits]
        b = [(h.memory.id, h.score) for h in serial.run(req, now=clock()).hits]
        assert a == b and a, query
    # a search inside the caller's store transaction: the worker only embeds, so nothing waits on the store
    with mem.store.transaction():
        assert mem.search("penicillin", user_id="u", k=1)[0].memory.content == FACTS[0]


def test_read_ahead_reads_the_same_memories_as_the_pool_fetch(mem: Memory) -> None:
    """The full-text matches' memories read while the query is embedded are the ones the pool fetch would
    read; reading stops once the embedding is there."""
    from reverie.read.pipeline import _READ_AHEAD_BATCH, _pool_records

    ids = list(_load(mem).values())
    more = [f"Note {n}: the {animal} at the shelter was adopted" for n, animal in enumerate(["cat", "dog"] * 10)]
    # stored verbatim (as _load stores the facts): the test needs every note as a memory of its own, to read
    ids += [r.id for r in mem.add_many(more, user_id="u", infer=False) if r.id is not None]
    assert len(ids) > _READ_AHEAD_BATCH
    pipe = ReadPipeline(mem.store, mem.embedder, mem.settings)
    asked = [*ids, "no-such-memory", ids[0]]
    early = pipe._read_ahead(asked, lambda: False)  # the embedding never arrives: everything is read ahead
    assert set(early) == set(ids)
    fetched = mem.store.get(ids)
    assert all(early[i].to_dict() == fetched[i].to_dict() for i in ids)
    assert pipe._read_ahead(asked, lambda: True) == {}  # the embedding is there: nothing is read ahead
    calls: list[int] = []

    def arrives_after_one_batch() -> bool:
        calls.append(1)
        return len(calls) > 1

    assert len(pipe._read_ahead(asked, arrives_after_one_batch)) == _READ_AHEAD_BATCH  # one batch, then it was there
    for part in (early, {}, {i: early[i] for i in ids[:3]}):
        pooled = _pool_records(mem.store, [*ids, "no-such-memory"], part)
        assert list(pooled) == ids
        assert all(pooled[i].to_dict() == fetched[i].to_dict() for i in ids)
