"""Chat exports and notes folders written in batches: the conversations ingest/exports.py reads
as a stream go to the Writer a bounded batch at a time, so an export of thousands of
conversations needs memory for one batch, not for the whole file."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import fields
from pathlib import Path
from typing import TYPE_CHECKING

from dcpm_cli.errors import InputError
from dcpm_cli.ingest.exports import NOTES, Progress, conversations, daily_notes
from dcpm_cli.models import PENDING, RAW_STATUSES, REPLACED, AddReport, RawInput, speaker_of

if TYPE_CHECKING:
    from dcpm_cli.write.pipeline import Writer

BATCH = 256  # inputs per store commit: one embedding batch, bounded memory


def import_file(
    path: Path, fmt: str, writer: Writer, *, extract: bool = True, progress: Progress | None = None
) -> AddReport:
    """Store (and extract) an export or a notes folder in batches; idempotent like any add."""
    total = AddReport()
    if fmt == NOTES:
        raws: Iterable[list[RawInput]] = [daily_notes(path, total.skipped)]
    else:
        raws = conversations(path, fmt, progress)
    seen = 0
    batch: list[RawInput] = []
    counted = True  # the batch in hand is in `total`
    try:
        for batch in _batches(raws):
            known = writer.store.known_raw_hashes([r.content_hash for r in batch])
            counted = False
            seen += len(batch)
            part = writer.add(batch, extract=extract)
            if fmt == NOTES:
                _replace_old_versions(writer, batch)
            _merge(total, part)
            counted = True
            if part.interrupted:
                break  # Ctrl-C: the rest is not read; importing again stores it (the rest is skipped)
            if part.llm_error and extract:
                extract = False  # the LLM is away: store the rest, `dcpm process` extracts later
    except KeyboardInterrupt:
        # Ctrl-C while a batch was being stored: the batches before it are committed (a write cut
        # short is finished by the next command). What of this batch reached the store is
        # counted from the store itself, so the user is told what is kept.
        total.interrupted = True
        if not counted:
            now = writer.store.known_raw_hashes([r.content_hash for r in batch])
            total.stored += len(now - known)
            total.already_stored += len(known)
        return total
    if not seen:
        raise InputError(f"no {fmt} messages found in {path}", "check --format (chatgpt, claude, notes)")
    return total


def _replace_old_versions(writer: Writer, notes: list[RawInput]) -> None:
    """A note file is one input per day: an edited day's earlier inputs become REPLACED (kept
    for `dcpm show` and export, no longer recalled). Run for every note, not only the new ones,
    so an import killed between storing and replacing is finished by the next one. A day whose
    text went back to an earlier version has that version recalled again, in the status it had."""
    # By file alone (a file is one day): its day's time moves with the `timezone` setting.
    _settle_versions(writer, notes, lambda r: r.source)


def replace_edited_entries(writer: Writer, entries: list[RawInput]) -> None:
    """A journal's entries, as `_replace_old_versions` does a notes folder's: an entry is its
    file and its heading's day, so the old words of an entry edited since are REPLACED (the
    trip "booked for June" answered before the "July" it was changed to). A day whose entry
    was deleted from the file keeps what it said; a day with two entries has both current."""
    zone = writer.settings.zone
    dated = [r for r in entries if not r.position]  # an undated entry is known by its place
    # Only an edit: most of the old words still there. A file is known by its name, so two
    # journals of one name (work/journal.md, home/journal.md) share their days' keys; another
    # journal's entry of the day says other things, and stays.
    _settle_versions(writer, dated, lambda r: (r.source, r.in_zone(zone).said_at), edited=_mostly_kept)


def replace_edited_messages(writer: Writer, messages: list[RawInput]) -> None:
    """A chat export's messages, as a journal's entries: a message is its file, its time (to
    its place among its minute's lines: `ingest.whatsapp`) and its sender, so the old words of
    a message edited since the last export are REPLACED by the new, and an edit taken back
    restores them. Only by an edit that kept most of the words (a wrong replace hides a
    message), and only by one stored (a message deleted "for me" moves the next one onto its
    place, and that one is known, not stored again)."""
    zone = writer.settings.zone
    _settle_versions(
        writer,
        messages,
        lambda r: (r.source, r.in_zone(zone).said_at, speaker_of(r.text)),
        edited=_mostly_kept,
    )


def _mostly_kept(old: RawInput, new: RawInput) -> bool:
    """`new` keeps at least half the words of the shorter of the two."""
    a, b = (set(re.findall(r"\w+", r.text.casefold())) for r in (old, new))
    return bool(a and b) and len(a & b) >= 0.5 * min(len(a), len(b))


def _settle_versions(
    writer: Writer,
    inputs: list[RawInput],
    key: Callable[[RawInput], object],
    edited: Callable[[RawInput, RawInput], bool] = lambda old, new: True,
) -> None:
    """The stored inputs of these files (`inputs`' session and sources) that share a key with
    an input of `inputs`, are none of them, and of which one, stored, is an `edited` version,
    become REPLACED by it; a REPLACED one that is among them again is restored."""
    if not inputs:
        return
    store = writer.store
    current: dict[object, list[RawInput]] = {}
    for r in inputs:
        current.setdefault(key(r), []).append(r)
    with store.write():
        versions = store.note_versions(inputs[0].session, sorted({r.source for r in inputs}))
        latest = {r.id: current.get(key(r), []) for r in versions}
        # Restores first: a kill between the two loops leaves two current versions of a day
        # (the next import settles it), never none.
        for old in versions:
            if old.status == REPLACED and any(r.id == old.id for r in latest[old.id]):  # went back to it
                store.set_raw_status(old.id, status_before_replaced(old))
        stored = {r.id for r in versions}  # (a version replaces only once stored itself)
        for old in versions:
            now = latest[old.id]
            if old.status == REPLACED or not now or any(r.id == old.id for r in now):
                continue
            if by := next((r for r in now if r.id in stored and edited(old, r)), None):
                store.set_raw_status(old.id, REPLACED, f"replaced by {by.id}; was {old.status}")


# A replaced note's `error` reads "replaced by r_…; was done": written above, read by these two.


def replaced_by(raw: RawInput) -> str:
    """The id of the version that replaced this note."""
    return raw.error.removeprefix("replaced by ").partition(";")[0].strip()


def status_before_replaced(raw: RawInput) -> str:
    """The status a REPLACED note had before; pending when not recorded (a dcpm before this
    one did not), so such an input is extracted again, never lost."""
    _, _, was = raw.error.rpartition("; was ")
    return was if was in RAW_STATUSES and was != REPLACED else PENDING


def _batches(conversations: Iterable[list[RawInput]]) -> Iterator[list[RawInput]]:
    batch: list[RawInput] = []
    for messages in conversations:
        batch.extend(messages)
        if len(batch) >= BATCH:
            yield batch
            batch = []
    if batch:
        yield batch


def _merge(total: AddReport, part: AddReport) -> None:
    for f in fields(AddReport):
        mine, theirs = getattr(total, f.name), getattr(part, f.name)
        if isinstance(mine, list):
            mine.extend(theirs)
        elif isinstance(mine, int):
            setattr(total, f.name, mine + theirs)
        elif theirs and not mine:
            setattr(total, f.name, theirs)  # the first LLM error says why
