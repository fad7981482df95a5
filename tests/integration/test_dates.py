"""Time words read right (#18): a frequency is not a date; a statement without a time
expression is dated when it was said (the writer keeps the input's own time on None)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from support.replies import extraction, item

from dcpm_cli.dates import resolve_when
from dcpm_cli.llm import ScriptedLLM
from dcpm_cli.models import RawInput
from dcpm_cli.read.named_days import day_said, months_planned, weekends_said
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


THURSDAY = datetime(2026, 7, 16, 20, tzinfo=UTC)


@pytest.mark.parametrize(
    ("sentence", "day"),
    [
        ("Home. The operation was on Tuesday and went well", "2026-07-14"),
        ("The Cycle Tour is this Sunday, nervous already", "2026-07-19"),
        ("We're going to Leeds on Saturday", "2026-07-18"),
        ("Finally did the parkrun last Saturday", "2026-07-11"),
        ("The party last night went on till two", "2026-07-15"),
        ("Dentist tomorrow, dreading it", "2026-07-17"),
        # what is felt after a day tells of that day; the day before it is no day read
        ("Back is stiff after yesterday, I spent the whole day laying a patio", "2026-07-15"),
        ("Wrecked after last night, we danced till three", "2026-07-15"),
        ("We were at Mam's the day before yesterday", None),
        ("I'm free after tomorrow", None),
        ("After yesterday's row we made up this morning", "2026-07-16"),  # what came after it
        ("The day after yesterday's storm the garden was a mess", None),
        ("Two days after yesterday's appointment the results came in", None),
        ("Letter came: knee injection booked for Thursday 6th August", "2026-08-06"),
        ("The scan this morning was quick", "2026-07-16"),
        ("Rosie's party is Saturday Aug 8 at the park", "2026-08-08"),
        ("A cancellation: they can do my hip on Tuesday 14 July", "2026-07-14"),
        ("Last Thursday was hard", "2026-07-09"),
        # a date with no weekday, in the year nearest the day said; a weekday written short
        ("The op is on 24 July, nervous already", "2026-07-24"),
        ("Hip op booked for the 3rd of August", "2026-08-03"),
        ("Rosie's party is Aug 8th at the park", "2026-08-08"),
        ("The op was on July 3rd, the follow-up is next", "2026-07-03"),
        ("We're in Bristol 22–28 July", "2026-07-22"),  # a span: its first day
        ("The half is on 6 Dec", "2026-12-06"),  # far off: the side its tense tells
        ("Told Cam I'm moving out October 1", "2026-10-01"),
        ("I was training for a half on 6 Dec", None),  # far off, past tense: which 6 Dec?
        ("I'm glad the exam on 10 March is over", None),  # gone by, though "is": not next March
        ("Op moved from 24 July to 31 July", "2026-07-31"),  # the day moved from is no day
        # a bound, a habit, a count or a price is not the day
        ("Send the op consent form back by 24 July", None),
        ("Every year on 24 July we go to the lake", None),
        ("Called Jan 3 times about the op", None),
        ("The £24 July special at the garden centre", None),
        ("I'm back from the op on Monday", None),  # "I'm" is not "to come": which Monday?
        ("Thu came round after the op", None),  # a name, not a Thursday
        ("I was on Sat Nav duty all the way", None),
        ("Book club met 2 January 2026 and it was dire", "2026-01-02"),
        ("Op was Tues, home now", "2026-07-14"),
        ("Knee op on Wed went fine", "2026-07-15"),
        # the past of what people do on a day, not only of what happened to them
        ("Also I made €140 on Saturday with a stall at the market", "2026-07-11"),
        ("Worked a double at the pizza place on Sunday", "2026-07-12"),
        ("Came round for Sunday lunch at Mum's", "2026-07-12"),  # a stay "for" a day is that day
        ("I get paid on Friday", None),  # a present, not a past
        ("Kids need packed lunches on Friday", None),
        ("Worked out we need to leave by 7 on Saturday", None),
        ("Helped my cousin move flat on Saturday, third floor", "2026-07-11"),
        ("Made a booking for Saturday at the Thai place", None),  # what it is for: which Saturday?
        # any regular past the user tells of doing, not a wish, a plan, "need"
        ("On Saturday I hauled the lot to the auction house", "2026-07-11"),
        ("Saturday we repainted the shed", "2026-07-11"),
        ("I wanted to go to the lake on Saturday", None),
        ("On Saturday I need to haul the lot", None),
        ("Bought a dress for Saturday's wedding", None),
        ("We sat in the sun on the deck all day", None),  # "sat", "sun": words, not days
        ("We may 3D-print the part", None),
        ("Op pencilled in for 31 June", None),  # no such day
        # of several days, the nearest the event's words ("op"; here none given: not today)
        ("Home today, knee op was Tuesday", "2026-07-14"),
        ("Op was moved to Friday", "2026-07-17"),  # rescheduled: the new day is to come
        ("Surgery was moved from Monday to Friday", "2026-07-17"),
        ("Op wasn't Monday, it was Tuesday", "2026-07-14"),  # a day denied is not the day
        ("Next Monday is the op", "2026-07-20"),
        # a day it cannot place: no tense to tell the side, a habit, a thing, a day that is none
        ("Lovely lunch, they came for Thursday dinner", None),  # that Thursday, or the last?
        ("Next Friday is the op", None),  # said on the Thursday: tomorrow, or the week after?
        ("Physio is every other Tuesday", None),
        ("Good Friday walk was lovely", None),  # a named day: the calendar's
        ("Off work from Monday, feeling odd", None),
        ("Monday mornings are for physio", None),
        ("Thought the op was Tuesday but it's Friday", "2026-07-17"),
        ("Tuesday, the op, Mr Gillespie", None),
        ("Sundays are for the allotment", None),
        ("Sourdough is a weekly thing now, every Saturday morning", None),
        ("The Saturday brunch crowd was savage", None),
        ("Saw it in Sunday's paper", None),
        ("Booked for Thursday 24th", None),  # no Thursday the 24th within six weeks
        ("Nothing happened", None),
    ],
)
def test_the_day_a_sentence_says_its_event_happens_on(sentence: str, day: str | None) -> None:
    """Counted from a Thursday (July 16th, 2026): "was on Tuesday" is two days before, "is this
    Sunday" three after; where neither side can be told, no day."""
    got = day_said(sentence, THURSDAY)
    assert (got.isoformat() if got else None) == day


