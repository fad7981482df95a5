"""The read path: vector + BM25 search, fused; every hit's supersedes chain traversed; graph
nodes reached through evidence edges. Never calls an LLM (and never imports a client)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from dcpm_cli.errors import InputError
from dcpm_cli.models import FAILED, ITEM_KINDS, PENDING, Event, Hit, MemoryItem, RawInput, Recall

if TYPE_CHECKING:
    from dcpm_cli.embed import Embedder
    from dcpm_cli.store import Store

RRF_K = 60  # reciprocal-rank fusion constant (Cormack et al. 2009)


def recall(
    store: Store,
    embedder: Embedder,
    query: str,
    *,
    k: int = 10,
    kinds: list[str] | None = None,
    as_of: datetime | None = None,
) -> Recall:
    """The k best memories for `query`: current beliefs (or those valid at `as_of`) first."""
    vector = embedder.embed([query])[0]
    depth = max(4 * k, 20)
    item_kinds = [x for x in (kinds or ITEM_KINDS) if x in ITEM_KINDS]
    want_raw = not kinds or "raw" in kinds

    fused: dict[tuple[str, str], float] = {}
    rows: dict[tuple[str, str], dict] = {}
    ranked = []
    if item_kinds:
        ranked.append(("items", store.vector_search("items", vector, depth, kinds=item_kinds)))
        ranked.append(("items", store.text_search("items", query, depth, kinds=item_kinds)))
    if want_raw:
        # Inputs not extracted yet are memory too: dcpm is useful before any LLM has run.
        only = {"statuses": [PENDING, FAILED], "roles": ["user"]}
        ranked.append(("raw", store.vector_search("raw", vector, depth, **only)))
        ranked.append(("raw", store.text_search("raw", query, depth, **only)))
    for source, hits in ranked:
        for rank, (row, _) in enumerate(hits):
            key = (source, row["id"])
            fused[key] = fused.get(key, 0.0) + 1.0 / (RRF_K + rank + 1)
            rows[key] = row

    out: list[Hit] = []
    seen_chains: set[str] = set()
    for key in sorted(fused, key=fused.__getitem__, reverse=True):
        if len(out) >= k:
            break
        hit = _hit(store, key, rows[key], fused[key], as_of, seen_chains)
        if hit is not None:
            out.append(hit)
    _attach_nodes(store, out)
    nodes = {n.id: n for h in out for n in h.nodes}
    return Recall(query=query, hits=out, as_of=as_of, nodes=list(nodes.values()))


def _hit(
    store: Store, key: tuple[str, str], row: dict, score: float, as_of: datetime | None, seen: set[str]
) -> Hit | None:
    source, _ = key
    if source == "raw":
        raw = store.raw_from_row(row)
        if as_of is not None and raw.said_at > as_of:
            return None
        return Hit("raw", raw.id, raw.text, raw.said_at, score, [raw.id], raw_ids=[raw.id])
    item = store.item_from_row(row)
    chain = store.chain(item.id) if (item.supersedes or item.superseded_by) else [item]
    root = chain[0].id
    if root in seen:  # a superseded state never shows up as a separate, stale hit
        return None
    seen.add(root)
    state = _state_at(chain, as_of)
    if state is None:
        return None
    return Hit(
        kind=state.kind, id=state.id, text=state.text, when=state.event_at, score=score,
        matched=[item.id], chain=chain, raw_ids=state.raw_ids, topic=state.topic,
    )  # fmt: skip


def _state_at(chain: list[MemoryItem], as_of: datetime | None) -> MemoryItem | None:
    """The newest state of the chain, or the one that was valid at `as_of`."""
    if as_of is None:
        return chain[-1]
    valid = [c for c in chain if c.event_at <= as_of]
    return valid[-1] if valid else None


def _attach_nodes(store: Store, hits: list[Hit]) -> None:
    """Schema, intention and core-schema nodes whose evidence edges hold the hits' facts."""
    fact_ids = {c.id: h for h in hits for c in h.chain}
    by_node = store.nodes_with_evidence(list(fact_ids))
    nodes = store.get_nodes(list(by_node))
    for node_id, facts in by_node.items():
        node = nodes.get(node_id)
        if node is None:
            continue
        for hit in {id(fact_ids[f]): fact_ids[f] for f in facts}.values():
            hit.nodes.append(node)


