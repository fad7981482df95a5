"""WhatsApp's "Export chat" (a .txt, without media): a conversation between people.

Each message is stored as a turn of a log between two people (a JSON line's `"speaker"`):
"Maya: words", role `user`, at its time in the user's zone (the export writes local times
without an offset). The export is written in the phone's language and region:

    Android  12/03/2026, 21:15 - Maya: See you at the ferry
             3/12/26, 9:15 PM - Maya: See you at the ferry
    iPhone   [12/03/2026, 21:15:03] Maya: See you at the ferry
             [12.03.26, 21:15:03] Maya: See you at the ferry

A line that does not open with a time goes on the message above it (a message of several
lines). Kept out: WhatsApp's own notices (no sender: "Messages and calls are end-to-end
encrypted", "Maya joined"), media left out of the export, deleted messages; the "<This message
was edited>" mark is dropped from the words. A date that reads two ways (03/04/2026) is read
as the export's other dates tell (a number over 12), else the way that keeps the chat the
shorter (a chat runs forward, a day or so at a time); one date alone that reads both ways is
refused rather than guessed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from itertools import pairwise

from dcpm_cli.errors import InputError
from dcpm_cli.ingest.text import log_session
from dcpm_cli.models import RawInput, spoken_by

IPHONE_WHATSAPP = "_chat.txt"  # the name of every chat an iPhone exports (in a zip of its own)
# Marks WhatsApp writes around names and notices (direction marks, a BOM on the first line).
_MARKS = re.compile("[\u200e\u200f\u202a-\u202e\u2066-\u2069\ufeff]")
_SPACE = "[ \u00a0\u202f]"  # iPhone exports put a narrow no-break space before "PM"
_DATE = r"(\d{1,4})[./-](\d{1,2})[./-](\d{1,4})"
_TIME = rf"(\d{{1,2}})[:.](\d{{2}})(?:[:.](\d{{2}}))?(?:{_SPACE}*([AaPp])\.?{_SPACE}?[Mm]\.?)?"
_START = re.compile(
    rf"^(?:\[{_DATE},?{_SPACE}+{_TIME}\]{_SPACE}+|{_DATE},?{_SPACE}+{_TIME}{_SPACE}+[-–]{_SPACE}+)(.*)$"
)
_SENDER = re.compile(r"^([^:]{1,80}?):[ \u00a0](.*)$", re.S)
# What stands for a message the export left out, or one deleted, in the languages most met.
_LEFT_OUT = re.compile(
    r"^(?:<media omitted>|<attached: [^>]*>|(?:image|video|audio|sticker|gif|document) omitted|"
    r"this message was deleted|you deleted this message|null|<multimedia omitido>|"
    r"<medien ausgeschlossen>|<médias omis>|<media weggelaten>)$",
    re.I,
)
_EDITED = re.compile(rf"{_SPACE}*<this message was edited>$", re.I)


@dataclass
class _Message:
    line: int
    date: tuple[int, int, int]  # as written: (first, second, third)
    clock: tuple[int, int, int]
    sender: str
    text: str


def looks_like_whatsapp(text: str) -> bool:
    """An export opens with a message's time, and has more than one."""
    lines = [_MARKS.sub("", ln).strip() for ln in text[:20_000].splitlines()[:50] if ln.strip()]
    return bool(lines) and bool(_START.match(lines[0])) and sum(bool(_START.match(ln)) for ln in lines) > 1


