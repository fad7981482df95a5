"""The store on disk: migrations, the embedder check, chains, and where the data lives."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import numpy as np
import pytest

from dcpm_cli.config import Settings
from dcpm_cli.errors import EmbedderMismatch, StoreError
from dcpm_cli.models import PENDING, MemoryItem, RawInput
from dcpm_cli.store import Store
from dcpm_cli.store import schemas as S
from dcpm_cli.store.migrations import FORMAT_VERSION, MIGRATIONS, apply_migrations


@dataclass
class OtherEmbedder:
    """An edge fake: some other embedding model with vectors of its own."""

    model_id: str = "other"
    dim: int = 384

    def embed(self, texts: list[str]) -> np.ndarray:
        v = np.ones((len(texts), self.dim), dtype=np.float32)
        return v / np.linalg.norm(v, axis=1, keepdims=True)


def test_a_new_store_lives_under_dcpm_home_and_records_its_migrations(dcpm_home: Path, embedder) -> None:
    settings = Settings.resolve()
    assert settings.store == str(dcpm_home / "store")

    store = Store(settings.store, embedder)

    assert (dcpm_home / "store").is_dir()
    assert store.applied_migrations() == {name for name, _ in MIGRATIONS}
    assert store.meta() == {"embedder": "all-MiniLM-L6-v2", "dim": "384", "format": str(FORMAT_VERSION)}
    for table in (S.RAW, S.ITEMS, S.EVENTS, S.NODES, S.EDGES):
        assert store.count(table) == 0


def test_reopening_a_store_is_idempotent(store: Store, embedder) -> None:
    raw = RawInput(text="I keep a journal.", said_at=datetime(2026, 1, 1, tzinfo=UTC))
    store.add_raw([raw], embedder.embed([raw.text]))

    again = Store(store.uri, embedder)
    third = Store(store.uri, embedder, create=False)

    assert apply_migrations(third) == []
    assert third.count(S.MIGRATIONS) == len(MIGRATIONS)  # each step recorded once
    assert third.count(S.META) == 3  # embedder, dim, format
    assert again.get_raw([raw.id])[raw.id].text == "I keep a journal."
    assert third.get_raw([raw.id])[raw.id].said_at == datetime(2026, 1, 1, tzinfo=UTC)


def test_a_migration_interrupted_before_its_record_runs_again_safely(store: Store, embedder) -> None:
    import lancedb

    raw = RawInput(text="Still here after the crash.")
    store.add_raw([raw], embedder.embed([raw.text]))
    # A crash after m001 created its tables but before it was recorded.
    lancedb.connect(store.uri).drop_table(S.MIGRATIONS)

    reopened = Store(store.uri, embedder)

    assert reopened.applied_migrations() == {name for name, _ in MIGRATIONS}
    assert reopened.raw_by_status([PENDING])[0].text == "Still here after the crash."


def test_a_store_made_by_another_embedder_is_refused(tmp_path: Path, embedder) -> None:
    uri = str(tmp_path / "other-store")
    Store(uri, OtherEmbedder())

    with pytest.raises(EmbedderMismatch) as e:
        Store(uri, embedder)

    assert e.value.message == (
        "this store's vectors were made by other (384 dims); "
        "the configured embedder is all-MiniLM-L6-v2 (384 dims)"
    )
    assert "--embedder" in (e.value.hint or "")
    assert e.value.exit_code == 4


@pytest.mark.parametrize(
    ("made_by", "option"),
    [
        ("all-MiniLM-L6-v2", "minilm"),
        ("all-MiniLM-L6-v2-int8", "minilm-int8"),
        ("all-mpnet-base-v2", "mpnet"),
        ("ollama:nomic-embed-text", "ollama:nomic-embed-text"),
    ],
)
def test_the_refusal_names_the_embedder_option_that_opens_the_store(
    tmp_path: Path, made_by: str, option: str
) -> None:
    uri = str(tmp_path / "store")
    Store(uri, OtherEmbedder(model_id=made_by))

    with pytest.raises(EmbedderMismatch) as e:
        Store(uri, OtherEmbedder(model_id="something-else"))

    assert f"use --embedder {option}," in (e.value.hint or "")


def test_a_store_with_another_dimension_is_refused(tmp_path: Path, embedder) -> None:
    uri = str(tmp_path / "small")
    Store(uri, OtherEmbedder(model_id=embedder.model_id, dim=8))

    with pytest.raises(EmbedderMismatch, match=r"\(8 dims\)"):
        Store(uri, embedder)


def test_dcpm_add_on_a_store_of_another_embedder_exits_4_and_writes_nothing(cli, dcpm_home: Path) -> None:
    Store(Settings.resolve().store, OtherEmbedder())

    done = cli("add", "Some text.")

    assert done.exit_code == 4
    assert "this store's vectors were made by other" in " ".join(done.stderr.split())
    assert Store(Settings.resolve().store, OtherEmbedder()).count(S.RAW) == 0


def test_opening_a_missing_store_without_create_is_a_clear_error(tmp_path: Path, embedder) -> None:
    with pytest.raises(StoreError, match="nowhere"):
        Store(str(tmp_path / "nowhere"), embedder, create=False)
    assert not (tmp_path / "nowhere").exists()


def test_store_location_precedence(
    cli, dcpm_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    dcpm_home.mkdir(parents=True, exist_ok=True)
    (dcpm_home / "config.toml").write_text(f'store = "{tmp_path / "from-config"}"\n')
    assert Settings.resolve().store == str(tmp_path / "from-config")
    monkeypatch.setenv("DCPM_STORE", str(tmp_path / "from-env"))
    assert Settings.resolve().store == str(tmp_path / "from-env")
    assert Settings.resolve(store=str(tmp_path / "from-flag")).store == str(tmp_path / "from-flag")

    cli("--store", str(tmp_path / "from-flag"), "add", "flag wins", "--no-extract")
    cli("add", "env next", "--no-extract")

    assert (tmp_path / "from-flag").is_dir() and (tmp_path / "from-env").is_dir()
    assert not (tmp_path / "from-config").exists() and not (dcpm_home / "store").exists()


def test_a_broken_config_file_is_a_clear_error(cli, dcpm_home: Path) -> None:
    dcpm_home.mkdir(parents=True, exist_ok=True)
    (dcpm_home / "config.toml").write_text("top_k = [unclosed\n")

    done = cli("add", "x", "--no-extract")

    assert done.exit_code == 2
    assert "cannot read" in done.stderr and "config.toml" in done.stderr


def _item(id: str, text: str, **kw) -> MemoryItem:
    return MemoryItem(id=id, kind="fact", text=text, topic="food", attribute="diet", **kw)


def test_a_chain_interrupted_before_its_back_pointer_is_repaired(store: Store, embedder) -> None:
    old, new = _item("m_old", "Eats meat"), _item("m_new", "Is vegetarian", supersedes="m_old")
    store.add_items([old, new], embedder.embed([old.text, new.text]))
    assert store.get_items(["m_old"])["m_old"].superseded_by is None  # what a crash leaves

    assert store.repair_chains() == 1
    assert store.repair_chains() == 0

    assert [i.id for i in store.chain("m_old")] == ["m_old", "m_new"]
    assert store.get_items(["m_old"])["m_old"].superseded_by == "m_new"


def test_chains_and_searches_on_an_empty_or_unknown_store(store: Store, embedder) -> None:
    assert store.chain("m_missing") == []
    assert store.nearest_items(embedder.embed(["anything"])[0], 5) == []
    assert store.raw_by_status([PENDING]) == []


def test_adding_the_same_items_again_changes_nothing(store: Store, embedder) -> None:
    items = [_item("m_a", "Eats fish"), _item("m_b", "Avoids peanuts")]
    vectors = embedder.embed([i.text for i in items])

    store.add_items(items, vectors)
    store.add_items(items, vectors)

    assert sorted(i.id for i in store.all_items()) == ["m_a", "m_b"]


def test_quotes_in_sessions_and_ids_are_safe(store: Store, embedder) -> None:
    session = "Nora's log'; DROP TABLE raw_inputs; --"
    earlier = RawInput(text="earlier", session=session, said_at=datetime(2026, 1, 1, tzinfo=UTC))
    later = RawInput(text="later", session=session, said_at=datetime(2026, 1, 2, tzinfo=UTC))
    store.add_raw([earlier, later], embedder.embed(["earlier", "later"]))

    history = store.recent_raw(session, later.said_at, 5)

    assert [r.text for r in history] == ["earlier"]
    assert store.get_items(["it's"]) == {}
    assert store.count(S.RAW) == 2


@pytest.mark.parametrize(
    ("before", "expected"),
    [
        (datetime(2026, 1, 6, 9, 30, tzinfo=UTC), ["turn 3", "turn 4", "turn 5"]),
        (datetime(2026, 1, 6, 9, 30, 0, 500000, tzinfo=UTC), ["turn 4", "turn 5", "turn 6"]),
        (datetime(2026, 1, 6, 10, 30, tzinfo=timezone(timedelta(hours=1))), ["turn 3", "turn 4", "turn 5"]),
    ],
)
def test_history_is_bounded_to_the_same_session_and_earlier_times(
    store: Store, embedder, before: datetime, expected: list[str]
) -> None:
    raws = [
        RawInput(text=f"turn {d}", session="a", said_at=datetime(2026, 1, d, 9, 30, tzinfo=UTC))
        for d in range(1, 8)
    ]
    raws.append(RawInput(text="other session", session="b", said_at=datetime(2026, 1, 3, tzinfo=UTC)))
    store.add_raw(raws, embedder.embed([r.text for r in raws]))

    history = store.recent_raw("a", before, 3)

    assert [r.text for r in history] == expected


def test_settings_values_parse_by_type_and_false_is_false() -> None:
    from dcpm_cli.config import parse_value

    assert parse_value("false", "bool") is False
    assert parse_value("On", "bool") is True
    assert parse_value("7", "int") == 7
    assert parse_value("0.25", "float") == 0.25
    with pytest.raises(ValueError):
        parse_value("maybe", "bool")
