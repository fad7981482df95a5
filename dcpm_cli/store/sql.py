"""Literals for Lance SQL filters."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime


def quote(value: str) -> str:
    """A string literal for a Lance SQL filter."""
    return "'" + value.replace("'", "''") + "'"


def in_list(column: str, values: Iterable[str]) -> str:
    return f"{column} IN ({', '.join(quote(v) for v in values)})"


def timestamp(t: datetime) -> str:
    """A timestamp literal for a Lance SQL filter (`said_at < timestamp '…'`), in UTC to the
    microsecond, as the tables store it."""
    return "timestamp " + quote(t.astimezone(UTC).isoformat(sep=" ")[:26])
