"""Phase 1 clustering: two-stage DBSCAN over L2-normalised embeddings, exact, in bounded memory.

scikit-learn's `DBSCAN(metric="cosine")` computes every pairwise distance and keeps every
neighbourhood as a Python object: ~40 s and 1.6 GB at 50k facts. Here:

- For unit vectors, cosine distance is `1 - x·y`, so an eps-neighbourhood is `x·y ≥ 1 - eps`,
  found with blockwise matrix products (16 MB blocks, a few threads, BLAS single-threaded)
  and kept as chunks of int32 pairs, never as one array or a sparse matrix.
- Most pairs are never computed. The points are partitioned into cells by a quick spherical
  k-means; a whole pair of cells is skipped when a *proof* says no pair across them can be
  within eps: a separating-hyperplane bound (the gap between the cells' projections on the
  line through their centres) or a spherical-cap bound (angle between centres minus both
  radii). Points far from every centre ("loose", the noise) are checked per point against
  each cell's cap and hyperplane, and exhaustively among themselves. Skipping is exact, so
  the neighbourhoods, and hence the clusters, are DBSCAN's; on data without cluster
  structure nothing is skipped and the cost falls back to the blockwise all-pairs scan.
- DBSCAN itself is then array operations over the pair chunks: core points (≥ min_samples
  neighbours, counting the point itself, as scikit-learn does), union-find of core-core
  pairs (hooking and pointer jumping in numpy), and each border point joined to the cluster
  of one of its core neighbours (which one, when several clusters reach it, may differ from
  scikit-learn's expansion order; noise and cores are identical).

`python -m benchmarks.dream_phase1` measures it against scikit-learn.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass

import numpy as np

from dcpm_cli.blas import one_blas_thread

# Below this many points the plain blockwise scan is faster than building cells.
SMALL_N = 3000
# Floats per similarity block (16 MB of float32; a few are in flight, one per thread).
BLOCK_FLOATS = 1 << 22
# Neighbour pairs are kept in chunks of about this many (never as one array).
CHUNK_PAIRS = 1 << 20
# Slack on the pruning bounds, far above float32 rounding of unit-vector dot products.
MARGIN = 1e-4


@dataclass
class PairStats:
    """What the neighbour search did (for the benchmark and for tuning)."""

    n: int = 0
    cells: int = 0
    loose: int = 0
    computed: float = 0.0  # dot products computed / all n(n-1)/2 pairs
    pairs: int = 0


def dbscan(X: np.ndarray, eps: float, min_samples: int = 3, **kwargs) -> np.ndarray:
    """Cluster labels (0..k-1, -1 for noise) of DBSCAN with cosine distance."""
    return labels_from_pairs(len(X), neighbour_chunks(X, eps, **kwargs), min_samples)


def labels_from_pairs(n: int, chunks: list[tuple[np.ndarray, np.ndarray]], min_samples: int) -> np.ndarray:
    """DBSCAN labels from the eps-neighbour pairs, given as chunks of (rows, cols): core
    points (≥ min_samples neighbours counting themselves), connected components of the
    core-core graph (union-find with array operations), then each border point joins the
    cluster of one of its core neighbours (the last pair listed wins). Empties `chunks`:
    the pairs are the largest arrays of Phase 1 and are never copied into one."""
    labels = np.full(n, -1, dtype=np.int64)
    if n == 0:
        chunks.clear()
        return labels
    degree = np.ones(n, dtype=np.int64)
    for r, c in chunks:
        degree += np.bincount(r, minlength=n)
        degree += np.bincount(c, minlength=n)
    core = degree >= min_samples
    del degree
    if not core.any():
        chunks.clear()
        return labels
    anchor = np.full(n, -1, dtype=np.int64)
    parent = np.arange(n, dtype=np.int64)
    crossing: list[tuple[np.ndarray, np.ndarray]] = []
    while chunks:
        r, c = chunks.pop(0)
        for a, b in ((r, c), (c, r)):
            m = core[a] & ~core[b]
            anchor[b[m]] = a[m]
        m = core[r] & core[c]
        crossing += _hook(parent, r[m], c[m])
    while crossing:  # later rounds: only the edges whose ends were still apart
        edges, crossing = crossing, []
        for r, c in edges:
            crossing += _hook(parent, r, c)
    _flatten(parent)
    labels[core] = parent[core]
    border = anchor >= 0
    labels[border] = parent[anchor[border]]
    return _renumber(labels)


def _flatten(parent: np.ndarray) -> None:
    """Pointer jumping until every entry points at its root."""
    while True:
        grand = parent[parent]
        if np.array_equal(grand, parent):
            return
        parent[:] = grand


def _hook(parent: np.ndarray, r: np.ndarray, c: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
    """Union the ends of edges (r, c): each root hooks under the smallest root it meets.
    Returns the edges whose ends were in different trees (a later round re-checks them)."""
    if len(r) == 0:
        return []
    _flatten(parent)
    pr, pc = parent[r], parent[c]
    apart = pr != pc
    if not apart.any():
        return []
    pr, pc = pr[apart], pc[apart]
    np.minimum.at(parent, np.maximum(pr, pc), np.minimum(pr, pc))
    return [(r[apart], c[apart])]


def _renumber(labels: np.ndarray) -> np.ndarray:
    """Clusters numbered 0..k-1 in order of their first point; noise stays -1."""
    out = np.full(len(labels), -1, dtype=np.int64)
    clustered = labels >= 0
    if not clustered.any():
        return out
    uniq, first, inverse = np.unique(labels[clustered], return_index=True, return_inverse=True)
    rank = np.empty(len(uniq), dtype=np.int64)
    rank[np.argsort(first, kind="stable")] = np.arange(len(uniq))
    out[clustered] = rank[inverse]
    return out


def two_stage_dbscan(
    X: np.ndarray, eps1: float, eps2: float, min_samples: int = 3, max_size: int = 40, **kwargs
) -> np.ndarray:
    """Stage 1, DBSCAN at eps1; stage 2, `split_oversized`."""
    labels = dbscan(X, eps1, min_samples, **kwargs)
    return split_oversized(X, labels, eps2, min_samples, max_size)


def split_oversized(
    X: np.ndarray,
    labels: np.ndarray,
    eps2: float,
    min_samples: int = 3,
    max_size: int = 40,
) -> np.ndarray:
    """Clusters over `max_size` (what one induction prompt shows comfortably) re-clustered
    by DBSCAN at the tighter eps2. Every member of a stage-1 cluster stays clustered: a
    stage-2 noise point joins the stage-2 cluster nearest to it, a cluster eps2 cannot split
    at all (no core points at eps2: a long arc on one theme) is split by spherical 2-means
    instead, and any part still over `max_size` is bisected until every part fits. (Dropping
    them as noise would drop them every night: the same facts make the same cluster.)"""
    if len(labels) == 0 or labels.max() < 0:
        return labels.copy()
    out = np.full(len(labels), -1, dtype=np.int64)
    order = np.argsort(labels, kind="stable")
    bounds = np.searchsorted(labels[order], np.arange(int(labels.max()) + 2))
    next_label = 0
    with one_blas_thread():
        for c in range(int(labels.max()) + 1):
            members = order[bounds[c] : bounds[c + 1]]
            groups = [members]
            if len(members) > max_size:
                groups = _stage_two(X, members, eps2, min_samples)
                groups = [part for g in groups for part in _bisect(X, g, max_size, min_samples)]
            for g in groups:
                out[g] = next_label
                next_label += 1
    return _renumber(out)


def _stage_two(X: np.ndarray, members: np.ndarray, eps2: float, min_samples: int) -> list[np.ndarray]:
    """DBSCAN at eps2 within one cluster, its noise joined to the nearest sub-cluster (by
    centroid); the whole cluster as one group when eps2 finds no sub-cluster."""
    sub = dbscan(X[members], eps2, min_samples, workers=1)
    k = int(sub.max()) + 1
    if k <= 0:
        return [members]
    noise = sub < 0
    if noise.any():
        centres = np.stack([centroid(X[members[sub == s]]) for s in range(k)])
        sub = sub.copy()
        sub[noise] = np.argmax(X[members[noise]] @ centres.T, axis=1)
    return [members[sub == s] for s in range(k)]


def _bisect(X: np.ndarray, members: np.ndarray, max_size: int, min_samples: int) -> list[np.ndarray]:
    """Split `members` by spherical 2-means until every part has at most `max_size` points.
    A 2-means side smaller than min_samples (an outlier or two) is not kept apart: the
    members are cut at the median of their projection between the two centres instead, so
    no part is ever dropped."""
    if len(members) <= max_size:
        return [members]
    V = X[members]
    # Seeds: the point farthest from the mean, then the point farthest from that one.
    a = V[int(np.argmin(V @ V.sum(axis=0)))]
    b = V[int(np.argmin(V @ a))]
    C = np.stack([a, b])
    side = (V @ C[1]) > (V @ C[0])
    for _ in range(8):
        if side.all() or not side.any():
            break
        C = np.stack([V[~side].sum(axis=0), V[side].sum(axis=0)])
        new = (V @ C[1]) * np.linalg.norm(C[0]) > (V @ C[0]) * np.linalg.norm(C[1])
        if (new == side).all():
            break
        side = new
    if min(int(side.sum()), int((~side).sum())) < min_samples:
        # Too lopsided (or identical points): a balanced cut along the centres' axis.
        axis = C[1] / max(float(np.linalg.norm(C[1])), 1e-12) - C[0] / max(float(np.linalg.norm(C[0])), 1e-12)
        rank = np.argsort(V @ axis, kind="stable")
        side = np.zeros(len(V), dtype=bool)
        side[rank[len(V) // 2 :]] = True
    return [
        *_bisect(X, members[~side], max_size, min_samples),
        *_bisect(X, members[side], max_size, min_samples),
    ]


def centroid(V: np.ndarray) -> np.ndarray:
    """The unit-norm mean direction of unit vectors."""
    m = V.mean(axis=0)
    return (m / max(float(np.linalg.norm(m)), 1e-12)).astype(np.float32)


# -- the neighbour search ---------------------------------------------------------------------


class _Pairs:
    """Collects neighbour pairs from similarity blocks of bounded size. Blocks are queued as
    tasks and run by a few threads (numpy releases the GIL in products and comparisons)
    while BLAS itself runs single-threaded: many small products in parallel threads beat
    one multi-threaded BLAS, which also degrades badly on a busy machine."""

    def __init__(self, X: np.ndarray, threshold: np.float32, workers: int) -> None:
        from concurrent.futures import ThreadPoolExecutor

        self.X = X
        self.threshold = threshold
        self.work = 0.0
        self._pool = ThreadPoolExecutor(max_workers=workers) if workers > 1 else None
        self._futures: list = []
        self._done: list[tuple[np.ndarray, np.ndarray, float]] = []

    def scan(self, ia: np.ndarray, ib: np.ndarray, *, same: bool) -> None:
        """Queue the pairs between points `ia` and `ib`; with `same` (ia is ib) only i < j."""
        if len(ia) == 0 or len(ib) == 0:
            return
        step = max(1, BLOCK_FLOATS // len(ib))
        for s in range(0, len(ia), step):
            args = (ia[s : s + step], ib[s:] if same else ib, same)
            if self._pool is None:
                self._done.append(self._block(*args))
            else:
                self._futures.append(self._pool.submit(self._block, *args))

    def _block(self, a: np.ndarray, cols: np.ndarray, same: bool) -> tuple[np.ndarray, np.ndarray, float]:
        sims = self.X[a] @ self.X[cols].T
        r, c = np.nonzero(sims >= self.threshold)
        if same:  # row r is column r of this block: keep the upper triangle
            upper = c > r
            r, c = r[upper], c[upper]
            work = len(a) * (len(cols) - (len(a) + 1) / 2)
        else:
            work = float(sims.size)
        return a[r].astype(np.int32), cols[c].astype(np.int32), work

    def result(self) -> list[tuple[np.ndarray, np.ndarray]]:
        """The pairs in chunks of about CHUNK_PAIRS (small block results merged)."""
        if self._pool is not None:
            self._done.extend(f.result() for f in self._futures)
            self._pool.shutdown()
            self._futures = []
        self.work = sum(w for _, _, w in self._done)
        done, self._done = self._done, []
        chunks: list[tuple[np.ndarray, np.ndarray]] = []
        group: list[tuple[np.ndarray, np.ndarray]] = []
        size = 0
        while done:
            r, c, _ = done.pop()
            if len(r):
                group.append((r, c))
                size += len(r)
            if group and (size >= CHUNK_PAIRS or not done):
                chunks.append((np.concatenate([g[0] for g in group]), np.concatenate([g[1] for g in group])))
                group, size = [], 0
        return chunks


def neighbour_chunks(
    X: np.ndarray,
    eps: float,
    *,
    small_n: int = SMALL_N,
    stats: PairStats | None = None,
    seed: int = 0,
    workers: int | None = None,
) -> list[tuple[np.ndarray, np.ndarray]]:
    X = np.ascontiguousarray(X, dtype=np.float32)
    n = len(X)
    if workers is None:
        workers = min(os.cpu_count() or 1, 4) if n >= small_n else 1
    out = _Pairs(X, np.float32(1.0 - eps), workers)
    with one_blas_thread():
        if n < 2:
            pass
        elif n < small_n:
            idx = np.arange(n, dtype=np.int32)
            out.scan(idx, idx, same=True)
        else:
            _pruned_scan(X, eps, out, np.random.default_rng(seed), stats)
        chunks = out.result()
    if stats is not None:
        stats.n = n
        stats.pairs = sum(len(r) for r, _ in chunks)
        stats.computed = out.work / max(n * (n - 1) / 2, 1)
    return chunks


def _spherical_kmeans(X: np.ndarray, k: int, rng: np.random.Generator, iters: int = 4) -> np.ndarray:
    """k unit centres fitted on a sample: only a partition for pruning, so rough is fine."""
    m = min(len(X), max(20 * k, 8192))
    sample = X[rng.choice(len(X), m, replace=False)]
    C = sample[rng.choice(m, k, replace=False)].copy()
    for _ in range(iters):
        assign = np.argmax(sample @ C.T, axis=1)
        sums = np.zeros_like(C)
        np.add.at(sums, assign, sample)
        norms = np.linalg.norm(sums, axis=1)
        empty = norms < 1e-12
        if empty.any():
            sums[empty] = sample[rng.choice(m, int(empty.sum()), replace=False)]
            norms[empty] = np.linalg.norm(sums[empty], axis=1)
        C = (sums / norms[:, None]).astype(np.float32)
    return C


def _pruned_scan(
    X: np.ndarray, eps: float, out: _Pairs, rng: np.random.Generator, stats: PairStats | None
) -> None:
    n = len(X)
    k = int(min(max(2 * math.sqrt(n), 8), 2048, n))
    C = _spherical_kmeans(X, k, rng)

    # One pass over the points: each one's cell (nearest centre) and similarity to it. Points
    # within eps of their centre are the cell's tight members; the rest ("loose") are checked
    # one by one later, with their similarities to every centre kept for that.
    # hi[a, b] = max over tight x in a of (x·c_b - x·c_a) (≤ 0); radius[a] = angular radius.
    cell = np.empty(n, dtype=np.int32)
    top = np.empty(n, dtype=np.float32)
    hi = np.full((k, k), -np.inf, dtype=np.float32)
    min_top = np.full(k, np.inf, dtype=np.float32)
    loose_parts: list[np.ndarray] = []
    loose_sims: list[np.ndarray] = []
    step = max(1, BLOCK_FLOATS // (4 * k))
    for s in range(0, n, step):
        P = X[s : s + step] @ C.T
        c = np.argmax(P, axis=1).astype(np.int32)
        t = P[np.arange(len(P)), c]
        cell[s : s + step], top[s : s + step] = c, t
        is_tight = t >= 1.0 - eps
        if not is_tight.all():
            loose_parts.append(np.flatnonzero(~is_tight).astype(np.int32) + s)
            loose_sims.append(P[~is_tight])
        P, c, t = P[is_tight], c[is_tight], t[is_tight]
        if len(P) == 0:
            continue
        P -= t[:, None]
        by_cell = np.argsort(c, kind="stable")
        c, P, t = c[by_cell], P[by_cell], t[by_cell]
        cells, first = np.unique(c, return_index=True)
        hi[cells] = np.maximum(hi[cells], np.maximum.reduceat(P, first, axis=0))
        min_top[cells] = np.minimum(min_top[cells], np.minimum.reduceat(t, first))
    del P
    filled = np.isfinite(min_top)
    radius = np.where(filled, np.arccos(np.clip(min_top, -1.0, 1.0)), 0.0)
    tight = np.ones(n, dtype=bool)
    loose = np.concatenate(loose_parts) if loose_parts else np.zeros(0, dtype=np.int32)
    tight[loose] = False
    order = np.flatnonzero(tight)
    order = order[np.argsort(cell[order], kind="stable")].astype(np.int32)
    counts = np.bincount(cell[order], minlength=k)
    starts = np.concatenate([[0], np.cumsum(counts)])

    gram = np.clip(C @ C.T, -1.0, 1.0)
    dist = np.sqrt(np.maximum(2.0 - 2.0 * gram, 1e-12))  # |c_a - c_b|
    r_eps = math.sqrt(2.0 * eps)  # Euclidean radius of eps for unit vectors
    theta_eps = math.acos(max(-1.0, min(1.0, 1.0 - eps)))
    with np.errstate(invalid="ignore"):
        gap = -(hi + hi.T) / dist
    cap = np.arccos(gram) - radius[:, None] - radius[None, :]
    keep = ~((gap > r_eps + MARGIN) | (cap > theta_eps + MARGIN))
    keep &= filled[:, None] & filled[None, :]

    for a in np.flatnonzero(filled):
        ia = order[starts[a] : starts[a + 1]]
        out.scan(ia, ia, same=True)
        others = np.flatnonzero(keep[a, a + 1 :]) + a + 1
        if len(others):
            ib = np.concatenate([order[starts[b] : starts[b + 1]] for b in others])
            out.scan(ia, ib, same=False)

    if stats is not None:
        stats.cells, stats.loose = k, len(loose)
    if len(loose) == 0:
        return
    # Loose points against tight cells: a per-point cap and hyperplane test.
    sims = np.concatenate(loose_sims)
    own = cell[loose]  # each loose point's own cell
    theta = np.arccos(np.clip(sims, -1.0, 1.0))
    candidates = ~(theta - radius[None, :] > theta_eps + MARGIN)
    del theta
    sims -= top[loose][:, None]  # x·c_b - x·c_a
    with np.errstate(invalid="ignore", divide="ignore"):
        plane = (-hi[:, own].T - sims) / dist[own]
    plane[np.arange(len(loose)), own] = -np.inf  # own cell: no hyperplane
    candidates &= ~(plane > r_eps + MARGIN)
    candidates &= filled[None, :]
    del plane, sims
    for b in np.flatnonzero(candidates.any(axis=0)):
        out.scan(loose[candidates[:, b]], order[starts[b] : starts[b + 1]], same=False)
    # Loose against loose: all pairs.
    out.scan(loose, loose, same=True)
