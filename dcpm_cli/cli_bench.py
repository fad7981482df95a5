"""`dcpm bench …`: benchmark harnesses that print figures (scripts, not timed tests)."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from dcpm_cli.cli import _session, app

bench_app = typer.Typer(
    help="Benchmarks that print figures: retrieval quality on LongMemEval.",
    no_args_is_help=True,
)
app.add_typer(bench_app, name="bench")


class Granularity(StrEnum):
    session = "session"
    turn = "turn"


def _ks(value: str) -> list[int]:
    from dcpm_cli.errors import InputError

    try:
        ks = sorted({int(x) for x in value.split(",") if x.strip()})
    except ValueError:
        ks = []
    if not ks or ks[0] < 1:
        raise InputError(f"--k must be positive integers separated by commas, got {value!r}", "--k 1,3,5,10")
    return ks


@bench_app.command("longmemeval")
def longmemeval(
    ctx: typer.Context,
    file: Annotated[Path, typer.Argument(help="A LongMemEval .json or .json.gz file.", show_default=False)],
    limit: Annotated[
        int | None, typer.Option("--limit", "-n", min=1, help="Only the first N non-abstention questions.")
    ] = None,
    out: Annotated[
        Path | None, typer.Option("--out", help="Write each question's ranked ids per system as JSONL.")
    ] = None,
    granularity: Annotated[
        Granularity, typer.Option("--granularity", help="Rank and score sessions or user turns.")
    ] = Granularity.session,
    k: Annotated[
        str, typer.Option("--k", help="Cut-offs, comma-separated (e.g. 1,3,5,10,30,50).")
    ] = "1,3,5,10",
) -> None:
    """LongMemEval's retrieval protocol: dcpm's recall vs plain BM25 vs plain dense, per type."""
    from dcpm_cli import render
    from dcpm_cli.bench import longmemeval as bench

    s = _session(ctx)
    with render.progress("questions", enabled=True) as bar:
        result = bench.run(
            file, s.get_embedder(), s.settings, limit=limit, granularity=granularity.value,
            ks=_ks(k), out=out, progress=bar,
        )  # fmt: skip
    typer.echo(bench.report(result))
    if out is not None:
        render.note(f"rankings written to {out}")
