"""Chat histories people already have: the ChatGPT and Claude data exports, and a folder of
Markdown daily notes (Obsidian / Logseq: one file per day, the date in the file name).

Exports are read as a stream (`ijson`), one conversation at a time (write/batches.py stores
them in batches). Each conversation is a session (its id); each message keeps its own time, so
importing the same export again changes nothing.

- ChatGPT `conversations.json`: a list of conversations, each a `mapping` of message nodes
  (`parent`, `children`, `message`) and the `current_node` the user last saw. The current
  branch is followed from `current_node` up to the root (edits and regenerations left on other
  branches are not what was finally said). Kept: user and assistant text messages; skipped:
  system and tool messages, hidden ones (`is_visually_hidden_from_conversation`), assistant
  calls to tools (`recipient` not "all"), and non-text parts (images, code runs, browsing).
- Claude `conversations.json`: a list of conversations with `uuid`, `name` and
  `chat_messages` [{`sender`: human|assistant, `text`, `content`: [{`type`: text, `text`}],
  `created_at`}]. Kept: the text blocks (thinking, tool use and tool results are skipped).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, BinaryIO

from dcpm_cli.errors import InputError
from dcpm_cli.ingest.text import DepthCheckedFile, rewind
from dcpm_cli.models import RawInput

CHATGPT, CLAUDE, NOTES = "chatgpt", "claude", "notes"
Progress = Callable[[int, int], None]

# -- ChatGPT ---------------------------------------------------------------------------------

_CHATGPT_ROLES = {"user": "user", "assistant": "assistant"}
_TEXT_TYPES = ("text", "multimodal_text")


def chatgpt_messages(conv: dict[str, Any], *, source: str) -> list[RawInput]:
    """The messages on a conversation's current branch, oldest first."""
    mapping: dict[str, Any] = conv.get("mapping") or {}
    conv_id = str(conv.get("conversation_id") or conv.get("id") or "")
    if not mapping:
        return []
    node_id = conv.get("current_node")
    if node_id not in mapping:  # older exports: the newest leaf
        leaves = [n for n in mapping.values() if not n.get("children")]
        newest: dict[str, Any] = max(leaves, key=lambda n: _msg_time(n) or 0.0, default={})
        node_id = newest.get("id")
    path: list[dict[str, Any]] = []
    seen: set[str] = set()
    while node_id in mapping and node_id not in seen:
        seen.add(node_id)
        path.append(mapping[node_id])
        node_id = mapping[node_id].get("parent")
    out = []
    for node in reversed(path):
        msg = node.get("message") or {}
        role = _CHATGPT_ROLES.get((msg.get("author") or {}).get("role", ""))
        content = msg.get("content") or {}
        meta = msg.get("metadata") or {}
        if (
            role is None
            or content.get("content_type") not in _TEXT_TYPES
            or meta.get("is_visually_hidden_from_conversation")
            or msg.get("recipient", "all") != "all"
        ):
            continue
        text = "\n".join(p for p in content.get("parts") or [] if isinstance(p, str)).strip()
        if text:
            out.append(_raw(text, role, conv_id, source, _msg_time(node), conv.get("create_time"), msg))
    return out


def _msg_time(node: dict[str, Any]) -> float | None:
    t = (node.get("message") or {}).get("create_time")
    return float(t) if t else None


# -- Claude ----------------------------------------------------------------------------------

_CLAUDE_ROLES = {"human": "user", "user": "user", "assistant": "assistant"}


def claude_messages(conv: dict[str, Any], *, source: str) -> list[RawInput]:
    conv_id = str(conv.get("uuid") or "")
    out = []
    for msg in conv.get("chat_messages") or []:
        role = _CLAUDE_ROLES.get(msg.get("sender", ""))
        if role is None:
            continue
        content = msg.get("content") or []
        if isinstance(content, str):  # some exports give the text itself
            content = [{"type": "text", "text": content}]
        blocks = [b.get("text") or "" for b in content if isinstance(b, dict) and b.get("type") == "text"]
        text = ("\n\n".join(b for b in blocks if b.strip()) or msg.get("text") or "").strip()
        if text:
            out.append(_raw(text, role, conv_id, source, msg.get("created_at"), conv.get("created_at"), msg))
    return out


