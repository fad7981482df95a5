"""WhatsApp's "Export chat" text, as phones write it, read as a conversation between people."""

from __future__ import annotations

import json

import pytest

from dcpm_cli.errors import InputError
from dcpm_cli.ingest import formats as ingest
from dcpm_cli.ingest.formats import Format

LRM, NNBSP = "\u200e", "\u202f"  # marks an iPhone export carries

ANDROID = """\
12/03/2026, 21:14 - Messages and calls are end-to-end encrypted. No one outside of this chat, not even WhatsApp, can read or listen to them. Tap to learn more.
12/03/2026, 21:15 - Maya Lund: Are you still coming to Bergen in April?
12/03/2026, 21:15 - Sam: Yes! Booked the train for the 18th
12/03/2026, 21:15 - Sam: I'll bring the tent
12/03/2026, 21:16 - Maya Lund: <Media omitted>
12/03/2026, 21:16 - Maya Lund: Great. The ferry leaves at 7:40
so don't be late this time
13/03/2026, 08:02 - Sam: This message was deleted
13/03/2026, 08:03 - Sam: Moved it to the 19th, work thing <This message was edited>
13/03/2026, 08:04 - Maya Lund added Ola
"""  # noqa: E501

IPHONE = (
    f"{LRM}[3/4/26, 9:05:12{NNBSP}PM] Mum ❤️: Did you call the dentist?\n"
    f"[3/4/26, 9:06:40{NNBSP}PM] Sam: Yes, Tuesday at 10\n"
    f"{LRM}[3/5/26, 8:00:01{NNBSP}AM] Mum ❤️: {LRM}image omitted\n"
    f"[3/14/26, 12:30:00{NNBSP}PM] Mum ❤️: Dad says happy birthday\n"
    f"[3/15/26, 12:10:00{NNBSP}AM] Sam: Thanks!\n"
)


def _said(raws):
    return [(r.said_at.isoformat(timespec="seconds"), r.text) for r in raws]


def test_an_android_export_is_its_messages_by_name_in_order_without_whatsapps_own_lines() -> None:
    raws = ingest.parse(ANDROID, session="WhatsApp Chat with Maya Lund", source="chat.txt")
    assert _said(raws) == [
        ("2026-03-12T21:15:00+00:00", "Maya Lund: Are you still coming to Bergen in April?"),
        ("2026-03-12T21:15:00+00:00", "Sam: Yes! Booked the train for the 18th"),
        ("2026-03-12T21:15:00+00:00", "Sam: I'll bring the tent"),
        (
            "2026-03-12T21:16:00+00:00",
            "Maya Lund: Great. The ferry leaves at 7:40\nso don't be late this time",
        ),
        ("2026-03-13T08:03:00+00:00", "Sam: Moved it to the 19th, work thing"),
    ]
    # one minute's messages keep their order, each its own input; local times, the user's zone's
    assert len({r.said_at for r in raws}) == 5 and len({r.id for r in raws}) == 5
    assert all(
        r.wall_clock and r.role == "user" and r.session == "WhatsApp Chat with Maya Lund" for r in raws
    )


def test_an_iphone_export_reads_its_twelve_hour_clock_marks_and_month_first_days() -> None:
    raws = ingest.parse(IPHONE, source="_chat.txt")
    assert _said(raws) == [
        ("2026-03-04T21:05:12+00:00", "Mum: Did you call the dentist?"),
        ("2026-03-04T21:06:40+00:00", "Sam: Yes, Tuesday at 10"),
        ("2026-03-14T12:30:00+00:00", "Mum: Dad says happy birthday"),
        ("2026-03-15T00:10:00+00:00", "Sam: Thanks!"),  # 12:10 AM is ten past midnight
    ]
    # piped with no session: one chat, named after its first message, the same each time
    assert len({r.session for r in raws}) == 1 and raws[0].session.startswith(
        "_chat.txt 2026-03-04 21:05:12 "
    )
    assert ingest.parse(IPHONE, source="_chat.txt")[0].session == raws[0].session


@pytest.mark.parametrize(
    ("dates", "first_day"),
    [
        (["03/04/2026", "04/04/2026", "05/04/2026"], "2026-04-03"),  # day first: three days, not months
        (["04/03/2026", "04/04/2026", "04/05/2026"], "2026-04-03"),  # month first, the same way
        (["03.04.26", "13.04.26"], "2026-04-03"),  # the 13th tells
        (["2026-04-03", "2026-04-05"], "2026-04-03"),  # a year first is read as it is
    ],
)
def test_a_date_that_reads_two_ways_is_read_as_the_export_tells(dates: list[str], first_day: str) -> None:
    text = "".join(f"{d}, 10:00 - Ana: day {n}\n" for n, d in enumerate(dates))
    assert ingest.parse(text, source="chat.txt")[0].said_at.date().isoformat() == first_day


