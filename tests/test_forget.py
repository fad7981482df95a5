"""`dcpm forget`: the cascade, the invariants it keeps, and the bytes it leaves behind (none)."""

from __future__ import annotations

import json
from pathlib import Path

from replies import extraction
from test_writer import fitness_raws, fitness_replies

from dcpm_cli.models import Edge, Event, MemoryItem, Node
from dcpm_cli.store import Store

SECRET = "My bank PIN is 4921 and the spare key hides under the Quillfeather teapot."
SECRET_FACT = "Keeps the spare key under the Quillfeather teapot"
CONTEXT = [
    "Planted tomatoes on the balcony with my niece.",
    "Booked a train to Lisbon for the autumn holidays.",
    "Finished the first draft of the grant proposal at work.",
    "Repainted the hallway a pale green over the weekend.",
    "Started reading a novel about a lighthouse keeper.",
    "Baked sourdough bread for the first time, it came out flat.",
    SECRET,
    "Called my sister about her new job in Leeds.",
    "Went swimming at the lido before breakfast.",
    "Fixed the wobbly kitchen chair with some wood glue.",
    "Watched the eclipse from the allotment with neighbours.",
    "Signed up for a Spanish evening class on Thursdays.",
    "Cooked a big pot of lentil soup for the week.",
    "Cleared out the garage and gave the old bike away.",
]
JOURNAL = "# Diary\n\n" + "\n".join(f"## 2026-03-{n + 1:02d}\n{text}\n" for n, text in enumerate(CONTEXT))


def assert_consistent(store: Store) -> None:
    """What `dcpm check` asserts: symmetric chains, edges and provenance pointing at rows that exist."""
    items = {i.id: i for i in store.all_items()}
    for i in items.values():
        if i.superseded_by:
            assert items[i.superseded_by].supersedes == i.id, i.id
        if i.supersedes:
            assert items[i.supersedes].superseded_by == i.id, i.id
        assert set(store.get_raw(i.raw_ids)) == set(i.raw_ids), i.id
    nodes = {n.id for n in store.all_nodes()}
    for e in store.edges():
        assert e.src in nodes, e
        assert e.dst in (items if e.kind == "evidence" else nodes), e


def every_byte(*roots: Path) -> bytes:
    return b"\n".join(p.read_bytes() for root in roots for p in root.rglob("*") if p.is_file())


def _secret_store(cli, tmp_path: Path, embedder) -> tuple[Store, str, str]:
    """A diary whose secret sits among other rows of the same Lance fragments (a fragment
    with few deletions is not rewritten by compaction: the bytes would stay)."""
    from dream_fixtures import fact_items

    journal = tmp_path / "diary.md"
    journal.write_text(JOURNAL, encoding="utf-8")
    assert cli("add", "--no-extract", "--session", "diary", "--file", str(journal)).exit_code == 0
    store = cli.open_store()
    (raw,) = [r for r in store.raw_by_status(["pending"]) if r.text == SECRET]
    fact = MemoryItem("m_secret", "fact", SECRET_FACT, topic="home", raw_ids=[raw.id])
    items = [*fact_items(), fact]
    node = Node(id="n_secret", kind="schema", text="Hides keys near the Quillfeather teapot", domain="home")
    with store.lock():
        store.add_items(items, embedder.embed([i.text for i in items]))
        store.log_events([Event("ADD", i.id, raw.id if i is fact else "", "", "", i.text) for i in items])
        store.add_nodes([node], embedder.embed([node.text]))
        store.add_edges([Edge("evidence", node.id, fact.id)])
    for q in ("Quillfeather teapot", "spare key", "bank PIN"):  # builds the full-text indices
        assert cli("recall", q).exit_code == 0
    return store, raw.id, fact.id


def test_forgetting_a_sentence_leaves_no_byte_of_it_on_disk(
    cli, llm, tmp_path: Path, embedder, dcpm_home
) -> None:
    store, raw_id, fact_id = _secret_store(cli, tmp_path, embedder)
    # Lance may compress strings: these pieces of the sentence are stored as plain bytes.
    needles = [b"Quill", b"teapot", b"4921", b"spare key"]
    before = every_byte(dcpm_home)
    assert all(n in before for n in needles)

    done = cli("forget", raw_id, "--yes")

    assert done.exit_code == 0, done.stderr
    assert raw_id in done.stdout and fact_id in done.stdout and "n_secret" in done.stdout
    after = every_byte(dcpm_home)
    for needle in [*needles, SECRET.encode(), SECRET_FACT.encode(), b"quill"]:
        assert needle not in after, needle
    store = cli.open_store()
    assert store.get_raw([raw_id]) == {} and store.get_items([fact_id]) == {}
    assert store.get_nodes(["n_secret"]) == {}
    assert_consistent(store)
    # The rest is still there and still found; passages were rebuilt without the secret.
    assert store.count("raw_inputs") == len(CONTEXT) - 1
    found = json.loads(cli("recall", "train to Lisbon", "--json").stdout)
    assert found["hits"] and "Lisbon" in found["hits"][0]["text"]
    assert json.loads(cli("recall", "Quillfeather teapot spare key", "--json").stdout)["hits"] == [] or all(
        "Quillfeather" not in h["text"]
        for h in json.loads(cli("recall", "Quillfeather", "--json").stdout)["hits"]
    )
    # The log keeps that something was forgotten, when, and the ids — never the text.
    (event,) = store.forget_events()
    detail = json.loads(event.detail)
    assert detail["raw"] == [raw_id] and detail["items"] == [fact_id] and detail["nodes"] == ["n_secret"]
    assert all(e.new_text == "" and e.previous_text == "" for e in store.events_for(fact_id))
    assert cli("show", raw_id).exit_code == 2


