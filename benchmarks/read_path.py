"""Read-path performance: `recall()` and dcpm's vector search against exact numpy top-k.

    python -m benchmarks.read_path [--sizes 10000 100000] [--queries 200]

1. Stores of N memory items (a fifth of them superseded, in chains) plus N/5 raw inputs (a
   tenth still pending), inserted in bulk through `Store.add_items` / `Store.add_raw`, then
   `Store.maintain()` as `dcpm add` / `dcpm dream` would run it. Text is synthetic but varied:
   a pool of a few thousand sentences is embedded with the real embedder and stored rows
   reuse those vectors with a little noise (renormalised).
2. Warm and in-process, over ~200 queries (fresh sentences, not in the store): the whole
   `recall()` (embedding, vector + BM25 over items and raw, fusion, chains, graph nodes), and
   the vector-search part alone (`Store.vector_search("items", ...)` with recall's depth),
   against exact numpy top-k over the same vectors, measured in the same run. recall@10 of
   dcpm's vector search against the exact answer, plain and with recall's filters. Beside it,
   on the same store, query by query: `recall()` searching once (no feedback search, the read
   path before it) and with LanceDB's scan for every search.
3. After a run of single-item appends (the writer's pattern): the first search after each
   write (cache refresh / un-indexed tail), then warm searches again.
4. Cold start: `dcpm --store X recall "..."` in a fresh process at 10k items against
   `python -c "import lancedb"`, interleaved, medians (the disk cache is warm for both).

Figures are printed, never asserted.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import random
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.system1 import SLOTS, TimedEmbedder, distinct_sentences, sentence
from dcpm_cli.blas import one_blas_thread
from dcpm_cli.embed import Embedder, get_embedder
from dcpm_cli.models import DONE, ITEM_KINDS, PENDING, MemoryItem, RawInput, short_hash
from dcpm_cli.read import recall as recall_module
from dcpm_cli.read.recall import RAW_SEARCHED, recall
from dcpm_cli.store import Store
from dcpm_cli.store.vectors import TableCopy

DEPTH = 40  # recall()'s vector-search depth at k=10: max(4k, 20)
PATHS = ("dcpm", "one search", "LanceDB scan")
RAW_FILTER = RAW_SEARCHED  # recall()'s raw filter


class TimedStore(Store):
    """The real Store; its two search verbs also add up their wall time."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.seconds = {"vector": 0.0, "text": 0.0}
        super().__init__(*args, **kwargs)

    def vector_search(self, *args: Any, **kwargs: Any) -> Any:
        t0 = time.perf_counter()
        try:
            return super().vector_search(*args, **kwargs)
        finally:
            self.seconds["vector"] += time.perf_counter() - t0

    def text_search(self, *args: Any, **kwargs: Any) -> Any:
        t0 = time.perf_counter()
        try:
            return super().text_search(*args, **kwargs)
        finally:
            self.seconds["text"] += time.perf_counter() - t0


# -- data ---------------------------------------------------------------------------------


@dataclass
class Corpus:
    """What was stored, in memory, for the exact answer."""

    item_ids: list[str]
    item_vectors: np.ndarray
    item_kind: np.ndarray
    item_current: np.ndarray
    raw_ids: list[str]
    raw_vectors: np.ndarray
    raw_searchable: np.ndarray  # pending/failed and role user: what recall() searches


def noisy(rng: np.random.Generator, base: np.ndarray, sigma: float = 0.35) -> np.ndarray:
    v = base + rng.normal(0.0, sigma / np.sqrt(base.shape[-1]), size=base.shape).astype(np.float32)
    return (v / np.linalg.norm(v, axis=-1, keepdims=True)).astype(np.float32)


