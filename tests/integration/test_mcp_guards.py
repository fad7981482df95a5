"""The MCP front end's guards, in-process: what `remember` refuses and how the bearer token is read."""

from __future__ import annotations

import anyio
import pytest

from dcpm_cli.errors import InputError
from dcpm_cli.mcp.server import AgentMemory, BearerAuth
from dcpm_cli.memory import Memory


def test_remember_refuses_a_nul_byte_as_the_cli_does(settings, embedder, store) -> None:
    agent = AgentMemory(Memory(settings, embedder=embedder), llm=None)

    with pytest.raises(InputError, match="NUL"):
        agent.remember("my PIN is\x001234")

    assert store.count_by_kind("raw") == {}


def _status(header: bytes | None) -> int:
    """The status a request with this Authorization header gets through BearerAuth(token s3cret)."""

    async def inner_app(scope, receive, send) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"{}"})

    sent: list[dict] = []

    async def send(message: dict) -> None:
        sent.append(message)

    async def receive() -> dict:
        return {"type": "http.request", "body": b""}

    headers = [] if header is None else [(b"authorization", header)]
    anyio.run(BearerAuth(inner_app, "s3cret"), {"type": "http", "headers": headers}, receive, send)
    return sent[0]["status"]


@pytest.mark.parametrize(
    ("header", "status"),
    [
        (b"Bearer s3cret", 200),
        (b"bearer s3cret", 200),  # the scheme is case-insensitive (RFC 9110 §11.1)
        (b"BEARER s3cret", 200),
        (b"Bearer S3CRET", 401),  # the token is not
        (b"Basic s3cret", 401),
        (b"s3cret", 401),
        (b"", 401),
        (None, 401),
    ],
)
def test_the_bearer_scheme_is_case_insensitive_and_the_token_is_not(header, status) -> None:
    assert _status(header) == status
