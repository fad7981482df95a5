"""Expected failures: a message for the user, a hint for what to do, and a stable exit code."""

from __future__ import annotations


class DcpmError(Exception):
    """An expected failure: shown as message + hint on stderr, never as a traceback."""

    exit_code = 1

    def __init__(self, message: str, hint: str | None = None):
        super().__init__(message)
        self.message = message
        self.hint = hint


class InputError(DcpmError):
    """The user's input (argument, file, stdin) is not usable; nothing was stored."""

    exit_code = 2


class StoreError(DcpmError):
    """The store cannot be opened or is inconsistent with this dcpm."""

    exit_code = 4


class TextSearchFailed(StoreError):
    """Full-text (BM25) search failed, e.g. a damaged index: recall goes on with vectors only
    and says so."""


class StoreMissing(StoreError):
    """There is no store yet at the configured location."""

    exit_code = 0


class EmbedderMismatch(StoreError):
    """The store's vectors were made by another embedding model."""


class LLMError(DcpmError):
    """The LLM failed; raw inputs stay stored and pending."""

    exit_code = 3


class LLMUnavailable(LLMError):
    """The LLM server cannot be reached, timed out, or does not have the model."""


class LLMBadReply(LLMError):
    """The LLM answered, but not with a valid reply, after the allowed retries."""


class LockBusy(DcpmError):
    """Another dcpm process holds a lock that this command needs."""

    exit_code = 5
