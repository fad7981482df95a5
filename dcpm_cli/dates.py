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
from collections.abc import Collection
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
# "the party is Saturday Aug 8", "the party last night". Not a habit ("every Saturday", "every
# other Tuesday", "Sundays"), a kind of day ("the Saturday brunch crowd", "a Sunday off"), a
# named day ("Good Friday", "Easter Monday": the calendar's, read/named_days.py), the start of
# a span ("off work from Monday"), "Sunday's paper", nor "the day before yesterday".
_DAY_SAID = re.compile(
    r"(?<!\bevery\s)(?<!\beach\s)(?<!\bother\s)(?<!\bthe\s)(?<!\ba\s)(?<!\bfrom\s)"
    r"(?<!\bgood\s)(?<!\bblack\s)(?<!\beaster\s)(?<!\bpalm\s)(?<!\bash\s)(?<!\bmaundy\s)(?<!\bholy\s)"
    r"(?<!\bsuper\s)(?<!\bcyber\s)(?<!\bshrove\s)(?<!\bwhit\s)(?<!\bmothering\s)(?<!\bremembrance\s)"
    rf"\b(?:(?P<which>last|next|this\s+coming|this\s+past|this)\s+)?(?P<weekday>{'|'.join(_WEEKDAYS)})"
    r"(?!['’]?s\b)(?!\s+(?:mornings|afternoons|evenings|nights)\b)"
    rf"(?:,?\s+(?:the\s+)?(?P<dom>\d{{1,2}})(?:(?:st|nd|rd|th)\b|(?=\s+{_MONTH}))"
    rf"|,?\s+{_MONTH}\.?\s+(?P<dom2>\d{{1,2}})\b)?"
    r"|(?<!\bbefore\s)(?<!\bafter\s)"
    r"\b(?P<relative>yesterday|last\s+night|tomorrow|tonight|today|this\s+(?:morning|afternoon|evening))\b",
    re.I,
)
_RELATIVE_DAYS = {"yesterday": -1, "last night": -1, "tomorrow": 1}
_SAME_DAY = ("today", "tonight", "this morning", "this afternoon", "this evening")
# What tells a bare weekday's side of the day said: "was on Tuesday" happened, "is on Sunday"
# and "booked for Thursday" are to come; the words just before the day first ("the knee
# replacement was on Monday and the surgeon is pleased"), else the sentence's. Both or
# neither: it cannot be told, and is not read.
_HAPPENED = re.compile(
    r"\b(?:was|were|went|had|did|got|came|happened|said|told|rang|phoned|called|wrote|saw|met|heard|"
    r"left|arrived|started|finished|ended|began|took|gave|sent|spent|rode|ran|drove|flew|ate|slept)\b",
    re.I,
)
_TO_COME = re.compile(
    r"\b(?:will|shall|is|are|am|going\s+to|booked|due|scheduled|planned)\b|['’]ll\b|\b(?:it|that)['’]s\b",
    re.I,
)
# "moved to Friday", "postponed till Friday", "rebooked for Friday": the new day is to come,
# whatever the tense of the moving.
_MOVED_TO = re.compile(
    r"\b(?:moved|postponed|rescheduled|pushed(?:\s+back)?|put\s+back|put\s+off|rebooked|"
    r"brought\s+forward|changed|delayed)\s+(?:\S+\s+){0,3}?(?:to|till|until|for)\s+$",
    re.I,
)
# "not Monday", "wasn't on Monday", "thought it was Monday but…", "meant to be Monday", "Monday
# or Tuesday": a day denied, or one of two, is not the day.
_DENIED = re.compile(
    r"(?:\bnot|n['’]t)\s+(?:on\s+|be\s+|the\s+)?$|\b(?:thought|meant\s+to\s+be|supposed\s+to\s+be|"
    r"would\s+have\s+been|should\s+have\s+been|instead\s+of|rather\s+than|either)\b|\bor\s+(?:maybe\s+)?$",
    re.I,
)
_OR = re.compile(r"^\s+or\b", re.I)
_WORD = re.compile(r"[a-z0-9'’]+")
_CLAUSE_END = re.compile(r"[,;:()—–]|\s-\s|\b(?:but|and|then|though|although|because|so)\b", re.I)


