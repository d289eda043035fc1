"""More ways people state a change, each with its own sentences (not the suite's): a farewell to the old value
("goodbye Honda", "Fiat'a veda ettik"), the old value that failed or fell through ("was fully booked", "wasn't
working for me", "bana göre değil", "yurt doldu", "hukuktan sıkıldı"), a thing being closed, a state begun lately
("I've been swimming at the lido for the past few weeks"), a deal or a booking made again ("refinanced",
"rebooked"), a home bought, Turkish price rises in the plural ("zamlar"), a correction of who does a chore
("actually", "after all", "pardon"), a change of mind ("changed our mind", "fikrini değiştirdi"), a weekday said
first ("Sunday is family dinner"), a new one of the speaker's named apart ("We have a new dentist now, Dr
Lindqvist"), and an old statement that says nothing beyond the word the new one shares and
the value it no longer says ("Zumba yapıyorum" / "artık pilates yapıyorum"), what someone sings ("alto" /
"soprano", read as an instrument someone plays) — and the compatible statements each must leave alone."""

from __future__ import annotations

import pytest

from reverie.text import updates

#: the e5 profile's change_min, and a similarity above it (an unaligned verdict becomes an update from there)
_CHANGE_MIN = 0.86
_CLOSE = 0.9


@pytest.mark.parametrize(
    ("old", "new"),
    [
        # a farewell to the old value
        ("I drive a silver Honda Civic.", "Goodbye Honda, hello electric Kia Niro!"),
        ("My phone is an old Pixel 4.", "Said goodbye to the Pixel, I'm on a Fairphone now."),
        ("Arabamız Fiat Egea.", "Fiat'a veda ettik, artık Toyota Corolla kullanıyoruz."),
        # the old value closed, failed or fell through
        ("We bank with Barclays.", "I'm closing the Barclays account, everything goes to Monzo from now on."),
        ("We're going to Crete for Easter.", "Crete was fully booked, so we're doing a week in Madeira instead."),
        ("I use Headspace for meditation.", "Headspace wasn't working for me, so I switched to Calm."),
        ("We subscribe to Netflix, Apple TV+ and Prime.", "Apple TV+ is gone, we only kept Netflix and Prime."),
        ("Oğlum basketbol oynuyor.", "Basketbol ona göre değilmiş, artık voleybol oynuyor."),
        ("Kızım Ankara'daki yurtta kalıyor.", "Yurt doldu, kızım artık bir ev arkadaşıyla kalıyor."),
        ("Kızım hukuk okuyor.", "Kızım hukuktan sıkıldı, işletmeye geçti."),
        # a state begun lately, a deal made again, a home bought, price rises
        ("I swim at the leisure centre.", "I've been swimming at the lido for the past few weeks."),
        ("My loan rate is 5.9%.", "Refinanced in June, the new rate is 4.2%."),
        ("Our flight to Rome is on the 3rd.", "Rebooked the flight, we now fly on the 5th."),
        ("Doğalgaz faturası ayda 800 lira.", "Doğalgaz faturası 1200 lira oldu, zamlar yüzünden."),
        # a correction of who does a chore
        ("My brother cooks Sunday lunch.", "Actually my dad cooks Sunday lunch, my brother just does the washing up."),
        ("My husband walks the dog.", "Sorry, I walk the dog, my husband feeds the cat."),
        ("Faturaları eşim ödüyor.", "Pardon, faturaları aslında ben ödüyorum."),
    ],
)
def test_a_change_said_in_these_words_updates(old: str, new: str) -> None:
    verdict = updates.judge(old, new)
    assert verdict.updates, verdict.reason


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("Zumba yapıyorum.", "Bel ağrım yüzünden artık pilates yapıyorum."),
        ("I collect stamps.", "Now I collect vinyl records."),
    ],
)
def test_an_old_statement_of_one_word_and_its_value_is_left_to_the_embedder(old: str, new: str) -> None:
    verdict = updates.judge(old, new)
    assert verdict.unaligned and not verdict.updates, verdict.reason
    assert updates.unaligned_update(verdict, _CLOSE, _CHANGE_MIN).updates
    assert not updates.unaligned_update(verdict, _CHANGE_MIN - 0.05, _CHANGE_MIN).updates


