"""A made-up person's journal and chat, and the questions they ask their memory (#20).

    python -m benchmarks.people [--set dev|heldout|all|DIR ...] [--misses] [--embedder minilm]
                                [--kind change ...] [--out RANKINGS.jsonl] [--against EARLIER.jsonl]

Each set is a folder under `benchmarks/people/`: `journal.md` (dated entries), `chat.jsonl` (a
person talking with an assistant) and `questions.json`, written by a helper session that never
read the read path's code. A question names its answers as short verbatim substrings, one per
entry or turn that answers it; for a change of mind (`kind` "change") the current state is
named first. A set's `timezone` is the person's, as they would set it (their days and
hemisphere). Folders named `dev_*` are tuned on; `heldout_*` are kept unread and run at the end
of a change (the rule that a result must hold on data nobody tuned on); `unseen_*` are written
ahead for the next round and left out of `heldout` and `all` (name them to run them).

Everything is stored raw (`--no-extract`: no LLM, the state of a store between `dcpm add` and
extraction, and of every store whose user never runs one), through the parsers `dcpm add` runs,
and each question is asked as `dcpm recall` asks it, at the set's date. Beside dcpm, in the same
process over the same inputs: BM25, dense (the embedder's cosine) and their reciprocal-rank
fusion, the plain hybrid every gain is measured against.

Prints, per kind and overall: recall_all@5 (every answer in the top 5), hit@5 (one), MRR (the
first answer) and ndcg@10; for `change`, how often the current state ranks above the old ones.
Figures are printed, never asserted. `--kind` asks only questions of those kinds (a change to
how the current state is ordered measured on every change question of every set in minutes);
`--out` writes every question's rankings, and `--against` an earlier such file prints, per kind,
the ndcg@10 sum and the current state first before and after, and the changes whose top hit moved.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta, tzinfo
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dcpm_cli.bench.longmemeval import (
    BM25,
    MemoEmbedder,
    _argsort_desc,
    ndcg_any,
    recall_all,
    recall_any,
    rrf,
)

if TYPE_CHECKING:
    from dcpm_cli.models import RawInput

HERE = Path(__file__).with_name("people")
KINDS = ("fact", "when", "change", "several", "assistant", "broad")
SYSTEMS = ("dcpm", "rrf", "dense", "bm25")
K = 5


@dataclass
class Asked:
    folder: str
    id: str
    kind: str
    question: str
    gold: list[str]  # input indices, the current state first for a change
    ranked: dict[str, list[str]] = field(default_factory=dict)


def sets(names: list[str]) -> list[Path]:
    if names in (["dev"], ["heldout"]):
        return sorted(p for p in HERE.glob(f"{names[0]}_*") if p.is_dir())
    if names == ["all"]:
        return sorted(p for p in HERE.iterdir() if p.is_dir() and not p.name.startswith("unseen_"))
    return [Path(n) if os.sep in n else HERE / n for n in names]


def _day_end(value: str, zone: tzinfo = UTC) -> datetime:
    return datetime.fromisoformat(value).replace(tzinfo=zone) + timedelta(hours=23, minutes=59)


def inputs(folder: Path) -> list[RawInput]:
    """The set's journal and chat as `dcpm add --file` reads them."""
    from dcpm_cli.ingest.formats import parse

    raws = []
    for name in ("journal.md", "chat.jsonl"):
        path = folder / name
        if path.exists():
            raws += parse(path.read_text(encoding="utf-8"), source=str(path))
    return raws


def questions(folder: Path) -> dict[str, Any]:
    spec = json.loads((folder / "questions.json").read_text(encoding="utf-8"))
    for q in spec["questions"]:
        if q["kind"] not in KINDS:
            raise SystemExit(f"{folder.name} {q['id']}: unknown kind {q['kind']!r}")
    return spec


def gold_of(texts: list[str], question: dict[str, Any], where: str = "") -> list[str]:
    """The inputs a question's gold substrings name, one each (else the set is refused)."""
    out = []
    for g in question["gold"]:
        holding = [i for i, t in enumerate(texts) if g in t]
        if len(holding) != 1:
            raise SystemExit(f"{where} {question['id']}: {g!r} is in {len(holding)} inputs, not one")
        out.append(str(holding[0]))
    return out


def run_set(folder: Path, embedder_name: str, kinds: Sequence[str] = ()) -> list[Asked]:
    from dcpm_cli.config import Settings
    from dcpm_cli.embed import get_embedder
    from dcpm_cli.read.recall import recall
    from dcpm_cli.store import Store
    from dcpm_cli.write.pipeline import Writer

    raws = inputs(folder)
    texts = [r.text for r in raws]
    index = {r.id: str(i) for i, r in enumerate(raws)}
    spec = questions(folder)
    embedder = MemoEmbedder(get_embedder(embedder_name))  # each text embedded once, for all systems
    vectors = embedder.embed(texts)
    bm25 = BM25(texts)
    out = []
    with tempfile.TemporaryDirectory() as home:
        os.environ["DCPM_HOME"] = home
        # The person's `timezone` (their days and hemisphere), as they would set it; else UTC.
        os.environ["DCPM_TIMEZONE"] = spec.get("timezone", "UTC")
        settings = Settings.resolve()
        store = Store(str(Path(home) / "store"), embedder, state_dir=Path(home))
        Writer(store, embedder, None, settings).add(raws, extract=False)
        for q in spec["questions"]:
            if kinds and q["kind"] not in kinds:
                continue
            gold = gold_of(texts, q, folder.name)
            asked = Asked(folder.name, q["id"], q["kind"], q["question"], gold)
            now = _day_end(q.get("as_of", spec["as_of"]), settings.zone)
            got = recall(store, embedder, q["question"], k=len(raws), now=now, zone=settings.zone)
            asked.ranked["dcpm"] = [index[h.id] for h in got.hits if h.id in index]
            asked.ranked["bm25"] = [str(i) for i in _argsort_desc(bm25.scores(q["question"]))]
            sims = (vectors @ embedder.embed([q["question"]])[0]).tolist()
            asked.ranked["dense"] = [str(i) for i in _argsort_desc(sims)]
            asked.ranked["rrf"] = rrf([asked.ranked["bm25"], asked.ranked["dense"]])
            out.append(asked)
    return out


