"""The belief-arc benchmark's scoring, on a tiny set with scripted replies (CI never runs a model)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from support.replies import answered, extraction, item, replaced

from benchmarks import arcs
from dcpm_cli.embed import Embedder
from dcpm_cli.llm import ScriptedLLM

TINY: dict[str, Any] = {
    "name": "tiny",
    "documents": [
        {"format": "text", "at": "2025-01-10", "text": "I eat meat every day, steak is my favourite."},
        {
            "format": "jsonl",
            "session": "chat",
            "turns": [
                {
                    "role": "user",
                    "timestamp": "2025-02-01T10:00:00",
                    "content": "I'm allergic to penicillin.",
                },
                {"role": "assistant", "timestamp": "2025-02-01T10:00:03", "content": "Good to know."},
            ],
        },
        {"format": "markdown", "text": "## 2025-04-05\nWent vegetarian after a documentary.\n"},
    ],
    "arcs": [
        {
            "attribute": "diet",
            "probe": "What is the user's diet?",
            "stances": [{"match": ["meat every day", "steak"]}, {"match": ["vegetarian"]}],
        }
    ],
    "distractors": [{"probe": "Is the user allergic to anything?", "match": ["penicillin"]}],
}

MEAT = item("Eats meat every day; steak is the favourite", topic="food", attribute="diet")
ALLERGY = item("Is allergic to penicillin", kind="identity", topic="health", attribute="allergies")
VEG = item("Has gone vegetarian after a documentary", topic="food", attribute="diet")


def replies(last: str) -> list[Any]:
    meat_raw, allergy_raw, _, veg_raw = arcs.inputs(TINY)
    assert (meat_raw.role, allergy_raw.role, veg_raw.role) == ("user", "user", "user")
    return [
        extraction(MEAT),
        extraction(ALLERGY),  # nothing near it (the meat is 0.03 away): no judgement
        extraction(VEG),
        *answered(last),  # the vegetarian stance / the meat
    ]


def test_a_chain_that_holds_the_arc_scores_full_marks(embedder: Embedder, tmp_path: Path) -> None:
    llm = ScriptedLLM().enqueue(*replies("replaces"))

    r = arcs.run(TINY, llm, embedder, str(tmp_path / "store"))

    assert r.inputs == 3  # user inputs; the assistant turn is context
    (diet,) = r.arcs
    assert (diet.current_at_1, diet.complete, diet.stale_current) == (True, True, 0)
    assert diet.shown == "Has gone vegetarian after a documentary"
    assert diet.chain == [
        "Eats meat every day; steak is the favourite",
        "Has gone vegetarian after a documentary",
    ]
    assert (r.current_at_1, r.completeness, r.stale_current, r.distractors_kept) == (1.0, 1.0, 0, [True])
    assert r.llm_calls == 5  # three extractions; the one replaces asked twice
    text = arcs.render(r)
    assert "current@1          1.00" in text and "distractors kept   1/1" in text
    assert "LLM calls/input    1.67" in text


def test_a_missed_supersede_leaves_a_stale_stance_and_no_arc(embedder: Embedder, tmp_path: Path) -> None:
    llm = ScriptedLLM().enqueue(*replies("unrelated"))

    r = arcs.run(TINY, llm, embedder, str(tmp_path / "store"))

    assert (r.completeness, r.stale_current) == (0.0, 1)
    assert r.distractors_kept == [True]


def test_a_distractor_merged_into_an_arc_is_not_kept(embedder: Embedder, tmp_path: Path) -> None:
    llm = ScriptedLLM().enqueue(
        extraction(MEAT),
        extraction(ALLERGY),
        extraction(
            item("Has gone vegetarian and is allergic to penicillin", topic="health", attribute="allergies")
        ),
        *replaced(),  # the allergy, its nearest: a small model's bad merge
    )

    r = arcs.run(TINY, llm, embedder, str(tmp_path / "store"))

    assert r.distractors_kept == [False]


@pytest.mark.parametrize(
    ("text", "stance"),
    [
        ("Eats meat every day", 0),
        ("Used to eat steak, has gone vegetarian", 1),  # names both: the later counts
        ("Plays the cello", None),
    ],
)
def test_a_text_names_its_latest_stance(text: str, stance: int | None) -> None:
    assert arcs.stance_of(text, TINY["arcs"][0]["stances"]) == stance


def test_the_packaged_sets_meet_the_issue_shape() -> None:
    for name, min_arcs in (
        ("dev", 8),
        ("heldout", 5),
        ("heldout2", 5),
        ("heldout3", 5),
        ("heldout4", 5),
        ("heldout5", 5),
        ("heldout6", 5),
        ("heldout7", 5),
    ):
        data = arcs.load(name)
        assert len(data["arcs"]) >= min_arcs
        assert all(2 <= len(a["stances"]) <= 5 for a in data["arcs"])
        assert {d["format"] for d in data["documents"]} == {"text", "jsonl", "markdown"}
        raws = arcs.inputs(data)
        assert any(r.role == "assistant" for r in raws)
        # every stance and distractor is said in some user input (its words are the user's)
        said = " ".join(r.text for r in raws if r.role == "user")
        for a in data["arcs"]:
            for s in a["stances"]:
                assert arcs.stance_of(said, [s]) == 0, s
        for d in data["distractors"]:
            assert arcs.names(said, d["match"]), d


def test_the_command_prints_figures_as_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = tmp_path / "tiny.json"
    data.write_text(json.dumps(TINY), encoding="utf-8")
    script = tmp_path / "replies.jsonl"
    script.write_text("\n".join(json.dumps(r) for r in replies("replaces")) + "\n", encoding="utf-8")

    arcs.main(["--data", str(data), "--llm", f"scripted:{script}", "--json"])

    out = json.loads(capsys.readouterr().out)
    assert (out["current_at_1"], out["completeness"], out["stale_current"], out["distractors"]) == (
        1.0,
        1.0,
        0,
        "1/1",
    )
    assert out["calls_per_input"] == pytest.approx(5 / 3)


def test_a_kept_store_is_scored_again_as_it_is_now(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "tiny.json"
    data.write_text(json.dumps(TINY), encoding="utf-8")
    script = tmp_path / "replies.jsonl"
    script.write_text("\n".join(json.dumps(r) for r in replies("replaces")) + "\n", encoding="utf-8")
    store = tmp_path / "store"
    arcs.main(["--data", str(data), "--llm", f"scripted:{script}", "--store", str(store), "--json"])
    written = json.loads(capsys.readouterr().out)

    arcs.main(["--data", str(data), "--score", str(store), "--json"])  # no LLM needed

    again = json.loads(capsys.readouterr().out)
    keys = ("current_at_1", "completeness", "stale_current", "distractors")
    assert [again[k] for k in keys] == [written[k] for k in keys] == [1.0, 1.0, 0, "1/1"]
    assert again["llm_calls"] == 0
    with pytest.raises(SystemExit):
        arcs.main(["--data", str(data), "--score", str(tmp_path / "nowhere")])
