"""No telemetry: embedding with the default model (onnxruntime) writes nothing outside the
dcpm home, in particular no telemetry event store under the user's cache."""

from __future__ import annotations

from pathlib import Path

import pytest


def test_embedding_writes_no_telemetry_events(
    dcpm, dcpm_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    user_home = tmp_path / "user"
    user_home.mkdir()
    env = {"HOME": str(user_home), "XDG_CACHE_HOME": str(user_home / ".cache")}
    for name in ("CI", "ORT_DISABLE_TELEMETRY", "ORT_RUNNING_UNIT_TESTS"):  # each would hide it
        monkeypatch.delenv(name, raising=False)

    done = dcpm("add", "--no-extract", "Embedded by onnxruntime, told to nobody.", env=env)
    found = dcpm("recall", "told to nobody", "--json", env=env)

    assert done.returncode == 0 and found.returncode == 0, done.stderr + found.stderr
    assert "told to nobody" in found.stdout
    assert sorted(str(p.relative_to(user_home)) for p in user_home.rglob("*")) == []
