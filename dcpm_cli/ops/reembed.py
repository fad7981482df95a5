"""`dcpm reembed --embedder NAME`: the whole store embedded again by another model.

The new store is built beside the old one (`<store>.reembed`): every record is streamed out
of the old store (`portability.export_lines`, no vectors) and imported into the new one,
which embeds raw inputs, items and nodes (text and behaviour) with the new model and rebuilds
the passages; System 2's thresholds are calibrated for the new model. Only when all of that
is done do the two directories swap, in one atomic `renameat2(RENAME_EXCHANGE)` on Linux
(elsewhere two renames, and a crash between them leaves the old store at
`<store>.before-reembed-<time>`). The old store is kept there until you delete it.

Interrupted (an error, Ctrl-C, a kill), the old store is untouched and still in use; the
half-built sibling is removed by the next attempt. Just before the swap the old store gets a
marker file (`REEMBED_OLD_STORE`): a kill between the swap and the rename leaves the old store
at `<store>.reembed` carrying it, and the next attempt moves it to
`<store>.before-reembed-<time>` and reports it (`recovered_old_store`) instead of deleting what
may be its only copy. Only a sibling without the marker (half-built) is removed. Both the
dream lock and the write lock are held throughout: no dream and no write can slip in between copy and swap.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from dcpm_cli.errors import NothingToDo, StoreError

if TYPE_CHECKING:
    from dcpm_cli.embed import Embedder
    from dcpm_cli.store import Store


OLD_STORE_MARKER = "REEMBED_OLD_STORE"  # in a store the swap set aside: never delete it unasked


@dataclass
class ReembedReport:
    store: str
    old_embedder: str
    new_embedder: str
    dim: int
    records: int
    kept_old_store: str
    thresholds: dict[str, float]
    seconds: float
    recovered_old_store: str | None = None  # an old store a killed run left at <store>.reembed

    def to_dict(self) -> dict[str, object]:
        return {**self.__dict__, "seconds": round(self.seconds, 1)}


def reembed(
    store: Store, target: Embedder, *, progress: Callable[[int, int], None] | None = None
) -> ReembedReport:
    from dcpm_cli.dream.calibrate import calibrate
    from dcpm_cli.ops.portability import export_lines, import_lines
    from dcpm_cli.store import Store

    if store.local_path is None:
        raise StoreError(
            "reembed works on a local store",
            "export, then import into a new store made with the other embedder",
        )
    if target.model_id == store.embedder_id and target.dim == store.dim:
        raise NothingToDo(f"this store is already embedded by {target.model_id}", "nothing to do")
    start = datetime.now(UTC)
    base = store.local_path.resolve()
    staging = base.with_name(base.name + ".reembed")
    kept = base.with_name(f"{base.name}.before-reembed-{start:%Y%m%dT%H%M%S}")
    with store.dream_lock(), store.write():
        recovered = _clear_leftover(staging, base)
        new = Store(str(staging), target)
        report = import_lines(new, target, export_lines(store, with_vectors=False), progress=progress)
        cal = calibrate(target).calibration
        with new.write():
            new.save_calibration(cal)
        records = sum(report.added.values())
        (base / OLD_STORE_MARKER).write_text(f"set aside by reembed at {start:%Y%m%dT%H%M%S}\n")
        _swap(staging, base)  # base is the new store now; staging holds the old one
        kept = _unused(kept)
        staging.rename(kept)
    seconds = (datetime.now(UTC) - start).total_seconds()
    thresholds = {"eps1": cal.eps1, "eps2": cal.eps2, "theta_beh": cal.theta_beh, "theta_sem": cal.theta_sem}
    return ReembedReport(
        str(base),
        store.embedder_id,
        target.model_id,
        target.dim,
        records,
        str(kept),
        thresholds,
        seconds,
        None if recovered is None else str(recovered),
    )


def _clear_leftover(staging: Path, base: Path) -> Path | None:
    """What an interrupted run left at `<store>.reembed`: a half-built copy goes, but an old
    store set aside by the swap (it carries the marker) may be the only copy: keep and name it."""
    if not staging.exists():
        return None
    marker = staging / OLD_STORE_MARKER
    if not marker.is_file():
        shutil.rmtree(staging)  # half-built by a run that never reached the swap
        return None
    stamp = (marker.read_text().split() or ["unknown"])[-1]
    kept = _unused(base.with_name(f"{base.name}.before-reembed-{stamp}"))
    staging.rename(kept)
    return kept


def _unused(path: Path) -> Path:
    """`path`, or `path-2`, `path-3`…: never a name that is already taken."""
    candidate, n = path, 1
    while candidate.exists():
        n += 1
        candidate = path.with_name(f"{path.name}-{n}")
    return candidate


def _swap(a: Path, b: Path) -> None:
    """Exchange two directories atomically where the OS can (Linux renameat2)."""
    import ctypes
    import os

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        exchange = libc.renameat2
    except (OSError, AttributeError):
        exchange = None
    at_fdcwd, rename_exchange = -100, 2
    if (
        exchange is not None
        and exchange(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), rename_exchange) == 0
    ):
        return
    aside = b.with_name(b.name + ".swap")
    b.rename(aside)
    a.rename(b)
    aside.rename(a)
