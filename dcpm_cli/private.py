"""Privacy on disk and piped input that cannot be lost.

What dcpm writes is for its user alone: directories it creates are 0700 and, while a command
runs, files are created 0600 (`owner_only`). Piped stdin can be read only once, so it is
written under `$DCPM_HOME/rejected/` byte for byte as soon as it is read, and removed only once
every input in it is stored (`StdinKeeper`): whatever fails in between, even a kill, it stays.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

OWNER_ONLY_UMASK = 0o077


@contextlib.contextmanager
def owner_only() -> Iterator[None]:
    """Files and directories created inside are readable by their owner only."""
    old = os.umask(OWNER_ONLY_UMASK)
    try:
        yield
    finally:
        os.umask(old)


def private_dir(path: Path) -> Path:
    """`path` as a directory; the ones created here (parents included) are 0700."""
    missing = [p for p in (path, *path.parents) if not p.exists()]
    for p in reversed(missing):
        with contextlib.suppress(FileExistsError):  # a concurrent dcpm made it first
            p.mkdir(mode=0o700)
            os.chmod(p, 0o700)  # mkdir's mode is filtered by the umask
    return path


@dataclass
class StdinKeeper:
    """Piped bytes on disk until they are stored; `path` is None when nothing needs keeping."""

    path: Path | None = None
    problem: str = ""  # why the bytes could not be kept, if they could not

    def keep(self, data: bytes, folder: Path) -> None:
        if not data.strip():
            return  # nothing that could be lost
        try:
            data.decode("utf-8")
            suffix = ".txt"
        except UnicodeDecodeError:
            suffix = ".bin"
        path = folder / f"stdin-{datetime.now(UTC):%Y%m%dT%H%M%S%f}-{os.getpid()}{suffix}"
        try:
            private_dir(folder)
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "wb") as f:
                f.write(data)
                f.flush()
                os.fsync(f.fileno())
        except OSError as e:
            self.problem = f"{folder}: {e.strerror or e}"
            self._partial(path, len(data))
            return
        self.path = path

    def _partial(self, path: Path, whole: int) -> None:
        """A copy cut short (a full disk) is named for what it is, never like a whole one."""
        try:
            written = path.stat().st_size
        except OSError:
            return  # never created
        if not written:
            path.unlink(missing_ok=True)
            return
        partial = path.with_name(f"{path.stem}-partial{path.suffix}")
        try:
            path.rename(partial)
        except OSError:
            partial = path
        self.problem += f"; only its first {written} of {whole} bytes are at {partial}"

    def stored(self) -> None:
        """Every input is in the store: the copy is not needed any more."""
        if self.path is not None:
            self.path.unlink(missing_ok=True)
            self.path = None

    def where(self) -> str:
        """What to tell the user after a failure ("" when nothing was piped in)."""
        if self.path is not None:
            return f"what was piped in is kept at {self.path}"
        if self.problem:
            return f"what was piped in could not be kept ({self.problem})"
        return ""
