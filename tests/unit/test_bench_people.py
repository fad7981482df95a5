"""The people sets (benchmarks/people.py): every question names its answers, one input each, in
the journal and chat as `dcpm add` reads them; a set whose answer is ambiguous is refused; and
a change of mind is scored on whether the current state comes first. No set's content is read
here beyond that check (the held-out ones stay unread)."""

from __future__ import annotations

import dataclasses

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


def test_a_run_compared_with_an_earlier_one_counts_the_current_state_first_and_names_what_moved(capsys):
    """`--against`: per kind, the ndcg@10 sum and the changes with their current state first,
    before and after, and each change whose top hit went to the current state or from it."""
    gained = people.Asked("p", "q1", "change", "what's my rent now", ["4", "7"])
    lost = people.Asked("p", "q2", "change", "who's my boss rn", ["2", "9"])
    fact = people.Asked("p", "q3", "fact", "what's the dog called", ["5"])
    before = [
        dataclasses.replace(gained, ranked={"dcpm": ["7", "4"]}),
        dataclasses.replace(lost, ranked={"dcpm": ["2", "9"]}),
        dataclasses.replace(fact, ranked={"dcpm": ["5"]}),
    ]
    after = [
        dataclasses.replace(gained, ranked={"dcpm": ["4", "7"]}),
        dataclasses.replace(lost, ranked={"dcpm": ["1", "9", "2"]}),
        dataclasses.replace(fact, ranked={"dcpm": ["5"]}),
    ]
    people.compare(before, after)
    out = capsys.readouterr().out
    assert "3 questions asked by both" in out
    assert "change     ndcg@10 sum 2.00 -> 1.82  current first 1 -> 1 of 2" in out
    assert "fact       ndcg@10 sum 1.00 -> 1.00" in out
    assert "p q1 top hit to the current state: what's my rent now" in out
    assert "p q2 top hit from it: who's my boss rn" in out
