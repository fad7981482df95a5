"""Input formats: plain text, JSONL chat logs, Markdown journals; and what a user sees when the
input is unusable (exit 2, a clear message, nothing stored)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest
from support.paths import SAMPLE_DATA

from dcpm_cli.errors import InputError
from dcpm_cli.ingest import formats as ingest
from dcpm_cli.ingest.formats import Format
from dcpm_cli.ingest.text import parse_time
from dcpm_cli.models import CONTEXT, PENDING


def one_line(text: str) -> str:
    return " ".join(text.split())


# -- Markdown journals --------------------------------------------------------------------


def test_sample_journal_is_one_input_per_dated_heading() -> None:
    text = (SAMPLE_DATA / "journal.md").read_text(encoding="utf-8")

    raws = ingest.parse(text, session="journal", source="journal.md")

    assert len(raws) == 38
    days = [r.said_at for r in raws]
    assert days == sorted(days) and len(set(days)) == 38
    assert days[0] == datetime(2026, 2, 1, 12, tzinfo=UTC)
    assert raws[0].text.startswith("# Journal\n\n## 2026-02-01\nSunday, and my partner Tomás made")
    assert all(r.text.startswith("## 20") for r in raws[1:])  # each entry keeps its heading
    assert {r.session for r in raws} == {"journal"} and {r.role for r in raws} == {"user"}


def test_other_date_heading_formats() -> None:
    text = """# My notes

## Monday, 3 March 2026
Ran in the rain.

### March 5, 2026
Pasta again.

#### Not a date, just a heading
still the 5th of March.

### Ticket 2026-44-1234 closed
digits in a heading, not a day: still the 5th.

# 2026/03/07
Bought seeds.

## 2026-03-09 21:30
Late night coding.

## 9 Mar 2026 ##
Same day, another entry.
"""
    raws = ingest.parse(text)

    assert [(r.said_at, r.text.splitlines()[-1]) for r in raws] == [
        (datetime(2026, 3, 3, 12, tzinfo=UTC), "Ran in the rain."),
        (datetime(2026, 3, 5, 12, tzinfo=UTC), "digits in a heading, not a day: still the 5th."),
        (datetime(2026, 3, 7, 12, tzinfo=UTC), "Bought seeds."),
        (datetime(2026, 3, 9, 21, 30, tzinfo=UTC), "Late night coding."),
        (datetime(2026, 3, 9, 12, tzinfo=UTC), "Same day, another entry."),
    ]
    assert raws[0].text.startswith("# My notes\n\n## Monday, 3 March 2026\n")
    assert "Not a date, just a heading" in raws[1].text and "still the 5th" in raws[1].text
    assert "Ticket 2026-44-1234 closed" in raws[1].text


def test_a_journal_without_years_or_with_dotted_days_is_dated() -> None:
    text = """# Notes

## Friday 26 December
Boxing day walk.

## 30th December
Quiet.

## Jan 2nd
Back to work: a journal runs forward, so this is the next year.

## 06.03.2026
Dots put the day first.

## 3 things I learned
not a day: still the 6th of March.

