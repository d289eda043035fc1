"""The shared read-only pass: it runs the collector every registered step declares, once per run, and lives
in the run's context (two runs never share one; nothing of a run stays in a module)."""

from __future__ import annotations

from reverie import Memory, SettableClock
from reverie.dream import Collector, DreamContext, DreamStep
from reverie.dream.registry import collectors, registered_steps, steps_by_name
from reverie.dream.scope_pass import scope_pass
from reverie.model import MemoryRecord


def _context(mem: Memory, clock: SettableClock, owner: str) -> DreamContext:
    return DreamContext.for_run(
        mem.dream_services, settings=mem.settings, now=clock(), owner=owner, user_id=None, all_users=True
    )


def _ids(_: DreamContext, found: list[str], rec: MemoryRecord) -> None:
    found.append(rec.id)


def test_every_declared_collector_is_registered_once() -> None:
    declared = [c for step in registered_steps() for c in step.collects]
    assert declared, "the forgetting, reinforcing, drift and archival steps collect in the pass"
    assert [c.name for c in collectors()] == list(dict.fromkeys(c.name for c in declared))
    assert all(isinstance(s, DreamStep) for s in registered_steps())
    assert len(steps_by_name()) == len(registered_steps())  # step names are unique


def test_the_pass_visits_every_memory_once_per_run(mem: Memory, clock: SettableClock) -> None:
    ids = [r.id for r in mem.add_many([f"note {i} about tea" for i in range(7)], user_id="u", infer=False)]
    seen: Collector[list[str]] = Collector("seen", list, _ids)
    ctx = _context(mem, clock, "run-a")
    first = scope_pass(ctx, [seen])
    found: list[str] = first.of(seen)
    assert sorted(found) == sorted(ids) and first.examined == len(ids) and first.users == {"u"}
    assert scope_pass(ctx) is first  # later steps of the run reuse it
    assert first.take(seen) and first.of(seen) == []  # handed over once
    other = scope_pass(_context(mem, clock, "run-b"), [seen])  # another run reads afresh
    again: list[str] = other.of(seen)
    assert other is not first and sorted(again) == sorted(ids)


def test_the_registered_collectors_fill_the_pass_of_a_run(mem: Memory, clock: SettableClock) -> None:
    mem.add_many(["an idle fact"], user_id="u", infer=False)
    p = scope_pass(_context(mem, clock, "run-c"))
    assert set(p.states) == {c.name for c in collectors()}
