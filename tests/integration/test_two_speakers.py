"""Two-person conversations (#20 item 5): a turn's speaker is part of what is searched, and a
question naming a speaker prefers that speaker's turns (a boost, never a filter)."""

from __future__ import annotations

import dataclasses
import json
from datetime import UTC, datetime

import pytest

from dcpm_cli import views
from dcpm_cli.errors import InputError
from dcpm_cli.ingest.formats import parse_jsonl
from dcpm_cli.models import speaker_of
from dcpm_cli.read.question import read_question
from dcpm_cli.read.recall import recall


def _days(*turns: tuple[str, str, str], session: str = "home") -> str:
    """(speaker, "MM-DDTHH:MM", content) turns as a JSONL chat log of one session."""
    return "\n".join(
        json.dumps({"speaker": who, "content": text, "timestamp": f"2026-{at}:00Z", "session": session})
        for who, at, text in turns
    )


def _log(*turns: tuple[str, str, str]) -> str:
    """(speaker, minute, content) turns of one evening as a JSONL chat log of one session."""
    return _days(*((who, f"03-02T19:{m}", text) for who, m, text in turns), session="flat")


def _stored(writer, log: str) -> list:
    """A chat log parsed as `dcpm add` parses it and stored raw; its inputs."""
    raws = parse_jsonl(log, session="", source="chat.jsonl", at=None)
    writer.add(raws, extract=False)
    return raws


def test_a_speaker_field_becomes_part_of_the_turn():
    raws = parse_jsonl(
        _log(("Maya", "00", "I can go up to 850."), ("Sam Okafor", "01", "I can do 900.")),
        session="",
        source="chat.jsonl",
        at=None,
    )
    assert [r.text for r in raws] == ["Maya: I can go up to 850.", "Sam Okafor: I can do 900."]
    assert [r.role for r in raws] == ["user", "user"]  # two people, both users of the memory
    assert [speaker_of(r.text) for r in raws] == ["Maya", "Sam Okafor"]
    named = parse_jsonl('{"role": "user", "name": "Lena", "content": "hi"}', session="", source="x", at=None)
    assert named[0].text == "Lena: hi"
    assert speaker_of("buy milk: today") == ""  # not a name


@pytest.mark.parametrize(
    "name",
    [
        "Élodie Roux",
        "Łukasz",
        "李雷",
        "タナカ ハナコ",
        "Mary Ann de la Cruz",
        "Speaker 2",
        "O'Brien",
        "Jean-Luc Picard",
    ],
)
def test_names_in_every_script_and_shape_a_transcript_uses_are_speakers(name):
    (raw,) = parse_jsonl(json.dumps({"speaker": name, "content": "hello"}), session="", source="x", at=None)
    assert speaker_of(raw.text) == name


@pytest.mark.parametrize(
    "text",
    ["buy milk: today", "Remember to buy: milk", "Step 2: preheat", "今天我去了商店很开心: 买了", "de la: x"],
)
def test_words_before_a_colon_that_name_no_one_are_no_speaker(text):
    assert speaker_of(text) == ""


@pytest.mark.parametrize("bad", ['""', "42", '"two\\nlines"', '"lower case"'])
def test_a_speaker_that_is_not_a_name_is_refused(bad):
    with pytest.raises(InputError, match="speaker must be a name"):
        parse_jsonl(f'{{"speaker": {bad}, "content": "hello"}}', session="", source="x", at=None)


def test_a_named_speaker_ranks_first_when_both_said_the_same(writer, store, embedder):
    raws = _stored(
        writer,
        _log(
            ("Maya", "00", "I'm reading a novel about a lighthouse keeper, it's lovely."),
            ("Sam", "01", "I'm reading a novel about a lighthouse keeper too, it's lovely."),
            ("Maya", "02", "The rent goes up in May."),
            ("Sam", "03", "Then we should look for another flat."),
        ),
    )
    maya, sam = raws[0].id, raws[1].id
    for name, first in (("Sam", sam), ("Maya", maya)):
        got = recall(store, embedder, f"What novel is {name} reading?", k=4)
        ids = [h.id for h in got.hits]
        assert ids[0] == first, name
        # Never a filter, and not a change of mind: the other speaker's turn stays, named apart.
        assert {maya, sam} <= set(ids)
        assert got.hits[0].same_as == []
    # A reader of --format prompt is told whose words a named line is, not "the user's".
    header = views.recall_prompt_text(got).splitlines()[0]
    assert "'Ana: …', is that person's words" in header


def test_a_named_speaker_is_a_preference_not_a_filter(writer, store, embedder):
    raws = _stored(
        writer,
        _log(
            ("Maya", "00", "My best 10k is 47 minutes."),
            ("Sam", "01", "Let's book the flat viewing for Saturday."),
        ),
    )
    got = recall(store, embedder, "What is Sam's best 10k time?", k=2)
    assert got.hits[0].id == raws[0].id  # only Maya said it: her turn still answers


