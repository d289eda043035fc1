"""The lifecycle dream steps (issue 6) on both backends, on a settable clock, with the seeds' numbers.

Every step is checked for what it changes, what it leaves alone (pinned, immutable, flashbulb and
the seeds' other exemptions), its history events and idempotency (a second run at the same instant
changes nothing). The MiniLM calibration of the redundancy threshold is at the end (``model``).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from reverie import InvalidInputError, Layer, Memory, SettableClock, Status
from reverie.dream.drift import named_paths
from reverie.dream.forgetting import redundant
from reverie.dynamics import lifecycle as lifecycle_dyn
from reverie.dynamics import retention as retention_dyn
from reverie.dynamics import strength
from reverie.model import Relation, RelationType, StoreTier, TemporalType
from reverie.store.base import MemoryFilter, SynapticTag

EVERYTHING = MemoryFilter.everything()
NO_TICK = {"schedule": {"tick_every": 0}}


@pytest.fixture
def mem(make_memory) -> Memory:
    """A memory whose automatic maintenance tick (seed 003) is off: it would run some of these steps in put()."""
    return quiet(make_memory)


def quiet(make_memory, **config: Any) -> Memory:
    dream = {**NO_TICK, **config.pop("dream", {})}
    return make_memory(dream=dream, **config)


def put(mem: Memory, text: str, *, user: str = "u", **fields: Any) -> str:
    """A verbatim memory, then the fields a test needs (as the engine would have stored them)."""
    mid = mem.add(text, user_id=user, infer=False).id
    assert mid is not None
    if fields:
        mem.store.update_fields(mid, fields)
    return mid


def rec(mem: Memory, mid: str) -> Any:
    return mem.store.get([mid])[mid]


def step(report: Mapping[str, Any], name: str) -> dict[str, Any]:
    return next(s for s in report["steps"] if s["name"] == name)


def events(mem: Memory, mid: str, name: str) -> list[Any]:
    return [e for e in mem.store.history(mid) if e.event == name]


# -- emotional consolidation (seed 001 phase 2) ------------------------------------------------


def test_flashbulb_memories_get_their_consolidation_boost_once(mem: Memory, clock: SettableClock) -> None:
    encoded = put(
        mem,
        "the server caught fire during the launch",
        flashbulb=True,
        pinned=True,
        emotion_arousal=0.9,
        importance=0.95,
        stability=3.0,
    )
    untagged = put(mem, "restored: the day the database was lost", emotion_arousal=0.85, importance=0.4, stability=2.0)
    calm = put(mem, "a quiet afternoon of reading", emotion_arousal=0.2, stability=2.0)
    report = step(mem.dream(steps=["emotional"]), "emotional")
    assert report["changed"] == 2 and report["details"] == {"boosted": 2, "tagged": 1}
    a, b, c = rec(mem, encoded), rec(mem, untagged), rec(mem, calm)
    assert a.stability == pytest.approx(3.0 * 1.5) and b.stability == pytest.approx(2.0 * 1.5)
    assert (b.flashbulb, b.pinned, b.importance) == (True, True, 0.9)  # seed 001 flashbulb tags
    assert c.stability == 2.0 and not c.flashbulb
    ev = events(mem, untagged, "emotional_consolidation")
    assert ev and ev[0].data["tagged"] is True and ev[0].data["stability_before"] == 2.0
    clock.advance(days=3)
    again = step(mem.dream(steps=["emotional"]), "emotional")
    assert again["changed"] == 0 and rec(mem, encoded).stability == pytest.approx(4.5)


# -- synaptic replay (seed 001 phase 3) ----------------------------------------------------------


def test_replay_strengthens_coactivated_pairs_once_per_coactivation(mem: Memory, clock: SettableClock) -> None:
    a, b = put(mem, "staging deploy steps", stability=2.0), put(mem, "staging credentials rotate", stability=4.0)
    c, d = put(mem, "lunch menu", stability=2.0), put(mem, "parking rules", stability=2.0)
    mem.store.bump_coactivations([(a, b)] * 3 + [(c, d)] * 2, clock())
    ttl = timedelta(hours=4)
    mem.store.put_tags(
        [SynapticTag(c, "s1", clock() - 2 * ttl, clock() - ttl), SynapticTag(d, "s1", clock(), clock() + ttl)]
    )
    report = step(mem.dream(steps=["replay"]), "replay")
    assert report["details"] == {"pairs": 1, "strengthened": 2, "tags_removed": 1}
    assert rec(mem, a).stability == pytest.approx(2.0 * 1.02) and rec(mem, b).stability == pytest.approx(4.0 * 1.02)
    assert rec(mem, c).stability == 2.0  # co-retrieved only twice: below seed 001's 3
    assert [t.memory_id for t in mem.store.active_tags("s1", clock())] == [d]
    assert step(mem.dream(steps=["replay"]), "replay")["changed"] == 0  # idempotent
    clock.advance(hours=1)
    mem.store.bump_coactivations([(a, b)], clock())  # a new co-activation: replayed again
    assert step(mem.dream(steps=["replay"]), "replay")["details"]["strengthened"] == 2
    assert rec(mem, a).stability == pytest.approx(2.0 * 1.02 * 1.02)
    assert len(events(mem, a, "replayed")) == 2


# -- utility decay (seed 001 step 1, SEED-NOTES 5) ---------------------------------------------------


def test_utility_drifts_to_the_prior_without_compounding(mem: Memory, clock: SettableClock) -> None:
    high = put(mem, "a very useful memory", utility=0.9, utility_updated_at=clock())
    prior = put(mem, "a neutral memory", utility=0.5, utility_updated_at=clock())
    clock.advance(days=100)
    report = step(mem.dream(steps=["utility_decay"]), "utility_decay")
    assert report["changed"] == 1
    expected = 0.9 + (0.5 - 0.9) * (1 - math.exp(-0.01 * 100))
    assert rec(mem, high).utility == pytest.approx(expected) and rec(mem, prior).utility == 0.5
    assert rec(mem, high).utility_updated_at == clock()
    assert step(mem.dream(steps=["utility_decay"]), "utility_decay")["changed"] == 0
    clock.advance(days=100)
    mem.dream(steps=["utility_decay"])
    assert rec(mem, high).utility == pytest.approx(0.9 + (0.5 - 0.9) * (1 - math.exp(-0.01 * 200)))


# -- rehearsal (seed 001 testing effect) ---------------------------------------------------------------


def test_rehearsal_boosts_the_most_endangered_within_the_cap(make_memory, clock: SettableClock) -> None:
    m = quiet(make_memory, dream={"forgetting": {"rehearse_max": 2}})
    past = clock() - timedelta(days=100)
    ids = {
        s: put(m, f"fading fact number {i}", stability=s, last_accessed_at=past)
        for i, s in enumerate((0.01, 0.02, 0.03))
    }
    safe = put(m, "a well learned fact", stability=30.0, last_accessed_at=past)
    fsrs = m.settings.dynamics.fsrs
    r = {s: strength.retrieval_strength(elapsed_days=100, stability=s, cfg=fsrs) for s in ids}
    assert all(v < 0.3 for v in r.values())  # seed 001: endangered below R = 0.3
    # the retrieval strength the engine applies: FSRS R times the category decay at the tier's rate
    applied = {s: strength.retrieval_strength_of(rec(m, ids[s]), now=clock(), cfg=m.settings.dynamics) for s in ids}
    report = step(m.dream(steps=["rehearse"]), "rehearse")
    assert report["changed"] == 2 and report["details"]["candidates"] == 2
    assert rec(m, ids[0.01]).stability == pytest.approx(0.015) and rec(m, ids[0.02]).stability == pytest.approx(0.03)
    assert rec(m, ids[0.03]).stability == 0.03 and rec(m, safe).stability == 30.0  # the least endangered waits
    ev = events(m, ids[0.01], "rehearsed")[0]
    assert ev.data["retrievability_before"] == pytest.approx(applied[0.01])
    assert rec(m, ids[0.01]).retrieval_strength == pytest.approx(ev.data["retrievability_after"])
    second = step(m.dream(steps=["rehearse"]), "rehearse")  # same day: the two are not boosted again
    # the least endangered now; the well learned fact is endangered by its category's decay alone (100 days):
    # rehearsed without a stability boost, its category decay restarted
    assert second["changed"] == 2 and rec(m, ids[0.03]).stability == pytest.approx(0.045)
    assert rec(m, safe).stability == 30.0 and events(m, safe, "rehearsed")
    assert rec(m, ids[0.01]).stability == pytest.approx(0.015)


# -- foresight expiry (seed 001 step 3) and seed 004 expiry rules -----------------------------------------


def test_foresight_speculative_and_commitment_expiry(mem: Memory, clock: SettableClock) -> None:
    now = clock()
    plan = put(
        mem,
        "user plans to visit Lisbon next week",
        temporal_type=TemporalType.TIME_BOUNDED,
        valid_until=now - timedelta(hours=1),
    )
    future = put(
        mem,
        "user will move offices in June",
        temporal_type=TemporalType.TIME_BOUNDED,
        valid_until=now + timedelta(days=30),
    )
    pinned_plan = put(
        mem,
        "pinned plan that ended",
        temporal_type=TemporalType.TIME_BOUNDED,
        valid_until=now - timedelta(days=1),
        pinned=True,
    )
    guess = put(mem, "user might like jazz", confidence=0.3, created_at=now - timedelta(days=31))
    young_guess = put(mem, "user might like opera", confidence=0.3, created_at=now - timedelta(days=29))
    confirmed = put(mem, "user might like blues", confidence=0.3, confirmations=1, created_at=now - timedelta(days=40))
    done = put(
        mem,
        "promised to send the report",
        category="commitment",
        metadata={"commitment_state": "fulfilled", "resolved_at": (now - timedelta(days=91)).isoformat()},
    )
    open_ = put(mem, "promised to review the PR", category="commitment", created_at=now - timedelta(days=200))
    report = step(mem.dream(steps=["foresight"]), "foresight")
    assert report["details"] == {"foresight": 1, "speculative": 1, "commitment": 1, "protected": 1}
    got = mem.store.get([plan, future, pinned_plan, guess, young_guess, confirmed, done, open_])
    assert got[plan].status is Status.SUPERSEDED and got[guess].status is Status.EXPIRED
    assert got[done].status is Status.EXPIRED
    assert all(got[i].status is Status.ACTIVE for i in (future, pinned_plan, young_guess, confirmed, open_))
    assert events(mem, guess, "expired")[0].data == {"rule": "speculative"}
    assert step(mem.dream(steps=["foresight"]), "foresight")["changed"] == 0


# -- redundancy (seed 001 step 7) -------------------------------------------------------------------------


def test_redundancy_keeps_the_higher_utility_duplicate(make_memory, clock: SettableClock) -> None:
    m = quiet(make_memory)
    clock.advance(days=-20)  # written 20 days ago: past seed 001's 14-day minimum retention of facts
    keep = put(m, "Deployed v2.1 on March 28", user="a", utility=0.8, utility_updated_at=clock())
    dup = put(m, "v2.1 was deployed on March 28", user="a", utility=0.3, utility_updated_at=clock())
    old = put(m, "User's favorite database is PostgreSQL", user="b", utility=0.3, utility_updated_at=clock())
    put(m, "User's favorite database is MySQL", user="b", utility=0.8, utility_updated_at=clock())
    short = put(m, "Caroline went to the LGBTQ support group on 7 May 2023", user="c", utility=0.8)
    longer = put(
        m,
        "Caroline went to the LGBTQ support group on 7 May 2023 and found it powerful and inspiring",
        user="c",
        utility=0.3,
    )
    pinned = put(m, "v2.1 was deployed on March 28", user="d", utility=0.1, pinned=True)
    put(m, "Deployed v2.1 on March 28", user="d", utility=0.9)
    young = put(m, "Deployed v2.1 on March 28", user="e", utility=0.9, created_at=clock() + timedelta(days=10))
    put(m, "v2.1 was deployed on March 28", user="e", utility=0.1, created_at=clock() + timedelta(days=10))
    clock.advance(days=20)
    report = step(m.dream(steps=["redundancy"]), "redundancy")
    assert report["changed"] == 1 and report["details"]["threshold"] == 0.78  # the hash profile's
    got = m.store.get([keep, dup, old, short, longer, pinned, young])
    assert (got[dup].status, got[dup].store) == (Status.DORMANT, StoreTier.COLD)
    assert got[dup].metadata["redundant_with"] == keep
    # a changed value is a contradiction, an elaboration adds detail, a pinned memory is never forgotten,
    # a 10-day-old fact is within seed 001's minimum retention
    assert all(got[i].status is Status.ACTIVE for i in (keep, old, short, longer, pinned, young))
    ev = events(m, dup, "forgotten")[0]
    assert ev.data["rule"] == "redundancy" and ev.data["kept"] == keep and ev.data["similarity"] > 0.78
    assert step(m.dream(steps=["redundancy"]), "redundancy")["changed"] == 0


def test_redundancy_comparisons_are_capped_per_cycle_and_resume(make_memory, clock: SettableClock) -> None:
    m = quiet(make_memory, dream={"forgetting": {"redundancy_max_comparisons": 2}})
    clock.advance(days=-20)
    for user in "abc":
        put(m, "Deployed v2.1 on March 28", user=user, utility=0.9)
        put(m, "v2.1 was deployed on March 28", user=user, utility=0.2)
    clock.advance(days=20)
    first = step(m.dream(steps=["redundancy", "forget"]), "redundancy")
    assert first["details"]["compared"] == 2  # the forget step's rule 4 shares the cycle's budget
    dormant = lambda: m.store.count(MemoryFilter.everything(statuses=frozenset({Status.DORMANT})))  # noqa: E731
    seen = dormant()
    assert 1 <= seen <= 2
    for _ in range(3):
        m.dream(steps=["redundancy"])
    assert dormant() == 3  # the cursor resumed where each cycle stopped


# -- strategic forgetting (seed 001: five ordered rules) --------------------------------------------------


def test_forget_rules_contradiction_foresight_and_utility_floor(mem: Memory, clock: SettableClock) -> None:
    now = clock()
    older = put(mem, "the office is in Berlin", created_at=now - timedelta(days=20))
    newer = put(mem, "the office is in Munich", created_at=now - timedelta(days=2))
    anchored_old = put(mem, "the team lead is Ana", pinned=True, created_at=now - timedelta(days=20))
    other_new = put(mem, "the team lead is Bo", created_at=now - timedelta(days=1))
    mem.store.add_relations(
        [Relation(newer, older, RelationType.CONTRADICTS), Relation(other_new, anchored_old, RelationType.CONTRADICTS)]
    )
    ended = put(
        mem,
        "trip to Porto this weekend",
        temporal_type=TemporalType.TIME_BOUNDED,
        valid_until=now - timedelta(days=1),
        created_at=now - timedelta(days=15),
    )
    idle = put(
        mem,
        "an unused fact",
        utility=0.0,
        utility_updated_at=now - timedelta(days=31),
        last_accessed_at=now - timedelta(days=31),
        created_at=now - timedelta(days=31),
    )
    recent = put(
        mem,
        "a recently unused fact",
        utility=0.0,
        utility_updated_at=now - timedelta(days=29),
        last_accessed_at=now - timedelta(days=29),
        created_at=now - timedelta(days=40),
    )
    permanent = put(
        mem,
        "user prefers tea",
        category="preference",
        utility=0.0,
        utility_updated_at=now - timedelta(days=90),
        created_at=now - timedelta(days=90),
    )
    flash = put(
        mem,
        "the outage that took everything down",
        flashbulb=True,
        utility=0.0,
        utility_updated_at=now - timedelta(days=90),
        created_at=now - timedelta(days=90),
    )
    report = step(mem.dream(steps=["forget"]), "forget")
    assert report["details"]["rules"] == {
        "contradiction": 1,
        "foresight": 1,
        "utility_floor": 1,
        "redundancy": 0,
        "capacity": 0,
    }
    got = mem.store.get([older, newer, anchored_old, ended, idle, recent, permanent, flash])
    for mid in (older, ended, idle):
        assert (got[mid].status, got[mid].store) == (Status.DORMANT, StoreTier.COLD)
    for mid in (newer, anchored_old, recent, permanent, flash):
        assert got[mid].status is Status.ACTIVE
    assert [e.data["rule"] for e in events(mem, idle, "forgotten")] == ["utility_floor"]
    assert events(mem, older, "forgotten")[0].data["newer"] == newer
    assert step(mem.dream(steps=["forget"]), "forget")["changed"] == 0


def test_capacity_trim_per_user_scope(make_memory, clock: SettableClock) -> None:
    m = quiet(make_memory, dream={"forgetting": {"capacity_max": 5, "capacity_target": 3}})
    clock.advance(days=-20)
    ids = [
        put(m, f"memory {i} of a busy user", user="busy", utility=i / 10, utility_updated_at=clock()) for i in range(7)
    ]
    anchor = put(m, "a pinned memory of a busy user", user="busy", utility=0.0, pinned=True)
    calm = [put(m, f"memory {i} of a calm user", user="calm", utility=0.0) for i in range(4)]
    clock.advance(days=20)
    report = step(m.dream(steps=["forget"]), "forget")
    assert report["details"]["rules"]["capacity"] == 5  # 8 active > 5: down to 3, the pinned one stays
    got = m.store.get([*ids, anchor, *calm])
    assert [got[i].status for i in ids] == [Status.DORMANT] * 5 + [Status.ACTIVE] * 2  # lowest utility first
    assert got[anchor].status is Status.ACTIVE and all(got[i].status is Status.ACTIVE for i in calm)
    assert m.store.count(MemoryFilter(user_id="busy")) == 3
    assert step(m.dream(steps=["forget"]), "forget")["changed"] == 0


def test_forgotten_memories_can_be_reactivated(mem: Memory, clock: SettableClock) -> None:
    idle = put(
        mem,
        "an unused fact",
        utility=0.0,
        utility_updated_at=clock() - timedelta(days=31),
        created_at=clock() - timedelta(days=40),
    )
    mem.dream(steps=["forget"])
    assert rec(mem, idle).status is Status.DORMANT
    # cold, yet never unreachable: with nothing in the hot store that matches, search looks in the cold store
    found = mem.search("unused fact", user_id="u")
    assert [h.memory.id for h in found] == [idle] and found[0].explain["stage"] == "cold"
    back = mem.reactivate(idle)
    assert (back.status, back.store, back.access_count) == (Status.ACTIVE, StoreTier.HOT, 2)
    assert events(mem, idle, "reactivated")[0].data == {"from_status": "dormant", "from_store": "cold"}
    again = mem.search("unused fact", user_id="u")
    assert again[0].memory.id == idle and again[0].explain["stage"] == "hybrid"
    assert mem.reactivate(idle).id == idle  # already active and hot: unchanged
    mem.dream(steps=["forget"])  # the reactivation was an access: not unused any more
    assert rec(mem, idle).status is Status.ACTIVE
    superseded = put(mem, "an outdated fact", status=Status.SUPERSEDED)
    with pytest.raises(InvalidInputError):
        mem.reactivate(superseded)


def test_claimed_memories_are_left_to_the_other_dreamer(mem: Memory, clock: SettableClock) -> None:
    a = put(
        mem,
        "unused fact one",
        utility=0.0,
        created_at=clock() - timedelta(days=40),
        utility_updated_at=clock() - timedelta(days=31),
    )
    b = put(
        mem,
        "unused fact two",
        utility=0.0,
        created_at=clock() - timedelta(days=40),
        utility_updated_at=clock() - timedelta(days=31),
    )
    assert mem.store.claim([a], owner="other-process", phase="forget", now=clock(), ttl_seconds=600) == [a]
    mem.dream(steps=["forget"])
    assert rec(mem, a).status is Status.ACTIVE and rec(mem, b).status is Status.DORMANT
    mem.store.release("other-process")
    mem.dream(steps=["forget"])
    assert rec(mem, a).status is Status.DORMANT


# -- co-activation clusters (seed 000) -------------------------------------------------------------------


def test_coactivation_clusters_form_grow_and_merge(mem: Memory, clock: SettableClock) -> None:
    a, b, c, d, e, f, g = (put(mem, f"clustered memory {x}") for x in "abcdefg")
    bump = mem.store.bump_coactivations
    bump([(a, b)] * 4 + [(b, c)] * 4 + [(d, e)] * 3, clock())
    report = step(mem.dream(steps=["cluster"]), "cluster")
    assert report["details"] == {"clusters": 1, "created": 1, "updated": 0, "merged": 0}
    (abc,) = mem.store.clusters("u", kind="coactivation")  # weight 3 is not > 3: d and e stay out
    assert abc.members == {a: 4.0, b: 4.0, c: 4.0} and abc.metadata["strength"] == 4
    assert events(mem, a, "clustered")[0].data == {"cluster": abc.id}
    assert step(mem.dream(steps=["cluster"]), "cluster")["changed"] == 0
    clock.advance(hours=1)
    bump([(f, g)] * 5, clock())
    assert step(mem.dream(steps=["cluster"]), "cluster")["details"]["created"] == 1
    assert len(mem.store.clusters("u", kind="coactivation")) == 2
    clock.advance(hours=1)
    bump([(d, e), (c, d), (c, d), (c, d), (c, d), (e, f), (e, f), (e, f), (e, f)], clock())
    grown = step(mem.dream(steps=["cluster"]), "cluster")
    assert grown["details"] == {"clusters": 1, "created": 0, "updated": 1, "merged": 1}
    (one,) = mem.store.clusters("u", kind="coactivation")
    assert one.id == abc.id and set(one.members) == {a, b, c, d, e, f, g}  # the oldest cluster absorbs
    assert one.members[f] == 5.0 and events(mem, f, "clustered")[-1].data == {"cluster": abc.id}


# -- drift detection (seed 002 step 6) ---------------------------------------------------------------------


def test_named_paths_are_conservative(tmp_path: Path) -> None:
    text = (
        "see https://example.com/docs/a.html and/or 3/4/2024, run /help, the file /etc/app/config.yaml. "
        "Also src/app/main.py and ~/notes/todo.md"
    )
    found = named_paths(text, None)
    assert "/etc/app/config.yaml" in found and not any("example.com" in p or p == "/help" for p in found)
    assert not any(p.endswith("main.py") for p in found) and any(p.endswith("notes/todo.md") for p in found)
    rooted = named_paths(text, str(tmp_path))
    assert str(tmp_path / "src/app/main.py") in rooted and "/4/2024" not in rooted
    assert named_paths("no paths here", str(tmp_path)) == []


def test_drift_invalidates_memories_whose_files_disappeared(
    make_memory,
    clock: SettableClock,
    tmp_path: Path,
) -> None:
    root = tmp_path / "project"
    (root / "conf").mkdir(parents=True)
    config = root / "conf" / "app.yaml"
    config.write_text("debug: true\n")
    kept = root / "README.md"
    kept.write_text("hello\n")
    m = quiet(make_memory, dream={"forgetting": {"drift_project_root": str(root)}})
    absolute = put(m, f"The service reads its settings from {config}.")
    relative = put(m, "Logging is configured in conf/app.yaml for the service")
    stays = put(m, f"The readme lives at {kept}")
    foreign = put(m, "On the build server the cache is in /srv/never/existed/cache.db")
    pinned = put(m, f"Pinned: settings in {config}", pinned=True)
    first = step(m.dream(steps=["drift"]), "drift")
    assert first["details"] == {"invalidated": 0, "recorded": 4, "protected": 0}
    assert rec(m, absolute).metadata["drift_seen"] == [str(config)]
    assert step(m.dream(steps=["drift"]), "drift")["details"]["recorded"] == 0  # idempotent
    config.unlink()
    second = step(m.dream(steps=["drift"]), "drift")
    assert second["details"] == {"invalidated": 2, "recorded": 0, "protected": 1}
    got = m.store.get([absolute, relative, stays, foreign, pinned])
    assert got[absolute].status is Status.INVALIDATED and got[relative].status is Status.INVALIDATED
    assert got[absolute].valid_until == clock() and got[absolute].metadata["drift_missing"] == [str(config)]
    assert all(got[i].status is Status.ACTIVE for i in (stays, foreign, pinned))  # never-seen paths are not dead
    assert events(m, absolute, "invalidated")[0].data == {"rule": "drift", "missing": [str(config)]}
    assert step(m.dream(steps=["drift"]), "drift")["changed"] == 0


# -- archival (seed 002, seed 004) ----------------------------------------------------------------------------


def test_archival_by_seed_002_rule_with_exemptions(mem: Memory, clock: SettableClock) -> None:
    old = clock() - timedelta(days=100)
    common: dict[str, Any] = {"created_at": old, "importance": 0.2, "layer": Layer.EPISODIC}
    faded = put(mem, "a faded episode", **common)
    semantic = put(mem, "a faded semantic fact", **{**common, "layer": Layer.SEMANTIC})
    pinned = put(mem, "a faded pinned episode", pinned=True, **common)
    important = put(mem, "a faded important episode", **{**common, "importance": 0.5})
    accessed = put(mem, "a faded accessed episode", access_count=3, **common)
    preference = put(mem, "a faded preference", category="preference", **common)
    young = put(mem, "a young episode", **{**common, "created_at": clock() - timedelta(days=80)})
    report = step(mem.dream(steps=["archive"]), "archive")
    assert report["details"]["faded"] == 1 and report["changed"] == 1
    got = mem.store.get([faded, semantic, pinned, important, accessed, preference, young])
    assert (got[faded].status, got[faded].store) == (Status.ARCHIVED, StoreTier.COLD)
    assert all(got[i].status is Status.ACTIVE for i in (semantic, pinned, important, accessed, preference, young))
    ev = events(mem, faded, "archived")[0]
    assert ev.data["rule"] == "faded" and ev.data["retention"] < 0.15
    assert ev.reason == "archival: > 90 days, retention < 0.15, importance < 0.3, < 3 accesses"
    assert step(mem.dream(steps=["archive"]), "archive")["changed"] == 0


def test_archival_by_the_nine_factor_importance(make_memory, clock: SettableClock) -> None:
    """With ``archive_importance_measure = "nine_factor"`` the rule's importance is the layered-memory design's
    nine-factor one, whose base is the importance at write moved by the write-time surprise: two memories alike
    but for their surprise part ways, and the archived one's history carries the importance it was judged by."""
    m = quiet(make_memory, dynamics={"promotion": {"archive_importance_measure": "nine_factor"}})
    common: dict[str, Any] = {
        "created_at": clock() - timedelta(days=100),
        "layer": Layer.EPISODIC,
        "importance": 0.9,
        "confirmations": 2,
        "importance_channels": {},
    }
    novel = put(m, "a faded novel episode", surprise=0.95, **common)
    redundant = put(m, "a faded redundant episode", surprise=0.05, **common)
    report = step(m.dream(steps=["archive"]), "archive")
    assert report["details"]["faded"] == 1
    got = m.store.get([novel, redundant])
    assert got[novel].status is Status.ACTIVE
    assert (got[redundant].status, got[redundant].store) == (Status.ARCHIVED, StoreTier.COLD)
    judged = events(m, redundant, "archived")[0].data["importance"]
    assert judged < 0.3 and judged != 0.9
    shown = m.explain_strength(novel)["importance_9factor"]["value"]
    assert shown >= 0.3


