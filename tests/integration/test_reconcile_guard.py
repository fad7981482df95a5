"""Reconciliation a small model cannot get wrong in harmful ways: a reply schema built per call,
an UPDATE only within one subject and attribute, never a change of stance, every refusal
recorded; relative times resolved against when the input was said."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import jsonschema
import pytest
from support.replies import decide, decisions, extraction, item, item_id

from dcpm_cli.dates import resolve_when
from dcpm_cli.llm import ScriptedLLM
from dcpm_cli.models import DONE, FAILED, RawInput
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


def test_update_across_attributes_is_refused_recorded_and_shown(
    writer: Writer, llm: ScriptedLLM, store: Store, cli
) -> None:
    first = seed(writer, llm, ALLERGY, DIET)
    allergy = item_id(first, 0)
    vegan = said("2026-02-01")
    llm.enqueue(
        extraction(item("Has gone vegan", topic="food", attribute="diet")),
        decisions(decide("UPDATE", allergy, text="Is allergic to penicillin and has gone vegan")),
    )

    report = writer.add([vegan])

    assert (report.added, report.updated) == (1, 0)
    assert store.get_items([allergy])[allergy].text == "Is allergic to penicillin"
    (why,) = report.outcomes[0].rejected
    assert why == f"UPDATE {allergy} refused: different attribute ('diet' vs 'allergies')"
    # The refusal is in the event log of both items, and `dcpm show` prints it.
    (event,) = [e for e in store.events_for(item_id(vegan)) if e.op == "REJECTED"]
    assert (event.target_id, event.detail, event.raw_id) == (allergy, why, vegan.id)
    shown = cli("show", allergy)
    assert f"REJECTED {item_id(vegan)} ← {allergy}; {why}" in shown.stdout
    shown = json.loads(cli("show", item_id(vegan), "--json").stdout)
    assert [e["detail"] for e in shown["events"] if e["op"] == "REJECTED"] == [why]
    added = json.loads(cli("add", "--at", "2026-03-01", "--no-extract", "x", "--json").stdout)
    assert added["rejected"] == []


def test_an_item_with_nothing_of_its_attribute_is_added_without_asking(
    writer: Writer, llm: ScriptedLLM, store: Store
) -> None:
    seed(writer, llm, ALLERGY, DIET)
    llm.enqueue(extraction(item("Started a new job as an editor", topic="work", attribute="job")))

    report = writer.add([said("2026-02-01")])

    assert (report.added, report.llm_calls, llm.replies) == (1, 1, [])
    assert [i.text for i in store.all_items() if i.is_current and i.attribute == "job"] == [
        "Started a new job as an editor"
    ]


def test_a_change_of_stance_offered_as_update_becomes_a_supersede(
    writer: Writer, llm: ScriptedLLM, store: Store
) -> None:
    first = seed(writer, llm, DIET)
    meat = item_id(first)
    veg = said("2026-04-05")
    llm.enqueue(
        extraction(item("Has gone vegetarian and no longer eats meat", topic="food", attribute="diet")),
        decisions(
            decide("UPDATE", meat, text="Eats meat every day, steak is the favourite dinner; vegetarian")
        ),
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


def test_an_update_that_drops_what_the_target_said_becomes_a_supersede(
    writer: Writer, llm: ScriptedLLM, store: Store
) -> None:
    first = seed(writer, llm, DIET)
    meat = item_id(first)
    llm.enqueue(
        extraction(item("Eats lentil curry on Mondays", topic="food", attribute="diet")),
        decisions(decide("UPDATE", meat, text="Eats lentil curry on Mondays")),
    )

    report = writer.add([said("2026-03-01")])

    assert report.superseded == 1
    assert "the merged text leaves out most of the old text" in report.outcomes[0].rejected[0]
    assert store.get_items([meat])[meat].text == "Eats meat every day, steak is the favourite dinner"


def test_a_real_added_detail_is_still_an_update(writer: Writer, llm: ScriptedLLM, store: Store) -> None:
    first = seed(writer, llm, item("Grows tomatoes on the balcony", topic="hobbies", attribute="gardening"))
    target = item_id(first)
    merged = "Grows tomatoes from seed on the balcony"
    llm.enqueue(
        extraction(item("Grows the balcony tomatoes from seed", topic="hobbies", attribute="gardening")),
        decisions(decide("UPDATE", target, text=merged)),
    )

    report = writer.add([said("2026-02-01")])

    assert (report.updated, report.outcomes[0].rejected) == (1, [])
    assert store.get_items([target])[target].text == merged


def test_a_duplicate_that_says_something_else_is_not_dropped(
    writer: Writer, llm: ScriptedLLM, store: Store
) -> None:
    first = seed(writer, llm, ALLERGY, DIET)
    allergy, diet = item_id(first, 0), item_id(first, 1)
    lentils = item("Eats lentil curry every Monday", topic="food", attribute="diet")
    llm.enqueue(extraction(lentils), decisions(decide("DUPLICATE", allergy)))
    soup = item("Eats lentil soup on Fridays", topic="food", attribute="diet")
    llm.enqueue(extraction(soup), decisions(decide("DUPLICATE", diet)))

    unrelated = writer.add([said("2026-02-01")])
    related = writer.add([said("2026-03-01")])

    assert (unrelated.added, unrelated.duplicates, related.superseded, related.duplicates) == (1, 0, 1, 0)
    assert unrelated.outcomes[0].rejected == [f"DUPLICATE of {allergy} refused: it says something else"]
    assert related.outcomes[0].rejected == [f"DUPLICATE of {diet} says something else: superseded instead"]


def test_the_reply_schema_names_only_each_items_own_candidates(
    writer: Writer, llm: ScriptedLLM, store: Store
) -> None:
    first = seed(writer, llm, ALLERGY, DIET)
    allergy, diet = item_id(first, 0), item_id(first, 1)
    llm.enqueue(
        extraction(
            item("Has gone vegan", topic="food", attribute="diet"),
            item("Moved to Porto", topic="home", attribute="home city"),
            item("Eats tofu often", topic="food", attribute="diet"),
        ),
        decisions(decide("SUPERSEDE", diet, item=0), decide("ADD", item=1)),
    )

    report = writer.add([said("2026-05-01")])

    assert (report.added, report.superseded) == (3, 1)
    sent = llm.calls[-1]
    schema = sent["schema"]
    assert schema["title"] == "Reconciliation"
    content = sent["messages"][-1]["content"]
    # Only the items with a candidate of their own attribute are asked, and only about those.
    assert f"EXISTING {diet}:" in content and allergy not in content and "Porto" not in content
    ok = {"decisions": [
        {"item": 0, "reason": "same diet, new value", "op": "SUPERSEDE", "target": diet},
        {"item": 1, "reason": "another dish", "op": "ADD", "target": None},
    ]}  # fmt: skip
    jsonschema.validate(ok, schema)
    first_ok, second_ok = ok["decisions"]
    bad = [
        {"decisions": [first_ok]},  # a missing decision
        {"decisions": [{**first_ok, "target": allergy}, second_ok]},  # not shown to this item
        {"decisions": [{**first_ok, "target": "m_invented"}, second_ok]},
        {"decisions": [second_ok, first_ok]},  # out of order
        {"decisions": [first_ok, {**second_ok, "op": "MERGE"}]},
        {"decisions": [first_ok, {k: v for k, v in second_ok.items() if k != "reason"}]},
    ]
    for reply in bad:
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(reply, schema)
    (decision,) = [d for d in schema["$defs"].values() if d["title"] == "Decision0"]
    assert list(decision["properties"])[:3] == ["item", "reason", "op"]  # the reason before the verdict


def test_the_schema_sent_is_the_strict_models_own(store: Store) -> None:
    """`Ask.schema` writes out what pydantic generates for `Ask.model(strict=True)` (generating
    it cost every input ~10 ms); enum order aside, which pydantic takes from a typing cache."""
    import random

    from dcpm_cli.models import MemoryItem
    from dcpm_cli.prompts.reconcile import Ask

    def generated(ask: Ask) -> dict:
        schema = ask.model(strict=True).model_json_schema()
        for d in schema["$defs"].values():
            d["properties"] = {k: d["properties"][k] for k in ("item", "reason", "op", "target", "text")}
            d["required"] = ["item", "reason", "op", "target"]
        return schema

    def unordered(value: object) -> object:
        if isinstance(value, dict):
            return {k: sorted(v) if k == "enum" else unordered(v) for k, v in value.items()}
        return [unordered(v) for v in value] if isinstance(value, list) else value

    rng = random.Random(5)
    pool = [MemoryItem(id=f"m_{i:02d}", kind="fact", text=f"fact {i}") for i in range(8)]
    for _ in range(60):
        n = rng.randint(1, 4)
        ask = Ask([pool[0]] * n, [rng.sample(pool, rng.randint(0, 3)) for _ in range(n)])
        assert unordered(ask.schema()) == unordered(generated(ask))


def test_a_missing_decision_is_asked_again_and_never_silently_added(
    writer: Writer, llm: ScriptedLLM, store: Store
) -> None:
    first = seed(writer, llm, DIET)
    raw = said("2026-05-01")
    two = extraction(
        item("Has gone vegan", topic="food", attribute="diet"),
        item("Eats tofu often", topic="food", attribute="diet"),
    )
    one_decision = decisions(decide("SUPERSEDE", item_id(first), item=0))
    llm.enqueue(two, one_decision, one_decision, one_decision)

    report = writer.add([raw])

    assert (report.failed, report.added, report.superseded) == (1, 0, 0)
    assert "decisions" in report.outcomes[0].error
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
    the current belief by superseding the newer one (the model may well answer SUPERSEDE). It is
    kept beside it, the refusal recorded. A change learned late ("since March", said in June)
    still supersedes."""
    vegan_raw = said("2026-05-01", "I'm vegan now.")
    llm.enqueue(extraction(item("Is vegan", topic="food", attribute="diet")))
    writer.add([vegan_raw])
    vegan = item_id(vegan_raw)
    old = said("2025-01-01", "Steak night again, I eat meat every day.")
    llm.enqueue(
        extraction(item("Eats meat every day", topic="food", attribute="diet")),
        decisions(decide("SUPERSEDE", vegan)),
    )

    report = writer.add([old])

    assert (report.added, report.superseded) == (1, 0)
    (why,) = report.outcomes[0].rejected
    assert why.startswith(f"SUPERSEDE {vegan} refused: said 2025-01-01, before the state it would replace")
    assert store.get_items([vegan])[vegan].is_current
    assert [i.supersedes for i in store.items_from_raw(old.id)] == [None]

    later = said("2026-06-01", "I've been eating fish since March.")
    llm.enqueue(
        extraction(item("Eats fish again since March", topic="food", attribute="diet", when="since March")),
        decisions(decide("SUPERSEDE", vegan)),
    )
    assert writer.add([later]).superseded == 1
    assert not store.get_items([vegan])[vegan].is_current
