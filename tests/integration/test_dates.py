"""Time words read right (#18): a frequency is not a date; a statement without a time
expression is dated when it was said (the writer keeps the input's own time on None)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from support.replies import extraction, item

from dcpm_cli.dates import resolve_when
from dcpm_cli.llm import ScriptedLLM
from dcpm_cli.models import RawInput
from dcpm_cli.store import Store
from dcpm_cli.write.pipeline import Writer

SAID = datetime(2026, 1, 7, 9, tzinfo=UTC)  # a Wednesday


@pytest.mark.parametrize(
    "words",
    [
        "I'm in the office five days a week, the early train every morning",
        "five days a week",
        "in the office five days a week",
        "twice a month",
        "every other day",
        "three times a week",
        "10 minutes a day",
        "four coffees a day",
        "two days a week",
        "once a fortnight",
        "every two weeks",
        "an hour a day",
        "every morning",
        "daily",
    ],
)
def test_a_frequency_is_not_a_date(words: str) -> None:
    assert resolve_when(words, SAID) is None


@pytest.mark.parametrize(
    ("words", "day"),
    [
        ("since March, twice a week", "2025-03-01"),
        ("two months ago, three times a week", "2025-11-01"),
        ("every day since last Monday", "2026-01-05"),
        ("a week ago", "2025-12-31"),  # a count of a unit before "ago" is a date, not a frequency
        ("3 days ago", "2026-01-04"),
    ],
)
def test_a_date_beside_a_frequency_is_still_read(words: str, day: str) -> None:
    assert resolve_when(words, SAID) == datetime.fromisoformat(day).replace(hour=12, tzinfo=UTC)


def test_a_statement_with_only_a_frequency_is_dated_when_it_was_said(
    writer: Writer, llm: ScriptedLLM, store: Store
) -> None:
    raw = RawInput(text="I'm in the office five days a week, the early train every morning", said_at=SAID)
    llm.enqueue(
        extraction(
            item(
                "Is in the office five days a week",
                topic="work",
                attribute="workplace",
                when="five days a week",
            )
        )
    )

    writer.add([raw])

    (stored,) = store.all_items()
    assert stored.event_at == SAID
