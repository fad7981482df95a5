"""When a statement is about: an ISO date, or a relative phrase ("two months ago", "last
Tuesday", "since March") resolved against when the input was said.

Extraction copies the time words as the user said them; a small model is poor at date
arithmetic, so the arithmetic is done here by `dateparser` (imported only when a phrase is not
an ISO date: it costs ~0.2 s). A phrase it cannot read gives None, and the caller keeps the
input's own time.

A frequency ("five days a week", "twice a month", "every other day") is not a date: left to
`dateparser`, "five days a week" reads as five days ago. Frequencies are taken out of the phrase
first; what is left, if anything, is read as the date ("since March, twice a week").
"""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, timedelta, tzinfo

# Words around a time phrase that say how it relates, not when: "since March", "as of May".
_LEADING = re.compile(r"^(?:since|from|as of|starting|started|around|about|in|on|at|by|until)\s+", re.I)

_UNIT = (
    r"(?:second|minute|hour|day|night|morning|afternoon|evening|week|weekend|weekday|fortnight|"
    r"month|year|monday|tuesday|wednesday|thursday|friday|saturday|sunday)s?"
)
_COUNT = r"(?:\d+|an?|one|two|three|four|five|six|seven|eight|nine|ten|a few|a couple of|several|once|twice)"
# "<count> [up to two words] a/per <unit>" (five days a week, 4 coffees a day, twice a month),
# "every [other|N] <unit>", and the -ly words; never "a week ago".
_FREQUENCY = re.compile(
    rf"(?:\b{_COUNT}\s+(?:[a-z]+\s+){{0,2}}?)?\b(?:an?|per|each)\s+{_UNIT}\b(?!\s+(?:ago|before|earlier))"
    rf"|\bevery\s+(?:other\s+|few\s+|couple\s+of\s+|\w+\s+)?{_UNIT}\b"
    r"|\b(?:daily|nightly|weekly|fortnightly|monthly|yearly|annually)\b",
    re.I,
)


def resolve_when(value: str | None, said_at: datetime, zone: tzinfo = UTC) -> datetime | None:
    """The day `value` names, read relative to `said_at` as a day of `zone` (the user's:
    "yesterday", said on a Tuesday morning in Sydney, is that Monday), as its noon there; None
    when it names none."""
    if not value or not value.strip():
        return None
    text = value.strip()
    try:
        return _noon(date.fromisoformat(text[:10]), zone)
    except ValueError:
        pass
    phrase = _FREQUENCY.sub(" ", text).strip(" ,;.-")
    if not any(c.isalnum() for c in phrase):
        return None  # only a frequency: no date said
    import dateparser

    phrase = _LEADING.sub("", phrase).strip()
    base = said_at.astimezone(zone).replace(tzinfo=None)
    found = dateparser.parse(
        phrase,
        languages=["en"],
        settings={
            "RELATIVE_BASE": base,
            "PREFER_DATES_FROM": "past",  # what a person tells about their life has mostly happened
            "PREFER_DAY_OF_MONTH": "first",  # "since March": the month began it
            "RETURN_AS_TIMEZONE_AWARE": False,
        },
    )
    return _noon(found.date(), zone) if found is not None else None


def _noon(d: date, zone: tzinfo) -> datetime:
    return wall_clock_in(datetime(d.year, d.month, d.day, 12, tzinfo=UTC), zone)


def wall_clock_in(t: datetime, zone: tzinfo) -> datetime:
    """A time written without an offset and read as UTC (`t`), read again as a time of `zone`
    (the user's): the same clock reading, another instant; in UTC."""
    return t.astimezone(UTC).replace(tzinfo=zone).astimezone(UTC)


_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_MONTH = r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\b"
# A day a sentence says something happens on, counted from when it was said: "the operation
# was on Tuesday", "the Cycle Tour is this Sunday", "injection booked for Thursday 24th",
# "the party is Saturday Aug 8", "the party last night". Not a habit ("every Saturday",
# "Sundays"), a kind of day ("the Saturday brunch crowd", "a Sunday off") or "Sunday's paper".
_DAY_SAID = re.compile(
    r"(?<!\bevery\s)(?<!\beach\s)(?<!\bthe\s)(?<!\ba\s)"
    rf"\b(?:(?P<which>last|next|this\s+coming|this\s+past|this)\s+)?(?P<weekday>{'|'.join(_WEEKDAYS)})"
    r"(?!['’]?s\b)"
    rf"(?:,?\s+(?:the\s+)?(?P<dom>\d{{1,2}})(?:(?:st|nd|rd|th)\b|(?=\s+{_MONTH}))"
    rf"|,?\s+{_MONTH}\.?\s+(?P<dom2>\d{{1,2}})\b)?"
    r"|\b(?P<relative>yesterday|last\s+night|tomorrow|tonight|today|this\s+(?:morning|afternoon|evening))\b",
    re.I,
)
_RELATIVE_DAYS = {"yesterday": -1, "last night": -1, "tomorrow": 1}
# What tells a bare weekday's side of the day said: "was on Tuesday" happened, "is on Sunday"
# and "booked for Thursday" are to come; the words just before the day first ("the knee
# replacement was on Monday and the surgeon is pleased"), else the sentence's. Both or
# neither: it cannot be told, and is not read.
_HAPPENED = re.compile(r"\b(?:was|were|went|had|did|got|came|happened)\b", re.I)
_TO_COME = re.compile(r"\b(?:will|shall|is|are|am|going\s+to|booked|due|scheduled|planned)\b|['’]ll\b", re.I)


def day_said(sentence: str, said_at: datetime, zone: tzinfo = UTC) -> date | None:
    """The day `sentence` says its event happens on, read against the day it was said in
    `zone`'s days ("the operation was on Tuesday", said on a Thursday: two days before), or
    None where it names no day or its side of the day said cannot be told. A weekday with its
    day of the month ("Thursday 24th") is the date near the day said that is both."""
    m = _DAY_SAID.search(sentence)
    if m is None:
        return None
    said = said_at.astimezone(zone).date()
    if m["relative"]:
        return said + timedelta(days=_RELATIVE_DAYS.get(" ".join(m["relative"].lower().split()), 0))
    which, weekday = " ".join((m["which"] or "").lower().split()), _WEEKDAYS.index(m["weekday"].lower())
    if dom := m["dom"] or m["dom2"]:  # "Thursday 24th": the date within six weeks either side that is both
        near = [said + timedelta(days=n) for n in range(-42, 43)]
        fits = [d for d in near if d.weekday() == weekday and d.day == int(dom)]
        return min(fits, key=lambda d: abs((d - said).days)) if fits else None
    ahead: bool | None = {"last": False, "this past": False, "next": True, "this coming": True}.get(which)
    if ahead is None:
        ahead = _ahead(sentence[: m.start()].split()[-3:])
    if ahead is None:
        ahead = _ahead(sentence.split())
    if ahead is None:
        return None
    if ahead:  # the next such day after the day said ("booked for Thursday", said on a Thursday: a week on)
        return said + timedelta(days=(weekday - said.weekday() - 1) % 7 + 1)
    # the last such day: the day said itself for a bare one ("came for Sunday dinner", written
    # that Sunday), a week before for "last Sunday"
    back = (said.weekday() - weekday) % 7
    return said - timedelta(days=back or (7 if which else 0))


def _ahead(words: list[str]) -> bool | None:
    """Whether `words` tell of what is to come (True) or has happened (False); None when they
    tell both or neither."""
    text = " ".join(words)
    happened, to_come = bool(_HAPPENED.search(text)), bool(_TO_COME.search(text))
    return None if happened == to_come else to_come
