"""Belief arcs: does System 1 keep a person's changing stances as chains, on a given LLM?

    python -m benchmarks.arcs [--llm ollama:MODEL]
        [--set dev|heldout|heldout2|…|heldout9] [--data FILE] [--store DIR] [--json]
    python -m benchmarks.arcs --set SET --score DIR    # score a kept store again (after a dream)

A set (`arcs_dev.json`, `arcs_heldout.json` … `arcs_heldout9.json`; original text) holds
documents said on different days — plain inputs given `--at`, JSONL chat logs with assistant
turns, Markdown journals — that go through the public write path (`ingest.parse` +
`Writer.add`, what `dcpm add` runs) into a fresh store. Then each arc's probe goes through
`recall` (k=5) and is scored:

- current@1: the best hit about the arc (the first whose text names one of its stances) is
  a current belief and shows the latest stance;
- arc complete: some hit's chain holds every stance, oldest first (other states in between
  are allowed);
- stale-current: older stances still shown as current beliefs among the hits (each counted
  once per arc); the goal is zero;
- distractor kept: a stable fact's probe finds it as a current belief, never superseded and
  not merged with a stance of any arc.

A text names a stance when it contains one of the stance's `match` words; a text that names
several stances of an arc counts as the latest (an older stance cannot mention a newer one).
LLM calls, tokens and seconds are per user input. Figures are printed, never asserted. Ctrl-C
during a slow run stops extraction and scores what was extracted (said as partial).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dcpm_cli.ingest.text import parse_time

if TYPE_CHECKING:
    from dcpm_cli.config import Settings
    from dcpm_cli.embed import Embedder
    from dcpm_cli.llm import LLM
    from dcpm_cli.models import Hit, RawInput

SETS = {
    "dev": "arcs_dev.json",
    "heldout": "arcs_heldout.json",
    "heldout2": "arcs_heldout2.json",
    "heldout3": "arcs_heldout3.json",
    "heldout4": "arcs_heldout4.json",
    "heldout5": "arcs_heldout5.json",
    "heldout6": "arcs_heldout6.json",
    "heldout7": "arcs_heldout7.json",
    "heldout8": "arcs_heldout8.json",
    "heldout9": "arcs_heldout9.json",
}
K = 5


def load(name_or_path: str) -> dict[str, Any]:
    path = Path(__file__).with_name(SETS[name_or_path]) if name_or_path in SETS else Path(name_or_path)
    return json.loads(path.read_text(encoding="utf-8"))


def inputs(data: dict[str, Any]) -> list[RawInput]:
    """The set's documents as raw inputs, parsed as `dcpm add` parses them."""
    from dcpm_cli.ingest import formats as ingest

    raws: list[RawInput] = []
    for n, doc in enumerate(data["documents"]):
        fmt = ingest.Format(doc["format"])
        jsonl = fmt is ingest.Format.jsonl
        text = "\n".join(json.dumps(t) for t in doc["turns"]) if jsonl else doc["text"]
        at = parse_time(doc["at"]) if doc.get("at") else None
        raws += ingest.parse(text, fmt, session=doc.get("session", ""), source=f"arcs#{n}", at=at)
    return raws


def stance_of(text: str, stances: list[dict[str, Any]]) -> int | None:
    """The latest stance `text` names, or None."""
    low = text.casefold()
    named = [i for i, s in enumerate(stances) if any(m.casefold() in low for m in s["match"])]
    return max(named) if named else None


def names(text: str, words: list[str]) -> bool:
    low = text.casefold()
    return any(w.casefold() in low for w in words)


@dataclass
class ArcScore:
    attribute: str
    current_at_1: bool
    complete: bool
    stale_current: int
    shown: str  # the best hit's text, or '' when no hit names a stance
    chain: list[str] = field(default_factory=list)  # that hit's chain, oldest first


