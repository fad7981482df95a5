"""Group commit: the derived writes of many inputs (items, chain links, events, statuses,
passages) committed together, one Lance commit per table, instead of five or six per input.

Why: every Lance commit costs 10–25 ms on a local disk, plus its share of the compactions
that the small fragments it leaves make due; the writer made five or six per input besides
the raw input itself. A warm writer that extracts many inputs in a row (`dcpm add --file`,
`dcpm process`, the MCP server's worker) opens a group (`Store.group()`); inside it, what
the writer writes for an input under the lock (`Store.staging()`) is held in memory and
appended as one line to a log file before the lock is released, and every `GROUP_INPUTS`
inputs or `GROUP_SECONDS` (and when the group closes) one flush commits it all.

What stays true:
- Raw inputs are never staged: each is committed before any LLM call, as before (their
  passages, which are rebuilt from them, wait for the flush).
- Nothing staged is lost: the log line is on disk (fsynced) before the lock is released. A
  writer that dies leaves its log; the next process to take the lock replays it, verb by
  verb (every verb is idempotent), before it writes anything — as it does for any other
  writer's log it finds. So no process ever decides against a state that misses staged rows:
  the writer that staged them reads them through the overlay below, every other writer has
  folded them into the tables first.
- The staging writer's own reads (`get_items`, `current_items_by_hash`, the neighbour
  searches, `get_raw`) see its staged rows: `Staged` is an overlay over the tables.
- Other processes' readers (`dcpm recall`, `check`) see an input's items when its group is
  flushed: at most `GROUP_SECONDS` behind (or until the group closes), the raw input at once.
- Only a local store groups: on object storage another machine could not replay the log.

The log lives in `.staged/<owner>.jsonl`; replay (`fold`) is the slow path, taken only when
another writer interleaves or a writer died.
"""

from __future__ import annotations

import base64
import contextlib
import dataclasses
import json
import os
import time
from collections.abc import Iterator, Sequence
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dcpm_cli.models import Event, MemoryItem

if TYPE_CHECKING:
    import numpy as np

GROUP_INPUTS = 32  # flush once this many inputs are staged ...
GROUP_SECONDS = 2.0  # ... or the oldest staged one is this old
LOG_VERSION = 1