# -- history, show, stats ------------------------------------------------------------------


@dataclass
class ArcState:
    item: MemoryItem
    sources: list[RawInput]
    events: list[Event]


def arcs(store: Store, embedder: Embedder, target: str, *, k: int = 3) -> list[list[ArcState]]:
    """Revision arcs, oldest state first: of an item id, of a raw input's items, or of the
    beliefs that best match a query."""
    if target.startswith("m_") and store.get_items([target]):
        chains = [store.chain(target)]
    elif target.startswith("r_") and store.get_raw([target]):
        chains = _distinct_chains(store, [i.id for i in store.items_from_raw(target)])
    else:
        result = recall(store, embedder, target, k=k, kinds=list(ITEM_KINDS))
        chains = [h.chain for h in result.hits]
    out = []
    for chain in chains:
        raws = store.get_raw(sorted({r for c in chain for r in c.raw_ids}))
        out.append(
            [ArcState(c, [raws[r] for r in c.raw_ids if r in raws], store.events_for(c.id)) for c in chain]
        )
    return out


def _distinct_chains(store: Store, ids: list[str]) -> list[list[MemoryItem]]:
    chains, seen = [], set()
    for i in ids:
        chain = store.chain(i)
        if chain and chain[0].id not in seen:
            seen.add(chain[0].id)
            chains.append(chain)
    return chains


def describe(store: Store, ident: str) -> dict[str, Any]:
    """Everything known about one id: an item, a raw input or a graph node."""
    if item := store.get_items([ident]).get(ident):
        raws = store.get_raw(item.raw_ids)
        return {
            "type": "item",
            "item": item,
            "chain": [c.id for c in store.chain(ident)],
            "sources": [raws[r] for r in item.raw_ids if r in raws],
            "events": store.events_for(ident),
            "nodes": list(store.get_nodes(list(store.nodes_with_evidence([ident]))).values()),
        }
    if raw := store.get_raw([ident]).get(ident):
        return {"type": "raw", "raw": raw, "items": store.items_from_raw(ident)}
    if node := store.get_nodes([ident]).get(ident):
        evidence = store.get_items(store.evidence_of(ident))
        raws = store.get_raw(sorted({r for i in evidence.values() for r in i.raw_ids}))
        return {
            "type": "node",
            "node": node,
            "evidence": [
                {"item": i, "sources": [raws[r] for r in i.raw_ids if r in raws]} for i in evidence.values()
            ],
            "members": list(store.get_nodes(store.members_of(ident)).values()),
        }
    raise InputError(f"no item, raw input or node with id {ident!r}", "ids look like m_…, r_… or n_…")


def store_stats(store: Store) -> dict[str, Any]:
    links = store.chain_links()
    nxt = {i: after for i, _, after in links}
    lengths = []
    for i, before, _ in links:
        if before is None:  # a chain's first state
            n, cur = 1, i
            while nxt.get(cur) and n <= len(links):
                cur, n = nxt[cur], n + 1  # type: ignore[assignment]
            lengths.append(n)
    raw = store.count_by_kind("raw")
    return {
        "store": store.uri,
        "embedder": store.embedder_id,
        "raw_inputs": sum(raw.values()),
        "raw_by_status": raw,
        "pending": raw.get(PENDING, 0),
        "failed": raw.get(FAILED, 0),
        "items": store.count_by_kind("items"),
        "chains": {
            "count": len(lengths),
            "mean_length": round(sum(lengths) / len(lengths), 2) if lengths else 0.0,
            "max_length": max(lengths, default=0),
        },
        "nodes": store.count_by_kind("nodes"),
        "dream_runs": store.last_dream_runs(3) if hasattr(store, "last_dream_runs") else [],
        "disk_bytes": store.disk_bytes(),
    }
