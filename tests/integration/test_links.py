"""`dcpm link` / `dcpm unlink` (#18): the user mends an arc the model got wrong — a change kept
beside the belief it ended, or two beliefs that both hold chained into one — and a dream never
undoes what the user said."""

from __future__ import annotations

import dataclasses
import json
import shutil
from datetime import UTC, datetime

from support.dream_fixtures import dream_once
from support.replies import extraction, item, item_id, judge_calls, judged, replaced

from dcpm_cli.llm import ScriptedLLM
from dcpm_cli.mcp.server import AgentMemory
from dcpm_cli.memory import Memory
from dcpm_cli.models import JUDGED, RawInput, utcnow
from dcpm_cli.ops.check import check
from dcpm_cli.store import Store
from dcpm_cli.write.pipeline import Writer


def say(writer: Writer, llm: ScriptedLLM, day: str, text: str, fact: str, *, linked: bool = False) -> str:
    """Add `text` said on `day`, extracted as `fact`; the model judges every pair it is asked
    about unrelated (it missed the change) unless `linked` (it says replaces)."""
    raw = RawInput(text=text, said_at=datetime.fromisoformat(day).replace(tzinfo=UTC))
    llm.enqueue(extraction(item(fact, attribute="exercise")))
    llm.enqueue(*(replaced() if linked else [judged("unrelated")] * 3))
    writer.add([raw])
    llm.replies.clear()  # judgements not asked for (no candidate near enough)
    return item_id(raw)


def two_beliefs(writer: Writer, llm: ScriptedLLM) -> tuple[str, str]:
    run = say(
        writer,
        llm,
        "2026-03-02",
        "I run 5k along the canal three mornings a week.",
        "Runs 5k along the canal",
    )
    swim = say(
        writer, llm, "2026-06-10", "My knee gave out, so I swim at the leisure centre now instead.",
        "Swims at the leisure centre",
    )  # fmt: skip
    return run, swim


def current_texts(store: Store) -> set[str]:
    return {i.text for i in store.all_items("superseded_by IS NULL")}


def test_the_user_links_a_change_the_model_missed_and_recall_answers_with_the_new_belief(
    writer, llm, store, cli
) -> None:
    run, swim = two_beliefs(writer, llm)
    assert current_texts(store) == {"Runs 5k along the canal", "Swims at the leisure centre"}

    done = cli("link", run, swim)

    assert done.exit_code == 0, done.stderr
    assert "linked: Runs 5k along the canal → Swims at the leisure centre" in done.stderr
    assert "Swims at the leisure centre" in done.stdout and "(current)" in done.stdout
    store = cli.open_store()
    assert [i.id for i in store.chain(run)] == [run, swim]
    assert current_texts(store) == {"Swims at the leisure centre"}
    hits = json.loads(cli("recall", "what do I do for exercise?", "--json").stdout)["hits"]
    assert hits[0]["id"] == swim and run not in {h["id"] for h in hits}
    assert check(store).ok
    ops = [(e.op, e.detail) for e in store.events_for(swim) if e.target_id == run]
    assert ("SUPERSEDE", "linked by the user") in ops and (JUDGED, "replaces: by the user") in ops

    again = cli("link", run, swim, "--json")  # already so: said, nothing changes
    assert again.exit_code == 0 and json.loads(again.stdout)["changed"] is False


def test_a_link_backwards_in_time_is_refused_with_the_order_that_works(writer, llm, store, cli) -> None:
    run, swim = two_beliefs(writer, llm)

    refused = cli("link", swim, run)

    assert refused.exit_code == 2
    assert f"dcpm link {run} {swim}" in refused.stderr
    assert all(i.is_current for i in cli.open_store().all_items())


def test_a_link_joins_whole_arcs_end_to_start(writer, llm, store, cli) -> None:
    run = say(writer, llm, "2026-01-05", "I run 5k along the canal.", "Runs 5k along the canal")
    hills = say(
        writer,
        llm,
        "2026-03-01",
        "I switched to hill runs on Sundays now.",
        "Runs hills on Sundays",
        linked=True,
    )
    swim = say(writer, llm, "2026-06-10", "I swim at the leisure centre.", "Swims at the leisure centre")
    assert [i.id for i in store.chain(run)] == [run, hills]

    # The user names the first state of the earlier arc: the later one goes after its head.
    done = cli("link", run, swim)
    assert done.exit_code == 0
    assert f"joined end to start: {swim}, the first of its arc, now replaces {hills}" in done.stderr

    store = cli.open_store()
    assert [i.id for i in store.chain(swim)] == [run, hills, swim]
    assert store.get_items([swim])[swim].supersedes == hills
    assert check(store).ok


