"""Peak memory and time of one long input through `dcpm add`, against a short one (#8).

    python -m benchmarks.long_input [--mb 10] [--code CHECKOUT]

Each run is a fresh `dcpm` process in a store of its own; its peak RSS comes from the kernel
(`wait4`). Two paths: `--no-extract` (persist only: embed, store, passages) and extraction
with the scripted LLM (`--llm scripted:FILE`, one summary item per reply, so no reconcile
call). The baseline is the same command on a 10 KB input in the same run. `--code` runs the
dcpm of another checkout (e.g. an older commit) as the subject, for before/after figures.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from dcpm_cli.chunking import pieces

WORDS = ["I", "we", "my", "garden", "tomato", "ran", "morning", "work", "sister", "coffee", "tea", "quit"]


def diary(size: int, seed: int = 1) -> str:
    rng = random.Random(seed)
    out, n = [], 0
    while n < size:
        para = " ".join(
            " ".join(rng.choice(WORDS) for _ in range(rng.randint(6, 20))).capitalize() + "."
            for _ in range(rng.randint(3, 9))
        )
        out.append(para)
        n += len(para) + 2
    return "\n\n".join(out)[:size]


CODE: str | None = None  # a checkout whose dcpm_cli the measured processes import


def run(args: list[str], home: Path) -> tuple[float, float, int]:
    """(peak RSS in MB, seconds, exit code) of one `dcpm` process."""
    env = {**os.environ, "DCPM_HOME": str(home)}
    if CODE:
        env["PYTHONPATH"] = CODE
    start = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "dcpm_cli", *args],
        env=env,
        cwd=home.parent,  # `-m` puts the working directory first on the path
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - start
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        sys.stderr.write(proc.stderr.read().decode() if proc.stderr else "")
    return usage.ru_maxrss / 1024, seconds, code


def measure(text: str, folder: Path, label: str) -> dict[str, tuple[float, float, int]]:
    path = folder / f"{label}.txt"
    path.write_text(text, encoding="utf-8")
    replies = folder / f"{label}.jsonl"
    reply = {"items": [{"kind": "summary", "text": "A day in the garden.", "topic": "home", "salience": 0.3}]}
    with replies.open("w") as f:
        for _ in range(len(pieces(text)) + 1):
            f.write(json.dumps(reply) + "\n")
    return {
        "persist (--no-extract)": run(["add", "--no-extract", "--file", str(path)], folder / f"{label}-a"),
        "persist + extraction": run(
            ["--llm", f"scripted:{replies}", "add", "--file", str(path)], folder / f"{label}-b"
        ),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=10.0, help="size of the long input (MB)")
    parser.add_argument("--code", help="a checkout whose dcpm to measure (default: this one)")
    args = parser.parse_args()
    global CODE
    CODE = args.code
    size = int(args.mb * 1_000_000)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        base = measure(diary(10_000), folder, "short")
        long = measure(diary(size), folder, "long")
    print(f"one input of {size / 1e6:g} MB ({len(pieces(diary(size)))} extraction pieces) vs 10 KB")
    print(f"{'path':<24} {'10 KB MB':>9} {'long MB':>9} {'ratio':>6} {'10 KB s':>8} {'long s':>8} exit")
    for name, (mb, s, code) in long.items():
        bmb, bs, _ = base[name]
        print(f"{name:<24} {bmb:>9.0f} {mb:>9.0f} {mb / bmb:>6.2f} {bs:>8.1f} {s:>8.1f} {code}")


if __name__ == "__main__":
    main()
