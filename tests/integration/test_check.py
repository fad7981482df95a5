"""`dcpm check` and what a write cut short leaves: the invariants reported, the repairs made
without guessing, and the next write finishing an interrupted one."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from support.replies import extraction, item, item_id, replaced

from dcpm_cli.llm import ScriptedLLM
from dcpm_cli.models import DONE, PENDING, REPLACED, Edge, MemoryItem, Node, RawInput
from dcpm_cli.ops.check import chain_problems, check
from dcpm_cli.store import Store
from dcpm_cli.store import schemas as S
from dcpm_cli.write.pipeline import Writer


class Cut(Exception):
    """The power went out."""


def cut_at(step: str) -> Any:
    def checkpoint(reached: str) -> None:
        if reached == step:
            raise Cut(step)

    return checkpoint


def said(day: int) -> datetime:
    return datetime(2026, 3, day, 9, tzinfo=UTC)


def two_stances(writer: Writer, llm: ScriptedLLM) -> tuple[RawInput, RawInput]:
    """A first stance stored whole; the second's `replaces` judgement queued, not yet run."""
    first = RawInput(text="I eat meat most days.", session="diary", said_at=said(1))
    second = RawInput(text="I've gone vegetarian.", session="diary", said_at=said(2))
    llm.enqueue(extraction(item("Eats meat most days", topic="food", attribute="diet")))
    writer.add([first])
    llm.enqueue(
        extraction(item("Is vegetarian", topic="food", attribute="diet")),
        *replaced(),
    )
    return first, second


def findings(store: Store, **kw: Any) -> dict[str, Any]:
    return {f.name: f for f in check(store, **kw).findings}


def test_a_clean_store_passes_every_check(cli, llm: ScriptedLLM) -> None:
    llm.enqueue(extraction(item("Likes green tea", topic="food")))
    cli("add", "--session", "s", "I like green tea")

    result = cli("check")

    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert [line.split()[0] for line in lines[:-1]] == ["ok"] * 11
    assert "every check holds" in lines[-1]
    data = json.loads(cli("check", "--json").stdout)
    assert data["ok"] is True and data["repairs"] == []
    assert [c["name"] for c in data["checks"]] == [
        "format", "embedder", "raw inputs", "note days", "unfinished writes", "chains",
        "provenance", "graph", "passages", "text search", "claims",
    ]  # fmt: skip


def test_check_on_nothing_stored_says_so_and_creates_nothing(cli, dcpm_home) -> None:
    result = cli("check")
    assert result.exit_code == 0
    assert "nothing stored yet" in result.stderr
    assert not (dcpm_home / "store").exists()


def test_a_write_cut_between_new_item_and_back_pointer_is_relinked_by_the_next_write(
    store: Store, embedder: Any, settings: Any, llm: ScriptedLLM
) -> None:
    writer = Writer(store, embedder, llm, settings)
    first, second = two_stances(writer, llm)
    cut = replace(writer, checkpoint=cut_at("items"))

    with pytest.raises(Cut):
        cut.add([second])

    old, new = item_id(first), item_id(second)
    assert store.get_items([new])[new].supersedes == old
    assert store.get_items([old])[old].superseded_by is None  # two current heads
    found = findings(store)
    assert not found["chains"].ok and "1 missing back-pointers" in found["chains"].detail
    assert not found["unfinished writes"].ok
    assert store.get_raw([second.id])[second.id].status == PENDING

    # The rerun (a new process: a fresh writer) first finishes the cut write, then extracts
    # again; the item it extracts is now an exact duplicate of the relinked one.
    llm.enqueue(extraction(item("Is vegetarian", topic="food", attribute="diet")))
    report = Writer(Store(store.uri, embedder), embedder, llm, settings).process_pending()

    assert "1 chain link(s) restored" in report.repaired
    assert [i.id for i in store.chain(old)] == [old, new]
    assert [i.text for i in store.all_items() if i.is_current] == ["Is vegetarian"]
    assert store.get_raw([second.id])[second.id].status == DONE
    assert check(store).ok


