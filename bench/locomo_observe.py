"""LoCoMo guard of the write path (issue 4): recall with ``observe`` on every turn vs ``infer=False``.

Verbatim: every turn stored as it is (``add_many(infer=False)``, as bench/locomo.py). Observe: every
turn goes through ``Memory.observe`` (observer, smart buffer, formation, PE gate, …) with
``end_session`` after each LoCoMo session (the final flush). A memory counts as holding every turn
whose write reached it (``MemoryRecord.inputs``: creates, updates and reinforcements), so a fact
merged into an older memory is still found. Reports recall@5/10/20 (categories 1–4) per mode and
per category, the memory count, the heuristic write throughput (messages/s) and, for observe, how
many evidence turns no memory holds (unreachable) or only memories a current-state search cannot
return hold (superseded, or validity ended: formation's foresight bounds a plan to 7 days).

Both modes use bench/locomo.py's embedder (the local model's vectors cached on disk between runs).
``--read KEY=VALUE`` overrides a read setting in both modes (e.g. ``--read episode_context=false``)
to see which read stage a gap comes from; ``--questions PATH`` writes every question's recall@10
in both modes (JSON lines) for per-question diffs.

Usage::

    PYTHONPATH=src .venv/bin/python bench/locomo_observe.py [--conversations N] [--embedder local|hash]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import locomo
from _benchlib import RESULTS_DIR, memory_config


def held_turns(mem: Any, user_id: str, now: Any) -> tuple[dict[str, list[str]], dict[str, bool]]:
    """memory id -> turn ids that reached it (every status: a superseded memory still held its turn),
    and memory id -> whether a default (current-state) search can return it: active and its validity
    (``valid_until``, e.g. formation's foresight) not ended at ``now``."""
    from reverie.model import Status
    from reverie.store.base import MemoryFilter

    held: dict[str, list[str]] = defaultdict(list)
    active: dict[str, bool] = {}
    for batch in mem.store.scan(MemoryFilter.everything(user_id=user_id, all_users=False)):
        for rec in batch:
            ids = [str(i.get("metadata", {}).get("turn_id")) for i in rec.inputs if i.get("metadata")]
            held[rec.id] = list(dict.fromkeys([*ids, str(rec.metadata.get("turn_id", ""))]))
            active[rec.id] = rec.status is Status.ACTIVE and (rec.valid_until is None or rec.valid_until > now)
    return held, active


def reach(sample: Any, held: dict[str, list[str]], active: dict[str, bool]) -> dict[str, int]:
    """Evidence turns of the sample's questions held by a searchable memory, only by ones a current-state
    search cannot return (superseded, or validity ended), or by none."""
    in_active = {t for mid, ts in held.items() if active.get(mid, True) for t in ts}
    in_any = {t for ts in held.values() for t in ts}
    evidence = {e for q in sample.questions for e in q.evidence}
    return {
        "evidence_turns": len(evidence),
        "unreachable": len(evidence - in_any),
        "only_unsearchable": len((evidence & in_any) - in_active),
    }


def ingest_observe(mem: Any, clock: Any, sample: Any) -> tuple[int, float]:
    turns = 0
    start = time.perf_counter()
    for number, when, session_turns in sample.sessions:
        if when is not None:
            clock.set(when)
        sid = session_turns[0].session_id if session_turns else f"s{number}"
        for t in session_turns:
            mem.observe(
                t.text,
                user_id=sample.sample_id,
                session_id=sid,
                when=t.when,
                metadata={"turn_id": t.turn_id, "speaker": t.speaker, "session": number},
            )
            turns += 1
        mem.end_session(sid, user_id=sample.sample_id)
    return turns, time.perf_counter() - start


def ask(mem: Any, sample: Any, held: dict[str, list[str]], res: Any, out: list[dict[str, Any]]) -> None:
    """bench/locomo.py's ``ask_memory``, keeping every question's recall and top-10 hits."""
    for q in sample.questions:
        hits = mem.search(q.text, user_id=sample.sample_id, k=locomo.K_MAX)
        ranked = [held.get(h.memory.id) or [str(h.memory.metadata.get("turn_id", ""))] for h in hits]
        score = locomo.score_question(q, ranked)
        res.rows.append((q.category, score))
        out.append(
            {
                "sample": sample.sample_id,
                "q": q.index,
                "question": q.text,
                "category": q.category,
                "evidence": q.evidence,
                "r@10": score["r@10"],
                "top10": [
                    {"turns": t, "text": h.memory.content[:160]} for t, h in zip(ranked[:10], hits[:10], strict=True)
                ],
            }
        )


def parse_value(raw: str) -> Any:
    low = raw.strip().lower()
    if low in ("true", "false"):
        return low == "true"
    try:
        return json.loads(raw)
    except json.JSONDecodeError:
        return raw


def run(
    data: Path,
    conversations: int | None,
    embedder: str,
    read: dict[str, Any],
    modes: tuple[str, ...] = ("verbatim", "observe"),
) -> tuple[dict[str, Any], dict[str, list[dict[str, Any]]]]:
    from reverie import Memory, SettableClock
    from reverie.store.base import MemoryFilter

    stats = locomo.EvidenceStats()
    samples = locomo.load_samples(
        data, limit_conversations=conversations, limit_sessions=None, limit_questions=None, stats=stats
    )
    doc: dict[str, Any] = {
        "benchmark": "locomo-observe",
        "data": str(data),
        "embedder": embedder,
        "read_overrides": read,
        "load_average_before": [round(x, 2) for x in os.getloadavg()],
        "runs": {},
    }
    questions: dict[str, list[dict[str, Any]]] = {}
    with tempfile.TemporaryDirectory(prefix="reverie-locomo-observe-") as tmp:
        for mode in modes:
            clock = SettableClock()
            res = locomo.RunResult()
            extra: dict[str, Any] = dict(locomo.NO_LIFECYCLE)
            if read:
                extra["read"] = read
            cfg = memory_config(Path(tmp) / mode, **extra)
            rows: list[dict[str, Any]] = []
            reached: dict[str, int] = defaultdict(int)
            with Memory(
                str(Path(tmp) / f"{mode}.db"), config=cfg, clock=clock, embedder=locomo.bench_embedder(embedder)
            ) as mem:
                seconds, turns = 0.0, 0
                for sample in samples:
                    if mode == "verbatim":
                        before = res.ingest_s
                        held = locomo.ingest(mem, clock, sample, infer=False, result=res)
                        active = {mid: True for mid in held}
                        seconds += res.ingest_s - before
                        turns += sample.turns
                    else:
                        n, s = ingest_observe(mem, clock, sample)
                        turns += n
                        seconds += s
                        held, active = held_turns(mem, sample.sample_id, clock())
                    for key, value in reach(sample, held, active).items():
                        reached[key] += value
                    res.memories += mem.store.count(MemoryFilter(user_id=sample.sample_id))
                    ask(mem, sample, held, res, rows)
            agg = locomo.aggregate(res.rows)
            doc["runs"][mode] = {
                "recall": agg["headline_1_4"],
                "by_category": {
                    c: {"name": v["name"], "n": v["n"], "r@10": v.get("r@10")} for c, v in agg["by_category"].items()
                },
                "memories_active": res.memories,
                "turns": turns,
                "evidence": dict(reached),
                "messages_per_s": round(turns / seconds, 1) if seconds else None,
            }
            questions[mode] = rows
    doc["load_average_after"] = [round(x, 2) for x in os.getloadavg()]
    if len(modes) == 2:
        v, o = doc["runs"]["verbatim"], doc["runs"]["observe"]
        doc["delta_r@10_points"] = round(100 * (o["recall"].get("r@10", 0) - v["recall"].get("r@10", 0)), 2)
        doc["delta_r@10_points_by_category"] = {
            c: round(100 * (o["by_category"][c]["r@10"] - v["by_category"][c]["r@10"]), 2)
            for c in v["by_category"]
            if c in o["by_category"]
        }
    return doc, questions


def main() -> None:
    p = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    p.add_argument("--data", type=Path, default=locomo.DEFAULT_DATA)
    p.add_argument("--conversations", type=int, default=None)
    p.add_argument("--embedder", default="local")
    p.add_argument(
        "--read",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="read setting override for both modes (repeatable)",
    )
    p.add_argument("--mode", choices=["both", "verbatim", "observe"], default="both")
    p.add_argument("--questions", type=Path, default=None, help="write per-question rows (JSON lines) here")
    p.add_argument("--out", type=Path, default=RESULTS_DIR / "locomo_observe.json")
    args = p.parse_args()
    read = {k: parse_value(v) for k, v in (item.split("=", 1) for item in args.read)}
    modes = ("verbatim", "observe") if args.mode == "both" else (args.mode,)
    doc, questions = run(args.data, args.conversations, args.embedder, read, modes)
    print(json.dumps(doc, indent=2))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(doc, indent=2))
    if args.questions is not None:
        with args.questions.open("w") as fh:
            for mode, rows in questions.items():
                for row in rows:
                    fh.write(json.dumps({"mode": mode, **row}) + "\n")


if __name__ == "__main__":
    main()
