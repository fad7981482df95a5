"""`dcpm forget`: the cascade, the invariants it keeps, and the bytes it leaves behind (none)."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import pytest
from support.fitness import fitness_raws, fitness_replies
from support.replies import extraction, item, judged

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
    """`dcpm check` finds nothing wrong; and, spelled out: symmetric chains, edges and
    provenance pointing at rows that exist."""
    from dcpm_cli.ops.check import check

    report = check(store)
    assert report.ok, [f for f in report.findings if not f.ok]
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


def holds(data: bytes, needle: bytes) -> bool:
    """Whether `needle` is in `data`; a number only where it is not a piece of a run of hex
    digits: LanceDB's manifests name files by UUID, and "f25d18a2-b266-4921-…" holds "4921"
    (1 run in ~70 of this test, before this check)."""
    if not needle.isdigit():
        return needle in data
    return re.search(rb"(?<![0-9A-Fa-f-])" + re.escape(needle) + rb"(?![0-9A-Fa-f-])", data) is not None


def _secret_store(cli, tmp_path: Path, embedder) -> tuple[Store, str, str]:
    """A diary whose secret sits among other rows of the same Lance fragments (a fragment
    with few deletions is not rewritten by compaction: the bytes would stay)."""
    from support.dream_fixtures import fact_items

    journal = tmp_path / "diary.md"
    journal.write_text(JOURNAL, encoding="utf-8")
    assert cli("add", "--no-extract", "--session", "diary", "--file", str(journal)).exit_code == 0
    store = cli.open_store()
    pending = store.raw_by_status(["pending"])
    (raw,) = [r for r in pending if r.text.endswith(SECRET)]  # under its heading
    fact = MemoryItem("m_secret", "fact", SECRET_FACT, topic="home", raw_ids=[raw.id])
    others = [dataclasses.replace(i, raw_ids=[pending[0].id]) for i in fact_items()]
    items = [*others, fact]
    node = Node(id="n_secret", kind="schema", text="Hides keys near the Quillfeather teapot", domain="home")
    with store.write():
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
    assert all(holds(before, n) for n in needles)

    done = cli("forget", raw_id, "--yes")

    assert done.exit_code == 0, done.stderr
    assert raw_id in done.stdout and fact_id in done.stdout and "n_secret" in done.stdout
    after = every_byte(dcpm_home)
    for needle in [*needles, SECRET.encode(), SECRET_FACT.encode(), b"quill"]:
        assert not holds(after, needle), needle
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
    newest = cli("forget", ids[4], "--yes")
    assert newest.exit_code == 0
    assert f"the input(s) {ids[4]} came from stay: {raws[4].id}" in newest.stdout
    fresh = cli.open_store()
    assert [c.id for c in fresh.chain(ids[0])] == [ids[0], ids[1], ids[3]]
    assert fresh.get_items([ids[3]])[ids[3]].is_current
    assert_consistent(fresh)


def test_an_item_with_another_source_only_loses_the_forgotten_input(writer, llm, store, cli) -> None:
    raws = fitness_raws()[:2]
    llm.enqueue(*fitness_replies(raws))
    writer.add(raws)
    first = store.items_from_raw(raws[0].id)[0]
    with store.write():  # the same fact also said in the second input
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
    from support.dream_fixtures import add_facts, fact_items

    assert cli("add", "--no-extract", "A diary of late nights and early runs").exit_code == 0
    (source,) = store.raw_by_status(["pending"])
    facts = add_facts(store, embedder, [dataclasses.replace(i, raw_ids=[source.id]) for i in fact_items()])
    a, b, c = facts[0].id, facts[1].id, facts[5].id
    nodes = [
        Node("n_only_a", "schema", "Works late before deadlines", "work"),
        Node("n_a_and_c", "schema", "Sleeps badly", "sleep"),
        Node("n_b", "schema", "Finishes reports at night", "work"),
        Node("n_core_three", "core_schema", "Trades sleep for output", ""),
        Node("n_core_two", "core_schema", "Lives by the clock", ""),
    ]
    with store.write():
        store.add_nodes(nodes, embedder.embed([n.text for n in nodes]))
        store.add_edges(
            [
                Edge("evidence", "n_only_a", a),
                Edge("evidence", "n_a_and_c", a),
                Edge("evidence", "n_a_and_c", c),
                Edge("evidence", "n_b", b),
                *(Edge("member", "n_core_three", m) for m in ("n_only_a", "n_b", "n_a_and_c")),
                *(Edge("member", "n_core_two", m) for m in ("n_only_a", "n_b")),
            ]
        )
    assert_consistent(store)

    plan = json.loads(cli("forget", a, "--dry-run", "--json").stdout)

    assert plan["node_ids"] == ["n_core_two", "n_only_a"]
    assert plan["marked"] == {
        "n_core_three": "lost members; keeps 2",
        # its text was written from a and c: it may still say what a said
        "n_a_and_c": "lost 1 of its facts; its own words may still say what they did "
        "(`dcpm forget n_a_and_c` too, to be sure)",
    }
    # a's two evidence edges, the two member edges to n_only_a, n_core_two's last member edge
    assert len(plan["edge_ids"]) == 5
    assert cli.open_store().get_items([a])  # a dry run changes nothing
    assert cli("forget", a, "--yes").exit_code == 0
    fresh = cli.open_store()
    assert sorted(n.id for n in fresh.all_nodes()) == ["n_a_and_c", "n_b", "n_core_three"]
    assert fresh.evidence_of("n_a_and_c") == [c]
    assert fresh.members_of("n_core_three") == ["n_a_and_c", "n_b"]
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


@pytest.mark.four_way
def test_an_update_made_by_a_forgotten_input_is_undone(writer, llm, store, cli) -> None:

    from dcpm_cli.models import RawInput

    first = RawInput(text="I bank with Monzo these days.", session="money")
    secret = RawInput(text="My Monzo card PIN is 4921, don't tell anyone.", session="money")
    llm.enqueue(
        extraction(item("Banks with Monzo", topic="money", attribute="bank")),
        extraction(item("Banks with Monzo, card PIN 4921", topic="money", attribute="bank")),
        judged("adds_detail"),
    )
    writer.add([first])
    (kept,) = store.items_from_raw(first.id)
    writer.add([secret])
    assert store.get_items([kept.id])[kept.id].text == "Banks with Monzo; Banks with Monzo, card PIN 4921"

    done = cli("forget", secret.id, "--yes", "--json")

    assert done.exit_code == 0, done.stderr
    assert json.loads(done.stdout)["reverts"] == {kept.id: "Banks with Monzo"}
    fresh = cli.open_store()
    item_now = fresh.get_items([kept.id])[kept.id]
    assert (item_now.text, item_now.raw_ids) == ("Banks with Monzo", [first.id])
    assert all("4921" not in (e.previous_text + e.new_text) for e in fresh.events_for(kept.id))
    hits = json.loads(cli("recall", "card PIN", "--json").stdout)["hits"]
    assert all("4921" not in h["text"] for h in hits)
    assert not holds(every_byte(fresh.local_path), b"4921")
    assert_consistent(fresh)

    # The same input added again (a journal re-imported by a nightly job) is not stored again:
    # no extraction, so the update is not made again and the PIN stays gone.
    said_again = RawInput(text=secret.text, session="money", said_at=secret.said_at)
    assert said_again.id == secret.id
    report = writer.add([said_again])
    assert (report.stored, report.forgotten, len(llm.calls)) == (0, 1, 3)
    again = cli.open_store()
    assert again.get_items([kept.id])[kept.id].text == "Banks with Monzo"
    assert again.get_raw([secret.id]) == {}
    assert not holds(every_byte(again.local_path), b"4921")


@pytest.mark.four_way
def test_forget_by_query_without_k_takes_only_confident_hits(cli, llm, tmp_path: Path, embedder) -> None:
    """A query for one secret used to plan it and the next two lines recall ranked (k=3):
    without -k only hits at the embedder's confident similarity go, and the rest are counted."""
    import json

    store, raw_id, fact_id = _secret_store(cli, tmp_path, embedder)

    shown = cli("forget", "--query", "where is the spare key", "--dry-run", "--json")

    assert shown.exit_code == 0, shown.stderr
    plan = json.loads(shown.stdout)
    assert plan["raw_ids"] == [raw_id] and fact_id in plan["item_ids"]
    assert "weaker hit(s) left out (-k N takes the N best)" in " ".join(shown.stderr.split())
    wide = json.loads(
        cli("forget", "--query", "where is the spare key", "-k", "3", "--dry-run", "--json").stdout
    )
    assert len(wide["raw_ids"]) + len(wide["item_ids"]) > len(plan["raw_ids"]) + len(plan["item_ids"])
    from dcpm_cli.ops.forget import confident_similarity

    assert confident_similarity(store, embedder, 0.2) == 0.46  # 1 − eps₁ of MiniLM's calibration


