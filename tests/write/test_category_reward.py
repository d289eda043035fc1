"""The reward channel's prior by category is a setting (``write.category_reward``, ``write.other_category_reward``):
a new memory with no rated neighbours is stored with its category's reward."""

from __future__ import annotations

import pytest

from reverie import Memory
from reverie.config import Settings

PREFERENCE = "User prefers tabs over spaces"
FACT = "The printer paper is in the second drawer"


def _stored(mem: Memory, text: str, user_id: str) -> tuple[str, float]:
    """The category and the reward channel a new memory of ``text`` is stored with."""
    memory_id = mem.add(text, user_id=user_id).id
    assert memory_id is not None
    rec = mem.store.get([memory_id])[memory_id]
    return rec.category, rec.importance_channels["reward"]


def test_default_rewards_by_category(mem: Memory) -> None:
    table = Settings().write.category_reward
    category, reward = _stored(mem, PREFERENCE, "a")
    assert category == "preference" and reward == pytest.approx(table["preference"])
    category, reward = _stored(mem, FACT, "b")
    assert category == "fact" and reward == pytest.approx(table["fact"])


def test_tuned_rewards_by_category(make_memory) -> None:
    mem = make_memory(write={"category_reward": {"preference": 0.2}, "other_category_reward": 0.35})
    category, reward = _stored(mem, PREFERENCE, "a")
    assert category == "preference" and reward == pytest.approx(0.2)
    # a category the table does not name takes the other categories' reward
    category, reward = _stored(mem, FACT, "b")
    assert category == "fact" and reward == pytest.approx(0.35)


def test_a_reward_outside_0_to_1_is_refused() -> None:
    with pytest.raises(ValueError, match="category_reward"):
        Settings.model_validate({"write": {"category_reward": {"fact": 1.5}}})
