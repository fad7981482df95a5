"""Writers on a store in object storage (`s3://…`, `gs://…`, `az://…`).

LanceDB commits each table atomically on object storage (with `s3+ddb://` on S3 stores that
predate conditional writes), but nothing there spans tables, and dcpm's writes span several
(an input and its passages; items, chain pointers and the event log). On a local disk a lock
file serialises writers; an object store has no lock file. So:

- writers on one machine serialise on a lock file under the state directory the store was
  handed (the dcpm home), keyed by the URI;
- a writer on another machine is refused: each writer records a lease in the store's `_meta`
  table ("writer" = owner and lease end) for as long as it writes, and a writer that finds a
  live lease of another owner stops with a clear message (exit 5) instead of interleaving.

The lease is checked and taken in two commits, so two machines starting within the same
instant can both get through: one writer at a time per object store is the documented rule.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING

from dcpm_cli.errors import LockBusy
from dcpm_cli.models import short_hash, utcnow
from dcpm_cli.store.claims import new_owner, owner_gone

if TYPE_CHECKING:
    from dcpm_cli.store.base import Tables

LEASE = timedelta(minutes=15)  # renewed by every write section; a dead machine's ends
WRITER_KEY = "writer"


def local_lock_path(state_dir: Path, uri: str) -> Path:
    path = state_dir / "locks" / f"write-{short_hash(uri)}.lock"
    path.parent.mkdir(parents=True, exist_ok=True)
    return path


def parse_lease(value: str) -> tuple[str, datetime] | None:
    owner, _, until = value.partition("|")
    try:
        return (owner, datetime.fromisoformat(until)) if owner and until else None
    except ValueError:
        return None


def take_lease(store: Tables, owner: str) -> None:
    """Record `owner` as the store's writer, unless another live writer holds the lease."""
    lease = parse_lease(store.meta().get(WRITER_KEY, ""))
    if lease is not None and lease[0] != owner and lease[1] > utcnow() and not owner_gone(lease[0]):
        host = lease[0].partition(":")[0]
        raise LockBusy(
            f"another dcpm process ({host}) is writing to {store.uri}; on object storage dcpm "
            "allows one writer at a time",
            f"run writers one after another (the lease ends by {lease[1]:%Y-%m-%d %H:%M} UTC)",
        )
    store.set_meta(WRITER_KEY, f"{owner}|{(utcnow() + LEASE).isoformat()}")


def drop_lease(store: Tables, owner: str) -> None:
    lease = parse_lease(store.meta().get(WRITER_KEY, ""))
    if lease is not None and lease[0] == owner:
        store.set_meta(WRITER_KEY, "")


__all__ = ["LEASE", "drop_lease", "local_lock_path", "new_owner", "take_lease"]
