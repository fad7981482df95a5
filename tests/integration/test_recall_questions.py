"""Recall for the questions people really ask (#20): when, several events, changes of mind.
The rules read the question (no LLM); the searches run on the real store and embedder."""

from __future__ import annotations

import json
import sys
from datetime import UTC, date, datetime
from zoneinfo import ZoneInfo

import jsonschema
import pytest
from support.paths import README, TEST_DATA

from dcpm_cli import views
from dcpm_cli.models import MemoryItem, RawInput
from dcpm_cli.read.question import EARLIEST, NEWEST, cues_of, order_of, read_question, window_of
from dcpm_cli.read.recall import MIN_SIMILARITY, recall


def _at(day: str) -> datetime:
    """A day alone is its noon, as `dcpm add --at 2026-03-09` stores it; or a day and a time."""
    at = datetime.fromisoformat(day)
    return (at if len(day) > 10 else at.replace(hour=12)).replace(tzinfo=UTC)


def _said(writer, *inputs: tuple[str, str, str]) -> dict[str, str]:
    """(day, session, text) inputs stored raw, as `dcpm add --no-extract`; text → id."""
    raws = [RawInput(text=text, session=session, said_at=_at(day)) for day, session, text in inputs]
    writer.add(raws, extract=False)
    return {r.text: r.id for r in raws}


def _noted(cli, *notes: tuple[str, str]) -> None:
    """(day, text) notes added one by one as `dcpm add --no-extract --at DAY TEXT` (no session)."""
    for day, text in notes:
        assert cli("add", "--no-extract", "--at", day, text).exit_code == 0


def _chatted(cli, chat: list[tuple[str, str, str, str]]) -> None:
    """(month-day time, session, role, text) turns piped to `dcpm add --no-extract -` as JSON lines."""
    lines = [{"timestamp": f"2026-{t}:00Z", "session": s, "role": r, "content": c} for t, s, r, c in chat]
    assert cli("add", "--no-extract", "-", input="".join(json.dumps(x) + "\n" for x in lines)).exit_code == 0


# -- reading the question (no store) -------------------------------------------------------

MONDAY = _at("2026-03-09")


@pytest.mark.parametrize(
    ("question", "start", "end"),
    [
        ("What did I do last Friday?", "2026-03-06", "2026-03-07"),
        ("Which bike did I service the past weekend?", "2026-03-07", "2026-03-09"),
        ("What did I mention four weeks ago?", "2026-02-05", "2026-02-13"),  # ± 15%
        ("What did I cook in February?", "2026-02-01", "2026-03-01"),
        ("How many films did I watch in the last 3 months?", "2025-12-09", "2026-03-09"),
        # No count: the one unit before the question (dateparser reads none of these).
        ("How many art events did I attend in the past month?", "2026-02-07", "2026-03-09"),
        ("What did I bake over the previous week?", "2026-03-02", "2026-03-09"),
        ("Which platform gained me followers the last year?", "2025-03-09", "2026-03-09"),
        # Without "the", "last month" is the calendar month before.
        ("What did I cook last month?", "2026-02-01", "2026-03-01"),
        ("What did I do last night?", "2026-03-08", "2026-03-09"),  # yesterday noon to 6 am
        ("What did I do the day before yesterday?", "2026-03-07", "2026-03-08"),
        ("What did I do a fortnight ago?", "2026-02-20", "2026-02-27"),  # as "two weeks ago"
        ("What did I do at the weekend?", "2026-03-07", "2026-03-09"),
        ("Anything fun over the weekend?", "2026-03-07", "2026-03-09"),
        # asked as yes or no, asked how it was, "just gone"
        ("Did I do anything at the weekend?", "2026-03-07", "2026-03-09"),
        ("did I go out at the weekend or stay in?", "2026-03-07", "2026-03-09"),
        ("How was my weekend?", "2026-03-07", "2026-03-09"),
        ("What did I do the weekend just gone?", "2026-03-07", "2026-03-09"),
        ("What did I do the weekend before last?", "2026-02-28", "2026-03-02"),
        ("What did I do the week before last?", "2026-02-23", "2026-03-02"),
        # "The weekend of" a day: the weekend nearest it, not the latest one (the 7th was a
        # Saturday, 22 February a Sunday, the 4th a Wednesday: the Saturday after it)
        ("What did I do on the weekend of the 7th?", "2026-03-07", "2026-03-09"),
        ("Where did we go over the weekend of 22 February?", "2026-02-21", "2026-02-23"),
        ("What did I do the weekend of the 4th?", "2026-03-07", "2026-03-09"),
        ("What did I do the weekend of climbing in May?", "2025-05-01", "2025-06-01"),  # no day
        # Weekends and weekdays counted back from the last one gone by; a rough count, the one
        # before and after too.
        ("What did I get up to two weekends ago?", "2026-02-28", "2026-03-02"),
        ("What did I do three Saturdays ago?", "2026-02-21", "2026-02-22"),
        ("What did we do a couple of weekends ago?", "2026-02-21", "2026-03-09"),
        ("What did we do a couple weekends ago?", "2026-02-21", "2026-03-09"),
        ("What did I do a couple days ago?", "2026-03-06", "2026-03-08"),
        ("What did I do on 3 October?", "2025-10-03", "2025-10-04"),  # the day first, as in Britain
        ("What did I eat on Friday?", "2026-03-06", "2026-03-07"),
        # Asked on a Monday: "this Friday" is the one just gone in a question about the past,
        # the coming one in a plan; "this past Monday" is a week ago, "this Monday" today.
        ("What did I do this Friday?", "2026-03-06", "2026-03-07"),
        ("What am I doing this Friday?", "2026-03-13", "2026-03-14"),
        ("Who did I see this past Monday?", "2026-03-02", "2026-03-03"),
        ("What did I eat this Monday?", "2026-03-09", "2026-03-10"),
        ("What did I do this afternoon?", "2026-03-09", "2026-03-09"),  # 12:00 to 18:00
        ("What happened this Friday?", "2026-03-06", "2026-03-07"),
        # A weekday naming a date is that date, not the last such weekday.
        ("What did I do on Friday, February 27th, 2026?", "2026-02-27", "2026-02-28"),
        ("What did I do Friday 27 February?", "2026-02-27", "2026-02-28"),
        ("Where I went yesterday evening?", "2026-03-08", "2026-03-09"),  # 18:00 to midnight
        # A part of a month is a third of it, not all of it; a month may be abbreviated.
        ("What did I do in early February?", "2026-02-01", "2026-02-11"),
        ("What happened mid-January?", "2026-01-11", "2026-01-21"),
        ("What did I buy at the end of Feb?", "2026-02-21", "2026-03-01"),
        ("Who did I see at the start of March?", "2026-03-01", "2026-03-11"),
        ("What did I do in Jan?", "2026-01-01", "2026-02-01"),
        ("What did I eat on Feb 27?", "2026-02-27", "2026-02-28"),
        # A season is its three months: the latest one over, or the one under way; "since" runs
        # until the question; a winter is the one that begins in December.
        ("What did I do last summer?", "2025-06-01", "2025-09-01"),
        ("Where did we ski over the winter?", "2025-12-01", "2026-03-01"),
        ("Where did I travel in the summer of 2024?", "2024-06-01", "2024-09-01"),
        ("What have I cooked since the autumn?", "2025-09-01", "2026-03-09"),
        ("What did I plant this spring?", "2026-03-01", "2026-06-01"),  # under way
        ("What did I read last fall?", "2025-09-01", "2025-12-01"),
        ("What have I read since last summer?", "2025-06-01", "2026-03-09"),
        ("What did I eat on July 4th last summer?", "2025-07-04", "2025-07-05"),  # the date is nearer
        ("Where was last summer's holiday?", "2025-06-01", "2025-09-01"),
        ("Did I work late March 3rd?", "2026-03-03", "2026-03-04"),  # a day, not late March
        # A named day: the latest one begun ("last" the one before it when under way); the days
        # it is said of ("Christmas" Eve to Boxing Day, "Easter" Good Friday to Easter Monday, a
        # Monday's weekend Saturday to it); a year's, or since it.
        ("What did I do on Christmas Eve?", "2025-12-24", "2025-12-25"),
        ("How was Christmas?", "2025-12-24", "2025-12-27"),
        ("What did we do over Easter?", "2025-04-18", "2025-04-22"),  # 2026's is to come
        ("What did I do last Thanksgiving?", "2025-11-27", "2025-11-28"),
        ("What did I get for Valentine's Day?", "2026-02-14", "2026-02-15"),
        ("What did I do for New Year's?", "2025-12-31", "2026-01-02"),
        ("Where did we go for the Memorial Day weekend?", "2025-05-24", "2025-05-27"),
        ("What did I buy on Black Friday?", "2025-11-28", "2025-11-29"),
        ("What did I do on the Fourth of July?", "2025-07-04", "2025-07-05"),  # not all July
        ("What did I cook for Christmas 2024?", "2024-12-24", "2024-12-27"),
        ("What did I do on Christmas Day last year?", "2025-12-25", "2025-12-26"),
        ("What have I cooked since Christmas?", "2025-12-25", "2026-03-09"),  # from its day
        ("What have I read since New Year?", "2026-01-01", "2026-03-09"),
        ("Who hosted this past Thanksgiving?", "2025-11-27", "2025-11-28"),
        ("Where were we the Christmas before last?", "2024-12-24", "2024-12-27"),
        ("What did I do over Xmas Eve?", "2025-12-24", "2025-12-25"),
        ("What did we do over the Thanksgiving break?", "2025-11-27", "2025-12-01"),
        ("What did I do over the Christmas holidays?", "2025-12-24", "2026-01-02"),
        ("What did we have for Thanksgiving dinner?", "2025-11-27", "2025-11-28"),
        ("What did I do on the 23rd of December, before Christmas?", "2025-12-23", "2025-12-24"),
        # A year; "since" a month, a week or a year runs until the question; "this weekend" in a
        # question about the past, asked on a Monday, is the one just gone, in a plan the coming one.
        ("What did I do in 2025?", "2025-01-01", "2026-01-01"),
        ("What happened during 2024?", "2024-01-01", "2025-01-01"),
        ("How many runs have I logged since 2025?", "2025-01-01", "2026-03-09"),
        ("What have I read since January?", "2026-01-01", "2026-03-09"),
        ("What have I done since last week?", "2026-03-02", "2026-03-09"),
        ("What did I do this weekend?", "2026-03-07", "2026-03-09"),
        ("I was thinking of repainting the hall this weekend. Any tips?", "2026-03-14", "2026-03-16"),
        ("Did I book a table for this weekend?", "2026-03-14", "2026-03-16"),
        ("I was thinking of going to the market this Friday. Is it open?", "2026-03-13", "2026-03-14"),
        ("I was working this Friday, did I log my hours?", "2026-03-06", "2026-03-07"),
        ("What was going on this weekend?", "2026-03-07", "2026-03-09"),  # not a plan
        # Several years joined are one time; a since-phrase with "the" or a part of a month too.
        ("Did I run the marathon in 2024 or 2025?", "2024-01-01", "2026-01-01"),
        ("How much did I spend on rent in 2024 compared with in 2025?", "2024-01-01", "2026-01-01"),
        ("What have I read since the 3rd of March?", "2026-03-03", "2026-03-09"),
        ("What have I cooked since early February?", "2026-02-01", "2026-03-09"),
        ("What have I read since May?", "2025-05-01", "2026-03-09"),
        ("How much have I spent since Jan?", "2026-01-01", "2026-03-09"),
        ("What have I eaten since Wednesday?", "2026-03-04", "2026-03-09"),
        ("What did I do since last weekend?", "2026-03-07", "2026-03-09"),
        # A year said apart names which named day, month or date.
        ("In 2024, what did we do for Christmas?", "2024-12-24", "2024-12-27"),
        ("What did I do in March in 2024?", "2024-03-01", "2024-04-01"),
        ("In 2024, what did I do on 3 March?", "2024-03-03", "2024-03-04"),
        # A day of the month alone: the latest gone by (today's too), this month's or the last
        # month that has it; since it, until now; in a plan, the coming one.
        ("What did I do on the 3rd?", "2026-03-03", "2026-03-04"),
        ("what happened on the 9th", "2026-03-09", "2026-03-10"),
        ("What happened on the 13th?", "2026-02-13", "2026-02-14"),
        ("What did I eat on the 31st?", "2026-01-31", "2026-02-01"),  # February has none
        ("On the 22nd, where did we go?", "2026-02-22", "2026-02-23"),
        ("What have I read since the 2nd?", "2026-03-02", "2026-03-09"),
        ("What am I doing on the 20th?", "2026-03-20", "2026-03-21"),
        ("What do I have scheduled on the 25th?", "2026-03-25", "2026-03-26"),
        ("what do I have on the 25th?", "2026-03-25", "2026-03-26"),
        ("Is dinner with Ola still on 20/3?", "2026-03-20", "2026-03-21"),  # a plan that holds
        ("What am I doing on 20 March?", "2026-03-20", "2026-03-21"),  # a plan: the coming one
        ("Is dinner still on March 12th?", "2026-03-12", "2026-03-13"),
        ("What did I do on 20 March?", "2025-03-20", "2025-03-21"),  # gone: the latest gone by
        ("Is the match still on this Saturday?", "2026-03-14", "2026-03-15"),
        ("Was I still on call this weekend?", "2026-03-07", "2026-03-09"),  # gone: a state, no plan
        ("Is Tom still on the team from 13/2?", "2026-02-13", "2026-02-14"),
        ("What have I eaten on the 3rd?", "2026-03-03", "2026-03-04"),
        # Months named alone, all gone by, asked of as a plan are the coming ones (they were the
        # latest gone by), as is a month said "next" (asked in its own month: the one after); not
        # a habit or a state, nor "where'd" (did); "last March" asked in March is a year ago.
        ("What am I doing in May?", "2026-05-01", "2026-06-01"),
        ("What have I got on in May and June?", "2026-05-01", "2026-07-01"),
        ("What am I doing this coming May?", "2026-05-01", "2026-06-01"),
        ("What did I do in May?", "2025-05-01", "2025-06-01"),
        ("What did I book for next May?", "2026-05-01", "2026-06-01"),
        ("What's planned for next March?", "2027-03-01", "2027-04-01"),
        ("What am I doing in March?", "2026-03-01", "2026-04-01"),  # this one, not gone by
        ("What am I doing from February to April?", "2026-02-01", "2026-05-01"),  # not all gone
        ("What do I usually eat in May?", "2025-05-01", "2025-06-01"),
        ("Where'd we go in May?", "2025-05-01", "2025-06-01"),
        ("What's happening in May?", "2026-05-01", "2026-06-01"),  # what is on: to come
        ("What is coming up in February?", "2027-02-01", "2027-03-01"),
        ("What was happening in May?", "2025-05-01", "2025-06-01"),
        ("What did I do last March?", "2025-03-01", "2025-04-01"),
        # A weekday naming a day of its month: the latest such day (in a plan, the coming one),
        # not the last of that weekday (6 March).
        ("What did I do on Friday the 13th?", "2026-02-13", "2026-02-14"),
        ("what did i do on fri 13th", "2026-02-13", "2026-02-14"),
        ("What did I do on Wednesday the 10th?", "2025-12-10", "2025-12-11"),
        ("What am I doing on Friday the 13th?", "2026-03-13", "2026-03-14"),
        ("What did I do between Friday the 6th and Sunday the 8th?", "2026-03-06", "2026-03-09"),
        ("What did I do from the 6th to Sunday the 8th?", "2026-03-06", "2026-03-09"),
        ("Have I got the receipt from the 3rd?", "2026-03-03", "2026-03-04"),  # had, of a day gone
        # Times to come: "tomorrow", "next week" (Monday to Sunday), its weekend, its Friday;
        # a weekday asked of a plan is the coming one (a habit's, "on Saturday mornings", not).
        ("What am I doing tomorrow?", "2026-03-10", "2026-03-11"),
        ("what's on tmrw", "2026-03-10", "2026-03-11"),
        ("What am I doing next week?", "2026-03-16", "2026-03-23"),
        ("Any ideas for dinner next weekend?", "2026-03-21", "2026-03-23"),
        ("What am I doing next Friday?", "2026-03-20", "2026-03-21"),
        ("Where are we going next month?", "2026-04-01", "2026-05-01"),
        ("What am I doing on Saturday?", "2026-03-14", "2026-03-15"),
        ("What's happening on Monday?", "2026-03-09", "2026-03-10"),  # today's
        ("What did I do on Saturday?", "2026-03-07", "2026-03-08"),
        ("What time do I wake up on Saturday mornings?", "2026-03-07", "2026-03-08"),
        ("What have I got on the 13th?", "2026-03-13", "2026-03-14"),  # what is on: to come
        ("Any plans for Saturday?", "2026-03-14", "2026-03-15"),  # a plan's: the coming one
        ("What are my plans for Sunday?", "2026-03-15", "2026-03-16"),
        ("What is my plan for Friday?", "2026-03-13", "2026-03-14"),  # (was no time: not last Friday)
        # "'d" after a question word is "did" ("where'd we go": gone), after a person or before
        # "be" or a liking "would".
        ("Where'd we go this weekend?", "2026-03-07", "2026-03-09"),
        ("What'd mum say this weekend?", "2026-03-07", "2026-03-09"),
        ("Where'd be good for lunch on Saturday?", "2026-03-14", "2026-03-15"),
        ("How'd you like to spend this weekend?", "2026-03-14", "2026-03-16"),
        ("Where’d I leave my keys on Friday?", "2026-03-06", "2026-03-07"),
        ("How'd the meeting go on Friday?", "2026-03-06", "2026-03-07"),
        ("What'd we plan for this weekend?", "2026-03-14", "2026-03-16"),
        ("Where would we go this weekend?", "2026-03-14", "2026-03-16"),
        # The Nth of a month named by where it stands.
        ("What have I read since the 2nd of this month?", "2026-03-02", "2026-03-09"),
        ("What did I do on the 2nd of last month?", "2026-02-02", "2026-02-03"),
        ("What am I doing on the 5th of next month?", "2026-04-05", "2026-04-06"),
        ("What did I do on the 2nd and the 3rd of last month?", "2026-02-02", "2026-02-04"),
        # Two times joined are one span, from the first to the end of the second: a range, or
        # two said together that touch or lie a like gap apart (two far apart: the first).
        ("What did I do on the 2nd and the 3rd?", "2026-03-02", "2026-03-04"),
        ("Where was I on the 5th or the 6th?", "2026-03-05", "2026-03-07"),
        ("What did I do between the 2nd and the 5th?", "2026-03-02", "2026-03-06"),
        ("What did I do from the 27th to the 3rd?", "2026-02-27", "2026-03-04"),
        ("What happened between February 3 and February 6?", "2026-02-03", "2026-02-07"),
        ("What did we do from 3 to 6 February?", "2026-02-03", "2026-02-07"),
        ("What happened on 13 and 14 February?", "2026-02-13", "2026-02-15"),
        ("What happened February 3-6?", "2026-02-03", "2026-02-07"),
        ("What did I do in January and February?", "2026-01-01", "2026-03-01"),
        ("What did I do on February 3, 4 and 5?", "2026-02-03", "2026-02-06"),  # a list of numbers
        ("What did I do in December, January, February?", "2025-12-01", "2026-03-01"),  # no "and"
        # A range whose end is gone by before its start: the start the year before (asked in
        # March: last March to last May, not this March).
        ("Where did we go from March to May?", "2025-03-01", "2025-06-01"),
        ("What am I doing from March to May?", "2026-03-01", "2026-06-01"),  # a plan: this one
        ("What did I do on 3 February and 20 February?", "2026-02-03", "2026-02-04"),
        ("How much did I spend on groceries January through February?", "2026-01-01", "2026-03-01"),
        # A month's name where a person's stands is hers: the time is the other one named.
        ("What did April and I talk about yesterday?", "2026-03-08", "2026-03-09"),
        ("How much was my February rent?", "2026-02-01", "2026-03-01"),  # the month's
        ("What were my plans for February?", "2026-02-01", "2026-03-01"),
        ("How was February?", "2026-02-01", "2026-03-01"),
        # A review of the joins and the numbers: a clock, a dose or a ratio beside another time
        # is no date; a bare number after a day is no second day unless a dash joins them.
        ("What did I do between 5.30 and 6.30 yesterday?", "2026-03-08", "2026-03-09"),
        ("Did I stick to 16/8 last week?", "2026-03-02", "2026-03-09"),
        ("Was I at the pub on the 3rd till 11?", "2026-03-03", "2026-03-04"),
        ("What did I do on the 3rd and 4 days later?", "2026-03-03", "2026-03-04"),
        ("What did I do on the 2nd-4th?", "2026-03-02", "2026-03-05"),
        ("What did I do in January and February 2025?", "2025-01-01", "2025-03-01"),
        ("What did I do in April and May?", "2025-04-01", "2025-06-01"),
        ("What happened from Feb 3 to Feb 6?", "2026-02-03", "2026-02-07"),
        ("What did I do on Thursday and Friday?", "2026-03-05", "2026-03-07"),
        ("What did I do from the 5th to yesterday?", "2026-03-05", "2026-03-09"),
        ("What did I do on 1 and 28 February?", "2026-02-01", "2026-02-02"),  # far apart: the first
        # A second review: a month after "did I do" is the month; a year said once is both's (the
        # first the year before when it comes later in the year); "the" before the second.
        ("What did I do October?", "2025-10-01", "2025-11-01"),
        ("How did February go?", "2026-02-01", "2026-03-01"),
        ("What did I do from December to February 2026?", "2025-12-01", "2026-03-01"),
        ("What did I do from 28 December to 3 January 2026?", "2025-12-28", "2026-01-04"),
        ("What did I do from the 1st of February to the 5th of February?", "2026-02-01", "2026-02-06"),
        ("What did I do from Tuesday to Thursday?", "2026-03-03", "2026-03-06"),
        ("What did I do between 13/10 and 16/10?", "2025-10-13", "2025-10-17"),
        # A list of times that follow on, from the first to the last; of days far apart, the first.
        ("What did I do in May, June and July?", "2025-05-01", "2025-08-01"),
        ("What have I heard from January to February?", "2026-01-01", "2026-03-01"),  # the months
        ("What did I do in October, November or December?", "2025-10-01", "2026-01-01"),
        ("What did I do on the 2nd, the 3rd and the 4th?", "2026-03-02", "2026-03-05"),
        ("What did I do on the 1st, the 4th and the 8th?", "2026-03-01", "2026-03-02"),
        ("What did I do on 3, 4 and 5 March?", "2026-03-03", "2026-03-06"),
        ("What did I do on the 2nd, 3rd and 4th of March?", "2026-03-02", "2026-03-05"),
        # (the last is to come: the first alone, not last month's 2nd to 20th; as of two)
        ("What did I do on the 2nd, the 3rd and the 20th?", "2026-03-02", "2026-03-03"),
        ("What did I do on the 2nd and the 20th?", "2026-02-02", "2026-02-03"),
        # A list whose last is no time is none (a review: these read as two or three days).
        ("In May, June and I went to Paris, right?", "2025-05-01", "2025-06-01"),
        ("On the 3rd, 4th and 5th floors, what did we paint?", "2026-03-03", "2026-03-04"),
        # A date in numbers: the order its numbers tell; with no year the latest gone by.
        ("What did I do on 13/02?", "2026-02-13", "2026-02-14"),
        ("What did I do on 2/13?", "2026-02-13", "2026-02-14"),
        ("What did I do on 3/3?", "2026-03-03", "2026-03-04"),  # the same either way
        ("What did I eat on 13.2.2025?", "2025-02-13", "2025-02-14"),
        ("What did I do on 2025/02/03?", "2025-02-03", "2025-02-04"),
        ("What have I read since 13/02?", "2026-02-13", "2026-03-09"),
    ],
)
def test_time_phrases_read_against_the_question_date(question, start, end):
    window = window_of(question, MONDAY)
    assert window is not None
    assert (f"{window.start:%Y-%m-%d}", f"{window.end:%Y-%m-%d}") == (start, end)
    assert cues_of(question) == [], "a time is not a second event ('the week before last')"


