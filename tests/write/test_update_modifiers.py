"""Two things of one kind (reverie.text.updates.evidence._against_modifiers): when each statement names the same
attribute word with a word of its own before it — a bedtime and a bus time, a dinner time and a bus time — a new
value of the one does not replace the other's. The same attribute with the same word before it, or with none,
still updates. The sentences are not the suite's."""

from __future__ import annotations

import pytest

from reverie.text import updates


@pytest.mark.parametrize(
    ("old", "new"),
    [
        # Turkish compounds: the children's bedtime / the school bus's time
        ("Çocukların yatma saati 21:00.", "Servis saati 7:30'a kaydı."),
        # one person's medicine time / the cat's feeding time
        ("Annemin ilaç saati 9:00.", "Kedinin mama saati 8:00'e çekildi."),
        # a dinner time / a bus time
        ("Our dinner time is 7pm.", "The bus time moved to 8pm."),
    ],
)
def test_a_new_value_of_another_kind_of_the_same_attribute_updates_nothing(old: str, new: str) -> None:
    verdict = updates.judge(old, new)
    assert not verdict.updates, verdict.reason


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("Pazartesi toplantı saati 10:00.", "Toplantı saati 11:00'e alındı."),  # the same word before it
        ("Kahvaltı saatimiz 8.", "Kahvaltı saatimizi 9'a aldık."),
        ("Our dinner time is 7pm.", "Dinner time moved to 8pm."),
        # the word before the verb is the value itself, not a kind of going
        ("Markete her hafta bisikletle gidiyorum.", "Bileğimi burktuğumdan beri markete arabayla gidiyorum."),
    ],
)
def test_the_same_kind_of_the_attribute_still_updates(old: str, new: str) -> None:
    verdict = updates.judge(old, new)
    assert verdict.updates, verdict.reason


def test_the_reason_names_both_kinds() -> None:
    verdict = updates.judge("Çocukların yatma saati 21:00.", "Servis saati 7:30'a kaydı.")
    assert "values of another saat" in verdict.reason