## March 7
Seeds.
"""
    raws = ingest.parse(text, at=datetime(2026, 5, 1, tzinfo=UTC))

    assert [(f"{r.said_at:%Y-%m-%d}", r.text.splitlines()[-1][:9]) for r in raws] == [
        ("2025-12-26", "Boxing da"),  # the latest 26 December on or before --at
        ("2025-12-30", "Quiet."),
        ("2026-01-02", "Back to w"),
        ("2026-03-06", "not a day"),
        ("2026-03-07", "Seeds."),
    ]
    assert ingest.looks_like_journal("## 4 April\nPlanted beans.\n")


def test_a_year_less_journal_written_newest_first_stays_in_the_past() -> None:
    text = "## 2 January\nA.\n\n## 30 December\nB.\n\n## 20 November\nC.\n"
    raws = ingest.parse(text, at=datetime(2026, 5, 1, tzinfo=UTC))
    assert [f"{r.said_at:%Y-%m-%d}" for r in raws] == ["2026-01-02", "2025-12-30", "2025-11-20"]
    # Today's entry, added in the morning, is today's (a heading's day is dated at noon).
    today = ingest.parse("## 1 May\nMorning pages.\n", at=datetime(2026, 5, 1, 9, tzinfo=UTC))
    assert f"{today[0].said_at:%Y-%m-%d}" == "2026-05-01"


def test_a_day_followed_by_a_title_is_dated() -> None:
    raws = ingest.parse("## 06.03.2026 Trip to Rome\nA.\n\n## 4 April: beans\nB.\n")
    assert [f"{r.said_at:%m-%d}" for r in raws] == ["03-06", "04-04"]


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("## 2026-10-15\nPriya left.", "Priya left."),
        ("# Thursday 2026-10-15 09:30\nRan.", "Ran."),
        ("## Monday 15 October 2026 — Cork trip\nGreat day.", "Cork trip\nGreat day."),
        ("## 06.03.2026 Trip to Rome\nA.", "Trip to Rome\nA."),
        ("## 4 April: beans\nSowed them.", "beans\nSowed them."),
        ("### March 5th\nWarm.", "Warm."),
        ("## 28/11/2026\nSnow.", "Snow."),
        ("## 04/05/2026\nRain.", "Rain."),  # (April or May, as the journal's other headings tell)
        ("## 2 Feb 2026 (Mon)\nx", "x"),
        ("### 2026-03-01 — 2026-03-02\nx", "x"),
        ("## 2026-10-15T09:30 (morning)\nRan.", "morning\nRan."),
        # a title at either end, whatever its first letters
        ("## 2026-03-01 Wedding planning\nx", "Wedding planning\nx"),
        ("## Wedding 4 April 2026\nx", "Wedding\nx"),
        ("## Monthly review 2026-03-01\nx", "Monthly review\nx"),
        ("## 2026-03-01 Ran 10 km\nx", "Ran 10 km\nx"),
        ("# My journal\n\n## 2026-03-01\nFirst day.", "# My journal\nFirst day."),
        # not a date: kept as written
        ("# Ticket 2026-44-1234 closed\nx", "# Ticket 2026-44-1234 closed\nx"),
        ("## 4 things I learnt\nx", "## 4 things I learnt\nx"),
        ("## Notes\nx", "## Notes\nx"),
        ("Met Tom.\n## 2026-10-15", "Met Tom.\n## 2026-10-15"),
        ("## 2026-10-15", "## 2026-10-15"),  # a heading alone is all it says
    ],
)
def test_an_entrys_vector_is_of_its_words_not_its_dated_heading(text: str, words: str) -> None:
    """The date of a heading is the entry's time, stored apart: its vector is of what it says
    (short entries of one journal looked alike for their dates)."""
    assert ingest.said_words(text) == words


@pytest.mark.parametrize(
    ("headings", "days"),
    [
        (["28/11/2026", "04/12/2026"], ["2026-11-28", "2026-12-04"]),  # 28 tells: day first
        (["11/28/2026", "Fri 12/04/2026"], ["2026-11-28", "2026-12-04"]),  # 28 tells: month first
    ],
)
def test_slashed_days_are_read_as_the_journal_writes_them(headings: list[str], days: list[str]) -> None:
    text = "".join(f"## {h}\nEntry {n}.\n" for n, h in enumerate(headings))
    assert [f"{r.said_at:%Y-%m-%d}" for r in ingest.parse(text)] == days


def test_a_slashed_day_nothing_tells_is_no_date() -> None:
    raws = ingest.parse("## 04/05/2026\nApril or May?\n\n## 2026-05-06\nA day.\n")
    assert [r.said_at.date().isoformat() for r in raws] == ["2026-05-06", "2026-05-06"]
    assert raws[0].text.startswith("## 04/05/2026"), "kept, as text before the first dated heading"


def test_text_before_the_first_dated_heading_is_kept() -> None:
    raws = ingest.parse("Some preface I wrote.\n\n## 2026-01-02\nFirst entry.\n", session="j")

    assert [r.text for r in raws] == ["Some preface I wrote.", "## 2026-01-02\nFirst entry."]
    assert raws[0].said_at == raws[1].said_at == datetime(2026, 1, 2, 12, tzinfo=UTC)


def test_a_dated_heading_inside_a_code_block_is_code_not_a_day() -> None:
    journal = (
        "## 2026-03-01\nWrote my note template today:\n\n```markdown\n## 2026-03-04\nWhat went well:\n```\n"
        "Then went for a run.\n\n~~~~\n## 2026-03-05\n```\nstill code\n~~~~\n## 2026-03-02\nRested.\n"
    )

    raws = ingest.parse(journal, session="j", fmt=Format.markdown)

    assert [(r.said_at.day, r.text.splitlines()[-1]) for r in raws] == [(1, "~~~~"), (2, "Rested.")]
    inline = "## 2026-03-01\n```rm -rf``` is what I typed\n\n## 2026-03-02\nSecond day.\n"
    assert [r.said_at.day for r in ingest.parse(inline, session="j", fmt=Format.markdown)] == [1, 2]
    unclosed = "## 2026-03-01\n```\nforgot to close this\n## 2026-03-02\nSecond day.\n"
    assert [r.said_at.day for r in ingest.parse(unclosed, session="j", fmt=Format.markdown)] == [1, 2]


JOURNAL_WITH_EVERY_PART = """A preface, before any date, that says I keep this journal for my therapist.

