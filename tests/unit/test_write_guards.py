"""System 1's guards, called directly: what extraction may keep (the conversation shown, items
grounded in the input, subjects it names, attributes offered) and which pairwise judgements
stand (refusals, same meaning, change of stance, time order). Pure functions: no store, no
model; a similarity is a table of the cosines the embedder would give."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

from support.replies import item

from dcpm_cli.config import Settings
from dcpm_cli.models import MemoryItem, RawInput
from dcpm_cli.prompts.extraction import ExtractedItem
from dcpm_cli.write import extract, reconcile
from dcpm_cli.write.judge import Verdict

DEFAULTS = Settings()
GAP = timedelta(minutes=DEFAULTS.history_gap_minutes)


def at(when: str) -> datetime:
    return datetime.fromisoformat(when).replace(tzinfo=UTC)


def turn(when: str, text: str, role: str = "user") -> RawInput:
    return RawInput(text=text, role=role, session="s", said_at=at(when))


def extracted(text: str, **kw) -> ExtractedItem:
    return ExtractedItem.model_validate(item(text, **kw))


def memory(id_: str, text: str, *, attribute: str = "", topic: str = "food", subject: str = "user", **kw):
    return MemoryItem(id=id_, kind="fact", text=text, topic=topic, subject=subject, attribute=attribute, **kw)


def similarity(**pairs: float):
    """Cosines by pair (`a__b`, spaces as `_`): the same text is 1.0, any other pair 0.0."""

    def similar(a: str, b: str) -> float:
        if a == b:
            return 1.0
        key = f"{a}__{b}".replace(" ", "_")
        other = f"{b}__{a}".replace(" ", "_")
        return pairs.get(key, pairs.get(other, 0.0))

    return similar


# -- extraction: the conversation shown --------------------------------------------------------


def test_an_old_entry_of_the_same_session_is_not_shown_as_context() -> None:
    # Every `dcpm add TEXT` shares one session. Shown months-old entries as "earlier turns",
    # qwen2.5-coder:1.5b once wrote an item from one of them instead of from the input (an
    # April veg box came out as January's Lidl shop).
    turns = [
        turn("2026-01-10 18:00", "Did the big Lidl shop, 60 euros."),
        turn("2026-04-02 09:00", "Took the bus to work."),
    ]

    assert extract.conversation(turns, at("2026-04-02 19:00"), GAP) == []


def test_a_chat_of_short_steps_keeps_its_start_and_ends_at_the_first_long_pause() -> None:
    turns = [
        turn("2026-03-01 08:00", "Took the train to work, read the whole way."),
        turn("2026-03-04 19:00", "Cooking a big pot of dal tonight."),
        turn("2026-03-04 19:10", "It needs more cumin, I think."),
        turn("2026-03-04 19:20", "Dinner was great, the cumin did it."),
    ]

    shown = extract.conversation(turns, at("2026-03-04 19:45"), GAP)

    assert [t.text for t in shown] == [t.text for t in turns[1:]]


# -- extraction: items grounded in the input ---------------------------------------------------


def test_the_assistants_suggestion_written_as_the_users_fact_is_dropped() -> None:
    # qwen2.5-coder:1.5b wrote "You want to get into old Japanese cinema", the assistant's
    # reply, as the user's fact, though the prompt says the earlier turns are context only.
    history = [
        turn("2026-01-09 19:00", "I want to watch more films this winter, any ideas?"),
        turn("2026-01-09 19:01", "Old Japanese cinema is a good start: Ozu, then Kurosawa.", "assistant"),
    ]
    said = "Lovely, I'll start with Tokyo Story. I already own a Kurosawa box set."
    found = [
        extracted("Is getting into old Japanese cinema: Ozu and Kurosawa"),
        # A reference resolved from the context, most words from the input: kept.
        extracted("Will start with Tokyo Story and owns a Kurosawa box set"),
    ]

    kept, rejected = extract.ground(found, said, history)

    assert [(i, x.text) for i, x in kept] == [(1, "Will start with Tokyo Story and owns a Kurosawa box set")]
    (why,) = rejected
    assert "old Japanese cinema" in why and "earlier assistant turn" in why


def test_a_first_input_has_nothing_to_be_confused_with() -> None:
    found = [extracted("Runs on Sundays with a club")]

    kept, rejected = extract.ground(found, "Joined a club for Sunday long runs.", [])

    assert (len(kept), rejected) == (1, [])


def test_a_dropped_item_does_not_move_the_ids_of_those_after_it() -> None:
    raw = RawInput(text="Lovely, I'll start with Tokyo Story.", said_at=at("2026-01-09 19:03"))
    history = [turn("2026-01-09 19:01", "Old Japanese cinema: Ozu and Kurosawa.", "assistant")]
    found = [
        extracted("Likes old Japanese cinema: Ozu and Kurosawa"),
        extracted("Will start with Tokyo Story"),
    ]

    alone = extract.to_item(raw, 1, found[1])
    (kept,), _ = extract.ground(found, raw.text, history)

    assert extract.to_item(raw, *kept).id == alone.id


# -- extraction: subjects ----------------------------------------------------------------------


def test_she_after_my_sister_hanna_keeps_the_sister_as_subject() -> None:
    history = [turn("2026-02-01 10:00", "My sister Hanna lives in Bergen now.")]
    found = [extracted("Goes to bed at nine", subject="user's sister Hanna", attribute="bedtime")]

    (kept,), _ = extract.ground(found, "She goes to bed at nine, like a farmer.", history)

    assert kept[1].subject == "user's sister Hanna"


def test_a_subject_the_input_never_names_is_the_user() -> None:
    # qwen2.5-coder:1.5b, once a sister was in memory, gave "user's sister Hanna" as the
    # subject of the user's own new bedtime, diet and bike: nothing chained to the user's
    # earlier stances.
    found = [extracted("Goes to bed at 22:30", subject="user's sister Hanna", attribute="bedtime")]

    (kept,), _ = extract.ground(found, "New rule for me: in bed by 22:30, up at 6:30.", [])

    assert kept[1].subject == "user"


def test_a_subject_the_input_names_itself_is_kept() -> None:
    found = [extracted("Retired from the railway", subject="user's dad", topic="family")]

    (kept,), _ = extract.ground(found, "Dad retired from the railway last week.", [])

    assert kept[1].subject == "user's dad"


# -- extraction: attributes offered -----------------------------------------------------------


def test_only_related_memories_offer_their_attributes() -> None:
    # Offered the nearest memory's attribute however far it was, qwen2.5-coder:1.5b filed a
    # Netflix weekend (cosine 0.17 to a Lidl shop) under that shop's `shopping routine`, and
    # the two then chained.
    floor = DEFAULTS.recall_min_similarity
    near = [
        (memory("m_1", "Watches a film on Friday nights", attribute="film habit", topic="hobbies"), 0.55),
        (memory("m_2", "Summary of a quiet week", topic="mood"), 0.5),
        (MemoryItem(id="m_3", kind="summary", text="A lazy month", attribute="mood"), 0.45),
        (memory("m_4", "Watches films with Hanna", attribute="film habit", topic="hobbies"), 0.4),
        (memory("m_5", "Does the big Lidl shop on Saturdays", attribute="shopping routine"), 0.17),
    ]

    assert extract.offered_attributes(near, floor) == [("user", "film habit")]


# -- reconcile: which judgements stand ---------------------------------------------------------

MEAT = memory("m_meat", "Eats meat every day, steak is the favourite dinner", attribute="diet")
ALLERGY = memory("m_allergy", "Is allergic to penicillin", attribute="allergies", topic="health")


def checked(
    new: MemoryItem, relation: str, target: MemoryItem, similar=None
) -> tuple[reconcile.Plan | None, str]:
    """A judgement as `reconcile.decide` checks it: the plan it asks for (None: ask the next
    candidate) and the refusal written on it."""
    j = reconcile.Judged(target, Verdict(relation, "scripted", relation))
    return reconcile.check(new, j, similar or similarity()), j.refusal


def test_a_stance_change_judged_an_added_detail_is_superseded() -> None:
    veg = memory("m_veg", "Has gone vegetarian and no longer eats meat", attribute="diet")

    p, why = checked(veg, "adds_detail", MEAT)

    assert (p.op, p.target) == ("SUPERSEDE", MEAT)  # the old stance stays, as history
    assert why == f"UPDATE {MEAT.id} made a SUPERSEDE: the new item says a change ('no longer')"


def test_an_added_detail_is_an_update_with_both_texts() -> None:
    steak = memory("m_steak", "Likes the steak medium rare", attribute="diet")

    p, why = checked(steak, "adds_detail", MEAT)

    assert (p.op, p.text, why) == ("UPDATE", f"{MEAT.text}; {steak.text}", "")


def test_attributes_no_longer_gate_a_judgement() -> None:
    # The model's attribute words drift ("diet" / "eating"); the judgement of the texts decides.
    old = memory("m_run", "Runs three times a week", attribute="exercise routine", topic="fitness")
    new = memory("m_swim", "Has switched from running to swimming", attribute="pool", topic="sport")

    p, why = checked(new, "replaces", old)

    assert (p.op, p.target, why) == ("SUPERSEDE", old, "")


def test_unrelated_asks_the_next_candidate() -> None:
    vegan = memory("m_vegan", "Has gone vegan", attribute="diet")

    assert checked(vegan, "unrelated", ALLERGY) == (None, "")


def test_the_sisters_news_is_never_compared_with_the_users() -> None:
    mine = memory("m_bed", "Goes to bed after 1 am", attribute="bedtime", topic="sleep")
    hers = memory(
        "m_hers", "Goes to bed at nine", attribute="bedtime", topic="sleep", subject="user's sister"
    )
    also_mine = memory("m_mine", "Goes to bed at ten", subject="User")

    assert "different subject" in reconcile.subject_refusal(hers, mine)
    assert reconcile.subject_refusal(also_mine, mine) == ""


def test_a_duplicate_must_say_the_same_thing() -> None:
    same = memory("m_same", "Eats meat daily, steak being the favourite dinner", attribute="diet")
    vegan = memory("m_vegan", "Is vegan", attribute="diet")
    cos = similarity(**{f"{same.text}__{MEAT.text}".replace(" ", "_"): 0.9})

    p, why = checked(same, "same", MEAT, cos)
    assert (p.op, p.target, why) == ("DUPLICATE", MEAT, "")
    # Not the same: nothing is dropped; the next candidate is asked, and the refusal kept.
    assert checked(vegan, "same", MEAT, cos) == (
        None,
        f"DUPLICATE of {MEAT.id} refused: it says something else",
    )


def test_an_old_journal_imported_late_does_not_replace_a_later_stance() -> None:
    running = memory("m_run", "Runs every morning", attribute="exercise", event_at=at("2026-04-10 08:00"))
    cycling = memory("m_bike", "Cycles to work", attribute="exercise", event_at=at("2026-01-15 08:00"))

    why = reconcile.said_before(cycling, at("2026-01-15 08:00"), running)

    assert why.startswith(f"SUPERSEDE {running.id} refused: said 2026-01-15, before the state")


def test_a_stance_said_later_about_an_earlier_time_still_supersedes() -> None:
    running = memory("m_run", "Runs every morning", attribute="exercise", event_at=at("2026-04-10 08:00"))
    swimming = memory("m_swim", "Has swum since March", attribute="exercise", event_at=at("2026-03-01 12:00"))

    assert reconcile.said_before(swimming, at("2026-06-01 09:00"), running) == ""


# -- reconcile: what the input says ended -----------------------------------------------------

SOLD = "Sold the car last week! I cycle to work now."
CAR = memory(
    "m_car", "Drives everywhere because the car is easier", topic="travel", event_at=at("2026-01-05 09:00")
)
CYCLES = memory("m_cycle", "Cycles to work, 8 km each way", topic="travel", event_at=at("2026-03-01 09:00"))
NEAR = similarity(**{f"{CYCLES.text}__{CAR.text}".replace(" ", "_"): 0.3})


def named(phrase: str | None, text: str = SOLD) -> str:
    from dcpm_cli.write.words import words

    return extract.ended_words(extracted("Cycles to work", instead_of=phrase or ""), set(words(text)))


def test_what_ended_is_kept_only_in_the_inputs_own_words() -> None:
    assert named("the car") == "the car"
    assert named('"The car."') == "The car"
    # Words the input does not say are the model's, not the user's: nothing ended.
    assert named("the old bus pass") == ""
    assert named("null") == named("None") == named(None) == named("") == ""


def test_the_memory_named_as_ended_is_superseded_without_a_judgement() -> None:
    p = reconcile.named_end(CYCLES, ("the car", CAR, 0.42), NEAR, DEFAULTS, at("2026-03-01 09:00"), SOLD)

    assert p is not None and (p.op, p.target) == ("SUPERSEDE", CAR)
    (j,) = p.judged  # recorded as a judgement, so the dream never asks about the pair again
    assert j.verdict.answer == reconcile.ENDED and "'the car' ended" in j.verdict.reason


def test_a_named_end_links_only_where_a_judged_one_would() -> None:
    when = at("2026-03-01 09:00")
    # A plan says no change; another person's news is not the user's; an unrelated domain.
    plan = "Thinking of selling the car and cycling to work?"
    assert reconcile.named_end(CYCLES, ("the car", CAR, 0.42), NEAR, DEFAULTS, when, plan) is None
    hers = memory("m_hers", "Cycles to work", subject="user's sister Hanna", event_at=when)
    assert reconcile.named_end(hers, ("the car", CAR, 0.42), NEAR, DEFAULTS, when, SOLD) is None
    assert reconcile.named_end(CYCLES, ("the car", CAR, 0.42), similarity(), DEFAULTS, when, SOLD) is None
    # An old journal imported late does not replace a later state.
    later = memory("m_car2", "Drives to work", event_at=at("2026-06-01 09:00"))
    early = replace(CYCLES, event_at=at("2026-01-01 09:00"))
    cos = similarity(**{f"{early.text}__{later.text}".replace(" ", "_"): 0.3})
    assert (
        reconcile.named_end(early, ("the car", later, 0.42), cos, DEFAULTS, at("2026-01-01 09:00"), SOLD)
        is None
    )
