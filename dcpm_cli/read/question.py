"""What a question says besides its words: when it is about, which order it wants, and which
several things it names. Rules only, no LLM: the read path never calls one.

- A time window: "last Friday", "four weeks ago", "two weekends ago", "in June", "the past
  weekend", "the last three months", "over the past month", read against the moment the
  question is asked (`dcpm recall --as-of`, or now).
  `dateparser` reads calendar phrases (imported only when the question has one: it costs ~0.2 s
  cold); counted phrases ("N units ago", "the last N units") and seasons ("last summer",
  "since the autumn"; the south's for a southern zone) are plain arithmetic, and so are named
  days ("on Christmas Eve", "over Easter", "last Thanksgiving", "two days before Christmas";
  a country's own for its zones: Canada's Thanksgiving, Britain's Mothering Sunday).
- An anchor: a time counted from an event the question names ("a week after dad's operation",
  "the day before the trip"); the read path finds the event and counts from its day: the one its
  sentence says ("the op was on Tuesday"), else the day it was said.
- An order: "first / initially / originally" wants the earliest of the memories about one
  thing, "most recently / latest / currently / these days / now" the newest.
- Cues: the things a question names when it names two or more ("Which did I buy first, the
  kayak or the tent?", "between starting the course and the exam", "X compared to Y",
  "how long did I X before I Y", two quoted titles). Each cue is searched on its own, so one
  event's strong match cannot crowd the other out of the top k.
"""

from __future__ import annotations

import calendar
import dataclasses
import itertools
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta, tzinfo

from dcpm_cli.read import named_days

NEWEST, EARLIEST = "newest", "earliest"

_NUMBERS = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
    "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "a couple of": 2, "couple of": 2,
    "a couple": 2, "couple": 2, "a few": 3, "few": 3, "several": 4,
}  # fmt: skip
# Counts said roughly ("a few days after": a day either side), not exactly ("two days after").
_ROUGH = {"a couple of", "couple of", "a couple", "couple", "a few", "few", "several"}
_UNIT_DAYS = {"day": 1, "week": 7, "fortnight": 14, "month": 30, "year": 365}
_COUNT = (
    r"(\d+|a couple of|couple of|a couple|couple|a few|few|several|an?|"
    + "|".join(list(_NUMBERS)[2:14])
    + ")"
)
_AGO = re.compile(rf"\b{_COUNT}\s+(day|week|fortnight|month|year)s?\s+ago\b", re.I)
_LAST_N = re.compile(rf"\b(?:the\s+)?(?:last|past|previous)\s+{_COUNT}\s+(day|week|month|year)s\b", re.I)
# "the past month", "over the previous week", "the last year": the one unit before the question,
# not a calendar period ("last month" without "the" is April when asked in May: dateparser's).
_PAST_ONE = re.compile(r"\b(?:(?:the\s+)?(?:past|previous)|the\s+last)\s+(day|week|month|year)\b", re.I)
# "last weekend", "this past weekend", "the weekend just gone" (the last one)
_WEEKEND = re.compile(
    r"\b(?:(last|(?:this\s+)?past|previous|this)\s+weekend(?:\s+just\s+gone)?|the\s+weekend\s+just\s+gone)\b",
    re.I,
)
# A time to come, counted from today: "tomorrow", "next week" (Monday to Sunday), "next weekend"
# (next week's), "next month", "next Friday" (next week's Friday).
_NEXT = re.compile(r"\b(?:(tomorrow|tmrw|tmr)|next\s+(week|weekend|month|monday|tuesday|wednesday|"
                   r"thursday|friday|saturday|sunday))\b", re.I)  # fmt: skip
# "over the weekend"; "at / on the weekend" only in a question about the past, asked as one
# ("what did I do at the weekend?", not "what do I do at the weekend?", a habit, nor "did I
# mention what I do at the weekend?"): the latest weekend.
_THE_WEEKEND = re.compile(
    r"(?:\bover\s+the\s+weekend\b"
    r"|^\W*(?:what|where|who|how|which)\b[^?.!]*?\bdid\s+(?:I|we)\b[^?.!]*?\b(?:at|on)\s+the\s+weekend\b"
    # "did I do anything at the weekend?" (not "did I mention what I do at the weekend?", "did I
    # ever go hiking on the weekend?", "did we agree to meet at the weekend?"), "how was my
    # weekend?" (the whole question: not "how was the weekend in Paris in June?")
    r"|^\W*did\s+(?:I|we)\s+(?!(?:tell|mention|say|agree|ever|promise|plan|arrange|decide|want|need|"
    r"remember|forget|ask|hear|like|love|use|usually|always|often)\b)"
    r"(?![^?.!]*(?:\b(?:I|we|you|he|she|they|is|are|am|was|were|will|would|going)\b|['’](?:re|d|ll|m|s)\b))"
    r"[^?.!]*?\b(?:at|on)\s+the\s+weekend\b"
    r"|^\W*how\s+was\s+(?:my|our|the)\s+weekend(?=\W*$))"
    r"(?!\s+of\b)",
    re.I,
)
# "The weekend of the 7th", "over the weekend of 7 March": the weekend nearest that day (its own,
# on a Saturday or Sunday), the day read as "on the 7th" would be.
_WEEKEND_OF = re.compile(r"(?:\b(?:on|over|at|for|during)\s+)?\bthe\s+weekend\s+of\s+", re.I)
_BEFORE_LAST = re.compile(r"\bthe\s+(week|weekend)\s+before\s+last\b", re.I)
_DAY_BEFORE_YESTERDAY = re.compile(r"\bthe\s+day\s+before\s+yesterday\b", re.I)
# Not "the last night of the trip", "my last night in Rome".
_LAST_NIGHT = re.compile(r"(?<!\bthe\s)(?<!\bmy\s)(?<!\bour\s)(?<!\bher\s)(?<!\bhis\s)\blast\s+night\b", re.I)
# A part of a day, in a question about the past ("what did I do this morning?"); asked of
# what is to come ("what am I doing tonight?") it is the whole day, when plans for it are said.
_PART_OF_DAY = re.compile(r"\b(?:(this|yesterday)\s+(morning|afternoon|evening)|(tonight))\b", re.I)
_HOURS = {"morning": (0, 12), "afternoon": (12, 18), "evening": (18, 24), "tonight": (18, 24)}
_MONTHS = "january|february|march|april|june|july|august|september|october|november|december"
# "Nov", "Sept.": with a day or a year, or after "in" / "of" ("Jan" alone may be a name).
_ABBR = "jan|feb|mar|apr|jun|jul|aug|sept|sep|oct|nov|dec"
_MONTH_NAME = rf"(?:{_MONTHS}|may|{_ABBR})"  # ("may" bare: the callers say where it is a month)
# "early September", "mid-October", "the end of November": a third of the month, not all of it
# (days 1–10, 11–20, 21 to the end).
# Not "late March 3rd" (a day: "did I work late"), nor "stay out late in May".
_PART_OF_MONTH = re.compile(
    rf"\b(?:(early|mid|late)[\s-]+|the\s+(start|beginning|middle|end)\s+of\s+)"
    rf"({_MONTH_NAME}\.?(?:,?\s+(?:19|20)\d{{2}})?)\b(?![\s,]*\d)",
    re.I,
)
# A season: "this summer", "last winter", "over the summer", "in the spring of 2025", "since
# the autumn" (from its start to now). Meteorological seasons, three whole months each, in the
# user's hemisphere (south for the zones below); not a name ("the 'Summer Nights' festival").
# A season's name used as a word of a thing ("the winter tyres", "spring rolls", "the summer
# house") is not a time: after it may come only the end, a year, "'s", or a word that is no noun.
_SEASON = re.compile(
    r"\b(?:(since)\s+)?"
    r"(?:(this|last|past|previous)\s+|(in|over|during|through)\s+(?:the\s+)?|(?<=since )the\s+)?"
    r"(spring|summer|autumn|fall|winter)\b(?:\s+(?:of\s+)?((?:19|20)\d{2})\b)?"
    r"(?=['’]s\b|\s*[,.;:?!)]|\s*$|\s+(?:holidays?|break|vacation|months|term|and|or|but|so|when|while|"
    r"before|after|with|for|at|in|on|to|of|i|we|my|our|did|was|were|had|have|has|is|then|last|this)\b)",
    re.I,
)
_SEASON_NAMED = re.compile(
    r"\b(?:(?:this|last|past|previous|the)\s+)?(?:spring|summer|autumn|fall|winter)(?:\s+(?:of\s+)?(?:19|20)\d{2})?\b",
    re.I,
)
_SEASON_START = {"spring": 3, "summer": 6, "autumn": 9, "fall": 9, "winter": 12}  # the north's
_SOUTH = ("Australia/", "NZ", "Antarctica/", "Pacific/Auckland", "Pacific/Chatham", "Pacific/Fiji",
          "America/Argentina/", "America/Buenos_Aires", "America/Santiago", "America/Montevideo",
          "America/Asuncion", "America/Sao_Paulo", "Africa/Johannesburg", "Africa/Maputo",
          "Africa/Windhoek", "Indian/Mauritius", "Indian/Reunion")  # fmt: skip
_THIRDS = {"early": 0, "start": 0, "beginning": 0, "mid": 1, "middle": 1, "late": 2, "end": 2}
_WEEKDAYS = "monday|tuesday|wednesday|thursday|friday|saturday|sunday"
# A month's or a weekday's name: what is left of a time after "since" in a piece of a question.
_DAY_NAMES = frozenset(f"{_MONTHS}|may|{_ABBR}|{_WEEKDAYS}".split("|"))
# "two weekends ago" (the weekend before last), "three Saturdays ago": counted back from the
# last one gone by.
_WEEKENDS_AGO = re.compile(rf"\b{_COUNT}\s+(weekend|{_WEEKDAYS})s?\s+ago\b", re.I)
# "this Friday": the one just gone in a question about the past ("what did I do this Friday?",
# asked on Sunday), else the coming one; "this past Friday": the one just gone.
_A_WEEKDAY = re.compile(rf"on\s+(?:{_WEEKDAYS})", re.I)  # "on Saturday", a calendar phrase alone
_HABIT = re.compile(r"s?\s+(?:mornings|afternoons|evenings|nights)\b", re.I)  # ("on Saturday mornings")
_THIS_WEEKDAY = re.compile(rf"\bthis\s+(past\s+)?({_WEEKDAYS})\b", re.I)
# "Any plans for Saturday?": asked of a plan, the coming one (not "for Saturday's party").
_FOR_WEEKDAY = re.compile(rf"\bfor\s+({_WEEKDAYS})\b(?!['’]s\b)", re.I)
# A weekday naming a date ("on Friday, March 13th", "Friday 13 March"): the date decides.
_WEEKDAY_OF_DATE = re.compile(
    rf"\b(?:on\s+)?(?:{_WEEKDAYS}),?\s+(?:the\s+)?"
    rf"(?=\d{{1,2}}(?:st|nd|rd|th)?\s+(?:of\s+)?(?:{_MONTHS}|may)\b|(?:{_MONTHS}|may)\s+\d)",
    re.I,
)
# A weekday naming a day of its month, no month said ("on Friday the 19th", "Fri 19th"): the
# latest such day gone by, in a plan the coming one, not the last Friday ("sat", "sun" and "wed"
# are words too). Only where a time ends, as a day of the month's (`_TIME_ENDS`, below).
_WEEKDAY_ABBR = ("mon", "tue", "tues", "thu", "thur", "thurs", "fri")
_WEEKDAY_NTH = (
    rf"({_WEEKDAYS}|{'|'.join(_WEEKDAY_ABBR)})\.?,?\s+"
    r"(?:the\s+(\d{1,2})(?:st|nd|rd|th)?|(\d{1,2})(?:st|nd|rd|th))\b(?!\s+of\b)"
)
# A year ("in 2025", "during 2024", "since 2025"): only where a time ends, as a season's does (a
# number that size after "in" may be an amount, "in 2000 euros", a house, "in 2019 Elm Street",
# or a title, "published in 1984 by Orwell"); not someone's birth or a work's publishing.
_YEAR_AFTER = (
    r"(?=['’]s\b|\s*[,.;:?!)]|\s*$|\s+(?:and|or|but|so|when|while|before|after|with|for|at|in|on|to|of|i|"
    r"we|my|our|did|was|were|had|have|has|is|then|compared|versus|vs|than|through|until|till|what|how)\b)"
)
_YEAR = re.compile(
    r"(?<!\bborn )(?<!\bpublished )(?<!\breleased )(?<!\bfounded )"
    r"\b(?:(since)|in|during|throughout)\s+((?:19|20)\d{2})\b" + _YEAR_AFTER,
    re.I,
)
_YEARS_JOINED = frozenset(
    re.findall(r"\S+", "and or to through until till compared with versus vs than in during")
)
_A_MONTH = re.compile(rf"\b{_MONTH_NAME}\b", re.I)
_MONTH_WORD = rf"{_MONTH_NAME}\.?"
_MONTH_PHRASE = rf"(?:(?:early|mid|late)[\s-]+)?{_MONTH_WORD}"  # ("March", "early March", "mid-March")
_NEXT_BEFORE = re.compile(r"\b(?:next|coming)\s+$", re.I)  # "next March", "this coming May"
_LAST_BEFORE = re.compile(r"\blast\s+$", re.I)
# A day of the month alone ("what did I do on the 13th?", "since the 2nd"): the latest gone by,
# in a plan the coming one; read only when the question names no other time ("on the 3rd in
# January", "last month on the 3rd": that month's, read as the month); not a month's ("the 13th
# of May"), a habit ("on the 1st of the month"), a place in a row ("on the 3rd floor", "on the
# 2nd try": only where a time ends, as a year's does), nor a bare "13th".
# (where a time ends, or a range goes on: "on the 10th-12th")
_TIME_ENDS = _YEAR_AFTER[:-1] + r"|\s*[-–—]\s*(?:the\s+)?\d)"
_NTH = rf"the\s+(\d{{1,2}})(?:st|nd|rd|th)\b(?!\s+(?:of\b|{_MONTH_NAME}\b)){_TIME_ENDS}"
_DAY_OF_MONTH = re.compile(rf"(?:(?<=\bon )|(?<=\bsince )|(?<=\bbetween )|(?<=\bfrom )){_NTH}", re.I)
_NTH_DAY = re.compile(rf"\b{_NTH}", re.I)  # what is left of one after "since" ("since the 2nd")
# A date in numbers after "on", "since", "from" or "between", where a time ends ("on 13/10", "since
# 13.10.", "from 2025/10/13"): day and month in the order the numbers tell (one over 12), else
# the user's (`date_order`), else none. Read only when no other time is named ("from 9.30 to 5.30
# yesterday"); not a decimal or a clock ("on 2.5 mg", "since 3.30": a dot only with a year or
# closing dot), a ratio, fraction or score ("on 18/6 fasting", "3/4 of the cake", "won 3/1"),
# nor the idioms 24/7 and 9/11.
_NUMBERS_DATE = (
    r"(?!24/7\b)(?!9/11\b)"
    r"(?:(\d{4})([/.])(\d{1,2})\2(\d{1,2})"
    r"|(\d{1,2})(/)(\d{1,2})(?:/(\d{4}|\d{2}))?"
    r"|(\d{1,2})(\.)(\d{1,2})(?:\.(\d{4}|\d{2})|\.(?!\d)))"
    rf"(?![\d/.]*\d){_YEAR_AFTER}"
)
_DATE_AFTER = ("on", "since", "from", "between")  # the words a date in numbers is read after


