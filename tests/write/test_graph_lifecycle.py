"""Graph-edge reinforcement, verification state and policy class, episode/note reconsolidation — through
``Memory`` on both storage backends (the lifecycle design's edge confidence and memory policy)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from reverie import edges as relations
from reverie.config.write import RelationSettings
from reverie.model import MemoryKind, Relation, RelationType, Status
from reverie.results import Action

A = "Ana Silva and Tom Berg work at Acme Labs in Lisbon"
B = "Ana Silva phoned Tom Berg about quarterly budget spreadsheets"
B_AGAIN = "Ana Silva phoned Tom Berg about quarterly budget spreadsheets again"


def _edges(mem: Any, memory_id: str) -> list[Relation]:
    return [r for r in mem.store.relations([memory_id]) if r.type is RelationType.SAME_ENTITY]


def test_a_relation_observed_again_strengthens_the_stored_edge(mem, clock) -> None:
    a = mem.add(A, user_id="u")
    b = mem.add(B, user_id="u")
    assert (a.action, b.action) == (Action.CREATE, Action.CREATE)
    [edge] = _edges(mem, b.ids[0])
    assert {edge.src_id, edge.dst_id} == {a.ids[0], b.ids[0]}
    assert edge.confidence == 0.7 and relations.verification(edge) == "unverified"
    clock.advance(timedelta(days=1))
    again = mem.add(B_AGAIN, user_id="u")
    assert again.action is Action.REINFORCE and again.ids == (b.ids[0],)
    [after] = _edges(mem, b.ids[0])  # the same edge, not a second one, and not dropped
    assert after.id == edge.id
    delta = mem.settings.dynamics.lifecycle.edge_reinforce_delta
    assert after.confidence == edge.confidence + delta
    assert after.last_reinforced_at == clock()
    assert after.metadata["observations"] == 2 and relations.verification(after) == "system_inferred"


def test_edge_reinforcement_follows_its_setting(make_memory, clock) -> None:
    mem = make_memory(dynamics={"lifecycle": {"edge_reinforce_delta": 0.2}})
    mem.add(A, user_id="u")
    b = mem.add(B, user_id="u")
    mem.add(B_AGAIN, user_id="u")
    [edge] = _edges(mem, b.ids[0])
    assert abs(edge.confidence - 0.9) < 1e-9


def test_memory_verification_state_and_policy_class(mem) -> None:
    b = mem.add(B, user_id="u")
    rec = mem.get(b.ids[0])
    assert rec.verification_state == "unverified" and rec.policy_class == "durable"
    mem.add(B_AGAIN, user_id="u")  # the user states it again: confirmed
    assert mem.get(b.ids[0]).verification_state == "user_confirmed"
    pref = mem.add("I prefer green tea over coffee", user_id="u")
    assert mem.get(pref.ids[0]).policy_class == "protected"  # a protected category
    assert mem.pin(b.ids[0]).policy_class == "protected"
    assert mem.unpin(b.ids[0]).policy_class == "durable"
    plan = mem.add("I'm going to repaint the kitchen next week.", user_id="u")  # time-bounded
    rec = mem.get(plan.ids[0])
    assert rec.valid_until is not None and rec.policy_class == "ephemeral"


def test_an_ai_restatement_does_not_confirm_what_the_user_said(mem) -> None:
    """An assistant, an ingest or a dream restating a fact observes it again; only the user confirms it."""
    b = mem.add(B, user_id="u")
    for source in ("ai", "ingest", "dream"):
        again = mem.add(B_AGAIN, user_id="u", source=source)
        assert again.action is Action.REINFORCE and again.ids == (b.ids[0],)
        assert mem.get(b.ids[0]).verification_state == "system_inferred", source
    mem.add(B_AGAIN, user_id="u", source="human")
    assert mem.get(b.ids[0]).verification_state == "user_confirmed"
    mem.add(B_AGAIN, user_id="u", source="ai")  # confirmed stays confirmed
    assert mem.get(b.ids[0]).verification_state == "user_confirmed"


def test_a_superseded_memory_s_edges_are_disputed_and_pruned_first(mem) -> None:
    a = mem.add("Ana Silva works at Acme Labs in Lisbon", user_id="u")
    b = mem.add("Ana Silva met Tom Berg from Acme Labs in Porto", user_id="u")
    assert b.action is Action.CREATE
    before = [r for r in mem.store.relations([b.ids[0]], direction="out") if r.type is not RelationType.REINFORCES]
    assert before, "the rules relate the two memories"
    new = mem.add(
        "Ana Silva met Tom Berg from Acme Labs in Porto. Correction: it was in Madrid, not Porto", user_id="u"
    )
    if new.action is Action.SUPERSEDE and b.ids[0] in new.ids:
        assert mem.get(b.ids[0]).status is Status.SUPERSEDED
        out = [
            r
            for r in mem.store.relations([b.ids[0]], direction="out")
            if r.type in relations.prunable_types(mem.settings.write.relations)
        ]
        assert out and all(relations.verification(r) == "disputed" for r in out)
    else:  # the gate may read the correction against the other memory: then that one's edges are disputed
        assert new.action is Action.SUPERSEDE, new.reason
        old = next(i for i in new.ids if i != new.ids[0])
        assert old == a.ids[0]


def test_pruning_removes_disputed_then_unverified_edges_first() -> None:
    cfg = RelationSettings(prune_at=2, prune_to=1)

    def rel(state: str, conf: float) -> Relation:
        return Relation("a", state, RelationType.SAME_ENTITY, confidence=conf, metadata={relations.VERIFICATION: state})

    inferred, unverified, disputed = rel("system_inferred", 0.4), rel("unverified", 0.9), rel("disputed", 0.95)
    doomed = relations.prune_plan([inferred, unverified, disputed], cfg)
    assert doomed == [disputed.id, unverified.id]  # the inferred edge stays, though its confidence is lowest


def test_an_episode_keeps_its_words_a_note_reconsolidates(mem) -> None:
    ep = mem.add("Yesterday Caroline went to the LGBTQ support group in Lisbon", user_id="u")
    episode = mem.get(ep.ids[0])
    assert episode.memory_kind is MemoryKind.EPISODE
    more = mem.add(
        "Yesterday Caroline went to the LGBTQ support group in Lisbon and found the talks powerful, "
        "moving and inspiring",
        user_id="u",
    )
    assert more.action is Action.CREATE and more.ids[0] != ep.ids[0], more.reason
    assert mem.get(ep.ids[0]).content == episode.content  # never rewritten
    note = mem.add("Maya always prefers aisle seats on long flights", user_id="u")
    assert mem.get(note.ids[0]).memory_kind is MemoryKind.NOTE
    merged = mem.add("Maya always prefers aisle seats on long flights, near the front of the plane", user_id="u")
    assert merged.action is Action.UPDATE and merged.ids == (note.ids[0],), merged.reason
    assert "front of the plane" in mem.get(note.ids[0]).content
