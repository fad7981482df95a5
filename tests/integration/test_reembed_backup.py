"""`dcpm reembed` (switch embedders, atomically) and `dcpm backup` (a snapshot you can restore)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest
from support.embedders import needs_mpnet
from support.fake_ollama import FakeOllama
from support.portability import QUERIES, recall_all

from dcpm_cli.dream.calibrate import PROFILES
from dcpm_cli.errors import LLMUnavailable
from dcpm_cli.ops.reembed import reembed
from dcpm_cli.store import Store


class RenamedEmbedder:
    """The real MiniLM under another model id, that can fail after `fail_after` texts (the way
    an embedding server that goes away fails): a second embedder at the Embedder seam."""

    dim = 384

    def __init__(self, inner, model_id: str = "minilm-renamed", fail_after: int | None = None) -> None:
        self.inner, self.model_id, self.fail_after, self.texts = inner, model_id, fail_after, 0

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.texts += len(texts)
        if self.fail_after is not None and self.texts > self.fail_after:
            raise LLMUnavailable("the embedding server went away")
        return self.inner.embed(texts)


def export_of(cli, *flags: str) -> list[str]:
    return sorted(cli(*flags, "export").stdout.splitlines()[1:])


def test_reembed_interrupted_midway_leaves_the_old_store_working(rich_store, cli, embedder) -> None:
    before, answers = export_of(cli), recall_all(cli)
    flaky = RenamedEmbedder(embedder, fail_after=7)  # after the raw inputs, in the items

    with pytest.raises(LLMUnavailable):
        reembed(rich_store, flaky)

    assert flaky.texts > 7
    assert export_of(cli) == before
    assert recall_all(cli) == answers
    assert cli("add", "--no-extract", "still writable after the failed switch").exit_code == 0
    # The next attempt clears what the failed one left and completes.
    done = reembed(cli.open_store(), RenamedEmbedder(embedder))
    assert done.records > 0 and not Path(rich_store.local_path.parent / "store.reembed").exists()


def test_reembed_to_a_renamed_model_switches_and_answers_the_same(rich_store, cli, embedder) -> None:
    answers = recall_all(cli)
    target = RenamedEmbedder(embedder)

    report = reembed(rich_store, target)

    assert (report.old_embedder, report.new_embedder) == ("all-MiniLM-L6-v2", "minilm-renamed")
    assert report.records == 5 + 5 + 9 + 2 + 4 + 1 + 1  # events: an ADD, 4 SUPERSEDEs, 4 JUDGED
    reopened = Store(str(rich_store.local_path), target, create=False)
    assert reopened.meta()["embedder"] == "minilm-renamed"
    assert reopened.calibration_for("minilm-renamed") is not None  # thresholds for the new model
    assert reopened.count("passages") == Store(report.kept_old_store, embedder).count("passages") > 0
    old = Store(report.kept_old_store, embedder, create=False)  # the old store is kept aside
    assert old.meta()["embedder"] == "all-MiniLM-L6-v2" and old.count("items") == 5
    # The configured embedder no longer matches: a clear error, exit 4.
    res = cli("recall", "hiking")
    assert res.exit_code == 4 and "minilm-renamed" in res.stderr
    from dcpm_cli.read.recall import recall

    for q, expected in zip(QUERIES, answers, strict=True):
        got = recall(reopened, target, q, k=10)
        assert [h.id for h in got.hits] == [h["id"] for h in expected["hits"]]


def test_reembed_through_the_cli_with_an_ollama_embedder(rich_store, cli, tmp_path: Path) -> None:
    server = FakeOllama(models=("reembedder",), embed_dim=16).start()
    try:
        env = {"OLLAMA_HOST": server.host}
        res = cli("reembed", "--embedder", "ollama:reembedder", "--json", **env)
        assert res.exit_code == 0, res.stderr
        report = json.loads(res.stdout)
        assert report["new_embedder"] == "ollama:reembedder" and report["dim"] == 16
        assert "--embedder ollama:reembedder" in res.stderr
        hits = json.loads(cli("--embedder", "ollama:reembedder", "recall", "Zumba", "--json", **env).stdout)[
            "hits"
        ]
        assert hits and any("Zumba" in state["text"] for state in hits[0]["chain"])  # the arc holds it
        # Configured for minilm again, the store can be moved back: it embeds with minilm only.
        back = cli("reembed", "--embedder", "minilm", "--json")
        assert back.exit_code == 0 and json.loads(back.stdout)["old_embedder"] == "ollama:reembedder"
    finally:
        server.close()


def test_reembed_to_the_model_in_use_says_there_is_nothing_to_do(rich_store, cli) -> None:
    res = cli("reembed", "--embedder", "minilm")
    assert res.exit_code == 0 and "already embedded by all-MiniLM-L6-v2" in res.stderr  # already so


def test_backup_is_a_store_you_can_restore_from(rich_store, cli, tmp_path: Path) -> None:
    answers, records = recall_all(cli), export_of(cli)
    folder = tmp_path / "backups"

    with rich_store.dream_lock():  # a cron dream is running
        res = cli("backup", str(folder), "--json")

    assert res.exit_code == 0, res.stderr
    snap = json.loads(res.stdout)["path"]
    assert Path(snap).parent == folder and Path(snap).name.startswith("dcpm-")
    assert not list(Path(snap).rglob("*.lock"))
    # Later changes do not reach the snapshot; restoring is pointing --store at it.
    cli("forget", rich_store.all_items()[0].raw_ids[0], "--yes")
    assert recall_all(cli, "--store", snap) == answers
    assert export_of(cli, "--store", snap) == records


def test_backup_into_the_store_itself_is_refused(rich_store, cli) -> None:
    res = cli("backup", str(rich_store.local_path / "inside"))
    assert res.exit_code == 2 and "inside the store" in res.stderr


def test_reembed_to_the_int8_model_through_the_cli(rich_store, cli) -> None:
    answers = recall_all(cli)

    res = cli("reembed", "--embedder", "minilm-int8", "--json")

    assert res.exit_code == 0, res.stderr
    report = json.loads(res.stdout)
    assert report["new_embedder"] != report["old_embedder"] == "all-MiniLM-L6-v2"
    assert set(report["thresholds"]) == {"eps1", "eps2", "theta_beh", "theta_sem"}
    after = recall_all(cli, "--embedder", "minilm-int8")
    assert [a["hits"][0]["id"] for a in after] == [a["hits"][0]["id"] for a in answers]
    shown = json.loads(cli("--embedder", "minilm-int8", "config", "show", "--json").stdout)
    assert {r["key"]: r["source"] for r in shown}["embedder"] == "flag"


def test_the_mismatch_hint_can_be_followed_backup_export_and_reembed_embed_nothing(rich_store, cli) -> None:
    """Configured for another embedder (the config file already says the new one), a user is
    told to reembed; backup first, export, then reembed must work, and only then recall."""
    new = ("--embedder", "minilm-int8")
    refused = cli(*new, "recall", "coffee")
    assert refused.exit_code != 0 and "`dcpm reembed`" in refused.stderr
    before = export_of(cli)

    assert cli(*new, "backup", str(rich_store.local_path.parent / "backups")).exit_code == 0
    assert export_of(cli, *new) == before, "the store's own records, under its own embedder"
    res = cli(*new, "reembed", "--embedder", "minilm-int8", "--json")

    assert res.exit_code == 0, res.stderr
    assert json.loads(res.stdout)["old_embedder"] == "all-MiniLM-L6-v2"
    assert cli(*new, "recall", "coffee").exit_code == 0
    # The configured embedder is not even built: one whose server is down stops no backup.
    down = cli(
        "--embedder",
        "ollama:gone",
        "backup",
        str(rich_store.local_path.parent / "b2"),
        OLLAMA_HOST="127.0.0.1:9",
    )
    assert down.exit_code == 0, down.stderr


def test_reembed_killed_after_the_swap_keeps_the_old_store_it_left(rich_store, cli, embedder) -> None:
    """A kill between the swap and the rename leaves the old store at `<store>.reembed`: the
    next reembed names it `<store>.before-reembed-<time>` and says so, it never deletes it."""
    before = export_of(cli)
    first = reembed(rich_store, RenamedEmbedder(embedder))
    parent = rich_store.local_path.parent
    leftover = parent / "store.reembed"
    Path(first.kept_old_store).rename(leftover)  # the state a kill right after the swap leaves

    switched = Store(str(rich_store.local_path), RenamedEmbedder(embedder), create=False)
    second = reembed(switched, RenamedEmbedder(embedder, model_id="minilm-renamed-again"))

    assert second.recovered_old_store and not leftover.exists()
    recovered = Path(second.recovered_old_store)
    assert recovered.name.startswith("store.before-reembed-") and recovered != Path(second.kept_old_store)
    assert export_of(cli, "--store", str(recovered)) == before  # the old words, whole


@needs_mpnet
def test_reembed_to_mpnet_through_the_cli(rich_store, cli) -> None:
    answers = recall_all(cli)

    res = cli("reembed", "--embedder", "mpnet", "--json")

    assert res.exit_code == 0, res.stderr
    report = json.loads(res.stdout)
    assert (report["old_embedder"], report["new_embedder"], report["dim"]) == (
        "all-MiniLM-L6-v2",
        "all-mpnet-base-v2",
        768,
    )
    # The thresholds calibrated for the new store are the ones dcpm ships for mpnet.
    pinned = PROFILES["all-mpnet-base-v2"]
    for name, value in report["thresholds"].items():
        assert value == pytest.approx(getattr(pinned, name), abs=0.011), name
    after = recall_all(cli, "--embedder", "mpnet")
    assert [a["hits"][0]["id"] for a in after] == [a["hits"][0]["id"] for a in answers]
    assert cli("recall", "hiking").exit_code == 4  # minilm no longer matches the store


def test_a_warm_writer_refuses_to_write_into_a_store_reembedded_under_it(rich_store, cli, writer) -> None:
    """A process that opened the store before `dcpm reembed` swapped it (a warm MCP server)
    would add the old model's vectors to a store of the new one."""
    from dcpm_cli.errors import EmbedderMismatch
    from dcpm_cli.models import RawInput

    assert cli("reembed", "--embedder", "minilm-int8").exit_code == 0

    with pytest.raises(EmbedderMismatch, match="all-MiniLM-L6-v2-int8"):
        writer.add([RawInput(text="After the reembed I bought a blue kettle.")], extract=False)

    assert "blue kettle" not in cli("--embedder", "minilm-int8", "export").stdout