### Undated heading inside the preface
More preface.

## 2026-03-01 I quit smoking

## 2026-03-02 Quit my job
I handed in my notice at Brightloop today.

#### An undated sub-heading
with words under it

## March 4, 2026 Moved to Leeds
"""


def test_every_character_of_a_journal_lands_in_some_input(cli, tmp_path: Path) -> None:
    journal = tmp_path / "life.md"
    journal.write_text(JOURNAL_WITH_EVERY_PART, encoding="utf-8")

    done = cli("add", "--no-extract", "--file", str(journal))

    assert done.exit_code == 0, done.stderr
    stored = cli.open_store().raw_by_status([PENDING])
    stored.sort(key=lambda r: JOURNAL_WITH_EVERY_PART.index(r.text))
    assert "".join("".join(r.text.split()) for r in stored) == "".join(JOURNAL_WITH_EVERY_PART.split())
    assert [r.text.splitlines()[0] for r in stored] == [
        "A preface, before any date, that says I keep this journal for my therapist.",
        "## 2026-03-01 I quit smoking",  # a heading-only entry is an input, title and all
        "## 2026-03-02 Quit my job",
        "## March 4, 2026 Moved to Leeds",
    ]
    days = [r.said_at.date().isoformat() for r in stored]
    assert days == ["2026-03-01", "2026-03-01", "2026-03-02", "2026-03-04"]


def test_a_piped_heading_only_entry_is_stored(cli) -> None:
    done = cli("add", "--no-extract", "-", input="## 2026-03-01 I quit smoking\n")

    assert done.exit_code == 0, done.stderr
    assert done.stdout.startswith("stored 1 input")
    (raw,) = cli.open_store().raw_by_status([PENDING])
    assert raw.text == "## 2026-03-01 I quit smoking"


def test_undated_text_gets_a_stable_identity_from_its_place() -> None:
    text = "A note with no date.\n\n## 2026-01-02\nDated.\n"

    first, again = ingest.parse(text, source="notes.md"), ingest.parse(text, source="notes.md")

    assert first[0].content_hash == again[0].content_hash  # re-adding the file changes nothing


# -- JSONL chat logs ----------------------------------------------------------------------


def test_sample_chat_log() -> None:
    raws = ingest.parse((SAMPLE_DATA / "chat.jsonl").read_text(encoding="utf-8"), session="x")

    assert len(raws) == 32
    assert {r.session for r in raws} == {"s1", "s2", "s3", "s4"}  # a line's own session wins
    assert [r.role for r in raws[:2]] == ["user", "assistant"]
    assert raws[0].said_at == datetime(2026, 3, 10, 19, 2, tzinfo=UTC)


def test_jsonl_timestamps_in_every_form() -> None:
    log = "\n".join(
        [
            '{"role": "user", "content": "a", "timestamp": "2026-03-10T19:02:00Z"}',
            '{"role": "user", "content": "b", "timestamp": "2026-03-10T21:02:00+02:00"}',
            '{"role": "user", "content": "c", "timestamp": 1773169320}',
            '{"role": "user", "content": "d", "timestamp": "2026-03-10"}',
            "",
        ]
    )

    raws = ingest.parse(log)

    # One instant in three forms; turns at one time keep their order a microsecond apart.
    assert [r.said_at for r in raws] == [
        datetime(2026, 3, 10, 19, 2, tzinfo=UTC),
        datetime(2026, 3, 10, 19, 2, 0, 1, tzinfo=UTC),
        datetime(2026, 3, 10, 19, 2, 0, 2, tzinfo=UTC),
        datetime(2026, 3, 10, 12, tzinfo=UTC),
    ]


def test_a_line_with_no_timestamp_in_a_timed_log_is_said_at_the_time_of_the_line_before() -> None:
    """A reply logged without a time was dated now (December, for a March chat) and, said after
    every other turn, shown as the answer to the last question of the log."""
    log = "\n".join(
        [
            '{"role": "user", "content": "What wine goes with risotto?", "timestamp": "2026-03-05T19:00:00"}',
            '{"role": "assistant", "content": "A Pinot Noir or an oaked Chardonnay."}',
            '{"role": "user", "content": "And for dessert?", "timestamp": "2026-03-05T19:05:00"}',
            '{"role": "assistant", "content": "Try a Tokaji."}',
        ]
    )
    raws = ingest.parse(log, source="stdin")
    at = datetime(2026, 3, 5, 19, tzinfo=UTC)
    assert [r.said_at for r in raws] == [
        at,
        at + timedelta(microseconds=1),
        at + timedelta(minutes=5),
        at + timedelta(minutes=5, microseconds=1),
    ]
    assert all(r.wall_clock for r in raws)
    assert {r.session for r in raws} == {raws[0].session} and raws[0].session.startswith(
        "stdin 2026-03-05 19:00:00 "
    )
    # Lines before any time are those of a log without times (said now, known by their place),
    # so a log that gains a timed line later is, up to it, the one stored before.
    untimed = '{"role": "user", "content": "a"}\n{"role": "user", "content": "b"}'
    before = ingest.parse(untimed, source="x")
    after = ingest.parse(
        untimed + '\n{"role": "user", "content": "c", "timestamp": "2026-04-20T09:00Z"}', source="x"
    )
    assert [r.position for r in before] == ["x#1", "x#2"]
    assert [r.content_hash for r in after[:2]] == [r.content_hash for r in before]
    # Two chats begun in one minute are two sessions.
    one = '{"role": "user", "content": "Which tomato handles shade?", "timestamp": "2026-03-01T10:00:10"}\n'
    two = '{"role": "user", "content": "What is the VAT threshold?", "timestamp": "2026-03-01T10:00:10"}\n'
    reply = '{"role": "assistant", "content": "Try Stupice."}\n'
    assert (
        ingest.parse(one + reply, source="stdin")[0].session
        != ingest.parse(two + reply, source="stdin")[0].session
    )


def test_a_chat_log_as_one_json_document_is_read_as_its_turns() -> None:
    """An array of turns (or one pretty-printed, or `{"messages": [...]}` as chat APIs write it)
    was stored as one text said now by the user, the assistant's words in it too."""
    turns = [
        {"role": "user", "content": "I moved to Bristol.", "timestamp": "2026-04-01T10:00:00"},
        {"role": "assistant", "content": "Welcome!", "timestamp": "2026-04-01T10:01:00"},
    ]
    for text in (json.dumps(turns), json.dumps(turns, indent=2), json.dumps({"messages": turns})):
        raws = ingest.parse(text, source="chat.json")
        assert [(r.role, r.text) for r in raws] == [
            ("user", "I moved to Bristol."),
            ("assistant", "Welcome!"),
        ]
        assert raws[1].said_at == datetime(2026, 4, 1, 10, 1, tzinfo=UTC)
    assert ingest.parse(json.dumps(turns[0], indent=1))[0].text == "I moved to Bristol."
    groceries = '[{"id": 1, "name": "Groceries", "content": "milk, eggs", "updated": "2026-02-01"}]'
    for other in ("[1, 2, 3]", '{\n  "theme": "dark"\n}', groceries):  # (a list's items: no role, no speaker)
        with pytest.raises(InputError, match="one JSON document, not a chat log"):
            ingest.parse(other, source="stdin")
    assert ingest.parse("[draft] notes for the talk")[0].text == "[draft] notes for the talk"