def test_forget_by_query_reaches_an_assistant_that_repeated_the_secret(cli, llm, dcpm_home) -> None:
    """Recall answers from the user's words, so it never searches an assistant's turn; forget
    must: a secret the assistant said back stayed on disk after the user's turn was forgotten."""
    log = (
        '{"role": "user", "content": "My bank PIN hint is ZEBRA-ORCHARD", "session": "s1"}\n'
        '{"role": "assistant", "content": "Noted: your PIN hint is ZEBRA-ORCHARD.", "session": "s1"}\n'
        '{"role": "user", "content": "I also like gardening", "session": "s1"}\n'
    )
    assert cli("add", "--no-extract", "-", input=log).exit_code == 0
    assert (
        cli("add", "--no-extract", "--role", "assistant", "Your locker code is 4471, by the pool").exit_code
        == 0
    )

    for query, k in (("ZEBRA-ORCHARD", []), ("ZEBRA-ORCHARD", ["-k", "1"]), ("locker code", [])):
        plan = json.loads(cli("forget", "--query", query, *k, "--dry-run", "--json").stdout)
        texts = [r.text for r in cli.open_store().get_raw(plan["raw_ids"]).values()]
        assert texts and all(query.split()[0].casefold() in t.casefold() for t in texts), (query, k, texts)

    echoes = (
        "".join(
            f'{{"role": "assistant", "content": "Reminder {n}: hint ZEBRA-ORCHARD", "session": "s2"}}\n'
            for n in range(30)
        )
        + '{"role": "user", "content": "Found an old bowling pin, and a zebra mug", "session": "s3"}\n'
    )
    assert cli("add", "--no-extract", "-", input=echoes).exit_code == 0
    plan = json.loads(cli("forget", "--query", "ZEBRA-ORCHARD", "--dry-run", "--json").stdout)
    assert len(plan["raw_ids"]) == 32  # every copy, past any page of search results
    pin = json.loads(cli("forget", "--query", "PIN 42", "-k", "1", "--dry-run", "--json").stdout)
    assert not any("bowling" in r.text for r in cli.open_store().get_raw(pin["raw_ids"]).values())

    assert cli("forget", "--query", "ZEBRA-ORCHARD", "--yes").exit_code == 0
    assert b"ZEBRA" not in every_byte(dcpm_home)
    assert cli("forget", "--query", "locker code", "--yes").exit_code == 0
    assert not holds(every_byte(dcpm_home), b"4471")


