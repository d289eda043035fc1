"""What is true now comes first: current-state search answers with the current version; a superseded
memory shows only after its successor, marked in the hit and in context(); the timeline and as_of
modes, and questions about the past, still see the old version."""

from __future__ import annotations

import itertools
from datetime import timedelta

from reverie import Memory, SettableClock
from reverie.results import Action, Hit


def _ids(hits: list[Hit]) -> list[str]:
    return [h.memory.id for h in hits]


def test_superseded_memory_comes_after_its_successor_and_is_marked(mem: Memory, clock: SettableClock) -> None:
    old = mem.add("Our weekly team sync is on Mondays at 10am.", user_id="u")
    mem.add("The printer in the hallway keeps jamming.", user_id="u")
    clock.advance(timedelta(days=20))
    new = mem.add("Heads up: the weekly team sync got moved to Wednesdays at 2pm.", user_id="u")
    assert new.action is Action.SUPERSEDE and old.id in new.ids
    history = [e for e in mem.history(old.id) if e.event == "superseded"]
    assert history and "Mondays" in history[0].reason  # the verdict with its reason
    clock.advance(timedelta(days=7))
    hits = mem.search("When is the weekly team sync?", user_id="u", k=5)  # temporal: sees superseded facts
    ids = _ids(hits)
    assert ids[0] == new.id
    if old.id in ids:
        at = ids.index(old.id)
        assert at == ids.index(new.id) + 1 and hits[at].explain["superseded"]["by"] == new.id
    block = mem.context("When is the weekly team sync?", user_id="u", budget_tokens=400)
    lines = block.text.splitlines()
    new_line = next(i for i, line in enumerate(lines) if "Wednesdays" in line)
    assert "superseded" not in lines[new_line]
    old_lines = [i for i, line in enumerate(lines) if "Mondays" in line]
    assert all(i > new_line and "superseded by a newer memory" in lines[i] for i in old_lines)
    # the timeline and a point in time still see the old version
    timeline = _ids(mem.search("weekly team sync", user_id="u", mode="timeline"))
    assert timeline.index(old.id) < timeline.index(new.id)
    then = _ids(mem.search("weekly team sync", user_id="u", as_of=clock() - timedelta(days=15)))
    assert old.id in then and new.id not in then


def test_a_question_worded_like_the_old_statement_gets_the_current_version(mem: Memory, clock: SettableClock) -> None:
    old = mem.add("I'm training for the Berlin marathon in September.", user_id="u")
    for line in ("The tomatoes on the balcony finally turned red.", "We played board games until midnight."):
        clock.advance(timedelta(days=3))
        mem.add(line, user_id="u")
    clock.advance(timedelta(days=30))
    new = mem.add("Change of plans, Berlin filled up so I signed up for the Chicago one instead.", user_id="u")
    assert new.action is Action.SUPERSEDE and old.id in new.ids
    clock.advance(timedelta(days=7))
    hits = mem.search("Which marathon is the user training for?", user_id="u", k=3)
    assert hits[0].memory.id == new.id
    assert hits[0].explain["found_through"]["id"] == old.id
    # superseding demotes, it never hides: the old statement answers the question better than anything current,
    # so it follows its successor, marked as the earlier version
    assert _ids(hits)[1] == old.id and hits[1].explain["superseded"]["by"] == new.id


def test_verbatim_store_answers_with_the_update_first(make_memory, clock: SettableClock) -> None:
    mem = make_memory()
    old = mem.add("My manager is Priya Nair, she runs the data platform team.", user_id="u", infer=False)
    clock.advance(timedelta(days=40))
    new = mem.add("Priya Nair left last week, so my manager is Daniel Okafor now.", user_id="u", infer=False)
    clock.advance(timedelta(days=7))
    hits = mem.search("Who is the user's manager?", user_id="u", k=5)
    ids = _ids(hits)
    assert ids.index(new.id) < ids.index(old.id)
    older = hits[ids.index(old.id)]
    assert older.explain["superseded"]["by"] == new.id and older.explain["superseded"]["how"] == "read"
    assert ids.index(old.id) == ids.index(new.id) + 1


def test_compatible_facts_are_both_kept_and_found(mem: Memory, clock: SettableClock) -> None:
    a = mem.add("Ana likes tea at home.", user_id="u")
    clock.advance(timedelta(days=2))
    b = mem.add("Ana likes coffee at work.", user_id="u")
    assert b.action is Action.CREATE
    found = _ids(mem.search("What does Ana drink at work?", user_id="u", k=5))
    assert a.id in found and b.id in found
    assert all(not h.explain.get("superseded") for h in mem.search("Ana tea coffee", user_id="u", k=5))


def test_past_questions_keep_the_old_version_first(make_memory, clock: SettableClock) -> None:
    mem = make_memory()
    old = mem.add("Maya lives in Berlin.", user_id="u")
    clock.advance(timedelta(days=30))
    new = mem.add("Maya moved to Lisbon.", user_id="u")
    assert old.id in new.ids
    clock.advance(timedelta(days=1))
    assert _ids(mem.search("Where does Maya live?", user_id="u"))[0] == new.id
    assert _ids(mem.search("When did Maya live in Berlin?", user_id="u"))[0] == old.id


def test_scores_come_in_rank_order_or_say_why(make_memory, clock: SettableClock) -> None:
    mem = make_memory()
    texts = [
        f"Maya's note {i}: the garden needs {w}"
        for i, w in enumerate(
            ["water", "water and sun", "sun", "compost", "water", "weeding", "water daily", "a fence"]
        )
    ]
    mem.add_many(texts, user_id="u", infer=False)
    hits = mem.search("what does the garden need? water", user_id="u", k=8)
    for above, hit in itertools.pairwise(hits):
        assert hit.score <= above.score or hit.explain.get("order"), hit.explain
