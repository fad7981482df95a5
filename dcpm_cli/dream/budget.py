"""The budgets of one dream: at most --max-calls LLM calls and --max-seconds of wall time.
Both are checked before each call; a call already under way may finish past the time budget
(by at most the LLM timeout). Every call of a dream counts, the catch-up extraction of pending
inputs included: it goes through `Budget.guard`, which checks before every call (retries too)."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from dcpm_cli.llm import LLM, Reply, Usage


class BudgetReached(Exception):
    """Internal: unwinds the phases when a budget is spent; the run ends with status budget."""


@dataclass
class Budget:
    llm: LLM | None
    max_calls: int | None = None
    max_seconds: float | None = None
    started: float = field(default_factory=time.perf_counter)
    calls_at_start: int = 0
    other_calls: int = 0  # calls made through `guard` by another LLM object than `llm`

    def __post_init__(self) -> None:
        self.calls_at_start = self.llm.usage.calls if self.llm is not None else 0

    @property
    def calls(self) -> int:
        own = (self.llm.usage.calls if self.llm is not None else 0) - self.calls_at_start
        return own + self.other_calls

    @property
    def elapsed(self) -> float:
        return time.perf_counter() - self.started

    def check(self) -> None:
        """Before an LLM call: raise BudgetReached if no call may be made now."""
        if self.max_calls is not None and self.calls >= self.max_calls:
            raise BudgetReached(f"--max-calls {self.max_calls} reached")
        if self.max_seconds is not None and self.elapsed >= self.max_seconds:
            raise BudgetReached(f"--max-seconds {self.max_seconds:g} reached")

    def spent(self) -> bool:
        """Whether no call may be made now (the catch-up's stop condition between inputs)."""
        try:
            self.check()
        except BudgetReached:
            return True
        return False

    def guard(self, llm: LLM) -> LLM:
        """`llm` with this budget checked before each of its calls."""
        return _Guarded(llm, self)

    def retries(self, wanted: int) -> int:
        """Retries allowed for the next call without overrunning --max-calls."""
        if self.max_calls is None:
            return wanted
        return max(0, min(wanted, self.max_calls - self.calls - 1))


class _Guarded:
    """An LLM whose every call is first checked against a budget (BudgetReached if spent)."""

    def __init__(self, inner: LLM, budget: Budget) -> None:
        self.inner, self.budget = inner, budget
        self.name = inner.name

    @property
    def usage(self) -> Usage:
        return self.inner.usage

    def chat(self, messages: list[dict[str, str]], *, schema: dict[str, Any] | None = None) -> Reply:
        self.budget.check()
        reply = self.inner.chat(messages, schema=schema)
        if self.inner is not self.budget.llm:  # counted like `usage.calls`: answered calls
            self.budget.other_calls += 1
        return reply
