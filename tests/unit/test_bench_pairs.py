"""The pair benchmark's arithmetic and the pairwise judgement, with scripted replies (CI never
runs a model)."""

from __future__ import annotations

import json
import re
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from support.replies import judged

from benchmarks import pairs
from dcpm_cli.errors import LLMBadReply
from dcpm_cli.llm import ScriptedLLM
from dcpm_cli.prompts.judge import _EXAMPLES, _THING_EXAMPLES, PROMPTS, Statement, Thing
from dcpm_cli.write.judge import NO_CHANGE, judge


def pair(label: str, n: int) -> dict[str, Any]:
    return {
        "earlier": {"text": f"earlier {n}", "said_at": "2025-01-01"},
        "later": {"text": f"switched to later {n}", "said_at": "2025-03-01"},
        "label": label,
        "why": "",
    }


def answer(relation: str) -> dict[str, str]:
    """A reply in every prompt's fields (support.replies.judged)."""
    return judged(relation, "because")


# gold → answered: 3 replaces (2 right, 1 said unrelated), 2 adds_detail (1 right, 1 said
# replaces), 1 same (right), 4 unrelated (2 right, 1 said replaces, 1 never valid).
GOLD = ["replaces", "replaces", "replaces", "adds_detail", "adds_detail", "same"] + ["unrelated"] * 4
SAID = (
    ["replaces", "replaces", "unrelated", "adds_detail", "replaces", "same"]
    + ["unrelated"] * 2
    + ["replaces"]
)


def test_precision_recall_and_matrix_on_the_four_way_prompt(tmp_path: Path) -> None:
    llm = ScriptedLLM().enqueue(*(answer(r) for r in SAID), *["not json"] * 3)
    results = pairs.run(llm, [pair(g, i) for i, g in enumerate(GOLD)], prompt="four")

    s = pairs.score(results)

    assert (s.n, s.errors, s.calls) == (10, 1, 9 + 3)
    assert s.precision == {"replaces": 2 / 4, "adds_detail": 1.0, "same": 1.0, "unrelated": 2 / 3}
    assert s.recall == {"replaces": 2 / 3, "adds_detail": 1 / 2, "same": 1.0, "unrelated": 2 / 4}
    assert s.matrix["adds_detail"] == {"replaces": 1, "adds_detail": 1, "same": 0, "unrelated": 0, "error": 0}
    assert s.matrix["unrelated"] == {"replaces": 1, "adds_detail": 0, "same": 0, "unrelated": 2, "error": 1}
    assert s.prompt_tokens == sum(r["prompt_tokens"] for r in results) > 0
    assert s.per_call(s.completion_tokens) == s.completion_tokens / 12
    assert re.search(r"^replaces +0\.50 +0\.67", pairs.report(s), re.M)


def test_a_binary_prompt_counts_detail_and_same_as_unrelated() -> None:
    llm = ScriptedLLM().enqueue(*(answer(r) for r in ["replaces", "unrelated", "replaces", "unrelated"]))
    golds = ["replaces", "adds_detail", "same", "same"]
    results = pairs.run(llm, [pair(g, i) for i, g in enumerate(golds)], prompt="binary")

    s = pairs.score(results, ("replaces", "unrelated"))

    assert s.precision == {"replaces": 1 / 2, "unrelated": 1.0}
    assert s.recall == {"replaces": 1.0, "unrelated": 2 / 3}
    assert s.matrix["same"]["replaces"] == 1


def test_the_both_true_answer_reads_as_unrelated() -> None:
    llm = ScriptedLLM().enqueue(answer("both_true"))
    v = judge(llm, Statement("I keep bees.", _at(1)), Statement("I bake bread.", _at(2)), prompt="both_true")
    assert (v.relation, v.answer) == ("unrelated", "both_true")
    assert llm.calls[0]["schema"]["properties"]["relation"]["enum"] == ["both_true", "replaces"]