def _raw(
    text: str, role: str, session: str, source: str, when: Any, fallback: Any, msg: dict[str, Any]
) -> RawInput:
    """A message with its own time is identified by it; one without, by its place in the export."""
    from dcpm_cli.ingest.text import is_wall_clock, parse_time, refuse_binary

    refuse_binary(text, "a message")
    said = parse_time(when, "message time") if when else None
    base = parse_time(fallback, "conversation time") if fallback else None
    position = "" if said else f"{source}#{session}/{msg.get('id') or msg.get('uuid') or ''}"
    return RawInput(
        text=text,
        role=role,
        session=session,
        source=source,
        said_at=said or base or datetime.now(UTC),
        position=position,
        wall_clock=is_wall_clock(when) if said else bool(base) and is_wall_clock(fallback),
    )


_PARSERS = {CHATGPT: chatgpt_messages, CLAUDE: claude_messages}

# -- reading an export as a stream -----------------------------------------------------------


def _items_prefix(f: BinaryIO | DepthCheckedFile) -> str:
    """Where the conversations are: a top-level list, or a `conversations` list in an object."""
    import ijson

    for prefix, event, value in ijson.parse(f):
        if prefix == "" and event == "start_array":
            return "item"
        if prefix == "" and event == "map_key" and value == "conversations":
            return "conversations.item"
    return "item"


def sniff(path: Path) -> str | None:
    """chatgpt, claude, or None: from the keys of the first conversation (read as a stream)."""
    import ijson

    try:
        with path.open("rb") as raw:
            rewind(raw)
            prefix = _items_prefix(DepthCheckedFile(raw, path.name))
            rewind(raw)
            for p, event, value in ijson.parse(DepthCheckedFile(raw, path.name)):
                if event == "map_key" and p == prefix:
                    if value == "mapping":
                        return CHATGPT
                    if value == "chat_messages":
                        return CLAUDE
                elif event == "end_map" and p == prefix:
                    return None  # the first conversation ended without either key
    except (ijson.JSONError, UnicodeDecodeError, OSError):
        return None
    return None


def conversations(path: Path, fmt: str, progress: Progress | None = None) -> Iterator[list[RawInput]]:
    """Each conversation's messages, read one conversation at a time. The whole file is checked
    first (a streaming pass that builds nothing), so a truncated export stores nothing."""
    import ijson

    parse = _PARSERS[fmt]
    with path.open("rb") as raw:
        rewind(raw)
        prefix = _items_prefix(DepthCheckedFile(raw, path.name))
        rewind(raw)
        total = 0
        try:  # every conversation parsed once, kept nowhere: a message time it cannot read, too
            checked = DepthCheckedFile(raw, path.name)
            for total, conv in enumerate(ijson.items(checked, prefix, use_float=True), 1):
                _parsed(parse, conv, total, path.name)
        except ijson.JSONError as e:
            why = str(e.args[0] if e.args else e)
            if isinstance(e.args[0] if e.args else None, bytes):  # yajl's message, bytes and all
                why = e.args[0].decode("utf-8", "replace").splitlines()[0]
            if "invalid bytes in UTF8" in why:
                raise InputError(
                    f"{path.name} is not UTF-8 text; nothing was stored", "is this an unedited export?"
                ) from e
            raise InputError(f"{path.name} is not a complete JSON export ({why}); nothing was stored") from e
        rewind(raw)  # the same bytes again: checked above
        for n, conv in enumerate(ijson.items(raw, prefix, use_float=True), 1):
            yield _parsed(parse, conv, n, path.name)
            if progress:
                progress(n, total)


