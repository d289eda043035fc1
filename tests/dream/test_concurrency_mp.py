"""Several OS processes dream at once on one store while others write (seed 000's optimistic
concurrency: claims before work, the earlier claim wins, optimistic versions on every write).

Runs against the real embedded PostgreSQL server and against one SQLite file. The store is seeded
with groups of similar memories that faded long ago (consolidation material); then, at the same
time, three dreamer processes run full dream cycles, two writer processes add memories (one
verbatim, one through the write path, both touching old memories with ``get`` and ticking
automatically), and one more dreamer is killed with SIGKILL in the middle of a cycle. Afterwards:

* every memory a writer was told was stored exists, and nothing exists that nobody wrote;
* no memory is summarised into more than one summary and none carries two consolidation events
  (checked generically through relations and history, whatever the steps are called);
* the store is consistent (links point at existing memories, a superseded memory names a memory
  that exists, no memory stays claimed);
* a normal run after the claims of the killed dreamer expired finishes the work: a further run
  consolidates nothing more.

This file is also the worker program: ``python test_concurrency_mp.py ROLE JSON``.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from collections import Counter, defaultdict
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

SRC = Path(__file__).resolve().parents[2] / "src"
DIM = 64
NOW = datetime(2025, 6, 1, 12, 0, tzinfo=UTC)  # the dreamers' "now"
SEEDED_AT = NOW - timedelta(days=120)  # the groups were written long ago and never used since
CLAIM_TTL_S = 600.0
GROUPS = 40
MEMBERS = 6
WRITES_PER_WRITER = 40

PLACES = [
    "Mount Rainier",
    "Lake Washington",
    "Green Lake",
    "Discovery Park",
    "Alki Beach",
    "Cougar Mountain",
    "Snoqualmie Falls",
    "Tiger Mountain",
    "Golden Gardens",
    "Carkeek Park",
]
TOPICS = [
    ("hiking", "trail boots backpack summit"),
    ("kayaking", "paddle river kayak current"),
    ("cooking", "recipe oven garlic pasta"),
    ("chess", "opening gambit endgame tournament"),
    ("gardening", "tomatoes compost seedlings soil"),
    ("pottery", "clay wheel glaze kiln"),
    ("cycling", "bike gears helmet climb"),
    ("baking", "sourdough starter flour crust"),
    ("guitar", "chords strings capo riff"),
    ("birdwatching", "binoculars heron warbler nest"),
]


def group_texts(g: int, members: int = MEMBERS) -> list[str]:
    """``members`` alike memories of one activity (same words, a different day each): seed 003's
    "User went hiking at Mount Rainier on March 12" kind of fading episodic group."""
    topic, words = TOPICS[g % len(TOPICS)]
    place = PLACES[(g // len(TOPICS)) % len(PLACES)]
    return [f"User went {topic} at {place} group {g} with {words} on March {day + 1}" for day in range(members)]


def settings(*, tick_every: int, name: str = "test") -> dict[str, Any]:
    """Default steps (cycle and tick); small batches so that the processes interleave more."""
    return {
        "opslog": {"enabled": False},
        "instance_id": name,
        "dream": {"batch_size": 40, "claim_ttl_s": CLAIM_TTL_S, "schedule": {"tick_every": tick_every}},
    }


# the worker program --------------------------------------------------------------------------


def _open(args: dict[str, Any], at: datetime, *, tick_every: int) -> Any:
    from reverie import Memory, SettableClock
    from reverie.embed.testing import HashEmbedder

    clock = SettableClock(at)
    mem = Memory(
        args["target"],
        config=settings(tick_every=tick_every, name=args["name"]),
        clock=clock,
        embedder=HashEmbedder(DIM),
    )
    return mem, clock


def _emit(path: str, **event: Any) -> None:
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(json.dumps(event, default=str) + "\n")
        fh.flush()
        os.fsync(fh.fileno())


def _hang_after_claims(mem: Any, log: str, n: int) -> None:
    """Make this process stop, mid-cycle and holding its claims, after its ``n``-th successful claim,
    so that the test's SIGKILL lands inside a dream cycle however fast the cycle runs."""
    claim, held_so_far = mem.store.claim, [0]

    def claim_then_hang(memory_ids: Any, **kw: Any) -> list[str]:
        held = claim(memory_ids, **kw)
        if held:
            held_so_far[0] += 1
            if held_so_far[0] == n:
                _emit(log, event="claimed", phase=kw["phase"], ids=held)
                time.sleep(3600)
        return held

    mem.store.claim = claim_then_hang


def worker_dreamer(args: dict[str, Any]) -> None:
    """Run ``runs`` full dream cycles (forever when ``runs`` is 0: the victim that gets killed; it
    stops after its ``hang_after``-th claim and waits for the kill)."""
    mem, clock = _open(args, NOW, tick_every=0)
    if args.get("hang_after"):
        _hang_after_claims(mem, args["log"], args["hang_after"])
    run = 0
    while args["runs"] == 0 or run < args["runs"]:
        _emit(args["log"], event="start", run=run, pid=os.getpid())
        report = mem.dream()
        _emit(
            args["log"],
            event="end",
            run=run,
            changed=report["changed"],
            steps={s["name"]: s["changed"] for s in report["steps"]},
            skipped={
                s["name"]: s["details"]["skipped"]
                for s in report["steps"]
                if isinstance(s["details"].get("skipped"), dict) and s["details"]["skipped"]
            },
        )
        clock.advance(seconds=1)
        run += 1
    mem.close()


