"""What a user hands over as text: a UTF-8 file, and a time written out (ISO or Unix seconds)."""

from __future__ import annotations

import contextlib
import re
from datetime import UTC, date, datetime, tzinfo
from pathlib import Path
from typing import BinaryIO

from dcpm_cli.dates import wall_clock_in
from dcpm_cli.errors import InputError
from dcpm_cli.models import short_hash

# Times dcpm accepts: far enough from datetime's limits (years 1 and 9999) that no later step
# (a day's window back, a time zone) can overflow.
EARLIEST = datetime(1000, 1, 1, tzinfo=UTC)
LATEST = datetime(9000, 1, 1, tzinfo=UTC)


def refuse_binary(text: str, source: str = "the input") -> None:
    """The one check of words every way in shares (CLI text and files, chat exports, MCP,
    Memory.add): a NUL byte means binary, not words, and no store holds one; nor does it hold
    a lone surrogate (half a character, which JSON can spell as \\ud800), which no encoder reads."""
    if "\x00" in text:
        line = text.count("\n", 0, text.index("\x00")) + 1
        raise InputError(f"{source} holds a NUL byte (line {line}): it looks binary, not text")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as e:
        line = text.count("\n", 0, e.start) + 1
        raise InputError(
            f"{source} holds a lone surrogate (line {line}): half a character, not Unicode text",
            "is it an escape like \\ud800 without its other half? fix or drop it",
        ) from None


def parse_time(value: str | float | int, what: str = "time") -> datetime:
    """ISO date or datetime, or Unix seconds, as UTC; a bare date (2026-03-01, 20260301,
    2026-W09-7) is its noon. Written without an offset it is a wall-clock time (`is_wall_clock`),
    which storing reads in the user's zone (`RawInput.in_zone`)."""
    when = read_time(value)
    if when is None:
        hint = "use an ISO date like 2026-03-01 or 2026-03-01T18:30, or Unix seconds"
        raise InputError(f"cannot read {what} {value!r}", hint)
    if not EARLIEST <= when < LATEST:
        raise InputError(f"{what} {value!r} is out of range", "give a time between the years 1000 and 9000")
    return when


def parse_as_of(value: str, what: str = "--as-of", zone: tzinfo = UTC) -> datetime:
    """A moment to read memory as of: a bare date means the end of that day (everything said
    that day counts), where a bare date said of an input means its noon. Written without an
    offset, it is a time of `zone` (the user's)."""
    when = parse_time(value, what)
    if _day_only(value) is not None:
        when = when.replace(hour=23, minute=59, second=59, microsecond=999999)
    return wall_clock_in(when, zone) if is_wall_clock(value) else when


def is_wall_clock(value: object) -> bool:
    """A time written without an offset — a day, or an ISO time of day with none — which is
    the user's own (the `timezone` setting); Unix seconds, and a time with an offset or Z, are
    one instant everywhere."""
    if not isinstance(value, str):
        return False
    s = value.strip()
    if _day_only(s) is not None:
        return True
    try:
        return datetime.fromisoformat(s.replace("Z", "+00:00")).tzinfo is None
    except ValueError:
        return False


def clock_change(value: str, zone: tzinfo) -> str:
    """What a wall-clock time said in `zone` meets at a change of the clocks, '' if nothing: a
    time that never happened there (read with the offset from before the change) or one that
    happened twice (read as the first)."""
    when = read_time(value)
    if when is None or not is_wall_clock(value):
        return ""
    return clock_change_at(when, zone, value.strip())


def clock_change_at(wall_read_as_utc: datetime, zone: tzinfo, written: str = "") -> str:
    """`clock_change` of a time parsed as a wall clock (read as UTC, not moved into the zone yet:
    a `RawInput` still `wall_clock`), named as `written`, else as its ISO day and minute."""
    wall = wall_read_as_utc.replace(tzinfo=None)
    first, second = wall.replace(tzinfo=zone), wall.replace(tzinfo=zone, fold=1)
    if first.utcoffset() == second.utcoffset():
        return ""
    written = written or f"{wall:%Y-%m-%dT%H:%M}"
    shown = first.astimezone(UTC).astimezone(zone).replace(tzinfo=None)
    if shown != wall:
        return f"{written} never happened in {zone} (the clocks went forward): read as {shown:%H:%M}"
    return f"{written} happened twice in {zone} (the clocks went back): read as the first"


_UNIX_SECONDS = re.compile(r"\d{9,10}(?:\.\d+)?")  # 8 digits are a date: 20260301


