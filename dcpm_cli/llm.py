"""LLMs: one protocol with one required method, a registry by name, and `structured()` on top.

- `ollama:<model>`: the real client (`OLLAMA_HOST`), temperature 0, thinking off, a JSON schema
  in `format`, bounded retries on invalid replies, a timeout per call, token counts recorded.
- `scripted`: replies from a queue (tests and demos of the pipeline without a model); it
  records every call and raises when its queue runs dry. `scripted:FILE` reads the queue from a
  JSONL file, one reply per line.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, TypeVar

from pydantic import BaseModel, ValidationError

from dcpm_cli.errors import InputError, LLMBadReply, LLMError, LLMUnavailable

M = TypeVar("M", bound=BaseModel)


@dataclass
class Usage:
    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0

    def add(self, other: Usage) -> None:
        self.calls += other.calls
        self.prompt_tokens += other.prompt_tokens
        self.completion_tokens += other.completion_tokens


@dataclass
class Reply:
    content: str
    prompt_tokens: int = 0
    completion_tokens: int = 0


class LLM(Protocol):
    name: str

    @property
    def usage(self) -> Usage:
        """Calls and tokens so far."""
        ...

    def chat(self, messages: list[dict[str, str]], *, schema: dict[str, Any] | None = None) -> Reply:
        """One chat turn; with `schema`, the reply content must be JSON of that schema."""
        ...


def structured(
    llm: LLM,
    messages: list[dict[str, str]],
    model: type[M],
    *,
    retries: int = 2,
    schema: dict[str, Any] | None = None,
) -> M:
    """Ask for a reply validated as `model` (sent as `schema`, by default the model's own JSON
    schema); on an invalid reply, say why and ask again."""
    schema = schema or model.model_json_schema()
    convo = list(messages)
    last_error = ""
    for _ in range(retries + 1):
        reply = llm.chat(convo, schema=schema)
        try:
            # strict=False: a raw newline inside a JSON string is a small model's habit, not
            # a reason to throw the reply away.
            return model.model_validate(json.loads(reply.content, strict=False))
        except json.JSONDecodeError as e:
            last_error = f"not JSON ({e.msg} at character {e.pos})"
        except ValidationError as e:
            last_error = _short_validation_error(e)
        convo = [
            *messages,
            {"role": "assistant", "content": reply.content[:4000]},
            {
                "role": "user",
                "content": f"That reply was invalid: {last_error}. Reply again with "
                "JSON that follows the schema exactly.",
            },
        ]
    raise LLMBadReply(
        f"{llm.name} gave no valid reply after {retries + 1} attempts ({last_error})",
        "a larger model may follow the schema better (--llm / DCPM_LLM)",
    )


def _short_validation_error(e: ValidationError) -> str:
    parts = []
    for err in e.errors()[:3]:
        loc = ".".join(str(x) for x in err["loc"]) or "reply"
        parts.append(f"{loc}: {err['msg']}")
    return "; ".join(parts)


@contextlib.contextmanager
def ollama_errors(model: str, timeout: float | None = None) -> Iterator[None]:
    """Translate the ollama client's and httpx's failures into dcpm errors. Only a failed
    connection (or a server that cannot serve the model) reads as "unavailable"; a slow model is
    called slow, and a reply the client cannot read fails this call, not the batch."""
    import httpx

    ollama = import_ollama()
    hint = "start it with `ollama serve`, or set OLLAMA_HOST to where it runs"
    try:
        yield
    except ConnectionError as e:
        raise LLMUnavailable("cannot reach the Ollama server", hint) from e
    except httpx.TimeoutException as e:
        waited = f" after {timeout:g} s" if timeout else ""
        raise LLMUnavailable(
            f"{model} timed out{waited}: the model is slow (the server is up)",
            "raise --llm-timeout (DCPM_LLM_TIMEOUT), or use a smaller model",
        ) from e
    except httpx.TransportError as e:
        raise LLMUnavailable(f"Ollama connection failed: {e}", hint) from e
    except ollama.ResponseError as e:
        if e.status_code == 404:
            raise LLMUnavailable(
                f"Ollama does not have the model {model!r}: {e.error}", f"run `ollama pull {model}`"
            ) from e
        if e.status_code >= 500 or e.status_code == -1:
            raise LLMUnavailable(f"Ollama failed: {e.error}", "check the Ollama server's log") from e
        raise LLMError(f"Ollama refused the request: {e.error}", None) from e
    except (ValueError, AttributeError, TypeError) as e:
        # A 200 whose body the client cannot read (a proxy page, another service, a truncated
        # body): this call failed; the next input may well succeed.
        raise LLMBadReply(
            f"the server at OLLAMA_HOST did not answer like Ollama ({type(e).__name__})",
            "check OLLAMA_HOST points at Ollama",
        ) from e


def import_ollama() -> Any:
    """The `ollama` package. Importing it makes a default client, which parses OLLAMA_HOST: a
    value it cannot parse is an unavailable LLM, said in one line, not a traceback."""
    try:
        import ollama
    except ValueError as e:  # "Port could not be cast to integer value as '::1'"
        raise _no_host(os.environ.get("OLLAMA_HOST", ""), e) from e
    return ollama


def ollama_client(host: str | None, timeout: float) -> Any:
    """The official client for `host` (default: OLLAMA_HOST, else Ollama's own default)."""
    ollama = import_ollama()
    try:
        return ollama.Client(host=host, timeout=timeout)
    except ValueError as e:
        raise _no_host(host if host is not None else os.environ.get("OLLAMA_HOST", ""), e) from e


def _no_host(given: str, e: ValueError) -> LLMUnavailable:
    return LLMUnavailable(
        f"OLLAMA_HOST {given!r} is not a host and port ({e})",
        "set OLLAMA_HOST to host:port, e.g. 127.0.0.1:11434",
    )


class OllamaLLM:
    """A model served by Ollama, through the official client.

    A reply cut off at the token limit (`done_reason == "length"`) is asked for again with a
    larger budget (`num_predict`), up to `MAX_PREDICT`; asking again with the same budget
    would be cut off at the same place."""

    FIRST_LARGER_PREDICT = 2048
    MAX_PREDICT = 4096

    def __init__(self, model: str, *, host: str | None = None, timeout: float = 120.0) -> None:

        self.model = model
        self.name = f"ollama:{model}"
        self.usage = Usage()
        self.timeout = timeout
        self._host = host
        self._made: Any = None  # the client, made at the first call: a bad OLLAMA_HOST must
        # not stop an input from being stored first
        self._think: bool | None = False  # thinking off; None once the model says it has none

    @property
    def _client(self) -> Any:
        if self._made is None:
            self._made = ollama_client(self._host, self.timeout)
        return self._made

    def chat(self, messages: list[dict[str, str]], *, schema: dict[str, Any] | None = None) -> Reply:
        budget: int | None = None  # the server's default first
        while True:
            resp = self._chat_once(messages, schema, budget)
            reply = Reply(
                content=resp.message.content or "",
                prompt_tokens=int(resp.prompt_eval_count or 0),
                completion_tokens=int(resp.eval_count or 0),
            )
            self.usage.add(Usage(1, reply.prompt_tokens, reply.completion_tokens))
            if resp.done_reason != "length" or budget == self.MAX_PREDICT:
                return reply
            budget = min(
                max(2 * reply.completion_tokens, 2 * (budget or 0), self.FIRST_LARGER_PREDICT),
                self.MAX_PREDICT,
            )

    def _chat_once(
        self, messages: list[dict[str, str]], schema: dict[str, Any] | None, budget: int | None
    ) -> Any:
        ollama = import_ollama()
        options: dict[str, Any] = {"temperature": 0}
        if budget is not None:
            options["num_predict"] = budget
        kwargs: dict[str, Any] = {"options": options}
        if schema is not None:
            kwargs["format"] = schema
        with ollama_errors(self.model, self.timeout):
            try:
                resp = self._client.chat(model=self.model, messages=messages, think=self._think, **kwargs)
            except ollama.ResponseError as e:
                if self._think is None or "think" not in str(e.error).lower():
                    raise
                self._think = None  # a model without a thinking mode rejects the flag
                resp = self._client.chat(model=self.model, messages=messages, **kwargs)
            resp.message.content  # noqa: B018  (a body without a message fails here, inside the guard)
        return resp


@dataclass
class ScriptedLLM:
    """A fake model with a queue of replies (str, dict/list → JSON, or an exception to raise)."""

    name: str = "scripted"
    replies: list[Any] = field(default_factory=list)
    calls: list[dict[str, Any]] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)

    def enqueue(self, *replies: Any) -> ScriptedLLM:
        self.replies.extend(replies)
        return self

    def chat(self, messages: list[dict[str, str]], *, schema: dict[str, Any] | None = None) -> Reply:
        self.calls.append({"messages": messages, "schema": schema})
        if not self.replies:
            raise LLMUnavailable("the scripted LLM has no reply left", "enqueue more replies")
        reply = self.replies.pop(0)
        if isinstance(reply, BaseException):
            raise reply
        content = reply if isinstance(reply, str) else json.dumps(reply)
        reply = Reply(content, sum(len(m["content"]) for m in messages) // 4, len(content) // 4)
        self.usage.add(Usage(1, reply.prompt_tokens, reply.completion_tokens))
        return reply  # this call's tokens, not the running total

    @classmethod
    def from_file(cls, path: str) -> ScriptedLLM:
        """Replies from JSONL; a line {"raise": "unavailable"} makes that call fail."""
        try:
            lines = Path(path).read_text(encoding="utf-8").splitlines()
        except OSError as e:
            raise InputError(f"cannot read scripted replies {path}: {e}") from e
        replies: list[Any] = []
        for n, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except (json.JSONDecodeError, RecursionError) as e:
                why = e.msg if isinstance(e, json.JSONDecodeError) else "nested too deep"
                raise InputError(f"scripted replies {path} line {n}: not JSON ({why})") from e
            if isinstance(obj, dict) and obj.get("raise") == "unavailable":
                replies.append(LLMUnavailable("scripted: the LLM is unavailable"))
            else:
                replies.append(obj)
        return cls(name=f"scripted:{path}", replies=replies)


def probe(spec: str, *, timeout: float = 3.0) -> str:
    """Check that the LLM named by `spec` can answer: '' when it can, else why not."""
    prefix, _, model = spec.partition(":")
    if prefix != "ollama":
        return ""

    try:
        with ollama_errors(model):
            names = {m.model for m in ollama_client(None, timeout).list().models}
    except LLMError as e:
        return e.message + (f" ({e.hint})" if e.hint else "")
    if model not in names and f"{model}:latest" not in names:
        return f"Ollama is running but has no model {model!r} (run `ollama pull {model}`)"
    return ""


def get_llm(spec: str, *, timeout: float = 120.0) -> LLM:
    """The LLM named by `spec`: `ollama:<model>` or `scripted[:FILE]`."""
    prefix, _, rest = spec.partition(":")
    if prefix == "ollama" and rest:
        return OllamaLLM(rest, timeout=timeout)
    if prefix == "scripted":
        return ScriptedLLM.from_file(rest) if rest else ScriptedLLM()
    raise InputError(f"unknown LLM {spec!r}", "use ollama:<model> (e.g. ollama:qwen3:4b)")
