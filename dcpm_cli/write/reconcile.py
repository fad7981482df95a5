"""System 1, step 3: which memories each new item meets, and what it may do to them (#18).

The one place where candidates are chosen (`candidates`), the model is asked (`plan`) and its
judgements are checked (`decide`, `said_before`). First, with `named_ends` on (opt-in, off by
default), what the input says ended: extraction copies the words of what a new item took the
place of ("Sold the car, I cycle now": "the car"), and the nearest current memory that says
them is superseded with no judgement asked (`named_ends`, `named_end`), under the same checks
as a judged link. Copying words is within a 1.5B model's reach, but the words it copies are not
always a thing that ended (right 9 of 15 times on unseen arc sets), hence opt-in. Else
candidates by meaning: the current facts nearest the item, at most `judge_k` of them, none
below `judge_min_similarity`; the attribute words the model wrote are data, never a gate. The
model is asked one question per candidate, nearest first ("how does the LATER statement relate
to the EARLIER one?", write/judge.py): `replaces` → SUPERSEDE, `adds_detail` → UPDATE, `same` →
DUPLICATE, `unrelated` → nothing. The first judgement that stands decides: an item replaces at
most one chain. Every judgement is kept (`Plan.judged`) with the model's reason and, when a
check refused it, why: an UPDATE never changes a stance, a DUPLICATE must say the same thing, a
stance never replaces a later one, nothing links across subjects, and a `replaces` whose item
(and input) says no change in words links nothing (write/change.py, checked in write/judge.py)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING

from dcpm_cli.models import MemoryItem, normalise
from dcpm_cli.prompts.judge import Statement
from dcpm_cli.write.change import changes_stance, no_change, sentence_naming
from dcpm_cli.write.judge import Verdict, judge
from dcpm_cli.write.words import stems

if TYPE_CHECKING:
    import numpy as np

    from dcpm_cli.config import Settings
    from dcpm_cli.llm import LLM
    from dcpm_cli.store import Store

# The cosine of two texts' vectors (the writer's embedder, memoised).
Similarity = Callable[[str, str], float]

# What a judgement is asked about: current facts and identity items (a summary never is).
KINDS = ("fact", "identity")
# A DUPLICATE drops the new item: only when both say nearly the same (MiniLM puts paraphrases
# of one statement above ~0.8 and two stances on one attribute, "vegetarian"/"vegan", below).
DUPLICATE_MIN_COS = 0.8
# A Verdict.answer: the link the input's own words made (`named_end`), with no judgement asked.
ENDED = "the input names what ended"
# Subjects that all mean the speaker.
_USER = {"user", "the user", "i", "me", "myself", ""}


@dataclass
class Judged:
    """One pairwise judgement: the candidate, the model's relation and reason, and why a check
    refused what the relation asked for ('' if it stood or asked for nothing)."""

    target: MemoryItem
    verdict: Verdict
    refusal: str = ""

    def detail(self) -> str:
        v = self.verdict
        said = f"{v.relation}: {v.reason}" if v.reason else v.relation  # a terse prompt gives none
        return f"{said} [{self.refusal}]" if self.refusal else said


@dataclass
class Plan:
    op: str
    target: MemoryItem | None = None
    text: str = ""
    judged: list[Judged] = field(default_factory=list)  # every question asked, nearest first


def candidates(
    store: Store, kept: Sequence[MemoryItem], vectors: np.ndarray, k: int, floor: float
) -> list[list[MemoryItem]]:
    """Each item's k nearest current facts and identity items at or above `floor` (one search),
    nearest first; a summary has none."""
    near = store.nearest_items_many(vectors, k, kinds=KINDS)
    return [
        [] if item.kind == "summary" else [c for c, cos in near[i] if cos >= floor]
        for i, item in enumerate(kept)
    ]


def plan(
    kept: list[MemoryItem],
    vectors: np.ndarray,
    *,
    store: Store,
    llm: LLM | None,
    settings: Settings,
    similar: Similarity,
    said_at: datetime,
    words: str = "",
    ended: Sequence[tuple[str, np.ndarray | None]] = (),
) -> list[Plan]:
    """A checked plan per item: the memory its input says it took the place of, if any
    (`named_end`); else its candidates, then one judgement per candidate until one stands. An
    item without candidates is added without a call. `words`: the input the items were taken
    from (a `replaces` stands only if the item or its input says a change); `ended`: per item,
    the words of what the input says it replaced ('' for none) and their vector."""
    cands = candidates(store, kept, vectors, settings.judge_k, settings.judge_min_similarity)
    ends = (
        named_ends(store, ended, settings.judge_k, settings.recall_min_similarity)
        if ended and settings.named_ends
        else [None] * len(kept)
    )
    plans = []
    for item, cs, end in zip(kept, cands, ends, strict=True):
        if end is not None and (p := named_end(item, end, similar, settings, said_at, words)):
            plans.append(p)
            continue
        ask = [c for c in cs if not (subject_refusal(item, c) or said_before(item, said_at, c))]
        plans.append(decide(item, ask, llm, similar, settings, words) if ask else Plan("ADD"))
    return plans


def named_ends(
    store: Store, ended: Sequence[tuple[str, np.ndarray | None]], k: int, floor: float
) -> list[tuple[str, MemoryItem, float] | None]:
    """Per item, the memory that names what its input says it replaced: of the `k` current
    facts and identity items nearest to those words (cosine at or above `floor`, one search),
    the nearest that says most of them ("the car": "Drives everywhere, the car is easier").
    With the words and the cosine. A neighbour in meaning alone is not enough (qwen2.5-coder
    wrote "hills" for an e-bike bought for them, and "climbing" was 0.31 away), nor is one word
    of several ("library games evenings" is not "borrows audiobooks on the library app";
    "reading glasses" is not "read the paper over my porridge")."""
    rows = [i for i, (phrase, v) in enumerate(ended) if phrase and v is not None]
    out: list[tuple[str, MemoryItem, float] | None] = [None] * len(ended)
    if not rows:
        return out
    import numpy as np

    vectors = np.stack([v for i in rows if (v := ended[i][1]) is not None])
    for i, near in zip(rows, store.nearest_items_many(vectors, k, kinds=KINDS), strict=True):
        phrase = ended[i][0]
        said = stems(phrase)
        out[i] = next(
            (
                (phrase, c, cos)
                for c, cos in near
                if cos >= floor and 2 * len(said & stems(c.text)) > len(said)
            ),
            None,
        )
    return out


def named_end(
    item: MemoryItem,
    end: tuple[str, MemoryItem, float],
    similar: Similarity,
    settings: Settings,
    said_at: datetime,
    words: str,
) -> Plan | None:
    """A SUPERSEDE of the memory the input says the item took the place of ("Sold the car, I
    cycle now": the car), without a judgement: copying the words of what ended is within a
    small model's reach where judging two statements is not (#18). It stands only where a
    judged one would (same subject, not said before the memory, a change in words; nor may the
    sentence naming what ended be a plan or a question) and if the item is near the memory at
    all (`judge_min_similarity`: not two unrelated domains)."""
    phrase, target, cos = end
    why = (
        subject_refusal(item, target)
        or said_before(item, said_at, target)
        or no_change(item.text, words)
        or no_change(sentence_naming(phrase, words), words)
        or ("unrelated to it" if similar(item.text, target.text) < settings.judge_min_similarity else "")
    )
    if why:
        return None
    reason = f"the input says {phrase!r} ended, nearest {target.id} (cosine {cos:.2f})"
    return Plan("SUPERSEDE", target, judged=[Judged(target, Verdict("replaces", reason, ENDED))])


def decide(
    item: MemoryItem,
    cands: Sequence[MemoryItem],
    llm: LLM | None,
    similar: Similarity,
    settings: Settings,
    words: str = "",
) -> Plan:
    """Ask about each candidate, nearest first; the first judgement that stands is the plan."""
    judged: list[Judged] = []
    zone = settings.zone  # the days the model is told are the user's
    for c in cands:
        earlier = Statement(c.text, c.event_at.astimezone(zone))
        later = Statement(item.text, item.event_at.astimezone(zone), words)
        verdict = judge(
            llm,  # type: ignore[arg-type]
            earlier,
            later,
            prompt=settings.judge_prompt,
            change_words=settings.judge_change_words,
        )
        j = Judged(c, verdict)
        judged.append(j)
        p = check(item, j, similar)
        if p is not None:
            p.judged = judged
            return p
    return Plan("ADD", judged=judged)


def check(item: MemoryItem, j: Judged, similar: Similarity) -> Plan | None:
    """What one judgement asks for, checked (None: nothing, ask the next candidate). A refusal
    is written on `j`: an UPDATE that changes a stance is a SUPERSEDE (the old text stays as
    history), a DUPLICATE that says something else is not dropped."""
    target, relation = j.target, j.verdict.relation
    if relation == "replaces":
        return Plan("SUPERSEDE", target)
    if relation == "adds_detail":
        merged = f"{target.text.rstrip().rstrip(';.')}; {item.text}"
        if change := changes_stance(item.text):
            j.refusal = f"UPDATE {target.id} made a SUPERSEDE: {change}"
            return Plan("SUPERSEDE", target)
        return Plan("UPDATE", target, text=merged)
    if relation == "same":
        if similar(item.text, target.text) >= DUPLICATE_MIN_COS:
            return Plan("DUPLICATE", target)
        j.refusal = f"DUPLICATE of {target.id} refused: it says something else"
    return None


def subject_refusal(item: MemoryItem, old: MemoryItem) -> str:
    """Why `item` may not be linked to `old` at all ('' if it may): they are about different
    people (two named people, or the user and someone named)."""
    a, b = normalise(item.subject), normalise(old.subject)
    if a == b or (a in _USER and b in _USER):
        return ""
    return f"different subject ({item.subject!r} vs {old.subject!r})"


def said_before(item: MemoryItem, said_at: datetime, head: MemoryItem) -> str:
    """Why `item`, said at `said_at`, may not supersede `head`, its chain's current state ('' if
    it may): both said and about a time before it (an old journal imported later), it would make
    the older stance current; it is kept beside it, and the dream compares the two in time
    order. ("Swimming since March" said in June after April's running still links.)"""
    if said_at < head.event_at and item.event_at < head.event_at:
        return (
            f"SUPERSEDE {head.id} refused: said {item.event_at:%Y-%m-%d}, before the state "
            f"it would replace ({head.event_at:%Y-%m-%d}): added instead"
        )
    return ""
