"""`dcpm recall`, `history`, `show`, `stats`, `doctor`: the read path from the command line."""

from __future__ import annotations

import re
import sys
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import typer

from dcpm_cli.cli.app import AsJson, NoSupersedes, _memory, app
from dcpm_cli.errors import EXIT_LLM, EXIT_STORE
from dcpm_cli.ingest.text import read_file


class OutputFormat(StrEnum):
    table = "table"
    json = "json"
    prompt = "prompt"


@app.command()
def recall(
    ctx: typer.Context,
    query: Annotated[str | None, typer.Argument(help="What to look for.", show_default=False)] = None,
    k: Annotated[int, typer.Option("-k", "--top", min=1, max=1000, help="How many memories.")] = 10,
    kind: Annotated[
        list[str] | None,
        typer.Option("--kind", help="Only these kinds: fact, identity, summary, raw (repeatable)."),
    ] = None,
    as_of: Annotated[
        str | None,
        typer.Option(
            "--as-of", help='What was believed then (ISO date); also the day "last week" is read from.'
        ),
    ] = None,
    arc: Annotated[bool, typer.Option("--arc", help="Show each belief's whole revision arc.")] = False,
    fmt: Annotated[
        OutputFormat, typer.Option("--format", help="table, json or prompt.")
    ] = OutputFormat.table,
    as_json: Annotated[bool, typer.Option("--json", help="Same as --format json.")] = False,
    batch: Annotated[
        str | None, typer.Option("--batch", help="Queries from FILE or '-' (stdin), one a line; NDJSON out.")
    ] = None,
    no_supersedes: NoSupersedes = False,
) -> None:
    """Find memories: current beliefs first, each with its arc; never calls an LLM."""
    from dcpm_cli import render, views
    from dcpm_cli.errors import InputError

    m = _memory(ctx, no_supersedes)
    kinds, when = m.recall_filters(kind, as_of, option="--as-of")
    if as_json and fmt not in (OutputFormat.table, OutputFormat.json):
        raise InputError(f"--json and --format {fmt.value} ask for two outputs", "give one of them")
    if as_json:
        fmt = OutputFormat.json
    if batch is not None and query is not None:
        raise InputError("give a QUERY or --batch, not both", "put the query in the batch file")
    if batch is not None and fmt is OutputFormat.prompt:
        raise InputError("--batch prints NDJSON; --format prompt is for one query", "drop one of them")
    if batch is not None:
        queries = list(_batch_queries(batch))
    elif query is None or not query.strip():
        raise InputError("give a QUERY (or --batch FILE)", 'dcpm recall "what do I eat?"')
    else:
        queries = [query]
    if batch is None and fmt is OutputFormat.table and m.store_or_none() is None:
        render.note(m.nothing_stored)
        return
    for q in queries:
        result = m.recall(q, k=k, kinds=kinds, as_of=when)
        render.warnings(result.warnings)
        if batch is not None or fmt is OutputFormat.json:
            render.print_json(views.recall_dict(result))
        elif fmt is OutputFormat.prompt:
            render.recall_prompt(result)
        else:
            if result.period is not None and result.hits:
                render.note(views.period_note(result, beside_warnings=True))
            render.recall_table(result, arc=arc)
            if not result.hits and kinds and "raw" not in kinds:
                _say_what_waits(m, kinds)
            elif arc and result.hits and all(h.kind == "raw" for h in result.hits):
                _say_what_waits(m, [], arc=True)
            elif not result.hits and not kinds and when is None and not result.warnings:
                # Not "you never wrote about this": a broad question ("what do I do for fun?")
                # may share no word and little meaning with the entries that answer it.
                render.note(
                    "nothing stored shares a word with the question or comes near it in meaning "
                    f"(similarity below {m.settings.recall_min_similarity}): naming the thing itself "
                    "(a place, a person, an activity) finds more"
                )


def _say_what_waits(m: Any, kinds: list[str], *, arc: bool = False) -> None:
    """No belief of these kinds matched (or, `arc`, only raw inputs, which have no arc): the
    inputs not extracted yet may hold the answer."""
    from dcpm_cli import render
    from dcpm_cli.models import PENDING

    store = m.store_or_none()
    if store is None or not (waiting := store.count_by_kind("raw").get(PENDING, 0)):
        return
    if arc:
        render.note(
            f"--arc shows the revision arcs of extracted beliefs, and these hits are raw inputs: {waiting} "
            "input(s) still wait for extraction (`dcpm process` extracts them with the LLM)"
        )
        return
    render.note(
        f"{waiting} input(s) still wait for extraction, so no {' or '.join(kinds)} comes from them "
        "yet: without --kind, recall finds their words; `dcpm process` extracts them"
    )


