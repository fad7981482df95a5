"""Named, append-only schema steps, recorded in the store's `_migrations` table.

Never edit a shipped step; add a new one. Each step is idempotent (Lance has no multi-table
transaction, so a step interrupted half-way must be safe to run again).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from dcpm_cli.store.base import Tables

MIGRATIONS: list[tuple[str, Callable[[Tables], None]]] = []

# The store's format, recorded in its `_meta` table ("format"): a dcpm refuses a store whose
# format is newer than the one it knows. A new migration that older dcpms must not write past
# raises it (and records it, as m004 does).
FORMAT_VERSION = 4


def migration(fn: Callable[[Tables], None]) -> Callable[[Tables], None]:
    MIGRATIONS.append((fn.__name__, fn))
    return fn


@migration
def m001_initial_tables(store: Tables) -> None:
    """Raw inputs, memory items, event log, graph nodes and edges."""
    from dcpm_cli.store import schemas

    for name, schema in schemas.initial(store.dim).items():
        store.create_table_if_missing(name, schema)


@migration
def m002_dream_runs(store: Tables) -> None:
    """The dream run log and per-embedder System 2 calibrations."""
    from dcpm_cli.store import schemas

    for name, schema in schemas.dream_tables().items():
        store.create_table_if_missing(name, schema)


@migration
def m003_passages(store: Tables) -> None:
    """Passages (neighbouring user inputs of a session, searched together), built for the
    inputs already stored. Idempotent: the index is recomputed from the raw inputs."""
    from dcpm_cli.store import schemas

    store.create_table_if_missing(schemas.PASSAGES, schemas.passages(store.dim))
    store.index_passages()


@migration
def m004_format_version(store: Tables) -> None:
    """Record the store's format version, so an older dcpm refuses a newer store."""
    store.set_meta("format", str(FORMAT_VERSION))


@migration
def m005_claims(store: Tables) -> None:
    """Claims on raw inputs being extracted, so concurrent `dcpm process` runs do not repeat
    each other's LLM calls."""
    from dcpm_cli.store import schemas

    store.create_table_if_missing(schemas.CLAIMS, schemas.claims())


@migration
def m006_claims_as_files(store: Tables) -> None:
    """Claims moved from a table to small files (store/claims.py): a Lance commit per claim
    cost every input two commits. The table goes; a claim it held is at most a few LLM calls
    repeated. Format 3: a dcpm that still claims through the table must not write here."""
    from dcpm_cli.store import schemas

    if store.has_table(schemas.CLAIMS):
        store.drop_table(schemas.CLAIMS)
    store.set_meta("format", str(FORMAT_VERSION))


@migration
def m007_flag_inputs_without_vectors(store: Tables) -> None:
    """Raise the flag that inputs stored without a vector exist, for the stores that have
    some from before the flag (the writer looks for them only while it is up)."""
    store.reflag_inputs_without_vectors()


@migration
def m008_group_commit(store: Tables) -> None:
    """Format 4: writers may leave logs of staged writes (store/staging.py) that every writer
    must replay before it writes; a dcpm that does not know them must not write here."""
    store.set_meta("format", str(FORMAT_VERSION))


def apply_migrations(store: Tables) -> list[str]:
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
