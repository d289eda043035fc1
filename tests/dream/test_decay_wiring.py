"""The decay the engine applies uses the category decay rates and the tier multipliers (through ``Memory``,
both backends): the dream's decay step stores it, ``explain_strength`` shows the same value, and the
rehearsal step picks endangered memories by it."""

from __future__ import annotations

import math

import pytest

from reverie import Layer, Memory, SettableClock
from reverie.dynamics import fsrs


def _two(mem: Memory) -> tuple[str, str]:
    pref = mem.add("I prefer green tea over coffee in the morning", user_id="u").id
    fact = mem.add("The project repository lives on the build server in Lisbon", user_id="u").id
    recs = mem.store.get([pref, fact])
    assert recs[pref].category == "preference" and recs[fact].category == "fact"
    return pref, fact


def test_decay_step_applies_category_rate_times_tier_multiplier(mem: Memory, clock: SettableClock) -> None:
    pref, fact = _two(mem)
    clock.advance(hours=1)
    mem.dream(steps=["promote"])  # working → episodic after 30 minutes
    recs = mem.store.get([pref, fact])
    assert recs[pref].layer is Layer.EPISODIC and recs[fact].layer is Layer.EPISODIC
    clock.advance(days=10)
    mem.dream(steps=["decay"])
    recs = mem.store.get([pref, fact])
    cfg = mem.settings.dynamics
    days = (mem.now() - recs[fact].created_at).total_seconds() / 86400.0
    r_fact = fsrs.retrievability(elapsed_days=days, stability=recs[fact].stability, cfg=cfg.fsrs)
    r_pref = fsrs.retrievability(elapsed_days=days, stability=recs[pref].stability, cfg=cfg.fsrs)
    # a preference does not decay by category; a fact decays at 0.005/day × 3 in the episodic tier
    assert recs[pref].retrieval_strength == pytest.approx(r_pref, rel=1e-6)
    assert recs[fact].retrieval_strength == pytest.approx(r_fact * math.exp(-0.005 * 3 * days), rel=1e-6)
    assert recs[fact].retrieval_strength < recs[pref].retrieval_strength
    # explain_strength shows the value the engine applied
    for mid in (pref, fact):
        shown = mem.explain_strength(mid)["retrieval_strength"]
        assert shown["value"] == pytest.approx(recs[mid].retrieval_strength, rel=1e-6)


def test_semantic_tier_decays_slower_than_episodic(make_memory, clock: SettableClock) -> None:
    mem = make_memory()
    a = mem.add("The staging database runs PostgreSQL version fifteen", user_id="u").id
    b = mem.add("The office printer on floor two needs a new toner cartridge", user_id="u").id
    clock.advance(hours=1)
    mem.dream(steps=["promote"])
    mem.promote(a, "semantic")
    clock.advance(days=20)
    mem.dream(steps=["decay"])
    recs = mem.store.get([a, b])
    assert recs[a].layer is Layer.SEMANTIC and recs[b].layer is Layer.EPISODIC
    ratio_a = recs[a].retrieval_strength / fsrs.retrievability(
        elapsed_days=(mem.now() - recs[a].created_at).total_seconds() / 86400,
        stability=recs[a].stability,
        cfg=mem.settings.dynamics.fsrs,
    )
    ratio_b = recs[b].retrieval_strength / fsrs.retrievability(
        elapsed_days=(mem.now() - recs[b].created_at).total_seconds() / 86400,
        stability=recs[b].stability,
        cfg=mem.settings.dynamics.fsrs,
    )
    # category decay ×1 for semantic, ×3 for episodic (both facts: 0.005/day)
    assert ratio_a == pytest.approx(math.exp(-0.005 * 1 * 20 - 0.005 / 24), rel=1e-3)
    assert ratio_b == pytest.approx(math.exp(-0.005 * 3 * 20 - 0.015 / 24), rel=1e-3)


def test_rehearsal_picks_memories_endangered_by_category_decay(make_memory, clock: SettableClock) -> None:
    # a decision decays at 0.02/day ×3 (episodic): after 20 days its category factor is exp(-1.2) ≈ 0.30,
    # and with FSRS R below 1 the memory is endangered; a preference of the same age is not
    mem = make_memory()
    dec = mem.add("We decided to go with Kafka for the event pipeline", user_id="u").id
    pref = mem.add("I prefer green tea over coffee in the morning", user_id="u").id
    recs = mem.store.get([dec, pref])
    assert recs[dec].category == "decision" and recs[pref].category == "preference"
    clock.advance(hours=1)
    mem.dream(steps=["promote"])
    clock.advance(days=20)
    report = mem.dream(steps=["rehearse"])
    step = report["steps"][0]
    assert step["details"]["rehearsed"] >= 1
    assert "rehearsed" in [e.event for e in mem.history(dec)]
    assert "rehearsed" not in [e.event for e in mem.history(pref)]


def test_rehearsal_restarts_category_decay_without_inflating_stability(make_memory, clock: SettableClock) -> None:
    mem = make_memory()
    dec = mem.add("We decided to go with Kafka for the event pipeline", user_id="u").id
    clock.advance(hours=1)
    mem.dream(steps=["promote"])
    before = mem.store.get([dec])[dec].stability
    for _ in range(60):  # two months of daily cycles
        clock.advance(days=1)
        mem.dream(steps=["decay", "rehearse"])
    rec = mem.store.get([dec])[dec]
    rehearsals = [e for e in mem.history(dec) if e.event == "rehearsed"]
    # endangered by its category's decay (0.02/day ×3) about every 20 days, not on every cycle
    assert 1 <= len(rehearsals) <= 4
    # FSRS R alone stayed above the threshold: the stability is not inflated by the category decay
    assert rec.stability == pytest.approx(before)
    assert rec.retrieval_strength == pytest.approx(mem.explain_strength(dec)["retrieval_strength"]["value"])
