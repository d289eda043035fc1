"""A plan that names a season, month or year holds until that period is over (foresight)."""

from __future__ import annotations

from datetime import UTC, date, datetime

import pytest

from reverie.config import Settings
from reverie.write.formation import foresight
from reverie.write.horizon import plan_horizon

APRIL = date(2024, 4, 10)


@pytest.mark.parametrize(
    ("text", "end"),
    [
        ("We're going to Italy this summer", date(2024, 8, 31)),
        ("I'll renew my passport before next summer", date(2024, 8, 31)),  # the coming one, not 2025's
        ("I will visit them next winter", date(2025, 2, 28)),
        ("The hallway will be green this fall", date(2024, 11, 30)),
        ("We will move in March", date(2025, 3, 31)),  # March has passed: next year's
        ("in May we'll see", date(2024, 5, 31)),
        ("I plan to finish the thesis by the end of the year", date(2024, 12, 31)),
        ("Gelecek yazdan önce pasaportumu yenilemem lazım", date(2024, 8, 31)),
        ("Yazın İtalya'ya gideceğiz", date(2024, 8, 31)),
        ("Mart'ta taşınacağız", date(2025, 3, 31)),
        ("Seneye Berlin'e taşınacağım", date(2025, 12, 31)),
        ("Yıl sonuna kadar tezi bitireceğim", date(2024, 12, 31)),
        ("Bu kış kayak yapacağız", date(2025, 2, 28)),
    ],
)
def test_the_period_a_plan_names_ends_on_its_last_day(text: str, end: date) -> None:
    assert plan_horizon(text, APRIL) == end


@pytest.mark.parametrize(
    "text",
    # "next month" is a date already (the temporal normalisation reads it); "May" alone is a verb
    ["I will call you", "I'm going to paint the hallway", "I may go", "Yarın ararım", "next month I'll start yoga"],
)
def test_a_plan_without_a_period_has_no_horizon(text: str) -> None:
    assert plan_horizon(text, APRIL) is None


def test_winter_spans_the_turn_of_the_year() -> None:
    assert plan_horizon("We go skiing this winter", date(2024, 1, 10)) == date(2024, 2, 29)
    assert plan_horizon("next winter", date(2024, 1, 10)) == date(2025, 2, 28)
    assert plan_horizon("this winter", date(2024, 12, 10)) == date(2025, 2, 28)


def test_a_summer_plan_is_not_an_expired_plan_a_week_later() -> None:
    cfg = Settings.load().write.formation
    now = datetime(2024, 4, 10, 12, tzinfo=UTC)
    summer = foresight("We're going to Italy this summer", now, cfg)
    assert summer == datetime(2024, 9, 1, 12, tzinfo=UTC)  # the day after the summer's last day
    week = foresight("I will call you", now, cfg)
    assert week is not None and (week - now).days == round(cfg.foresight_days)
