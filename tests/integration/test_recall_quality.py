"""What recall finds, beyond one turn at a time: passages (neighbouring user inputs of a
session) as context-level keys, and scores that weigh meaning over filler words."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from support.paths import SAMPLE_DATA

from dcpm_cli.ingest import formats as ingest
from dcpm_cli.models import RawInput
from dcpm_cli.read.recall import recall
from dcpm_cli.store import Store
from dcpm_cli.store import schemas as S
from dcpm_cli.store.passages import window_starts

T0 = datetime(2026, 3, 1, 9, tzinfo=UTC)

CHATS = {
    "lisbon": [
        "I'm finally planning the trip to Lisbon with my sister for next month.",
        "We want somewhere quiet by the water, nothing too touristy.",
        "I went ahead and booked the Pestana Palace for five nights.",
        "Can you suggest a few day trips we could take by train?",
    ],
    "madrid": [
        "The conference in Madrid is in May and my manager asked me to sort out logistics.",
        "I booked a hotel room close to the venue so I can walk there every morning.",
        "Do you know whether the metro runs late on weekdays?",
    ],
    "baking": ["I have been baking sourdough every weekend.", "My starter is called Bubbles."],
}
PESTANA, MADRID_HOTEL = CHATS["lisbon"][2], CHATS["madrid"][1]


def _chat_raws(session_of: dict[str, str] | None = None) -> list[RawInput]:
    raws = []
    for day, (name, turns) in enumerate(CHATS.items()):
        for i, text in enumerate(turns):
            session = name if session_of is None else session_of.get(name, "")
            raws.append(RawInput(text=text, session=session, said_at=T0 + timedelta(days=day, minutes=i)))
    return raws


def _texts(result) -> list[str]:
    return [h.text for h in result.hits]


def _passages(store: Store, embedder) -> list[list[str]]:
    """Every passage's member texts, by session then time."""
    rows = store.vector_search("passages", embedder.embed(["anything"])[0], 1000)
    passages = sorted((p for p, _ in rows), key=lambda p: (p.session, p.first_at))
    raws = store.get_raw([i for p in passages for i in p.raw_ids])
    return [[raws[i].text for i in p.raw_ids] for p in passages]


def test_a_passage_finds_an_answer_spread_over_two_turns(writer, store, embedder):
    # The answer ("Pestana Palace") names neither Lisbon nor a hotel; its neighbour names Lisbon.
    writer.add(_chat_raws(), extract=False)
    found = _texts(recall(store, embedder, "Which hotel did I book for the Lisbon trip?", k=5))
    assert found.index(PESTANA) < found.index(MADRID_HOTEL)


def test_without_a_session_each_input_stands_alone(writer, store, embedder):
    # The control: the same inputs with no session get no passages, and the other hotel wins.
    writer.add(_chat_raws(session_of={}), extract=False)
    assert _passages(store, embedder) == []
    found = _texts(recall(store, embedder, "Which hotel did I book for the Lisbon trip?", k=5))
    assert found.index(MADRID_HOTEL) < found.index(PESTANA)


def test_a_lone_input_is_not_outranked_by_weaker_inputs_of_a_journal(writer, store, embedder):
    # A lone `dcpm add` has no passage; the journal's inputs each get their passage's score on
    # top of their own. The lone input counts as its own passage, so the exact match leads.
    journal = SAMPLE_DATA / "journal.md"
    writer.add(ingest.parse(journal.read_text(), ingest.Format.markdown, session="journal"), extract=False)
    lone = "## 2026-03-01 I quit smoking"  # piped in: `echo "…" | dcpm add -`
    writer.add(ingest.parse(lone, ingest.Format.markdown, session=""), extract=False)
    found = _texts(recall(store, embedder, "smoking", k=5))
    assert found[0] == lone


def test_a_few_conversations_do_not_outrank_the_journal_entry_that_says_it(writer, store, embedder):
    # A journal (inputs in no session, each its own context) and one short chat: the chat's
    # passage is the best of the only conversation, not a better match than the journal.
    stood_up = "I STOOD UP. For maybe three seconds, on lesson five, on a wave that was basically foam."
    journal = [
        "Long day at the studio, the client wants the whole facade redrawn by Friday.",
        stood_up,
        "Tom made feijoada for his colleagues, the flat smells of beans for days.",
        "Rain all weekend, stayed in and finished the translation.",
    ]
    raws = [RawInput(text=t, said_at=T0 + timedelta(days=10 * i)) for i, t in enumerate(journal)]
    chat = [
        "Starting surf lessons at Costa da Caparica tomorrow. I'm 37 and barely exercise. Tips?",
        "Are there other beaches near Lisbon that are good for beginners, for later on?",
    ]
    raws += [RawInput(text=t, session="surf", said_at=T0 + timedelta(minutes=i)) for i, t in enumerate(chat)]
    writer.add(raws, extract=False)
    found = _texts(recall(store, embedder, "when did I first manage to stand up surfing", k=5))
    assert found.index(stood_up) < found.index(chat[1])


