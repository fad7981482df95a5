"""Every store format dcpm has shipped still opens: a small store written by the release that
introduced each format (tests/data/stores/format-N/) is migrated by today's code, passes
`dcpm check`, and recall finds what was stored in it.

Format 1 (no "format" in the meta) from the first release (m001 only), format 2 from `dcpm
check` (m001-m005), format 3 from claims as files (m001-m007), format 4 from group commit
(every step up to m008). Each holds three inputs, one extracted into an item by the scripted
LLM, two stored with --no-extract (one of them dated 2026-03-02)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import lancedb
import pytest
from support.paths import TEST_DATA

from dcpm_cli.store import Store
from dcpm_cli.store import schemas as S
from dcpm_cli.store.migrations import FORMAT_VERSION, MIGRATIONS

STORES = TEST_DATA / "stores"
STEPS = [name for name, _ in MIGRATIONS]
# The format each fixture store was written in -> the steps its release had applied.
SHIPPED = {1: STEPS[:1], 2: STEPS[:5], 3: STEPS[:7], 4: STEPS[:8]}


def applied(path: Path) -> list[str]:
    """The steps recorded in a store, read with LanceDB alone (no dcpm code runs on it)."""
    rows = lancedb.connect(str(path)).open_table(S.MIGRATIONS).to_arrow().to_pylist()
    return sorted(r["name"] for r in rows)


def format_of(path: Path) -> str | None:
    rows = lancedb.connect(str(path)).open_table(S.META).to_arrow().to_pylist()
    return {r["key"]: r["value"] for r in rows}.get("format")


def test_every_shipped_format_has_a_fixture_store() -> None:
    assert sorted(p.name for p in STORES.iterdir()) == [f"format-{n}" for n in SHIPPED]
    assert max(SHIPPED) == FORMAT_VERSION  # a new format ships with a fixture store of its own


@pytest.mark.parametrize("fmt", sorted(SHIPPED), ids=lambda n: f"format-{n}")
def test_a_store_of_a_shipped_format_migrates_checks_and_recalls(fmt: int, cli, embedder, tmp_path) -> None:
    path = tmp_path / "store"
    shutil.copytree(STORES / f"format-{fmt}", path)
    assert applied(path) == sorted(SHIPPED[fmt])
    assert format_of(path) == (None if fmt == 1 else str(fmt))

    store = Store(str(path), embedder, create=False)

    assert applied(path) == sorted(STEPS)
    assert store.meta()["format"] == str(FORMAT_VERSION)
    check = cli("--store", str(path), "check", "--json")
    assert check.exit_code == 0, check.stdout
    assert json.loads(check.stdout)["ok"] is True
    for query, words in [
        ("stolen bicycle", "The blue bicycle was stolen from the station"),
        ("where does my sister live", "My sister Ana lives in Lisbon with her two cats"),
        ("swimming before work", "swims at dawn before work"),
    ]:
        hits = json.loads(cli("--store", str(path), "recall", query, "--json").stdout)["hits"]
        assert any(words in h["text"] for h in hits), (query, hits)
    bike = json.loads(cli("--store", str(path), "recall", "bicycle", "--json").stdout)["hits"][0]
    assert bike["kind"] == "raw" and "2026-03-02" in json.dumps(bike)
