"""A `replaces` needs a change said in words, of the speaker (write/change.py): what passes and
what does not."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from dcpm_cli.llm import ScriptedLLM
from dcpm_cli.prompts.judge import Statement, scripted_reply
from dcpm_cli.write.change import no_change, sentence_naming, someone_else
from dcpm_cli.write.judge import SOMEONE_ELSE, judge


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


@pytest.mark.parametrize(
    ("earlier", "later"),
    [
        ("I go to bed around 11.", "My partner's started going to bed at 9."),
        ("I do parkrun every Saturday.", "My flatmate Joe has stopped doing parkrun."),
        ("I drive to work.", "So my boss has started cycling in."),
        ("User goes to bed at 11pm.", "User's partner now goes to bed at 9pm."),  # as extraction writes
        ("We rent in Leeds.", "My parents sold their house and moved to Spain."),
        ("I do a lot of exercise.", "My ex has started running."),  # "ex" is no part of "exercise"
        ("I sing a song every day.", "My son has quit the choir."),
    ],
)
def test_another_persons_change_may_not_replace_the_speakers(earlier: str, later: str) -> None:
    assert "about someone else" in someone_else(earlier, later)


@pytest.mark.parametrize(
    ("earlier", "later"),
    [
        ("I live alone.", "My sister moved in with me."),  # the speaker's home changed too
        ("I take 20mg of citalopram.", "My doctor changed my prescription."),
        ("My partner works nights.", "My partner switched to days."),  # both about the partner
        ("My kids walk to school.", "The kid takes the bus now, my son I mean."),
        ("I drive to work.", "Sold the car, I cycle now."),
        ("The boss is in Leeds.", "My boss moved to the York office."),
        ("Joe does parkrun every Saturday.", "My flatmate Joe has stopped doing parkrun."),  # named
        ("My mother lives in Leeds.", "My mum moved to York."),  # another word for her
        ("I drive to work.", "Sold the car, cycling now."),  # a sentence's own verb, no name
        ("I take the 7:40 train.", "Work went fully remote so no commute at all anymore."),
        ("My rent is 850.", "Rent went up to 900 a month."),
        ("Drinks three flat whites a day", "Has quit coffee and drinks green tea"),  # as extracted
        ("Works at Google", "Was promoted to staff engineer"),
        ("Eats meat", "Prefers cooked vegetables now"),
        ("I play in a Sunday league team.", "Marcus quit our team to join a Saturday one."),  # ours
        ("My wife works nights.", "My partner switched to days."),
        ("User's kids go to St Mary's.", "User's children moved to Oakfield school."),
        ("The baby wakes at 3am.", "Our babies sleep through now."),
    ],
)
def test_a_change_the_speaker_shares_or_of_the_same_person_may(earlier: str, later: str) -> None:
    assert someone_else(earlier, later) == ""


def test_the_judge_refuses_a_replaces_about_someone_else_without_asking_again() -> None:
    llm = ScriptedLLM().enqueue(*[scripted_reply("replaces")] * 3)
    mine = Statement("I go to bed around 11.", datetime(2026, 1, 1, tzinfo=UTC))
    theirs = Statement("My partner's started going to bed at 9.", datetime(2026, 2, 1, tzinfo=UTC))

    v = judge(llm, mine, theirs)

    assert (v.relation, v.answer) == ("unrelated", SOMEONE_ELSE) and "someone else" in v.reason
    assert len(llm.calls) == 1