@pytest.mark.parametrize(
    ("n", "starts"),
    [(0, []), (1, [0]), (4, [0]), (5, [0, 2]), (6, [0, 2]), (7, [0, 2, 4]), (9, [0, 2, 4, 6])],
)
def test_windows_half_overlap_and_cover_every_input(n, starts):
    assert window_starts(n, size=4, stride=2) == starts
    covered = {i for s in starts for i in range(s, min(s + 4, n))}
    assert covered == set(range(n))


def test_passages_follow_a_session_as_it_grows(writer, store, embedder):
    turns = [f"Day {i}: I repotted plant number {i} on the balcony." for i in range(6)]

    def say(i: int) -> None:
        when = T0 + timedelta(hours=i)
        writer.add(
            [
                RawInput(text=turns[i], session="garden", said_at=when),
                RawInput(text=f"Nice work on plant {i}!", role="assistant", session="garden", said_at=when),
            ],
            extract=False,
        )

    for i in range(5):
        say(i)
    writer.add([RawInput(text="A note with no session.", said_at=T0)], extract=False)
    assert _passages(store, embedder) == [turns[0:4], turns[2:5]]
    say(5)  # the last window grows; the one it replaces is gone
    assert _passages(store, embedder) == [turns[0:4], turns[2:6]]


def test_passages_are_built_for_inputs_stored_before_them(writer, store, embedder):
    import lancedb

    writer.add(_chat_raws(), extract=False)
    before = _passages(store, embedder)
    # A store from before migration m003: no passages table, no record of the step.
    db = lancedb.connect(store.uri)
    db.drop_table(S.PASSAGES)
    db.open_table(S.MIGRATIONS).delete("name = 'm003_passages'")

    reopened = Store(store.uri, embedder)

    assert _passages(reopened, embedder) == before
    assert before == [CHATS["baking"], CHATS["lisbon"], CHATS["madrid"]]


def test_as_of_leaves_out_passages_holding_later_inputs(writer, store, embedder):
    writer.add(
        [
            RawInput(text="I started learning the cello.", session="music", said_at=T0),
            RawInput(
                text="I played the cello at a recital.", session="music", said_at=T0 + timedelta(days=60)
            ),
        ],
        extract=False,
    )
    then = recall(store, embedder, "cello", k=5, as_of=T0 + timedelta(days=1))
    now = recall(store, embedder, "cello", k=5)
    assert _texts(then) == ["I started learning the cello."]
    assert then.hits[0].score < now.hits[-1].score, "no context from a passage that did not exist yet"


def test_the_top_hits_do_not_depend_on_k(writer, store, embedder):
    writer.add(_chat_raws(), extract=False)
    query = "what did I say about trains and travel?"
    few, many = recall(store, embedder, query, k=3), recall(store, embedder, query, k=9)
    assert [h.id for h in few.hits] == [h.id for h in many.hits[:3]]
    # (LanceDB's scan answers a table's first searches, the in-memory copy the later ones: their
    # cosines agree to float32 rounding, store/vectors.py)
    assert [h.score for h in few.hits] == pytest.approx([h.score for h in many.hits[:3]], rel=1e-6)


def test_a_filler_word_match_does_not_outrank_the_meaning(writer, store, embedder):
    # The tennis turn shares one word with the question ("tips"), the other shares its meaning
    # and no word. Rank fusion would put the tennis turn first (a BM25 rank of its own plus
    # the second dense rank beat the first dense rank alone); fused scores keep the strength.
    question = "My phone battery dies quickly, any tips?"
    writer.add(
        [
            RawInput(text="Any tips on improving my tennis serve?", session="sport", said_at=T0),
            RawInput(
                text="My mobile keeps running out of charge before lunch.", session="gadgets", said_at=T0
            ),
            RawInput(text="I bake bread on Sundays.", session="food", said_at=T0),
        ],
        extract=False,
    )
    lexical = store.text_search("raw", question, 5)
    assert [row.text for row, _ in lexical] == ["Any tips on improving my tennis serve?"]
    found = _texts(recall(store, embedder, question, k=3))
    assert found[:2] == [
        "My mobile keeps running out of charge before lunch.",
        "Any tips on improving my tennis serve?",
    ]