def test_no_time_phrase_no_window_and_no_dateparser():
    # May as a verb, "in the past", "the first time": not dates; and dateparser (0.2 s) stays unloaded.
    before = "dateparser" in sys.modules
    for q in [
        "May I ask what I eat?",
        "What did I do in the past?",
        "What book am I reading?",
        "What do I do at the weekend?",  # a habit, not last weekend
        "What did I plan for Saturday?",  # which Saturday: the plan's, gone or to come?
        "What'd I book for Saturday?",  # (did: as above)
        "Any ideas for Saturday's barbecue?",  # a thing of a Saturday
        "How many days between the Sunday mass and the Easter vigil?",  # a name, not a day
        "What do I do on Mondays?",
        "What did I buy on the 3rd floor?",  # a place in a row, not a day of the month
        "Did I pass on the 2nd try?",
        "Who came 13th in the race?",
        "Did I go to the 'Summer Nights' festival?",  # a name
        "Has my hip hurt since the fall?",  # a tumble
        "What do I do in summer?",  # a habit, not last summer
        "When did I put in the winter tyres?",  # a season's name as a word of a thing
        "What did I put in the spring rolls?",
        "What do we do at Christmas?",  # a habit, not last Christmas
        "Where did I buy the Christmas tree?",  # a named day's name as a word of a thing
        "Who painted the Easter eggs?",
        "Who is my valentine?",
        "What should I get mum for Mother's Day?",  # a plan: what was said before it
        # A named day as a point of reference, a title, a purpose (said weeks before it).
        "Did I quit smoking before or after Christmas?",
        "What did I say about Easter?",
        "Between Christmas and New Year's, what did I do?",
        "Did I watch Independence Day?",
        "Who sang Last Christmas?",
        "Did I book the flights for Christmas?",
        "What did I buy for Mother's Day?",
        "Did I tell you what we're doing for Christmas?",  # a plan, said before the day
        "What were my plans for Christmas?",
        "Did we ever spend Christmas in Spain?",  # none in particular
        "Where did we have our first Christmas together?",
        "What did we do for Chinese New Year?",  # another calendar's
        "When was Orthodox Easter?",
        "Did I add Last Christmas to my playlist?",  # a title
        "What did I do on the last night of the Rome trip?",
        "Did I mention what I do at the weekend?",
        # a plan, a habit, what was said of it, a weekend of another time: not the last weekend
        "Did I tell you what we're doing at the weekend?",
        "Did I mention my sister is visiting at the weekend?",
        "Did I ever go hiking on the weekend?",
        "Did we agree to meet up at the weekend?",
        "How was my weekend before last?",
        "What did Jan say about the flat?",  # a name, not January
        "What is the name of Jan’s dog?",
        "Did I lend Jan 2000 euros?",
        "What did I buy for the kids of Jan?",
        "What did I buy at the beginning of the month?",
        "What did I eat on 3/4?",  # the 3rd of April or the 4th of March: `date_order` says
        "Did I eat 3/4 of the cake?",  # a fraction
        "Did we win 3/1 at home?",  # a score
        "What is on the 31st of next month?",  # April has 30 days
        "Is the helpline on 24/7?",  # an idiom
        "What have I eaten since 3.30?",  # a clock
        "How did I do on 18/6 fasting?",  # a ratio
        "What did I do between 27/02 and 13/02?",  # going back, as a score does
        "When did I last see April?",
        "How much do I owe June?",
        "What did April say about the move?",  # a friend, not the month
        "What did I tell June about the party?",
        "Did I go climbing with August?",
        "What's June's new address?",
        "What did I hear from June about the flat?",  # from a person, not from a month on
        "Did I get a text from April?",
    ]:
        assert window_of(q, MONDAY) is None, q
    assert ("dateparser" in sys.modules) == before


def test_a_range_of_days_of_the_month_is_the_last_both_are_gone_by_in():
    """ "From the 1st till the 5th", asked on the 2nd: February's, not March 1st alone; a clock
    before a named day is no day 0 (a review: it raised)."""
    early = window_of("What did I do from the 1st till the 5th?", _at("2026-03-02"))
    assert early is not None and (f"{early.start:%m-%d}", f"{early.end:%m-%d}") == ("02-01", "02-06")
    clock = window_of("What did I do from 10.00 till the 3rd of March?", MONDAY)
    assert clock is not None and f"{clock.start:%m-%d}" == "03-03"
    assert window_of("Did we lose 0-3 October 12th?", MONDAY) is not None


def test_a_date_in_numbers_its_numbers_cannot_tell_is_read_in_the_users_order():
    day_first = window_of("What did I eat on 3/4?", MONDAY, date_order="dmy")
    month_first = window_of("What did I eat on 3/4?", MONDAY, date_order="mdy")
    assert day_first is not None and f"{day_first.start:%Y-%m-%d}" == "2025-04-03"  # the latest gone by
    assert month_first is not None and f"{month_first.start:%Y-%m-%d}" == "2026-03-04"
    assert window_of("When did my pain go from 7/10 to 3/10?", MONDAY, date_order="dmy") is None  # a score
    assert not read_question("How much was it, 2.99 or 3.49, on Friday?", MONDAY).only_time  # prices
    planned = window_of("What am I doing on 20/3?", MONDAY)
    assert planned is not None and f"{planned.start:%Y-%m-%d}" == "2026-03-20"  # a plan: to come


@pytest.mark.parametrize(
    ("question", "cues"),
    [
        ("Which did I buy first, the kayak or the tent?", ["the kayak", "the tent"]),
        # the two after a colon or a dash as after a comma; a clock's colon is no such mark
        ("Which did I do first: renew my card or book the trip?", ["renew my card", "book the trip"]),
        ("Which came first — the kayak or the tent?", ["the kayak", "the tent"]),
        ("Which came first: the kayak, or the tent?", ["the kayak", "the tent"]),
        ("Which was more recent: the boiler service or the sweep?", ["the boiler service", "the sweep"]),
        ("Which did I buy first: a kayak, a tent or a stove?", []),  # a list
        ("Did I book the table for 7:30 or 8?", []),
        ("So: did we go to Cornwall or Devon last summer?", []),  # a colon not after the question's words
        ("Sorry - what did the doctor say about my knee or my hip?", []),
        ("How many weeks between starting the course and the exam?", ["starting the course", "the exam"]),
        ("How long did I use my binoculars before I saw finches?", ["I use my binoculars", "I saw finches"]),
        ("How many days before Ann's party did I order her gift?", ["Ann's party", "order her gift"]),
        ("Did I listen to more of 'Serial' or 'This American Life'?", ["Serial", "This American Life"]),
        ("What do I eat for breakfast?", []),
        ("How much did I sleep since May 2025?", []),  # a time, not a second event
        ("How many things did I buy, sell, or fix?", []),  # a list, not two events
        # "St." ends no sentence: the question is the whole of it.
        ("How long between the fair and the mass at St. Mary's?", ["the fair", "the mass at St. Mary's"]),
        # A verb said once goes with both things; "before or after" is one word of time.
        ("Did I quit pottery or the gym first?", ["quit pottery", "quit the gym"]),
        ("Did I sign up for pottery or climbing first?", ["sign up for pottery", "sign up for climbing"]),
        ("Did I visit Edinburgh before or after the gig?", ["I visit Edinburgh", "the gig"]),
        ("Did I move in with Sam or get the dog first?", ["move in with Sam", "get the dog"]),  # its own verb
        ("Did I learn to swim or to ride a bike first?", ["learn to swim", "learn to ride a bike"]),
        # A verb's "after" is no time between two things, and an order asked is no thing.
        ("Which of the grandkids did I look after most recently?", []),
        ("Is the pub named after my uncle?", []),
        ("Did I look after Mia before or after the holiday?", ["I look after Mia", "the holiday"]),
        ("Which painkillers did I take after the op?", ["painkillers did I take", "the op"]),
    ],
)  # fmt: skip
def test_questions_naming_several_things_give_one_cue_each(question, cues):
    assert cues_of(question) == cues


@pytest.mark.parametrize(
    ("question", "only_time"),
    [
        ("What did I do last weekend?", True),
        ("what happened yesterday?", True),
        ("What was I up to in February?", True),
        ("Can you remind me what I said on Tuesday?", True),
        ("How was I feeling the past week?", True),
        ("What did I buy at the garden centre last weekend?", False),  # it names a thing
        ("What did I eat yesterday?", False),
        ("What did I do?", False),  # no time at all
    ],
)
def test_a_question_about_a_time_and_nothing_else(question, only_time):
    assert read_question(question, MONDAY).only_time is only_time


@pytest.mark.parametrize(
    ("question", "only_when"),
    [
        ("What did I do two weekends ago?", True),
        ("what happened yesterday?", True),
        ("What was I up to in February?", True),
        ("Can you remind me what I said on Tuesday?", True),
        ("How was I feeling the past week?", False),  # a feeling: its words still count
        ("Where did I go last month?", False),  # a place
        ("What did she do last weekend?", False),  # another person
        ("What did you tell me last weekend?", False),  # what was told, not done
        ("What did we do over Easter?", False),  # a named day: what is said of it names it
        ("What did I do the day after dad's operation?", False),  # counted from an event
        ("What did I buy at the garden centre last weekend?", False),
    ],
)
def test_a_question_asking_only_what_was_done_at_a_time(question, only_when):
    """Only then does what was said nearest the time come next, whatever its words."""
    assert read_question(question, MONDAY).only_when is only_when


@pytest.mark.parametrize(
    ("zone", "question", "day"),
    [
        ("America/New_York", "What did I do last Thanksgiving?", "2025-11-27"),
        ("America/Toronto", "What did I do last Thanksgiving?", "2025-10-11"),  # its weekend
        ("America/New_York", "What did I do on Mother's Day?", "2025-05-11"),
        ("Europe/London", "What did I do on Mother's Day?", "2025-03-30"),  # Mothering Sunday
        ("Europe/London", "What did I do on Father's Day?", "2025-06-15"),
        ("Australia/Sydney", "What did I do on Father's Day?", "2025-09-07"),
        ("Pacific/Auckland", "What did I do on Labour Day?", "2025-10-27"),
    ],
)
def test_a_named_day_is_the_users_countrys(zone, question, day):
    window = window_of(question, MONDAY, ZoneInfo(zone))
    assert window is not None and f"{window.start:%Y-%m-%d}" == day
    assert window.start.tzinfo == ZoneInfo(zone), "its days are the user's"


SEPTEMBER = _at("2026-09-10")


@pytest.mark.parametrize(
    ("zone", "question", "start", "end"),
    [
        # The latest one begun, Saturday to the Monday, the country's own; a month or "early /
        # late" names which; "the May bank holiday" is Britain's first one of May.
        ("Europe/London", "What did we do over the bank holiday?", "2026-08-29", "2026-09-01"),
        ("Europe/London", "What did we do on the May bank holiday?", "2026-05-02", "2026-05-05"),
        ("Europe/London", "What did we do on the late May bank holiday?", "2026-05-23", "2026-05-26"),
        ("Europe/Dublin", "What did I do last long weekend?", "2026-08-01", "2026-08-04"),
        ("America/Halifax", "What did we do on the August long weekend?", "2026-08-01", "2026-08-04"),
        ("America/Halifax", "Did I go anywhere over the May long weekend?", "2026-05-16", "2026-05-19"),
        ("America/New_York", "What did we do over the long weekend?", "2026-09-05", "2026-09-08"),
        ("UTC", "What did I do over the Easter bank holiday?", "2026-04-03", "2026-04-07"),
        # A country it knows no long weekends of: the month is still a month.
        ("UTC", "What did we do on the August long weekend?", "2026-08-01", "2026-09-01"),
    ],
)
def test_a_long_weekend_is_the_countrys_latest(zone, question, start, end):
    window = window_of(question, SEPTEMBER, ZoneInfo(zone))
    assert window is not None
    assert (f"{window.start:%Y-%m-%d}", f"{window.end:%Y-%m-%d}") == (start, end)


@pytest.mark.parametrize(
    ("now", "zone", "question", "start", "end"),
    [
        # Christmas and New Year's are bank holidays too, moved off a weekend.
        (
            "2025-12-29T12",
            "Europe/London",
            "What did we do over the bank holiday?",
            "2025-12-25",
            "2025-12-29",
        ),
        (
            "2026-01-03T12",
            "Europe/London",
            "What did we do over the bank holiday?",
            "2026-01-01",
            "2026-01-02",
        ),
        (
            "2025-12-29T12",
            "Europe/London",
            "What did we do the bank holiday before last?",
            "2025-08-23",
            "2025-08-26",
        ),
        ("2026-04-10T12", "America/New_York", "What did I do last long weekend?", "2026-02-14", "2026-02-17"),
    ],
)
def test_a_bank_holiday_is_the_countrys_latest_at_any_time_of_year(now, zone, question, start, end):
    window = window_of(question, datetime.fromisoformat(now).replace(tzinfo=UTC), ZoneInfo(zone))
    assert window is not None
    assert (f"{window.start:%Y-%m-%d}", f"{window.end:%Y-%m-%d}") == (start, end)


@pytest.mark.parametrize(
    ("question", "day"),
    [
        # A plan word, "ever" or a possessive elsewhere does not undo a named day asked about.
        ("How was my Christmas?", "2025-12-24"),
        ("What did we eat for our Thanksgiving dinner?", "2025-11-27"),
        ("What did Will give me at Christmas?", "2025-12-24"),  # a name, not "will"
        ("Remind me what I was doing on Boxing Day.", "2025-12-26"),
        ("I always forget: what did we do at Thanksgiving?", "2025-11-27"),
        ("Did I ever tell you what happened last Christmas?", "2025-12-24"),  # "last" names one
        ("What did I do over the last bank holiday?", "2026-09-05"),  # US: Labor Day's
    ],
)
def test_a_named_day_asked_about_keeps_its_window(question, day):
    window = window_of(question, SEPTEMBER, ZoneInfo("America/New_York"))
    assert window is not None and f"{window.start:%Y-%m-%d}" == day


