"""Named, append-only schema steps, recorded in the store's `_migrations` table.

Never edit a shipped step; add a new one. Each step is idempotent (Lance has no multi-table
transaction, so a step interrupted half-way must be safe to run again).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from dcpm_cli.store import Store

MIGRATIONS: list[tuple[str, Callable[[Store], None]]] = []


def migration(fn: Callable[[Store], None]) -> Callable[[Store], None]:
    MIGRATIONS.append((fn.__name__, fn))
    return fn


@migration
def m001_initial_tables(store: Store) -> None:
    """Raw inputs, memory items, event log, graph nodes and edges."""
    from dcpm_cli.store import schemas

    for name, schema in schemas.initial(store.dim).items():
        store.create_table_if_missing(name, schema)


@migration
def m002_dream_runs(store: Store) -> None:
    """The dream run log and per-embedder System 2 calibrations."""
    from dcpm_cli.store import schemas

    for name, schema in schemas.dream_tables().items():
        store.create_table_if_missing(name, schema)


@migration
def m003_passages(store: Store) -> None:
    """Passages (neighbouring user inputs of a session, searched together), built for the
    inputs already stored. Idempotent: the index is recomputed from the raw inputs."""
    from dcpm_cli.store import schemas

    store.create_table_if_missing(schemas.PASSAGES, schemas.passages(store.dim))
    store.index_passages()


def apply_migrations(store: Store) -> list[str]:
    """Run every step not yet recorded; return the names applied now."""
    done = store.applied_migrations()
    applied = []
    for name, fn in MIGRATIONS:
        if name in done:
            continue
        fn(store)
        store.record_migration(name)
        applied.append(name)
    return applied
