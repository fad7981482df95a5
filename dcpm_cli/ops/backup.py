"""`dcpm backup DIR`: a consistent copy of the store, safe to take while a cron dream runs.

Every dcpm writer (add, process, dream, import, forget) commits under the store's write lock,
so a copy made while holding that lock sees no half-written commit. The copy is an ordinary
store directory: point `--store` at it, or copy it back, to restore.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from dcpm_cli.errors import InputError, StoreError

if TYPE_CHECKING:
    from dcpm_cli.store import Store

# Claims belong to processes running now on this store, not to the copy.
_SKIP = shutil.ignore_patterns(".write.lock", ".dream.lock", "*.partial", ".claims")


@dataclass
class BackupReport:
    path: str
    files: int
    bytes: int
    seconds: float

    def to_dict(self) -> dict[str, object]:
        return {
            "path": self.path,
            "files": self.files,
            "bytes": self.bytes,
            "seconds": round(self.seconds, 2),
        }


def backup(store: Store, folder: Path) -> BackupReport:
    """Copy the store into a new, timestamped directory under `folder`."""
    if store.local_path is None:
        raise StoreError(
            f"cannot snapshot an object-store URI ({store.uri})", "use `dcpm export --out FILE` instead"
        )
    if folder.exists() and not folder.is_dir():
        raise InputError(f"{folder} is not a directory", "give a directory to keep backups in")
    start = datetime.now(UTC)
    target = folder.expanduser() / f"dcpm-{start:%Y%m%dT%H%M%S%f}"
    if target.resolve().is_relative_to(store.local_path.resolve()):
        raise InputError("the backup directory is inside the store", "give a directory outside it")
    partial = target.with_name(target.name + ".partial")
    folder.mkdir(parents=True, exist_ok=True)
    with store.reading():
        shutil.copytree(store.local_path, partial, ignore=_SKIP)
    partial.rename(target)  # a complete snapshot or none
    files = [p for p in target.rglob("*") if p.is_file()]
    seconds = (datetime.now(UTC) - start).total_seconds()
    return BackupReport(str(target), len(files), sum(p.stat().st_size for p in files), seconds)
