"""`dcpm mcp` driven through the MCP SDK's own client: the server runs as a subprocess over
stdio (and streamable HTTP), with the scripted LLM read from a file and a real store."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from datetime import datetime
from pathlib import Path
from typing import Any

import anyio
import pytest
from support import replies as R
from support.paths import REPO
from support.procs import closed_port

from dcpm_cli.models import RawInput

pytest.importorskip("mcp")
from mcp import ClientSession, StdioServerParameters, stdio_client

RUN_AT = "2026-03-01T08:00:00+00:00"
SWIM_AT = "2026-04-01T08:00:00+00:00"
RUN = RawInput("I run 5 km every morning before work", source="mcp", said_at=datetime.fromisoformat(RUN_AT))
SWIM = RawInput(
    "I stopped running; I swim every morning now", source="mcp", said_at=datetime.fromisoformat(SWIM_AT)
)


def server_env(home: Path, replies: list[Any]) -> dict[str, str]:
    script = home.parent / "replies.jsonl"
    script.write_text("".join(json.dumps(r) + "\n" for r in replies), encoding="utf-8")
    path = os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH", "")) if p)
    return {
        "PYTHONPATH": path,
        "DCPM_HOME": str(home),
        "DCPM_LLM": f"scripted:{script}",
        "OLLAMA_HOST": f"127.0.0.1:{closed_port()}",
    }


def over_stdio(env: dict[str, str], body: Callable[[ClientSession], Awaitable[None]]) -> None:
    """Start `dcpm mcp` over stdio with this environment, as a client does, and run `body` in
    an initialised session with it."""
    params = StdioServerParameters(command=sys.executable, args=["-m", "dcpm_cli", "mcp"], env=env, cwd=REPO)

    async def session() -> None:
        async with stdio_client(params) as (r, w), ClientSession(r, w) as s:
            await s.initialize()
            await body(s)

    anyio.run(session)


def structured(result: Any) -> Any:
    assert not result.is_error, result.content[0].text
    data = result.structured_content
    return data.get("result", data) if isinstance(data, dict) and set(data) == {"result"} else data


async def until(check: Any, seconds: float = 60) -> Any:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if got := await check():
            return got
        await anyio.sleep(0.2)
    raise AssertionError("condition not met in time")


def test_an_agent_remembers_recalls_and_follows_a_change_of_mind(dcpm_home: Path, dcpm) -> None:
    replies = [
        R.extraction(R.item("runs 5 km every morning before work", attribute="morning exercise")),
        R.extraction(R.item("swims every morning instead of running", attribute="morning exercise")),
        *R.replaced(),
        R.extraction(R.item("is vegetarian", kind="identity", topic="diet", attribute="diet")),
        R.judged("unrelated"),
    ]
    env = server_env(dcpm_home, replies)
    seen: dict[str, Any] = {}

    async def body(s: ClientSession) -> None:
        tools = {t.name: t for t in (await s.list_tools()).tools}
        seen["tools"] = tools

        first = structured(await s.call_tool("remember", {"text": RUN.text, "at": RUN_AT, "wait": True}))
        second = structured(await s.call_tool("remember", {"text": SWIM.text, "at": SWIM_AT, "wait": True}))
        again = structured(await s.call_tool("remember", {"text": RUN.text, "at": RUN_AT}))
        seen["writes"] = (first, second, again)

        seen["recall"] = structured(
            await s.call_tool("recall", {"query": "how do I exercise in the morning?"})
        )
        seen["history"] = structured(await s.call_tool("history", {"target": "morning exercise"}))
        none = await s.call_tool("history", {"target": "quantum chromodynamics"})
        seen["no history"] = (none.is_error, none.content[0].text)
        seen["show"] = structured(await s.call_tool("show", {"id": RUN.id}))

        # Background extraction: the id comes back at once, the facts follow.
        veg = structured(await s.call_tool("remember", {"text": "I'm vegetarian now"}))
        seen["veg"] = veg

        async def extracted() -> Any:
            got = structured(await s.call_tool("show", {"id": veg["raw_id"]}))
            return got if got["raw"]["status"] == "done" else None

        seen["veg_done"] = await until(extracted)

        # A concurrent CLI writer (another process) is seen by the warm server.
        done = await anyio.to_thread.run_sync(
            lambda: dcpm("add", "--no-extract", "My sister Ana lives in Lisbon", env=env)
        )
        assert done.returncode == 0, done.stderr
        seen["sister"] = structured(await s.call_tool("recall", {"query": "where does Ana live?", "k": 3}))

        bad = await s.call_tool("remember", {"text": "   "})
        seen["bad"] = (bad.is_error, bad.content[0].text)
        stats = await s.read_resource("dcpm://stats")
        seen["stats"] = json.loads(stats.contents[0].text)

    over_stdio(env, body)

    tools = seen["tools"]
    assert set(tools) >= {"remember", "recall", "history", "show"}
    assert tools["remember"].input_schema["required"] == ["text"]
    assert "wait" in tools["remember"].input_schema["properties"]
    assert all(t.description for t in tools.values())

    first, second, again = seen["writes"]
    assert first["raw_id"] == RUN.id and first["added"] == [R.item_id(RUN)]
    assert second["superseded"] == [{"old": R.item_id(RUN), "new": R.item_id(SWIM)}]
    assert again == {"raw_id": RUN.id, "stored": False, "status": "done"}  # idempotent, no LLM call

    top = seen["recall"]["hits"][0]
    assert top["id"] == R.item_id(SWIM) and top["current"]
    assert [c["id"] for c in top["chain"]] == [R.item_id(RUN), R.item_id(SWIM)]
    # The same object as `dcpm recall --json` on the same store.
    cli = dcpm("recall", "how do I exercise in the morning?", "--json", env=env)
    assert json.loads(cli.stdout) == seen["recall"]

    [arc] = seen["history"]
    assert [s["id"] for s in arc["states"]] == [R.item_id(RUN), R.item_id(SWIM)]
    assert seen["no history"][0], "an empty reply is no reply to a client that shows text"
    assert (
        "no beliefs match 'quantum chromodynamics' (recall searches raw inputs too)" in seen["no history"][1]
    )
    assert seen["show"]["raw"]["status"] == "done"
    assert [i["id"] for i in seen["show"]["items"]] == [R.item_id(RUN)]

    assert seen["veg"]["status"] == "extracting in the background"
    assert [i["text"] for i in seen["veg_done"]["items"]] == ["is vegetarian"]
    assert seen["sister"]["hits"][0]["text"] == "My sister Ana lives in Lisbon"
    assert seen["bad"][0] and "nothing to remember" in seen["bad"][1]
    assert seen["stats"]["raw_inputs"] == 4 and seen["stats"]["pending"] == 1  # Ana's, --no-extract


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_http_needs_the_bearer_token(dcpm_home: Path, dcpm) -> None:
    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    env = server_env(dcpm_home, [])
    port = _free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "dcpm_cli", "mcp", "--http", f"127.0.0.1:{port}", "--token", "s3cret"],
        env={**os.environ, **env}, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                refused = httpx2.post(url, json={}, timeout=5)
                break
            except httpx2.ConnectError:
                assert proc.poll() is None and time.monotonic() < deadline, proc.stderr.read().decode()  # type: ignore[union-attr]
                time.sleep(0.3)
        assert refused.status_code == 401

        async def session() -> Any:
            client = httpx2.AsyncClient(headers={"Authorization": "Bearer s3cret"})
            transport = streamable_http_client(url, http_client=client)
            async with client, transport as (r, w), ClientSession(r, w) as s:
                await s.initialize()
                kept = structured(await s.call_tool("remember", {"text": "I keep bees on the roof"}))
                found = structured(await s.call_tool("recall", {"query": "bees"}))
                return kept, found

        kept, found = anyio.run(session)
        assert found["hits"][0]["id"] == kept["raw_id"]
    finally:
        proc.terminate()
        proc.wait(30)

    # Beyond the loopback address, no token means no server.
    done = dcpm("mcp", "--http", "0.0.0.0:8765", env=env)
    assert done.returncode == 2 and "bearer token" in done.stderr


def test_an_agent_forgets_only_on_a_second_call_with_the_plans_token(dcpm_home: Path, dcpm) -> None:
    replies = [R.extraction(R.item("has a flat at Rua Augusta 12", topic="home", attribute="address"))]
    env = server_env(dcpm_home, replies)
    secret = "My flat is at Rua Augusta 12, key under the mat"
    seen: dict[str, Any] = {}

    async def body(s: ClientSession) -> None:
        kept = structured(await s.call_tool("remember", {"text": secret, "wait": True}))
        structured(await s.call_tool("remember", {"text": "I like green tea"}))
        asked = structured(await s.call_tool("forget", {"query": "where is my flat", "k": 1}))
        seen["after_ask"] = structured(await s.call_tool("recall", {"query": "flat key", "k": 3}))
        wrong = structured(await s.call_tool("forget", {"ids": [kept["raw_id"]], "confirm": "forget-0"}))
        # The command line plans the same forget as the same object.
        seen["cli_plan"] = await anyio.to_thread.run_sync(
            lambda: dcpm("forget", kept["raw_id"], "--dry-run", "--json", env=env)
        )
        done = structured(await s.call_tool("forget", {"ids": [kept["raw_id"]], "confirm": wrong["confirm"]}))
        seen["calls"] = (kept, asked, wrong, done)
        seen["after"] = structured(await s.call_tool("recall", {"query": "flat key", "k": 3}))
        gone = await s.call_tool("show", {"id": kept["raw_id"]})
        seen["show"] = (gone.is_error, gone.content[0].text)
        nothing = await s.call_tool("forget", {})
        seen["nothing"] = (nothing.is_error, nothing.content[0].text)

    over_stdio(env, body)

    kept, asked, wrong, done = seen["calls"]
    assert asked["forgotten"] is False and asked["confirm"].startswith("forget-")
    assert asked["plan"]["raw_ids"] == [kept["raw_id"]]
    assert len(asked["plan"]["item_ids"]) == 1  # the fact taken only from those words goes too
    assert secret in asked["texts"].values() and "texts" not in asked["plan"]
    assert any("Augusta" in h["text"] for h in seen["after_ask"]["hits"])  # asking changed nothing
    assert wrong["forgotten"] is False and "changed" in wrong["note"]
    assert json.loads(seen["cli_plan"].stdout) == wrong["plan"]
    assert done["forgotten"] is True and done["event"] and "texts" not in done
    assert all("Augusta" not in h["text"] for h in seen["after"]["hits"])
    assert seen["show"][0] and "no " in seen["show"][1].lower()
    assert seen["nothing"][0] and "say what to forget" in seen["nothing"][1]
    store_bytes = b"".join(p.read_bytes() for p in (dcpm_home / "store").rglob("*") if p.is_file())
    assert b"Augusta" not in store_bytes


def test_a_burst_of_remembers_is_committed_before_a_waiting_call_returns(dcpm_home: Path, dcpm) -> None:
    """The worker extracts a burst as one group (one commit per table): an agent that waits on
    its last call then finds every fact of the burst, from any process."""
    people = ["Ana", "Bruno", "Carla", "Dario"]
    replies = [R.extraction(R.item(f"{p} plays chess", topic="friends", subject=p)) for p in people]
    env = server_env(dcpm_home, replies)
    seen: dict[str, Any] = {}

    async def body(s: ClientSession) -> None:
        for p in people[:-1]:
            structured(await s.call_tool("remember", {"text": f"My friend {p} plays chess"}))
        last = {"text": f"My friend {people[-1]} plays chess", "wait": True}
        seen["last"] = structured(await s.call_tool("remember", last))
        # Another process, before the server stops: the facts are in the tables.
        seen["elsewhere"] = await anyio.to_thread.run_sync(
            lambda: dcpm("recall", "who plays chess?", "--kind", "fact", "--json", "-k", "8", env=env)
        )

    over_stdio(env, body)

    assert seen["last"]["status"] == "done" and len(seen["last"]["added"]) == 1
    found = json.loads(seen["elsewhere"].stdout)
    assert sorted(h["text"] for h in found["hits"]) == sorted(f"{p} plays chess" for p in people)
