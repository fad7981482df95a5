"""Everything dcpm shows: Rich on a terminal, plain stable text when piped, JSON on request.
The only module that prints."""

from __future__ import annotations

import contextlib
import json
import sys
from collections.abc import Callable, Iterator
from dataclasses import asdict, is_dataclass
from datetime import date, datetime
from typing import Any

from rich.console import Console

out = Console(highlight=False, soft_wrap=False)
err = Console(stderr=True, highlight=False)


def _default(o: Any) -> Any:
    if isinstance(o, datetime | date):
        return o.isoformat()
    if is_dataclass(o) and not isinstance(o, type):
        return asdict(o)
    raise TypeError(f"cannot serialise {type(o).__name__}")


def to_json(obj: Any) -> str:
    return json.dumps(obj, default=_default, ensure_ascii=False)


def print_json(obj: Any) -> None:
    sys.stdout.write(to_json(obj) + "\n")
    sys.stdout.flush()


def error(message: str, hint: str | None = None) -> None:
    err.print(f"[bold red]error:[/] {message}", markup=True, highlight=False)
    if hint:
        err.print(f"[dim]hint:[/] {hint}", markup=True)


def note(message: str) -> None:
    err.print(message, markup=False)


@contextlib.contextmanager
def progress(label: str, enabled: bool) -> Iterator[Callable[[int, int], None] | None]:
    """A progress bar on a terminal (stderr), nothing otherwise."""
    if not (enabled and err.is_terminal):
        yield None
        return
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=err,
        transient=True,
    ) as bar:
        task = bar.add_task(label, total=None)

        def update(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

        yield update


def add_report(report: Any, *, as_json: bool, verb: str = "stored") -> None:
    if as_json:
        data = report.to_dict()
        data.pop("outcomes", None)
        print_json(data)
        return
    parts = [f"{verb} {report.stored} input{'s' if report.stored != 1 else ''}"] if verb == "stored" else []
    if report.already_stored:
        parts.append(f"{report.already_stored} already stored")
    if report.extracted or report.llm_calls:
        parts.append(f"extracted {report.extracted}")
        parts.append(
            f"+{report.added} new, {report.superseded} superseded, {report.updated} updated, "
            f"{report.duplicates} duplicate{'s' if report.duplicates != 1 else ''}"
        )
    if report.failed:
        parts.append(f"{report.failed} failed")
    if report.pending:
        parts.append(f"{report.pending} pending extraction")
    out.print(", ".join(parts) if parts else "nothing to do", markup=False)
    rejected = [r for o in report.outcomes for r in o.rejected]
    for r in rejected[:5]:
        note(f"note: {r}")
