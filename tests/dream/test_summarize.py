"""The dream summarizer: the extractive method on the seeds' examples, and the LLM path against a real
local OpenAI-compatible server (with every kind of failure falling back to the extractive method)."""

from __future__ import annotations

import json
import random
import re
from typing import Any

import pytest

from reverie.config.core import LLMSettings
from reverie.dream.summarize import INSTRUCTIONS, extractive_summary, summarize
from reverie.errors import InvalidInputError
from reverie.llm import LLMClient

SEED003 = [
    "User went hiking at Mount Rainier on March 12, 2024",
    "User went kayaking at Lake Washington on March 15, 2024",
    "User ran a 5K in Fremont on March 20, 2024",
    "User went rock climbing at Stone Gardens on March 25, 2024",
    "User joined a cycling club on March 28, 2024",
]
#: seed 003's example summary (written by its LLM)
SEED003_SUMMARY = ("In March 2024, User was very active outdoors: hiked at Mount Rainier (Mar 12), kayaked at "
                   "Lake Washington (Mar 15), ran a 5K in Fremont (Mar 20), rock climbed at Stone Gardens (Mar 25), "
                   "and joined a cycling club (Mar 28).")


def _client(server: Any) -> tuple[LLMClient, list[dict[str, Any]]]:
    calls: list[dict[str, Any]] = []
    return LLMClient(LLMSettings(base_url=server.url, timeout_s=0.5, retries=0), on_call=calls.append), calls


def test_seed003_example_comes_out_like_the_seeds_summary() -> None:
    text = extractive_summary(SEED003)
    assert text == ("In March 2024, User went hiking at Mount Rainier (Mar 12), went kayaking at Lake Washington "
                    "(Mar 15), ran a 5K in Fremont (Mar 20), went rock climbing at Stone Gardens (Mar 25), and "
                    "joined a cycling club (Mar 28).")
    # the seed's structure: shared month/year once, shared subject once, each item's own day in brackets
    assert text.startswith("In March 2024, User ") and text.count("2024") == 1 and text.count("User") == 1
    for detail in ["(Mar 12)", "(Mar 15)", "(Mar 20)", "(Mar 25)", "(Mar 28)", "Mount Rainier",
                   "Lake Washington", "5K", "Fremont", "Stone Gardens", "cycling club"]:
        assert detail in text and detail in SEED003_SUMMARY
    concatenation = "Summary: " + " | ".join(SEED003)  # seed 003's fallback
    assert len(text) < len(concatenation) and abs(len(text) - len(SEED003_SUMMARY)) < 30


def test_items_are_put_in_date_order_whatever_the_input_order() -> None:
    expected = extractive_summary(SEED003)
    for seed in range(5):
        shuffled = SEED003[:]
        random.Random(seed).shuffle(shuffled)
        assert extractive_summary(shuffled) == expected


@pytest.mark.parametrize(("texts", "expected"), [
    (["User prefers dark mode.", "User prefers vim keybindings."], "User prefers dark mode and vim keybindings."),
    # different months of one year: the year is the header, each item keeps month and day
    (["User went to the gym on 2024-05-01", "User went to the park on 2024-06-02"],
     "In 2024, User went to the gym (May 1) and the park (Jun 2)."),
    # one shared date
    (["Team standup on March 3 about the budget", "Team standup on March 3 about hiring"],
     "On March 3, Team standup about the budget and hiring."),
    # nothing shared: sentences stay whole and apart
    (["Alice moved to Berlin in 2021.", "Bob works at Google.", "The deploy uses Docker"],
     "Alice moved to Berlin in 2021; Bob works at Google; The deploy uses Docker."),
    # years differ: dates stay where they are
    (["User visited Rome on May 2, 2019", "User visited Oslo on May 2, 2023"],
     "User visited Rome on May 2, 2019 and Oslo on May 2, 2023."),
    # one undated item: no header that would misdate it
    (["User flew to Lima on April 2, 2024", "User flew to Quito"],
     "User flew to Lima on April 2, 2024 and Quito."),
    # a shared article alone is not a subject
    (["The cat sleeps on the sofa", "The dog barks at 7 am"], "The cat sleeps on the sofa; The dog barks at 7 am."),
])
def test_extractive_factoring(texts: list[str], expected: str) -> None:
    assert extractive_summary(texts) == expected


def test_repeats_merge_and_keep_every_date() -> None:
    text = extractive_summary(["User swam at Green Lake on July 3, 2024", "User swam at Green Lake on July 9, 2024",
                               "user swam at green lake on July 9, 2024", "User ran at Green Lake on July 5, 2024"])
    assert text == "In July 2024, User swam at Green Lake (Jul 3, Jul 9) and ran at Green Lake (Jul 5)."


