"""`dcpm forget`: remove raw inputs, items or graph nodes for good, with the cascade worked out
(and shown) before anything changes.

- A raw input takes with it the items extracted only from it; items with other sources just
  lose its id.
- A removed item is unlinked from its revision chain and its neighbours are linked to each
  other, so the chain stays symmetric (`a.superseded_by == b` ⇔ `b.supersedes == a`).
- Evidence edges to removed items go; a node left with no evidence goes, and so does a core
  schema left with no members; a core schema that keeps some members stays, and so does a
  schema or intention that keeps some evidence: each is named in the plan and the log as
  marked (a node's text was written from its facts, and may still say what they said).
- Passages holding a removed input are rebuilt without it; the event log's text about every
  removed id is blanked, and one FORGET event records when and which ids — never the text.
- Then the store purges (see store/erase.py): no data file, old version or index keeps it.

`plan_forget()` reads only; `apply_forget()` writes, under the store's write lock.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from dcpm_cli.errors import InputError
from dcpm_cli.models import Event, MemoryItem, short_hash, utcnow
from dcpm_cli.store.graph import EVIDENCE, MEMBER

if TYPE_CHECKING:
    import numpy as np

    from dcpm_cli.embed import Embedder
    from dcpm_cli.models import Hit
    from dcpm_cli.store import Store


@dataclass
class ForgetPlan:
    """What a forget will remove and change; texts are for showing the user only."""

    requested: list[str]
    raw_ids: list[str] = field(default_factory=list)
    item_ids: list[str] = field(default_factory=list)
    node_ids: list[str] = field(default_factory=list)
    edge_ids: list[str] = field(default_factory=list)
    trimmed: dict[str, list[str]] = field(default_factory=dict)  # item → the raw ids it keeps
    relinks: dict[str, tuple[str | None, str | None]] = field(
        default_factory=dict
    )  # item → (supersedes, superseded_by)
    marked: dict[str, str] = field(default_factory=dict)  # node kept, and why
    reverts: dict[str, str] = field(default_factory=dict)  # kept item → its text before those updates
    sources_kept: dict[str, list[str]] = field(default_factory=dict)  # removed item → inputs that stay
    passages: list[str] = field(default_factory=list)
    sessions: list[str] = field(default_factory=list)  # whose passages are rebuilt
    # Facts that stay, evidence of a schema or intention forgotten by request: set aside, so the
    # next dream does not build it again from them (the same facts made it once).
    set_aside: list[str] = field(default_factory=list)
    texts: dict[str, str] = field(default_factory=dict)  # id → text (display only)

    @property
    def empty(self) -> bool:
        return not (self.raw_ids or self.item_ids or self.node_ids)

    @property
    def removed(self) -> list[str]:
        return [*self.raw_ids, *self.item_ids, *self.node_ids]


@dataclass
class ForgetReport:
    plan: ForgetPlan
    event_id: str
    events_scrubbed: int
    rows_rewritten: dict[str, int]


def select_by_query(
    store: Store, embedder: Embedder, query: str, *, k: int = 3, min_similarity: float = 0.2
) -> list[str]:
    """The ids `recall` finds for `query`: raw inputs, and matched items with the inputs they
    came from (forgetting a belief means forgetting the words it was taken from)."""
    from dcpm_cli.read.recall import recall

    ids: list[str] = []
    for hit in recall(store, embedder, query, k=k, min_similarity=min_similarity).hits:
        ids += [hit.id] if hit.kind == "raw" else [*(hit.matched or [hit.id]), *hit.raw_ids]
    ids += inputs_holding(store, query)
    return list(dict.fromkeys(ids))


_FUNCTION_WORDS = frozenset(
    {"the", "and", "for", "you", "your", "my", "what", "was", "are", "did", "does", "how", "when"}
    | {"where", "who", "which", "that", "this", "with", "about", "from", "its", "our", "their"}
)


def inputs_holding(store: Store, query: str, near: tuple[np.ndarray, float] | None = None) -> list[str]:
    """The raw inputs recall does not search that hold every word of `query` (its function
    words aside), and with `near` (the query's vector, a cosine) those that near it: an
    assistant's or a system's turn, an input already extracted, a replaced version of a note.
    Recall answers from the user's own words; forgetting words must reach every copy of them
    (an assistant that repeated a secret, say)."""
    from dcpm_cli.errors import TextSearchFailed

    words = {w for w in re.findall(r"\w+", query.casefold()) if w not in _FUNCTION_WORDS}
    ids: list[str] = []
    if words:
        limit, rows = 100, store.record_count("raw")
        while True:  # every input holding the words, however many: a page at a time
            try:
                found = store.text_search("raw", query, limit)
            except TextSearchFailed:
                found = []
            if len(found) < limit or limit >= rows:
                break
            limit *= 10
        ids += [raw.id for raw, _ in found if words <= set(re.findall(r"\w+", raw.text.casefold()))]
    if near is not None:
        vector, threshold = near
        ids += [raw.id for raw, cos in store.vector_search("raw", vector, QUERY_POOL) if cos >= threshold]
    return list(dict.fromkeys(ids))


QUERY_POOL = 20  # hits `forget --query` without -k weighs against the confident similarity


@dataclass
class QuerySelection:
    """What `forget --query` without -k takes: only hits a confident similarity away."""

    ids: list[str]
    taken: int  # hits kept
    left_out: int  # hits recall found but below the threshold
    threshold: float
    holding: int = 0  # inputs recall does not search, taken for holding every word of the query


def confident_similarity(store: Store, embedder: Embedder, floor: float) -> float:
    """The cosine above which a hit is about the query, not just near it: 1 − eps₁ of the
    embedder's calibration, the similarity only 1 in 20 pairs of facts on *sibling* themes
    (same life domain, different subject) reach (0.46 for MiniLM); never below `floor`."""
    from dcpm_cli.dream.calibrate import PROFILES, calibrate

    cal = store.calibration_for(embedder.model_id) or PROFILES.get(embedder.model_id)
    if cal is None:  # computed, not stored: forget changes nothing but what it forgets
        cal = calibrate(embedder).calibration
    return max(round(1.0 - cal.eps1, 2), floor)


def select_confident(
    store: Store, embedder: Embedder, query: str, *, min_similarity: float = 0.2
) -> QuerySelection:
    """`select_by_query` without a count: recall's hits whose matched text is at least
    `confident_similarity` from the query (its own cosine, not recall's fused rank score, so
    a hit found only because nothing better was there stays out)."""
    from dcpm_cli.read.recall import recall

    threshold = confident_similarity(store, embedder, min_similarity)
    hits = recall(store, embedder, query, k=QUERY_POOL, min_similarity=min_similarity).hits
    texts = [_matched_texts(hit) for hit in hits]
    vectors = embedder.embed([query, *(t for ts in texts for t in ts)])
    q, rest, ids, taken = vectors[0], iter(vectors[1:]), [], 0
    for hit, ts in zip(hits, texts, strict=True):
        if max(float(q @ next(rest)) for _ in ts) >= threshold:
            taken += 1
            ids += [hit.id] if hit.kind == "raw" else [*(hit.matched or [hit.id]), *hit.raw_ids]
    more = [i for i in inputs_holding(store, query, (q, threshold)) if i not in ids]
    return QuerySelection(list(dict.fromkeys(ids + more)), taken, len(hits) - taken, threshold, len(more))


def _matched_texts(hit: Hit) -> list[str]:
    matched = [i.text for i in hit.chain if i.id in hit.matched]
    return matched or [hit.text]


def plan_forget(store: Store, ids: list[str]) -> ForgetPlan:
    """Work out the cascade of forgetting `ids` (r_…, m_…, n_… in any mix); nothing changes."""
    ids = list(dict.fromkeys(i.strip() for i in ids if i.strip()))
    if not ids:
        raise InputError("nothing to forget", "give ids (r_…, m_…, n_…) or --query TEXT")
    plan = ForgetPlan(requested=ids)
    raws = store.get_raw(ids)
    items = store.get_items(ids)
    nodes = store.get_nodes(ids)
    unknown = [i for i in ids if i not in raws and i not in items and i not in nodes]
    if unknown:
        raise InputError(f"no raw input, item or node with id {', '.join(unknown)}", "see `dcpm show ID`")
    plan.raw_ids = list(raws)
    plan.texts.update({r.id: r.text for r in raws.values()})
    gone_items: dict[str, MemoryItem] = dict(items)
    for item in store.items_from_raws(plan.raw_ids):
        keep = [r for r in item.raw_ids if r not in raws]
        if keep:
            plan.trimmed[item.id] = keep
        else:
            gone_items[item.id] = item
    plan.item_ids = list(gone_items)
    for item_id in plan.item_ids:
        plan.trimmed.pop(item_id, None)
    _plan_reverts(store, plan)
    for item in items.values():  # asked for by id: the words it came from are not forgotten with it
        if kept := [r for r in item.raw_ids if r not in raws]:
            plan.sources_kept[item.id] = kept
    plan.texts.update({i.id: i.text for i in gone_items.values()})
    _plan_chains(store, plan, gone_items)
    _plan_graph(store, plan, list(nodes))
    asked = {n.id for n in nodes.values() if n.kind != "core_schema"}
    rested_on = {e.dst for e in store.edges_touching(sorted(asked)) if e.kind == EVIDENCE and e.src in asked}
    plan.set_aside = sorted(rested_on - set(plan.item_ids))
    held = store.passages_holding(plan.raw_ids)
    plan.passages = sorted({p for p, _ in held})
    plan.sessions = sorted({s for _, s in held if s})
    return plan


def _plan_reverts(store: Store, plan: ForgetPlan) -> None:
    """A kept item whose text a forgotten input rewrote (UPDATE) gets its earlier text back:
    the words of the forgotten input must not live on in it."""
    forgotten = set(plan.raw_ids)
    for item_id in plan.trimmed:
        text = store.get_items([item_id])[item_id].text
        updates = [e for e in store.events_for(item_id) if e.op == "UPDATE" and e.item_id == item_id]
        for e in reversed(updates):  # newest first
            if e.raw_id not in forgotten or e.new_text != text:
                break
            text = e.previous_text
        if text != store.get_items([item_id])[item_id].text:
            plan.reverts[item_id] = text
            plan.texts[item_id] = text


def _plan_chains(store: Store, plan: ForgetPlan, gone: dict[str, MemoryItem]) -> None:
    """Relink what is left of every chain a removed item was part of."""
    seen: set[str] = set()
    for item in gone.values():
        if item.id in seen or not (item.supersedes or item.superseded_by):
            continue
        chain = store.chain(item.id)
        seen.update(c.id for c in chain)
        left = [c for c in chain if c.id not in gone]
        for n, c in enumerate(left):
            before = left[n - 1].id if n else None
            after = left[n + 1].id if n + 1 < len(left) else None
            if (c.supersedes, c.superseded_by) != (before, after):
                plan.relinks[c.id] = (before, after)


def _plan_graph(store: Store, plan: ForgetPlan, node_ids: list[str]) -> None:
    """Edges to removed items and nodes go; then, as the graph's invariants require
    (dream/integrity.py), a schema or intention left without evidence goes, and a core schema
    left with fewer than two members goes; one that keeps two or more is marked. Repeated
    until nothing more falls."""
    gone_items, gone_nodes = set(plan.item_ids), set(node_ids)
    edges = {e.id: e for e in store.edges_touching([*gone_items, *gone_nodes])}
    while True:
        dead = {i for i, e in edges.items() if e.dst in gone_items or {e.src, e.dst} & gone_nodes}
        touched = {e.src for i, e in edges.items() if i in dead} - gone_nodes
        kinds = {n.id: n.kind for n in store.get_nodes(sorted(touched)).values()}
        fallen = set()
        for node_id, kind in kinds.items():
            own = [e for e in store.edges_touching([node_id]) if e.src == node_id]
            left = [e for e in own if e.id not in dead]
            if kind == "core_schema":
                members = sum(e.kind == MEMBER for e in left)
                if members < 2:
                    fallen.add(node_id)
                elif members < sum(e.kind == MEMBER for e in own):
                    plan.marked[node_id] = f"lost members; keeps {members}"
            elif not any(e.kind == EVIDENCE for e in left):
                fallen.add(node_id)
            elif (lost := sum(e.kind == EVIDENCE for e in own) - sum(e.kind == EVIDENCE for e in left)) > 0:
                plan.marked[node_id] = (
                    f"lost {lost} of its facts; its own words may still say what they did "
                    f"(`dcpm forget {node_id}` too, to be sure)"
                )
        if not fallen:
            break
        gone_nodes |= fallen
        edges.update({e.id: e for e in store.edges_touching(sorted(fallen))})
    for node_id in gone_nodes:
        plan.marked.pop(node_id, None)
    plan.edge_ids = sorted(dead)
    plan.node_ids = sorted(gone_nodes)
    plan.texts.update({n.id: n.text for n in store.get_nodes(plan.node_ids).values()})


def apply_forget(store: Store, plan: ForgetPlan, embedder: Embedder | None = None) -> ForgetReport:
    """Carry out a plan. Order: what refers to the removed rows changes first, then the rows go,
    then the purge. The marker of the write records every step (ids only), so a kill at any
    point is finished, purge included, by the next write or `dcpm check --repair`. The embedder
    re-embeds items whose text is reverted (`plan.reverts`; needed only then)."""
    from dcpm_cli.store.erase import forget_work

    if plan.reverts and embedder is None:
        raise ValueError("this plan reverts item texts: pass the store's embedder")
    with store.write():
        if store.unfinished_writes():  # a forget cut short before: finished (and purged) first
            store.recover()
        scope = store.erasure_scope(plan.raw_ids, [*plan.item_ids, *plan.reverts], plan.node_ids)
        when = utcnow()
        event = Event(
            op="FORGET",
            item_id=plan.requested[0],
            target_id="f_" + short_hash(*plan.removed, when.isoformat()),
            detail=_detail(plan, [r.said_key for r in store.get_raw(plan.raw_ids).values()]),
            at=when,
        )
        # First, so a kill after it still keeps the node from coming back; a forgotten fact is
        # no longer set aside (its id means nothing any more).
        store.set_facts_aside(add=plan.set_aside, remove=plan.item_ids)
        items = store.get_items(list(plan.reverts))
        work = forget_work(
            raw=plan.raw_ids,
            items=plan.item_ids,
            nodes=plan.node_ids,
            edges=plan.edge_ids,
            relinks=plan.relinks,
            trimmed=plan.trimmed,
            sessions=plan.sessions,
            scope=scope,
            event=event,
            reverts={i.id: i.content_hash for i in items.values()},
        )
        with store.write(unfinished="forget", sessions=plan.sessions, forget=work):
            if items and embedder is not None:  # the first change: one commit (see forget_started)
                for item_id, text in plan.reverts.items():
                    items[item_id].text = text
                changed = list(items.values())
                store.replace_items(changed, embedder.embed([i.text for i in changed]))
            scrubbed, rewritten = store.finish_forget(work)
    return ForgetReport(plan, event.id, scrubbed, rewritten)


def _detail(plan: ForgetPlan, said: list[str]) -> str:
    from dcpm_cli.store.erase import forget_detail

    return forget_detail(
        requested=plan.requested,
        raw=plan.raw_ids,
        said=sorted(said),  # (`RawInput.said_key`: digests, as the ids are)
        items=plan.item_ids,
        nodes=plan.node_ids,
        edges=plan.edge_ids,
        trimmed=sorted(plan.trimmed),
        relinked=sorted(plan.relinks),
        marked=sorted(plan.marked),
        reverted=sorted(plan.reverts),
    )
