"""Group commit (store/staging.py): a warm writer's derived writes committed together give the
same memory as one input at a time, are seen by the writer itself before the flush, are
replayed by any other writer that takes the lock, and survive the writer's death."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from support.replies import extraction, item, item_id, judged

from dcpm_cli.config import Settings
from dcpm_cli.embed import Embedder
from dcpm_cli.llm import ScriptedLLM
from dcpm_cli.models import DONE, PENDING, RawInput
from dcpm_cli.store import Store
from dcpm_cli.write.pipeline import Writer

SPORT = {"topic": "fitness", "attribute": "exercise"}


def said(day: int) -> datetime:
    return datetime(2026, 5, day, 8, tzinfo=UTC)


# The diary has an UPDATE (the fifth input), which comes from the four-way judgement.
pytestmark = pytest.mark.four_way


def diary() -> list[tuple[RawInput, Callable[[ScriptedLLM], None]]]:
    """Inputs, each with the replies its extraction needs. The second supersedes the first's
    item, the third repeats the second's, the fourth adds beside them, the fifth updates the
    fourth's: in a group, every one of them meets a staged item."""
    r1 = RawInput(text="I run 5k every morning.", session="diary", said_at=said(1))
    r2 = RawInput(text="I gave up running and swim instead.", session="diary", said_at=said(2))
    r3 = RawInput(text="Swimming is my sport now.", session="diary", said_at=said(3))
    r4 = RawInput(text="I drink green tea at work.", session="diary", said_at=said(4))
    r5 = RawInput(text="The green tea is sencha.", session="diary", said_at=said(5))
    tea = {"topic": "food", "attribute": "tea"}
    return [
        (r1, lambda llm: llm.enqueue(extraction(item("Runs 5k every morning", **SPORT)))),
        (
            r2,
            lambda llm: llm.enqueue(
                extraction(item("Swims instead of running", **SPORT)),
                judged("replaces"),
            ),
        ),
        (r3, lambda llm: llm.enqueue(extraction(item("Swims instead of running", **SPORT)))),
        (r4, lambda llm: llm.enqueue(extraction(item("Drinks green tea at work", **tea)))),
        (
            r5,
            lambda llm: llm.enqueue(
                extraction(item("The green tea is sencha", **tea)),
                judged("adds_detail"),
            ),
        ),
    ]


def memory(store: Store) -> dict[str, Any]:
    """What a user can see of a store: items with their chains, statuses, events, passages."""
    items = sorted((i.id, i.text, i.supersedes, i.superseded_by) for i in store.all_items())
    statuses = sorted((r["id"], r["status"]) for r in store._rows("raw_inputs", None, ["id", "status"]))
    events = sorted((r["op"], r["item_id"], r["target_id"]) for r in store._rows("events", None))
    passages = sorted(r["id"] for r in store._rows("passages", None, ["id"]))
    return {"items": items, "statuses": statuses, "events": events, "passages": passages}


def run(path: Path, embedder: Embedder, settings: Settings, *, grouped: bool) -> Store:
    store = Store(str(path), embedder)
    llm = ScriptedLLM()
    writer = Writer(store, embedder, llm, settings)
    with writer.group() if grouped else contextlib.nullcontext():
        for raw, replies in diary():
            replies(llm)
            report = writer.add([raw])
            assert report.extracted == 1 and not llm.replies, report
    return store


def test_a_group_gives_the_same_memory_as_one_input_at_a_time(
    tmp_path: Path, embedder: Embedder, settings: Settings
) -> None:
    one_by_one = run(tmp_path / "a", embedder, settings, grouped=False)
    versions = {t: one_by_one.table(t).version for t in ("items", "events", "passages")}
    grouped = run(tmp_path / "b", embedder, settings, grouped=True)

    assert memory(grouped) == memory(one_by_one)
    seen = memory(grouped)
    assert len(seen["items"]) == 3  # runs → swims (a chain), green tea (updated in place)
    assert ("SUPERSEDE", item_id(diary()[1][0]), item_id(diary()[0][0])) in seen["events"]
    assert {s for _, s in seen["statuses"]} == {DONE}
    # The point of it: one commit per table for the whole group, not several per input.
    for table, before in versions.items():
        assert grouped.table(table).version < before, table


def test_the_writer_sees_its_staged_writes_and_other_processes_see_them_at_the_flush(
    store: Store, embedder: Embedder, settings: Settings, llm: ScriptedLLM
) -> None:
    writer = Writer(store, embedder, llm, settings)
    (r1, replies1), (r2, replies2) = diary()[:2]
    elsewhere = Store(store.uri, embedder)  # another process's view

    with writer.group():
        replies1(llm)
        writer.add([r1])
        assert [i.text for i in store.all_items()] == []  # the table: nothing yet
        assert elsewhere.get_raw([r1.id])[r1.id].status == PENDING
        # ... but this writer reconciles the next input against the staged item.
        replies2(llm)
        writer.add([r2])
        assert store.get_raw([r1.id, r2.id])[r2.id].status == DONE
        assert [i.id for i in store.chain(item_id(r1))] == [item_id(r1), item_id(r2)]

    assert [i.id for i in elsewhere.chain(item_id(r1))] == [item_id(r1), item_id(r2)]
    assert not store.staged_logs()