def test_a_named_day_not_taken_as_a_time_leaves_no_month_behind():
    # Not all July: the month is the named day's, and the named day is a plan here.
    assert window_of("What were our plans for the Fourth of July?", SEPTEMBER) is None
    # A number of a year's size after "in" may be an amount; a year to come is no time asked of.
    assert window_of("Did I pay in 2000 euros for the boiler?", SEPTEMBER) is None
    assert window_of("What did I do in 2031?", SEPTEMBER) is None
    assert window_of("Which friend was born in 1990?", SEPTEMBER) is None
    made = window_of("What friends have I made in 2025?", SEPTEMBER)
    assert made is not None and made.start.year == 2025, "made in a year: a doing then"
    assert window_of("Did I live in 2019 Elm Street?", SEPTEMBER) is None
    # Two years told apart by what they hold are two times, no one window; each is a cue.
    two = "Which did I enjoy more, the concert in 2024 or the one in 2025?"
    assert window_of(two, SEPTEMBER) is None
    assert cues_of(two) == ["the concert in 2024", "the one in 2025"]
    # Asked on a Friday too, a doing "this weekend" is of the one gone, as "this Saturday" is;
    # a plan, or what one is doing, of the coming one.
    friday = _at("2026-03-13")
    assert f"{window_of('What did I do this weekend?', friday).start:%Y-%m-%d}" == "2026-03-07"
    assert f"{window_of('What did I do this Saturday?', friday).start:%Y-%m-%d}" == "2026-03-07"
    told = window_of("Did I tell you what I'm doing this weekend?", friday)
    assert f"{told.start:%Y-%m-%d}" == "2026-03-14"
    # A long weekend touches a weekend: the US Thursday Christmas is none; Saturday's is Friday's.
    new_york = ZoneInfo("America/New_York")
    window = window_of("What did I do over the long weekend?", _at("2025-12-29"), new_york)
    assert window is not None and f"{window.start:%Y-%m-%d}" == "2025-11-27"  # Thanksgiving's
    window = window_of("What did we do over the long weekend?", _at("2026-07-07"), new_york)
    assert window is not None and f"{window.start:%Y-%m-%d}" == "2026-07-03"  # July 4th, a Saturday


def test_a_long_weekend_as_a_point_of_reference_is_an_event():
    # Counted from: the calendar's, where the country is known (the latest begun, its last
    # day: August's Monday); else searched for, as any event.
    london = ZoneInfo("Europe/London")
    asked = read_question("What did I do the day after the bank holiday?", SEPTEMBER, london)
    assert asked.anchor is None and asked.window is not None
    assert (f"{asked.window.start:%Y-%m-%d}", f"{asked.window.end:%Y-%m-%d}") == ("2026-09-01", "2026-09-02")
    asked = read_question("What did I do the day after the bank holiday?", SEPTEMBER)
    assert asked.anchor is not None and asked.anchor.event == "the bank holiday", "UTC: no country"
    asked = read_question("Did I finish the report before the bank holiday?", SEPTEMBER, london)
    assert asked.window is None and asked.cues == ["I finish the report", "the bank holiday"]
    for general in ("Did I work on a bank holiday?", "Did I ever take a long weekend away?"):
        assert window_of(general, SEPTEMBER, london) is None, general


def test_a_long_weekend_to_come_or_unknown_is_no_window():
    assert window_of("What are we doing for the long weekend?", SEPTEMBER, ZoneInfo("Europe/London")) is None
    assert window_of("What did we do over the bank holiday?", SEPTEMBER) is None, "UTC: no country"


@pytest.mark.parametrize(
    "question",
    [
        "Can you recommend a game I could play this weekend?",
        "Any ideas for a gig while I'm in Glasgow next month?",
        "What should I cook tonight?",
        "Got any ideas for my day off on Thursday?",
        "Can you suggest somewhere for a long weekend away in October?",
        # what the user did, told in another clause than the time (a review's)
        "I caught a cold, can you suggest what to eat tomorrow?",
        "I woke up early, what should I do this afternoon?",
        "Can you recommend boots I need for the hike this weekend?",  # "need" is no past
    ],
)
def test_a_request_for_a_suggestion_reads_its_time_as_the_suggestions(question):
    """The time of a thing to be suggested is no time anything was said: what the user likes
    was told whenever (a round's fAY39: the weekend's Premier League chat, said that morning,
    came above the Steam Deck and the cosy games)."""
    assert read_question(question, MONDAY).window is None


@pytest.mark.parametrize(
    "question",
    [
        "Can you recommend something like the film I watched last Friday?",
        "What did you recommend last week?",
        "What did I do last weekend?",
        # a time of what the user did, a yes-or-no of advice given, what should have been done,
        # a plan's own things (a review's)
        "Can you recommend a wine like the one we had at dinner on Saturday?",
        "Did the doctor give me any advice at my appointment on Monday?",
        "What should I have bought for Mum on Sunday?",
        "What should I bring to the dentist tomorrow?",
        # any past the user tells of doing (the list the named days read a day gone by with)
        "Can you recommend a red like the one we drank on Saturday?",
        "Any ideas for a hike like the one I fell in love with on Sunday?",
    ],
)
def test_a_suggestion_from_a_time_gone_by_or_one_recalled_keeps_its_window(question):
    assert read_question(question, MONDAY).window is not None


def test_asked_for_a_suggestion_for_this_weekend_what_the_user_likes_comes_first(store, embedder, writer):
    likes = "I just got a Steam Deck. Cosy pixel-art games, relaxing puzzles, no combat or timers please."
    ids = _said(
        writer,
        ("2026-02-09", "a", likes),
        ("2026-03-14T06:09", "b", "What's the schedule for the Premier League matches this Sunday?"),
        ("2026-03-14T06:15", "b", "I'm playing tennis with John again this weekend, he wants revenge."),
    )
    question = "Can you recommend a game I could play this weekend?"
    hits = recall(store, embedder, question, k=3, now=_at("2026-03-14T10:00")).hits  # a Saturday
    assert hits[0].id == ids[likes], [h.text for h in hits]


def test_a_named_day_as_a_point_of_reference_keeps_its_cue():
    assert cues_of("Did I quit smoking before or after Christmas?") == ["I quit smoking", "Christmas"]
    assert read_question("What did we do over Easter?", MONDAY).only_time, "'over' asks for no thing"


@pytest.mark.parametrize(
    ("now", "question", "start", "end"),
    [
        # "since" and a count go from a day gone: asked on Christmas Eve, last year's.
        ("2025-12-24T12:00", "What have I eaten since Christmas?", "2024-12-25", "2025-12-24"),
        ("2025-12-24T12:00", "What did I do the day after Christmas?", "2024-12-26", "2024-12-27"),
        ("2025-12-24T12:00", "What did I do two days before Christmas?", "2025-12-23", "2025-12-24"),
        ("2026-03-09T12:00", "What did I do a week after New Year's?", "2026-01-05", "2026-01-12"),
        ("2026-03-09T12:00", "What did I do the day before New Year's?", "2025-12-31", "2026-01-01"),
    ],
)
def test_a_time_counted_from_a_named_day_is_from_one_gone(now, question, start, end):
    asked = read_question(question, datetime.fromisoformat(now).replace(tzinfo=UTC))
    assert asked.window is not None and asked.anchor is None
    assert (f"{asked.window.start:%Y-%m-%d}", f"{asked.window.end:%Y-%m-%d}") == (start, end)


@pytest.mark.parametrize(
    ("zone", "question", "start", "end"),
    [
        # The first weekend after the day: Easter Sunday's is the next one, Canada Day's (a
        # Wednesday) that week's; the weekend before a Saturday is the one before it.
        ("UTC", "What did we do the weekend after Easter?", "2026-04-11", "2026-04-13"),
        ("America/Vancouver", "what did I do the weekend after Canada Day", "2026-07-04", "2026-07-06"),
        ("Pacific/Auckland", "What did I do the weekend before Anzac Day?", "2026-04-18", "2026-04-20"),
        # A long weekend counts from its last day after it, its first before it.
        ("Europe/London", "what did I do the weekend after the May bank holiday?", "2026-05-09",
         "2026-05-11"),
        ("Europe/Dublin", "What did I do the weekend before the June bank holiday?", "2026-05-23",
         "2026-05-25"),
        ("Europe/London", "What did I do the day after the bank holiday?", "2026-09-01", "2026-09-02"),
        ("Europe/London", "what did we do the weekend after the last bank holiday?", "2026-09-05",
         "2026-09-07"),
        # West of UTC, in the user's days (a recall's `now` is UTC).
        ("America/Toronto", "what did I do the day after the August long weekend?", "2026-08-04",
         "2026-08-05"),
        # A named day's span too: its last day after it, its first before it.
        ("America/Chicago", "What did we do the weekend after the Memorial Day weekend?", "2026-05-30",
         "2026-06-01"),
    ],
)  # fmt: skip
def test_the_weekend_after_a_named_day_is_its_saturday_and_sunday(zone, question, start, end):
    asked = read_question(question, _at("2026-11-30"), ZoneInfo(zone))
    assert asked.window is not None and asked.anchor is None and asked.only_time
    assert (f"{asked.window.start:%Y-%m-%d}", f"{asked.window.end:%Y-%m-%d}") == (start, end)


@pytest.mark.parametrize(
    ("now", "question", "start"),
    [
        # The latest whose counted days have begun, as for a named day: asked on the Friday
        # before it, the weekend before the August bank holiday is this one, not last year's;
        # asked before the weekend after May's has come, last year's.
        ("2026-08-28", "what did we do the weekend before the August bank holiday?", "2026-08-22"),
        ("2026-05-06", "what did we do the weekend after the May bank holiday?", "2025-05-10"),
        ("2027-01-20", "what did we do the weekend after the Christmas bank holiday?", "2027-01-02"),
        ("2027-01-20", "what did I do the day after the Easter bank holiday?", "2026-04-07"),
    ],
)
def test_a_long_weekend_counted_from_is_the_latest_whose_counted_days_have_begun(now, question, start):
    asked = read_question(question, _at(now), ZoneInfo("Europe/London"))
    assert asked.window is not None and asked.anchor is None
    assert f"{asked.window.start:%Y-%m-%d}" == start


def test_the_weekend_after_an_event_is_counted_from_its_day():
    after = read_question("What did we do the weekend after the wedding?", MONDAY).anchor
    before = read_question("what did I get up to the weekend before my exam", MONDAY).anchor
    assert after is not None and after.event == "the wedding" and after.weekend
    assert before is not None and before.event == "my exam"
    # A Saturday wedding: the next Saturday; a Friday one: the next day. Before a Monday exam,
    # the two days before it; before a Sunday one, the weekend before that.
    saturday, friday, monday, sunday = (date(2026, 6, d) for d in (13, 12, 15, 14))
    assert (after.days(saturday), after.days(friday)) == ((7, 8), (1, 2))
    assert (before.days(monday), before.days(sunday)) == ((-2, -1), (-8, -7))
    window = after.window(_at("2026-06-13"))
    assert f"{window.start:%a %Y-%m-%d} to {window.end:%a %Y-%m-%d}" == "Sat 2026-06-20 to Mon 2026-06-22"
    # Times of their own, not counted from an event.
    assert read_question("What are we doing the weekend after next?", MONDAY).anchor is None
    assert read_question("What did I do the weekend before last?", MONDAY).anchor is None


def test_a_time_counted_from_a_named_day_is_in_the_users_days():
    # A recall's `now` is UTC; west of it, the day before Christmas is still Dec 23 there.
    asked = read_question(
        "What did I do two days before Christmas?", _at("2026-03-09T02:00"), ZoneInfo("America/New_York")
    )
    assert asked.window is not None
    assert f"{asked.window.start:%Y-%m-%d %H:%M}" == "2025-12-23 00:00"
    assert asked.window.start.utcoffset() == ZoneInfo("America/New_York").utcoffset(asked.window.start)


@pytest.mark.parametrize(
    ("zone", "question", "day"),
    [
        ("Europe/Berlin", "What did I do on Labour Day?", "2025-05-01"),
        ("Europe/London", "What did I do on Labour Day?", "2025-05-05"),  # the May Day holiday
        ("America/Chicago", "What did I do on Labor Day?", "2025-09-01"),
    ],
)
def test_labour_day_is_the_countrys(zone, question, day):
    window = window_of(question, MONDAY, ZoneInfo(zone))
    assert window is not None and f"{window.start:%Y-%m-%d}" == day


def test_independence_day_is_the_united_states_only_where_it_is_theirs():
    assert window_of("What did I do on Independence Day?", MONDAY, ZoneInfo("Asia/Kolkata")) is None
    assert window_of("What did I do on Independence Day?", MONDAY) is not None  # UTC: the default


def test_a_named_day_far_from_now_does_not_fail():
    for year in (2, 9998, 9999):
        window_of("What did I do on Christmas?", datetime(year, 6, 1, tzinfo=UTC))
        window_of(
            "What did we do over the bank holiday?",
            datetime(year, 6, 1, tzinfo=UTC),
            ZoneInfo("Europe/London"),
        )
        read_question("What did I do two days before New Year's?", datetime(year, 6, 1, tzinfo=UTC))


def test_a_named_day_a_country_has_no_one_date_for_is_no_window():
    # Labour Day is a different Monday in each Australian state: its words are searched.
    assert window_of("What did I do on Labour Day?", MONDAY, ZoneInfo("Australia/Sydney")) is None


def test_a_time_counted_from_a_named_day_needs_no_event_search():
    asked = read_question("What did I do two days before Christmas?", MONDAY)
    assert asked.anchor is None and asked.window is not None and asked.only_time
    assert (f"{asked.window.start:%Y-%m-%d}", f"{asked.window.end:%Y-%m-%d}") == ("2025-12-23", "2025-12-24")
    assert asked.search_text == "What did I do ?"
    # Asked of a named day alone, its name is searched too: what was said of it names it.
    assert read_question("What did I do on Christmas?", MONDAY).search_text == "What did I do on Christmas?"


@pytest.mark.parametrize(
    ("question", "event", "first", "last"),
    [
        # Around the count, half a unit either side; "the week after" is the seven days next to it.
        ("What good news did I get about a week after dad's operation?", "dad's operation", 4, 10),
        ("what did I buy two weeks before my trip to Lisbon?", "my trip to Lisbon", -17, -11),
        ("What did I do the day after the concert?", "the concert", 1, 1),
        ("What did I do the week before my trip?", "my trip", -7, -1),
        ("Who did I meet the month after I moved?", "I moved", 1, 30),
        ("a month after I moved, who did I meet?", "I moved", 15, 45),
        ("What did I do two days before the party?", "the party", -2, -2),
        ("What did I do a few days after the party?", "the party", 2, 4),  # a rough count
        ("A week before the exam did I still go out?", "the exam", -10, -4),  # the event ends at its verb
        # A time of its own, or no count: no event to count from.
        ("What did I do the day before yesterday?", None, 0, 0),
        ("Did I meet Sam the week before last?", None, 0, 0),
        ("How many days after the wedding did we leave?", None, 0, 0),
        ("What did I do a week after that?", None, 0, 0),
        ("What am I doing the week after next?", None, 0, 0),
        ("The day after tomorrow, what's on?", None, 0, 0),
        # A recurring time, as shifts are named, is no one event: nothing to count from.
        ("What have I spent on sleeping through the day after nights?", None, 0, 0),
        ("How did I feel the day after night shifts?", None, 0, 0),
        ("what did i eat the day after Nights on the ward", None, 0, 0),
        # ... but other plurals, clauses and singulars are events.
        ("What did I do the day after the exams?", "the exams", 1, 1),
        ("what did i do the day after finals", "finals", 1, 1),
        ("What did I buy the day before dad arrives?", "dad arrives", -1, -1),
        ("What did I do the week after she moves?", "she moves", 1, 7),
        ("What did I do the day after surgery?", "surgery", 1, 1),
    ],
)  # fmt: skip
def test_a_time_counted_from_an_event_names_the_event(question, event, first, last):
    asked = read_question(question, MONDAY)
    if event is None:
        assert asked.anchor is None
        return
    assert asked.anchor is not None
    assert (asked.anchor.event, asked.anchor.first, asked.anchor.last) == (event, first, last)
    assert not asked.anchor.weekend
    assert asked.cues == [] and asked.window is None, (
        "the event is searched for its date, not as a thing asked"
    )
    assert event in asked.anchor.phrase and asked.anchor.phrase in question


def test_first_and_latest_ask_for_one_end_of_a_history():
    assert order_of("What was my first car?") == EARLIEST
    assert order_of("Which phone do I use these days?") == NEWEST
    assert order_of("Do I have a car at the moment?") == NEWEST
    assert order_of("Am I a member of the gym any longer?") == NEWEST
    assert order_of("What was I doing at the moment the power went out?") is None
    assert order_of("Is my commute any longer since we moved?") is None
    assert order_of("Now that I think of it, what did I get Mum?") is None
    assert order_of("Where is Mum living now?") == NEWEST
    assert order_of("When did I last have dinner out?") == NEWEST
    assert order_of("How long did I last at that job?") is None
    assert order_of("Where was I last weekend?") is None, "a time, not the latest"
    assert order_of("When did I last fall off my bike?") == NEWEST, "after 'did I last' a verb"
    assert order_of("How was I last week?") is None
    assert order_of("When was I last at the dentist?") == NEWEST, "a place: the latest time there"
    assert order_of("What is my favourite colour?") is None
    # "right now" as texted
    assert order_of("who's my boss rn") == NEWEST
    assert order_of("what am i reading rn?") == NEWEST
    assert order_of("Am I an RN yet?") is None, "a nurse"
    # ("finally", "in the end" are words of what is asked, not an order: "how many weeks ago did
    # I finally send out the minutes?", "which frames did I end up choosing?")
    assert order_of("How many weeks ago did I finally send out the minutes?") is None


@pytest.mark.parametrize(
    ("question", "words"),
    [
        ("What is my current 5K personal best?", "What is my 5K personal best?"),
        ("How many pages have I written so far?", "pages have I written ?"),
        ("When did I first go climbing?", "When did I go climbing?"),
        ("Which gig did I go to most recently?", "Which gig did I go to ?"),
        ("Am I still in the choir?", "Am I in the choir?"),
        ("How long did I last at that job?", "did I last at that job?"),  # no order asked: a span
        # A capital after the first word is a name; nothing else left to match: the whole question.
        ("Did Ever call about the flat?", "Did Ever call about the flat?"),
        ("Did I hear back from Current?", "Did I hear back from Current?"),
        ("Who is ever?", "Who is ever?"),
        ("Still doing parkrun?", "doing parkrun?"),
        # what kind of answer is asked, and how two things stand in time: no words of the topic
        (
            "How many weeks before the exhibition did I finish the station?",
            "the exhibition did I finish the station?",
        ),
        ("How old was Mia when she started swimming?", "was Mia when she started swimming?"),
        # a unit that is the thing asked of, a word joined to another, a last word: the topic's
        ("How many days off do I have left?", "days off do I have left?"),
        (
            "What time is the after-school club on Thursdays?",
            "What time is the after-school club on Thursdays?",
        ),
        ("Who did I look after?", "Who did I look after?"),
        ("How much have I saved up to now?", "have I saved ?"),  # not "…saved up to ?"
    ],
)
def test_the_words_matched_are_the_question_without_its_order_scope_and_frame(question, words):
    assert read_question(question, MONDAY).words == words


# -- on the store ----------------------------------------------------------------------------


