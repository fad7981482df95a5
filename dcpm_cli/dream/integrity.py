"""The graph's invariants, a check that lists every violation, and a repair.

A consistent graph G:
1. every edge starts at a node; an evidence edge ends at a memory item, any other edge at a
   node (no dangling edges);
2. evidence edges start at schemas or intentions, member edges at core schemas and end at
   schemas (edges fit the kinds);
3. every schema and intention has evidence (provenance: a node links to its facts);
4. every core schema has at least two members;
5. no two nodes share kind, domain and normalised text.

Dreams write nodes before edges, each table commit atomic, so an interrupted dream can only
break 3 or 4 (nodes whose edges never landed). `repair_graph` deletes what breaks 1–4 and
merges duplicates (5) into one node; `dcpm dream` runs it before it triages, so the facts
of a half-written cluster are consolidated again.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from dcpm_cli.models import Edge, normalise
from dcpm_cli.store.graph import EVIDENCE, MEMBER

if TYPE_CHECKING:
    from dcpm_cli.store import Store


@dataclass
class GraphCheck:
    nodes: int = 0
    edges: int = 0
    dangling_edges: list[str] = field(default_factory=list)  # edge ids
    misfit_edges: list[str] = field(default_factory=list)  # edge ids
    orphan_nodes: list[str] = field(default_factory=list)  # schemas/intentions without evidence
    hollow_cores: list[str] = field(default_factory=list)  # core schemas with < 2 members
    duplicate_nodes: list[list[str]] = field(default_factory=list)  # groups, first one kept

    @property
    def ok(self) -> bool:
        return not (
            self.dangling_edges
            or self.misfit_edges
            or self.orphan_nodes
            or self.hollow_cores
            or self.duplicate_nodes
        )

    def problems(self) -> list[str]:
        parts = [
            (len(self.dangling_edges), "dangling edges"),
            (len(self.misfit_edges), "edges that do not fit their nodes' kinds"),
            (len(self.orphan_nodes), "schemas/intentions without evidence"),
            (len(self.hollow_cores), "core schemas with fewer than two members"),
            (len(self.duplicate_nodes), "groups of duplicate nodes"),
        ]
        return [f"{n} {what}" for n, what in parts if n]


def check_graph(store: Store) -> GraphCheck:
    """Every violation of the invariants above (reads only)."""
    nodes = {n.id: n for n in store.all_nodes()}
    edges = store.edges()
    out = GraphCheck(nodes=len(nodes), edges=len(edges))
    evidence_ends = [e.dst for e in edges if e.kind == EVIDENCE]
    items = store.existing_item_ids(sorted(set(evidence_ends)))
    evidenced: set[str] = set()
    members: dict[str, int] = defaultdict(int)
    for e in edges:
        src = nodes.get(e.src)
        if e.kind == EVIDENCE:
            if src is None or e.dst not in items:
                out.dangling_edges.append(e.id)
            elif src.kind not in ("schema", "intention"):
                out.misfit_edges.append(e.id)
            else:
                evidenced.add(e.src)
            continue
        dst = nodes.get(e.dst)
        if src is None or dst is None:
            out.dangling_edges.append(e.id)
        elif e.kind == MEMBER and (src.kind != "core_schema" or dst.kind != "schema"):
            out.misfit_edges.append(e.id)
        elif e.kind == MEMBER:
            members[e.src] += 1
    for n in nodes.values():
        if n.kind in ("schema", "intention") and n.id not in evidenced:
            out.orphan_nodes.append(n.id)
        elif n.kind == "core_schema" and members[n.id] < 2:
            out.hollow_cores.append(n.id)
    same: dict[tuple[str, str, str], list[str]] = defaultdict(list)
    for n in sorted(nodes.values(), key=lambda n: (n.created_at, n.id)):
        same[(n.kind, normalise(n.domain), normalise(n.text))].append(n.id)
    out.duplicate_nodes = [ids for ids in same.values() if len(ids) > 1]
    return out


def repair_graph(store: Store) -> GraphCheck:
    """Fix what `check_graph` finds (under the store's write lock); returns what was wrong.
    Duplicates are merged into the oldest node (their edges move to it); dangling and
    misfit edges are deleted; nodes without evidence or members are deleted with their
    edges. Repeated until clean, since each fix can expose another (a schema deleted
    leaves its core schema with one member)."""
    with store.write():
        found = check_graph(store)
        current = found
        for _ in range(5):
            if current.ok:
                break
            _fix(store, current)
            current = check_graph(store)
    return found


def _fix(store: Store, found: GraphCheck) -> None:
    if found.duplicate_nodes:
        keep_of = {dup: ids[0] for ids in found.duplicate_nodes for dup in ids[1:]}
        touched = [e for e in store.edges() if e.src in keep_of or e.dst in keep_of]
        moved = [Edge(e.kind, keep_of.get(e.src, e.src), keep_of.get(e.dst, e.dst)) for e in touched]
        store.add_edges([e for e in moved if e.src != e.dst])
        store.delete_edges([e.id for e in touched])
        store.delete_nodes(list(keep_of))
    store.delete_edges([*found.dangling_edges, *found.misfit_edges])
    doomed = set(found.orphan_nodes) | set(found.hollow_cores)
    if doomed:
        store.delete_edges([e.id for e in store.edges() if e.src in doomed or e.dst in doomed])
        store.delete_nodes(sorted(doomed))