def test_seed_004_fact_archival_and_lifecycle_policy(make_memory, clock: SettableClock) -> None:
    m = quiet(make_memory, dream={"forgetting": {"fact_archival": True, "lifecycle_policy": True}})
    old = clock() - timedelta(days=100)
    fact = put(m, "an old semantic fact", layer=Layer.SEMANTIC, created_at=old, importance=0.2, access_count=2)
    decision = put(m, "an old decision", layer=Layer.SEMANTIC, category="decision", created_at=old, importance=0.2)
    stale = put(
        m,
        "an old unused fact",
        layer=Layer.SEMANTIC,
        created_at=clock() - timedelta(days=200),
        importance=0.5,
        confidence=0.5,
    )
    fresh = put(
        m,
        "a fresh, used fact",
        layer=Layer.SEMANTIC,
        importance=0.9,
        access_count=20,
        last_accessed_at=clock(),
        verification_state="user_confirmed",
    )
    report = step(m.dream(steps=["archive"]), "archive")
    assert report["details"]["stale_fact"] == 1
    got = m.store.get([fact, decision, stale, fresh])
    assert got[fact].status is Status.ARCHIVED and got[decision].status is Status.ACTIVE
    lc = m.settings.dynamics.lifecycle
    s = got[stale]
    heat = lifecycle_dyn.heat(confidence=0.5, access_count=0, age_days=200, importance=0.5, cfg=lc)
    decay = lifecycle_dyn.decay_score(age_days=200, stale_access_days=200, confidence=0.5, heat_score=heat, cfg=lc)
    assert s.heat_score == pytest.approx(heat) and s.decay_score == pytest.approx(decay)
    assert (
        s.lifecycle_state
        == lifecycle_dyn.lifecycle_transition(
            current_state="active",
            heat_score=heat,
            decay=decay,
            verification_state="unverified",
            category="fact",
            policy_class="durable",
            cfg=lc,
        )[0]
        == "stale"
    )
    assert got[fresh].lifecycle_state == "active" and got[fresh].heat_score is not None
    assert events(m, stale, "lifecycle")[0].data["to"] == "stale"
    assert step(m.dream(steps=["archive"]), "archive")["changed"] == 0


