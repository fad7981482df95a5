"""The write path's design for speed: one neighbour search per input, upkeep scheduled by need.
(Its speed itself is measured by `python -m benchmarks.system1`, never asserted here.)"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pytest

from dcpm_cli.embed import Embedder, Memo
from dcpm_cli.models import DONE, MemoryItem, RawInput
from dcpm_cli.store import Store
from dcpm_cli.store.upkeep import SCHEDULE_FILE, fragment_limit

ROWS = 1_200  # past the row count from which ids get BTREE indices


def _unit(rng: np.random.Generator, n: int) -> np.ndarray:
    v = rng.standard_normal((n, 384)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


@pytest.fixture
def filled(tmp_path: Path, embedder: Embedder) -> tuple[Store, np.ndarray]:
    rng = np.random.default_rng(3)
    vectors = _unit(rng, ROWS)
    kinds = ["fact", "identity", "summary"]
    items = [MemoryItem(id=f"m_{i:05d}", kind=kinds[i % 3], text=f"item {i}") for i in range(ROWS)]
    for i in range(0, ROWS, 40):  # some superseded: not current
        items[i].superseded_by = f"m_{i + 1:05d}"
    store = Store(str(tmp_path / "store"), embedder)
    store.add_items(items, vectors)
    return store, vectors


@pytest.mark.parametrize("copy", [False, True])
def test_one_search_for_many_vectors_matches_one_search_each(filled, copy: bool) -> None:
    store, vectors = filled
    store._vectors.copy_on_search = 1 if copy else 10**9  # the in-memory copy, or LanceDB's scan
    queries = vectors[[5, 76, 300]] + 0.05 * _unit(np.random.default_rng(4), 3)

    many = store.nearest_items_many(queries, 5, kinds=("fact", "identity"))
    one_each = [store.nearest_items(q, 5, kinds=("fact", "identity")) for q in queries]

    assert [[i.id for i, _ in hits] for hits in many] == [[i.id for i, _ in hits] for hits in one_each]
    scores = [s for hits in many for _, s in hits]
    assert scores == pytest.approx([s for hits in one_each for _, s in hits], abs=1e-5)
    assert all(i.kind != "summary" and i.superseded_by is None for hits in many for i, _ in hits)
    assert many[1][0][0].id == "m_00076"


def test_upkeep_is_scheduled_by_need_and_shared_by_every_process(filled, embedder: Embedder) -> None:
    store, vectors = filled
    assert store.maintain()["items"] == ["index id", "index content_hash"]
    schedule = json.loads((Path(store.uri) / SCHEDULE_FILE).read_text())
    version = store.table("items").version
    assert version < schedule["items"] <= version + fragment_limit(ROWS)  # the next check
    assert store.maintain() == {}

    # Small commits, each from a new Store as each `dcpm add` process makes: the schedule is
    # shared through the store, and compaction still comes when the fragments call for it.
    done: list[str] = []
    for j in range(2 * fragment_limit(ROWS)):
        other = Store(store.uri, embedder, create=False)
        other.add_items([MemoryItem(id=f"m_new{j:03d}", kind="fact", text=f"new {j}")], vectors[j : j + 1])
        done += other.maintain().get("items", [])
        fragments = store.table("items").stats()["fragment_stats"]["num_fragments"]
        assert fragments <= fragment_limit(ROWS) + 1
    assert done.count("optimize") >= 1
    assert store.count("items") == ROWS + 2 * fragment_limit(ROWS)


def test_a_table_whose_updates_leave_few_fragments_is_still_optimized_for_its_versions(
    filled, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Updates that delete whole fragments leave the fragment count flat, but every commit is
    a version that later reads pay for: upkeep counts them too."""
    from dcpm_cli.store import upkeep

    monkeypatch.setattr(upkeep, "VERSIONS_LIMIT", 6)
    store, _ = filled
    store.maintain()  # indices; the count of versions starts
    done: list[str] = []
    for j in range(8):
        store.set_superseded_by("m_00005", f"m_{j:05d}")  # rewrites one row, again and again
        done += store.maintain().get("items", [])
        assert store.table("items").stats()["fragment_stats"]["num_fragments"] <= 3
    assert done == ["optimize"]


