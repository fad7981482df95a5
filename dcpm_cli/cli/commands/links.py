"""`dcpm link EARLIER LATER` and `dcpm unlink ITEM`: the user mends a revision arc the writer got
wrong (ops/links.py). Both print the arc(s) they leave, as `dcpm history` does.

Exit codes: 0 done (or already so); 2 bad input (an unknown id, not a belief, a link backwards
in time); 4 store error; 5 another dcpm process holds the store.
"""

from __future__ import annotations

from typing import Annotated

import typer

from dcpm_cli.cli.app import AsJson, _memory, app

_ID = "m_…, as `dcpm recall` and `dcpm history` show"


@app.command()
def link(
    ctx: typer.Context,
    earlier: Annotated[
        str, typer.Argument(help=f"The belief that no longer holds ({_ID}).", show_default=False)
    ],
    later: Annotated[str, typer.Argument(help=f"The belief that replaced it ({_ID}).", show_default=False)],
    as_json: AsJson = False,
) -> None:
    """Say LATER replaced EARLIER (a change the model missed): their arcs join, LATER's is current."""
    from dcpm_cli import render, views

    m = _memory(ctx)
    done, arcs = m.link(earlier, later)
    if as_json:
        render.print_json(views.link_dict("linked", done, arcs))
        return
    for note in done.notes:
        render.note(note)
    what = "linked" if done.done else "already one arc"
    render.note(f"{what}: {render.clip(done.earlier.text)} → {render.clip(done.later.text)}")
    render.arcs_timeline(arcs, later, zone=m.settings.timezone)


@app.command()
def unlink(
    ctx: typer.Context,
    item: Annotated[
        str, typer.Argument(help=f"The belief that wrongly replaced another ({_ID}).", show_default=False)
    ],
    as_json: AsJson = False,
) -> None:
    """Say ITEM did not replace the belief before it (a wrong link): that one is current again."""
    from dcpm_cli import render, views

    m = _memory(ctx)
    done, arcs = m.unlink(item)
    if as_json:
        render.print_json(views.link_dict("unlinked", done, arcs))
        return
    cut = f"{render.clip(done.later.text)} no longer replaces {render.clip(done.earlier.text)}"
    render.note(f"unlinked: {cut}" if done.done else f"already unlinked: {cut}")
    render.arcs_timeline(arcs, item, zone=m.settings.timezone)
