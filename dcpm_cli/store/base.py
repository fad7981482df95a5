"""What the store's own lower modules (migrations, upkeep, the remote lease) need of a store.

They take a `Tables` instead of importing `Store`: the store is built on them, so they sit
below it and never import the package that assembles it.
"""

from __future__ import annotations

import enum
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from collections.abc import Iterable

    import pyarrow as pa


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