def _after(words: Sequence[str]) -> str:
    """A lookbehind for any of `words` and a space."""
    return "|".join(rf"(?<=\b{w} )" for w in words)


_NUMERIC_DATE = re.compile(rf"(?:{_after(_DATE_AFTER)}){_NUMBERS_DATE}", re.I)
# (after "on", "since", "from" or "between": "did I watch Friday the 13th?" is a film)
_WEEKDAY_AND_NTH = re.compile(rf"(?:\bon\s+|{_after(_DATE_AFTER[1:])})" + _WEEKDAY_NTH + _TIME_ENDS, re.I)
_WEEKDAY_AND_NTH_AFTER = re.compile(r"(?:on\s+)?" + _WEEKDAY_NTH + _TIME_ENDS, re.I)  # (the second of two)
_NUMERIC_DATE_AFTER = re.compile(_NUMBERS_DATE, re.I)  # the second of two joined ("13/10 or 14/10")
# A day and a month's name ("on 31 June", "on the 30th of February", "since June 31st"): whether
# the month has it.
_NAMED_MONTH_DAY = re.compile(
    rf"(?:{_after(_DATE_AFTER)})(?:(?:the\s+)?(\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?({_MONTHS}|may|{_ABBR})"
    rf"|({_MONTHS}|may|{_ABBR})\.?\s+(?:the\s+)?(\d{{1,2}})(?:st|nd|rd|th)?(?![\d/.:]))\b",
    re.I,
)
_ISO_DAY = re.compile(rf"(?:{_after(_DATE_AFTER)})(\d{{4}})-(\d{{1,2}})-(\d{{1,2}})\b")  # "on 2026-06-30"
_MONTH_NUMBER = {
    name: n
    for n in range(1, 13)
    for name in (calendar.month_name[n].lower(), calendar.month_abbr[n].lower(), "sept" * (n == 9))
}
# A day of a month named by where it stands ("the 2nd of this month", "the 5th of next month",
# "since the 13th of last month").
_NTH_OF_MONTH = re.compile(
    r"\bthe\s+(\d{1,2})(?:st|nd|rd|th)?\s+of\s+(this|last|next|the\s+previous|the\s+next|the\s+coming)\s+month\b",
    re.I,
)
# Two times joined into one span: "on the 13th and the 14th", "between March 3 and March 6",
# "from 3 to 6 October", "October 3-6", "on the 13th or the 14th" (unsure which).
_JOINED = re.compile(r"\s*,?\s*(and|or|to|until|till|through|thru|-|–|—)\s*(?:on\s+)?(?:the\s+)?", re.I)
_LISTED = re.compile(r"\s*(,)\s*(?:on\s+)?(?:the\s+)?")  # a time of a list ("May, June and July")
_ENDS = re.compile(r"\s*(?:[?.!;:)]|$)")  # where a question or a clause ends
_LISTED_BEFORE = re.compile(r"\b(\d{1,2})(?:st|nd|rd|th)?\s*,\s*(?:the\s+)?$", re.I)  # ("3, 4 and 5 March")
_FIRST_OF_TWO = re.compile(
    r"\b(\d{1,2})(?:st|nd|rd|th)?\s*,?\s*(and|or|to|until|till|through|thru|-|–|—)\s*(?:the\s+)?$", re.I
)
# A date in numbers as a piece of a question says one, for what it names beside a time ("between
# 13/10 and 16/10": no two events); a price, a score or a ratio stays a word ("2.99 or 3.49").
_A_NUMERIC_DATE = re.compile(
    rf"(?:^|{_after((*_DATE_AFTER, 'and', 'or', 'to', 'until', 'till'))}){_NUMBERS_DATE}", re.I
)
# The second of two days joined: "the 14th", "14th", a bare "6" only after a dash ("October 3-6";
# "on the 3rd till 11" is a clock, "on the 3rd and 4 days later" no day).
_LATER_DAY = re.compile(
    rf"(?:{_NTH}|(\d{{1,2}})(?:st|nd|rd|th)\b{_TIME_ENDS}|(\d{{1,2}})\b(?![/.:]?\d){_TIME_ENDS})", re.I
)
_MONTH_AFTER = re.compile(  # a month joined after another ("April and May", "Oct 3 to Oct 6")
    rf"{_MONTH_WORD}(?:\s+\d{{1,2}}(?:st|nd|rd|th)?)?(?:,?\s+(?:19|20)\d{{2}})?\b", re.I
)
_WEEKDAY_AFTER = re.compile(rf"(?:on\s+)?({_WEEKDAYS})\b", re.I)
_NOW_AFTER = re.compile(r"now\b", re.I)  # ("yesterday", "today": calendar phrases)
# (and "what have I got on the 8th?", "I've got … planned": what is had now, not a perfect;
# "have I got the receipt from the 3rd?" is of a day gone)
_GOT_ON = r"\b(?:have\s+(?:I|we)|(?:I|we)(?:'ve|’ve))\s+got\s+(?:on|planned|booked|lined\s+up|coming\s+up)\b"
_PRESENT = re.compile(rf"\b(?:do|does|am|are|is)\s+(?:I|we)\b|\bwhat(?:'s|’s|s|\s+is)\b|{_GOT_ON}", re.I)
_ANY_YEAR = re.compile(r"\b(?:19|20)\d{2}\b" + _YEAR_AFTER, re.I)  # "in 2024 or 2025": both
_HAVE_DONE = re.compile(r"\b(?:have|has|'ve)\s+\w+|\b(?:I|we)'ve\b", re.I)
# "'d" after a question word and before its subject is "did" ("where'd we go this weekend?",
# "what'd mum say?"), but "would" before "be" or a liking ("where'd be good?", "how'd you like
# to…"); after a person, "would" or "had" ("I'd like", "we'd booked").
_WH_D = (
    r"\b(?:what|where|when|how|why|who)['’]d"
    r"(?=\s+(?!(?:be|like|love|prefer|rather)\b)\w+\b)(?!\s+\w+\s+(?:like|love|prefer|rather)\b)"
)
_WH_DID = re.compile(_WH_D, re.I)
_ASKS_ABOUT_PAST = re.compile(r"\b(?:did|was|were|had|happened|went)\b", re.I)
_SINCE = re.compile(r"\bsince\s+(?:the\s+)?$", re.I)  # right before a calendar phrase
# Words of a plan, told in the past tense too ("I was thinking of repainting the hall this
# weekend", "did I book a table for this weekend?", "what was the plan for…").
_PLANS = re.compile(
    r"\b(?:plan|plans|planned|planning|book|booked|booking|thinking|hoping|going(?!\s+on\b)|meaning|meant|want|"
    r"wanted|wanting|supposed|intend|intended|scheduled|arranged|due|will|would|'ll|am|are|i'm|we're)\b"
    r"|\b['’]d\b",  # (would or had: a question's "did" is spelt out first, `_did`)
    re.I,
)
# What is on at a time, asked in the present: a time to come ("what's happening in March?",
# "what's on in May?"; not a habit, "what do I eat in March?").
_WHATS_ON = re.compile(
    r"\bwhat(?:['’]s|\s+is)\s+(?:happening|on|coming\s+up|going\s+on|planned|booked)\b", re.I
)
# A time to come named by no day, asked of alone ("what have I got coming up?", "what's ahead?",
# "any plans?"): the days ahead, COMING_DAYS of them, for the plans told that name one.
_COMING_UP = re.compile(
    r"\b(?:coming\s+up|upcoming|in\s+the\s+pipeline|on\s+the\s+horizon"
    r"|(?<=what['’]s\s)ahead|(?<=what\sis\s)ahead|(?<=what\slies\s)ahead|(?:days|weeks|months)\s+ahead)\b"
    r"|^\W*(?:(?:got\s+)?any|what\s+are\s+(?:my|our))\s+plans(?=\W*$)",
    re.I,
)
COMING_DAYS = 365
# A plan that holds, right before its day ("is dinner still on 20/12?", "still on for the 20th";
# not a state, "is Tom still on the team from 3/2?").
_STILL_ON = re.compile(rf"\bstill\s+on\s+(?:for\s+)?(?=(?:the\s+)?\d|{_MONTH_NAME}\b)", re.I)
# Calendar phrases dateparser reads. "May" only with a day, a preposition, "next" or "last": "May
# I…" is a verb.
_CALENDAR = re.compile(
    rf"\b(?:(?:last|past|previous|this)\s+(?:week|month|year|{_WEEKDAYS})"
    rf"|yesterday|today|tonight|this morning|this afternoon|this evening"
    rf"|(?:on|last|this|past)\s+(?:{_WEEKDAYS})|(?:(?<=since )|(?<=from )|(?<=between ))(?:{_WEEKDAYS})"
    rf"|\d{{1,2}}(?:st|nd|rd|th)?\s+(?:of\s+)?(?:{_MONTHS}|may)(?:,?\s+\d{{4}})?"
    rf"|(?:{_MONTHS}|(?<=in |on )may|(?<=since )may|(?<=from )may|(?<=between )may"
    rf"|(?<=next |last )may|(?<=coming )may)"
    rf"(?:\s+\d{{1,2}}(?:st|nd|rd|th)?)?(?:,?\s+\d{{4}})?"
    rf"|may\s+\d{{1,2}}(?:st|nd|rd|th)?(?:,?\s+\d{{4}})?|may,?\s+\d{{4}}"
    # An abbreviation is a month after "on / in / since" ("Did I lend Jan 2000 euros?", "the kids
    # of Jan", "Jan's car" are not), or after a day; a bare weekday only after "since".
    rf"|\d{{1,2}}(?:st|nd|rd|th)?\s+(?:of\s+)?(?:{_ABBR})\.?(?:,?\s+(?:19|20)\d{{2}})?"
    rf"|(?:(?<=on )|(?<=in )|(?<=since )|(?<=from )|(?<=between ))"
    rf"(?:{_ABBR})\.?(?:\s+\d{{1,2}}(?:st|nd|rd|th)?)?"
    rf"(?:,?\s+(?:19|20)\d{{2}})?(?!['’])"
    rf"|\d{{4}}-\d{{2}}-\d{{2}})\b",
    re.I,
)
# A question of what the user said: "what did I tell Maya", "did i text her", "what did Ana and I
# talk about", "remind me what I said"; not "what did Ana tell me", "did I go", nor "I talked to
# the doctor, what did she say?", "when I told Maya…, what did she say?" (the user's saying told,
# not asked of).
_SAYING = (
    r"say|tell|ask|answer|reply|write|text|message|email|call|mention|promise|suggest|recommend|advise|"
    r"(?:counter-?)?offer|propose|quote|give|invite|remind|warn|explain|confirm|admit|complain|agree|send|"
    r"talk|chat|discuss"
)
_SAID = (
    r"said|told|asked|answered|replied|wrote|texted|messaged|emailed|called|mentioned|promised|suggested|"
    r"recommended|advised|(?:counter-?)?offered|proposed|quoted|gave|invited|reminded|warned|explained|"
    r"confirmed|admitted|complained|agreed|sent|talked|chatted|discussed"
)
SAYING = rf"{_SAYING}|{_SAID}"  # the verbs of saying, any tense but "-ing"
_I_SPOKE = re.compile(
    rf"\b(?:did|do|have|had|didn't|haven't)\s+(?:\w+\s+and\s+)?I\s+(?:(?:ever|just|last|first|already)\s+)?"
    rf"(?:{_SAYING}|{_SAID})\b|\b(?:what|which)\s+I\s+(?:{_SAID})\b",
    re.I,
)
# A month's name is a person's where only a person's stands: after "did", "with", "tell"… ("what
# did April say?", "climbing with June", "what did I tell August?"), or before what a person
# says or has ("April said", "June and I", "April's birthday"); elsewhere it is the month ("in
# April", "plans for April", "how was August?", "March to May", "April's rent").
_A_PERSON_BEFORE = frozenset(
    re.findall(
        r"\S+",
        "with tell told ask asked text texted call called message messaged meet met invite invited visit "
        "visited see saw promise promised owe owed lend lent pay paid get got give gave buy bought send "
        "sent thank thanked",
    )
)
# What comes from a person, not from a month ("what did I hear from June about the flat?", "a
# text from April"; "from June to August" is the months).
_FROM_A_PERSON = frozenset(
    re.findall(
        r"\S+",
        "hear heard hearing text texts message messages call calls email emails letter letters note notes "
        "card cards gift gifts present presents news reply replies get got received receive",
    )
)
_PERSON_DOES = (  # what a person does that a month does not
    r"say|said|says|tell|told|tells|think|thinks|thought|want|wants|wanted|know|knows|knew|like|likes|"
    r"liked|love|loves|loved|call|called|calls|text|texted|texts|ring|rang|reply|replied|mention|"
    r"mentioned|ask|asked|suggest|suggested|recommend|recommended|agree|agreed"
)
_A_PERSON_AFTER = re.compile(
    rf"\s+(?:and\s+(?:I|me)\b|(?:{_PERSON_DOES})\b)"
    r"|['’]s\s+(?:new\s+|old\s+)?(?:birthday|address|number|phone|partner|boyfriend|girlfriend|husband|"
    r"wife|mum|mom|dad|mother|father|sister|brother|son|daughter|kids?|baby|dog|cat|job|boss|wedding)\b",
    re.I,
)
# A recurring time of the day or week, as shifts are named ("nights", "night shifts", "lates",
# "weekends", "nights on the ward"), is no one event: "sleep through the day after nights" counts
# from none of them, and the day after whichever mention of nights the store holds is no time of
# the question. (Other bare plurals may name one: "finals", "the day before school starts".)
_KIND = re.compile(
    r"(?:(?:night|day|late|early|long|double|split|weekend)\s+)?"
    r"(?:nights|days|mornings|afternoons|evenings|weekends|weekdays|lates|earlies|shifts|nightshifts)"
    r"(?:\s+(?:on|at|in|with)\b.*)?",
    re.I,
)
# A time counted from an event the question names: "about a week after dad's operation", "two
# days before the trip", "the day after the concert", "the weekend after Easter". Its date is the
# event's, found in the store (read/recall.py) or the calendar's; not "the day before
# yesterday", "the week before last", "the weekend after next" (times of their own), nor "the
# day after that" (no event named).
_ANCHORED = re.compile(
    rf"\b(?:(?:about|around|roughly|nearly|almost|some|just|exactly)\s+)?"
    rf"(?:the\s+(day|weekend|week|month)|{_COUNT}\s+(day|week|fortnight|month)s?)\s+(after|before)\s+"
    rf"(?!(?:yesterday|last|today|tonight|tomorrow|next|then|that|this|it)\b)([^,;:?!.]*\w)",
    re.I,
)
_EARLIEST = re.compile(r"\b(?:first|initially|originally|earliest|at first|to begin with)\b", re.I)
_NEWEST = re.compile(
    r"\b(?:most recent(?:ly)?|latest|last time|currently|current|these days|nowadays|right now|"
    r"now(?!\s+that\b)|any more|anymore|still"
    # "right now" as texted, at the end ("who's my boss rn"; not "RN", a nurse)
    r"|(?-i:rn)(?=\W*$)"
    # at the end only: not "at the moment the power went out", "is my commute any longer since…"
    r"|(?:at the moment|at present|any longer)(?=\W*$)"
    # "when did I last go", not "how long did I last at that job" nor "where was I last weekend"
    r"|(?:did|do|have|had)\s+(?:I|we)\s+last(?!\s+(?:at|for|in|with|long|through|until|the|a|that|this)\b)"
    # ("when was I last at the dentist?", "…in Paris?": a place, the latest time there)
    r"|(?:was|were)\s+(?:I|we)\s+last(?!\s+(?:for|long|through|until|the|a|that|this|week|weekend|"
    rf"month|year|night|summer|winter|spring|autumn|fall|{_WEEKDAYS})\b))\b",
    re.I,
)
# How far back a question looks ("so far", "lately"): its scope, as the words above are its order.
_SCOPE = re.compile(r"\b(?:so far|lately|recently|ever|yet|to date|up to now|until now)\b", re.I)
# What kind of answer it asks for, a count, an age, a span ("how many weeks", "how old", "how
# long"), and how two things it names stand in time ("before", "after"): no words of what it is about.
_FRAME = re.compile(
    r"\bhow\s+(?:long|old|far|often|soon|(?:many|much)"
    # a unit followed by the rest of the frame ("how many weeks before…", "how many days did…"),
    # not one that is the thing asked of ("how many days off do I have left?")
    r"(?:\s+(?:days|weeks|months|years|hours|minutes|times)(?=\s+(?:before|after|since|until|ago|did|do|does|"
    r"have|has|had|was|were|is|are|will|would)\b))?)\b"
    # (not "the after-school club", nor a question's last word: "who did I look after?")
    r"|(?<!-)\b(?:before|after|since|until)\b(?!-|\W*$)",
    re.I,
)
# Either, as BM25 leaves them out (`matched_words`): one pass, so a match's place is the question's.
_ORDER_OR_SCOPE = re.compile(f"{_NEWEST.pattern}|{_EARLIEST.pattern}|{_SCOPE.pattern}|{_FRAME.pattern}", re.I)

