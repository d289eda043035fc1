"""Session neighbours of the best candidates and the episode relevance boost, on SQLite and PostgreSQL."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from reverie import Memory, SettableClock
from reverie.config import Settings
from reverie.config.read import ReadSettings
from reverie.model import MemoryRecord
from reverie.read import filters, intent, neighbours, scoring
from reverie.store.base import MemoryFilter

NOW = datetime(2025, 3, 1, 9, 0, tzinfo=UTC)

#: a session in which the answer ("a bowl and a little vase") follows the turn that names the topic
POTTERY = [
    "Caroline: my week was busy with work and errands",
    "Melanie: did you finally go to the pottery class at the community centre on Saturday?",
    "Caroline: yes! a bowl and a little vase, both a bit wonky",
    "Melanie: that sounds lovely, I want to see them",
]
#: other sessions, each sharing a word or two with the question
OTHERS = [
    f"{who}: the {thing} was {how} on {day}"
    for who, thing, how, day in [
        ("Caroline", "yoga class", "hard", "Monday"),
        ("Melanie", "swimming class", "cold", "Tuesday"),
        ("Caroline", "community garden", "busy", "Wednesday"),
        ("Melanie", "book club", "fun", "Thursday"),
        ("Caroline", "cooking class", "late", "Friday"),
        ("Melanie", "choir practice", "loud", "Sunday"),
        ("Caroline", "dance class", "full", "Saturday"),
        ("Melanie", "art class", "quiet", "Monday"),
    ]
]
QUESTION = "What did Caroline make at the pottery class?"


def _load(mem: Memory, clock: SettableClock) -> dict[str, str]:
    ids: dict[str, str] = {}
    for n, text in enumerate(OTHERS):
        clock.advance(timedelta(minutes=1))
        ids[text] = mem.add(text, user_id="u", session_id=f"other-{n}", infer=False).id or ""
    clock.advance(timedelta(days=1))
    for text in POTTERY:
        clock.advance(timedelta(minutes=1))
        ids[text] = mem.add(text, user_id="u", session_id="pottery", infer=False).id or ""
    clock.advance(timedelta(days=1))
    return ids


def test_the_reply_after_the_best_match_is_found_and_says_why(
    make_memory: Callable[..., Memory], clock: SettableClock
) -> None:
    mem = make_memory()
    ids = _load(mem, clock)
    hits = mem.search(QUESTION, user_id="u", k=5)
    found = {h.memory.id: h for h in hits}
    assert hits[0].memory.id == ids[POTTERY[1]]
    answer = found.get(ids[POTTERY[2]])
    assert answer is not None, [h.memory.content for h in hits]
    assert answer.explain["neighbour_of"]["seed"] == ids[POTTERY[1]]
    assert answer.explain["neighbour_of"]["offset"] == 1
    assert answer.explain["neighbour_of"]["own_score"] < answer.score <= hits[0].score
    assert "next to it" in answer.why


def test_without_neighbours_the_reply_is_not_reached(make_memory: Callable[..., Memory], clock: SettableClock) -> None:
    mem = make_memory(read={"neighbour_seeds": 0})
    ids = _load(mem, clock)
    hits = mem.search(QUESTION, user_id="u", k=5)
    assert ids[POTTERY[2]] not in {h.memory.id for h in hits}
    assert all("neighbour_of" not in h.explain for h in hits)


def test_neighbours_keep_the_point_in_time(make_memory: Callable[..., Memory], clock: SettableClock) -> None:
    """A search "as of" the moment before the reply was written does not return the reply through it."""
    mem = make_memory()
    ids = _load(mem, clock)
    asked = mem.get(ids[POTTERY[1]])
    assert asked is not None
    hits = mem.search(QUESTION, user_id="u", k=10, as_of=asked.recorded_at + timedelta(seconds=1))
    got = {h.memory.id for h in hits}
    assert ids[POTTERY[1]] in got
    assert ids[POTTERY[2]] not in got and ids[POTTERY[3]] not in got


def test_neighbours_stay_within_the_callers_scope(make_memory: Callable[..., Memory], clock: SettableClock) -> None:
    mem = make_memory()
    ids = _load(mem, clock)
    clock.advance(timedelta(minutes=1))
    other = mem.add("Caroline: yes! a bowl and a vase", user_id="v", session_id="pottery", infer=False).id
    hits = mem.search(QUESTION, user_id="u", k=10)
    assert other not in {h.memory.id for h in hits}
    assert ids[POTTERY[2]] in {h.memory.id for h in hits}


def test_pulled_moves_neighbours_toward_their_seed_by_distance() -> None:
    ids = ["seed", "next", "second", "third", "strong"]
    scores = [1.0, 0.2, 0.2, 0.2, 0.9]
    wins = {"seed": [("next", 1), ("second", -2), ("third", 3), ("strong", -1)]}
    out = neighbours.pulled(ids, scores, wins, [0.5, 0.25])
    assert (round(out[1][0], 6), out[1][1:]) == (0.6, ("seed", 1))
    assert (round(out[2][0], 6), out[2][1:]) == (0.4, ("seed", -2))
    assert 3 not in out  # beyond the pull's reach
    assert out[4][0] == pytest.approx(0.95)
    assert neighbours.pulled(ids, [0.1, 0.5, 0.5, 0.5, 0.5], wins, [0.5, 0.25]) == {}  # never down


def test_pulled_takes_the_seed_that_lifts_most() -> None:
    wins = {"a": [("n", 1)], "b": [("n", -1)]}
    out = neighbours.pulled(["a", "b", "n"], [0.6, 0.8, 0.2], wins, [0.5])
    assert list(out) == [2] and (round(out[2][0], 6), out[2][1:]) == (0.5, ("b", -1))


def test_recorded_after_filter_matches_in_memory() -> None:
    rec = MemoryRecord("x", user_id="u", recorded_at=NOW)
    assert filters.matches(rec, MemoryFilter(user_id="u", recorded_after=NOW))
    assert not filters.matches(rec, MemoryFilter(user_id="u", recorded_after=NOW + timedelta(seconds=1)))


def _scored(read: ReadSettings, episode: float, episodes: frozenset[str] = frozenset()) -> tuple[float, dict[str, Any]]:
    route = intent.route("what did she make", read)
    ctx = scoring.QueryContext(route.intent, route.strategy, NOW, frozenset(), episodes, "")
    rec = MemoryRecord("she made a bowl", user_id="u", session_id="s", created_at=NOW, recorded_at=NOW)
    inp = scoring.Inputs(0.5, 0.5, 0.0, episode=episode)
    return scoring.score(rec, inp, ctx, read, Settings().dynamics)


def test_episode_relevance_lifts_the_turns_of_the_best_session() -> None:
    read = ReadSettings()
    top, ex = _scored(read, 1.0)
    none, _ = _scored(read, 0.0)
    assert read.episode_relevance_boost > 0
    assert ex["boosts"]["episode_relevance"] == pytest.approx(read.episode_relevance_boost)
    assert top - none > read.prior_margin  # more than the prior alone could move it
    assert _scored(read, 0.5)[1]["boosts"]["episode_relevance"] == pytest.approx(read.episode_relevance_boost * 0.5**2)
    off = read.model_copy(update={"episode_relevance_boost": 0.0})
    assert "episode_relevance" not in _scored(off, 1.0)[1]["boosts"]


def test_a_named_session_gets_the_session_boost_not_the_inferred_one() -> None:
    _, ex = _scored(ReadSettings(), 1.0, frozenset({"s"}))
    assert "episode_relevance" not in ex["boosts"] and ex["boosts"]["episode"] == pytest.approx(0.15)


def test_neighbour_pull_shares_are_checked() -> None:
    with pytest.raises(ValueError, match="neighbour_pull"):
        ReadSettings(neighbour_pull=[1.5])
