"""A fake Ollama server on 127.0.0.1 for the real `ollama` client code path.

It speaks just enough of Ollama's HTTP API (GET /api/version, GET /api/tags, POST /api/chat
without streaming, POST /api/embed) and is scripted: each chat request takes the next
behaviour from a queue (a reply, an HTTP error, a delay, a malformed body), or, when the queue
is empty and a `responder` is set, from `responder(request body)` (a server that answers any
number of requests, as the fault-injection harness needs). Every request is recorded with its
JSON body, so tests can check what the client really sent.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Reply:
    """A normal chat reply with this content (a dict or list is sent as JSON text)."""

    content: Any
    prompt_eval_count: int = 42
    eval_count: int = 7
    done_reason: str = "stop"  # "length": cut off at the token limit (num_predict)


@dataclass
class Error:
    """An HTTP error with Ollama's error body {"error": message}."""

    status: int
    message: str


@dataclass
class Delay:
    """Wait this long before answering with `then` (long enough and the client times out)."""

    seconds: float
    then: Any = None


@dataclass
class RawBody:
    """A response body sent as is, e.g. something that is not JSON at all."""

    body: bytes
    status: int = 200
    content_type: str = "application/json"


@dataclass
class Drop:
    """Close the connection without answering: a server that dies in the middle of a request."""


@dataclass
class Request:
    method: str
    path: str
    body: dict[str, Any] = field(default_factory=dict)


class FakeOllama:
    """Start with `start()`; `host` is "127.0.0.1:PORT" (what OLLAMA_HOST takes)."""

    def __init__(self, models: tuple[str, ...] = ("tiny",), embed_dim: int = 8) -> None:
        self.models = set(models)
        self.no_think_models: set[str] = set()  # these answer 400 to a request carrying `think`
        self.embed_dim = embed_dim
        self.requests: list[Request] = []
        self.responder: Callable[[dict[str, Any]], Any] | None = None  # used when the queue is empty
        self._queue: deque[Any] = deque()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._server.block_on_close = False
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    @property
    def host(self) -> str:
        return f"127.0.0.1:{self._server.server_address[1]}"

    def start(self) -> FakeOllama:
        self._thread.start()
        return self

    def close(self) -> None:
        self._stop.set()  # wakes delayed handlers
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()

    # -- scripting ------------------------------------------------------------------------

    def enqueue(self, *behaviours: Any) -> FakeOllama:
        """Queue behaviours for the next chat requests; a str, dict or list is a Reply."""
        with self._lock:
            for b in behaviours:
                self._queue.append(b if isinstance(b, Reply | Error | Delay | RawBody | Drop) else Reply(b))
        return self

    @property
    def pending(self) -> int:
        with self._lock:
            return len(self._queue)

    @property
    def chat_requests(self) -> list[dict[str, Any]]:
        return [r.body for r in self.requests if r.path == "/api/chat"]

    def _next(self, body: dict[str, Any] | None = None) -> Any:
        with self._lock:
            if self._queue:
                return self._queue.popleft()
        if self.responder is not None and body is not None:
            return self.responder(body)
        return Error(500, "fake ollama: no scripted reply left")

    # -- serving --------------------------------------------------------------------------

    def _known(self, model: str) -> bool:
        return model in self.models or model.removesuffix(":latest") in self.models

    def _chat(self, body: dict[str, Any]) -> tuple[int, bytes, str]:
        model = str(body.get("model", ""))
        if not self._known(model):
            return _error(404, f'model "{model}" not found, try pulling it first')
        if "think" in body and model in self.no_think_models:
            return _error(400, f'"{model}" does not support thinking')
        behaviour = self._next(body)
        if not isinstance(behaviour, Reply | Error | Delay | RawBody | Drop):
            behaviour = Reply(behaviour)
        while isinstance(behaviour, Delay):
            if self._stop.wait(behaviour.seconds):
                return _error(503, "fake ollama is shutting down")
            behaviour = behaviour.then if behaviour.then is not None else Reply("{}")
            if not isinstance(behaviour, Reply | Error | Delay | RawBody | Drop):
                behaviour = Reply(behaviour)
        if isinstance(behaviour, Drop):
            return _DROP
        if isinstance(behaviour, Error):
            return _error(behaviour.status, behaviour.message)
        if isinstance(behaviour, RawBody):
            return behaviour.status, behaviour.body, behaviour.content_type
        content = behaviour.content
        text = content if isinstance(content, str) else json.dumps(content)
        return _json(
            200,
            {
                "model": model,
                "created_at": datetime.now(UTC).isoformat().replace("+00:00", "Z"),
                "message": {"role": "assistant", "content": text},
                "done": True,
                "done_reason": behaviour.done_reason,
                "prompt_eval_count": behaviour.prompt_eval_count,
                "eval_count": behaviour.eval_count,
            },
        )

    def _embed(self, body: dict[str, Any]) -> tuple[int, bytes, str]:
        model = str(body.get("model", ""))
        if not self._known(model):
            return _error(404, f'model "{model}" not found, try pulling it first')
        texts = body.get("input", [])
        texts = [texts] if isinstance(texts, str) else texts
        return _json(200, {"model": model, "embeddings": [self.vector(t) for t in texts]})

    def vector(self, text: str) -> list[float]:
        """A deterministic pseudo-embedding: the same text always gets the same vector."""
        digest = hashlib.sha256(text.encode("utf-8")).digest()
        return [(digest[i] - 127.5) / 127.5 for i in range(self.embed_dim)]

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def _send(self, status: int, body: bytes, content_type: str) -> None:
                if status == _DROP[0]:
                    self.close_connection = True
                    return
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", content_type)
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (timeout test)

            def do_GET(self) -> None:
                fake.requests.append(Request("GET", self.path))
                if self.path == "/api/version":
                    self._send(*_json(200, {"version": "0.12.0"}))
                elif self.path == "/api/tags":
                    models = [
                        {"name": f"{m}:latest", "model": f"{m}:latest", "size": 1, "digest": "0" * 64}
                        for m in sorted(fake.models)
                    ]
                    self._send(*_json(200, {"models": models}))
                else:
                    self._send(*_error(404, "not found"))

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw or b"{}")
                except json.JSONDecodeError:
                    self._send(*_error(400, "invalid JSON"))
                    return
                fake.requests.append(Request("POST", self.path, body))
                if self.path == "/api/chat":
                    self._send(*fake._chat(body))
                elif self.path == "/api/embed":
                    self._send(*fake._embed(body))
                else:
                    self._send(*_error(404, "not found"))

            def log_message(self, format: str, *args: Any) -> None:
                pass

        return Handler


_DROP = (0, b"", "")  # no response at all: the connection is closed


def _json(status: int, obj: Any) -> tuple[int, bytes, str]:
    return status, json.dumps(obj).encode("utf-8"), "application/json; charset=utf-8"


def _error(status: int, message: str) -> tuple[int, bytes, str]:
    return _json(status, {"error": message})
