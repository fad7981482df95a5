"""System 1, step 3: which memories each new item meets, and what it may do to them.

The one place where candidates are chosen (`candidates`), the model is asked (`plan`) and its
decisions are checked (`check`, `said_before`). A decision the checks refuse becomes a safer
op with its reason recorded: only an item about the same subject and attribute may supersede
or update (no Graphiti-style over-invalidation), an UPDATE never changes a stance, a DUPLICATE
must say the same thing, and a stance never replaces a later one. The checks are pure: items
and a text similarity in, a plan out.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from dcpm_cli.llm import structured
from dcpm_cli.models import MemoryItem, normalise
from dcpm_cli.prompts import reconcile as prompt
from dcpm_cli.prompts.reconcile import Decision
from dcpm_cli.write.words import words

if TYPE_CHECKING:
    import numpy as np

    from dcpm_cli.config import Settings
    from dcpm_cli.llm import LLM
    from dcpm_cli.store import Store

# The cosine of two texts' vectors (the writer's embedder, memoised).
Similarity = Callable[[str, str], float]

# A DUPLICATE drops the new item: only when both say nearly the same (MiniLM puts paraphrases
# of one statement above ~0.8 and two stances on one attribute, "vegetarian"/"vegan", below).
DUPLICATE_MIN_COS = 0.8
# Words that say a stance changed; an UPDATE whose new item says one is a SUPERSEDE.
_CHANGE = re.compile(
    r"\b(no longer|any ?more|stopped|quit|gave up|switched|instead|used to|now|sold|moved|dropped|"
    r"changed|started|back to|again|left|new)\b",
    re.IGNORECASE,
)


@dataclass
class Plan:
    op: str
    target: MemoryItem | None = None
    text: str = ""
    reason: str = ""  # why the model's decision was not applied as given
    refused: MemoryItem | None = None  # the target it named, when refused


def candidates(store: Store, kept: list[MemoryItem], vectors: np.ndarray, k: int) -> list[list[MemoryItem]]:
    """Each item's top-k current facts and identity items (one search); a summary has none."""
    near = store.nearest_items_many(vectors, k, kinds=("fact", "identity"))
    return [[] if item.kind == "summary" else [c for c, _ in near[i]] for i, item in enumerate(kept)]


def plan(
    kept: list[MemoryItem],
    vectors: np.ndarray,
    *,
    store: Store,
    llm: LLM | None,
    settings: Settings,
    similar: Similarity,
) -> list[Plan]:
    """A checked plan per item: candidates, then one batched call for all items that have any."""
    cands = candidates(store, kept, vectors, settings.top_k)
    plans = [Plan("ADD") for _ in kept]
    # Only candidates with the item's subject and attribute can be superseded or updated: an
    # item without any is added without asking (no call, nothing a weak reply can break).
    min_cos = settings.supersede_attribute_min_cos
    related = [[c for c in cs if not refusal(kept[i], c, similar, min_cos)] for i, cs in enumerate(cands)]
    asked = [i for i, c in enumerate(related) if c]
    if not asked:
        return plans
    ask = prompt.Ask([kept[i] for i in asked], [related[i] for i in asked])
    got = structured(
        llm,  # type: ignore[arg-type]
        ask.messages(),
        ask.model(),
        retries=settings.llm_retries,
        schema=ask.schema(),
    )
    for d in got.decisions:  # type: ignore[attr-defined]  # one per item, in order: the schema says so
        i = asked[d.item]
        plans[i] = check(kept[i], d, cands[i], {c.id for c in related[i]}, similar, min_cos)
    return plans


def check(
    item: MemoryItem,
    d: Decision,
    cands: list[MemoryItem],
    related: set[str],
    similar: Similarity,
    attribute_min_cos: float,
) -> Plan:
    """One decision, validated; every refusal keeps its reason. SUPERSEDE and UPDATE need a
    target with the item's subject and attribute (`related`); an UPDATE that changes what its
    target said is a change of stance (SUPERSEDE: the old text stays as history); a DUPLICATE
    that says something else is not dropped."""
    if d.op == "ADD":
        return Plan("ADD")
    target = {c.id: c for c in cands}.get(d.target or "")
    if target is None:
        return Plan("ADD", reason=f"{d.op} target {d.target!r} is not a candidate: added instead")
    if d.op == "DUPLICATE":
        if similar(item.text, target.text) >= DUPLICATE_MIN_COS:
            return Plan("DUPLICATE", target)
        if target.id in related:
            why = f"DUPLICATE of {target.id} says something else: superseded instead"
            return Plan("SUPERSEDE", target, reason=why)
        return Plan("ADD", reason=f"DUPLICATE of {target.id} refused: it says something else", refused=target)
    if target.id not in related:
        why = refusal(item, target, similar, attribute_min_cos)
        return Plan("ADD", reason=f"{d.op} {target.id} refused: {why}", refused=target)
    if d.op == "UPDATE":
        merged = (d.text or "").strip() or f"{target.text}; {item.text}"
        change = changes_stance(item.text, target.text, merged)
        if change:
            return Plan("SUPERSEDE", target, reason=f"UPDATE {target.id} made a SUPERSEDE: {change}")
        return Plan("UPDATE", target, text=merged)
    return Plan("SUPERSEDE", target)


def refusal(item: MemoryItem, old: MemoryItem, similar: Similarity, attribute_min_cos: float) -> str:
    """Why `item` may not supersede or update `old` ('' if it may): another subject, or another
    attribute (names less similar than `attribute_min_cos`), or without both, another topic."""
    if normalise(item.subject) != normalise(old.subject):
        return f"different subject ({item.subject!r} vs {old.subject!r})"
    if item.attribute and old.attribute and item.attribute != old.attribute:
        if similar(item.attribute, old.attribute) < attribute_min_cos:
            return f"different attribute ({item.attribute!r} vs {old.attribute!r})"
    elif not (item.attribute and old.attribute) and item.topic != old.topic:
        return f"different topic ({item.topic!r} vs {old.topic!r})"
    return ""


def changes_stance(new: str, old: str, merged: str) -> str:
    """Why an UPDATE of `old` by `new` into `merged` is not a mere added detail ('' if it is)."""
    if m := _CHANGE.search(new):
        return f"the new item says a change ({m.group(0)!r})"
    merged_words = set(words(merged))
    for name, text in (("the old text", old), ("the new item", new)):
        said = words(text)
        if said and sum(w in merged_words for w in said) / len(said) < 0.6:
            return f"the merged text leaves out most of {name}"
    return ""


def said_before(item: MemoryItem, said_at: datetime, head: MemoryItem) -> str:
    """Why `item`, said at `said_at`, may not supersede `head`, its chain's current state ('' if
    it may): both said and about a time before it (an old journal imported later), it would make
    the older stance current; it is kept beside it. ("Swimming since March" said in June after
    April's running still links.)"""
    if said_at < head.event_at and item.event_at < head.event_at:
        return (
            f"SUPERSEDE {head.id} refused: said {item.event_at:%Y-%m-%d}, before the state "
            f"it would replace ({head.event_at:%Y-%m-%d}): added instead"
        )
    return ""
