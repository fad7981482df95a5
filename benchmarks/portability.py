"""Your memory, your control, at scale: export, import, reembed, forget and backup of a store
of N items, each against a baseline measured in the same run.

    python -m benchmarks.portability [--items 10000] [--embedder minilm]

The store: N memory items (every fifth in a revision chain) and N/2 raw inputs in sessions,
with passages, event log rows for every item, and a few graph nodes; texts are distinct
synthetic sentences embedded once by the real embedder (that embedding is baseline 1: the
embedder's throughput on exactly the texts a re-embedding must process). Baseline 2 is a plain
copy of the store directory (what `cp -r` of the LanceDB folders costs).

- export (JSONL, without and with vectors) and its peak memory, in a fresh `dcpm` process;
- import into an empty store: with vectors (against the copy) and without (re-embedding,
  against the embedder's throughput);
- reembed to a second embedder (the same model under another id: the same embedding work);
- forget one raw input and its items, purge included; backup (against the copy).

Figures are printed, never asserted.
"""

from __future__ import annotations

import argparse
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.system1 import distinct_sentences
from dcpm_cli.embed import Embedder, get_embedder
from dcpm_cli.models import DONE, Edge, Event, MemoryItem, Node, RawInput
from dcpm_cli.store import Store


class Renamed:
    """The same model under another id: a reembed that costs exactly one embedding pass."""

    def __init__(self, inner: Embedder) -> None:
        self.inner, self.model_id, self.dim = inner, inner.model_id + "@bench", inner.dim

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        return self.inner.embed(texts)