def test_a_day_said_is_the_users_day() -> None:
    """Said at 20:00 UTC on Thursday is Friday morning in Sydney: "yesterday" is its Thursday."""
    from zoneinfo import ZoneInfo

    got = day_said("The storm yesterday took the fence down", THURSDAY, ZoneInfo("Australia/Sydney"))
    assert got is not None and got.isoformat() == "2026-07-16"


@pytest.mark.parametrize(
    ("sentence", "said", "saturday"),
    [
        ("The weekend just gone I had a table at the flea market", "2025-03-10", "2025-03-08"),
        ("This weekend just gone I did stair repeats", "2025-03-12", "2025-03-08"),
        ("I re-waxed my jacket this past weekend", "2025-03-14", "2025-03-08"),
        ("We went to my in-laws at the weekend", "2025-03-11", "2025-03-08"),
        ("the hen do is this weekend", "2025-03-12", "2025-03-15"),
        ("next weekend we fly to Porto", "2025-03-12", "2025-03-22"),
        ("I'll have a crack at it on the weekend", "2025-03-12", "2025-03-15"),
        ("This weekend was my son's soccer tournament", "2025-03-10", "2025-03-08"),  # gone by
        ("I spent the weekend at the zine fair in Wellington", "2025-03-10", "2025-03-08"),
        ("The weekend is going to be wet", "2025-03-12", "2025-03-15"),
        ("The weekend of the 22nd was the wedding", "2025-03-26", None),
        ("Over the weekend, I went to two parties", "2025-06-09", "2025-06-07"),
        ("Last weekend we had a bbq at mum's", "2025-06-15", "2025-06-07"),  # said on a Sunday
        ("I'll do it at the weekend", "2025-06-15", "2025-06-21"),  # said on a Sunday: the next
        ("Can't make this weekend so we moved the bbq to next weekend", "2025-06-11", "2025-06-21"),
        ("We had to cancel this weekend's trip because of the strikes", "2025-06-12", "2025-06-14"),
        # a past word beside what is not done then, a habit, another year, a last of a kind
        ("I've got the kids at the weekend so no gym", "2025-06-10", None),
        ("Jen said she was coming at the weekend", "2025-06-11", None),
        ("She asked if I was free at the weekend", "2025-06-11", None),
        ("At the weekend we always went swimming when we were kids", "2025-06-16", None),
        ("Back in 2019 we spent the weekend in Paris", "2025-06-16", None),
        ("We're off to Glastonbury on the last weekend in June", "2025-06-04", None),
        ("last weekend but one we were in Brighton", "2025-06-19", None),
        ("I'm working the weekend shift for the rest of the month", "2025-06-10", None),
        ("I'll have the report done by the weekend", "2025-06-10", None),
        ("I'll sort it after the weekend", "2025-06-10", None),  # a bound
        ("I'd finished it before last weekend", "2025-06-10", None),
        # the day after a weekend gone by: what is told comes from it
        ("Stiff today after the weekend just gone, I walked the coast path", "2025-03-17", "2025-03-15"),
        ("Back in Krakow after last weekend in Prague with two friends", "2025-03-18", "2025-03-15"),
        ("The Monday after last weekend was a bank holiday", "2025-03-26", None),  # counted from it
        ("The week after last weekend I'm away", "2025-03-18", None),
        ("This weekend was lovely, slept in both days", "2025-03-09", "2025-03-08"),  # said on it
        ("Worked two doubles at the pizza place this weekend", "2025-03-24", "2025-03-22"),
        ("Painted my sister's flat over the weekend", "2025-03-11", "2025-03-08"),
        ("Over the weekend I added zucchini and okra", "2025-03-11", "2025-03-08"),  # any past of doing
        ("Bought a new dress for the weekend", "2025-03-11", None),  # what it is for
        ("We went to Wales for the weekend", "2025-03-11", "2025-03-08"),  # a stay: that weekend
        ("My sister came up from Manchester for the weekend", "2025-03-11", "2025-03-08"),
        ("The next weekend I spent $80 on trainers", "2025-03-12", None),  # counted from another
        # said on a weekend, one gone by: this one or the last? A tense that says neither side,
        # a weekend denied, one counted from another: none
        ("The weekend just gone I had a table at the flea market", "2025-03-16", None),
        ("It wasn't last weekend, the market", "2025-03-11", None),
        ("The weekend before I was ill", "2025-03-11", None),
        ("Weekends are for the allotment", "2025-03-11", None),
    ],
)
def test_the_weekend_a_sentence_names(sentence: str, said: str, saturday: str | None) -> None:
    """A weekend gone by ("the weekend just gone", "this past weekend", "at the weekend" in the
    past tense) is the one before the day said; "this weekend", "next weekend" and "on the
    weekend" to come are the coming one or next week's."""
    got = weekends_said(sentence, datetime.fromisoformat(said + "T19:00").replace(tzinfo=UTC))
    assert (got[0].isoformat() if got else None) == saturday


