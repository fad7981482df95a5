"""A `replaces` needs a change said in words (write/change.py): what passes and what does not."""

from __future__ import annotations

import pytest

from dcpm_cli.write.change import no_change, sentence_naming


@pytest.mark.parametrize(
    "later",
    [
        "Moved my current account to Monzo last week",
        "I'm vegan now",
        "These days I'd rather train alone",
        "Has cut caffeine out completely",  # a phrasal verb around its object
        "Gave it all up after the wedding",
        "Used to play rugby",
        "Went back to full time in September",
        "Our son Ezra was born on Tuesday",
        "No longer on the night shift",
        "my new job is at the library",
        "i quit smoking lol",
    ],
)
def test_a_change_in_words_may_replace(later: str) -> None:
    assert no_change(later) == ""


@pytest.mark.parametrize(
    ("later", "why"),
    [
        ("Teetotal, never touch the stuff", "says no change"),
        ("Coriander tastes like soap to me, can't stand it", "says no change"),
        ("Never learned to drive, no licence", "says no change"),  # a change verb after "never"
        ("Should really switch banks, the fees are a joke", "a plan"),
        ("Thinking about moving to Leeds", "a plan"),
        ("I'd like to give up sugar", "a plan"),
        ("Is it worth switching to Linux?", "a question"),
    ],
)
def test_a_stance_said_again_a_plan_or_a_question_may_not(later: str, why: str) -> None:
    assert why in no_change(later)


def test_the_input_a_statement_came_from_may_say_the_change() -> None:
    # The extracted item reads as a plain state; the user's words say it changed.
    assert no_change("Lives in Leeds") != ""
    assert no_change("Lives in Leeds", "We finally moved to Leeds at the weekend!") == ""
    # A plan in the item itself is not a change whatever the input says.
    assert "a plan" in no_change("Is thinking about moving to Leeds", "We moved house in 2019.")


def test_the_sentence_naming_what_ended_is_the_one_read() -> None:
    text = "Sold the bike at last. Might sell the car too?\nAnyway, the car is fine for now."
    assert sentence_naming("the bike", text) == "Sold the bike at last."
    # The first sentence that holds the most of the phrase's words: here a question.
    assert sentence_naming("sell the car", text) == "Might sell the car too?"
    assert no_change(sentence_naming("the car", text), text).startswith("a plan or a wish")
    assert sentence_naming("the boat", text) == text  # named nowhere: the whole input
