"""The content words of a text, as the extraction and reconcile guards compare them."""

from __future__ import annotations

import re

_WORD = re.compile(r"\w[\w'-]{2,}")  # Unicode: names such as Tomás, Zoë
_STOP = frozenset(
    [
        "the",
        "and",
        "has",
        "have",
        "had",
        "with",
        "for",
        "that",
        "this",
        "was",
        "are",
        "is",
        "user",
        "user's",
        "their",
        "they",
        "them",
        "from",
    ]
)


def words(text: str) -> list[str]:
    """Casefolded words of three letters or more, without the stop words."""
    return [w for w in _WORD.findall(text.casefold()) if w not in _STOP]
