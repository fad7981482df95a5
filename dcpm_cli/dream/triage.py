"""Phase 1 (no LLM): triage the facts not yet consolidated, cluster them, and give each
cluster its centroid and graph context in both directions.

Triage scope: current `fact` items (not superseded) that are not yet the evidence of any
schema or intention. Identity items are left out: they are already durable abstractions
("is vegetarian"), not the turn-level observations schemas are induced from; summaries are
too diffuse. Superseded facts are left out too, so schemas rest on what is believed now;
with `no_supersedes` (the ablation) they are clustered like any other fact, as a store
without chains would have them.

Graph context: the nearest existing schema/intention nodes to the centroid, and the nodes
whose evidence edges already point into the cluster's facts *or their earlier versions*
(the facts they supersede): the second direction is what makes a revised belief meet the
schema built on its predecessor.
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from dcpm_cli.dream import cluster as C
from dcpm_cli.models import MemoryItem, Node, short_hash
from dcpm_cli.store.graph import EVIDENCE

if TYPE_CHECKING:
    from dcpm_cli.store import Store

CONSOLIDATED_BY = ("schema", "intention")  # nodes whose evidence takes a fact out of triage


@dataclass
class Cluster:
    index: int
    facts: list[MemoryItem]
    centroid: np.ndarray
    nearest: list[tuple[Node, float]] = field(default_factory=list)
    evidence_nodes: dict[str, list[str]] = field(default_factory=dict)  # node id → fact ids it touches

    @property
    def fact_ids(self) -> list[str]:
        return [f.id for f in self.facts]

    @property
    def signature(self) -> str:
        """The same set of facts gives the same signature, night after night."""
        return short_hash(*sorted(self.fact_ids), n=16)

    @property
    def topic(self) -> str:
        """The most common topic among the facts (a fallback life domain)."""
        topics = Counter(f.topic for f in self.facts if f.topic)
        return topics.most_common(1)[0][0] if topics else ""


@dataclass
class Triage:
    facts: int = 0
    clusters: list[Cluster] = field(default_factory=list)
    declined: list[Cluster] = field(default_factory=list)  # same facts declined on an earlier night
    noise: int = 0
    seconds: float = 0.0


class GraphIndex:
    """Schema and intention nodes with their vectors and evidence, kept in memory for a run
    and extended as Phase 2 commits (the graph is small: D·s̄ nodes, not millions)."""

    def __init__(self, nodes: list[Node], vectors: np.ndarray, evidence: list[tuple[str, str]]) -> None:
        self.nodes = list(nodes)
        self.vectors = np.asarray(vectors, dtype=np.float32)
        self.by_id = {n.id: i for i, n in enumerate(self.nodes)}
        self.evidence: dict[str, int] = {}  # node id → evidence edges
        self.nodes_of_fact: dict[str, set[str]] = {}  # fact id → nodes citing it
        for node_id, fact_id in evidence:
            self.add_evidence(node_id, fact_id)

    @classmethod
    def load(cls, store: Store) -> GraphIndex:
        nodes, sem, _ = store.node_vectors(CONSOLIDATED_BY)
        return cls(nodes, sem, [(e.src, e.dst) for e in store.edges([EVIDENCE])])

    def add_evidence(self, node_id: str, fact_id: str) -> None:
        self.evidence[node_id] = self.evidence.get(node_id, 0) + 1
        self.nodes_of_fact.setdefault(fact_id, set()).add(node_id)

    def add(self, node: Node, vector: np.ndarray) -> None:
        if node.id in self.by_id:
            return
        self.by_id[node.id] = len(self.nodes)
        self.nodes.append(node)
        self.vectors = np.vstack([self.vectors.reshape(-1, len(vector)), vector[None, :].astype(np.float32)])

    def get(self, node_id: str) -> Node | None:
        i = self.by_id.get(node_id)
        return None if i is None else self.nodes[i]

    def nearest(self, vector: np.ndarray, k: int, min_cos: float = 0.0) -> list[tuple[Node, float]]:
        if not self.nodes or k <= 0:
            return []
        sims = self.vectors @ vector
        top = np.argsort(-sims)[:k]
        return [(self.nodes[i], float(sims[i])) for i in top if sims[i] >= min_cos]


def triage(
    store: Store,
    graph: GraphIndex,
    *,
    eps1: float,
    eps2: float,
    min_samples: int,
    max_cluster: int,
    context_k: int = 5,
    context_min_cos: float = 0.2,
    include_superseded: bool = False,
    skip_declined: bool = True,
) -> Triage:
    """Phase 1: facts to consolidate → two-stage DBSCAN → clusters with graph context."""
    t0 = time.perf_counter()
    facts, vectors = store.items_with_vectors(["fact"], current_only=not include_superseded)
    done = store.evidenced_fact_ids() | store.facts_set_aside()  # aside: a forgotten node's facts
    keep = [i for i, f in enumerate(facts) if f.id not in done]
    if len(keep) < len(facts):
        facts, vectors = [facts[i] for i in keep], vectors[keep]
    out = Triage(facts=len(facts))
    if len(facts) >= min_samples:
        labels = C.two_stage_dbscan(vectors, eps1, eps2, min_samples, max_cluster)
        out.noise = int((labels < 0).sum())
        declined = store.declined_clusters() if skip_declined else set()
        order = np.argsort(labels, kind="stable")
        bounds = np.searchsorted(labels[order], np.arange(int(labels.max()) + 2))
        # Oldest first: a prompt reads as a timeline, and clusters come in time order.
        groups = [
            sorted(order[bounds[c] : bounds[c + 1]].tolist(), key=lambda i: (facts[i].event_at, facts[i].id))
            for c in range(int(labels.max()) + 1)
        ]
        groups.sort(key=lambda rows: (facts[rows[0]].event_at, facts[rows[0]].id))
        for index, rows in enumerate(groups):
            cl = Cluster(
                index=index,
                facts=[facts[i] for i in rows],
                centroid=C.centroid(vectors[rows]),
            )
            (out.declined if cl.signature in declined else out.clusters).append(cl)
        for cl in out.clusters:
            add_context(graph, cl, context_k, context_min_cos)
    else:
        out.noise = len(facts)
    out.seconds = time.perf_counter() - t0
    return out


def add_context(graph: GraphIndex, cl: Cluster, k: int, min_cos: float) -> None:
    """Graph context in both directions (refreshed before each induction call, so a node
    created for one cluster is seen by the next)."""
    cl.nearest = graph.nearest(cl.centroid, k, min_cos)
    touched: dict[str, set[str]] = {}
    for f in cl.facts:
        for fact_id in (f.id, f.supersedes):
            for node_id in graph.nodes_of_fact.get(fact_id or "", ()):
                if graph.get(node_id) is not None:
                    touched.setdefault(node_id, set()).add(f.id)
    cl.evidence_nodes = {node_id: sorted(facts) for node_id, facts in touched.items()}
