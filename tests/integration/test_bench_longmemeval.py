"""`dcpm bench longmemeval`: LongMemEval's metrics on hand-computed cases, and a small run
through the real writer, store and recall."""

from __future__ import annotations

import gzip
import json
import math
from pathlib import Path

import pytest

from dcpm_cli.bench import longmemeval as bench
from dcpm_cli.bench.longmemeval import BM25, ndcg_any, recall_all, recall_any, sessions_from_turns

# -- metrics, by hand ---------------------------------------------------------------------

RANKED = ["a", "b", "c", "d"]
GOLD = ["b", "d"]


@pytest.mark.parametrize(
    ("k", "any_", "all_"),
    [(1, 0.0, 0.0), (2, 1.0, 0.0), (3, 1.0, 0.0), (4, 1.0, 1.0), (10, 1.0, 1.0)],
)
def test_recall_any_and_all(k, any_, all_):
    assert recall_any(RANKED, GOLD, k) == any_
    assert recall_all(RANKED, GOLD, k) == all_


def test_ndcg_uses_longmemevals_dcg():
    # DCG = rel_1 + Σ_{i≥2} rel_i / log2(i): ranks 1 and 2 are both undiscounted.
    # top 3 = a, b, c: DCG = 0 + 1/log2(2) + 0 = 1; ideal (two gold) = 1 + 1 = 2.
    assert ndcg_any(RANKED, GOLD, 3) == pytest.approx(0.5)
    # top 4 adds d at rank 4: 1 + 1/log2(4) = 1.5 over 2.
    assert ndcg_any(RANKED, GOLD, 4) == pytest.approx(0.75)
    # one gold at rank 3: 1/log2(3).
    assert ndcg_any(["x", "y", "g"], ["g"], 10) == pytest.approx(1 / math.log2(3))
    assert ndcg_any(["g", "x"], ["g"], 1) == 1.0
    assert ndcg_any(["x", "g"], ["g"], 1) == 0.0
    # both gold first: perfect, whatever follows.
    assert ndcg_any(["d", "b", "a", "c"], GOLD, 10) == pytest.approx(1.0)


def test_sessions_rank_by_their_best_turn():
    session_of = {"s2_1": "s2", "s1_3": "s1", "s2_5": "s2"}
    ranked = sessions_from_turns(["s2_1", "s1_3", "s2_5"], session_of, ["s1", "s2", "s3"])
    assert ranked == ["s2", "s1", "s3"], "unreached sessions follow in haystack order"


def test_bm25_ranks_the_rare_term_first():
    scores = BM25(["the cat sat", "the dog sat", "the dog ran far away", "a bird"]).scores("cat dog")
    assert scores[0] > scores[1] > scores[2] > 0, "cat is rarer than dog; shorter beats longer"
    assert scores[3] == 0.0


def test_dates_are_read_as_utc():
    when = bench.parse_date("2023/05/20 (Sat) 02:21")
    assert (when.year, when.month, when.day, when.hour, when.minute) == (2023, 5, 20, 2, 21)
    assert when.utcoffset().total_seconds() == 0


# -- a small run --------------------------------------------------------------------------


def _session(*user_turns: str, answer: int | None = None) -> list[dict]:
    turns = []
    for i, text in enumerate(user_turns):
        turns.append({"role": "user", "content": text, "has_answer": i == answer})
        turns.append({"role": "assistant", "content": "Sure, tell me more.", "has_answer": False})
    return turns


def _record(qid: str, qtype: str, question: str, sessions: dict[str, list[dict]], gold: list[str]) -> dict:
    return {
        "question_id": qid,
        "question_type": qtype,
        "question": question,
        "answer": "",
        "question_date": "2024/03/01 (Fri) 10:00",
        "haystack_session_ids": list(sessions),
        "haystack_dates": [f"2024/02/{d:02d} (Thu) 09:00" for d in range(1, len(sessions) + 1)],
        "haystack_sessions": list(sessions.values()),
        "answer_session_ids": gold,
    }


DISTRACTORS = {
    "d_cook": _session("I bake sourdough every weekend.", "My starter lives in the fridge."),
    "d_run": _session("I ran a half marathon in October.", "My knee hurt afterwards."),
    "d_tax": _session("I filed my taxes early this year.", "The refund came within a week."),
}


@pytest.fixture
def mini_file(tmp_path: Path) -> Path:
    records = [
        _record(
            "q1",
            "single-session-user",
            "What is the name of my cat?",
            {
                **DISTRACTORS,
                "answer_cat": _session("I adopted a cat last spring.", "Her name is Miso.", answer=1),
            },
            ["answer_cat"],
        ),
        _record(
            "q2",
            "multi-session",
            "How many bikes do I own now?",
            {
                "answer_bike1": _session("I bought a road bike for commuting.", answer=0),
                **DISTRACTORS,
                "answer_bike2": _session("I just got a second bike, a gravel bike.", answer=0),
            },
            ["answer_bike1", "answer_bike2"],
        ),
        _record("q3_abs", "single-session-user", "What is my dog called?", dict(DISTRACTORS), ["d_cook"]),
    ]
    path = tmp_path / "mini.json.gz"
    with gzip.open(path, "wt", encoding="utf-8") as f:
        json.dump(records, f)
    return path


