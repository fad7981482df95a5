"""Phase 2: clusters of facts become schema and intention nodes with evidence; actions are
validated, applied in order, and the graph grows across nights without duplicates."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime

from support.dream_fixtures import (
    CRUNCH,
    LATE,
    RUNNER,
    SLEEPLESS,
    THEMES,
    add_facts,
    create,
    dream_once,
    edge,
    evidence,
    fact_items,
    ids_of,
    night_one,
    reply,
)

from dcpm_cli.dream.integrity import check_graph
from dcpm_cli.llm import ScriptedLLM
from dcpm_cli.models import Edge, MemoryItem, Node, short_hash
from dcpm_cli.prompts.induction import Action
from dcpm_cli.store import Store

MORE_DEADLINES = [
    "Stayed at the office until midnight to hit the Friday deadline",
    "Worked late three nights in a row to meet the audit deadline",
    "Was still working at 1am the night before the grant deadline",
]


def nodes_by_text(store: Store) -> dict[str, Node]:
    return {n.text: n for n in store.all_nodes()}


def new_facts(texts: list[str], topic: str, day: int) -> list[MemoryItem]:
    """New facts said on one day, an hour apart (so F1, F2... follow the list)."""
    return [
        MemoryItem(
            id="m_" + short_hash("later", t),
            kind="fact",
            text=t,
            topic=topic,
            event_at=datetime(2026, 6, day, 9 + i, tzinfo=UTC),
        )
        for i, t in enumerate(texts)
    ]


def test_clusters_become_schema_and_intention_nodes_with_evidence(store, embedder) -> None:
    items = add_facts(store, embedder, fact_items())
    llm = ScriptedLLM().enqueue(*night_one())

    out = dream_once(store, embedder, llm)

    assert out.run.status == "ok"
    assert (out.run.clusters, out.run.clusters_done, out.run.llm_calls) == (3, 3, 3)
    nodes = nodes_by_text(store)
    assert {(n.kind, n.domain) for n in nodes.values()} == {
        ("schema", "work"),
        ("intention", "work"),
        ("schema", "sleep"),
        ("schema", "fitness"),
    }
    deadlines = ids_of(items, "deadlines")
    assert store.evidence_of(nodes[LATE].id) == sorted(deadlines)  # no facts given: the whole cluster
    assert store.evidence_of(nodes[CRUNCH].id) == [deadlines[2]]  # F3, in time order
    assert store.evidence_of(nodes[SLEEPLESS].id) == sorted(ids_of(items, "insomnia"))
    running = ids_of(items, "running")
    assert set(store.evidence_of(nodes[RUNNER].id)) < set(running)  # one running fact is noise
    assert check_graph(store).ok
    # The model saw the facts by label and answered in the schema-constrained format.
    first = llm.calls[0]
    assert first["schema"]["properties"]["actions"]["minItems"] == 1  # no empty way out
    assert first["schema"]["$defs"]["Action"]["properties"]["text"]["anyOf"][0]["maxLength"] == 160
    action = first["schema"]["$defs"]["Action"]["properties"]
    assert action["facts"]["anyOf"][0]["items"]["enum"] == ["F1", "F2", "F3", "F4", "F5"]
    assert action["node"]["anyOf"][0]["enum"] == ["new1", "new2", "new3", "new4"]  # no node exists yet
    assert set(action) == set(Action.model_fields)
    third = llm.calls[2]
    shown = set(re.findall(r"\bn_[0-9a-f]{12}\b", third["messages"][-1]["content"]))
    enum = third["schema"]["$defs"]["Action"]["properties"]["node"]["anyOf"][0]["enum"]
    assert shown and set(enum) == shown | {"new1", "new2", "new3", "new4"}  # exactly the nodes it was shown
    prompt = first["messages"][-1]["content"]
    assert all(f"F{i} " in prompt for i in range(1, 6)) and THEMES["deadlines"][1][0] in prompt


def test_refs_link_nodes_created_in_the_same_reply(store, embedder) -> None:
    add_facts(store, embedder, fact_items())
    first = reply(
        create("schema", LATE, "work", ref="late"),
        create("intention", CRUNCH, "work", ["F3"], ref="crunch"),
        edge("late", "crunch", "leads_to"),
    )
    dream_once(store, embedder, ScriptedLLM().enqueue(first, *night_one()[1:]))

    nodes = nodes_by_text(store)
    links = [e for e in store.edges() if e.kind != "evidence"]
    assert [(e.kind, e.src, e.dst) for e in links] == [("leads_to", nodes[LATE].id, nodes[CRUNCH].id)]


def test_a_second_night_adds_evidence_rather_than_duplicates(store, embedder) -> None:
    items = add_facts(store, embedder, fact_items())
    dream_once(store, embedder, ScriptedLLM().enqueue(*night_one()))
    late = nodes_by_text(store)[LATE]
    before = len(store.all_nodes())

    more = add_facts(store, embedder, new_facts(MORE_DEADLINES, "work", 1))
    # A small model repeats the schema it was shown instead of citing it.
    llm = ScriptedLLM().enqueue(reply(create("schema", LATE + ".", "Work")))
    out = dream_once(store, embedder, llm)

    assert out.run.clusters == 1 and out.run.nodes_created == 0
    assert late.id in llm.calls[0]["messages"][-1]["content"]  # shown as the nearest node
    assert len(store.all_nodes()) == before
    assert store.evidence_of(late.id) == sorted([*ids_of(items, "deadlines"), *(m.id for m in more)])
    assert check_graph(store).ok


def test_a_paraphrased_node_is_merged_and_add_evidence_cites_existing_nodes(store, embedder) -> None:
    add_facts(store, embedder, fact_items())
    dream_once(store, embedder, ScriptedLLM().enqueue(*night_one()))
    nodes = nodes_by_text(store)
    more = add_facts(store, embedder, new_facts(MORE_DEADLINES, "work", 2))

    llm = ScriptedLLM().enqueue(
        reply(
            create("schema", "Works late at night before deadlines", "work", ["F1"]),  # cos 0.96 to LATE
            evidence(nodes[CRUNCH].id, ["F2", "F3"]),
        )
    )
    out = dream_once(store, embedder, llm)

    assert out.run.nodes_created == 0 and out.run.actions_applied == 2
    by_id = {m.text: m.id for m in more}
    assert by_id[MORE_DEADLINES[0]] in store.evidence_of(nodes[LATE].id)
    assert {by_id[MORE_DEADLINES[1]], by_id[MORE_DEADLINES[2]]} <= set(store.evidence_of(nodes[CRUNCH].id))


def test_invalid_actions_are_logged_and_never_applied(store, embedder) -> None:
    items = add_facts(store, embedder, fact_items())
    # A valid core schema over two schemas, each with a (loner) fact as evidence.
    graph = [
        Node(id="n_s1", kind="schema", text="Keeps the home tidy", domain="home"),
        Node(id="n_s2", kind="schema", text="Plans trips far ahead", domain="travel"),
        Node(id="n_core", kind="core_schema", text="Prepares well ahead", domain="home+travel"),
    ]
    store.add_nodes(graph, embedder.embed([n.text for n in graph]))
    store.add_edges(
        [
            Edge("evidence", "n_s1", items[-3].id),
            Edge("evidence", "n_s2", items[-2].id),
            Edge("member", "n_core", "n_s1"),
            Edge("member", "n_core", "n_s2"),
        ]
    )
    bad = reply(
        create("schema", LATE, "work", ["F1", "F9"]),  # F9: the cluster has 5 facts
        create("schema", "", "work"),
        evidence("n_nowhere", ["F1"]),
        evidence("n_core", ["F1"]),  # evidence belongs to schemas and intentions
        create("schema", LATE, "work", ["F1", "F2"], ref="late"),  # valid
        edge("late", "late"),
        edge("late", "n_core", "is_secretly"),
        create("intention", CRUNCH, "work", ref="late"),  # ref reused
        {"action": "add_evidence", "node": "late", "facts": [items[-1].id]},  # a loner fact, by id: valid
        {"action": "add_evidence", "node": "late", "facts": ["r_notafact"]},
    )
    llm = ScriptedLLM().enqueue(bad, *night_one()[1:])

    out = dream_once(store, embedder, llm)

    run = store.dream_runs(1)[0]
    assert run.actions_applied == 2 + 2 and run.actions_rejected == 8  # 2 later clusters apply 1 each
    reasons = "\n".join(run.rejections)
    for why in (
        "unknown fact ids F9",
        "no text",
        "no node 'n_nowhere'",
        "n_core is a core_schema",
        "an edge from a node to itself",
        "relation 'is_secretly'",
        "ref 'late' used twice",
        "unknown fact ids r_notafact",
    ):
        assert why in reasons
    late = nodes_by_text(store)[LATE]
    deadlines = ids_of(items, "deadlines")
    assert store.evidence_of(late.id) == sorted([deadlines[0], deadlines[1], items[-1].id])
    assert CRUNCH not in nodes_by_text(store)
    assert [e for e in store.edges() if e.kind not in ("evidence", "member")] == []
    assert store.evidence_of("n_core") == []
    assert out.run.rejections == run.rejections and check_graph(store).ok


def test_a_cluster_the_model_declines_is_not_asked_again(store, embedder) -> None:
    add_facts(store, embedder, fact_items())
    dream_once(store, embedder, ScriptedLLM().enqueue(*night_one()[:2], reply()))
    assert store.dream_runs(1)[0].declined  # the running cluster: no action

    llm = ScriptedLLM()  # any call would fail: its queue is empty
    out = dream_once(store, embedder, llm)
    assert (out.run.clusters, out.run.clusters_skipped, llm.calls) == (0, 1, [])

    # A new fact joins the running cluster: a different set of facts, asked again.
    add_facts(store, embedder, new_facts(["Went running before breakfast along the canal"], "fitness", 3))
    llm = ScriptedLLM().enqueue(reply(create("schema", RUNNER, "fitness")))
    out = dream_once(store, embedder, llm)
    assert out.run.clusters == 1 and len(llm.calls) == 1 and RUNNER in nodes_by_text(store)


def test_superseded_facts_stay_out_unless_chains_are_ignored(store, embedder) -> None:
    items = add_facts(store, embedder, fact_items())
    old = ids_of(items, "insomnia")[0]
    store.set_superseded_by(old, "m_newer")

    plan = dream_once(store, embedder, None, dry_run=True)
    facts = [f.id for c in plan.triage.clusters for f in c.facts]
    assert old not in facts and plan.triage.facts == len(items) - 1

    plan = dream_once(store, embedder, None, dry_run=True, no_supersedes=True)
    assert old in [f.id for c in plan.triage.clusters for f in c.facts]
    assert json.loads(plan.run.settings)["no_supersedes"] is True


def test_graph_context_reaches_nodes_built_on_an_earlier_version(store, embedder) -> None:
    items = add_facts(store, embedder, fact_items())
    dream_once(store, embedder, ScriptedLLM().enqueue(*night_one()))
    sleepless = nodes_by_text(store)[SLEEPLESS]
    old = ids_of(items, "insomnia")[0]
    # Three new insomnia facts; the first revises one that is already evidence.
    texts = [
        "Still cannot fall asleep until 3am most nights",
        "Lies awake for hours most nights this week, unable to fall asleep",
        "Wakes up at 4am and cannot fall back to sleep",
    ]
    fresh = new_facts(texts, "sleep", 4)
    fresh[0].supersedes = old
    add_facts(store, embedder, fresh)
    store.set_superseded_by(old, fresh[0].id)

    plan = dream_once(store, embedder, None, dry_run=True)

    (cl,) = plan.triage.clusters
    assert cl.evidence_nodes == {sleepless.id: [fresh[0].id]}
    prompt = plan.prompts[0][-1]["content"]
    assert "already includes these facts or earlier versions" in prompt and sleepless.id in prompt