def test_the_system_prompt_is_a_fixed_prefix_and_the_pair_comes_last() -> None:
    llm = ScriptedLLM().enqueue(answer("same"), answer("unrelated"))
    judge(llm, Statement("I keep bees.", _at(1)), Statement("I'm a beekeeper.", _at(2)))
    judge(llm, Statement("I surf.", _at(3)), Statement("I bake bread.", _at(4)))
    (a_sys, a_user), (b_sys, _) = (c["messages"] for c in llm.calls)
    assert a_sys == b_sys and a_sys["role"] == "system"
    assert (
        a_user["content"]
        == "EARLIER (said 2025-01-01): I keep bees.\nLATER (said 2025-01-02): I'm a beekeeper."
    )


@pytest.mark.parametrize(
    ("prompt", "fields"), [("four", ["relation"]), ("four_reasoned", ["reason", "relation"])]
)
def test_a_reasoned_prompt_asks_for_the_reason_before_the_verdict(prompt: str, fields: list[str]) -> None:
    llm = ScriptedLLM().enqueue(answer("same"))
    judge(llm, Statement("I keep bees.", _at(1)), Statement("I'm a beekeeper.", _at(2)), prompt=prompt)
    schema = llm.calls[0]["schema"]
    assert schema["required"] == list(schema["properties"]) == fields
    assert ('"reason": ' in llm.calls[0]["messages"][0]["content"]) == (fields[0] == "reason")


def test_an_answer_outside_the_enum_is_asked_again_then_refused() -> None:
    llm = ScriptedLLM().enqueue(answer("supersede"), answer("replaces"))
    a, b = Statement("a", _at(1)), Statement("b now", _at(2))
    assert judge(llm, a, b, prompt="four").relation == "replaces"
    llm.enqueue(*[answer("maybe")] * 3)
    with pytest.raises(LLMBadReply):
        judge(llm, Statement("a", _at(1)), Statement("b now", _at(2)), prompt="four")
    llm.enqueue(*[answer("replaces") | {"same_thing": "perhaps"}] * 3)
    with pytest.raises(LLMBadReply, match="same_thing"):
        judge(llm, Statement("a", _at(1)), Statement("b now", _at(2)))


def test_the_default_asks_a_replaces_again_with_the_later_thing_named_first() -> None:
    llm = ScriptedLLM().enqueue(*[answer("replaces")] * 3, answer("unrelated"))
    bees, sold = Statement("I keep bees.", _at(1)), Statement("Sold the hives.", _at(2))
    assert judge(llm, bees, sold).relation == "replaces"
    first, again = (list(c["schema"]["properties"])[:2] for c in llm.calls)
    assert (first, again) == (["earlier_about", "later_about"], ["later_about", "earlier_about"])
    # The second phrasing disagrees: no replaces (a wrong link hides a true belief).
    v = judge(llm, bees, sold)
    assert (v.relation, v.answer) == ("unrelated", "not confirmed") and "but asked again" in v.reason
    # Only a replaces is asked twice.
    calls = len(llm.calls)
    assert judge(llm.enqueue(answer("adds_detail")), bees, sold).relation == "unrelated"
    assert len(llm.calls) == calls + 1


