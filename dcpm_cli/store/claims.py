"""Claims (`Claims`, composed into `Store` as `store.claims`): which process is extracting
which raw input right now, so two `dcpm process` runs (or a dream catching up beside one)
never pay for the same LLM calls. Like the Store, the only code that knows where claims live.

A claim is (raw id, owner, lease end). The owner is `host:pid:nonce`; a claim may be taken
over when its lease has run out, or at once when its owner ran on this host and its process
is gone (killed, crashed). Claims are written and read under the store's write lock.

A claim is a small file named by the raw id, beside the markers of unfinished writes (in the
store directory, or under the dcpm home for a store on object storage, where one machine
writes at a time anyway: see store/remote.py). Files, not a table: taking and dropping a
claim are a write and an unlink (~0.1 ms), where each was a Lance commit (~10–20 ms, and a
fragment that later reads and compactions pay for) on every input of every `dcpm add`.
"""

from __future__ import annotations

import json
import os
import socket
from collections.abc import Sequence
from datetime import datetime, timedelta
from pathlib import Path

from dcpm_cli.models import utcnow


def new_owner() -> str:
    """A claim owner for this process: host, pid and a nonce (two writers in one process differ)."""
    return f"{socket.gethostname()}:{os.getpid()}:{os.urandom(3).hex()}"


def owner_gone(owner: str) -> bool:
    """True when the owner ran on this host and its process no longer exists."""
    host, _, rest = owner.partition(":")
    pid = rest.partition(":")[0]
    if host != socket.gethostname() or not pid.isdigit():
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False  # alive, owned by another user
    return False


class Claims:
    """The claims held on a store's raw inputs: one file each in `folder`."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def _claim_path(self, raw_id: str) -> Path:
        return self.folder / raw_id  # ids are "r_" + hex: safe as file names

    def held_on(self, raw_ids: Sequence[str]) -> dict[str, tuple[str, datetime]]:
        """raw id → (owner, lease end) of the claims held on these inputs."""
        out: dict[str, tuple[str, datetime]] = {}
        for r in raw_ids:
            held = _read(self._claim_path(r))
            if held is not None:
                out[r] = held
        return out

    def claim(self, raw_ids: Sequence[str], owner: str, lease: timedelta) -> list[str]:
        """Claim these inputs for `owner` (the caller holds the write lock and has checked
        they still need extraction); returns the ids now claimed. A live claim of another
        owner is respected; a stale one is taken over."""
        now = utcnow()
        held = self.held_on(raw_ids)
        free = [
            r
            for r in raw_ids
            if r not in held or held[r][0] == owner or held[r][1] < now or owner_gone(held[r][0])
        ]
        if free:
            self.folder.mkdir(parents=True, exist_ok=True)
            body = json.dumps({"owner": owner, "expires_at": (now + lease).isoformat()})
            for r in free:
                # Not synced: a claim only saves LLM calls, and a crash that loses it also
                # ended the process that held it.
                self._claim_path(r).write_text(body, encoding="utf-8")
        return free

    def holds(self, raw_id: str, owner: str) -> bool:
        """Whether `owner` still holds its claim on `raw_id` (none took it over)."""
        held = _read(self._claim_path(raw_id))
        return held is not None and held[0] == owner

    def release(self, raw_ids: Sequence[str], owner: str) -> None:
        """Drop `owner`'s claims on these inputs (another owner's are left alone)."""
        for r in raw_ids:
            if self.holds(r, owner):
                self._claim_path(r).unlink(missing_ok=True)

    def stale(self) -> list[str]:
        """Raw ids whose claim outlived its owner or its lease (a killed `dcpm process`)."""
        if not self.folder.is_dir():
            return []
        now = utcnow()
        stale = []
        for path in sorted(self.folder.iterdir()):
            held = _read(path)
            if held is None or held[1] < now or owner_gone(held[0]):
                stale.append(path.name)
        return stale

    def drop(self, raw_ids: Sequence[str]) -> None:
        for r in raw_ids:
            self._claim_path(r).unlink(missing_ok=True)


def _read(path: Path) -> tuple[str, datetime] | None:
    """(owner, lease end) in a claim file; an unreadable one (cut short while written) counts
    as run out, so it is taken over."""
    try:
        body = json.loads(path.read_text(encoding="utf-8"))
        return str(body["owner"]), datetime.fromisoformat(body["expires_at"])
    except FileNotFoundError:
        return None
    except (OSError, ValueError, KeyError, TypeError):
        return "", datetime.min.replace(tzinfo=utcnow().tzinfo)
