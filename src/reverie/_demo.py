"""``reverie demo``: remember a sample conversation, answer its questions, then live months on a
simulated clock and show what the memory became (the lifecycle) and what it still answers.

Output is for a person reading a terminal: one block per step, the answer first with one line of
why, a table of the memory's life, and a summary at the end (under 150 lines by default).
"""

from __future__ import annotations

import importlib.resources
import json
import re
from collections import Counter
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

from reverie import io
from reverie.clock import SettableClock
from reverie.memory import Memory
from reverie.model import Status, StoreTier

DAYS_PER_MONTH = 30


@dataclass(slots=True)
class Answered:
    """One question asked: is the evidence among the results, at which rank."""

    found: bool
    rank: int | None  # 1-based rank of the first result holding the evidence


def _norm(text: str) -> str:
    """Words only, lower case (a summary joins its originals' sentences with other punctuation)."""
    return " " + " ".join(re.findall(r"\w+", text.casefold())) + " "


class Evidence:
    """A question's evidence turns: a result holds the evidence when it is one of those turns, or
    when its text contains one (a consolidation summary keeps its originals' words)."""

    def __init__(self, conv: Any) -> None:
        self.texts = {t.turn_id: _norm(t.text) for t in conv.turns}

    def rank(self, hits: list[Any], turn_ids: list[str]) -> Answered:
        wanted = [self.texts[t] for t in turn_ids if t in self.texts]
        for i, hit in enumerate(hits, start=1):
            rec = hit.memory
            if rec.metadata.get("turn_id") in turn_ids or any(w and w in _norm(rec.content) for w in wanted):
                return Answered(True, i)
        return Answered(False, None)


def _say(console: Any, text: str = "") -> None:
    console.print(text, markup=False, soft_wrap=True, highlight=False)


def run_demo(target: str | Path, *, k: int, months: int, explain: bool, keep: bool) -> dict[str, Any]:
    """Run the demo on ``target`` and print it; returns the numbers of its summary."""
    from reverie.cli.common import console
    from reverie.cli.transfer import _add_with_progress, conversation_items

    data = json.loads(importlib.resources.files("reverie").joinpath("sample/conversation.json").read_text("utf-8"))
    conv = io.load_conversation(data)
    last = max(t.when for t in conv.turns if t.when is not None)
    clock = SettableClock(min(t.when for t in conv.turns if t.when is not None))
    evidence = Evidence(conv)
    out: dict[str, Any] = {}
    with Memory(target, clock=clock) as mem:
        _say(
            console,
            f"reverie demo — long-term memory for an AI agent, offline "
            f"(store {mem.target}, {mem.backend}; embedder {mem.embedder.name})",
        )
        # 1. remember, on the conversation's own clock: each session when it happened
        items = conversation_items(conv)
        results = []
        for when, session in _by_session(items):
            clock.set(when)
            results += _add_with_progress(
                mem, session, "remembering", conv.user_id, conv.agent_id, False, progress=False
            )
        clock.set(last + timedelta(hours=1))
        actions = Counter(r.action.value for r in results)
        sessions = len({t.session_id for t in conv.turns})
        _say(console)
        _say(console, f"1. Remember: {conv.title}")
        _say(
            console,
            f"   {len(items)} turns in {sessions} sessions → "
            + ", ".join(f"{n} {a}" for a, n in actions.most_common()),
        )
        # recall right after the conversation (printed after the lifecycle, beside the answers months later)
        recall, now = _recall_now(mem, conv, evidence, k=k, explain=explain)
        out["now_found"] = sum(a.found for a in now)
        out["now_first"] = sum(a.rank == 1 for a in now)
        # 2. the lifecycle
        life = (
            _lifecycle(mem, clock, conv, evidence, k=k, months=months, console=console, answered=out["now_found"])
            if months
            else {}
        )
        out.update(life)
        # 3. the answers
        _say(console)
        _say(
            console,
            f"{3 if months else 2}. Recall right after the conversation: the best result and one line of why "
            f"(✓ the answer is in the top {k})",
        )
        for line in recall:
            _say(console, f"   {line}")
        _print_summary(
            mem,
            conv,
            console,
            out,
            life,
            k=k,
            months=months,
            keep=keep,
            turns=len(items),
            actions=actions,
            questions=len(now),
        )
    return out


