"""Input formats: plain text, JSONL chat logs, Markdown journals (one entry per dated heading),
and (dispatched to their own modules) chat exports: ChatGPT, Claude, WhatsApp."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from enum import StrEnum
from pathlib import Path

from dcpm_cli.errors import InputError
from dcpm_cli.ingest import exports as ingest_exports
from dcpm_cli.ingest.text import check_json_depth, is_wall_clock, log_session, parse_time, refuse_binary
from dcpm_cli.ingest.whatsapp import looks_like_whatsapp, parse_whatsapp
from dcpm_cli.models import RawInput, speaker_of, spoken_by, utcnow

ROLES = ("user", "assistant", "system")


class Format(StrEnum):
    auto = "auto"
    text = "text"
    jsonl = "jsonl"
    markdown = "markdown"
    chatgpt = "chatgpt"  # the ChatGPT data export (conversations.json); see ingest_exports.py
    claude = "claude"  # the Claude data export (conversations.json)
    notes = "notes"  # a folder of Markdown daily notes (--file DIR)
    whatsapp = "whatsapp"  # WhatsApp's "Export chat" .txt; see ingest/whatsapp.py


_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})")  # a fenced code block opens or closes (CommonMark)
_HEADING = re.compile(r"^(#{1,3})\s+(.*?)\s*#*\s*$")
_DATE_FORMATS = (
    "%Y-%m-%d",
    "%Y/%m/%d",
    "%d.%m.%Y",  # 06.03.2025: day first wherever dots separate a date
    "%d %B %Y",
    "%B %d, %Y",
    "%B %d %Y",
    "%d %b %Y",
    "%b %d, %Y",
    "%b %d %Y",
)
# A day and a month, the year left to the journal ("## Friday 4 April", "### March 5th").
_NO_YEAR_FORMATS = ("%d %B", "%B %d", "%d %b", "%b %d")
_ORDINAL = re.compile(r"\b(\d{1,2})(?:st|nd|rd|th)\b", re.I)
# A journal runs forward: a year-less day this long before the entry above it is in the next
# year ("## 30 December" … "## 2 January").
_YEAR_TURNED = timedelta(days=60)


_SLASHED = re.compile(r"^(\d{1,2})/(\d{1,2})/(\d{4})\b")  # 28/11/2026 or 11/28/2026


def _day_first(titles: list[str]) -> bool | None:
    """Whether a journal's slashed days put the day first (28/11/2026) or the month (11/28/2026),
    from the headings that tell (a number over 12); None if none does, or they disagree."""
    votes = set()
    for title in titles:
        if m := _SLASHED.match(_without_weekday(title)):
            if int(m.group(1)) > 12:
                votes.add(True)
            if int(m.group(2)) > 12:
                votes.add(False)
    return votes.pop() if len(votes) == 1 else None


def _without_weekday(title: str) -> str:
    return re.sub(r"^(mon|tue|wed|thu|fri|sat|sun)[a-z]*,?\s+", "", title.strip(), flags=re.I)


def _heading_date(
    title: str, last: datetime | None = None, now: datetime | None = None, day_first: bool | None = None
) -> datetime | None:
    """The day a heading names, or None. A day without a year takes the year of `last` (the
    dated entry above it: the next year if it would fall well before it), else the latest
    year that puts it on or before `now`. A slashed day is read day first or month first as
    its numbers tell (a number over 12), else as `day_first` says (the journal's other
    headings); with neither it is no date: 04/05/2026 is April or May."""
    m = re.search(r"\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2})?)?", title)
    if m:
        try:
            return parse_time(m.group(0).replace(" ", "T"))
        except InputError:  # "# Ticket 2026-44-1234 closed": digits, not a day
            return None
    cleaned = _ORDINAL.sub(r"\1", _without_weekday(title))
    if m := _SLASHED.match(cleaned):
        a, b, year = (int(x) for x in m.groups())
        first = True if a > 12 else False if b > 12 else day_first
        if first is None:
            return None
        day, month = (a, b) if first else (b, a)
        try:
            return datetime(year, month, day, 12, tzinfo=UTC)
        except ValueError:
            return None
    words = cleaned.split()
    # a date, or a date and a title ("## 06.03.2026 Trip to Rome", "## 4 April: beans")
    for head in dict.fromkeys(
        x.rstrip(" ,.:;-–—") for x in (cleaned, " ".join(words[:3]), words[0] if words else "")
    ):
        for fmt in _DATE_FORMATS:
            try:
                d = datetime.strptime(head, fmt)
            except ValueError:
                continue
            return datetime(d.year, d.month, d.day, 12, tzinfo=UTC)
    for head in dict.fromkeys(x.rstrip(" ,.:;-–—") for x in (cleaned, " ".join(words[:2]))):
        for fmt in _NO_YEAR_FORMATS:
            try:
                d = datetime.strptime(f"{head} 2000", f"{fmt} %Y")  # 2000: 29 February parses
            except ValueError:
                continue
            return _in_year(d.month, d.day, last, now or utcnow())
    return None


def said_words(text: str) -> str:
    """An input's words as its vector is made of: a journal entry without the date of its
    heading, which is its time (stored apart), not what it says. Entries of one journal all
    open with a date, and short ones looked alike for it ("## 2026-10-15 Priya left; my new
    manager is Tom." and "## 2026-11-20 Tom is great." at a cosine of 0.60 under MiniLM, 0.42
    without the dates). Of the headings it opens with, a dated one keeps its title ("## 6
    March: Rome" is "Rome", "## Wedding 4 April 2026" is "Wedding"); another ("# My journal")
    stays whole; an input that is a date heading alone keeps it."""
    lines = text.split("\n")
    for n, line in enumerate(lines):
        if not line.strip():
            continue
        m = _HEADING.match(line)
        if m is None:
            break
        title = _title_of(m.group(2))
        if title != m.group(2) and (not title or _heading_date(m.group(2)) is not None):
            lines[n] = title
    words = "\n".join(x for x in lines if x.strip()).strip()
    return words or text


# A heading's words that say its day: a date in any form the headings take, a time, a weekday, a
# month, a day's number, a year, and what joins them ("2026-03-01 — 2026-03-02", "2 Feb 2026 (Mon)").
_DAY_WORD = re.compile(
    r"\d{4}-\d{2}-\d{2}(?:[T ]?\d{2}:\d{2}(?::\d{2})?)?|\d{1,2}[./]\d{1,2}[./]\d{2,4}\.?|\d{1,2}:\d{2}"
    r"|\d{1,2}(?:st|nd|rd|th)?|(?:19|20)\d{2}"
    r"|(?:mon|tue|tues|wed|thu|thur|thurs|fri|sat|sun)(?:day|sday|nesday|rsday|urday)?"
    r"|jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sept?(?:ember)?"
    r"|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?|[-–—|:,.()\[\]]*",
    re.I,
)


def _title_of(heading: str) -> str:
    """A heading without the words that say its day at either end: its title, or ""."""
    words = heading.split()
    while words and _DAY_WORD.fullmatch(words[0].strip("()[],.:;")):
        words.pop(0)
    while words and _DAY_WORD.fullmatch(words[-1].strip("()[],.:;")):
        words.pop()
    title = " ".join(words).strip(" ,.:;-–—|")
    wrapped = title[:1] + title[-1:] in ("()", "[]") and not re.search(r"[()\[\]]", title[1:-1])
    return title[1:-1].strip() if wrapped else title


def _in_year(month: int, day: int, last: datetime | None, now: datetime) -> datetime | None:
    def on(year: int) -> datetime | None:
        try:
            return datetime(year, month, day, 12, tzinfo=UTC)
        except ValueError:  # 29 February of a common year
            return None

    if last is not None:
        d = on(last.year)
        if d is None or d < last - _YEAR_TURNED:
            d = on(last.year + 1)
        if d is not None and d.date() <= now.date():
            return d
        # Past `now`: a journal written newest first ("## 2 January" above "## 30 December").
    for year in (now.year, now.year - 1, now.year - 2, now.year - 3, now.year - 4):
        d = on(year)
        if d is not None and d.date() <= now.date():
            return d
    return None


def parse_markdown(
    text: str, *, session: str, source: str, at: datetime | None, at_wall: bool = False
) -> list[RawInput]:
    """One input per dated heading, the heading line included; undated headings stay inside
    the entry they follow. Every character lands in some input: text before the first dated
    heading is an input of its own dated like the first entry (or `at`), unless it is only
    headings (a title), which then open the first entry."""
    entries: list[tuple[datetime | None, list[str]]] = [(None, [])]
    code = _fenced_lines(text.splitlines())  # a "## 2025-03-04" inside a code block is no day
    last: datetime | None = None  # the day of the dated entry above: a year-less day's year
    lines = text.splitlines()
    headings = [m.group(2) for n, x in enumerate(lines) if n not in code and (m := _HEADING.match(x))]
    day_first = _day_first(headings)
    for n, line in enumerate(lines):
        m = None if n in code else _HEADING.match(line)
        when = _heading_date(m.group(2), last, at, day_first) if m else None
        if when is not None:
            entries.append((when, []))
            last = when
        entries[-1][1].append(line)
    preamble = entries.pop(0)[1]
    if entries and all(_HEADING.match(x) or not x.strip() for x in preamble):
        entries[0] = (entries[0][0], [*preamble, *entries[0][1]])  # a title opens the first entry
    elif any(x.strip() for x in preamble):
        entries.insert(0, (None, preamble))
    first_date = next((when for when, _ in entries if when is not None), None)
    out = []
    for i, (when, lines) in enumerate(entries):
        body = "\n".join(lines).strip()
        if not body:
            continue
        said = when or at or first_date
        out.append(
            RawInput(
                text=body,
                session=session,
                source=source,
                said_at=said or utcnow(),
                position="" if said else f"{source}#{i}",
                wall_clock=at_wall if when is None and at is not None else said is not None,
            )
        )
    return out


def _fenced_lines(lines: list[str]) -> set[int]:
    """The lines inside fenced code blocks that close (CommonMark: a backtick fence's info
    string holds no backtick, so "```rm -rf``` is what I typed" opens nothing; a fence never
    closed is taken as no fence, so one stray line cannot swallow the rest of a journal)."""
    inside: set[int] = set()
    start, fence = -1, ""
    for n, line in enumerate(lines):
        f = _FENCE.match(line)
        if not f:
            continue
        mark, rest = f.group(1), line[f.end() :]
        if not fence:
            if mark[0] == "`" and "`" in rest:
                continue
            start, fence = n, mark
        elif mark[0] == fence[0] and len(mark) >= len(fence) and not rest.strip():
            inside.update(range(start, n + 1))
            start, fence = -1, ""
    return inside


def parse_jsonl(
    text: str, *, session: str, source: str, at: datetime | None, at_wall: bool = False
) -> list[RawInput]:
    """`{"role", "content"[, "timestamp"][, "session"][, "speaker"]}` a line; every line is
    checked first. A `"speaker"` (or `"name"`) is a person's name, for a log between two people:
    the turn is stored as "Name: content" (so the name is part of what is searched), and its
    role defaults to "user".
    Turns that share a time (a log given `--at`, timestamps to the minute or the day) keep
    their order a microsecond apart: each is its own input ("yes" said twice is two), and a
    turn sees the ones before it as its conversation. A line with no timestamp after one that
    has one was said at its time: a reply logged without one still answers the question above
    it (a line before any time is one of a log without times: said at `at` or now, and known by
    its place, as it was before the log had times).
    A log of several turns given no session (piped, or typed) is one conversation all the same,
    named after its first turn (`ingest.text.log_session`): its replies are read with the questions they
    answer, and piped again it is the same session, so nothing is stored twice."""
    turns = [_turn(n, line, source) for n, line in enumerate(text.splitlines(), 1) if line.strip()]
    out = []
    same: dict[tuple[str, datetime], int] = {}  # (session, time) → turns at it so far
    chat = session
    logged: tuple[datetime, str | float] | None = None  # the time of the last line that had one
    for turn in turns:
        if turn.stamp is not None:
            logged = (parse_time(turn.stamp, f"timestamp on line {turn.n}"), turn.stamp)
        said = logged[0] if logged else at or utcnow()
        if not chat and not turn.session and len(turns) > 1:  # one line: a lone input
            chat = log_session(source, logged[0] if logged else at, turn.text)
        sess = turn.session or chat
        refuse_binary(sess, f"{source} line {turn.n}: session")
        earlier = same.get((sess, said), 0)
        same[(sess, said)] = earlier + 1
        out.append(
            RawInput(
                text=turn.text,
                role=turn.role,
                session=sess,
                source=source,
                said_at=said + timedelta(microseconds=earlier),
                position="" if logged or at else f"{source}#{turn.n}",
                wall_clock=is_wall_clock(logged[1]) if logged else (at is not None and at_wall),
            )
        )
    return out


@dataclass(frozen=True)
class _Turn:
    n: int  # its line
    session: str  # its own, or ""
    role: str
    text: str  # as stored: "Name: content" for a named speaker
    stamp: str | float | None


def _turn(n: int, line: str, source: str) -> _Turn:
    """One chat log line, checked."""
    where = f"{source} line {n}"
    check_json_depth(line, where)
    try:
        obj = json.loads(line)
    except json.JSONDecodeError as e:
        raise InputError(f"{where}: not JSON ({e.msg})") from e
    if not isinstance(obj, dict):
        raise InputError(f"{where}: expected an object with role and content")
    name = obj.get("speaker", obj.get("name"))
    # A turn between two people names its speaker; a person is a user of the memory.
    role, content = obj.get("role", "user" if name is not None else None), obj.get("content")
    if name is not None and (not isinstance(name, str) or not speaker_of(f"{name.strip()}: ")):
        raise InputError(
            f"{where}: speaker must be a name, got {json.dumps(name, ensure_ascii=False)}",
            "one to three words each starting with a capital (Maya, Élodie Roux, Mary Ann de la "
            "Cruz), a name in a script without capitals (李雷), or Speaker 2",
        )
    if "content" not in obj and role is None:
        # `{"text": …, "date": …}`: a log of another shape, not a turn with a bad role
        raise _another_shape(f"{where}: not a chat log line")
    if role is None:
        raise InputError(f'{where}: no "role" (one of {", ".join(ROLES)})')
    role = role.strip().lower() if isinstance(role, str) else role  # "User" is the user
    if role not in ROLES:
        got = json.dumps(role, ensure_ascii=False)
        raise InputError(f"{where}: role must be one of {', '.join(ROLES)}, got {got}")
    if not isinstance(content, str) or not content.strip():
        raise InputError(f"{where}: content must be a non-empty string")
    refuse_binary(content, f"{where}: content")  # JSON can spell a NUL or half a character
    stamp = obj.get("timestamp")
    if stamp is not None and (isinstance(stamp, bool) or not isinstance(stamp, str | int | float)):
        raise InputError(
            f"{where}: timestamp must be a date, a time or Unix seconds, got {json.dumps(stamp)}",
            "use an ISO date like 2026-03-01 or 2026-03-01T18:30, or Unix seconds",
        )
    text = spoken_by(name.strip(), content.strip()) if name is not None else content.strip()
    return _Turn(n, str(obj.get("session") or ""), role, text, stamp)


def looks_like_jsonl(text: str, source: str = "the input") -> bool:
    first = next((ln for ln in text.splitlines() if ln.strip()), "")
    if first.lstrip()[:1] in ("{", "["):
        check_json_depth(first, source)
    try:
        obj = json.loads(first)
    except json.JSONDecodeError:
        return False
    return isinstance(obj, dict) and "content" in obj


def _another_shape(what: str) -> InputError:
    """The error for JSON lines of another shape than a chat log's (`{"text": …, "date": …}`)."""
    return InputError(
        f'{what}: each line needs "content" (and "role": user, assistant or system; "timestamp" optional)',
        "rename the fields, or store it as one text with --format text",
    )


def _one_json_document(text: str, source: str) -> str | None:
    """A text that is one JSON value over several lines, or an array: the chat turns it holds as
    JSON lines (an array of turns, or `{"messages": [...]}`, as chat APIs write them), or an
    error when it holds none; None for any other text (one JSON line is a chat log line or a
    record, `looks_like_jsonl`)."""
    body = text.strip()
    if not body.startswith(("[", "{")):
        return None
    try:
        check_json_depth(body, source)
        value = json.loads(body)
    except (InputError, json.JSONDecodeError, RecursionError):
        return None  # JSON lines (each line checked on its own, by number), or a bracket's text
    if isinstance(value, dict) and "\n" not in body and "messages" not in value:
        return None  # one line: a chat log's, or a record (`_json_lines_of_another_shape`)
    turns = value.get("messages") if isinstance(value, dict) and "content" not in value else value
    turns = [turns] if isinstance(turns, dict) else turns
    # (each with a role or a speaker: `{"name": "Groceries", "content": "milk, eggs"}` is a list's)
    turn = ("content", ("role", "speaker"))
    if isinstance(turns, list) and turns and all(_has(t, *turn) for t in turns):
        return "\n".join(json.dumps(t, ensure_ascii=False) for t in turns)
    raise InputError(
        f"{source} is one JSON document, not a chat log",
        'a chat log is a JSON array of {"role", "content"[, "timestamp"]} turns, or one such object a '
        "line; to store the JSON as one text, --format text",
    )


def _has(obj: object, key: str, one_of: tuple[str, ...]) -> bool:
    return isinstance(obj, dict) and key in obj and any(k in obj for k in one_of)


def _json_lines_of_another_shape(text: str, least: int = 2) -> bool:
    """`least` or more lines, every one a JSON object, none with "content" (one piped or read
    from a file is a record too: a nightly job piping one a night; one typed is a note)."""
    lines = [ln for ln in text.splitlines() if ln.strip()]
    if len(lines) < least or not all(ln.lstrip().startswith("{") for ln in lines):
        return False
    try:
        objects = [json.loads(ln) for ln in lines]
    except (json.JSONDecodeError, RecursionError):
        return False
    return all(isinstance(o, dict) and "content" not in o for o in objects)


_DATE_LIKE = re.compile(r"\d{4}[-/.]\d{1,2}[-/.]\d{1,2}(?!\d)")


def not_dates(text: str) -> list[str]:
    """The headings written as a date that is none ("## 2026-02-30"): not an entry of their
    own, their text is stored with the entry above, which the writer of the journal should be
    told."""
    lines = text.splitlines()
    code = _fenced_lines(lines)
    return [
        m.group(2)
        for n, line in enumerate(lines)
        if n not in code
        and (m := _HEADING.match(line))
        and _DATE_LIKE.match(m.group(2))
        and _heading_date(m.group(2)) is None
    ]


def looks_like_journal(text: str) -> bool:
    return any((m := _HEADING.match(ln)) and _heading_date(m.group(2)) for ln in text.splitlines())


def parse(
    text: str,
    fmt: Format = Format.auto,
    *,
    session: str = "",
    source: str = "cli",
    at: datetime | None = None,
    role: str = "user",
    at_wall: bool = False,
    date_order: str = "",
) -> list[RawInput]:
    """Inputs from one text in the given (or detected) format. `at_wall`: `at` was written
    without an offset (`RawInput.wall_clock`); `date_order`: how to read a WhatsApp export's
    dates when they cannot tell ("dmy", "mdy")."""
    if not text.strip():
        raise InputError("nothing to add: the input is empty")
    refuse_binary(text, source)
    if fmt is Format.auto and (export := ingest_exports.detect_text(text)):
        fmt = Format(export)
    if fmt in (Format.chatgpt, Format.claude):
        return ingest_exports.parse_export(text, fmt.value, source=source)
    if fmt is Format.notes:
        raise InputError("--format notes reads a folder: dcpm add --file DIR --format notes")
    if reads_as_whatsapp(text, fmt, source):
        return parse_whatsapp(text, session=session, source=source, date_order=date_order)
    if fmt is Format.auto and (turns := _one_json_document(text, source)) is not None:
        # A chat log as one JSON array (or pretty-printed): its turns, as JSON lines would be
        # read; stored whole it was one text "said" now by the user, the assistant's words too.
        text, fmt = turns, Format.jsonl
    if fmt is Format.auto:
        fmt = (
            Format.jsonl
            if looks_like_jsonl(text, source)
            else Format.markdown
            if looks_like_journal(text)
            else Format.text
        )
        if fmt is Format.text and _json_lines_of_another_shape(text, least=2 if source == "cli" else 1):
            # `{"text": …, "date": …}` a line is a log meant as many inputs, not one text of
            # braces: stored whole it would be one input said now, found by no date.
            raise _another_shape(f"{source} looks like JSON lines but not a chat log")
    if fmt is Format.jsonl:
        return parse_jsonl(text, session=session, source=source, at=at, at_wall=at_wall)
    if fmt is Format.markdown:
        return parse_markdown(text, session=session, source=source, at=at, at_wall=at_wall)
    if role not in ROLES:
        raise InputError(f"role must be one of {', '.join(ROLES)}")
    # A file or a pipe without a time of its own is identified by where it came from, so a cron
    # job re-adding the same notes changes nothing; a typed `dcpm add "…"` is a new utterance.
    position = "" if at or source == "cli" else f"{source}#0"
    return [
        RawInput(
            text=text.strip(),
            role=role,
            session=session,
            source=source,
            said_at=at or utcnow(),
            position=position,
            wall_clock=at is not None and at_wall,
        )
    ]


def reads_as_whatsapp(text: str, fmt: Format, source: str) -> bool:
    """Whether `parse` reads `text` as a WhatsApp export: asked for, or detected (a note typed
    as the text, quoting a chat's lines, is a note)."""
    return fmt is Format.whatsapp or (fmt is Format.auto and source != "cli" and looks_like_whatsapp(text))


def default_format_for(path: Path) -> Format:
    return {
        ".jsonl": Format.jsonl,
        ".ndjson": Format.jsonl,
        ".md": Format.markdown,
        ".markdown": Format.markdown,
    }.get(path.suffix.lower(), Format.auto)