def make_items(
    n: int, pool_slots: list[int], pool_vectors: np.ndarray, seed: int, tag: str = "seed"
) -> tuple[list[MemoryItem], np.ndarray]:
    rng, nrng = random.Random(seed), np.random.default_rng(seed)
    by_slot: dict[int, list[int]] = {}
    for i, s in enumerate(pool_slots):
        by_slot.setdefault(s, []).append(i)
    start = datetime(2024, 1, 1, tzinfo=UTC)
    heads: dict[int, MemoryItem] = {}
    items, rows = [], []
    for j in range(n):
        slot = rng.randrange(len(SLOTS))
        topic, attribute, kind, subject, _ = SLOTS[slot]
        when = start + timedelta(minutes=10 * j)
        item = MemoryItem(
            id="m_" + short_hash(tag, str(seed), str(j)), kind=kind, text=sentence(rng, slot), topic=topic,
            subject=subject, attribute=attribute, salience=0.5, event_at=when, created_at=when,
            updated_at=when, raw_ids=[],
        )  # fmt: skip
        head = heads.get(slot)
        if head is not None and head.superseded_by is None and rng.random() < 0.2:
            head.superseded_by, item.supersedes = item.id, head.id
        heads[slot] = item
        items.append(item)
        rows.append(rng.choice(by_slot.get(slot) or range(len(pool_slots))))
    return items, noisy(nrng, pool_vectors[rows])