def parse_whatsapp(text: str, *, session: str, source: str) -> list[RawInput]:
    """The export's messages as turns, in order; the notices, media and deleted ones left out."""
    messages: list[_Message] = []
    for n, raw_line in enumerate(text.splitlines(), 1):
        line = _MARKS.sub("", raw_line).rstrip()
        m = _START.match(line.strip())
        if m is None:
            if messages and line.strip():
                messages[-1].text += "\n" + line
            continue
        g = list(m.groups())
        date, clock = (g[0:3], g[3:7]) if g[0] is not None else (g[7:10], g[10:14])  # iPhone, Android
        who = _SENDER.match(g[14])
        hour, minute, second = int(clock[0]), int(clock[1]), int(clock[2] or 0)
        if clock[3]:  # 12 AM is midnight, 12 PM noon
            hour = hour % 12 + (12 if clock[3].lower() == "p" else 0)
        messages.append(
            _Message(
                n,
                (int(date[0]), int(date[1]), int(date[2])),
                (hour, minute, second),
                _name(who.group(1)) if who else "",  # no sender: one of WhatsApp's notices
                who.group(2) if who else "",
            )
        )
    days = _days(messages, source)
    said: list[tuple[datetime, str]] = []
    same: dict[datetime, int] = {}  # messages of one minute keep their order (as a JSON log's)
    for msg in messages:
        words = _EDITED.sub("", msg.text.strip())
        if not msg.sender or not words or _LEFT_OUT.match(words):
            continue
        day = days[msg.date]
        try:
            at = datetime(*day, *msg.clock, tzinfo=UTC)
        except ValueError as e:
            raise InputError(f"{source} line {msg.line}: no such time ({e})") from None
        earlier = same.get(at, 0)
        same[at] = earlier + 1
        said.append((at + timedelta(microseconds=earlier), spoken_by(msg.sender, words)))
    if not said:
        raise InputError(f"{source} holds no message: only WhatsApp's notices, or media left out")
    # Given no session (piped), the chat is named after its first message, as a JSON log is.
    session = session or log_session(source, said[0][0], said[0][1])
    return [
        # the phone's local time, written without an offset: one of the user's zone
        RawInput(text=words, role="user", session=session, source=source, said_at=at, wall_clock=True)
        for at, words in said
    ]


def _name(sender: str) -> str:
    """A sender as a speaker's name: its words, without the emoji a contact is saved with
    ("Mum ❤️" is Mum); a number stays a number."""
    words = " ".join(re.sub(r"[^\w\s'’.+()-]", " ", sender).split())
    return words or sender.strip()


def _days(messages: list[_Message], source: str) -> dict[tuple[int, int, int], tuple[int, int, int]]:
    """Each date as written → (year, month, day), read in the order the export's dates tell."""
    written = list(dict.fromkeys(m.date for m in messages))
    if not written:
        return {}
    readings = [r for r in ("ymd", "dmy", "mdy") if all(_read(d, r) for d in written)]
    if not readings:
        bad = next(d for d in written if not any(_read(d, r) for r in ("ymd", "dmy", "mdy")))
        raise InputError(f"{source}: {'/'.join(map(str, bad))} is no date")
    if len(readings) > 1:
        # A chat runs forward: the reading that does, and of those the one that keeps it shorter.
        span = {r: _span([_read(d, r) for d in written]) for r in readings}
        least = min(span.values())
        readings = [r for r in readings if span[r] == least]
    if len({tuple(_read(d, r) for d in written) for r in readings}) > 1:
        d = written[0]
        raise InputError(
            f"{source}: every message is dated {d[0]:02d}/{d[1]:02d}/{d[2]}, which reads as two days "
            "(day first or month first); export a longer stretch of the chat, whose dates tell"
        )
    return {d: _read(d, readings[0]) or (0, 0, 0) for d in written}


def _read(d: tuple[int, int, int], reading: str) -> tuple[int, int, int] | None:
    a, b, c = d
    year, month, day = (a, b, c) if reading == "ymd" else (c, b, a) if reading == "dmy" else (c, a, b)
    if (reading == "ymd" and a < 1000) or (reading != "ymd" and c >= 100 and c < 1000):
        return None
    year = year + 2000 if year < 100 else year
    try:
        datetime(year, month, day)
    except ValueError:
        return None
    return year, month, day


def _span(days: list[tuple[int, int, int] | None]) -> float:
    """How long a chat read this way lasts, going forward; infinite if it goes back a day."""
    dates = [datetime(*d) for d in days if d]
    if any(b < a for a, b in pairwise(dates)):
        return float("inf")
    return (dates[-1] - dates[0]).total_seconds()
