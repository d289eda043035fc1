"""A change of who does something (reverie.text.updates.doers): another person does the same thing to the same object
(a chore, a role), and the new statement says so — a take-over, a change word, or the old doer named apart. Each
sentence here is not the suite's; each update below is missed without the reading, and each compatible pair is one
of the things it must tell apart (the same doer, another object, another part of the day or day, a place many people
share, a possessor only)."""

from __future__ import annotations

import pytest

from reverie.text import updates


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("My wife does the ironing.", "I've taken over the ironing since she went back to work."),
        ("Sam handles the team's payroll.", "Priya took over the payroll when Sam went on leave."),
        ("My brother mows the lawn every fortnight.", "I mow the lawn now, my brother hurt his back."),
        ("Kedileri komşumuz besliyor.", "Kedileri artık ben besliyorum."),
        ("Faturaları babam ödüyor.", "Fatura işini ben devraldım."),
    ],
)
def test_another_doer_said_to_take_over_is_an_update(old: str, new: str) -> None:
    verdict = updates.judge(old, new)
    assert verdict.updates and "another person does the same" in verdict.reason, verdict


def test_the_old_doer_named_apart_is_left_to_the_embedder() -> None:
    old, new = "Çocukları okula eşim götürüyor.", "Eşim hastalandı; çocukları okula annem götürüyor."
    verdict = updates.judge(old, new)
    assert not verdict.updates and verdict.unaligned, verdict
    assert updates.unaligned_update(verdict, 0.90, 0.86).updates
    assert not updates.unaligned_update(verdict, 0.80, 0.86).updates


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("My brother mows the lawn every fortnight.", "My brother also trims the hedge now."),  # the same doer
        ("My wife does the ironing.", "I do the hoovering now."),  # another object
        ("My mum walks the dog in the mornings.", "I walk the dog in the evenings now."),  # another part of the day
        ("My sister cleans the kitchen on Mondays.", "I clean the kitchen on Thursdays now."),  # another day
        ("I work at the garden centre.", "My cousin works at the garden centre now."),  # a place many share
        ("Sam handles the team's payroll.", "Priya took over the team's newsletter."),  # a possessor only
        ("Kedileri komşumuz besliyor.", "Köpeği artık ben besliyorum."),  # another object
        ("Bulaşıkları annem yıkıyor.", "Arabayı artık ben yıkıyorum."),  # the verb only
    ],
)
def test_another_doer_of_something_else_is_no_update(a: str, b: str) -> None:
    verdict = updates.judge(a, b)
    assert not updates.unaligned_update(verdict, 0.99, 0.86).updates, verdict
