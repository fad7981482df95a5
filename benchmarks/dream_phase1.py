"""Phase 1 of `dcpm dream`: time and peak memory of the clustering, against scikit-learn.

    python -m benchmarks.dream_phase1 [--sizes 5000 50000] [--threads N] [--no-reference]

scikit-learn (the reference) is not a dependency of dcpm itself: `pip install 'dcpm[bench]'`.

For each size, synthetic 384-d unit vectors (clustered like sentence embeddings of facts:
a few hundred topic centres grouped in life domains, a shared anisotropic direction,
varied cluster sizes and spreads, ~10% noise between them) are written to a scratch file.
Then, each in a fresh subprocess so that peak memory is measured fairly (the peak resident
size of the whole process during the run, VmHWM reset just before it; and that peak minus
the process's size before the run, i.e. the run's working memory):

- `dcpm`: our two-stage DBSCAN (eps₁ 0.35, eps₂ 0.25 on clusters over 40, min_samples 3),
  timed for stage 1 alone and for both stages (Phase 1's clustering, start to finish);
- `sklearn`: plain `DBSCAN(eps=0.35, min_samples=3, metric="cosine")` on the same vectors.

The adjusted Rand index compares our stage-1 labels with scikit-learn's (same clustering
problem). Timings are measured, never asserted: the wall clock depends on the machine's load,
so CPU time is shown beside it.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

EPS1, EPS2, MIN_SAMPLES, MAX_SIZE = 0.35, 0.25, 3, 40


def synthetic(
    n: int,
    dim: int = 384,
    centres: int = 300,
    domains: int = 20,
    noise: float = 0.10,
    seed: int = 0,
) -> tuple[np.ndarray, np.ndarray]:
    """(vectors, true topic or -1 for noise): unit float32 vectors, shuffled."""
    rng = np.random.default_rng(seed)

    def unit(a: np.ndarray) -> np.ndarray:
        return a / np.linalg.norm(a, axis=-1, keepdims=True)

    shared = unit(rng.standard_normal(dim))  # sentence embeddings share a common direction
    domain_dirs = unit(rng.standard_normal((domains, dim)))
    domain_of = rng.integers(0, domains, centres)
    # Topics of one domain are related (cos ≈ 0.3), unrelated across domains (≈ 0.1).
    topic_dirs = unit(0.55 * domain_dirs[domain_of] + 0.835 * unit(rng.standard_normal((centres, dim))))
    topic_dirs = unit(0.3 * shared + topic_dirs)
    weights = rng.lognormal(0.0, 0.8, centres)
    n_noise = int(n * noise)
    topic = rng.choice(centres, size=n - n_noise, p=weights / weights.sum())
    # Each topic has its own spread: facts sit at cos 0.82–0.90 from their topic centre,
    # i.e. ≈ 0.67–0.81 from each other.
    closeness = rng.uniform(0.82, 0.90, centres)[topic]
    X = closeness[:, None] * topic_dirs[topic] + np.sqrt(1 - closeness**2)[:, None] * unit(
        rng.standard_normal((n - n_noise, dim))
    )
    noise_domain = rng.integers(0, domains, n_noise)
    N = unit(0.3 * shared + 0.35 * domain_dirs[noise_domain] + unit(rng.standard_normal((n_noise, dim))))
    X = unit(np.vstack([X, N])).astype(np.float32)
    y = np.concatenate([topic, -np.ones(n_noise, dtype=np.int64)])
    perm = rng.permutation(n)
    return X[perm], y[perm]


def _status_mb(field: str) -> float | None:
    """A memory figure of this process from /proc (Linux), in MB."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return None