@pytest.mark.parametrize(
    ("old", "new"),
    [
        # a farewell to someone else, a booking or a show that fell through on another occasion
        ("I drive a silver Honda Civic.", "Said goodbye to my neighbour today, she's moving to Leeds."),
        ("We're going to Crete for Easter.", "The hotel restaurant was fully booked, so we ate in the village."),
        ("Our cinema club meets on Fridays.", "The concert was sold out, so we stayed home."),
        ("Kızım keman çalıyor.", "Futbol bana göre değil, ben yüzmeyi seviyorum."),
        ("Bankam Garanti.", "Komşumuza veda ettik, İzmir'e taşındı."),
        ("Kızım hukuk okuyor.", "Kızım derslerden sıkıldı ama hukuk okumaya devam ediyor."),
        # something else done lately, bought by someone else
        ("I swim at the leisure centre.", "I've been doing yoga at home for a few weeks as well."),
        ("I run three times a week.", "I've been sleeping badly for a few weeks."),
        ("We holiday in Devon every year.", "My sister bought a flat in Spain."),
        # another chore corrected
        ("My brother cooks Sunday lunch.", "Actually my dad cooks Christmas dinner."),
        # one shared word, but an addition or another person
        ("Zumba yapıyorum.", "Cumartesileri artık yürüyüş de yapıyorum."),
        ("I play chess.", "My son plays football now."),
        ("Çay içiyorum.", "Artık kahve de içiyorum."),
    ],
)
def test_compatible_statements_stay(old: str, new: str) -> None:
    verdict = updates.unaligned_update(updates.judge(old, new), _CLOSE, _CHANGE_MIN)
    assert not verdict.updates, verdict.reason


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("My dentist is Dr Okafor.", "We have a new dentist now, Dr Lindqvist."),
        ("My piano teacher is Mrs Clarke.", "Found a new piano teacher, Julia Brandt."),
        ("Our cleaner is Agata.", "We've got a new cleaner now, Rosa."),
    ],
)
def test_a_new_one_named_apart_is_left_to_the_embedder(old: str, new: str) -> None:
    verdict = updates.judge(old, new)
    assert verdict.unaligned and not verdict.updates, verdict.reason
    assert updates.unaligned_update(verdict, _CLOSE, _CHANGE_MIN).updates


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("My dentist is Dr Okafor.", "Dr Okafor hired a new dentist, Ana Ruiz."),
        ("My dentist is Dr Okafor.", "My sister has a new dentist, Dr Ruiz."),
        ("My hairdresser is Kim at Cutz.", "Tried a new hairdresser, Bella, but I'm sticking with Kim."),
        ("My piano teacher is Mrs Clarke.", "Our choir has a new conductor, Julia Brandt."),
        ("My piano teacher is Mrs Clarke.", "Mrs Clarke has a new student, Julia Brandt."),
    ],
)
def test_a_new_one_of_someone_else_or_beside_the_old_stays(old: str, new: str) -> None:
    verdict = updates.unaligned_update(updates.judge(old, new), _CLOSE, _CHANGE_MIN)
    assert not verdict.updates, verdict.reason


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("Sunday is family dinner at my mum's.", "Family dinner is on Saturdays now."),
        ("Wednesday is swimming club for the twins.", "Swimming club for the twins is on Thursdays now."),
    ],
)
def test_a_day_said_first_is_the_value_it_names(old: str, new: str) -> None:
    assert any(v.kind == "day" for c in updates.analyse(old).clauses for v in c.values)
    verdict = updates.judge(old, new)
    assert verdict.updates, verdict.reason


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("Thursday is my day off.", "Friday is bin day."),
        ("Tuesday is quiz night at the Swan.", "Quiz night at the Red Lion is on Wednesdays."),
        ("Monday is gym day.", "I'm doing yoga on Mondays now as well."),
    ],
)
def test_another_thing_on_another_day_stays(old: str, new: str) -> None:
    verdict = updates.unaligned_update(updates.judge(old, new), _CLOSE, _CHANGE_MIN)
    assert not verdict.updates, verdict.reason


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("We're planning to paint the kitchen yellow.", "We changed our mind, we're painting the kitchen sage green."),
        ("Oğlum doğum gününde PlayStation istiyor.", "Oğlum fikrini değiştirdi, artık bisiklet istiyor."),
    ],
)
def test_a_change_of_mind_is_left_to_the_embedder(old: str, new: str) -> None:
    verdict = updates.judge(old, new)
    assert verdict.unaligned and not verdict.updates, verdict.reason
    assert updates.unaligned_update(verdict, _CLOSE, _CHANGE_MIN).updates


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("I want to visit Japan next year.", "My wife changed her mind about the kitchen, she wants blue tiles now."),
        ("My sister wants to study medicine.", "My brother changed his mind, he wants to study history."),
        ("We want a dog.", "I changed my mind about the sofa, but we still want a dog and a cat."),
    ],
)
def test_a_change_of_mind_of_someone_else_or_beside_stays(old: str, new: str) -> None:
    verdict = updates.unaligned_update(updates.judge(old, new), _CLOSE, _CHANGE_MIN)
    assert not verdict.updates, verdict.reason


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("I sing tenor in the parish choir.", "The director moved me to baritone, so I sing baritone now."),
        ("Mia sings jazz at the Blue Lantern.", "Mia sings soul these days, at the same bar."),
    ],
)
def test_what_someone_sings_is_a_value(old: str, new: str) -> None:
    # the part or the style someone sings is the object of "sing", as an instrument is of "play"
    assert updates.judge(old, new).likely


def test_singing_somewhere_else_is_no_change() -> None:
    assert not updates.judge("I sing in the church choir.", "I sing in the shower every morning.").likely