def _mrr(ranked: list[str], gold: list[str]) -> float:
    first = next((n for n, x in enumerate(ranked, 1) if x in gold), None)
    return 1 / first if first else 0.0


def _current_first(ranked: list[str], gold: list[str]) -> float:
    pos = {x: n for n, x in enumerate(ranked)}
    end = len(ranked)
    return float(all(pos.get(gold[0], end) < pos.get(g, end) for g in gold[1:]))


def figures(rows: list[Asked], system: str) -> str:
    if not rows:
        return ""
    n = len(rows)
    r_all = sum(recall_all(a.ranked[system], a.gold, K) for a in rows) / n
    hit = sum(recall_any(a.ranked[system], a.gold, K) for a in rows) / n
    mrr = sum(_mrr(a.ranked[system], a.gold) for a in rows) / n
    ndcg = sum(ndcg_any(a.ranked[system], a.gold, 10) for a in rows) / n
    line = f"{r_all:.3f}  {hit:.3f}  {mrr:.3f}  {ndcg:.3f}"
    changes = [a for a in rows if a.kind == "change" and len(a.gold) > 1]
    if changes:
        first = sum(_current_first(a.ranked[system], a.gold) for a in changes) / len(changes)
        line += f"  current first {first:.3f} ({len(changes)})"
    return line


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--set", nargs="+", default=["dev"], help="dev, heldout, all, or folders")
    parser.add_argument("--embedder", default="minilm")
    parser.add_argument("--misses", action="store_true", help="list dcpm's misses with their gold ranks")
    parser.add_argument("--kind", nargs="+", choices=KINDS, default=[], help="ask only these kinds")
    parser.add_argument("--out", type=Path, help="write every question's rankings here (JSONL)")
    parser.add_argument("--against", type=Path, help="an earlier --out file to compare dcpm with")
    args = parser.parse_args(argv)
    folders = sets(args.set)
    if not folders:
        raise SystemExit(f"no set matches {' '.join(args.set)} under {HERE}")
    rows = [a for folder in folders for a in run_set(folder, args.embedder, args.kind)]
    if args.out:
        with args.out.open("w", encoding="utf-8") as f:
            for a in rows:
                f.write(json.dumps(dataclasses.asdict(a)) + "\n")
    print(f"{len(rows)} questions from {', '.join(f.name for f in folders)}; embedder {args.embedder}")
    print(f"{'':22s}r_all@{K} hit@{K}  MRR    ndcg@10")
    for kind in (*KINDS, "all"):
        these = rows if kind == "all" else [a for a in rows if a.kind == kind]
        if not these:
            continue
        print(f"{kind} ({len(these)})")
        for system in SYSTEMS:
            print(f"  {system:20s}{figures(these, system)}")
    if args.misses:
        for a in rows:
            ranked = a.ranked["dcpm"]
            stale = a.kind == "change" and not _current_first(ranked, a.gold)
            if recall_all(ranked, a.gold, K) < 1 or stale:
                ranks = [ranked.index(g) + 1 if g in ranked else None for g in a.gold]
                print(f"{a.folder} {a.id} [{a.kind}] {a.question}  gold at {ranks}")
    if args.against:
        compare([Asked(**json.loads(line)) for line in args.against.read_text().splitlines()], rows)


def compare(before: list[Asked], after: list[Asked]) -> None:
    """dcpm's ndcg@10 sum and current state first, per kind, in `before` and `after` (the
    questions both asked), and every change whose top hit moved: to the current state, away
    from it, or between others."""
    earlier = {(a.folder, a.id): a for a in before}
    pairs = [(earlier[a.folder, a.id], a) for a in after if (a.folder, a.id) in earlier]
    print(f"against an earlier run, {len(pairs)} questions asked by both (dcpm)")
    for kind in (*KINDS, "all"):
        these = [(b, a) for b, a in pairs if kind in ("all", a.kind)]
        if not these:
            continue
        line = f"  {kind:10s} ndcg@10 sum " + " -> ".join(
            f"{sum(ndcg_any(x.ranked['dcpm'], x.gold, 10) for x in side):.2f}"
            for side in zip(*these, strict=True)
        )
        changes = [(b, a) for b, a in these if a.kind == "change" and len(a.gold) > 1]
        if changes:
            line += (
                "  current first "
                + " -> ".join(
                    f"{sum(_current_first(x.ranked['dcpm'], x.gold) for x in side):.0f}"
                    for side in zip(*changes, strict=True)
                )
                + f" of {len(changes)}"
            )
        print(line)
    for b, a in pairs:
        old, new = b.ranked["dcpm"][:1], a.ranked["dcpm"][:1]
        if a.kind == "change" and len(a.gold) > 1 and old != new:
            way = "to the current state" if new == a.gold[:1] else "from it" if old == a.gold[:1] else "moved"
            print(f"  {a.folder} {a.id} top hit {way}: {a.question}")


if __name__ == "__main__":
    main()
