"""Dream cycle steps on both backends, on a settable clock."""

from __future__ import annotations

import random
from datetime import datetime, timedelta

import pytest

from reverie import InvalidInputError, Layer, Memory, SettableClock, Status
from reverie.model import MemoryRecord


def test_working_memories_promote_after_30_minutes(mem: Memory, clock: SettableClock) -> None:
    old = mem.add("an older working memory", user_id="u").id
    clock.advance(minutes=31)
    young = mem.add("a fresh working memory", user_id="u").id
    report = mem.dream()
    promote = next(s for s in report["steps"] if s["name"] == "promote")
    assert promote["changed"] == 1 and promote["details"]["rules"] == {"working_age": 1}
    recs = mem.store.get([old, young])
    assert recs[old].layer is Layer.EPISODIC and recs[young].layer is Layer.WORKING
    ev = [e for e in mem.history(old) if e.event == "promoted"]
    assert ev and ev[0].data == {"from": "working", "to": "episodic", "rule": "working_age"}
    again = mem.dream()  # idempotent: nothing left to promote
    assert next(s for s in again["steps"] if s["name"] == "promote")["changed"] == 0


def test_two_accesses_promote_and_frequent_access_reaches_semantic(mem: Memory, clock: SettableClock) -> None:
    mid = mem.add("the staging password rotates on Mondays", user_id="u").id
    mem.get(mid)
    mem.get(mid)
    mem.dream(steps=["promote"])
    assert mem.store.get([mid])[mid].layer is Layer.EPISODIC
    mem.get(mid)  # third access: seed 001 rule 1 (access count >= 3)
    mem.dream(steps=["promote"])
    assert mem.store.get([mid])[mid].layer is Layer.SEMANTIC


def test_decay_materialises_energy(mem: Memory, clock: SettableClock) -> None:
    mid = mem.add("decaying thought", user_id="u").id
    clock.advance(hours=2)
    mem.dream(steps=["decay"])
    rec = mem.store.get([mid])[mid]
    assert rec.energy == pytest.approx(1.0 * 2.718281828459045 ** (-0.5 * 2), rel=1e-6)
    assert rec.energy_updated_at == clock()
    assert 0 < rec.retrieval_strength < 1
    report = mem.dream(steps=["decay"])  # same instant: nothing to change (no compounding)
    assert report["steps"][0]["changed"] == 0
    assert mem.store.get([mid])[mid].energy == pytest.approx(rec.energy)


def test_expiry_of_faded_working_memories(make_memory, clock: SettableClock) -> None:
    # promotion by age switched off so that the seed 000 expiry rule is observable
    m = make_memory(dynamics={"promotion": {"working_after_minutes": 10_000, "working_use_energy": False}})
    mid = m.add("ephemeral", user_id="u").id
    pinned = m.add("ephemeral but pinned", user_id="u").id
    m.pin(pinned)
    clock.advance(hours=5)  # 1.0·exp(-0.5·5) = 0.082 < 0.1
    report = m.dream(steps=["expire"])
    assert report["steps"][0]["changed"] == 1
    recs = m.store.get([mid, pinned])
    assert recs[mid].status is Status.EXPIRED and recs[pinned].status is Status.ACTIVE
    assert m.search("ephemeral", user_id="u")[0].memory.id == pinned


def test_prune_access_log(mem: Memory, clock: SettableClock) -> None:
    mid = mem.add("accessed long ago", user_id="u").id
    mem.get(mid)
    clock.advance(days=200)
    mem.get(mid)
    report = mem.dream(steps=["prune"])
    details = report["steps"][0]["details"]
    # the old access, and the add's action telemetry (older than write.policy.telemetry_retention_days, 90)
    assert (details["access_log_rows"], details["action_telemetry_rows"]) == (1, 1)
    assert report["steps"][0]["changed"] == 2
    assert len(mem.store.access_times([mid])[mid]) == 1
    assert mem.action_telemetry(user_id="u") == []


def test_claimed_memories_are_skipped_by_another_dreamer(mem: Memory, clock: SettableClock) -> None:
    ids = [r.id for r in mem.add_many([f"memory {i}" for i in range(6)], user_id="u")]
    clock.advance(minutes=45)
    held = mem.store.claim(ids[:3], owner="other-process", phase="promote", now=clock(), ttl_seconds=600)
    assert sorted(held) == sorted(ids[:3])
    mem.dream(steps=["promote"])
    layers = {i: r.layer for i, r in mem.store.get(ids).items()}
    assert all(layers[i] is Layer.WORKING for i in ids[:3])
    assert all(layers[i] is Layer.EPISODIC for i in ids[3:])
    clock.advance(minutes=11)  # the other claim expired: the next run finishes the work
    mem.dream(steps=["promote"])
    assert all(r.layer is Layer.EPISODIC for r in mem.store.get(ids).values())


def test_unknown_step_and_report(mem: Memory) -> None:
    with pytest.raises(InvalidInputError):
        mem.dream(steps=["teleport"])
    report = mem.dream()
    names = [s["name"] for s in report["steps"]]
    assert names == list(mem.settings.dream.steps)
    assert names[0] == "decay" and names[-1] == "prune"
    assert mem.store.get_state("dream:last")["owner"] == report["owner"]


