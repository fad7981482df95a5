"""The unseen LongMemEval set: each question keeps its own evidence, gets filler that is nobody's
evidence, as many sessions as an S haystack and in date order, the same on every run."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest

from benchmarks import longmemeval_unseen as unseen
from dcpm_cli.bench.longmemeval import load, parse_question


def session(words: str, answer: bool = False) -> list[dict[str, Any]]:
    return [
        {"role": "user", "content": words, "has_answer": answer},
        {"role": "assistant", "content": "ok", "has_answer": False},
    ]


def s_record(n: int) -> dict[str, Any]:
    """A dev/sample question: its own evidence, two filler chats and a simulated session."""
    ids = [f"sharegpt_{n}_a", f"answer_s{n}", f"ultrachat_{n}", f"sim{n}"]
    return {
        "question_id": f"s{n}", "question_type": "multi-session", "question": "q?", "answer": "a",
        "question_date": "2023/05/30 (Tue) 18:40",
        "haystack_dates": [f"2023/05/{d} (Sat) 10:00" for d in (10, 20, 25, 29)],
        "haystack_session_ids": ids,
        "haystack_sessions": [
            session(f"chat {n}"), session(f"evidence {n}", True), session(f"ultra {n}"), session(f"sim {n}"),
        ],
        "answer_session_ids": [f"answer_s{n}"],
    }  # fmt: skip


def oracle_record(qid: str) -> dict[str, Any]:
    return {
        "question_id": qid, "question_type": "temporal-reasoning", "question": f"when {qid}?", "answer": "x",
        "question_date": "2023/03/01 (Wed) 09:00",
        "haystack_dates": ["2023/02/27 (Mon) 08:00"],
        "haystack_session_ids": [f"answer_{qid}"],
        "haystack_sessions": [session(f"gold {qid}", True)],
        "answer_session_ids": [f"answer_{qid}"],
    }  # fmt: skip


def write(path: Path, records: list[dict[str, Any]]) -> None:
    with gzip.open(path, "wt", encoding="utf-8") as f:
        json.dump(records, f)


def build(tmp_path: Path, out: str) -> list[dict[str, Any]]:
    unseen.main(["--eval", str(tmp_path), "--out", str(tmp_path / out)])
    return [r for h in "ab" for r in load(tmp_path / out / f"longmemeval_unseen_{h}.json.gz")]


def test_unseen_questions_get_s_sized_haystacks_of_other_peoples_sessions(tmp_path: Path) -> None:
    s = [s_record(n) for n in range(6)]
    write(tmp_path / unseen.S_FILES[0], s[:4])
    write(tmp_path / unseen.S_FILES[1], s[4:])
    questions = [oracle_record(f"q{n}") for n in range(12)]
    write(tmp_path / unseen.ORACLE, s[:2] + questions)  # the oracle holds the S questions too

    built = build(tmp_path, "one")
    assert sorted(r["question_id"] for r in built) == sorted(q["question_id"] for q in questions)
    halves = [unseen.half(r["question_id"]) for r in built]
    assert set(halves) == {"a", "b"}, "both halves get questions"
    for rec in built:
        ids = rec["haystack_session_ids"]
        own = f"answer_{rec['question_id']}"
        assert own in ids and rec["answer_session_ids"] == [own]
        assert len(ids) == 4, "as many sessions as the S haystack it follows"
        filler = [sid for sid in ids if sid != own]
        assert not any(sid.startswith("answer_") for sid in filler), "filler is nobody's evidence"
        assert len(set(ids)) == len(ids)
        assert rec["haystack_dates"] == sorted(rec["haystack_dates"], key=unseen.when)
        q = parse_question(rec)
        assert q.gold_sessions == [own] and [t.key for t in q.turns if t.has_answer] == [f"{own}_1"]
        assert all(t.said_at < q.asked_at for t in q.turns), "filler is laid back from the question's date"
    assert build(tmp_path, "two") == built, "seeded by the question ids: the same files on every run"


def test_fresh_questions_get_the_same_haystacks_and_may_not_reuse_an_id(tmp_path: Path) -> None:
    """Questions written after the 500 were all read (`--fresh`) are built as the unseen ones
    are, into files of their own; one with a LongMemEval id, or written twice, is refused."""
    s = [s_record(n) for n in range(6)]
    write(tmp_path / unseen.S_FILES[0], s[:4])
    write(tmp_path / unseen.S_FILES[1], s[4:])
    write(tmp_path / unseen.ORACLE, [*s[:2], oracle_record("q0")])
    fresh = [oracle_record(f"f{n}") for n in range(8)]
    write(tmp_path / "fresh.json.gz", fresh)
    out = tmp_path / "out"
    unseen.main(["--eval", str(tmp_path), "--out", str(out), "--fresh", str(tmp_path / "fresh.json.gz")])
    built = [r for h in "ab" for r in load(out / f"longmemeval_fresh_{h}.json.gz")]
    assert sorted(r["question_id"] for r in built) == [f"f{n}" for n in range(8)]
    assert not (out / "longmemeval_unseen_a.json.gz").exists()
    for rec in built:
        ids = rec["haystack_session_ids"]
        assert len(ids) == 4 and f"answer_{rec['question_id']}" in ids
    write(tmp_path / "clash.json.gz", [oracle_record("q0")])
    with pytest.raises(SystemExit) as refused:
        unseen.main(["--eval", str(tmp_path), "--out", str(out), "--fresh", str(tmp_path / "clash.json.gz")])
    assert refused.value.code == 2


def test_a_fresh_turn_sharing_eight_words_with_earlier_data_is_reported(tmp_path: Path, capsys) -> None:
    """A round is to be written anew: a user turn with 8 words in a row of LongMemEval's or an
    earlier round's is named, and the check fails; 7 in a row, or the same words in the assistant's
    turns, pass."""
    from benchmarks import fresh_overlap

    old = oracle_record("q0")
    old["haystack_sessions"] = [
        session("Yesterday I drove to the olive festival in Serpa with my aunt", True)
    ]
    write(tmp_path / unseen.ORACLE, [old])
    earlier = oracle_record("fA01")
    earlier["haystack_sessions"] = [session("My Bugaboo pram came second hand off DoneDeal last week", True)]
    write(tmp_path / "fresh_A.json.gz", [earlier])
    new = [oracle_record("fZ01"), oracle_record("fZ02"), oracle_record("fZ03")]
    new[0]["haystack_sessions"] = [
        session("So yesterday I drove to the olive festival in Serpa again!", True)
    ]
    new[1]["haystack_sessions"] = [session("Drove to the olive festival in Serpa today", True)]  # 7 in a row
    new[2]["haystack_sessions"] = [
        [{"role": "assistant", "content": "My Bugaboo pram came second hand off DoneDeal last week"}]
    ]
    write(tmp_path / "fresh_Z.json.gz", new)
    argv = [
        str(tmp_path / "fresh_Z.json.gz"),
        "--eval",
        str(tmp_path),
        "--earlier",
        str(tmp_path / "fresh_A.json.gz"),
    ]
    with pytest.raises(SystemExit) as stopped:
        fresh_overlap.main(argv)
    assert stopped.value.code == 1
    out = capsys.readouterr().out
    assert out.startswith("fZ01 | ") and "fZ02" not in out and "fZ03" not in out
    assert out.rstrip().endswith("1 user turns share a run of 8 words with earlier data")

    new.pop(0)
    write(tmp_path / "fresh_Z.json.gz", new)
    with pytest.raises(SystemExit) as stopped:
        fresh_overlap.main(argv)
    assert stopped.value.code == 0


def test_the_rounds_are_the_fresh_files_two_by_two_in_the_order_they_were_written():
    """`benchmarks.rounds` numbers rounds as docs/benchmarks.md does: fresh_A and fresh_B the
    first, fresh_Y and fresh_Z the thirteenth, fresh_BG and fresh_BH the thirtieth."""
    from benchmarks import rounds

    pairs = [(a.name, b.name) for a, b in rounds.round_files()]
    assert pairs[0] == ("fresh_A.json.gz", "fresh_B.json.gz")
    assert pairs[12] == ("fresh_Y.json.gz", "fresh_Z.json.gz")
    assert pairs[29] == ("fresh_BG.json.gz", "fresh_BH.json.gz")
    assert rounds.rounds_asked("3-5", len(pairs)) == [3, 4, 5]
    assert rounds.rounds_asked("7", len(pairs)) == [7]
    assert rounds.rounds_asked("", 4) == [1, 2, 3, 4]


class CountingEmbedder:
    """A stand-in model for the cache's test: a text's vector is its length, and every text it
    is asked to embed is counted."""

    model_id, dim = "counting/model", 2

    def __init__(self) -> None:
        self.asked: list[str] = []

    def embed(self, texts: list[str]) -> Any:
        import numpy as np

        self.asked += texts
        return np.array([[len(t), 1.0] for t in texts], dtype=np.float32)


def test_what_one_run_saved_to_the_rounds_cache_no_later_run_overwrites(tmp_path: Path):
    """Runs that save into one cache folder (at once, or after one run's file was cleared away)
    each keep their own vectors: the next run embeds nothing any of them kept."""
    from benchmarks import rounds

    first, second = (rounds.CachedEmbedder(CountingEmbedder(), tmp_path) for _ in range(2))
    first.embed(["a filler chat"])
    first.save()
    second.embed(["the user's evidence"])
    second.save()
    (saved_first,) = [p for p in first.folder.glob("*.pkl") if _holds(p, "a filler chat")]
    saved_first.unlink()  # its vectors cleared away by hand
    third = rounds.CachedEmbedder(CountingEmbedder(), tmp_path)
    third.embed(["another question's evidence"])
    third.save()
    model = CountingEmbedder()
    fourth = rounds.CachedEmbedder(model, tmp_path)
    vectors = fourth.embed(["the user's evidence", "another question's evidence"])
    assert model.asked == []
    assert vectors[:, 0].tolist() == [19.0, 27.0]


def _holds(path: Path, text: str) -> bool:
    import hashlib
    import pickle

    return hashlib.sha1(text.encode()).digest() in pickle.loads(path.read_bytes())
