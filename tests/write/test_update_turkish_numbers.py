"""Turkish numbers said in words with the possessive before their case ending — a day of the month ("ayın
beşinde" on the fifth, "ayın on beşine" to the fifteenth, "dördünde", "yedisinde", "onunda") — and a thing moved
to a number in the dative ("saat üçe aldılar"; a bare number word before the dative still counts, "beş Mayıs'a
aldılar"): read as numbers, so a date of the month moved is an update; and the words that only look like such
numbers ("birine" to someone, "ona" to him, "yüzüne" to one's face) are not."""

from __future__ import annotations

import pytest

from reverie.text import updates
from reverie.text.updates.clauses import analyse


def _numbers(text: str) -> list[str]:
    return [v.norm for c in analyse(text).clauses for v in c.values if v.kind in ("number", "time")]


@pytest.mark.parametrize(
    ("text", "number"),
    [
        ("Kirayı her ayın beşinde ödüyorum.", "#5"),
        ("Ödeme gününü ayın on beşine aldılar.", "#15"),
        ("Maaş ayın dördünde yatıyor.", "#4"),
        ("Aidat ayın yirmisinde çekiliyor.", "#20"),
        ("Kurs ayın onunda başlıyor.", "#10"),
        ("Fatura her ayın altısında geliyor.", "#6"),
    ],
)
def test_a_day_of_the_month_is_a_number(text: str, number: str) -> None:
    assert number in _numbers(text)
    assert not [n for n in _numbers(text) if ":" in n]  # a day, not a clock time


@pytest.mark.parametrize(
    "text",
    ["Birine söyledim ama unuttu.", "Ona her şeyi anlattım.", "Gerçeği yüzüne söyledim.", "Anneme bir hediye aldım."],
)
def test_words_that_only_look_like_numbers(text: str) -> None:
    assert _numbers(text) == []


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("Kirayı her ayın beşinde ödüyorum.", "Ev sahibi ödeme gününü ayın on beşine aldı."),
        ("Maaşım ayın dördünde yatıyor.", "Şirket maaş gününü ayın yedisine çekti."),
        ("Toplantı saat ikide.", "Toplantıyı saat üçe aldılar."),
    ],
)
def test_a_day_or_time_moved_is_an_update(old: str, new: str) -> None:
    assert updates.says_change(new)
    assert updates.judge(old, new).likely


@pytest.mark.parametrize("text", ["Toplantıyı beş Mayıs'a aldılar.", "Dersi birinci haftaya aldık."])
def test_a_bare_number_word_before_the_dative_still_moves(text: str) -> None:
    assert updates.says_change(text)


def test_a_gift_bought_for_someone_moves_nothing() -> None:
    assert not updates.says_change("Ona bir kitap aldım.")