def test_the_command_writes_one_row_per_pair(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = tmp_path / "set.json"
    data.write_text(json.dumps([pair("replaces", 0), pair("unrelated", 1), pair("same", 2)]))
    replies = tmp_path / "replies.jsonl"
    replies.write_text("\n".join(json.dumps(answer(r)) for r in ["replaces", "replaces", "same"]))
    out = tmp_path / "out.jsonl"

    pairs.main(
        [
            "--llm",
            f"scripted:{replies}",
            "--set",
            str(data),
            "--limit",
            "2",
            "--out",
            str(out),
            "--prompt",
            "four",
        ]
    )

    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [(r["label"], r["relation"]) for r in rows] == [
        ("replaces", "replaces"),
        ("unrelated", "replaces"),
    ]
    printed = capsys.readouterr().out
    assert re.search(r"^replaces +0\.50 +1\.00", printed, re.M) and "per call:" in printed


@pytest.mark.parametrize("name", ["dev", "heldout", "heldout2", "heldout3", "heldout4", "heldout5"])
def test_the_packaged_sets_meet_the_issue_shape(name: str) -> None:
    data = pairs.load(name)
    counts = Counter(p["label"] for p in data)
    assert counts["unrelated"] >= 100 and counts["replaces"] >= 40
    assert counts["adds_detail"] >= 25 and counts["same"] >= 20
    assert set(counts) == {"replaces", "adds_detail", "same", "unrelated"}
    for p in data:
        assert p["earlier"]["said_at"] <= p["later"]["said_at"]
    # the few-shot examples come from topics in neither set
    texts = {p[side]["text"] for p in data for side in ("earlier", "later")}
    assert not texts & {t for e in (*_EXAMPLES, *_THING_EXAMPLES) for t in e[:2]}


def test_every_prompt_a_user_can_choose_is_a_prompt() -> None:
    from dcpm_cli.config import JUDGE_PROMPTS

    assert set(JUDGE_PROMPTS) == set(PROMPTS) - {"thing_later_first"}  # that one only confirms


def test_every_prompt_names_its_answers_in_its_examples() -> None:
    for p in PROMPTS.values():
        if isinstance(p, Thing):
            for said in ('"same_thing": "yes"', '"same_thing": "no"', '"earlier_still_true": "no"'):
                assert said in p.system
            continue
        for a in p.answers:
            assert f'"relation": "{a}"' in p.system


def _at(day: int) -> datetime:
    return datetime(2025, 1, day, tzinfo=UTC)


def test_a_model_that_stops_answering_ends_the_run_with_the_pairs_judged(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "set.json"
    data.write_text(json.dumps([pair("replaces", 0), pair("unrelated", 1), pair("same", 2)]))
    replies = tmp_path / "replies.jsonl"
    replaced = json.dumps(answer("replaces"))  # the default prompt asks a replaces twice
    replies.write_text(f"{replaced}\n{replaced}\n" + json.dumps({"raise": "unavailable"}))

    pairs.main(["--llm", f"scripted:{replies}", "--set", str(data)])

    captured = capsys.readouterr()
    assert "PARTIAL: 1 of 3 pairs" in captured.out and "stopped after 1 pairs" in captured.err
    assert re.search(r"^replaces +1\.00 +1\.00", captured.out, re.M)


def test_a_replaces_without_a_word_of_change_is_unrelated_and_not_asked_again() -> None:
    llm = ScriptedLLM().enqueue(*[answer("replaces")] * 3)
    drink = Statement("I don't drink alcohol.", _at(1))
    again = Statement("Teetotal, never touch the stuff.", _at(2))

    v = judge(llm, drink, again)

    assert (v.relation, v.answer) == ("unrelated", NO_CHANGE) and "says no change" in v.reason
    assert len(llm.calls) == 1
    # Without the check (a model that tells a restatement from a change), it is asked again.
    assert judge(llm, drink, again, change_words=False).relation == "replaces"
    assert len(llm.calls) == 3


def test_rescore_applies_the_check_to_a_run_without_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = [
        {"label": "same", "relation": "replaces", "reason": "r", "later": "Teetotal, never touch it"},
        {"label": "replaces", "relation": "replaces", "reason": "r", "later": "Quit drinking in May"},
        {"label": "unrelated", "relation": "unrelated", "reason": "r", "later": "Never touch it"},
    ]
    run = tmp_path / "run.jsonl"
    usage = {"calls": 1, "prompt_tokens": 1, "completion_tokens": 1, "seconds": 1}
    run.write_text("\n".join(json.dumps(r | usage) for r in rows))

    assert pairs.main(["--rescore", str(run)]) == 0

    out = capsys.readouterr().out
    assert re.search(r"^replaces +1\.00 +1\.00", out, re.M)  # the restatement no longer counts
    with pytest.raises(SystemExit):
        pairs.main(["--rescore", str(tmp_path / "missing.jsonl")])
