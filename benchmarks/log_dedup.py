"""What a log piped again costs the writer's "stored before?" lookup (`Store.said_before`).

    python -m benchmarks.log_dedup [--turns 20000]

Writes a chat log of N turns, three to a minute (timestamps to the minute, as WhatsApp and many
bots write them), stores it in a scratch store (vectors from a stand-in: the lookup reads no
vector), then times `said_before` for the same log piped again under another session, which
matches every turn with a stored one by its words, speaker and moment, in its minute's order.
Printed, never asserted: seconds per lookup (twice: cold, then warm), and how many turns were
found (all of them).
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from datetime import datetime, timedelta
from pathlib import Path

import numpy as np


class _Vectors:
    """An embedder's stand-in: the store needs its id and width, the lookup no vector."""

    model_id = "all-MiniLM-L6-v2"
    dim = 384

    def embed(self, texts: list[str]) -> np.ndarray:
        return np.random.default_rng(0).standard_normal((len(texts), self.dim)).astype("float32")


def main(argv: list[str] | None = None) -> None:
    from dcpm_cli.ingest.formats import parse
    from dcpm_cli.store import Store

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=20_000)
    n = parser.parse_args(argv).turns
    start = datetime(2025, 1, 1)
    log = "\n".join(
        json.dumps(
            {
                "role": "user" if i % 2 == 0 else "assistant",
                "content": f"line {i} about the garden and the shed, number {i * 7}",
                "timestamp": (start + timedelta(minutes=i // 3)).strftime("%Y-%m-%dT%H:%M"),
            }
        )
        for i in range(n)
    )
    with tempfile.TemporaryDirectory() as home:
        store = Store(str(Path(home) / "store"), _Vectors(), state_dir=Path(home))
        stored = parse(log, source="stdin", session="first")
        with store.write():
            store.add_raw(stored, _Vectors().embed([r.text for r in stored]))
        again = parse(log, source="stdin", session="again")
        for run in ("cold", "warm"):
            t = time.perf_counter()
            found = store.said_before(again, store.forgotten_places(again))
            took = time.perf_counter() - t
            print(f"said_before, {n} turns piped again, {run}: {took:.2f} s, {len(found)} found")


if __name__ == "__main__":
    main()
