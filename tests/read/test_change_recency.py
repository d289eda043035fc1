"""Time reasoning for questions about now when a correction is worded apart from what it corrects: the
question shares more words with the old statement, yet the newer memory that says something changed, about
the same thing, comes first (read.change_recency_ratio)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta

import pytest

from reverie import Memory, SettableClock
from reverie.text import updates

pytestmark = pytest.mark.model

OLD = "Our Wi-Fi password is sunflower42."
NEW = "I changed the wifi password to bluebird77."
FILLER = (
    "The tomatoes on the balcony finally turned red.",
    "We played board games until midnight.",
    "My sister sent me a video of her cat chasing a laser pointer.",
)


def _store(mem: Memory, clock: SettableClock) -> tuple[str, str]:
    old = mem.add(OLD, user_id="u", infer=False)
    for line in FILLER:
        clock.advance(timedelta(days=4))
        mem.add(line, user_id="u", infer=False)
    clock.advance(timedelta(days=30))
    new = mem.add(NEW, user_id="u", infer=False)
    clock.advance(timedelta(days=7))
    assert old.id is not None and new.id is not None
    return old.id, new.id


def test_the_pair_is_not_read_as_an_update_by_its_words() -> None:
    # the case the time reasoning is for: the update reading does not connect the two on its own
    assert updates.says_change(NEW)
    assert not updates.judge(OLD, NEW).likely


def test_the_newer_change_comes_first(model_memory: Callable[..., Memory], clock: SettableClock) -> None:
    mem = model_memory()
    old, new = _store(mem, clock)
    hits = mem.search("What is the Wi-Fi password?", user_id="u", k=5)
    ids = [h.memory.id for h in hits]
    assert ids.index(new) < ids.index(old)
    first = hits[ids.index(new)]
    assert first.explain["newer_first"]["over"] == old
    assert "changed" in first.explain["newer_first"]["note"]


def test_switched_off_the_question_words_decide(model_memory: Callable[..., Memory], clock: SettableClock) -> None:
    # ablation: without the time reasoning the old statement, worded like the question, comes first
    mem = model_memory(read={"change_recency_ratio": 0.0})
    old, new = _store(mem, clock)
    ids = [h.memory.id for h in mem.search("What is the Wi-Fi password?", user_id="u", k=5)]
    assert ids.index(old) < ids.index(new)


def test_a_timeline_keeps_the_order_of_time(model_memory: Callable[..., Memory], clock: SettableClock) -> None:
    mem = model_memory()
    old, new = _store(mem, clock)
    ids = [h.memory.id for h in mem.search("wifi password", user_id="u", mode="timeline", k=5)]
    assert ids.index(old) < ids.index(new)
