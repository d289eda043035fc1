"""Extraction produces the lifecycle design's commitment category (keyword classifier and the LLM's schema),
and commitment decay acts on it: a resolved commitment stays active through its decay period, then expires
(a plan expires at once) (through ``Memory``, both backends)."""

from __future__ import annotations

from datetime import timedelta

from reverie import Memory, SettableClock, Status
from reverie.text.classify import category_of
from reverie.write import llm_stages


def test_the_classifier_finds_commitments() -> None:
    assert category_of("fact", "I promise to send Maria the signed contract next week", foresight=True) == "commitment"
    assert (
        category_of("other", "We agreed to review the budget together every quarter", foresight=False) == "commitment"
    )
    assert category_of("fact", "Ana söz verdi, raporu yarın gönderecek", foresight=False) == "commitment"
    assert category_of("fact", "I will visit Lisbon next week", foresight=True) == "plan"
    # the LLM's categories are kept
    for cat in ("relationship", "principle", "commitment", "moment", "skill"):
        assert cat in llm_stages.CATEGORIES
        assert category_of(cat, "some fact", foresight=False) == cat


def test_commitment_decay(mem: Memory, clock: SettableClock) -> None:
    mid = mem.add("I promise I will send Maria the signed contract next week", user_id="u").id
    plan = mem.add("I will visit the Lisbon office next week", user_id="u").id
    recs = mem.store.get([mid, plan])
    assert recs[mid].category == "commitment" and recs[mid].valid_until is not None
    assert recs[plan].category == "plan" and recs[plan].valid_until is not None
    clock.advance(days=10)  # both past valid_until: the plan expires now, the commitment is resolved
    mem.dream(steps=["foresight"])
    recs = mem.store.get([mid, plan])
    assert recs[plan].status is not Status.ACTIVE and recs[mid].status is Status.ACTIVE  # foresight expiry
    days = mem.settings.dream.forgetting.commitment_decay_days
    clock.advance(days=days - 5)
    mem.dream(steps=["foresight"])
    assert mem.store.get([mid])[mid].status is Status.ACTIVE
    clock.advance(timedelta(days=5))
    mem.dream(steps=["foresight"])
    assert mem.store.get([mid])[mid].status is not Status.ACTIVE
    assert any("commitment" in e.reason for e in mem.history(mid))
