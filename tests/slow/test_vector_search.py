"""Vector search is exact: both of its paths (LanceDB's scan on a table's first search, the
in-memory copy after that) give numpy's top-k, with filters, with indices built, and the copy
stays current when another Store or another process writes."""

from __future__ import annotations

import dataclasses
import json
import random
import subprocess
import sys
from datetime import timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from benchmarks.read_path import exact_topk, make_items
from benchmarks.system1 import distinct_sentences
from dcpm_cli.blas import BLAS_THREADS_FROM
from dcpm_cli.embed import Embedder
from dcpm_cli.models import DONE, ITEM_KINDS, PENDING, MemoryItem, RawInput
from dcpm_cli.store import Store
from dcpm_cli.store.upkeep import fragment_limit
from dcpm_cli.store.vectors import TableCopy

N_ITEMS, N_RAW = 3000, 600
RAW_FILTER = {"statuses": [PENDING], "roles": ["user"]}


class Corpus:
    """What was stored, kept aside for the exact answer."""

    def __init__(
        self, items: list[MemoryItem], vectors: np.ndarray, raws: list[RawInput], raw_vectors: np.ndarray
    ):
        self.items, self.vectors, self.raws, self.raw_vectors = items, vectors, raws, raw_vectors

    def top_items(
        self, q: np.ndarray, k: int, kinds: tuple[str, ...] = (), current_only: bool = False
    ) -> list[str]:
        mask = np.ones(len(self.items), dtype=bool)
        if kinds:
            mask &= np.array([i.kind in kinds for i in self.items])
        if current_only:
            mask &= np.array([i.superseded_by is None for i in self.items])
        return [self.items[i].id for i in exact_topk(self.vectors, q, k, mask)]

    def top_raw(self, q: np.ndarray, k: int) -> list[str]:
        mask = np.array([r.status == PENDING and r.role == "user" for r in self.raws])
        return [self.raws[i].id for i in exact_topk(self.raw_vectors, q, k, mask)]


@pytest.fixture(scope="module")
def pool(embedder: Embedder) -> tuple[list[int], np.ndarray]:
    """Real sentence vectors from the real model; stored rows are noisy copies of them."""
    pairs = distinct_sentences(random.Random(3), 150)
    return [s for s, _ in pairs], embedder.embed([t for _, t in pairs])


@pytest.fixture(scope="module")
def queries(embedder: Embedder) -> np.ndarray:
    return embedder.embed(
        [
            "how often do I go running?",
            "what do I eat for dinner",
            "my sister moved to a new city",
            "coffee in the afternoon",
            "which language am I learning",
            "when do I go to bed",
        ]
    )


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory, embedder: Embedder, pool: Any) -> tuple[Path, Corpus]:
    """A store of a few thousand items (a fifth superseded) and raw inputs, made once."""
    path = tmp_path_factory.mktemp("vectors") / "store"
    store = Store(str(path), embedder)
    items, vectors = make_items(N_ITEMS, pool[0], pool[1], seed=5)
    store.add_items(items, vectors)
    rng = np.random.default_rng(6)
    raw_vectors = vectors[rng.choice(N_ITEMS, N_RAW, replace=False)]
    raws = [
        RawInput(text=f"input {j}", role="user" if j % 3 else "assistant", session="s",
                 status=PENDING if j % 4 == 0 else DONE, position=f"t#{j}")
        for j in range(N_RAW)
    ]  # fmt: skip
    store.add_raw(raws, raw_vectors)
    return path, Corpus(items, vectors, raws, raw_vectors)


@pytest.fixture
def corpus_store(built: tuple[Path, Corpus], tmp_path: Path, embedder: Embedder) -> tuple[Store, Corpus]:
    """A private copy of the built store (tests write to it)."""
    import shutil

    path = tmp_path / "store"
    shutil.copytree(built[0], path)
    return Store(str(path), embedder, create=False), built[1]


PATHS = ["lancedb", "copy"]


def on_path(store: Store, path: str) -> Store:
    """Make every search of this Store take one path: LanceDB's scan, or the in-memory copy."""
    store._vectors.copy_on_search = 10**9 if path == "lancedb" else 1
    return store


@pytest.mark.parametrize("path", PATHS)
def test_items_match_exact_numpy(corpus_store: tuple[Store, Corpus], queries: np.ndarray, path: str) -> None:
    store, corpus = corpus_store
    on_path(store, path)
    for q in queries:
        for k in (1, 10, 40):
            hits = store.vector_search("items", q, k, kinds=list(ITEM_KINDS))
            assert [r.id for r, _ in hits] == corpus.top_items(q, k)
            scores = [s for _, s in hits]
            assert scores == sorted(scores, reverse=True)
            assert hits[0][1] == pytest.approx(float(np.max(corpus.vectors @ q)), abs=1e-5)


