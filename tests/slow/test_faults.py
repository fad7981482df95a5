"""Fault injection with small counts (the bench, `python -m benchmarks.faults`, runs hundreds):
kill -9 of `dcpm add` and `dcpm dream` at seeded random moments, LLM faults at extraction and at
reconcile, concurrent writers with a dream. After each: no acknowledged input lost, `dcpm check`
holds after at most one `--repair`, and a rerun completes the work (#8). Kills of `dcpm forget`
(no forgotten word left on disk) and `dcpm import` (importing again finishes it), and hostile
exports refused in one line with the store untouched (#19)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from benchmarks import faults as F

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def served() -> Iterator[tuple[Any, F.Responder]]:
    with F.fake_ollama() as pair:
        yield pair


@pytest.fixture
def lab(served, embedder, tmp_path: Path) -> F.Lab:
    server, responder = served
    responder.fault, responder.faulted = None, 0
    home = tmp_path / "lab"
    home.mkdir()
    return F.Lab(home, server, responder, embedder)


def assert_clean(tally: F.Tally, trials: int) -> None:
    why = "\n".join(tally.problems)
    assert tally.trials == trials, why
    assert tally.lost == 0, why
    assert tally.broken_after == 0, why
    assert tally.incomplete == 0, why


@pytest.mark.parametrize("extract", [True, False], ids=["add", "add --no-extract"])
def test_kill_9_of_add_loses_no_acknowledged_input(lab: F.Lab, extract: bool) -> None:
    tally = F.Tally("kill add")
    F.kill_add(lab, tally, 8, np.random.default_rng(11), extract=extract, size=3)
    assert_clean(tally, 8)
    assert tally.killed >= 3  # most trials really were cut short
    assert tally.acknowledged >= 2 * 3  # the warm-up batch and the last one, at least


def test_kill_9_of_dream_leaves_a_store_that_check_passes_and_a_rerun_finishes(lab: F.Lab) -> None:
    tally = F.Tally("kill dream")
    F.kill_dream(lab, tally, 6, np.random.default_rng(12), size=3)
    assert_clean(tally, 6)
    assert tally.killed >= 2
    store = lab.store()
    assert store.all_nodes() and store.evidenced_fact_ids()  # the last dream consolidated


@pytest.mark.parametrize("phase", F.PHASES)
@pytest.mark.parametrize("kind", F.FAULTS)
def test_llm_faults_leave_every_input_pending_with_its_error(lab: F.Lab, phase: str, kind: str) -> None:
    tally = F.Tally(f"{kind} at {phase}")
    F.llm_fault(lab, tally, phase, kind, size=3, round_=0)
    assert_clean(tally, 1)
    assert tally.acknowledged == 3
    no_server = kind == "down" and phase == "extraction"  # nothing listens: no request arrives
    assert lab.responder.faulted >= (0 if no_server else 1)  # the fault was really served


def test_three_writers_and_a_dream_at_once(lab: F.Lab) -> None:
    tally = F.Tally("concurrency")
    F.concurrency(lab, tally, writers=3, inputs=20)
    assert_clean(tally, 1)
    assert tally.broken_before == 0  # clean without a repair
    assert tally.acknowledged == 10 + 3 * 20


def test_the_harness_sees_a_lost_input_and_a_broken_chain(lab: F.Lab) -> None:
    # The assertions above would be empty if `assess` could not fail: it can.
    from dcpm_cli.models import MemoryItem

    lab.writer(lab.llm()).add(F.raw_inputs(F.batch("seen", 3, F.datetime(2026, 1, 1, tzinfo=F.UTC))))
    store = lab.store()
    (old, *_) = store.all_items()
    newer = MemoryItem(id="m_newer", kind="fact", text="A newer state", topic="work", raw_ids=old.raw_ids)
    newer.supersedes = old.id
    store.add_items([newer], lab.embedder.embed([newer.text]))  # its back-pointer never written

    tally = F.Tally("self-test")
    F.assess(lab, tally, {"r_never_stored"}, "self-test")

    assert tally.lost == 1 and tally.broken_before == 1 and tally.broken_after == 0
    assert "chains" in tally.problems[1]


def test_a_forget_killed_before_any_of_its_commits_is_finished_by_repair_and_leaves_no_byte(
    lab: F.Lab,
) -> None:
    # #19: rows gone, `check --repair` healthy, and the text still in a data file.
    tally = F.Tally("forget stages")
    F.forget_stages(lab, tally, size=7)
    assert_clean(tally, tally.trials)
    assert tally.trials >= 10 and tally.killed == tally.trials  # every commit of the forget
    assert tally.leaked == 0, "\n".join(tally.problems)
    assert tally.acknowledged == 4


def test_a_forget_killed_at_random_moments_leaves_no_byte(lab: F.Lab) -> None:
    tally = F.Tally("kill forget")
    F.kill_forget(lab, tally, 4, np.random.default_rng(13), size=4)
    assert_clean(tally, 4)
    assert tally.leaked == 0, "\n".join(tally.problems)


def test_an_import_killed_before_each_commit_into_a_store_with_data_is_finished_by_importing_again(
    lab: F.Lab,
) -> None:
    tally = F.Tally("import stages")
    F.import_stages(lab, tally, with_data=True, size=4)
    assert_clean(tally, tally.trials)
    assert tally.trials >= 5 and tally.killed == tally.trials  # every commit of the import
    assert tally.acknowledged == 4 + 4


def test_an_import_killed_at_random_into_an_empty_store_is_finished_by_importing_again(lab: F.Lab) -> None:
    tally = F.Tally("kill import")
    F.kill_import(lab, tally, 2, np.random.default_rng(14), with_data=False, size=4)
    assert_clean(tally, 2)


@pytest.fixture(scope="module")
def hostile(served, embedder, tmp_path_factory) -> tuple[F.Lab, tuple[list[str], list[str]]]:
    server, responder = served
    responder.fault = None
    lab = F.Lab(tmp_path_factory.mktemp("hostile"), server, responder, embedder)
    return lab, F.hostile_lines(lab, 4)


@pytest.mark.parametrize("case", [c[0] for c in F.HOSTILE])
def test_a_hostile_export_is_refused_in_one_line_and_leaves_the_store_as_it_was(hostile, case: str) -> None:
    lab, lines = hostile

    row = F.hostile_import(lab, case, lines)

    assert row.code == 2, row.error
    assert not row.traceback and not row.store_changed, row.error
    assert row.clean, f"{row.error!r} does not say {row.expected!r} in one line"