def worker_writer(args: dict[str, Any]) -> None:
    """Add memories (acknowledging each after ``add`` returned) and touch old ones with ``get``."""
    from reverie.errors import ConflictError
    from reverie.store.base import MemoryFilter

    mem, clock = _open(args, NOW, tick_every=3)
    rng = random.Random(args["seed"])
    old = [r.id for batch in mem.store.scan(MemoryFilter(user_id="u")) for r in batch]
    for i in range(args["writes"]):
        text = f"writer {args['seed']} note {i}: the {rng.choice(TOPICS)[0]} club meets at {rng.choice(PLACES)}"
        for _attempt in range(5):
            try:
                res = mem.add(text, user_id="u", infer=args["infer"])
            except ConflictError as exc:  # a dreamer changed the memory the write path meant to update
                _emit(args["log"], event="conflict", content=text, error=str(exc))
                continue
            _emit(args["log"], event="ack", id=res.id, action=res.action.value, content=text)
            break
        if old and i % 4 == 0:
            mem.get(rng.choice(old))  # an access: bumps the version a dreamer may be about to write
        clock.advance(seconds=2)
    mem.close()


def _main() -> None:
    sys.path.insert(0, str(SRC))
    role, raw = sys.argv[1], sys.argv[2]
    args = json.loads(raw)
    {"dreamer": worker_dreamer, "writer": worker_writer}[role](args)


# the test ------------------------------------------------------------------------------------


