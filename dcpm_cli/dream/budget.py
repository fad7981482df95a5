"""The budgets of one dream: at most --max-calls LLM calls and --max-seconds of wall time.
Both are checked before each call; a call already under way may finish past the time budget
(by at most the LLM timeout)."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from dcpm_cli.llm import LLM


class BudgetReached(Exception):
    """Internal: unwinds the phases when a budget is spent; the run ends with status budget."""


@dataclass
class Budget:
    llm: LLM | None
    max_calls: int | None = None
    max_seconds: float | None = None
    started: float = field(default_factory=time.perf_counter)
    calls_at_start: int = 0

    def __post_init__(self) -> None:
        self.calls_at_start = self.llm.usage.calls if self.llm is not None else 0

    @property
    def calls(self) -> int:
        return (self.llm.usage.calls if self.llm is not None else 0) - self.calls_at_start

    @property
    def elapsed(self) -> float:
        return time.perf_counter() - self.started

    def check(self) -> None:
        """Before an LLM call: raise BudgetReached if no call may be made now."""
        if self.max_calls is not None and self.calls >= self.max_calls:
            raise BudgetReached(f"--max-calls {self.max_calls} reached")
        if self.max_seconds is not None and self.elapsed >= self.max_seconds:
            raise BudgetReached(f"--max-seconds {self.max_seconds:g} reached")

    def retries(self, wanted: int) -> int:
        """Retries allowed for the next call without overrunning --max-calls."""
        if self.max_calls is None:
            return wanted
        return max(0, min(wanted, self.max_calls - self.calls - 1))
