"""Privacy on disk: what dcpm creates is its user's alone (directories 0700, files 0600),
whatever the umask of the shell that ran it."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest


def modes(folder: Path) -> dict[str, int]:
    return {
        str(p.relative_to(folder.parent)): stat.S_IMODE(p.stat().st_mode)
        for p in [folder, *folder.rglob("*")]
    }


@pytest.fixture
def loose_umask():
    old = os.umask(0o022)  # a usual shell: files 0644, directories 0755
    try:
        yield
    finally:
        os.umask(old)


def test_home_store_rejected_and_lock_files_are_owner_only(
    dcpm, dcpm_home: Path, tmp_path: Path, loose_umask
) -> None:
    assert not dcpm_home.exists()
    elsewhere = tmp_path / "deep" / "er" / "store"

    stored = dcpm("add", "--no-extract", "-", input='{"role": "user", "content": "My PIN is not 1234."}\n')
    rejected = dcpm("add", "-", input='{"role": "user", "content": "x", "timestamp": "0001-01-01"}\n')
    other = dcpm("--store", str(elsewhere), "add", "--no-extract", "A store of its own.")

    assert (stored.returncode, rejected.returncode, other.returncode) == (0, 2, 0), (
        stored.stderr + rejected.stderr
    )
    found = modes(dcpm_home) | modes(tmp_path / "deep")
    assert {"home/store/.write.lock", "home/rejected"} <= set(found)
    assert any(name.startswith("home/store/raw_inputs.lance/data/") for name in found)
    loose = {n: oct(m) for n, m in found.items() if m != (0o700 if (tmp_path / n).is_dir() else 0o600)}
    assert loose == {}