# The other side of a chat as people name it: "the AI", "the chatbot", "the bot".
_THE_AI = r"\bthe\s+(?:ai|a\.i\.|(?:chat\s?)?bot)"
# A question about what the other side of a chat said ("what did you recommend", "what the
# assistant suggested", "what did the AI tell me"): the assistant's turns hold the answer, not
# the user's.
_BY_ASSISTANT = re.compile(
    r"\byou(?:'ve|'d)?\s+(?:(?:had|have|just)\s+)?(?:said|told|mentioned|recommended|suggested|gave|"
    r"given|provided|listed|shared|explained|wrote|written|came up with|offered|described|proposed|"
    r"made|did)\b"
    r"|\bdid\s+you\s+(?:say|tell|mention|recommend|suggest|give|provide|list|share|explain|write|"
    r"come up with|offer|describe|propose|make|call|name)\b"
    # an agent asking on the user's behalf: "what did the assistant recommend…?"
    r"|\bthe\s+assistant(?:'s\b|\s+(?:said|told|mentioned|recommended|suggested|gave|provided|listed|"
    r"shared|explained|wrote|offered|described|proposed|made|say|tell|mention|recommend|suggest|give|"
    r"provide|list|share|explain|write|offer|describe|propose|make)\b)"
    # a person naming the other side as people do: "what did the AI tell me…?", "what did
    # ChatGPT recommend…?", "which stretch did the bot suggest…?", "according to the bot" (not
    # "the bot made", "the AI's accuracy", "the AI told my son"; nor "Claude" or "Gemini": a
    # friend's name, a sign)
    rf"|(?:{_THE_AI}|\bchat\s?gpt)\s+(?:said|say|mentioned|mention|recommended|"
    r"recommend|suggested|suggest|listed|explained|explain|offered|described|describe|proposed|"
    r"(?:told|tell)\s+(?:me|us))\b"
    rf"|\bdid\s+{_THE_AI}\s+(?:give|list)\b"
    rf"|\baccording\s+to\s+(?:{_THE_AI}|the\s+assistant|chat\s?gpt)\b",
    re.I,
)
# Or asks of a chat without naming who said it: what either side said may answer ("remind me
# what I said on Tuesday", "in our previous conversation, which knot was for climbing?").
_OF_A_CHAT = re.compile(
    r"\bour\s+(?:previous|last|earlier|past)\s+(?:conversations?|chats?|discussions?)\b|\bremind\s+me\b", re.I
)
# A question about what someone told the user, not naming who ("where was I told to keep my
# emergency fund?", "which books got recommended to me?", "what was that method it suggested?",
# "what rate did chat say…?"): the assistant, a doctor, a letter. Not what the user told: so a
# reply that ranks below the user's turn it answered trades places with it (`_answers_first`),
# but replies keep their weight, since the answer may be the doctor's words in a journal.
_TOLD = re.compile(
    r"\b(?:was|were)\s+(?:I|we)\s+(?:told|advised)\b"
    r"|\b(?:I|we)\s+(?:was|were|got)\s+(?:told|advised)\b(?!\s+off\b)"
    r"|\b(?:got|was|were)\s+(?:recommended|suggested)\s+to\s+(?:me|us)\b"
    r"|\bdid\s+(?:it|chat)\s+(?:say|tell|mention|recommend|suggest|give|list)\b"
    r"|\bit\s+(?:said|mentioned|recommended|suggested|listed|(?:told|gave)\s+(?:me|us))\b",
    re.I,
)
# A request for something to do, not a question of memory ("can you recommend a game I could play
# this weekend?", "any ideas for a gig while I'm in Glasgow next month?", "what should I cook
# tonight?"): a time to come in it is the suggestion's, and what the user likes was said whenever.
_ASKS_ADVICE = re.compile(
    r"\b(?:can|could|would|will)\s+you\s+(?:please\s+)?(?:recommend|suggest|think\s+of|give\s+me\s+(?:some\s+)?"
    r"(?:ideas|tips|advice|suggestions))\b"
    # (asked of the assistant, not "did the doctor give me any advice on Monday?")
    r"|(?:^\W*(?:got\s+)?|\byou\s+(?:have|got)\s+)any\s+(?:\w+\s+)?(?:ideas|suggestions|recommendations|tips|advice)\b"
    # (not "what should I have bought…", nor a plan's own things: "what should I bring tomorrow?")
    r"|\bwhat\s+(?:should|could|can)\s+(?:I|we)\b(?!\s*(?:have|'ve)\b|\s+(?:bring|pack|take|remember)\b)"
    r"|\bwhat\s+would\s+you\s+(?:recommend|suggest)\b"
    r"|^\W*(?:recommend|suggest)\s+(?:me\s+)?(?:a|an|some|something|somewhere)\b",
    re.I,
)
_SAID_PAST = re.compile(r"\b(?:last|ago|past|previous|yesterday|earlier|before)\b", re.I)
# The user telling of something done ("…like the one we had on Saturday?", "what I said on Monday"):
# the time is of that, the memory's ("read", "paid" and "kept" too: after "I" in a question, pasts;
# not "I need").
_DID = re.compile(rf"\b(?:I|we)\s+(?:(?![a-z]*eed\b)\w+ed|{named_days.TOLD_PAST}|read|paid|kept)\b", re.I)

