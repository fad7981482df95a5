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


def test_remember_says_the_llm_is_away_instead_of_promising_an_extraction(settings, embedder, store) -> None:
    import time

    from dcpm_cli.llm import get_llm

    # OLLAMA_HOST is a closed port here (conftest): the real client, no server.
    agent = AgentMemory(Memory(settings, embedder=embedder), llm=get_llm("ollama:qwen3:4b", timeout=5))
    try:
        first = agent.remember("I started learning the cello")
        assert first["status"] == "extracting in the background"  # nothing known yet
        deadline = time.monotonic() + 30
        while not agent._llm_away and time.monotonic() < deadline:
            time.sleep(0.1)

        second = agent.remember("My cello teacher is called Ines")

        assert second["stored"] and second["status"] == "pending"
        assert "could not reach the LLM" in second["error"] and "dcpm process" in second["error"]
        assert store.count_by_kind("raw") == {"pending": 2}  # both kept for `dcpm process`
    finally:
        agent.close()


def test_a_forget_plan_shows_a_long_text_cut_to_what_recognises_it(settings, embedder, store) -> None:
    agent = AgentMemory(Memory(settings, embedder=embedder), llm=None)
    long = "My bank PIN is 4471. " + "And then a long story about the weekend. " * 5_000
    kept = agent.remember(long)

    plan = agent.forget([kept["raw_id"]])

    shown = plan["texts"][kept["raw_id"]]
    assert shown.startswith("My bank PIN is 4471.") and len(shown) < 1_100
    assert f"({len(long.strip()):,} characters in all)" in shown
    assert plan["forgotten"] is False and store.count_by_kind("raw") == {"pending": 1}


def test_remember_of_words_the_user_had_forgotten_says_so(settings, embedder, store) -> None:
    agent = AgentMemory(Memory(settings, embedder=embedder), llm=None)
    said = {"session": "chat-7", "at": "2026-03-02T09:15:00Z"}
    kept = agent.remember("My bank PIN is 4471", **said)
    plan = agent.forget([kept["raw_id"]])
    assert agent.forget([kept["raw_id"]], confirm=plan["confirm"])["forgotten"]

    again = agent.remember("My bank PIN is 4471", **said)  # an agent replaying the log

    assert again == {"raw_id": kept["raw_id"], "stored": False, "status": "forgotten"}
    assert store.count_by_kind("raw") == {}


def test_remember_of_words_stored_before_from_a_file_says_so(settings, embedder, store) -> None:
    """The same words at the same moment, stored from a file under another session: `remember`
    says they are stored already (it failed on the id it had not stored)."""
    from datetime import UTC, datetime

    from dcpm_cli.models import RawInput

    at = datetime(2026, 3, 2, 9, 15, tzinfo=UTC)
    memory = Memory(settings, embedder=embedder)
    memory.add(
        [RawInput("Book the table for Friday.", session="notes", source="notes.txt", said_at=at)],
        extract=False,
    )
    agent = AgentMemory(memory, llm=None)
    again = agent.remember("Book the table for Friday.", session="chat-7", at="2026-03-02T09:15:00Z")
    assert again["stored"] is False and again["status"] == "already stored"
    assert store.count_by_kind("raw") == {"pending": 1}
