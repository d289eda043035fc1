"""The public Memory API on both backends (hash embedder, settable clock)."""

from __future__ import annotations

import json
import os
import stat
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from reverie import (
    Action,
    ContentTooLargeError,
    ImmutableMemoryError,
    InvalidInputError,
    Layer,
    Memory,
    NotFoundError,
    SettableClock,
    Status,
)


def test_add_get_search_roundtrip(mem: Memory, clock: SettableClock) -> None:
    res = mem.add("Maya is allergic to penicillin", user_id="maya", metadata={"turn": 7})
    assert res.action is Action.CREATE and res.ids == (res.id,)
    rec = mem.get(res.id)
    assert rec.content == "Maya is allergic to penicillin"
    assert rec.metadata == {"turn": 7}
    assert rec.user_id == "maya"
    assert rec.layer is Layer.WORKING  # seed 000: new memories start in the working tier
    assert rec.created_at == clock()
    hits = mem.search("penicillin allergy", user_id="maya")
    assert hits and hits[0].memory.id == res.id
    assert hits[0].explain["channels"]["text"]["rank"] == 1
    assert "vector" in hits[0].explain["channels"]
    assert hits[0].score > 0


def test_infer_dedups_and_verbatim_does_not(mem: Memory) -> None:
    a = mem.add("The API uses JWT tokens.", user_id="u")
    b = mem.add("the api uses   JWT tokens", user_id="u")
    assert b.action is Action.SKIP and b.id == a.id
    c = mem.add("the api uses JWT tokens", user_id="u", infer=False)
    assert c.action is Action.CREATE and c.id != a.id
    other_user = mem.add("The API uses JWT tokens.", user_id="v")
    assert other_user.action is Action.CREATE


def test_scopes_are_isolated(mem: Memory) -> None:
    mem.add("alice secret: the vault code is 1234", user_id="alice")
    mem.add("bob likes vault music", user_id="bob")
    mem.add("anonymous vault note")
    for user in ("alice", "bob", None):
        hits = mem.search("vault code", user_id=user, k=50)
        assert hits and all(h.memory.user_id == user for h in hits)
        listed = mem.list(user_id=user)
        assert listed and all(r.user_id == user for r in listed)


def test_agent_filter_and_session_filter(mem: Memory) -> None:
    mem.add("planner agent note about deploys", user_id="u", agent_id="planner", session_id="s1")
    mem.add("coder agent note about deploys", user_id="u", agent_id="coder", session_id="s2")
    hits = mem.search("deploys", user_id="u", agent_id="coder")
    assert [h.memory.agent_id for h in hits] == ["coder"]
    hits = mem.search("deploys", user_id="u", filters={"session_id": "s1"})
    assert [h.memory.session_id for h in hits] == ["s1"]


@pytest.mark.parametrize(
    "bad",
    ["", "   \n\t", "nul\x00byte", b"\xff\xfe\xfa", 42, None, ["a list"], "\ud800 lone surrogate"],
)
def test_bad_content_is_rejected(mem: Memory, bad: object) -> None:
    with pytest.raises(InvalidInputError):
        mem.add(bad, user_id="u")
    assert mem.list(user_id="u") == []


def test_content_size_limit(make_memory) -> None:
    m = make_memory(limits={"max_content_bytes": 1000})
    m.add("x" * 1000, user_id="u")
    with pytest.raises(ContentTooLargeError):
        m.add("y" * 1001, user_id="u")
    assert len(m.list(user_id="u")) == 1


def test_add_many_is_atomic_on_bad_item(mem: Memory) -> None:
    mem.add("kept before", user_id="u")
    with pytest.raises(InvalidInputError):
        mem.add_many(["good one", "", "another good one"], user_id="u")
    assert [r.content for r in mem.list(user_id="u")] == ["kept before"]


def test_add_many_items_and_vectors(mem: Memory) -> None:
    import numpy as np

    items = [{"content": f"fact number {i}", "metadata": {"i": i}} for i in range(30)]
    vecs = np.random.default_rng(1).normal(size=(30, 64)).astype(np.float32)
    res = mem.add_many(items, user_id="u", vectors=vecs, infer=False, batch_size=7)
    assert len(res) == 30 and all(r.action is Action.CREATE for r in res)
    assert mem.store.count(mem._scope_filter("u", None, None)) == 30
    with pytest.raises(InvalidInputError):
        mem.add_many(["a", "b"], user_id="u", vectors=vecs[:1])
    with pytest.raises(InvalidInputError):
        mem.add_many([{"content": "x", "colour": "red"}], user_id="u")


