"""Store verbs over claims: which process is extracting which raw input right now, so two
`dcpm process` runs (or a dream catching up beside one) never pay for the same LLM calls.
Mixed into `Store`; like it, the only code that knows this table.

A claim is (raw id, owner, lease end). The owner is `host:pid:nonce`; a claim may be taken
over when its lease has run out, or at once when its owner ran on this host and its process
is gone (killed, crashed). Claims are written and read under the store's write lock.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

from dcpm_cli.models import utcnow
from dcpm_cli.store import schemas as S
from dcpm_cli.store.sql import in_list as _in
from dcpm_cli.store.sql import quote as _q


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


class ClaimVerbs:
    # provided by Store
    def _rows(self, table: str, where: str | None, columns: Any = None, limit: int | None = None) -> list: ...
    def table(self, name: str) -> Any: ...

    def claims_on(self, raw_ids: Sequence[str]) -> dict[str, tuple[str, datetime]]:
        """raw id → (owner, lease end) of the claims held on these inputs."""
        out: dict[str, tuple[str, datetime]] = {}
        for i in range(0, len(raw_ids), 500):
            for r in self._rows(S.CLAIMS, _in("raw_id", raw_ids[i : i + 500])):
                out[r["raw_id"]] = (r["owner"], r["expires_at"])
        return out

    def claim(self, raw_ids: Sequence[str], owner: str, lease: timedelta) -> list[str]:
        """Claim these inputs for `owner` (the caller holds the write lock and has checked
        they still need extraction); returns the ids now claimed. A live claim of another
        owner is respected; a stale one is taken over."""
        now = utcnow()
        held = self.claims_on(raw_ids)
        free = [
            r
            for r in raw_ids
            if r not in held or held[r][0] == owner or held[r][1] < now or owner_gone(held[r][0])
        ]
        if free:
            import pyarrow as pa

            taken_over = [r for r in free if r in held]
            if taken_over:
                self.table(S.CLAIMS).delete(_in("raw_id", taken_over))
            rows = [{"raw_id": r, "owner": owner, "expires_at": now + lease} for r in free]
            self.table(S.CLAIMS).add(pa.Table.from_pylist(rows, schema=S.claims()))
        return free

    def release(self, raw_ids: Sequence[str], owner: str) -> None:
        """Drop `owner`'s claims on these inputs (another owner's are left alone)."""
        for i in range(0, len(raw_ids), 500):
            self.table(S.CLAIMS).delete(f"owner = {_q(owner)} AND {_in('raw_id', raw_ids[i : i + 500])}")

    def stale_claims(self) -> list[str]:
        """Raw ids whose claim outlived its owner or its lease (a killed `dcpm process`)."""
        now = utcnow()
        return [
            r["raw_id"] for r in self._rows(S.CLAIMS, None) if r["expires_at"] < now or owner_gone(r["owner"])
        ]

    def drop_claims(self, raw_ids: Sequence[str]) -> None:
        for i in range(0, len(raw_ids), 500):
            self.table(S.CLAIMS).delete(_in("raw_id", raw_ids[i : i + 500]))