@pytest.mark.parametrize(
    ("log", "message"),
    [
        ('{"role": "user", "content": "ok"}\n{"role": "user", "content": "ok\n', "line 2: not JSON"),
        (
            '{"role": "user", "content": "ok"}\n\n{"content": "who said this?"}\n',
            'line 3: no "role" (one of user, assistant, system)',
        ),
        (
            '{"role": "User", "content": "ok"}\n{"role": 7, "content": "x"}',
            "line 2: role must be one of user, assistant, system, got 7",
        ),
        (
            '{"role": "user", "content": "ok", "timestamp": true}',
            "line 1: timestamp must be a date, a time or Unix seconds, got true",
        ),
        ('{"role": "user", "content": "ok"}\n{"role": "bot", "content": "x"}', "line 2: role must be one of"),
        ('{"role": "user", "content": "  "}', "line 1: content must be a non-empty string"),
        ('{"role": "user", "content": "ok"}\n["user", "hi"]', "line 2: expected an object"),
        (
            '{"role": "user", "content": "ok", "timestamp": "last tuesday"}',
            "cannot read timestamp on line 1 'last tuesday'",
        ),
    ],
)
def test_jsonl_errors_name_the_line(log: str, message: str) -> None:
    with pytest.raises(InputError) as e:
        ingest.parse(log, Format.jsonl, source="chat.jsonl")

    assert message in e.value.message


