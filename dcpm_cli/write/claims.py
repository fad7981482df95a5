"""The writer's claims on the inputs it extracts: one process extracts an input at a time, so
two `dcpm process` runs (or a dream catching up beside one) never pay for the same LLM calls.
Where claims live and when one may be taken over is the store's side (store/claims.py)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from typing import TYPE_CHECKING

from dcpm_cli import chunking
from dcpm_cli.models import FAILED, PENDING, RawInput
from dcpm_cli.store.base import Write

if TYPE_CHECKING:
    from dcpm_cli.config import Settings
    from dcpm_cli.store import Store


def new_owner() -> str:
    """A claim owner for this writer: host, pid and a nonce (store/claims.py)."""
    from dcpm_cli.store import claims

    return claims.new_owner()


@dataclass
class Claims:
    """The raw inputs one writer holds, by id."""

    store: Store
    settings: Settings
    owner: str = field(default_factory=new_owner)
    held: set[str] = field(default_factory=set)

    def __contains__(self, raw_id: str) -> bool:
        return raw_id in self.held

    def take(self, raws: Sequence[RawInput]) -> None:
        """Claim inputs this writer has just stored, under the write lock its caller holds.
        Extracted one after another: the last one's lease covers those before it."""
        self.held.update(self.store.claim([r.id for r in raws], self.owner, self.lease(raws)))

    def claim(self, raw: RawInput) -> RawInput | None:
        """Claim `raw` for extraction, under the write lock: its fresh row when it still waits
        and no live process holds it, else None. `release` drops the claims."""
        with self.store.write(Write.GROUP):  # another writer's staged statuses folded in first
            fresh = self.store.get_raw([raw.id]).get(raw.id)
            if fresh is None or fresh.status not in (PENDING, FAILED):
                return None
            if not self.store.claim([raw.id], self.owner, self.lease([fresh])):
                return None
        self.held.add(raw.id)
        return fresh

    def still_ours(self, raw_id: str) -> bool:
        """No other process has taken the input over (read under the caller's write lock)."""
        return self.store.holds(raw_id, self.owner)

    def release(self) -> None:
        """Drop every claim held (a claim on a finished input is harmless until then: the
        status is read first)."""
        if self.held:
            with self.store.write(Write.INPUTS):
                self.store.release(sorted(self.held), self.owner)
            self.held.clear()

    def lease(self, raws: Sequence[RawInput]) -> timedelta:
        """How long a claim holds: every call of these inputs (extraction of each piece and
        reconcile, each with its retries) timing out, and a margin. Only a writer on another
        machine waits for it: on this one, a claim whose process is gone is taken over at once."""
        calls = (self.settings.llm_retries + 1) * sum(len(chunking.pieces(r.text)) + 1 for r in raws)
        return timedelta(seconds=calls * self.settings.llm_timeout + 60)
