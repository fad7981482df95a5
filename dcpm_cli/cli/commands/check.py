"""`dcpm check [--repair] [--json]`: are the invariants a user relies on holding?

Exit codes: 0 every check holds (after --repair, when given); 6 something is wrong that
--repair did not (or could not) fix; 4 the store cannot be opened (e.g. another embedder);
5 a writer holds the store's lock for too long.
"""

from __future__ import annotations

from typing import Annotated

import typer

from dcpm_cli.cli.app import AsJson, _memory, app
from dcpm_cli.errors import EXIT_CHECK


@app.command()
def check(
    ctx: typer.Context,
    repair: Annotated[
        bool, typer.Option("--repair", help="Fix what can be fixed without guessing, then check again.")
    ] = False,
    as_json: AsJson = False,
) -> None:
    """Verify the store: inputs, chains, provenance, graph, passages, embedder; exit 6 if broken."""
    from dcpm_cli import render

    m = _memory(ctx)
    if m.store_or_none() is None:
        render.note(m.nothing_stored)
        if as_json:  # nothing to check: every check holds
            render.print_json(m.check().to_dict())
        return
    report = m.check(repair=repair)
    render.check_report(report, as_json=as_json)
    if not report.ok:
        raise typer.Exit(EXIT_CHECK)