def _spawn(role: str, args: dict[str, Any]) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")])}
    return subprocess.Popen(
        [sys.executable, str(Path(__file__).resolve()), role, json.dumps(args)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )


def _events(path: Path) -> list[dict[str, Any]]:
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _seed(target: str) -> list[str]:
    from reverie import Memory, SettableClock
    from reverie.embed.testing import HashEmbedder

    clock = SettableClock(SEEDED_AT)
    with Memory(target, config=settings(tick_every=0), clock=clock, embedder=HashEmbedder(DIM)) as mem:
        ids: list[str] = []
        for g in range(GROUPS):
            ids += [r.id or "" for r in mem.add_many(group_texts(g), user_id="u", infer=False)]
            clock.advance(minutes=3)
        clock.advance(hours=1)
        mem.dream(steps=["promote"])  # that night: working → episodic (then nothing touched them for months)
        return ids


def _wait(procs: list[subprocess.Popen[str]], timeout: float) -> list[tuple[int | None, str]]:
    deadline = time.monotonic() + timeout
    out = []
    for p in procs:
        try:
            _, err = p.communicate(timeout=max(1.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            p.kill()
            _, err = p.communicate()
            err = "timed out\n" + err
        out.append((p.returncode, err[-3000:]))
    return out


def _kill_mid_cycle(victim: subprocess.Popen[str], log: Path) -> None:
    """kill -9 the victim dreamer in the middle of a dream cycle."""
    deadline = time.monotonic() + 300
    while not any(e["event"] == "claimed" for e in _events(log)):
        if victim.poll() is not None:
            raise AssertionError("the victim dreamer died: " + (victim.stderr.read() if victim.stderr else ""))
        assert time.monotonic() < deadline, "the victim dreamer never claimed anything"
        time.sleep(0.05)
    victim.send_signal(signal.SIGKILL)
    victim.wait(timeout=30)
    events = _events(log)
    starts = sum(e["event"] == "start" for e in events)
    ends = sum(e["event"] == "end" for e in events)
    assert victim.returncode == -signal.SIGKILL and starts == ends + 1  # killed during a cycle


def _summaries(store: Any, flt: Any) -> dict[str, set[str]]:
    """summary id → the memories it summarises (every SUMMARIZES relation in the scope)."""
    from reverie.model import RelationType

    links: dict[str, set[str]] = defaultdict(set)
    for rel in store.scope_relations(flt, types=frozenset({RelationType.SUMMARIZES})):
        links[rel.src_id].add(rel.dst_id)
    return dict(links)


@pytest.mark.parametrize("backend", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def test_concurrent_dreamers_writers_and_a_killed_dreamer(
    backend: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    from reverie import Memory, SettableClock
    from reverie.embed.testing import HashEmbedder
    from reverie.model import Status
    from reverie.store.base import MemoryFilter

    target = str(tmp_path / "shared.db") if backend == "sqlite" else str(request.getfixturevalue("pg_url"))
    seeded = _seed(target)
    assert len(seeded) == GROUPS * MEMBERS

    base = {"target": target}
    logs = {name: tmp_path / f"{name}.jsonl" for name in ("d0", "d1", "d2", "victim", "w0", "w1")}
    hang_after = random.randint(1, 4)  # which of its claims the victim holds when it is killed
    victim = _spawn(
        "dreamer", {**base, "runs": 0, "hang_after": hang_after, "log": str(logs["victim"]), "name": "victim"}
    )
    procs = [_spawn("dreamer", {**base, "runs": 2, "log": str(logs[f"d{i}"]), "name": f"d{i}"}) for i in range(3)]
    procs += [
        _spawn(
            "writer",
            {
                **base,
                "seed": i,
                "writes": WRITES_PER_WRITER,
                "infer": i == 1,
                "log": str(logs[f"w{i}"]),
                "name": f"w{i}",
            },
        )
        for i in range(2)
    ]
    try:
        _kill_mid_cycle(victim, logs["victim"])
        finished = _wait(procs, timeout=600)
    finally:
        for p in [victim, *procs]:
            if p.poll() is None:
                p.kill()
            p.wait()
            if p.stderr is not None:
                p.stderr.close()
    for rc, err in finished:
        assert rc == 0, err
    dream_logs = [_events(logs[f"d{i}"]) for i in range(3)]
    assert all(sum(e["event"] == "end" for e in ev) == 2 for ev in dream_logs)

    # the claims of the killed dreamer hold until they expire; then a normal run finishes the work
    later = NOW + timedelta(seconds=CLAIM_TTL_S + 60)
    clock = SettableClock(later)
    with Memory(target, config=settings(tick_every=0), clock=clock, embedder=HashEmbedder(DIM)) as mem:
        scope = MemoryFilter.everything(user_id="u", all_users=False)
        recovery = mem.dream()
        merged_after_recovery = _consolidations({r.id: r for batch in mem.store.scan(scope) for r in batch})
        clock.advance(seconds=1)
        again = mem.dream()  # finds nothing more to consolidate (checked below)
        after = _summaries(mem.store, scope)
        records = {r.id: r for batch in mem.store.scan(scope) for r in batch}

        # 1. nothing acknowledged is lost, and nothing exists that nobody wrote
        writer_events = [e for i in range(2) for e in _events(logs[f"w{i}"])]
        acks = [e for e in writer_events if e["event"] == "ack"]
        assert len(acks) == 2 * WRITES_PER_WRITER
        conflicts = sum(e["event"] == "conflict" for e in writer_events)  # refused, retried, then acknowledged
        missing = [a for a in acks if a["id"] not in records]
        assert not missing, missing[:5]
        known = set(seeded) | {a["id"] for a in acks}
        phantoms = [r for i, r in records.items() if i not in known and r.write_source != "dream"]
        assert not phantoms, [(p.id, p.content) for p in phantoms[:5]]
        assert all(records[i].content.startswith("User went") for i in seeded)

        # 2. no memory is consolidated twice: one summary per original (by supersession and by links),
        #    one consolidation event per original (any dream event that names its summary)
        merged = _consolidations(records)
        owners: dict[str, set[str]] = defaultdict(set)
        for sid, originals in merged.items():
            for m in originals | after.get(sid, set()):
                owners[m].add(sid)
        doubled = {m: s for m, s in owners.items() if len(s) > 1}
        assert not doubled, doubled
        for m in owners:
            referring = Counter(
                e.event
                for e in mem.store.history(m)
                if e.actor == "dream" and any(sid in json.dumps(e.data, default=str) for sid in merged)
            )
            assert all(n == 1 for n in referring.values()), (m, referring)

        # 3. consistency: links and supersession point at memories that exist; nothing stays claimed
        for sid, members in after.items():
            assert sid in records and records[sid].write_source == "dream"
            assert members <= set(records)
        for rec in records.values():
            if rec.superseded_by is not None:
                assert rec.superseded_by in records, rec.id
                assert rec.status is not Status.ACTIVE, rec.id
        probe = mem.store.claim(sorted(records), owner="probe", phase="probe", now=clock(), ttl_seconds=1)
        assert sorted(probe) == sorted(records)
        mem.store.release("probe")

        # 4. the fading groups were consolidated (by whichever processes got to them first), and the
        #    run after the recovery run found nothing more to consolidate
        assert _consolidations(records) == merged_after_recovery
        consolidated = {m for originals in merged.values() for m in originals}
        fate = Counter(f"{records[i].status.value}/{records[i].store.value}" for i in seeded)
        assert len(consolidated & set(seeded)) >= 5, fate  # at least one group of seed 003's size
        print(
            f"{backend}: seeded memories now {dict(fate)}; {len(merged)} consolidation summaries; "
            f"{conflicts} add() calls refused with ConflictError and retried"
        )
        assert again["kind"] == recovery["kind"] == "dream"


def _consolidations(records: dict[str, Any]) -> dict[str, set[str]]:
    """summary id → the originals it superseded (a summary = a memory the dream cycle wrote)."""
    out: dict[str, set[str]] = defaultdict(set)
    for rec in records.values():
        newer = records.get(rec.superseded_by or "")
        if newer is not None and newer.write_source == "dream":
            out[newer.id].add(rec.id)
    return dict(out)


if __name__ == "__main__":
    _main()