def test_dates_nothing_tells_are_read_as_the_user_says_else_refused() -> None:
    """1/2/26 and 2/3/26 are 1 Feb and 2 Mar, or 2 Jan and 3 Feb: a month apart either way,
    so the shorter chat tells nothing (it was read day first, and a later export with 2/13/26
    in it stored all of it again at other dates)."""
    us = "1/2/26, 9:00 AM - Sam: Happy new year!\n2/3/26, 6:30 PM - Sam: The ramen place closed\n"
    with pytest.raises(InputError, match="read two ways") as refused:
        ingest.parse(us, source="chat.txt")
    assert "DCPM_DATE_ORDER" in refused.value.hint
    for order, first in (("mdy", "2026-01-02"), ("dmy", "2026-02-01")):
        assert ingest.parse(us, source="chat.txt", date_order=order)[0].said_at.date().isoformat() == first
    # a chat of one message a month on the 1st: the setting, not the span, says which (a review)
    monthly = "01/02/2026, 10:00 - Ana: rent paid\n01/03/2026, 10:00 - Ana: rent paid again\n"
    assert (
        ingest.parse(monthly, source="c.txt", date_order="dmy")[1].said_at.date().isoformat() == "2026-03-01"
    )
    with pytest.raises(InputError, match="read two ways"):  # two dates: no span tells
        ingest.parse(monthly, source="c.txt")
    grown = us + "2/13/26, 8:00 PM - Sam: Knicks tomorrow\n"  # the 13th tells, whatever the setting
    assert (
        ingest.parse(grown, source="chat.txt", date_order="dmy")[0].said_at.date().isoformat() == "2026-01-02"
    )


def test_what_cannot_be_read_is_refused_plainly() -> None:
    with pytest.raises(InputError, match="read two ways"):
        ingest.parse("05/04/2026, 10:00 - Ana: hi\n05/04/2026, 10:01 - Ben: hello\n", Format.whatsapp)
    with pytest.raises(InputError, match="line 1 is part of no message") as cut:  # `tail -n +10`
        ingest.parse("Drassanes.\n" + ANDROID, source="stdin")
    assert "tail -n +N" in cut.value.hint
    with pytest.raises(InputError, match="no message"):
        ingest.parse(ANDROID.splitlines()[0] + "\n" + ANDROID.splitlines()[-1] + "\n", Format.whatsapp)
    with pytest.raises(InputError, match="no date"):
        ingest.parse("31/31/2026, 10:00 - Ana: hi\n01/01/2026, 10:01 - Ben: hello\n", Format.whatsapp)
    with pytest.raises(InputError, match="no such time"):
        ingest.parse(
            "01/01/2026, 25:00 - Ana: hi\n01/01/2026, 10:01 - Ben: hi\n", Format.whatsapp, source="c"
        )


def test_a_note_that_opens_with_a_date_is_a_note() -> None:
    note = "13/03/2026, 21:15 - dentist: moved to Tuesday, bring the referral letter"
    assert [r.text for r in ingest.parse(note, source="cli")] == [note]
    # a log of one's own days, a line or two with a colon in it: no chat, nothing dropped
    log = "12/03/2026, 08:00 - Slept badly\n13/03/2026, 08:00 - Todo: call the bank\n14/03/2026 - Ran\n"
    assert [r.text for r in ingest.parse(log, source="stdin")] == [log.strip()]
    diary = "".join(
        f"1{d}/03/2026, 08:00 - {line}\n"
        for d, line in enumerate(
            ["slept badly", "Lunch with Sara: tapas", "ran 5k", "Todo: call the bank", "rest"]
        )
    )  # each "sender" once: no chat, every line kept (a review)
    assert [r.text for r in ingest.parse(diary, source="diary.txt")] == [diary.strip()]
    typed = "13/03/2026, 21:15 - Maya: hi\n13/03/2026, 21:16 - Sam: hello"  # quoted in a typed note
    assert [r.text for r in ingest.parse(typed, source="cli")] == [typed]


