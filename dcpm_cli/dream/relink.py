"""The dream re-links (#18): pairs of current facts near each other that were never compared.

System 1 compares a new item only with the current facts nearest it when it is written, and
never with one said after it (an old journal imported after newer statements is kept beside
them). Here every current fact meets its nearest current facts by the writer's own rule
(`reconcile.candidates`: at most `judge_k`, none below `judge_min_similarity`, same subject), and each
pair without a JUDGED event is asked the same pairwise question, the earlier-said one as
EARLIER. A `replaces` links the later after the earlier, under the writer's guards: both still
current, and the later one replaces no chain yet (one item replaces at most one chain). Each
pair's judgement and link are committed together, so a killed dream asks nothing again that it
recorded.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, tzinfo
from typing import TYPE_CHECKING

from dcpm_cli.models import JUDGED, Event
from dcpm_cli.prompts.judge import DEFAULT, Statement
from dcpm_cli.write import reconcile
from dcpm_cli.write.judge import judge

if TYPE_CHECKING:
    from dcpm_cli.dream.budget import Budget
    from dcpm_cli.embed import Embedder
    from dcpm_cli.llm import LLM
    from dcpm_cli.models import MemoryItem
    from dcpm_cli.store import Store


@dataclass
class Relinked:
    asked: int = 0
    linked: list[tuple[str, str]] = field(default_factory=list)  # (earlier id, later id)


def pairs(store: Store, embedder: Embedder, k: int, floor: float) -> list[tuple[MemoryItem, MemoryItem]]:
    """The (earlier, later) pairs of current facts never compared, nearest pairs first; the
    later one replaces no chain yet (one item replaces at most one chain)."""
    facts = [i for i in store.all_items("superseded_by IS NULL") if i.kind in reconcile.KINDS]
    if len(facts) < 2:
        return []
    vectors = embedder.embed([f.text for f in facts])
    near = store.nearest_items_many(vectors, k + 1, kinds=reconcile.KINDS)  # +1: itself
    compared = store.judged_pairs()
    found: dict[frozenset[str], tuple[float, MemoryItem, MemoryItem]] = {}
    for fact, neighbours in zip(facts, near, strict=True):
        others = [(c, cos) for c, cos in neighbours if c.id != fact.id][:k]
        for c, cos in others:
            key = frozenset((fact.id, c.id))
            if cos < floor or key in compared or key in found or reconcile.subject_refusal(fact, c):
                continue
            earlier, later = sorted((fact, c), key=lambda i: (i.event_at, i.created_at))
            if not later.supersedes:
                found[key] = (cos, earlier, later)
    return [(e, lt) for _, e, lt in sorted(found.values(), key=lambda t: -t[0])]


def relink(
    store: Store,
    embedder: Embedder,
    llm: LLM,
    budget: Budget,
    *,
    k: int,
    floor: float,
    prompt: str = DEFAULT,
    change_words: bool = True,
    zone: tzinfo = UTC,
) -> Relinked:
    """Ask about every pair never compared, within the budget (BudgetReached stops it); the
    days the model is told are `zone`'s (the user's)."""
    out = Relinked()
    for earlier, later in pairs(store, embedder, k, floor):
        fresh = store.get_items([earlier.id, later.id])
        e, lt = fresh.get(earlier.id), fresh.get(later.id)
        if e is None or lt is None or not (e.is_current and lt.is_current) or lt.supersedes:
            continue  # linked meanwhile (by this pass, or a writer): no longer a question
        budget.check()
        words = " ".join(r.text for r in store.get_raw(lt.raw_ids).values())
        said = (
            Statement(e.text, e.event_at.astimezone(zone)),
            Statement(lt.text, lt.event_at.astimezone(zone), words),
        )
        verdict = judge(llm, *said, prompt=prompt, change_words=change_words)
        out.asked += 1
        events = [Event(JUDGED, lt.id, "", e.id, detail=f"{verdict.relation}: {verdict.reason} (dream)")]
        with store.write():
            if verdict.relation == "replaces":
                lt.supersedes = e.id
                store.replace_items([lt], embedder.embed([lt.text]))
                store.set_superseded_by(e.id, lt.id)
                events.append(Event("SUPERSEDE", lt.id, "", e.id, "", lt.text, detail="re-linked by a dream"))
                out.linked.append((e.id, lt.id))
            store.log_events(events)
    return out
