"""LoCoMo guard of the write path (issue 4): recall with ``observe`` on every turn vs ``infer=False``.

Verbatim: every turn stored as it is (``add_many(infer=False)``, as bench/locomo.py). Observe: every
turn goes through ``Memory.observe`` (observer, smart buffer, formation, PE gate, …) with
``end_session`` after each LoCoMo session (the final flush). A memory counts as holding every turn
whose write reached it (``MemoryRecord.inputs``: creates, updates and reinforcements), so a fact
merged into an older memory is still found. Reports recall@5/10/20 (categories 1–4) per mode, the
memory count and the heuristic write throughput (messages/s).

Usage::

    PYTHONPATH=src .venv/bin/python bench/locomo_observe.py [--conversations N] [--embedder local|hash]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import locomo
from _benchlib import RESULTS_DIR, make_bench_embedder, memory_config


def held_turns(mem: Any, user_id: str) -> dict[str, list[str]]:
    """memory id -> turn ids that reached it (every status: a superseded memory still held its turn)."""
    from reverie.store.base import MemoryFilter

    held: dict[str, list[str]] = defaultdict(list)
    for batch in mem.store.scan(MemoryFilter.everything(user_id=user_id, all_users=False)):
        for rec in batch:
            ids = [str(i.get("metadata", {}).get("turn_id")) for i in rec.inputs if i.get("metadata")]
            held[rec.id] = list(dict.fromkeys([*ids, str(rec.metadata.get("turn_id", ""))]))
    return held


def ingest_observe(mem: Any, clock: Any, sample: Any) -> tuple[int, float]:
    turns = 0
    start = time.perf_counter()
    for number, when, session_turns in sample.sessions:
        if when is not None:
            clock.set(when)
        sid = session_turns[0].session_id if session_turns else f"s{number}"
        for t in session_turns:
            mem.observe(t.text, user_id=sample.sample_id, session_id=sid, when=t.when,
                        metadata={"turn_id": t.turn_id, "speaker": t.speaker, "session": number})
            turns += 1
        mem.end_session(sid, user_id=sample.sample_id)
    return turns, time.perf_counter() - start


def run(data: Path, conversations: int | None, embedder: str) -> dict[str, Any]:
    from reverie import Memory, SettableClock
    from reverie.store.base import MemoryFilter

    stats = locomo.EvidenceStats()
    samples = locomo.load_samples(data, limit_conversations=conversations, limit_sessions=None,
                                  limit_questions=None, stats=stats)
    doc: dict[str, Any] = {"benchmark": "locomo-observe", "data": str(data), "embedder": embedder, "runs": {}}
    with tempfile.TemporaryDirectory(prefix="reverie-locomo-observe-") as tmp:
        for mode in ("verbatim", "observe"):
            clock = SettableClock()
            res = locomo.RunResult()
            cfg = memory_config(Path(tmp) / mode, **locomo.BENCH_SETTINGS)
            with Memory(str(Path(tmp) / f"{mode}.db"), config=cfg, clock=clock,
                        embedder=make_bench_embedder(embedder)) as mem:
                seconds, turns = 0.0, 0
                for sample in samples:
                    if mode == "verbatim":
                        before = res.ingest_s
                        held = locomo.ingest(mem, clock, sample, infer=False, result=res)
                        seconds += res.ingest_s - before
                        turns += sample.turns
                    else:
                        n, s = ingest_observe(mem, clock, sample)
                        turns += n
                        seconds += s
                        held = held_turns(mem, sample.sample_id)
                    res.memories += mem.store.count(MemoryFilter(user_id=sample.sample_id))
                    locomo.ask_memory(mem, sample, held, res)
            agg = locomo.aggregate(res.rows)
            doc["runs"][mode] = {"recall": agg["headline_1_4"], "memories_active": res.memories, "turns": turns,
                                 "messages_per_s": round(turns / seconds, 1) if seconds else None}
    v, o = doc["runs"]["verbatim"]["recall"], doc["runs"]["observe"]["recall"]
    doc["delta_r@10_points"] = round(100 * (o.get("r@10", 0) - v.get("r@10", 0)), 2)
    return doc


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", type=Path, default=locomo.DEFAULT_DATA)
    p.add_argument("--conversations", type=int, default=None)
    p.add_argument("--embedder", default="local")
    args = p.parse_args()
    doc = run(args.data, args.conversations, args.embedder)
    print(json.dumps(doc, indent=2))
    out = RESULTS_DIR / "locomo_observe.json"
    out.write_text(json.dumps(doc, indent=2))


if __name__ == "__main__":
    main()