def _reset_peak() -> bool:
    """Reset the peak-RSS mark to the current RSS (Linux ≥ 4.0), so the peak that follows is
    the run's own; ru_maxrss cannot be reset and survives exec from a large parent."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
        return True
    except OSError:
        return False


def _peak_mb() -> float:
    hwm = _status_mb("VmHWM")
    return hwm if hwm is not None else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _worker(method: str, data: str, labels_out: str) -> None:
    """Run one method in this (fresh) process and print its measurements as JSON."""
    from scipy.sparse.csgraph import connected_components  # noqa: F401  (imports before baseline)
    from sklearn.cluster import DBSCAN

    from dcpm_cli.dream import cluster

    X = np.load(data)
    result: dict = {"method": method, "n": len(X)}
    if method == "store-build":  # in a process of its own, so the next one starts clean
        _, seconds = _synthetic_store(X, Path(data).parent / "store")
        print(json.dumps({"insert_seconds": seconds}))
        return
    if method == "store":
        from dcpm_cli.store import Store

        store = Store(str(Path(data).parent / "store"), _Placeholder())  # type: ignore[arg-type]
        del X
    _reset_peak()
    result["baseline_mb"] = _status_mb("VmRSS") or _peak_mb()
    w0, c0 = time.perf_counter(), time.process_time()
    if method == "store":
        result["clusters_two_stage"] = _triage(store)
    elif method == "sklearn":
        labels = DBSCAN(eps=EPS1, min_samples=MIN_SAMPLES, metric="cosine").fit_predict(X)
    else:
        stats = cluster.PairStats()
        labels = cluster.dbscan(X, EPS1, MIN_SAMPLES, stats=stats)
        result["stage1_wall"] = time.perf_counter() - w0
        result["stage1_cpu"] = time.process_time() - c0
        result.update(cells=stats.cells, loose=stats.loose, computed=stats.computed, pairs=stats.pairs)
        two = cluster.split_oversized(X, labels, EPS2, MIN_SAMPLES, MAX_SIZE)
        result["clusters_two_stage"] = int(two.max() + 1)
    result["wall"] = time.perf_counter() - w0
    result["cpu"] = time.process_time() - c0
    result["peak_mb"] = _peak_mb()
    if method == "store":  # stage-1 labels from the store's vectors, after the clock stopped
        facts, vectors = store.items_with_vectors(["fact"])
        order = np.argsort([int(f.id[2:]) for f in facts])
        labels = cluster.dbscan(vectors[order], EPS1, MIN_SAMPLES)
    result["clusters"] = int(labels.max() + 1)
    result["noise"] = int((labels < 0).sum())
    np.save(labels_out, labels)
    print(json.dumps(result))


class _Placeholder:
    """Stands in for an embedder: the store only needs a model id and a dimension."""

    model_id = "synthetic"
    dim = 384

    def embed(self, texts: list[str]) -> np.ndarray:
        raise NotImplementedError


def _synthetic_store(X: np.ndarray, path: Path) -> tuple[object, float]:
    """A real LanceDB store holding the vectors as current fact items (placeholder texts)."""
    from datetime import UTC, datetime, timedelta

    from dcpm_cli.models import MemoryItem
    from dcpm_cli.store import Store

    store = Store(str(path), _Placeholder())  # type: ignore[arg-type]
    start = datetime(2026, 1, 1, tzinfo=UTC)
    items = [
        MemoryItem(
            id=f"m_{i:07d}", kind="fact", text=f"synthetic fact {i}", event_at=start + timedelta(minutes=i)
        )
        for i in range(len(X))
    ]
    t0 = time.perf_counter()
    store.add_items(items, X)
    return store, time.perf_counter() - t0


def _triage(store) -> int:
    """Phase 1 as `dcpm dream` runs it: read the facts, both stages, graph context."""
    from dcpm_cli.dream.triage import GraphIndex, triage

    tri = triage(
        store, GraphIndex.load(store), eps1=EPS1, eps2=EPS2, min_samples=MIN_SAMPLES, max_cluster=MAX_SIZE
    )
    return len(tri.clusters)


def _run(method: str, data: Path, folder: Path, threads: int | None) -> tuple[dict, np.ndarray | None]:
    out = folder / f"{method}-labels.npy"
    env = dict(os.environ)
    if threads:
        for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
            env[var] = str(threads)
    cmd = [sys.executable, "-m", "benchmarks.dream_phase1", "--worker", method, str(data), str(out)]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
    if proc.returncode != 0:
        raise SystemExit(f"{method} worker failed:\n{proc.stderr}")
    return json.loads(proc.stdout.strip().splitlines()[-1]), np.load(out) if out.exists() else None


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--sizes", type=int, nargs="+", default=[5000, 50000])
    p.add_argument("--threads", type=int, default=None, help="BLAS threads per worker (default: all)")
    p.add_argument("--no-reference", action="store_true", help="skip scikit-learn")
    p.add_argument(
        "--through-store",
        action="store_true",
        help="also time Phase 1 as a dream runs it: facts read from a LanceDB store, graph context",
    )
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--worker", nargs=3, metavar=("METHOD", "DATA", "OUT"), help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.worker:
        _worker(*args.worker)
        return
    from sklearn.metrics import adjusted_rand_score

    print(
        f"Phase 1 clustering, eps1={EPS1} eps2={EPS2} min_samples={MIN_SAMPLES} max_size={MAX_SIZE}, "
        f"{os.cpu_count()} CPUs, BLAS threads: {args.threads or 'default'}, "
        f"load average {os.getloadavg()[0]:.1f}"
    )
    for n in args.sizes:
        with tempfile.TemporaryDirectory(prefix="dcpm-bench-") as tmp:
            folder = Path(tmp)
            X, _ = synthetic(n, seed=args.seed)
            np.save(folder / "X.npy", X)
            del X
            ours, our_labels = _run("dcpm", folder / "X.npy", folder, args.threads)
            print(f"\nn={n}")
            _line("dcpm two-stage", ours)
            print(
                f"  {'':16} stage 1 alone {ours['stage1_wall']:.2f} s wall / {ours['stage1_cpu']:.2f} s CPU; "
                f"{ours['cells']} cells, {ours['loose']} loose points, "
                f"{100 * ours['computed']:.1f}% of pairs computed, {ours['pairs']} neighbour pairs; "
                f"{ours['clusters_two_stage']} clusters after stage 2"
            )
            if args.through_store:
                built, _ = _run("store-build", folder / "X.npy", folder, args.threads)
                via, _ = _run("store", folder / "X.npy", folder, args.threads)
                via["insert_seconds"] = built["insert_seconds"]
                _line("dcpm via store", via)
                print(
                    f"  {'':16} (Phase 1 as a dream runs it: {n} facts read from LanceDB, both stages, "
                    f"graph context; inserting them took {via['insert_seconds']:.1f} s, not counted)"
                )
            if args.no_reference:
                continue
            ref, ref_labels = _run("sklearn", folder / "X.npy", folder, args.threads)
            _line("sklearn cosine", ref)
            ari = adjusted_rand_score(ref_labels, our_labels)
            same_noise = float(np.mean((ref_labels < 0) == (our_labels < 0)))
            print(
                f"  ratio sklearn/dcpm: time {ref['wall'] / ours['wall']:.1f}x wall, "
                f"{ref['cpu'] / ours['cpu']:.1f}x CPU; peak memory {ref['peak_mb'] / ours['peak_mb']:.1f}x "
                f"(working {_work(ref) / max(_work(ours), 1):.1f}x)"
            )
            print(
                f"  adjusted Rand index (stage 1 vs sklearn): {ari:.4f}; same noise points: {same_noise:.4f}"
            )


def _work(r: dict) -> float:
    return r["peak_mb"] - r["baseline_mb"]


def _line(label: str, r: dict) -> None:
    print(
        f"  {label:16} {r['wall']:7.2f} s wall {r['cpu']:7.2f} s CPU   peak {r['peak_mb']:7.0f} MB "
        f"(process before run {r['baseline_mb']:.0f} MB, working {_work(r):.0f} MB)   "
        f"{r['clusters']} clusters, {r['noise']} noise"
    )


if __name__ == "__main__":
    main()
