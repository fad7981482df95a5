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


_SUFFIX = re.compile(r"(?:ing|ed)$")
_PLURAL = re.compile(r"(?:es|s)$")


def stem(word: str) -> str:
    """A word without its commonest English endings, enough to tell that two texts name the same
    thing ("running"/"run", "classes"/"class", "stopped"/"stop"); never shorter than 3 letters."""
    w = word.casefold()
    if (s := _SUFFIX.sub("", w)) != w and len(s) >= 3:
        return s[:-1] if len(s) > 3 and s[-1] == s[-2] and s[-1] not in "aeiouls" else s
    if not w.endswith("ss") and (s := _PLURAL.sub("", w)) != w and len(s) >= 3:
        return s
    return w.removesuffix("e") if len(w) > 4 else w


def stems(text: str) -> set[str]:
    """The stems of a text's content words."""
    return {stem(w) for w in words(text)}