def build(
    path: Path, embedder: Embedder, n_items: int, seed: int, *, embed: bool = True
) -> tuple[Store, float, int]:
    """The store, the seconds the embedder took for its texts, and how many texts (without
    `embed`, random unit vectors stand in: for the steps that never embed)."""
    rng = random.Random(seed)
    n_raw = n_items // 2
    texts = [s for _, s in distinct_sentences(rng, n_raw + n_items)]
    t0 = time.perf_counter()
    if embed:
        vectors = embedder.embed(texts)
    else:
        vectors = np.random.default_rng(seed).standard_normal((len(texts), embedder.dim)).astype(np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    embed_s = time.perf_counter() - t0
    store = Store(str(path), embedder)
    start = datetime(2025, 1, 1, tzinfo=UTC)
    raws = [
        RawInput(text=t, session=f"s{i // 40}", said_at=start + timedelta(minutes=i), status=DONE)
        for i, t in enumerate(texts[:n_raw])
    ]
    items = []
    for i, t in enumerate(texts[n_raw:]):
        when = start + timedelta(minutes=2 * i)
        items.append(
            MemoryItem(f"m_{i:08d}", "fact", t, topic="life", event_at=when, raw_ids=[raws[i // 2].id])
        )
    for i in range(1, len(items), 5):  # chains: every fifth item supersedes the one before it
        items[i - 1].superseded_by, items[i].supersedes = items[i].id, items[i - 1].id
    nodes = [Node(f"n_{i:04d}", "schema", texts[i], "life") for i in range(20)]
    raw_vectors, item_vectors = vectors[:n_raw], vectors[n_raw:]
    with store.write():
        for i in range(0, n_raw, 5000):
            store.add_raw(raws[i : i + 5000], raw_vectors[i : i + 5000])
        for i in range(0, n_items, 5000):
            store.add_items(items[i : i + 5000], item_vectors[i : i + 5000])
            store.log_events([Event("ADD", x.id, x.raw_ids[0], "", "", x.text) for x in items[i : i + 5000]])
        store.add_nodes(nodes, vectors[:20])
        store.add_edges([Edge("evidence", n.id, items[j].id) for j, n in enumerate(nodes)])
    store.maintain()
    return store, embed_s, len(texts)


_PEAK_PROBE = """
import sys
from dcpm_cli.cli import app
try:
    app(args=sys.argv[1:], standalone_mode=False)
finally:
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM"):
            sys.stderr.write("\\nHWM " + line.split()[1] + "\\n")
"""


def peak_mb(*args: str) -> float:
    """Peak resident MB (VmHWM: reset by exec, unlike ru_maxrss) of `dcpm ARGS` in a fresh process."""
    done = subprocess.run([sys.executable, "-c", _PEAK_PROBE, *args], capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"dcpm {' '.join(args)} failed:\n{done.stderr}")
    return [int(line.split()[1]) for line in done.stderr.splitlines() if line.startswith("HWM ")][-1] / 1024


def write_export(store: Store, path: Path, *, with_vectors: bool) -> None:
    from dcpm_cli.ops.portability import export_lines

    with path.open("w", encoding="utf-8") as f:
        for line in export_lines(store, with_vectors=with_vectors):
            f.write(line + "\n")


def timed(fn: Any, *args: Any, **kwargs: Any) -> tuple[Any, float]:
    t0 = time.perf_counter()
    out = fn(*args, **kwargs)
    return out, time.perf_counter() - t0


def reembedding(embedder: Embedder, plain: Path, root: Path, rows: dict[str, int], rate: float) -> None:
    """Import without vectors (re-embedding) and reembed, against the embedder's throughput."""
    from dcpm_cli.ops.portability import import_lines
    from dcpm_cli.ops.reembed import reembed

    fresh = Store(str(root / "imported"), embedder)
    with plain.open(encoding="utf-8") as f:
        report, imp = timed(import_lines, fresh, embedder, f)
    to_embed = rows["raw"] + rows["item"] + rows["node"]
    print(
        f"import re-embedding {to_embed:,} texts: {imp:.1f} s = {to_embed / imp:.0f} texts/s, "
        f"{(to_embed / rate) / imp:.2f}× the embedder's throughput, {report.passages} passages rebuilt"
    )

    report, re_s = timed(reembed, Store(str(root / "imported"), embedder), Renamed(embedder))
    print(
        f"reembed: {re_s:.1f} s for {report.records:,} records = {(to_embed / rate) / re_s:.2f}× the "
        f"embedder's throughput (calibration included)"
    )


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--items", type=int, default=10000)
    p.add_argument("--embedder", default="minilm")
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--no-embedding", action="store_true", help="random vectors; skip the steps that embed")
    args = p.parse_args(argv)

    from dcpm_cli.ops.backup import backup
    from dcpm_cli.ops.forget import apply_forget, plan_forget
    from dcpm_cli.ops.portability import import_lines

    embedder = get_embedder(args.embedder)
    root = Path(tempfile.mkdtemp(prefix="dcpm-bench-portability-"))
    try:
        print(f"building a store of {args.items:,} items …", file=sys.stderr, flush=True)
        embed = not args.no_embedding
        store, embed_s, n_texts = build(root / "store", embedder, args.items, args.seed, embed=embed)
        rate = n_texts / embed_s
        _, copy_s = timed(shutil.copytree, root / "store", root / "copy")
        size_mb = sum(f.stat().st_size for f in (root / "copy").rglob("*") if f.is_file()) / 1e6
        rows = {k: store.record_count(k) for k in ("raw", "item", "event", "node", "edge")}
        print(f"store: {rows}, {size_mb:.1f} MB on disk", flush=True)
        if embed:
            print(f"baseline 1, embedder: {n_texts:,} texts in {embed_s:.1f} s = {rate:.0f} texts/s")
        print(f"baseline 2, copy of the store directory: {copy_s:.2f} s")

        plain, full = root / "plain.jsonl", root / "full.jsonl"
        _, s_plain = timed(write_export, store, plain, with_vectors=False)
        _, s_full = timed(write_export, store, full, with_vectors=True)
        print(
            f"export: {s_plain:.2f} s ({plain.stat().st_size / 1e6:.1f} MB), with vectors {s_full:.2f} s "
            f"({full.stat().st_size / 1e6:.1f} MB): {s_plain / copy_s:.1f}× / {s_full / copy_s:.1f}× the copy"
        )
        at = ("--store", str(root / "store"))
        idle = peak_mb(*at, "stats", "--json")
        mem_plain = peak_mb(*at, "export", "--out", str(root / "p2.jsonl"))
        mem_full = peak_mb(*at, "export", "--with-vectors", "--out", str(root / "f2.jsonl"))
        print(
            f"export peak memory, fresh process: {mem_plain:.0f} MB, {mem_full:.0f} MB with vectors, "
            f"against {idle:.0f} MB for `dcpm stats` on the same store"
        )

        fresh = Store(str(root / "imported-vectors"), embedder)
        with full.open(encoding="utf-8") as f:
            _, imp_v = timed(import_lines, fresh, embedder, f)
        print(f"import with vectors: {imp_v:.2f} s = {imp_v / copy_s:.1f}× the copy")
        if not args.no_embedding:
            reembedding(embedder, plain, root, rows, rate)

        victim = store.get_raw([store.all_items("id = 'm_00000004'")[0].raw_ids[0]])
        plan = plan_forget(store, list(victim))
        _, forget_s = timed(apply_forget, store, plan, embedder)
        print(
            f"forget 1 raw input ({len(plan.item_ids)} items, {len(plan.relinks)} relinks), purge included: "
            f"{forget_s:.2f} s = {forget_s / copy_s:.1f}× the copy"
        )
        snap, backup_s = timed(backup, store, root / "backups")
        print(f"backup: {backup_s:.2f} s ({snap.bytes / 1e6:.1f} MB) = {backup_s / copy_s:.2f}× the copy")
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(f"peak memory of this process: {peak:.0f} MB")
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