def test_check_repair_finishes_a_cut_write_and_says_what_it_did(
    cli, store: Store, embedder: Any, settings: Any, llm: ScriptedLLM
) -> None:
    writer = Writer(store, embedder, llm, settings)
    first, second = two_stances(writer, llm)
    with pytest.raises(Cut):
        replace(writer, checkpoint=cut_at("updates")).add([second])

    before = cli("check")
    assert before.exit_code == 6
    assert "FAIL  chains" in before.stdout and "missing back-pointers" in before.stdout
    assert "FAIL  unfinished writes" in before.stdout

    repaired = cli("check", "--repair")

    assert repaired.exit_code == 0, repaired.output
    assert "repaired  finished 1 interrupted write(s): 1 chain link(s) restored" in repaired.stdout
    assert "every check holds" in repaired.stdout
    assert [i.id for i in store.chain(item_id(first))] == [item_id(first), item_id(second)]
    assert cli("check").exit_code == 0


def test_half_written_state_from_store_verbs_is_found_and_repaired(store: Store, embedder: Any) -> None:
    """What a kill between two commits leaves, written directly: an item whose `supersedes`
    landed but whose old state never got its back-pointer; an input whose passage never did."""
    raws = [
        RawInput(text=f"turn {n} about the garden", session="chat", said_at=said(n + 1)) for n in range(3)
    ]
    with store.write():
        store.add_raw(raws, embedder.embed([r.text for r in raws]))
    old = MemoryItem(id="m_old", kind="fact", text="Grows roses", raw_ids=[raws[0].id])
    new = MemoryItem(id="m_new", kind="fact", text="Grows tulips", raw_ids=[raws[1].id], supersedes="m_old")
    store.add_items([old, new], embedder.embed([old.text, new.text]))
    store.table(S.PASSAGES).delete("true")  # the passage step was cut short

    found = findings(store)
    assert not found["chains"].ok and found["chains"].examples == ["m_old"]
    assert not found["passages"].ok and "3 user input(s) in 1 session(s)" in found["passages"].detail

    report = check(store, repair=True)

    assert report.ok, [f for f in report.findings if not f.ok]
    assert "restored 1 chain back-pointer(s)" in report.repairs
    assert "rebuilt 1 passage(s) for 1 session(s)" in report.repairs
    assert store.get_items(["m_old"])["m_old"].superseded_by == "m_new"
    assert check(store, repair=True).repairs == []  # nothing left to do


def test_a_note_day_with_every_version_replaced_is_found_and_made_current(
    store: Store, embedder: Any
) -> None:
    """What an older dcpm left when a day of a notes folder was edited back to its first text:
    both versions replaced, each by the other, so the day was never recalled."""
    first, second = (
        RawInput(text=t, session="notes:journal", source="2026-03-02.md", said_at=said(2), created_at=said(n))
        for n, t in ((3, "Swam with the manatees."), (4, "Swam with the manatees and a dolphin."))
    )
    with store.write():
        store.add_raw([first, second], embedder.embed([first.text, second.text]))
        store.set_raw_status(first.id, REPLACED, f"replaced by {second.id}")
        store.set_raw_status(second.id, REPLACED, f"replaced by {first.id}; was {DONE}")

    found = findings(store)["note days"]
    assert not found.ok and found.examples == [second.id]

    report = check(store, repair=True)

    assert report.ok and report.repairs == ["made the latest version of 1 note day(s) current again"]
    statuses = {r.id: r.status for r in store.get_raw([first.id, second.id]).values()}
    assert statuses == {first.id: REPLACED, second.id: DONE}  # the status it had before


