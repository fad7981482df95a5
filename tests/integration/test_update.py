"""UPDATE applied under the lock from the row as it is then: nothing another writer (or an
earlier UPDATE of the same input) added is lost, and `--as-of` shows the text as it was."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

import pytest
from support.replies import extraction, item, item_id, judged

from dcpm_cli.llm import ScriptedLLM
from dcpm_cli.models import RawInput
from dcpm_cli.store import Store
from dcpm_cli.write.pipeline import Writer

pytestmark = pytest.mark.four_way  # UPDATE comes from the four-way judgement

GARDEN = {"topic": "hobbies", "attribute": "gardening"}


def said(month: int, day: int) -> datetime:
    return datetime(2026, month, day, 9, tzinfo=UTC)


def grows_tomatoes(writer: Writer, llm: ScriptedLLM) -> tuple[RawInput, str]:
    first = RawInput(text="I grow tomatoes on the balcony.", said_at=said(4, 1))
    llm.enqueue(extraction(item("Grows tomatoes on the balcony", **GARDEN)))
    writer.add([first])
    return first, item_id(first)


def test_two_updates_of_one_item_in_one_input_keep_both(
    writer: Writer, llm: ScriptedLLM, store: Store
) -> None:
    _, target = grows_tomatoes(writer, llm)
    more = RawInput(text="They're from seed, and I water them at dawn.", said_at=said(4, 8))
    llm.enqueue(
        extraction(
            item("Grows the tomatoes from seed", **GARDEN), item("Waters the tomatoes at dawn", **GARDEN)
        ),
        judged("adds_detail"),
        judged("adds_detail"),
    )

    report = writer.add([more])

    assert report.updated == 2
    text = store.get_items([target])[target].text
    assert "from seed" in text and "at dawn" in text
    steps = [(e.previous_text, e.new_text) for e in store.events_for(target) if e.op == "UPDATE"]
    assert steps[0] == (
        "Grows tomatoes on the balcony",
        "Grows tomatoes on the balcony; Grows the tomatoes from seed",
    )
    assert (
        steps[1][0] == "Grows tomatoes on the balcony; Grows the tomatoes from seed" and steps[1][1] == text
    )


def test_an_update_applied_after_another_writer_changed_the_row_keeps_both_additions(
    store: Store, embedder: Any, settings: Any, llm: ScriptedLLM
) -> None:
    writer = Writer(store, embedder, llm, settings)
    _, target = grows_tomatoes(writer, llm)

    other_llm = ScriptedLLM()
    other = Writer(Store(store.uri, embedder), embedder, other_llm, settings)
    elsewhere = RawInput(text="The tomatoes are cherry tomatoes.", said_at=said(4, 6))
    other_llm.enqueue(
        extraction(item("Grows cherry tomatoes", **GARDEN)),
        judged("adds_detail"),
    )

    def meanwhile(step: str) -> None:
        # This writer has read the row and asked the model; the other process now updates it.
        if step == "reconciled" and not other_llm.calls:
            other.add([elsewhere])

    mine = RawInput(text="I grow them from seed.", said_at=said(4, 8))
    llm.enqueue(
        extraction(item("Grows the tomatoes from seed", **GARDEN)),
        judged("adds_detail"),
    )
    replace(writer, checkpoint=meanwhile).add([mine])

    text = store.get_items([target])[target].text
    assert "cherry" in text and "from seed" in text
    updates = [e for e in store.events_for(target) if e.op == "UPDATE"]
    assert [e.previous_text for e in updates] == [
        "Grows tomatoes on the balcony",
        "Grows tomatoes on the balcony; Grows cherry tomatoes",
    ]


def test_recall_as_of_before_an_update_shows_the_text_as_it_was(cli, llm: ScriptedLLM) -> None:
    llm.enqueue(extraction(item("Grows tomatoes on the balcony", **GARDEN)))
    cli("add", "--at", "2026-04-01", "I grow tomatoes on the balcony.")
    assert len(cli.open_store().all_items()) == 1
    llm.enqueue(
        extraction(item("Grows the tomatoes from seed", **GARDEN)),
        judged("adds_detail"),
    )
    cli("add", "--at", "2026-04-08", "The balcony tomatoes are from seed.")

    def top(*extra: str) -> str:
        result = cli("recall", "tomatoes on the balcony", "--kind", "fact", "--json", *extra)
        return json.loads(result.stdout)["hits"][0]["text"]

    assert top() == "Grows tomatoes on the balcony; Grows the tomatoes from seed"
    assert top("--as-of", "2026-04-05") == "Grows tomatoes on the balcony"
    assert top("--as-of", "2026-04-09") == "Grows tomatoes on the balcony; Grows the tomatoes from seed"
