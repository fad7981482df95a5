"""Your memory, your control: `dcpm forget`, `export`, `import`, `reembed`, `backup`, `config`.

Exit codes: 0 done; 2 bad input (unknown id, a newer export format, forget on a non-terminal
without --yes); 4 store error; 5 another dcpm process holds the store.
"""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from dcpm_cli.cli import _session, app


@app.command()
def forget(
    ctx: typer.Context,
    ids: Annotated[
        list[str] | None,
        typer.Argument(metavar="[ID]...", help="Raw inputs (r_…), items (m_…), nodes (n_…)."),
    ] = None,
    query: Annotated[
        str | None,
        typer.Option("--query", "-q", help="Forget what `recall` finds for this, and its sources."),
    ] = None,
    k: Annotated[int, typer.Option("-k", "--top", min=1, max=100, help="With --query: how many hits.")] = 3,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Show what would go; change nothing.")] = False,
    yes: Annotated[
        bool, typer.Option("--yes", "-y", help="Do not ask (needed when not on a terminal).")
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the plan / result as JSON.")] = False,
) -> None:
    """Forget for good: the cascade is shown first; no file, old version or index keeps the text."""
    from dcpm_cli import render
    from dcpm_cli.errors import InputError
    from dcpm_cli.forget import apply_forget, plan_forget, select_by_query

    s = _session(ctx)
    store = s.store(create=False)
    wanted = list(ids or [])
    if query:
        floor = s.settings.recall_min_similarity
        wanted += select_by_query(store, s.get_embedder(), query, k=k, min_similarity=floor)
        if not wanted:
            render.note(f"nothing found for {query!r}; nothing forgotten")
            return
    plan = plan_forget(store, wanted)
    if dry_run:
        render.forget_plan(plan, as_json=as_json)
        return
    if not yes:
        if not sys.stdin.isatty():
            raise InputError(
                "forget needs a confirmation, and stdin is not a terminal", "add --yes in scripts"
            )
        render.forget_plan(plan, as_json=False)
        if not typer.confirm("Forget these for good?", default=False):
            raise typer.Exit(1)
    report = apply_forget(store, plan)
    render.forget_plan(plan, as_json=as_json, done=report)
