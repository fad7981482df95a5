"""`dcpm add` and `dcpm process` as a user runs them (in-process, scripted LLM injected)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.fitness import FITNESS, assert_one_chain_of_five, fitness_replies
from support.replies import extraction, item, item_id, judged

from dcpm_cli.config import dcpm_home
from dcpm_cli.ingest import formats as ingest
from dcpm_cli.models import DONE, PENDING, RawInput

FITNESS_JOURNAL = "# Fitness\n\n" + "\n".join(f"## {day}\n{text}\n" for day, text, _ in FITNESS)


def test_llm_failure_at_the_third_input_loses_nothing_and_process_completes_the_chain(
    cli, llm, tmp_path: Path
) -> None:
    journal = tmp_path / "fitness.md"
    journal.write_text(FITNESS_JOURNAL, encoding="utf-8")
    raws = ingest.parse(FITNESS_JOURNAL, session="fitness")
    assert len(raws) == 5
    llm.enqueue(*fitness_replies(raws)[:4])  # input 1; input 2 and its judgement, asked twice; then down

    added = cli("add", "--file", str(journal))

    assert added.exit_code == 3
    assert added.stdout.strip() == (
        "stored 5 inputs, extracted 2, +2 new, 1 superseded, 0 updated, 0 duplicates, 3 pending extraction"
    )
    assert " ".join(added.stderr.split()) == (  # one message, however the terminal wraps it
        "extraction pending for 3 input(s): the scripted LLM has no reply left (enqueue more replies). "
        "Your inputs are stored; run `dcpm process` when the LLM is back."
    )
    store = cli.open_store()
    got = store.get_raw([r.id for r in raws])
    assert [got[r.id].text.splitlines()[-1] for r in raws] == [text for _, text, _ in FITNESS]
    assert [got[r.id].status for r in raws] == [DONE, DONE, PENDING, PENDING, PENDING]
    assert [got[r.id].error for r in raws[2:]] == [
        "the scripted LLM has no reply left",
        "not tried yet: the scripted LLM has no reply left",
        "not tried yet: the scripted LLM has no reply left",
    ]
    assert [got[r.id].attempts for r in raws] == [1, 1, 1, 0, 0]
    assert [got[r.id].said_at.date().isoformat() for r in raws] == [day for day, _, _ in FITNESS]

    llm.enqueue(*fitness_replies(raws, start=2))
    processed = cli("process")

    assert processed.exit_code == 0, processed.stderr
    assert processed.stdout.strip() == "extracted 3, +3 new, 3 superseded, 0 updated, 0 duplicates"
    # oldest first: each call's prompt carries the next input in date order
    extraction_prompts = [
        c["messages"][-1]["content"] for c in llm.calls if c["schema"]["title"] == "Extraction"
    ]
    assert [p.endswith(r.text) for p, r in zip(extraction_prompts[-3:], raws[2:], strict=True)] == [True] * 3
    assert_one_chain_of_five(cli.open_store(), raws)


def test_the_same_input_added_twice_changes_nothing(cli, llm) -> None:
    llm.enqueue(extraction(item("Lives in Bristol", kind="identity", topic="home", attribute="city")))
    args = ("add", "I live in Bristol.", "--session", "intro", "--at", "2026-03-01T10:00", "--json")

    first = json.loads(cli(*args).stdout)
    calls = len(llm.calls)
    second = cli(*args)

    assert (first["stored"], first["added"]) == (1, 1)
    assert second.exit_code == 0
    again = json.loads(second.stdout)
    assert (again["stored"], again["already_stored"], again["llm_calls"], again["added"]) == (0, 1, 0, 0)
    assert len(llm.calls) == calls
    assert len(cli.open_store().all_items()) == 1


def test_a_chat_log_piped_twice_changes_nothing(cli, llm) -> None:
    log = (
        '{"role": "user", "content": "I have a cat called Miso."}\n'
        '{"role": "assistant", "content": "What a lovely name."}\n'
        '{"role": "user", "content": "My sister Hanna feeds her when I travel."}\n'
    )
    llm.enqueue(
        extraction(item("Has a cat called Miso", topic="home", attribute="pets")),
        extraction(item("User's sister Hanna feeds the cat when the user travels", topic="family")),
        judged("unrelated"),  # the sister's feeding the cat / the cat: both still true
    )

    first = cli("add", "-", input=log)
    second = cli("add", "-", "--json", input=log)

    assert first.exit_code == 0, first.stderr
    assert (
        first.stdout.strip() == "stored 3 inputs, extracted 2, +2 new, 0 superseded, 0 updated, 0 duplicates"
    )
    assert second.exit_code == 0
    again = json.loads(second.stdout)
    assert (again["stored"], again["already_stored"], again["llm_calls"]) == (0, 3, 0)
    store = cli.open_store()
    assert len(store.all_items()) == 2
    assert len(store.raw_by_status(["done", "context", "pending"])) == 3


NICOTINE = (
    '{"role": "user", "content": "Should I use nicotine patches or gum?", '
    '"timestamp": "2026-02-08T21:10:00"}\n'
    '{"role": "assistant", "content": "Combine a 21mg patch with 2mg gum for cravings.", '
    '"timestamp": "2026-02-08T21:10:30"}\n'
)


def test_a_chat_piped_without_a_session_is_one_conversation_and_never_stored_twice(cli, tmp_path):
    """A chat piped with no session used to be turns of no conversation: a reply was shown
    without the question it answered, and piping it again with `-s` stored a second copy."""
    piped = json.loads(cli("add", "--no-extract", "-", "--json", input=NICOTINE).stdout)
    assert piped["stored"] == 2
    reply = next(
        h
        for h in json.loads(cli("recall", "what did you recommend for nicotine?", "--json").stdout)["hits"]
        if h["role"] == "assistant"
    )
    assert reply["reply_to"]["text"] == "Should I use nicotine patches or gum?"
    shown = cli("show", reply["id"]).stdout
    assert "session stdin 2026-02-08 21:10" in shown
    assert "answering r_" in shown and ': "Should I use nicotine patches or gum?"' in shown
    assert json.loads(cli("show", reply["id"], "--json").stdout)["reply_to"]["id"] == reply["reply_to"]["id"]
    # Piped again, under a session name, twice, or added from a file: the same conversation.
    (tmp_path / "nicotine.jsonl").write_text(NICOTINE)
    for again in (
        ["-"],
        ["-s", "quitting", "-"],
        ["-s", "quit-2", "-"],
        ["--file", str(tmp_path / "nicotine.jsonl")],
    ):
        got = json.loads(cli("add", "--no-extract", *again, "--json", input=NICOTINE).stdout)
        assert (got["stored"], got["already_stored"]) == (0, 2), again
    # A log with no times is named by its first words: piped again, it is the same too.
    untimed = '{"role": "user", "content": "Hello there"}\n{"role": "assistant", "content": "Hi!"}\n'
    assert [
        json.loads(cli("add", "--no-extract", "-", "--json", input=untimed).stdout)["stored"] for _ in "ab"
    ] == [2, 0]
    assert len(cli.open_store().raw_by_status(["done", "context", "pending"])) == 4


def test_a_growing_log_piped_again_stores_only_its_new_lines_whatever_came_before(cli, tmp_path):
    """A nightly job that mixes `-s`, `--file` and `tail` (found by a user test): a turn stored
    before under another session or from another source was stored again whenever the log
    piped now held more than what was stored then, and a journal piped with one new entry
    stored all its entries again."""

    def turn(day: int, text: str, role: str = "user") -> str:
        return json.dumps({"role": role, "content": text, "timestamp": f"2026-03-{day:02d}T21:00:00"}) + "\n"

    log = [turn(d, f"Day {d}: Miso {w}.") + turn(d, f"Noted {w}.", "assistant") for d, w in enumerate(
        ["came home", "hid all day", "ate tuna", "found the sofa", "met the vet", "slept on my desk"], 1
    )]  # fmt: skip
    stored = [
        json.loads(cli("add", "--no-extract", *how, "--json", input="".join(lines)).stdout)["stored"]
        for how, lines in [
            (["-s", "bot-march", "-"], log[:2]),  # the first two nights, under a name
            (["-"], log[:4]),  # the whole log so far, with two new nights
            (["-"], log[3:5]),  # `tail`: yesterday again, and today
        ]
    ]
    (tmp_path / "miso.jsonl").write_text("".join(log))
    stored.append(
        json.loads(cli("add", "--no-extract", "--file", str(tmp_path / "miso.jsonl"), "--json").stdout)[
            "stored"
        ]
    )
    assert stored == [4, 4, 2, 2]
    assert len(cli.open_store().raw_by_status(["done", "context", "pending"])) == 12

    journal = "".join(f"## 2026-04-0{d}\nWalked Miso's route, day {d}.\n\n" for d in (1, 2, 3))
    (tmp_path / "journal.md").write_text(journal)
    assert (
        json.loads(cli("add", "--no-extract", "--file", str(tmp_path / "journal.md"), "--json").stdout)[
            "stored"
        ]
        == 3
    )
    grown = json.loads(
        cli("add", "--no-extract", "-", "--json", input=journal + "## 2026-04-04\nVet day.\n").stdout
    )
    assert (grown["stored"], grown["already_stored"]) == (1, 3)


def test_a_log_timed_to_the_minute_cut_inside_a_minute_by_tail_stores_only_its_new_lines(cli):
    """Turns logged in one minute are told apart by their order in it: `tail` cutting into the
    minute numbered them from the cut, so none matched what was stored and the whole tail was
    stored again, every night. A turn forgotten in such a minute stays forgotten too."""

    def log(*turns: tuple[str, str, str]) -> list[str]:
        return [
            json.dumps({"role": r, "content": c, "timestamp": f"2026-11-01T{t}"}) + "\n" for t, r, c in turns
        ]

    lines = log(
        ("09:00", "user", "ok"),
        ("09:00", "assistant", "Shall I list what to plant this month?"),
        ("09:00", "user", "ok"),
        ("09:00", "user", "My gate code is 5521, keep it for me."),
        ("09:01", "assistant", "Garlic and broad beans overwinter well."),
        ("09:01", "user", "Great, and the shed roof needs felt."),
    )
    first = json.loads(cli("add", "--no-extract", "-", "--json", input="".join(lines)).stdout)
    assert first["stored"] == 6
    for cut in (5, 4, 3):  # inside the minute: after the first "ok", after the question, after both
        for how in (["-"], ["-s", "garden", "-"]):
            got = json.loads(cli("add", "--no-extract", *how, "--json", input="".join(lines[-cut:])).stdout)
            assert (got["stored"], got["already_stored"]) == (0, cut), (cut, how)
    gate = next(
        h["id"]
        for h in json.loads(cli("recall", "gate code", "--json").stdout)["hits"]
        if h["text"].startswith("My gate code")
    )
    assert cli("forget", gate, "-y").exit_code == 0
    grown = [*lines, *log(("09:01", "assistant", "Felt it is; I'll remind you on Saturday."))]
    got = json.loads(cli("add", "--no-extract", "-", "--json", input="".join(grown[-4:])).stdout)
    assert (got["stored"], got["already_stored"], got["forgotten"]) == (1, 2, 1)
    assert "5521" not in cli("recall", "gate code").stdout
    assert len(cli.open_store().raw_by_status(["done", "context", "pending"])) == 6


def test_turns_of_a_minute_are_matched_by_their_place_and_no_new_one_is_dropped(cli):
    """What a review and a user test of the cut-minute rule found: a turn known in its own
    session next to another chat's last, and a "Yes" of one day in two chats after one was
    forgotten were dropped as stored; a forget among repeated turns of a minute had a `tail`
    from it stored whole again."""

    def add(session: str, *turns: tuple[str, str, str]) -> tuple[int, int, int]:
        lines = [json.dumps({"role": r, "content": c, "timestamp": f"2026-11-01{t}"}) for t, r, c in turns]
        how = ["-s", session, "-"] if session else ["-"]
        got = json.loads(cli("add", "--no-extract", *how, "--json", input="\n".join(lines) + "\n").stdout)
        return got["stored"], got["already_stored"], got["forgotten"]

    assert add(
        "dentist",
        ("T10:00", "user", "Book me in"),
        ("T10:00", "assistant", "Done."),
        ("T10:00", "user", "OK"),
    )
    # A chat opening in that minute on the words it ended on is taken for its tail (`_goes_on_…`).
    assert add("car", ("T10:00", "user", "OK"), ("T10:00", "assistant", "The garage has it.")) == (1, 1, 0)
    assert add("b", ("T09:00", "user", "Set a timer.")) == (1, 0, 0)
    assert add("a", ("T09:04", "user", "Remind me at six."), ("T09:05", "assistant", "Sure.")) == (2, 0, 0)
    assert add("b", ("T09:00", "user", "Set a timer."), ("T09:05", "assistant", "Sure.")) == (1, 1, 0)

    assert add("x", ("", "user", "Yes"), ("", "assistant", "Booked.")) == (2, 0, 0)  # a day's turns
    yes = next(
        h["id"] for h in json.loads(cli("recall", "Yes", "--json").stdout)["hits"] if h["text"] == "Yes"
    )
    assert cli("forget", yes, "-y").exit_code == 0
    assert add("y", ("", "user", "Move it?"), ("", "assistant", "Moved."), ("", "user", "Yes")) == (3, 0, 0)
    moved = next(
        h["id"] for h in json.loads(cli("recall", "Moved", "--json").stdout)["hits"] if h["text"] == "Moved."
    )
    assert cli("forget", moved, "-y").exit_code == 0  # y's, second of its day
    # a new chat opening on it that day is not the forgotten one (a review: it was dropped)
    assert add("z", ("", "assistant", "Moved."), ("", "user", "Thanks")) == (2, 0, 0)

    bot = [
        ("T21:14", "user", "What did Maya say?"),
        ("T21:15", "user", "ok"),
        ("T21:15", "assistant", "Anything else?"),
        ("T21:15", "user", "ok"),
        ("T21:15", "assistant", "Anything else?"),
        ("T21:15", "user", "Add oat milk"),
        ("T21:16", "assistant", "Added."),
    ]
    assert add("", *bot) == (7, 0, 0)
    second_ok = next(
        h["id"]
        for h in json.loads(cli("recall", "ok", "--json").stdout)["hits"]
        if h["text"] == "ok" and h["when"].startswith("2026-11-01T21:15:00.000002")
    )
    assert cli("forget", second_ok, "-y").exit_code == 0
    assert add("", *bot[3:]) == (0, 3, 1)  # `tail` from the forgotten turn
    assert add("", *bot[4:]) == (0, 3, 0)
    assert len(cli.open_store().raw_by_status(["done", "context", "pending"])) == 19


def test_a_log_piped_in_parts_cut_inside_minutes_is_stored_once_and_known_whole(cli, tmp_path):
    """A nightly `tail` starting on a minute's last turn stored it twice, and a log whose parts
    were piped apart, each cut inside a minute, was stored whole again when added as a file
    (a second user test: 588 copies of 623 lines)."""
    log = [
        json.dumps({"role": r, "content": c, "timestamp": f"2026-11-{t}"}) + "\n"
        for t, r, c in [
            ("10T21:00", "user", "Translate caução please"),
            ("10T21:00", "assistant", "Security deposit."),
            ("10T21:00", "user", "ok"),
            ("10T21:01", "assistant", "ok"),
            ("11T09:00", "user", "And fiador?"),
            ("11T09:00", "assistant", "Guarantor."),
            ("12T09:00", "user", "thanks"),
            ("12T09:01", "assistant", "You're welcome."),
        ]
    ]

    def pipe(lines: list[str]) -> tuple[int, int]:
        got = json.loads(cli("add", "--no-extract", "-", "--json", input="".join(lines)).stdout)
        return got["stored"], got["already_stored"]

    assert [pipe(log[:3]), pipe(log[2:4]), pipe(log[3:6]), pipe(log[4:])] == [(3, 0), (1, 1), (2, 1), (2, 2)]
    (tmp_path / "bot.jsonl").write_text("".join(log))
    whole = json.loads(cli("add", "--no-extract", "--file", str(tmp_path / "bot.jsonl"), "--json").stdout)
    assert (whole["stored"], whole["already_stored"]) == (0, 8)
    assert len(cli.open_store().raw_by_status(["done", "context", "pending"])) == 8


def test_inputs_that_share_words_and_a_moment_with_stored_ones_but_not_their_log_are_new(cli, tmp_path):
    """What the review of the growing-log rule found it dropping: an "OK" two chats open with at
    one second, a day two journals share, and a forgotten turn piped again in another session
    (which must stay forgotten, where the rest is new)."""

    def chat(*turns: tuple[str, str, str]) -> str:
        return "".join(
            json.dumps({"role": r, "content": c, "timestamp": f"2026-03-01T{t}Z"}) + "\n" for t, r, c in turns
        )

    dentist = chat(("10:00:00", "user", "OK"), ("10:00:30", "assistant", "Your appointment is at 3pm."))
    car = chat(("10:00:00", "user", "OK"), ("10:00:40", "assistant", "The garage has the car until Friday."))
    for name, log in (("dentist", dentist), ("car", car)):
        got = json.loads(cli("add", "--no-extract", "-s", name, "-", "--json", input=log).stdout)
        assert (got["stored"], got["already_stored"]) == (2, 0), name
    for name, days in (("work", ("02-28", "03-01", "03-02")), ("training", ("02-27", "03-01"))):
        text = "".join(f"## 2026-{d}\n{'Rest day.' if d == '03-01' else name + ' ' + d}\n\n" for d in days)
        (tmp_path / f"{name}.md").write_text(text)
        got = json.loads(cli("add", "--no-extract", "--file", str(tmp_path / f"{name}.md"), "--json").stdout)
        assert (got["stored"], got["already_stored"]) == (len(days), 0), name

    log = chat(
        ("08:00:00", "user", "Set up the new router."),
        ("08:00:20", "assistant", "Done: the network is called Attic."),
        ("08:01:00", "user", "My bank PIN is 4471, remind me later."),
        ("08:01:20", "assistant", "I'd rather not keep a PIN; use a password manager."),
    )
    assert json.loads(cli("add", "--no-extract", "-", "--json", input=log).stdout)["stored"] == 4
    pin = next(
        h["id"]
        for h in json.loads(cli("recall", "bank PIN", "--json").stdout)["hits"]
        if h["text"].startswith("My bank PIN")
    )
    assert cli("forget", pin, "-y").exit_code == 0
    tail = "".join(log.splitlines(keepends=True)[2:])
    for how in (["-"], ["-s", "daily", "-"]):
        got = json.loads(cli("add", "--no-extract", *how, "--json", input=tail).stdout)
        assert (got["stored"], got["forgotten"]) == (0, 1), how
    assert "4471" not in cli("recall", "bank PIN").stdout


def test_a_chat_stored_with_no_session_before_is_not_stored_again_now_it_gets_one(cli, writer):
    """Stores written before a piped chat was given a session hold its turns with none: piping
    the same log again is not a new conversation."""
    old = [
        RawInput(r.text, r.role, "", r.source, r.said_at, wall_clock=r.wall_clock)
        for r in ingest.parse(NICOTINE, source="stdin")
    ]
    assert writer.persist(old)[0] and not old[0].session
    assert cli("add", "--no-extract", "Bought oat milk.").exit_code == 0  # a lone note: no session either
    got = json.loads(cli("add", "--no-extract", "-", "--json", input=NICOTINE).stdout)
    assert (got["stored"], got["already_stored"]) == (0, 2)


def test_a_journal_renamed_or_piped_in_after_its_import_is_not_stored_twice(cli, tmp_path):
    journal = "## 2026-03-01\nStarted running before work.\n\n## 2026-03-02\nMy sister Hanna visited.\n"
    (tmp_path / "journal.md").write_text(journal)
    (tmp_path / "journal-2026.md").write_text(journal)
    first = cli("add", "--no-extract", "--file", str(tmp_path / "journal.md"), "--json")
    renamed = cli("add", "--no-extract", "--file", str(tmp_path / "journal-2026.md"), "--json")
    piped = cli("add", "--no-extract", "-", "--json", input=journal)
    assert json.loads(first.stdout)["stored"] == 2, first.stderr
    for again in (renamed, piped):
        got = json.loads(again.stdout)
        assert (got["stored"], got["already_stored"]) == (0, 2), again.stderr
    # A copy with an entry edited is not the journal stored before: all of it is stored (a
    # session is the one stored before, or goes on from it, only when it holds all of it).
    (tmp_path / "journal-2026.md").write_text(journal.replace("visited", "visited with her dog"))
    edited = json.loads(
        cli("add", "--no-extract", "--file", str(tmp_path / "journal-2026.md"), "--json").stdout
    )
    assert (edited["stored"], edited["already_stored"]) == (2, 0)
    # The journal edited where it is (its old entry replaced), then copied under another name.
    (tmp_path / "journal.md").write_text(journal.replace("Started", "Started slowly"))
    assert (
        json.loads(cli("add", "--no-extract", "--file", str(tmp_path / "journal.md"), "--json").stdout)[
            "stored"
        ]
        == 1
    )
    (tmp_path / "copy.md").write_text((tmp_path / "journal.md").read_text())
    copied = json.loads(cli("add", "--no-extract", "--file", str(tmp_path / "copy.md"), "--json").stdout)
    assert (copied["stored"], copied["already_stored"]) == (0, 2)


def test_a_journal_piped_each_night_after_its_import_stores_each_entry_once(cli, tmp_path):
    """A journal added with --file, then piped by cron each night as it grows (the entries piped
    are stored with no session), or added again as a file after a pipe: every entry once. The
    second night's pipe stored the first import's entries again: an entry the first pipe had
    stored made the journal "stored with no session", known only entry by entry; and a pipe
    whose one entry unknown by its words was the last file's took it for a typed note."""
    journal = tmp_path / "journal.md"
    journal.write_text("## 2026-11-01\nWalked to the beach.\n\n## 2026-11-03\nFirst run since August.\n")

    def add(*how: str) -> tuple[int, int]:
        args = how or ("--file", str(journal))
        got = json.loads(cli("add", "--no-extract", *args, "--json", input=journal.read_text()).stdout)
        return got["stored"], got["already_stored"]

    assert add() == (2, 0)
    with journal.open("a") as f:
        f.write("\n## 2026-11-05\nBouldering with Tariq.\n")
    assert add("-") == (1, 2)
    assert add("-") == (0, 3)  # the night after, nothing new: it stored the first two again
    assert add() == (0, 3)
    with journal.open("a") as f:
        f.write("\n## 2026-11-07\nRain all day.\n")
    assert add() == (1, 3)
    assert add("-") == (0, 4)  # its one new entry was the file's: taken for a typed note
    assert add("-") == (0, 4)
    recalled = json.loads(cli("recall", "walked to the beach", "-k", "4", "--json").stdout)["hits"]
    assert sum("beach" in h["text"] for h in recalled) == 1


