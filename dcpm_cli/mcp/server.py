"""`dcpm mcp`: dcpm as a Model Context Protocol server, for agents (Claude Desktop / Code,
Cursor, any MCP client).

The embedder and the store are loaded once and stay warm. What the CLI guarantees holds here:
`remember` puts the raw input on disk before anything else and returns its id at once; the read
tools never call an LLM; `link` and `unlink` mend an arc on the user's word; `forget` shows its
plan and acts only on a second call carrying that plan's token; writes take the store's lock
file, so a concurrent `dcpm add` or a cron `dcpm dream` is safe. Extraction runs in one worker
thread of the server with its own store handle (like another process: it serialises on the same
lock file), so a slow LLM never holds up `recall`. Inputs the worker has not reached when the
server stops stay pending for `dcpm process`.
"""

from __future__ import annotations

import contextlib
import hmac
import json
import queue
import threading
import time
from collections.abc import Iterator
from concurrent.futures import Future
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import Field  # the tools' argument descriptions (annotations are read at run time)

from dcpm_cli.errors import DcpmError, InputError
from dcpm_cli.ingest.text import is_wall_clock, parse_time
from dcpm_cli.models import PENDING, RawInput, utcnow
from dcpm_cli.store.staging import GROUP_INPUTS, GROUP_SECONDS

if TYPE_CHECKING:
    from dcpm_cli.embed import Embedder
    from dcpm_cli.llm import LLM
    from dcpm_cli.memory import Memory
    from dcpm_cli.models import AddReport

INSTRUCTIONS = (
    "dcpm is the user's long-term memory. Call `recall` before answering anything that may "
    "depend on what the user said earlier (preferences, plans, facts about their life); call "
    "`remember` with what the user tells you that is worth keeping, in their own words. "
    "Beliefs that changed are kept as revision chains: `history` shows how one evolved."
)
STATS = "Counts per kind, chains, pending inputs, dream runs, size on disk (as `dcpm stats --json`)."
SCHEMAS = "What dreams built: schemas, intentions, core schemas by domain (as `dcpm schemas --json`)."
LOOPBACK = ("127.0.0.1", "localhost", "::1")


class _Serialised:
    """An embedder shared by the request threads and the worker, one call at a time (the
    tokenizer is not safe to call from two threads at once)."""

    def __init__(self, inner: Embedder) -> None:
        self._inner, self._lock = inner, threading.Lock()
        self.model_id, self.dim = inner.model_id, inner.dim

    def embed(self, texts: Any) -> Any:
        with self._lock:
            return self._inner.embed(texts)


