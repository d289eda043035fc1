"""One slot at a time: two statements about one subject that fill different attributes are no update, however
alike they are; a value of one attribute replaced, or let go, is. (subject, attribute, value): the attribute is
what the value is of — the word that counts or measures a number, the thing of an owner, the predicate — and
without a change said, each statement naming an attribute of its own tells two slots apart."""

from __future__ import annotations

import pytest

from reverie.text import updates

#: both true at once (the examples of the issue that asked for this, and more written for this test)
COMPATIBLE = [
    ("Our flat has two bedrooms.", "Our flat is on the fifth floor."),
    ("The commute takes twelve minutes.", "The commute has three stages."),
    ("The quarterly report is due on the 14th.", "The quarterly report has 38 pages."),
    ("My favourite tea is oolong.", "My favourite coffee is a flat white."),
    ("Maya is allergic to penicillin.", "Maya prefers window seats on flights."),
    ("The kitchen is 12 square metres.", "The kitchen cost 9,000 euros to redo."),
    ("The baby weighed 3.2 kg.", "The baby was 49 cm at birth."),
    ("The gym opens at 6am.", "The gym closes at 11pm."),
    ("Sara's dentist is Dr Lund.", "Sara's physio is Dr Amini."),
    ("My old bike is a Trek.", "My new helmet is a Giro."),
    ("Deniz Ankara'da yaşıyor.", "Burak Konya'da yaşıyor."),
    ("Toplantı saat 10'da başlıyor.", "Toplantı 12'de bitiyor."),
]

#: one slot, another value (or the old one let go): still read as updates
UPDATES = [
    ("I drive a VW Golf.", "I sold the Golf and now I drive a red Polo."),
    ("I weigh about 82 kilos.", "Down to 76 kg after a summer of cycling!"),
    ("My best friend Sam lives in Toronto.", "Sam moved back to Vancouver in the spring."),
    ("Rent for the studio is 900 a month.", "The landlord put the rent up to 950 a month."),
    ("Priya's manager is Helen Brooks.", "Helen left, Priya's manager is now Tomás Ruiz."),
]


@pytest.mark.parametrize(("a", "b"), COMPATIBLE)
def test_two_attributes_of_one_subject_are_no_update(a: str, b: str) -> None:
    verdict = updates.judge(a, b)
    assert not verdict.likely and not verdict.unaligned, verdict


@pytest.mark.parametrize(("old", "new"), UPDATES)
def test_a_value_of_one_slot_replaced_is_still_an_update(old: str, new: str) -> None:
    verdict = updates.judge(old, new)
    assert verdict.updates and not verdict.by_similarity, verdict