def test_a_warm_store_answers_lookups_from_memory_as_lancedb_does(filled, embedder: Embedder) -> None:
    """A warm process (an agent, a batch) reads items by id or hash, a session's last inputs
    and the passages' inputs from its in-memory copies; what another process writes meanwhile
    (appends, updates: Lance rewrites the row) must show at once, as it does from LanceDB."""
    store, vectors = filled
    store._vectors.copy_on_search = 1  # warm: copies made on first use
    other = Store(store.uri, embedder)
    other._vectors.copy_on_search = 10**9  # LanceDB every time: the reference
    store.nearest_items(vectors[0], 3)  # the items copy exists from here on

    def same(ids: list[str]) -> None:
        assert store.get_items(ids) == other.get_items(ids)
        hashes = [i.content_hash for i in other.get_items(ids).values()]
        assert store.current_items_by_hash(hashes) == other.current_items_by_hash(hashes)

    ids = ["m_00001", "m_00002", "m_00040", "m_new"]
    same(ids)
    other.add_items([MemoryItem(id="m_new", kind="fact", text="new")], vectors[:1])
    other.set_superseded_by("m_00001", "m_new")
    changed = other.get_items(["m_00002"])["m_00002"]
    changed.text = "item 2, rewritten"
    other.replace_items([changed], vectors[2:3])
    same(ids)
    assert store.get_items(["m_00001"])["m_00001"].superseded_by == "m_new"
    assert store.current_items_by_hash([changed.content_hash]) == {changed.content_hash: "m_00002"}

    t0 = datetime(2026, 6, 1, 8, tzinfo=UTC)
    turns = [RawInput(f"turn {n}", session="s1", said_at=t0 + timedelta(days=3 * n)) for n in range(7)]
    with other.write():
        other.add_raw(turns[:4], Memo(embedder).embed([t.text for t in turns[:4]]))
    for _ in range(2):  # twice: the raw table's copy is made on a later use
        assert store.recent_raw("s1", turns[3].said_at, 6) == other.recent_raw("s1", turns[3].said_at, 6)
    hashes = [t.content_hash for t in turns]
    assert store.known_raw_hashes(hashes) == other.known_raw_hashes(hashes) == set(hashes[:4])
    with other.write():
        other.set_raw_status(turns[1].id, DONE)
    with store.write():  # the warm store writes the next turns and their passages from memory
        store.add_raw(turns[4:], Memo(embedder).embed([t.text for t in turns[4:]]))
    recent = store.recent_raw("s1", turns[6].said_at + timedelta(seconds=1), 6)
    assert recent == other.recent_raw("s1", turns[6].said_at + timedelta(seconds=1), 6)
    assert [r.text for r in recent] == [f"turn {n}" for n in range(1, 7)] and recent[0].status == DONE
    assert store.inputs_without_passage() == {}
    with other.write():
        assert other.index_passages(["s1"]) == 0  # LanceDB's reading finds them all in place

    # The warm store's own commits are taken into its copies as made (not read back), and
    # what another process writes after them is still seen.
    fresh = _unit(np.random.default_rng(9), 2)  # far from every stored vector
    with store.write():
        store.add_items([MemoryItem(id="m_mine", kind="fact", text="mine")], fresh[:1])
        store.set_superseded_by("m_new", "m_mine")
        store.set_raw_status(turns[5].id, DONE, "", 2)
    ids += ["m_mine"]
    same(ids)
    assert store.nearest_items(fresh[0], 1)[0][0].id == "m_mine"
    assert store.get_items(["m_new"])["m_new"].superseded_by == "m_mine"
    assert store.recent_raw("s1", turns[6].said_at, 6) == other.recent_raw("s1", turns[6].said_at, 6)
    other.set_superseded_by("m_mine", "m_00003")
    other.add_items([MemoryItem(id="m_theirs", kind="fact", text="theirs")], fresh[1:])
    same([*ids, "m_theirs"])
    assert [i.id for i, _ in store.nearest_items(fresh[1], 1)] == ["m_theirs"]
    assert store.nearest_items(fresh[0], 1, current_only=False)[0][0].superseded_by == "m_00003"


def test_the_embedding_memo_computes_each_text_once() -> None:
    calls: list[list[str]] = []

    class Counting:
        model_id, dim = "counting", 3

        def embed(self, texts: list[str]) -> np.ndarray:
            calls.append(list(texts))
            return np.array([[len(t), 1.0, 0.0] for t in texts], dtype=np.float32)

    memo = Memo(Counting(), size=2)
    first = memo.embed(["a", "bb", "a"])
    first[0, 0] = 99.0  # a caller's change never reaches the memo
    again = memo.embed(["bb", "a"])
    assert calls == [["a", "bb"]]
    assert again.tolist() == [[2.0, 1.0, 0.0], [1.0, 1.0, 0.0]]
    memo.embed(["ccc"])  # the oldest goes
    memo.embed(["a"])
    assert calls == [["a", "bb"], ["ccc"], ["a"]]
    assert memo.embed([]).shape == (0, 3)


PROBE = """
import sys
from dcpm_cli.embed import get_embedder
vector = get_embedder("minilm").embed(["green tea after lunch"])[0]
print("onnx" in sys.modules, round(float(vector @ vector), 4))
"""


def test_a_cold_process_reuses_the_built_graph_without_importing_onnx(dcpm_home: Path) -> None:
    import os
    import subprocess
    import sys

    env = {**os.environ, "DCPM_HOME": str(dcpm_home)}
    first, second = (
        subprocess.run([sys.executable, "-c", PROBE], env=env, capture_output=True, text=True, check=True)
        for _ in range(2)
    )

    assert first.stdout.split() == ["True", "1.0"]  # built once, with onnx
    assert second.stdout.split() == ["False", "1.0"]  # then read from $DCPM_HOME/cache
    assert list((dcpm_home / "cache").glob("minilm-graph-*.onnx"))