def test_jsonl_is_detected_and_text_can_be_forced() -> None:
    line = '{"role": "user", "content": "hi"}'

    assert [r.text for r in ingest.parse(line)] == ["hi"]
    assert [r.text for r in ingest.parse(line, Format.text)] == [line]


def test_json_lines_of_another_shape_are_refused_not_stored_as_one_text() -> None:
    """`{"text": …, "timestamp": …}` a line, piped without --format, was stored as one input of
    braces said now, which no dated question finds: it is refused with the fields it needs, and
    can still be stored as text when that is meant."""
    log = '{"text": "Letter came: the op is on 3 Aug.", "timestamp": "2026-07-10"}\n{"text": "Home."}\n'

    with pytest.raises(InputError) as e:
        ingest.parse(log, source="stdin")

    assert '"content"' in e.value.message and "--format text" in (e.value.hint or "")
    assert len(ingest.parse(log, Format.text)) == 1
    # one JSON object typed, or lines of prose among them, are text as before; one piped is a
    # record (a nightly job piping one a night would store each as braces said now)
    assert len(ingest.parse('{"note": "one object"}')) == 1
    with pytest.raises(InputError):
        ingest.parse('{"text": "went to the gym", "date": "2026-03-01"}\n', source="stdin")
    # A .jsonl file of that shape is read as a chat log: it is told what a line needs, not that
    # a role is wrong.
    with pytest.raises(InputError) as e:
        ingest.parse(log, Format.jsonl, source="log.jsonl")
    assert '"content"' in e.value.message and "role must be" not in e.value.message
    assert len(ingest.parse('{"a": 1}\nand a line of prose')) == 1