def test_whatsapps_notices_in_every_form_are_left_out_and_a_message_keeps_its_words() -> None:
    text = (
        f"[13/03/2026, 21:10:00] Maya Lund: {LRM}Messages and calls are end-to-end encrypted.\n"
        f"[13/03/2026, 21:10:05] Family: {LRM}You created group “Family”\n"
        f"[13/03/2026, 21:11:00] Maya Lund: {LRM}Missed voice call, {LRM}Tap to call back\n"
        f"[13/03/2026, 21:12:00] Maya Lund: {LRM}This message was deleted.\n"
        f"[13/03/2026, 21:13:00] Maya Lund: The list:\n\n- eggs\n- שלום{LRM} milk\n"
        "[13/03/2026, 21:14:00] Tom: Se eliminó este mensaje.\n"
        "[13/03/2026, 21:15:00] Tom: Bis morgen <Diese Nachricht wurde bearbeitet.>\n"
        f"[13/03/2026, 21:16:00] Me: Thanks, booking 9am {LRM}<This message was edited>\n"
        f"[13/03/2026, 21:17:00] Mum: {LRM}POLL:\n{LRM}Where for dinner?\n{LRM}OPTION: Tasca (3 votes)\n"
    )
    assert [r.text for r in ingest.parse(text, source="chat.txt")] == [
        f"Maya Lund: The list:\n\n- eggs\n- שלום{LRM} milk",  # blank lines and marks inside kept
        "Tom: Bis morgen",
        "Me: Thanks, booking 9am",
        "Mum: POLL:\nWhere for dinner?\nOPTION: Tasca (3 votes)",  # a poll is words
    ]
    android = (
        '13/03/2026, 21:10 - Tom created group "Trip: Lisbon"\n'
        '13/03/2026, 21:11 - Tom changed the subject from "Trip: Lisbon" to "Trip: Porto"\n'
        "13/03/2026, 21:12 - Tom: Missed voice call\n"
        "13/03/2026 à 21:13 - Tom: Le train part à 8h\n"  # a French phone writes "à"
        "13/03/2026, 21:14 - Ana: Perfect\n"
    )
    assert [r.text for r in ingest.parse(android, source="chat.txt")] == [
        "Tom: Le train part à 8h",
        "Ana: Perfect",
    ]


