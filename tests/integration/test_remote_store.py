"""A store on object storage (any LanceDB URI; `file://` stands in for `s3://` here): writers on
one machine serialise on a lock file under the dcpm home, and a writer finding another
machine's live lease is refused with a clear message instead of interleaving."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from dcpm_cli.config import Settings, dcpm_home
from dcpm_cli.embed import get_embedder
from dcpm_cli.errors import LockBusy
from dcpm_cli.models import PENDING, utcnow
from dcpm_cli.store import Store


def remote_store(tmp_path: Path) -> Store:
    return Store(f"file://{tmp_path / 'bucket' / 'dcpm'}", get_embedder("minilm"), state_dir=dcpm_home())


def lease(host: str, minutes: float) -> str:
    return f"{host}:4242:abc|{(utcnow() + timedelta(minutes=minutes)).isoformat()}"


def test_a_writer_on_another_machine_is_refused_until_its_lease_ends(cli, tmp_path: Path, dcpm_home) -> None:
    store = remote_store(tmp_path)
    with store.write():
        store.set_meta("writer", lease("laptop-elsewhere", 10))

    refused = cli("--store", store.uri, "add", "--no-extract", "Booked the dentist for May.")

    said = " ".join(refused.stderr.split())
    assert refused.exit_code == 5
    assert "another dcpm process (laptop-elsewhere) is writing to file://" in said
    assert "one writer at a time" in said
    assert store.raw_by_status([PENDING]) == []
    with pytest.raises(LockBusy), store.write():
        pass

    store.set_meta("writer", lease("laptop-elsewhere", -1))  # the other machine's lease ran out
    done = cli("--store", store.uri, "add", "--no-extract", "Booked the dentist for May.")

    assert done.exit_code == 0, done.stderr
    assert [r.text for r in store.raw_by_status([PENDING])] == ["Booked the dentist for May."]
    assert store.meta()["writer"] == ""  # this writer's own lease ended with its write
    assert (dcpm_home / "locks").is_dir()  # writers on this machine serialise on a lock file


def test_a_remote_store_is_checked_like_a_local_one(cli, tmp_path: Path) -> None:
    store = remote_store(tmp_path)
    assert cli("--store", store.uri, "add", "--no-extract", "--session", "s", "First note").exit_code == 0

    result = cli("--store", store.uri, "check")

    assert result.exit_code == 0, result.stdout
    assert Settings.resolve(store=store.uri).store == store.uri
