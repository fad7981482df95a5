"""Expected failures: a message for the user, a hint for what to do, and a stable exit code."""

from __future__ import annotations

# Exit codes, stable and documented in the README; the exceptions below carry them.
EXIT_OK = 0
EXIT_ERROR = 1
EXIT_INPUT = 2
EXIT_LLM = 3
EXIT_STORE = 4
EXIT_BUSY = 5
EXIT_CHECK = 6  # `dcpm check`: the store breaks an invariant
EXIT_INTERRUPTED = 130  # Ctrl-C, as a shell reports it


class DcpmError(Exception):
    """An expected failure: shown as message + hint on stderr, never as a traceback."""

    exit_code = EXIT_ERROR

    def __init__(self, message: str, hint: str | None = None):
        super().__init__(message)
        self.message = message
        self.hint = hint


class InputError(DcpmError):
    """The user's input (argument, file, stdin) is not usable; nothing was stored."""

    exit_code = EXIT_INPUT


class StoreError(DcpmError):
    """The store cannot be opened or is inconsistent with this dcpm."""

    exit_code = EXIT_STORE


class TextSearchFailed(StoreError):
    """Full-text (BM25) search failed, e.g. a damaged index: recall goes on with vectors only
    and says so."""


class DiskFull(StoreError):
    """A write ran out of disk (ENOSPC, a quota, a file-size limit): nothing is half-stored
    that the next command does not finish."""


# How a full disk reads when it comes through a library that wraps the OS error in its own.
_DISK_FULL = ("no space left on device", "file too large", "disk quota exceeded")


def disk_full(e: BaseException) -> str:
    """Why `e` is a full disk (the OS's words), or "" when it is something else."""
    import errno

    if isinstance(e, OSError) and e.errno in (errno.ENOSPC, errno.EFBIG, errno.EDQUOT):
        return e.strerror or str(e)
    text = str(e).casefold()
    return next((why.capitalize() for why in _DISK_FULL if why in text), "")


class StoreMissing(StoreError):
    """There is no store yet at the configured location."""

    exit_code = EXIT_OK


class NothingToDo(DcpmError):
    """What was asked for is already so (reembed to the embedder in use): said, not a failure."""

    exit_code = EXIT_OK


class EmbedderMismatch(StoreError):
    """The store's vectors were made by another embedding model."""


class LLMError(DcpmError):
    """The LLM failed; raw inputs stay stored and pending."""

    exit_code = EXIT_LLM


class LLMUnavailable(LLMError):
    """The LLM server cannot be reached, timed out, or does not have the model."""


class LLMBadReply(LLMError):
    """The LLM answered, but not with a valid reply, after the allowed retries."""


class LockBusy(DcpmError):
    """Another dcpm process holds a lock that this command needs."""

    exit_code = EXIT_BUSY
