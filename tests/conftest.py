"""Shared fixtures: fakes only at the edges (a scripted LLM, a fake Ollama server); the real
LanceDB store in a temp dir and the real embedding model everywhere else."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from fake_ollama import FakeOllama
from typer.testing import CliRunner

from dcpm_cli.cli.main import app
from dcpm_cli.config import Settings
from dcpm_cli.embed import Embedder, get_embedder
from dcpm_cli.llm import ScriptedLLM
from dcpm_cli.store import Store
from dcpm_cli.write.pipeline import Writer

SAMPLE_DATA = Path(__file__).resolve().parent.parent / "sample_data"

# Settings a user's shell might carry that would change what the tests see.
_LEAKY_ENV = [
    "DCPM_STORE",
    "DCPM_EMBEDDER",
    "DCPM_LLM",
    "DCPM_LLM_TIMEOUT",
    "DCPM_LLM_RETRIES",
    "DCPM_HISTORY_WINDOW",
    "DCPM_TOP_K",
    "DCPM_SUPERSEDE_ATTRIBUTE_MIN_COS",
    "DCPM_NO_SUPERSEDES",
    "OLLAMA_API_KEY",
]


def closed_port() -> int:
    """A local port nothing listens on (bound, then released)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(autouse=True)
def dcpm_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test gets its own data directory; nothing touches the real user dir, and no
    test can reach a real Ollama by accident."""
    home = tmp_path / "home"
    monkeypatch.setenv("DCPM_HOME", str(home))
    for name in _LEAKY_ENV:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("OLLAMA_HOST", f"127.0.0.1:{closed_port()}")
    monkeypatch.setenv("COLUMNS", "100")
    return home


@pytest.fixture(scope="session")
def embedder() -> Embedder:
    return get_embedder("minilm")


@pytest.fixture
def settings(dcpm_home: Path) -> Settings:
    return Settings.resolve(llm="scripted")


@pytest.fixture
def store(settings: Settings, embedder: Embedder, dcpm_home: Path) -> Store:
    return Store(settings.store, embedder, state_dir=dcpm_home)


@pytest.fixture
def llm() -> ScriptedLLM:
    return ScriptedLLM()


@pytest.fixture
def writer(store: Store, embedder: Embedder, llm: ScriptedLLM, settings: Settings) -> Writer:
    return Writer(store, embedder, llm, settings)


@pytest.fixture
def fake_ollama() -> Iterator[FakeOllama]:
    server = FakeOllama().start()
    try:
        yield server
    finally:
        server.close()


@dataclass
class Cli:
    """`dcpm` in-process, with the scripted LLM injected the way the CLI allows it."""

    llm: ScriptedLLM | None  # None: the CLI builds the LLM from --llm / DCPM_LLM itself
    runner: CliRunner = field(default_factory=CliRunner)

    def __call__(self, *args: str, input: str | bytes | None = None, **env: str) -> Any:
        result = self.runner.invoke(
            app,
            list(args),
            input=input,
            env={"COLUMNS": "100", **env},
            obj={"llm": self.llm},
            catch_exceptions=False,
        )
        assert "Traceback" not in result.output + result.stderr
        return result

    def open_store(self) -> Store:
        return Store(Settings.resolve().store, get_embedder("minilm"), create=False)


@pytest.fixture
def cli(llm: ScriptedLLM, embedder: Embedder) -> Cli:
    return Cli(llm)


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


@pytest.fixture
def dcpm() -> Any:
    return run_dcpm