def test_a_dated_question_prefers_what_was_said_then(store, embedder, writer):
    ids = _said(
        writer,
        ("2026-02-01", "a", "I went to a jazz concert at the Village Vanguard, a great jazz concert."),
        ("2026-03-06", "b", "Saw a jazz band play at the Blue Note tonight, what a concert."),
        ("2026-02-20", "c", "I bought new running shoes."),
    )  # fmt: skip
    vanguard, blue_note = (
        ids[next(t for t in ids if "Vanguard" in t)],
        ids[next(t for t in ids if "Blue" in t)],
    )
    undated = recall(store, embedder, "Which jazz concert did I go to?", k=3, now=MONDAY)
    assert undated.hits[0].id == vanguard, "without a date, the closer words win"
    dated = recall(store, embedder, "Which jazz concert did I go to last Friday?", k=3, now=MONDAY)
    assert dated.hits[0].id == blue_note, "said last Friday: lifted above the better-worded one"
    assert vanguard in [h.id for h in dated.hits], "a boost, never a filter: people misremember dates"
    # --as-of is the question's date when no other is given.
    as_of = recall(store, embedder, "Which jazz concert did I go to last Friday?", k=3, as_of=MONDAY)
    assert as_of.hits[0].id == blue_note


def test_asked_how_things_are_now_an_input_sharing_only_now_is_no_answer(store, embedder, writer):
    """ "Current" says which state is asked for, not what about: "my current job" and "currently
    reading" answer nothing of a personal best (they came second and third on word matches)."""
    _said(
        writer,
        ("2026-01-10", "a", "Signed up for the spring 10K. Running three times a week now."),
        ("2026-02-14", "b", "A new best at the parkrun this morning: 24:10 for the 5K!"),
        ("2026-02-20", "c", "My current job is fine, but my current manager keeps changing the rota."),
        ("2026-02-21", "d", "Currently reading a novel about a lighthouse keeper, currently on chapter six."),
    )  # fmt: skip
    got = recall(store, embedder, "What's my current personal best?", k=4, now=MONDAY)
    texts = [h.text for h in got.hits]
    assert texts[0].startswith("A new best at the parkrun")
    assert not any("current" in t.lower() for t in texts), texts


def test_a_name_that_is_an_order_word_is_still_matched(store, embedder, writer):
    """ "Ever" is a name: "who is Ever?" has nothing else to match, and finds her (a review found
    it found nothing, its vector below the floor and its one word left out)."""
    ids = _said(
        writer,
        ("2026-03-02", "a", "Ever called about the flat viewing, she can do Thursday."),
        ("2026-03-03", "b", "Called the landlord about the boiler again."),
        ("2026-03-04", "c", "Mum called about Sunday lunch."),
    )  # fmt: skip
    ever = ids["Ever called about the flat viewing, she can do Thursday."]
    for question in ("Who is Ever?", "Did Ever call?"):
        got = recall(store, embedder, question, k=3, now=MONDAY)
        assert got.hits and got.hits[0].id == ever, question


def test_a_named_day_finds_what_was_said_on_it_before_what_only_names_it(store, embedder, writer, cli):
    """ "How was Christmas?" is last Christmas: what was said on it first, whatever its words,
    then what was told of it in the days after; a year-old Christmas and a later mention of
    one that name it better come below."""
    ids = _said(
        writer,
        ("2024-12-25", "a", "Christmas dinner at Mum's again, the usual turkey and crackers."),
        ("2025-12-25", "b", "Skated on the canal with the kids, then dinner at Anna's place."),
        ("2025-12-28", "c", "Still thinking about Christmas: the kids loved their new sledges."),
        ("2026-02-01", "d", "The Christmas lights finally came down today."),
    )  # fmt: skip
    said_then, told_later = (
        ids["Skated on the canal with the kids, then dinner at Anna's place."],
        ids["Still thinking about Christmas: the kids loved their new sledges."],
    )
    plain = recall(store, embedder, "Christmas", k=4, now=MONDAY)
    assert plain.hits[0].id != said_then, "the test needs the day's input to be a poor match of the name"
    got = recall(store, embedder, "How was Christmas?", k=4, now=MONDAY)
    assert [h.id for h in got.hits[:2]] == [said_then, told_later]
    assert got.period is not None and got.period.holds(got.hits[0].when)
    asked = cli("recall", "How was Christmas?", "--as-of", "2026-03-09")
    assert asked.exit_code == 0 and "'Christmas' read as 2025-12-24" in asked.stderr, asked.stderr


def test_days_asked_as_numbers_or_joined_find_what_was_said_then(store, embedder, writer, cli, monkeypatch):
    """ "What did I do on 3/4?" is the day the user's date order says (the 3rd of April for
    DCPM_DATE_ORDER=dmy, the 4th of March for mdy, none unset); "on the 13th and the 14th" both
    days, not the first alone."""
    said = {
        "ferry": ("2026-04-03", "Took the ferry to the island with Marta, windy crossing."),
        "tap": ("2026-03-04", "Fixed the bathroom tap at last, new washer."),
        "dentist": ("2026-03-13", "Dentist in the morning, a filling on the left side."),
        "dinner": ("2026-03-14", "Marta's birthday dinner at the Georgian place."),
        "keys": ("2026-02-20", "What did I do with the spare keys? Found them in the car."),
    }
    ids = _said(writer, *((day, name, text) for name, (day, text) in said.items()))
    ids = {name: ids[text] for name, (_, text) in said.items()}
    monkeypatch.delenv("DCPM_DATE_ORDER", raising=False)
    unsure = cli("recall", "what did I do on 3/4?", "--as-of", "2026-04-20")
    assert unsure.exit_code == 0 and "set DCPM_DATE_ORDER=dmy" in unsure.stderr, unsure.stderr
    for order, first in (("dmy", "ferry"), ("mdy", "tap")):
        monkeypatch.setenv("DCPM_DATE_ORDER", order)
        asked = cli("recall", "what did I do on 3/4?", "--as-of", "2026-04-20", "-k", "2", "--json")
        assert asked.exit_code == 0, asked.stderr
        assert json.loads(asked.stdout)["hits"][0]["id"] == ids[first], order
    both = recall(store, embedder, "what did I do on the 13th and the 14th?", k=2, now=_at("2026-03-20"))
    assert both.period is not None and both.period.days == "2026-03-13 to 2026-03-14"
    assert {h.id for h in both.hits} == {ids["dentist"], ids["dinner"]}


@pytest.mark.parametrize(
    ("question", "phrase"),
    [
        ("Did I watch Friday the 13th?", None),  # a film: a weekday with its day only after "on"
        ("What do I pay on Monday the 1st of each month?", "on Monday"),  # a habit, not the 1st
    ],
)
def test_a_weekday_and_a_number_that_name_no_day(question, phrase):
    asked = read_question(question, MONDAY)
    assert (asked.window.phrase if asked.window else None) == phrase


@pytest.mark.parametrize(
    ("question", "slip"),
    [
        ("what did I do on 31/2?", "31/2"),
        ("what did I do on 2/30?", "2/30"),
        ("where was I on 29/2/2025?", "29/2/2025"),
        ("what did I do on 31 June?", "31 June"),
        ("what happened on the 31st of April?", "the 31st of April"),
        ("what did I do on 29/2/2024?", ""),  # a leap year's
        ("what did I do on February 29th?", ""),  # (the year unsaid: it may be one)
        ("did we split it on 50/50?", ""),  # no day and month at all
        ("what did I spend on 31/2 of the budget?", ""),  # a share
        ("what did I do on 2026-06-31?", "2026-06-31"),
        ("what's on Friday the 32nd?", "on Friday the 32nd"),  # (not last Friday)
    ],
)
def test_a_date_no_calendar_has_is_said_and_read_as_none(question, slip):
    """A slip of the keys ("31/2") was silently no date: the answers looked like any others."""
    asked = read_question(question, MONDAY)
    assert asked.no_day == slip
    assert asked.window is None or not slip


def test_recall_says_a_date_no_calendar_has_was_read_as_none(writer, cli):
    _said(writer, ("2026-02-28", "a", "Fixed the bathroom tap at last, new washer."))
    got = cli("recall", "what did I fix on 31/2?", "--as-of", "2026-03-09")
    assert got.exit_code == 0 and "'31/2' is no day of the calendar" in got.stderr, got.stderr
    assert "bathroom tap" in got.stdout
    fine = cli("recall", "what did I fix on 28/2?", "--as-of", "2026-03-09")
    assert fine.exit_code == 0 and "no day of the calendar" not in fine.stderr


def test_a_day_asked_of_before_it_comes_finds_the_plans_that_name_it(store, embedder, writer, cli):
    """ "What am I doing on 8 July?" asked on the 1st: nothing is said on a day to come, so what
    was said in the weeks before and names it comes first, marked as planned for then; it came
    below a lunch planned for another day and a day at work, the like of "doing"."""
    ids = _said(
        writer,
        ("2026-06-28", "a", "Booked the ferry to Skye for the 8th of July, leaving at 7am from Mallaig."),
        ("2026-06-29", "b", "Mum called, she wants us for lunch on Sunday 5 July."),
        ("2026-06-30", "c", "Long day at work doing the audit, it is dragging on. Ran 5k in the evening."),
        ("2026-07-08", "d", "Lunch with Jo on the 8th was lovely."),  # said after the day asked on
        ("2026-07-03", "e", "Storm warning for the islands. Cancelled the ferry for the 8th, Skye can wait."),
        ("2026-07-02", "f", "Sara's hen do is this weekend, in Brighton. Need a costume."),
        ("2026-06-29", "g", "Jo's housewarming is a week on Saturday, bring a plant."),
    )  # fmt: skip
    ferry, lunch, cancelled, hen, housewarming = (
        ids["Booked the ferry to Skye for the 8th of July, leaving at 7am from Mallaig."],
        ids["Mum called, she wants us for lunch on Sunday 5 July."],
        ids["Storm warning for the islands. Cancelled the ferry for the 8th, Skye can wait."],
        ids["Sara's hen do is this weekend, in Brighton. Need a costume."],
        ids["Jo's housewarming is a week on Saturday, bring a plant."],
    )
    for question, planned, asked in (
        ("What's on this weekend?", {lunch, hen}, "2026-07-02"),  # ("this weekend", said on Thursday)
        ("What am I doing on Saturday the 11th?", {housewarming}, "2026-07-01"),  # (not the 4th)
        ("What am I doing on 8 July?", {ferry}, "2026-07-01"),
        ("what have I got on Wednesday the 8th?", {ferry}, "2026-07-01"),  # ("have I got": now, not gone)
        ("What's on this Sunday?", {lunch}, "2026-07-01"),
        # (the plan and, told later, its end: both, the reader sees it was called off)
        ("What am I doing tomorrow?", {ferry, cancelled}, "2026-07-07"),
    ):
        got = recall(store, embedder, question, k=3, now=_at(asked), as_of=_at(asked))
        assert {h.id for h in got.hits[: len(planned)]} == planned, question
        assert got.period is not None and got.period.planned == planned, question
        assert not any("nothing found was said" in w for w in got.warnings), got.warnings
    shown = cli("recall", "What am I doing on 8 July?", "--as-of", "2026-07-01", "-k", "1")
    assert shown.exit_code == 0 and "(planned for then)" in shown.stdout, shown.stdout
    assert "1 planned for then" in shown.stderr, shown.stderr
    # (nothing names it: said so, not that nothing was said on a day still to come)
    july = _at("2026-07-01")
    none = recall(store, embedder, "What am I doing next month?", k=3, now=july, as_of=july)
    assert any(w.startswith("nothing found was planned for next month") for w in none.warnings), none.warnings


def test_a_plan_for_a_month_far_off_is_found_from_the_weeks_before_the_asking(store, embedder, writer):
    """ "What am I doing in March?" asked in December: the plans of a time to come were searched
    in the eight weeks before it, January, when nothing had been said yet; the weeks before the
    asking hold them."""
    ids = _said(
        writer,
        ("2026-11-20", "a", "Booked flights to Seville for 12-16 March, £180 each."),
        ("2026-11-28", "b", "Walked to the park with Dan, then pizza."),
        ("2026-12-02", "c", "Long day at work, the audit is dragging on."),
    )
    december = _at("2026-12-07")
    got = recall(store, embedder, "What am I doing in March?", k=2, now=december)
    flights = ids["Booked flights to Seville for 12-16 March, £180 each."]
    assert got.hits and got.hits[0].id == flights
    assert got.period is not None and got.period.planned == {flights}


@pytest.mark.parametrize(
    ("question", "phrase"),
    [
        ("What have I got coming up?", "coming up"),
        ("what's coming up for me?", "coming up"),
        ("Anything upcoming?", "upcoming"),
        ("What's ahead?", "ahead"),
        ("what’s coming up?", "coming up"),  # (a phone's apostrophe)
        ("What lies ahead?", "ahead"),
        ("any plans?", "any plans"),
        ("What are my plans?", "What are my plans"),
        # a thing to come, not the time asked; of the past; another time named; no time
        ("Where is the venue for my upcoming exam?", None),
        ("What's coming up with the marathon?", None),
        ("What did I say was coming up?", None),
        ("What's coming up in 2027?", None),  # a year to come: no time, as before
        ("Anything coming up next week?", "next week"),
        ("What are my plans for the garden?", None),
        ("Should I go ahead with the loft?", None),
    ],
)
def test_a_time_to_come_named_by_no_day_is_the_days_ahead(question, phrase):
    """ "What have I got coming up?" asks of the days ahead (a year of them), for the plans told
    that name one; "my upcoming exam" is a thing, asked of as before."""
    asked = read_question(question, MONDAY)
    assert (asked.window.phrase if asked.window else None) == phrase
    if phrase in ("coming up", "upcoming", "ahead", "any plans", "What are my plans"):
        assert asked.window is not None and asked.window.ahead and asked.only_time
        # from the time asked (what was said earlier that day is no plan), a year on
        assert (asked.window.start, asked.window.end) == (MONDAY, _at("2027-03-09").replace(hour=0))


def test_what_is_coming_up_finds_the_plans_told_that_name_a_day_ahead(store, embedder, writer, cli):
    """ "What have I got coming up?" named no time and matched nothing: "no memories match".
    The plans told that name a day ahead come first, marked planned; one whose day is gone by
    is no plan now."""
    ids = _said(
        writer,
        ("2026-11-05", "a", "Crown fitted at last. Paid 950 in the end, insurance covers 40%."),
        ("2026-11-20", "b", "Tom is actually great, he moved me to the children's section which I love."),
        ("2026-11-24", "c", "Booked flights to Lisbon for 18 December, back on the 23rd."),
        ("2026-11-27", "d", "Dentist check-up next Thursday. Book club moved to the 9th."),
        ("2026-11-02", "e", "Parents' evening is on the 12th of November, must not forget."),
        ("2026-11-30T08:00", "f", "Lunch was a soggy sandwich again."),  # said the day asked
    )  # fmt: skip
    lisbon = ids["Booked flights to Lisbon for 18 December, back on the 23rd."]
    dentist = ids["Dentist check-up next Thursday. Book club moved to the 9th."]
    asked = _at("2026-11-30T15:00")
    for question in ("What have I got coming up?", "any plans?", "what’s ahead?"):
        got = recall(store, embedder, question, k=3, now=asked, as_of=asked)
        assert {h.id for h in got.hits[:2]} == {lisbon, dentist}, question
        assert got.period is not None and got.period.planned == {lisbon, dentist}, question
    shown = cli("recall", "what have I got coming up?", "--as-of", "2026-11-30", "-k", "2")
    assert shown.exit_code == 0 and shown.stdout.count("(planned for then)") == 2, shown.stdout
    assert "'coming up' read as 2026-11-30 to 2027-11-29" in shown.stderr, shown.stderr


def test_a_plan_naming_its_month_alone_is_planned_for_that_month_not_for_a_day_of_it(store, embedder, writer):
    """ "Our trip to Seville in March", booked in November, is planned for March: asked "what am
    I doing in March?" in December it is first and marked planned (it was second, below a
    dripping tap said later, with "nothing found was planned for March"); asked of a weekend in
    March, it is no plan for that weekend. Gone by ("we went to Lisbon in March") or of a side
    its words do not tell, a month plans nothing."""
    ids = _said(
        writer,
        ("2026-11-20", "a", "Booked flights for our trip to Seville in March, Ryanair from Stansted."),
        ("2026-11-25", "b", "The kitchen tap is dripping again, need to call a plumber."),
        ("2026-11-26", "c", "We went to Lisbon in March and loved it."),
    )
    seville = ids["Booked flights for our trip to Seville in March, Ryanair from Stansted."]
    got = recall(store, embedder, "What am I doing in March?", k=3, now=_at("2026-12-07"))
    assert got.hits[0].id == seville
    assert got.period is not None and got.period.planned == {seville}
    assert not any("nothing found was planned" in w for w in got.warnings)
    weekend = recall(store, embedder, "What am I doing this weekend?", k=3, now=_at("2027-03-03"))
    assert weekend.period is not None and not weekend.period.planned


def test_a_question_about_a_time_alone_finds_what_was_said_then(store, embedder, writer):
    ids = _said(
        writer,
        ("2026-03-07", "a", "Took the kids to the aquarium, the sharks were enormous."),
        ("2026-03-08", "b", "Repainted the back fence, two coats of green."),
        ("2026-01-17", "c", "What I love doing at the weekend is nothing at all."),
        ("2026-02-28", "d", "Did the weekly shop and cleaned the bathroom."),
        ("2026-03-07", "e", "Kühlschrank kaputt, Techniker kommt Dienstag."),  # a cosine below 0
    )  # fmt: skip
    weekend = {ids["Took the kids to the aquarium, the sharks were enormous."],
               ids["Repainted the back fence, two coats of green."],
               ids["Kühlschrank kaputt, Techniker kommt Dienstag."]}  # fmt: skip
    question = "What did I do last weekend?"
    q = embedder.embed([question])[0]
    below = [t for t, v in zip(ids, embedder.embed(list(ids)), strict=True) if float(q @ v) < MIN_SIMILARITY]
    assert set(below) & {t for t in ids if ids[t] in weekend}, "the test needs one below the floor"
    got = recall(store, embedder, question, k=3, now=MONDAY)
    assert {h.id for h in got.hits[:3]} == weekend, "what was said last weekend, whatever its words"
    # The same question without its date is about nothing in particular: the floor holds.
    undated = recall(store, embedder, "What did I do?", k=3, now=MONDAY)
    assert not weekend <= {h.id for h in undated.hits}
    # A question that names a thing besides the time is not lifted this way: words still count.
    named = recall(store, embedder, "Did I clean the bathroom last weekend?", k=3, now=MONDAY)
    assert named.hits[0].id == ids["Did the weekly shop and cleaned the bathroom."]


def test_a_time_alone_in_a_journal_kept_now_and_then_shows_the_nearest_first(store, embedder, cli, tmp_path):
    """A month after the last entry, "what did I do last weekend?" said "the nearest first" but
    showed the 7th of March, the 16th, the 22nd (entries met through their passage carried its
    last day), and left out the nearest, the 29th, and two more: nothing lay within the four
    weeks searched around the weekend (found by a user test)."""
    days = ["02-01", "02-08", "02-21", "03-07", "03-16", "03-22", "03-29"]
    things = ["Long run along the canal.", "Kinder Scout hike with Priya.", "Told mum about the offer.",
              "Lazy weekend, watched films.", "Flew back from Lisbon.", "Swam 1km, knee fine.",
              "Painted the spare room."]  # fmt: skip
    journal = tmp_path / "journal.md"
    journal.write_text("".join(f"## 2026-{d}\n{t}\n\n" for d, t in zip(days, things, strict=True)))
    assert cli("add", "--no-extract", "--file", str(journal)).exit_code == 0
    got = recall(store, embedder, "what did I do last weekend?", k=8, as_of=_at("2026-04-30"))
    assert [f"{h.when:%m-%d}" for h in got.hits] == days[::-1]
    assert got.warnings == [
        "nothing found was said last weekend (2026-04-25 to 2026-04-26): these hits are from other days, "
        "the nearest first"
    ]