def test_a_journal_with_a_days_second_entry_or_one_entry_piped_after_its_import_is_known(cli, tmp_path):
    """A day's entries all sit at its noon, one place in its moment, as does text before the
    first heading: a journal holding either, imported and then piped, was stored again whole
    (only one input a place was paired); a one-entry journal piped after its import was taken
    for a note typed alone (a review's random sequences)."""
    journal = tmp_path / "journal.md"
    journal.write_text(
        "Kept since the move to Oaxaca.\n\n## 2026-11-01\nClimbing at the quarry with Ana.\n\n"
        "## 2026-11-01\nEvening: the blue glaze came out green.\n\n## 2026-11-02\nMarket day.\n"
    )

    def add(path: Path, *how: str) -> tuple[int, int]:
        args = how or ("--file", str(path))
        got = json.loads(cli("add", "--no-extract", *args, "--json", input=path.read_text()).stdout)
        return got["stored"], got["already_stored"]

    assert add(journal) == (4, 0)
    assert add(journal, "-") == (0, 4)
    with journal.open("a") as f:
        f.write("\n## 2026-11-02\nEvening: a second entry that day, about the kiln.\n")
    assert add(journal, "-") == (1, 4)
    assert add(journal, "-") == (0, 5)
    assert add(journal) == (0, 5)
    one = tmp_path / "today.md"
    one.write_text("## 2026-11-03\nA quiet day at the wheel.\n")
    assert add(one) == (1, 0)
    assert add(one, "-") == (0, 1)
    assert len(cli.open_store().raw_by_status(["done", "context", "pending"])) == 6


