"""Real chat histories: the ChatGPT and Claude data exports and a folder of daily notes, from
small original samples written to the exports' published structure (tests/data/exports/)."""

from __future__ import annotations

import json
import shutil
from datetime import UTC, datetime
from pathlib import Path

from support.paths import TEST_DATA
from support.replies import extraction, item, judged

from dcpm_cli.ingest import exports as ingest_exports
from dcpm_cli.ingest import formats as ingest
from dcpm_cli.models import CONTEXT, DONE
from dcpm_cli.write.batches import BATCH

DATA = TEST_DATA / "exports"
CHATGPT = DATA / "chatgpt" / "conversations.json"
CLAUDE = DATA / "claude" / "conversations.json"
NOTES = DATA / "notes"


def flat(path: Path, fmt: str) -> list:
    return [r for conv in ingest_exports.conversations(path, fmt) for r in conv]


def test_chatgpt_follows_the_current_branch_and_keeps_only_what_was_said() -> None:
    got = flat(CHATGPT, "chatgpt")

    assert [(r.role, r.text) for r in got] == [
        ("user", "I signed up for the Lisbon half marathon in October. I can run 10 km now."),
        ("assistant", "Great goal. Build up your long run by about 1 km a week."),  # not the regenerated one
        ("user", "Here is my training log. My left knee hurts after long runs."),  # the image part dropped
        ("assistant", "Knee pain is worth a physio visit; cut the long run back for a week."),
        ("user", "I've been vegetarian since January. Ideas for a quick dinner?"),
        ("assistant", "A chickpea curry takes twenty minutes."),
    ]  # the hidden system message, the call to python and its output are not there
    assert {r.session for r in got[:4]} == {"6a1f0c2e-0b1d-4c55-9e10-1d2b3c4d5e01"}
    assert got[4].session == "7b2e1d3f-1c2e-4d66-8f21-2e3c4d5e6f02"
    assert got[0].said_at == datetime.fromtimestamp(1772355600.5, UTC)
    assert got[0].source == "conversations.json"


def test_claude_keeps_text_blocks_not_thinking() -> None:
    got = flat(CLAUDE, "claude")

    assert [(r.role, r.text) for r in got] == [
        ("user", "We are moving from Lisbon to Porto in June for my new job at a design studio."),
        ("assistant", "Congratulations! Bonfim and Cedofeita are popular with creatives."),
        ("user", "Our cat Miso hates car trips, any tips?"),  # from `text` when `content` is empty
    ]
    assert {r.session for r in got} == {"3c9d2a10-5e4f-4b7a-9c21-0a1b2c3d4e01"}
    assert got[2].said_at == datetime(2026, 5, 2, 9, 19, tzinfo=UTC)


def test_daily_notes_one_input_per_dated_file() -> None:
    skipped: list[str] = []
    got = ingest_exports.daily_notes(NOTES, skipped)

    assert [(r.said_at.date().isoformat(), r.text) for r in got] == [
        (
            "2026-03-01",
            "- Ran 8 km along the river before work; knee fine.\n- Booked the physio for Thursday.",
        ),
        ("2026-03-02", "- Physio says the knee pain is from weak hips: hip exercises three times a week."),
    ]  # front matter dropped; the empty note and the undated page skipped; sub-folders read
    assert skipped == [p.name for p in NOTES.rglob("*.md") if not any(c.isdigit() for c in p.name)]
    assert skipped, "the undated page is named"


def test_a_notes_folder_reads_dates_written_without_zeros_and_names_what_it_skips(cli, tmp_path) -> None:
    notes = tmp_path / "journal"
    notes.mkdir()
    (notes / "2026-03-06.md").write_text("Couch to 5k, day one.")
    (notes / "2026-3-7.md").write_text("C25K day 2 done.")
    (notes / "ideas.md").write_text("An app for allotments?")

    added = cli("add", "--no-extract", "--file", str(notes))

    assert added.exit_code == 0, added.stderr
    assert added.stdout.startswith("stored 2 inputs")
    said = " ".join(added.stderr.split())
    assert "not stored: 1 file(s) with no date in their name (ideas.md)" in said
    report = json.loads(cli("add", "--no-extract", "--file", str(notes), "--json").stdout)
    assert (report["already_stored"], report["skipped"]) == (2, ["ideas.md"])


