"""A full disk and a read-only store (#19.6, #19.7): expected failures with a clear message,
never a traceback; reads work on a read-only snapshot."""

from __future__ import annotations

import os
import resource
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from support.procs import without_root_powers


def _env(home: Path) -> dict[str, str]:
    return {**os.environ, "DCPM_HOME": str(home), "PYTHONPATH": os.pathsep.join(sys.path), "COLUMNS": "200"}


def _dcpm(home: Path, *args: str, stdin: str | None = None, limit: int | None = None, prefix=()):
    def limited() -> None:
        if limit is not None:
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG
            resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return subprocess.run(
        [*prefix, sys.executable, "-m", "dcpm_cli", *args],
        input=stdin,
        env=_env(home),
        capture_output=True,
        text=True,
        preexec_fn=limited,
        timeout=300,
    )


@pytest.mark.parametrize("how", ["stdin", "file"])
def test_a_file_size_limit_is_a_clear_error_and_the_next_command_repairs(tmp_path: Path, how: str) -> None:
    home = tmp_path / "home"
    assert _dcpm(home, "add", "--no-extract", "A first small note.").returncode == 0
    text = "\n".join(f"Line {n} of a long diary about the garden and the weather." for n in range(160_000))
    assert len(text) > 9_000_000
    big = tmp_path / "big.txt"
    big.write_text(text)

    if how == "stdin":
        done = _dcpm(home, "add", "--no-extract", "-", stdin=text, limit=2_000_000)
    else:
        done = _dcpm(home, "add", "--no-extract", "--file", str(big), limit=2_000_000)

    assert done.returncode == 4, done.stderr
    assert "Traceback" not in done.stderr
    assert "disk is full" in done.stderr and "File too large" in done.stderr
    if how == "stdin":  # a copy cut short is named as such, never like a whole one
        kept = list((home / "rejected").iterdir())
        assert all("partial" in p.name or p.stat().st_size == len(text.encode()) for p in kept), kept
        assert any("partial" in p.name for p in kept) and "first" in done.stderr
    after = _dcpm(home, "check", "--repair")
    assert after.returncode == 0, after.stdout + after.stderr
    assert _dcpm(home, "check").returncode == 0


def test_a_read_only_store_is_read_and_writes_are_refused(tmp_path: Path) -> None:
    prefix = without_root_powers()
    if prefix is None:
        pytest.skip("running as root without setpriv: permissions cannot bind")
    home = tmp_path / "home"
    for line in ("The heron came back to the pond.", "Bought seeds for the allotment."):
        assert _dcpm(home, "add", "--no-extract", line).returncode == 0
    assert _dcpm(home, "recall", "heron").returncode == 0  # the full-text indices exist
    store = home / "store"
    backups = tmp_path / "backups"
    backups.mkdir()
    for p in [store, *store.rglob("*")]:
        p.chmod(0o500 if p.is_dir() else 0o400)
    try:
        check = _dcpm(home, "check", prefix=prefix)
        assert check.returncode == 0, check.stdout + check.stderr
        export = _dcpm(home, "export", prefix=prefix)
        assert export.returncode == 0 and "heron" in export.stdout, export.stderr
        backup = _dcpm(home, "backup", str(backups), prefix=prefix)
        assert backup.returncode == 0, backup.stderr
        recall = _dcpm(home, "recall", "heron", prefix=prefix)
        assert recall.returncode == 0 and "heron" in recall.stdout, recall.stderr
        assert "check --repair" not in recall.stderr and "full-text" not in recall.stderr
        raw_id = next(w.strip('"') for w in export.stdout.split() if w.strip('",').startswith("r_")).strip(
            ',"'
        )
        for args in (["check", "--repair"], ["forget", raw_id, "--yes"]):
            refused = _dcpm(home, *args, prefix=prefix)
            assert refused.returncode == 4, refused.stderr
            assert "Traceback" not in refused.stderr and "permission denied" in refused.stderr
    finally:
        for p in [store, *store.rglob("*")]:
            p.chmod(0o700)