def _batch_queries(source: str) -> Any:
    """One query a line; blank lines and comments ("# …", as in a shell script) are skipped."""
    text = sys.stdin.read() if source == "-" else read_file(Path(source))
    return (q for line in text.splitlines() if (q := line.strip()) and not re.match(r"#(?:\s|$)", q))


@app.command()
def history(
    ctx: typer.Context,
    target: Annotated[str, typer.Argument(help="A query, or an item id (m_...).", show_default=False)],
    k: Annotated[int, typer.Option("-k", "--top", min=1, help="How many beliefs, for a query.")] = 3,
    as_json: AsJson = False,
    no_supersedes: NoSupersedes = False,
) -> None:
    """The full revision arc of a belief: each state, when, where it came from, what replaced it."""
    from dcpm_cli import render, views
    from dcpm_cli.models import PENDING

    m = _memory(ctx, no_supersedes)
    if m.store_or_none() is None and not as_json:
        render.note(m.nothing_stored)
        return
    result = m.history(target, k=k)
    if as_json:
        render.print_json([views.arc_dict(a) for a in result])
    else:
        store = m.store_or_none()
        waiting = store.count_by_kind("raw").get(PENDING, 0) if store is not None and not result else 0
        render.arcs_timeline(result, target, waiting=waiting, zone=m.settings.timezone)
        if not result and re.fullmatch(r"r_[0-9a-f]{12}", target.strip()):
            render.note(f"{target.strip()} is an input, not a belief: `dcpm show {target.strip()}` shows it")


@app.command()
def show(
    ctx: typer.Context,
    ident: Annotated[str, typer.Argument(metavar="ID", help="An item (m_), raw input (r_) or node id.")],
    as_json: AsJson = False,
) -> None:
    """One item, raw input or graph node, with provenance, event log and links."""
    from dcpm_cli import render

    m = _memory(ctx)
    detail = m.show(ident)
    if as_json:
        render.print_json(detail)
    else:
        render.detail(detail, zone=m.settings.timezone)


@app.command()
def stats(
    ctx: typer.Context,
    as_json: AsJson = False,
) -> None:
    """Counts per kind, chains, pending inputs, graph nodes, dream runs, size on disk."""
    from dcpm_cli import render

    m = _memory(ctx)
    if m.store_or_none() is None:
        render.note(m.nothing_stored)
        if as_json:  # the same object, empty: a script's jq still parses
            render.print_json(m.stats())
        return
    figures = m.stats()
    if as_json:
        render.print_json(figures)
    else:
        render.stats(figures)


@app.command()
def doctor(
    ctx: typer.Context,
    as_json: AsJson = False,
) -> None:
    """Check the setup: where the store is, which embedder, whether the LLM answers."""
    from dcpm_cli import render
    from dcpm_cli.llm import probe

    settings = _memory(ctx).settings
    store_problem = _store_problem(settings.store)
    problem = probe(settings.llm)
    report = {
        "store": settings.store,
        "store_ok": not store_problem,
        "store_problem": store_problem,
        "embedder": settings.embedder,
        "llm": settings.llm,
        "llm_ok": not problem,
        "llm_problem": problem,
    }
    if as_json:
        render.print_json(report)
    else:
        render.doctor(report)
    if store_problem:
        raise typer.Exit(EXIT_STORE)
    if problem:
        raise typer.Exit(EXIT_LLM)


def _store_problem(where: str) -> str:
    """Why a local store cannot be used there ("" when it can: made, or makeable by `dcpm add`)."""
    import os

    if "://" in where:
        return ""  # object storage: the first command that opens it says
    path = Path(where)
    if path.is_file():
        return "it is a file, not a folder"
    near = path if path.exists() else next((p for p in path.parents if p.exists()), None)
    if near is None or not near.is_dir():
        return f"{near} is a file, not a folder" if near is not None else "no folder above it exists"
    if not os.access(near, os.W_OK | os.X_OK):
        return (
            f"{near} cannot be written (permissions, or a read-only file system): recall works, add does not"
        )
    return ""
