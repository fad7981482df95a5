"""Store upkeep: compaction and indices, so reads stay fast as commits pile up.

Every Lance commit adds a fragment (an append, an update, a merge-insert) and reads touch every
fragment: measured at 10k items, 1,000 single-item commits made a lookup by id 25× slower
(8 → 190 ms) and an insert 10× slower. `optimize()` merges the fragments, folds new rows into the
existing indices (BM25, BTREE) and drops versions older than a week; it rewrites the table, so
its cost grows with the table (≈1–2 s at 100k items). It runs when a table has more fragments
than about √rows / 6, the count that balances its cost against what the extra fragments cost
the reads in between (≈0.2 ms per fragment per read, ~10 reads and ~2 commits per `dcpm add`),
or when an index misses many rows (e.g. after a bulk import). BTREE indices on the columns
looked up by value (ids, content hashes, sessions) turn `IN (...)` lookups and merge-inserts
from scans into index probes (at 100k items: a lookup by id 35 → 5 ms, an insert 48 → 12 ms).
"""

from __future__ import annotations

from datetime import timedelta
from math import isqrt
from typing import TYPE_CHECKING

from dcpm_cli.errors import LockBusy
from dcpm_cli.store import schemas as S

if TYPE_CHECKING:
    from dcpm_cli.store import Store

MIN_FRAGMENTS = 16  # a table may always have this many fragments before compaction is due
UNINDEXED_ROWS, UNINDEXED_SHARE = 1_000, 0.1  # also due once an index misses this many rows and share
INDEX_FROM_ROWS = 1_000  # below this many rows a scan is as fast as an index probe

# Columns looked up by exact value on every write or read (`IN (...)`, merge-insert keys).
BTREE_COLUMNS: dict[str, tuple[str, ...]] = {
    S.RAW: ("id", "content_hash", "session"),
    S.ITEMS: ("id", "content_hash"),
    S.EVENTS: ("id",),
    S.PASSAGES: ("id", "session"),
    S.NODES: ("id",),
    S.EDGES: ("id",),
}


def fragment_limit(rows: int) -> int:
    return max(MIN_FRAGMENTS, isqrt(rows) // 6)


def due(store: Store, name: str) -> list[str]:
    """What `name` needs now: "index <column>" and/or "optimize"."""
    if not store.has_table(name):
        return []
    t = store.table(name)
    stats = t.stats()
    rows, fragments = int(stats["num_rows"]), int(stats["fragment_stats"]["num_fragments"])
    indices = t.list_indices()
    todo = []
    if rows >= INDEX_FROM_ROWS:
        indexed = {tuple(i.columns) for i in indices}
        todo += [f"index {c}" for c in BTREE_COLUMNS.get(name, ()) if (c,) not in indexed]
    unindexed = max((int(i.num_unindexed_rows or 0) for i in indices), default=0)
    if fragments > fragment_limit(rows) or (
        unindexed >= UNINDEXED_ROWS and unindexed > UNINDEXED_SHARE * rows
    ):
        todo.append("optimize")
    return todo


def maintain(store: Store) -> dict[str, list[str]]:
    """Do what is due on every table; skipped (returns {}) while another process writes."""
    plan = {name: todo for name in BTREE_COLUMNS if (todo := due(store, name))}
    if not plan:
        return {}
    from lancedb.index import BTree

    try:
        with store.lock(timeout=1.0):
            for name, todo in plan.items():
                t = store.table(name)
                for step in todo:
                    if step.startswith("index "):
                        t.create_index(step.removeprefix("index "), config=BTree(), replace=True)
                    else:
                        # dcpm keeps its own history (event log, chains): Lance's old table
                        # versions only slow every commit down, so keep an hour of them.
                        t.optimize(cleanup_older_than=timedelta(hours=1))
    except LockBusy:
        return {}  # a writer holds the store; the next write's upkeep does it
    return plan
