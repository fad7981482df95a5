"""When a statement is about: an ISO date, or a relative phrase ("two months ago", "last
Tuesday", "since March") resolved against when the input was said.

Extraction copies the time words as the user said them; a small model is poor at date
arithmetic, so the arithmetic is done here by `dateparser` (imported only when a phrase is not
an ISO date: it costs ~0.2 s). A phrase it cannot read gives None, and the caller keeps the
input's own time.
"""

from __future__ import annotations

import re
from datetime import UTC, date, datetime

# Words around a time phrase that say how it relates, not when: "since March", "as of May".
_LEADING = re.compile(r"^(?:since|from|as of|starting|started|around|about|in|on|at|by|until)\s+", re.I)


def resolve_when(value: str | None, said_at: datetime) -> datetime | None:
    """The day `value` names (noon UTC), read relative to `said_at`; None when it names none."""
    if not value or not value.strip():
        return None
    text = value.strip()
    try:
        return _noon(date.fromisoformat(text[:10]))
    except ValueError:
        pass
    import dateparser

    phrase = _LEADING.sub("", text).strip()
    base = said_at.astimezone(UTC).replace(tzinfo=None)
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
    return _noon(found.date()) if found is not None else None


def _noon(d: date) -> datetime:
    return datetime(d.year, d.month, d.day, 12, tzinfo=UTC)
