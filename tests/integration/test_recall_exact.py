"""An exact word reaches the raw words: a rare token (an order number, a code) said once and
left out of every extracted fact still finds the input that holds it."""

from __future__ import annotations

from datetime import UTC, datetime

from support.replies import extraction, item

from dcpm_cli.models import RawInput
from dcpm_cli.read.recall import recall

SAID = [
    ("My boiler repair ticket is UNIQ00005Z, the plumber comes on Friday", "Has a plumber coming Friday"),
    ("I started learning the cello with a teacher in town", "Is learning the cello"),
    ("We adopted a grey cat called Miso last spring", "Has a grey cat called Miso"),
    ("My sister moved to Lisbon for a new job in design", "Sister lives in Lisbon"),
]


def test_a_token_only_in_the_raw_text_finds_its_input_once_extracted(writer, llm, store, embedder) -> None:
    raws = []
    for n, (text, fact) in enumerate(SAID):
        raw = RawInput(text=text, said_at=datetime(2026, 3, 1 + n, 12, tzinfo=UTC))
        llm.enqueue(extraction(item(fact, topic=f"topic {n}")))
        writer.add([raw])
        raws.append(raw)
    assert store.get_raw([raws[0].id])[raws[0].id].status == "done"

    for query in ("UNIQ00005Z", "uniq00005z", "ticket UNIQ00005Z"):
        hits = recall(store, embedder, query, k=3).hits
        assert hits and hits[0].id == raws[0].id, (query, [h.text for h in hits])
        assert "UNIQ00005Z" in hits[0].text
    # An ordinary word keeps finding the facts, not the inputs they came from.
    assert recall(store, embedder, "cello", k=3).hits[0].kind == "fact"
