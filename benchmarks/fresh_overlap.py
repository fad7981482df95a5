"""User turns of new fresh questions that share a run of 8 words with LongMemEval's or an earlier
round's: a fresh round must be written anew, not recalled from the data it is to be unlike.

    python -m benchmarks.fresh_overlap NEW.json.gz [--eval DIR] [--earlier FILE ...]

Compares the user turns of NEW (the oracle's form, as `benchmarks/longmemeval_fresh/` holds)
with those of LongMemEval's oracle file and of every earlier round (default: every file in
`benchmarks/longmemeval_fresh/` but NEW), lower-cased, as runs of 8 words. Prints each turn that
shares one, and how many; exits 1 when any does. The helper sessions that write a round run it
until it prints none (`benchmarks/longmemeval_fresh/PROMPT.md`).
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from benchmarks.longmemeval_unseen import EVAL, ORACLE
from dcpm_cli.bench.longmemeval import load

FRESH = Path(__file__).with_name("longmemeval_fresh")
RUN = 8


def runs(text: str, n: int = RUN) -> set[str]:
    words = re.findall(r"[a-z0-9']+", text.lower())
    return {" ".join(words[i : i + n]) for i in range(len(words) - n + 1)}


def user_turns(records: list[dict[str, Any]]) -> Iterator[tuple[str, str]]:
    for rec in records:
        for session in rec["haystack_sessions"]:
            for turn in session:
                if turn["role"] == "user":
                    yield rec["question_id"], turn["content"]


def shared(new: list[dict[str, Any]], earlier: list[dict[str, Any]]) -> list[tuple[str, str, str]]:
    """(question id, a shared run, the turn) for each user turn of `new` sharing a run with `earlier`."""
    seen: set[str] = set()
    for _, text in user_turns(earlier):
        seen |= runs(text)
    return [(qid, min(both), text) for qid, text in user_turns(new) if (both := runs(text) & seen)]


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(
        prog="python -m benchmarks.fresh_overlap", description=__doc__.splitlines()[0]
    )
    ap.add_argument("new", type=Path, help="the new questions, in the oracle's form (.json or .json.gz)")
    ap.add_argument("--eval", type=Path, default=EVAL, help="the folder of the shared LongMemEval files")
    ap.add_argument(
        "--earlier", type=Path, nargs="*", help="earlier rounds (default: benchmarks/longmemeval_fresh/)"
    )
    args = ap.parse_args(argv)
    earlier_files = args.earlier if args.earlier is not None else sorted(FRESH.glob("fresh_*.json.gz"))
    earlier = [r for f in [args.eval / ORACLE, *earlier_files] if f.name != args.new.name for r in load(f)]
    found = shared(load(args.new), earlier)
    for qid, run, text in found:
        print(f"{qid} | {run} | {text[:100]}")
    print(f"{len(found)} user turns share a run of {RUN} words with earlier data")
    sys.exit(1 if found else 0)


if __name__ == "__main__":
    main()
