"""Store upkeep: compaction and indices, so reads stay fast as commits pile up.

Every Lance commit adds a fragment (an append, an update, a merge-insert) and reads touch every
fragment: measured at 10k items, 1,000 single-item commits made a lookup by id 25× slower
(8 → 190 ms) and an insert 10× slower. `optimize()` merges the fragments, folds new rows into the
existing indices (BM25, BTREE) and drops versions older than a week; it rewrites the table, so
its cost grows with the table (≈1–2 s at 100k items). It runs when a table has more fragments
than about √rows / 6, the count that balances its cost against what the extra fragments cost
the reads in between (≈0.2 ms per fragment per read, ~10 reads and ~2 commits per `dcpm add`),
when an index misses many rows (e.g. after a bulk import), or VERSIONS_LIMIT commits after
the last time (old versions slow reads too, and some tables' updates leave no fragments).
BTREE indices on the columns looked up by value (ids, content hashes, sessions) turn
`IN (...)` lookups and merge-inserts from scans into index probes (at 100k items: a lookup
by id 35 → 5 ms, an insert 48 → 12 ms).

Scheduled by need, not checked on every write: a commit adds at most one fragment, so after a
check that found a table F fragments short of its limit, nothing can be due before F more
commits (at most CHECK_EVERY, sooner while an index misses rows). Each table's next check is a
table version, kept in `.upkeep.json` in a local store so that every process (each
`dcpm add`, a server, a cron dream) shares the schedule; between checks, `maintain()` costs one
`stat` per table (a table without a commit since this process last looked is skipped) and a
version lookup per table that has one.
"""

from __future__ import annotations

import json
import os
from datetime import timedelta
from math import isqrt
from typing import TYPE_CHECKING

from dcpm_cli.errors import LockBusy
from dcpm_cli.store import schemas as S
from dcpm_cli.store.vectors import commit_stamp

if TYPE_CHECKING:
    from dcpm_cli.store.base import Tables

MIN_FRAGMENTS = 16  # a table may always have this many fragments before compaction is due
UNINDEXED_ROWS, UNINDEXED_SHARE = 1_000, 0.1  # also due once an index misses this many rows and share
INDEX_FROM_ROWS = 1_000  # below this many rows a scan is as fast as an index probe
CHECK_EVERY = 32  # commits between two checks of a table at most
CHECK_UNINDEXED_EVERY = 8  # ... while an index misses rows (a bulk import may be adding them)
# Commits after which a table is optimized even with few fragments, to drop old versions: each
# slows every read (~4 µs per lookup), and a table whose updates delete whole fragments (the
# raw inputs' statuses, committed by merge-insert in a group) never grows fragments. 1,000
# adds in a row grew to 1,300 versions and their p50 by 12%.
VERSIONS_LIMIT = 256
SCHEDULE_FILE = ".upkeep.json"
OPTIMIZED = "{}:optimized"  # the schedule's key for the version a table was last optimized at
KEEP_VERSIONS = timedelta(minutes=1)  # old table versions younger than this survive a compaction

# Columns looked up by exact value on every write or read (`IN (...)`, merge-insert keys).
BTREE_COLUMNS: dict[str, tuple[str, ...]] = {
    S.RAW: ("id", "content_hash", "session"),
    S.ITEMS: ("id", "content_hash"),
    S.EVENTS: ("id", "op"),  # op: every add asks whether an input was forgotten (op = FORGET)
    S.PASSAGES: ("id", "session"),
    S.NODES: ("id",),
    S.EDGES: ("id",),
}


