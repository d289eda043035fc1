"""A memory never hides what is still true: a statement disputed against an immutable memory never outranks
it; every explanation of the order is true of the hit it is attached to."""

from __future__ import annotations

from datetime import timedelta

from reverie import Memory, SettableClock
from reverie.results import Action


def test_a_disputed_statement_never_outranks_the_immutable_memory_it_contradicts(
    mem: Memory, clock: SettableClock
) -> None:
    anchor = mem.add("User's favorite database is PostgreSQL", user_id="u")
    mem.pin(anchor.id)
    mem.store.update_fields(anchor.id, {"immutable": True})
    clock.advance(timedelta(days=3))
    against = mem.add("User's favorite database is MySQL", user_id="u")
    assert against.action is Action.CREATE and "immutable" in against.reason
    assert mem.get(against.id).verification_state == "disputed"
    clock.advance(timedelta(days=1))
    # worded like the disputed statement: it scores higher, and still comes after its anchor
    for k in (1, 2, 5):
        hits = mem.search("Is MySQL the user's favorite database, MySQL?", user_id="u", k=k)
        ids = [h.memory.id for h in hits]
        assert ids[0] == anchor.id, ids
        if against.id in ids:
            assert ids.index(anchor.id) < ids.index(against.id)
    hits = mem.search("Is MySQL the user's favorite database, MySQL?", user_id="u", k=5)
    first, rest = hits[0], {h.memory.id: h for h in hits[1:]}
    if first.score < rest[against.id].score:  # moved up over a higher score: it says why, and the other too
        assert first.explain["anchor_of"] == against.id
        assert "disputes" in rest[against.id].explain["order"]


def test_the_anchor_is_fetched_when_the_search_did_not_find_it(mem: Memory, clock: SettableClock) -> None:
    anchor = mem.add("User's favorite database is PostgreSQL", user_id="u")
    mem.store.update_fields(anchor.id, {"immutable": True})
    against = mem.add("User's favorite database is MySQL", user_id="u")
    assert mem.get(against.id).verification_state == "disputed"
    hits = mem.search("MySQL", user_id="u", k=3)
    ids = [h.memory.id for h in hits]
    assert anchor.id in ids and ids.index(anchor.id) < ids.index(against.id)


def test_diversity_is_blamed_only_when_it_moved_the_memory(mem: Memory, clock: SettableClock) -> None:
    """Whatever the order, an explanation that names diversity quotes a similarity above zero."""
    for text in (
        "Maya is allergic to penicillin.",
        "Maya prefers window seats on flights.",
        "Maya's cat is called Pixel.",
        "Maya is allergic to penicillin, she said it twice.",
    ):
        mem.add(text, user_id="u", infer=False)
        clock.advance(timedelta(hours=1))
    for q in ("What is Maya allergic to?", "Which seat does Maya like?", "Maya"):
        for h in mem.search(q, user_id="u", k=4):
            why = h.explain.get("order", "")
            if why.startswith("diversity"):
                assert h.explain["mmr"]["max_similarity"] > 0, h.explain
