"""`dcpm --help` and shell completion must not pay for heavy libraries."""

from __future__ import annotations

import json
import subprocess
import sys

HEAVY = ["torch", "lancedb", "sklearn", "ollama", "sentence_transformers", "onnxruntime", "pyarrow", "mcp"]

PROBE = """
import json, sys
from typer.testing import CliRunner
from dcpm_cli.cli.main import app
results = [CliRunner().invoke(app, args) for args in (["--help"], ["add", "--help"], ["process", "--help"])]
heavy = set(json.loads(sys.argv[1]))
print(json.dumps({
    "exit_codes": [r.exit_code for r in results],
    "helped": all("Usage" in r.output for r in results),
    "imported": sorted({m.split(".")[0] for m in sys.modules} & heavy),
}))
"""


def test_help_imports_no_heavy_library() -> None:
    done = subprocess.run(
        [sys.executable, "-c", PROBE, json.dumps(HEAVY)],
        capture_output=True,
        text=True,
        timeout=120,
        env={"PATH": "", "COLUMNS": "100", "DCPM_HOME": "/nonexistent/dcpm-home"},
    )

    assert done.returncode == 0, done.stderr
    got = json.loads(done.stdout)
    assert got == {"exit_codes": [0, 0, 0], "helped": True, "imported": []}


def test_the_console_script_answers_help(dcpm) -> None:
    done = dcpm("--help")

    assert done.returncode == 0
    assert "add" in done.stdout and "process" in done.stdout
    assert done.stderr == ""
