"""Running a dream: interruptions and resume, budgets, the dry run, the lock, the run log."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from support.dream_fixtures import (
    LATE,
    RUNNER,
    SLEEPLESS,
    add_facts,
    dream_once,
    fact_items,
    ids_of,
    night_one,
)

from dcpm_cli.config import Settings
from dcpm_cli.dream.integrity import check_graph
from dcpm_cli.dream.run import DreamOptions
from dcpm_cli.errors import LLMUnavailable, LockBusy
from dcpm_cli.llm import ScriptedLLM
from dcpm_cli.models import DreamRun, Edge, Node, RawInput
from dcpm_cli.write.pipeline import Writer


def texts(store) -> list[str]:
    return sorted(n.text for n in store.all_nodes())


def test_an_llm_lost_between_clusters_keeps_the_work_and_the_next_run_resumes(store, embedder) -> None:
    items = add_facts(store, embedder, fact_items())
    first, second, third = night_one()
    llm = ScriptedLLM().enqueue(first, LLMUnavailable("cannot reach the Ollama server"))

    out = dream_once(store, embedder, llm)

    assert out.run.status == "llm_unavailable" and out.run.clusters_done == 1
    assert "cannot reach" in store.dream_runs(1)[0].note
    assert check_graph(store).ok
    assert store.evidenced_fact_ids() == set(ids_of(items, "deadlines"))

    llm = ScriptedLLM().enqueue(second, third)
    out = dream_once(store, embedder, llm)

    assert out.run.status == "ok" and out.run.clusters == 2  # the first cluster is not redone
    assert len(llm.calls) == 2
    assert LATE in texts(store) and SLEEPLESS in texts(store) and RUNNER in texts(store)
    assert len(store.all_nodes()) == 4 and check_graph(store).ok


def test_max_calls_stops_the_run_and_the_next_run_goes_on(store, embedder) -> None:
    add_facts(store, embedder, fact_items())
    first, second, third = night_one()

    out = dream_once(store, embedder, ScriptedLLM().enqueue(first, second), max_calls=1)

    assert out.run.status == "budget" and out.run.llm_calls == 1 and out.run.clusters_done == 1
    assert "--max-calls 1" in out.run.note and check_graph(store).ok
    out = dream_once(store, embedder, ScriptedLLM().enqueue(second, third))
    assert out.run.status == "ok" and len(store.all_nodes()) == 4


def test_a_kill_inside_a_cluster_is_repaired_and_consolidated_again(store, embedder) -> None:
    items = add_facts(store, embedder, fact_items())
    # What a kill between the two commits of a cluster leaves: its node, no evidence edges.
    orphan = Node(id="n_orphan", kind="schema", text=LATE, domain="work")
    store.add_nodes([orphan], embedder.embed([orphan.text]))
    # And an edge that points nowhere (a kill cannot make one; a bad hand edit can).
    store.add_edges([Edge("evidence", "n_gone", items[0].id)])
    check = check_graph(store)
    assert check.orphan_nodes == ["n_orphan"] and len(check.dangling_edges) == 1

    out = dream_once(store, embedder, ScriptedLLM().enqueue(*night_one()))

    assert any("repaired the graph" in n for n in out.notes)
    assert check_graph(store).ok
    assert store.get_nodes(["n_orphan"]) == {}
    assert store.evidenced_fact_ids() >= set(ids_of(items, "deadlines"))  # induced again


def test_a_reply_that_never_validates_fails_its_cluster_only(store, embedder) -> None:
    add_facts(store, embedder, fact_items())
    _, second, third = night_one()
    llm = ScriptedLLM().enqueue("not json", '{"actions": "none"}', "{}" + "x", second, third)

    out = dream_once(store, embedder, llm)

    assert out.run.status == "ok" and out.run.clusters_failed == 1 and out.run.clusters_done == 2
    assert "cluster 1: no valid reply" in out.run.rejections[0]
    assert out.run.llm_calls == 5  # three attempts for the first cluster
    assert out.run.declined == []  # a failure is retried next night, not remembered as declined


def test_a_dry_run_makes_no_calls_and_writes_nothing(store, embedder) -> None:
    add_facts(store, embedder, fact_items())
    llm = ScriptedLLM()

    out = dream_once(store, embedder, llm, dry_run=True, core_schemas=True)

    assert llm.calls == [] and out.run.status == "dry_run"
    assert len(out.triage.clusters) == 3 and len(out.prompts) == 3
    assert out.planned[0].startswith("induction: cluster 1 (5 facts")
    assert any(p.startswith("abstraction:") for p in out.planned)
    assert store.dream_runs() == [] and store.all_nodes() == [] and store.edges() == []


def test_two_dreams_never_run_at_once(store, embedder) -> None:
    add_facts(store, embedder, fact_items())
    llm = ScriptedLLM().enqueue(*night_one())
    with store.dream_lock():
        with pytest.raises(LockBusy):
            dream_once(store, embedder, llm)
        assert llm.calls == []
    assert dream_once(store, embedder, llm).run.status == "ok"


def test_adding_during_a_dream_is_not_blocked(store, embedder, settings: Settings) -> None:
    writer = Writer(store, embedder, None, settings)
    with store.dream_lock():  # as a running dream holds it
        report = writer.add([RawInput(text="Went to bed at 1am again.")], extract=False)
    assert report.stored == 1


def test_lite_mode_is_system_one_only(store, embedder) -> None:
    add_facts(store, embedder, fact_items())
    llm = ScriptedLLM()
    out = dream_once(store, embedder, llm, mode="lite")
    assert out.run.status == "lite" and llm.calls == [] and store.all_nodes() == []


def test_the_run_log_counts_calls_tokens_and_actions(store, embedder) -> None:
    add_facts(store, embedder, fact_items())
    llm = ScriptedLLM().enqueue(*night_one())
    out = dream_once(store, embedder, llm)

    (run,) = store.dream_runs()
    assert run.id == out.run.id and run.status == "ok" and run.ended_at is not None
    assert (run.facts, run.clusters, run.clusters_done) == (16, 3, 3)
    assert (run.nodes_created, run.actions_applied, run.actions_rejected) == (4, 4, 0)
    assert run.llm_calls == 3 and run.prompt_tokens > 0 and run.completion_tokens > 0
    assert run.evidence_added == 5 + 1 + 4 + 3
    summary = store.last_dream_runs(1)[0]
    assert summary["status"] == "ok" and summary["clusters"] == "3/3" and summary["llm_calls"] == 3


def test_a_run_left_running_without_the_lock_was_interrupted(store) -> None:
    store.save_dream_run(DreamRun(id="d_killed", started_at=datetime(2026, 1, 1, tzinfo=UTC)))
    assert [r["status"] for r in store.last_dream_runs()] == ["interrupted"]
    with store.dream_lock():
        assert [r["status"] for r in store.last_dream_runs()] == ["running"]


def test_options_resolve_from_flags_env_and_config(dcpm_home, monkeypatch) -> None:
    assert DreamOptions.resolve().core_schemas is False  # off by default
    monkeypatch.setenv("DCPM_CORE_SCHEMAS", "yes")
    monkeypatch.setenv("DCPM_DREAM_MAX_CALLS", "7")
    assert DreamOptions.resolve().core_schemas is True
    assert DreamOptions.resolve(core_schemas=False).core_schemas is False  # a flag wins
    assert DreamOptions.resolve().max_calls == 7
    monkeypatch.delenv("DCPM_CORE_SCHEMAS")
    dcpm_home.mkdir(parents=True, exist_ok=True)
    (dcpm_home / "config.toml").write_text("[dream]\ncore_schemas = true\nmode = 'no-collision'\n")
    opts = DreamOptions.resolve()
    assert opts.core_schemas and opts.mode == "no-collision" and not opts.sweeps


def test_inputs_pending_extraction_are_extracted_and_consolidated_the_same_night(
    store, embedder, settings: Settings
) -> None:
    from support.replies import decide, decisions, extraction, item

    add_facts(store, embedder, fact_items())
    writer = Writer(store, embedder, None, settings)
    said = "Up until 3am again finishing the pitch deck before the deadline, ugh"
    writer.add([RawInput(text=said, said_at=datetime(2026, 3, 14, 23, tzinfo=UTC))], extract=False)
    fact = "Worked until 3am to finish the pitch deck before the deadline"
    llm = ScriptedLLM().enqueue(
        extraction(item(fact, topic="work", when="2026-03-14")), decisions(decide("ADD")), *night_one()
    )
    writer.llm = llm

    out = dream_once(store, embedder, llm, writer=writer)

    assert out.run.status == "ok" and out.run.extracted == 1 and out.run.llm_calls == 5
    (late,) = [n for n in store.all_nodes() if n.text == LATE]
    assert fact in [i.text for i in store.get_items(store.evidence_of(late.id)).values()]


def test_max_seconds_zero_makes_no_call(store, embedder) -> None:
    add_facts(store, embedder, fact_items())
    llm = ScriptedLLM().enqueue(*night_one())
    out = dream_once(store, embedder, llm, max_seconds=0)
    assert out.run.status == "budget" and llm.calls == [] and "--max-seconds 0" in out.run.note