# Cue rules, tried in order; each gives the pieces it names.
_QUOTED = re.compile(r"[\"'‘“]([^\"'’”]{3,}?)[\"'’”](?=[\s,.?!]|$)")
# "Which came first, A or B?"; after a question's own words, a colon or a dash: "Which did I do
# first: A or B?", "which came first — A or B?" (not "So: did we go to Cornwall or Devon?", "at
# 7:30 or 8")
_CHOICE = re.compile(r",\s*(.+?)\s*,?\s+or\s+(.+?)\s*[?.!]*$", re.I)
_CHOICE_AFTER = re.compile(
    r"^\W*(?:which|what|who|where|when)\b[^,:;?–—]*?(?::\s|\s[–—-]\s)\s*(.+?)\s*,?\s+or\s+(.+?)\s*[?.!]*$",
    re.I,
)
_BETWEEN = re.compile(r"\bbetween\s+(.+?)\s+and\s+(.+?)\s*[?.!]*$", re.I)
_COMPARED = re.compile(r"^(.+?)\s*,?\s+(?:compared (?:to|with)|versus|vs\.?)\s+(.+?)\s*[?.!]*$", re.I)
_BEFORE_AFTER = re.compile(
    r"^(.+?)\s+(?:(?:before|after)(?:\s+or\s+(?:before|after))?|since|until|by the time)\s+(.+?)\s*[?.!]*$",
    re.I,
)
# "Which of the grandkids did I look after most recently?", "the dog named after my uncle": a
# verb's "after", not a time between two things.
_PHRASAL_AFTER = re.compile(r"\b(?:look|looks|looked|looking|named)\s+after\b", re.I)
# "Did I quit pottery or the gym first?": the verb is said once and goes with both things.
_VERB_CHOICE = re.compile(
    r"^\W*(?:did|have|had)\s+(?:I|we)\s+(\w+(?:\s+(?:to|at|in|on|with|for|up|out|off|into)){0,2})\s+(.+?)\s+or\s+(.+?)\s+(?:first|earlier|sooner)\s*[?.!]*$",
    re.I,
)
# A sentence ends at . ! or ? and space, or at a line's end; not at a title or an initial ("the
# Sunday mass at St. Mary's Church", "Mr. Gillespie", "J. Smith").
SENTENCE_END = re.compile(
    r"(?<=[.!?])(?<!\bDr\.)(?<!\bMr\.)(?<!\bMrs\.)(?<!\bMs\.)(?<!\bSt\.)(?<!\bMt\.)(?<!\bProf\.)"
    r"(?<!\bvs\.)(?<!\b[A-Z]\.)\s+|\n+"
)
_INVERTED = re.compile(r"^(.+?)\s+(?:did|do|does|had|have|was|were)\s+(?:I|we)\s+(.+)$", re.I)
# "…a week before my trip did I book the hotel?": the event ends where the question's verb comes.
_INVERTED_TAIL = re.compile(r"\s+(?:did|do|does|had|have|was|were)\s+(?:I|we)\b.*$", re.I)
_LEAD = re.compile(
    r"^(?:how (?:many|much|long)(?:\s+(?:days|weeks|months|years|hours|minutes|times|time))?"
    r"|which|what|who|when|where|did|do|does|is|was|were)\b[\s,]*",
    re.I,
)
_STOP = frozenset(
    re.findall(
        r"\S+",
        "a an the i me my we our you your it its this that these those of to in on at for with from by "
        "and or but did do does done have has had was were is are be been being how many much long what "
        "which who when where why first before after since until days weeks months years time times take "
        "took more less passed gone elapsed it's i've i'd i'm there their them they he she his her him",
    )
)

# What any question about a time may say besides it: "what did I do / get up to / say / write",
# "what happened", "how was I feeling", "anything on", "tell me about".
_ANY_DOING = _STOP | frozenset(
    re.findall(
        r"\S+",
        "doing happen happened happening up get got getting go going went say said saying tell told "
        "talk talked talking mention mentioned write wrote written note noted journal journaled log "
        "text texted texting message messaged call called ring rang phone phoned email emailed chat chatted "
        "speak spoke "
        "logged remember recall think thought feel felt feeling anything something everything stuff "
        "all about so far whole can could would will you please remind show list again oh hey hi "
        "ok okay so just also then last past previous next night morning afternoon evening over during "
        "around through throughout",
    )
)

# The other side of a chat by its names (`_BY_ASSISTANT`): in a question naming it as the one who
# said something, who said it, not what was said.
_THE_OTHER_SIDE = frozenset(("assistant", "ai", "a.i", "chatbot", "bot", "chat", "chatgpt"))

# What a question asking only what was done or said at a time says besides the time: not a kind
# of thing, a feeling ("how was I feeling"), a place ("where did I go") or another person ("what
# did she do").
# Asked of a time to come, the words of a plan are no more than "what did I do" ("what am I doing
# on 8 July?", "what's on tomorrow?", "what have I got planned next week?").
_PLANNING = frozenset(
    re.findall(
        r"\S+",
        "any am are i'm i’m we're we’re what's what’s whats plan plans planned planning booked scheduled "
        "arranged lined diary calendar agenda coming lies",
    )
)
_BARE_DOING = frozenset(
    re.findall(
        r"\S+",
        "a an the i me my we our us it this that of to in on at for with from by and or but did do does "
        "done doing have has had was were is are be been being what when how happen happened happening up "
        "get got getting say said saying write wrote written note noted journal journaled log logged "
        "anything something everything stuff all about so far whole can could would will you please "
        "remind show list again oh hey hi ok okay just also then last past previous over during "
        "around through throughout",
    )
)


@dataclass(frozen=True)
class Window:
    """When a question is about: said in [start, end) gets the boost."""

    start: datetime
    end: datetime
    phrase: str
    # A part of one day ("this morning", "last night"): that day's noon, where an input dated by
    # its day alone is stored (its time of day unknown, it may be from this part of it).
    noon: datetime | None = None
    # A named day ("Christmas"): its name is searched too, as what was said of it names it.
    named: bool = False
    # Asked on the day it begins or before ("what am I doing on 8 July?", "…today?"): what was
    # planned for it is told before.
    ahead: bool = False

    def holds(self, when: datetime, tail: timedelta) -> bool:
        """Said in the window, or soon after it: people tell what happened a little later."""
        return self.start <= when < self.end + tail or when == self.noon

    @property
    def said_when(self) -> str:
        """The phrase as it reads after "said": a month or a year said bare "in" it ("in
        March", "in June and July"), a day "on" it ("on 8 July", "on the 20th", "on Friday the
        13th"); "last week", "yesterday", "in 2025" as they are."""
        if re.match(
            rf"{_MONTH_PHRASE}(?:\s+(?:and|to|or)\b|,?\s+(?:19|20)\d\d\b|,|$)|(?:19|20)\d\d(?![-/.]\d)",
            self.phrase,
            re.I,
        ):
            return f"in {self.phrase}"
        if re.match(rf"\d|the\s+\d|(?:{_WEEKDAYS})\b|{_MONTH_PHRASE}\s+\d", self.phrase, re.I):
            return f"on {self.phrase}"
        return self.phrase


@dataclass(frozen=True)
class Anchor:
    """A time counted from an event ("a week after dad's operation"): the days `first` to
    `last` (both in) after the event's day (`window`'s `said`), negative before it; with `weekend`, the
    Saturday and Sunday among them ("the weekend after Easter": the first weekend after the
    day, "the weekend before": the last one before it)."""

    event: str
    first: int
    last: int
    phrase: str
    weekend: bool = False

    def days(self, day: date) -> tuple[int, int]:
        """The first and last day counted from `day` (the event's), both in."""
        if not self.weekend:
            return self.first, self.last
        saturdays = [n for n in range(self.first, self.last) if (day + timedelta(days=n)).weekday() == 5]
        saturday = saturdays[0] if self.first > 0 else saturdays[-1]
        return saturday, saturday + 1

    def window(self, said: datetime, zone: tzinfo = UTC) -> Window:
        """The window, counted from `said` (the event's day: the one it is said to have been, else
        when it was told) in `zone`'s days."""
        day = said.astimezone(zone).replace(hour=0, minute=0, second=0, microsecond=0)
        first, last = self.days(day.date())
        return Window(day + timedelta(days=first), day + timedelta(days=last + 1), self.phrase)


@dataclass
class Question:
    text: str
    window: Window | None = None
    order: str | None = None  # NEWEST | EARLIEST | None
    cues: list[str] = field(default_factory=list)  # two or more, or none
    to_assistant: bool = False  # asks what the assistant said: its turns are searched too
    anchor: Anchor | None = None  # a time counted from an event: its window once the event is found
    told: bool = False  # asks what someone told the user (the assistant, or another)
    by_assistant: bool = False  # names the assistant as the one who said it: its turns first
    # The names it gives of people whose turns the store holds ("what did Ana say on Tuesday?"):
    # who said it, not what was said (set by the read path, which knows the store's speakers).
    people: frozenset[str] = frozenset()
    # A date in numbers that reads two ways, the user's order unknown ("on 3/4"): read as none.
    two_ways: str = ""
    # A date no calendar has ("on 31/2", "on 31 June"), as written: read as none.
    no_day: str = ""
    # The name the user goes by in their chats (the `me` setting; set by the read path).
    me: str = ""

    @property
    def asks_what_i_said(self) -> str:
        """The user's chat name when the question asks what the user said ("what did I tell
        Maya?", "what did Ana and I talk about?"), else ""."""
        return self.me if self.me and _I_SPOKE.search(self.text) else ""

    @property
    def search_text(self) -> str:
        """What is searched: a question about a time alone without its time phrase ("last
        night" must not find an old "last night was the party"), else the question."""
        if self.window is not None and self.only_time and not self.window.named:
            rest = self.text.replace(self.anchor.phrase if self.anchor else self.window.phrase, " ")
            if re.search(r"\w", rest):
                return " ".join(rest.split())
        return self.text

    @property
    def words(self) -> str:
        """What is matched word for word (BM25): the search text without the words that say
        which end of a history is asked for or how far back (`matched_words`)."""
        return matched_words(self.search_text)

    @property
    def only_time(self) -> bool:
        """The question asks about a time and nothing else ("What did I do last weekend?",
        "what happened yesterday?"): what was said then is the answer, whatever its words."""
        if self.window is None:
            return False
        if self.anchor is not None:
            # "What good news did I get a week after dad's operation?": the event gave the time,
            # and what was said then answers, whatever its words ("Got the offer!!").
            return True
        rest = self.text.replace(self.window.phrase, " ")
        # ("What did the assistant say last month?": the one named as saying it is no content.)
        bare = (_ANY_DOING | _THE_OTHER_SIDE if self.by_assistant else _ANY_DOING) | self._named
        if self.window.ahead:
            bare |= _PLANNING
        return not any(w not in bare for w in _words(_without_time(rest)))

    @property
    def only_when(self) -> bool:
        """Asks what was said or done at a time and nothing more ("what did I do two weekends
        ago?", "what happened yesterday?", "remind me what I said on Tuesday"): no kind of thing,
        no feeling, no place, no one else but a person of the chats asked of by name ("what did
        Ana say on Tuesday?"), no event to count from, no named day; not what the assistant or
        another told. Beside the time, an input's words say nothing of whether it answers."""
        if self.window is None or self.anchor is not None or self.window.named:
            return False
        if self.by_assistant or (self.told and not self.to_assistant):
            return False
        rest = self.text.replace(self.window.phrase, " ")
        return not any(w not in _BARE_DOING | self._named for w in _words(_without_time(rest)))

    @property
    def _named(self) -> frozenset[str]:
        return frozenset(_words(" ".join(self.people)))


def read_question(text: str, now: datetime, zone: tzinfo = UTC, date_order: str = "") -> Question:
    """The time window, wanted order and cues of a question asked at `now`, and whether it asks
    what the assistant said (or what someone told the user); its days are `zone`'s (the user's:
    "yesterday" in Sydney ends ten hours before UTC's), a date in numbers read in `date_order`
    where its numbers do not tell ("on 3/4")."""
    text = _did(text)
    by_assistant = bool(_BY_ASSISTANT.search(text))
    to_assistant = by_assistant or bool(_OF_A_CHAT.search(text))
    told = to_assistant or bool(_TOLD.search(text))
    asked = Question(
        text, order=order_of(text), to_assistant=to_assistant, told=told, by_assistant=by_assistant
    )
    if (anchor := anchor_of(text)) and (day := _holiday_anchor(anchor, now, zone)):
        # "Two days before Christmas": a named day needs no search for its date.
        return dataclasses.replace(asked, window=anchor.window(day, zone))
    if anchor:
        # The event is searched for its date (read/recall.py), not as a second thing asked.
        return dataclasses.replace(asked, anchor=anchor)
    window = window_of(text, now, zone, date_order)
    if (
        window
        and not to_assistant
        and _ASKS_ADVICE.search(text)
        and not _SAID_PAST.search(window.phrase)
        and not _DID.search(_clause_of(text, window.phrase))
    ):
        # the time of what is to be suggested ("…for my day off on Thursday?"), not of anything
        # said; one said to be past, or of what the user did then, is the memory's ("…like the
        # film I saw last Friday?", "…like the wine we had on Saturday?"; not "I caught a cold,
        # can you suggest what to eat tomorrow?")
        window = None
    if window is not None and window.start >= _day_start(now.astimezone(zone)):
        window = dataclasses.replace(window, ahead=True)  # (today's too: "what am I doing today?")
    coming = _COMING_UP.search(text)
    if (
        window is not None
        and coming
        and window.phrase == coming.group(0)
        and not dataclasses.replace(asked, window=window).only_time
    ):
        window = None  # a thing to come ("where is my upcoming exam?"), not the time asked
    two_ways = (
        ""
        if window or date_order
        else next((m.group(0) for m in _NUMERIC_DATE.finditer(text) if _reads_two_ways(m)), "")
    )
    no_day = "" if window else no_such_day(text)
    return dataclasses.replace(asked, window=window, cues=cues_of(text), two_ways=two_ways, no_day=no_day)


