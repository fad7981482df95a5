"""Ctrl-C while `dcpm add --file` stores a chat export: what was stored is said, the rest is
stored by the same command run again, nothing twice."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest
from support.procs import dcpm_script, run_dcpm

from benchmarks.imports import write_export

pytestmark = pytest.mark.slow


def test_ctrl_c_while_storing_an_export_says_what_was_stored(dcpm_home: Path, tmp_path: Path) -> None:
    export = tmp_path / "conversations.json"
    write_export(export, n=100, turns=10)  # 1,000 messages: several batches of 256
    env = {**os.environ, "COLUMNS": "100"}
    proc = subprocess.Popen(
        [dcpm_script(), "add", "--no-extract", "--file", str(export)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),  # as in a terminal
    )
    raw_table = dcpm_home / "store" / "raw_inputs.lance" / "data"
    deadline = time.monotonic() + 120
    while proc.poll() is None and time.monotonic() < deadline:
        if raw_table.is_dir() and any(raw_table.iterdir()):
            # The first batch's data file is written: its commit is under way. Ctrl-C here
            # was counted as nothing stored while the commit landed behind it.
            break
        time.sleep(0.001)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    if proc.returncode == 0:
        pytest.skip("the import finished before Ctrl-C reached it")

    assert proc.returncode == 130, err
    assert "Traceback" not in err
    first = int(out.split()[1])  # "stored N inputs, …"
    assert out.startswith("stored ") and 0 <= first < 1000, out
    assert "was not read: add it again to store the rest" in " ".join(err.split())

    again = run_dcpm("add", "--no-extract", "--file", str(export), "--json")
    assert again.returncode == 0, again.stderr
    report = json.loads(again.stdout)
    assert report["stored"] + first == 1000 and report["already_stored"] == first
