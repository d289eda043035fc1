"""Claims with a heartbeat: a dreamer keeps what it claimed however long it works, and the claims of a
dreamer killed with SIGKILL are taken over by another process within the claim lifetime.

Real OS processes on one SQLite file and on the real PostgreSQL server, on the system clock. The store
holds groups of alike memories written a year ago and never used (consolidation material). The
first dreamer's embedder sleeps ``SLOW_S`` seconds per call — longer than the claim lifetime
``TTL_S`` — so it holds the claims of its chunk of groups while it "works".

This file is also the worker program: ``python test_claim_heartbeat.py JSON``.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

SRC = Path(__file__).resolve().parents[2] / "src"
DIM = 64
TTL_S = 3.0  # dream.claim_ttl_s of these runs (default 30 s): renewed every second
SLOW_S = 8.0  # the slow dreamer's embedder call: longer than TTL_S
GROUPS = 8
TOPICS = ["hiking", "kayaking", "cooking", "chess", "gardening", "pottery", "cycling", "baking", "guitar", "tennis"]


def group_texts(g: int) -> list[str]:
    topic = TOPICS[g % len(TOPICS)]
    return [f"User went {topic} at place {g} with friends from club {g} on March {day + 1}" for day in range(6)]


def _config() -> dict[str, Any]:
    return {"opslog": {"enabled": False}, "dream": {"claim_ttl_s": TTL_S, "schedule": {"tick_every": 0}}}


def _worker(args: dict[str, Any]) -> None:
    sys.path.insert(0, str(SRC))
    from reverie import Memory
    from reverie.embed.testing import HashEmbedder

    class SlowEmbedder(HashEmbedder):
        def embed(self, texts: Any) -> Any:
            if args["slow"] and len(texts):
                with open(args["log"], "a", encoding="utf-8") as fh:
                    fh.write(json.dumps({"event": "working", "t": time.time()}) + "\n")
                time.sleep(SLOW_S)
            return super().embed(texts)

    with Memory(args["target"], config=_config(), embedder=SlowEmbedder(DIM)) as mem:
        while args.get("go") and not os.path.exists(args["go"]):  # started (imports, store open) ahead of time
            time.sleep(0.01)
        until = time.time() + args["for_s"]
        while True:
            started = time.time()
            report = mem.dream(steps=["consolidate"])
            step = report["steps"][0]
            with open(args["log"], "a", encoding="utf-8") as fh:
                fh.write(
                    json.dumps(
                        {
                            "event": "run",
                            "t0": started,
                            "t": time.time(),
                            "groups": step["details"]["groups"],
                            "skipped": step["details"]["skipped"],
                        }
                    )
                    + "\n"
                )
            if time.time() > until:
                return
            time.sleep(0.3)


def _spawn(args: dict[str, Any]) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")])}
    return subprocess.Popen(
        [sys.executable, str(Path(__file__).resolve()), json.dumps(args)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )


def _events(path: Path) -> list[dict[str, Any]]:
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _seed(target: str) -> None:
    from reverie import Memory, SettableClock
    from reverie.embed.testing import HashEmbedder

    clock = SettableClock(datetime.now(UTC) - timedelta(days=365))
    with Memory(target, config=_config(), clock=clock, embedder=HashEmbedder(DIM)) as mem:
        for g in range(GROUPS):
            mem.add_many(group_texts(g), user_id="u", infer=False)
            clock.advance(minutes=3)
        clock.advance(hours=1)
        mem.dream(steps=["promote"])  # working → episodic that night, then untouched for a year


def _summaries(target: str) -> dict[str, set[str]]:
    from reverie import Memory
    from reverie.embed.testing import HashEmbedder
    from reverie.model import RelationType
    from reverie.store.base import MemoryFilter

    with Memory(target, config=_config(), embedder=HashEmbedder(DIM)) as mem:
        rels = mem.store.scope_relations(
            MemoryFilter.everything(user_id="u", all_users=False), types=frozenset({RelationType.SUMMARIZES})
        )
    out: dict[str, set[str]] = {}
    for r in rels:
        out.setdefault(r.src_id, set()).add(r.dst_id)
    return out


def _wait_for(log: Path, event: str, proc: subprocess.Popen[str], timeout: float = 60) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while True:
        found = [e for e in _events(log) if e["event"] == event]
        if found:
            return found[0]
        if proc.poll() is not None:
            raise AssertionError("worker died: " + (proc.stderr.read() if proc.stderr else ""))
        assert time.monotonic() < deadline, f"no {event!r} event"
        time.sleep(0.05)


def _finish(proc: subprocess.Popen[str], timeout: float = 120) -> None:
    try:
        _, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        _, err = proc.communicate()
    assert proc.returncode == 0, err[-3000:]


@pytest.mark.slow
def test_a_killed_dreamers_claims_are_taken_over_within_the_claim_lifetime(store_target: str, tmp_path: Path) -> None:
    _seed(store_target)
    slow_log, fast_log = tmp_path / "slow.jsonl", tmp_path / "fast.jsonl"
    go = tmp_path / "go"
    victim = _spawn({"target": store_target, "log": str(slow_log), "slow": True, "for_s": 600})
    # the rescuer starts now and waits for the kill: its start-up time does not count against the claim lifetime
    rescuer = _spawn({"target": store_target, "log": str(fast_log), "slow": False, "for_s": TTL_S + 6, "go": str(go)})
    _wait_for(slow_log, "working", victim)  # it holds the claims of its groups and "works" on them
    time.sleep(TTL_S + 1.0)  # longer than a claim lives without a heartbeat: only the heartbeat keeps them
    victim.send_signal(signal.SIGKILL)
    victim.communicate(timeout=30)
    killed_at = time.time()
    go.touch()
    assert victim.returncode == -signal.SIGKILL
    _finish(rescuer)
    runs = [e for e in _events(fast_log) if e["event"] == "run"]
    done = [e for e in runs if e["groups"]]
    # the first run found the victim's groups still claimed (its last heartbeat was < TTL_S ago) ...
    claimed = runs[0]["skipped"].get("claimed_elsewhere", 0)
    assert runs[0]["t0"] - killed_at < TTL_S and claimed > 0
    # ... and another process did all of that work within the claim lifetime after the kill (plus one retry)
    assert sum(e["groups"] for e in runs) == claimed and not runs[-1]["skipped"]
    assert done[0]["t"] - killed_at <= TTL_S + 1.5, done[0]["t"] - killed_at
    print(
        f"claims of the killed dreamer taken over and its {claimed} groups consolidated "
        f"{done[0]['t'] - killed_at:.2f} s after the kill (claim lifetime {TTL_S} s)"
    )
    summaries = _summaries(store_target)
    members = [m for ms in summaries.values() for m in ms]
    assert len(summaries) == claimed and len(members) == len(set(members))  # each consolidated once


@pytest.mark.slow
def test_a_live_dreamer_keeps_its_claims_past_their_lifetime(store_target: str, tmp_path: Path) -> None:
    _seed(store_target)
    slow_log, fast_log = tmp_path / "slow.jsonl", tmp_path / "fast.jsonl"
    slow = _spawn({"target": store_target, "log": str(slow_log), "slow": True, "for_s": 0})
    _wait_for(slow_log, "working", slow)
    other = _spawn({"target": store_target, "log": str(fast_log), "slow": False, "for_s": SLOW_S})
    _finish(other)
    _finish(slow)
    slow_runs = [e for e in _events(slow_log) if e["event"] == "run"]
    fast_runs = [e for e in _events(fast_log) if e["event"] == "run"]
    # the slow dreamer worked SLOW_S > TTL_S seconds on its claims, and wrote every group it claimed
    assert slow_runs[0]["t"] - slow_runs[0]["t0"] > SLOW_S > TTL_S
    assert slow_runs[0]["groups"] > 0 and not slow_runs[0]["skipped"]  # no conflict: nobody took its claims
    assert sum(e["groups"] for e in fast_runs) == 0
    assert sum(e["skipped"].get("claimed_elsewhere", 0) for e in fast_runs) > 0  # it tried, and was kept out
    summaries = _summaries(store_target)
    members = [m for ms in summaries.values() for m in ms]
    assert len(summaries) == slow_runs[0]["groups"] and len(members) == len(set(members))


if __name__ == "__main__":
    _worker(json.loads(sys.argv[1]))
