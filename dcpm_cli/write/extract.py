"""System 1, step 2: what one input says, as items grounded in it.

The extraction call sees the input (a call per bounded piece of a long one), the conversation
it ends and the attributes of related memories; the guards then keep only items the input
itself says, about a subject it or its conversation names. The guards are pure: words in,
items and the reasons for dropping the rest out.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC, datetime, timedelta, tzinfo
from typing import TYPE_CHECKING

from dcpm_cli import chunking
from dcpm_cli.dates import resolve_when
from dcpm_cli.llm import structured
from dcpm_cli.models import MemoryItem, RawInput, normalise, short_hash, utcnow
from dcpm_cli.prompts import extraction
from dcpm_cli.prompts.extraction import ExtractedItem
from dcpm_cli.write.words import words

if TYPE_CHECKING:
    from dcpm_cli.llm import LLM

# Current items near an input whose attributes extraction is offered.
KNOWN_ATTRIBUTES = 8


def conversation(turns: Sequence[RawInput], said_at: datetime, gap: timedelta) -> list[RawInput]:
    """The earlier turns (oldest first) of the conversation an input said at `said_at` ends:
    walking back from it up to the first pause longer than `gap` (web analytics' sessions). A
    session names where words came from, not one conversation."""
    kept: list[RawInput] = []
    for turn in reversed(turns):
        if said_at - turn.said_at > gap:
            break
        kept.append(turn)
        said_at = turn.said_at
    return kept[::-1]


def offered_attributes(near: Sequence[tuple[MemoryItem, float]], floor: float) -> list[tuple[str, str]]:
    """(subject, attribute) of the current items nearest to an input, most similar first, of
    those related to it at all (cosine at or above recall's floor): the nearest of unrelated
    items is still unrelated."""
    pairs = [
        (i.subject, i.attribute) for i, cos in near if i.attribute and i.kind != "summary" and cos >= floor
    ]
    return list(dict.fromkeys(pairs))


def ask(
    llm: LLM,
    raw: RawInput,
    history: list[RawInput],
    known: list[tuple[str, str]],
    *,
    retries: int,
    ask_ended: bool = False,
    zone: tzinfo = UTC,
) -> list[ExtractedItem]:
    """The items the model extracts from `raw`: a validated call per piece of a long input
    (`ask_ended`: each item says what it took the place of, for named ends). The days the
    model is told things were said on are `zone`'s (the user's)."""
    raw = replace(raw, said_at=raw.said_at.astimezone(zone))
    history = [replace(h, said_at=h.said_at.astimezone(zone)) for h in history]
    found: list[ExtractedItem] = []
    for piece in chunking.pieces(raw.text) or [raw.text]:
        got = structured(
            llm,
            extraction.messages(
                raw if piece == raw.text else replace(raw, text=piece), history, known, ask_ended=ask_ended
            ),
            extraction.Extraction,
            retries=retries,
            schema=extraction.schema(ask_ended),
        )
        found.extend(got.items)
    return found


def ground(
    found: Sequence[ExtractedItem], text: str, history: Sequence[RawInput]
) -> tuple[list[tuple[int, ExtractedItem]], list[str]]:
    """The items the input `text` says (each with its place in the reply, which names its id),
    subjects grounded; and why each other one was dropped."""
    said = set(words(text))
    turns = [(t.role, set(words(t.text))) for t in history]
    heard = said.union(*(w for _, w in turns))
    kept: list[tuple[int, ExtractedItem]] = []
    rejected: list[str] = []
    for i, x in enumerate(found):
        if why := from_context(x.text, said, turns):
            rejected.append(why)
        else:
            kept.append((i, grounded_subject(x, heard)))
    return kept, rejected


def from_context(text: str, said: set[str], turns: Sequence[tuple[str, set[str]]]) -> str:
    """Why an extracted item is an earlier turn's words rather than the input's ('' if it is the
    input's): at least half its words are in one earlier turn, and fewer, under half, in the
    input (`said`: the input's words; `turns`: each earlier turn's role and words). An item
    that resolves a reference keeps most of its words from the input."""
    item_words = set(words(text))
    if not item_words or not turns:
        return ""
    own = len(item_words & said) / len(item_words)
    if own >= 0.5:
        return ""
    for role, turn_words in turns:
        theirs = len(item_words & turn_words) / len(item_words)
        if theirs >= 0.5 and theirs > own:
            return f"item {text[:80]!r} repeats an earlier {role} turn, not the input: dropped"
    return ""


def ended_words(x: ExtractedItem, said: set[str]) -> str:
    """What the input says this item took the place of, as the model copied it ('' when it
    named nothing, or words the input does not hold: at least half the phrase's words must be
    the input's, `said`). A small model reliably copies words; it does not reliably judge."""
    phrase = (x.instead_of or "").strip().strip("\"'.")
    got = set(words(phrase))
    if not got or phrase.casefold() in {"null", "none", "n/a", "nothing"}:
        return ""
    return phrase if len(got & said) * 2 >= len(got) else ""


def grounded_subject(x: ExtractedItem, heard: set[str]) -> ExtractedItem:
    """The item about the user when the subject it names is named nowhere in the input or its
    conversation (`heard`: their words); a subject they do name ("she" after "my sister
    Hanna") is kept."""
    subject_words = set(words(x.subject))
    return x if not subject_words or subject_words & heard else x.model_copy(update={"subject": "user"})


def to_item(raw: RawInput, index: int, x: ExtractedItem, zone: tzinfo = UTC) -> MemoryItem:
    """The memory item of the `index`th item of `raw`'s reply (its id: stable however many go);
    the time words it copied are read as days of `zone` (the user's)."""
    now = utcnow()
    return MemoryItem(
        id="m_" + short_hash(raw.id, str(index)),
        kind=x.kind,
        text=x.text.strip(),
        topic=normalise(x.topic),
        subject=(x.subject or "user").strip(),
        attribute=normalise(x.attribute),
        salience=float(x.salience),
        event_at=resolve_when(x.when, raw.said_at, zone) or raw.said_at,
        created_at=now,
        updated_at=now,
        raw_ids=[raw.id],
    )