# -- cold migration (seed 003, SEED-NOTES 11) -------------------------------------------------------------------


def test_cold_migration_by_timestamps(mem: Memory, clock: SettableClock) -> None:
    now = clock()
    cfg = mem.settings.dynamics
    # fading retention: S = 0.5 (never recalled), B = 1 + 2·0.5, β = 45 days → exp(-t/45) reaches the 0.02
    # floor (+0.001) at 174 days
    s_new = cfg.retention.fading_stability_new
    reach = -(s_new * 2.0 * 45.0) * math.log(0.02 + 0.001)
    assert (
        retention_dyn.fading_retention(
            days=reach + 0.01, stability=s_new, importance=0.5, beta_days=45.0, core=False, cfg=cfg.retention
        )
        < 0.021
    )
    common: dict[str, Any] = {"layer": Layer.EPISODIC, "importance": 0.5, "storage_strength": 1.0}
    gone = put(mem, "long untouched episode", last_accessed_at=now - timedelta(days=reach + 7.1), **common)
    waiting = put(mem, "recently floored episode", last_accessed_at=now - timedelta(days=reach + 6.9), **common)
    core = put(mem, "untouched core memory", core=True, last_accessed_at=now - timedelta(days=300), **common)
    pinned = put(mem, "untouched pinned memory", pinned=True, last_accessed_at=now - timedelta(days=300), **common)
    dormant = put(mem, "dormant but still hot", status=Status.DORMANT)
    report = step(mem.dream(steps=["cold_migration"]), "cold_migration")
    assert report["details"] == {"status": 1, "retention_floor": 1, "low_value": 0, "high_value": 0}
    got = mem.store.get([gone, waiting, core, pinned, dormant])
    assert got[gone].store is StoreTier.COLD and got[gone].status is Status.ACTIVE
    assert got[dormant].store is StoreTier.COLD
    assert all(got[i].store is StoreTier.HOT for i in (waiting, core, pinned))
    assert events(mem, gone, "cold_migrated")[0].data == {"rule": "retention_floor"}
    assert step(mem.dream(steps=["cold_migration"]), "cold_migration")["changed"] == 0
    clock.advance(hours=6)
    assert step(mem.dream(steps=["cold_migration"]), "cold_migration")["details"]["retention_floor"] == 1