def test_short_journal_entries_are_not_alike_for_their_dates(store, embedder, cli, tmp_path):
    """A journal of one-line entries: "who is my manager now?" put "Tom is actually great" first
    and the entry saying Tom is the new manager fourth, below a dentist's appointment: their
    headings' dates made them alike (0.60) as about one thing, and asked "now" the newer took the
    older's place. An entry's vector is of its words (found by a user test)."""
    entries = [
        ("09-02", "Started the new job at the library today. My manager is Priya."),
        ("10-03", "Moved the crown appointment to 22 October because of the work training day."),
        ("10-15", "Priya left; my new manager is Tom. Not sure about him yet."),
        ("10-22", "Crown fitted. Paid 950 in the end, insurance covers 40%."),
        ("11-20", "Tom is actually great, he moved me to the children's section which I love."),
    ]
    journal = tmp_path / "journal.md"
    journal.write_text("".join(f"# 2026-{d}\n{t}\n\n" for d, t in entries))
    assert cli("add", "--no-extract", "--file", str(journal)).exit_code == 0
    got = recall(store, embedder, "who is my manager now?", k=3, as_of=_at("2026-11-30"))
    assert "my new manager is Tom" in got.hits[0].text
    assert "My manager is Priya" in got.hits[1].text


def test_a_time_alone_with_nothing_said_then_finds_what_was_done_nearest_it(store, embedder, writer):
    """Nothing was said last weekend. What comes next is the time beside it, by the day each
    input is about (the climbing was on Saturday the 28th, told on the 2nd): of a weekend, the
    weekends beside it (the climbing, and the Sunday's booking) before the weekdays between (the
    Thursday's meetings); not an old line worded like "what did I do"; and what was said after
    --as-of takes no place of it."""
    ids = _said(
        writer,
        ("2026-01-17", "a", "What I love doing at the weekend is nothing at all."),
        ("2026-03-01", "b", "Booked the dentist for next month."),
        ("2026-03-02", "c", "Went to the climbing wall with Sam on Saturday, my arms are dead."),
        ("2026-03-05", "d", "Long day of meetings, the new budget is finally signed off."),
        ("2025-11-08", "e", "Anna and I did the Saturday market again."),
    )  # fmt: skip
    nearest = [
        ids["Went to the climbing wall with Sam on Saturday, my arms are dead."],
        ids["Booked the dentist for next month."],
        ids["Long day of meetings, the new budget is finally signed off."],
    ]
    got = recall(store, embedder, "What did I do last weekend?", k=3, now=MONDAY)
    assert [h.id for h in got.hits] == nearest
    assert any("nothing found was said last weekend" in w and "the nearest first" in w for w in got.warnings)
    # Said after the time asked as of: hidden, and the same hits come first.
    _said(writer, *((f"2026-03-{d}", f"later{d}", f"Tidied the shed, day {d}.") for d in range(10, 20)))
    hidden = recall(store, embedder, "What did I do last weekend?", k=3, as_of=MONDAY)
    assert [h.id for h in hidden.hits] == nearest
    # A question that names a feeling keeps its words: the low day comes before the nearer ones.
    _said(writer, ("2026-02-27", "f", "Feeling really low and anxious, could barely sleep."))
    felt = recall(store, embedder, "How was I feeling last weekend?", k=3, as_of=MONDAY)
    assert felt.hits[0].text.startswith("Feeling really low")


def test_a_time_counted_from_an_event_finds_what_was_said_then(store, embedder, writer, cli):
    """ "About a week after dad's operation": no date is named, and the answer ("Got the
    offer!!") shares no word and little meaning with the question. The operation is found,
    its date counts the week, and what was said then comes first, with the operation beside it."""
    ids = _said(
        writer,
        ("2026-07-22", "a", "Dad's surgery went fine. Spent the whole day in the waiting room with Mom."),
        ("2026-07-28", "b", "Got the offer!! Project engineer, starting in September."),
        ("2026-07-02", "c", "Good news from the dentist: no cavities, see you in six months."),
        ("2026-06-20", "d", "Nice news: the garden plot came through, plot 14 is mine."),
        ("2026-08-20", "e", "Dad is walking without the cane now, the new hip is doing its job."),
    )  # fmt: skip
    question = "What good news did I get about a week after dad's operation?"
    got = recall(store, embedder, question, k=3, now=_at("2026-12-01"))
    assert got.period is not None and got.period.days == "2026-07-26 to 2026-08-01"
    assert "counted from 2026-07-22" in got.period.phrase
    offer, surgery = (
        ids["Got the offer!! Project engineer, starting in September."],
        ids["Dad's surgery went fine. Spent the whole day in the waiting room with Mom."],
    )
    assert [h.id for h in got.hits[:2]] == [offer, surgery]
    # Without the event's time the good news of other days wins: its words are the question's.
    plain = recall(store, embedder, "What good news did I get?", k=3, now=_at("2026-12-01"))
    assert plain.hits[0].id != offer
    shown = cli("recall", question, "--as-of", "2026-12-01", "-k", "3").stderr
    read = "counted from 2026-07-22' read as 2026-07-26 to 2026-08-01 (UTC days): 1 of these said then"
    assert read in shown
    # An event found nowhere gives no window: the question is asked as it is; nor does one
    # said only after the question's --as-of.
    nowhere = recall(store, embedder, "What did I do two days after the zeppelin flight?", k=3, now=MONDAY)
    assert nowhere.period is None
    before = recall(store, embedder, question, k=3, as_of=_at("2026-07-10"))
    assert before.period is None


def test_a_kind_of_thing_after_the_time_words_is_no_event_to_count_from(store, embedder, writer):
    """ "What have I spent on sleeping through the day after nights?": "nights" are a kind of
    shift, not one event. Counting a day from the one mention of nights the store holds put what
    was said the next day, of anything, above the thing bought; the question is asked as it is."""
    ids = _said(
        writer,
        ("2026-01-10", "a", "Ordered a blackout roller blind for the bedroom, 64 pounds."),
        ("2026-01-24", "b", "The white noise machine came, 38 quid, worth it already."),
        ("2026-02-11", "c", "Ward manager wants me on three nights on, four off from March."),
        ("2026-02-12", "d", "Tickets for the street art exhibition next weekend, so excited."),
        ("2026-02-12", "e", "Trying a lemon rosemary chicken with quinoa tonight."),
        ("2026-02-12", "f", "Finished The Power on my Kindle today, what should I read next?"),
    )  # fmt: skip
    question = "What have I spent on sleeping through the day after nights?"
    got = recall(store, embedder, question, k=3, now=_at("2026-02-19"))
    assert got.period is None
    ranked = [h.id for h in got.hits]
    # (fifth, behind three things said on the 12th, when the day after the nights was counted)
    assert ids["Ordered a blackout roller blind for the bedroom, 64 pounds."] in ranked[:2]


def test_two_weekends_ago_finds_what_was_told_of_it_on_the_monday(store, embedder, writer):
    """ "What did I get up to two weekends ago?", asked on a Friday: the camping trip told of on
    the Monday after that weekend, as on Saturday, answers first (what was said that weekend
    saying "today" is no more of it than the rest said then, and a neighbour's day out on the
    Saturday is not the user's, nor a sister's the user heard of); what was said that weekend
    next; the rest after."""
    ids = _said(
        writer,
        ("2024-05-11", "s", "Is Dickens worth reading if you found school English dull?"),
        ("2024-05-12", "t", "What did I get up to today? Coffee, then the bus, then coffee again."),
        ("2024-05-13", "a", "Got back from camping at the lake on Saturday, the tent got soaked. Tips?"),
        ("2024-05-20", "b", "Spent yesterday at the allotment putting up the runner bean canes."),
        ("2024-05-08", "c", "What should I get my sister for her birthday? She likes gardening."),
        ("2024-05-23", "d", "Can you explain how compound interest works on a savings account?"),
        ("2024-05-14", "n", "My neighbour Dave went to the steam rally on Saturday, loved it."),
        ("2024-05-13", "h", "I heard my sister went to the car boot sale on Saturday, got a bargain."),
    )  # fmt: skip
    got = recall(store, embedder, "What did I get up to two weekends ago?", k=4, now=_at("2024-05-24"))
    assert got.period is not None and got.period.days == "2024-05-11 to 2024-05-12"
    camping = ids["Got back from camping at the lake on Saturday, the tent got soaked. Tips?"]
    assert got.hits[0].id == camping
    assert {h.id for h in got.hits[1:3]} == {
        ids["Is Dickens worth reading if you found school English dull?"],
        ids["What did I get up to today? Coffee, then the bus, then coffee again."],
    }


def test_a_weekend_told_of_as_gone_by_is_the_weekend_it_names(store, embedder, writer):
    """ "The weekend just gone I had a stall…" and "this past weekend", told on the Mondays after,
    tell of those weekends as "on Saturday" does: asked "what did I do two weekends ago?", the
    stall answers first, above what was said that weekend (and what was said in the days after);
    the jacket waxed the weekend after is not of it, but of the weekend beside it (people count
    weekends differently), and comes next: before what was said in the days after the one asked
    and names no day, and before the weekdays between ("I'll sort the shed at the weekend", said
    on the Thursday before, is a plan, not a weekend told of; "booked the YHA for the weekend",
    told on the Tuesday after, is of the weekend to come, not told of the one asked)."""
    ids = _said(
        writer,
        ("2025-03-08", "s", "Is Dickens worth reading if you found school English dull?"),
        ("2025-03-09", "t", "What should I get my sister for her birthday? She likes gardening."),
        ("2025-03-10", "a", "The weekend just gone I had a table at the flea market, sold seven pairs."),
        ("2025-03-17", "b", "I re-waxed my Fjällräven jacket this past weekend, it feels stiff now."),
        ("2025-03-06", "c", "I'll sort the shed out at the weekend if it stays dry."),
        ("2025-03-11", "d", "Can you explain how compound interest works on a savings account?"),
        ("2025-03-13", "e", "Any tips for keeping basil alive on a windowsill?"),
        ("2025-03-11", "f", "Booked the YHA in Edale for the weekend, can't wait."),
    )  # fmt: skip
    got = recall(store, embedder, "What did I do two weekends ago?", k=8, now=_at("2025-03-19"))
    assert got.period is not None and got.period.days == "2025-03-08 to 2025-03-09"
    ranked = [h.id for h in got.hits]
    assert ranked[0] == ids["The weekend just gone I had a table at the flea market, sold seven pairs."]
    assert set(ranked[1:3]) == {
        ids["Is Dickens worth reading if you found school English dull?"],
        ids["What should I get my sister for her birthday? She likes gardening."],
    }
    assert ranked[3] == ids["I re-waxed my Fjällräven jacket this past weekend, it feels stiff now."]
    assert ranked[4] == ids["Can you explain how compound interest works on a savings account?"]
    assert ranked.index(ids["Any tips for keeping basil alive on a windowsill?"]) > 4
    # told in the days after that weekend, but of the coming one: not told of it
    assert ids["Booked the YHA in Edale for the weekend, can't wait."] not in ranked[:5]


def test_a_weekend_gone_by_that_today_is_after_is_told_of(store, embedder, writer):
    """ "Stiff today after the weekend just gone, I walked the coast path…", told on the Monday
    after, tells of that weekend (it read as a bound, "after the weekend", and the day told was
    that Monday): asked "what did I do two weekends ago?", it is first, above what was said that
    weekend; "I'll sort the shed after the weekend", said before it, is a bound, not told of it."""
    stiff = "Stiff as a board today after the weekend just gone, I walked the coast path to Newgale."
    ids = _said(
        writer,
        ("2025-03-08", "s", "Is Dickens worth reading if you found school English dull?"),
        ("2025-03-09", "t", "What should I get my sister for her birthday? She likes gardening."),
        ("2025-03-10", "a", stiff),
        ("2025-03-06", "c", "I'll sort the shed out after the weekend if it stays dry."),
    )  # fmt: skip
    got = recall(store, embedder, "What did I do two weekends ago?", k=4, now=_at("2025-03-19"))
    ranked = [h.id for h in got.hits]
    assert ranked[0] == ids[stiff]
    assert got.period is not None and ids[stiff] in got.period.told_of
    assert ranked.index(ids["I'll sort the shed out after the weekend if it stays dry."]) > 2


def test_the_weekends_beside_one_asked_of_come_before_the_days_after_it(store, embedder, writer):
    """Asked "what did I do last weekend?" on a Thursday: what was told of it first, what was
    said on it next; then what the user told of as done on the weekends either side ("worked two
    doubles this weekend", said the Monday before; "painted my sister's flat on Saturday", said
    the Monday after the next), since people count weekends differently; only then what was said
    in the days after it that names no day, and a neighbour's weekend is not the user's."""
    ids = _said(
        writer,
        ("2025-03-17", "a", "Worked two doubles at the pizza place this weekend, knackered."),
        ("2025-03-22", "b", "What should I get my sister for her birthday? She likes gardening."),
        ("2025-03-24", "c", "I made €140 on Saturday with a stall at the car boot sale."),
        ("2025-03-25", "d", "Can you explain how compound interest works on a savings account?"),
        ("2025-03-31", "e", "Spent Saturday painting my sister's flat, still covered in paint."),
        ("2025-03-26", "f", "My neighbour Dave went to the steam rally on Saturday, loved it."),
        ("2025-03-19", "g", "Long day of meetings, the new budget is finally signed off."),
    )  # fmt: skip
    got = recall(store, embedder, "What did I do last weekend?", k=7, now=_at("2025-03-27"))
    assert got.period is not None and got.period.days == "2025-03-22 to 2025-03-23"
    ranked = [h.id for h in got.hits]
    assert ranked[:2] == [
        ids["I made €140 on Saturday with a stall at the car boot sale."],
        ids["What should I get my sister for her birthday? She likes gardening."],
    ]
    assert set(ranked[2:4]) == {
        ids["Worked two doubles at the pizza place this weekend, knackered."],
        ids["Spent Saturday painting my sister's flat, still covered in paint."],
    }
    assert ranked.index(ids["Can you explain how compound interest works on a savings account?"]) > 3
    assert ranked.index(ids["My neighbour Dave went to the steam rally on Saturday, loved it."]) > 3


def test_a_weekend_told_of_late_comes_before_the_weekends_beside_it(store, embedder, writer):
    """ "Last weekend I went to the steam rally", said on the Thursday after it (past the three days
    after it), is told of the weekend asked: it comes before what is told of the weekends beside
    it, not last (a review: it came below the week's chatter)."""
    ids = _said(
        writer,
        ("2026-03-05", "a", "Last weekend I went to the steam rally at Tatton with Dad."),
        ("2026-03-09", "b", "The weekend just gone I went up to Hay-on-Wye on the train."),
        ("2026-02-23", "c", "At the weekend we went to the car boot on the old airfield."),
        ("2026-03-03", "d", "Back at work, knackered, the inbox is a disaster."),
    )  # fmt: skip
    got = recall(store, embedder, "What did I do two weekends ago?", k=4, now=_at("2026-03-11"))
    assert got.period is not None and got.period.days == "2026-02-28 to 2026-03-01"
    ranked = [h.id for h in got.hits]
    assert ranked[0] == ids["Last weekend I went to the steam rally at Tatton with Dad."]
    assert ranked.index(ids["Back at work, knackered, the inbox is a disaster."]) == 3


def test_a_weekend_a_journal_tells_as_its_subject_is_the_users(store, embedder, writer):
    """ "The weekend just gone was the cottage", told on the Monday: a journal's weekend told as the
    subject of its sentence, with no "I", is the user's, and answers "two weekends ago" first,
    above the weekend after it ("made £60 at the car boot on Sunday") and the week's chatter."""
    ids = _said(
        writer,
        ("2026-02-23", "a", "The weekend just gone was the cottage. It rained all Saturday."),
        ("2026-03-04", "b", "Made £60 at the car boot on Sunday, mostly old clothes and the bread maker."),
        ("2026-02-24", "c", "The steriliser broke again at work, third time this month."),
        ("2026-02-18", "d", "Booked the dentist for next month."),
        ("2026-02-23", "e", "Sue said Saturday was a washout at the fete."),  # hers
        ("2026-02-24", "f", "Saturday was supposed to be the car boot but it got rained off."),
    )  # fmt: skip
    got = recall(store, embedder, "How was the weekend before last?", k=6, now=_at("2026-03-05"))
    assert got.period is not None and got.period.days == "2026-02-21 to 2026-02-22"
    assert [h.id for h in got.hits[:2]] == [
        ids["The weekend just gone was the cottage. It rained all Saturday."],
        ids["Made £60 at the car boot on Sunday, mostly old clothes and the bread maker."],
    ]
    marks = {h.id: views.then_mark(got, h) for h in got.hits}
    assert marks[ids["The weekend just gone was the cottage. It rained all Saturday."]] == "told of then"
    assert marks[ids["Sue said Saturday was a washout at the fete."]] == "said just after"
    assert marks[ids["Saturday was supposed to be the car boot but it got rained off."]] == "said just after"


def test_a_weekend_with_nothing_told_of_it_finds_the_plan_made_for_it(store, embedder, writer):
    """Nothing was said last weekend, nor told of it yet: the trip booked for it on the Wednesday
    before is what it is about, and comes before Friday's chatter, said nearer it."""
    ids = _said(
        writer,
        ("2026-03-04", "a", "Booked the YHA in Edale for the weekend, two nights."),
        ("2026-03-06", "b", "Long day of meetings, the new budget is finally signed off."),
        ("2026-02-26", "c", "Cleaned the oven, finally."),
    )  # fmt: skip
    got = recall(store, embedder, "What did I do at the weekend?", k=3, now=MONDAY)
    assert got.period is not None and got.period.days == "2026-03-07 to 2026-03-08"
    assert [h.id for h in got.hits[:2]] == [
        ids["Booked the YHA in Edale for the weekend, two nights."],
        ids["Long day of meetings, the new budget is finally signed off."],
    ]


def test_a_day_typed_in_lowercase_is_still_the_users_own(store, embedder, writer):
    """A journal typed in lowercase ("i went fishing on saturday", told on the Monday) tells of the
    user's own weekend as "I went…" does; "i heard dave went…" tells of Dave's."""
    ids = _said(
        writer,
        ("2024-05-13", "a", "i went fishing with my cousin on saturday, caught nothing lol"),
        ("2024-05-14", "b", "i heard dave went to the car boot sale on saturday, got a lamp"),
        ("2024-05-11", "c", "Is Dickens worth reading if you found school English dull?"),
        ("2024-05-08", "d", "What should I get my sister for her birthday? She likes gardening."),
    )  # fmt: skip
    got = recall(store, embedder, "what did i do last weekend?", k=3, now=_at("2024-05-16"))
    assert got.period is not None and got.period.days == "2024-05-11 to 2024-05-12"
    assert [h.id for h in got.hits[:2]] == [
        ids["i went fishing with my cousin on saturday, caught nothing lol"],
        ids["Is Dickens worth reading if you found school English dull?"],
    ]


