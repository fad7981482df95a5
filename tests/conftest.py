"""Shared fixtures: fakes only at the edges (a scripted LLM, a fake Ollama server); the real
LanceDB store in a temp dir and the real embedding model everywhere else."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from support.fake_ollama import FakeOllama
from support.fitness import fitness_raws, fitness_replies
from support.procs import closed_port, run_dcpm
from typer.testing import CliRunner

from dcpm_cli.cli.main import app
from dcpm_cli.config import Settings
from dcpm_cli.embed import Embedder, get_embedder
from dcpm_cli.llm import ScriptedLLM
from dcpm_cli.models import Calibration, DreamRun, Edge, Node
from dcpm_cli.store import Store
from dcpm_cli.write.pipeline import Writer

# Settings a user's shell might carry that would change what the tests see.
_LEAKY_ENV = [
    "DCPM_JUDGE_PROMPT",
    "DCPM_STORE",
    "DCPM_EMBEDDER",
    "DCPM_LLM",
    "DCPM_LLM_TIMEOUT",
    "DCPM_LLM_RETRIES",
    "DCPM_HISTORY_WINDOW",
    "DCPM_JUDGE_K",
    "DCPM_JUDGE_MIN_SIMILARITY",
    "DCPM_DREAM_RELINK",
    "DCPM_NO_SUPERSEDES",
    "OLLAMA_API_KEY",
]


TIERS = ("unit", "integration", "slow")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Each test is marked with its tier, the folder it sits in (tests/unit, tests/integration,
    tests/slow). A test that runs the `dcpm` console script in a subprocess (the `dcpm` fixture)
    is also `slow`, whatever its folder: its cost is a fresh interpreter per call."""
    for item in items:
        tier = Path(str(item.path)).parent.name
        if tier in TIERS:
            item.add_marker(getattr(pytest.mark, tier))
        if "dcpm" in getattr(item, "fixturenames", ()) and tier != "slow":
            item.add_marker(pytest.mark.slow)


@pytest.fixture(autouse=True)
def dcpm_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest) -> Path:
    """Every test gets its own data directory; nothing touches the real user dir, and no
    test can reach a real Ollama by accident. A test marked `four_way` asks the four-way
    judgement (`judge_prompt = "four"`: adds_detail and same, hence UPDATE and DUPLICATE)."""
    home = tmp_path / "home"
    monkeypatch.setenv("DCPM_HOME", str(home))
    for name in _LEAKY_ENV:
        monkeypatch.delenv(name, raising=False)
    if request.node.get_closest_marker("four_way"):
        monkeypatch.setenv("DCPM_JUDGE_PROMPT", "four")
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


@pytest.fixture
def dcpm() -> Any:
    return run_dcpm


@pytest.fixture
def rich_store(writer, llm, store, embedder):
    """A chain of five beliefs with their raw inputs and events, graph nodes and edges, a dream
    run and a calibration: every record type an export carries."""
    raws = fitness_raws()
    llm.enqueue(*fitness_replies(raws))
    writer.add(raws)
    items = store.all_items()
    nodes = [
        Node("n_fit", "schema", "Exercises for the company of others", "fitness"),
        Node("n_core", "core_schema", "Seeks belonging through shared effort", ""),
    ]
    with store.write():
        store.add_nodes(nodes, embedder.embed([n.text for n in nodes]))
        store.set_behaviours(
            {"n_fit": ("joins groups to stay motivated", embedder.embed(["joins groups"])[0])}
        )
        store.add_edges(
            [Edge("evidence", "n_fit", i.id) for i in items[:3]] + [Edge("member", "n_core", "n_fit")]
        )
        store.save_dream_run(DreamRun(id="d_1", status="ok", clusters=1, rejections=["cluster 1: no text"]))
        store.save_calibration(Calibration("all-MiniLM-L6-v2", 0.5, 0.4, 0.5, 0.45, method="builtin-set"))
    return store