def day_said(sentence: str, said_at: datetime, zone: tzinfo = UTC, near: Collection[str] = ()) -> date | None:
    """The day `sentence` says its event happens on, read against the day it was said in
    `zone`'s days ("the operation was on Tuesday", said on a Thursday: two days before), or
    None where it names no day or the day cannot be told: a wrong day is worse than none, which
    counts from the day said. Of several days, the one nearest a word of `near` (the event's:
    "home today, the knee op was Tuesday": the Tuesday), else the first that is not the day said.
    A weekday with its day of the month ("Thursday 24th") is the date near the day said that is
    both; a bare weekday's side is read from the tense; the weekday of the day said itself, and
    "next Friday" said in Friday's own week, are left unread (this one or the one after?)."""
    found = [
        m
        for m in _DAY_SAID.finditer(sentence)
        if not _DENIED.search(_clause(sentence, m)[0]) and not _OR.match(sentence[m.end() :])
    ]
    at = [w.start() for w in _WORD.finditer(sentence.lower()) if w.group(0) in near]
    if at:
        found.sort(key=lambda m: min(abs(m.start() - a) for a in at))
    else:
        found.sort(key=lambda m: " ".join((m["relative"] or "").lower().split()) in _SAME_DAY)
    if not found:
        return None
    m = found[0]
    said = said_at.astimezone(zone).date()
    if m["relative"]:
        return said + timedelta(days=_RELATIVE_DAYS.get(" ".join(m["relative"].lower().split()), 0))
    which, weekday = " ".join((m["which"] or "").lower().split()), _WEEKDAYS.index(m["weekday"].lower())
    if dom := m["dom"] or m["dom2"]:  # the date within six weeks either side that is both
        days = [said + timedelta(days=n) for n in range(-42, 43)]
        fits = [d for d in days if d.weekday() == weekday and d.day == int(dom)]
        return min(fits, key=lambda d: abs((d - said).days)) if fits else None
    ahead: bool | None = {"last": False, "this past": False, "next": True, "this coming": True}.get(which)
    if ahead is None and _MOVED_TO.search(sentence[: m.start()]):
        ahead = True
    before, after = _clause(sentence, m)
    if ahead is None:
        ahead = _ahead(before.split()[-3:])
    if ahead is None:
        ahead = _ahead([*before.split(), *after.split()])
    if ahead is None:
        return None
    if ahead:
        forward = (weekday - said.weekday()) % 7
        if not forward:  # its own weekday: "this Sunday", said that Sunday, is the day itself
            return said if which == "this" else said + timedelta(days=7) if which else None
        if which == "next" and weekday > said.weekday():
            return None  # "next Friday", said that Thursday: tomorrow, or the week after?
        return said + timedelta(days=forward)
    back = (said.weekday() - weekday) % 7
    if not back:
        return said if which == "this" else said - timedelta(days=7) if which else None
    return said - timedelta(days=back)


def _clause(sentence: str, m: re.Match[str]) -> tuple[str, str]:
    """The words of the clause holding `m` before it and after it ("Op wasn't Monday, it was
    Tuesday": for Tuesday, "it was" and nothing)."""
    before = _CLAUSE_END.split(sentence[: m.start()])[-1]
    after = _CLAUSE_END.split(sentence[m.end() :])[0]
    return before, after


def _ahead(words: list[str]) -> bool | None:
    """Whether `words` tell of what is to come (True) or has happened (False); None when they
    tell both or neither."""
    text = " ".join(words)
    happened, to_come = bool(_HAPPENED.search(text)), bool(_TO_COME.search(text))
    return None if happened == to_come else to_come
