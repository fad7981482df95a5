"""Chat-export import: peak memory of reading a large ChatGPT export, streamed vs loaded whole.

    python -m benchmarks.imports [--conversations 5000] [--turns 10] [--through-store]

Writes a synthetic ChatGPT `conversations.json` (each conversation a mapping tree of `turns`
messages alternating user / assistant, ~200 characters each, with the metadata real exports
carry, plus one regenerated branch), then, each in a fresh process so that peak resident memory
(ru_maxrss) is measured fairly:

- `baseline`: the interpreter with dcpm's importer and ijson loaded, nothing read;
- `stream`: dcpm's importer over the whole file (`ingest_exports.conversations`), every
  message turned into a RawInput and dropped;
- `json.load`: the same parse from the file loaded whole with the standard library;
- `--through-store`: the real `dcpm add --no-extract --file` into a scratch store (embedding
  every message: slow, ~75 messages/s on two cores), its wall time and peak memory.
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

_WORDS = (
    "run knee physio marathon dinner vegetarian Porto Lisbon cat Miso job design studio garden "
    "tomatoes bees roof sister Ana violin lessons budget rent train bike swim pool morning "
    "evening coffee tea book novel plan week month weekend trip mountains sea friends"
)
WORDS = _WORDS.split()


def message(node: str, parent: str | None, children: list[str], role: str, text: str, t: float) -> dict:
    return {
        "id": node,
        "parent": parent,
        "children": children,
        "message": {
            "id": node,
            "author": {"role": role, "name": None, "metadata": {}},
            "create_time": t,
            "update_time": None,
            "content": {"content_type": "text", "parts": [text]},
            "status": "finished_successfully",
            "end_turn": role == "assistant",
            "weight": 1.0,
            "metadata": {"model_slug": "gpt-4o", "finish_details": {"type": "stop"}, "citations": []},
            "recipient": "all",
        },
    }


def conversation(i: int, turns: int, rng: random.Random) -> dict:
    t0 = 1_760_000_000.0 + i * 3_600
    ids = [f"c{i}-n{j}" for j in range(turns)]
    mapping = {f"c{i}-root": {"id": f"c{i}-root", "message": None, "parent": None, "children": [ids[0]]}}
    for j, node in enumerate(ids):
        children = [ids[j + 1]] if j + 1 < turns else []
        if j == 1:
            children.append(f"c{i}-regen")
        text = " ".join(rng.choice(WORDS) for _ in range(32))
        parent = ids[j - 1] if j else f"c{i}-root"
        mapping[node] = message(node, parent, children, ("user", "assistant")[j % 2], text, t0 + j * 30)
    mapping[f"c{i}-regen"] = message(f"c{i}-regen", ids[0], [], "assistant", "a discarded answer", t0 + 31)
    return {
        "title": f"conversation {i}",
        "create_time": t0,
        "update_time": t0 + turns * 30,
        "conversation_id": f"conv-{i:06d}",
        "id": f"conv-{i:06d}",
        "current_node": ids[-1],
        "mapping": mapping,
        "is_archived": False,
        "default_model_slug": "gpt-4o",
    }


def write_export(path: Path, n: int, turns: int, seed: int = 7) -> None:
    rng = random.Random(seed)
    with path.open("w", encoding="utf-8") as f:
        f.write("[")
        for i in range(n):
            f.write(("," if i else "") + json.dumps(conversation(i, turns, rng)))
        f.write("]")


PROBES = {
    "baseline": "from dcpm_cli.ingest import exports as ingest_exports; import ijson; n = 0",
    "stream": "from dcpm_cli.ingest import exports as ingest_exports\n"
    "n = sum(len(c) for c in ingest_exports.conversations(Path(sys.argv[1]), 'chatgpt'))",
    "json.load": "import json; from dcpm_cli.ingest import exports as ingest_exports\n"
    "data = json.loads(Path(sys.argv[1]).read_text())\n"
    "n = sum(len(ingest_exports.chatgpt_messages(c, source='x')) for c in data)",
}
WRAP = """
import resource, sys, time
from pathlib import Path
t = time.perf_counter()
{body}
print(n, time.perf_counter() - t, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""


def probe(name: str, path: Path) -> tuple[int, float, float]:
    out = subprocess.run(
        [sys.executable, "-c", WRAP.format(body=PROBES[name]), str(path)],
        capture_output=True, text=True, check=True,
    ).stdout.split()  # fmt: skip
    return int(out[0]), float(out[1]), int(out[2]) / 1024


def through_store(path: Path) -> tuple[str, float, float]:
    import os
    import resource

    home = tempfile.mkdtemp(prefix="dcpm-bench-import-")
    t = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "dcpm_cli", "add", "--no-extract", "--file", str(path), "--json"],
        capture_output=True, text=True, env={**os.environ, "DCPM_HOME": home},
    )  # fmt: skip
    wall = time.perf_counter() - t
    if done.returncode:
        raise SystemExit(done.stderr)
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024  # the largest child so far
    return done.stdout.strip(), wall, peak


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--conversations", type=int, default=5000)
    ap.add_argument("--turns", type=int, default=10)
    ap.add_argument("--through-store", action="store_true")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "conversations.json"
        write_export(path, args.conversations, args.turns)
        size = path.stat().st_size / 2**20
        print(f"export: {args.conversations:,} conversations x {args.turns} turns, {size:.1f} MiB")
        base = None
        for name in PROBES:
            n, secs, peak = probe(name, path)
            base = base if base is not None else peak
            print(
                f"{name:>10}: {n:>7,} messages  {secs:6.2f} s  peak {peak:6.0f} MB  (+{peak - base:.0f} MB)"
            )
        if args.through_store:
            report, wall, peak = through_store(path)
            print(f"dcpm add --no-extract --file: {wall:.1f} s, peak {peak:.0f} MB; {report[:120]}")


if __name__ == "__main__":
    main()