class Staged:
    """One writer's staged writes: the overlay its reads consult, and the ops of its log."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.items: dict[str, MemoryItem] = {}  # new, or rewritten whole (an UPDATE)
        self.vectors: dict[str, np.ndarray] = {}
        self.new: set[str] = set()  # of those, the ones the table does not hold yet
        self.links: dict[str, str] = {}  # item in the table → its new superseded_by
        self.events: dict[str, Event] = {}
        self.status: dict[str, dict[str, Any]] = {}  # raw id → new status, error, attempts
        self.sessions: set[str] = set()  # whose passages are rebuilt at the flush
        self.since = 0.0  # monotonic time of the first staged write
        self.record: list[list[Any]] = []  # ops of the section being staged (one log line)

    def __bool__(self) -> bool:
        return bool(self.items or self.links or self.events or self.status or self.sessions)

    def due(self) -> bool:
        """Time to flush: GROUP_INPUTS inputs finished, or the oldest write GROUP_SECONDS old."""
        return len(self.status) >= GROUP_INPUTS or (
            bool(self) and time.monotonic() - self.since >= GROUP_SECONDS
        )

    # -- staging (each also records its op for the log) -----------------------------------

    def add_items(self, items: Sequence[MemoryItem], vectors: np.ndarray) -> None:
        for item, vector in zip(items, vectors, strict=True):
            self.items[item.id] = dataclasses.replace(item)
            self.vectors[item.id] = vector
            self.new.add(item.id)
        self.record.append(["add_items", [_item_json(i) for i in items], _vectors_json(vectors)])

    def replace_items(self, items: Sequence[MemoryItem], vectors: np.ndarray) -> None:
        for item, vector in zip(items, vectors, strict=True):
            if item.id not in self.new:
                item = dataclasses.replace(item, superseded_by=self.links.pop(item.id, item.superseded_by))
            self.items[item.id] = dataclasses.replace(item)
            self.vectors[item.id] = vector
        self.record.append(["replace_items", [_item_json(i) for i in items], _vectors_json(vectors)])

    def set_superseded_by(self, old_id: str, new_id: str) -> None:
        if old_id in self.items:
            self.items[old_id].superseded_by = new_id
        else:
            self.links[old_id] = new_id
        self.record.append(["set_superseded_by", old_id, new_id])

    def log_events(self, events: Sequence[Event]) -> None:
        for e in events:
            self.events.setdefault(e.id, e)
        self.record.append(["log_events", [_plain(fields(e)) for e in events]])

    def index_passages(self, sessions: Sequence[str]) -> None:
        self.sessions.update(sessions)
        self.record.append(["index_passages", sorted(sessions)])

    def set_raw_status(self, raw_id: str, values: dict[str, Any]) -> None:
        self.status[raw_id] = {**self.status.get(raw_id, {}), **values}
        self.record.append(["set_raw_status", raw_id, values])

    # -- the overlay ----------------------------------------------------------------------

    def patch_item(self, row: dict[str, Any]) -> dict[str, Any] | None:
        """A row read from the table as this writer sees it: None when the overlay holds the
        item itself (the caller takes it from `item_rows`), else with its staged link."""
        if row["id"] in self.items:
            return None
        if row["id"] in self.links:
            return {**row, "superseded_by": self.links[row["id"]]}
        return row

    def item_rows(self, column: str, values: Sequence[str]) -> list[dict[str, Any]]:
        """Staged items whose `column` is one of `values`, as table rows."""
        wanted = set(values)
        rows = [_item_row(i) for i in self.items.values()]
        return [r for r in rows if r[column] in wanted]

    def patch_raw(self, row: dict[str, Any]) -> dict[str, Any]:
        return {**row, **self.status[row["id"]]} if row["id"] in self.status else row


# -- the log ------------------------------------------------------------------------------


def write_record(path: Path, record: list[list[Any]]) -> None:
    """Append one section's ops as one line, on disk before the lock is released."""
    path.parent.mkdir(parents=True, exist_ok=True)
    line = json.dumps({"v": LOG_VERSION, "ops": record}, separators=(",", ":")) + "\n"
    with open(path, "a", encoding="utf-8") as f:
        f.write(line)
        f.flush()
        os.fsync(f.fileno())


def read_log(path: Path) -> list[list[Any]]:
    """The ops of a log, in order. A line cut short (the writer died writing it) ends it: that
    section's rows were never visible to anyone, and its input is still pending."""
    ops: list[list[Any]] = []
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError:
        return ops
    for line in lines:
        try:
            body = json.loads(line)
        except ValueError:
            break
        if not isinstance(body, dict) or body.get("v") != LOG_VERSION:
            raise ValueError(f"{path.name}: not a log this dcpm wrote")
        ops.extend(body["ops"])
    return ops


def replay(store: Any, ops: Sequence[list[Any]]) -> None:
    """Apply a log's ops to the tables through the store's own verbs, in order. Each verb is
    idempotent, so a replay cut short is simply run again."""
    import numpy as np

    for op in ops:
        name, args = op[0], op[1:]
        if name in ("add_items", "replace_items"):
            items = [_item_from_json(x) for x in args[0]]
            vectors = np.asarray(_vectors_from_json(args[1], store.dim))
            getattr(store, name)(items, vectors)
        elif name == "set_superseded_by":
            store.set_superseded_by(args[0], args[1])
        elif name == "log_events":
            store.log_events([Event(**_dates(x, ("at",))) for x in args[0]])
        elif name == "index_passages":
            store.index_passages(args[0])
        elif name == "set_raw_status":
            values = args[1]
            store.set_raw_status(args[0], values["status"], values["error"], values.get("attempts"))
        else:
            raise ValueError(f"unknown op {name!r} in a staged-writes log")