def _say_consolidation(mem: Memory, console: Any, summaries: list[Any]) -> None:
    """What consolidation made (the first summary and how many memories it holds), or why it made nothing."""
    from reverie.cli.common import _short

    if summaries:
        first = summaries[0]
        members = first.metadata.get("consolidation", {}).get("members", [])
        _say(
            console,
            f"   consolidated {len(members)} faded, similar memories into one summary: {_short(first.content, 120)}",
        )
        return
    cc = mem.settings.dream.consolidation.consolidate
    _say(
        console,
        f"   nothing consolidated: a summary is made of at least {cc.group_size} similar memories whose "
        f"retention fell below {cc.retention_threshold:g}, and no such group faded in this run (try --months 9)",
    )


def _by_session(items: list[dict[str, Any]]) -> list[tuple[Any, list[dict[str, Any]]]]:
    """The conversation's items per session, in the order the sessions happened (each with its time)."""
    sessions: dict[Any, list[dict[str, Any]]] = {}
    for item in items:
        sessions.setdefault(item["session_id"], []).append(item)
    return sorted(((min(i["when"] for i in group), group) for group in sessions.values()), key=lambda x: x[0])


def _recall_now(mem: Memory, conv: Any, evidence: Evidence, *, k: int, explain: bool) -> tuple[list[str], list[Any]]:
    """Each question asked right after the conversation: the lines to print and where its evidence ranked."""
    from reverie.cli.common import _short
    from reverie.cli.recall import format_explain, why

    recall: list[str] = []
    now = []
    for q in conv.questions:
        hits = mem.search(q["question"], user_id=conv.user_id, k=k)
        got = evidence.rank(hits, list(q.get("evidence", [])))
        now.append(got)
        recall.append(f"{'✓' if got.found else '✗'} {q['question']}")
        if not hits:
            recall.append("   (nothing recalled)")
            continue
        short = mem.short_ids([h.memory.id for h in hits])
        recall.append(f"   {_short(hits[0].memory.content, 110)}")
        recall.append(f"   {why(hits[0])} · id {short[hits[0].memory.id]}")
        if got.found and got.rank and got.rank > 1:
            recall.append(f"   the answer is #{got.rank}: {_short(hits[got.rank - 1].memory.content, 90)}")
        if explain:
            recall += [f"     {line}" for line in format_explain(hits[0].explain)]
    return recall, now


def _print_summary(
    mem: Memory,
    conv: Any,
    console: Any,
    out: dict[str, Any],
    life: dict[str, Any],
    *,
    k: int,
    months: int,
    keep: bool,
    turns: int,
    actions: Counter[str],
    questions: int,
) -> None:
    """The demo's closing summary and the commands to try next."""
    _say(console)
    _say(console, "Summary")
    _say(
        console,
        f"   remembered {turns} turns of a conversation; "
        f"{sum(actions.get(a, 0) for a in ('CREATE', 'SUPERSEDE'))} new memories",
    )
    _say(
        console,
        f"   evidence in the top {k} for {out['now_found']} of {questions} questions right after the "
        f"conversation ({out['now_first']} with the answer first)",
    )
    if months:
        summaries = life["summaries"]
        noun = "summary" if summaries == 1 else "summaries"
        consolidated = (
            f"{life['consolidated']} originals consolidated into {summaries} {noun}"
            if summaries
            else "nothing consolidated (no group of similar memories faded enough: see above)"
        )
        _say(
            console,
            f"   {months} months later: evidence in the top {k} for {life['later_found']} of {questions}; "
            f"{life['active']} memories active, {life['replaced']} replaced by a newer statement, "
            f"{consolidated}, {life['cold']} in cold storage, none deleted",
        )
    search = f'reverie search "where does Lena live" -u {conv.user_id}'
    if keep:
        follow = f"{search} --db {mem.target}"
    else:  # the store of this run is deleted when it ends: say how to keep one
        follow = f"reverie demo --db demo.db keeps its store, then {search} --db demo.db"
    _say(
        console,
        f"   next: {follow}; reverie simulate --days 180 draws the lifecycle of a busier agent "
        "(the plot extra: pip install '.[plot]')",
    )


