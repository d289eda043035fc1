"""Time reasoning for questions about now when a correction is worded apart from what it corrects: the
question shares more words with the old statement, yet the newer memory that says something changed, about
the same thing, comes first (read.change_recency_ratio)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta

import numpy as np
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


# a chatty correction: it sits nearer to other chat than to the fact it corrects; among the answers to the
# question (the two, not the chat) they are each other's nearest
CHOIR_OLD = "I sing tenor in the church choir."
CHOIR_NEW = "Small news: the choir put me with the basses, and rehearsals are on Fridays now."
CHATTY = (
    "Small news from the street: the bakery now opens on Sundays too, so fresh bread every day!",
    "The neighbours' dog barked all night again.",
    "Quick one: my cousin is getting married in Porto next spring, we're all invited.",
    "I finally fixed the squeaky door in the hallway.",
    "Big news at work: the canteen now does a vegan option on Fridays.",
)


def test_a_chatty_correction_comes_first(model_memory: Callable[..., Memory], clock: SettableClock) -> None:
    mem = model_memory()
    old = mem.add(CHOIR_OLD, user_id="u", infer=False)
    chat = []
    for line in CHATTY:
        clock.advance(timedelta(days=4))
        chat.append(mem.add(line, user_id="u", infer=False).id)
    clock.advance(timedelta(days=30))
    new = mem.add(CHOIR_NEW, user_id="u", infer=False)
    clock.advance(timedelta(days=7))
    # the case: the correction's nearest is other chat, and the update reading does not connect the two by their
    # words
    ids = [old.id, new.id, *chat]
    recs = mem.store.get(ids)
    vecs = np.stack([recs[i].embedding for i in ids])
    sims = vecs @ vecs.T
    np.fill_diagonal(sims, -1.0)
    assert int(sims[0].argmax()) == 1 and int(sims[1].argmax()) > 1
    assert sims[0, 1] < mem.settings.write.gate.profile("e5").change_min  # no update by similarity alone
    assert updates.says_change(CHOIR_NEW) and not updates.judge(CHOIR_OLD, CHOIR_NEW).likely
    hits = mem.search("Which part does the user sing in the choir?", user_id="u", k=5)
    found = [h.memory.id for h in hits]
    assert found.index(new.id) < found.index(old.id)
    assert hits[found.index(new.id)].explain["newer_first"]["over"] == old.id