def test_another_writer_replays_the_staged_log_before_it_writes(
    store: Store, embedder: Embedder, settings: Settings, llm: ScriptedLLM
) -> None:
    writer = Writer(store, embedder, llm, settings)
    (r1, replies1), (r2, replies2) = diary()[:2]
    with writer.group():
        replies1(llm)
        writer.add([r1])
        assert store.staged_logs()

        other = Store(store.uri, embedder)
        with other.write():  # any writer: a `dcpm forget`, a dream, another `dcpm add`
            assert [i.id for i in other.all_items()] == [item_id(r1)]
        assert not store.staged_logs()

        # The first writer goes on from what the tables now hold: no row twice, one chain.
        replies2(llm)
        writer.add([r2])

    ids = [i.id for i in store.all_items()]
    assert sorted(ids) == sorted({item_id(r1), item_id(r2)}) and len(ids) == 2
    assert store.get_items([item_id(r1)])[item_id(r1)].superseded_by == item_id(r2)
    assert memory(store)["statuses"] == sorted([(r1.id, DONE), (r2.id, DONE)])


def test_a_writer_that_dies_in_a_group_loses_nothing(
    store: Store, embedder: Embedder, settings: Settings, llm: ScriptedLLM
) -> None:
    writer = Writer(store, embedder, llm, settings)
    inputs = diary()
    group = writer.group()
    group.__enter__()  # never left: what a kill -9 mid-group leaves on disk
    for raw, replies in inputs[:3]:
        replies(llm)
        writer.add([raw])
    (log,) = store.staged_logs()
    with log.open("a", encoding="utf-8") as f:
        f.write('{"v": 1, "ops": [["set_raw_status", "r_cut')  # the kill cut a line short

    # The next command, in a new process: it replays the log when it takes the lock.
    later = Store(store.uri, embedder)
    raw, replies = inputs[3]
    replies(llm)
    Writer(later, embedder, llm, settings).add([raw])

    seen = memory(later)
    texts = {text for _, text, _, _ in seen["items"]}
    assert texts == {"Runs 5k every morning", "Swims instead of running", "Drinks green tea at work"}
    assert {s for _, s in seen["statuses"]} == {DONE}
    assert seen["passages"]  # the session's passages, rebuilt by the replay
    assert not later.staged_logs()


def test_a_long_run_flushes_as_it_goes(
    store: Store, embedder: Embedder, settings: Settings, llm: ScriptedLLM, monkeypatch: Any
) -> None:
    from dcpm_cli.store import staging

    monkeypatch.setattr(staging, "GROUP_INPUTS", 2)
    writer = Writer(store, embedder, llm, settings)
    elsewhere = Store(store.uri, embedder)
    with writer.group():
        for raw, replies in diary()[:3]:
            replies(llm)
            writer.add([raw])
        # Two inputs made a flush: another process sees their chain before the group ends.
        assert len(elsewhere.chain(item_id(diary()[0][0]))) == 2
        assert elsewhere.get_raw([diary()[2][0].id])[diary()[2][0].id].status == PENDING


def test_upkeep_runs_at_the_flushes_of_a_long_group(
    store: Store, embedder: Embedder, settings: Settings, llm: ScriptedLLM, monkeypatch: Any
) -> None:
    from dcpm_cli.store import staging, upkeep

    monkeypatch.setattr(staging, "GROUP_INPUTS", 2)
    monkeypatch.setattr(upkeep, "MIN_FRAGMENTS", 4)
    writer = Writer(store, embedder, llm, settings)

    def fragments(table: str) -> int:
        return int(store.table(table).stats()["fragment_stats"]["num_fragments"])

    most = 0
    with writer.group():
        for n in range(16):  # each flush appends a fragment to items and to events
            llm.enqueue(extraction(item(f"Friend {n} plays chess", subject=f"friend {n}")))
            writer.add([RawInput(text=f"My friend {n} plays chess.", said_at=said(1 + n))])
            most = max(most, fragments("items"), fragments("events"))
    assert len(store.all_items()) == 16
    assert most <= 6  # compacted along the way (8 flushes), not after the group


def test_a_log_this_dcpm_cannot_read_does_not_stop_the_store(
    store: Store, embedder: Embedder, settings: Settings, llm: ScriptedLLM
) -> None:
    (raw, replies), *_ = diary()
    folder = Path(store.uri) / ".staged"
    folder.mkdir()
    (folder / "elsewhere.jsonl").write_text('{"v": 1, "ops": [["set_raw_status", "r_x"]]}\n')
    replies(llm)
    report = Writer(store, embedder, llm, settings).add([raw])
    assert report.extracted == 1 and not store.staged_logs()


def test_pending_counts_and_lists_see_the_staged_statuses(
    store: Store, embedder: Embedder, settings: Settings, llm: ScriptedLLM
) -> None:
    writer = Writer(store, embedder, llm, settings)
    inputs = diary()[:2]
    with writer.group():
        writer.add([raw for raw, _ in inputs], extract=False)
        for _, replies in inputs:
            replies(llm)
        assert writer.process_pending().extracted == 2
        # Still staged (the group is open), yet nothing is listed or counted as pending.
        assert Store(store.uri, embedder).count_by_kind("raw").get(PENDING) == 2
        assert store.raw_by_status([PENDING]) == []
        assert [r.id for r in store.raw_by_status([DONE])] == [r.id for r, _ in inputs]
        assert store.count_by_kind("raw").get(PENDING, 0) == 0
