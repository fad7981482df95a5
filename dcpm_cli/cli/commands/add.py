"""`dcpm add` and `dcpm process`: System 1 from the command line."""

from __future__ import annotations

import re
import sys
from datetime import timedelta
from pathlib import Path
from typing import Annotated, Any

import typer

from dcpm_cli.cli.app import NoSupersedes, _memory, app
from dcpm_cli.errors import EXIT_INTERRUPTED, EXIT_LLM
from dcpm_cli.ingest.formats import Format
from dcpm_cli.ingest.text import clock_change, clock_change_at, is_wall_clock, parse_time, read_file
from dcpm_cli.ingest.whatsapp import IPHONE_WHATSAPP
from dcpm_cli.models import utcnow


@app.command()
def add(
    ctx: typer.Context,
    text: Annotated[
        str | None,
        typer.Argument(help="What to remember; '-' reads stdin.", show_default=False),
    ] = None,
    file: Annotated[Path | None, typer.Option("--file", "-f", help="Read inputs from a file.")] = None,
    fmt: Annotated[
        Format,
        typer.Option(
            "--format",
            help="Input format (auto detects JSONL, dated Markdown, ChatGPT/Claude/WhatsApp exports).",
        ),
    ] = Format.auto,
    session: Annotated[
        str | None,
        typer.Option(
            "--session",
            "-s",
            help="Session id (default: the file name; a chat log piped, its first turn's time; else none).",
        ),
    ] = None,
    at: Annotated[
        str | None, typer.Option("--at", help="When it was said (ISO date/time) (default: now).")
    ] = None,
    role: Annotated[
        str, typer.Option("--role", help="Role of a plain-text input: user, assistant, system.")
    ] = "user",
    no_extract: Annotated[
        bool,
        typer.Option(
            "--no-extract",
            help="Store raw only; `dcpm process` extracts later (always, with extract = false).",
        ),
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the summary as JSON.")] = False,
    no_supersedes: NoSupersedes = False,
) -> None:
    """Remember something: raw input is stored first, then facts are extracted and reconciled."""
    from dcpm_cli import render
    from dcpm_cli.ingest import exports as ingest_exports
    from dcpm_cli.ingest import formats as ingest
    from dcpm_cli.private import StdinKeeper
    from dcpm_cli.write.batches import import_file

    m = _memory(ctx, no_supersedes)
    no_extract = no_extract or not m.settings.extract
    if (
        file is not None
        and text is None
        and (export := ingest_exports.detect(file, fmt.value) or _a_daily_note(file, fmt, at, session))
    ):
        with render.progress("conversations", enabled=True) as bar:
            report = import_file(
                file, export, m.writer(llm=not no_extract), extract=not no_extract, progress=bar
            )
        render.add_report(report, as_json=as_json)
        if report.interrupted:
            render.note(f"the rest of {file.name} was not read: add it again to store the rest")
        _llm_outcome(report)
        return
    kept = StdinKeeper()  # stdin cannot be read twice: kept on disk until it is stored
    storing = stored = False

    def on_stored() -> None:
        nonlocal stored
        stored = True
        kept.stored()

    try:
        content, source = _read_input(text, file, kept)
        when = parse_time(at, "--at") if at is not None else None  # "" is no time
        if when is not None and when > utcnow() + timedelta(days=1):
            # (a typo, 2062 for 2026: stored all the same, said then; `recall` shows it today)
            render.note(f"--at {at} is in the future: the input is stored as said then")
        sess = session if session is not None else _session_of(file)
        if fmt is Format.auto and file is not None:
            fmt = ingest.default_format_for(file)
        wall = is_wall_clock(at)  # the user's time of day: stored as one of their zone
        if wall and (change := clock_change(at or "", m.settings.zone)):
            render.note(change)
        raws = ingest.parse(
            content,
            fmt,
            session=sess,
            source=source,
            at=when,
            role=role,
            at_wall=wall,
            date_order=m.settings.date_order,
        )
        if not wall:  # times written in the input (a chat log's, a journal's headings)
            _note_clock_changes(raws, m.settings.zone)
        if fmt in (Format.auto, Format.markdown) and (odd := ingest.not_dates(content)):
            render.note(
                f"heading(s) {', '.join(repr(h) for h in odd[:3])} name no real day: "
                "each is stored as part of the entry above it"
            )
        with render.progress("extracting", enabled=len(raws) > 1) as bar:
            storing = True
            journal = (
                file is not None
                and fmt in (Format.auto, Format.markdown)
                and ingest.looks_like_journal(content)
            )
            chat_export = ingest.reads_as_whatsapp(content, fmt, source)
            report = m.add(
                raws,
                extract=not no_extract,
                progress=bar,
                on_stored=on_stored,
                journal=journal,
                chat_export=chat_export,
            )
    except BaseException as e:
        if isinstance(e, KeyboardInterrupt) and storing and not stored:
            store = m.store_or_none()
            held = len(store.known_raw_hashes([r.content_hash for r in raws])) if store else 0
            render.note(
                f"interrupted while storing: {held} of its {len(raws)} inputs are in the store; run "
                "the same command again to store the rest (what is stored already is skipped)"
            )
        if kept.where():
            render.note(kept.where())
        raise
    render.add_report(report, as_json=as_json)
    if chat_export and report.stored and not m.settings.me:
        render.note(_whose_phone(raws, file))
    _llm_outcome(report)


# Android names an export after the other side: "WhatsApp Chat with Maya Lund.txt" (German
# "WhatsApp-Chat mit …", Spanish "Chat de WhatsApp con …").
_EXPORT_WITH = re.compile(r"^(?:WhatsApp[- ]Chat|Chat de WhatsApp)\s+(?:with|mit|con)\s+(.+)$", re.I)


def _whose_phone(raws: list[Any], file: Path | None) -> str:
    """What to tell a user whose chat export came in with `me` unset: the user's name when the
    file's name gives the other side's (Android's "WhatsApp Chat with …"), else the names in it."""
    from dcpm_cli.models import speaker_of

    names = sorted({s for r in raws if (s := speaker_of(r.text))})
    other = _EXPORT_WITH.match(file.stem) if file is not None else None
    mine = [n for n in names if other is not None and n != other.group(1).strip()]
    why = "(or `me` in config.toml) so that 'what did I tell …?' finds your own messages"
    if len(mine) == 1:
        return f'your name in this chat looks like {mine[0]}: set DCPM_ME="{mine[0]}" {why}'
    return f"which of {', '.join(names[:4])} is you? set DCPM_ME to that name {why}"


@app.command()
def process(
    ctx: typer.Context,
    limit: Annotated[
        int | None, typer.Option("--limit", "-n", min=1, help="At most this many inputs.")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the summary as JSON.")] = False,
    no_supersedes: NoSupersedes = False,
) -> None:
    """Extract every input still pending (LLM was down, --no-extract, failures), oldest first."""
    from dcpm_cli import render
    from dcpm_cli.models import AddReport

    m = _memory(ctx, no_supersedes)
    if m.store_or_none() is None:  # a mistyped DCPM_STORE in a cron line makes no empty store
        render.note(m.nothing_stored)
        if as_json:
            render.add_report(AddReport(), as_json=True, verb="processed")
        return
    with render.progress("extracting", enabled=True) as bar:
        report = m.process(limit=limit, progress=bar)
    render.add_report(report, as_json=as_json, verb="processed")
    _llm_outcome(report)


def _a_daily_note(file: Path, fmt: Format, at: str | None, session: str | None) -> str | None:
    """NOTES when `file` is one daily note (2026-03-14.md, no dated headings in it): stored as
    its folder stores it, with its day and without its front matter, the same input. Not when
    the command gives its own time or session: they are the user's word."""
    from dcpm_cli.ingest import exports as ingest_exports
    from dcpm_cli.ingest import formats as ingest

    if at is not None or session is not None or fmt is not Format.auto or file.suffix.lower() != ".md":
        return None
    if ingest_exports.note_day(file) is None:
        return None
    return None if ingest.looks_like_journal(read_file(file)) else ingest_exports.NOTES


def _note_clock_changes(raws: list[Any], zone: Any) -> None:
    """Say when times written in the input fell where the user's clocks changed, as a typed
    --at is told: the first such time, and how many more."""
    from dcpm_cli import render

    changes = [c for r in raws if r.wall_clock and (c := clock_change_at(r.said_at, zone))]
    if changes:
        more = f" (and {len(changes) - 1} more time(s) in the input)" if len(changes) > 1 else ""
        render.note(changes[0] + more)


def _llm_outcome(report: Any) -> None:
    from dcpm_cli import render

    if report.interrupted:
        render.note(f"interrupted: {report.pending} input(s) still pending; `dcpm process` goes on")
        raise typer.Exit(EXIT_INTERRUPTED)
    if report.llm_error:
        render.note(
            f"extraction pending for {report.pending} input(s): {report.llm_error}. "
            "Your inputs are stored; run `dcpm process` when the LLM is back."
        )
        raise typer.Exit(EXIT_LLM)
    if report.failed:
        why = next((o.error for o in report.outcomes if o.error), "")
        render.note(
            f"{report.failed} input(s) failed extraction ({why}); they are stored, and "
            "`dcpm process` retries them."
        )
        raise typer.Exit(EXIT_LLM)


def _session_of(file: Path | None) -> str:
    """A file's inputs are a session named after it, unless every export of its kind has that
    name (an iPhone's WhatsApp export is always `_chat.txt`): its chat is named after its first
    message instead, so two chats are two sessions."""
    return "" if file is None or file.name == IPHONE_WHATSAPP else file.stem


def _read_input(text: str | None, file: Path | None, kept: Any) -> tuple[str, str]:
    from dcpm_cli.config import dcpm_home
    from dcpm_cli.errors import InputError

    if file is not None and text is not None:
        raise InputError("give either TEXT or --file, not both")
    if file is not None:
        return read_file(file), file.name
    piped = sys.stdin is not None and not sys.stdin.isatty()
    if text == "-":
        if not piped:
            raise InputError("'-' reads stdin, but nothing is piped in", "cat notes.txt | dcpm add -")
        data = sys.stdin.buffer.read()
        kept.keep(data, dcpm_home() / "rejected")
        try:
            return data.decode("utf-8-sig"), "stdin"  # a byte-order mark is not a word
        except UnicodeDecodeError as e:
            raise InputError("stdin is not UTF-8 text") from e
    if text is None and piped:
        # Not read unasked: in a `while read` loop an empty $line would swallow the loop's
        # input, and a pipe left open (ssh, a daemon's child) would hang.
        raise InputError("nothing to add: stdin is not read without '-'", "… | dcpm add -")
    if text is None:
        raise InputError("nothing to add", 'dcpm add "text", dcpm add - (stdin) or dcpm add --file PATH')
    return text, "cli"