def test_user_scoped_dream_leaves_others(mem: Memory, clock: SettableClock) -> None:
    a = mem.add("alpha", user_id="a").id
    b = mem.add("beta", user_id="b").id
    clock.advance(timedelta(hours=1))
    mem.dream(steps=["promote"], user_id="a")
    recs = mem.store.get([a, b])
    assert recs[a].layer is Layer.EPISODIC and recs[b].layer is Layer.WORKING


def test_dream_reports_are_kept_newest_first(make_memory, clock: SettableClock) -> None:
    m = make_memory(dream={"reports_kept": 2})
    assert m.dream_reports() == []
    first = m.dream(steps=["prune"])
    clock.advance(minutes=1)
    second = m.dream(steps=["decay"])
    clock.advance(minutes=1)
    third = m.dream()
    assert [r["owner"] for r in m.dream_reports()] == [third["owner"], second["owner"]]
    assert first["owner"] not in {r["owner"] for r in m.dream_reports()}


def _varied_records(user: str, now: datetime, n: int = 240) -> list[MemoryRecord]:
    """Records spread over every field the energy / promotion / expiry rules look at (fixed seed)."""
    rng = random.Random(11)
    layers = [Layer.WORKING, Layer.EPISODIC, Layer.SEMANTIC, Layer.PROCEDURAL]
    out = []
    for i in range(n):
        created = now - timedelta(hours=rng.uniform(0, 24 * 200))
        accessed = created + (now - created) * rng.random() if rng.random() < 0.6 else None
        out.append(MemoryRecord(
            f"memory {i} about topic {rng.randrange(9)}", id=f"{user}-{i:04d}", user_id=user,
            layer=rng.choice(layers), category=rng.choice(["fact", "preference", "decision", "event"]),
            entities=rng.sample(["entity://person/ada", "entity://tech/react", "entity://org/acme"], rng.randrange(3)),
            created_at=created, recorded_at=created, updated_at=created, last_accessed_at=accessed,
            access_count=rng.choice([0, 0, 1, 2, 3, 5, 12]), energy=rng.uniform(0.05, 6.0),
            energy_updated_at=created + (now - created) * rng.random(), importance=rng.random(),
            utility=rng.random(), storage_strength=rng.uniform(0.5, 20), stability=rng.uniform(0.5, 40),
            trust=rng.choice([0.3, 0.6, 0.9]), pinned=rng.random() < 0.05, immutable=rng.random() < 0.03,
            core=rng.random() < 0.05, flashbulb=rng.random() < 0.05,
        ))  # fmt: skip
    return out


def test_narrow_step_scans_decide_as_full_records(
    mem: Memory, clock: SettableClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """decay, promote and expire read only their columns; with every column read they change the same."""
    from reverie.dream import upkeep

    now = clock()
    mem.store.insert(_varied_records("narrow", now) + _varied_records("full", now))
    names = ["decay", "promote", "expire"]
    narrow = mem.dream(steps=names, user_id="narrow")
    monkeypatch.setattr(upkeep, "_DECAY_OMIT", frozenset())
    monkeypatch.setattr(upkeep, "_PROMOTE_OMIT", frozenset())
    full = mem.dream(steps=names, user_id="full")
    assert [(s["name"], s["changed"], s["details"]) for s in narrow["steps"]] == [
        (s["name"], s["changed"], s["details"]) for s in full["steps"]
    ]
    assert sum(s["changed"] for s in narrow["steps"]) > 100  # the records give every rule work

    def state(user: str) -> list[tuple[object, ...]]:
        recs = sorted(
            mem.list(
                user_id=user,
                filters={"status": list(Status), "store": ["hot", "cold"]},
                limit=1000,
                order_by="created_at",
            ),
            key=lambda r: r.id,
        )
        return [
            (r.id.split("-")[1], r.layer, r.status, r.energy, r.retrieval_strength, r.valid_until, r.version)
            for r in recs
        ]

    assert state("narrow") == state("full")


def test_ops_log_has_one_line_per_event_kind_and_batch(make_memory, clock: SettableClock, tmp_path) -> None:
    import json

    mem = make_memory(dream={"batch_size": 50})
    ids = [r.id for r in mem.add_many([f"working note number {i}" for i in range(120)], user_id="u", infer=False)]
    clock.advance(minutes=31)
    report = mem.dream(steps=["promote"])
    assert report["steps"][0]["changed"] == 120
    mem.ops.flush()
    lines = [json.loads(x) for x in (tmp_path / "ops-log.jsonl").read_text().splitlines()]
    promoted = [e for e in lines if e["op"] == "dream.promoted"]
    assert len(promoted) == 3  # batches of 50, 50, 20: the log says who, not one line each
    assert sorted(i for e in promoted for i in e["ids"]) == sorted(ids)
    assert sum(e["count"] for e in promoted) == 120
    assert all(sum(e["reasons"].values()) == e["count"] for e in promoted)
    assert all(any(h.event == "promoted" for h in mem.history(i)) for i in ids)
