"""Markers of unfinished writes, and the recovery that runs when one is found.

Lance commits one table at a time, so a multi-step write (a raw input and its passages; new
items, then their chain back-pointers, then the event log) can be cut short between two
commits by a crash or a kill. Before such a write its writer leaves a small marker file, and
removes it once every step is committed; the writer holds the store's write lock throughout.
So a marker seen by a process that holds the lock was left by a writer that died: the next
write command (and `dcpm check --repair`) finishes what it can — chain back-pointers, the
passages of the sessions it touched, and a forget's every remaining step, its purge included
(the marker records them: store/erase.py) — and removes the marker.

Markers live in the store directory (`.unfinished/`), or under the dcpm home for a store on
object storage. Mixed into `Store`.
"""

from __future__ import annotations

import contextlib
import json
import os
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dcpm_cli.errors import StoreError
from dcpm_cli.models import short_hash, utcnow


@dataclass
class Recovery:
    """What finishing the unfinished writes did."""

    markers: int = 0
    chains_relinked: int = 0
    passages_written: int = 0
    sessions: list[str] = field(default_factory=list)
    forgets: int = 0  # forgets carried through to their purge
    forgets_undone: int = 0  # forgets cut short before they changed anything: to run again

    def summary(self) -> str:
        out = (
            f"finished {self.markers} interrupted write(s): {self.chains_relinked} chain link(s) restored, "
            f"{self.passages_written} passage(s) rebuilt"
        )
        if self.forgets:
            out += f", {self.forgets} forget(s) completed and purged"
        if self.forgets_undone:
            out += f"; {self.forgets_undone} forget(s) cut short before any change: run them again"
        return out


class JournalVerbs:
    uri: str
    local_path: Path | None
    state_dir: Path | None

    if TYPE_CHECKING:  # provided by Store

        def repair_chains(self) -> int: ...
        def index_passages(self, sessions: Any = None) -> int: ...

    if TYPE_CHECKING:  # provided by EraseVerbs, later in Store's bases: a stub here would shadow it

        def finish_forget(self, work: dict[str, Any]) -> tuple[int, dict[str, int]]: ...
        def forget_started(self, work: dict[str, Any]) -> bool: ...

    def _journal_dir(self) -> Path:
        return self._state_dir("unfinished")

    def _state_dir(self, kind: str) -> Path:
        """Where this store's small state files of one kind live (markers, claims): in the
        store directory, or under the state directory it was handed for a store on object
        storage."""
        if self.local_path is not None:
            return self.local_path / f".{kind}"
        return self._machine_dir() / kind / short_hash(self.uri)

    def _machine_dir(self) -> Path:
        """The state directory this machine keeps for a store on object storage."""
        if self.state_dir is None:
            raise StoreError(f"the store {self.uri} is on object storage: it needs a local state directory")
        return self.state_dir

    @contextlib.contextmanager
    def unfinished(self, op: str, *, sessions: Sequence[str] = (), **detail: Any) -> Iterator[None]:
        """Mark a multi-step write (the caller holds the write lock). The marker stays if the
        block raises or the process dies, so the next writer repairs what it left."""
        folder = self._journal_dir()
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"{op}-{os.getpid()}-{uuid.uuid4().hex[:8]}.json"
        body = {"op": op, "pid": os.getpid(), "at": utcnow().isoformat(), "sessions": sorted(set(sessions))}
        with open(path, "w", encoding="utf-8") as f:
            f.write(json.dumps({**body, **detail}))
            f.flush()
            os.fsync(f.fileno())
        yield
        path.unlink(missing_ok=True)

    def unfinished_writes(self) -> list[dict[str, Any]]:
        """The markers left by writes that never finished (read them under the write lock)."""
        folder = self._journal_dir()
        if not folder.is_dir():
            return []
        out = []
        for path in sorted(folder.glob("*.json")):
            try:
                marker = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                marker = {"op": "unknown"}  # cut short while the marker itself was written
            out.append({**marker, "path": str(path)})
        return out

    def recover(self) -> Recovery | None:
        """Finish what interrupted writes left (the caller holds the write lock): restore
        chain back-pointers, rebuild the passages of the sessions they touched; then drop the
        markers. None when there was nothing to do."""
        markers = self.unfinished_writes()
        if not markers:
            return None
        done = Recovery(markers=len(markers))
        for m in markers:  # first: the relinks and deletes they finish are what chains expect
            work = m.get("forget") if m.get("op") == "forget" else None
            if not isinstance(work, dict):
                continue
            if self.forget_started(work):
                self.finish_forget(work)
                done.forgets += 1
            else:
                done.forgets_undone += 1
        done.chains_relinked = self.repair_chains()
        if any(m.get("op") == "unknown" for m in markers):
            done.passages_written = self.index_passages()
        else:
            done.sessions = sorted({s for m in markers for s in m.get("sessions", [])})
            if done.sessions:
                done.passages_written = self.index_passages(done.sessions)
        for m in markers:
            Path(m["path"]).unlink(missing_ok=True)
        return done
