"""The dream summarizer: the extractive method on the seeds' examples, and the LLM path against a real
local OpenAI-compatible server (with every kind of failure falling back to the extractive method)."""

from __future__ import annotations

import json
import random
import re
from typing import Any

import pytest

from reverie.config.core import LLMSettings
from reverie.dream.summarize import INSTRUCTIONS, extractive_summary, facts, grounding_problem, summarize
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
SEED003_SUMMARY = (
    "In March 2024, User was very active outdoors: hiked at Mount Rainier (Mar 12), kayaked at "
    "Lake Washington (Mar 15), ran a 5K in Fremont (Mar 20), rock climbed at Stone Gardens (Mar 25), "
    "and joined a cycling club (Mar 28)."
)


def _client(server: Any) -> tuple[LLMClient, list[dict[str, Any]]]:
    calls: list[dict[str, Any]] = []
    return LLMClient(LLMSettings(base_url=server.url, timeout_s=0.5, retries=0), on_call=calls.append), calls


def test_seed003_example_comes_out_like_the_seeds_summary() -> None:
    text = extractive_summary(SEED003)
    assert text == (
        "In March 2024, User went hiking at Mount Rainier (Mar 12), went kayaking at Lake Washington "
        "(Mar 15), ran a 5K in Fremont (Mar 20), went rock climbing at Stone Gardens (Mar 25), and "
        "joined a cycling club (Mar 28)."
    )
    # the seed's structure: shared month/year once, shared subject once, each item's own day in brackets
    assert text.startswith("In March 2024, User ") and text.count("2024") == 1 and text.count("User") == 1
    for detail in [
        "(Mar 12)",
        "(Mar 15)",
        "(Mar 20)",
        "(Mar 25)",
        "(Mar 28)",
        "Mount Rainier",
        "Lake Washington",
        "5K",
        "Fremont",
        "Stone Gardens",
        "cycling club",
    ]:
        assert detail in text and detail in SEED003_SUMMARY
    concatenation = "Summary: " + " | ".join(SEED003)  # seed 003's fallback
    assert len(text) < len(concatenation) and abs(len(text) - len(SEED003_SUMMARY)) < 30


def test_items_are_put_in_date_order_whatever_the_input_order() -> None:
    expected = extractive_summary(SEED003)
    for seed in range(5):
        shuffled = SEED003[:]
        random.Random(seed).shuffle(shuffled)
        assert extractive_summary(shuffled) == expected


@pytest.mark.parametrize(
    ("texts", "expected"),
    [
        (["User prefers dark mode.", "User prefers vim keybindings."], "User prefers dark mode and vim keybindings."),
        # different months of one year: the year is the header, each item keeps month and day
        (
            ["User went to the gym on 2024-05-01", "User went to the park on 2024-06-02"],
            "In 2024, User went to the gym (May 1) and the park (Jun 2).",
        ),
        # one shared date
        (
            ["Team standup on March 3 about the budget", "Team standup on March 3 about hiring"],
            "On March 3, Team standup about the budget and hiring.",
        ),
        # nothing shared: sentences stay whole and apart
        (
            ["Alice moved to Berlin in 2021.", "Bob works at Google.", "The deploy uses Docker"],
            "Alice moved to Berlin in 2021; Bob works at Google; The deploy uses Docker.",
        ),
        # years differ: dates stay where they are
        (
            ["User visited Rome on May 2, 2019", "User visited Oslo on May 2, 2023"],
            "User visited Rome on May 2, 2019 and Oslo on May 2, 2023.",
        ),
        # one undated item: no header that would misdate it
        (["User flew to Lima on April 2, 2024", "User flew to Quito"], "User flew to Lima on April 2, 2024 and Quito."),
        # a shared article alone is not a subject
        (["The cat sleeps on the sofa", "The dog barks at 7 am"], "The cat sleeps on the sofa; The dog barks at 7 am."),
    ],
)
def test_extractive_factoring(texts: list[str], expected: str) -> None:
    assert extractive_summary(texts) == expected


def test_repeats_merge_and_keep_every_date() -> None:
    text = extractive_summary(
        [
            "User swam at Green Lake on July 3, 2024",
            "User swam at Green Lake on July 9, 2024",
            "user swam at green lake on July 9, 2024",
            "User ran at Green Lake on July 5, 2024",
        ]
    )
    assert text == "In July 2024, User swam at Green Lake (Jul 3, Jul 9) and ran at Green Lake (Jul 5)."


def test_single_text_is_kept() -> None:
    assert extractive_summary(["  User likes   tea.  "]) == "User likes tea."


TURNS = [  # conversation turns as stored (speaker: text), long and full of facts
    "Jon: I finally opened my dance studio on Jan 20 on Harbor Street, and 14 students signed up in the first "
    "week, mostly teenagers from Riverside who saw the flyers at the library.",
    "Gina: That's amazing! I lost my job at Door Dash in January too, so I'm starting my own clothing store "
    "online; the first collection of 40 pieces launches on Feb 14 with my friend Carla.",
    "Jon: My rent is 2,300 dollars a month, which is scary, but Mr. Alvarez the landlord gave me the first "
    "month free because I fixed the wiring myself with my cousin Teo.",
    "Gina: I took a 6-week marketing course at Lakeside College and learned to run ads on Instagram for "
    "under 50 dollars a day; my first ad reached 12,000 people in Denver.",
    "Jon: On March 3 we hold the first showcase at the Palace Theatre, 3 routines, 25 dancers, and my old "
    "coach Marisol Vega flies in from Miami to judge it.",
    "Gina: I'll be there with my sister Ana; she dances salsa on Tuesdays at the Blue Room since 2019.",
]


