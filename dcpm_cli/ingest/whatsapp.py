"""WhatsApp's "Export chat" (a .txt, without media): a conversation between people.

Each message is stored as a turn of a log between two people (a JSON line's `"speaker"`):
"Maya: words", role `user`, at its time in the user's zone (the export writes local times
without an offset). The export is written in the phone's language and region:

    Android  12/03/2026, 21:15 - Maya: See you at the ferry
             3/12/26, 9:15 PM - Maya: See you at the ferry
             12/03/2026 à 21:15 - Maya: See you at the ferry
    iPhone   [12/03/2026, 21:15:03] Maya: See you at the ferry
             [12.03.26, 21:15:03] Maya: See you at the ferry

A line that does not open with a time goes on the message above it (a message of several
lines). Kept out: WhatsApp's own notices (no sender, "Messages and calls are end-to-end
encrypted", "Maya joined"; on an iPhone, words that open on a left-to-right mark, as its notices,
calls and media left out do), media left out of the export, deleted messages; the "<This
message was edited>" mark is dropped from the words. Each message keeps its place among its
minute's lines, those kept out too, so a chat exported again after a message was deleted is
still the one stored. A date that reads two ways (03/04/2026) is read as the export's other
dates tell (a number over 12), else as `date_order` says (the `DCPM_DATE_ORDER` setting), else,
of three dates or more, the way that keeps the chat far the shorter (a chat runs forward, days
apart, not months); with none of these it is refused rather than guessed.
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
_AT = rf"(?:,?{_SPACE}+(?:à|um|om|klo|kl\.){_SPACE}+|,?{_SPACE}+)"  # "12/03/2026 à 21:15", "…, 21:15"
_TIME = rf"(\d{{1,2}})[:.](\d{{2}})(?:[:.](\d{{2}}))?(?:{_SPACE}*([AaPp])\.?{_SPACE}?[Mm]\.?)?"
_START = re.compile(rf"^(?:\[{_DATE}{_AT}{_TIME}\]{_SPACE}+|{_DATE}{_AT}{_TIME}{_SPACE}+[-–]{_SPACE}+)(.*)$")
# A sender, then ": ". A notice that quotes a group's name ('Tom created group "Trip: Lisbon"')
# has a quotation mark before its colon: no sender.
_SENDER = re.compile(r"^([^:\"“”]{1,80}?):[ \u00a0](.*)$", re.S)
_LRM = "\u200e"  # an iPhone's notices, calls and media left out open on it
_ATTACHED = re.compile(
    "\u200e(?:document|image|video|audio) omitted$"
)  # "Invoice.pdf • ‎2 pages ‎document omitted"
# What stands for a message the export left out, or one deleted, in the languages most met.
_LEFT_OUT = re.compile(
    r"^(?:<media omitted>|<attached: [^>]*>|(?:image|video|audio|sticker|gif|document) omitted|"
    r"this message was deleted\.?|you deleted this message\.?|null|missed (?:voice|video) call|"
    r"waiting for this message\. this may take a while\.|<multimedia omitido>|se eliminó este mensaje\.|"
    r"eliminaste este mensaje\.|<medien ausgeschlossen>|(?:bild|video|audio) weggelassen|"
    r"diese nachricht wurde gelöscht\.|"
    r"sie haben diese nachricht gelöscht\.|<médias omis>|ce message a été supprimé|"
    r"vous avez supprimé ce message|<media weggelaten>)$",
    re.I,
)
_EDITED = re.compile(
    r"[ \u00a0\u202f\u200e]*<(?:this message was edited|se editó este mensaje\.|"
    r"diese nachricht wurde bearbeitet\.|ce message a été modifié)>$",
    re.I,
)


@dataclass
class _Message:
    line: int
    date: tuple[int, int, int]  # as written: (first, second, third)
    clock: tuple[int, int, int]
    sender: str
    text: str


def looks_like_whatsapp(text: str) -> bool:
    """An export: more than one line opens with a time and a sender, more than a third of the
    lines that open with a time do (a group's notices are many), and someone sends more than
    one (a log of one's own days, "12/03/2026, 08:00 - Lunch with Sara: …", "… - Todo: …", is
    no chat: each "sender" once)."""
    lines = text[:200_000].splitlines()[:400]
    starts = [m for ln in lines if (m := _START.match(_MARKS.sub("", ln).strip()))]
    senders = [who.group(1).strip() for m in starts if (who := _SENDER.match(m.group(15)))]
    return len(senders) > 1 and 3 * len(senders) > len(starts) and len(set(senders)) < len(senders)


def parse_whatsapp(text: str, *, session: str, source: str, date_order: str = "") -> list[RawInput]:
    """The export's messages as turns, in order; the notices, media and deleted ones left out.
    `date_order` ("dmy" or "mdy"): how to read a date the export cannot tell."""
    messages: list[_Message] = []
    lines: list[list[str]] = []  # each message's lines
    for n, raw_line in enumerate(text.splitlines(), 1):
        line = raw_line.lstrip("\ufeff\u200e\u200f")
        m = _START.match(line.strip())
        if m is None:
            if lines:
                lines[-1].append(line)
            elif line.strip():
                raise InputError(
                    f"{source} line {n} is part of no message: a WhatsApp export opens with one's time",
                    "pipe it from a line that opens with a date (`tail -n +N`), or add the whole export",
                )
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
                "",
            )
        )
        lines.append([who.group(2) if who else ""])
    for msg, its_lines in zip(messages, lines, strict=True):
        msg.text = "\n".join(its_lines).rstrip()
    days = _days(messages, source, date_order)
    said: list[tuple[datetime, str]] = []
    place: dict[datetime, int] = {}  # each line's place among its minute's, those kept out too
    for msg in messages:
        day = days[msg.date]
        try:
            at = datetime(*day, *msg.clock, tzinfo=UTC)
        except ValueError as e:
            raise InputError(f"{source} line {msg.line}: no such time ({e})") from None
        earlier = place.get(at, 0)
        place[at] = earlier + 1
        words = msg.text.strip()
        if mark := _EDITED.search(words[-120:]):  # (its end alone: a long text stays cheap)
            words = words[: len(words) - 120 + mark.start()] if len(words) > 120 else words[: mark.start()]
        if words.startswith(_LRM + "POLL:"):  # an iPhone's poll: its question and votes are words
            words = words.replace(_LRM, "")
        if (
            not msg.sender
            or not words
            or words.startswith(_LRM)
            or _LEFT_OUT.match(words)
            or _ATTACHED.search(words)
        ):
            continue
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
    words = " ".join(re.sub(r"[^\w\s'’.+()-]", " ", _MARKS.sub("", sender)).split())
    return words or sender.strip()


def _days(
    messages: list[_Message], source: str, date_order: str = ""
) -> dict[tuple[int, int, int], tuple[int, int, int]]:
    """Each date as written → (year, month, day), read in the order the export's dates tell."""
    written = list(dict.fromkeys(m.date for m in messages))
    if not written:
        return {}
    readings = [r for r in ("ymd", "dmy", "mdy") if all(_read(d, r) for d in written)]
    if not readings:
        bad = next(d for d in written if not any(_read(d, r) for r in ("ymd", "dmy", "mdy")))
        raise InputError(f"{source}: {'/'.join(map(str, bad))} is no date")
    read_as = {r: [_read(d, r) for d in written] for r in readings}
    if len({tuple(read_as[r]) for r in readings}) > 1 and date_order in readings:
        readings = [date_order]  # the user's word, where the dates themselves do not tell
    if len({tuple(read_as[r]) for r in readings}) > 1 and len(written) > 2:
        # A chat runs forward, days apart: of three dates or more, a reading far the shorter.
        span = {r: _span(read_as[r]) for r in readings}
        least = min(span.values())
        if all(span[r] == least or span[r] > 2 * least + 86_400 for r in readings):
            readings = [r for r in readings if span[r] == least]
    if len({tuple(read_as[r]) for r in readings}) > 1:
        d = written[0]
        raise InputError(
            f"{source}: its dates read two ways ({d[0]:02d}/{d[1]:02d}/{d[2]} is day first or month "
            "first) and none of them tells",
            "set the order your phone writes them: DCPM_DATE_ORDER=dmy (day first) or mdy",
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
