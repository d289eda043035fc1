"""The encoding boost decides the importance a memory is stored with (through ``Memory``, both backends) — and that
importance feeds the fading retention that decides consolidation."""

from __future__ import annotations

import pytest

from reverie import Memory, SettableClock
from reverie.dream.consolidate import fading_retention_of
from reverie.dynamics.importance import channel_importance, surprise_adjusted_base


def test_encoding_boost_sets_the_stored_importance(mem: Memory) -> None:
    icfg = mem.settings.dynamics.importance
    calm = mem.add("The quarterly budget review is scheduled with the finance team", user_id="u").id
    moved = mem.add("I am so happy and excited, we won the regional final!", user_id="u").id
    recs = mem.store.get([calm, moved])
    for rec in recs.values():
        ch = rec.importance_channels
        raw = channel_importance(
            novelty=ch["novelty"], arousal=ch["arousal"], reward=ch["reward"], attention=ch["attention"], cfg=icfg
        )
        assert rec.importance == pytest.approx(min(1.0, raw * ch["encoding_boost"]), abs=1e-6)
    assert recs[calm].importance_channels["encoding_boost"] == pytest.approx(1.0)
    boost = recs[moved].importance_channels["encoding_boost"]
    assert 1.0 < boost <= icfg.boost_max
    assert boost == pytest.approx(
        1.0 + icfg.boost_emotion_gain * max(recs[moved].emotion_arousal, abs(recs[moved].emotion_valence))
    )
    # the decision records the surprise and its adjustment, which the archival rule's nine-factor importance applies
    decision = mem.history(moved)[0].data["importance"]
    assert decision["surprise"] == pytest.approx(recs[moved].surprise, abs=1e-6)
    adjustment = (recs[moved].surprise - 0.5) * icfg.surprise_scale
    assert decision["surprise_adjustment"] == pytest.approx(adjustment, abs=1e-5)
    assert recs[moved].importance_channels["surprise_adjustment"] == decision["surprise_adjustment"]
    # the first memory of a scope has no neighbours: its adjustment is the configured one
    assert recs[calm].importance_channels["surprise_adjustment"] == pytest.approx(icfg.surprise_empty_modifier)
    assert surprise_adjusted_base(recs[calm], cfg=icfg) == pytest.approx(
        min(icfg.importance_ceiling, recs[calm].importance + icfg.surprise_empty_modifier)
    )


def test_importance_at_write_feeds_the_fading_retention(make_memory, clock: SettableClock) -> None:
    mem = make_memory()
    a = mem.add("We won the regional final and I am thrilled, best day ever!", user_id="u").id
    b = mem.add("The printer paper is stored in the second cabinet drawer", user_id="u").id
    clock.advance(hours=12)  # still in working memory (fading β 1 day): not yet at the floor
    recs = mem.store.get([a, b])
    cfg = mem.settings.dynamics
    assert recs[a].importance > recs[b].importance
    # the fading retention's boost B = min(3, 1 + 2·importance): the more important memory fades slower
    assert fading_retention_of(recs[a], now=mem.now(), cfg=cfg) > fading_retention_of(recs[b], now=mem.now(), cfg=cfg)