class AgentMemory:
    """The memory as agents use it: a warm `dcpm_cli.memory.Memory` (one embedder, one store
    handle for requests, serialised between threads) and one extraction worker. Every method
    returns plain JSON-able data (the CLI's `--json` shapes, from views) or raises DcpmError."""

    def __init__(self, memory: Memory, *, llm: LLM | None) -> None:
        # llm None: store raw only (`dcpm mcp --no-extract`); `dcpm process` extracts later.
        from dcpm_cli.memory import Memory

        self.settings, self.llm = memory.settings, llm
        self.embedder = _Serialised(memory.embedder)
        self.memory = Memory(self.settings, embedder=self.embedder)
        self.store = self.memory.store()
        self._reads = threading.Lock()
        self._jobs: queue.Queue = queue.Queue()
        self._llm_away = ""  # why the worker's last extraction could not reach the LLM, or ""
        self._worker: threading.Thread | None = None
        if self.llm is not None:
            self._worker = threading.Thread(target=self._work, name="dcpm-extract", daemon=True)
            self._worker.start()

    # -- writes -----------------------------------------------------------------------------

    def remember(
        self,
        text: str,
        *,
        role: str = "user",
        session: str = "",
        at: str | None = None,
        wait: bool = False,
    ) -> dict[str, Any]:
        """Store one input now; extract it in the background (or before returning, if `wait`)."""
        from dcpm_cli.ingest import formats as ingest

        if not text.strip():
            raise InputError("nothing to remember: the text is empty")
        if role not in ingest.ROLES:
            raise InputError(f"role must be one of {', '.join(ingest.ROLES)}, got {role!r}")
        # An utterance, like a typed `dcpm add "…"`: the same words at another time are new.
        said = parse_time(at, "at") if at is not None else utcnow()
        wall = is_wall_clock(at)  # a time of the user's zone (stored as one)
        raw = RawInput(
            text=text.strip(), role=role, session=session, source="mcp", said_at=said, wall_clock=wall
        )
        with self._reads:
            stored = self.memory.add([raw], extract=False)
            if stored.forgotten:  # the user had these words forgotten: not stored again
                return {"raw_id": raw.id, "stored": False, "status": "forgotten"}
            got = self.store.get_raw([raw.id]).get(raw.id)
            if got is None:  # the same words at the same moment, stored before from elsewhere
                return {"raw_id": raw.id, "stored": False, "status": "already stored"}
            status = got.status
        out: dict[str, Any] = {"raw_id": raw.id, "stored": bool(stored.stored), "status": status}
        if status != PENDING or self.llm is None:
            return out
        done = self._submit(raw.id)
        if not wait:
            if away := self._llm_away:  # the agent is told, not promised an extraction
                why = f"the last extraction could not reach the LLM ({away}); this one is tried in "
                return {**out, "error": why + "the background, and `dcpm process` extracts what waits"}
            return {**out, "status": "extracting in the background"}
        report = done.result()
        return {**out, **_extraction(report), "status": self._status(raw.id)}

    def _submit(self, raw_id: str) -> Future:
        done: Future = Future()
        self._jobs.put((raw_id, done))
        return done

    def _work(self) -> None:
        """The extraction worker: its own store handle, the inputs in the order remembered."""
        from dcpm_cli.store import Store
        from dcpm_cli.write.pipeline import Writer

        store = Store(self.settings.store, self.embedder, state_dir=self.store.state_dir)
        writer = Writer(store, self.embedder, self.llm, self.settings)
        job = self._jobs.get()
        while job is not None:
            # A burst of inputs is one group: their derived writes are committed together
            # (store/staging.py) when the queue runs dry, or after GROUP_INPUTS inputs or
            # GROUP_SECONDS. A caller that waits hears back after that commit, so what it then
            # reads is there.
            finished: list[tuple[Future, AddReport | Exception]] = []
            start = time.monotonic()
            try:
                with writer.group():
                    while job:
                        raw_id, done = job
                        try:
                            raws = list(writer.store.get_raw([raw_id]).values())
                            report = writer.extract(raws)
                            self._llm_away = report.llm_error
                            finished.append((done, report))
                        except Exception as e:  # the caller of `wait` sees it; the input stays stored
                            finished.append((done, e))
                        if len(finished) >= GROUP_INPUTS or time.monotonic() - start >= GROUP_SECONDS:
                            job = False  # end the group: those who wait hear back now
                            break
                        try:
                            job = self._jobs.get_nowait()
                        except queue.Empty:
                            job = False  # the queue ran dry: end the group
            except Exception as e:  # the commit itself failed: the log is replayed by the next write
                finished = [(done, e) for done, _ in finished]
            for done, result in finished:
                if isinstance(result, Exception):
                    done.set_exception(result)
                else:
                    done.set_result(result)
            if job is False:
                job = self._jobs.get()

    def _status(self, raw_id: str) -> str:
        with self._reads:
            raw = self.store.get_raw([raw_id]).get(raw_id)
        return raw.status if raw else "unknown"

    def close(self, timeout: float = 30.0) -> None:
        """Let the worker finish the input in hand; the rest stay pending for `dcpm process`."""
        if self._worker is not None:
            while True:
                try:
                    self._jobs.get_nowait()[1].cancel()
                except queue.Empty:
                    break
            self._jobs.put(None)
            self._worker.join(timeout)

    # -- reads (never an LLM) ---------------------------------------------------------------

    def recall(
        self,
        query: str,
        *,
        k: int = 10,
        as_of: str | None = None,
        arc: bool = True,
        kinds: list[str] | None = None,
    ) -> dict[str, Any]:
        """The same object as `dcpm recall --json`."""
        from dcpm_cli import views

        if not query.strip():
            raise InputError("give a query", "e.g. 'what does the user eat?'")
        with self._reads:
            result = self.memory.recall(query, k=k, kinds=kinds, as_of=as_of)
        return views.recall_dict(result, arc=arc)

    def history(self, target: str, *, k: int = 3) -> list[dict[str, Any]]:
        """The arcs, as `dcpm history --json`; none is an error the agent reads (an empty list
        is an empty reply to a client that shows text), saying why."""
        from dcpm_cli import views

        with self._reads:
            arcs = [views.arc_dict(a) for a in self.memory.history(target, k=k)]
        if not arcs:
            if target.strip().startswith("r_"):
                raise InputError(
                    f"input {target.strip()} has no beliefs yet (not extracted, or nothing to extract)",
                    "show gives its words and status",
                )
            raise InputError(f"no beliefs match {target.strip()!r}", "recall searches raw inputs too")
        return arcs

    def show(self, ident: str) -> dict[str, Any]:
        from dcpm_cli import views

        with self._reads:
            return views.plain(self.memory.show(ident.strip()))

    def forget(
        self, ids: list[str] | None = None, *, query: str = "", k: int | None = None, confirm: str = ""
    ) -> dict[str, Any]:
        """Two steps, so an agent cannot forget by accident: without `confirm`, the plan (as
        `dcpm forget --dry-run --json`), the texts that would go, and a token; with the token of
        the same plan, the forget. The token is the plan's digest: if the memory changed since,
        the plan is shown again."""
        from dcpm_cli import views
        from dcpm_cli.models import short_hash

        if not ids and not query.strip():
            raise InputError("say what to forget", "give ids (r_…, m_…, n_…) or a query")
        with self._reads:
            plan, left_out = self.memory.plan_forget(ids or [], query=query, k=k)
            if plan is None:
                return {"forgotten": False, "plan": None, "note": f"nothing found for {query!r}"}
            changes = [*sorted(plan.removed), *sorted(plan.trimmed), *sorted(plan.reverts)]
            token = "forget-" + short_hash(*changes)
            shown = views.plain(views.forget_plan_dict(plan))
            if confirm != token:
                why = (
                    "that token is another plan's (the memory changed, or other things were "
                    "asked): check this one"
                    if confirm
                    else ""
                )
                note = why or "nothing is forgotten yet: call forget again with this confirm token"
                note += f" ({left_out})" if left_out else ""
                return {
                    "forgotten": False,
                    "plan": shown,
                    "texts": {i: _clipped(t) for i, t in plan.texts.items()},
                    "confirm": token,
                    "note": note,
                }
            report = self.memory.forget(plan)
        return {"forgotten": True, "plan": shown, "event": report.event_id,
                "events_scrubbed": report.events_scrubbed}  # fmt: skip

    def link(self, earlier: str, later: str) -> dict[str, Any]:
        from dcpm_cli import views

        with self._reads:
            done, arcs = self.memory.link(earlier, later)
            return views.plain(views.link_dict("linked", done, arcs))

    def unlink(self, item: str) -> dict[str, Any]:
        from dcpm_cli import views

        with self._reads:
            done, arcs = self.memory.unlink(item)
            return views.plain(views.link_dict("unlinked", done, arcs))

    def stats(self) -> dict[str, Any]:
        from dcpm_cli import views

        with self._reads:
            return views.plain(self.memory.stats())

    def schemas(self) -> dict[str, Any]:
        from dcpm_cli import views

        with self._reads:
            return views.plain(self.memory.schemas())