def test_the_weekend_after_an_event_finds_what_was_said_on_it(store, embedder, writer):
    """ "The weekend after the wedding": the wedding is found, and what was said that next
    Saturday and Sunday answers, though it names neither a weekend nor a wedding; an entry that
    talks of a weekend on another day does not."""
    ids = _said(
        writer,
        ("2026-06-13", "a", "Priya and Tom's wedding at the botanic gardens, danced until midnight."),
        ("2026-06-20", "b", "Drove up to the lakes with Sam, rowed out to the island."),
        ("2026-06-16", "c", "Back at work, still tired from the weekend."),
        ("2026-05-09", "d", "Quiet weekend, did the garden and watched the snooker."),
        ("2026-06-27", "e", "Cleaned out the garage, found the old wedding album."),
    )  # fmt: skip
    got = recall(store, embedder, "what did we do the weekend after the wedding?", k=3, now=_at("2026-12-01"))
    assert got.period is not None and got.period.days == "2026-06-20 to 2026-06-21"
    assert "counted from 2026-06-13" in got.period.phrase
    assert got.hits[0].id == ids["Drove up to the lakes with Sam, rowed out to the island."]


def test_an_event_told_days_later_is_counted_from_the_day_it_says(store, embedder, writer):
    """ "Home. The knee replacement was on Monday", written on the Thursday: "the week before my
    knee op" is the seven days before that Monday, not before the Thursday it was told (which
    would hold the days in hospital and miss the packing)."""
    ids = _said(
        writer,
        ("2026-05-04", "a", "Packed the hospital bag and filled the freezer with soup and stew."),
        ("2026-05-12", "b", "Hospital food is grim but the nurses are lovely, physio twice a day."),
        ("2026-05-14", "c", "Home at last. The knee replacement was on Monday and the surgeon is pleased."),
        ("2026-04-20", "d", "Pre-op assessment at the hospital, bloods and an ECG."),
    )  # fmt: skip
    got = recall(store, embedder, "what was I doing the week before my knee op?", k=3, now=_at("2026-06-01"))
    assert got.period is not None and "counted from 2026-05-11" in got.period.phrase
    assert got.period.days == "2026-05-04 to 2026-05-10"
    assert got.hits[0].id == ids["Packed the hospital bag and filled the freezer with soup and stew."]


def test_an_event_is_dated_by_its_own_sentence_and_never_after_the_question(store, embedder, writer):
    """Of an input's sentences, the one naming the event's head ("op") says its day, not one
    that dates something else by it ("home Wednesday after the op") or another thing's day
    ("the knee was bad yesterday"); a day after the question is asked (asked before the op, of
    the day after it) is not counted from: the event had not happened."""
    _said(
        writer,
        ("2026-05-13", "a", "The knee was bad yesterday. The op is on Monday, finally."),  # a Wednesday
        ("2026-05-19", "b", "Got home Wednesday after the op, on crutches now."),
        ("2026-05-12", "c", "Long walk by the canal, knee held up."),
    )  # fmt: skip
    got = recall(store, embedder, "what did I do the day after my knee op?", k=3, now=_at("2026-06-01"))
    assert got.period is not None and "counted from 2026-05-18" in got.period.phrase
    early = recall(store, embedder, "what did I do the day after my knee op?", k=3, as_of=_at("2026-05-15"))
    assert early.period is not None and "counted from 2026-05-13" in early.period.phrase


def test_an_event_is_dated_by_the_date_it_is_written_with(store, embedder, writer):
    """ "The hip op is on 24 July", written weeks ahead, and "Home. The hip op went fine" three
    days after: "the week before my hip op" is the seven days before the 24th, not before either
    day of writing (which would miss the packing)."""
    ids = _said(
        writer,
        ("2026-06-30", "a", "Letter from the hospital: the hip op is on 24 July. Relieved."),
        ("2026-07-27", "b", "Home. The hip op went fine, the surgeon is pleased. Tired."),
        ("2026-07-20", "c", "Packed the hospital bag and batch-cooked a week of dinners."),
        ("2026-06-25", "d", "Walked to the shops and back with the stick, slowly."),
    )  # fmt: skip
    got = recall(store, embedder, "what was I doing the week before my hip op?", k=3, now=_at("2026-08-10"))
    assert got.period is not None and "counted from 2026-07-24" in got.period.phrase
    assert got.hits[0].id == ids["Packed the hospital bag and batch-cooked a week of dinners."]


def test_the_days_before_an_event_to_come_count_from_its_day(store, embedder, writer):
    """Asked the day before the op, "the week before my hip op" is the week before the day the
    letter gives, which has begun; "the day after my hip op" has not, and counts from the letter."""
    ids = _said(
        writer,
        ("2026-06-30", "a", "Letter from the hospital: the hip op is on 24 July. Relieved."),
        ("2026-07-20", "c", "Packed the hospital bag and batch-cooked a week of dinners."),
        ("2026-06-25", "d", "Walked to the shops and back with the stick, slowly."),
    )  # fmt: skip
    eve = _at("2026-07-23")
    got = recall(store, embedder, "what was I doing the week before my hip op?", k=3, now=eve)
    assert got.period is not None and "counted from 2026-07-24" in got.period.phrase
    assert got.hits[0].id == ids["Packed the hospital bag and batch-cooked a week of dinners."]
    after = recall(store, embedder, "what did I do the day after my hip op?", k=3, now=eve)
    assert after.period is not None and "counted from 2026-06-30" in after.period.phrase
    # Once the op is past, a time after it counts from its day, begun or not.
    later = recall(store, embedder, "what did I do two weeks after my hip op?", k=3, now=_at("2026-07-26"))
    assert later.period is not None and "counted from 2026-07-24" in later.period.phrase


def test_a_day_far_from_the_events_telling_or_after_it_is_another_time(store, embedder, writer):
    """An op pencilled in for 9 June, "Home. The hip op went fine" on 16 July, then a follow-up
    booked for the 22nd: June is a plan that moved, far before the op was told, and the 22nd
    comes after it was told done, so the time counts from that telling."""
    _said(
        writer,
        ("2026-05-01", "a", "Rang the clinic and pencilled in 9 June for the hip op."),
        ("2026-07-16", "b", "Home from hospital. The hip op went fine, the hip op surgeon is pleased."),
        ("2026-07-17", "c", "Booked the hip op follow-up for 22 July."),
        ("2026-07-08", "d", "Packed the hospital bag and batch-cooked a week of dinners."),
    )  # fmt: skip
    got = recall(store, embedder, "what was I doing the week before my hip op?", k=3, now=_at("2026-08-10"))
    assert got.period is not None and "counted from 2026-07-16" in got.period.phrase


def test_a_plan_moved_is_dated_by_its_latest_telling(store, embedder, writer):
    """The op is on 24 July, then moved to the 25th, then "Home. The hip op went fine" on the
    27th: the day told last, the 25th, not the letter's."""
    _said(
        writer,
        ("2026-07-01", "a", "Letter from the hospital: the hip op is on 24 July."),
        ("2026-07-15", "b", "The hospital rang, op moved to 25 July."),
        ("2026-07-27", "c", "Home from hospital. The hip op went fine, the hip op surgeon is pleased."),
        ("2026-07-21", "d", "Packed the hospital bag and batch-cooked a week of dinners."),
    )  # fmt: skip
    got = recall(store, embedder, "what was I doing the week before my hip op?", k=3, now=_at("2026-08-10"))
    assert got.period is not None and "counted from 2026-07-25" in got.period.phrase


def test_another_persons_event_does_not_date_mine(store, embedder, writer):
    """Asked of "my op", the day of "Mum's op" is not read as its day: where the input names only
    hers, the time counts from the day it was said, as for any input whose day cannot be told."""
    _said(
        writer,
        ("2026-07-16", "a", "Mum's op went fine on Monday, she's home already and bossing Dad."),
        ("2026-07-10", "b", "Long walk with Mum along the river."),
    )  # fmt: skip
    got = recall(store, embedder, "what did I do the day after my op?", k=2, now=_at("2026-08-01"))
    assert got.period is not None and "counted from 2026-07-16" in got.period.phrase
    hers = recall(store, embedder, "what did I do the day after mum's op?", k=2, now=_at("2026-08-01"))
    assert hers.period is not None and "counted from 2026-07-13" in hers.period.phrase


def test_a_part_of_a_month_is_not_the_whole_month(store, embedder, writer):
    ids = _said(
        writer,
        ("2026-02-03", "a", "Signed up for the pottery course at the community centre."),
        ("2026-02-25", "b", "Went bouldering with Sunil after work, my arms are jelly."),
        ("2026-02-14", "c", "Dinner at the Thai place for Valentine's, too much chilli."),
    )
    got = recall(store, embedder, "What did I do in early February?", k=3, now=MONDAY)
    assert got.period is not None and got.period.days == "2026-02-01 to 2026-02-10"
    assert got.hits[0].id == ids["Signed up for the pottery course at the community centre."]
    late = recall(store, embedder, "what did I do in late Feb?", k=3, now=MONDAY)
    assert late.hits[0].id == ids["Went bouldering with Sunil after work, my arms are jelly."]
    assert [views.then_mark(late, h) for h in late.hits].count("said then") == 1


def test_a_time_alone_puts_what_was_said_then_before_what_was_told_later(store, embedder, writer, cli):
    ids = _said(
        writer,
        ("2025-11-01", "a", "Last night was the Halloween party, what a night."),
        ("2026-03-08", "b", "Quiz night at the Old Duke, we came second."),  # dated yesterday alone
        ("2026-03-09", "c", "Slept badly, and yesterday's quiz answers keep going round my head."),
    )  # fmt: skip
    got = recall(store, embedder, "What did I do last night?", k=3, now=MONDAY)
    order = [h.id for h in got.hits]
    quiz, party = (
        ids["Quiz night at the Old Duke, we came second."],
        ids[next(t for t in ids if "Halloween" in t)],
    )
    assert order[0] == quiz, "said last night, first"
    assert party not in order[:2], "'last night' in an old input is not what was said last night"
    assert got.period is not None and got.period.phrase == "last night" and not got.warnings
    assert views.recall_prompt_text(got).startswith(
        "The question asks about 'last night' read as 2026-03-08 18:00 to 2026-03-09 06:00 (UTC days): "
        "1 of these said then, 1 in the 3 days after.\n"
    )
    header = views.recall_prompt_text(got).splitlines()[1]
    assert "a 'said' line is the user's own words, not yet read into beliefs" in header  # not a belief
    marks = [line.split(")", 1)[0] for line in views.recall_prompt_text(got).splitlines()[2:4]]
    assert marks == ["- (said, 2026-03-08, said then", "- (said, 2026-03-09, said just after"]
    table = cli("recall", "What did I do last night?", "--as-of", "2026-03-09").stdout
    assert "Quiz night at the Old Duke, we came second." in table and "(said then)" in table
    assert table.count("(said then)") == 1 and table.count("(said just after)") == 1

    data = json.loads(cli("recall", "What did I do last night?", "--as-of", "2026-03-09", "--json").stdout)
    schema = json.loads(README.read_text().split("```json\n", 1)[1].split("\n```", 1)[0])
    jsonschema.validate(data, schema)
    assert data["period"] == {
        "phrase": "last night",
        "start": "2026-03-08T18:00:00+00:00",
        "end": "2026-03-09T06:00:00+00:00",
    }
    # An agent reads what the table marks: each hit's place against the time, and the warnings.
    assert [h["then"] for h in data["hits"]][:2] == ["said then", "said just after"]
    assert data["warnings"] == []
    later = json.loads(cli("recall", "What did I do last night?", "--as-of", "2026-03-20", "--json").stdout)
    assert later["hits"] and all(h["then"] is None for h in later["hits"])
    assert later["warnings"] == [
        "nothing found was said last night (2026-03-19 18:00 to 2026-03-20 06:00): "
        "these hits are from other days, the nearest first"
    ]


def test_a_part_of_a_day_is_its_hours_and_an_input_dated_by_day_alone_may_be_from_it(store, embedder, writer):
    ids = _said(
        writer,
        ("2026-03-08 14:00", "a", "Lunch with Priya at the noodle bar."),
        ("2026-03-08 21:30", "b", "Board games at Sam's until late."),
        ("2026-03-09 08:15", "c", "Ran 5k along the canal before work."),
        ("2026-03-09", "d", "Finished the tax return, finally."),  # today, by day alone
        ("2026-03-09 10:00", "e", "Coffee with the new team lead."),
    )
    evening = datetime(2026, 3, 9, 20, tzinfo=UTC)  # Monday evening
    morning = recall(store, embedder, "What did I do this morning?", k=5, now=evening)
    marks = {h.text: views.then_mark(morning, h) for h in morning.hits}
    said = {text for text, mark in marks.items() if mark == "said then"}
    assert said == {
        "Ran 5k along the canal before work.",
        "Finished the tax return, finally.",
        "Coffee with the new team lead.",
    }, marks
    assert views.period_note(morning) == (
        "'this morning' read as 2026-03-09 00:00 to 12:00 (UTC days): 3 of these said then"
    )
    night = recall(store, embedder, "What did I do last night?", k=5, now=evening)
    marks = {h.id: views.then_mark(night, h) for h in night.hits}
    assert marks[ids["Board games at Sam's until late."]] == "said then"
    assert marks.get(ids["Lunch with Priya at the noodle bar."], "") == "", "14:00 is not last night"
    # What is to come is the whole day: its plans are said earlier that day.
    plans = window_of("What am I doing tonight?", evening)
    today = window_of("What am I doing today?", evening)
    assert plans is not None and today is not None and (plans.start, plans.end) == (today.start, today.end)


def test_a_question_about_a_time_when_nothing_was_said_says_so(store, embedder, writer, cli):
    ids = _said(
        writer,
        ("2026-01-10", "a", "Yesterday I ate a massive burrito at the market."),
        ("2025-11-01", "b", "Last night was the Halloween party, what a night."),
        ("2026-02-21", "c", "Went for a long run by the river."),
        ("2026-01-11", "d", "Had soup for tea, couldn't face cooking."),
    )
    # Its time words are not searched: an old "last night was…" is not what was said last night.
    night = recall(store, embedder, "What did I do last night?", k=3, now=MONDAY)
    assert ids["Last night was the Halloween party, what a night."] not in [h.id for h in night.hits]
    got = recall(store, embedder, "What did I eat yesterday?", k=3, now=MONDAY)
    assert got.hits and got.warnings == [
        "nothing found was said yesterday (2026-03-08): these hits are from other days"
    ]
    prompt = views.recall_prompt_text(got)
    assert prompt.startswith(
        "The question asks about 'yesterday' read as 2026-03-08 (UTC days): nothing found was said then.\n"
    )
    # A month or a day named bare reads with its word ("said in December", not "said December").
    december = recall(store, embedder, "What did I eat in December?", k=3, now=MONDAY)
    assert [w.split(" (")[0] for w in december.warnings] == ["nothing found was said in December"]
    ninth = recall(store, embedder, "What did I eat on 2 February?", k=3, now=MONDAY)
    assert [w.split(" (")[0] for w in ninth.warnings] == ["nothing found was said on 2 February"]
    res = cli("recall", "What did I eat yesterday?", "--as-of", "2026-03-09")
    assert "nothing found was said yesterday (2026-03-08)" in res.stderr
    # The table says how it read the time, and that nothing was said then once, not twice.
    assert "'yesterday' read as 2026-03-08 (UTC days)\n" in res.stderr
    assert res.stderr.count("nothing found was said") == 1, res.stderr
    # Said in the days after, naming none of its days, is not said then: the warnings say so too,
    # where an agent reads them (they were empty when anything found was said in the three days
    # after).
    day_after = recall(store, embedder, "What did I eat on Thursday?", k=3, now=_at("2026-01-12"))
    assert day_after.warnings == [
        "nothing found was said on Thursday (2026-01-08): 2 said in the 3 days after, "
        "the rest from other days"
    ]
    data = json.loads(cli("recall", "What did I eat on Thursday?", "--as-of", "2026-01-12", "--json").stdout)
    assert data["warnings"] == day_after.warnings
    assert [h["then"] for h in data["hits"]].count("said just after") == 2
    one = recall(store, embedder, "What did I eat on Thursday?", k=1, now=_at("2026-01-12"))
    assert one.warnings == ["nothing found was said on Thursday (2026-01-08): 1 said in the 3 days after"]
    # Told the day after as done on it ("yesterday I ate…", said on the Saturday): told of then,
    # and no warning that nothing was found (the soup, said after and naming no day, is not).
    friday = json.loads(cli("recall", "What did I eat on Friday?", "--as-of", "2026-01-12", "--json").stdout)
    marks = {h["text"]: h["then"] for h in friday["hits"]}
    assert marks["Yesterday I ate a massive burrito at the market."] == "told of then"
    assert marks["Had soup for tea, couldn't face cooking."] == "said just after"
    assert friday["warnings"] == []
    table = cli("recall", "What did I eat on Friday?", "--as-of", "2026-01-12")
    assert "'on Friday' read as 2026-01-09 (UTC days): 1 told of then, 1 in the 3 days after" in table.stderr
    assert "(told of then)" in table.stdout


def test_a_question_s_days_are_the_users_days(store, embedder, writer, cli):
    """A Sydney user's Saturday-morning swim is a Friday in UTC: with `timezone` set, "on
    Saturday" means Sydney's Saturday."""
    swim = RawInput(text="Saturday morning swim at Bondi, freezing.", session="s",
                    said_at=datetime.fromisoformat("2026-11-21T08:00+10:00"))  # fmt: skip
    other = RawInput(text="Dentist on Monday, a filling.", session="t", said_at=_at("2026-11-23"))
    writer.add([swim, other], extract=False)
    tuesday = datetime.fromisoformat("2026-11-24T09:00+11:00")
    sydney = recall(
        store, embedder, "What did I do on Saturday?", k=2, now=tuesday, zone=ZoneInfo("Australia/Sydney")
    )
    assert sydney.hits[0].id == swim.id and not sydney.warnings
    utc = recall(store, embedder, "What did I do on Saturday?", k=2, now=tuesday)
    assert utc.period is not None and not utc.period.holds(swim.said_at), "a Friday in UTC days"
    assert utc.hits[0].id == other.id, "told in the days after UTC's Saturday, it comes first there"

    asked = cli(
        "recall", "What did I do on Saturday?", "--as-of", "2026-11-24", DCPM_TIMEZONE="Australia/Sydney"
    )
    assert "'on Saturday' read as 2026-11-21 (Australia/Sydney days): 1 of these said then" in asked.stderr
    bad = cli("recall", "swim", DCPM_TIMEZONE="Mars/Olympus")
    assert bad.exit_code == 2 and "an IANA time zone" in bad.stderr


def test_a_search_during_a_span_reads_the_same_from_lancedb_and_from_the_copy(store, embedder):
    days = ["2026-03-01", "2026-03-05", "2026-03-09"]
    raws = [RawInput(text=f"A note about the garden, day {d}.", session="s", said_at=_at(d)) for d in days]
    with store.write():
        store.add_raw(raws, embedder.embed([r.text for r in raws]))
    items = [
        MemoryItem(id=f"m_{n}", kind="fact", text=r.text, raw_ids=[r.id], event_at=r.said_at)
        for n, r in enumerate(raws)
    ]
    store.add_items(items, embedder.embed([i.text for i in items]))
    vector = embedder.embed(["garden"])[0]
    during = (_at("2026-03-04"), _at("2026-03-09"))  # the 9th at noon is the end: not in it
    for _ in range(6):  # LanceDB's search first, then the store's in-memory copy
        assert [r.id for r, _ in store.vector_search("raw", vector, 5, during=during)] == [raws[1].id]
        assert [r.id for r, _ in store.vector_search("items", vector, 5, during=during)] == ["m_1"]