def test_a_schema_forgotten_by_request_is_not_built_again_from_its_facts(
    store, embedder, cli, tmp_path: Path
) -> None:
    """Its facts stay (the user forgot the pattern, not what they said), but a dream once made
    the schema from them and the next nightly dream would make it again, with the same id."""
    from support.dream_fixtures import add_facts, fact_items

    assert cli("add", "--no-extract", "A diary of late nights and early runs").exit_code == 0
    (source,) = store.raw_by_status(["pending"])
    facts = add_facts(store, embedder, [dataclasses.replace(i, raw_ids=[source.id]) for i in fact_items()])
    rested_on = sorted(f.id for f in facts[:3])
    with store.write():
        store.add_nodes(
            [Node("n_late", "schema", "Works late before deadlines", "work")], embedder.embed(["w"])
        )
        store.add_edges([Edge("evidence", "n_late", f) for f in rested_on])

    def waiting() -> int:  # the facts a dream would cluster now
        return json.loads(cli("dream", "--dry-run", "--json").stdout)["run"]["facts"]

    before = waiting()
    plan = json.loads(cli("forget", "n_late", "--dry-run", "--json").stdout)
    assert plan["node_ids"] == ["n_late"] and plan["set_aside"] == rested_on
    assert "set aside: a dream will not build it again" in cli("forget", "n_late", "--dry-run").stdout

    assert cli("forget", "n_late", "--yes").exit_code == 0

    assert waiting() == before  # not back among the facts to consolidate
    assert cli.open_store().get_items(rested_on).keys() == set(rested_on)  # the facts themselves stay
    copy = tmp_path / "copy.jsonl"  # an export (and so a reembed) carries the set-aside facts
    assert cli("export", "--out", str(copy)).exit_code == 0
    assert cli("import", str(copy), DCPM_HOME=str(tmp_path / "other")).exit_code == 0
    other = json.loads(cli("dream", "--dry-run", "--json", DCPM_HOME=str(tmp_path / "other")).stdout)
    assert other["run"]["facts"] == before
    assert cli("forget", rested_on[0], "--yes").exit_code == 0
    assert cli.open_store().facts_set_aside() == set(rested_on[1:])  # a forgotten fact's id goes too


def test_a_forgotten_input_is_not_stored_again_when_its_journal_is_added_again(cli, tmp_path: Path) -> None:
    journal = tmp_path / "journal.md"
    journal.write_text(
        "## 2026-03-01\nWalked the dog by the canal.\n\n"
        "## 2026-03-02\nMy bank PIN is 4471, note to self.\n\n"
        "## 2026-03-03\nBaked sourdough.\n"
    )
    assert cli("add", "--no-extract", "--file", str(journal)).exit_code == 0
    gone = cli("forget", "--query", "bank PIN", "-k", "1", "--yes")
    assert gone.exit_code == 0, gone.stderr
    assert "added again as it was (its file or log added once more), it is not stored again" in " ".join(
        gone.stdout.split()
    )

    # A forget resumed after a kill scrubs the events about its ids again: not its own record.
    (pin,) = [e for e in cli.open_store().forget_events()]
    with cli.open_store().write():
        cli.open_store().scrub_events([pin.item_id])

    again = cli("add", "--no-extract", "--file", str(journal), "--json")  # the nightly job

    assert again.exit_code == 0, again.stderr
    report = json.loads(again.stdout)
    assert (report["stored"], report["already_stored"], report["forgotten"]) == (0, 2, 1)
    assert "4471" not in cli("recall", "bank PIN").stdout
    said = cli("add", "--no-extract", "--file", str(journal))
    assert "0 inputs, 2 already stored, 1 not stored again: you had forgotten them" in said.stdout
    # Said anew (another day, other words), it is a new input: only the forgotten one is refused.
    journal.write_text(journal.read_text() + "\n## 2026-03-04\nChanged my bank PIN today.\n")
    assert json.loads(cli("add", "--no-extract", "--file", str(journal), "--json").stdout)["stored"] == 1