def fragment_limit(rows: int) -> int:
    return max(MIN_FRAGMENTS, isqrt(rows) // 6)


def due(store: Tables, name: str) -> list[str]:
    """What `name` needs now: "index <column>" and/or "optimize"."""
    return _check(store, name)[0]


def _check(store: Tables, name: str, since: int = 0) -> tuple[list[str], int]:
    """What `name` needs now, and how many commits may pass before it could need anything;
    `since`: commits since it was last optimized."""
    if not store.has_table(name):
        return [], CHECK_EVERY
    t = store.table(name)
    stats = t.stats()
    rows, fragments = int(stats["num_rows"]), int(stats["fragment_stats"]["num_fragments"])
    indices = t.list_indices()
    todo = []
    if rows >= INDEX_FROM_ROWS:
        indexed = {tuple(i.columns) for i in indices}
        todo += [f"index {c}" for c in BTREE_COLUMNS.get(name, ()) if (c,) not in indexed]
    unindexed = max((int(i.num_unindexed_rows or 0) for i in indices), default=0)
    if (
        fragments > fragment_limit(rows)
        or (unindexed >= UNINDEXED_ROWS and unindexed > UNINDEXED_SHARE * rows)
        or since >= VERSIONS_LIMIT
    ):
        todo.append("optimize")
    slack = min(CHECK_EVERY, max(1, fragment_limit(rows) - fragments), max(1, VERSIONS_LIMIT - since))
    if unindexed or rows < INDEX_FROM_ROWS:
        slack = min(slack, CHECK_UNINDEXED_EVERY)
    return todo, slack


def maintain(store: Tables) -> dict[str, list[str]]:
    """Do what is due on the tables whose next check has come; skipped (returns {}) while
    another process writes."""
    schedule = _load_schedule(store)
    plan: dict[str, list[str]] = {}
    checked: dict[str, int] = {}
    seen: dict[str, int] = store.__dict__.setdefault("_upkeep_seen", {})
    for name in BTREE_COLUMNS:
        if not store.has_table(name):
            continue
        # A commit within the same clock tick as the last look is caught by the next commit:
        # upkeep can wait that long.
        stamp = commit_stamp(None if store.local_path is None else store.local_path / f"{name}.lance")
        if stamp is not None and seen.get(name) == stamp:
            continue  # no commit since this process last looked: nothing new can be due
        version = store.table(name).version
        optimized = OPTIMIZED.format(name)
        if optimized not in schedule:
            checked[optimized] = version  # counting starts here
        if version < schedule.get(name, 0):
            todo: list[str] = []  # not enough commits since the last check for anything to be due
        else:
            todo, slack = _check(store, name, version - schedule.get(optimized, version))
            if todo:
                plan[name] = todo
            else:
                checked[name] = version + slack
        if stamp is not None and not todo:
            seen[name] = stamp  # looked at this commit; a table with work due is looked at again
    if plan:
        done = _run(store, plan)
        for name in done:
            _, slack = _check(store, name)
            checked[name] = store.table(name).version + slack
            if "optimize" in done[name]:
                checked[OPTIMIZED.format(name)] = store.table(name).version
        plan = done
    if checked:
        _save_schedule(store, {**schedule, **checked})
    return plan


def _run(store: Tables, plan: dict[str, list[str]]) -> dict[str, list[str]]:
    from lancedb.index import BTree

    try:
        with store.write(timeout=1.0):
            for name, todo in plan.items():
                t = store.table(name)
                for step in todo:
                    if step.startswith("index "):
                        t.create_index(step.removeprefix("index "), config=BTree(), replace=True)
                    else:
                        # dcpm keeps its own history (event log, chains): Lance's old table
                        # versions only slow every read down (~4 µs each per lookup: 1,500 of
                        # them made a lookup by id 3.6 → 9.9 ms CPU), so keep a minute of them,
                        # far longer than any one read of another process lasts.
                        t.optimize(cleanup_older_than=KEEP_VERSIONS)
    except LockBusy:
        return {}  # a writer holds the store; the next write's upkeep does it
    return plan


def _load_schedule(store: Tables) -> dict[str, int]:
    """Each table's next check (a table version): shared through the store's directory, or
    this process's own for object storage."""
    mine: dict[str, int] = store.__dict__.setdefault("_upkeep_schedule", {})
    if store.local_path is None:
        return mine
    try:
        shared = json.loads((store.local_path / SCHEDULE_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return mine
    if not isinstance(shared, dict):
        return mine
    return {**mine, **{k: v for k, v in shared.items() if isinstance(v, int)}}


def _save_schedule(store: Tables, schedule: dict[str, int]) -> None:
    store.__dict__["_upkeep_schedule"] = schedule
    if store.local_path is None:
        return
    path = store.local_path / SCHEDULE_FILE
    tmp = path.with_name(f"{SCHEDULE_FILE}.{os.getpid()}")
    try:
        tmp.write_text(json.dumps(schedule), encoding="utf-8")
        os.replace(tmp, path)  # atomic: a reader sees the old schedule or the new one
    except OSError:
        pass  # a read-only store: checks just come as often as before