def test_unlink_makes_the_belief_before_current_again_and_no_dream_links_them_again(
    writer, llm, store, embedder, cli
) -> None:
    # A link an older dcpm made without recording a judgement (the writer never compared the
    # two: the bus was said first, the cycling imported later from an old journal).
    bus = say(
        writer, llm, "2026-04-01", "I take the bus to work in winter.", "Takes the bus to work in winter"
    )
    cycle = say(writer, llm, "2026-02-01", "I cycle to work in summer.", "Cycles to work in summer")
    with store.write():
        store.set_chain_links({cycle: (None, bus), bus: (cycle, None)})
    assert store.head(cycle).id == bus and frozenset((cycle, bus)) not in store.judged_pairs()

    done = cli("unlink", bus, "--json")

    assert done.exit_code == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["unlinked"] == {"earlier": cycle, "later": bus} and out["changed"] is True
    assert [a["current"] for a in out["arcs"]] == [cycle, bus]
    store = cli.open_store()
    assert current_texts(store) == {"Takes the bus to work in winter", "Cycles to work in summer"}
    assert check(store).ok
    assert [e.op for e in store.events_for(bus) if e.target_id == cycle] == ["UNLINK", JUDGED]
    again = cli("unlink", bus, "--json")  # a script run twice: so already, said, nothing changes
    assert again.exit_code == 0 and json.loads(again.stdout)["changed"] is False
    assert json.loads(again.stdout)["unlinked"] == {"earlier": cycle, "later": bus}

    # Both current and near, the pair is what a nightly re-link asks about; the user judged it.
    a, b = embedder.embed(["Takes the bus to work in winter", "Cycles to work in summer"])
    assert float(a @ b) >= writer.settings.judge_min_similarity
    llm.enqueue(*replaced())
    calls = len(llm.calls)
    dream_once(store, embedder, llm, writer=Writer(store, embedder, llm, writer.settings), relink=True)
    assert judge_calls(llm.calls[calls:]) == []
    assert current_texts(store) == {"Takes the bus to work in winter", "Cycles to work in summer"}


def test_what_cannot_be_linked_is_said_plainly_and_nothing_changes(writer, llm, store, cli, tmp_path) -> None:
    run, swim = two_beliefs(writer, llm)
    raw_id = store.all_items()[0].raw_ids[0]

    cases = {
        ("link", run, run): "cannot replace itself",
        ("link", "m_000000000000", swim): "no item with id 'm_000000000000'",
        ("link", raw_id, swim): "is a raw input, not a belief",
        ("unlink", swim): "replaces nothing",
    }
    for args, message in cases.items():
        result = cli(*args)
        assert result.exit_code == 2 and message in result.stderr, (args, result.stderr)
    assert all(i.is_current for i in cli.open_store().all_items())

    nowhere = cli("link", run, swim, "--json", DCPM_STORE=str(tmp_path / "no-store"))
    assert nowhere.exit_code == 2 and f"no item with id {run!r}" in nowhere.stderr
    assert not (tmp_path / "no-store").exists()

    cli("link", run, swim)
    told = cli("unlink", run)
    assert told.exit_code == 2 and f"dcpm unlink {swim}" in told.stderr  # the link to cut is the later's


def test_a_link_across_people_is_made_as_asked_and_said(writer, llm, store, cli) -> None:
    raw = RawInput(text="My sister runs marathons.", said_at=datetime(2026, 2, 1, tzinfo=UTC))
    llm.enqueue(
        extraction(item("Runs marathons", subject="sister", attribute="exercise")), judged("unrelated")
    )
    writer.add([raw])
    llm.replies.clear()
    swim = say(writer, llm, "2026-06-10", "I swim at the leisure centre now.", "Swims at the leisure centre")

    done = cli("link", item_id(raw), swim, "--json")

    assert done.exit_code == 0 and json.loads(done.stdout)["changed"] is True
    assert json.loads(done.stdout)["notes"] == [
        "linked as asked, though the model would not: different subject ('user' vs 'sister')"
    ]


def test_an_agent_links_and_unlinks_on_the_users_word(writer, llm, store, settings, embedder) -> None:
    run, swim = two_beliefs(writer, llm)
    agent = AgentMemory(Memory(settings, embedder=embedder), llm=None)

    linked = agent.link(run, swim)
    assert linked["linked"] == {"earlier": run, "later": swim}
    assert [s["id"] for s in linked["arcs"][0]["states"]] == [run, swim]

    unlinked = agent.unlink(swim)
    assert unlinked["changed"] is True and [a["current"] for a in unlinked["arcs"]] == [run, swim]