def test_bad_arguments(mem: Memory) -> None:
    mid = mem.add("something", user_id="u").id
    with pytest.raises(NotFoundError):
        mem.get("no-such-id")
    with pytest.raises(InvalidInputError):
        mem.get(123)  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError):
        mem.search("q", user_id="u", k=0)
    with pytest.raises(InvalidInputError):
        mem.search("q", user_id="u", filters={"colour": "red"})
    with pytest.raises(InvalidInputError):
        mem.search("q", user_id="u", filters={"layer": "attic"})
    with pytest.raises(InvalidInputError):
        mem.add("x", user_id="u", metadata={"f": object()})
    with pytest.raises(InvalidInputError):
        mem.add("x", user_id="u", when=datetime(2025, 1, 1))  # naive
    with pytest.raises(InvalidInputError):
        mem.add("x", user_id="u", source="gossip")
    with pytest.raises(InvalidInputError):
        mem.search("", user_id="u")
    assert mem.get(mid).content == "something"


def test_update_reembeds_and_records_history(mem: Memory, clock: SettableClock) -> None:
    mid = mem.add("Maya lives in Berlin", user_id="u").id
    clock.advance(hours=1)
    mem.update(mid, "Maya lives in Lisbon", reason="moved")
    assert mem.search("Lisbon", user_id="u")[0].memory.id == mid
    events = [e.event for e in mem.history(mid)]
    assert events[0] == "created" and "updated" in events
    upd = next(e for e in mem.history(mid) if e.event == "updated")
    assert upd.reason == "moved" and upd.data["before"]["content"] == "Maya lives in Berlin"


def test_immutable_memories_refuse_edits(mem: Memory) -> None:
    mid = mem.add("a truth anchor", user_id="u").id
    mem.store.update_fields(mid, {"immutable": True})
    with pytest.raises(ImmutableMemoryError):
        mem.update(mid, "changed")
    assert mem.get(mid).content == "a truth anchor"


def test_pin_invalidate_forget(mem: Memory, tmp_path: Path) -> None:
    mid = mem.add("temporary fact about parking", user_id="u").id
    assert mem.pin(mid).pinned
    assert not mem.unpin(mid).pinned
    rec = mem.invalidate(mid, "no longer true")
    assert rec.status is Status.INVALIDATED and rec.valid_until is not None
    assert mem.search("parking", user_id="u") == []
    assert mem.get(mid).status is Status.INVALIDATED  # kept, reachable by id
    with pytest.raises(InvalidInputError):
        mem.invalidate(mid, "")
    mem.forget(mid)
    with pytest.raises(NotFoundError):
        mem.get(mid)
    mem.ops.flush()
    ops = [json.loads(line) for line in (tmp_path / "ops-log.jsonl").read_text().splitlines()]
    assert any(e["op"] == "forget" and e["id"] == mid for e in ops)


def test_access_updates_on_get_and_search(mem: Memory, clock: SettableClock) -> None:
    mid = mem.add("the deploy key rotates monthly", user_id="u").id
    before = mem.store.get([mid])[mid]
    clock.advance(hours=2)
    after_get = mem.get(mid)
    assert after_get.access_count == before.access_count + 1
    assert after_get.last_accessed_at == clock()
    assert after_get.storage_strength >= before.storage_strength
    clock.advance(hours=2)
    mem.search("deploy key", user_id="u")
    stored = mem.store.get([mid])[mid]
    assert stored.access_count == before.access_count + 2
    assert len(mem.store.access_times([mid])[mid]) == 2


def test_search_access_update_is_written_before_the_store_is_used_again(
    make_memory, store_target: str, tmp_path: Path
) -> None:
    mem = make_memory()
    mid = mem.add("the staging server restarts nightly", user_id="u").id
    mem.search("staging server", user_id="u")
    assert mem._deferred  # the search returned before writing its access update
    assert mem.store.get([mid])[mid].access_count == 1  # any later use of the store writes it first
    assert not mem._deferred
    mem.search("staging server restarts", user_id="u")
    mem.search("staging server nightly", user_id="u")  # the next search writes the previous one's update
    assert len(mem._deferred) == 1
    mem.close()  # closing writes what is pending
    again = make_memory()
    assert again.store.get([mid])[mid].access_count == 3
    assert len(again.store.access_times([mid])[mid]) == 3


def test_script_that_never_closes_keeps_its_last_search_access(tmp_path: Path) -> None:
    import subprocess
    import sys

    from reverie.embed.testing import HashEmbedder

    db = tmp_path / "m.db"
    script = (
        "from reverie import Memory\n"
        "from reverie.embed.testing import HashEmbedder\n"
        f"m = Memory({str(db)!r}, embedder=HashEmbedder(64))\n"
        "mid = m.add('the backup runs at noon', user_id='u', infer=False).id\n"
        "m.search('backup noon', user_id='u')\n"
        "print(mid)\n"  # no close(): the interpreter exits with the access update pending
    )
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2] / "src")}
    mid = subprocess.run(
        [sys.executable, "-c", script], check=True, capture_output=True, text=True, env=env, cwd=tmp_path
    ).stdout.strip()
    with Memory(str(db), embedder=HashEmbedder(64)) as mem:
        assert mem.store.get([mid])[mid].access_count == 1


