"""The merge dream step: clusters of 5+ near-identical memories still in use (not fading) merge into one
summary through the consolidation machinery — every member's words kept, members superseded into the cold
store and still found by a plain search. Mechanism on both backends; the MiniLM threshold calibrated on the
real model (paraphrase clusters merge, distinct facts do not)."""

from __future__ import annotations

from pathlib import Path

import pytest

from reverie import Memory, SettableClock
from reverie.dream.consolidate import META
from reverie.model import Layer, Status, StoreTier

PARAPHRASES = {
    "flight": [
        "My flight to Berlin leaves at 7 am on Friday.",
        "The Berlin flight departs Friday at 7 in the morning.",
        "I fly to Berlin on Friday, the plane leaves at 7am.",
        "Friday at 7 am my plane to Berlin takes off.",
        "My plane for Berlin is scheduled to leave Friday at seven am.",
        "I'm flying out to Berlin this Friday at 7 am.",
    ],
    "allergy": [
        "Maya is allergic to penicillin.",
        "Maya has a penicillin allergy.",
        "Penicillin gives Maya an allergic reaction.",
        "Maya can't take penicillin because she is allergic to it.",
        "Maya reacts badly to penicillin, she's allergic.",
        "Maya's allergy: penicillin.",
    ],
    "tea": [
        "I prefer green tea over coffee in the morning.",
        "In the mornings I'd rather drink green tea than coffee.",
        "Green tea, not coffee, is what I like to drink in the morning.",
        "My morning drink of choice is green tea instead of coffee.",
        "I like green tea better than coffee for breakfast.",
        "Mornings are for green tea; I don't care for coffee then.",
    ],
}
DISTINCT = {
    "cat": [
        "My cat Luna is four years old.",
        "Luna sleeps on the windowsill every afternoon.",
        "I bought Luna a new scratching post last week.",
        "Luna hates the vacuum cleaner.",
        "The vet said Luna needs a vaccine booster in May.",
        "Luna was adopted from a shelter in Lyon.",
    ],
    "work": [
        "I started a new job at a robotics startup in March.",
        "My manager at the startup is called Priya.",
        "The robotics team ships a new firmware every two weeks.",
        "I commute to the startup office by bike.",
        "Our startup raised a seed round of two million euros.",
        "I give a demo of the robot arm to investors on Monday.",
    ],
    "march": [
        "User went hiking at Mount Rainier on March 12, 2024",
        "User went kayaking at Lake Washington on March 15, 2024",
        "User ran a 5K in Fremont on March 20, 2024",
        "User went rock climbing at Stone Gardens on March 25, 2024",
        "User joined a cycling club on March 28, 2024",
        "User visited the Seattle aquarium on March 30, 2024",
    ],
}
#: distinct facts that share a long frame: e5 puts them at 0.933 to their best founder, just below its threshold
TRIP = [
    "Maya said the trip to Porto starts on June 3 with her sister Ana",
    "Maya said the trip to Porto includes a port wine tasting with her sister Ana",
    "Maya said the trip to Porto hotel is the Pestana by the river with her sister Ana",
    "Maya said the trip to Porto ends on June 9 with her sister Ana",
    "Maya said the trip to Porto needs a rental car for her sister Ana",
    "Maya said the trip to Porto costs 1200 euros for her and her sister Ana",
]
#: near-identical notes for the hash embedder (it only sees shared words)
NOTES = [
    f"The staging server for the billing service runs in the Frankfurt region{tail}"
    for tail in ("", " today", " as before", " since May", " on two machines", " for now")
]


def _settle(m: Memory, ids: list[str], clock: SettableClock) -> None:
    """Two days on: the memories are episodic, older than merge.min_age_days and far from fading."""
    clock.advance(hours=1)
    m.dream(steps=["promote"])
    clock.advance(days=2)
    for mid in ids:
        m.get(mid)  # in use


def test_near_identical_memories_in_use_merge_into_one_summary(make_memory, clock: SettableClock) -> None:
    m: Memory = make_memory()
    ids = [r.id for r in m.add_many(NOTES, user_id="u", infer=False)]
    other = [
        r.id
        for r in m.add_many(
            ["Lena lives in Hamburg with her two dogs", "The quarterly report is due on the 14th"],
            user_id="u",
            infer=False,
        )
    ]
    _settle(m, ids + other, clock)
    report = m.dream(steps=["merge"])["steps"][0]
    assert report["details"]["groups"] == 1 and report["details"]["members"] == 6
    assert report["changed"] == 7  # one summary, six members superseded
    recs = m.store.get(ids)
    (summary_id,) = {r.superseded_by for r in recs.values()}
    assert all(r.status is Status.SUPERSEDED and r.store is StoreTier.COLD for r in recs.values())
    summary = m.store.get([summary_id])[summary_id]
    assert summary.status is Status.ACTIVE and summary.store is StoreTier.HOT and summary.layer is Layer.EPISODIC
    info = summary.metadata[META]
    assert info["kind"] == "summary" and info["step"] == "merge" and sorted(info["members"]) == sorted(ids)
    for tail in ("today", "as before", "since May", "on two machines", "for now"):  # every member's words
        assert tail in summary.content
    assert all(r.status is Status.ACTIVE for r in m.store.get(other).values())
    # a plain search still reaches the facts
    hits = m.search("Frankfurt staging server since May", user_id="u", k=5)
    assert any("since May" in h.memory.content for h in hits)
    assert m.dream(steps=["merge"])["steps"][0]["changed"] == 0  # idempotent
    undone = m.undo_consolidation(summary_id)
    assert sorted(undone["restored"]) == sorted(ids)


