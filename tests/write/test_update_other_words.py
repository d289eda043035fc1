"""A change said of the same thing in words the clause reading cannot line up (the update reading's fallback for
whole statements, reverie.text.updates.judge): a change said anywhere in the new statement, a word of the old one
beyond who it is about that names something in both (the attribute), a word of the old one the new no longer says
and one of its own. Such a verdict is marked unaligned and the embedder decides (unaligned_update). Each sentence
here is not the suite's; each update below fails without the fallback, and each compatible pair is one of the
things the fallback must tell apart (another part of the day, a one-off occasion, a shared word that names nothing,
another attribute, another thing changed, another person)."""

from __future__ import annotations

import pytest

from reverie.text import updates
from reverie.text.updates.clauses import analyse


@pytest.mark.parametrize(
    ("old", "new"),
    [
        # the new value in a clause of its own, the old statement's one restated nowhere (what someone sings is
        # read as a value: "bass" / "tenor" lines up, tests/write/test_update_more_phrasings.py)
        (
            "I coach the under-tens at the football club.",
            "I have moved to the under-twelves at the club, and we train on Thursdays now.",
        ),
        # "rather than" the old, the new one done by someone else
        (
            "The kids go to the breakfast club at school before nine.",
            "From March the kids are dropped off by my mum rather than going to the breakfast club.",
        ),
        # the value first, and the old one's end said of the place itself
        (
            "I help out at the animal shelter on Sunday mornings.",
            "Sunday mornings are the community garden for me now; the animal shelter stopped its weekend rota.",
        ),
    ],
)
def test_a_change_said_in_other_words_is_left_to_the_embedder(old: str, new: str) -> None:
    verdict = updates.judge(old, new)
    assert not verdict.updates and verdict.unaligned, verdict
    assert "in other words" in verdict.reason
    assert updates.unaligned_update(verdict, 0.90, 0.86).updates
    assert not updates.unaligned_update(verdict, 0.80, 0.86).updates  # not close enough in meaning


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("I drink normal coffee in the mornings.", "In the evenings I've switched to decaf coffee."),  # part of the day
        ("I work at the office on Mondays.", "I left my gloves at the office yesterday."),  # a one-off occasion
        ("I'm thinking about learning Italian.", "I dropped my German course and started learning Spanish."),
        ("My laptop's battery drains fast since the update.", "I changed my laptop, now I use a MacBook."),
        ("I've lived in Manchester since 2018.", "I've taught at the primary school since 2020."),  # attributes
        ("The kids' nursery opens at 8.", "We moved the kids' bedtime to 7:30 for the winter."),  # another thing
        ("My brother Sam sees Dr. Hale for his asthma.", "We switched our cat to a new vet, Dr. Price."),
    ],
)
def test_compatible_statements_are_no_change_in_other_words(a: str, b: str) -> None:
    verdict = updates.judge(a, b)
    assert not updates.unaligned_update(verdict, 0.99, 0.86).updates, verdict


def test_too_before_a_word_says_how_much_and_adds_nothing() -> None:
    """ "Our flat is too small" adds nothing to what was said; "I like jazz too" does."""
    assert [c.additive for c in analyse("Our flat is too small for the four of us.").clauses] == [[]]
    assert [c.additive for c in analyse("It got too expensive, so we cancelled.").clauses] == [[], []]
    assert analyse("I like jazz too.").clauses[0].additive == ["too"]


@pytest.mark.parametrize(
    ("old", "new"),
    [
        # the attribute is the old statement's subject, named again in another form, and a change said
        ("Yıllık sigortamız 8000 lira.", "Sigortaya zam geldi, artık 9500 ödüyoruz."),
        ("Kızımın servisi akşam altıda bırakıyor.", "Servis saati altı buçuğa kaydı."),
    ],
)
def test_values_aligned_with_nothing_to_tie_them_are_left_to_the_embedder(old: str, new: str) -> None:
    verdict = updates.judge(old, new)
    assert not verdict.updates and verdict.unaligned, verdict
    assert updates.unaligned_update(verdict, 0.90, 0.86).updates


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("I still take honey in my tea.", "I switched to oat milk last year."),  # plain objects: another thing
        ("The removal van comes on June 3rd.", "The keys are handed over on June 2nd."),  # another thing's date
        ("Salı akşamı su kesildi.", "Toplantı perşembeye alındı."),  # an event told in the past
        ("Sabahları otobüs 7:10'da geçiyor.", "Akşam servisi artık 18:15'te."),  # another part of the day
    ],
)
def test_values_of_other_things_are_not_left_to_the_embedder(a: str, b: str) -> None:
    verdict = updates.judge(a, b)
    assert not updates.unaligned_update(verdict, 0.99, 0.86).updates, verdict


@pytest.mark.parametrize(
    ("old", "new"),
    [
        # "lately" and "from this week" say a new state from a time on, like "these days"
        ("My usual lunch is a tuna sandwich.", "Lately it's been noodle soup for me, the sandwiches got boring."),
        ("I'm on the early shift at the bakery.", "They've put me on afternoons at the bakery from this week."),
    ],
)
def test_a_new_state_from_a_time_on_is_a_change_said(old: str, new: str) -> None:
    verdict = updates.judge(old, new)
    assert verdict.updates or verdict.unaligned, verdict
    assert updates.unaligned_update(verdict, 0.90, 0.86).updates


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("I keep my emergency fund in a fixed-rate bond.", "Cashed in the bond and put the money in a Marcus account."),
        ("I use Chrome on my work laptop.", "I wiped Chrome and put Firefox on the work laptop."),
    ],
)
def test_a_value_wiped_or_cashed_in_is_let_go(old: str, new: str) -> None:
    verdict = updates.judge(old, new)
    assert verdict.updates and "lets go of" in verdict.reason, verdict


def test_a_turkish_diet_is_broken_by_what_is_eaten_with_no_value_named() -> None:
    """ "Bu aralar peynir yiyorum" names no value the reading knows, but eats what "Veganım" excludes."""
    verdict = updates.judge("Veganım.", "Bu aralar peynir yiyorum, doktor kalsiyum dedi.")
    assert verdict.updates and "excludes" in verdict.reason, verdict
    assert not updates.judge("Veganım.", "Kızım artık yumurta yiyor.").updates  # another person's diet


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("I drink cola every day.", "I haven't had a cola in three weeks."),
        ("Her sabah kahve içiyorum.", "İki haftadır kahve içmiyorum, midem ağrıyor."),
    ],
)
def test_a_habit_gone_without_for_a_while_is_let_go(old: str, new: str) -> None:
    verdict = updates.judge(old, new)
    assert verdict.updates and "gone without" in verdict.reason, verdict


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("I go to the gym on Mondays.", "My sister hasn't been to the gym in months."),  # another person
        ("I play tennis on Sundays.", "I haven't seen my cousin in three years."),  # another thing
        ("I never eat meat.", "I haven't had meat in ten years."),  # the old statement is an abstention too
    ],
)
def test_something_else_gone_without_is_no_update(a: str, b: str) -> None:
    assert not updates.judge(a, b).updates
