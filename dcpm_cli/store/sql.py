"""Literals for Lance SQL filters."""

from __future__ import annotations

from collections.abc import Iterable


def quote(value: str) -> str:
    """A string literal for a Lance SQL filter."""
    return "'" + value.replace("'", "''") + "'"


def in_list(column: str, values: Iterable[str]) -> str:
    return f"{column} IN ({', '.join(quote(v) for v in values)})"