def test_a_store_large_enough_for_blas_threads_is_exact_too(
    tmp_path: Path, embedder: Embedder, pool: Any, queries: np.ndarray
) -> None:
    # Past BLAS_THREADS_FROM the product runs on BLAS's own threads: the same top-k.
    n = BLAS_THREADS_FROM // embedder.dim + 500
    items, vectors = make_items(n, pool[0], pool[1], seed=8)
    store = on_path(Store(str(tmp_path / "large"), embedder), "copy")
    store.add_items(items, vectors)
    corpus = Corpus(items, vectors, [], np.zeros((0, embedder.dim), dtype=np.float32))
    for q in queries:
        hits = store.vector_search("items", q, 40, kinds=list(ITEM_KINDS))
        assert [r.id for r, _ in hits] == corpus.top_items(q, 40)
    current = store.nearest_items_many(queries, 10, kinds=("fact",))
    for q, found in zip(queries, current, strict=True):
        assert [m.id for m, _ in found] == corpus.top_items(q, 10, ("fact",), current_only=True)


@pytest.mark.parametrize("path", PATHS)
def test_filters_are_respected(corpus_store: tuple[Store, Corpus], queries: np.ndarray, path: str) -> None:
    store, corpus = corpus_store
    on_path(store, path)
    by_id = {i.id: i for i in corpus.items}
    for q in queries:
        got = store.nearest_items(q, 20, kinds=("fact", "identity"))
        assert [m.id for m, _ in got] == corpus.top_items(q, 20, ("fact", "identity"), current_only=True)
        assert all(m.kind in ("fact", "identity") and m.superseded_by is None for m, _ in got)
        assert got[0][0] == by_id[got[0][0].id]  # whole rows, not just ids

        every = store.nearest_items(q, 20, current_only=False)
        assert [m.id for m, _ in every] == corpus.top_items(q, 20)

        raw = store.vector_search("raw", q, 10, **RAW_FILTER)
        assert [r.id for r, _ in raw] == corpus.top_raw(q, 10)
        assert all(r.status == PENDING and r.role == "user" for r, _ in raw)


@pytest.mark.parametrize("path", PATHS)
def test_few_or_no_rows_match(corpus_store: tuple[Store, Corpus], queries: np.ndarray, path: str) -> None:
    store, _ = corpus_store
    on_path(store, path)
    assert store.vector_search("items", queries[0], 10, kinds=["no such kind"]) == []
    assert store.vector_search("raw", queries[0], 10, statuses=["failed"]) == []
    n_pending_user = store.count("raw_inputs", "status = 'pending' AND role = 'user'")
    got = store.vector_search("raw", queries[0], 10_000, **RAW_FILTER)
    assert len(got) == n_pending_user


def test_exact_with_indices_built(corpus_store: tuple[Store, Corpus], queries: np.ndarray) -> None:
    """A vector index (approximate) never makes the search approximate; maintain()'s BTREE
    indices and compaction change nothing either."""
    from lancedb.index import IvfPq

    store, corpus = corpus_store
    store.table("items").create_index(
        "vector", config=IvfPq(distance_type="cosine", num_partitions=4, num_sub_vectors=8)
    )
    assert store.maintain()  # BTREE on ids (3000 rows ≥ the threshold)
    for path in PATHS:
        on_path(store, path)
        for q in queries:
            assert [r.id for r, _ in store.vector_search("items", q, 10)] == corpus.top_items(q, 10)


def test_the_copy_returns_the_rows_lancedb_returns(
    corpus_store: tuple[Store, Corpus], queries: np.ndarray, embedder: Embedder
) -> None:
    copy = on_path(corpus_store[0], "copy")
    scan = on_path(Store(copy.uri, embedder, create=False), "lancedb")
    for q in queries:
        for collection, filters in (("items", {}), ("raw", RAW_FILTER)):
            got, want = (
                copy.vector_search(collection, q, 10, **filters),
                scan.vector_search(collection, q, 10, **filters),
            )
            assert [r for r, _ in got] == [r for r, _ in want]
            assert [type(v) for v in vars(got[0][0]).values()] == [type(v) for v in vars(want[0][0]).values()]
            assert [s for _, s in got] == pytest.approx([s for _, s in want], abs=1e-5)
        when = copy.nearest_items(q, 1)[0][0].event_at
        assert when.tzinfo == scan.nearest_items(q, 1)[0][0].event_at.tzinfo


