"""A long input stays whole in the store, but extraction sees it in bounded pieces (one call
each, items merged), and embedding it costs what embedding its first words costs."""

from __future__ import annotations

import random

import numpy as np
import pytest
from support.replies import extraction, item

from dcpm_cli.chunking import EXTRACT_CHARS, pieces
from dcpm_cli.models import DONE, RawInput


def diary(paragraphs: int, seed: int = 7) -> str:
    rng = random.Random(seed)
    words = ["I", "we", "my", "garden", "tomato", "ran", "morning", "work", "sister", "coffee", "tea"]
    return "\n\n".join(
        " ".join(
            " ".join(rng.choice(words) for _ in range(rng.randint(5, 18))).capitalize() + "."
            for _ in range(rng.randint(2, 9))
        )
        for _ in range(paragraphs)
    )


def squeezed(text: str) -> str:
    return "".join(text.split())


@pytest.mark.parametrize(
    "text",
    [
        diary(60),
        "One paragraph without breaks. " * 400,  # sentence ends only
        "word " * 3000,  # spaces only
        "x" * 9000 + " tail",  # a run with no space: cut blind
        "Short and sweet.",
    ],
    ids=["paragraphs", "sentences", "words", "no-spaces", "short"],
)
def test_pieces_are_bounded_and_hold_every_character_in_order(text: str) -> None:
    got = pieces(text)

    assert all(0 < len(p) <= EXTRACT_CHARS for p in got)
    assert squeezed("".join(got)) == squeezed(text)


def test_pieces_end_at_paragraphs_when_there_are_any() -> None:
    text = diary(60)

    got = pieces(text)

    assert len(got) > 2
    assert all(p.endswith(".") for p in got)  # never inside a sentence
    assert all(text.index(p) >= 0 for p in got)  # each piece is a stretch of the input as written


def test_a_long_input_is_stored_whole_and_extracted_piece_by_piece(writer, llm) -> None:
    text = diary(60)
    parts = pieces(text)
    raw = RawInput(text=text, session="diary")
    llm.enqueue(*(extraction(item(f"Piece {n} says something.", kind="summary")) for n in range(len(parts))))

    report = writer.add([raw])

    assert report.extracted == 1 and report.llm_calls == len(parts) > 2
    prompts = [c["messages"][-1]["content"] for c in llm.calls]
    assert [p.endswith(part) for p, part in zip(prompts, parts, strict=True)] == [True] * len(parts)
    assert all(len(p) < EXTRACT_CHARS + 500 for p in prompts)
    stored = writer.store.get_raw([raw.id])[raw.id]
    assert stored.text == text and stored.status == DONE
    items = writer.store.items_from_raw(raw.id)
    assert sorted(i.text for i in items) == sorted(f"Piece {n} says something." for n in range(len(parts)))
    assert len({i.id for i in items}) == len(parts)


def test_embedding_a_long_input_reads_only_what_the_model_sees(embedder) -> None:
    """The model sees 256 tokens; tokenizing 10 MB whole to keep them took 54 s and 1.3 GB."""
    head = diary(12)
    long = head + "\n\n" + diary(3000, seed=8)  # ~1.5 MB more that the model never sees

    a, b = embedder.embed([head, long])

    assert float(np.dot(a, b)) > 0.9999