def test_a_time_and_a_person_alone_ask_what_that_person_said_then(writer, store, embedder):
    """ "What did Ana say on 14 October?" asks of a day and a person, not of words: her turns of
    that day first, however unlike the question's words, then hers of other days, nearest
    first, then the other side's."""
    raws = _stored(
        writer,
        _days(
            ("Ana", "10-12T09:01", "Did you book the restaurant for Friday?"),
            ("Ana", "10-12T09:06", "Perfect, I'll bring the wine"),
            ("Ben", "10-13T18:20", "The plumber is coming tomorrow at 10"),
            ("Ana", "10-14T10:15", "Plumber says the boiler needs a new valve, 180 euros"),
            ("Ben", "10-14T10:16", "Ouch. Go ahead"),
            ("Ana", "10-14T13:40", "Also my sister lands on Sunday, can you pick her up?"),
            ("Ben", "10-14T13:45", "Sure, what time?"),
            ("Ana", "10-14T13:46", "15:30 at terminal 2"),
            ("Ana", "10-15T08:00", "Can you buy milk on your way home"),
            ("Ana", "10-17T11:00", "Wine bought for tonight"),
        ),
    )
    hers_then = {raws[i].id for i in (3, 5, 7)}
    as_of = datetime(2026, 10, 20, 12, tzinfo=UTC)
    for question in (
        "what did Ana say on 14 October?",
        "what did Ana and I talk about on October 14th",
        "What did Ana say on the 14th?",  # a day of the month alone: the latest 14th
    ):
        got = recall(store, embedder, question, k=6, now=as_of, zone=UTC)
        ids = [h.id for h in got.hits]
        assert set(ids[:3]) == hers_then, question
        assert set(ids[3:5]) == {raws[8].id, raws[9].id}, question  # hers of the 15th and 17th next
    # Ben is asked of as Ana was.
    got = recall(store, embedder, "what did Ben say on 14 October", k=2, now=as_of, zone=UTC)
    assert {h.id for h in got.hits} == {raws[4].id, raws[6].id}


def test_a_person_asked_of_at_a_time_she_said_nothing_is_still_the_one_asked_of(writer, store, embedder):
    """ "What did Ana say on 13 October?", a day only Ben wrote: her words nearest it come first,
    not his of that day (a review: another chat's turns of that day came first)."""
    raws = _stored(
        writer,
        _days(
            ("Ana", "10-12T09:06", "Perfect, I'll bring the wine"),
            ("Ben", "10-13T18:20", "The plumber is coming tomorrow at 10"),
            ("Carl", "10-13T19:00", "Lost my racket, can I borrow yours"),
            ("Ana", "10-14T10:15", "Plumber says the boiler needs a new valve, 180 euros"),
        ),
    )
    got = recall(
        store, embedder, "what did Ana say on 13 October?", k=4, now=datetime(2026, 10, 20, tzinfo=UTC)
    )
    assert {h.id for h in got.hits[:2]} == {raws[0].id, raws[3].id}


def test_a_speaker_named_as_the_one_told_is_not_the_one_who_said_it(writer, store, embedder):
    """ "What novel did Maya tell Sam about?" asks of Maya's words: Sam, named as the one told
    (or asked, or spoken of), gets no lift (a user test: "what did I tell Ola about Tariq?"
    showed Ola's lines, none about Tariq, above the user's own that named him)."""
    raws = _stored(
        writer,
        _log(
            ("Maya", "00", "I'm reading a novel about a lighthouse keeper, it's lovely."),
            ("Sam", "01", "I'm reading a novel about a lighthouse keeper too, it's lovely."),
            ("Maya", "02", "The rent goes up in May."),
        ),
    )
    maya, sam = raws[0].id, raws[1].id
    for question, first in (
        ("What novel did Maya tell Sam about?", maya),
        ("What novel did Sam tell Maya about?", sam),
        ("What did Sam say about Maya's novel?", sam),
    ):
        assert recall(store, embedder, question, k=2).hits[0].id == first, question


def test_what_i_told_someone_is_asked_of_my_own_turns_when_my_chat_name_is_known(writer, store, embedder):
    """A WhatsApp export does not say whose phone it is: "what did I tell Maya about the flat?"
    found Maya's lines naming the flat, none the user's. With the `me` setting (DCPM_ME=Kasia)
    the user's turns and notes answer it, first; not a question of what Maya said, nor the user
    telling what was said to them ("I told Maya…, what did she say?")."""
    raws = _stored(
        writer,
        _days(
            ("Maya", "03-12T19:02", "Did you go see the flat on Zielna street?"),
            ("Kasia", "03-12T19:05", "Yes! Two rooms, a balcony, tiny kitchen. Rent 3200 zł."),
            ("Maya", "03-12T19:06", "The flat sounds nice, flats near Zielna go fast"),
            ("Maya", "03-13T08:20", "Good luck with the flat!"),
            ("Kasia", "03-14T21:44", "The landlord said yes to 3000, I sign on Monday"),
            ("Maya", "03-14T21:45", "Yay! A flat of your own at last"),
        ),
    )
    mine = {raws[1].id, raws[4].id}
    question = "what did I tell Maya about the flat?"
    assert recall(store, embedder, question, k=2).hits[0].id not in mine, "the test needs the name to mislead"
    assert {h.id for h in recall(store, embedder, question, k=2, me="Kasia").hits} == mine
    assert {h.id for h in recall(store, embedder, question, k=2, me="Kasia Nowak").hits} == mine  # first name
    for theirs in ("what did Maya say about the flat?", "I told Maya about the flat, what did she say?"):
        assert recall(store, embedder, theirs, k=1, me="Kasia").hits[0].id not in mine, theirs
    on_the_day = recall(
        store, embedder, "what did I say on 14 March?", k=1, me="Kasia", now=datetime(2026, 3, 20, tzinfo=UTC)
    )
    assert on_the_day.hits[0].id == raws[4].id


