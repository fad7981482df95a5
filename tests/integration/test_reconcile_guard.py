"""Reconciliation a small model cannot get wrong in harmful ways: one pairwise judgement at a
time under a small enum, never an UPDATE that changes a stance, never a DUPLICATE that says
something else, never a link backwards in time, every judgement and refusal recorded; relative
times resolved against when the input was said."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, datetime

import jsonschema
import pytest
from support.replies import extraction, item, item_id, judge_calls, judged, replaced

from dcpm_cli.config import Settings
from dcpm_cli.dates import resolve_when
from dcpm_cli.llm import ScriptedLLM
from dcpm_cli.models import DONE, FAILED, RawInput
from dcpm_cli.prompts.judge import DEFAULT, PROMPTS, RELATIONS
from dcpm_cli.read.recall import recall
from dcpm_cli.store import Store
from dcpm_cli.write.pipeline import Writer


def said(day: str, text: str = "") -> RawInput:
    return RawInput(text=text or f"input of {day}", said_at=datetime.fromisoformat(day).replace(tzinfo=UTC))


def seed(writer: Writer, llm: ScriptedLLM, *items: dict) -> RawInput:
    raw = said("2026-01-01")
    llm.enqueue(extraction(*items))
    writer.add([raw])
    return raw


ALLERGY = item("Is allergic to penicillin", kind="identity", topic="health", attribute="allergies")
DIET = item("Eats meat every day, steak is the favourite dinner", topic="food", attribute="diet")


@pytest.mark.four_way
def test_a_refused_judgement_is_recorded_and_shown(
    writer: Writer, llm: ScriptedLLM, store: Store, cli
) -> None:
    first = seed(writer, llm, ALLERGY, DIET)
    diet = item_id(first, 1)
    vegan = said("2026-02-01")
    llm.enqueue(
        extraction(item("Has gone vegan", topic="food", attribute="diet")),
        # The only candidate above the floor (the allergy is 0.09 away): judged the same thing,
        # but the two texts are far from one statement said twice (0.29).
        judged("same", "both about diet"),
    )

    report = writer.add([vegan])

    assert (report.added, report.updated, report.duplicates) == (1, 0, 0)
    assert store.get_items([diet])[diet].text == DIET["text"]
    (why,) = report.outcomes[0].rejected
    assert why == f"DUPLICATE of {diet} refused: it says something else"
    # The refusal and the judgement are in the event log of both items, and `dcpm show` prints them.
    events = {e.op: e for e in store.events_for(item_id(vegan)) if e.op in ("REJECTED", "JUDGED")}
    assert (events["REJECTED"].target_id, events["REJECTED"].detail, events["REJECTED"].raw_id) == (
        diet,
        why,
        vegan.id,
    )
    assert events["JUDGED"].target_id == diet
    assert events["JUDGED"].detail == f"same: both about diet [{why}]"
    shown = cli("show", diet)
    assert f"REJECTED {item_id(vegan)} ← {diet}; {why}" in shown.stdout
    shown = json.loads(cli("show", item_id(vegan), "--json").stdout)
    assert [e["detail"] for e in shown["events"] if e["op"] == "REJECTED"] == [why]
    added = json.loads(cli("add", "--at", "2026-03-01", "--no-extract", "x", "--json").stdout)
    assert added["rejected"] == []


def test_an_item_with_nothing_near_it_is_added_without_asking(
    writer: Writer, llm: ScriptedLLM, store: Store
) -> None:
    seed(writer, llm, ALLERGY, DIET)
    llm.enqueue(extraction(item("Started a new job as an editor", topic="work", attribute="job")))

    report = writer.add([said("2026-02-01")])

    assert (report.added, report.llm_calls, llm.replies) == (1, 1, [])
    assert [i.text for i in store.all_items() if i.is_current and i.attribute == "job"] == [
        "Started a new job as an editor"
    ]


@pytest.mark.four_way
def test_a_change_of_stance_judged_an_added_detail_becomes_a_supersede(
    writer: Writer, llm: ScriptedLLM, store: Store
) -> None:
    first = seed(writer, llm, DIET)
    meat = item_id(first)
    veg = said("2026-04-05")
    llm.enqueue(
        extraction(item("Has gone vegetarian and no longer eats meat", topic="food", attribute="diet")),
        judged("adds_detail"),
    )

    report = writer.add([veg])

    assert (report.superseded, report.updated) == (1, 0)
    assert [c.text for c in store.chain(meat)] == [
        "Eats meat every day, steak is the favourite dinner",
        "Has gone vegetarian and no longer eats meat",
    ]
    assert report.outcomes[0].rejected == [
        f"UPDATE {meat} made a SUPERSEDE: the new item says a change ('no longer')"
    ]


@pytest.mark.four_way
def test_a_real_added_detail_is_still_an_update(writer: Writer, llm: ScriptedLLM, store: Store) -> None:
    first = seed(writer, llm, item("Grows tomatoes on the balcony", topic="hobbies", attribute="gardening"))
    target = item_id(first)
    llm.enqueue(
        extraction(item("Grows the balcony tomatoes from seed", topic="hobbies", attribute="gardening")),
        judged("adds_detail"),
    )

    report = writer.add([said("2026-02-01")])

    assert (report.updated, report.outcomes[0].rejected) == (1, [])
    merged = "Grows tomatoes on the balcony; Grows the balcony tomatoes from seed"
    assert store.get_items([target])[target].text == merged


@pytest.mark.four_way
def test_a_duplicate_must_say_the_same_thing(writer: Writer, llm: ScriptedLLM, store: Store) -> None:
    first = seed(writer, llm, ALLERGY, DIET)
    allergy, diet = item_id(first, 0), item_id(first, 1)
    lentils = item("Eats lentil curry every Monday", topic="food", attribute="diet")
    llm.enqueue(extraction(lentils), judged("same"), judged("unrelated"))  # the diet, then the allergy
    again = item("Eats meat daily, steak is the favourite dinner", topic="food", attribute="diet")
    llm.enqueue(extraction(again), judged("same"))

    other = writer.add([said("2026-02-01")])
    same = writer.add([said("2026-03-01")])

    assert (other.added, other.duplicates, other.superseded) == (1, 0, 0)
    assert other.outcomes[0].rejected == [f"DUPLICATE of {diet} refused: it says something else"]
    assert [t for t, _ in judge_calls(llm.calls)][:2] == [DIET["text"], ALLERGY["text"]]
    assert (same.added, same.duplicates) == (0, 1)
    assert store.get_items([allergy, diet]).keys() == {allergy, diet}
    assert len(store.all_items()) == 3


def test_the_judgement_names_both_things_then_answers_yes_or_no_and_a_replaces_is_asked_again(
    writer: Writer, llm: ScriptedLLM, store: Store
) -> None:
    seed(writer, llm, DIET)
    llm.enqueue(extraction(item("Has gone vegan", topic="food", attribute="diet")), *replaced())

    report = writer.add([said("2026-05-01")])

    assert report.superseded == 1
    first, again = (c for c in llm.calls[-2:])
    names = ["earlier_about", "later_about", "same_thing", "earlier_still_true"]
    assert list(first["schema"]["properties"]) == names
    assert list(again["schema"]["properties"]) == ["later_about", "earlier_about", *names[2:]]
    for call in (first, again):
        schema = call["schema"]
        jsonschema.validate({"earlier_about": "diet", "later_about": "diet", "same_thing": "yes",
                             "earlier_still_true": "no"}, schema)  # fmt: skip
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate({"earlier_about": "diet", "later_about": "diet", "same_thing": "maybe",
                                 "earlier_still_true": "no"}, schema)  # fmt: skip
    # One system message for every pair and both phrasings (a server's prompt cache serves it).
    assert first["messages"][0]["content"] == again["messages"][0]["content"] == PROMPTS[DEFAULT].system
    assert first["messages"][1] == again["messages"][1]


def test_a_replaces_the_second_phrasing_does_not_confirm_is_no_link(
    writer: Writer, llm: ScriptedLLM, store: Store
) -> None:
    seed(writer, llm, DIET)
    vegan = said("2026-05-01")
    llm.enqueue(
        extraction(item("Has gone vegan", topic="food", attribute="diet")),
        judged("replaces", "diet"),
        judged("unrelated", "veganism"),
    )

    report = writer.add([vegan])

    assert (report.added, report.superseded) == (1, 0)
    assert all(i.is_current for i in store.all_items())
    (e,) = [e for e in store.events_for(item_id(vegan)) if e.op == "JUDGED"]
    assert e.detail.startswith(
        "unrelated: diet / diet; same thing: yes; earlier still true: no; but asked again:"
    )


@pytest.mark.four_way
def test_the_four_way_judgement_schema_is_a_relation_of_four(
    writer: Writer, llm: ScriptedLLM, store: Store
) -> None:
    seed(writer, llm, DIET)
    llm.enqueue(extraction(item("Has gone vegan", topic="food", attribute="diet")), judged("replaces"))

    writer.add([said("2026-05-01")])

    schema = llm.calls[-1]["schema"]
    assert sorted(schema["properties"]["relation"]["enum"]) == sorted(RELATIONS)
    jsonschema.validate({"relation": "replaces"}, schema)
    for bad in ({"relation": "SUPERSEDE"}, {}):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(bad, schema)
    # The system message is the same for every pair (a server's prompt cache serves it).
    assert llm.calls[-1]["messages"][0]["content"] == PROMPTS["four"].system


def test_an_invalid_judgement_is_asked_again_and_never_silently_added(
    writer: Writer, llm: ScriptedLLM, store: Store
) -> None:
    first = seed(writer, llm, DIET)
    raw = said("2026-05-01")
    invalid = {
        "earlier_about": "diet",
        "later_about": "diet",
        "same_thing": "MERGE",
        "earlier_still_true": "no",
    }
    llm.enqueue(extraction(item("Has gone vegan", topic="food", attribute="diet")), invalid, invalid, invalid)

    report = writer.add([raw])

    assert (report.failed, report.added, report.superseded) == (1, 0, 0)
    assert "same_thing" in report.outcomes[0].error
    assert "That reply was invalid" in llm.calls[-1]["messages"][-1]["content"]
    assert store.get_raw([raw.id])[raw.id].status == FAILED  # `dcpm process` tries it again
    assert [i.id for i in store.all_items()] == [item_id(first)]


def test_extraction_is_offered_the_attributes_already_in_memory(
    writer: Writer, llm: ScriptedLLM, store: Store
) -> None:
    seed(writer, llm, DIET, item("Works as an accountant at a bank", topic="work", attribute="job"))
    llm.enqueue(extraction())

    writer.add([said("2026-06-01", "I went vegetarian last month.")])

    prompt = llm.calls[-1]["messages"][-1]["content"]
    assert "Attributes already in memory" in prompt
    offered = prompt.split("Attributes already in memory", 1)[1].split("\n", 1)[0]
    assert "diet" in offered
    # Only a related item's attribute: the job (cosine 0.04 to the input) would invite the
    # model to file the input under it.
    assert "job" not in offered

    # The schema sent requires the attribute (non-empty) and the time words: a small model
    # under a grammar left an optional attribute empty, and nothing could chain to it.
    schema = llm.calls[-1]["schema"]
    full = {"kind": "fact", "text": "Went vegetarian", "topic": "food", "subject": "user",
            "attribute": "diet", "salience": 0.8, "when": "last month"}  # fmt: skip
    jsonschema.validate({"items": [full]}, schema)
    for broken in ({**full, "attribute": ""}, {k: v for k, v in full.items() if k != "attribute"}):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate({"items": [broken]}, schema)
    # Named ends are off by default: the prompt and schema do not ask what an item replaced.
    assert "instead_of" not in json.dumps(schema)
    assert "instead_of" not in llm.calls[-1]["messages"][0]["content"]


def test_with_named_ends_extraction_asks_what_ended_as_a_string(
    writer: Writer, llm: ScriptedLLM, store: Store, settings: Settings
) -> None:
    named = Writer(store, writer.embedder, llm, replace(settings, named_ends=True))
    llm.enqueue(extraction())

    named.add([said("2026-06-01", "No more meat for me.")])

    # A string, "" for nothing: offered null, qwen2.5-coder:1.5b wrote null even for "No more
    # meat for me".
    assert "instead_of" in llm.calls[-1]["messages"][0]["content"]
    schema = llm.calls[-1]["schema"]
    full = {"kind": "fact", "text": "Went vegetarian", "instead_of": "meat", "topic": "food",
            "subject": "user", "attribute": "diet", "salience": 0.8, "when": None}  # fmt: skip
    jsonschema.validate({"items": [full]}, schema)
    jsonschema.validate({"items": [{**full, "instead_of": ""}]}, schema)
    for broken in ({**full, "instead_of": None}, {k: v for k, v in full.items() if k != "instead_of"}):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate({"items": [broken]}, schema)


@pytest.mark.parametrize(
    ("words", "day"),
    [
        ("two months ago", "2026-03-01"),  # month precision: the month it names, from its start
        ("last Tuesday", "2026-05-05"),
        ("since March", "2026-03-01"),
        ("yesterday", "2026-05-09"),
        ("2024-05-01", "2024-05-01"),
        ("in 2019", "2019-05-01"),
    ],
)
def test_relative_time_is_read_against_when_it_was_said(words: str, day: str) -> None:
    when = resolve_when(words, datetime(2026, 5, 10, 18, tzinfo=UTC))  # a Sunday
    assert when == datetime.fromisoformat(day).replace(hour=12, tzinfo=UTC)


@pytest.mark.parametrize("words", [None, "", "null", "at some point"])
def test_time_words_that_name_no_day_give_none(words: str | None) -> None:
    assert resolve_when(words, datetime(2026, 5, 10, tzinfo=UTC)) is None


def test_as_of_sees_a_stance_from_when_it_began_not_when_it_was_told(
    writer: Writer, llm: ScriptedLLM, store: Store
) -> None:
    raw = said("2026-05-10", "I quit coffee two months ago.")
    llm.enqueue(
        extraction(item("Has quit coffee", topic="food", attribute="coffee habit", when="two months ago"))
    )

    writer.add([raw])

    (stored,) = store.all_items()
    assert stored.event_at == datetime(2026, 3, 1, 12, tzinfo=UTC)
    april = recall(store, writer.embedder, "coffee", as_of=datetime(2026, 4, 1, tzinfo=UTC))
    assert [h.text for h in april.hits if h.kind != "raw"] == ["Has quit coffee"]
    assert store.get_raw([raw.id])[raw.id].status == DONE


def test_a_stance_said_before_the_current_one_never_replaces_it(
    writer: Writer, llm: ScriptedLLM, store: Store
) -> None:
    """An old journal imported after newer statements: its stance, said earlier, must not become
    the current belief by superseding the newer one (the model may well answer `replaces`). It is
    not even asked: it is kept beside it, and with no judgement recorded the dream compares the
    two in time order. A change learned late ("since March", said in June) still supersedes."""
    vegan_raw = said("2026-05-01", "I'm vegan now.")
    llm.enqueue(extraction(item("Is vegan", topic="food", attribute="diet")))
    writer.add([vegan_raw])
    vegan = item_id(vegan_raw)
    old = said("2025-01-01", "Steak night again, I eat meat every day.")
    llm.enqueue(extraction(item("Eats meat every day", topic="food", attribute="diet")))

    report = writer.add([old])

    assert (report.added, report.superseded, report.llm_calls) == (1, 0, 1)
    assert store.get_items([vegan])[vegan].is_current
    assert [i.supersedes for i in store.items_from_raw(old.id)] == [None]
    assert store.judged_pairs() == set()

    later = said("2026-06-01", "I've been eating fish since March.")
    llm.enqueue(
        extraction(item("Eats fish again since March", topic="food", attribute="diet", when="since March")),
        judged("unrelated"),  # the meat of the old journal, the nearest
        *replaced(),  # the vegan diet
    )
    assert writer.add([later]).superseded == 1
    assert not store.get_items([vegan])[vegan].is_current