@pytest.mark.parametrize(
    ("sentence", "said", "month"),
    [
        ("Booked flights for our trip to Seville in March", "2026-11-20", "2027-03"),  # the coming
        ("I'll start the new job in early January", "2026-11-20", "2027-01"),
        ("We're moving next June", "2026-06-10", "2027-06"),  # said in June: a year on
        ("I'm running the Paris marathon in April", "2026-04-02", "2026-04"),  # its own month
        ("we're going to Japan in March next year", "2026-01-15", "2027-03"),
        ("My sister is getting married in June and I'm a bridesmaid", "2026-11-20", "2027-06"),
        # gone by, a side the words do not tell, a bound, a year said, a verb, one of two
        ("We went to Seville in March", "2026-11-20", None),
        ("Seville in March!", "2026-11-20", None),
        ("We'll paint the hall by March", "2026-11-20", None),
        ("The exam is in March 2027", "2026-11-20", None),
        ("We're going in March of 2028", "2026-11-20", None),
        ("This may take a while, I'll see", "2026-11-20", None),
        ("We're going in March or April", "2026-11-20", None),
        # no plan of the user's: asked, another's or no one's, denied, called off, in doubt, a
        # habit, told of as gone by
        ("Is Seville too hot in August?", "2026-11-20", None),
        ("Tulips are at their best in April", "2026-11-20", None),
        ("Not in March, we're going in April", "2026-01-20", None),
        ("We're not going to Rome in March after all", "2026-11-20", None),
        ("Our trip in March is cancelled", "2026-11-20", None),
        ("I'm not sure if we're going in March", "2026-11-20", None),
        ("Tax returns are due in January every year", "2026-11-20", None),
        ("I'm recovering from the marathon in October", "2026-11-20", None),
        ("I'll never forget our trip to Rome in March", "2026-11-20", None),
    ],
)
def test_the_month_to_come_a_sentence_names_alone(sentence: str, said: str, month: str | None) -> None:
    """A month named alone as the time of what is to come is the coming one (said in it, with
    "next", the one a year on); one gone by or whose side the words do not tell is none."""
    got = months_planned(sentence, datetime.fromisoformat(said + "T12:00").replace(tzinfo=UTC))
    assert (f"{got[0][0]:%Y-%m}" if got else None) == month
    assert all(end.day == 1 and (end.year, end.month) > (start.year, start.month) for start, end in got)


def test_every_weekend_a_sentence_names_the_one_moved_to_first() -> None:
    """ "Rain all weekend, so I moved the bbq to next weekend", said on a Friday: next week's
    Saturday (the plan now), then the coming one's (what was planned and is no more)."""
    said = datetime(2026, 2, 27, 12, tzinfo=UTC)
    got = weekends_said("The forecast is heavy rain all weekend, so I moved the bbq to next weekend", said)
    assert [d.isoformat() for d in got] == ["2026-03-07", "2026-02-28"]


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
