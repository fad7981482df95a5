"""Phase 2: one induction call per cluster; every action validated, the valid ones applied in
the order emitted, the invalid ones logged and skipped (never applied).

Validation, per action:
- create_schema / create_intention: a text; a life domain (the cluster's dominant topic if
  the model gives none); evidence facts that exist (labels F1.. of the cluster, or ids of
  facts in the store; none given = the whole cluster); a `ref` used once. The node's id is
  derived from (kind, domain, normalised text), so re-running on the same facts finds the
  same node and only adds evidence; a node of the same kind and domain whose text embeds
  within `dedupe_cos` of the new one is reused the same way (small models paraphrase).
- add_evidence: the node exists (or was created earlier in this reply) and is a schema or
  intention; facts as above.
- add_edge: both ends are nodes, different, and the relation is one of the closed set.

Each cluster is committed as a unit under the store's write lock, nodes first and edges
second. Lance commits each table atomically but has no multi-table transaction, so a kill
between the two leaves schema/intention nodes without evidence; `integrity.check_graph`
reports those and the next dream removes them before it triages, and since their facts
never became evidence they are clustered and induced again.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import UTC, tzinfo
from typing import TYPE_CHECKING

import numpy as np

from dcpm_cli.llm import structured
from dcpm_cli.models import Edge, Node, normalise, short_hash
from dcpm_cli.prompts import induction
from dcpm_cli.store.graph import EVIDENCE

if TYPE_CHECKING:
    from dcpm_cli.dream.triage import Cluster, GraphIndex
    from dcpm_cli.embed import Embedder
    from dcpm_cli.llm import LLM
    from dcpm_cli.store import Store

CREATES = {"create_schema": "schema", "create_intention": "intention"}
EVIDENCE_TARGETS = ("schema", "intention")


def node_id(kind: str, domain: str, text: str) -> str:
    """Content-derived: the same node text in the same domain is the same node."""
    return "n_" + short_hash(kind, normalise(domain), normalise(text))


def clean_domain(value: str | None) -> str:
    """One lowercase word-ish label: 'Work & Career' → 'work-career'."""
    words = re.findall(r"[a-z0-9]+", (value or "").casefold())
    return "-".join(words[:3])


@dataclass
class Outcome:
    """What one cluster's induction did."""

    actions: int = 0
    applied: int = 0
    rejected: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    nodes: list[Node] = field(default_factory=list)
    vectors: list[np.ndarray] = field(default_factory=list)
    edges: list[Edge] = field(default_factory=list)
    nodes_created: int = 0
    evidence_added: int = 0
    edges_added: int = 0

    @property
    def declined(self) -> bool:
        """The model said, validly, that there is nothing to do: `{"actions": []}`. Only this
        is remembered (the same facts are not asked again)."""
        return self.actions == 0

    @property
    def failed(self) -> bool:
        """The reply had actions and none was valid: a failure, asked again next run."""
        return self.actions > 0 and self.applied == 0


def ask(llm: LLM, cl: Cluster, graph: GraphIndex, retries: int, zone: tzinfo = UTC) -> list[induction.Action]:
    """The induction call for one cluster."""
    reply = induction.reply_model(len(cl.facts), [n.id for n, _ in cl.nearest] + list(cl.evidence_nodes))
    return structured(llm, prompt(cl, graph, zone), reply, retries=retries).actions


def prompt(cl: Cluster, graph: GraphIndex, zone: tzinfo = UTC) -> list[dict[str, str]]:
    labels = {f.id: induction.fact_label(i) for i, f in enumerate(cl.facts)}
    nearest = [(n, sim, graph.evidence.get(n.id, 0)) for n, sim in cl.nearest]
    touching = [
        (node, [labels[f] for f in fids if f in labels], graph.evidence.get(node.id, 0))
        for node_id, fids in cl.evidence_nodes.items()
        if (node := graph.get(node_id)) is not None
    ]
    return induction.messages(cl.facts, nearest, touching, zone)


def plan(
    store: Store,
    embedder: Embedder,
    cl: Cluster,
    graph: GraphIndex,
    actions: list[induction.Action],
    *,
    dedupe_cos: float = 0.92,
) -> Outcome:
    """Validate the actions in order against the graph as it stands plus what earlier
    actions of this reply created; nothing is written here."""
    out = _Planner(store, embedder, cl, graph, dedupe_cos)
    for n, action in enumerate(actions, 1):
        out.outcome.actions += 1
        why = out.apply(action)
        if why:
            out.outcome.rejected.append(f"cluster {cl.index + 1}, action {n} {action.action}: {why}")
        else:
            out.outcome.applied += 1
    return out.outcome


def commit(store: Store, graph: GraphIndex, outcome: Outcome) -> None:
    """Write one cluster's result: nodes, then edges, each one atomic Lance commit."""
    with store.write():
        known_nodes = set(store.get_nodes([n.id for n in outcome.nodes]))
        fresh = [i for i, n in enumerate(outcome.nodes) if n.id not in known_nodes]
        if fresh:
            store.add_nodes([outcome.nodes[i] for i in fresh], np.stack([outcome.vectors[i] for i in fresh]))
        known_edges = store.known_edge_ids([e.id for e in outcome.edges])
        new_edges = [e for e in outcome.edges if e.id not in known_edges]
        store.add_edges(new_edges)
    outcome.nodes_created = len(fresh)
    outcome.evidence_added = sum(e.kind == EVIDENCE for e in new_edges)
    outcome.edges_added = len(new_edges) - outcome.evidence_added
    for node, vector in zip(outcome.nodes, outcome.vectors, strict=True):
        graph.add(node, vector)
    for e in new_edges:
        if e.kind == EVIDENCE:
            graph.add_evidence(e.src, e.dst)


