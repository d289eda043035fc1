"""A correction worded apart from the question ranks far down the candidate pool; the best results look for
what updates them in the whole pool and it takes their place (read.successor_search_top), with the stored
memories verbatim (no supersede by the write path)."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from reverie import Memory, SettableClock
from reverie.text import updates

pytestmark = pytest.mark.model

OLD = "I'm training for the Berlin marathon in September."
NEW = "Change of plans, Berlin filled up so I signed up for the Chicago one instead."
QUESTION = "Which marathon is the user running this year?"
FILLER = json.loads(
    (Path(__file__).resolve().parents[1] / "write" / "data" / "knowledge_updates.json").read_text(encoding="utf-8")
)["filler"]["en"][:20]


def _store(mem: Memory, clock: SettableClock) -> tuple[str, str]:
    old = mem.add(OLD, user_id="u", infer=False)
    for line in FILLER:
        clock.advance(timedelta(days=2))
        mem.add(line, user_id="u", infer=False)
    clock.advance(timedelta(days=5))
    new = mem.add(NEW, user_id="u", infer=False)
    clock.advance(timedelta(days=7))
    assert old.id is not None and new.id is not None
    return old.id, new.id


def test_the_reading_connects_the_pair() -> None:
    assert updates.says_change(NEW) and updates.judge(OLD, NEW).updates


def test_the_correction_takes_the_place_of_what_it_corrects(
    model_memory: Callable[..., Memory], clock: SettableClock
) -> None:
    mem = model_memory()
    old, new = _store(mem, clock)
    hits = mem.search(QUESTION, user_id="u", k=5)
    ids = [h.memory.id for h in hits]
    assert ids[0] == new and old in ids
    assert hits[0].explain["current_version_of"] == old
    assert hits[ids.index(old)].explain["superseded"]["how"] == "read"


def test_switched_off_the_correction_stays_down(model_memory: Callable[..., Memory], clock: SettableClock) -> None:
    # ablation: without the pool-wide search the correction, worded apart from the question, stays down
    mem = model_memory(read={"successor_search_top": 0})
    old, new = _store(mem, clock)
    ids = [h.memory.id for h in mem.search(QUESTION, user_id="u", k=5)]
    assert ids[0] == old and new not in ids[:2]


def test_each_best_result_reads_only_its_nearest_newer_memories() -> None:
    """read.successor_search_neighbours: of the newer pool memories similar to a best result, only its
    ``nearest`` most similar are read (0 = every one); a memory not newer is never read."""
    import numpy as np

    from reverie.model import MemoryRecord
    from reverie.read.hybrid import PoolEntry
    from reverie.read.versions import read_time_updates

    t0 = datetime(2025, 1, 1, tzinfo=UTC)
    texts = [
        (OLD, 0),
        (NEW, 30),
        ("Actually I switched from the Berlin marathon to the Chicago marathon.", 40),
        ("Change of plans: the Berlin marathon is off, I signed up for Chicago.", -10),  # older: never an update
    ]
    records = {
        f"m{i}": MemoryRecord(id=f"m{i}", content=t, created_at=t0 + timedelta(days=d))
        for i, (t, d) in enumerate(texts)
    }
    cands = [PoolEntry(f"m{i}", 1.0) for i in range(len(texts))]
    base = np.eye(4, dtype=np.float32)[0]
    other = np.eye(4, dtype=np.float32)[1]
    vecs = np.stack([base] + [c * base + np.sqrt(1 - c * c) * other for c in (0.90, 0.95, 0.99)]).astype(np.float32)
    pairs = {
        n: [(a, b) for a, b, _ in read_time_updates([0], cands, records, vecs, 0.8, newer=[1, 2, 3], nearest=n)]
        for n in (0, 1)
    }
    assert sorted(pairs[0]) == [(0, 1), (0, 2)]
    assert pairs[1] == [(0, 2)]  # the nearest newer one (0.95); the 0.99 one is older than the best result