def test_merge_leaves_fresh_fading_pinned_and_distinct_memories_alone(make_memory, clock: SettableClock) -> None:
    m: Memory = make_memory()
    fresh = [r.id for r in m.add_many(NOTES, user_id="fresh", infer=False)]
    clock.advance(hours=1)
    m.dream(steps=["promote"])
    assert m.dream(steps=["merge"])["steps"][0]["details"]["candidates"] == 0  # younger than a day

    pinned = [r.id for r in m.add_many(NOTES, user_id="pinned", infer=False)]
    for mid in pinned[:2]:
        m.pin(mid)  # four left: too few
    fading = [r.id for r in m.add_many(NOTES, user_id="fading", infer=False)]
    clock.advance(hours=1)
    m.dream(steps=["promote"])
    clock.advance(days=2)
    for mid in pinned:
        m.get(mid)
    clock.advance(days=200)  # the "fading" user's memories faded long ago: consolidate's, not merge's
    for mid in pinned:
        m.get(mid)
    report = m.dream(steps=["merge"])["steps"][0]
    assert report["changed"] == 0, report
    assert all(r.status is Status.ACTIVE for r in m.store.get(fresh + pinned + fading).values())
    m.dream(steps=["consolidate"])  # the faded ones are consolidation's
    assert all(r.status is Status.SUPERSEDED for r in m.store.get(fading).values())


@pytest.mark.model
@pytest.mark.parametrize(
    ("model", "threshold"), [pytest.param("minilm", 0.75, marks=pytest.mark.minilm), ("e5", 0.937)]
)
def test_local_model_merge_threshold_calibration(
    store_target: str, tmp_path: Path, clock: SettableClock, model: str, threshold: float
) -> None:
    """The local models at their merge.similarity profile: each set of six paraphrases of one fact becomes one
    summary; six distinct facts on one topic (a pet, a job, the consolidation design's March activities) stay
    apart. Measured: all-MiniLM-L6-v2 (0.75) — paraphrases 0.81–0.96 to their best founder, distinct facts at
    most 0.60; multilingual-e5-small (0.937, the default) — paraphrases at least 0.942 to their best founder, six
    distinct facts sharing a long frame (a trip) at 0.933, no five other distinct facts above 0.905 to one
    founder (cosines compressed into [0.8, 1]). MiniLM puts the trip facts among its paraphrases (0.81–0.82):
    only e5 is asked to keep them apart."""
    from reverie.embed import E5Embedder, MiniLMEmbedder

    embedder = MiniLMEmbedder() if model == "minilm" else E5Embedder()
    with Memory(
        store_target, config={"opslog": {"path": str(tmp_path / "ops.jsonl")}}, clock=clock, embedder=embedder
    ) as m:
        assert m.embedder.profile == model
        distinct = {**DISTINCT, **({"trip": TRIP} if model == "e5" else {})}
        groups = {**PARAPHRASES, **distinct}
        ids = {k: [r.id for r in m.add_many(v, user_id="u", infer=False)] for k, v in groups.items()}
        _settle(m, [i for v in ids.values() for i in v], clock)
        report = m.dream(steps=["merge"])["steps"][0]
        assert report["details"]["threshold"] == threshold
        assert report["details"]["groups"] == len(PARAPHRASES), report
        for name in PARAPHRASES:
            recs = m.store.get(ids[name])
            assert len({r.superseded_by for r in recs.values()}) == 1 and None not in {
                r.superseded_by for r in recs.values()
            }, name
            sid = next(iter(recs.values())).superseded_by
            assert sid is not None
            text = m.store.get([sid])[sid].content.casefold()
            for member in PARAPHRASES[name]:  # no fact lost: every member's words are in the summary
                words = {w.strip(".,;:'!?") for w in member.casefold().split()}
                assert all(w in text for w in words if len(w) >= 4), (name, member)
        for name in distinct:
            assert all(r.status is Status.ACTIVE for r in m.store.get(ids[name]).values()), name
        hit = m.search("what is Maya allergic to?", user_id="u", k=3)[0]
        assert "penicillin" in hit.memory.content