def test_a_lone_line_piped_after_a_file_import_is_the_stored_one_only_at_its_own_place(cli, tmp_path):
    """A review of the lookup of a lone piped line: `tail -n1` of a log whose minute now holds a
    second "ok" was taken for the import's "ok" (one place on) and lost; from its words alone it
    cannot be told from a pipe of that one, so it is stored (at worst again, never lost)."""
    log = tmp_path / "chat.jsonl"
    line = '{{"role": "{}", "content": "{}", "timestamp": "2026-11-07T10:05:00Z"}}\n'
    log.write_text(line.format("user", "Shall we book the ferry?") + line.format("assistant", "ok"))
    assert json.loads(cli("add", "--no-extract", "--file", str(log), "--json").stdout)["stored"] == 2
    again = json.loads(cli("add", "--no-extract", "-", "--json", input=line.format("assistant", "ok")).stdout)
    assert (again["stored"], again["already_stored"]) == (1, 0)


def test_conversations_that_open_with_the_same_words_at_the_same_time_are_both_stored(cli, tmp_path):
    """Day-level timestamps give each conversation's k-th turn the same moment: two chats that
    open with "Hi" share their first turns, not their conversation."""
    for day, last in (("mon", "Plan my week."), ("tue", "What should I cook tonight?")):
        turns = [("user", "Hi"), ("assistant", "Hello! How can I help today?"), ("user", last)]
        lines = [{"timestamp": "2026-03-02", "role": r, "content": c} for r, c in turns]
        (tmp_path / f"{day}.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
        got = json.loads(
            cli("add", "--no-extract", "--file", str(tmp_path / f"{day}.jsonl"), "--json").stdout
        )
        assert got["stored"] == 3, day
    for session in ("chat-a", "chat-b"):  # typed, in two sessions
        got = json.loads(
            cli("add", "--no-extract", "-s", session, "--at", "2026-03-01T10:00", "Yes.", "--json").stdout
        )
        assert got["stored"] == 1, session


def test_a_time_in_the_future_is_stored_and_said_to_be_one(cli) -> None:
    """A typo (2062 for 2026) would otherwise pass unseen: the input is kept, the note says so."""
    typo = cli("add", "--no-extract", "--at", "2062-03-01", "Paid the plumber.")
    assert typo.exit_code == 0 and "is in the future" in typo.stderr
    assert "is in the future" not in cli("add", "--no-extract", "--at", "2026-03-01", "Paid.").stderr


def test_no_extract_stores_raw_only_and_process_extracts_later(cli, llm) -> None:
    added = cli("add", "I switched to green tea.", "--no-extract", "--at", "2026-07-02")

    assert added.exit_code == 0
    assert added.stdout.strip() == "stored 1 input, 1 pending extraction"
    assert llm.calls == []

    llm.enqueue(
        extraction(item("Drinks green tea instead of coffee", topic="food", attribute="coffee habit"))
    )
    processed = cli("process", "--json")

    summary = json.loads(processed.stdout)
    assert (summary["extracted"], summary["added"], summary["pending"], summary["llm_calls"]) == (1, 1, 0, 1)
    (it,) = cli.open_store().all_items()
    assert it.text == "Drinks green tea instead of coffee"
    assert it.event_at.date().isoformat() == "2026-07-02"


def test_process_limit_takes_the_oldest_first(cli, llm) -> None:
    for day in ("2026-03-03", "2026-01-01", "2026-02-02"):
        cli("add", f"Note from {day}.", "--no-extract", "--at", day)
    llm.enqueue(extraction(), extraction())

    processed = cli("process", "--limit", "2", "--json")

    assert json.loads(processed.stdout)["extracted"] == 2
    (left,) = cli.open_store().raw_by_status([PENDING])
    assert left.text == "Note from 2026-03-03."
    assert [c["messages"][-1]["content"].rsplit("\n", 1)[-1] for c in llm.calls] == [
        "Note from 2026-01-01.",
        "Note from 2026-02-02.",
    ]


def test_process_with_nothing_pending_says_so(cli, llm) -> None:
    assert cli("add", "--no-extract", "I swim on Saturdays.").exit_code == 0
    llm.enqueue(extraction(item("Swims on Saturdays")))
    assert cli("process").exit_code == 0

    done = cli("process")

    assert done.exit_code == 0
    assert done.stdout.strip() == "nothing to do"


def test_process_with_no_store_says_so_and_creates_none(cli, settings) -> None:
    # A cron line with a mistyped DCPM_STORE must not leave an empty store behind.
    done = cli("process", "--json")

    assert done.exit_code == 0 and "nothing stored yet" in done.stderr
    assert settings.store in " ".join(done.stderr.split()), "where it looked, for the cron log"
    assert json.loads(done.stdout)["stored"] == 0
    assert not Path(settings.store).exists()


def test_failed_extraction_exits_3_and_process_retries_it(cli, llm) -> None:
    llm.enqueue("not json", "still not json", "nope")

    added = cli("add", "I started bouldering.")

    assert added.exit_code == 3
    message = " ".join(added.stderr.split())
    assert "1 input(s) failed extraction (" in message
    assert "not JSON" in message, "the user sees why it failed"
    assert "`dcpm process` retries them." in message
    llm.enqueue(extraction(item("Has started bouldering", attribute="exercise routine")))
    processed = cli("process")
    assert processed.exit_code == 0
    assert [i.text for i in cli.open_store().all_items()] == ["Has started bouldering"]


@pytest.mark.four_way
def test_refused_judgements_are_reported(cli, llm) -> None:
    llm.enqueue(extraction(item("Drinks three flat whites a day", topic="food", attribute="coffee habit")))
    cli("add", "Three flat whites a day.", "--at", "2026-02-01")
    llm.enqueue(
        extraction(item("Drinks only green tea", topic="food", attribute="coffee habit")),
        judged("same"),  # not the same words at all (0.43): not dropped, and said so
    )

    done = cli("add", "I only drink green tea now.", "--at", "2026-03-01")

    assert done.exit_code == 0
    assert "note: DUPLICATE of m_" in " ".join(done.stderr.split())
    assert "refused: it says something else" in " ".join(done.stderr.split())


def test_supersede_reported_for_a_file_of_inputs(cli, llm, tmp_path: Path) -> None:
    raws = ingest.parse(FITNESS_JOURNAL, session="fitness")
    journal = tmp_path / "fitness.md"
    journal.write_text(FITNESS_JOURNAL, encoding="utf-8")
    llm.enqueue(*fitness_replies(raws))

    done = cli("add", "--file", str(journal), "--json")

    summary = json.loads(done.stdout)
    assert (summary["stored"], summary["added"], summary["superseded"]) == (5, 5, 4)
    assert summary["raw_ids"] == [r.id for r in raws]
    assert cli.open_store().chain(item_id(raws[0]))[-1].text == FITNESS[-1][2]


def test_add_reports_its_own_pending_inputs_not_the_whole_backlog(cli, llm) -> None:
    cli("add", "Backlog one.", "--no-extract", "--at", "2026-01-01")
    cli("add", "Backlog two.", "--no-extract", "--at", "2026-01-02")
    llm.enqueue(extraction(item("Has a new bike", topic="hobbies", attribute="bike")))

    done = cli("add", "I bought a new bike.", "--at", "2026-01-03")

    assert done.exit_code == 0
    assert done.stdout.strip() == "stored 1 input, extracted 1, +1 new, 0 superseded, 0 updated, 0 duplicates"
    assert len(cli.open_store().raw_by_status([PENDING])) == 2  # the backlog waits for `dcpm process`


def test_no_extract_works_without_a_usable_llm(cli, monkeypatch) -> None:
    monkeypatch.setenv("DCPM_LLM", "gpt-nine")
    cli.llm = None

    stored = cli("add", "Raw only, whatever the LLM setting.", "--no-extract")
    refused = cli("add", "This one wants extraction.")

    assert stored.exit_code == 0
    assert stored.stdout.strip() == "stored 1 input, 1 pending extraction"
    assert refused.exit_code == 2
    assert "unknown LLM 'gpt-nine'" in refused.stderr


def test_process_while_the_llm_is_down_keeps_everything_pending(cli, llm) -> None:
    cli("add", "First.", "--no-extract", "--at", "2026-01-01")
    cli("add", "Second.", "--no-extract", "--at", "2026-01-02")

    done = cli("process")

    assert done.exit_code == 3
    assert "extraction pending for 2 input(s)" in " ".join(done.stderr.split())
    first, second = cli.open_store().raw_by_status([PENDING])
    assert (first.text, first.attempts) == ("First.", 1)
    assert "no reply left" in first.error
    assert (second.text, second.attempts) == ("Second.", 0)  # not tried: the server was down
    assert second.error == "not tried yet: the scripted LLM has no reply left"
    assert len(llm.calls) == 1


def test_scripted_replies_from_a_file(cli, tmp_path: Path) -> None:
    replies = tmp_path / "replies.jsonl"
    replies.write_text(
        json.dumps(extraction(item("Lives in Bristol", kind="identity", topic="home", attribute="city")))
        + '\n{"raise": "unavailable"}\n',
        encoding="utf-8",
    )
    log = (
        '{"role": "user", "content": "I live in Bristol.", "timestamp": "2026-01-01"}\n'
        '{"role": "user", "content": "I work at Brightloop.", "timestamp": "2026-01-02"}\n'
    )
    cli.llm = None

    done = cli("--llm", f"scripted:{replies}", "add", "-", input=log)

    assert done.exit_code == 3
    assert "scripted: the LLM is unavailable" in done.stderr
    store = cli.open_store()
    assert [i.text for i in store.all_items()] == ["Lives in Bristol"]
    assert [r.text for r in store.raw_by_status([PENDING])] == ["I work at Brightloop."]


def test_a_text_file_added_again_by_cron_changes_nothing(cli, tmp_path: Path) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("Booked the dentist for March; hate early appointments.\n")
    for _ in range(2):
        assert cli("add", "--no-extract", "--file", str(notes)).exit_code == 0
    assert cli("add", "--no-extract", "-", input=notes.read_text()).exit_code == 0
    assert cli("add", "--no-extract", "-", input=notes.read_text()).exit_code == 0
    data = json.loads(cli("stats", "--json").stdout)
    assert data["raw_inputs"] == 2, "one from the file, one from the pipe; repeats change nothing"
    notes.write_text("Moved the dentist to April.\n")
    cli("add", "--no-extract", "--file", str(notes))
    assert json.loads(cli("stats", "--json").stdout)["raw_inputs"] == 3, "a changed file is new input"


def test_turns_at_one_time_are_each_stored_and_see_the_turns_before(cli, llm) -> None:
    """A log given --at (or stamped to the day) has every turn at one time: a repeated "yes"
    was merged into the first, and no turn had the ones before it as its conversation."""
    log = (
        '{"role": "user", "content": "yes"}\n'
        '{"role": "assistant", "content": "Shall I sign you up for the Tuesday cinema club?"}\n'
        '{"role": "user", "content": "yes"}\n'
    )
    llm.enqueue(extraction(), extraction(item("Joined the Tuesday cinema club", topic="hobbies")))

    added = json.loads(cli("add", "-", "--at", "2026-03-01T10:00", "--json", input=log).stdout)

    assert added["stored"] == 3
    second_yes = llm.calls[1]["messages"][-1]["content"]
    assert "Tuesday cinema club?" in second_yes.split("The user's input")[0], "the assistant is context"
    again = json.loads(cli("add", "-", "--at", "2026-03-01T10:00", "--json", input=log).stdout)
    assert (again["stored"], again["already_stored"]) == (0, 3), "still idempotent"
    said = sorted(r.said_at for r in cli.open_store().raw_by_status(["done", "no_items", "context"]))
    assert said[0].isoformat().startswith("2026-03-01T10:00:00") and said[0] < said[1] < said[2]


def test_a_note_in_a_cron_log_is_one_line(dcpm, dcpm_home) -> None:
    """stderr piped to a log file is never hard-wrapped at 80 columns: one note, one line."""
    env = {"DCPM_LLM": "ollama:nothing", "OLLAMA_HOST": "127.0.0.1:9", "COLUMNS": "80"}

    done = dcpm("add", "a long day of notes for the cron log", env=env)

    assert done.returncode == 3, done.stderr
    (note,) = [line for line in done.stderr.splitlines() if line.startswith("extraction pending")]
    assert len(note) > 80 and note.endswith("run `dcpm process` when the LLM is back.")


def test_version_alone_answers(cli) -> None:
    from dcpm_cli import __version__

    for args in (["--version"], ["--version", "stats"]):
        result = cli(*args)
        assert (result.exit_code, result.stdout.strip()) == (0, f"dcpm {__version__}")


def test_doctor_says_when_the_store_cannot_be_used(cli, tmp_path: Path) -> None:
    a_file = tmp_path / "notes.txt"
    a_file.write_text("not a store")

    for where, says in (
        (a_file, "it is a file, not a folder"),
        (a_file / "store", "is a file, not a folder"),
    ):
        done = cli("--store", str(where), "doctor", "--json")
        report = json.loads(done.stdout)
        assert done.exit_code == 4 and not report["store_ok"] and says in report["store_problem"], report
    fresh = json.loads(cli("--store", str(tmp_path / "new" / "store"), "doctor", "--json").stdout)
    assert fresh["store_ok"] and fresh["store_problem"] == ""  # the first add makes it


def test_a_turn_forgotten_by_the_dcpm_before_places_were_kept_stays_forgotten(cli):
    """Forgets written before a forget kept each turn's place (a digest of words, speaker and
    exact time) matched nothing once the digest changed: the turn came back (a review)."""
    from dcpm_cli.ingest.formats import parse
    from dcpm_cli.models import Event
    from dcpm_cli.store.erase import forget_detail

    log = (
        '{"role": "user", "content": "My PIN is 4471", "timestamp": "2026-03-01T08:00"}\n'
        '{"role": "assistant", "content": "Please keep it to yourself.", "timestamp": "2026-03-01T08:00"}\n'
    )
    pin = parse(log, source="stdin")[0]
    assert cli("add", "--no-extract", "Bought oat milk.").exit_code == 0
    store = cli.open_store()
    with store.write():
        store.log_events(
            [Event(op="FORGET", item_id=pin.id, detail=forget_detail(said=[pin.said_key_before]))]
        )
    got = json.loads(cli("add", "--no-extract", "-s", "daily", "-", "--json", input=log).stdout)
    assert (got["stored"], got["forgotten"]) == (1, 1)


def test_extract_false_stores_raw_with_no_llm_call_and_process_still_extracts(
    cli, llm, tmp_path: Path
) -> None:
    """A store kept with no model (a cron job that must never call one): `extract = false` (or
    DCPM_EXTRACT=false) is --no-extract on every add; `dcpm process` extracts when asked."""
    journal = tmp_path / "fitness.md"
    journal.write_text(FITNESS_JOURNAL, encoding="utf-8")
    config = dcpm_home() / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text("extract = false\n", encoding="utf-8")

    added = cli("add", "--file", str(journal), "--json")
    config.unlink()
    piped = cli("add", "-", "--json", input="Walked to work today.", DCPM_EXTRACT="false")

    assert (added.exit_code, piped.exit_code) == (0, 0), added.stderr + piped.stderr
    assert (json.loads(added.stdout)["pending"], json.loads(piped.stdout)["pending"]) == (5, 1)
    assert llm.calls == []  # not one call, not even one that failed
    raws = ingest.parse(FITNESS_JOURNAL, session="fitness")
    llm.enqueue(*fitness_replies(raws))
    processed = cli("process", "-n", "5", DCPM_EXTRACT="false")
    assert processed.exit_code == 0, processed.stderr
    assert_one_chain_of_five(cli.open_store(), raws)