def no_such_day(text: str) -> str:
    """The first date `text` names that no calendar has, as written ("31/2" and "2/30", read
    either way round, "31 June", "February 30th"), or "": a slip the user is told of, not a time.
    Numbers that are no day and month at all ("50/50", "13/13") are no date, not a slip."""
    for m in _NUMERIC_DATE.finditer(text):
        if re.match(r"\s+of\b", text[m.end() :]):
            continue  # a share ("on 31/2 of the budget")
        if m.group(1):
            year, days = int(m.group(1)), [(int(m.group(4)), int(m.group(3)))]
        else:
            a, b, written = _numbers(m)
            if min(a, b) < 1 or max(a, b) > 31 or min(a, b) > 12:
                continue
            year = (int(written) + (2000 if len(written) == 2 else 0)) if written else 0
            days = [(a, b), (b, a)]  # (both ≤ 12: a day either way; else the numbers tell)
        if not any(_a_day(year, month, day) for day, month in days):
            return m.group(0)
    for m in _NAMED_MONTH_DAY.finditer(text):
        day, name = (m.group(1), m.group(2)) if m.group(1) else (m.group(4), m.group(3))
        if not _a_day(0, _MONTH_NUMBER[name.lower()], int(day)):
            return m.group(0)
    for m in _ISO_DAY.finditer(text):
        if not _a_day(int(m.group(1)), int(m.group(2)), int(m.group(3))):
            return m.group(0)
    if (nth := _WEEKDAY_AND_NTH.search(text)) and not 1 <= int(nth.group(2) or nth.group(3)) <= 31:
        return nth.group(0)  # ("on Friday the 32nd")
    return ""


def _a_day(year: int, month: int, day: int) -> bool:
    """Whether a calendar has the `day`th of `month` (in `year`, or any: the 29th of February)."""
    return 1 <= month <= 12 and 1 <= day <= calendar.monthrange(year or 2024, month)[1]


def matched_words(text: str) -> str:
    """`text` without the words that say which end of a history it asks for or how far back
    ("what is my current 5K PB?", "how many pages have I written so far?", "when did I first…"):
    those are read as an order (`order_of`), and matched word for word they find any input that
    says "my current job" or "two so far", whatever it is about. Meaning (the vector) keeps them.
    A capital after the first word is a name and stays ("did Ever call?", "did I hear back from
    Current?"); a question left with nothing to match ("who is ever?") is matched whole."""

    def drop(m: re.Match[str]) -> str:
        return m.group(0) if m.group(0)[0].isupper() and re.search(r"\w", text[: m.start()]) else " "

    left = " ".join(_ORDER_OR_SCOPE.sub(drop, text).split())
    return left if content_words(left) else text


def content_words(text: str) -> set[str]:
    """The words of `text` that are not function words, question words or times."""
    return {w for w in _words(_without_time(text)) if w not in _STOP}


def anchor_of(text: str) -> Anchor | None:
    """A time the question counts from an event it names ("two weeks before my trip"), or None."""
    m = _ANCHORED.search(text)
    if m is None:
        return None
    the_unit, count, unit, direction, event = m.groups()
    event = _clean(_INVERTED_TAIL.sub("", event))
    if not _content(event) and _named_day(event) is None:
        return None
    if _KIND.fullmatch(event):
        return None  # "the day after nights": a recurring time, not one event to count from
    sign = 1 if direction.lower() == "after" else -1
    said = m.group(0)
    phrase = said[: said.rfind(event) + len(event)].strip()
    if the_unit and the_unit.lower() == "weekend":  # its Saturday and Sunday in the 8 days next to it
        return Anchor(event, 1 if sign > 0 else -8, 8 if sign > 0 else -1, phrase, weekend=True)
    if the_unit:  # "the week after the wedding": the seven days next to it
        length = _UNIT_DAYS[the_unit.lower()]
        return Anchor(event, 1 if sign > 0 else -length, length if sign > 0 else -1, phrase)
    # "two weeks after": around the fourteenth day, half a unit either side ("a few days": one)
    days = _count(count) * _UNIT_DAYS[unit.lower()] * sign
    slack = _UNIT_DAYS[unit.lower()] // 2 or int(count.lower() in _ROUGH)
    return Anchor(event, days - slack, days + slack, phrase)


# -- time ----------------------------------------------------------------------------------


def _did(text: str) -> str:
    """`text` with a question's "'d" that is "did" spelt out ("where'd we go?": "where did we
    go?", its words framing it as theirs do; `_WH_D`)."""
    return _WH_DID.sub(lambda m: f"{m.group(0)[:-2]} did", text)


def window_of(text: str, now: datetime, zone: tzinfo = UTC, date_order: str = "") -> Window | None:
    """The first time phrase of `text` as a window, read against `now` (aware) in `zone`'s
    days: the window's ends are `zone`'s midnights; with a second time joined to it ("on the
    13th and the 14th", "between March 3 and March 6"), from the first to the end of the
    second. `date_order` ("dmy", "mdy"): how to read a date in numbers its numbers do not tell."""
    now, text = now.astimezone(zone), _did(text)
    if (m := _WEEKEND_OF.search(text)) and (weekend := _weekend_of(text, m, now, zone, date_order)):
        return weekend  # (else "the weekend of climbing in May": May)
    w = _first_window(text, now, zone, date_order)
    return _months_to_come(text, _through(text, w, now, date_order), now) if w is not None else None


def _weekend_of(text: str, m: re.Match[str], now: datetime, zone: tzinfo, date_order: str) -> Window | None:
    """ "The weekend of the 7th": the Saturday and Sunday nearest the day `text` names after it,
    read as "on the 7th" is (a day of the weekend names its own); None where it names no day."""
    day = _first_window(text[: m.start()] + " on " + text[m.end() :], now, zone, date_order)
    if day is None or day.end - day.start != timedelta(days=1):
        return None
    saturday = day.start + timedelta(days=(5 - day.start.weekday() + 3) % 7 - 3)
    return Window(saturday, saturday + timedelta(days=2), m.group(0).strip() + " " + day.phrase)


def _first_window(text: str, now: datetime, zone: tzinfo, date_order: str) -> Window | None:
    if (m := _NTH_OF_MONTH.search(text)) and (day := _nth_of_month(m, now)):
        return _since(text, m, day, now) or Window(day, day + timedelta(days=1), m.group(0))
    named = _WEEKDAY_OF_DATE.search(text)
    if named and (date := _CALENDAR.match(text, named.end())) and (w := _calendar(date.group(0), now)):
        return dataclasses.replace(w, phrase=named.group(0) + w.phrase)
    if (m := _WEEKDAY_AND_NTH.search(text)) and not 1 <= int(m.group(2) or m.group(3)) <= 31:
        return None  # "on Friday the 32nd": no day, not last Friday (`no_such_day`)
    if (
        m
        and not _A_MONTH.search(text)
        and not _DAY_OF_MONTH.search(text, 0, m.start())  # ("from the 12th to Sunday the 14th")
        and (day := _weekday_nth(m, now, ahead=_asks_ahead(text, m)))
    ):
        return _since(text, m, day, now) or Window(day, day + timedelta(days=1), m.group(0))
    if m := _AGO.search(text):
        n, unit = _count(m.group(1)), m.group(2).lower()
        if unit == "fortnight":  # as wide as "two weeks ago"
            n, unit = 2 * n, "week"
        days = n * _UNIT_DAYS[unit]
        half = timedelta(days=max(1.0, _UNIT_DAYS[unit] / 2, days * 0.15))
        centre = now - timedelta(days=days)
        return Window(centre - half, min(centre + half, now), m.group(0))
    if (m := _WEEKENDS_AGO.search(text)) and _count(m.group(1)) > 0:
        return _weekends_ago(m, now)
    if m := _LAST_N.search(text):
        days = _count(m.group(1)) * _UNIT_DAYS[m.group(2).lower()]
        return Window(now - timedelta(days=days), now, m.group(0))
    if m := _PAST_ONE.search(text):
        return Window(now - timedelta(days=_UNIT_DAYS[m.group(1).lower()]), now, m.group(0))
    if m := _BEFORE_LAST.search(text):
        if m.group(1).lower() == "weekend":
            saturday = _last_weekend(now) - timedelta(days=7)
            return Window(saturday, saturday + timedelta(days=2), m.group(0))
        monday = _day_start(now) - timedelta(days=now.weekday() + 14)
        return Window(monday, monday + timedelta(days=7), m.group(0))
    if m := _DAY_BEFORE_YESTERDAY.search(text):
        day = _day_start(now) - timedelta(days=2)
        return Window(day, day + timedelta(days=1), m.group(0))
    if m := _LAST_NIGHT.search(text):
        yesterday = _day_start(now) - timedelta(days=1)  # from yesterday 18:00 to 06:00 today
        return _part_of(yesterday, 18, 30, m.group(0))
    if (m := _PART_OF_DAY.search(text)) and _ASKS_ABOUT_PAST.search(text):
        day = _day_start(now) - timedelta(days=1 if (m.group(1) or "").lower() == "yesterday" else 0)
        first, last = _HOURS[(m.group(2) or m.group(3)).lower()]
        return _part_of(day, first, last, m.group(0))
    if (m := _NEXT.search(text)) and not _SINCE.search(text, 0, m.start()) and not _NTH_OF_MONTH.search(text):
        return _next(m, now)
    if m := _THE_WEEKEND.search(text):
        saturday = _last_weekend(now, this=True)
        phrase = re.search(r"(?:(?:over|at|on)\s+the|my|our|the)\s+weekend", m.group(0), re.I)
        return Window(saturday, saturday + timedelta(days=2), phrase.group(0) if phrase else m.group(0))
    if m := _WEEKEND.search(text):
        today = _day_start(now)
        saturday = _last_weekend(now, this=True)  # (the one that last began: this one on Sat/Sun)
        # Asked on a weekday, "this weekend" is the coming one; asked of what was done, the one
        # just gone ("what did I do this weekend?"), as for "this Saturday", unless it asks of a
        # plan ("did I book a table for this weekend?", "what was the plan…").
        just_gone = _ASKS_ABOUT_PAST.search(text) and not _PLANS.search(text)
        which = "last" if m.group(0).lower().endswith("gone") else m.group(1).lower()
        if which == "this" and today.weekday() < 5 and not just_gone:
            saturday += timedelta(days=7)
        elif which != "this" and today.weekday() >= 5:
            saturday -= timedelta(days=7)  # asked during a weekend: "last weekend" is the one before
        # ("since last weekend": from it until now)
        return _since(text, m, saturday, now) or Window(saturday, saturday + timedelta(days=2), m.group(0))
    if (m := _FOR_WEEKDAY.search(text)) and _asks_ahead(text, m) and not _HABIT.match(text, m.end()):
        return _coming(now, _WEEKDAYS.split("|").index(m.group(1).lower()), m.group(0))
    if m := _THIS_WEEKDAY.search(text):
        today = _day_start(now)
        weekday = _WEEKDAYS.split("|").index(m.group(2).lower())
        if not (m.group(1) or (_ASKS_ABOUT_PAST.search(text) and not _PLANS.search(text))):
            return _coming(now, weekday, m.group(0))
        day = today - timedelta(days=(today.weekday() - weekday) % 7 or (7 if m.group(1) else 0))
        return Window(day, day + timedelta(days=1), m.group(0))
    about_past = bool(_ASKS_ABOUT_PAST.search(text) or _HAVE_DONE.search(text))
    holiday = next(named_days.as_time(text), None)
    long = next(named_days.as_time(text, named_days.LONG_WEEKEND), None)
    # A year said apart names which ("in 2024, what did we do for Christmas?", "…in March?").
    year = _year_apart(text)
    of_day = _holiday(holiday, now, zone, about_past=about_past, year=year) if holiday else None
    weekend = _long_weekend(long, now, zone, about_past=about_past) if long else None
    # The month of "the Fourth of July", "the late May bank holiday" is the named day's, taken as
    # a time or not ("what were our plans for the Fourth of July?" is not all July); but where
    # the days are unknown (the August long weekend of a country this has no calendar of), the
    # month is what is known.
    unknown = {m.span() for m, w in ((holiday, of_day), (long, weekend)) if m and w is None}
    spans = [
        m.span()
        for p in (named_days.HOLIDAY, named_days.LONG_WEEKEND)
        for m in p.finditer(text)
        if m.span() not in unknown
    ]

    def apart(m: re.Match[str]) -> bool:
        return not any(a <= m.start() < b for a, b in spans)

    part = next((m for m in _PART_OF_MONTH.finditer(text) if apart(m)), None)
    if part and (month := _calendar(part.group(3), now)):
        third = _THIRDS[(part.group(1) or part.group(2)).lower()]
        start = month.start + timedelta(days=10 * third)
        end = month.end if third == 2 else month.start + timedelta(days=10 * third + 10)
        return _since(text, part, start, now) or Window(start, end, part.group(0))  # "since early March" too
    for m in filter(apart, _calendar_phrases(text)):
        # A date the question holds is nearer than a named day ("on the 23rd, before Christmas"),
        # but a year names which one ("Christmas Day last year", "Christmas this year").
        w = _calendar(m.group(0), now)
        if w is not None and year and _A_MONTH.search(m.group(0)) and not re.search(r"\d{4}", m.group(0)):
            w = dataclasses.replace(_calendar(f"{m.group(0)} {year}", now) or w, phrase=m.group(0))
        elif (
            w is not None
            and _A_WEEKDAY.fullmatch(m.group(0))
            and _asks_ahead(text, m)
            and not _HABIT.match(text, m.end())
        ):
            # "what am I doing on Saturday?", "what's happening on Friday?": the coming one
            # (today's too), as "this Saturday" in a plan
            w = _coming(now, w.start.weekday(), m.group(0))
        elif w is not None and _a_day_to_come(m, w, text, now):
            # "what am I doing on 8 July?", "is dinner still on 3 July?": the coming one, as "on
            # 8/7" and "on the 8th" in a plan
            w = dataclasses.replace(
                _calendar(f"{m.group(0)} {w.start.year + 1}", now) or w, phrase=m.group(0)
            )
        if w is not None and (since := _since(text, m, w.start, now)):
            return since  # "since January", "since last week"
        if holiday is None or w is None or w.end - w.start < timedelta(days=365):
            return w
        if of_year := _holiday(holiday, now, zone, about_past=True, year=w.start.year):
            if of_year.start > now:
                return None  # "what did I do at Christmas this year?" in March: none yet
            return dataclasses.replace(of_year, phrase=f"{of_year.phrase} {w.phrase}")
        return w
    if of_day or weekend:
        return of_day or weekend
    # A season last: a date it holds is nearer ("on July 4th last summer").
    for m in _SEASON.finditer(text):
        if w := _season(m, now, zone, about_past=about_past):
            return w
    # A year alone, the widest; of several ("in 2024 or 2025"), from the first to the last.
    if m := _YEAR.search(text):
        found = list(_ANY_YEAR.finditer(text, m.start(2)))
        apart_by = {w for a, b in itertools.pairwise(found) for w in _words(text[a.end() : b.start()])}
        if not apart_by <= _YEARS_JOINED:
            return None  # "the concert in 2024 or the one in 2025": two times, no one window
        years = sorted({int(y.group(0)) for y in found})
        start = datetime(years[0], 1, 1, tzinfo=zone)
        if start <= now:
            end = now if m.group(1) else min(datetime(years[-1] + 1, 1, 1, tzinfo=zone), now)
            return Window(start, end, text[m.start() : found[-1].end()])
    # A day of the month alone, the last: any other time the question names says which month.
    # A date in numbers, the last but one: a clock, a dose or a score said beside another time
    # is not read as a date ("from 9.30 to 5.30 yesterday", "on 2.5 mg since March").
    m = _NUMERIC_DATE.search(text)
    day = _numeric_date(m, now, date_order, ahead=_asks_ahead(text, m)) if m else None
    if m and day and not _going_back(text, m, day, date_order):
        return _since(text, m, day, now) or Window(day, day + timedelta(days=1), m.group(0))
    m = _DAY_OF_MONTH.search(text)
    if m and (nth := _day_of_month(int(m.group(1)), now, ahead=_asks_ahead(text, m))):
        return _since(text, m, nth, now) or Window(nth, nth + timedelta(days=1), m.group(0))
    if (m := _COMING_UP.search(text)) and not _ASKS_ABOUT_PAST.search(text) and not _ANY_YEAR.search(text):
        # from the time asked: what was said earlier today is no plan ("what's ahead in 2027?":
        # a year to come is no time read, as before)
        return Window(now, _day_start(now) + timedelta(days=COMING_DAYS), m.group(0))
    return None


