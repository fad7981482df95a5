"""`dcpm mcp`: serve dcpm to agents over the Model Context Protocol (stdio, or streamable HTTP)."""

from __future__ import annotations

from typing import Annotated

import typer

from dcpm_cli.cli.app import _memory, app


@app.command()
def mcp(
    ctx: typer.Context,
    http: Annotated[
        str | None,
        typer.Option(
            "--http",
            metavar="HOST:PORT",
            help="Serve streamable HTTP at http://HOST:PORT/mcp instead of stdio (PORT alone: 127.0.0.1).",
            show_default=False,
        ),
    ] = None,
    token: Annotated[
        str | None,
        typer.Option(
            "--token",
            envvar="DCPM_MCP_TOKEN",
            help="Bearer token HTTP clients must send; required off the loopback address.",
            show_default=False,
        ),
    ] = None,
    no_extract: Annotated[
        bool,
        typer.Option(
            "--no-extract",
            help="`remember` stores raw only; `dcpm process` extracts later (always, with extract = false).",
        ),
    ] = False,
) -> None:
    """Serve the memory to agents over MCP: remember, recall, history, show, link, forget, stats.

    Tools remember, recall, history, show, link, unlink and forget (which shows its plan first
    and acts only on a second call with that plan's token); resources dcpm://stats and
    dcpm://schemas. The models stay warm between calls."""
    from dcpm_cli.errors import InputError
    from dcpm_cli.mcp import server as mcp_server

    try:
        import mcp as _sdk  # noqa: F401
    except ImportError as e:
        raise InputError("the MCP SDK is not installed", "pip install 'dcpm[mcp]'") from e
    address = mcp_server.parse_http(http) if http else None
    if address:
        mcp_server.check_http(address[0], token)
    m = _memory(ctx)
    memory = mcp_server.AgentMemory(m, llm=None if no_extract or not m.settings.extract else m.llm)
    mcp_server.serve(memory, http=address, token=token)
