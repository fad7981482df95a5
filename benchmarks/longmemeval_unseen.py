"""LongMemEval questions nobody here has tuned on, in haystacks built as LongMemEval_S builds them.

    python -m benchmarks.longmemeval_unseen [--eval DIR] [--out DIR]
    dcpm bench longmemeval OUT/longmemeval_unseen_a.json.gz     # read first
    dcpm bench longmemeval OUT/longmemeval_unseen_b.json.gz     # kept unread until the end

The shared data hold 500 LongMemEval questions with only their evidence sessions (the
"oracle" file) and 135 of them (dev100, sample35) with a full S haystack of ~48 sessions.
The read path was tuned on dev100 and checked on sample35; this builds a haystack for each of
the other 365 so they can judge it:

- the question, its answer, its date and its evidence sessions (with their dates and
  `has_answer` marks) come from the oracle file, untouched;
- the rest of the haystack is filler drawn from the sessions of the 135 S haystacks, as S
  draws it (ShareGPT and UltraChat chats and simulated sessions of other people's lives);
  a filler session is never an evidence session (no `answer_` id, no `has_answer` turn) and
  never one of the question's own;
- sizes and dates follow one S haystack chosen at random for each question (its session
  count, and its sessions' distances in time from its question, laid back from this
  question's date), so the haystacks are as long and as spread in time as S's;
- the haystack is in date order, as S's are.

Everything is seeded by the question id, so the files are the same on every machine. The
questions are split in two halves by a hash of their id: `a` to look at, `b` to keep unread
until a change is final (the rule that a result must hold on data nobody tuned on).

Every one of the 500 has been read here by now. `--fresh` builds haystacks the same way for
questions written after that, in the oracle's form, by sessions that never read the read path
(`benchmarks/longmemeval_fresh/`, a round of two files at a time): `longmemeval_fresh_a` / `_b`.

    python -m benchmarks.longmemeval_unseen --fresh benchmarks/longmemeval_fresh/fresh_[AB].json.gz --out DIR
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import random
from datetime import timedelta
from pathlib import Path
from typing import Any

from dcpm_cli.bench.longmemeval import load
from dcpm_cli.bench.longmemeval import parse_date as when
from dcpm_cli.errors import InputError

EVAL = Path(__file__).resolve().parents[1].parent / "shared" / "eval" / "longmemeval"
ORACLE = "longmemeval_oracle.json.gz"
S_FILES = ("longmemeval_s_dev100.json.gz", "longmemeval_s_sample35.json.gz")
DATE = "%Y/%m/%d (%a) %H:%M"


def half(question_id: str) -> str:
    return "ab"[hashlib.sha256(question_id.encode()).digest()[0] % 2]


def filler_pool(s_records: list[dict[str, Any]], exclude: set[str]) -> list[tuple[str, list[dict[str, Any]]]]:
    """Every session of the S haystacks that is no question's evidence, once, in a fixed order."""
    pool: dict[str, list[dict[str, Any]]] = {}
    for rec in s_records:
        for sid, session in zip(rec["haystack_session_ids"], rec["haystack_sessions"], strict=True):
            if sid.startswith("answer_") or sid in exclude or any(t.get("has_answer") for t in session):
                continue
            pool.setdefault(sid, session)
    return sorted(pool.items())


def build(rec: dict[str, Any], pool: list, templates: list[dict[str, Any]]) -> dict[str, Any]:
    rng = random.Random(hashlib.sha256(rec["question_id"].encode()).hexdigest())
    template = rng.choice(templates)
    asked = when(rec["question_date"])
    back = [when(template["question_date"]) - when(d) for d in template["haystack_dates"]]
    own = set(rec["haystack_session_ids"])
    n_fill = max(len(back) - len(own), 0)
    fill = rng.sample(pool, n_fill)  # the pool holds none of the question's own sessions
    dates = rng.sample(back, n_fill)
    evidence = zip(rec["haystack_dates"], rec["haystack_session_ids"], rec["haystack_sessions"], strict=True)
    sessions = [(when(d), sid, session) for d, sid, session in evidence]
    minute = timedelta(minutes=1)
    sessions += [(asked - ago - minute, sid, s) for ago, (sid, s) in zip(dates, fill, strict=True)]
    sessions.sort(key=lambda x: x[0])
    return {
        **{k: rec[k] for k in ("question_id", "question_type", "question", "answer", "question_date")},
        "haystack_dates": [d.strftime(DATE) for d, _, _ in sessions],
        "haystack_session_ids": [sid for _, sid, _ in sessions],
        "haystack_sessions": [s for _, _, s in sessions],
        "answer_session_ids": rec["answer_session_ids"],
    }


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(
        prog="python -m benchmarks.longmemeval_unseen", description=__doc__.splitlines()[0]
    )
    ap.add_argument("--eval", type=Path, default=EVAL, help="the folder of the shared LongMemEval files")
    ap.add_argument("--out", type=Path, default=Path("."), help="where to write the two halves")
    ap.add_argument(
        "--fresh", type=Path, nargs="+", help="questions written in the oracle's form, not the oracle's"
    )
    args = ap.parse_args(argv)
    try:
        oracle = load(args.eval / ORACLE)
        s_records = [r for file in S_FILES for r in load(args.eval / file)]
    except InputError as e:
        ap.exit(2, f"error: {e.message} (--eval names the folder of the shared LongMemEval files)\n")
    seen = {r["question_id"] for r in s_records}
    unseen = [r for r in oracle if r["question_id"] not in seen]
    name = "longmemeval_unseen"
    if args.fresh:
        try:
            unseen = [r for file in args.fresh for r in load(file)]
        except InputError as e:
            ap.exit(2, f"error: {e.message}\n")
        clash = {r["question_id"] for r in unseen} & {r["question_id"] for r in oracle}
        if clash or len({r["question_id"] for r in unseen}) != len(unseen):
            ap.exit(2, f"error: question ids repeated or LongMemEval's own: {sorted(clash)[:5]}\n")
        name = "longmemeval_fresh"
    evidence = {sid for r in oracle for sid in r["answer_session_ids"]}
    evidence |= {sid for r in unseen for sid in r["haystack_session_ids"]}
    pool = filler_pool(s_records, evidence)
    halves: dict[str, list[dict[str, Any]]] = {"a": [], "b": []}
    for rec in unseen:
        halves[half(rec["question_id"])].append(build(rec, pool, s_records))
    args.out.mkdir(parents=True, exist_ok=True)
    for h, recs in halves.items():
        path = args.out / f"{name}_{h}.json.gz"
        with gzip.open(path, "wt", encoding="utf-8") as f:
            json.dump(recs, f)
        scored = sum(not r["question_id"].endswith("_abs") for r in recs)
        print(f"{path}: {len(recs)} questions ({scored} scored), filler pool {len(pool)} sessions")


if __name__ == "__main__":
    main()
