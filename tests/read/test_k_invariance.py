"""The number of results asked for does not change the ranking: the first n results of a search that
asks for n are the first n of one that asks for 50 (n = 3, 5, 10). The pool never grows with k and
the whole pool is ordered (MMR, current version first, hot tier) before the first k are taken.

The read pipeline is run directly (``ReadPipeline.run``): a ``Memory.search`` counts every hit as an
access, which would change the next search's ACT-R term — the comparison is of one store state.
"""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

import pytest

from reverie import Memory, SettableClock
from reverie.read.pipeline import Request
from reverie.store.base import MemoryFilter

SUITE = json.loads(
    (Path(__file__).resolve().parents[1] / "write" / "data" / "knowledge_updates.json").read_text(encoding="utf-8")
)


def _fill(mem: Memory, clock: SettableClock, *, infer: bool) -> list[str]:
    """A month of one user's memories with access history; returns the questions to ask."""
    texts = [s["old"] for s in SUITE["updates"][:30]] + [p["a"] for p in SUITE["compatible"][:40]]
    texts += SUITE["filler"]["en"] + [s["new"] for s in SUITE["updates"][:30]]
    for i in range(0, len(texts), 10):
        mem.add_many(texts[i : i + 10], user_id="u", infer=infer)
        clock.advance(timedelta(days=1))
    questions = [s["question"] for s in SUITE["updates"][:30]] + [p["qa"] for p in SUITE["compatible"][:40]]
    for q in questions[::3]:  # access history: earlier searches touched some memories
        mem.search(q, user_id="u", k=5)
        clock.advance(timedelta(hours=5))
    return questions


def _check(mem: Memory, clock: SettableClock, questions: list[str]) -> None:
    reader = mem._reader
    for q in questions:
        full = [h.memory.id for h in reader.run(Request(q, MemoryFilter(user_id="u"), 50), now=clock()).hits]
        for n in (3, 5, 10):
            top = [h.memory.id for h in reader.run(Request(q, MemoryFilter(user_id="u"), n), now=clock()).hits]
            assert top == full[:n], f"k={n} changes the ranking of {q!r}"


def test_k_does_not_change_the_ranking(make_memory, clock: SettableClock) -> None:
    mem = make_memory()
    _check(mem, clock, _fill(mem, clock, infer=True)[:20])


@pytest.mark.model
@pytest.mark.minilm
@pytest.mark.slow
@pytest.mark.parametrize("infer", [True, False])
def test_k_does_not_change_the_ranking_with_the_local_model(tmp_path: Path, clock: SettableClock, infer: bool) -> None:
    from reverie.embed import MiniLMEmbedder

    embedder = MiniLMEmbedder()
    with Memory(
        tmp_path / "m.db", clock=clock, embedder=embedder, config={"opslog": {"path": str(tmp_path / "ops.jsonl")}}
    ) as mem:
        _check(mem, clock, _fill(mem, clock, infer=infer))
