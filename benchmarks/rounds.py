"""Every fresh round's questions ranked by the code at hand, with the embedder's vectors kept on
disk between runs: a change to the read path measured on all the rounds in about half an hour on
one core, not two and a half hours.

    python -m benchmarks.rounds OUT_DIR [--rounds 1-30] [--sets] [--against DIR] [--cache DIR]

Round n is the (2n-1)th and (2n)th file of `benchmarks/longmemeval_fresh/` in order (fresh_A and
fresh_B are round one, fresh_BG and fresh_BH round thirty). Each round's two haystack files are
built as `benchmarks.longmemeval_unseen --fresh` builds them (seeded by question id: the same
files every time, in OUT_DIR/haystacks/) and ranked as `dcpm bench longmemeval` ranks them
(sessions, MiniLM), the rankings written to OUT_DIR/RNN.jsonl; with --sets, LongMemEval's dev100
and sample35 too (Rdev100, Rsample35). With --against an earlier OUT_DIR, it prints each round's
recall_all@5 count and ndcg_any@10 sum before and after, the totals, and every question that moved.

These rounds have all been read: figures on them are of data the code was tuned on. Only a round's
first run, before anything of it is read, says how the code does on questions it has not seen.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import pickle
import re
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks import longmemeval_unseen
from dcpm_cli.bench import longmemeval as lme
from dcpm_cli.config import Settings
from dcpm_cli.embed import Embedder, get_embedder

FRESH = Path(__file__).with_name("longmemeval_fresh")
SETS = ("dev100", "sample35")


class CachedEmbedder:
    """An embedder that keeps every vector it makes in `folder` (one file a save, keyed by text's hash),
    and reads them all back next time: the rounds share their filler, so after one full run a
    change is measured with almost nothing to embed."""

    def __init__(self, inner: Embedder, folder: Path) -> None:
        self.inner, self.model_id, self.dim = inner, inner.model_id, inner.dim
        self.folder = folder / re.sub(r"\W+", "_", inner.model_id)
        self.folder.mkdir(parents=True, exist_ok=True)
        self.known: dict[bytes, np.ndarray] = {}
        for path in sorted(self.folder.glob("*.pkl")):
            with path.open("rb") as f:
                self.known.update(pickle.load(f))
        self.new: dict[bytes, np.ndarray] = {}

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        keys = [hashlib.sha1(t.encode()).digest() for t in texts]
        todo = {k: t for k, t in zip(keys, texts, strict=True) if k not in self.known}
        if todo:
            for k, v in zip(todo, self.inner.embed(list(todo.values())), strict=True):
                self.known[k] = self.new[k] = v
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.stack([self.known[k] for k in keys])

    def save(self) -> None:
        if self.new:
            # (named by time and process: two runs sharing the folder never write the same file)
            path = self.folder / f"{time.time_ns()}-{os.getpid()}.pkl"
            with path.with_suffix(".tmp").open("wb") as f:
                pickle.dump(self.new, f)
            path.with_suffix(".tmp").rename(path)
            self.new = {}


def round_files() -> list[tuple[Path, Path]]:
    files = sorted(FRESH.glob("fresh_*.json.gz"), key=lambda p: (len(p.name), p.name))
    return list(zip(files[::2], files[1::2], strict=False))


def rounds_asked(spec: str, last: int) -> list[int]:
    first, _, end = spec.partition("-")
    return list(range(int(first), int(end or first) + 1)) if spec else list(range(1, last + 1))


def totals(path: Path) -> dict[str, tuple[bool, float, str]]:
    out = {}
    for line in path.read_text().splitlines():
        r = json.loads(line)
        found = set(r["gold"]) <= set(r["dcpm"][:5])
        out[r["question_id"]] = (found, lme.ndcg_any(r["dcpm"], r["gold"], 10), r["question_type"])
    return out


def compare(before: Path, after: Path, names: list[str]) -> None:
    moved: list[tuple[float, str, str, float, float]] = []
    all_n, all_b, all_a = 0, [0, 0.0], [0, 0.0]
    for name in names:
        if not (before / f"{name}.jsonl").exists():
            continue
        b, a = totals(before / f"{name}.jsonl"), totals(after / f"{name}.jsonl")
        rb, ra = sum(x[0] for x in b.values()), sum(x[0] for x in a.values())
        nb, na = sum(x[1] for x in b.values()), sum(x[1] for x in a.values())
        print(
            f"{name}  {len(a)}  recall_all@5 {rb} -> {ra}  ndcg_any@10 sum {nb:.2f} -> {na:.2f}",
            f"({na - nb:+.2f})",
        )
        all_n, all_b, all_a = all_n + len(a), [all_b[0] + rb, all_b[1] + nb], [all_a[0] + ra, all_a[1] + na]
        for q, (found, ndcg, kind) in a.items():
            if q in b and (abs(ndcg - b[q][1]) > 1e-9 or found != b[q][0]):
                moved.append((ndcg - b[q][1], q, kind, b[q][1], ndcg))
    print(
        f"all  {all_n}  recall_all@5 {all_b[0]} -> {all_a[0]}  "
        f"ndcg_any@10 sum {all_b[1]:.2f} -> {all_a[1]:.2f} ({all_a[1] - all_b[1]:+.2f})"
    )
    up = sum(m[0] > 0 for m in moved)
    print(f"{len(moved)} moved, {up} up, {len(moved) - up} down")
    for _, q, kind, nb, na in sorted(moved):
        print(f"  {q:10} {kind:26} {nb:.3f} -> {na:.3f}")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.rounds", description=__doc__.splitlines()[0])
    ap.add_argument("out", type=Path, help="where the rankings (and the haystacks) are written")
    ap.add_argument("--rounds", default="", help="N or N-M (default: every round)")
    ap.add_argument("--sets", action="store_true", help="LongMemEval's dev100 and sample35 too")
    ap.add_argument("--against", type=Path, help="an earlier OUT_DIR to compare with")
    ap.add_argument("--cache", type=Path, default=Path.home() / ".cache" / "dcpm-rounds")
    ap.add_argument("--eval", type=Path, default=longmemeval_unseen.EVAL)
    args = ap.parse_args(argv)
    pairs = round_files()
    wanted = rounds_asked(args.rounds, len(pairs))
    if any(not 1 <= n <= len(pairs) for n in wanted):
        ap.exit(2, f"error: there are {len(pairs)} rounds\n")
    embedder = CachedEmbedder(get_embedder("minilm"), args.cache)
    names = []
    try:
        for n in wanted:
            name, hay = f"R{n:02d}", args.out / "haystacks" / f"R{n:02d}"
            if not hay.exists():
                longmemeval_unseen.main(
                    ["--fresh", *map(str, pairs[n - 1]), "--eval", str(args.eval), "--out", str(hay)]
                )
            names.append(name)
            lme.run(sorted(hay.glob("*.json.gz")), embedder, Settings(), out=args.out / f"{name}.jsonl")
            embedder.save()
            print(name, *(f"{k} {v}" for k, v in summary(args.out / f"{name}.jsonl").items()), flush=True)
        for s in SETS if args.sets else ():
            names.append(f"R{s}")
            path = args.eval / f"longmemeval_s_{s}.json.gz"
            lme.run([path], embedder, Settings(), out=args.out / f"R{s}.jsonl")
            embedder.save()
            print(f"R{s}", *(f"{k} {v}" for k, v in summary(args.out / f"R{s}.jsonl").items()), flush=True)
    finally:
        embedder.save()
    if args.against:
        compare(args.against, args.out, names)


def summary(path: Path) -> dict[str, Any]:
    t = totals(path)
    return {
        "n": len(t),
        "recall_all@5": sum(x[0] for x in t.values()),
        "ndcg_any@10_sum": round(sum(x[1] for x in t.values()), 2),
    }


if __name__ == "__main__":
    main()
