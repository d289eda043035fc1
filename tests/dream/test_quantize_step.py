"""The ``quantize`` dream step (seed 002 embedding compression) and ``restore_precision``, on both backends."""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from datetime import timedelta
from typing import Any

import numpy as np
import pytest

from reverie import Memory, SettableClock
from reverie import vector_codec as quantize
from reverie.dream.quantize import memory_retention, restore_precision, target_precision
from reverie.dynamics.retention import precision_for_retention
from reverie.model import Layer, MemoryRecord, Precision, Status, StoreTier
from reverie.store.base import MemoryFilter

# idle days → seed 002 tier under the default huber retention (episodic half-life 30 days, human
# trust, no accesses): 5 d R 0.89 float32, 20 d R 0.62 int8, 35 d R 0.38 int4, 60 d R 0 int2
AGES = {"fresh": 5, "warm": 20, "cold": 35, "archive": 60}
EXPECTED = {"fresh": Precision.FLOAT32, "warm": Precision.INT8, "cold": Precision.INT4, "archive": Precision.INT2}


def _cold(mem: Memory, name: str, days_idle: float, **kw: Any) -> str:
    now = mem.now()
    rec = MemoryRecord(
        f"the {name} memory about sailing boats and harbours",
        id=name,
        user_id="u",
        layer=kw.pop("layer", Layer.EPISODIC),
        store=kw.pop("store", StoreTier.COLD),
        status=Status.DORMANT,
        source="human",
        trust=1.0,
        created_at=now - timedelta(days=days_idle),
        last_accessed_at=now - timedelta(days=days_idle),
        **kw,
    )
    rec.embedding = mem._embed([rec.content])[0]
    mem.store.insert([rec])
    return rec.id


@pytest.fixture
def mem(make_memory: Any) -> Memory:
    """A memory whose quantize step goes down to the design's int2 archive tier: these tests exercise every
    tier (the default stops at int8, see test_the_default_stops_at_int8)."""
    return make_memory(dream={"quantize": {"lowest_precision": "int2"}})


def test_the_default_stops_at_int8(make_memory: Any) -> None:
    """Consolidated memories are found again through their own vectors in the cold store, so by default the
    archive and int4 tiers keep int8 (bench/locomo.py: R@10 0.678 with int2, 0.688 with int8)."""
    mem = make_memory()
    assert mem.settings.dream.quantize.lowest_precision == "int8"
    for name, days in AGES.items():
        _cold(mem, name, days)
    step = _step(mem.dream(steps=["quantize"]))
    assert step["details"]["transitions"] == {"float32→int8": 3}
    recs = mem.store.get(list(AGES))
    assert [recs[n].embedding_precision for n in AGES] == [Precision.FLOAT32, *[Precision.INT8] * 3]


def _step(report: Mapping[str, Any]) -> dict[str, Any]:
    steps = report["steps"]
    assert isinstance(steps, list)
    return next(s for s in steps if s["name"] == "quantize")


def test_precision_drops_by_retention_tier_and_reports_bytes(mem: Memory) -> None:
    for name, days in AGES.items():
        _cold(mem, name, days)
    hot = _cold(mem, "hot", 60, store=StoreTier.HOT)
    for name in AGES:
        rec = mem.store.get([name])[name]
        r = memory_retention(rec, now=mem.now(), settings=mem.settings)
        assert precision_for_retention(retention=r, cfg=mem.settings.dynamics.retention) is EXPECTED[name]
    step = _step(mem.dream(steps=["quantize"]))
    dim = 64
    saved = sum(4 * dim - quantize.stored_bytes(p, dim) for p in EXPECTED.values())
    assert step["changed"] == 3 and step["examined"] == 4  # the hot memory is not even looked at
    details = step["details"]
    assert isinstance(details, dict)
    assert details["transitions"] == {"float32→int8": 1, "float32→int4": 1, "float32→int2": 1}
    assert details["bytes_saved"] == saved == (256 - 76) + (256 - 44) + (256 - 28)
    recs = mem.store.get([*AGES, hot])
    for name, want in EXPECTED.items():
        assert recs[name].embedding_precision is want
    assert recs[hot].embedding_precision is Precision.FLOAT32
    ev = [e for e in mem.history("cold") if e.event == "quantized"]
    assert len(ev) == 1 and ev[0].actor == "dream"
    assert ev[0].data["from"] == "float32" and ev[0].data["to"] == "int4"
    assert ev[0].data["bytes_before"] == 256 and ev[0].data["bytes_after"] == 44
    assert 0.2 < ev[0].data["retention"] <= 0.5
    # idempotent: a second run at the same instant changes nothing
    assert _step(mem.dream(steps=["quantize"]))["changed"] == 0
    assert len([e for e in mem.history("cold") if e.event == "quantized"]) == 1