def test_single_text_is_kept() -> None:
    assert extractive_summary(["  User likes   tea.  "]) == "User likes tea."


def test_budget_drops_filler_then_items_and_says_how_many() -> None:
    long = [f"User really enjoyed a very long concert number {i} at the Paramount Theatre on June {i + 1}, 2024"
            for i in range(8)]
    full = extractive_summary(long, max_chars=10_000)
    assert "really" in full and len(full) > 300
    trimmed = extractive_summary(long, max_chars=300)
    assert len(trimmed) <= 300 and trimmed.startswith("In June 2024, User enjoyed")
    assert "really" not in trimmed and "very" not in trimmed
    shown = re.findall(r"\(Jun (\d+)\)", trimmed)
    more = int(re.search(r"and (\d+) more\.$", trimmed).group(1))  # type: ignore[union-attr]
    assert shown == [str(i + 1) for i in range(len(shown))] and len(shown) >= 3 and len(shown) + more == 8
    tiny = extractive_summary(long, max_chars=60)
    assert len(tiny) <= 60 and tiny.endswith("…")


@pytest.mark.parametrize("bad", [[], ["", "  "], "a plain string", [1, 2], None])
def test_bad_texts_are_refused(bad: Any) -> None:
    with pytest.raises(InvalidInputError):
        summarize(bad, llm=None, purpose="consolidation")


def test_bad_purpose_and_budget_are_refused() -> None:
    with pytest.raises(InvalidInputError, match="unknown summary purpose"):
        summarize(["a b"], llm=None, purpose="poem")
    with pytest.raises(InvalidInputError, match="max_chars"):
        summarize(["a b"], llm=None, purpose="consolidation", max_chars=10)
    custom = summarize(["User likes tea"], llm=None, purpose="peer_card", instruction="Describe the person.")
    assert custom.method == "extractive" and custom.text == "User likes tea."


def test_without_llm_the_method_is_extractive() -> None:
    s = summarize(SEED003, llm=None, purpose="consolidation")
    assert (s.method, s.text, s.reason) == ("extractive", extractive_summary(SEED003), "no LLM configured")


def test_llm_path_uses_seed003_prompt(chat_server: Any) -> None:
    chat_server.script = lambda req: (200, json.dumps({"summary": SEED003_SUMMARY}), 0.0)
    client, calls = _client(chat_server)
    s = summarize(SEED003, llm=client, purpose="consolidation")
    assert (s.method, s.text) == ("llm", SEED003_SUMMARY)
    system = chat_server.requests[0]["messages"][0]["content"]
    user = chat_server.requests[0]["messages"][1]["content"]
    assert system.startswith(INSTRUCTIONS["consolidation"]) and "Preserve specific names, dates" in system
    assert user.splitlines()[0] == "Memories:" and user.splitlines()[1] == f"1. {SEED003[0]}"
    assert len(user.splitlines()) == 6 and calls[0]["op"] == "consolidation" and calls[0]["success"]


@pytest.mark.parametrize(("status", "content", "why"), [
    (500, "{}", "no answer"),
    (200, "this is not json", "no answer"),
    (200, json.dumps({"summary": "   "}), "no 'summary'"),
    (200, json.dumps({"other": "x"}), "no 'summary'"),
    # an invented date (March 30) and count (6) are rejected: the summary must not state what no memory says
    (200, json.dumps({"summary": "User did 6 outdoor activities in March 2024, ending on March 30."}),
     "numbers found in no memory"),
])
def test_llm_failures_fall_back_to_extractive(chat_server: Any, status: int, content: str, why: str) -> None:
    chat_server.script = lambda req: (status, content, 0.0)
    client, _ = _client(chat_server)
    s = summarize(SEED003, llm=client, purpose="consolidation")
    assert s.method == "extractive" and s.text == extractive_summary(SEED003)
    assert s.reason.startswith("LLM fallback:") and why in s.reason


def test_long_llm_answer_is_cut_to_the_budget(chat_server: Any) -> None:
    answer = "User hikes. " * 40
    chat_server.script = lambda req: (200, json.dumps({"summary": answer}), 0.0)
    client, _ = _client(chat_server)
    s = summarize(["User hikes every weekend"], llm=client, purpose="pattern", max_chars=100)
    assert s.method == "llm" and len(s.text) <= 100 and s.text.endswith("User hikes.")
    assert "at most 100 characters" in chat_server.requests[0]["messages"][0]["content"]