def test_seed_004_tier_routing_is_opt_in(make_memory, clock: SettableClock) -> None:
    m = quiet(
        make_memory,
        dream={"forgetting": {"tier_routing": True}},
        dynamics={"retention": {"beta_days": {"episodic": float("inf")}}},
    )
    low = put(
        m,
        "a low value memory",
        layer=Layer.EPISODIC,
        importance=0.0,
        confidence=0.3,
        utility=0.0,
        created_at=clock() - timedelta(days=20),
        last_accessed_at=clock() - timedelta(days=20),
    )
    high = put(
        m,
        "a valuable cold memory",
        store=StoreTier.COLD,
        importance=1.0,
        access_count=20,
        utility=1.0,
        last_accessed_at=clock(),
    )
    report = step(m.dream(steps=["cold_migration"]), "cold_migration")
    assert (report["details"]["low_value"], report["details"]["high_value"]) == (1, 1)
    assert rec(m, low).store is StoreTier.COLD and rec(m, high).store is StoreTier.HOT
    assert events(m, high, "hot_migrated")[0].data == {"rule": "high_value"}


# -- graph-edge confidence decay (seed 004) and relation pruning (seed 001) ---------------------------------------


def test_edge_decay_is_materialised_without_compounding(mem: Memory, clock: SettableClock) -> None:
    a, b = put(mem, "edge end a"), put(mem, "edge end b")
    start = clock()
    rel = Relation(a, b, RelationType.RELATED_TO, confidence=0.7, created_at=start)
    mem.store.add_relations([rel])
    lc = mem.settings.dynamics.lifecycle

    def lazy(conf: float, anchor: Any, at: Any) -> float:
        return lifecycle_dyn.edge_confidence_at(confidence=conf, last_reinforced_at=anchor, now=at, cfg=lc)

    clock.advance(days=89)
    assert step(mem.dream(steps=["edge_decay"]), "edge_decay")["changed"] == 0  # inside the 90-day grace
    clock.advance(days=111)  # day 200: two started windows after the grace → 0.7 - 0.2
    report = step(mem.dream(steps=["edge_decay"]), "edge_decay")
    assert report["details"]["decayed"] == 1
    (stored,) = mem.store.relations([a])
    assert stored.confidence == pytest.approx(0.5)
    for later in (0, 30, 70, 100, 400):  # lazy readers see the same value from the stored pair
        at = clock() + timedelta(days=later)
        assert lazy(stored.confidence, stored.last_reinforced_at, at) == pytest.approx(lazy(0.7, start, at))
    assert step(mem.dream(steps=["edge_decay"]), "edge_decay")["changed"] == 0
    clock.advance(days=100)  # day 300: 0.4 (not 0.3: nothing compounds)
    mem.dream(steps=["edge_decay"])
    assert mem.store.relations([a])[0].confidence == pytest.approx(0.4)
    assert mem.store.relations([a])[0].metadata["observed_at"] == start.isoformat()