def test_a_small_run_scores_every_system(mini_file, embedder, settings, tmp_path):
    out = tmp_path / "ranks.jsonl"
    result = bench.run(mini_file, embedder, settings, out=out)
    assert result.skipped_abstention == 1
    assert [r.id for r in result.questions] == ["q1", "q2"]
    q1, q2 = result.questions
    assert q1.ranked["dcpm"][0] == "answer_cat"
    assert set(q2.ranked["dcpm"][:2]) == {"answer_bike1", "answer_bike2"}
    for r in result.questions:
        assert set(r.ranked) == set(bench.SYSTEMS)
        assert all(sorted(ranking) == sorted(set(ranking)) for ranking in r.ranked.values())
        assert r.metrics["dcpm"]["recall_all@5"] == 1.0
        assert r.seconds["ingest"] > 0
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert [x["question_id"] for x in lines] == ["q1", "q2"]
    assert lines[1]["gold"] == ["answer_bike1", "answer_bike2"]
    assert lines[0]["dcpm"][0] == "answer_cat" and len(lines[0]["bm25"]) == 4
    text = bench.report(result)
    assert "dcpm   recall_all@5" in text and "ss-user" in text and "multi" in text


def test_turn_granularity_scores_the_answer_turns(mini_file, embedder, settings):
    result = bench.run(mini_file, embedder, settings, granularity="turn", ks=[1, 3])
    q1 = result.questions[0]
    assert q1.gold == ["answer_cat_3"], "LongMemEval's turn ids count every turn, 1-based"
    assert "answer_cat_3" in q1.ranked["dcpm"][:3]
    assert set(q1.metrics["dense"]) == {f"{m}@{k}" for m in bench.METRICS for k in (1, 3)}


def test_the_command_prints_the_table(cli, mini_file, tmp_path):
    out = tmp_path / "ranks.jsonl"
    result = cli("bench", "longmemeval", str(mini_file), "--limit", "1", "--out", str(out), "--k", "1,5")
    assert result.exit_code == 0, result.output
    assert "recall_all@5" in result.stdout and "ndcg_any@1" in result.stdout
    assert "bm25" in result.stdout and "dense" in result.stdout
    assert len(out.read_text().splitlines()) == 1
    bad = cli("bench", "longmemeval", str(tmp_path / "missing.json"))
    assert bad.exit_code != 0 and "no such file" in bad.stderr


def test_several_files_are_pooled_into_one_table(cli, mini_file, tmp_path):
    """The halves of a built set, or rounds of fresh questions, scored as one: every question of
    every file counted once, in one table; a question in two files is refused, not counted twice."""
    records = bench.load(mini_file)
    halves = []
    for n, part in enumerate((records[:1], records[1:])):
        halves.append(tmp_path / f"half_{n}.json")
        halves[-1].write_text(json.dumps(part))
    out = tmp_path / "ranks.jsonl"
    pooled = cli("bench", "longmemeval", *map(str, halves), "--out", str(out), "--k", "5")
    assert pooled.exit_code == 0, pooled.output
    assert "2 questions scored (1 abstention skipped)" in pooled.stdout
    assert [json.loads(line)["question_id"] for line in out.read_text().splitlines()] == ["q1", "q2"]
    twice = cli("bench", "longmemeval", str(halves[0]), str(mini_file))
    assert twice.exit_code != 0 and "question 'q1' is given twice" in twice.stderr
    qa = cli("bench", "longmemeval", *map(str, halves), "--qa")
    assert qa.exit_code != 0 and "--qa reads one file" in qa.stderr


def test_assistant_turns_are_stored_for_dcpm_when_asked(cli, embedder, settings, tmp_path):
    # The answer is in the assistant's reply only; the user's turn says nothing of it (LongMemEval's
    # chats often open with the assistant's text, the user's turn a bare "continue").
    recommended = [
        {"role": "user", "content": "continue", "has_answer": False},
        {"role": "assistant", "content": "Try the Kelvingrove museum's Dalí exhibition.", "has_answer": True},
    ]
    path = tmp_path / "asst.json.gz"
    record = _record(
        "qa1",
        "single-session-assistant",
        "Which exhibition did you recommend?",
        {**DISTRACTORS, "answer_trip": recommended},
        ["answer_trip"],
    )
    with gzip.open(path, "wt", encoding="utf-8") as f:
        json.dump([record], f)
    protocol = bench.run(path, embedder, settings).questions[0]
    assert protocol.ranked["dcpm"][0] != "answer_trip", "user turns only: nothing says it"
    conversation = bench.run(path, embedder, settings, replies=True).questions[0]
    assert conversation.ranked["dcpm"][0] == "answer_trip"
    assert conversation.ranked["bm25"] == protocol.ranked["bm25"], "the baselines keep the protocol"
    printed = cli("bench", "longmemeval", str(path), "--assistant-turns")
    assert printed.exit_code == 0 and "dcpm's stores hold the assistant's turns too" in printed.stdout
    for other in (["--qa"], ["--granularity", "turn"]):
        refused = cli("bench", "longmemeval", str(path), "--assistant-turns", *other)
        assert refused.exit_code == 2 and "--assistant-turns is for retrieval" in refused.stderr