def test_precision_only_goes_down_and_continues_as_retention_falls(mem: Memory, clock: SettableClock) -> None:
    _cold(mem, "warm", AGES["warm"])
    mem.dream(steps=["quantize"])
    assert mem.store.get(["warm"])["warm"].embedding_precision is Precision.INT8
    # an access raises retention (fresh last access) — the precision of a cold memory never rises
    mem.store.update_fields("warm", {"last_accessed_at": mem.now(), "access_count": 3})
    assert _step(mem.dream(steps=["quantize"]))["changed"] == 0
    assert mem.store.get(["warm"])["warm"].embedding_precision is Precision.INT8
    clock.advance(days=80)  # retention falls to the archive tier: int8 → int2
    step = _step(mem.dream(steps=["quantize"]))
    assert step["changed"] == 1 and step["details"]["transitions"] == {"int8→int2": 1}
    assert [e.data["to"] for e in mem.history("warm") if e.event == "quantized"] == ["int8", "int2"]


def test_protected_durable_and_embeddingless_memories_keep_float32(make_memory) -> None:
    mem = make_memory()
    _cold(mem, "pinned", 60, pinned=True)
    _cold(mem, "flashbulb", 60, flashbulb=True)
    _cold(mem, "semantic", 400, layer=Layer.SEMANTIC)  # infinite half-life: R = 1
    plain = MemoryRecord(
        "no vector", id="novec", store=StoreTier.COLD, user_id="u", created_at=mem.now() - timedelta(days=90)
    )
    mem.store.insert([plain])
    step = _step(mem.dream(steps=["quantize"]))
    assert step["changed"] == 0 and step["examined"] == 4
    assert {r.embedding_precision for r in mem.store.get(["pinned", "flashbulb", "semantic", "novec"]).values()} == {
        Precision.FLOAT32
    }
    loose = make_memory(dream={"quantize": {"protect_anchored": False, "lowest_precision": "int4"}})
    step = _step(loose.dream(steps=["quantize"]))
    assert step["changed"] == 2  # pinned and flashbulb, floored at int4
    assert {loose.store.get([i])[i].embedding_precision for i in ("pinned", "flashbulb")} == {Precision.INT4}


def test_claimed_memories_are_left_to_their_owner(mem: Memory) -> None:
    _cold(mem, "archive", AGES["archive"])
    _cold(mem, "cold", AGES["cold"])
    held = mem.store.claim(["archive"], owner="other-dreamer", phase="quantize", now=mem.now(), ttl_seconds=600)
    assert held == ["archive"]
    step = _step(mem.dream(steps=["quantize"]))
    assert step["changed"] == 1
    assert mem.store.get(["archive"])["archive"].embedding_precision is Precision.FLOAT32
    mem.store.release("other-dreamer")
    assert _step(mem.dream(steps=["quantize"]))["changed"] == 1


def test_deep_recall_finds_quantized_memories_through_the_engine(mem: Memory) -> None:
    for name, days in AGES.items():
        _cold(mem, name, days)
    mem.dream(steps=["quantize"])
    query = mem._embed(["the archive memory about sailing boats and harbours"])[0]
    hits = mem.store.vector_search(query, MemoryFilter(user_id="u", stores=None, statuses=None), 4)
    assert hits[0].id == "archive" and hits[0].score == pytest.approx(1.0, abs=2e-3)
    assert mem.store.vector_search(query, MemoryFilter(user_id="u", statuses=None), 4) == []  # hot only