def test_relation_pruning_never_touches_structural_types(make_memory, clock: SettableClock) -> None:
    m = quiet(make_memory, write={"relations": {"prune_at": 1, "prune_to": 1}})
    ids = [put(m, f"node {i}") for i in range(5)]
    rels = [
        Relation(ids[0], ids[1], RelationType.SUPERSEDES, confidence=0.1),
        Relation(ids[1], ids[2], RelationType.CAUSES, confidence=0.1),
        Relation(ids[2], ids[3], RelationType.RELATED_TO, confidence=0.4),
        Relation(ids[3], ids[4], RelationType.SAME_ENTITY, confidence=0.7),
    ]
    m.store.add_relations(rels)
    report = step(m.dream(steps=["edge_decay"]), "edge_decay")
    # only prunable relations count: 2 > 1, down to 1 (the lowest priority, related_to, goes); supersedes
    # and causes are neither counted nor pruned
    assert report["details"]["pruned"] == 1
    left = {r.type for r in m.store.relations(ids)}
    assert left == {RelationType.SUPERSEDES, RelationType.CAUSES, RelationType.SAME_ENTITY}


# -- prune (seed 002 step 7) ---------------------------------------------------------------------------------


def test_prune_removes_expired_claims_and_tags_but_never_history(mem: Memory, clock: SettableClock) -> None:
    mid = put(mem, "a memory with leftovers")
    mem.store.claim([mid], owner="crashed", phase="forget", now=clock() - timedelta(hours=2), ttl_seconds=60)
    mem.store.put_tags([SynapticTag(mid, "s", clock() - timedelta(hours=9), clock() - timedelta(hours=5))])
    before = len(mem.store.history(mid))
    report = step(mem.dream(steps=["prune"]), "prune")
    assert (report["details"]["expired_claims"], report["details"]["expired_tags"]) == (1, 1)
    assert mem.store.claim([mid], owner="me", phase="p", now=clock(), ttl_seconds=60) == [mid]
    assert len(mem.store.history(mid)) == before