def _going_back(text: str, m: re.Match[str], day: datetime, date_order: str) -> bool:
    """Whether the date in numbers `m` (read as `day`) goes to a second that reads as earlier
    in its year, a score's way and no range of days' ("my pain went from 7/10 to 3/10"; "from
    20/12 to 5/1" goes on into the next year)."""
    joined = _JOINED.match(text, m.end())
    second = _NUMERIC_DATE_AFTER.match(text, joined.end()) if joined else None
    then = _numeric_date(second, day, date_order, ahead=False) if second else None
    return then is not None and timedelta(0) < day - then < timedelta(days=183)


def _nth_of_month(m: re.Match[str], now: datetime) -> datetime | None:
    """The day a `_NTH_OF_MONTH` match names (its midnight), or None ("the 31st of next month" in
    a month of 30 days)."""
    which = m.group(2).split()[-1].lower()
    step = {"this": 0, "last": -1, "previous": -1}.get(which, 1)
    month = now.month - 1 + step
    year, month = now.year + month // 12, month % 12 + 1
    n = int(m.group(1))
    if not 1 <= n <= calendar.monthrange(year, month)[1]:
        return None
    return _day_start(now).replace(year=year, month=month, day=n)


def _next(m: re.Match[str], now: datetime) -> Window:
    """The window a `_NEXT` match names, counted from `now`'s day."""
    today = _day_start(now)
    unit = (m.group(2) or "").lower()
    monday = today + timedelta(days=7 - today.weekday())
    if m.group(1):
        start, end = today + timedelta(days=1), today + timedelta(days=2)
    elif unit == "week":
        start, end = monday, monday + timedelta(days=7)
    elif unit == "weekend":
        start = monday + timedelta(days=5)
        end = start + timedelta(days=2)
    elif unit == "month":
        start = (today.replace(day=1) + timedelta(days=32)).replace(day=1)
        end = (start + timedelta(days=32)).replace(day=1)
    else:
        start = monday + timedelta(days=_WEEKDAYS.split("|").index(unit))
        end = start + timedelta(days=1)
    return Window(_midnight(now, start.date()), _midnight(now, end.date()), m.group(0))


def _weekday_nth(m: re.Match[str], now: datetime, *, ahead: bool) -> datetime | None:
    """The day a `_WEEKDAY_AND_NTH` match names (its midnight): the latest gone by whose day of
    the month and weekday are the ones said, today's too, or, `ahead`, the coming one; None for no
    day of any month ("Friday the 32nd")."""
    name, n = m.group(1).lower(), int(m.group(2) or m.group(3))
    weekday = next(n for n, day in enumerate(named_days.WEEKDAYS) if day.startswith(name[:3]))
    day = _day_of_month(n, now, ahead=ahead)
    for _ in range(6 * 12):  # (a weekday falls on every day of the month within six years)
        if day is None or day.weekday() == weekday:
            return day
        day = _day_of_month(n, day + timedelta(days=1 if ahead else -1), ahead=ahead)
    return None


def _a_day_to_come(m: re.Match[str], w: Window, text: str, now: datetime) -> bool:
    """Whether a day and month said with no year ("8 July", "July 8th"), read as the latest gone
    by, is asked of as a plan: the coming one (`_asks_ahead`)."""
    day_and_month = _A_MONTH.search(m.group(0)) and re.search(r"\d", m.group(0))
    return (
        bool(day_and_month) and w.end - w.start <= timedelta(days=1) and w.end <= now and _asks_ahead(text, m)
    )


def _months_to_come(text: str, w: Window, now: datetime) -> Window:
    """`w` a year on when it is months named alone ("March", "June and July", "from March to
    May") read as the latest gone by, all of them over, asked of as a plan ("what am I doing in
    March?", "are we still going in May?", "how many shifts am I rostered for in March?",
    "what's happening in March?"; not "what do I eat in March?", "where'd we go in June?"), or
    said "next" ("what did I book for next May?"; asked in March, "next March" is the one
    after); said "last" in its own month ("last May" asked in May), a year before."""
    if not re.fullmatch(
        rf"{_MONTH_PHRASE}(?:\s+(?:and|to|or|through|till|until|-|–)\s+{_MONTH_WORD})?",
        w.phrase,
        re.I,
    ):
        return w
    i = text.find(w.phrase)
    before = text[:i] if i >= 0 else ""
    if _LAST_BEFORE.search(before):
        return _years_on(w, -1) if w.end > now else w
    if _NEXT_BEFORE.search(before):
        return _years_on(w, 1) if w.start <= now else w
    plan = (
        any(p.group(0).lower() not in ("'d", "’d") for p in _PLANS.finditer(text))
        or _STILL_ON.search(text)
        or re.search(_GOT_ON, text, re.I)
        or _WHATS_ON.search(text)
    )
    if w.end > now or not plan or _ASKS_ABOUT_PAST.search(text) or _SINCE.search(before):
        return w
    return _years_on(w, 1)


def _years_on(w: Window, years: int) -> Window:
    """`w` moved by whole years (its days in its zone: a month starts on its 1st)."""
    return dataclasses.replace(
        w, start=w.start.replace(year=w.start.year + years), end=w.end.replace(year=w.end.year + years)
    )


def _asks_ahead(text: str, m: re.Match[str]) -> bool:
    """Whether a day named without its month or year is the coming one: a question in the
    present or of a plan, of nothing gone and not since it ("what do I have on the 25th?",
    "what have I got planned…": to come; "what have I eaten on the 3rd?": gone)."""
    present = _PRESENT.search(text) or _PLANS.search(text) or _STILL_ON.search(text)
    past = _ASKS_ABOUT_PAST.search(text) or (_HAVE_DONE.search(text) and not present)
    return bool(present) and not past and not _SINCE.search(text, 0, m.start())


def _numeric_date(m: re.Match[str], now: datetime, date_order: str, *, ahead: bool) -> datetime | None:
    """The day a `_NUMERIC_DATE` match names (its midnight in `now`'s zone), or None: day and
    month as the numbers tell (one over 12), else as `date_order` says; with no year, the latest
    gone by, or in a plan (`ahead`) the coming one."""
    if m.group(1):
        year, month, day = int(m.group(1)), int(m.group(3)), int(m.group(4))
    else:
        a, b, written = _numbers(m)
        first = {"dmy": True, "mdy": False}.get(date_order) if _reads_two_ways(m) else a > 12 or a == b
        if first is None:
            return None  # "on 3/4": the 3rd of April or the 4th of March, as the user writes them
        day, month = (a, b) if first else (b, a)
        year = (int(written) + (2000 if len(written) == 2 else 0)) if written else 0
    today = _day_start(now)
    for y in [year] if year else [today.year, today.year + (1 if ahead else -1)]:
        try:
            found = today.replace(year=y, month=month, day=day)
        except ValueError:
            return None
        if year or ((found >= today) if ahead else (found <= today)):
            return found
    return None


def _range(text: str, at: int, joined_by: str) -> bool:
    """Whether two times joined by `joined_by`, the first at `at`, name a range ("between … and",
    "from … to", "3-6"), not two times said together ("and", "or")."""
    return joined_by.lower() not in ("and", "or") or bool(
        re.search(r"\b(?:between|from)\s+(?:the\s+)?$", text[:at], re.I)
    )


def _calendar_phrases(text: str) -> Iterator[re.Match[str]]:
    """The calendar phrases of `text`, not a month's name that stands where a person's does
    ("what did April say?", `_A_PERSON_BEFORE`, `_A_PERSON_AFTER`)."""
    for m in _CALENDAR.finditer(text):
        if re.fullmatch(_MONTHS, m.group(0), re.I):
            before = _words(text[: m.start()])[-2:]
            does = _A_PERSON_AFTER.match(text, m.end())
            if does or (before and before[-1] in _A_PERSON_BEFORE):
                continue  # ("with June", "April said"; "did April say": the verb tells)
            if before[-2:-1] and before[-2] in _FROM_A_PERSON and before[-1] == "from":
                joined = _JOINED.match(text, m.end())
                if not (joined and _range(text, m.start(), joined.group(1))):
                    continue  # ("heard from June"; "a text from April to May" is the months)
        yield m


def _numbers(m: re.Match[str]) -> tuple[int, int, str | None]:
    """The two numbers of a `_NUMERIC_DATE` match written day and month either way round, in
    their order, and its year as written (slashes or dots)."""
    at = 5 if m.group(5) else 9
    return int(m.group(at)), int(m.group(at + 2)), m.group(at + 3)


def _reads_two_ways(m: re.Match[str]) -> bool:
    """Whether a `_NUMERIC_DATE` match is a day and a month either way round ("3/4"; not "13/4",
    "3/3", "0/5" nor "2025/3/4")."""
    if m.group(1):
        return False
    a, b, _ = _numbers(m)
    return a != b and min(a, b) >= 1 and max(a, b) <= 12


