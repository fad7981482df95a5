"""The people sets (benchmarks/people.py): every question names its answers, one input each, in
the journal and chat as `dcpm add` reads them; a set whose answer is ambiguous is refused; and
a change of mind is scored on whether the current state comes first. No set's content is read
here beyond that check (the held-out ones stay unread)."""

from __future__ import annotations

import pytest

from benchmarks import people


def test_every_set_names_each_answer_in_exactly_one_input():
    folders = people.sets(["all"])
    assert {f.name.split("_")[0] for f in folders} == {"dev", "heldout"}, "the unseen ones stay out"
    folders += sorted(people.HERE.glob("unseen_*"))
    for folder in folders:
        texts = [r.text for r in people.inputs(folder)]
        spec = people.questions(folder)
        assert len(spec["questions"]) >= 40, folder.name
        for q in spec["questions"]:
            gold = people.gold_of(texts, q, folder.name)
            assert len(set(gold)) == len(gold), f"{folder.name} {q['id']}: two answers in one input"


def test_an_answer_found_twice_refuses_the_set():
    texts = ["Bought a bike today.", "The bike needs new brakes."]
    with pytest.raises(SystemExit, match="is in 2 inputs, not one"):
        people.gold_of(texts, {"id": "q1", "gold": ["bike"]}, "made-up")
    assert people.gold_of(texts, {"id": "q1", "gold": ["brakes", "Bought"]}) == ["1", "0"]


def test_a_change_counts_as_kept_only_when_the_current_state_ranks_first():
    current, old = "4", "7"
    assert people._current_first(["4", "1", "7"], [current, old]) == 1.0
    assert people._current_first(["7", "4"], [current, old]) == 0.0
    assert people._current_first(["4"], [current, old]) == 1.0  # the old state not found at all
    assert people._current_first(["7"], [current, old]) == 0.0  # the current one not found
