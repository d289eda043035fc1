"""Time reasoning for questions about now, on evidence only.

A newer statement comes before an older one when the update reading ties the two to one slot (the same subject
and attribute with another value, or a value let go), or when it may update it (linked as a possible update when
it was written) and both answer the question (scores within ``read.same_answer_margin``). A change word, a
shared subject or closeness in the embedding is no such evidence on its own: "My new laptop is a ThinkPad" does
not update "My new phone is a Pixel 8", and "Maya prefers window seats" does not answer "What is Maya allergic
to?". The cost, measured in bench/README.md (the update suite against the compatible facts written blind to the
rules): a correction the reading cannot tie to what it corrects keeps the rank its relevance gives it, and the
old statement stays beside it — never hidden, never moved below a fact it does not replace."""

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


def _store(mem: Memory, clock: SettableClock, old: str, new: str, *, infer: bool = False) -> tuple[str, str]:
    a = mem.add(old, user_id="u", infer=infer)
    for line in FILLER:
        clock.advance(timedelta(days=4))
        mem.add(line, user_id="u", infer=infer)
    clock.advance(timedelta(days=30))
    b = mem.add(new, user_id="u", infer=infer)
    clock.advance(timedelta(days=7))
    assert a.id is not None and b.id is not None
    return a.id, b.id


def test_a_change_the_reading_cannot_tie_keeps_both_and_relevance_decides(
    model_memory: Callable[..., Memory], clock: SettableClock
) -> None:
    # the case: a change said, but nothing the reading can tie to the old statement's slot
    assert updates.says_change(NEW) and not updates.judge(OLD, NEW).likely
    mem = model_memory()
    old, new = _store(mem, clock, OLD, NEW)
    hits = mem.search("What is the Wi-Fi password?", user_id="u", k=5)
    ids = [h.memory.id for h in hits]
    assert old in ids and new in ids  # nothing hidden
    assert all("newer_first" not in h.explain and "superseded" not in h.explain for h in hits)
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True) or all(
        h.explain.get("order") for h in hits[1:] if h.score > hits[0].score
    )


def test_an_update_the_reading_ties_comes_first(model_memory: Callable[..., Memory], clock: SettableClock) -> None:
    """The same slot (the team sync's day and time) with another value and a change said: the newer first, the
    older right after it, marked, even though the question is worded like the old statement."""
    mem = model_memory()
    old, new = _store(
        mem,
        clock,
        "Our weekly team sync is on Mondays at 10am.",
        "Heads up: the weekly team sync got moved to Wednesdays at 2pm.",
    )
    hits = mem.search("Is the weekly team sync on Mondays at 10am?", user_id="u", k=5)
    ids = [h.memory.id for h in hits]
    assert ids.index(new) < ids.index(old)
    assert hits[ids.index(old)].explain["superseded"]["by"] == new


POSSIBLE = (
    "I drink about three cups of coffee a day.",
    "I'm down to one cup of coffee a day since January.",
)


def test_a_possible_update_written_with_the_write_path_is_linked_not_hidden(
    model_memory: Callable[..., Memory], clock: SettableClock
) -> None:
    """Written with ``infer=True``: an update the reading finds only by closeness in meaning (the values it could
    not align) supersedes nothing; the two are linked as a possible update, both stay active, the write result
    says so, and the newer comes first when both answer the question."""
    verdict = updates.judge(*POSSIBLE)
    assert verdict.unaligned and not verdict.updates  # the case
    mem = model_memory()
    old, new = _store(mem, clock, *POSSIBLE, infer=True)
    res_reason = [e.reason for e in mem.history(new) if e.event == "created"]
    assert mem.get(old).status.value == "active"
    links = mem.store.relations([new], direction="out")
    assert any(r.type.value == "may_update" and r.dst_id == old for r in links), (links, res_reason)
    hits = mem.search("How many cups of coffee does the user drink a day?", user_id="u", k=5)
    ids = [h.memory.id for h in hits]
    assert old in ids and new in ids
    if hits[ids.index(new)].score >= hits[ids.index(old)].score - mem.settings.read.same_answer_margin:
        assert ids.index(new) < ids.index(old)


def test_a_timeline_keeps_the_order_of_time(model_memory: Callable[..., Memory], clock: SettableClock) -> None:
    mem = model_memory()
    old, new = _store(mem, clock, OLD, NEW)
    ids = [h.memory.id for h in mem.search("wifi password", user_id="u", mode="timeline", k=5)]
    assert ids.index(old) < ids.index(new)
