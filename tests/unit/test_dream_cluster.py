"""Phase 1 clustering against the reference: scikit-learn's DBSCAN with cosine distance."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.cluster import DBSCAN
from sklearn.metrics import adjusted_rand_score

from benchmarks.dream_phase1 import synthetic
from dcpm_cli.dream import cluster


def reference(X: np.ndarray, eps: float, min_samples: int = 3) -> np.ndarray:
    return DBSCAN(eps=eps, min_samples=min_samples, metric="cosine").fit_predict(X)


def unit_random(n: int, dim: int = 64, seed: int = 0) -> np.ndarray:
    X = np.random.default_rng(seed).standard_normal((n, dim)).astype(np.float32)
    return X / np.linalg.norm(X, axis=1, keepdims=True)


def same_partition(a: np.ndarray, b: np.ndarray) -> None:
    """Identical noise and cores; clusters equal up to border points reachable from two."""
    assert ((a < 0) == (b < 0)).all()
    assert adjusted_rand_score(a, b) > 0.999


# Both code paths: the plain blockwise scan (small inputs) and the pruned one (cells).
@pytest.mark.parametrize("small_n", [cluster.SMALL_N, 100])
@pytest.mark.parametrize("eps", [0.25, 0.35, 0.5])
def test_same_clusters_as_scikit_learn_on_clustered_data(small_n: int, eps: float) -> None:
    X, _ = synthetic(2500, centres=60, domains=8, seed=3)
    same_partition(cluster.dbscan(X, eps, 3, small_n=small_n), reference(X, eps))


@pytest.mark.parametrize("small_n", [cluster.SMALL_N, 50])
def test_same_clusters_without_cluster_structure(small_n: int) -> None:
    # Random directions in 16-d: no cells can be skipped, the scan falls back to all pairs.
    X = unit_random(1500, dim=16, seed=1)
    same_partition(cluster.dbscan(X, 0.3, 4, small_n=small_n), reference(X, 0.3, 4))


def test_neighbour_pairs_are_exact_and_listed_once() -> None:
    X, _ = synthetic(1200, centres=30, domains=5, seed=5)
    chunks = cluster.neighbour_chunks(X, 0.35, small_n=100)
    rows = np.concatenate([r for r, _ in chunks]).tolist()
    cols = np.concatenate([c for _, c in chunks]).tolist()
    got = {(min(a, b), max(a, b)) for a, b in zip(rows, cols, strict=True)}
    assert len(got) == len(rows)  # no pair twice
    sims = X @ X.T
    i, j = np.nonzero(np.triu(sims >= np.float32(0.65), 1))
    assert got == set(zip(i.tolist(), j.tolist(), strict=True))


def test_several_threads_give_the_same_labels() -> None:
    X, _ = synthetic(4000, centres=80, seed=2)
    one = cluster.dbscan(X, 0.35, 3, workers=1)
    assert (cluster.dbscan(X, 0.35, 3, workers=3) == one).all()


@pytest.mark.parametrize("n", [0, 1, 2])
def test_tiny_inputs(n: int) -> None:
    X = unit_random(n) if n else np.zeros((0, 64), dtype=np.float32)
    assert (cluster.dbscan(X, 0.35, 3) == -1).all()
    assert len(cluster.two_stage_dbscan(X, 0.35, 0.25, 3, 40)) == n


def test_identical_points_form_one_cluster() -> None:
    v = unit_random(1)[0]
    X = np.stack([v] * 50 + list(unit_random(5, seed=9)))
    labels = cluster.dbscan(X, 0.1, 3)
    assert (labels[:50] == 0).all() and (labels[50:] == -1).all()
    # Stage 2 cannot split identical points by density; bisection cuts them to size.
    sizes = np.bincount(cluster.two_stage_dbscan(X, 0.1, 0.05, 3, 20)[:50])
    assert sizes.max() <= 20 and sizes.sum() == 50


def test_oversized_clusters_are_split_to_fit_a_prompt() -> None:
    X, _ = synthetic(3000, centres=20, domains=4, seed=4)
    stage1 = cluster.dbscan(X, 0.35, 3)
    assert np.bincount(stage1[stage1 >= 0]).max() > 40  # the premise: over-sized clusters
    labels = cluster.split_oversized(X, stage1, 0.25, 3, 40)
    sizes = np.bincount(labels[labels >= 0])
    assert sizes.max() <= 40 and sizes.min() >= 3
    # Stage 2 only refines: a stage-2 cluster lies inside one stage-1 cluster, noise stays noise.
    for c in range(labels.max() + 1):
        assert len(set(stage1[labels == c].tolist())) == 1
    assert (labels[stage1 < 0] == -1).all()
    assert (labels[stage1 >= 0] >= 0).all()  # and every clustered fact stays clustered
    # Clusters within the size limit are left as they were.
    small = [c for c in range(stage1.max() + 1) if (stage1 == c).sum() <= 40]
    for c in small:
        assert len(set(labels[stage1 == c].tolist())) == 1


def arc(n: int, step: float, dim: int = 32) -> np.ndarray:
    """n unit vectors along a great circle, `step` radians apart: a long single-theme arc
    whose neighbours are close but which has no dense core at a tight radius."""
    e = np.eye(dim, dtype=np.float32)
    angles = np.arange(n) * step
    return (np.cos(angles)[:, None] * e[0] + np.sin(angles)[:, None] * e[1]).astype(np.float32)


def test_a_cluster_eps2_cannot_split_is_bisected_not_dropped() -> None:
    X = arc(90, 0.05)  # neighbours at cos 0.9988: one cluster at eps1, no core at eps2
    stage1 = cluster.dbscan(X, 0.01, 3)
    assert (stage1 == 0).all()
    assert (cluster.dbscan(X, 0.0005, 3) == -1).all()  # the premise: eps2 finds nothing
    labels = cluster.two_stage_dbscan(X, 0.01, 0.0005, 3, 40)
    sizes = np.bincount(labels[labels >= 0])
    assert (labels >= 0).all() and sizes.max() <= 40 and sizes.min() >= 3
    # Bisection cuts the arc into runs of neighbours, not a scatter.
    for c in range(labels.max() + 1):
        idx = np.flatnonzero(labels == c)
        assert idx.max() - idx.min() + 1 == len(idx)


def test_stage_two_noise_joins_the_nearest_sub_cluster() -> None:
    # Two tight groups at the ends of a sparse arc: eps2 sees the groups, the arc between
    # them is its noise; every point still ends in one of the two.
    dense = np.concatenate([np.linspace(0, 0.01, 25), np.linspace(1.0, 1.01, 25)])
    sparse = np.linspace(0.05, 0.95, 19)
    angles = np.concatenate([dense, sparse])
    e = np.eye(16, dtype=np.float32)
    X = (np.cos(angles)[:, None] * e[0] + np.sin(angles)[:, None] * e[1]).astype(np.float32)
    stage1 = cluster.dbscan(X, 0.002, 3)
    assert (stage1 == 0).all()
    labels = cluster.split_oversized(X, stage1, 0.0001, 3, 40)
    assert (labels >= 0).all() and labels.max() == 1
    assert (labels[angles < 0.5] == labels[0]).all() and (labels[angles > 0.5] == labels[30]).all()


def test_labels_from_pairs_by_hand() -> None:
    # 0-1-2 a chain of cores; 3 a border point of 2; 4-5 a pair (not dense enough); 6 alone.
    rows = np.array([0, 1, 0, 2, 4], dtype=np.int32)
    cols = np.array([1, 2, 2, 3, 5], dtype=np.int32)
    labels = cluster.labels_from_pairs(7, [(rows, cols)], 3)
    assert labels.tolist() == [0, 0, 0, 0, -1, -1, -1]


def test_union_find_joins_long_chains() -> None:
    # A path of 2000 points with every other edge in a separate chunk: many hooking rounds.
    n = 2000
    rows = np.arange(n - 1, dtype=np.int32)
    cols = rows + 1
    chunks = [(rows[::2].copy(), cols[::2].copy()), (rows[1::2].copy(), cols[1::2].copy())]
    assert (cluster.labels_from_pairs(n, chunks, 2) == 0).all()