def _parsed(parse: Callable[..., list[RawInput]], conv: Any, n: int, source: str) -> list[RawInput]:
    """One conversation's messages; a conversation dcpm cannot read is named in the error."""
    if not isinstance(conv, dict):
        return []
    try:
        return parse(conv, source=source)
    except (InputError, AttributeError, TypeError, ValueError) as e:
        why = getattr(e, "message", None) or f"unexpected structure ({e})"
        raise InputError(
            f"{source}: conversation {n} ({str(conv.get('name') or conv.get('title') or '')[:60]!r}): {why}; "
            "nothing was stored",
            "is this an unedited export?",
        ) from e


def parse_export(text: str, fmt: str, *, source: str) -> list[RawInput]:
    """An export given as text (e.g. on stdin)."""
    import json

    from dcpm_cli.ingest.text import check_json_depth

    check_json_depth(text, source)
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise InputError(f"{source}: not JSON ({e.msg})") from e
    if isinstance(data, dict):
        data = data.get("conversations")
    if not isinstance(data, list):
        raise InputError(f"{source}: a {fmt} export is a list of conversations")
    return [r for conv in data if isinstance(conv, dict) for r in _PARSERS[fmt](conv, source=source)]


def detect_text(text: str) -> str | None:
    head = text[:200_000]
    if '"mapping"' in head and '"current_node"' in head:
        return CHATGPT
    if '"chat_messages"' in head:
        return CLAUDE
    return None


# -- daily notes -----------------------------------------------------------------------------

_DAY = re.compile(r"(?<!\d)(\d{4})[-_.](\d{1,2})[-_.](\d{1,2})(?!\d)")  # 2026-03-07, 2026_3_7
_FRONT_MATTER = re.compile(r"\A---\s*\n.*?\n---\s*(\n|\Z)", re.S)


def note_day(path: Path) -> datetime | None:
    m = _DAY.search(path.stem)
    if not m:
        return None
    try:
        return datetime(int(m[1]), int(m[2]), int(m[3]), 12, tzinfo=UTC)
    except ValueError:
        return None


def daily_notes(folder: Path, skipped: list[str] | None = None) -> list[RawInput]:
    """One input per dated note (front matter dropped), oldest first; the Markdown files with
    no date in their name are skipped, and named in `skipped`. `folder` may be one note of a
    folder: it is then the input the whole folder gives for it."""
    from dcpm_cli.ingest.text import read_file

    out = []
    files = [folder] if folder.is_file() else sorted(folder.rglob("*.md"))
    folder = folder.parent if folder.is_file() else folder
    dated = sorted((d, p) for p in files if (d := note_day(p)) is not None)
    if skipped is not None:
        skipped += [str(p.relative_to(folder)) for p in files if note_day(p) is None]
    for day, path in dated:
        text = _FRONT_MATTER.sub("", read_file(path)).strip()
        if text:
            out.append(
                RawInput(text=text, session=folder.name, source=path.name, said_at=day, wall_clock=True)
            )
    if not dated:
        raise InputError(
            f"no daily notes in {folder}: expected Markdown files named by date",
            "e.g. 2026-03-01.md (Obsidian) or 2026_03_01.md (Logseq journals)",
        )
    return out


# -- which importer --------------------------------------------------------------------------


def detect(path: Path, fmt: str) -> str | None:
    """Which importer handles `--file PATH` (None: the ordinary text formats)."""
    if fmt in (CHATGPT, CLAUDE, NOTES):
        if fmt == NOTES and not (path.is_dir() or note_day(path)):
            raise InputError(f"--format notes wants a folder of daily notes, got {path}")
        return fmt
    if path.is_dir():
        return NOTES if fmt == "auto" else None
    if fmt == "auto" and path.suffix.lower() == ".json":
        return sniff(path)
    return None
