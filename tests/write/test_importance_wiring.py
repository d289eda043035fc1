"""The encoding boost and the surprise adjustment decide the importance a memory is stored with (through
``Memory``, both backends) — and that importance feeds the decay and the consolidation eligibility."""

from __future__ import annotations

import pytest

from reverie import Memory, SettableClock
from reverie.dream.consolidate import seed003_retention_of
from reverie.dynamics.importance import channel_importance


def test_encoding_boost_and_surprise_adjust_the_stored_importance(mem: Memory) -> None:
    icfg = mem.settings.dynamics.importance
    calm = mem.add("The quarterly budget review is scheduled with the finance team", user_id="u").id
    moved = mem.add("I am so happy and excited, we won the regional final!", user_id="u").id
    recs = mem.store.get([calm, moved])
    for rec in recs.values():
        ch = rec.importance_channels
        raw = channel_importance(novelty=ch["novelty"], arousal=ch["arousal"], reward=ch["reward"],
                                 attention=ch["attention"], cfg=icfg)
        expected = min(1.0, max(icfg.importance_floor, min(1.0, raw * ch["encoding_boost"])
                                + ch["surprise_adjustment"]))
        if not rec.flashbulb:
            assert rec.importance == pytest.approx(expected, abs=1e-6)
        assert ch["surprise_adjustment"] == pytest.approx((rec.surprise - 0.5) * icfg.surprise_scale, abs=1e-6) \
            or ch["surprise_adjustment"] == pytest.approx(icfg.surprise_empty_modifier)
    assert recs[calm].importance_channels["encoding_boost"] == pytest.approx(1.0)
    assert 1.0 < recs[moved].importance_channels["encoding_boost"] <= icfg.boost_max


def test_surprise_lowers_the_importance_of_what_is_already_known(mem: Memory) -> None:
    for text in ("The team deploys the billing service every Tuesday", "The billing service deploy needs two approvals",
                 "Deploys of the billing service run from the release branch"):
        mem.add(text, user_id="u")
    near = mem.add("The billing service deploy on Tuesday failed twice", user_id="u")
    far = mem.add("Grandma's apple pie recipe uses cinnamon and brown sugar", user_id="u")
    recs = mem.store.get([near.id, far.id])
    assert near.action.value == "CREATE" and far.action.value == "CREATE"
    assert recs[near.id].surprise < recs[far.id].surprise
    assert recs[near.id].importance_channels["surprise_adjustment"] < recs[far.id].importance_channels[
        "surprise_adjustment"]
    assert recs[near.id].importance < recs[far.id].importance


def test_importance_at_write_feeds_decay(make_memory, clock: SettableClock) -> None:  # type: ignore[no-untyped-def]
    mem = make_memory()
    a = mem.add("We won the regional final and I am thrilled, best day ever!", user_id="u").id
    b = mem.add("The printer paper is stored in the second cabinet drawer", user_id="u").id
    clock.advance(days=5)
    recs = mem.store.get([a, b])
    cfg = mem.settings.dynamics
    assert recs[a].importance > recs[b].importance
    # the fading retention's boost B = min(3, 1 + 2·importance): the more important memory fades slower
    assert seed003_retention_of(recs[a], now=mem.now(), cfg=cfg) > seed003_retention_of(recs[b], now=mem.now(), cfg=cfg)