def test_a_two_event_question_returns_both_events(store, embedder, writer):
    ids = _said(
        writer,
        ("2026-01-05", "a", "I bought a two-person tent for camping."),
        ("2026-01-05", "a", "The tent has a rain fly and it packs small."),
        ("2026-01-06", "b", "Setting up the tent in the backyard took an hour."),
        ("2026-01-07", "c", "I think the tent poles are aluminium."),
        ("2026-02-10", "d", "Picked up an inflatable kayak at the outdoor store sale."),
        ("2026-02-12", "e", "Camping checklist: sleeping bag, stove, tent stakes."),
    )
    kayak = ids["Picked up an inflatable kayak at the outdoor store sale."]
    tent = ids["I bought a two-person tent for camping."]
    result = recall(store, embedder, "Which did I buy first, the kayak or the tent?", k=2, now=MONDAY)
    assert {h.id for h in result.hits} == {kayak, tent}


def test_a_thing_named_in_a_word_the_embedder_does_not_know_brings_in_no_filler(store, embedder, writer):
    """A cue is a few words: "the Sungold" is a variety MiniLM does not know, and its best cosine
    was a filler's ("the one with the word's we've substituted", the nearest of weak ones),
    brought in among the answers. A cue's best hit is brought in only when the word search
    finds the cue's words in it (or in its passage)."""
    sungold = (
        "The Sungolds have gone absolutely mad, I've weighed 4.2 kg off the three plants so far and "
        "they keep coming. What's the best way to preserve cherry tomatoes?"
    )
    brandywine = (
        "That'd be it, I've been away a lot. The Brandywines are much slower anyway, only 2.8 kg "
        "off them so far, and a few are splitting now too."
    )
    chat = [
        "take the list of word substitutions and rewrite the prompt",
        "give me a different sentence",
        "another one",
        "try another one",
        "the one with the word's we've substituted",
        "finish your answer",
    ]
    ids = _said(
        writer,
        ("2026-07-05", "a", sungold),
        ("2026-07-20", "b", brandywine),
        *(("2026-07-21", "c", line) for line in chat),
        ("2026-07-22", "d", "what started world war 1"),
        ("2026-07-22", "d", "why was russia in the war"),
        ("2026-07-22", "d", "Continue"),
        ("2026-07-23", "e", "Booked the car in for its MOT on Friday."),
        ("2026-07-23", "e", "The plumber came about the boiler."),
    )
    question = "Which tomato has cropped better for me this season, the Sungold or the Brandywine?"
    hits = recall(store, embedder, question, k=3, now=_at("2026-08-01")).hits
    assert {h.id for h in hits} == {ids[sungold], ids[brandywine]}, [h.text for h in hits]


def test_a_thing_named_in_other_words_is_still_brought_in(store, embedder, writer):
    """ "The kayak" is the canoe the journal speaks of: no shared word, but as near as an answer
    is to its question, so the cue still brings it in among the tent's many entries (a review
    of a first version that asked for a shared word: the canoe fell out of the top 5)."""
    canoe = "Picked up a secondhand canoe from a guy in Henley."
    tent = "Bought a new tent for the festival."
    ids = _said(
        writer,
        ("2025-04-12", "a", canoe),
        ("2025-05-03", "b", tent),
        ("2025-06-21", "c", "The tent leaked in the night, everything soaked."),
        ("2025-06-28", "d", "Reproofed the tent with waterproofing spray."),
        ("2025-07-12", "e", "Tent pegs bent on the hard ground at the campsite."),
        ("2025-08-02", "f", "Lent the tent to Sara for her trip."),
        ("2025-08-30", "g", "Packed the tent away dry this time, finally."),
        ("2025-03-01", "h", "Went to bed early, shattered."),
        ("2025-09-09", "i", "Bought new socks."),
    )
    question = "Which did I buy first, the kayak or the tent?"
    hits = recall(store, embedder, question, k=5, now=_at("2026-01-15")).hits
    assert {ids[canoe], ids[tent]} <= {h.id for h in hits}, [h.text for h in hits]


def test_the_words_that_frame_a_question_find_nothing_by_themselves(store, embedder, writer):
    """ "How many weeks before…", "how old…": what kind of answer is asked for and how two things
    stand in time, no words of what it is about. Matched word for word they found the chat
    that said "before" and "weeks" most, above the exhibition (a round's fBH16: a hotel workout
    "before I head out" first, the exhibition 7th). The station, told in other words ("the
    booking hall and canopy… done"), is the embedder's to find."""
    finished = "Got the booking hall and canopy for Llanfair Road done on Saturday, roof still too clean."
    shown = "Back from Warley, we exhibited on Saturday and people loved the canopy."
    ids = _said(
        writer,
        ("2026-10-12", "a", finished),
        ("2026-11-23", "b", shown),
        ("2026-11-24", "c", "How many weeks before a half marathon should I start to taper?"),
        ("2026-11-24", "c", "I always stretch before a run, and many weeks before a race I cut back."),
        ("2026-11-25", "d", "Two weeks before the move we still had no boxes, many of them came late."),
        ("2026-11-26", "e", "How many days before the flight should I check in online?"),
        ("2026-11-26", "e", "I did push-ups before breakfast and again before bed."),
        ("2026-11-27", "f", "Bought a new kettle, the old one leaked."),
    )
    question = "How many weeks before the exhibition did I finish the station?"
    hits = recall(store, embedder, question, k=3, now=_at("2026-12-03")).hits
    assert hits[0].id == ids[shown], [h.text for h in hits]


def test_a_newer_near_duplicate_ranks_first_and_says_when(store, embedder, writer, cli):
    ids = _said(
        writer,
        ("2026-01-10", "a", "I have 1200 followers on Instagram."),
        ("2026-03-10", "b", "I have 1500 followers on Instagram now."),
        ("2026-02-10", "c", "I posted a photo of my cat."),
    )
    old, new = ids["I have 1200 followers on Instagram."], ids["I have 1500 followers on Instagram now."]
    result = recall(store, embedder, "How many followers do I have on Instagram?", k=3)
    assert [h.id for h in result.hits[:2]] == [new, old], "the change of mind: the latest first"
    assert result.hits[0].same_as == [old] and result.hits[1].same_as == [new]
    first = recall(store, embedder, "How many followers did I have on Instagram at first?", k=3)
    assert [h.id for h in first.hits[:2]] == [old, new], "asked for the first time: the earliest first"

    prompt = views.recall_prompt_text(result)
    assert "(said, 2026-03-10; the latest of 2 saying about the same) I have 1500" in prompt
    assert "(said, 2026-01-10; nearly the same said later, on 2026-03-10) I have 1200" in prompt

    data = json.loads(cli("recall", "How many followers do I have on Instagram?", "--json").stdout)
    schema = json.loads(README.read_text().split("```json\n", 1)[1].split("\n```", 1)[0])
    jsonschema.validate(data, schema)
    top = data["hits"][0]
    assert top["id"] == new and top["same_as"] == [{"id": old, "when": _at("2026-01-10").isoformat()}]
    table = cli("recall", "How many followers do I have on Instagram?").stdout
    assert "nearly the same also said 2026-01-10; newest of these" in table
    assert "nearly the same also said 2026-03-10; not the newest" in table


def test_asked_how_things_are_now_the_newer_entry_about_it_ranks_first(store, embedder, writer, cli):
    joined_text = "Auditioned for Harbour Voices, the community choir that sings on Tuesday nights. I'm in!"
    left_text = (
        "Emailed Alistair tonight to say I'm leaving Harbour Voices, the community choir. "
        "Tuesday nights were too much."
    )
    ids = _said(
        writer,
        ("2026-05-17", "a", joined_text),
        ("2026-06-02", "b", "Made a lentil shepherd's pie and Ray went back for seconds."),
        ("2026-09-17", "c", left_text),
        ("2026-09-20", "d", "Painted the porch railings a dark green."),
    )
    joined, left = ids[joined_text], ids[left_text]
    then = recall(store, embedder, "Did I sing in the choir?", k=4)
    assert [h.id for h in then.hits[:2]] == [joined, left], "the best match first, when not asked about now"
    now = recall(store, embedder, "Am I still singing in the choir?", k=4)
    assert [h.id for h in now.hits[:2]] == [left, joined], "asked about now: the latest about it first"
    assert now.hits[0].same_as == [] and now.hits[1].same_as == [], "about the same thing, not saying it"
    assert recall(store, embedder, "Am I still singing in the choir?", k=1).hits[0].id == left, "whatever k"
    table = cli("recall", "Am I still singing in the choir?").stdout
    assert table.index("leaving Harbour Voices") < table.index("Auditioned"), table


def test_asked_how_things_are_now_beliefs_keep_their_order(store, embedder):
    """Beliefs are not ordered by time as inputs are: a belief's time is when its event happened
    (a move in 2019, told in 2025), and its change of mind is its chain."""
    told_2025 = MemoryItem(
        id="f_live", kind="fact", text="Lives in a flat in Leeds, near Hyde Park.",
        event_at=_at("2019-09-01"), created_at=_at("2025-08-01"),
    )  # fmt: skip
    told_2024 = MemoryItem(
        id="f_rent", kind="fact", text="Rents a flat in Leeds, by the university.",
        event_at=_at("2024-05-01"), created_at=_at("2024-05-02"),
    )  # fmt: skip
    with store.write():
        store.add_items([told_2025, told_2024], embedder.embed([told_2025.text, told_2024.text]))
    assert [h.id for h in recall(store, embedder, "Where did I live?", k=2).hits] == ["f_live", "f_rent"]
    assert [h.id for h in recall(store, embedder, "Where do I live now?", k=2).hits] == ["f_live", "f_rent"]


def test_vectors_of_reads_the_same_from_lancedb_and_from_the_copy(store, embedder, writer):
    ids = list(
        _said(writer, *[("2026-01-01", "s", f"Note number {i} about the garden.") for i in range(4)]).values()
    )
    before = store.vectors_of("raw", [*ids[:3], "r_missing"])
    for _ in range(5):  # enough searches for the store to keep an in-memory copy
        store.vector_search("raw", embedder.embed(["garden"])[0], 3)
    after = store.vectors_of("raw", [*ids[:3], "r_missing"])
    assert set(before) == set(after) == set(ids[:3])
    for i in ids[:3]:
        assert float(before[i] @ after[i]) == pytest.approx(1.0, abs=1e-5)


def test_an_input_holding_a_rare_token_of_the_question_stays_first_among_near_duplicates(
    store, embedder, writer
):
    ids = _said(
        writer,
        ("2026-01-10", "a", "I have 1200 followers on Instagram, account ref ZX90817."),
        ("2026-03-10", "b", "I have 1500 followers on Instagram now, account ref ZX90818."),
    )
    old = ids["I have 1200 followers on Instagram, account ref ZX90817."]
    new = ids["I have 1500 followers on Instagram now, account ref ZX90818."]
    assert [h.id for h in recall(store, embedder, "Instagram followers", k=2).hits] == [new, old]
    hits = recall(store, embedder, "Instagram followers ZX90817", k=2).hits
    assert [h.id for h in hits] == [old, new], "the exact token outranks the newer near-duplicate"


def test_a_count_over_several_conversations_is_found_through_its_first_answers(store, embedder, writer):
    """The question "What is the total weight of the new feed I purchased…?" names the feed,
    and its first answer (a 50-pound batch of layer feed) ranks first; the second (the same
    farm's jam and honey, the fencing of its north pasture) shares no word and little meaning
    with the question, but much with the first. Searched again from the first answers, it is
    found.
    A LongMemEval question (unseen half `b`; MIT licence) in 18 of its haystack's 49 sessions;
    its second gold session was not in the top 10 before the feedback search, and is 3rd."""
    from dcpm_cli.bench.longmemeval import load, parse_question, raws_of

    (record,) = load(TEST_DATA / "longmemeval_feed_question.json.gz")
    question = parse_question(record)
    raws = raws_of(question)
    writer.add(raws, extract=False)
    session_of = {r.id: r.session for r in raws}

    got = recall(store, embedder, question.text, k=10, now=question.asked_at)

    sessions = list(dict.fromkeys(session_of[h.id] for h in got.hits))
    assert set(question.gold_sessions) <= set(sessions[:5]), sessions


@pytest.mark.parametrize(
    ("question", "to_assistant"),
    [
        ("Which restaurant did you recommend for our anniversary dinner?", True),
        ("I'm going back to our previous conversation about knots. Which one was for climbing?", True),
        ("Can you remind me what you said about the Library of Babel?", True),
        ("Which stretches did the assistant suggest for my knee?", True),  # an agent asking
        ("What did the AI tell me to use for blackflies?", True),  # the other side as people name it
        ("What did ChatGPT recommend for my back?", True),
        ("What did the chatbot say the water temperature is?", True),
        ("Which exercises did the AI give me for the hip?", True),
        ("Which stretch did the bot suggest for the stiff wrist?", True),
        ("how long is the bus to posadas according to the bot", True),
        ("What breathing exercise did the bot give me for swimming?", True),
        ("What did Claude say about the wedding?", False),  # a friend, as likely as a model
        ("Which bot did I use for the Discord server?", False),
        ("How much did the bot make last month?", False),
        ("What did the bot in my game say when I died?", False),
        ("according to the plan, when do we move?", False),
        ("What was the AI's accuracy in my thesis experiment?", False),
        ("What did the AI tell my son?", False),
        ("Which restaurant did I go to for our anniversary?", False),
        ("What did my assistant schedule for Monday?", False),  # a person's assistant
        ("What did the user tell the assistant about their allergies?", False),  # the user's words
        ("Where did my wife and I go after we discussed moving?", False),
        ("Did you do anything about my car insurance?", False),
    ],
)  # fmt: skip
def test_a_question_about_what_the_assistant_said_is_read_as_one(question, to_assistant):
    assert read_question(question, MONDAY).to_assistant is to_assistant


@pytest.mark.parametrize(
    ("question", "told"),
    [
        ("Where was I told to keep my emergency fund?", True),  # by someone: the AI, a doctor
        ("What was that gel I was told to use on my back?", True),
        ("Which chess books got recommended to me?", True),
        ("Where did it say to hire ski gear in Ohakune?", True),  # the other side as "it"
        ("What was that teaching method it suggested?", True),
        ("What interest rate did chat say a credit union would give me?", True),
        ("What did you recommend for the blackfly?", True),  # asking the assistant is asking what it told
        ("I got told off by my manager, when was that?", False),
        ("What did I tell Dana about the knee?", False),  # the user telling
        ("Was it raining when I got to Ohakune?", False),
        ("Which stretches did I recommend to my sister?", False),
        ("How much did it cost to fix the car?", False),
    ],
)  # fmt: skip
def test_a_question_about_what_someone_told_the_user_is_read_as_one(question, told):
    asked = read_question(question, MONDAY)
    assert asked.told is told
    assert not asked.to_assistant or told
    if told and "you" not in question:
        assert not asked.to_assistant, "who told is not said: the replies keep their weight"


def test_a_question_about_what_the_assistant_said_finds_its_reply(store, embedder, cli, tmp_path):
    chat = [
        ("02-01T19:00", "trip", "user", "Can you suggest a place for our anniversary dinner in Lisbon?"),
        (
            "02-01T19:01",
            "trip",
            "assistant",
            "For an anniversary in Lisbon, book Belcanto in Chiado, José Avillez's two-star restaurant; "
            "Alma is a fine second choice.",
        ),
        ("02-01T19:02", "trip", "user", "Thanks, that helps."),
        ("02-03T12:00", "lunch", "user", "I had lunch at a pizza place downtown with my sister."),
        ("02-03T12:01", "lunch", "assistant", "That sounds like a lovely lunch with your sister!"),
        ("02-05T09:00", "food", "user", "I love trying new restaurants when I travel."),
    ]
    lines = [{"timestamp": f"2026-{t}:00Z", "session": s, "role": r, "content": c} for t, s, r, c in chat]
    log = tmp_path / "chat.jsonl"
    log.write_text("".join(json.dumps(line) + "\n" for line in lines))
    assert cli("add", "--no-extract", "--file", str(log)).exit_code == 0
    asked = "Which restaurant did you recommend for our anniversary dinner?"
    result = recall(store, embedder, asked, k=3)
    # The reply first, and the user's asking it answered (it shares the question's words) next;
    # a note the assistant never answered ("I love trying new restaurants…") comes a step lower,
    # below even another conversation's reply.
    assert [(h.role, h.text[:43]) for h in result.hits[:2]] == [
        ("assistant", "For an anniversary in Lisbon, book Belcanto"),
        ("user", "Can you suggest a place for our anniversary"),
    ]
    prompt = views.recall_prompt_text(result)
    assert (
        '(assistant said, 2026-02-01, answering: "Can you suggest a place for our anniversary dinner in '
        'Lisbon?") For an anniversary in Lisbon'
    ) in prompt
    assert "an 'assistant said' line is the assistant's reply in a conversation, not the user's" in prompt
    data = json.loads(cli("recall", asked, "--json").stdout)
    jsonschema.validate(data, json.loads(README.read_text().split("```json\n", 1)[1].split("\n```", 1)[0]))
    first_reply = next(h for h in data["hits"] if h["role"] == "assistant")
    assert first_reply["text"].startswith("For an anniversary in Lisbon")
    assert "[assistant]" in cli("recall", asked).stdout

    # A question about the user's own life puts the user's words first: a reply that says the
    # same back ("That sounds like a lovely lunch…") comes after them, labelled as the assistant's.
    own = recall(store, embedder, "Where did I have lunch with my sister?", k=5)
    assert own.hits[0].text == "I had lunch at a pizza place downtown with my sister."
    assert own.hits[0].role == "user"
    echo = next(h for h in own.hits if h.text == "That sounds like a lovely lunch with your sister!")
    assert echo.role == "assistant" and echo.score < own.hits[0].score


def test_asked_what_someone_told_the_reply_comes_before_the_asking_and_nothing_else_moves(
    store, embedder, writer, cli
):
    """ "What exercises was I told to do for my back?" does not say who told: a reply ranks above
    the user's turn it answered (the asking tells no exercise), but keeps its weight, so the
    doctor's words in the journal keep their place."""
    chat = [
        ("06-02T19:00", "back", "user", "Put my back out lifting MDF. What exercises should I do?"),
        ("06-02T19:01", "back", "assistant", "Gentle movement helps more than bed rest: short walks, knee "
         "hugs and cat-cow stretches twice a day, and no lifting for a fortnight."),
        ("06-09T08:00", "bp", "user", "How can I lower my blood pressure?"),
        ("06-09T08:01", "bp", "assistant", "To lower blood pressure: reduce salt, exercise regularly such as "
         "walking thirty minutes a day, limit alcohol, and manage stress."),
    ]  # fmt: skip
    _chatted(cli, chat)
    note = "Dr Okafor told me to cut back on salt and walk thirty minutes a day for my blood pressure."
    doctor = _said(writer, ("2026-06-08", "j", note))[note]

    back = recall(store, embedder, "What exercises was I told to do for my back?", k=4)
    texts = [h.text for h in back.hits]
    reply = next(n for n, t in enumerate(texts) if t.startswith("Gentle movement"))
    asking = next(n for n, t in enumerate(texts) if t.startswith("Put my back out"))
    assert reply < asking, texts
    plain = recall(store, embedder, "What exercises do I do for my back?", k=4)
    plain_texts = [h.text for h in plain.hits]
    assert plain_texts.index(texts[asking]) < plain_texts.index(texts[reply]), "the asking first, unasked"

    pressure = recall(store, embedder, "What was I told to do about my blood pressure?", k=4)
    assert pressure.hits[0].id == doctor, [h.text for h in pressure.hits]


