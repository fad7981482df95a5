"""Pairwise judgements (#18): does the LLM tell a change of the same thing from everything else?

    python -m benchmarks.pairs --llm ollama:MODEL [--set dev|heldout|heldout2|…|heldout5] [--limit N]
        [--prompt thing|four|binary|both_true[_reasoned]] [--no-change-words] [--out FILE.jsonl]
    python -m benchmarks.pairs --rescore FILE.jsonl     # a --no-change-words run, words checked

A set (`pairs_dev.json`, `pairs_heldout*.json`) holds labelled statement pairs, each
{"earlier": {"text", "said_at"}, "later": {...}, "label", "why"}, label one of replaces /
adds_detail / same / unrelated. Each pair is one judgement (`write.judge.judge`); the harness
prints precision and recall per label, the confusion matrix (gold rows, answers columns) and
prompt tokens, completion tokens and seconds per call. With a binary prompt, a gold
adds_detail or same counts as unrelated for precision and recall (the matrix keeps the gold
label). `replaces` precision matters most: a wrong link hides a true belief. Never tune on
`heldout`. Figures are printed, never asserted.

A `replaces` stands only if the LATER statement says a change in words (write/change.py), as
in the writer; `--no-change-words` asks without that check. The check acts before the second
call of `thing`, so `--rescore` of a `--no-change-words` run gives the relations a run with it
would (at temperature 0; its calls, tokens and reasons still count the second call the check
would have saved): both figures from one run of the model.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dcpm_cli.prompts.judge import DEFAULT, PROMPTS, RELATIONS, Statement

if TYPE_CHECKING:
    from dcpm_cli.llm import LLM

SETS = {
    "dev": "pairs_dev.json",
    "heldout": "pairs_heldout.json",
    "heldout2": "pairs_heldout2.json",
    "heldout3": "pairs_heldout3.json",
    "heldout4": "pairs_heldout4.json",
    "heldout5": "pairs_heldout5.json",
}
ERROR = "error"  # a pair whose reply never validated


def load(name_or_path: str) -> list[dict[str, Any]]:
    path = Path(__file__).with_name(SETS[name_or_path]) if name_or_path in SETS else Path(name_or_path)
    return json.loads(path.read_text(encoding="utf-8"))


def _statement(s: dict[str, Any]) -> Statement:
    return Statement(s["text"], datetime.fromisoformat(s["said_at"]).replace(tzinfo=UTC))


@dataclass
class Score:
    labels: tuple[str, ...]  # the relations the prompt can answer
    n: int = 0
    errors: int = 0
    matrix: dict[str, dict[str, int]] = field(default_factory=dict)  # gold → answered → count
    precision: dict[str, float | None] = field(default_factory=dict)
    recall: dict[str, float | None] = field(default_factory=dict)
    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0

    def per_call(self, total: float) -> float:
        return total / self.calls if self.calls else 0.0


def score(results: list[dict[str, Any]], labels: tuple[str, ...] = RELATIONS) -> Score:
    """Precision and recall per label of `labels`; a gold label the prompt cannot answer counts
    as "unrelated" (binary prompts). A pair without a valid reply is a miss for its gold label."""
    s = Score(labels=labels, n=len(results))
    s.matrix = {g: dict.fromkeys((*labels, ERROR), 0) for g in RELATIONS}
    for r in results:
        s.matrix[r["label"]][r["relation"] or ERROR] += 1
        s.errors += r["relation"] is None
        s.calls += r["calls"]
        s.prompt_tokens += r["prompt_tokens"]
        s.completion_tokens += r["completion_tokens"]
        s.seconds += r["seconds"]

    def gold(r: dict[str, Any]) -> str:
        return r["label"] if r["label"] in labels else "unrelated"

    for label in labels:
        answered = sum(r["relation"] == label for r in results)
        right = sum(r["relation"] == label and gold(r) == label for r in results)
        truly = sum(gold(r) == label for r in results)
        s.precision[label] = right / answered if answered else None
        s.recall[label] = right / truly if truly else None
    return s


def run(
    llm: LLM,
    pairs: list[dict[str, Any]],
    *,
    prompt: str = DEFAULT,
    change_words: bool = True,
    out: Any = None,
    echo: Any = None,
) -> list[dict[str, Any]]:
    """Judge every pair; one result row each (also written to `out` as JSONL as it comes).
    Ctrl-C, or a model that stops answering (a timeout), ends the run: the pairs judged so far
    are returned, the caller says the run was partial."""
    from dcpm_cli.errors import LLMUnavailable

    results: list[dict[str, Any]] = []
    try:
        _judge_all(llm, pairs, prompt, change_words, out, echo, results)
    except (KeyboardInterrupt, LLMUnavailable) as e:
        if echo is not None:
            print(f"stopped after {len(results)} pairs: {getattr(e, 'message', 'interrupted')}", file=echo)
    return results


def _judge_all(
    llm: LLM,
    pairs: list[dict[str, Any]],
    prompt: str,
    change_words: bool,
    out: Any,
    echo: Any,
    results: list[dict[str, Any]],
) -> None:
    from dcpm_cli.errors import LLMBadReply
    from dcpm_cli.write.judge import judge

    for i, pair in enumerate(pairs):
        before = (llm.usage.calls, llm.usage.prompt_tokens, llm.usage.completion_tokens)
        t0 = time.perf_counter()
        try:
            v = judge(
                llm,
                _statement(pair["earlier"]),
                _statement(pair["later"]),
                prompt=prompt,
                change_words=change_words,
            )
            relation, reason = v.relation, v.reason
        except LLMBadReply as e:
            relation, reason = None, e.message
        row = {
            "i": i,
            "label": pair["label"],
            "relation": relation,
            "reason": reason,
            "earlier": pair["earlier"]["text"],
            "later": pair["later"]["text"],
            "seconds": round(time.perf_counter() - t0, 3),
            "calls": llm.usage.calls - before[0],
            "prompt_tokens": llm.usage.prompt_tokens - before[1],
            "completion_tokens": llm.usage.completion_tokens - before[2],
        }
        results.append(row)
        if out is not None:
            out.write(json.dumps(row, ensure_ascii=False) + "\n")
            out.flush()
        if echo is not None:
            mark = "ok " if relation == pair["label"] else "   "
            print(
                f"{mark}{i:3d} {pair['label']:>11} → {relation}  ({row['seconds']:.1f} s)",
                file=echo,
                flush=True,
            )


def report(s: Score) -> str:
    def pct(x: float | None) -> str:
        return "  -  " if x is None else f"{x:.2f} "

    lines = [f"pairs {s.n}, no valid reply {s.errors}", "", "label         precision  recall"]
    lines += [f"{lab:<13} {pct(s.precision[lab]):>9}  {pct(s.recall[lab])}" for lab in s.labels]
    cols = (*s.labels, ERROR)
    lines += ["", "gold \\ answer " + " ".join(f"{c:>11}" for c in cols)]
    lines += [f"{g:<13} " + " ".join(f"{s.matrix[g][c]:>11}" for c in cols) for g in RELATIONS]
    lines += [
        "",
        f"per call: {s.per_call(s.prompt_tokens):.0f} prompt tokens, "
        f"{s.per_call(s.completion_tokens):.0f} completion tokens, {s.per_call(s.seconds):.1f} s "
        f"({s.calls} calls, {s.seconds:.0f} s in all)",
    ]
    return "\n".join(lines)


def rescore(results: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Rows of a `--no-change-words` run as a run with the check would have given them: a
    `replaces` whose LATER statement says no change is `unrelated`."""
    from dcpm_cli.write.judge import Verdict, said_change

    out = []
    for r in results:
        v = said_change(Verdict(r["relation"], r["reason"], ""), r["later"], earlier=r.get("earlier", ""))
        out.append(r | {"relation": v.relation, "reason": v.reason})
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.pairs", description=__doc__.split("\n")[0])
    ap.add_argument("--llm", help="ollama:MODEL or scripted:FILE")
    ap.add_argument("--rescore", metavar="FILE.jsonl", help="score a --no-change-words run with the check")
    ap.add_argument("--set", default="dev", help="dev | heldout | heldout2 | … | heldout5 | a path")
    ap.add_argument("--prompt", default=DEFAULT, choices=sorted(PROMPTS))
    ap.add_argument("--limit", type=int, default=None, help="only the first N pairs")
    ap.add_argument("--out", default=None, help="per-pair results as JSONL")
    ap.add_argument("--timeout", type=float, default=600.0)
    ap.add_argument("--no-change-words", action="store_true", help="a replaces needs no word of change")
    args = ap.parse_args(argv)
    if args.rescore:
        try:
            rows = [json.loads(line) for line in Path(args.rescore).read_text(encoding="utf-8").splitlines()]
        except (OSError, ValueError) as e:
            ap.error(f"cannot read {args.rescore}: {e}")
        print(f"{args.rescore}, the words of change checked")
        print(report(score(rescore(rows), PROMPTS[args.prompt].labels)))
        return 0
    if not args.llm:
        ap.error("--llm is required (or --rescore FILE.jsonl)")

    from dcpm_cli.llm import get_llm

    llm = get_llm(args.llm, timeout=args.timeout)
    pairs = load(args.set)[: args.limit]
    out = open(args.out, "w", encoding="utf-8") if args.out else None  # noqa: SIM115
    try:
        results = run(
            llm, pairs, prompt=args.prompt, change_words=not args.no_change_words, out=out, echo=sys.stderr
        )
    finally:
        if out is not None:
            out.close()
    labels = PROMPTS[args.prompt].labels
    partial = f", PARTIAL: {len(results)} of {len(pairs)} pairs" if len(results) < len(pairs) else ""
    words = ", no words of change needed" if args.no_change_words else ""
    print(f"{args.llm}, set {args.set}, prompt {args.prompt}{words}{partial}")
    print(report(score(results, labels)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
