"""`dcpm bench …`: benchmark harnesses that print figures (scripts, not timed tests)."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import typer

from dcpm_cli.cli.app import _memory, app
from dcpm_cli.models import Ablation

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
    files: Annotated[
        list[Path],
        typer.Argument(
            help="LongMemEval .json or .json.gz files; several are pooled into one table (retrieval only).",
            metavar="FILE",
            show_default=False,
        ),
    ],
    limit: Annotated[
        int | None, typer.Option("--limit", "-n", min=1, help="The first N questions (QA counts abstention).")
    ] = None,
    out: Annotated[
        Path | None, typer.Option("--out", help="JSONL per question: ranked ids, or (QA) answer and label.")
    ] = None,
    granularity: Annotated[
        Granularity, typer.Option("--granularity", help="Rank and score sessions or user turns.")
    ] = Granularity.session,
    k: Annotated[
        str, typer.Option("--k", help="Cut-offs, comma-separated (e.g. 1,3,5,10,30,50).")
    ] = "1,3,5,10",
    assistant_turns: Annotated[
        bool,
        typer.Option(
            "--assistant-turns",
            help="Store the assistant's turns too, as a chat import does (the protocol keys user "
            "turns only; the baselines keep it).",
        ),
    ] = False,
    qa: Annotated[
        bool,
        typer.Option("--qa", help="Question answering: a reader model answers from recall, a judge scores."),
    ] = False,
    llm: Annotated[
        str | None, typer.Option("--llm", help="--qa: the reader (and memory) model (default: the dcpm LLM).")
    ] = None,
    judge: Annotated[
        str | None, typer.Option("--judge", help="--qa: the judge model (default: the reader).")
    ] = None,
    per_type: Annotated[
        int | None, typer.Option("--per-type", min=1, help="--qa: the first N questions of each type.")
    ] = None,
    ablation: Annotated[
        Ablation | None,
        typer.Option(
            "--ablation",
            help="--qa: build memory with the whole system as this row of the paper's ablation "
            "(default: raw inputs only, no LLM before the reader).",
        ),
    ] = None,
) -> None:
    """LongMemEval: retrieval (dcpm's recall vs plain BM25 vs plain dense) or, with --qa, answers."""
    from dcpm_cli import render
    from dcpm_cli.bench import longmemeval as bench

    if assistant_turns and (qa or granularity is Granularity.turn):
        from dcpm_cli.errors import InputError

        raise InputError(
            "--assistant-turns is for retrieval at session granularity",
            "--qa stores every turn already; turn granularity's gold is user turns only",
        )
    if qa and len(files) > 1:
        from dcpm_cli.errors import InputError

        raise InputError("--qa reads one file", "run --qa on each file")
    m = _memory(ctx)
    if qa:
        _qa(m, files[0], limit, per_type, ablation, llm, judge, out)
        return
    with render.progress("questions", enabled=True) as bar:
        result = bench.run(
            files, m.embedder, m.settings, limit=limit, granularity=granularity.value,
            ks=_ks(k), out=out, progress=bar, replies=assistant_turns,
        )  # fmt: skip
    typer.echo(bench.report(result))
    if out is not None:
        render.note(f"rankings written to {out}")


def _qa(
    m: Any,
    file: Path,
    limit: int | None,
    per_type: int | None,
    ablation: Ablation | None,
    reader_spec: str | None,
    judge_spec: str | None,
    out: Path | None,
) -> None:
    from dcpm_cli import render
    from dcpm_cli.bench import qa
    from dcpm_cli.llm import get_llm

    timeout = m.settings.llm_timeout
    reader = get_llm(reader_spec or m.settings.llm, timeout=timeout) if reader_spec else m.llm
    judge = reader if not judge_spec or judge_spec == reader.name else get_llm(judge_spec, timeout=timeout)
    with render.progress("questions", enabled=True) as bar:
        result = qa.run_qa(
            file, m.embedder, m.settings, reader, judge, limit=limit, per_type=per_type,
            ablation=ablation.value if ablation else None, out=out, progress=bar,
        )  # fmt: skip
    typer.echo(qa.report(result))
    if out is not None:
        render.note(f"answers and labels written to {out}")
