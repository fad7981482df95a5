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
from datetime import UTC, date, datetime, tzinfo

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
