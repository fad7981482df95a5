"""The dream re-links (#18): pairs of near current facts the writer never compared (an old
journal imported after newer statements) are judged at night, the earlier-said one as EARLIER;
a `replaces` links them. Budgeted, and a killed dream asks nothing again that it recorded."""

from __future__ import annotations

from datetime import UTC, datetime

from support.dream_fixtures import dream_once
from support.replies import extraction, item, item_id, judge_calls, judged, replaced

from dcpm_cli.llm import ScriptedLLM
from dcpm_cli.models import JUDGED, RawInput
from dcpm_cli.store import Store
from dcpm_cli.write.pipeline import Writer


def said(day: str, text: str) -> RawInput:
    return RawInput(text=text, said_at=datetime.fromisoformat(day).replace(tzinfo=UTC))


def late_import(writer: Writer, llm: ScriptedLLM) -> tuple[str, str]:
    """A stance said in May, then an old journal entry from January imported after it."""
    now = said("2026-05-01", "I'm vegan now.")
    llm.enqueue(extraction(item("Is vegan", topic="food", attribute="diet")))
    writer.add([now])
    old = said("2026-01-10", "Steak night again, I eat meat every day.")
    llm.enqueue(extraction(item("Eats meat every day", topic="food", attribute="eating")))
    writer.add([old])  # the writer never compares an older stance with a newer one
    return item_id(old), item_id(now)


def test_the_dream_relinks_a_late_import(writer: Writer, llm: ScriptedLLM, store: Store, embedder) -> None:
    meat, vegan = late_import(writer, llm)
    assert store.judged_pairs() == set() and all(i.is_current for i in store.all_items())
    calls = len(llm.calls)
    llm.enqueue(*replaced("both about diet; meat then vegan"))

    out = dream_once(store, embedder, llm, writer=writer, relink=True)

    assert out.run.status == "ok"
    assert judge_calls(llm.calls[calls:]) == [("Eats meat every day", "Is vegan")]  # in time order
    assert [i.id for i in store.chain(vegan)] == [meat, vegan]
    assert store.head(meat).id == vegan
    (e,) = [e for e in store.events_for(vegan) if e.op == JUDGED]
    assert (e.item_id, e.target_id) == (vegan, meat) and e.detail.startswith("replaces: both about diet")
    assert [e.op for e in store.events_for(meat) if e.op == "SUPERSEDE"] == ["SUPERSEDE"]

    # The next dream asks nothing again: the pair is recorded (and linked).
    calls = len(llm.calls)
    assert dream_once(store, embedder, llm, writer=writer, relink=True).run.status == "ok"
    assert len(llm.calls) == calls


def test_an_unrelated_pair_is_recorded_and_never_asked_again(
    writer: Writer, llm: ScriptedLLM, store: Store, embedder
) -> None:
    meat, vegan = late_import(writer, llm)
    llm.enqueue(judged("unrelated"))

    dream_once(store, embedder, llm, writer=writer, relink=True)
    calls = len(llm.calls)
    dream_once(store, embedder, llm, writer=writer, relink=True)

    assert len(llm.calls) == calls  # the second dream had nothing to ask
    assert store.judged_pairs() == {frozenset((meat, vegan))}
    assert all(i.is_current for i in store.all_items())


def test_the_relink_pass_keeps_to_the_budget_and_resumes(
    writer: Writer, llm: ScriptedLLM, store: Store, embedder
) -> None:
    meat, vegan = late_import(writer, llm)

    spent = dream_once(store, embedder, llm, writer=writer, relink=True, max_calls=0)

    assert spent.run.status == "budget" and store.judged_pairs() == set()
    llm.enqueue(*replaced())
    assert dream_once(store, embedder, llm, writer=writer, relink=True).run.status == "ok"
    assert [i.id for i in store.chain(meat)] == [meat, vegan]


def test_a_dry_run_counts_the_re_link_calls(writer: Writer, llm: ScriptedLLM, store: Store, embedder) -> None:
    late_import(writer, llm)
    calls = len(llm.calls)

    plan = dream_once(store, embedder, llm, writer=writer, relink=True, dry_run=True)

    assert (
        "re-link: 1 pair of near facts never compared, a judgement each (two for a replaces)" in plan.planned
    )
    assert len(llm.calls) == calls and store.judged_pairs() == set()  # a plan asks and writes nothing
