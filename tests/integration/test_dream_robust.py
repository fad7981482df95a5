"""A dream never hides work or overruns its budget: over-sized clusters keep their facts, only
an explicit "nothing to do" declines a cluster, a dream whose replies were all invalid says
so (exit 3), and every LLM call of a dream (the catch-up extraction too) counts (#8)."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta

from support.dream_fixtures import RUNNER, add_facts, create, dream_once, fact_items, night_one, reply
from support.replies import decide, decisions, extraction, item

from dcpm_cli.config import Settings
from dcpm_cli.dream.integrity import check_graph
from dcpm_cli.llm import ScriptedLLM
from dcpm_cli.models import PENDING, MemoryItem, RawInput, short_hash
from dcpm_cli.store import Store
from dcpm_cli.write.pipeline import Writer

# One theme, told over a year: neighbours are close, but no fact has two others within the
# tight second radius, so eps₂ finds no sub-cluster at all.
MARATHON = [
    "Started running twice a week to get fit",
    "Ran 3 km without stopping for the first time",
    "Bought proper running shoes after sore knees",
    "Ran 5 km in the park on Sunday morning",
    "Joined a running club that meets on Tuesdays",
    "Ran 8 km with the running club",
    "Signed up for a 10 km race in April",
    "Ran the 10 km race in 58 minutes",
    "Started a half marathon training plan",
    "Ran 15 km on the long Sunday run",
    "Hurt her calf on a long run and rested a week",
    "Back to running after the calf injury",
    "Ran the half marathon in 2 hours 5 minutes",
    "Signed up for her first full marathon in October",
    "Ran 30 km on the longest training run so far",
    "Finished the marathon in 4 hours 20 minutes",
]
ARC = {"eps1": 0.6, "eps2": 0.2, "max_cluster": 5}


def arc_items() -> list[MemoryItem]:
    start = datetime(2025, 1, 5, 12, tzinfo=UTC)
    return [
        MemoryItem(
            id="m_" + short_hash("arc", text),
            kind="fact",
            text=text,
            topic="fitness",
            event_at=start + timedelta(days=21 * i),
            created_at=start,
            updated_at=start,
        )
        for i, text in enumerate(MARATHON)
    ]


def test_a_long_single_theme_arc_reaches_phase_two_whole(store, embedder) -> None:
    from dcpm_cli.dream import cluster

    items = add_facts(store, embedder, arc_items())
    vectors = embedder.embed(MARATHON)
    assert (cluster.dbscan(vectors, ARC["eps1"], 3) == 0).all()  # one cluster of 16 at eps₁
    assert (cluster.dbscan(vectors, ARC["eps2"], 3) == -1).all()  # which eps₂ cannot split

    plan = dream_once(store, embedder, None, dry_run=True, **ARC)
    clustered = [f.id for c in plan.triage.clusters for f in c.facts]
    assert sorted(clustered) == sorted(i.id for i in items) and plan.triage.noise == 0
    assert all(3 <= len(c.facts) <= 5 for c in plan.triage.clusters)

    n = len(plan.triage.clusters)
    llm = ScriptedLLM().enqueue(*[reply(create("schema", RUNNER, "fitness"))] * n)
    out = dream_once(store, embedder, llm, **ARC)

    assert out.run.status == "ok" and out.run.clusters_done == n and len(llm.calls) == n
    assert store.evidenced_fact_ids() == {i.id for i in items}  # every fact became evidence
    prompts = "\n".join(c["messages"][-1]["content"] for c in llm.calls)
    assert all(text in prompts for text in MARATHON)


def test_only_an_explicit_empty_reply_declines_a_cluster(store, embedder) -> None:
    add_facts(store, embedder, fact_items())
    first, second, _ = night_one()
    junk = reply(
        {"action": "add_evidence", "node": "n_nowhere", "facts": ["F1"]}
    )  # valid JSON, invalid action

    out = dream_once(store, embedder, ScriptedLLM().enqueue(first, second, junk))

    assert out.run.status == "ok" and out.run.clusters_done == 2 and out.run.clusters_failed == 1
    assert out.run.declined == [] and "no node 'n_nowhere'" in out.run.rejections[0]

    # Next night the invalid one is asked again, and this time the model says: nothing to do.
    llm = ScriptedLLM().enqueue(reply())
    out = dream_once(store, embedder, llm)
    assert (out.run.clusters, len(llm.calls), out.run.status) == (1, 1, "ok")
    assert len(out.run.declined) == 1

    # Declined: not asked again ...
    llm = ScriptedLLM()
    out = dream_once(store, embedder, llm)
    assert (out.run.clusters, out.run.clusters_skipped, llm.calls) == (0, 1, [])

    # ... until --retry-declined forgets it (once: the memory is cleared for later runs too).
    plan = dream_once(store, embedder, None, dry_run=True, retry_declined=True)
    assert len(plan.triage.clusters) == 1 and store.declined_clusters()  # a dry run writes nothing
    llm = ScriptedLLM().enqueue(reply(create("schema", RUNNER, "fitness")))
    out = dream_once(store, embedder, llm, retry_declined=True)
    assert out.run.clusters_done == 1 and any(
        "1 declined cluster will be asked again" in n for n in out.notes
    )
    assert store.declined_clusters() == set() and check_graph(store).ok


def test_a_dream_whose_replies_are_all_invalid_fails_and_exits_3(cli, llm, embedder) -> None:
    store = Store(Settings.resolve().store, embedder)
    add_facts(store, embedder, fact_items())
    junk = reply({"action": "add_edge", "src": "n_a", "dst": "n_b"})
    llm.enqueue(junk, "not json", "not json", "not json", junk)

    done = cli("dream")

    assert done.exit_code == 3, done.stdout + done.stderr
    assert done.stdout.startswith("dream failed in ")
    assert "every LLM reply was invalid (3 clusters got no valid reply)" in done.stderr
    (run,) = store.dream_runs()
    assert run.status == "failed" and run.clusters_failed == 3 and run.declined == []

    # One valid reply among failures is a partial success: ok, exit 0.
    llm.enqueue(junk, night_one()[1], junk)
    done = cli("dream")
    assert done.exit_code == 0 and done.stdout.startswith("dream ok in ")


def pending_inputs(writer: Writer, n: int) -> None:
    day = datetime(2026, 4, 1, 20, tzinfo=UTC)
    writer.add(
        [
            RawInput(
                text=f"Worked late again on day {i}, the deadline is close", said_at=day + timedelta(days=i)
            )
            for i in range(n)
        ],
        extract=False,
    )


def extraction_reply(i: int) -> dict:
    return {
        **extraction(item(f"Worked late on day {i} before a deadline", topic="work")),
        **decisions(decide("ADD")),
    }


def test_max_calls_bounds_the_catch_up_extraction(store, embedder, settings: Settings) -> None:
    add_facts(store, embedder, fact_items())
    writer = Writer(store, embedder, None, settings)
    pending_inputs(writer, 6)
    # Each reply serves as an extraction and as a reconciliation; invalid ones cost retries.
    llm = ScriptedLLM().enqueue(*[extraction_reply(i) for i in range(20)])
    writer.llm = llm

    out = dream_once(store, embedder, llm, writer=writer, max_calls=3)

    assert out.run.status == "budget" and "--max-calls 3" in out.run.note
    assert len(llm.calls) == 3 and out.run.llm_calls == 3  # not one more
    assert store.count_by_kind("raw").get(PENDING, 0) >= 4  # the rest wait, nothing lost
    assert len(store.raw_by_status([PENDING, "done", "failed", "no_items"])) == 6


def test_retries_inside_the_catch_up_count_too(store, embedder, settings: Settings) -> None:
    writer = Writer(store, embedder, None, settings)
    pending_inputs(writer, 2)
    llm = ScriptedLLM().enqueue(*["not json"] * 10)
    writer.llm = llm

    out = dream_once(store, embedder, llm, writer=writer, max_calls=2)

    assert out.run.status == "budget" and len(llm.calls) == 2
    assert store.count_by_kind("raw").get(PENDING, 0) == 2  # cut short: still pending


class SlowLLM(ScriptedLLM):
    """A scripted model that takes a while to answer (a local model on a busy CPU)."""

    def chat(self, messages, *, schema=None):
        time.sleep(0.4)
        return super().chat(messages, schema=schema)


def test_max_seconds_bounds_the_catch_up_extraction(store, embedder, settings: Settings) -> None:
    writer = Writer(store, embedder, None, settings)
    pending_inputs(writer, 6)
    llm = SlowLLM().enqueue(*[extraction_reply(i) for i in range(20)])
    writer.llm = llm

    out = dream_once(store, embedder, llm, writer=writer, max_seconds=0.5)

    assert out.run.status == "budget" and "--max-seconds 0.5" in out.run.note
    assert len(llm.calls) <= 3  # the call under way may finish; none starts after the budget
    assert store.count_by_kind("raw").get(PENDING, 0) >= 5


def chains_ok(report) -> bool:
    # Only the chains: these fixture facts were stored without raw inputs (provenance).
    return next(f for f in report.findings if f.name == "chains").ok


def test_a_dream_starts_with_check_and_repair(store, embedder) -> None:
    from dcpm_cli.ops.check import check

    items = add_facts(store, embedder, fact_items())
    (old,) = [i for i in items if i.text.startswith("Repainted the hallway")]
    # What a kill between writing a revision and its back-pointer leaves: a broken chain.
    newer = MemoryItem(
        id="m_newer_hallway", kind="fact", text="Repainted the hallway a warm yellow", topic="home"
    )
    newer.supersedes = old.id
    add_facts(store, embedder, [newer])
    assert not chains_ok(check(store))

    out = dream_once(store, embedder, ScriptedLLM().enqueue(*night_one()))

    assert out.run.status == "ok"
    assert any(n.startswith("repaired the store: restored 1 chain back-pointer") for n in out.notes)
    assert chains_ok(check(store))
    assert store.get_items([old.id])[old.id].superseded_by == newer.id
