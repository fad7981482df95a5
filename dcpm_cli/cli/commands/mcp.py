"""`dcpm mcp`: serve dcpm to agents over the Model Context Protocol (stdio, or streamable HTTP)."""

from __future__ import annotations

from typing import Annotated

import typer

from dcpm_cli.cli.app import _session, app


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
        bool, typer.Option("--no-extract", help="`remember` stores raw only; `dcpm process` extracts later.")
    ] = False,
) -> None:
    """Serve the memory to agents over MCP: remember, recall, history, show (models stay warm)."""
    from dcpm_cli.errors import InputError
    from dcpm_cli.mcp import server as mcp_server

    try:
        import mcp as _sdk  # noqa: F401
    except ImportError as e:
        raise InputError("the MCP SDK is not installed", "pip install 'dcpm[mcp]'") from e
    address = mcp_server.parse_http(http) if http else None
    if address:
        mcp_server.check_http(address[0], token)
    s = _session(ctx)
    memory = mcp_server.Memory(s.settings, s.get_embedder(), None if no_extract else s.get_llm())
    mcp_server.serve(memory, http=address, token=token)