def test_failed_deferred_access_update_is_logged_not_raised(
    mem: Memory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from reverie.errors import StoreError

    mid = mem.add("the deploy window is friday", user_id="u", infer=False).id
    gone = mem.add("the deploy window moved to monday", user_id="u", infer=False).id
    mem.search("deploy window", user_id="u")
    mem._store.delete([gone])  # deleted behind the engine's back: its pending update changes nothing
    assert mem.store.get([gone]) == {} and mem.store.get([mid])[mid].access_count == 1
    mem.search("deploy window friday", user_id="u")

    def broken(*args: object, **kw: object) -> None:
        raise StoreError("disk I/O error")

    monkeypatch.setattr(mem._store, "update_many", broken)
    assert mem.list(user_id="u")  # the operation that writes the pending update still succeeds
    monkeypatch.undo()
    assert mem.store.get([mid])[mid].access_count == 1  # the failed update was rolled back whole
    mem.ops.flush()
    ops = [json.loads(line) for line in (tmp_path / "ops-log.jsonl").read_text().splitlines()]
    assert any(e["op"] == "search.access_failed" and "disk I/O error" in e["error"] for e in ops)


def test_verbatim_batch_is_one_ops_log_line_naming_every_memory(make_memory, tmp_path: Path) -> None:
    mem = make_memory()
    added = mem.add_many([f"plain note {i}" for i in range(7)], user_id="u", infer=False, batch_size=3)
    mem.ops.flush()
    ops = [json.loads(line) for line in (tmp_path / "ops-log.jsonl").read_text().splitlines()]
    adds = [e for e in ops if e["op"] == "add"]
    assert [e["count"] for e in adds] == [3, 3, 1]
    assert [i for e in adds for i in e["ids"]] == [r.id for r in added]
    assert all(e["action"] == "CREATE" and e["infer"] is False for e in adds)


def test_feedback_moves_utility(mem: Memory) -> None:
    mid = mem.add("use the staging database for tests", user_id="u").id
    up = mem.feedback(mid, useful=True).utility
    assert up > 0.5
    down = mem.feedback(mid, useful=False).utility
    assert down < up
    with pytest.raises(InvalidInputError):
        mem.feedback(mid, useful="yes")  # type: ignore[arg-type]


def test_stats_health_check(mem: Memory) -> None:
    mem.add_many(["one fact", "two facts", "three facts"], user_id="u")
    mem.add("other user fact", user_id="v")
    s = mem.stats(user_id="u")
    assert s["total"] == 3 and s["by_layer"] == {"working": 3}
    row = s["rows"][0]
    assert row["energy_min"] <= row["energy_avg"] <= row["energy_max"]
    assert mem.stats()["total"] == 4


def test_explain_strength(mem: Memory) -> None:
    mid = mem.add("explain me", user_id="u").id
    data = mem.explain_strength(mid)
    assert "energy" in data and "formula" in data["energy"]
    json.dumps(data)  # JSON-serialisable


def test_restore_round_trip(mem: Memory, make_memory, tmp_path: Path) -> None:
    ids = [r.id for r in mem.add_many(["alpha fact", "beta fact"], user_id="u")]
    mem.pin(ids[0])
    records = [mem.store.get([i])[i].to_dict() for i in ids]
    other = Memory(
        tmp_path / "copy.db", config={"opslog": {"enabled": False}}, embedder=mem.embedder, clock=mem._clock_fn
    )
    try:
        assert other.restore(records) == {"restored": 2, "skipped": 0, "rejected": 0, "errors": []}
        assert other.restore(records) == {"restored": 0, "skipped": 2, "rejected": 0, "errors": []}
        copy = other.store.get(ids)
        for i in ids:
            a, b = mem.store.get([i])[i].to_dict(), copy[i].to_dict()
            assert {k: v for k, v in a.items() if k != "version"} == {k: v for k, v in b.items() if k != "version"}
        assert other.search("alpha", user_id="u")[0].memory.id == ids[0]
    finally:
        other.close()


def test_sqlite_file_is_owner_only(tmp_path: Path) -> None:
    from reverie.embed.testing import HashEmbedder

    path = tmp_path / "sub" / "m.db"
    with Memory(path, embedder=HashEmbedder(64), config={"opslog": {"enabled": False}}) as m:
        m.add("x marks the spot", user_id="u")
    mode = stat.S_IMODE(os.stat(path).st_mode)
    assert mode & 0o077 == 0, oct(mode)


def test_clock_must_be_aware(tmp_path: Path) -> None:
    from reverie.embed.testing import HashEmbedder

    with (
        Memory(
            tmp_path / "m.db",
            embedder=HashEmbedder(64),
            clock=lambda: datetime(2025, 1, 1),
            config={"opslog": {"enabled": False}},
        ) as m,
        pytest.raises(InvalidInputError),
    ):
        m.add("naive clock", user_id="u")


def test_when_sets_valid_from(mem: Memory, clock: SettableClock) -> None:
    when = clock() - timedelta(days=400)
    rec = mem.get(mem.add("happened long ago", user_id="u", when=when).id)
    assert rec.valid_from == when.astimezone(UTC) and rec.recorded_at == clock()