# -- the pass reads light records: every rule must give the same verdict on them ----------------------------------


def test_every_rule_gives_the_same_verdict_on_light_records(
    make_memory,
    clock: SettableClock,
    tmp_path: Path,
) -> None:
    import random

    from reverie.dream import DreamContext, archival, drift, forgetting, reinforce, scope_pass
    from reverie.model import Layer as L
    from reverie.model import MemoryRecord

    m = quiet(
        make_memory,
        dream={
            "forgetting": {
                "fact_archival": True,
                "lifecycle_policy": True,
                "tier_routing": True,
                "drift_project_root": str(tmp_path),
            }
        },
    )
    (tmp_path / "a.txt").write_text("x")
    rng = random.Random(5)
    now = clock()
    records = []
    for i in range(300):
        created = now - timedelta(days=rng.uniform(0, 300))
        records.append(
            MemoryRecord(
                f"memory {i} about {rng.choice(['/etc/hosts', str(tmp_path / 'a.txt'), 'src/x.py', 'tea'])}",
                layer=rng.choice(list(L)),
                status=rng.choice(list(Status)),
                store=rng.choice(list(StoreTier)),
                category=rng.choice(["fact", "preference", "commitment", "decision", "other", "correction"]),
                temporal_type=rng.choice(list(TemporalType)),
                valid_until=rng.choice([None, now + timedelta(days=rng.uniform(-9, 9))]),
                confidence=rng.choice([0.3, 0.6, 1.0]),
                confirmations=rng.choice([0, 1]),
                utility=rng.choice([0.0, rng.random()]),
                utility_updated_at=rng.choice([None, created, now]),
                stability=rng.choice([0.01, 0.02, 1.0, 40.0]),
                importance=rng.random(),
                storage_strength=rng.uniform(1, 10),
                emotion_arousal=rng.random(),
                flashbulb=rng.random() < 0.2,
                pinned=rng.random() < 0.1,
                immutable=rng.random() < 0.1,
                core=rng.random() < 0.1,
                access_count=rng.choice([0, 1, 2, 5, 20]),
                created_at=created,
                updated_at=created,
                last_accessed_at=rng.choice([None, created + timedelta(days=rng.uniform(0, 5))]),
                verification_state=rng.choice(["unverified", "user_confirmed", "disputed"]),
                heat_score=rng.choice([None, 0.5]),
                decay_score=rng.choice([None, 0.5]),
                lifecycle_state=rng.choice(["active", "candidate", "stale"]),
                trust=rng.choice([0.4, 0.6, 1.0]),
                metadata=rng.choice(
                    [
                        {},
                        {"commitment_state": "fulfilled"},
                        {reinforce.REHEARSAL_MARK: now.isoformat()},
                        {drift.DRIFT_SEEN: ["/gone/for/good"]},
                    ]
                ),
                embedding=m.embedder.embed([f"memory {i}"])[0],
            )
        )
    old = now - timedelta(days=100)
    records += [
        MemoryRecord("an unused fact", utility=0.0, utility_updated_at=now, created_at=old),
        MemoryRecord("a faded episode", layer=L.EPISODIC, importance=0.1, created_at=old),
        MemoryRecord("a floored episode", layer=L.EPISODIC, created_at=old, utility=0.9),
    ]
    m.store.insert(records)
    ctx = DreamContext(store=m.store, settings=m.settings, now=now, owner="verdicts", profile="hash")
    full = {r.id: r for b in m.store.scan(EVERYTHING) for r in b}
    light = {r.id: r for b in m.store.scan(EVERYTHING, omit=scope_pass.LIGHT_OMIT) for r in b}
    rules = [
        reinforce._wants_emotional,
        reinforce._utility_change,
        reinforce._endangered,
        forgetting._expiry_kind,
        forgetting._below_utility_floor,
        archival._archive_rule,
        archival._lifecycle_change,
        archival._cold_rule,
        scope_pass.forget_protection,
        forgetting._keep_order,
    ]
    verdicts: Counter[str] = Counter()
    for mid, record in full.items():
        for rule in rules:
            verdict = rule(ctx, light[mid])
            assert verdict == rule(ctx, record), (rule.__name__, record)
            verdicts[rule.__name__] += verdict is not None and verdict is not False
        assert drift._drift_check(light[mid], str(tmp_path), 20) == drift._drift_check(record, str(tmp_path), 20)
    assert all(verdicts[r.__name__] > 0 for r in rules), verdicts  # the population exercises every rule


