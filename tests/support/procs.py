"""The real `dcpm` console script in a fresh process, and a port nothing listens on."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path


def closed_port() -> int:
    """A local port nothing listens on (bound, then released)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def dcpm_script() -> str:
    """The installed `dcpm` console script next to this interpreter."""
    path = Path(sys.executable).parent / "dcpm"
    return str(path) if path.exists() else (shutil.which("dcpm") or "dcpm")


def run_dcpm(
    *args: str, input: str | bytes | None = None, env: dict[str, str] | None = None, timeout: float = 300
) -> subprocess.CompletedProcess[str]:
    """The real `dcpm` console script in a fresh process (inherits DCPM_HOME from the test)."""
    full_env = {**os.environ, "COLUMNS": "100", **(env or {})}
    return subprocess.run(
        [dcpm_script(), *args],
        input=input,
        env=full_env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def without_root_powers() -> list[str] | None:
    """A command prefix under which file permissions bind: none needed for a normal user; for
    root, `setpriv` drops the capabilities that let root write anywhere (uid stays 0, so the
    interpreter under /root stays reachable); None when neither is possible."""
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        return None
    caps = "-dac_override,-dac_read_search,-fowner"
    return [setpriv, f"--bounding-set={caps}", f"--inh-caps={caps}"]