class StagingVerbs:
    """Group commit, mixed into `Store` (which provides the verbs it stages and replays)."""

    local_path: Path | None
    dim: int

    if TYPE_CHECKING:  # provided by Store / its other mixins

        def _state_dir(self, kind: str) -> Path: ...
        def write(self, kind: Any = ..., *, timeout: float = 600.0) -> Any: ...
        def _commit_staged(self, staged: Staged) -> None: ...
        def maintain(self) -> dict[str, list[str]]: ...

    @property
    def _staged(self) -> Staged | None:
        """This writer's staged writes, while a group is open."""
        return self.__dict__.get("_group_staged")

    def _staging_now(self) -> Staged | None:
        """Where a write verb goes: the staged writes, inside `staging()`; else None (commit)."""
        return self._staged if self.__dict__.get("_staging_depth") else None

    @contextlib.contextmanager
    def group(self) -> Iterator[None]:
        """Hold the derived writes of the inputs extracted in this block for group commits
        (a local store only); the block's end commits what is left."""
        depth = self.__dict__.get("_group_depth", 0)
        if depth == 0 and self.local_path is not None:
            from dcpm_cli.store.claims import new_owner

            name = new_owner().replace(":", "_") + ".jsonl"
            self.__dict__["_group_staged"] = Staged(self._state_dir("staged") / name)
        self.__dict__["_group_depth"] = depth + 1
        try:
            yield
        finally:
            self.__dict__["_group_depth"] = depth
            if depth == 0 and self._staged is not None:
                try:
                    if self._staged:
                        with self.write():  # also when the caller holds it already
                            self.flush_staged()
                finally:
                    self.__dict__.pop("_group_staged", None)

    @contextlib.contextmanager
    def staging(self) -> Iterator[None]:
        """One input's writes (the caller is in a write section, `Write.GROUP`): staged
        when a group is open, its log line written at the end, and the group committed if it
        is due; else committed as they come. A block that raises stages nothing (its input
        stays pending)."""
        staged = self._staged
        if staged is None:
            yield
            return
        before = _snapshot(staged)
        self.__dict__["_staging_depth"] = 1
        try:
            yield
        except BaseException:
            _restore(staged, before)
            raise
        finally:
            self.__dict__["_staging_depth"] = 0
        try:
            self.write_staged()
        except BaseException:
            _restore(staged, before)
            raise
        if staged.due():
            self.flush_staged()

    def write_staged(self) -> None:
        """Put the ops staged so far in this section on disk now (one log line)."""
        staged = self._staged
        if staged is None or not staged.record:
            return
        write_record(staged.path, staged.record)
        staged.record = []
        if not staged.since:
            staged.since = time.monotonic()

    @property
    def grouped(self) -> bool:
        """Whether writes made inside `staging()` are staged (a group is open)."""
        return self._staged is not None

    def flush_staged(self) -> None:
        """Commit this writer's staged writes now (the caller holds the lock)."""
        staged = self._staged
        if staged is None or not staged:
            return
        if not staged.path.exists():  # another process replayed the log: it is all in the tables
            self.__dict__["_group_staged"] = Staged(staged.path)
            return
        try:
            self._commit_staged(staged)
        except BaseException:
            # Cut short: which commits landed is unknown, so the log is left for a replay (which
            # is idempotent) under another name, and this writer starts afresh.
            with contextlib.suppress(OSError):
                staged.path.rename(staged.path.with_name("failed-" + staged.path.name))
            self.__dict__["_group_staged"] = Staged(staged.path)
            raise
        staged.path.unlink(missing_ok=True)
        self.__dict__["_group_staged"] = Staged(staged.path)
        # Upkeep (compaction, indices) at the flush, not after each input: its cost then falls
        # on the add that already pays for the flush, instead of on another one in sixteen.
        self.maintain()

    def settle(self, *, flush: bool, fold: bool) -> None:
        """On taking the lock: drop an overlay another process has replayed; replay every other
        writer's log (`fold`); commit this writer's own staged writes (`flush`)."""
        staged = self._staged
        if staged is not None and staged and not staged.path.exists():
            self.__dict__["_group_staged"] = Staged(staged.path)  # replayed by another process
        if fold:
            self.fold_logs()
        if flush:
            self.flush_staged()

    def fold_logs(self) -> int:
        """Replay the logs of other writers (live ones that interleave with us, or dead ones);
        how many. The caller holds the lock."""
        if self.local_path is None:
            return 0
        folder = self._state_dir("staged")
        try:
            logs = sorted(p for p in folder.iterdir() if p.suffix == ".jsonl")
        except OSError:
            return 0
        mine = self._staged.path if self._staged is not None else None
        done = 0
        for path in logs:
            if path == mine:
                continue
            # A log this dcpm cannot read is dropped rather than stopping every writer at the
            # lock. Nothing said is lost: the inputs whose statuses it held are still pending
            # in the table, and are extracted again.
            with contextlib.suppress(KeyError, TypeError, ValueError, IndexError):
                replay(self, read_log(path))
            path.unlink(missing_ok=True)
            done += 1
        self.__dict__["_replayed_logs"] = self.__dict__.get("_replayed_logs", 0) + done
        return done

    def staged_logs(self) -> list[Path]:
        """Logs of staged writes waiting in this store: a live writer's group, or one left by a
        writer that died (the next lock replays them)."""
        if self.local_path is None:
            return []
        folder = self._state_dir("staged")
        return sorted(folder.glob("*.jsonl")) if folder.is_dir() else []