@dataclass
class Result:
    set: str
    llm: str
    inputs: int
    arcs: list[ArcScore]
    distractors_kept: list[bool]
    llm_calls: int
    prompt_tokens: int
    completion_tokens: int
    seconds: float
    rejected: list[str] = field(default_factory=list)
    llm_error: str = ""
    extracted: int = 0  # user inputs extracted; fewer than `inputs` after Ctrl-C or a failure

    @property
    def current_at_1(self) -> float:
        return sum(a.current_at_1 for a in self.arcs) / max(len(self.arcs), 1)

    @property
    def completeness(self) -> float:
        return sum(a.complete for a in self.arcs) / max(len(self.arcs), 1)

    @property
    def stale_current(self) -> int:
        return sum(a.stale_current for a in self.arcs)

    def per_input(self, total: float) -> float:
        return total / max(self.inputs, 1)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d.update(
            current_at_1=self.current_at_1,
            completeness=self.completeness,
            stale_current=self.stale_current,
            distractors=f"{sum(self.distractors_kept)}/{len(self.distractors_kept)}",
            calls_per_input=self.per_input(self.llm_calls),
            seconds_per_input=self.per_input(self.seconds),
        )
        return d


def score_arc(arc: dict[str, Any], hits: list[Hit]) -> ArcScore:
    stances = arc["stances"]
    last = len(stances) - 1
    about = [h for h in hits if h.kind != "raw" and stance_of(h.text, stances) is not None]
    best = about[0] if about else None
    current = best is not None and not best.superseded and stance_of(best.text, stances) == last
    complete = any(_in_order([stance_of(i.text, stances) for i in h.chain], last) for h in about)
    stale = {s for h in about if not h.superseded and (s := stance_of(h.text, stances)) != last}
    return ArcScore(
        attribute=arc["attribute"],
        current_at_1=current,
        complete=complete,
        stale_current=len(stale),
        shown=best.text if best else "",
        chain=[i.text for i in best.chain] if best else [],
    )


def _in_order(seen: list[int | None], last: int) -> bool:
    """Every stance 0..last appears, in that order (other states may come between)."""
    want = 0
    for s in seen:
        if s == want:
            want += 1
        if want > last:
            return True
    return False


def distractor_kept(d: dict[str, Any], hits: list[Hit], arcs: list[dict[str, Any]]) -> bool:
    for h in hits:
        if h.kind == "raw" or h.superseded or not names(h.text, d["match"]):
            continue
        merged = any(stance_of(h.text, a["stances"]) is not None for a in arcs)
        if not merged and all(names(i.text, d["match"]) for i in h.chain):
            return True
    return False


def run(
    data: dict[str, Any],
    llm: LLM,
    embedder: Embedder,
    store_dir: str,
    *,
    progress: bool = False,
    settings: Settings | None = None,
) -> Result:
    """Feed the set through the write path into a store at `store_dir`, then score recall.
    `settings`: the writer's (DCPM_* variables, config.toml), defaults if not given."""
    from dcpm_cli.config import Settings
    from dcpm_cli.store import Store
    from dcpm_cli.write.pipeline import Writer

    settings = dataclasses.replace(settings or Settings(), store=store_dir, llm=llm.name)
    store = Store(store_dir, embedder)
    writer = Writer(store, embedder, llm, settings)
    raws = inputs(data)
    users = sum(r.role == "user" for r in raws)

    def tick(done: int, total: int) -> None:
        if progress:
            elapsed = time.perf_counter() - t0
            print(f"  extracted {done}/{total} ({elapsed:.0f} s)", file=sys.stderr, flush=True)

    t0 = time.perf_counter()
    report = writer.add(raws, progress=tick)
    seconds = time.perf_counter() - t0
    scores, kept = _probe(data, store, embedder)
    return Result(
        set=data.get("name", ""),
        llm=llm.name,
        inputs=users,
        arcs=scores,
        distractors_kept=kept,
        llm_calls=report.llm_calls,
        prompt_tokens=report.prompt_tokens,
        completion_tokens=report.completion_tokens,
        seconds=seconds,
        rejected=[r for o in report.outcomes for r in o.rejected],
        llm_error=report.llm_error,
        extracted=report.extracted,
    )