# -- the whole cycle ---------------------------------------------------------------------------------------------


def test_default_cycle_runs_every_lifecycle_step_idempotently(mem: Memory, clock: SettableClock) -> None:
    names = [
        "emotional",
        "replay",
        "utility_decay",
        "rehearse",
        "foresight",
        "redundancy",
        "forget",
        "cluster",
        "drift",
        "archive",
        "cold_migration",
        "edge_decay",
    ]
    steps = mem.settings.dream.steps
    assert [n for n in steps if n in names] == names
    assert steps.index("emotional") < steps.index("promote") < steps.index("utility_decay")
    put(mem, "a flashbulb memory", flashbulb=True, emotion_arousal=0.9)
    put(
        mem,
        "an unused memory",
        utility=0.0,
        created_at=clock() - timedelta(days=60),
        utility_updated_at=clock() - timedelta(days=60),
    )
    put(mem, "an ended plan", temporal_type=TemporalType.TIME_BOUNDED, valid_until=clock() - timedelta(days=1))
    first = mem.dream()
    assert sum(step(first, n)["changed"] for n in names) >= 3
    second = mem.dream()
    assert {n: step(second, n)["changed"] for n in names} == dict.fromkeys(names, 0)


# -- calibration of the redundancy threshold with the real MiniLM model (SEED-NOTES) -----------------------------

PARAPHRASES = [
    ("User prefers dark mode in the editor", "The user likes dark mode in their editor"),
    ("Maya is allergic to penicillin", "Maya has an allergy to penicillin"),
    ("User's favorite database is PostgreSQL", "The user's favourite database is PostgreSQL"),
    (
        "Caroline went to the LGBTQ support group on 7 May 2023",
        "On 7 May 2023 Caroline attended an LGBTQ support group",
    ),
    ("The API uses JWT tokens", "JWT tokens are used by the API"),
    ("Always use a real database for integration tests", "Integration tests should always use a real database"),
    ("Deployed v2.1 on March 28", "v2.1 was deployed on March 28"),
]
NOT_REDUNDANT = [
    # elaborations: the lower-utility side adds detail
    ("User prefers dark mode in the editor", "User prefers dark mode in the editor, with a high-contrast theme"),
    ("Maya is allergic to penicillin", "Maya is allergic to penicillin and gets hives from amoxicillin too"),
    (
        "Caroline went to the LGBTQ support group on 7 May 2023",
        "Caroline went to the LGBTQ support group on 7 May 2023 and found it powerful and inspiring",
    ),
    # changed values (seed 001 contradictions)
    ("User's favorite database is PostgreSQL", "User's favorite database is MySQL"),
    ("User lives in Berlin", "User lives in Munich"),
    ("Deployed v2.1 on March 28", "Deployed v2.2 on March 30"),
    ("The API uses JWT tokens", "The API uses OAuth tokens"),
    # seed 003's March activities: related, distinct memories
    ("User went hiking at Mount Rainier on March 12, 2024", "User went kayaking at Lake Washington on March 15, 2024"),
    ("User ran a 5K in Fremont on March 20, 2024", "User went rock climbing at Stone Gardens on March 25, 2024"),
]