# -- serialising ----------------------------------------------------------------------------


def fields(obj: Any) -> dict[str, Any]:
    """A dataclass's fields as a dict, lists copied (`dataclasses.asdict` deep-copies every
    value: ~20 ms per input here, for rows of strings and timestamps)."""
    return {
        f.name: list(v) if isinstance(v := getattr(obj, f.name), list) else v for f in dataclasses.fields(obj)
    }


def _snapshot(s: Staged) -> dict[str, Any]:
    return {
        "items": {k: dataclasses.replace(v) for k, v in s.items.items()},
        "vectors": dict(s.vectors),
        "new": set(s.new),
        "links": dict(s.links),
        "events": dict(s.events),
        "status": {k: dict(v) for k, v in s.status.items()},
        "sessions": set(s.sessions),
        "since": s.since,
    }


def _restore(s: Staged, snap: dict[str, Any]) -> None:
    for name, value in snap.items():
        setattr(s, name, value)
    s.record = []


def _plain(d: dict[str, Any]) -> dict[str, Any]:
    return {k: v.isoformat() if isinstance(v, datetime) else v for k, v in d.items()}


def _dates(d: dict[str, Any], names: Sequence[str]) -> dict[str, Any]:
    return {k: datetime.fromisoformat(v) if k in names and v else v for k, v in d.items()}


_ITEM_DATES = ("event_at", "created_at", "updated_at")


def _item_json(item: MemoryItem) -> dict[str, Any]:
    return _plain(fields(item))


def _item_from_json(d: dict[str, Any]) -> MemoryItem:
    return MemoryItem(**_dates(d, _ITEM_DATES))


def _item_row(item: MemoryItem) -> dict[str, Any]:
    return {**fields(item), "content_hash": item.content_hash}


def _vectors_json(vectors: np.ndarray) -> str:
    import numpy as np

    return base64.b64encode(np.ascontiguousarray(vectors, dtype="<f4").tobytes()).decode("ascii")


def _vectors_from_json(text: str, dim: int) -> np.ndarray:
    import numpy as np

    return np.frombuffer(base64.b64decode(text), dtype="<f4").reshape(-1, dim)
