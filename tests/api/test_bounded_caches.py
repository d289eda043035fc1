"""Every per-process cache of a long-running ``Memory`` stays within its bound, whatever the traffic: the hot
tier's selections (per scope), the embedding cache, and what open sessions used (co-activation). A server
for many users must not grow with the number of users it ever served (the soak figure: bench/soak.py)."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from reverie import Memory, SettableClock
from reverie.access_updates import SessionUse
from reverie.embed.cache import CachedEmbedder
from reverie.embed.testing import HashEmbedder
from reverie.read.hot import MAX_SCOPES, HotTier


def _memory(tmp_path: Path, clock: SettableClock, **config: object) -> Memory:
    cached = CachedEmbedder(HashEmbedder(64), max_entries=40, clock=clock)
    return Memory(
        tmp_path / "m.db",
        embedder=cached,
        clock=clock,
        config={"opslog": {"enabled": False}, **config},
    )


def test_the_hot_tier_keeps_at_most_its_bound_of_scopes_and_drops_stale_ones(tmp_path: Path) -> None:
    clock = SettableClock()
    with _memory(tmp_path, clock) as mem:
        items = [{"content": f"user {i} likes tea number {i}", "user_id": f"u{i}"} for i in range(60)]
        mem.add_many(items, infer=False)
        assert MAX_SCOPES >= 1000  # a server keeps the hot tiers of about a thousand recent users
        hot = HotTier(max_scopes=16)
        for i in range(60):
            hot.get(mem.store, mem._scope_filter(f"u{i}", None, None), now=clock(), cfg=mem.settings.read)
            assert len(hot) <= 16
        assert len(hot) == 16 and hot.loads == 60
        clock.advance(timedelta(seconds=mem.settings.read.hot_ttl_s + 1))
        hot.get(mem.store, mem._scope_filter("u0", None, None), now=clock(), cfg=mem.settings.read)
        assert len(hot) == 1  # the selections past their TTL left as a new one arrived


def test_the_memory_s_own_hot_tier_is_bounded_across_many_users(tmp_path: Path) -> None:
    clock = SettableClock()
    with _memory(tmp_path, clock) as mem:
        users = [f"u{i}" for i in range(MAX_SCOPES + 100)]
        mem.add_many([{"content": f"{u} keeps bees", "user_id": u} for u in users], infer=False)
        for u in users:
            mem.hot_tier(user_id=u)
        assert len(mem._reader.hot) == MAX_SCOPES


def test_the_embedding_cache_and_the_sessions_stay_within_their_bounds(tmp_path: Path) -> None:
    clock = SettableClock()
    with _memory(tmp_path, clock, read={"session_coaccess_max": 5}) as mem:
        ids = [r.id for r in mem.add_many([f"fact number {i} about gardening" for i in range(120)], user_id="maya")]
        assert isinstance(mem.embedder, CachedEmbedder)
        for i in range(300):
            mem.search(f"gardening fact {i}", user_id="maya", session_id=f"s{i % 3}", k=5)
            mem.get(ids[i % len(ids)])
        assert len(mem.embedder) <= 40
        sessions, remembered, pairs = mem._sessions.size()
        assert sessions == 3 and remembered <= 3 * 5 and pairs <= 3 * (5 * 4 // 2)


def test_sessions_are_bounded_in_number_and_each_in_its_window() -> None:
    from reverie.model import MemoryRecord

    use = SessionUse(per_session=4)
    records = [MemoryRecord(content=f"m{i}", user_id="u") for i in range(50)]
    for n in range(SessionUse._SESSIONS + 200):
        window = records[n % 40 : n % 40 + 6]
        use.co_accessed(window, [r.id for r in window], f"session-{n % (SessionUse._SESSIONS + 100)}")
    sessions, remembered, pairs = use.size()
    assert sessions == SessionUse._SESSIONS
    assert remembered <= sessions * 4 and pairs <= sessions * (4 * 3 // 2)


def test_a_pair_is_counted_once_per_session_while_both_are_in_its_window() -> None:
    from reverie.model import MemoryRecord

    a, b, c = (MemoryRecord(content=x, user_id="u") for x in "abc")
    use = SessionUse(per_session=2)
    assert len(use.co_accessed([a, b], [a.id, b.id], "s")) == 1
    assert use.co_accessed([a, b], [a.id, b.id], "s") == []  # the same session: counted once
    assert len(use.co_accessed([c], [c.id], "s")) == 2  # c with b and a; a leaves the window of 2
    assert use.size() == (1, 2, 1)  # only the pair (b, c) is kept with the window {b, c}


def test_a_small_users_vector_matrix_stays_small() -> None:
    """One exact matrix per user a server served: a user with a few memories holds a few rows, not 64 spare."""
    import numpy as np

    from reverie.store.vector_index import FlatVectors

    flat = FlatVectors(384)
    flat.add(np.arange(3, dtype=np.int64), np.ones((3, 384), dtype=np.float32))
    assert flat.vectors.shape == (3, 384) and flat._vecs.shape[0] <= 8
    for rid in range(3, 40):
        flat.add(np.array([rid], dtype=np.int64), np.ones((1, 384), dtype=np.float32))
    assert len(flat) == 40 and flat._vecs.shape[0] <= 1.5 * 40 + 8  # still geometric growth