@pytest.mark.model
@pytest.mark.slow
def test_minilm_redundancy_threshold_calibration() -> None:
    """Measured with all-MiniLM-L6-v2: paraphrases 0.91–0.98, elaborations 0.85–0.94, changed values 0.78–0.92
    (cosine alone cannot tell "v2.1 on March 28" from "v2.2 on March 30"), March activities 0.47–0.55.
    The minilm threshold keeps every paraphrase above it; the text guards reject the rest."""
    from reverie.config.dream_forgetting import ForgettingSettings
    from reverie.embed import MiniLMEmbedder

    try:
        model = MiniLMEmbedder()
    except Exception as exc:  # pragma: no cover - weights missing
        pytest.skip(f"local model unavailable: {exc}")
    cfg = ForgettingSettings()
    threshold = cfg.redundancy_threshold(model.profile)

    def sim(a: str, b: str) -> float:
        v = model.embed([a, b])
        return float(v[0] @ v[1])

    for kept, other in PARAPHRASES:
        s = sim(kept, other)
        assert redundant(kept, other, similarity=s, threshold=threshold, max_new_words=cfg.redundancy_max_new_words), (
            kept,
            other,
            s,
        )
    for kept, other in NOT_REDUNDANT:
        s = sim(kept, other)
        assert not redundant(
            kept, other, similarity=s, threshold=threshold, max_new_words=cfg.redundancy_max_new_words
        ), (kept, other, s)
    assert max(sim(a, b) for a, b in NOT_REDUNDANT) > threshold  # cosine alone would merge some of them


#: Turkish paraphrases that keep every word form (the redundancy rule's word guard does not stem, so an
#: inflected paraphrase such as "koyu temayı tercih ediyor" / "koyu tema tercih eder" counts as new words)
PARAPHRASES_TR = [
    ("Kullanıcı her sabah kahve içiyor", "Kullanıcı her sabah bir kahve içiyor"),
    ("Ekip her cuma demo yapıyor", "Ekip her cuma günü demo yapıyor"),
]
NOT_REDUNDANT_TR = [
    ("Kullanıcı Berlin'de yaşıyor", "Kullanıcı Münih'te yaşıyor"),
    (
        "Kullanıcı 12 Mart 2024'te Mount Rainier'de yürüyüşe çıktı",
        "Kullanıcı 15 Mart 2024'te Washington Gölü'nde kano yaptı",
    ),
]


#: how close to the e5 redundancy threshold a cosine is taken as "on it" (well above the embedder's drift between
#: CPUs, which tests/embed/test_embed_drift.py bounds)
NEAR_THRESHOLD = 0.005


@pytest.mark.model
@pytest.mark.slow
def test_e5_redundancy_threshold_calibration() -> None:
    """Measured with multilingual-e5-small: paraphrases 0.97–0.99, elaborations 0.93–0.97, changed values
    0.92–0.97, March activities 0.90 (its cosines are compressed into [0.75, 1]). The e5 threshold keeps every
    paraphrase above it, in English and Turkish; the text guards reject the rest."""
    from reverie.config.dream_forgetting import ForgettingSettings
    from reverie.embed import E5Embedder

    try:
        model = E5Embedder()
    except Exception as exc:  # pragma: no cover - weights missing
        pytest.skip(f"local model unavailable: {exc}")
    cfg = ForgettingSettings()
    threshold = cfg.redundancy_threshold(model.profile)

    def sim(a: str, b: str) -> float:
        v = model.embed([a, b])
        return float(v[0] @ v[1])

    for kept, other in PARAPHRASES + PARAPHRASES_TR:
        s = sim(kept, other)
        assert redundant(kept, other, similarity=s, threshold=threshold, max_new_words=cfg.redundancy_max_new_words), (
            kept,
            other,
            s,
        )
    for kept, other in NOT_REDUNDANT + NOT_REDUNDANT_TR:
        s = sim(kept, other)
        assert not redundant(
            kept, other, similarity=s, threshold=threshold, max_new_words=cfg.redundancy_max_new_words
        ), (kept, other, s)
    # cosine alone cannot be trusted near the threshold: pairs that are not redundant come within a hair of it
    # (0.9647 against 0.965 here), so the text guards must reject each of them whatever their cosine is
    near = [(a, b) for a, b in NOT_REDUNDANT + NOT_REDUNDANT_TR if sim(a, b) > threshold - NEAR_THRESHOLD]
    assert near
    for kept, other in near:
        assert not redundant(
            kept, other, similarity=1.0, threshold=threshold, max_new_words=cfg.redundancy_max_new_words
        ), (kept, other)


def test_an_ephemeral_memory_is_archived_once_stale_a_durable_one_waits(make_memory, clock: SettableClock) -> None:
    m = quiet(make_memory, dream={"forgetting": {"lifecycle_policy": True}})
    old = clock() - timedelta(days=200)
    fields: dict[str, Any] = {"layer": Layer.SEMANTIC, "created_at": old, "importance": 0.5, "confidence": 0.9}
    durable = put(m, "an old fact nobody used", **fields, policy_class="durable")
    plan = put(m, "an old plan nobody used", **fields, policy_class="ephemeral", valid_until=old + timedelta(days=7))
    lc = m.settings.dynamics.lifecycle
    heat = lifecycle_dyn.heat(confidence=0.9, access_count=0, age_days=200, importance=0.5, cfg=lc)
    decay = lifecycle_dyn.decay_score(age_days=200, stale_access_days=200, confidence=0.9, heat_score=heat, cfg=lc)
    assert lc.stale_decay <= decay < lc.archive_decay  # stale, not yet past the archive threshold
    m.dream(steps=["archive"])
    got = m.store.get([durable, plan])
    assert got[durable].lifecycle_state == "stale"
    assert got[plan].lifecycle_state == "archived"