def _probe(data: dict[str, Any], store: Any, embedder: Embedder) -> tuple[list[ArcScore], list[bool]]:
    """Each arc's and each distractor's probe through `recall`, scored."""
    from dcpm_cli.read.recall import recall

    arcs = data["arcs"]
    scores = [score_arc(a, recall(store, embedder, a["probe"], k=K).hits) for a in arcs]
    kept = [
        distractor_kept(d, recall(store, embedder, d["probe"], k=K).hits, arcs) for d in data["distractors"]
    ]
    return scores, kept


def score_store(data: dict[str, Any], embedder: Embedder, store_dir: str) -> Result:
    """Score a store the set was written into before (`--store`), as it is now: after a
    `dcpm dream` on it, say. Nothing is written; no LLM is called."""
    from dcpm_cli.store import Store

    scores, kept = _probe(data, Store(store_dir, embedder), embedder)
    users = sum(r.role == "user" for r in inputs(data))
    return Result(
        set=data.get("name", ""),
        llm="(scored as stored)",
        inputs=users,
        arcs=scores,
        distractors_kept=kept,
        llm_calls=0,
        prompt_tokens=0,
        completion_tokens=0,
        seconds=0.0,
        extracted=users,
    )


def render(r: Result) -> str:
    lines = [f"belief arcs ({r.set}) on {r.llm}: {r.inputs} user inputs, {len(r.arcs)} arcs"]
    if r.extracted < r.inputs:
        lines.append(f"  only {r.extracted} of {r.inputs} inputs extracted (interrupted or failed): partial")
    for a in r.arcs:
        mark = ("current" if a.current_at_1 else "NOT current") + (", complete" if a.complete else "")
        stale = f", {a.stale_current} stale" if a.stale_current else ""
        lines.append(f"  {a.attribute:<20} {mark}{stale}: {a.shown or '(no hit names a stance)'}")
    lines += [
        f"current@1          {r.current_at_1:.2f}",
        f"arc completeness   {r.completeness:.2f}",
        f"stale-current      {r.stale_current}",
        f"distractors kept   {sum(r.distractors_kept)}/{len(r.distractors_kept)}",
        f"LLM calls/input    {r.per_input(r.llm_calls):.2f}",
        f"tokens/input       {r.per_input(r.prompt_tokens):.0f} prompt, "
        f"{r.per_input(r.completion_tokens):.0f} completion",
        f"seconds/input      {r.per_input(r.seconds):.1f}",
        f"rejected ops       {len(r.rejected)}",
    ]
    if r.llm_error:
        lines.append(f"LLM error: {r.llm_error}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--llm", default=None, help="LLM spec (default: DCPM_LLM or the configured one)")
    ap.add_argument("--set", default="dev", choices=sorted(SETS), help="which arc set")
    ap.add_argument("--data", default=None, help="an arc set file instead of --set")
    ap.add_argument("--store", default=None, help="keep the store here (default: a temp dir)")
    ap.add_argument("--llm-timeout", type=float, default=600.0)
    ap.add_argument("--json", action="store_true", help="print the result as JSON")
    ap.add_argument("--score", metavar="STORE", help="only score a store kept by --store (after a dream)")
    args = ap.parse_args(argv)

    from dcpm_cli.config import Settings
    from dcpm_cli.embed import get_embedder
    from dcpm_cli.llm import get_llm

    settings = Settings.resolve()
    embedder = get_embedder(settings.embedder)
    data = load(args.data or args.set)
    if args.score:
        if not Path(args.score).is_dir():
            ap.error(f"no store at {args.score}")
        result = score_store(data, embedder, args.score)
        print(json.dumps(result.to_dict(), indent=1) if args.json else render(result))
        return
    llm = get_llm(args.llm or settings.llm, timeout=args.llm_timeout)
    with tempfile.TemporaryDirectory(prefix="dcpm-arcs-") as tmp:
        result = run(data, llm, embedder, args.store or tmp, progress=True, settings=settings)
    print(json.dumps(result.to_dict(), indent=1) if args.json else render(result))


if __name__ == "__main__":
    main()
