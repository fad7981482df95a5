"""Named days (read/named_days.py): the cheap word test in front of the patterns lets every
name through, and the days of the countries' calendars are right for years around now."""

from __future__ import annotations

from datetime import date

import pytest

from dcpm_cli.read import named_days

NAMES = [
    "New Year's Eve", "New Year's Day", "New Year", "Christmas Eve", "Xmas Eve", "X-mas",
    "Christmas Day", "Christmastime", "Boxing Day", "Valentine's Day", "St. Patrick's Day",
    "Saint Patrick's", "Halloween", "Hallowe'en", "Good Friday", "Easter Sunday", "Easter Monday",
    "Shrove Tuesday", "Pancake Day", "Mardi Gras", "Mother's Day", "Mothering Sunday",
    "Father's Day", "Thanksgiving", "Black Friday", "Memorial Day", "Labor Day", "Labour Day",
    "Canada Day", "Victoria Day", "Independence Day", "the Fourth of July", "4th of July",
    "Bonfire Night", "Guy Fawkes", "Remembrance Day", "Veterans Day", "Anzac Day", "Australia Day",
    "Waitangi Day", "Bastille Day", "Juneteenth", "Burns Night",
]  # fmt: skip


@pytest.mark.parametrize("name", NAMES)
def test_every_name_passes_the_word_test_and_is_read(name):
    question = f"What did I do on {name}?"
    assert named_days._MENTIONS.search(question)
    assert next(named_days.as_time(question), None) is not None, name


def test_the_long_weekends_pass_the_word_test():
    for question in ("What did we do over the bank holiday?", "How was the long weekend?"):
        assert named_days._MENTIONS.search(question)
        assert next(named_days.as_time(question, named_days.LONG_WEEKEND), None) is not None


def test_a_question_naming_no_day_compiles_nothing():
    # Gated as HOLIDAY and LONG_WEEKEND are: the gate, not each caller, keeps them shut.
    assert named_days.HOLIDAY.gate is named_days.LONG_WEEKEND.gate is named_days._MENTIONS
    lazy = named_days._Lazy(r"x", gate=named_days._MENTIONS)
    assert not named_days._MENTIONS.search("What did I eat with my sister last Tuesday?")
    assert list(named_days.as_time("What did I eat with my sister last Tuesday?", lazy)) == []
    assert lazy.fullmatch("What did I eat with my sister last Tuesday?") is None
    assert lazy._compiled is None


@pytest.mark.parametrize(
    ("year", "where", "first", "last"),
    [
        (2026, "GB", date(2026, 8, 29), date(2026, 8, 31)),  # the summer bank holiday weekend
        (2027, "GB", date(2027, 12, 25), date(2027, 12, 28)),  # a Saturday's and Sunday's moved on
        (2028, "GB", date(2028, 1, 1), date(2028, 1, 3)),
        (2027, "US", date(2027, 12, 24), date(2027, 12, 26)),  # a Saturday's on the Friday
        (2026, "US", date(2026, 7, 3), date(2026, 7, 5)),
        (2026, "CA", date(2026, 5, 16), date(2026, 5, 18)),  # Victoria Day
        (2026, "IE", date(2026, 4, 4), date(2026, 4, 6)),  # Easter, no Good Friday
    ],
)
def test_a_countrys_long_weekends(year, where, first, last):
    assert (first, last) in [(a, b) for a, b, _ in named_days.long_weekends(year, where)]