def test_forgetting_the_middle_of_a_chain_relinks_its_neighbours(writer, llm, store, cli) -> None:
    raws = fitness_raws()
    llm.enqueue(*fitness_replies(raws))
    writer.add(raws)
    ids = [i.id for i in store.chain(store.items_from_raw(raws[0].id)[0].id)]
    assert len(ids) == 5

    done = cli("forget", raws[2].id, "--yes", "--json")

    assert done.exit_code == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["item_ids"] == [ids[2]] and report["forgotten"] is True
    assert report["relinks"] == {ids[1]: [ids[0], ids[3]], ids[3]: [ids[1], ids[4]]}
    fresh = cli.open_store()
    assert [c.id for c in fresh.chain(ids[0])] == [ids[0], ids[1], ids[3], ids[4]]
    assert_consistent(fresh)

    # Forgetting the newest state makes the one before it current again.
    assert cli("forget", ids[4], "--yes").exit_code == 0
    fresh = cli.open_store()
    assert [c.id for c in fresh.chain(ids[0])] == [ids[0], ids[1], ids[3]]
    assert fresh.get_items([ids[3]])[ids[3]].is_current
    assert_consistent(fresh)


def test_an_item_with_another_source_only_loses_the_forgotten_input(writer, llm, store, cli) -> None:
    raws = fitness_raws()[:2]
    llm.enqueue(*fitness_replies(raws))
    writer.add(raws)
    first = store.items_from_raw(raws[0].id)[0]
    with store.lock():  # the same fact also said in the second input
        store.set_item_raw_ids(first.id, [raws[0].id, raws[1].id])
    second = store.items_from_raw(raws[1].id)
    only_second = [i.id for i in second if i.id != first.id]

    done = cli("forget", raws[1].id, "--yes", "--json")

    report = json.loads(done.stdout)
    assert report["trimmed"] == {first.id: [raws[0].id]}
    assert report["item_ids"] == only_second
    fresh = cli.open_store()
    assert fresh.get_items([first.id])[first.id].raw_ids == [raws[0].id]
    assert_consistent(fresh)


def test_graph_cascade_nodes_without_evidence_go_core_schemas_keep_or_go_with_members(
    store, embedder, cli
) -> None:
    from dream_fixtures import add_facts, fact_items

    facts = add_facts(store, embedder, fact_items())
    a, b, c = facts[0].id, facts[1].id, facts[5].id
    nodes = [
        Node("n_only_a", "schema", "Works late before deadlines", "work"),
        Node("n_a_and_c", "schema", "Sleeps badly", "sleep"),
        Node("n_b", "schema", "Finishes reports at night", "work"),
        Node("n_core_both", "core_schema", "Trades sleep for output", ""),
        Node("n_core_one", "core_schema", "Lives by the clock", ""),
    ]
    with store.lock():
        store.add_nodes(nodes, embedder.embed([n.text for n in nodes]))
        store.add_edges(
            [
                Edge("evidence", "n_only_a", a),
                Edge("evidence", "n_a_and_c", a),
                Edge("evidence", "n_a_and_c", c),
                Edge("evidence", "n_b", b),
                Edge("member", "n_core_both", "n_only_a"),
                Edge("member", "n_core_both", "n_b"),
                Edge("member", "n_core_one", "n_only_a"),
            ]
        )

    plan = json.loads(cli("forget", a, "--dry-run", "--json").stdout)

    assert plan["node_ids"] == ["n_core_one", "n_only_a"]
    assert plan["marked"] == {"n_core_both": "lost some of its members"}
    assert len(plan["edge_ids"]) == 4  # a's two evidence edges, n_only_a's two member edges
    assert cli.open_store().get_items([a])  # a dry run changes nothing
    assert cli("forget", a, "--yes").exit_code == 0
    fresh = cli.open_store()
    assert sorted(n.id for n in fresh.all_nodes()) == ["n_a_and_c", "n_b", "n_core_both"]
    assert fresh.evidence_of("n_a_and_c") == [c]
    assert fresh.members_of("n_core_both") == ["n_b"]
    assert_consistent(fresh)


def test_forget_by_query_shows_first_and_refuses_without_a_terminal(
    cli, llm, tmp_path: Path, embedder
) -> None:
    _store, raw_id, fact_id = _secret_store(cli, tmp_path, embedder)

    shown = cli("forget", "--query", "where is the spare key", "-k", "1", "--dry-run")
    assert shown.exit_code == 0
    assert "would forget" in shown.stdout and raw_id in shown.stdout and fact_id in shown.stdout
    refused = cli("forget", "--query", "where is the spare key", "-k", "1")
    assert refused.exit_code == 2 and "--yes" in refused.stderr
    assert cli.open_store().get_raw([raw_id])  # still there
    assert cli("forget", "--query", "where is the spare key", "-k", "1", "--yes").exit_code == 0
    assert cli.open_store().get_raw([raw_id]) == {}


def test_forget_unknown_id_is_bad_input(cli, llm) -> None:
    llm.enqueue(extraction())
    cli("add", "something to keep")
    res = cli("forget", "r_doesnotexist", "--yes")
    assert res.exit_code == 2 and "r_doesnotexist" in res.stderr