# -- times --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("2026-03-01", datetime(2026, 3, 1, 12, tzinfo=UTC)),
        ("2026-03-01T18:30", datetime(2026, 3, 1, 18, 30, tzinfo=UTC)),
        ("2026-03-01 18:30:15", datetime(2026, 3, 1, 18, 30, 15, tzinfo=UTC)),
        ("2026-03-01T18:30+02:00", datetime(2026, 3, 1, 18, 30, tzinfo=timezone(timedelta(hours=2)))),
        ("2026-03-01T18:30:00Z", datetime(2026, 3, 1, 18, 30, tzinfo=UTC)),
        ("20260301", datetime(2026, 3, 1, 12, tzinfo=UTC)),  # 8 digits: a date
        ("1774000000", datetime(2026, 3, 20, 9, 46, 40, tzinfo=UTC)),  # Unix seconds, as a log's
        (" 1774000000.5 ", datetime(2026, 3, 20, 9, 46, 40, 500000, tzinfo=UTC)),
        ("2026030112", datetime(2026, 3, 1, 12, tzinfo=UTC)),  # a date and an hour: not 2034's seconds
    ],
)
def test_at_parsing(value: str, expected: datetime) -> None:
    assert parse_time(value, "--at") == expected


@pytest.mark.parametrize(
    "value", ["yesterday", "2026-13-01", "", "01/03/2026", "202603011200"]
)  # a date and a time run together is no Unix time
def test_unreadable_times_are_refused(value: str) -> None:
    with pytest.raises(InputError, match="cannot read --at"):
        parse_time(value, "--at")


# -- through the CLI: what a user sees ------------------------------------------------------


def test_sample_journal_file_is_stored_per_entry(cli, llm) -> None:
    done = cli("add", "--file", str(SAMPLE_DATA / "journal.md"), "--no-extract")

    assert done.exit_code == 0
    assert done.stdout.strip() == "stored 38 inputs, 38 pending extraction"
    raws = cli.open_store().raw_by_status([PENDING])
    assert len(raws) == 38 and {r.session for r in raws} == {"journal"}
    assert {r.source for r in raws} == {"journal.md"}


def test_at_sets_when_it_was_said(cli) -> None:
    cli("add", "Booked the Porto flights.", "--no-extract", "--at", "2026-07-20T09:15+01:00")

    (raw,) = cli.open_store().raw_by_status([PENDING])
    assert raw.said_at == datetime(2026, 7, 20, 8, 15, tzinfo=UTC)


def test_plain_text_with_an_assistant_role_is_context(cli, llm) -> None:
    done = cli("add", "Try sencha at 70 degrees.", "--role", "assistant")

    assert done.exit_code == 0 and llm.calls == []
    (raw,) = cli.open_store().raw_by_status([CONTEXT])
    assert raw.role == "assistant"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("add", "x", "--at", "soon"), "cannot read --at 'soon'"),
        (("add",), "nothing to add"),
        (("add", "   "), "nothing to add: the input is empty"),
        (("add", "x", "--file", "notes.txt"), "give either TEXT or --file, not both"),
        (("add", "--file", "does-not-exist.md"), "no such file: does-not-exist.md"),
        (("add", "x", "--role", "narrator"), "role must be one of user, assistant, system"),
        (("add", "x", "--at", ""), "cannot read --at ''"),
        (("recall", "tea", "--as-of", ""), "cannot read --as-of ''"),
        (("recall", "tea", "--batch", "-"), "give a QUERY or --batch, not both"),
        (("recall", "tea", "--json", "--format", "prompt"), "--json and --format prompt ask for two outputs"),
        (("recall", "--batch", "-", "--format", "prompt"), "--batch prints NDJSON"),
    ],
)
def test_unusable_arguments_exit_2_with_a_message(cli, dcpm_home: Path, args: tuple, message: str) -> None:
    done = cli(*args)

    assert done.exit_code == 2
    assert done.stdout == ""
    assert message in one_line(done.stderr)
    assert not (dcpm_home / "store").exists()


def test_a_bad_chat_log_file_stores_nothing(cli, llm, tmp_path: Path, dcpm_home: Path) -> None:
    log = tmp_path / "chat.jsonl"
    log.write_text('{"role": "user", "content": "fine"}\n{"role": "user", "content": "fine too"}\n{oops\n')

    done = cli("add", "--file", str(log))

    assert done.exit_code == 2
    assert "error: chat.jsonl line 3: not JSON" in one_line(done.stderr)
    assert not (dcpm_home / "store").exists()  # line 3 was bad, so lines 1 and 2 were not stored
    assert llm.calls == []