def read_time(value: object) -> datetime | None:
    try:
        if isinstance(value, int | float) and not isinstance(value, bool):
            return datetime.fromtimestamp(float(value), UTC)  # NaN, inf, 1e20: ValueError etc.
        if isinstance(value, str):
            s = value.strip()
            if _UNIX_SECONDS.fullmatch(s) and _day_only(s[:8]) is None:  # 2026030112 is no instant
                return datetime.fromtimestamp(float(s), UTC)  # --at 1774000000, as a log's "timestamp"
            if (d := _day_only(s)) is not None:
                return datetime(d.year, d.month, d.day, 12, tzinfo=UTC)
            dt = datetime.fromisoformat(s.replace("Z", "+00:00"))
            return (dt if dt.tzinfo else dt.replace(tzinfo=UTC)).astimezone(UTC)
    except (ValueError, OverflowError, OSError):
        return None
    return None


def _day_only(value: str) -> date | None:
    """The day an ISO date names with no time of day, in any of its forms, else None."""
    try:
        return date.fromisoformat(value.strip())
    except ValueError:
        return None


def read_file(path: Path) -> str:
    """A UTF-8 file's text; a byte-order mark (what Windows editors put first) is not part of it."""
    try:
        return path.read_text(encoding="utf-8-sig")
    except FileNotFoundError as e:
        raise InputError(f"no such file: {path}") from e
    except UnicodeDecodeError as e:
        with contextlib.suppress(OSError), path.open("rb") as f:
            if f.read(4) == b"PK\x03\x04":
                raise InputError(
                    f"{path} is a zip archive, not text",
                    "unzip it and add the text inside (an iPhone's WhatsApp export holds _chat.txt)",
                ) from e
        raise InputError(f"{path} is not UTF-8 text") from e
    except OSError as e:
        raise InputError(f"cannot read {path}: {e.strerror}") from e


# -- JSON nesting ----------------------------------------------------------------------------

# Deeper than any chat export or dcpm record (a ChatGPT export nests about 12 levels): a file
# past it is hostile, and parsers pay for depth (Python's json recurses; ijson's prefixes grow
# with the square of the depth: 100,000 levels took 22 GB).
MAX_JSON_DEPTH = 200

_STRUCTURE = re.compile(rb'["\[\]{}]')
_STRING_REST = re.compile(rb'[^"\\]*(?:\\.[^"\\]*)*', re.S)


class DepthGuard:
    """Counts JSON nesting over text given in pieces (strings skipped, even across pieces)
    and refuses past MAX_JSON_DEPTH, before any parser sees the piece."""

    def __init__(self, source: str, limit: int = MAX_JSON_DEPTH) -> None:
        self.source, self.limit = source, limit
        self.depth = 0
        self.in_string = self.escaped = False

    def feed(self, chunk: bytes) -> None:
        i, n = 0, len(chunk)
        if self.escaped and n:
            i, self.escaped = 1, False
        while i < n:
            if self.in_string:
                i = _STRING_REST.match(chunk, i).end()  # type: ignore[union-attr]
                if i >= n:
                    break
                if chunk[i] == 0x5C:  # a backslash ending the piece escapes the next one's first byte
                    self.escaped = True
                    break
                self.in_string = False  # the closing quote
                i += 1
                continue
            m = _STRUCTURE.search(chunk, i)
            if m is None:
                break
            c, i = chunk[m.start()], m.end()
            if c == 0x22:
                self.in_string = True
            elif c in (0x5B, 0x7B):
                self.depth += 1
                if self.depth > self.limit:
                    raise InputError(
                        f"{self.source} nests JSON deeper than {self.limit} levels; nothing was stored",
                        "is this an unedited export?",
                    )
            else:
                self.depth -= 1


def check_json_depth(text: str | bytes, source: str) -> None:
    """Refuse JSON nested past MAX_JSON_DEPTH before a parser recurses into it."""
    DepthGuard(source).feed(text.encode("utf-8", "surrogatepass") if isinstance(text, str) else text)


BOM = b"\xef\xbb\xbf"


def rewind(f: BinaryIO) -> None:
    """Back to where a binary file's text starts: past a byte-order mark (what Windows editors
    put first), which is not part of the text, as `read_file` drops it from a text file."""
    f.seek(0)
    if f.read(len(BOM)) != BOM:
        f.seek(0)


class DepthCheckedFile:
    """A binary file whose every read is depth-checked first, so a streaming parser never
    holds more than MAX_JSON_DEPTH levels."""

    def __init__(self, f: BinaryIO, source: str) -> None:
        self._f, self._guard = f, DepthGuard(source)

    def read(self, size: int = -1) -> bytes:
        chunk = self._f.read(size)
        self._guard.feed(chunk)
        return chunk


def log_session(source: str, first: datetime | None, text: str) -> str:
    """The session of a chat log given none, from its first turn: its time as written, to the
    second, and its words' hash ("stdin 2026-02-08 21:10:00 3fa2c1d0": two chats begun in one
    minute, or second, are two), or, for a first line with no time, the hash alone; the same
    when the log is piped again."""
    words = short_hash(text.strip(), n=8)
    return f"{source} {first:%Y-%m-%d %H:%M:%S} {words}" if first is not None else f"{source} {words}"
