"""A correction worded apart from the question ranks far down the candidate pool; the best results look for
what updates them in the whole pool and it takes their place (read.successor_search_top), with the stored
memories verbatim (no supersede by the write path)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

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


@pytest.fixture(scope="module")
def model() -> Any:
    from reverie.config.core import EmbeddingSettings
    from reverie.embed import make_provider

    return make_provider(EmbeddingSettings())


@pytest.fixture
def make_memory(tmp_path: Path, clock: SettableClock, model: Any) -> Iterator[Callable[..., Memory]]:
    opened: list[Memory] = []

    def factory(**config: object) -> Memory:
        m = Memory(tmp_path / f"m{len(opened)}.db", config=config, clock=clock, embedder=model)
        opened.append(m)
        return m

    yield factory
    for m in opened:
        m.close()


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
    make_memory: Callable[..., Memory], clock: SettableClock
) -> None:
    mem = make_memory()
    old, new = _store(mem, clock)
    hits = mem.search(QUESTION, user_id="u", k=5)
    ids = [h.memory.id for h in hits]
    assert ids[0] == new and old in ids
    assert hits[0].explain["current_version_of"] == old
    assert hits[ids.index(old)].explain["superseded"]["how"] == "read"


def test_switched_off_the_correction_stays_down(make_memory: Callable[..., Memory], clock: SettableClock) -> None:
    mem = make_memory(read={"successor_search_top": 0})
    old, new = _store(mem, clock)
    ids = [h.memory.id for h in mem.search(QUESTION, user_id="u", k=5)]
    assert ids[0] == old and new not in ids[:2]
