"""`dcpm dream` and `dcpm schemas` from the command line: output, JSON, exit codes."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from support.dream_fixtures import LATE, add_facts, fact_items, night_one

from dcpm_cli.config import Settings
from dcpm_cli.errors import LLMUnavailable
from dcpm_cli.store import Store


@pytest.fixture(autouse=True)
def _no_relink(monkeypatch: pytest.MonkeyPatch) -> None:
    """The seeded facts never went through the writer's judgements: no re-link pass here."""
    monkeypatch.setenv("DCPM_DREAM_RELINK", "0")


def filled_store(embedder) -> Store:
    store = Store(Settings.resolve().store, embedder)
    add_facts(store, embedder, fact_items())
    return store


def test_dry_run_prints_the_clusters_and_the_calls_it_would_make(cli, llm, embedder) -> None:
    filled_store(embedder)

    done = cli("dream", "--dry-run")

    assert done.exit_code == 0, done.stderr
    assert "dry run: nothing written, no LLM called" in done.stdout
    assert "cluster 1 · 5 facts" in done.stdout and "Worked until 1am" in done.stdout
    assert "induction: cluster 3 (3 facts" in done.stdout
    assert "catch-up" not in done.stdout  # nothing pending
    assert llm.calls == []

    # Inputs still pending are extracted first, within the same budget: the plan says so.
    cli("add", "--no-extract", "a thought for later")
    plan = json.loads(cli("dream", "--dry-run", "--json").stdout)
    assert plan["planned_calls"][0].startswith("catch-up extraction: 1 input(s) still pending")
    assert llm.calls == []


def test_dream_then_schemas(cli, llm, embedder) -> None:
    filled_store(embedder)
    llm.enqueue(*night_one())

    done = cli("dream")

    assert done.exit_code == 0, done.stderr
    assert done.stdout.startswith("dream ok in ")
    assert "16 facts → 3 clusters (3 induced)" in done.stdout and "3 LLM calls" in done.stdout
    assert "phase 1: 16 facts to consolidate → 3 clusters" in done.stderr  # one-line logs

    shown = cli("schemas")
    assert shown.exit_code == 0
    assert "3 schemas, 1 intentions" in shown.stdout
    assert f"{LATE}  (n_" in shown.stdout and "5 facts)" in shown.stdout

    data = json.loads(cli("schemas", "--json", "--kind", "schema", "--domain", "work").stdout)
    assert [(n["kind"], n["text"], n["evidence"]) for n in data["nodes"]] == [("schema", LATE, 5)]
    assert json.loads(cli("schemas", "--json", "--domain", "WORK").stdout) == json.loads(
        cli("schemas", "--json", "--domain", "work").stdout
    )  # a domain is found whatever its case
    nothing = cli("schemas", "--domain", "sailing")
    assert nothing.stdout.strip() == "no schemas or intentions match --domain sailing"

    stats = cli("stats")
    assert "dream run" in stats.stdout and "status ok" in stats.stdout


def test_dream_json_is_the_run_log_entry(cli, llm, embedder) -> None:
    store = filled_store(embedder)
    llm.enqueue(*night_one())

    data = json.loads(cli("dream", "--json").stdout)

    assert data["run"]["status"] == "ok" and data["run"]["llm_calls"] == 3
    assert data["run"]["settings"]["eps1"] == data["calibration"]["eps1"]
    assert [c["index"] for c in data["clusters"]] == [1, 2, 3]
    assert store.dream_runs(1)[0].id == data["run"]["id"]


def test_an_unreachable_llm_exits_3_and_keeps_what_was_done(cli, llm, embedder) -> None:
    store = filled_store(embedder)
    llm.enqueue(night_one()[0], LLMUnavailable("cannot reach the Ollama server", "start it"))

    done = cli("dream")

    assert done.exit_code == 3
    assert "dream llm_unavailable" in done.stdout and "cannot reach the Ollama server" in done.stderr
    assert [n.text for n in store.all_nodes() if n.kind == "schema"] == [LATE]


def test_a_second_dream_exits_5_at_once(cli, llm, embedder) -> None:
    store = filled_store(embedder)
    with store.dream_lock():
        done = cli("dream")
    assert done.exit_code == 5
    assert "another `dcpm dream` is running" in done.stderr and llm.calls == []


def test_a_second_dream_in_another_process_exits_5(dcpm, embedder) -> None:
    store = filled_store(embedder)
    with store.dream_lock():
        done = dcpm("dream", env={"DCPM_LLM": "scripted"})
    assert done.returncode == 5
    assert "another `dcpm dream` is running" in done.stderr and "Traceback" not in done.stderr


def test_lite_mode_and_calibrate(cli, llm, embedder) -> None:
    filled_store(embedder)

    lite = cli("dream", "--mode", "lite")
    assert lite.exit_code == 0 and "lite mode" in lite.stdout and llm.calls == []

    cal = json.loads(cli("dream", "--calibrate", "--json").stdout)
    assert cal["calibration"]["embedder"] == "all-MiniLM-L6-v2"
    assert cal["stats"]["redundant_flagged"] == "0/10"
    plan = json.loads(cli("dream", "--dry-run", "--json").stdout)
    assert plan["calibration"]["method"] == "builtin-set"  # now the stored one


def test_core_schemas_are_enabled_by_env(cli, llm, embedder) -> None:
    filled_store(embedder)
    plan = json.loads(cli("dream", "--dry-run", "--json", DCPM_CORE_SCHEMAS="1").stdout)
    assert plan["run"]["core_schemas"] is True
    assert any(p.startswith("abstraction:") for p in plan["planned_calls"])
    plan = json.loads(cli("dream", "--dry-run", "--json").stdout)
    assert plan["run"]["core_schemas"] is False


def test_schemas_on_a_new_home_says_there_are_none(cli) -> None:
    done = cli("schemas")
    assert done.exit_code == 0 and "no schemas yet" in done.stdout


PROBE = """
import json, sys
from typer.testing import CliRunner
from dcpm_cli.cli.main import app
results = [CliRunner().invoke(app, args) for args in (["dream", "--help"], ["schemas", "--help"])]
print(json.dumps({
    "exit_codes": [r.exit_code for r in results],
    "imported": sorted({m.split(".")[0] for m in sys.modules}
                       & {"torch", "lancedb", "sklearn", "ollama", "scipy", "pyarrow", "numpy"}),
}))
"""


def test_dream_help_imports_no_heavy_library() -> None:
    done = subprocess.run(
        [sys.executable, "-c", PROBE],
        capture_output=True,
        text=True,
        timeout=120,
        env={"PATH": "", "COLUMNS": "100", "DCPM_HOME": "/nonexistent/dcpm-home"},
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"exit_codes": [0, 0], "imported": []}