def test_broken_provenance_and_graph_are_reported_and_the_graph_repaired(store: Store, embedder: Any) -> None:
    lost = MemoryItem(id="m_lost", kind="fact", text="Walks to work", raw_ids=["r_gone"])
    store.add_items([lost], embedder.embed([lost.text]))
    store.add_nodes(
        [Node("n_half", "schema", "Walks everywhere", "health")], embedder.embed(["Walks everywhere"])
    )
    store.add_edges([Edge("evidence", "n_ghost", "m_lost")])

    found = findings(store)
    assert not found["provenance"].ok and found["provenance"].examples == ["m_lost"]
    assert not found["graph"].ok and "schemas/intentions without evidence" in found["graph"].detail

    report = check(store, repair=True)

    assert any(r.startswith("repaired the graph") for r in report.repairs)
    after = {f.name: f for f in report.findings}
    assert after["graph"].ok
    assert not after["provenance"].ok  # an input that is gone cannot be made up: reported only
    assert not report.ok


def test_forks_cycles_and_dangling_pointers_are_reported_not_guessed() -> None:
    pointers = {
        "a": (None, "b"),
        "b": ("a", None),
        "c": ("a", None),  # a second newer state of a: a fork
        "x": ("y", "y"),
        "y": ("x", "x"),  # a cycle
        "d": ("gone", None),  # supersedes an item that does not exist
    }
    problems = chain_problems(pointers)
    assert problems["forks (two newer states)"] == ["a"]
    assert problems["cycles"] == ["x", "y"]
    assert problems["pointers to missing items"] == ["d"]
    assert problems["asymmetric pointers"] == ["c"]
    assert "missing back-pointers" not in problems


def test_a_store_of_a_newer_format_is_refused_and_left_untouched(cli, store: Store) -> None:
    with store.write():
        store.set_meta("format", "99")

    result = cli("add", "--no-extract", "hello")

    assert result.exit_code == 4
    assert "format 99, written by a newer dcpm" in result.stderr
    assert "upgrade dcpm" in result.stderr
    assert store.count(S.RAW) == 0


def test_a_failing_full_text_search_is_said_on_stderr_and_repaired(cli) -> None:
    assert cli("add", "--no-extract", "I drink green tea every morning").exit_code == 0
    store = cli.open_store()
    assert cli("recall", "green tea").stderr == ""
    index_files = [p for p in Path(store.uri, "raw_inputs.lance", "_indices").rglob("*") if p.is_file()]
    assert index_files
    for p in index_files:
        p.unlink()  # a damaged full-text index

    result = cli("recall", "green tea", "--json")

    assert result.exit_code == 0
    assert json.loads(result.stdout)["hits"][0]["text"] == "I drink green tea every morning"  # by vector
    assert "warning: full-text search of raw failed" in result.stderr
    assert "vector search only" in result.stderr
    assert cli("check").exit_code == 6
    repaired = cli("check", "--repair")
    assert repaired.exit_code == 0, repaired.stdout
    assert "rebuilt the full-text index of raw" in repaired.stdout
    assert "warning" not in cli("recall", "green tea").stderr


def test_the_next_write_rebuilds_passages_a_crash_left_out(cli, store: Store, embedder: Any) -> None:
    raws = [
        RawInput(text=f"turn {n} about the trip to Porto", session="trip", said_at=said(n + 1))
        for n in range(3)
    ]
    with pytest.raises(Cut), store.write(unfinished="raw", sessions=["trip"]):
        store.table(S.RAW).add(store._table_of(raws, S.RAW, embedder.embed([r.text for r in raws])))
        raise Cut("killed before the passages were written")
    assert store.inputs_without_passage() == {"trip": [r.id for r in raws]}

    result = cli("add", "--no-extract", "Unrelated note")

    assert result.exit_code == 0
    assert "finished 1 interrupted write(s)" in result.stderr and "1 passage(s) rebuilt" in result.stderr
    assert store.inputs_without_passage() == {}
    assert check(store).ok
