"""What `dcpm schemas` shows: the graph's nodes by kind and domain, their evidence counts,
structural links, and each core schema with its members (reads only)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from dcpm_cli.store.graph import EVIDENCE, MEMBER

if TYPE_CHECKING:
    from dcpm_cli.store import Store

KIND_ORDER = {"schema": 0, "intention": 1, "core_schema": 2}


def graph_overview(
    store: Store, *, kinds: list[str] | None = None, domain: str | None = None
) -> dict[str, Any]:
    nodes = store.all_nodes(kinds or None)
    if domain:
        wanted = domain.casefold()  # "Work" finds "work"
        nodes = [
            n for n in nodes if wanted == n.domain.casefold() or wanted in n.domain.casefold().split("+")
        ]
    evidence = store.evidence_counts()
    edges = store.edges()
    members: dict[str, list[str]] = {}
    links = []
    for e in edges:
        if e.kind == MEMBER:
            members.setdefault(e.src, []).append(e.dst)
        elif e.kind != EVIDENCE:
            links.append({"src": e.src, "dst": e.dst, "relation": e.kind})
    shown = {n.id for n in nodes}
    from dcpm_cli.read.recall import stale_nodes

    stale = stale_nodes(store, [n.id for n in nodes if n.kind != "core_schema"], members)
    rows = [
        {
            "id": n.id,
            "kind": n.kind,
            "domain": n.domain,
            "text": n.text,
            "behaviour": n.behaviour,
            "evidence": evidence.get(n.id, 0),
            "members": sorted(members.get(n.id, [])),
            "stale": n.id in stale,  # every fact it rests on superseded since
            "created_at": n.created_at,
        }
        for n in sorted(nodes, key=lambda n: (KIND_ORDER.get(n.kind, 9), n.domain, -evidence.get(n.id, 0)))
    ]
    counts: dict[str, int] = {}
    for n in nodes:
        counts[n.kind] = counts.get(n.kind, 0) + 1
    names = store.get_nodes(sorted({m for ms in members.values() for m in ms}))
    return {
        "counts": counts,
        "nodes": rows,
        "links": [link for link in links if link["src"] in shown or link["dst"] in shown],
        "member_text": {i: {"text": n.text, "domain": n.domain} for i, n in names.items()},
    }