def test_a_bad_chat_log_on_stdin_is_kept_under_rejected(cli, dcpm_home: Path) -> None:
    log = '{"role": "user", "content": "keep me"}\n{"role": "user"}\n'

    done = cli("add", "-", input=log)

    assert done.exit_code == 2
    assert "stdin line 2: content must be a non-empty string" in one_line(done.stderr)
    (kept,) = (dcpm_home / "rejected").iterdir()
    assert kept.read_text(encoding="utf-8") == log
    assert "what was piped in is kept at" in one_line(done.stderr)
    assert not (dcpm_home / "store").exists()


def test_stdin_that_is_not_utf8_is_kept_and_refused(cli, dcpm_home: Path) -> None:
    done = cli("add", "-", input=b"caf\xe9 au lait\n")

    assert done.exit_code == 2
    assert "stdin is not UTF-8 text" in one_line(done.stderr)
    (kept,) = (dcpm_home / "rejected").iterdir()
    assert kept.read_bytes() == b"caf\xe9 au lait\n"  # byte for byte, not after lossy decoding


def test_a_file_that_is_not_utf8_is_refused(cli, tmp_path: Path) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_bytes(b"\xff\xfe binary")

    done = cli("add", "--file", str(notes))

    assert done.exit_code == 2
    assert "notes.txt is not UTF-8 text" in one_line(done.stderr)


BOM = b"\xef\xbb\xbf"  # what Windows editors put before UTF-8 text


def test_a_byte_order_mark_is_not_part_of_the_text(cli, tmp_path: Path) -> None:
    journal, log = tmp_path / "journal.md", tmp_path / "chat.jsonl"
    journal.write_bytes(BOM + b"## 2025-01-05\nFirst entry.\n\n## 2025-01-06\nSecond entry.\n")
    log.write_bytes(BOM + b'{"role": "user", "content": "a line of a chat"}\n')

    for args, stdin in (
        (["--file", str(journal)], None),
        (["--file", str(log)], None),
        (["-"], BOM + b"piped from a Windows file\n"),
    ):
        done = cli("add", "--no-extract", *args, input=stdin)
        assert done.exit_code == 0, done.stderr

    stored = {r.text: r.said_at.date().isoformat() for r in cli.open_store().raw_by_status([PENDING])}
    assert stored == {
        "## 2025-01-05\nFirst entry.": "2025-01-05",  # its heading read, its day kept
        "## 2025-01-06\nSecond entry.": "2025-01-06",
        "a line of a chat": stored["a line of a chat"],
        "piped from a Windows file": stored["piped from a Windows file"],
    }


def test_a_heading_that_names_no_real_day_is_said(cli, tmp_path) -> None:
    journal = tmp_path / "journal.md"
    journal.write_text(
        "## 2026-02-25\nGym, legs.\n\n## 2026-02-30\nSwam 40 lengths.\n\n## 2026-03-01\nRest day.\n"
    )

    added = cli("add", "--no-extract", "--file", str(journal))

    assert added.exit_code == 0, added.stderr
    assert added.stdout.startswith("stored 2 inputs")  # the swim is kept, in the entry above
    said = " ".join(added.stderr.split())
    assert "heading(s) '2026-02-30' name no real day: each is stored as part of the entry above it" in said
    assert "heading" not in cli("add", "--no-extract", "Gym again ## 2026-03-02").stderr


def test_piped_input_without_a_dash_is_not_read_but_named(cli, llm, dcpm_home: Path) -> None:
    # A bare `dcpm add` in a `while read` loop (an empty $line) would swallow the loop's input.
    done = cli("add", "--no-extract", input="note three\nnote four\n")

    assert done.exit_code == 2
    assert "stdin is not read without '-'" in one_line(done.stderr) and "dcpm add -" in done.stderr
    assert not (dcpm_home / "store").exists()
