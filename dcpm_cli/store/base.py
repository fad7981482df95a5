"""What the store's own lower modules (migrations, upkeep, the remote lease) need of a store.

They take a `Tables` instead of importing `Store`: the store is built on them, so they sit
below it and never import the package that assembles it.
"""

from __future__ import annotations

import dataclasses
import enum
import errno
import signal
import threading
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

if TYPE_CHECKING:
    from collections.abc import Iterable

    import numpy as np
    import pyarrow as pa

    from dcpm_cli.errors import StoreError

T = TypeVar("T")


class Write(enum.Enum):
    """What a write section settles when it takes the lock (store/staging.py): whether other
    writers' staged logs are replayed into the tables first (fold), and whether this writer's
    own open group is committed first (flush)."""

    SETTLED = "settled"  # every staged write in the tables first: the default
    GROUP = "group"  # another writer's logs replayed; this writer's own group kept open
    INPUTS = "inputs"  # raw inputs or claims only, which no staged write depends on: logs left alone

    @property
    def fold(self) -> bool:
        return self is not Write.INPUTS

    @property
    def flush(self) -> bool:
        return self is Write.SETTLED


WHERE = "check --store / DCPM_STORE / DCPM_HOME"


def cannot_write(uri: str, e: OSError) -> StoreError | None:
    """The store's own error for an OS error that says it cannot be written (permission denied,
    a read-only file system: a snapshot, a backup mounted read-only), else None."""
    from dcpm_cli.errors import StoreError

    if isinstance(e, PermissionError):
        return StoreError(f"cannot write to the store at {uri}: permission denied", WHERE)
    if e.errno == errno.EROFS:
        return StoreError(f"cannot write to the store at {uri}: a read-only file system", WHERE)
    return None


@contextmanager
def uninterrupted() -> Iterator[None]:
    """A commit Ctrl-C does not cut: a SIGINT that arrives inside waits until the block is done,
    then interrupts as it would have. LanceDB commits on a background thread, so an interrupt
    raised while the main thread waits for it lets the commit land after the caller has
    counted what was stored: the user was told "stored 0" of 260 stored. A commit takes a
    fraction of a second. Outside the main thread (no signal lands there) it changes nothing."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught: list[int] = []
    before = signal.signal(signal.SIGINT, lambda signum, _frame: caught.append(signum))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, before)
    if caught:
        if callable(before):
            before(signal.SIGINT, None)
        elif before == signal.SIG_DFL:
            signal.raise_signal(signal.SIGINT)


class Tables(Protocol):
    """Low-level table access and the store's metadata; `Store` implements it."""

    uri: str
    dim: int
    local_path: Path | None

    def table(self, name: str) -> Any: ...
    def has_table(self, name: str) -> bool: ...
    def create_table_if_missing(self, name: str, schema: pa.Schema) -> None: ...
    def drop_table(self, name: str) -> None: ...
    def meta(self) -> dict[str, str]: ...
    def set_meta(self, key: str, value: str) -> None: ...
    def applied_migrations(self) -> set[str]: ...
    def record_migration(self, name: str) -> None: ...
    def write(
        self, kind: Write = Write.SETTLED, *, timeout: float = 600.0
    ) -> AbstractContextManager[None]: ...
    def index_passages(self, sessions: Iterable[str] | None = None) -> int: ...
    def reflag_inputs_without_vectors(self) -> None: ...


class Lance:
    """A LanceDB connection's tables, each opened once, and rows in and out of them: the
    layer the store's repositories are built on (only code under store/ holds one)."""

    def __init__(self, db: Any, dim: int) -> None:
        self.db = db
        self.dim = dim
        self._open: dict[str, Any] = {}
        self._schemas: dict[str, pa.Schema] = {}

    def reopen(self) -> None:
        """Forget the tables opened: the directory behind them was swapped (`dcpm reembed`)."""
        self._open.clear()

    def table(self, name: str) -> Any:
        if name not in self._open:
            self._open[name] = self.db.open_table(name)
        return self._open[name]

    def has_table(self, name: str) -> bool:
        try:
            self.table(name)
            return True
        except (ValueError, FileNotFoundError):
            return False

    def drop_table(self, name: str) -> None:
        self.db.drop_table(name)
        self._open.pop(name, None)

    def create_table_if_missing(self, name: str, schema: pa.Schema) -> None:
        self._open[name] = self.db.create_table(name, schema=schema, exist_ok=True)
        self._schemas.pop(name, None)

    def rows(
        self, table: str, where: str | None, columns: Sequence[str] | None = None, limit: int | None = None
    ) -> list[dict[str, Any]]:
        q = self.table(table).search()
        if where:
            q = q.where(where)
        if columns:
            q = q.select(list(columns))
        return q.limit(limit).to_arrow().to_pylist()

    def count(self, table: str, where: str | None = None) -> int:
        return int(self.table(table).count_rows(where))

    def schema(self, table: str) -> pa.Schema:
        """A table's schema, asked once per Store (each ask is a round trip through LanceDB's
        thread: ~1.5 ms, a dozen times per `dcpm add`). Only a migration changes a schema,
        and migrations run when a Store opens."""
        if table not in self._schemas:
            self._schemas[table] = self.table(table).schema
        return self._schemas[table]

    def arrow_of(
        self, objs: Sequence[Any], table: str, vectors: np.ndarray | None = None, **extra: list
    ) -> pa.Table:
        """Arrow table from dataclasses whose field names are the columns."""
        import pyarrow as pa

        schema = self.schema(table)
        cols: dict[str, list] = {}
        for name in schema.names:
            if name == "vector" and vectors is not None:
                flat = pa.array(vectors.astype("float32").ravel(), type=pa.float32())
                cols[name] = pa.FixedSizeListArray.from_arrays(flat, self.dim)
            elif name in extra:
                cols[name] = extra[name]
            else:
                cols[name] = [_value(getattr(o, name, None)) for o in objs]
        return pa.table(cols, schema=schema)

    @staticmethod
    def model_of(cls: type[T], row: dict[str, Any]) -> T:
        names = {f.name for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
        return cls(**{k: v for k, v in row.items() if k in names})


def utc(value: datetime | None) -> datetime | None:
    if value is None:
        return None
    return value if value.tzinfo else value.replace(tzinfo=UTC)


def _value(v: Any) -> Any:
    if isinstance(v, datetime):
        return utc(v)
    return v
