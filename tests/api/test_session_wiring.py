"""Session wiring through ``Memory`` on both backends: co-activation counted per session, neighbour
evolution on access, the session-scoped embedding cache, working-memory promotion at session end, and the
reward and attention channels of importance."""

from __future__ import annotations

from datetime import timedelta

from reverie.embed.cache import CachedEmbedder
from reverie.model import Layer, RelationType


def _weight(mem, a: str, b: str) -> int:
    pairs = {(p.a_id, p.b_id): p.weight for p in mem.store.coactivations([a, b], min_weight=1)}
    return pairs.get((min(a, b), max(a, b)), 0)


def test_coactivation_counts_memories_a_session_used_together(mem) -> None:
    a = mem.add("The staging server runs Ubuntu 22.04", user_id="u", infer=False).ids[0]
    b = mem.add("Grandma's apple pie recipe needs cinnamon", user_id="u", infer=False).ids[0]
    mem.get(a)  # reads without a session co-activate nothing
    mem.get(b)
    assert _weight(mem, a, b) == 0
    for sid in ("s1", "s2"):
        hits_a = mem.search("staging server Ubuntu", user_id="u", session_id=sid, k=1)
        hits_b = mem.search("apple pie cinnamon", user_id="u", session_id=sid, k=1)
        assert [h.memory.id for h in hits_a] == [a] and [h.memory.id for h in hits_b] == [b]
        mem.search("staging server Ubuntu", user_id="u", session_id=sid, k=1)  # same session: counted once
    mem.count(user_id="u")  # the deferred access writes are settled by the next use of the store
    # two different searches, never retrieved together, in two sessions: weight 2
    assert _weight(mem, a, b) == 2


def test_neighbour_evolution_strengthens_connected_memories(mem) -> None:
    a = mem.add("Ana Silva and Tom Berg work at Acme Labs in Lisbon", user_id="u").ids[0]
    b = mem.add("Ana Silva phoned Tom Berg about quarterly budget spreadsheets", user_id="u").ids[0]
    c = mem.add("The staging server runs Ubuntu 22.04", user_id="u").ids[0]
    assert any(r.type is RelationType.SAME_ENTITY for r in mem.store.relations([a, b]))
    before_b, before_c = mem.peek(b).stability, mem.peek(c).stability
    mem.get(a)
    boost = mem.settings.dynamics.tagging.spreading_boost
    assert abs(mem.peek(b).stability - before_b * (1 + boost)) < 1e-9  # connected: +2%
    assert mem.peek(c).stability == before_c  # not connected: unchanged


def test_end_session_clears_the_embedding_cache_and_promotes_candidates(tmp_path, clock) -> None:
    from reverie import Memory
    from reverie.embed.testing import HashEmbedder

    embedder = CachedEmbedder(HashEmbedder(64), max_entries=50, ttl_s=3600, clock=clock)
    with Memory(tmp_path / "m.db", config={"opslog": {"enabled": False}}, clock=clock, embedder=embedder) as mem:
        rec = mem.add("The quarterly report is due to Maria on Friday", user_id="u", session_id="s").ids[0]
        other = mem.add("Lunch was a sandwich", user_id="u", session_id="s").ids[0]
        assert mem.peek(rec).layer is Layer.WORKING
        clock.advance(timedelta(minutes=1))
        mem.context("quarterly report Maria", user_id="u", session_id="s")
        mem.working_memory("s", user_id="u")
        assert len(embedder) > 0
        items = {i.memory_id: i for i in mem.store.working("u\x1fs")}
        candidates = [
            i
            for i, it in items.items()
            if it.access_count >= mem.settings.dynamics.working.promote_accesses
            or it.importance >= mem.settings.dynamics.working.promote_importance
        ]
        report = mem.end_session("s", user_id="u")
        assert report["embedding_cache_cleared"] > 0 and len(embedder) == 0
        assert set(report["promotion_candidates"]) == set(candidates)
        for mid in report["promotion_candidates"]:
            assert mem.peek(mid).layer is not Layer.WORKING, mid
            assert mid in report["promoted"]
        assert other not in report["promotion_candidates"] or mem.peek(other).layer is not Layer.WORKING


def test_reward_learns_from_feedback_on_similar_memories(mem) -> None:
    for user in ("plain", "rated"):
        mem.add("The deploy script lives in tools/deploy.sh", user_id=user)
    for hit in mem.search("deploy script", user_id="rated"):
        for _ in range(5):
            mem.feedback(hit.memory.id, useful=True)
    text = "The deploy script tools/deploy.sh needs the AWS profile named prod"
    r_plain = mem.peek(mem.add(text, user_id="plain").ids[0]).importance_channels["reward"]
    r_rated = mem.peek(mem.add(text, user_id="rated").ids[0]).importance_channels["reward"]
    assert r_plain == 0.5  # the category's prior: nobody rated a similar memory
    assert r_rated > r_plain + 0.1


def test_attention_rises_with_relevance_to_the_session_context(mem) -> None:
    for user in ("a", "b"):
        mem.observe(
            "Ana Silva phoned Tom Berg about quarterly budget spreadsheets", user_id=user, session_id="s", flush=True
        )
    mem.end_session("s", user_id="b")  # b's session is over: nothing in its working memory
    text = "The quarterly budget spreadsheets from Ana Silva are late"
    [in_context] = [r for r in mem.observe(text, user_id="a", session_id="s", flush=True) if r.id]
    [elsewhere] = [r for r in mem.observe(text, user_id="b", session_id="s", flush=True) if r.id]
    attention_in = mem.peek(in_context.id).importance_channels["attention"]
    attention_out = mem.peek(elsewhere.id).importance_channels["attention"]
    assert attention_out < 1.0
    assert attention_in > attention_out