def test_callers_cannot_change_the_copy(corpus_store: tuple[Store, Corpus], queries: np.ndarray) -> None:
    store = on_path(corpus_store[0], "copy")
    first = store.vector_search("items", queries[0], 3)[0][0]
    kept = dataclasses.replace(first, raw_ids=list(first.raw_ids))
    first.raw_ids.append("r_someone_elses")
    first.text = "changed by a caller"
    assert store.vector_search("items", queries[0], 3)[0][0] == kept


def test_results_hold_when_the_copy_takes_over(
    corpus_store: tuple[Store, Corpus], queries: np.ndarray
) -> None:
    store, _ = corpus_store  # default rule: LanceDB's scan first, the copy from a later search
    runs = [store.vector_search("items", queries[0], 20) for _ in range(6)]
    for run in runs[1:]:
        assert [r.id for r, _ in run] == [r.id for r, _ in runs[0]]
        assert [s for _, s in run] == pytest.approx([s for _, s in runs[0]], abs=1e-5)


def test_maintain_compacts_and_indexes(corpus_store: tuple[Store, Corpus]) -> None:
    store, corpus = corpus_store
    for j in range(fragment_limit(N_ITEMS) + 1):
        store.add_items([_item(f"m_{j:04d}")], corpus.vectors[j : j + 1])
    items = store.table("items")
    assert items.stats()["fragment_stats"]["num_fragments"] > fragment_limit(N_ITEMS)
    done = store.maintain()
    assert done["items"] == ["index id", "index content_hash", "optimize"]
    assert items.stats()["fragment_stats"]["num_fragments"] <= 2
    assert {("id",), ("content_hash",)} <= {tuple(i.columns) for i in items.list_indices()}
    assert store.maintain() == {}  # nothing due any more
    assert store.count("items") == N_ITEMS + fragment_limit(N_ITEMS) + 1


# -- staying current ------------------------------------------------------------------------


def _item(id_: str, kind: str = "fact", text: str = "") -> MemoryItem:
    return MemoryItem(id=id_, kind=kind, text=text or f"text of {id_}")


def test_copy_sees_rows_added_by_another_store(
    corpus_store: tuple[Store, Corpus], queries: np.ndarray, embedder: Embedder
) -> None:
    reader, _ = corpus_store
    on_path(reader, "copy")
    q = queries[0]
    before = reader.vector_search("items", q, 5)
    writer = Store(reader.uri, embedder, create=False)
    writer.add_items([_item("m_new")], q[None, :])
    got = reader.vector_search("items", q, 5)
    assert got[0][0].id == "m_new" and got[0][1] == pytest.approx(1.0, abs=1e-5)
    assert [r.id for r, _ in got[1:]] == [r.id for r, _ in before[:4]]


def test_copy_sees_updates_supersedes_and_compaction(
    corpus_store: tuple[Store, Corpus], queries: np.ndarray, embedder: Embedder
) -> None:
    reader, corpus = corpus_store
    on_path(reader, "copy")
    writer = Store(reader.uri, embedder, create=False)
    q = queries[1]
    top = reader.nearest_items(q, 3)[0][0]

    writer.set_superseded_by(top.id, "m_elsewhere")  # an update: the row moves
    assert top.id not in [m.id for m, _ in reader.nearest_items(q, 10)]
    assert reader.nearest_items(q, 1, current_only=False)[0][0].superseded_by == "m_elsewhere"

    row = [i.id for i in corpus.items].index(top.id)
    writer.replace_items([_item(top.id, kind=top.kind, text="rewritten text")], corpus.vectors[row : row + 1])
    hit = reader.nearest_items(q, 1)[0][0]
    assert (hit.id, hit.text) == (top.id, "rewritten text")

    for j in range(fragment_limit(N_ITEMS) + 1):  # many small commits, then compaction
        writer.add_items([_item(f"m_{j:04d}")], corpus.vectors[j : j + 1])
    assert "optimize" in writer.maintain()["items"]
    reference = on_path(Store(reader.uri, embedder, create=False), "lancedb")
    for q in queries:
        want = [r.id for r, _ in reference.vector_search("items", q, 10)]
        assert [r.id for r, _ in reader.vector_search("items", q, 10)] == want


