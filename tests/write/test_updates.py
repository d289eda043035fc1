"""The update reading (reverie.text.updates) on the knowledge-update suite, without a model: every
correction reads as an update of the statement it corrects, no compatible pair does, and the unrelated
chat lines update none of the suite's facts. The ``sealed`` and ``fresh`` items are left out
here: they measure generalisation in ``bench/updates.py`` and were not used to develop the reading (see the
suite's ``about``)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from reverie.text import updates

SUITE = json.loads((Path(__file__).resolve().parent / "data" / "knowledge_updates.json").read_text(encoding="utf-8"))


def _split(index: int, item: dict[str, str]) -> str:
    return item.get("split") or ("heldout" if index % 3 == 2 else "dev")


UPDATES = [s for i, s in enumerate(SUITE["updates"]) if _split(i, s) in ("dev", "heldout", "dev3")]
COMPATIBLE = [p for i, p in enumerate(SUITE["compatible"]) if _split(i, p) in ("dev", "heldout", "dev3")]


def test_suite_size() -> None:
    assert len(SUITE["updates"]) >= 60 and len(SUITE["compatible"]) >= 100
    assert {s["lang"] for s in SUITE["updates"]} == {"en", "tr"} == {p["lang"] for p in SUITE["compatible"]}


def test_corrections_read_as_updates() -> None:
    missed = [
        (s["id"], updates.judge(s["old"], s["new"]).reason)
        for s in UPDATES
        if not updates.judge(s["old"], s["new"]).updates
    ]
    assert len(missed) <= 0.02 * len(UPDATES), missed


def test_compatible_facts_never_read_as_updates() -> None:
    false = [
        (p["id"], updates.judge(p["a"], p["b"]).reason) for p in COMPATIBLE if updates.judge(p["a"], p["b"]).updates
    ]
    assert false == []


def test_unrelated_chat_updates_no_fact() -> None:
    facts = [(s["lang"], s["old"]) for s in UPDATES] + [(p["lang"], t) for p in COMPATIBLE for t in (p["a"], p["b"])]
    false = [
        (fact, line) for lang, fact in facts for line in SUITE["filler"][lang] if updates.judge(fact, line).updates
    ]
    assert false == []


@pytest.mark.parametrize(
    ("old", "new", "why"),
    [
        ("My manager is Priya Nair.", "Priya left last week, so I report to Daniel Okafor now.", "lets go of"),
        ("I use Vim for everything.", "I switched from Vim to Neovim last month.", "lets go of 'Vim'"),
        ("Our weekly sync is on Mondays at 10am.", "The weekly sync got moved to Wednesdays at 2pm.", "another value"),
        ("Football practice is at 5pm.", "Correction: football practice is at 4:30, not 5.", "a correction"),
        ("Kod yazarken VS Code kullanıyorum.", "VS Code'u bıraktım, artık Neovim kullanıyorum.", "lets go of"),
        ("Kardeşim Emre Berlin'de yaşıyor.", "Emre geçen bahar Amsterdam'a taşındı.", "another value"),
    ],
)
def test_verdicts_say_why(old: str, new: str, why: str) -> None:
    verdict = updates.judge(old, new)
    assert verdict.updates and why in verdict.reason
    assert any(e.startswith("+") for e in verdict.evidence)


@pytest.mark.parametrize(
    ("old", "new", "why"),
    [
        # a value let go without a change word: "no more X", "artık X yok", "X yok artık"
        ("I have a glass of red wine with dinner.", "No more wine with dinner, doctor's orders.", "lets go of"),
        ("Öğlen kantinde yemek yiyorum.", "Artık kantin yok, öğlen evden yemek getiriyorum.", "lets go of"),
        ("Akşamları kola içiyorum.", "Kola yok artık, akşamları ayran içiyorum.", "lets go of"),
        # a new state from a time on: "since <time>", "-dan beri", "itibaren"
        ("My partner works at the Co-op bank.", "My partner has been at Nationwide since October.", "since october"),
        (
            "I swim at the Riverside leisure centre.",
            "I've been swimming at Hampton Lido since last summer.",
            "since last",
        ),
        ("Kiramız ayda 12.000 lira.", "Ocak'tan beri kiramız 14.000 lira.", "beri"),
        ("Haftada iki gün ofise gidiyorum.", "Nisan'dan itibaren haftada dört gün ofise gidiyorum.", "itibaren"),
        # a habit taken up again after the old statement let it go
        ("I quit smoking two years ago.", "I started smoking again after the move.", "takes up again"),
        ("I gave up chocolate for Lent.", "Back on chocolate, Lent is over.", "takes up again"),
        ("Şekeri bıraktım.", "Tekrar şeker yemeye başladım.", "takes up again"),
        # Turkish verbs of raising and lowering
        ("Aidat ayda 800 lira.", "Yönetim aidatı 950 liraya yükseltti.", "states a change"),
        ("Our team budget is 50,000 euros a year.", "Finance cut the team budget to 45,000 euros a year.", "cut"),
        # a subject said in other words ("mum's operation" for "my mother's surgery")
        ("My father's check-up is on June 3.", "Dad's check-up is now on June 10.", "another value"),
        # an elided subject beside a third-person pronoun is not the speaker
        ("My daughter has ballet on Mondays.", "No more ballet for her, she does karate now.", "lets go of"),
        # the person the old statement is about is gone, and another is named
        ("Marta cleans our house on Fridays.", "Marta retired, so now a cleaner called Joy Adeyemi comes.", "is gone"),
        # a way of getting to work said by its verb
        ("I take the train to work.", "No more trains for me, I walk to work now.", "commute"),
    ],
)
def test_changes_said_without_a_change_word(old: str, new: str, why: str) -> None:
    """Classes of phrasing the reading learnt with the en-c/tr-c scenarios: each reads as an update."""
    assert updates.says_change(new) and updates.may_update(new)
    verdict = updates.judge(old, new)
    assert verdict.updates and why in verdict.reason
    assert any(e.startswith("+") for e in verdict.evidence)


@pytest.mark.parametrize(
    ("old", "new", "against"),
    [
        ("Maya works at Google in Zurich as a data engineer.", "Maya moved from Lisbon to Zurich in June 2023.", ""),
        ("Ana likes tea at home.", "Ana likes coffee at work.", "several values"),
        ("My brother is 30.", "My sister is 27.", "different subjects"),
        ("I lived in Berlin for five years before this.", "Now I live in Lisbon.", "how things were"),
        ("I speak Spanish.", "I speak German fluently as well.", "adds rather than replaces"),
        ("The office is on the third floor.", "The office is on floor three.", ""),
        ("writer 1 note 5: Ana likes tea at home #5", "writer 2 note 9: Ana likes coffee at work #9", ""),
    ],
)
def test_compatible_statements_say_why_not(old: str, new: str, against: str) -> None:
    verdict = updates.judge(old, new)
    assert not verdict.updates, verdict.reason
    assert against in verdict.reason


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("I've lived in Leeds since 2015.", "I've worked at the children's hospital since 2019."),
        ("My sister has been vegetarian since 2010.", "My brother has been vegan since January."),
        ("We went to Crete last summer.", "We're going to Crete again this summer."),
        ("I cancelled my gym membership in March.", "I started running again in the park."),
        ("2018'den beri İstanbul'da yaşıyorum.", "2020'den beri aynı şirkette çalışıyorum."),
        ("Sigarayı geçen yıl bıraktım.", "Tekrar yüzmeye başladım."),
    ],
)
def test_since_and_again_alone_update_nothing(old: str, new: str) -> None:
    """When a state began is no value of it, and "again" takes up only what the old statement let go."""
    assert not updates.judge(old, new).updates, updates.judge(old, new).reason


def test_attributes_that_hold_one_value() -> None:
    assert updates.attributes("Which company did Maya join and where?") == {"work"}
    assert "work" in updates.attributes("Maya: I finally accepted the job offer from Northwind Robotics.")
    assert updates.attributes("Where does the user live these days?") == {"residence"}
    assert updates.attributes("I love old palaces.") == frozenset()  # a preference may hold many values


def test_analysis_reads_values_subjects_and_change() -> None:
    st = updates.analyse("Heads up: the team sync got moved to Wednesdays at 2pm.")
    clause = st.clauses[0]
    assert {(v.kind, v.norm) for v in clause.values} >= {("day", "wednesday"), ("time", "14:00")}
    assert clause.change and clause.subject[0] == "thing"
    tr = updates.analyse("Ev sahibi kirayı 18.500 liraya çıkardı.")
    assert tr.turkish and any(v.norm == "#18500@money/try" for c in tr.clauses for v in c.values)
    assert updates.stem("kirayı", True) == updates.stem("Kira", True)


def _reads_change(text: str) -> bool:
    """says_change without its cheap first test: the full reading into clauses."""
    return any(
        c.change or c.correction or c.dropped or c.moved_from or c.negated or c.polarity or c.resumed or c.moved_out
        for c in updates.analyse(text).clauses
    ) or (
        updates.is_turkish(text)
        and any(re.fullmatch(r"\w{2,}?(?:l[ıiuü]|s[ıiuü]z)", w) for c in updates.analyse(text).clauses for w in c.words)
    )


def test_the_cheap_change_test_never_drops_a_text_that_says_change() -> None:
    """may_say_change is False only when the full reading finds no change: over every statement of the
    suite and the filler chat, and over the same texts with a speaker, an abbreviation, a tag and an ISO
    date note around them (what the reading strips before it cuts clauses)."""
    texts = [t for s in UPDATES for t in (s["old"], s["new"])] + [t for p in COMPATIBLE for t in (p["a"], p["b"])]
    texts += [t for lines in SUITE["filler"].values() for t in lines]
    texts += [f"Maya: {t}" for t in texts] + [f"Dr. Ng says {t} #24 (2024-03-01)" for t in texts]
    said = [t for t in texts if _reads_change(t)]
    assert len(said) > 100
    assert all(updates.may_say_change(t) for t in said), [t for t in said if not updates.may_say_change(t)][:5]
    assert all(updates.says_change(t) == _reads_change(t) for t in texts)
    assert not updates.may_say_change("Priya adopted a rabbit named Mochi in March.")  # no cue: never read


@pytest.mark.parametrize("item", UPDATES, ids=[s["id"] for s in UPDATES])
def test_every_update_of_the_suite_passes_the_cheap_test(item: dict[str, str]) -> None:
    """A correction that reads as an update of its old statement is never skipped by the read path's
    first, cheap test."""
    if updates.judge(item["old"], item["new"]).likely and _reads_change(item["new"]):
        assert updates.may_say_change(item["new"])


def test_dotted_numbers_read_as_codes() -> None:
    """An address or version with several dots ("127.0.0.1", "2.5.1") is a code, not a number, and
    reading it never fails."""
    st = updates.analyse("The server moved from 127.0.0.1 to 10.0.0.12, version 2.5.1 now.")
    codes = {v.norm for c in st.clauses for v in c.values if v.kind == "code"}
    assert {"127.0.0.1", "2.5.1"} <= codes
    assert updates.says_change("The server moved from 127.0.0.1 to 10.0.0.12")
    assert isinstance(updates.judge("The server is at 127.0.0.1.", "The server is at 10.0.0.12 now."), updates.Verdict)


def test_when_a_state_began_is_neither_subject_nor_value() -> None:
    tr = updates.analyse("Mart'tan itibaren kızım her gün kreşe gidiyor.")
    assert tr.clauses[0].subject == ("rel", "self", "kız") and tr.clauses[0].change == ["itibaren"]
    en = updates.analyse("I've been a member of the Oakwood tennis club since September.")
    assert [v.text for v in en.clauses[0].values] == ["Oakwood"] and en.clauses[0].change == ["since september"]
