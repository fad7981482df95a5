"""What a user hands over as text: a UTF-8 file, and a time written out (ISO or Unix seconds)."""

from __future__ import annotations

import re
from datetime import UTC, date, datetime
from pathlib import Path

from dcpm_cli.errors import InputError

# Times dcpm accepts: far enough from datetime's limits (years 1 and 9999) that no later step
# (a day's window back, a time zone) can overflow.
EARLIEST = datetime(1000, 1, 1, tzinfo=UTC)
LATEST = datetime(9000, 1, 1, tzinfo=UTC)


def parse_time(value: str | float | int, what: str = "time") -> datetime:
    """ISO date or datetime (naive = UTC; a bare date = noon UTC), or Unix seconds."""
    when = read_time(value)
    if when is None:
        hint = "use an ISO date like 2026-03-01 or 2026-03-01T18:30"
        raise InputError(f"cannot read {what} {value!r}", hint)
    if not EARLIEST <= when < LATEST:
        raise InputError(f"{what} {value!r} is out of range", "give a time between the years 1000 and 9000")
    return when


def parse_as_of(value: str, what: str = "--as-of") -> datetime:
    """A moment to read memory as of: a bare date means the end of that day (everything said
    that day counts), where a bare date said of an input means its noon."""
    when = parse_time(value, what)
    if re.fullmatch(r"\d{4}-\d{2}-\d{2}", value.strip()):
        when = when.replace(hour=23, minute=59, second=59, microsecond=999999)
    return when


def read_time(value: object) -> datetime | None:
    try:
        if isinstance(value, int | float) and not isinstance(value, bool):
            return datetime.fromtimestamp(float(value), UTC)  # NaN, inf, 1e20: ValueError etc.
        if isinstance(value, str):
            s = value.strip()
            if re.fullmatch(r"\d{4}-\d{2}-\d{2}", s):
                d = date.fromisoformat(s)
                return datetime(d.year, d.month, d.day, 12, tzinfo=UTC)
            dt = datetime.fromisoformat(s.replace("Z", "+00:00"))
            return (dt if dt.tzinfo else dt.replace(tzinfo=UTC)).astimezone(UTC)
    except (ValueError, OverflowError, OSError):
        return None
    return None


def read_file(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError as e:
        raise InputError(f"no such file: {path}") from e
    except UnicodeDecodeError as e:
        raise InputError(f"{path} is not UTF-8 text") from e
    except OSError as e:
        raise InputError(f"cannot read {path}: {e.strerror}") from e