def test_my_chat_name_set_alone_finds_my_turns_saved_with_a_surname(writer, store, embedder):
    """The phone that exported the chat may have saved the user as "Kasia Nowak" while the
    setting says "Kasia" (or the other way round): both are the user's turns."""
    raws = _stored(
        writer,
        _days(
            ("Maya", "03-12T19:02", "Did you go see the flat on Zielna street?"),
            ("Kasia Nowak", "03-12T19:05", "Yes! Two rooms, a balcony, tiny kitchen. Rent 3200 zł."),
            ("Maya", "03-12T19:06", "The flat sounds nice, flats near Zielna go fast"),
            ("Kasia Nowak", "03-14T21:44", "The landlord said yes to 3000, I sign on Monday"),
            ("Maya", "03-14T21:45", "Yay! A flat of your own at last"),
        ),
    )
    mine = {raws[1].id, raws[3].id}
    question = "what did I tell Maya about the flat?"
    assert {h.id for h in recall(store, embedder, question, k=2, me="Kasia").hits} == mine
    assert {h.id for h in recall(store, embedder, question, k=2, me="kasia nowak").hits} == mine
    assert recall(store, embedder, question, k=2, me="Kasia Kowalska").hits[0].id not in mine  # another Kasia


def test_one_i_texted_or_promised_is_the_one_spoken_to_not_the_one_who_spoke(writer, store, embedder):
    """A user test: "did I text Dana on Friday 19 June?" found none of that evening's messages
    (they share no word with it), and "what did I promise Dana?" put Dana's lines first (Dana,
    after "promise", was taken for the one who spoke). The one texted or promised takes part,
    so a question of them and a time asks what was said then; the user's turns come first."""
    raws = _stored(
        writer,
        _days(
            ("Dana", "06-13T19:00", "I got the flat!! Moving on the 20th"),
            ("Priya", "06-13T19:07", "Right. I promise I'll help you move, and I'll bring bacon sandwiches"),
            ("Dana", "06-16T08:00", "Holding you to that"),
            ("Dana", "06-19T22:01", "Tomorrow!! Don't forget the sandwiches"),
            ("Priya", "06-19T22:02", "Brown sauce on yours, ketchup on mine. I'll be at yours at 8.30"),
            ("Dana", "06-19T22:04", "My sofa might not fit through the door of the new place"),
            ("Priya", "06-19T22:05", "Pivot. PIVOT."),
            ("Dana", "06-21T09:00", "Thank you for yesterday, the van was a lifesaver"),
        ),
    )
    evening = {raws[4].id, raws[6].id}
    now = datetime(2026, 6, 29, tzinfo=UTC)
    texted = recall(store, embedder, "did I text Dana on Friday 19 June?", k=3, now=now, me="Priya")
    assert texted.hits[0].id in evening and evening <= {h.id for h in texted.hits}
    promised = recall(store, embedder, "what did I promise Dana?", k=1, now=now, me="Priya")
    assert promised.hits[0].id == raws[1].id


@pytest.mark.parametrize(
    ("question", "mine"),
    [
        ("what did I tell Callum about the interview?", True),
        ("what tip did I give Callum for his interview?", True),  # advice given is said
        ("what rent did I counter-offer Gary?", True),
        ("what did I propose for the leaving do?", True),
        ("which price did I quote Ana?", True),
        ("what did Callum tell me about the interview?", False),
        ("what did Gary offer me?", False),
        ("did I go to the interview?", False),
    ],
)
def test_a_question_of_what_i_said_is_known_by_its_verb(question, mine):
    asked = dataclasses.replace(read_question(question, datetime(2026, 4, 25, tzinfo=UTC)), me="Priya")
    assert bool(asked.asks_what_i_said) is mine


def test_a_chat_name_that_no_turn_could_begin_with_is_refused(cli, monkeypatch):
    monkeypatch.setenv("DCPM_ME", "kasia!")
    got = cli("recall", "what did I tell Maya?")
    assert got.exit_code != 0 and "setting 'me' must be a name" in got.stderr
