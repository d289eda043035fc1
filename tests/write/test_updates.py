"""The update reading (reverie.write.updates) on the knowledge-update suite, without a model: every
correction reads as an update of the statement it corrects, no compatible pair does, and the unrelated
chat lines update none of the suite's facts. The ``sealed`` items are left out here: they measure
generalisation in ``bench/updates.py`` and are never used to develop the reading (see the suite's
``about``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reverie.write import updates

SUITE = json.loads((Path(__file__).resolve().parent / "data" / "knowledge_updates.json").read_text(encoding="utf-8"))


def _split(index: int, item: dict[str, str]) -> str:
    return item.get("split") or ("heldout" if index % 3 == 2 else "dev")


UPDATES = [s for i, s in enumerate(SUITE["updates"]) if _split(i, s) != "sealed"]
COMPATIBLE = [p for i, p in enumerate(SUITE["compatible"]) if _split(i, p) != "sealed"]


def test_suite_size() -> None:
    assert len(SUITE["updates"]) >= 60 and len(SUITE["compatible"]) >= 100
    assert {s["lang"] for s in SUITE["updates"]} == {"en", "tr"} == {p["lang"] for p in SUITE["compatible"]}


def test_corrections_read_as_updates() -> None:
    missed = [(s["id"], updates.judge(s["old"], s["new"]).reason) for s in UPDATES
              if not updates.judge(s["old"], s["new"]).updates]
    assert len(missed) <= 0.02 * len(UPDATES), missed


def test_compatible_facts_never_read_as_updates() -> None:
    false = [(p["id"], updates.judge(p["a"], p["b"]).reason) for p in COMPATIBLE
             if updates.judge(p["a"], p["b"]).updates]
    assert false == []


def test_unrelated_chat_updates_no_fact() -> None:
    facts = [(s["lang"], s["old"]) for s in UPDATES] + [(p["lang"], t) for p in COMPATIBLE for t in (p["a"], p["b"])]
    false = [(fact, line) for lang, fact in facts for line in SUITE["filler"][lang]
             if updates.judge(fact, line).updates]
    assert false == []


@pytest.mark.parametrize(("old", "new", "why"), [
    ("My manager is Priya Nair.", "Priya left last week, so I report to Daniel Okafor now.", "lets go of"),
    ("I use Vim for everything.", "I switched from Vim to Neovim last month.", "lets go of 'Vim'"),
    ("Our weekly sync is on Mondays at 10am.", "The weekly sync got moved to Wednesdays at 2pm.", "another value"),
    ("Football practice is at 5pm.", "Correction: football practice is at 4:30, not 5.", "a correction"),
    ("Kod yazarken VS Code kullanıyorum.", "VS Code'u bıraktım, artık Neovim kullanıyorum.", "lets go of"),
    ("Kardeşim Emre Berlin'de yaşıyor.", "Emre geçen bahar Amsterdam'a taşındı.", "another value"),
])
def test_verdicts_say_why(old: str, new: str, why: str) -> None:
    verdict = updates.judge(old, new)
    assert verdict.updates and why in verdict.reason
    assert any(e.startswith("+") for e in verdict.evidence)


@pytest.mark.parametrize(("old", "new", "against"), [
    ("Maya works at Google in Zurich as a data engineer.", "Maya moved from Lisbon to Zurich in June 2023.", ""),
    ("Ana likes tea at home.", "Ana likes coffee at work.", "several values"),
    ("My brother is 30.", "My sister is 27.", "different subjects"),
    ("I lived in Berlin for five years before this.", "Now I live in Lisbon.", "how things were"),
    ("I speak Spanish.", "I speak German fluently as well.", "adds rather than replaces"),
    ("The office is on the third floor.", "The office is on floor three.", ""),
    ("writer 1 note 5: Ana likes tea at home #5", "writer 2 note 9: Ana likes coffee at work #9", ""),
])
def test_compatible_statements_say_why_not(old: str, new: str, against: str) -> None:
    verdict = updates.judge(old, new)
    assert not verdict.updates, verdict.reason
    assert against in verdict.reason


def test_analysis_reads_values_subjects_and_change() -> None:
    st = updates.analyse("Heads up: the team sync got moved to Wednesdays at 2pm.")
    clause = st.clauses[0]
    assert {(v.kind, v.norm) for v in clause.values} >= {("day", "wednesday"), ("time", "14:00")}
    assert clause.change and clause.subject[0] == "thing"
    tr = updates.analyse("Ev sahibi kirayı 18.500 liraya çıkardı.")
    assert tr.turkish and any(v.norm == "#18500@money/try" for c in tr.clauses for v in c.values)
    assert updates.stem("kirayı", True) == updates.stem("Kira", True)