def _lifecycle(
    mem: Memory,
    clock: SettableClock,
    conv: Any,
    evidence: Evidence,
    *,
    k: int,
    months: int,
    console: Any,
    answered: int,
) -> dict[str, Any]:
    """Live ``months`` months: a dream cycle every night, the questions asked again at each month's end."""
    _say(console)
    _say(
        console,
        f"2. The next {months} months on a simulated clock: a dream cycle every night, the questions "
        "asked again at each month's end (active memories per layer; all per status)",
    )
    _say(
        console,
        f"   {'day':>5} {'working':>8} {'episodic':>9} {'semantic':>9} │ {'active':>6} {'superseded':>10} "
        f"{'dormant':>8} {'archived':>8} │ {'cold':>4} │ answered",
    )
    total_changed: Counter[str] = Counter()
    later_found = 0

    def row(day: int, answered: int | None) -> None:
        st = mem.stats(user_id=conv.user_id)
        layers: Counter[str] = Counter()
        for counted in st["rows"]:
            if counted["status"] == Status.ACTIVE.value:
                layers[counted["layer"]] += counted["count"]
        cold = mem.count_all(user_id=conv.user_id, cold_only=True)
        by = st["by_status"]
        ans = "" if answered is None else f"{answered} of {len(conv.questions)}"
        _say(
            console,
            f"   {day:>5} {layers['working']:>8} {layers['episodic']:>9} {layers['semantic']:>9} │ "
            f"{by.get('active', 0):>6} {by.get('superseded', 0):>10} {by.get('dormant', 0):>8} "
            f"{by.get('archived', 0):>8} │ {cold:>4} │ {ans}",
        )

    row(0, answered)
    for month in range(1, months + 1):
        for _ in range(DAYS_PER_MONTH):
            clock.advance(days=1)
            report = mem.dream()
            for step in report["steps"]:
                total_changed[step["name"]] += int(step["changed"])
        later_found = sum(
            evidence.rank(mem.search(q["question"], user_id=conv.user_id, k=k), list(q.get("evidence", []))).found
            for q in conv.questions
        )
        row(month * DAYS_PER_MONTH, later_found)
    everything = list(mem.export(user_id=conv.user_id))
    summaries = [r for r in everything if r.write_source == "dream"]
    made_by_dream = {r.id for r in summaries}
    superseded = [r for r in everything if r.status is Status.SUPERSEDED]
    consolidated = sum(r.superseded_by in made_by_dream for r in superseded)
    done = {name: n for name, n in total_changed.items() if n and name not in ("decay", "edge_decay")}
    _say(console, "   dream steps that changed something: " + ", ".join(f"{name} {n}" for name, n in done.items()))
    _say_consolidation(mem, console, summaries)
    _say(
        console,
        "   nothing is deleted: `reverie history ID` shows every change, `reverie undo-consolidation ID` "
        "puts a summary's originals back, `reverie reactivate ID` brings a cold memory back",
    )
    return {
        "later_found": later_found,
        "summaries": len(summaries),
        "consolidated": consolidated,
        "replaced": len(superseded) - consolidated,
        "active": sum(r.status is Status.ACTIVE for r in everything),
        "cold": sum(r.store is StoreTier.COLD for r in everything),
    }


__all__ = ["Evidence", "run_demo"]
