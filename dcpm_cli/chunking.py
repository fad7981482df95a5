"""Long inputs in bounded pieces for extraction: the raw input stays whole in the store, but
no prompt carries more than `EXTRACT_CHARS` of it (a 10 MB input once went whole into one
prompt). Pieces end at paragraph breaks, else at sentence ends, else at spaces; only a run of
characters with no space at all is cut blind."""

from __future__ import annotations

import re
from collections.abc import Iterator

EXTRACT_CHARS = 4000  # ~1,000 tokens: room for the prompt and history in a small model's context

_PARAGRAPHS = re.compile(r"\n\s*\n")
_SENTENCES = re.compile(r"(?<=[.!?…])\s+")
_SPACES = re.compile(r"\s+")


def pieces(text: str, limit: int = EXTRACT_CHARS) -> list[str]:
    """`text` as consecutive pieces of at most `limit` characters (one piece when it fits);
    together they hold every non-space character of `text`, in order."""
    text = text.strip()
    if len(text) <= limit:
        return [text] if text else []
    out: list[str] = []
    current = ""
    for part, sep in _parts(text, limit):
        if current and len(current) + len(sep) + len(part) > limit:
            out.append(current)
            current = ""
        current = f"{current}{sep}{part}" if current else part
    if current:
        out.append(current)
    return out


def _parts(text: str, limit: int) -> Iterator[tuple[str, str]]:
    """(part, the separator that joins it to the part before) with every part ≤ limit."""
    for pattern, sep in ((_PARAGRAPHS, "\n\n"), (_SENTENCES, " "), (_SPACES, " ")):
        if not pattern.search(text):
            continue
        for i, chunk in enumerate(p for p in pattern.split(text) if p.strip()):
            joiner = sep if i else ""
            if len(chunk) <= limit:
                yield chunk.strip(), joiner
            else:
                for j, (sub, sub_sep) in enumerate(_parts(chunk.strip(), limit)):
                    yield sub, (sub_sep if j else joiner)
        return
    for i in range(0, len(text), limit):  # no space anywhere: cut blind
        yield text[i : i + limit], ""
