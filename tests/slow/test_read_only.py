"""A store on a read-only file system (a snapshot, a backup mounted read-only): reads answer,
writes are refused in one line (exit 4), and nothing prints a traceback."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.procs import run_dcpm

pytestmark = pytest.mark.slow


@pytest.fixture
def read_only(tmp_path: Path) -> Iterator[tuple[Path, Path]]:
    """(a folder, the same folder mounted read-only); skipped where no bind mount can be made."""
    src, mnt = tmp_path / "src", tmp_path / "mnt"
    src.mkdir()
    mnt.mkdir()
    made = subprocess.run(["mount", "--bind", str(src), str(mnt)], capture_output=True)
    if made.returncode != 0:
        pytest.skip("no bind mount here (needs root)")
    try:
        ro = subprocess.run(["mount", "-o", "remount,ro,bind", str(mnt)], capture_output=True)
        if ro.returncode != 0:
            pytest.skip("cannot remount read-only here")
        yield src, mnt
    finally:
        subprocess.run(["umount", str(mnt)], capture_output=True)


def test_a_store_on_a_read_only_file_system_reads_and_refuses_writes(read_only) -> None:
    src, mnt = read_only
    assert (
        run_dcpm(
            "add", "--no-extract", "I keep a rowing machine in the garage", env={"DCPM_STORE": str(src / "s")}
        ).returncode
        == 0
    )
    env = {"DCPM_STORE": str(mnt / "s")}

    found = run_dcpm("recall", "rowing machine", env=env)
    assert found.returncode == 0, found.stderr
    assert "I keep a rowing machine in the garage" in found.stdout
    assert "vector search only" in found.stderr  # never indexed, and it cannot be now
    for args in (["stats"], ["export"], ["history", "rowing"]):
        done = run_dcpm(*args, env=env)
        assert done.returncode == 0 and "Traceback" not in done.stderr, (args, done.stderr)

    refused = run_dcpm("add", "x", env=env)
    assert refused.returncode == 4 and "Traceback" not in refused.stderr, refused.stderr
    assert "cannot write to the store" in refused.stderr
    empty = run_dcpm("recall", "x", env={"DCPM_STORE": str(mnt / "empty")})
    assert empty.returncode == 0 and "nothing stored yet" in empty.stderr, empty.stderr
    for args in (["recall", "x"], ["stats"], ["check"]):  # a folder of other things: no store to open
        other = run_dcpm(*args, env={"DCPM_STORE": str(mnt)})
        assert other.returncode == 4 and "Traceback" not in other.stderr, (args, other.stderr)
        assert "a read-only file system" in other.stderr
    indexless = run_dcpm("recall", "rowing machine", env=env).stderr
    assert "needs an index" in indexless and "Errno" not in indexless


def test_a_dream_and_copies_to_a_read_only_place_are_refused_in_one_line(read_only, tmp_path: Path) -> None:
    src, mnt = read_only
    writable = {"DCPM_STORE": str(tmp_path / "s")}
    assert run_dcpm("add", "--no-extract", "I row on Sundays", env=writable).returncode == 0
    assert (
        run_dcpm("add", "--no-extract", "I row on Sundays", env={"DCPM_STORE": str(src / "s")}).returncode
        == 0
    )

    dream = run_dcpm("dream", env={"DCPM_STORE": str(mnt / "s"), "OLLAMA_HOST": "127.0.0.1:9"})
    assert dream.returncode == 4 and "Traceback" not in dream.stderr, dream.stderr
    assert "cannot write to the store" in dream.stderr and "read-only file system" in dream.stderr
    for args in (["backup", str(mnt / "bk")], ["export", "--out", str(mnt / "x.jsonl")]):
        refused = run_dcpm(*args, env=writable)
        assert refused.returncode == 2 and "Traceback" not in refused.stderr, (args, refused.stderr)
        assert "cannot use " + str(mnt) in refused.stderr and "Read-only file system" in refused.stderr