def test_formats_are_detected_from_content_not_the_file_name(tmp_path: Path) -> None:
    renamed = tmp_path / "export.json"
    shutil.copy(CLAUDE, renamed)

    assert ingest_exports.detect(CHATGPT, "auto") == "chatgpt"
    assert ingest_exports.detect(renamed, "auto") == "claude"
    assert ingest_exports.detect(NOTES, "auto") == "notes"
    assert ingest_exports.detect(tmp_path / "x.jsonl", "auto") is None
    # The same parsers serve an export piped in as text.
    piped = ingest.parse(CHATGPT.read_text(encoding="utf-8"), source="stdin")
    assert [r.text for r in piped] == [r.text for r in flat(CHATGPT, "chatgpt")]


def test_an_export_saved_with_a_byte_order_mark_is_still_read_as_a_stream(tmp_path: Path) -> None:
    # Windows editors put one first when a user opens and saves the file.
    for name, path in (("chatgpt", CHATGPT), ("claude", CLAUDE)):
        bom = tmp_path / f"{name}.json"
        bom.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())

        assert ingest_exports.detect(bom, "auto") == name
        assert [(r.text, r.said_at) for r in flat(bom, name)] == [
            (r.text, r.said_at) for r in flat(path, name)
        ]


def test_importing_an_export_twice_changes_nothing(cli) -> None:
    first = cli("add", "--no-extract", "--file", str(CHATGPT), "--json")
    again = cli("add", "--no-extract", "--file", str(CHATGPT), "--json")

    assert first.exit_code == 0 and again.exit_code == 0, first.stderr
    assert json.loads(first.stdout)["stored"] == 6
    assert (json.loads(again.stdout)["stored"], json.loads(again.stdout)["already_stored"]) == (0, 6)
    notes = cli("add", "--no-extract", "--file", str(NOTES), "--json")
    assert json.loads(notes.stdout)["stored"] == 2
    found = cli("recall", "how is my knee?", "--json")
    assert "weak hips" in json.loads(found.stdout)["hits"][0]["text"]


def test_an_export_is_extracted_per_conversation_with_the_assistant_as_context(cli, llm) -> None:
    llm.enqueue(
        extraction(item("is moving from Lisbon to Porto in June", topic="home", attribute="city")),
        extraction(item("has a cat named Miso", topic="pets")),
        judged("unrelated"),  # the cat / the move, if near enough to be asked
    )

    added = cli("add", "--file", str(CLAUDE), "--json")

    assert added.exit_code == 0, added.stderr
    report = json.loads(added.stdout)
    assert (report["stored"], report["extracted"], report["added"]) == (3, 2, 2)
    assert "Bonfim" in json.dumps(llm.calls[1]["messages"])  # the earlier turns of its conversation
    store = cli.open_store()
    statuses = sorted(r.status for r in store.get_raw(report["raw_ids"]).values())
    assert statuses == [CONTEXT, DONE, DONE]


def test_ctrl_c_stops_an_export_import_between_batches(cli, llm, tmp_path: Path) -> None:
    """Ctrl-C during extraction ends the import: the batch in hand keeps its inputs stored and
    pending, the batches after it are not read (importing again stores them)."""
    n = BATCH + 40
    convs = [
        {
            "uuid": f"c{i}",
            "name": f"chat {i}",
            "created_at": f"2026-05-02T09:{i % 60:02d}:00+00:00",
            "chat_messages": [
                {
                    "uuid": f"m{i}",
                    "sender": "human",
                    "text": f"Note number {i} about the garden.",
                    "content": [],
                    "created_at": f"2026-05-{1 + i // 60:02d}T09:{i % 60:02d}:00+00:00",
                }
            ],
        }
        for i in range(n)
    ]
    export = tmp_path / "conversations.json"
    export.write_text(json.dumps(convs), encoding="utf-8")
    llm.enqueue(extraction(), extraction(), KeyboardInterrupt())

    res = cli("add", "--file", str(export), "--format", "claude")

    assert res.exit_code == 130, res.stderr
    assert "was not read" in res.stderr
    assert len(llm.calls) == 3, "no call after Ctrl-C"
    counts = cli.open_store().count_by_kind("raw")
    assert sum(counts.values()) == BATCH  # the first batch only
    again = json.loads(
        cli("add", "--no-extract", "--file", str(export), "--format", "claude", "--json").stdout
    )
    assert (again["stored"], again["already_stored"]) == (n - BATCH, BATCH)