def test_a_warm_reader_is_told_the_store_was_reembedded_under_it(rich_store, store, embedder, cli) -> None:
    """A warm MCP server's recall after `dcpm reembed` to another model: its question's vector
    is of the old model, the store's of the new one. It must say so, not rank by a meaningless
    cosine (or by the tables it opened before the swap)."""
    from dcpm_cli.errors import EmbedderMismatch
    from dcpm_cli.read.recall import recall

    assert recall(store, embedder, "hiking", k=3).hits  # warm: tables opened, vectors copied
    assert recall(store, embedder, "hiking", k=3).hits
    assert cli("reembed", "--embedder", "minilm-int8").exit_code == 0

    with pytest.raises(EmbedderMismatch, match="all-MiniLM-L6-v2-int8"):
        recall(store, embedder, "hiking", k=3)


def test_a_warm_reader_reads_the_swapped_store_when_its_embedder_still_fits(
    rich_store, store, embedder, cli
) -> None:
    """`dcpm reembed` to the same model swaps the directory too: a warm reader reads the new one,
    with what was added after the swap."""
    from dcpm_cli.read.recall import recall

    for _ in range(5):  # past the searches that buy an in-memory copy of the tables
        recall(store, embedder, "hiking", k=3)
    assert cli("reembed", "--embedder", "minilm").exit_code == 0
    assert cli("add", "--no-extract", "I bought a blue kettle for the new flat.").exit_code == 0

    hits = recall(store, embedder, "blue kettle", k=3).hits
    assert hits and "blue kettle" in hits[0].text


def test_a_search_while_the_store_is_away_does_not_forget_which_store_was_opened(
    rich_store, store, embedder, cli, settings, tmp_path
) -> None:
    """Where the two directories cannot be exchanged in one rename, a swap is two renames, and
    a warm reader's search may land between them: it fails, and the next one, on the new store,
    must still be checked against the store opened."""
    from dcpm_cli.errors import EmbedderMismatch
    from dcpm_cli.read.recall import recall

    other = tmp_path / "other"
    built = cli("--store", str(other), "--embedder", "minilm-int8", "add", "--no-extract", "Hiking.")
    assert built.exit_code == 0
    for _ in range(5):
        recall(store, embedder, "hiking", k=3)
    base = Path(settings.store)
    base.rename(tmp_path / "away")
    with pytest.raises(Exception):  # noqa: B017 — whatever LanceDB raises for a missing table
        recall(store, embedder, "hiking", k=3)
    other.rename(base)

    with pytest.raises(EmbedderMismatch, match="all-MiniLM-L6-v2-int8"):
        recall(store, embedder, "hiking", k=3)