def test_an_export_carries_the_users_links_and_cuts_to_another_copy(
    writer, llm, store, settings, cli, tmp_path
) -> None:
    run, swim = two_beliefs(writer, llm)
    laptop = str(tmp_path / "laptop")
    shutil.copytree(settings.store, laptop)  # the same memory on a second machine

    def carried(*args: str) -> set[str]:
        """Do `args` on the laptop, export it, import that here; the beliefs current here."""
        assert cli(*args, DCPM_STORE=laptop).exit_code == 0
        out = tmp_path / f"{args[0]}.jsonl"
        assert cli("export", "--out", str(out), DCPM_STORE=laptop).exit_code == 0
        done = cli("import", str(out))
        assert done.exit_code == 0, done.stderr
        here = cli.open_store()
        assert check(here).ok
        return current_texts(here)

    assert carried("link", run, swim) == {"Swims at the leisure centre"}
    assert carried("unlink", swim) == {"Runs 5k along the canal", "Swims at the leisure centre"}
    # The export from before the cut, imported again: the later cut stands.
    assert cli("import", str(tmp_path / "link.jsonl")).exit_code == 0
    assert current_texts(cli.open_store()) == {"Runs 5k along the canal", "Swims at the leisure centre"}
    assert check(cli.open_store()).ok


def test_an_import_settles_arcs_changed_on_both_copies(writer, llm, store, settings, cli, tmp_path) -> None:
    run, swim = two_beliefs(writer, llm)
    cyc = say(writer, llm, "2026-08-01", "I cycle everywhere now.", "Cycles everywhere")
    assert cli("link", run, swim).exit_code == 0
    laptop = str(tmp_path / "laptop")
    shutil.copytree(settings.store, laptop)
    out = tmp_path / "laptop.jsonl"

    # There: the user cut swimming from running, and ran on to cycling instead.
    for args in (("unlink", swim), ("link", run, cyc)):
        assert cli(*args, DCPM_STORE=laptop).exit_code == 0
    assert cli("export", "--out", str(out), DCPM_STORE=laptop).exit_code == 0
    done = cli("import", str(out), "--json")

    assert done.exit_code == 0, done.stderr
    here = cli.open_store()
    assert [i.id for i in here.chain(run)] == [run, cyc] and here.get_items([swim])[swim].supersedes is None
    assert check(here).ok


def test_where_two_copies_linked_one_belief_on_differently_this_copy_s_link_stands(
    writer, llm, store, settings, cli, tmp_path
) -> None:
    run, swim = two_beliefs(writer, llm)
    cyc = say(writer, llm, "2026-08-01", "I cycle everywhere now.", "Cycles everywhere")
    laptop = str(tmp_path / "laptop")
    shutil.copytree(settings.store, laptop)
    assert cli("link", run, cyc, DCPM_STORE=laptop).exit_code == 0
    assert cli("link", run, swim).exit_code == 0
    out = tmp_path / "laptop.jsonl"
    assert cli("export", "--out", str(out), DCPM_STORE=laptop).exit_code == 0

    done = cli("import", str(out))

    assert done.exit_code == 0, done.stderr
    here = cli.open_store()
    assert [i.id for i in here.chain(run)] == [run, swim] and check(here).ok


def test_a_belief_reworded_on_the_other_copy_keeps_the_arc_it_has_here(
    writer, llm, store, settings, embedder, cli, tmp_path
) -> None:
    run, swim = two_beliefs(writer, llm)
    laptop = str(tmp_path / "laptop")
    shutil.copytree(settings.store, laptop)
    assert cli("link", run, swim).exit_code == 0
    there = Store(laptop, embedder, create=False)  # an UPDATE there rewrote the belief
    reworded = dataclasses.replace(
        there.get_items([swim])[swim], text="Swims at the leisure centre, mornings", updated_at=utcnow()
    )
    with there.write():
        there.replace_items([reworded], embedder.embed([reworded.text]))
    out = tmp_path / "laptop.jsonl"
    assert cli("export", "--out", str(out), DCPM_STORE=laptop).exit_code == 0

    assert cli("import", str(out)).exit_code == 0

    here = cli.open_store()
    assert [i.text for i in here.chain(run)] == [
        "Runs 5k along the canal",
        "Swims at the leisure centre, mornings",
    ]
    assert check(here).ok
