"""The read path reaches the graph: schemas and intentions through the evidence edges of the
hits, core schemas through their member schemas, and a node whose evidence has all been
superseded is marked stale. Real store and embedder; the LLM is scripted."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from support.dream_fixtures import (
    CRUNCH,
    LATE,
    RUNNER,
    SLEEPLESS,
    add_facts,
    dream_once,
    fact_items,
    ids_of,
    night_one,
)
from support.replies import extraction, item, replaced

from dcpm_cli.llm import ScriptedLLM
from dcpm_cli.models import Edge, Node, RawInput
from dcpm_cli.read.recall import recall
from dcpm_cli.store.graph import MEMBER

CORE = "Throws themself at whatever is in front of them until their body gives out"


def dreamt(store, embedder) -> list:
    """The fixture facts (deadlines, insomnia, running, loners), consolidated once."""
    facts = add_facts(store, embedder, fact_items())
    out = dream_once(store, embedder, ScriptedLLM().enqueue(*night_one()))
    assert out.run.status == "ok" and out.run.nodes_created == 4
    return facts


def node_named(store, text: str) -> Node:
    return next(n for n in store.all_nodes() if n.text == text)


def core_over(store, embedder, *members: Node) -> Node:
    """A core schema linked to its members (what Phase 3 writes)."""
    core = Node(id="n_core", kind="core_schema", text=CORE, domain="+".join(m.domain for m in members))
    store.add_nodes([core], embedder.embed([core.text]))
    store.add_edges([Edge(MEMBER, core.id, m.id) for m in members])
    return core


def test_recall_shows_the_schemas_and_intentions_its_hits_are_evidence_for(store, embedder) -> None:
    facts = dreamt(store, embedder)
    result = recall(store, embedder, "working until 2am before a deadline", k=3)

    top = result.hits[0]
    assert top.id in ids_of(facts, "deadlines")
    assert LATE in [n.text for n in top.nodes]
    whole_theme = [h for h in result.hits if h.id in ids_of(facts, "deadlines")]
    assert all(LATE in [n.text for n in h.nodes] for h in whole_theme)
    assert {n.text for n in result.nodes} >= {LATE}
    assert SLEEPLESS not in [n.text for n in result.nodes]  # not reached: no hit is its evidence
    # The intention rests on one fact (F3 of the cluster): only that hit reaches it.
    crunch_fact = ids_of(facts, "deadlines")[2]
    found = recall(store, embedder, "works late whenever a project deadline is close", k=5)
    assert [CRUNCH in [n.text for n in h.nodes] for h in found.hits if h.id == crunch_fact] == [True]
    assert result.stale_nodes == set()


def test_a_core_schema_is_reached_through_its_member_schemas(cli, store, embedder) -> None:
    dreamt(store, embedder)
    core = core_over(store, embedder, node_named(store, LATE), node_named(store, RUNNER))

    for query in ("pulled an all-nighter for the tender deadline", "ran 10 km on Saturday before breakfast"):
        result = recall(store, embedder, query, k=3)
        assert core.id in [n.id for n in result.hits[0].nodes], query
        assert core.id in [n.id for n in result.nodes]
    asleep = recall(store, embedder, "lying awake for hours at night", k=2)
    assert core.id not in [n.id for n in asleep.nodes]  # insomnia is not a member

    data = json.loads(cli("recall", "all-nighter before the deadline", "-k", "2", "--json").stdout)
    kinds = {n["kind"]: n for n in data["hits"][0]["nodes"]}
    assert kinds["core_schema"]["text"] == CORE and kinds["core_schema"]["stale"] is False
    assert kinds["schema"]["text"] == LATE
    prompt = cli("recall", "all-nighter before the deadline", "-k", "2", "--format", "prompt").stdout
    assert f"(core schema) {CORE}" in prompt


def supersede_all(writer, llm, store, old_ids: list[str], texts: list[str]) -> None:
    """One input whose items supersede each of `old_ids` (the user changed their mind)."""
    raw = RawInput(text="Journal: " + " ".join(texts), said_at=datetime(2026, 6, 1, 12, tzinfo=UTC))
    llm.enqueue(
        extraction(*(item(t, topic="fitness", attribute="morning exercise") for t in texts)),
        *(r for _ in old_ids for r in replaced()),
    )
    outcome = writer.add([raw]).outcomes[0]
    assert len(outcome.superseded) == len(old_ids), outcome.rejected
    assert store.superseded_ids(old_ids) == set(old_ids)


SWIMMING = [
    "No longer runs 8 km along the river; swims lengths before breakfast instead",
    "Stopped running before breakfast; swims three mornings a week now",
    "Swam on Saturday morning instead of the usual 10 km run",
    "Pulled out of the city half marathon and swims every other morning instead",
]


def test_a_node_whose_evidence_was_all_superseded_is_stale(cli, writer, llm, store, embedder) -> None:
    facts = dreamt(store, embedder)
    runner, late = node_named(store, RUNNER), node_named(store, LATE)
    core = core_over(store, embedder, late, runner)
    running = ids_of(facts, "running")

    supersede_all(writer, llm, store, running[:2], SWIMMING[:2])
    result = recall(store, embedder, "swims before breakfast", k=4)
    reached = {n.id for n in result.nodes}
    assert runner.id in reached and runner.id not in result.stale_nodes  # two facts still hold

    supersede_all(writer, llm, store, running[2:], SWIMMING[2:])
    result = recall(store, embedder, "swims before breakfast", k=4)
    swim = result.hits[0]
    assert "swim" in swim.text.lower() and len(swim.chain) == 2  # the arc leads to the node
    assert runner.id in [n.id for n in swim.nodes] and runner.id in result.stale_nodes
    assert core.id in [n.id for n in swim.nodes] and core.id not in result.stale_nodes  # LATE holds

    data = json.loads(cli("recall", "swims before breakfast", "-k", "4", "--json").stdout)
    stale = {n["id"]: n["stale"] for n in data["nodes"]}
    assert stale[runner.id] is True and stale[core.id] is False
    table = cli("recall", "swims before breakfast", "-k", "1").stdout
    assert f"schema (stale): {RUNNER}" in table
    overview = json.loads(cli("schemas", "--json").stdout)
    assert [n["text"] for n in overview["nodes"] if n["stale"]] == [RUNNER]
    shown = cli("schemas").stdout
    (line,) = [x for x in shown.splitlines() if runner.id in x and "member" not in x and ":" not in x]
    assert line.endswith("facts, stale)") and "stale" not in shown.replace(line, "")
    # As of a day before the change of mind (said 2026-06-01), the running was still believed:
    # the schema resting on it was not stale then.
    then = recall(store, embedder, "runs before breakfast", k=4, as_of=datetime(2026, 5, 1, tzinfo=UTC))
    assert runner.id in {n.id for n in then.nodes} and runner.id not in then.stale_nodes
    table = cli("recall", "runs before breakfast", "-k", "4", "--as-of", "2026-05-01").stdout
    assert RUNNER in table and "(stale)" not in table

    # Once every member is stale, so is the core schema above them.
    late = [f for f in facts if f.id in ids_of(facts, "deadlines")]
    for day, fact in enumerate(late, 2):
        # Short words around the fact's own: the fact, not the previous change, is the nearest.
        text = f"No longer: {fact.text}"
        llm.enqueue(extraction(item(text, topic="work")), *replaced())
        writer.add([RawInput(text=text, said_at=datetime(2026, 6, day, 12, tzinfo=UTC))])
    assert store.superseded_ids([f.id for f in late]) == {f.id for f in late}
    result = recall(store, embedder, "swims before breakfast", k=4)
    assert {runner.id, core.id} <= result.stale_nodes