def test_what_the_assistant_told_is_found_without_asking_for_it(store, embedder, cli):
    """ "What's that underground walkway in Montreal called?" asks about a thing, not about the
    assistant, and only the assistant's reply names it: the reply is found (it was not searched
    at all). The user's own words still come first where they answer ("how much was the train?")."""
    chat = [
        ("11-01T20:00", "mtl", "user", "Noor and I are going to Montreal in November. What should we do?"),
        ("11-01T20:01", "mtl", "assistant", "If it's cold, use the RÉSO, the underground city: 32 km of "
         "tunnels linking metro stations, malls and museums downtown. For dinner, try Lola Rosa."),
        ("11-01T20:02", "mtl", "user", "We booked the VIA Rail train, $214 return each."),
        ("11-01T20:03", "mtl", "assistant", "Great, the train is the way to go: book a seat in business."),
        ("10-12T09:00", "run", "user", "Ran the waterfront trail in the rain, new 10k best."),
    ]  # fmt: skip
    _chatted(cli, chat)
    walkway = recall(store, embedder, "what's that underground walkway system in Montreal called?", k=3)
    # The user's words in that conversation share "Montreal" and come first; the answer, only
    # the assistant's, is found with them (and the run, which shares nothing, is not).
    replies = [h for h in walkway.hits if h.role == "assistant"]
    assert [h.text[:27] for h in replies] == ["If it's cold, use the RÉSO,"]
    assert {h.role for h in walkway.hits} == {"user", "assistant"}
    assert not any("waterfront" in h.text for h in walkway.hits)
    train = recall(store, embedder, "how much was the train to Montreal?", k=4)
    said = next(n for n, h in enumerate(train.hits) if "$214" in h.text)
    echo = next(n for n, h in enumerate(train.hits) if h.text.startswith("Great, the train"))
    assert said < echo, "the user's own answer before the reply that says it back"
    # The asking above it tells of Montreal, and the reply to it names nothing asked: no move.
    assert said <= 1


def test_asked_what_the_assistant_said_the_reply_takes_its_questions_place(store, embedder, cli):
    """The user's turn is worded like the question recalled ("What spray should I use on the
    blackfly…?" against "what spray did the AI recommend for blackfly…"), so it ranked above
    the reply that holds the answer (the people sets' assistant questions: MRR 0.39). Asked what
    the assistant said, the two trade places and nothing else moves; any other question leaves
    them: a turn that asks may tell the answer itself."""
    _chatted(cli, [
        ("06-14T18:00", "beans", "user", "What spray should I use on the blackfly on my broad beans?"),
        ("06-14T18:01", "beans", "assistant", "Pinch out the tips first, since the aphids cluster on the "
         "soft growth. For the rest, a soft soap product such as SB Plant Invigorator works without harming "
         "ladybirds; apply it in the evening, when the bees have gone, and repeat after a week."),
        ("08-03T09:00", "car", "user", "Rudy at the garage quoted me $860 for an alternator and a belt. Is "
         "that fair?"),
        ("08-03T09:01", "car", "assistant", "That's within the normal range for that job."),
        ("11-03T08:00", "money", "user", "I finally paid off my line of credit."),
        ("11-03T08:01", "money", "assistant", "Congratulations on paying off your line of credit!"),
    ])  # fmt: skip
    _noted(
        cli,
        ("2026-06-10", "Spotted blackfly on the broad beans at the allotment, just a few."),
        ("2026-06-20", "Blackfly back on the beans after the rain. Allotment looks sorry for itself."),
        ("2026-06-28", "Picked the first beans. The blackfly is finally gone."),
    )

    asked = "what spray did the AI recommend for blackfly on the beans"
    got = [h.text[:20] for h in recall(store, embedder, asked, k=5).hits]
    assert got[:2] == ["Pinch out the tips f", "What spray should I "]  # the asking was first
    # Whatever k is asked: they traded places among the candidates, not among the k shown.
    assert recall(store, embedder, asked, k=1).hits[0].text.startswith("Pinch out the tips")
    # As of a time before the reply, the asking keeps its place: the reply was not there then.
    then = recall(store, embedder, asked, k=2, as_of=datetime(2026, 6, 14, 18, 0, 30, tzinfo=UTC))
    assert [h.text[:20] for h in then.hits] == ["What spray should I ", "Spotted blackfly on "]
    # The reply is shown with the turn it answered: in the table, the prompt and the JSON.
    assert '(answering "What spray should I use on the blackfly' in cli("recall", asked, "-k", "3").stdout
    assert 'answering: "What spray should I use on the blackfly' in views.recall_prompt_text(
        recall(store, embedder, asked, k=3)
    )
    data = json.loads(cli("recall", asked, "-k", "5", "--json").stdout)
    jsonschema.validate(data, json.loads(README.read_text().split("```json\n", 1)[1].split("\n```", 1)[0]))
    replies = [h for h in data["hits"] if h["role"] == "assistant"]
    assert replies[0]["reply_to"]["text"] == "What spray should I use on the blackfly on my broad beans?"
    assert all(h["reply_to"] is None for h in data["hits"] if h["role"] == "user")

    # Not asked about the assistant: the turn that tells the quote keeps its place.
    quote = [h.text[:20] for h in recall(store, embedder, "what did the mechanic quote me", k=5).hits]
    assert quote[0] == "Rudy at the garage q"
    paid = recall(store, embedder, "when did I pay off my line of credit?", k=3)
    assert paid.hits[0].text == "I finally paid off my line of credit."

    # Two turns with one time, added one after the other: the reply answers the later one.
    for role, text in [
        ("user", "Also what about a tent for two?"),
        ("assistant", "For the Rockies, the MSR Hubba Hubba NX 2 stands up to wind."),
    ]:
        turn = {"timestamp": "2026-03-01T20:00:00Z", "session": "gear", "role": role, "content": text}
        assert cli("add", "--no-extract", "-", input=json.dumps(turn) + "\n").exit_code == 0
    tent = json.loads(cli("recall", "which tent did you suggest for two?", "--json").stdout)
    tent_reply = next(h for h in tent["hits"] if h["role"] == "assistant" and "Hubba" in h["text"])
    assert tent_reply["reply_to"]["text"] == "Also what about a tent for two?"


def test_asked_what_the_assistant_said_its_reply_comes_before_the_journal_on_the_same_thing(
    store, embedder, cli
):
    """A question about what the assistant said prefers its replies as one not about it prefers
    the user's words: the journal entry that wants "a proper paint set" (the people sets' "what
    paint set did the AI tell me to get?": three entries on the class above the reply) comes
    after the reply that names the set. Asked of the user's own doing, or asked to be reminded of
    what was said, the journal keeps its place."""
    _noted(
        cli,
        ("2026-02-02", "First watercolour class tonight. Borrowed Maureen's paint set, mine is a kids' one."),
        ("2026-02-09", "Watercolour class again. I need to get a proper paint set and better paper."),
        ("2026-02-16", "Painted the harbour at watercolour class, Maureen said the sky was good."),
    )
    _chatted(cli, [
        ("02-03T20:00", "paints", "user", "Started a beginners' class. What should I buy to paint at home?"),
        ("02-03T20:01", "paints", "assistant", "Get a Cotman half-pan set of 12 from Winsor & Newton: "
         "student grade, but the pigments are clean and it lasts a year. Add a size 8 round brush and "
         "a pad of 300gsm cold-pressed paper so it does not buckle."),
    ])  # fmt: skip
    got = recall(store, embedder, "what paint set did the AI tell me to get?", k=5)
    assert got.hits[0].text.startswith("Get a Cotman half-pan set")
    mine = recall(store, embedder, "when did I paint the harbour?", k=3)
    assert mine.hits[0].text.startswith("Painted the harbour")
    # Asked of a chat, not of the assistant ("remind me"), either side may hold it: level.
    assert cli("add", "--no-extract", "--at", "2026-03-01", "Said to Tom I'd never buy another combi boiler, "
               "not after the winter we had with this one.").exit_code == 0  # fmt: skip
    _chatted(cli, [
        ("03-02T10:00", "boiler", "user", "Is a system boiler better than a combi for a three-bed house?"),
        ("03-02T10:01", "boiler", "assistant", "A combi boiler heats water on demand and suits one bathroom; "
         "a system boiler with a cylinder suits two bathrooms used at once."),
    ])  # fmt: skip
    said = recall(store, embedder, "Can you remind me what I said about combi boilers?", k=3)
    assert said.hits[0].text.startswith("Said to Tom I'd never buy another combi boiler")


def test_asked_what_the_assistant_suggested_notes_it_never_answered_come_after_its_reply(
    store, embedder, cli
):
    """A user test: the journal named the cat and the illness in every entry, the chat with the
    assistant said "my cat", and "what did the assistant suggest for Pickle's kidney disease?"
    put six notes before the reply. Notes the assistant never answered come after the user's
    turns it did answer, a step below them; asked of the user's own doing, the notes lead."""
    _noted(
        cli,
        (
            "2026-09-08",
            "Took Pickle to Walthamstow Vets. Bloods show early kidney disease (CKD stage 2). Vet bill £380.",
        ),
        (
            "2026-09-22",
            "Pickle follow-up at the vet: £220 including a month of renal diet food. She hates the new food.",
        ),
        (
            "2026-11-03",
            "Pickle recheck at the vet, £95. Kidney values stable! She's finally eating the renal food.",
        ),
    )
    _chatted(cli, [
        ("09-08T21:00", "cat", "user", "My cat was just diagnosed with stage 2 kidney disease. "
         "What should I be doing at home?"),
        ("09-08T21:01", "cat", "assistant", "I'm sorry to hear that. Key things: switch gradually to a "
         "prescription renal diet, mixing it with her old food over 7-10 days; prefer wet food for "
         "hydration; get a water fountain, since many cats drink more from running water; keep up "
         "rechecks every 2-3 months."),
    ])  # fmt: skip
    got = recall(store, embedder, "What did the assistant suggest for Pickle's kidney disease?", k=3)
    assert got.hits[0].text.startswith("I'm sorry to hear that. Key things")
    mine = recall(store, embedder, "How much was Pickle's recheck at the vet?", k=3)
    assert mine.hits[0].text.startswith("Pickle recheck at the vet, £95")


def test_what_the_assistant_said_at_a_time_is_its_replies_then_before_the_journal(
    store, embedder, cli, tmp_path
):
    """ "What did the assistant say last month?" named the assistant, so it was no question about a
    time alone: "last month" was matched word for word ("Last day at Halden", January) and the
    month's journal days came first, with none of the assistant's replies (found by a user test)."""
    journal = tmp_path / "journal.md"
    journal.write_text(
        "## 2026-01-19\nLast day at Halden. Packed up my desk and said goodbye to the team.\n\n"
        "## 2026-02-02\nFirst day at Fernleaf Energy. My manager is Priya; the office is in the old mill.\n\n"
        "## 2026-02-14\nDinner with Sam at the Thai place. We talked about the summer trip.\n\n"
        "## 2026-02-21\nRan 8k in the park, felt strong. Knee held up fine.\n\n"
        "## 2026-03-03\nPriya asked me to lead the grid-storage pilot. Nervous but excited.\n"
    )
    assert cli("add", "--no-extract", "--file", str(journal)).exit_code == 0
    _chatted(cli, [
        ("02-01T20:00", "job", "user", "How should I prepare for my first week at a new job?"),
        ("02-01T20:01", "job", "assistant", "Write down names as you meet people, ask your manager what "
         "success looks like at 90 days, and book short one-to-ones with your team."),
        ("02-22T09:00", "knee", "user", "Any tips for a sore knee after running?"),
        ("02-22T09:01", "knee", "assistant", "Ice it for 15 minutes, rest a day or two, and strengthen "
         "your quads and hips; if it swells, see a physio."),
    ])  # fmt: skip
    march = _at("2026-03-12")
    for asked in (
        "what did the assistant say last month?",
        "what did the chatbot tell me in February?",
        "What did you tell me last month?",
    ):
        got = recall(store, embedder, asked, k=4, as_of=march)
        assert {h.text[:8] for h in got.hits[:2]} == {"Write do", "Ice it f"}, asked
        assert all(h.reply_to is not None for h in got.hits[:2])
    # Not naming the assistant, a month asked of alone is the user's days.
    mine = recall(store, embedder, "what did I do last month?", k=3, as_of=march)
    assert all(h.role == "user" for h in mine.hits)


def test_fewer_hits_asked_for_are_the_first_of_more_not_others(store, embedder, writer, cli):
    """A user test: "what did the assistant say last month?" with -k 10 put its replies first,
    with -k 3 or 5 showed none (a month of 30 journal lines, many saying what someone "said":
    the search of what was said then went 20 deep at k 5, 40 at k 10, and the replies lay
    between). Its replies said then are searched apart, and fewer hits are the first of ten."""
    people = ["Mum", "Ola", "Harriet", "Tariq", "Fiona", "Callum", "Ewan", "Priya", "Sam", "Jo"]
    lines = [
        (f"2026-11-{day:02d}", "", f"{people[day % 10]} said the {thing} was {how} today.")
        for day, (thing, how) in enumerate(
            [
                (t, h)
                for t in ("food", "weather", "meeting", "film", "train")
                for h in ("awful", "great", "late", "fine", "odd", "quiet")
            ],
            start=1,
        )
        if day <= 30
    ]
    _said(writer, *lines)
    _chatted(cli, [
        ("11-15T20:00", "money", "user", "Should I take Saturday locum shifts?"),
        ("11-15T20:01", "money", "assistant", "Financially yes: two shifts a month add about £280 after "
         "tax, but keep one weekend free to rest."),
        ("11-17T19:00", "climb", "user", "I started climbing, what shoes should a beginner get?"),
        ("11-17T19:01", "climb", "assistant", "Congratulations! Look at a comfortable flat-lasted shoe "
         "such as the Scarpa Origin, sized snug but not painful."),
    ])  # fmt: skip
    december = _at("2026-12-06")
    replies = {"Financia", "Congratu"}
    for k in (2, 3, 5, 10):
        got = recall(store, embedder, "what did the assistant say last month?", k=k, as_of=december)
        assert {h.text[:8] for h in got.hits[:2]} == replies, k
    for asked in ("what did Ola say about the food?", "what was late?", "what did I do last month?"):
        ten = [h.id for h in recall(store, embedder, asked, k=10, as_of=december).hits]
        for k in (1, 3, 5):
            assert [h.id for h in recall(store, embedder, asked, k=k, as_of=december).hits] == ten[:k], (
                asked,
                k,
            )


def test_a_question_naming_the_assistant_brings_in_the_reply_to_the_turn_it_finds(store, embedder, cli):
    """ "Which book did the AI suggest?" found "What book should I read…?" but not the reply to
    it, "I recommend 'Deep Work'…", which shares none of its words: the podcast reply came first
    and the book was not among ten hits (tests/data/chatpiper, seven weeks of a user test's
    journal and chat)."""
    for name in ("journal.md", "chat.jsonl"):
        assert cli("add", "--no-extract", "--file", str(TEST_DATA / "chatpiper" / name)).exit_code == 0
    for asked in ("which book did the AI suggest?", "which book did the assistant suggest?"):
        got = recall(store, embedder, asked, k=3, as_of=_at("2026-03-23"))
        deep = [n for n, h in enumerate(got.hits) if h.text.startswith("I recommend 'Deep Work'")]
        assert deep and deep[0] < 2 and got.hits[deep[0]].reply_to is not None, asked
    # Not as of a time before it was said.
    early = recall(store, embedder, "which book did the AI suggest?", k=5, as_of=_at("2026-02-04T21:00:30"))
    assert not any(h.text.startswith("I recommend 'Deep Work'") for h in early.hits)


def test_a_reply_that_matches_better_than_its_conversation_is_its_own_context(store, embedder, cli, tmp_path):
    """ "quitline number", not asked of the assistant: the reply that gives it answered "how do I
    bring it up without a fight?", which matches nothing of the question. Its context was that
    conversation (or halfway to it), while every journal entry, in no session, is its own: the
    reply came below five entries that only share the topic, "Parkrun 31:02" among them."""
    journal = tmp_path / "journal.md"
    journal.write_text(
        "# Journal\n\n"
        "## 2026-08-10\nFinn got caught vaping in the school toilets. One day of in-school suspension.\n\n"
        "## 2026-08-13\nTalked to Finn. Told him I've been vaping too and we'd quit together. "
        "Rang the Quitline, they're posting patches.\n\n"
        "## 2026-08-31\nPatches week three, no vape. Finn says he's stopped too.\n\n"
        "## 2026-09-20\nParkrun 31:02 at Cornwall Park, legs like lead.\n\n"
        "## 2026-10-02\nFinn made the basketball B team, games on Thursday nights.\n"
    )
    assert cli("add", "--no-extract", "--file", str(journal)).exit_code == 0
    _chatted(
        cli,
        [
            (
                "08-12T21:00",
                "vape",
                "user",
                "My son got caught vaping at school. How do I bring it up without a fight?",
            ),
            (
                "08-12T21:01",
                "vape",
                "assistant",
                "Be honest with him and listen before you lecture. If you both want to stop, Quitline is "
                "free on 0800 778 778 and sends patches by post.",
            ),
            ("08-12T21:02", "vape", "user", "Thanks, I'll try tonight."),
        ],
    )
    got = recall(store, embedder, "quitline number", k=5, now=_at("2026-12-01"))
    roles = [h.role for h in got.hits]
    assert "assistant" in roles[:3], [h.text[:40] for h in got.hits]
    assert roles[0] == "user", "the user's own words naming it still come first"


def test_a_reply_holding_a_word_the_user_never_said_is_found_first(store, embedder, cli):
    """A person's journal and a chat (tests/data/person, written for a user test): "Sintra" is
    only in a reply, and the user's words in its conversation ("Any day trip worth doing?")
    match the question less than the reply does. The reply came 15th, behind journal entries
    that match by meaning alone, each lifted by its passage."""
    for name in ("journal.md", "chat.jsonl"):
        assert cli("add", "--no-extract", "--file", str(TEST_DATA / "person" / name)).exit_code == 0
    got = recall(store, embedder, "What did you say about Sintra?", k=3, now=_at("2026-12-01"))
    assert got.hits[0].role == "assistant" and got.hits[0].text.startswith("Sintra is the classic day trip")
    # The user's own words that answer are found beside the replies: the entry naming the
    # sister, below the gift question (which matches "my sister" as well) and the reply to it.
    sister = recall(store, embedder, "remind me what my sister's name is", k=3, now=_at("2026-12-01"))
    assert any(h.role == "user" and "my sister Dagny" in h.text for h in sister.hits)
