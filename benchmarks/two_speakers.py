"""Two-person conversations (#20 item 5): does the speaker's name help recall?

    python -m benchmarks.two_speakers [--set two_speakers.json] [--half dev|heldout|all]

The set holds turns of conversations between two named people (`speaker`, `session` = one
day of one conversation, `said_at`, `text`) and questions with gold turn ids, half of them
naming a speaker. The turns go in as a JSONL chat log with a `"speaker"` field, through the
parser users run (`dcpm add`, no extraction), into one store per configuration:

- name in key: the turn is stored as "Maya: …" (the `"speaker"` field), or as its bare words;
- speaker rule: a question naming a speaker lifts that speaker's turns (recall.SPEAKER_BOOST);
- passages: turns grouped by day into sessions, so neighbours lend a turn their score, or each
  turn without a session (no passage: a turn is its own context).

Prints recall@5 (all gold turns in the top 5) and MRR (first gold turn) per configuration,
for questions naming a speaker, the others, and all. Tune on `dev` only; figures are
printed, never asserted.

A set may say whose phone it is (`"me"`: the name the user's turns begin with) and what each
question asks of (`"asks"`: `me`, what the user said; `them`, what another said; `other`); it
is then also run with the `me` setting, and the figures are given per kind asked. `"as_of"`:
the day its questions are asked ("last Friday").
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
from pathlib import Path
from typing import Any

CONFIGS = [  # (label, name in key, speaker rule, passages)
    ("bare turns, passages", False, False, True),
    ("bare turns, no passages", False, False, False),
    ("name in key, passages", True, False, True),
    ("name in key, no passages", True, False, False),
    ("name + speaker rule, passages", True, True, True),
    ("name + speaker rule, no passages", True, True, False),
]
K = 5


def load(path: str) -> dict[str, Any]:
    p = Path(path) if os.sep in path else Path(__file__).with_name(path)
    return json.loads(p.read_text(encoding="utf-8"))


def names_speaker(question: str, turns: list[dict[str, Any]]) -> bool:
    return any(t["speaker"] in question for t in turns)


def run(
    data: dict[str, Any], half: str, name_in_key: bool, rule: bool, passages: bool, me: str = ""
) -> dict[str, list]:
    """Per kind of question (what it `asks`, else whether it names a speaker): (id, all gold in
    the top K, reciprocal rank of the first gold)."""
    from datetime import UTC, datetime

    from dcpm_cli.config import Settings
    from dcpm_cli.embed import get_embedder
    from dcpm_cli.ingest.formats import parse_jsonl
    from dcpm_cli.read import recall as recall_module
    from dcpm_cli.store import Store
    from dcpm_cli.write.pipeline import Writer

    turns = data["turns"]
    lines = []
    for t in turns:
        line = {"role": "user", "content": t["text"], "timestamp": t["said_at"]}
        line["session"] = t["session"] if passages else ""
        if name_in_key:
            line["speaker"] = t["speaker"]
        lines.append(json.dumps(line))
    raws = parse_jsonl("\n".join(lines), session="", source="two_speakers", at=None)
    turn_of = {r.id: t["id"] for r, t in zip(raws, turns, strict=True)}
    embedder = get_embedder("minilm")
    out: dict[str, list] = {kind: [] for kind in _kinds(data)}
    now = datetime.fromisoformat(data["as_of"]).replace(hour=12, tzinfo=UTC) if "as_of" in data else None
    boost = recall_module.SPEAKER_BOOST
    with tempfile.TemporaryDirectory() as home:
        os.environ["DCPM_HOME"] = home
        settings = Settings.resolve()
        store = Store(str(Path(home) / "store"), embedder, state_dir=Path(home))
        Writer(store, embedder, None, settings).add(raws, extract=False)
        recall_module.SPEAKER_BOOST = boost if rule else 0.0
        try:
            for q in data["questions"]:
                if half != "all" and q["half"] != half:
                    continue
                got = recall_module.recall(store, embedder, q["question"], k=20, now=now, me=me)
                ranked = [turn_of.get(h.id, "") for h in got.hits]
                gold = set(q["gold"])
                found = all(g in ranked[:K] for g in gold)
                first = next((n for n, x in enumerate(ranked, 1) if x in gold), None)
                kind = q.get("asks") or ("speaker" if names_speaker(q["question"], turns) else "other")
                out[kind].append((q["id"], found, 1 / first if first else 0.0))
        finally:
            recall_module.SPEAKER_BOOST = boost
    return out


def _kinds(data: dict[str, Any]) -> list[str]:
    return ["me", "them", "other"] if any("asks" in q for q in data["questions"]) else ["speaker", "other"]


def _figures(rows: list) -> str:
    if not rows:
        return "    –           "
    r = sum(f for _, f, _ in rows) / len(rows)
    mrr = sum(x for _, _, x in rows) / len(rows)
    return f"{r:.3f} / {mrr:.3f}"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--set", default="two_speakers.json")
    parser.add_argument("--half", choices=["dev", "heldout", "all"], default="dev")
    parser.add_argument("--misses", action="store_true", help="list the questions each configuration misses")
    args = parser.parse_args(argv)
    data = load(args.set)
    kinds = _kinds(data)
    heads = {"speaker": "names a speaker", "other": "does not", "me": "what I said", "them": "another said"}
    print(f"half={args.half}  recall@{K} / MRR   ({' | '.join(heads[k] for k in kinds)} | all)")
    configs = [(*c, "") for c in CONFIGS]
    if data.get("me"):
        configs += [(f"{label}, me set", *rest[:3], data["me"]) for label, *rest in CONFIGS if rest[1]]
    for label, name_in_key, rule, passages, me in configs:
        got = run(data, args.half, name_in_key, rule, passages, me)
        every = [row for kind in kinds for row in got[kind]]
        columns = " | ".join(_figures(got[kind]) for kind in kinds)
        print(f"{label:42s} {columns} | {_figures(every)}  (n={len(every)})")
        if args.misses:
            print("    missed:", " ".join(q for q, found, _ in every if not found))


if __name__ == "__main__":
    main()