def test_an_export_added_again_grown_stores_only_its_new_messages_and_its_names_are_found(cli, tmp_path):
    export = tmp_path / "WhatsApp Chat with Maya Lund.txt"
    export.write_text(ANDROID, encoding="utf-8")
    first = json.loads(cli("add", "--no-extract", "--file", str(export), "--json").stdout)
    assert first["stored"] == 5
    export.write_text(ANDROID + "14/03/2026, 19:30 - Maya Lund: Ola can lend you a sleeping bag\n")
    grown = json.loads(cli("add", "--no-extract", "--file", str(export), "--json").stdout)
    assert (grown["stored"], grown["already_stored"]) == (1, 5)
    # renamed, or piped: the same chat
    text = export.read_text()
    for how in (["--file", str(export.rename(tmp_path / "maya.txt"))], ["-"]):
        again = json.loads(cli("add", "--no-extract", *how, "--json", input=text).stdout)
        assert (again["stored"], again["already_stored"]) == (0, 6), how
    # exported again after a message was deleted: its place in its minute stays taken
    export.write_text(text.replace("Sam: I'll bring the tent", "Sam: This message was deleted"))
    again = json.loads(cli("add", "--no-extract", "--file", str(export), "--json").stdout)
    assert (again["stored"], again["already_stored"]) == (0, 5)
    # a message edited since: its new words replace the old (kept for show and export), and a
    # renamed copy is still the chat stored (it was stored whole again: a user test)
    export.write_text(
        text.replace("I'll bring the tent", "I'll bring the tent and the stove <This message was edited>")
    )
    edited = json.loads(cli("add", "--no-extract", "--file", str(export), "--json").stdout)
    assert (edited["stored"], edited["already_stored"]) == (1, 5)
    # a message deleted "for me" moves the places after it: the one moved is no edit (a review)
    keys = tmp_path / "WhatsApp Chat with Jo.txt"
    keys.write_text(
        "20/03/2026, 21:15 - Jo: Pick up the keys at 5\n20/03/2026, 21:15 - Jo: Also my charger\n"
    )
    assert json.loads(cli("add", "--no-extract", "--file", str(keys), "--json").stdout)["stored"] == 2
    keys.write_text("20/03/2026, 21:15 - Jo: Also my charger\n21/03/2026, 09:00 - Jo: Thanks!\n")
    assert json.loads(cli("add", "--no-extract", "--file", str(keys), "--json").stdout)["stored"] == 1
    assert any("keys at 5" in h["text"] for h in json.loads(cli("recall", "keys", "--json").stdout)["hits"])
    # an edit taken back: the first words are current again (a review: the edit stayed)
    dinner = tmp_path / "WhatsApp Chat with Teo.txt"
    for words in (
        "dinner at 8 at Luigi's",
        "dinner at 8:30 at Luigi's <This message was edited>",
        "dinner at 8 at Luigi's",
    ):
        dinner.write_text(f"24/03/2026, 18:00 - Teo: {words}\n24/03/2026, 18:05 - Teo: bring wine\n")
        assert cli("add", "--no-extract", "--file", str(dinner)).exit_code == 0
    luigi = [h["text"] for h in json.loads(cli("recall", "dinner at Luigi's", "--json").stdout)["hits"]]
    assert "Teo: dinner at 8 at Luigi's" in luigi and "Teo: dinner at 8:30 at Luigi's" not in luigi
    # two alike messages of one minute, the first deleted "for me": the second is itself (a review)
    plans = tmp_path / "WhatsApp Chat with Lu.txt"
    plans.write_text(
        "22/03/2026, 18:00 - Lu: ok see you at 8 at the bar\n"
        "22/03/2026, 18:00 - Lu: ok see you at 9 at the bar\n"
        "23/03/2026, 10:00 - Lu: morning\n"
    )
    assert json.loads(cli("add", "--no-extract", "--file", str(plans), "--json").stdout)["stored"] == 3
    plans.write_text("22/03/2026, 18:00 - Lu: ok see you at 9 at the bar\n23/03/2026, 10:00 - Lu: morning\n")
    moved = json.loads(cli("add", "--no-extract", "--file", str(plans), "--json").stdout)
    assert (moved["stored"], moved["already_stored"]) == (0, 2)
    bar = [h["text"] for h in json.loads(cli("recall", "see you at the bar", "--json").stdout)["hits"]]
    assert {"Lu: ok see you at 8 at the bar", "Lu: ok see you at 9 at the bar"} <= set(bar)
    (tmp_path / "copy").mkdir()
    copy = tmp_path / "copy" / "WhatsApp Chat with Maya Lund (1).txt"
    copy.write_text(export.read_text())
    again = json.loads(cli("add", "--no-extract", "--file", str(copy), "--json").stdout)
    assert (again["stored"], again["already_stored"]) == (0, 6)
    tent = [
        h["text"] for h in json.loads(cli("recall", "tent", "--json").stdout)["hits"] if "tent" in h["text"]
    ]
    assert tent == ["Sam: I'll bring the tent and the stove"]
    zipped = tmp_path / "WhatsApp Chat - Maya.zip"
    zipped.write_bytes(b"PK\x03\x04" + bytes(range(128, 256)))
    refused = cli("add", "--no-extract", "--file", str(zipped))
    assert refused.exit_code == 2 and "unzip it" in refused.output
    hits = json.loads(cli("recall", "what did Maya say about the ferry?", "--json").stdout)["hits"]
    assert hits[0]["text"].startswith("Maya Lund: Great. The ferry leaves at 7:40")
    assert hits[0]["when"].startswith("2026-03-12T21:16")  # its local time, in the user's zone (UTC here)


def test_an_export_added_with_no_chat_name_set_says_which_name_to_set(cli, tmp_path, monkeypatch):
    """An export does not say whose phone it is, and "what did I tell Maya?" needs to know: with
    `me` unset, adding one says which name to set (the user's, when Android's file name gives the
    other side's), and says nothing once it is set."""
    monkeypatch.delenv("DCPM_ME", raising=False)
    export = tmp_path / "WhatsApp Chat with Maya Lund.txt"
    export.write_text(ANDROID, encoding="utf-8")
    assert 'set DCPM_ME="Sam"' in cli("add", "--no-extract", "--file", str(export)).stderr
    other = tmp_path / "bergen.txt"
    other.write_text(ANDROID.replace("Great.", "Great!"), encoding="utf-8")
    assert "which of Maya Lund, Sam is you?" in cli("add", "--no-extract", "--file", str(other)).stderr
    monkeypatch.setenv("DCPM_ME", "Sam")
    other.write_text(ANDROID + "14/03/2026, 19:30 - Maya Lund: Ola can lend you a sleeping bag\n")
    grown = cli("add", "--no-extract", "--file", str(other))
    assert "stored 0" not in grown.stdout and "DCPM_ME" not in grown.stderr