@contextlib.contextmanager
def _as_tool_error() -> Iterator[None]:
    """A dcpm failure reaches the agent as its message and hint (the SDK would hide it)."""
    from mcp.server.mcpserver.exceptions import ToolError

    try:
        yield
    except DcpmError as e:
        raise ToolError(e.message + (f" ({e.hint})" if e.hint else "")) from e


SHOWN_TEXT = 1_000  # characters of each text a forget plan shows: enough to recognise it


def _clipped(text: str) -> str:
    """A text to show the user before it is forgotten, cut to SHOWN_TEXT (a 1 MB input made a
    plan of 4 MB, in the agent's context twice)."""
    return text if len(text) <= SHOWN_TEXT else f"{text[:SHOWN_TEXT]}… ({len(text):,} characters in all)"


def _extraction(report: AddReport) -> dict[str, Any]:
    o = report.outcomes[0] if report.outcomes else None
    return {
        "added": o.added if o else [],
        "superseded": [{"old": a, "new": b} for a, b in o.superseded] if o else [],
        "updated": o.updated if o else [],
        "error": report.llm_error or (o.error if o else ""),
    }


# -- the MCP server -----------------------------------------------------------------------------


def build_server(memory: AgentMemory) -> Any:
    """An MCPServer with dcpm's tools and resources (descriptions are what the agent reads)."""
    from mcp.server.mcpserver import MCPServer

    from dcpm_cli import __version__

    server = MCPServer("dcpm", version=__version__, instructions=INSTRUCTIONS, log_level="WARNING")

    tool = server.tool()

    @tool
    def remember(
        text: Annotated[str, Field(description="What to remember, in the user's own words.")],
        role: Annotated[str, Field(description="Who said it: user (default), assistant or system.")] = "user",
        session: Annotated[
            str, Field(description="A conversation id, so extraction sees the turns before it.")
        ] = "",
        at: Annotated[
            str | None, Field(description="When it was said, ISO date or time (default: now).")
        ] = None,
        wait: Annotated[
            bool,
            Field(
                description="true: extract facts before returning (seconds with a local LLM); "
                "false (default): return at once and extract in the background."
            ),
        ] = False,
    ) -> dict[str, Any]:
        """Store something the user said or that is worth keeping. The words are on disk before
        this returns (raw_id); facts and changes of mind are extracted from them by an LLM,
        in the background unless wait is true. Only the user's own statements become facts."""
        with _as_tool_error():
            return memory.remember(text, role=role, session=session, at=at, wait=wait)

    @tool
    def recall(
        query: Annotated[str, Field(description="What to look for, e.g. 'what does the user eat?'.")],
        k: Annotated[int, Field(description="How many memories.", ge=1, le=100)] = 10,
        as_of: Annotated[
            str | None, Field(description="ISO date: what was believed then, instead of now.")
        ] = None,
        arc: Annotated[
            bool, Field(description="Include each belief's revision arc (chain), oldest first.")
        ] = True,
        kinds: Annotated[
            list[str] | None, Field(description="Only these kinds: fact, identity, summary, raw.")
        ] = None,
    ) -> dict[str, Any]:
        """Search the user's memory: current beliefs first, each with the ids of the words it
        came from and its revision arc, plus schemas/intentions built from the facts. The
        assistant's replies in a stored conversation are searched too (role "assistant"): a
        little below the user's own words, or level with them when the question asks what the
        assistant said ("what did you / the assistant / the AI recommend for…?"); each carries
        the user's turn it answered (reply_to). Time words
        in the query ("last weekend", "over Christmas", "a week after the move") lift what was
        said then, in the user's timezone. A search, never an LLM call: fast. Same JSON as
        `dcpm recall --json`."""
        with _as_tool_error():
            return memory.recall(query, k=k, as_of=as_of, arc=arc, kinds=kinds)

    @tool
    def history(
        target: Annotated[str, Field(description="A query, or an item id (m_...).")],
        k: Annotated[int, Field(description="How many beliefs, for a query.", ge=1, le=20)] = 3,
    ) -> list[dict[str, Any]]:
        """How a belief evolved: each state, when, the words it came from, what replaced it."""
        with _as_tool_error():
            return memory.history(target, k=k)

    @tool
    def show(
        id: Annotated[str, Field(description="An item (m_...), raw input (r_...) or node (n_...) id.")],
    ) -> dict[str, Any]:
        """Everything about one id: the item with its sources, chain and event log; a raw input
        with its extraction status and the items made from it; or a graph node with evidence."""
        with _as_tool_error():
            return memory.show(id)

    @tool
    def forget(
        ids: Annotated[
            list[str] | None, Field(description="Ids to forget: raw inputs (r_…), items (m_…), nodes (n_…).")
        ] = None,
        query: Annotated[
            str, Field(description="Or: forget what recall finds for this, and the words it came from.")
        ] = "",
        k: Annotated[
            int | None,
            Field(
                description="With query: the k best hits (default: only hits a confident similarity away).",
                ge=1,
                le=20,
            ),
        ] = None,
        confirm: Annotated[
            str, Field(description="The token a first call returned: only then is anything forgotten.")
        ] = "",
    ) -> dict[str, Any]:
        """Forget for good (no copy kept in the store). Call once to see what would go (the
        user should agree), then again with the returned confirm token to do it. Only when
        the user asks to forget something."""
        with _as_tool_error():
            return memory.forget(ids, query=query, k=k, confirm=confirm)

    @tool
    def link(
        earlier: Annotated[str, Field(description="The belief that no longer holds (m_...).")],
        later: Annotated[str, Field(description="The belief that replaced it (m_...).")],
    ) -> dict[str, Any]:
        """Record a change of mind the memory missed: recall shows two current beliefs, and the
        user says the later one replaced the earlier. Their arcs join; the later is current.
        Only on the user's word."""
        with _as_tool_error():
            return memory.link(earlier, later)

    @tool
    def unlink(
        item: Annotated[str, Field(description="The belief that wrongly replaced another (m_...).")],
    ) -> dict[str, Any]:
        """Undo a wrong link: the user says ITEM did not replace the belief before it (both still
        hold). That belief is current again; a dream never links the two again. Only on the
        user's word."""
        with _as_tool_error():
            return memory.unlink(item)

    json_type = "application/json"

    @server.resource("dcpm://stats", name="stats", mime_type=json_type, description=STATS)
    def stats() -> str:
        return json.dumps(memory.stats(), ensure_ascii=False)

    @server.resource("dcpm://schemas", name="schemas", mime_type=json_type, description=SCHEMAS)
    def schemas() -> str:
        return json.dumps(memory.schemas(), ensure_ascii=False)

    return server