class _Planner:
    def __init__(self, store: Store, embedder: Embedder, cl: Cluster, graph: GraphIndex, dedupe_cos: float):
        self.store, self.embedder, self.cl, self.graph = store, embedder, cl, graph
        self.dedupe_cos = dedupe_cos
        self.outcome = Outcome()
        self.labels = {induction.fact_label(i).casefold(): f.id for i, f in enumerate(cl.facts)}
        self.cluster_ids = set(cl.fact_ids)
        self.refs: dict[str, str] = {}
        self.new: dict[str, tuple[Node, np.ndarray]] = {}
        self.edges: dict[str, Edge] = {}
        self._kinds: dict[str, str] = {}  # other node ids seen in the store → kind

    # -- one action -----------------------------------------------------------------------

    def apply(self, a: induction.Action) -> str:
        """Apply one action to the plan; return why it was refused ('' if applied)."""
        if a.action in CREATES:
            return self._create(a, CREATES[a.action])
        if a.action == "add_evidence":
            return self._add_evidence(a)
        return self._add_edge(a)

    def _create(self, a: induction.Action, kind: str) -> str:
        text = " ".join((a.text or "").split())
        if len(text) < 8:
            return "no text" if not text else f"text too short ({text!r})"
        domain = clean_domain(a.domain) or clean_domain(self.cl.topic)
        if not domain:
            return "no life domain"
        facts, bad = self._facts(a.facts)
        if bad:
            return f"unknown fact ids {', '.join(bad)}"
        ref = (a.ref or "").strip()
        if ref and ref in self.refs:
            return f"ref {ref!r} used twice"
        vector = self.embedder.embed([text])[0]
        target = self._same_node(kind, domain, text, vector)
        if target is None:
            node = Node(id=node_id(kind, domain, text), kind=kind, text=text, domain=domain)
            self.new[node.id] = (node, vector)
            self.outcome.nodes.append(node)
            self.outcome.vectors.append(vector)
            target = node.id
        if ref:
            self.refs[ref] = target
        self._evidence(target, facts)
        return ""

    def _add_evidence(self, a: induction.Action) -> str:
        target, kind = self._node(a.node)
        if target is None:
            return f"no node {a.node!r}"
        if kind not in EVIDENCE_TARGETS:
            return f"{target} is a {kind}: evidence goes to schemas and intentions"
        facts, bad = self._facts(a.facts)
        if bad:
            return f"unknown fact ids {', '.join(bad)}"
        self._evidence(target, facts)
        return ""

    def _add_edge(self, a: induction.Action) -> str:
        src, _ = self._node(a.src)
        dst, _ = self._node(a.dst)
        if src is None or dst is None:
            missing = a.src if src is None else a.dst
            return f"no node {missing!r}"
        if src == dst:
            return "an edge from a node to itself"
        relation = "_".join(re.findall(r"[a-z]+", (a.relation or "related_to").casefold()))
        if relation not in induction.RELATIONS:
            return f"relation {a.relation!r} is not one of {', '.join(induction.RELATIONS)}"
        edge = Edge(relation, src, dst)
        self.edges.setdefault(edge.id, edge)
        self.outcome.edges = list(self.edges.values())
        return ""

    # -- resolution -----------------------------------------------------------------------

    def _facts(self, given: list[str] | None) -> tuple[list[str], list[str]]:
        """(fact ids, labels that name no fact); none given = the whole cluster."""
        if not given:
            return list(self.cl.fact_ids), []
        ids: list[str] = []
        bad: list[str] = []
        unknown: list[str] = []
        for raw in given:
            key = re.sub(r"\s+", "", str(raw)).casefold()
            if key in self.labels:
                ids.append(self.labels[key])
            elif str(raw).strip() in self.cluster_ids:
                ids.append(str(raw).strip())
            else:
                unknown.append(str(raw).strip())
        if unknown:
            kinds = self.store.existing_item_ids(unknown)
            for u in unknown:
                (ids if kinds.get(u) == "fact" else bad).append(u)
        return list(dict.fromkeys(ids)), bad

    def _node(self, ref: str | None) -> tuple[str | None, str | None]:
        """A node id (or a ref from this reply) → (id, kind); (None, None) if unknown."""
        key = (ref or "").strip()
        if not key:
            return None, None
        key = self.refs.get(key, key)
        if key in self.new:
            return key, self.new[key][0].kind
        node = self.graph.get(key)
        if node is not None:
            return key, node.kind
        if key not in self._kinds:
            found = self.store.get_nodes([key]).get(key)
            self._kinds[key] = found.kind if found else ""
        return (key, self._kinds[key]) if self._kinds[key] else (None, None)

    def _same_node(self, kind: str, domain: str, text: str, vector: np.ndarray) -> str | None:
        """An existing node this create would duplicate: same id, or same kind and domain
        with a near-identical text."""
        nid = node_id(kind, domain, text)
        if nid in self.new or self.graph.get(nid) is not None:
            self.outcome.notes.append(f"{kind} {nid} exists: evidence added instead")
            return nid
        candidates = [(n.id, n) for n, _ in self.graph.nearest(vector, 5, self.dedupe_cos)]
        candidates += [(i, n) for i, (n, v) in self.new.items() if float(v @ vector) >= self.dedupe_cos]
        for cid, n in candidates:
            if n.kind == kind and n.domain == domain:
                self.outcome.notes.append(f"{kind} {text!r} ≈ {cid}: evidence added instead")
                return cid
        return None

    def _evidence(self, node: str, facts: list[str]) -> None:
        for f in facts:
            edge = Edge(EVIDENCE, node, f)
            self.edges.setdefault(edge.id, edge)
        self.outcome.edges = list(self.edges.values())