def test_a_message_dcpm_cannot_read_stores_nothing_and_names_its_conversation(cli, tmp_path: Path) -> None:
    """The export is read whole first: a bad time in conversation 300 used to leave the first
    256 stored. A message whose content is a plain string is read as its text."""
    convs = json.loads(CLAUDE.read_text(encoding="utf-8"))
    plain = json.loads(json.dumps(convs[0]))
    plain["uuid"], plain["name"] = "plain-1", "plain content"
    plain["chat_messages"][0]["content"] = "Our allotment is plot 14, by the old pear tree."
    bad = json.loads(json.dumps(convs[0]))
    bad["uuid"], bad["name"] = "bad-1", "Planning the week"
    bad["chat_messages"][0]["created_at"] = "yesterday"
    export = tmp_path / "conversations.json"
    export.write_text(json.dumps([*convs, plain, bad]), encoding="utf-8")

    res = cli("add", "--no-extract", "--file", str(export), "--format", "claude")

    assert res.exit_code == 2, res.stderr
    said = " ".join(res.stderr.split())
    assert f"conversation {len(convs) + 2} ('Planning the week')" in said and "nothing was stored" in said
    assert "Traceback" not in res.stderr
    assert not cli.open_store().count_by_kind("raw"), "nothing stored"

    export.write_text(json.dumps([*convs, plain]), encoding="utf-8")
    assert cli("add", "--no-extract", "--file", str(export), "--format", "claude").exit_code == 0
    assert "plot 14" in cli("recall", "allotment plot").stdout


def test_a_broken_or_mismatched_export_stores_nothing(cli, tmp_path: Path) -> None:
    truncated = tmp_path / "conversations.json"
    truncated.write_text(CHATGPT.read_text(encoding="utf-8")[:-200], encoding="utf-8")

    broken = cli("add", "--no-extract", "--file", str(truncated), "--format", "chatgpt")
    wrong = cli("add", "--no-extract", "--file", str(CHATGPT), "--format", "claude")
    empty = cli("add", "--no-extract", "--file", str(tmp_path), "--format", "notes")

    assert broken.exit_code == 2 and "not a complete JSON export" in broken.stderr
    assert wrong.exit_code == 2 and "no claude messages found" in wrong.stderr
    assert empty.exit_code == 2 and "no daily notes" in empty.stderr
    assert json.loads(cli("stats", "--json").stdout)["raw_inputs"] == 0


def test_the_depth_guard_counts_structure_not_brackets_inside_strings() -> None:
    """Brackets, quotes and backslashes in message text are not nesting, wherever a read cuts."""
    import pytest

    from dcpm_cli.errors import InputError
    from dcpm_cli.ingest.text import DepthGuard

    text = json.dumps([{"text": "[" * 500 + '\\"{' * 300 + "\\" * 7, "deeper": [[[[]]]]}]).encode()
    for size in (1, 2, 3, 7, len(text)):
        guard = DepthGuard("x.json", limit=6)
        for i in range(0, len(text), size):
            guard.feed(text[i : i + size])
        assert (guard.depth, guard.in_string) == (0, False)
    guard = DepthGuard("x.json", limit=6)
    with pytest.raises(InputError, match="deeper than 6 levels"):
        guard.feed(b'[{"a": [[[[[[]]]]]]}]')


def test_one_daily_note_added_alone_is_the_input_its_folder_gives(cli, tmp_path) -> None:
    notes = tmp_path / "journal"
    notes.mkdir()
    (notes / "2026-03-14.md").write_text("---\ntags: [daily]\nmood: tired\n---\nLong walk on the beach.\n")
    (notes / "2026-03-15.md").write_text("Rain all day.")

    alone = json.loads(cli("add", "--no-extract", "--file", str(notes / "2026-03-14.md"), "--json").stdout)
    folder = json.loads(cli("add", "--no-extract", "--file", str(notes), "--json").stdout)

    assert (alone["stored"], folder["stored"], folder["already_stored"]) == (1, 1, 1)
    shown = cli("show", alone["raw_ids"][0]).stdout
    assert "said 2026-03-14" in shown and "tags:" not in shown  # its day, front matter dropped