def test_extractive_keeps_every_item_whatever_its_length() -> None:
    text = extractive_summary(TURNS)
    for turn in TURNS:  # every turn verbatim, speaker included: nothing dropped, nothing cut
        assert turn.rstrip(".") in text
    assert len(text) >= sum(len(t) for t in TURNS)  # ~950 characters, all of them the turns' own
    assert grounding_problem(text, TURNS) is None  # every name, date and number is there
    assert not re.search(r"\band \d+ more\b", text)
    long = [
        f"User really enjoyed a very long concert number {i} at the Paramount Theatre on June {i + 1}, 2024"
        for i in range(8)
    ]
    full = extractive_summary(long)
    assert full.startswith("In June 2024, User really enjoyed a very long concert number 0 at the Paramount")
    assert re.findall(r"\(Jun (\d+)\)", full) == [str(i + 1) for i in range(8)] and "really" in full


# --- grounding: what an LLM text must keep and must not add -------------------------------------------


def test_facts_of_a_turn() -> None:
    f = facts("Jon: I opened my studio on Jan 20, 2024; rent is 2,300 dollars. My coach Marisol flies in.")
    assert f.numbers == {"1/20", "month:1", "2024", "2300"}
    assert f.names == {"jon", "month:1", "marisol"}  # "I" and sentence openers ("My") are no names
    # one date, written three ways, is one fact
    for written in ("Sep 2, 2024", "2 September 2024", "2024-09-02", "September 2nd, 2024"):
        assert facts(f"Lena started school on {written}").numbers == {"9/2", "month:9", "2024"}


@pytest.mark.parametrize(
    ("summary", "problem"),
    [
        # faithful rewordings pass: other date format, thousands separator, speaker named differently placed
        ("On Jan 20 Jon opened a studio (rent: 2300 dollars); Gina met Ana on the 3rd of March.", None),
        ("Jon opened a studio on January 20; his rent is 2,300 dollars. Gina met Ana on March 3.", None),
        ("Jon opened a studio; his rent is 2,300 dollars. Gina met Ana on March 3.", "leaves out numbers or dates"),
        ("Jon opened a studio on Jan 20; rent 2,300 dollars. His friend met Ana on March 3.", "leaves out names"),
        ("Jon opened a studio on Jan 20 with Pedro; rent 2,300 dollars. Gina met Ana on March 3.", "names found in no"),
        ("Jon opened a studio on Jan 21; rent 2,300 dollars. Gina met Ana on March 3.", "numbers found in no"),
    ],
)
def test_grounding_problem(summary: str, problem: str | None) -> None:
    sources = ["Jon: I opened my studio on Jan 20. The rent is 2,300 dollars.", "Gina: I met Ana on March 3!"]
    found = grounding_problem(summary, sources)
    assert (found is None) if problem is None else (found is not None and problem in found)
    if problem is not None and "found in no" not in problem:
        assert grounding_problem(summary, sources, keep_all=False) is None  # only the keep-all rule failed


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


@pytest.mark.parametrize(
    ("status", "content", "why"),
    [
        (500, "{}", "no answer"),
        (200, "this is not json", "no answer"),
        (200, json.dumps({"summary": "   "}), "no 'summary'"),
        (200, json.dumps({"other": "x"}), "no 'summary'"),
        # an invented date (March 30) and count (6) are rejected: the summary must not state what no memory says
        (
            200,
            json.dumps({"summary": "User did 6 outdoor activities in March 2024, ending on March 30."}),
            "numbers found in no memory",
        ),
    ],
)
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


def test_llm_answer_that_loses_a_fact_falls_back(chat_server: Any) -> None:
    """The LLM must keep every member's names and numbers (who said it included), or its text is not used."""
    answers = {
        "drops the speaker": "Opened a dance studio on Jan 20 on Harbor Street with 14 students from Riverside "
        "(flyers at the library).",
        "drops the number": "Jon opened his dance studio on Harbor Street on Jan 20; students from Riverside "
        "signed up after seeing flyers at the library.",
        "cut by the budget": "Jon opened his dance studio on Harbor Street on Jan 20. Students from Riverside saw "
        "the flyers at the library, and 14 of them signed up in the first week.",
    }
    client, _ = _client(chat_server)
    for case, text in answers.items():
        chat_server.script = lambda req, text=text: (200, json.dumps({"summary": text}), 0.0)
        s = summarize(TURNS[:1], llm=client, purpose="consolidation", max_chars=110)
        assert s.method == "extractive" and s.text == extractive_summary(TURNS[:1]), case
        assert "leaves out" in s.reason, case
    good = "Jon opened his dance studio on Harbor Street on Jan 20; 14 students from Riverside joined."
    chat_server.script = lambda req: (200, json.dumps({"summary": good}), 0.0)
    s = summarize(TURNS[:1], llm=client, purpose="consolidation", max_chars=110)
    assert (s.method, s.text) == ("llm", good)
