"""The `timezone` setting: a time written without an offset is the user's own, and days are shown
as the user counts them — so what was said on a Sydney evening is found, and shown, on that day.
A file's inputs keep their identity whatever the setting: adding it again changes nothing."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

from support.replies import extraction, item

SYDNEY = {"DCPM_TIMEZONE": "Australia/Sydney"}  # UTC+11 in March (daylight time)


def said_at(cli, text: str) -> datetime:
    (raw,) = [r for r in cli.open_store().raw_by_status(["done", "pending"]) if r.text == text]
    return raw.said_at


def test_a_time_typed_without_an_offset_is_the_users_and_is_found_on_that_day(cli) -> None:
    # 8 pm in Sydney on 3 March is 9 am UTC that day; read as UTC, it fell on Sydney's 4 March.
    done = cli(
        "add", "--no-extract", "--at", "2026-03-03T20:00", "Dinner at the Thai place with Sam.", **SYDNEY
    )
    assert done.exit_code == 0, done.stderr
    assert said_at(cli, "Dinner at the Thai place with Sam.") == datetime(2026, 3, 3, 9, tzinfo=UTC)

    asked = cli("recall", "what did I do on 3 March?", "--as-of", "2026-03-05", **SYDNEY)
    assert "'3 March' read as 2026-03-03 (Australia/Sydney days): 1 of these said then" in asked.stderr
    assert "2026-03-03  Dinner at the Thai place" in asked.stdout

    # --as-of a day is the end of the user's day: 8 am on 4 March in Sydney is after it.
    cli(
        "add", "--no-extract", "--at", "2026-03-04T08:00", "Breakfast at the Thai place, leftovers.", **SYDNEY
    )
    hits = json.loads(cli("recall", "Thai place", "--as-of", "2026-03-03", "--json", **SYDNEY).stdout)["hits"]
    assert [h["text"] for h in hits] == ["Dinner at the Thai place with Sam."]


def test_a_chat_log_and_a_journal_written_without_offsets_are_the_users_days(cli, tmp_path: Path) -> None:
    log = tmp_path / "chat.jsonl"
    log.write_text(
        json.dumps({"role": "user", "content": "Late swim at Bondi.", "timestamp": "2026-03-03T21:30:00"})
        + "\n"
        + json.dumps({"role": "user", "content": "Flight landed.", "timestamp": "2026-03-03T22:00:00Z"})
        + "\n",
        encoding="utf-8",
    )
    journal = tmp_path / "diary.md"
    journal.write_text("## 2026-03-03\nPlanted basil on the balcony.\n", encoding="utf-8")
    for path in (log, journal):
        assert cli("add", "--no-extract", "--file", str(path), **SYDNEY).exit_code == 0

    assert said_at(cli, "Late swim at Bondi.") == datetime(2026, 3, 3, 10, 30, tzinfo=UTC)
    assert said_at(cli, "Flight landed.") == datetime(2026, 3, 3, 22, tzinfo=UTC)  # an instant: kept
    assert said_at(cli, "## 2026-03-03\nPlanted basil on the balcony.") == datetime(2026, 3, 3, 1, tzinfo=UTC)

    # The same files added again, by a cron job whose environment lost the setting: nothing new.
    for path in (log, journal):
        again = json.loads(cli("add", "--no-extract", "--file", str(path), "--json").stdout)
        assert (again["stored"], again["already_stored"]) >= (0, 1) and again["stored"] == 0


def test_days_are_shown_and_time_words_read_as_the_users(cli, llm) -> None:
    # 8 am on 3 March in Sydney is 9 pm on 2 March in UTC.
    llm.enqueue(extraction(item("Had a migraine", topic="health", when="yesterday")))
    done = cli("add", "--at", "2026-03-03T08:00", "Had a migraine yesterday, wiped out.", **SYDNEY)
    assert done.exit_code == 0, done.stderr

    assert "The user's input, said on 2026-03-03:" in llm.calls[0]["messages"][-1]["content"]
    raw_id = cli.open_store().all_items()[0].raw_ids[0]
    assert "said 2026-03-03 08:00" in cli("show", raw_id, **SYDNEY).stdout

    shown = cli("history", "migraine", **SYDNEY).stdout
    assert "2026-03-02  Had a migraine" in shown  # yesterday in Sydney, not 1 March
    assert "said 2026-03-03: Had a migraine yesterday" in shown
    assert "said 2026-03-02" in cli("history", "migraine").stdout  # UTC days, as asked
    prompt = cli("recall", "migraine", "--format", "prompt", **SYDNEY).stdout
    assert "(fact, 2026-03-02) Had a migraine" in prompt


def test_a_time_the_clocks_skipped_or_repeated_is_taken_and_said(cli) -> None:
    auckland = {"DCPM_TIMEZONE": "Pacific/Auckland"}  # clocks forward on 27 Sep 2026, back on 5 Apr

    skipped = cli(
        "add", "--no-extract", "--at", "2026-09-27T02:30", "Woke to the clocks changing.", **auckland
    )
    twice = cli(
        "add", "--no-extract", "--at", "2026-04-05T02:30", "Up with the baby, twice at 2:30.", **auckland
    )
    plain = cli("add", "--no-extract", "--at", "2026-04-05T09:30", "Pancakes.", **auckland)

    assert "never happened in Pacific/Auckland (the clocks went forward): read as 03:30" in skipped.stderr
    assert "happened twice in Pacific/Auckland (the clocks went back): read as the first" in twice.stderr
    assert plain.exit_code == 0 and "clocks" not in plain.stderr
    assert said_at(cli, "Woke to the clocks changing.") == datetime(2026, 9, 26, 14, 30, tzinfo=UTC)


def test_times_in_a_chat_log_the_clocks_skipped_are_said_once(cli, tmp_path) -> None:
    auckland = {"DCPM_TIMEZONE": "Pacific/Auckland"}
    log = tmp_path / "night.jsonl"
    turns = [
        ("2026-09-27T01:50:00", "Can't sleep."),
        ("2026-09-27T02:10:00", "The clocks go forward tonight, right?"),
        ("2026-09-27T02:40:00", "Still awake."),
        ("2026-09-27T07:00:00", "Slept in the end."),
    ]
    lines = [json.dumps({"role": "user", "content": t, "timestamp": at}) for at, t in turns]
    log.write_text("\n".join(lines) + "\n")

    added = cli("add", "--no-extract", "--file", str(log), **auckland)

    assert added.exit_code == 0, added.stderr
    note = " ".join(added.stderr.split())
    assert (
        "2026-09-27T02:10 never happened in Pacific/Auckland (the clocks went forward): read as 03:10 "
        "(and 1 more time(s) in the input)"
    ) in note
    assert said_at(cli, "Still awake.") == datetime(2026, 9, 26, 14, 40, tzinfo=UTC)
    again = cli("add", "--no-extract", "--file", str(log), "--json", **auckland)
    assert json.loads(again.stdout)["already_stored"] == 4
