"""`dcpm recall`, `history`, `show`, `stats`, `doctor`: the read path from the command line."""

from __future__ import annotations

import sys
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import typer

from dcpm_cli.cli.app import NoSupersedes, _session, app
from dcpm_cli.errors import EXIT_LLM
from dcpm_cli.ingest.text import parse_as_of, read_file


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
    as_of: Annotated[str | None, typer.Option("--as-of", help="What was believed then (ISO date).")] = None,
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
    from dcpm_cli import render
    from dcpm_cli.errors import InputError
    from dcpm_cli.models import ITEM_KINDS
    from dcpm_cli.read.recall import recall as run_recall

    kinds = kind or None
    for x in kinds or []:
        if x not in (*ITEM_KINDS, "raw"):
            raise InputError(f"unknown kind {x!r}", "use fact, identity, summary or raw")
    when = parse_as_of(as_of, "--as-of") if as_of else None
    if as_json:
        fmt = OutputFormat.json
    if batch is not None:
        queries = list(_batch_queries(batch))
    elif query is None or not query.strip():
        raise InputError("give a QUERY (or --batch FILE)", 'dcpm recall "what do I eat?"')
    else:
        queries = [query]
    s = _session(ctx).ablate(no_supersedes)
    store = s.store_or_none()
    if store is None and batch is None and fmt is OutputFormat.table:
        render.note('nothing stored yet; add something with: dcpm add "..."')
        return
    embedder = s.get_embedder()
    floor, chains = s.settings.recall_min_similarity, not s.settings.no_supersedes
    for q in queries:
        if store is None:
            result = _empty(q, when)
        else:
            result = run_recall(
                store, embedder, q, k=k, kinds=kinds, as_of=when, min_similarity=floor, chains=chains
            )
            render.warnings(result.warnings)
        if batch is not None or fmt is OutputFormat.json:
            render.print_json(render.recall_dict(result))
        elif fmt is OutputFormat.prompt:
            render.recall_prompt(result)
        else:
            render.recall_table(result, arc=arc)


def _empty(query: str, when: Any) -> Any:
    from dcpm_cli.models import Recall

    return Recall(query=query, hits=[], as_of=when)


def _batch_queries(source: str) -> Any:

    text = sys.stdin.read() if source == "-" else read_file(Path(source))
    return (line.strip() for line in text.splitlines() if line.strip())


@app.command()
def history(
    ctx: typer.Context,
    target: Annotated[str, typer.Argument(help="A query, or an item id (m_...).", show_default=False)],
    k: Annotated[int, typer.Option("-k", "--top", min=1, help="How many beliefs, for a query.")] = 3,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    no_supersedes: NoSupersedes = False,
) -> None:
    """The full revision arc of a belief: each state, when, where it came from, what replaced it."""
    from dcpm_cli import render
    from dcpm_cli.read.recall import arcs

    s = _session(ctx).ablate(no_supersedes)
    store = s.store_or_none()
    if store is None and not as_json:
        render.note('nothing stored yet; add something with: dcpm add "..."')
        return
    floor, chains = s.settings.recall_min_similarity, not s.settings.no_supersedes
    result = []
    if store is not None:
        result = arcs(store, s.get_embedder(), target, k=k, min_similarity=floor, chains=chains)
    if as_json:
        render.print_json([render.arc_dict(a) for a in result])
    else:
        render.arcs_timeline(result, target)


@app.command()
def show(
    ctx: typer.Context,
    ident: Annotated[str, typer.Argument(metavar="ID", help="An item (m_), raw input (r_) or node id.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """One item, raw input or graph node, with provenance, event log and links."""
    from dcpm_cli import render
    from dcpm_cli.read.recall import describe

    store = _session(ctx).store_or_none()
    if store is None:
        from dcpm_cli.errors import InputError

        raise InputError(f"no item, input or node with id {ident!r}", "nothing is stored yet")
    detail = describe(store, ident)
    if as_json:
        render.print_json(detail)
    else:
        render.detail(detail)


@app.command()
def stats(
    ctx: typer.Context,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Counts per kind, chains, pending inputs, graph nodes, dream runs, size on disk."""
    from dcpm_cli import render
    from dcpm_cli.read.recall import empty_stats, store_stats

    s = _session(ctx)
    store = s.store_or_none()
    if store is None:
        render.note('nothing stored yet; add something with: dcpm add "..."')
        if as_json:  # the same object, empty: a script's jq still parses
            render.print_json(empty_stats(s.settings.store, s.get_embedder().model_id))
        return
    figures = store_stats(store)
    if as_json:
        render.print_json(figures)
    else:
        render.stats(figures)


@app.command()
def doctor(
    ctx: typer.Context,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Check the setup: where the store is, which embedder, whether the LLM answers."""
    from dcpm_cli import render
    from dcpm_cli.llm import probe

    s = _session(ctx)
    problem = probe(s.settings.llm)
    report = {
        "store": s.settings.store,
        "embedder": s.settings.embedder,
        "llm": s.settings.llm,
        "llm_ok": not problem,
        "llm_problem": problem,
    }
    if as_json:
        render.print_json(report)
    else:
        render.doctor(report)
    if problem:
        raise typer.Exit(EXIT_LLM)