def _through(text: str, w: Window, now: datetime, date_order: str) -> Window:
    """`w`, from the time its phrase names to the end of a second joined to it ("on the 13th
    and the 14th", "between March 3 and March 6", "from 3 to 6 October", "October 3-6", "from
    Monday to Wednesday", "from the 15th to yesterday"), or from a day named before it in its
    month ("13 and 14 October"); `w` when none is, or the second is not later."""
    i = next((m.start() for m in _calendar_phrases(text) if m.group(0) == w.phrase), text.find(w.phrase))
    if i < 0 or w.noon is not None or w.named or _SINCE.search(text, 0, i):
        return w
    j = i + len(w.phrase)
    start, end, first = w.start, w.end, i
    one_day = w.end - w.start <= timedelta(days=1)
    # A range ("between … and", "from … to", "3-6") or two times said together that touch or
    # lie a like gap apart ("the 13th and the 14th", "March and April"; of "on 3 March and 20
    # May", or "on 1 and 30 October", two days far apart, the first).
    # ("from the 5th to yesterday": a day of its month before it)
    day_first = re.match(r"(?:the\s+)?\d|yesterday|today", w.phrase, re.I)
    before = _FIRST_OF_TWO.search(text, 0, i) if day_first else None
    if one_day and before and 1 <= (n := int(before.group(1))) < w.start.day:
        day = w.start.replace(day=n)
        if _range(text, before.start(), before.group(2)) or n >= w.start.day - 2:
            start, first = day, before.start()
            # and the days listed before it ("3, 4 and 5 March", "the 3rd, 4th and 5th of March")
            while (prev := _LISTED_BEFORE.search(text, 0, first)) and 1 <= int(prev.group(1)) < start.day:
                listed = start.replace(day=int(prev.group(1)))
                if start - listed > end - start:
                    break  # (far before the days after it: "on 1, 4 and 5 March")
                start, first = listed, prev.start()
        else:
            return Window(day, day + timedelta(days=1), text[before.start() : j])
    # A list ("in May, June and July", "on the 3rd, the 4th and the 5th"): each time of it that
    # touches, or lies a like gap after, the one before it, and the list ends in a join to a
    # last time that does too (not "in May, June and I went…", "the 3rd, 4th and 5th floors").
    # (a day said as a bare number begins a list of bare numbers: "March 3, 4 and 5")
    bare = bool(re.search(r"(?<![\d/.:])\d{1,2}$", w.phrase))
    listed_end, at, items = end, j, 0
    while (comma := _LISTED.match(text, at)) and not _JOINED.match(text, at):
        item, stop = _second(text, comma, w, start, now, date_order, bare=bare)
        if item is None or not _follows(item, start, listed_end):
            break
        listed_end, at, items = item.end, stop, items + 1
    if at != j and (last := _JOINED.match(text, at)):
        item = _second(text, last, w, start, now, date_order, bare=bare)[0]
        if item is not None and _follows(item, start, listed_end):
            end, j = listed_end, at
    elif items >= 2 and _ENDS.match(text, at):
        # three or more with no join ("in May, June, July?")
        return dataclasses.replace(w, start=start, end=listed_end, phrase=text[first:at])
    bare = bare and j != i + len(w.phrase)
    joined = _JOINED.match(text, j)
    if joined is None:
        return w if start == w.start else dataclasses.replace(w, start=start, phrase=text[first:j])
    then, stop = _second(text, joined, w, start, now, date_order, bare=bare)
    if then is not None and then.start > now >= w.start and re.match(r"the\s+\d", w.phrase, re.I):
        # "From the 1st till the 10th", asked on the 2nd: the last month they are both gone by.
        earlier = _day_of_month(w.start.day, w.start - timedelta(days=1), ahead=False)
        shifted = _second(text, joined, w, earlier, now, date_order)[0] if earlier else None
        if earlier and shifted and shifted.start <= now:
            end -= start - earlier  # (a list's days with it: "the 2nd, the 3rd and the 20th")
            start, then = earlier, shifted
    # ("in March and April 2025": the year said once is both's; "December to February 2026": the
    # first the year before)
    year = re.search(r"\b(?:19|20)\d{2}\b", text[joined.end() : stop]) if then else None
    first_end, ahead = end, False
    if then is not None and year and not re.search(r"\d{4}", w.phrase):
        for y in (int(year.group(0)), int(year.group(0)) - 1):
            again = _calendar(f"{w.phrase} {y}", now)
            if again is not None and again.start <= then.start:
                start, first_end = again.start, again.end
                break
    elif (
        then is not None
        and then.start < start
        and then.start.month != start.month
        and _A_MONTH.search(w.phrase)
        and not re.search(r"\d{4}", w.phrase)
        and _range(text, first, joined.group(1))
    ):
        if _PRESENT.search(text) or _PLANS.search(text):
            # "what am I doing from March to May?" asked in March: this March to the coming May
            coming = _calendar(f"{text[joined.end() : stop].strip()} {then.start.year + 1}", now)
            if coming is not None and coming.start >= start:
                then, ahead = coming, True
        else:
            # "from November to January" asked in November: the last November, before January
            again = _calendar(f"{w.phrase} {start.year - 1}", now)
            if again is not None and again.start <= then.start:
                start, first_end = again.start, again.end
    # (not before the first, nor after now in a question of what is gone: "between 27/02 and
    # 13/02" is no year long)
    later = then is not None and start <= then.start and (then.start <= now or start > now or ahead)
    near = then is not None and then.start <= first_end + (first_end - start)  # (a like gap apart)
    if later and then and (near or _range(text, first, joined.group(1))):
        end, j = then.end, stop
    elif start != w.start and first_end != end:
        start = w.start  # (the year was the second's alone)
    if (start, end) == (w.start, w.end):
        return w
    return dataclasses.replace(w, start=start, end=end, phrase=text[first:j])


def _follows(item: Window, start: datetime, end: datetime) -> bool:
    """Whether a time of a list, from `start` to `end` so far, touches it or lies a like gap after it."""
    return end <= item.start <= end + (end - start)


def _second(
    text: str,
    joined: re.Match[str],
    w: Window,
    start: datetime,
    now: datetime,
    date_order: str,
    *,
    bare: bool = False,
) -> tuple[Window | None, int]:
    """The second of two times joined (`joined`, after `w`, whose first day is `start`): its
    window and where it ends in `text`, or (None, 0). A bare number is a day after a dash, or
    `bare`, in a list of them ("March 3, 4 and 5")."""
    p = joined.end()
    if (c := _CALENDAR.match(text, p) or _MONTH_AFTER.match(text, p)) and (v := _calendar(c.group(0), now)):
        return v, c.end()
    if c := _NUMERIC_DATE_AFTER.match(text, p):
        d = _numeric_date(c, start, date_order, ahead=True)  # (from 28/12 to 3/1)
        return (Window(d, d + timedelta(days=1), "") if d else None), c.end()
    if c := _WEEKDAY_AND_NTH_AFTER.match(text, p):  # "from Friday the 12th to Sunday the 14th"
        d = _day_of_month(int(c.group(2) or c.group(3)), start + timedelta(days=1), ahead=True)
        return (Window(d, d + timedelta(days=1), "") if d else None), c.end()
    if w.end - w.start > timedelta(days=1):
        return None, 0
    if (c := _LATER_DAY.match(text, p)) and (c.group(3) is None or bare or joined.group(1) in "-–—"):
        n = int(c.group(1) or c.group(2) or c.group(3))
        d = _day_of_month(n, start + timedelta(days=1), ahead=True)  # (the 28th to the 3rd)
        return (Window(d, d + timedelta(days=1), "") if d else None), c.end()
    if c := _WEEKDAY_AFTER.match(text, p):  # "on Monday and Tuesday", "from Monday to Wednesday"
        ahead = (_WEEKDAYS.split("|").index(c.group(1).lower()) - start.weekday() - 1) % 7 + 1
        d = start + timedelta(days=ahead)
        return Window(d, d + timedelta(days=1), ""), c.end()
    if c := _NOW_AFTER.match(text, p):  # "from the 15th to now"
        return Window(_day_start(now), _day_start(now) + timedelta(days=1), ""), c.end()
    return None, 0