def test_copy_sees_a_commit_behind_an_old_versions_mtime(
    corpus_store: tuple[Store, Corpus], queries: np.ndarray, embedder: Embedder
) -> None:
    """The copy skips asking LanceDB for the version while `_versions/` keeps an old mtime:
    a commit must change that mtime."""
    import os

    reader, _ = corpus_store
    on_path(reader, "copy")
    versions = Path(reader.table("items").uri) / "_versions"
    old = versions.stat().st_mtime - 3600
    os.utime(versions, (old, old))
    q = queries[3]
    reader.vector_search("items", q, 5)
    reader.vector_search("items", q, 5)  # answered without asking LanceDB
    Store(reader.uri, embedder, create=False).add_items([_item("m_behind")], q[None, :])
    assert reader.vector_search("items", q, 1)[0][0].id == "m_behind"


def test_copy_sees_another_process(corpus_store: tuple[Store, Corpus], queries: np.ndarray) -> None:
    reader, _ = corpus_store
    on_path(reader, "copy")
    q = queries[2]
    reader.vector_search("items", q, 5)
    script = """
import json, sys
import numpy as np
from dcpm_cli.models import MemoryItem
from dcpm_cli.store import Store

class Meta:  # Store needs only the embedder's id and dimension to open
    model_id, dim = "all-MiniLM-L6-v2", 384

store = Store(sys.argv[1], Meta(), create=False)
q = np.array(json.loads(sys.argv[2]), dtype=np.float32)
item = MemoryItem(id="m_from_elsewhere", kind="identity", text="written by another process")
store.add_items([item], q[None, :])
"""
    subprocess.run(
        [sys.executable, "-c", script, reader.uri, json.dumps(q.tolist())], check=True, timeout=300
    )
    hits = reader.nearest_items(q, 3, kinds=("identity",))
    assert hits[0][0].id == "m_from_elsewhere"
    assert hits[0][0].text == "written by another process"


@pytest.mark.parametrize("small", [False, True])
def test_table_copy_follows_every_kind_of_change(tmp_path: Path, small: bool) -> None:
    """The copy against a plain LanceDB table: appends, updates, deletes, a restore,
    merge-inserts, compaction and schema changes, each checked against a fresh exact answer;
    with its defaults, and with tiny limits (rows added by refreshes folded in at once, rows
    turned into Python objects as hits come and forgotten often)."""
    import lancedb
    import pyarrow as pa

    rng = np.random.default_rng(0)
    db = lancedb.connect(str(tmp_path / "db"), read_consistency_interval=timedelta(0))

    def rows(ids: list[str], tag: str = "a") -> pa.Table:
        v = rng.normal(size=(len(ids), 8)).astype(np.float32)
        return pa.table(
            {
                "id": ids,
                "tag": [tag] * len(ids),
                "vector": pa.FixedSizeListArray.from_arrays(pa.array(v.ravel()), 8),
            }
        )

    table = db.create_table("t", rows([f"r{i}" for i in range(50)]))
    copy = TableCopy(db.open_table("t"))
    if small:
        copy.tail_rows, copy.memo_rows = 1, 10

    def check(tag: str = "tag") -> None:
        data = table.to_arrow()
        m = np.asarray(data["vector"].combine_chunks().flatten()).reshape(-1, 8)
        m = m / np.linalg.norm(m, axis=1, keepdims=True)
        ids, tags = data["id"].to_pylist(), data[tag].to_pylist()
        for _ in range(5):
            q = rng.normal(size=8).astype(np.float32)
            q /= np.linalg.norm(q)
            copy.refresh(table.version)
            got = [r["id"] for r, _ in copy.search(q, 7, ["id", tag], [])]
            assert got == [ids[i] for i in exact_topk(m, q, 7)]
            tagged = [r["id"] for r, _ in copy.search(q, 100, ["id", tag], [(tag, ("b",))])]
            assert sorted(tagged) == sorted(i for i, t in zip(ids, tags, strict=True) if t == "b")

    check()
    table.add(rows([f"n{i}" for i in range(5)], "b"))
    check()
    table.update(where="id = 'r3'", values={"tag": "b"})
    check()
    before_delete = table.version
    table.delete("id IN ('r1', 'n2')")
    check()
    table.restore(before_delete)  # the deleted rows come back at their old addresses
    check()
    table.merge_insert("id").when_matched_update_all().when_not_matched_insert_all().execute(
        rows(["r4", "x1"], "b")
    )
    check()
    table.optimize()
    check()
    table.add_columns({"extra": "cast(1 as int)"})
    check()
    table.alter_columns({"path": "tag", "rename": "label"})  # same rows, same addresses
    check("label")