def build_store(
    path: Path, embedder: Embedder, n: int, pool: tuple[list[int], list[str], np.ndarray], seed: int
) -> Corpus:
    slots, texts, vectors = pool
    store = Store(str(path), embedder)
    items, item_vectors = make_items(n, slots, vectors, seed)
    for a in range(0, n, 5000):
        store.add_items(items[a : a + 5000], item_vectors[a : a + 5000])
    rng, nrng = random.Random(seed + 1), np.random.default_rng(seed + 1)
    raws, rows = [], []
    for j in range(max(1, n // 5)):
        user = rng.random() < 0.6
        status = (PENDING if rng.random() < 0.1 else DONE) if user else "context"
        r = rng.randrange(len(texts))
        raws.append(
            RawInput(text=texts[r], role="user" if user else "assistant", session=f"s{j // 40}",
                     said_at=datetime(2024, 1, 1, tzinfo=UTC) + timedelta(minutes=j), status=status,
                     position=f"bench#{j}")
        )  # fmt: skip
        rows.append(r)
    raw_vectors = noisy(nrng, vectors[rows])
    for a in range(0, len(raws), 5000):
        store.add_raw(raws[a : a + 5000], raw_vectors[a : a + 5000])
    return Corpus(
        item_ids=[i.id for i in items],
        item_vectors=item_vectors,
        item_kind=np.array([i.kind for i in items]),
        item_current=np.array([i.superseded_by is None for i in items]),
        raw_ids=[r.id for r in raws],
        raw_vectors=raw_vectors,
        raw_searchable=np.array(
            [r.status in RAW_SEARCHED["statuses"] and r.role in RAW_SEARCHED["roles"] for r in raws]
        ),
    )


def make_queries(n: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    asks = ["", "what about: ", "did I say that I ", "when did I mention: ", "remind me — "]
    out = []
    for _ in range(n):
        s = sentence(rng, rng.randrange(len(SLOTS)))
        a = rng.choice(asks)
        out.append(a + (s[0].lower() + s[1:] if a else s))
    return out


# -- exact reference ----------------------------------------------------------------------


def exact_topk(matrix: np.ndarray, q: np.ndarray, k: int, mask: np.ndarray | None = None) -> np.ndarray:
    """Row indices of the k best cosine scores (rows and q are unit vectors), best first."""
    scores = matrix @ q
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    k = min(k, int(mask.sum()) if mask is not None else len(scores))
    if k <= 0:
        return np.empty(0, dtype=np.int64)
    top = np.argpartition(-scores, k - 1)[:k]
    return top[np.argsort(-scores[top], kind="stable")]


def overlap(got: list[str], want: list[str]) -> float:
    return len(set(got) & set(want)) / len(want) if want else 1.0


# -- measurements -------------------------------------------------------------------------


@dataclass
class PathResult:
    """One way of searching, measured on the same store in the same run."""

    vector_ms: list[float] = field(default_factory=list)
    recall_ms: list[float] = field(default_factory=list)
    parts_ms: dict[str, float] = field(default_factory=dict)
    recall10: dict[str, list[float]] = field(default_factory=dict)


@dataclass
class SizeResult:
    size: int
    build_s: float
    maintain_s: float | None
    numpy_ms: list[float] = field(default_factory=list)  # BLAS threads as numpy starts them
    numpy1_ms: list[float] = field(default_factory=list)  # one BLAS thread, as dcpm's copy uses
    paths: dict[str, PathResult] = field(default_factory=dict)
    first_search_ms: list[float] = field(default_factory=list)
    copy_ms: list[float] = field(default_factory=list)
    after_write_ms: list[float] = field(default_factory=list)
    maintain_ms: list[float] = field(default_factory=list)
    optimizes: int = 0
    tail_vector_ms: list[float] = field(default_factory=list)
    tail_recall10: float = 0.0
    layout: str = ""


@contextlib.contextmanager
def searching_once(once: bool) -> Iterator[None]:
    """`recall()` without its feedback search (read/recall.py FEEDBACK_DEPTH 0) while inside."""
    depth = recall_module.FEEDBACK_DEPTH
    recall_module.FEEDBACK_DEPTH = 0 if once else depth
    try:
        yield
    finally:
        recall_module.FEEDBACK_DEPTH = depth


def timed(fn: Any, *args: Any, **kwargs: Any) -> tuple[Any, float]:
    t0 = time.perf_counter()
    out = fn(*args, **kwargs)
    return out, (time.perf_counter() - t0) * 1000


def maintained(path: Path, embedder: Embedder, args: argparse.Namespace) -> float | None:
    """Run `Store.maintain()` once (as `dcpm dream` would); seconds, or None (--no-maintain)."""
    if args.no_maintain:
        return None
    _, ms = timed(Store(str(path), embedder, create=False).maintain)
    return ms / 1000


def bench_size(
    n: int, args: argparse.Namespace, embedder: Embedder, pool: Any, queries: list[str], qvecs: np.ndarray,
    root: Path,
) -> SizeResult:  # fmt: skip
    path = root / f"store-{n}"
    t0 = time.perf_counter()
    corpus = build_store(path, embedder, n, pool, args.seed)
    res = SizeResult(n, time.perf_counter() - t0, maintained(path, embedder, args))
    all_kinds = list(ITEM_KINDS)

    # What a one-shot process pays: its first search of a table is LanceDB's scan; a copy of
    # the table is made only once a process has searched it a few times.
    for v in qvecs[:3]:
        fresh = Store(str(path), embedder, create=False)
        res.first_search_ms.append(timed(fresh.vector_search, "items", v, DEPTH, kinds=all_kinds)[1])
        copy = TableCopy(fresh.db.open_table("items"))
        res.copy_ms.append(timed(copy.refresh, fresh.table("items").version)[1])

    # Warm, in-process: dcpm's search, and LanceDB's scan for every search (the read path
    # before the in-memory copy) on the same store, query by query in the same run.
    stores = {}
    for name in PATHS:
        emb = TimedEmbedder(embedder)
        stores[name] = (TimedStore(str(path), emb, create=False), emb)
        if name == "LanceDB scan":
            stores[name][0]._vectors.copy_on_search = 10**9  # never copy: scan every time
        res.paths[name] = PathResult()
        for q in queries[:5]:  # warm-up: first-query allocations, FTS index, in-memory copies
            with searching_once(name == "one search"):
                recall(stores[name][0], emb, q)
    filt = np.isin(corpus.item_kind, ["fact", "identity"]) & corpus.item_current
    for i, (q, v) in enumerate(zip(queries, qvecs, strict=True)):
        res.numpy_ms.append(timed(exact_topk, corpus.item_vectors, v, DEPTH)[1])
        with one_blas_thread():
            res.numpy1_ms.append(timed(exact_topk, corpus.item_vectors, v, DEPTH)[1])
        for name in PATHS if i % 2 else PATHS[::-1]:  # alternate who goes first
            store, emb = stores[name]
            out = res.paths[name]
            out.vector_ms.append(timed(store.vector_search, "items", v, DEPTH, kinds=all_kinds)[1])
            before = (emb.seconds, dict(store.seconds))
            with searching_once(name == "one search"):
                out.recall_ms.append(timed(recall, store, emb, q, k=10)[1])
            parts = {"embed": emb.seconds - before[0]}
            parts.update({k: store.seconds[k] - before[1][k] for k in store.seconds})
            for part, secs in parts.items():
                out.parts_ms[part] = out.parts_ms.get(part, 0.0) + secs * 1000 / len(queries)

            want = [corpus.item_ids[i] for i in exact_topk(corpus.item_vectors, v, 10)]
            got = [r.id for r, _ in store.vector_search("items", v, 10, kinds=all_kinds)]
            out.recall10.setdefault("items", []).append(overlap(got, want))
            want = [corpus.item_ids[i] for i in exact_topk(corpus.item_vectors, v, 10, filt)]
            got = [m.id for m, _ in store.nearest_items(v, 10, kinds=("fact", "identity"))]
            out.recall10.setdefault("filtered", []).append(overlap(got, want))
            want = [corpus.raw_ids[i] for i in exact_topk(corpus.raw_vectors, v, 10, corpus.raw_searchable)]
            got = [r.id for r, _ in store.vector_search("raw", v, 10, **RAW_FILTER)]
            out.recall10.setdefault("raw", []).append(overlap(got, want))

    # The writer's pattern: one small commit at a time (then maintain(), as Writer.add runs
    # it), each followed by a search.
    store = stores["dcpm"][0]
    items, vecs = make_items(args.appends, pool[0], pool[2], args.seed + 99, tag="tail")
    for j, (item, vec) in enumerate(zip(items, vecs, strict=True)):
        store.add_items([item], vec[None, :])
        if not args.no_maintain:
            done, ms = timed(store.maintain)
            res.maintain_ms.append(ms)
            res.optimizes += sum("optimize" in steps for steps in done.values())
        v = qvecs[j % len(qvecs)]
        res.after_write_ms.append(timed(store.vector_search, "items", v, DEPTH, kinds=all_kinds)[1])
    ids = corpus.item_ids + [i.id for i in items]
    matrix = np.vstack([corpus.item_vectors, vecs])
    tail_hits = []
    for v in qvecs[: args.queries // 2]:
        res.tail_vector_ms.append(timed(store.vector_search, "items", v, DEPTH, kinds=all_kinds)[1])
        want = [ids[i] for i in exact_topk(matrix, v, 10)]
        tail_hits.append(overlap([r.id for r, _ in store.vector_search("items", v, 10)], want))
    res.tail_recall10 = statistics.fmean(tail_hits)
    res.layout = layout(store)
    return res


def layout(store: Store) -> str:
    t = store.table("items")
    frags = t.stats()["fragment_stats"]["num_fragments"]
    idx = ", ".join(sorted(f"{i.index_type}({','.join(i.columns)})" for i in t.list_indices())) or "none"
    return f"items: {frags} fragments, version {t.version}, indices {idx}"


@dataclass
class ColdResult:
    dcpm_s: list[float]
    lancedb_s: list[float]
    output: str


def bench_cold(path: Path, args: argparse.Namespace, queries: list[str], root: Path) -> ColdResult:
    dcpm = str(Path(sys.executable).parent / "dcpm")
    if not Path(dcpm).exists():
        dcpm = shutil.which("dcpm") or "dcpm"
    env = {**os.environ, "DCPM_HOME": str(root / "home"), "COLUMNS": "100"}
    env.pop("DCPM_STORE", None)
    env["DCPM_EMBEDDER"] = args.embedder
    dcpm_s, lance_s, out = [], [], ""
    for i in range(args.cold_runs + 1):  # the first of each pair warms the disk cache
        cmd = [dcpm, "--store", str(path), "recall", queries[i % len(queries)]]
        t = time.perf_counter()
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
        d = time.perf_counter() - t
        if proc.returncode != 0:
            raise RuntimeError(f"{shlex.join(cmd)} failed: {proc.stderr.strip()}")
        t = time.perf_counter()
        subprocess.run([sys.executable, "-c", "import lancedb"], env=env, check=True)
        lt = time.perf_counter() - t
        if i:
            dcpm_s.append(d)
            lance_s.append(lt)
        out = proc.stdout
    return ColdResult(dcpm_s, lance_s, out)


# -- report -------------------------------------------------------------------------------


def pct(values: list[float], q: float) -> float:
    return float(np.percentile(np.asarray(values), q))


def _runs(seconds: list[float]) -> str:
    return ", ".join(f"{x:.2f}" for x in seconds)


def report(results: list[SizeResult], cold: ColdResult | None, args: argparse.Namespace) -> None:
    upkeep = "without maintain()" if args.no_maintain else "after maintain()"
    print(f"\n== Read path, warm and in-process, {upkeep} ({args.queries} queries, {args.embedder}) ==")
    print(
        f"vector = Store.vector_search('items', k={DEPTH}); numpy = exact top-{DEPTH} over the same vectors"
    )
    print("(numpy: the faster p50 of its default BLAS threads and of one thread; both below)")
    print("LanceDB scan = the same Store with LanceDB's search on every query (the read path before)")
    print("one search = the same Store, recall() without its feedback search (recall.FEEDBACK_DEPTH 0)")
    head = (
        f"{'items':>7} {'search':<13}| {'numpy p50':>9} | {'vector p50':>10} {'p95':>6} {'×np':>5} | "
        f"{'recall() p50':>12} {'p95':>6} {'×np':>5} | {'r@10':>5} {'filt':>5} {'raw':>5}"
    )
    print(head)
    print("-" * len(head))
    for r in results:
        n50 = min(pct(r.numpy_ms, 50), pct(r.numpy1_ms, 50))
        for name, p in r.paths.items():
            v50, r50 = pct(p.vector_ms, 50), pct(p.recall_ms, 50)
            hits = " ".join(f"{statistics.fmean(p.recall10[k]):>5.3f}" for k in ("items", "filtered", "raw"))
            print(
                f"{r.size:>7} {name:<13}| {n50:>9.2f} | {v50:>10.2f} {pct(p.vector_ms, 95):>6.2f} "
                f"{v50 / n50:>5.1f} | {r50:>12.1f} {pct(p.recall_ms, 95):>6.1f} {r50 / n50:>5.1f} | {hits}"
            )
    print("ms; ×np = p50 ÷ numpy p50 (goal: vector ≤ 2×); r@10 = recall@10 against exact (goal ≥ 0.98):")
    for r in results:
        print(
            f"  numpy at {r.size}: p50 {pct(r.numpy_ms, 50):.2f} ms with default BLAS threads, "
            f"{pct(r.numpy1_ms, 50):.2f} ms with one"
        )
    print("plain, filt = nearest_items(fact+identity, current only), raw = pending user inputs")
    print("\nrecall() mean ms per query by part (vector and text each cover every searched table):")
    for r in results:
        for name, p in r.paths.items():
            other = statistics.fmean(p.recall_ms) - sum(p.parts_ms.values())
            parts = f"embed {p.parts_ms['embed']:.1f}, vector {p.parts_ms['vector']:.1f}"
            parts += f", text (BM25) {p.parts_ms['text']:.1f}, chains/nodes/fusion {other:.1f}"
            print(f"  {r.size:>7} {name:<13}: {parts}")
    print("\none-shot: a process's first vector search (LanceDB's scan), and making the in-memory copy:")
    for r in results:
        first, copy = pct(r.first_search_ms, 50), pct(r.copy_ms, 50)
        print(f"  {r.size:>7}: first search p50 {first:.1f} ms; copy {copy:.0f} ms")
    then = "" if args.no_maintain else ", each followed by maintain() as Writer.add runs it"
    print(f"\nafter each of {args.appends} single-item appends (the writer's pattern{then}):")
    for r in results:
        line = (
            f"  {r.size:>7}: first search p50 {pct(r.after_write_ms, 50):.1f} ms "
            f"(p95 {pct(r.after_write_ms, 95):.1f})"
        )
        if r.maintain_ms:
            line += f"; maintain() mean {statistics.fmean(r.maintain_ms):.1f} ms ({r.optimizes} optimize)"
        print(line + f"; then warm p50 {pct(r.tail_vector_ms, 50):.2f} ms, r@10 {r.tail_recall10:.3f}")
        maint = f"{r.maintain_s:.1f} s" if r.maintain_s is not None else "not run"
        print(f"  {'':>7}  build {r.build_s:.1f} s, first maintain() {maint}; at the end {r.layout}")
    if cold is not None:
        d, lt = statistics.median(cold.dcpm_s), statistics.median(cold.lancedb_s)
        pairs = statistics.median([a / b for a, b in zip(cold.dcpm_s, cold.lancedb_s, strict=True)])
        runs = f"fresh processes, interleaved, {len(cold.dcpm_s)} each"
        print(f"\n== Cold start at {args.cold_size} items ({runs}) ==")
        print(f"  dcpm --store X recall '...'   median {d:5.2f} s   runs: {_runs(cold.dcpm_s)}")
        print(f"  python -c 'import lancedb'    median {lt:5.2f} s   runs: {_runs(cold.lancedb_s)}")
        print(f"  ratio of medians {d / lt:.2f}×, median of per-pair ratios {pairs:.2f}×  (goal ≤ 1.5×)")
    sizes = " ".join(str(s) for s in args.sizes)
    print(
        f"\nreproduce: python -m benchmarks.read_path --sizes {sizes} --queries {args.queries} "
        f"--pool {args.pool} --appends {args.appends} --seed {args.seed}"
        f"{' --no-maintain' if args.no_maintain else ''}"
    )


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(prog="python -m benchmarks.read_path", description=__doc__.splitlines()[0])
    p.add_argument("--sizes", type=int, nargs="+", default=[10000, 100000], help="items per store")
    p.add_argument("--queries", type=int, default=200, help="timed queries per size")
    p.add_argument("--pool", type=int, default=3000, help="distinct sentences embedded for the stores")
    p.add_argument("--appends", type=int, default=100, help="single-item appends after the warm run")
    p.add_argument("--cold-size", type=int, default=10000, help="store size for the cold-start runs")
    p.add_argument("--cold-runs", type=int, default=5)
    p.add_argument("--no-cold", action="store_true", help="skip the cold-start runs")
    before = "never run Store.maintain() (no compaction, no id indices): the store as before"
    p.add_argument("--no-maintain", action="store_true", help=before)
    p.add_argument("--embedder", default="minilm")
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--keep", type=Path, default=None, help="build the stores here and keep them")
    args = p.parse_args(argv)

    root = args.keep or Path(tempfile.mkdtemp(prefix="dcpm-readpath-"))
    root.mkdir(parents=True, exist_ok=True)
    try:
        embedder = get_embedder(args.embedder)
        t = time.perf_counter()
        pairs = distinct_sentences(random.Random(args.seed), args.pool)
        pool = ([s for s, _ in pairs], [x for _, x in pairs], embedder.embed([x for _, x in pairs]))
        queries = make_queries(args.queries, args.seed + 1000)
        qvecs = embedder.embed(queries)
        print(f"embedded a pool of {args.pool} sentences and {len(queries)} queries in "
              f"{time.perf_counter() - t:.1f} s", file=sys.stderr)  # fmt: skip
        results = []
        for n in args.sizes:
            print(f"store of {n} items ...", file=sys.stderr)
            results.append(bench_size(n, args, embedder, pool, queries, qvecs, root))
        cold = None
        if not args.no_cold:
            path = root / f"cold-{args.cold_size}"
            build_store(path, embedder, args.cold_size, pool, args.seed)
            maintained(path, embedder, args)
            cold = bench_cold(path, args, queries, root)
        report(results, cold, args)
    finally:
        if args.keep is None:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