def test_restore_precision_re_embeds_from_content(mem: Memory) -> None:
    for name, days in AGES.items():
        _cold(mem, name, days)
    mem.dream(steps=["quantize"])
    calls: list[list[str]] = []

    def embed(texts: Sequence[str]) -> np.ndarray:
        calls.append(list(texts))
        return mem._embed(texts)

    mem.store.update_fields("archive", {"store": StoreTier.HOT, "status": Status.ACTIVE})
    done = restore_precision(mem.store, embed, ["archive", "fresh", "cold", "missing"], mem.now())
    assert sorted(done) == ["archive", "cold"]  # fresh was float32 already, missing is unknown
    assert sorted(calls[0]) == sorted(mem.store.get(["archive", "cold"])[i].content for i in ("archive", "cold"))
    rec = mem.store.get(["archive"])["archive"]
    assert rec.embedding_precision is Precision.FLOAT32
    np.testing.assert_array_equal(rec.embedding, mem._embed([rec.content])[0])
    ev = [e for e in mem.history("archive") if e.event == "precision_restored"]
    assert ev and ev[0].data == {"from": "int2", "to": "float32"}
    assert restore_precision(mem.store, embed, ["archive"], mem.now()) == []  # idempotent
    hot = mem.store.vector_search(rec.embedding, MemoryFilter(user_id="u"), 1)
    assert hot[0].id == "archive" and hot[0].score == pytest.approx(1.0, abs=1e-5)


def test_restore_precision_retries_after_a_concurrent_write(mem: Memory) -> None:
    _cold(mem, "archive", AGES["archive"])
    mem.dream(steps=["quantize"])
    raced = threading.Event()

    def embed(texts: Sequence[str]) -> np.ndarray:
        if not raced.is_set():  # a concurrent writer edits the memory between read and write
            raced.set()
            mem.store.update_fields("archive", {"content": "the archive memory, corrected: dinghies"})
        return mem._embed(texts)

    assert restore_precision(mem.store, embed, ["archive"], mem.now()) == ["archive"]
    rec = mem.store.get(["archive"])["archive"]
    assert rec.embedding_precision is Precision.FLOAT32
    np.testing.assert_array_equal(rec.embedding, mem._embed(["the archive memory, corrected: dinghies"])[0])


def test_target_precision_rules(mem: Memory) -> None:
    now = mem.now()
    rec = MemoryRecord("x", store=StoreTier.COLD, created_at=now - timedelta(days=60), source="human", trust=1.0)
    target = target_precision(rec, now=now, settings=mem.settings)
    assert target is not None and target[0] == Precision.INT2 and target[1] == pytest.approx(0.0)
    rec.embedding_precision = Precision.INT2
    assert target_precision(rec, now=now, settings=mem.settings) is None
    rec.store, rec.embedding_precision = StoreTier.HOT, Precision.FLOAT32
    assert target_precision(rec, now=now, settings=mem.settings) is None


def test_pass_reads_enough_columns_to_decide_as_full_records(mem: Memory, clock: SettableClock) -> None:
    """The quantize pass reads ten columns; every decision equals the one made on the full record."""
    import random

    from reverie.dream.quantize import _PASS_OMIT

    rng = random.Random(5)
    now = clock()
    vec = np.ones(mem.embedder.dim, dtype=np.float32) / np.sqrt(mem.embedder.dim)
    recs = [MemoryRecord(f"cold memory {i}", user_id="u", store=StoreTier.COLD, status=Status.DORMANT, embedding=vec,
                         layer=rng.choice(list(Layer)), trust=rng.choice([0.2, 0.6, 0.95]),
                         created_at=now - timedelta(days=rng.uniform(0, 400)),
                         last_accessed_at=None if rng.random() < 0.5 else now - timedelta(days=rng.uniform(0, 90)),
                         access_count=rng.choice([0, 1, 4, 20]), pinned=rng.random() < 0.1,
                         flashbulb=rng.random() < 0.1, immutable=rng.random() < 0.05)
            for i in range(200)]  # fmt: skip
    mem.store.insert(recs)
    flt = MemoryFilter(user_id="u", stores=frozenset({StoreTier.COLD}), statuses=None)
    narrow = {r.id: r for b in mem.store.scan(flt, omit=_PASS_OMIT) for r in b}
    full = {r.id: r for b in mem.store.scan(flt) for r in b}
    decided = [target_precision(full[i], now=now, settings=mem.settings) for i in full]
    assert decided == [target_precision(narrow[i], now=now, settings=mem.settings) for i in full]
    assert sum(d is not None for d in decided) > 30 and sum(d is None for d in decided) > 30