def _season(m: re.Match[str], now: datetime, zone: tzinfo, *, about_past: bool) -> Window | None:
    """The season a `_SEASON` match names, as asked at `now` (in `zone`, whose hemisphere
    decides the months): "last" the latest one over; "this" the one under way, else the latest
    one over in a question about the past, else the coming one; "in / over / during" the one
    under way or the latest; with a year, that year's (winter: the one that begins in it);
    "since" from its start until now. None for a habit ("what do I do in summer?") or a tumble
    ("since the fall")."""
    since, which, during, name, year = (
        (m.group(1) or "").lower(),
        (m.group(2) or "").lower(),
        (m.group(3) or "").lower(),
        m.group(4).lower(),
        m.group(5),
    )
    if not (since or which or during):
        return None  # "summer" alone: a word, not a time
    if name == "fall" and not which and (since or during in ("during", "through")):
        return None  # "has my hip hurt since the fall?": a tumble
    if during and not year and not about_past:
        return None  # "what do I do in summer?": a habit, not last summer
    first = _SEASON_START[name]
    if any(str(getattr(zone, "key", "")).startswith(p) for p in _SOUTH):
        first = (first + 5) % 12 + 1

    def starting(y: int) -> datetime:
        return now.replace(year=y, month=first, day=1, hour=0, minute=0, second=0, microsecond=0)

    def ending(start: datetime) -> datetime:
        month = start.month + 3
        return start.replace(year=start.year + (month - 1) // 12, month=(month - 1) % 12 + 1)

    start = starting(now.year) if starting(now.year) <= now else starting(now.year - 1)  # the latest begun
    if year:
        start = starting(int(year))
    elif which in ("last", "past", "previous") and ending(start) > now:
        start = starting(start.year - 1)  # under way: the one before
    elif which == "this" and ending(start) <= now and not about_past:
        start = starting(start.year + 1)  # over, in a plan: the coming one
    if since:
        return Window(start, now, m.group(0))
    return Window(start, ending(start), m.group(0))


def _day_of_month(n: int, now: datetime, *, ahead: bool) -> datetime | None:
    """The `n`th of a month asked of at `now` (its midnight): the latest gone by, today's too
    (this month's, else the last month that has one: "the 31st" asked on 5 March is 31 January),
    or, `ahead` (a question of a plan: "what am I doing on the 20th?"), the coming one; None for
    no day of any month ("the 0th", "the 32nd")."""
    if not 1 <= n <= 31:
        return None
    today = _day_start(now)
    step = 1 if ahead else -1
    year, month = today.year, today.month
    for _ in range(12):
        if n <= calendar.monthrange(year, month)[1]:
            day = today.replace(year=year, month=month, day=n)
            if (day >= today) if ahead else (day <= today):
                return day
        year, month = (year + (month + step - 1) // 12, (month + step - 1) % 12 + 1)
    return None


def _since(text: str, m: re.Match[str], start: datetime, now: datetime) -> Window | None:
    """From `start` (that of the time `m` matched) until `now`, when "since" comes right before
    it ("since January", "since the 3rd of March", "since last weekend"); else None."""
    if (since := _SINCE.search(text, 0, m.start())) and start <= now:
        return Window(start, now, since.group(0) + m.group(0))
    return None


def _year_apart(text: str) -> int | None:
    """The one year a question names apart from its other times ("In 2024, what did we do for
    Christmas?"), not since it; else None."""
    if (m := _YEAR.search(text)) is None or m.group(1):
        return None
    years = {int(y.group(0)) for y in _ANY_YEAR.finditer(text)}
    return years.pop() if len(years) == 1 else None


def _holiday(
    m: re.Match[str], now: datetime, zone: tzinfo, *, about_past: bool, year: int | None = None
) -> Window | None:
    """The named day a `named_days.HOLIDAY` match names, as asked at `now` in `zone` (whose
    country decides the days that differ): `named_days.pick`'s, a year's, or "since" it (its
    main day, the latest gone) until now. None in a plan or a habit that names no which ("what
    are we doing for Christmas?"), and for a day the country has no one date for. `year`: that
    year's (a year the question names apart)."""
    since, _, name, said_year, before_last, span = m.groups()
    which = named_days.which_of(m)
    year = int(said_year) if said_year else year
    if not (since or which or year or before_last or about_past):
        return None
    seen = named_days.occurrences(name, span or "", named_days.country(zone), year or now.year)
    got = named_days.pick(
        seen,
        now.date(),
        which,
        about_past=about_past,
        before_last=bool(before_last),
        since=bool(since),
        year=year,
    )
    if got is None:
        return None
    if since:
        return Window(_midnight(now, got[2]), now, m.group(0), named=True)
    return Window(_midnight(now, got[0]), _midnight(now, got[1]) + timedelta(days=1), m.group(0), named=True)


def _holiday_anchor(anchor: Anchor, now: datetime, zone: tzinfo) -> datetime | None:
    """The day a named day an anchor counts from fell on ("two days before Christmas": the
    latest Christmas whose counted days have begun by `now`, in `zone`'s days), else None. A
    span of days counts from its last day after it and its first before it: a named day's ("the
    weekend after the Easter bank holiday", "the week after the Christmas break") or a long
    weekend's ("the weekend after the May bank holiday")."""
    now = now.astimezone(zone)
    today = now.date()
    if (m := _named_day(anchor.event)) is not None:
        which, before_last, span = named_days.which_of(m), bool(m.group(5)), m.group(6)
        year = int(m.group(4)) if m.group(4) else None
        seen = named_days.occurrences(m.group(3), span or "", named_days.country(zone), year or now.year)
    elif (long := named_days.LONG_WEEKEND.fullmatch(_bare(anchor.event))) is not None and not long.group(1):
        which, year, before_last, span = named_days.which_of(long), None, bool(long.group(6)), long.group(5)
        seen = _long_weekends(long, now, zone)
    else:
        return None

    def counted_from(days: tuple[date, date, date]) -> date:
        return days[2] if not span else days[1] if anchor.first > 0 else days[0]

    if year or which or before_last:
        got = named_days.pick(seen, today, which, about_past=True, before_last=before_last, year=year)
    else:
        got = next((d for d in seen if _begun(counted_from(d), anchor, today)), None)
    return _midnight(now, counted_from(got)) if got else None


def _begun(day: date, anchor: Anchor, today: date) -> bool:
    """The days `anchor` counts from `day` have begun by `today`."""
    return day + timedelta(days=anchor.days(day)[0]) <= today


def _named_day(event: str) -> re.Match[str] | None:
    """`event` as a named day ("Christmas", "last Easter"), else None."""
    return named_days.HOLIDAY.fullmatch(_bare(event))


def _bare(event: str) -> str:
    """`event` without a leading "the", "my" or "our"."""
    return re.sub(r"^(?:the|my|our)\s+", "", event.strip(), flags=re.I)


def _long_weekend(m: re.Match[str], now: datetime, zone: tzinfo, *, about_past: bool) -> Window | None:
    """The long weekend a `named_days.LONG_WEEKEND` match names, of the user's country, chosen as
    a named day is ("the May bank holiday": the first of May's, Britain's early one)."""
    since, which, before_last = bool(m.group(1)), named_days.which_of(m), bool(m.group(6))
    if not (since or which or before_last or about_past):
        return None  # "what are we doing for the long weekend?": a plan
    seen = _long_weekends(m, now, zone)
    got = named_days.pick(
        seen, now.date(), which, about_past=about_past, before_last=before_last, since=since
    )
    if got is None:
        return None
    if since:
        return Window(_midnight(now, got[0]), now, m.group(0))
    return Window(_midnight(now, got[0]), _midnight(now, got[1]) + timedelta(days=1), m.group(0))


def _long_weekends(m: re.Match[str], now: datetime, zone: tzinfo) -> list[tuple[date, date, date]]:
    """The long weekends of the user's country a `named_days.LONG_WEEKEND` match may mean around
    `now`, newest first, as (first day, last day, last day)."""
    kind = {w.lower() for w in m.group(3, 4) if w}
    where = named_days.country(zone)
    seen: list[tuple[date, date, date]] = []
    weekend = "weekend" in m.group(5).lower()  # a Wednesday's bank holiday is no long weekend
    for year in range(now.year + 1, now.year - 3, -1):
        fits = [
            (a, b, b)
            for a, b, words in named_days.long_weekends(year, where)
            if kind <= words and (not weekend or named_days.touches_weekend(a, b))
        ]
        seen += fits[:1] if kind else fits[::-1]
    return seen


def _midnight(now: datetime, day: date) -> datetime:
    """The start of `day` in `now`'s zone."""
    return datetime(day.year, day.month, day.day, tzinfo=now.tzinfo)


def _part_of(day: datetime, first: int, last: int, phrase: str) -> Window:
    """The hours [first, last) of `day` (a midnight in the user's zone; 30 is 06:00 the next)."""
    start = day + timedelta(hours=first)
    return Window(start, day + timedelta(hours=last), phrase, noon=day + timedelta(hours=12))


def _weekends_ago(m: re.Match[str], now: datetime) -> Window:
    """The weekend (or weekday) `m` counts back to: the nth gone by, not one under way; a
    rough count ("a couple of weekends ago") the one before it and the one after it too."""
    n, unit = _count(m.group(1)), m.group(2).lower()
    if unit == "weekend":
        first, days = _last_weekend(now), 2
    else:
        today = _day_start(now)
        first, days = today - timedelta(days=(today.weekday() - _WEEKDAYS.split("|").index(unit)) % 7 or 7), 1
    week = timedelta(days=7)
    rough = 1 if m.group(1).lower() in _ROUGH else 0
    start = first - (n - 1 + rough) * week
    end = first - max(n - 1 - rough, 0) * week + timedelta(days=days)
    return Window(start, end, m.group(0))


def _last_weekend(now: datetime, *, this: bool = False) -> datetime:
    """The Saturday of the last weekend before `now`; with `this`, the current one during a
    weekend."""
    today = _day_start(now)
    saturday = today - timedelta(days=(today.weekday() - 5) % 7)
    if not this and today.weekday() >= 5:
        saturday -= timedelta(days=7)
    return saturday


def _count(word: str) -> int:
    word = word.lower()
    return int(word) if word.isdigit() else _NUMBERS.get(word, 1)


def _day_start(t: datetime) -> datetime:
    return t.replace(hour=0, minute=0, second=0, microsecond=0)


def _coming(now: datetime, weekday: int, phrase: str) -> Window:
    """The coming `weekday` (today's, if it is one) as a day's window."""
    today = _day_start(now)
    day = today + timedelta(days=(weekday - today.weekday()) % 7)
    return Window(day, day + timedelta(days=1), phrase)


def _calendar(phrase: str, now: datetime) -> Window | None:
    """A calendar phrase through dateparser: a day, a week, a month or a year."""
    from dateparser.date import DateDataParser

    base = now.replace(tzinfo=None)
    parser = DateDataParser(
        languages=["en"],
        settings={
            "RELATIVE_BASE": base,
            "PREFER_DATES_FROM": "past",  # a question about one's life asks about what happened
            "PREFER_DAY_OF_MONTH": "first",
            "RETURN_AS_TIMEZONE_AWARE": False,
        },
    )
    data = parser.get_date_data(re.sub(r"^(?:on|in)\s+", "", phrase, flags=re.I))
    if data is None or data.date_obj is None:
        return None
    d = _day_start(data.date_obj.replace(tzinfo=now.tzinfo))
    period = data.period or "day"
    if period == "week":
        start = d - timedelta(days=d.weekday())
        return Window(start, start + timedelta(days=7), phrase)
    if period == "month":
        start = d.replace(day=1)
        return Window(start, (start + timedelta(days=32)).replace(day=1), phrase)
    if period == "year":
        start = d.replace(month=1, day=1)
        return Window(start, start.replace(year=start.year + 1), phrase)
    return Window(d, d + timedelta(days=1), phrase)


def _clause_of(text: str, phrase: str) -> str:
    """The clause of `text` (between commas, semicolons and sentence ends) that holds `phrase`;
    `text` when none does. Wider than `named_days`' clause, which also ends at "and", "but",
    "so": that one reads the tense of the words next to a day, this one whether the user's
    doing and the time asked are one request ("…the wine we had and loved on Saturday?")."""
    return next((c for c in re.split(r"[,;.!?]", text) if phrase.lower() in c.lower()), text)


def order_of(text: str) -> str | None:
    """NEWEST or EARLIEST when the question asks for one end of a history, else None."""
    text = re.sub(r"^\W*now\b", "", text, flags=re.I)  # "Now, what did I get Mum…?"
    newest, earliest = _NEWEST.search(text), _EARLIEST.search(text)
    if newest and not earliest:
        return NEWEST
    if earliest and not newest:
        return EARLIEST
    return None


# -- several things ------------------------------------------------------------------------


def cues_of(text: str) -> list[str]:
    """The things `text` names when it names two or more, each as a search of its own; else []."""
    # The question itself: "I remember you said X before Y. Can you remind me …?" names no two things.
    sentences = SENTENCE_END.split(text.strip())
    text = next((x for x in reversed(sentences) if x.endswith("?")), sentences[-1])
    # "the week before last", "the day before yesterday", "since Christmas", "the Christmas before
    # last" name a time, not two events ("before Christmas" names one: "did I quit before or
    # after Christmas?").
    text = _BEFORE_LAST.sub("then", _DAY_BEFORE_YESTERDAY.sub("then", text))
    named = [d for d in named_days.as_time(text) if d.group(1) or d.group(5)]
    named += [d for d in named_days.as_time(text, named_days.LONG_WEEKEND) if d.group(1) or d.group(6)]
    end = len(text)
    for day in sorted(named, key=lambda d: d.start(), reverse=True):
        if day.end() <= end:  # not one inside another ("the Easter bank holiday")
            text, end = text[: day.start()] + "then" + text[day.end() :], day.start()
    quoted = [q.strip() for q in _QUOTED.findall(text)]
    if len(quoted) >= 2:
        return quoted
    for rule in (_CHOICE, _CHOICE_AFTER, _BETWEEN, _COMPARED):
        if m := rule.search(text):
            pieces = [_clean(p) for p in m.groups()]
            # "X, A, B, or C", "X: A, B or C" are lists
            listed = rule is _CHOICE and (text[: m.start(2)].count(",") > 1 or ":" in text[: m.start(1)])
            if all(_content(p) and "," not in p for p in pieces) and not listed:
                return pieces
    if (m := _VERB_CHOICE.search(text)) and all(_content(p) and "," not in p for p in m.groups()[1:]):
        return [f"{m.group(1)} {_clean(m.group(2))}", _with_verb(m.group(1), _clean(m.group(3)))]
    # (A verb's "after" is masked, so a time after it still splits: "did I look after Mia
    # before or after the holiday?")
    masked = _PHRASAL_AFTER.sub(lambda p: p.group(0) + "\x00", text)
    if m := _BEFORE_AFTER.search(masked):
        first, second = (_clean(g.replace("\x00", "")) for g in m.groups())
        if not _content(first) and (inv := _INVERTED.match(second)):
            # "How many days before my friend's party did I order her gift?"
            first, second = _clean(inv.group(1)), _clean(inv.group(2))
        if _content(first) and _content(second):
            return [first, second]
    return []


_PARTICLES = {"to", "at", "in", "on", "with", "for", "up", "out", "off", "into"}
_DETERMINERS = {"the", "a", "an", "my", "our", "his", "her", "their", "your", "this", "that", "some"}


def _with_verb(verb: str, thing: str) -> str:
    """The second of "did I VERB A or B first?" with the verb said once: "quit" + "the gym";
    "learn to" + "to ride a bike" is "learn to ride a bike"; a B that brings its own verb ("get
    the dog", after "move in with Sam") stays as it is."""
    first = thing.split()[0] if thing.split() else ""
    if first.lower() in _PARTICLES:
        return f"{verb.split()[0]} {thing}"
    if first.lower() in _DETERMINERS or first[:1].isupper() or first.isdigit() or first.endswith("ing"):
        return f"{verb} {thing}"
    return thing


def _clean(piece: str) -> str:
    piece = piece.strip(" ,?.!")
    while (stripped := _LEAD.sub("", piece)) != piece:
        piece = stripped
    return piece.strip(" ,?.!")


def _content(piece: str) -> bool:
    """At least one word that is not a function word, a question word or part of a time phrase
    ("since May 2025" names a time, not a second event) or of the order asked ("most recently")."""
    piece = _A_NUMERIC_DATE.sub(" ", piece.strip())
    piece = re.sub(r"\b\d+[.:/]\d+\b", " ", piece)  # (a clock, a price, a ratio: "between 5.30 and 6.30")
    words = _words(_EARLIEST.sub(" ", _NEWEST.sub(" ", _without_time(piece))))
    # "since 2025", "since May", "since Monday": a time, what is left of one after "since".
    return any(w not in _STOP and w not in _DAY_NAMES and not _ANY_YEAR.fullmatch(w) for w in words)


def _without_time(piece: str) -> str:
    for phrase in (
        _AGO,
        _WEEKENDS_AGO,
        _LAST_N,
        _PAST_ONE,
        _BEFORE_LAST,
        _DAY_BEFORE_YESTERDAY,
        _LAST_NIGHT,
        _WEEKEND,
        _PART_OF_MONTH,
        _NTH_OF_MONTH,
    ):
        piece = phrase.sub(" ", piece)
    for m in reversed(list(_calendar_phrases(piece))):  # (a friend April stays)
        piece = piece[: m.start()] + " " + piece[m.end() :]
    for phrase in (_SEASON_NAMED, _YEAR, _NTH_DAY):
        piece = phrase.sub(" ", piece)
    return piece


def _words(piece: str) -> list[str]:
    return re.findall(r"[a-z0-9']+", piece.lower().replace("’", "'"))  # (a phone's apostrophe too)