def serve(memory: AgentMemory, *, http: tuple[str, int] | None = None, token: str | None = None) -> None:
    """Serve over stdio (default) or streamable HTTP at http://HOST:PORT/mcp until stopped."""
    import anyio

    server = build_server(memory)
    try:
        if http is None:
            anyio.run(server.run_stdio_async)
        else:
            anyio.run(_serve_http, server, http, token)
    finally:
        memory.close()


def check_http(host: str, token: str | None) -> None:
    if host not in LOOPBACK and not token:
        raise InputError(
            f"--http {host} listens beyond this machine: it needs a bearer token",
            "add --token SECRET (or DCPM_MCP_TOKEN), or bind to 127.0.0.1",
        )


async def _serve_http(server: Any, http: tuple[str, int], token: str | None) -> None:
    import uvicorn
    from mcp.server.transport_security import TransportSecuritySettings

    host, port = http
    security = None if host in LOOPBACK else TransportSecuritySettings(enable_dns_rebinding_protection=False)
    app = server.streamable_http_app(host=host, transport_security=security)
    if token:
        app = BearerAuth(app, token)
    config = uvicorn.Config(app, host=host, port=port, log_level="warning", lifespan="on")
    await uvicorn.Server(config).serve()


class BearerAuth:
    """ASGI middleware: every HTTP request needs `Authorization: Bearer <token>` (401 if not)."""

    def __init__(self, app: Any, token: str) -> None:
        self.app, self._expected = app, token.encode()

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            given = dict(scope.get("headers") or []).get(b"authorization", b"")
            scheme, _, credentials = given.partition(b" ")
            token_ok = hmac.compare_digest(credentials, self._expected)
            if scheme.lower() != b"bearer" or not token_ok:  # the scheme is case-insensitive (RFC 9110)
                body = b'{"error": "missing or wrong bearer token"}'
                await send({"type": "http.response.start", "status": 401, "headers": [
                    (b"content-type", b"application/json"), (b"www-authenticate", b"Bearer")]})  # fmt: skip
                await send({"type": "http.response.body", "body": body})
                return
        await self.app(scope, receive, send)


def parse_http(value: str) -> tuple[str, int]:
    """HOST:PORT, PORT alone (on 127.0.0.1), or [IPv6]:PORT."""
    host, sep, port = value.rpartition(":")
    if not sep:
        host, port = "127.0.0.1", value
    host = host.strip("[]") or "127.0.0.1"
    try:
        number = int(port)
    except ValueError:
        number = -1
    if not 0 < number < 65536:
        raise InputError(f"--http wants HOST:PORT, got {value!r}", "e.g. --http 127.0.0.1:8765")
    return host, number


__all__ = ["AgentMemory", "build_server", "check_http", "parse_http", "serve"]
