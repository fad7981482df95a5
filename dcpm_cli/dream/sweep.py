"""Phase 3, the cross-domain sweeper (only with the core-schema opt-in).

(a) Behavioural abstraction: each schema without one gets a short behavioural description
    from the LLM, embedded as E_beh and stored on the node (`behaviour`, `behaviour_vector`),
    so it is written once, not every night. E_sem is the schema text's own vector.
(b) Collision scan: for all cross-domain schema pairs at once (two matrix products),
    cos(E_beh) ≥ θ_beh and cos(E_sem) ≤ θ_sem; pairs high in both spaces are redundant
    (the same regularity filed under two domains), not collisions. Collisions are grouped
    with union-find, strongest first, and a group is not grown past `max_group` members (a
    core schema over a dozen habits says nothing).
(c) Core induction: a group already inside one core schema is left alone; a group that
    overlaps an existing core schema adds its new members to it, and one LLM call writes
    that core schema's text again over all its members; any other group gets one LLM call
    that writes a `core_schema` node, then `member` edges to each schema.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TypeVar

import numpy as np

from dcpm_cli.dream.induce import node_id
from dcpm_cli.errors import LLMBadReply
from dcpm_cli.llm import structured
from dcpm_cli.models import Edge, Node
from dcpm_cli.prompts import abstraction, core_schema
from dcpm_cli.store.graph import MEMBER

if TYPE_CHECKING:
    from dcpm_cli.dream.budget import Budget
    from dcpm_cli.embed import Embedder
    from dcpm_cli.llm import LLM
    from dcpm_cli.store import Store

Cos = TypeVar("Cos", float, np.ndarray)  # one cosine, or a matrix of them

BEHAVIOUR_BATCH = 8  # descriptions stored together (progress survives an interruption)


@dataclass
class Collision:
    a: str
    b: str
    cos_beh: float
    cos_sem: float


@dataclass
class SweepResult:
    behaviours: int = 0
    collisions: list[Collision] = field(default_factory=list)
    redundant: int = 0
    groups: list[list[str]] = field(default_factory=list)
    cores_created: int = 0
    members_added: int = 0
    cores_rewritten: int = 0  # existing core schemas induced again after new members joined
    failures: list[str] = field(default_factory=list)  # calls with no valid reply (retried next run)


def is_collision(cos_beh: Cos, cos_sem: Cos, theta_beh: float, theta_sem: float) -> Cos:
    """Alike in behaviour, unlike in meaning (the paper's Eq. 1); elementwise on arrays."""
    return (cos_beh >= theta_beh) & (cos_sem <= theta_sem)


def is_redundant(cos_beh: Cos, cos_sem: Cos, theta_beh: float, theta_sem: float) -> Cos:
    """High in both spaces: the same regularity in other words; elementwise on arrays."""
    return (cos_beh >= theta_beh) & (cos_sem > theta_sem)


def describe_behaviours(
    store: Store,
    embedder: Embedder,
    llm: LLM,
    budget: Budget,
    result: SweepResult,
    *,
    retries: int = 2,
    progress: Callable[[int, int], None] | None = None,
) -> None:
    """(a) Write and store the behavioural description of every schema that has none."""
    nodes, _, beh = store.node_vectors(["schema"])
    todo = [n for n, v in zip(nodes, beh, strict=True) if not n.behaviour or np.isnan(v).any()]
    todo.sort(key=lambda n: n.id)  # a stable order, whatever order the table returns
    batch: list[tuple[Node, str]] = []
    try:
        for n in todo:
            budget.check()
            try:
                got = structured(
                    llm, abstraction.messages(n), abstraction.Behaviour, retries=budget.retries(retries)
                )
            except LLMBadReply as e:
                result.failures.append(f"behaviour of {n.id}: no valid reply ({e.message})")
                continue
            batch.append((n, " ".join(got.behaviour.split())))
            if len(batch) >= BEHAVIOUR_BATCH:
                result.behaviours += _store_behaviours(store, embedder, batch)
                if progress:
                    progress(result.behaviours, len(todo))
    finally:
        result.behaviours += _store_behaviours(store, embedder, batch)


def _store_behaviours(store: Store, embedder: Embedder, batch: list[tuple[Node, str]]) -> int:
    if not batch:
        return 0
    vectors = embedder.embed([text for _, text in batch])
    with store.write():
        store.set_behaviours({n.id: (text, v) for (n, text), v in zip(batch, vectors, strict=True)})
    n = len(batch)
    batch.clear()
    return n


def collision_scan(
    nodes: list[Node], sem: np.ndarray, beh: np.ndarray, theta_beh: float, theta_sem: float
) -> tuple[list[Collision], int]:
    """(b) Cross-domain collisions among schemas with a behaviour vector, strongest first,
    and how many cross-domain pairs were redundant instead."""
    ok = ~np.isnan(beh).any(axis=1)
    idx = np.flatnonzero(ok)
    if len(idx) < 2:
        return [], 0
    S, B = sem[idx], beh[idx]
    cos_sem, cos_beh = S @ S.T, B @ B.T
    domains = np.array([nodes[i].domain for i in idx])
    cross = np.triu(domains[:, None] != domains[None, :], 1)
    hits = np.argwhere(cross & is_collision(cos_beh, cos_sem, theta_beh, theta_sem))
    redundant = int((cross & is_redundant(cos_beh, cos_sem, theta_beh, theta_sem)).sum())
    found = [
        Collision(nodes[idx[i]].id, nodes[idx[j]].id, float(cos_beh[i, j]), float(cos_sem[i, j]))
        for i, j in hits
    ]
    found.sort(key=lambda c: -c.cos_beh)
    return found, redundant


def collision_groups(collisions: list[Collision], max_group: int = 6) -> list[list[str]]:
    """Union-find over the collisions (given strongest first); a union that would make a
    group larger than `max_group` is skipped. Groups of two or more, largest first."""
    parent: dict[str, str] = {}
    size: dict[str, int] = {}

    def find(x: str) -> str:
        parent.setdefault(x, x)
        size.setdefault(x, 1)
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for c in collisions:
        ra, rb = find(c.a), find(c.b)
        if ra == rb or size[ra] + size[rb] > max_group:
            continue
        if size[ra] < size[rb]:
            ra, rb = rb, ra
        parent[rb] = ra
        size[ra] += size[rb]
    groups: dict[str, list[str]] = {}
    for x in parent:
        groups.setdefault(find(x), []).append(x)
    out = [sorted(g) for g in groups.values() if len(g) >= 2]
    out.sort(key=lambda g: (-len(g), g))
    return out


def induce_cores(
    store: Store,
    embedder: Embedder,
    llm: LLM,
    groups: list[list[str]],
    budget: Budget,
    result: SweepResult,
    *,
    retries: int = 2,
) -> None:
    """(c) One core schema per new collision group; existing core schemas grow instead."""
    members: dict[str, set[str]] = {}
    for e in store.edges([MEMBER]):
        members.setdefault(e.src, set()).add(e.dst)
    for group in groups:
        g = set(group)
        if any(g <= m for m in members.values()):
            continue
        overlap = max(members.items(), key=lambda kv: len(kv[1] & g), default=None)
        if overlap is not None and overlap[1] & g:
            core, have = overlap
            _grow_core(store, embedder, llm, core, have, g, budget, result, retries)
            continue
        budget.check()
        schemas = list(store.get_nodes(group).values())
        written = _core_text(llm, schemas, budget, retries, result)
        if written is None:
            continue
        text, domain = written
        node = Node(id=node_id("core_schema", domain, text), kind="core_schema", text=text, domain=domain)
        vector = embedder.embed([text])
        with store.write():
            store.add_nodes([node], vector)
            store.add_edges([Edge(MEMBER, node.id, s) for s in group])
        members[node.id] = set(group)
        result.cores_created += 1
        result.members_added += len(group)


def _core_text(
    llm: LLM, schemas: list[Node], budget: Budget, retries: int, result: SweepResult
) -> tuple[str, str] | None:
    """One core-induction call over these member schemas: (text, domain), or None when the
    model gives no valid reply (recorded; the next run tries again)."""
    try:
        got = structured(
            llm, core_schema.messages(schemas), core_schema.CoreSchema, retries=budget.retries(retries)
        )
    except LLMBadReply as e:
        ids = ", ".join(sorted(s.id for s in schemas))
        result.failures.append(f"core schema over {ids}: no valid reply ({e.message})")
        return None
    return " ".join(got.text.split()), "+".join(sorted({s.domain for s in schemas if s.domain}))


def _grow_core(
    store: Store,
    embedder: Embedder,
    llm: LLM,
    core: str,
    have: set[str],
    group: set[str],
    budget: Budget,
    result: SweepResult,
    retries: int,
) -> None:
    """New members join an existing core schema, whose text is then induced again over all
    its members: a pattern seen in a third domain is stated for all three, not the first two.
    The members are linked first, so a failed rewrite loses no edge (the text stays as it was)."""
    edges = [Edge(MEMBER, core, s) for s in sorted(group - have)]
    with store.write():
        store.add_edges(edges)
    have |= group
    result.members_added += len(edges)
    budget.check()
    written = _core_text(llm, list(store.get_nodes(sorted(have)).values()), budget, retries, result)
    if written is None:
        return
    text, domain = written
    with store.write():
        store.rewrite_node(core, text, domain, embedder.embed([text])[0])
    result.cores_rewritten += 1


def sweep(
    store: Store,
    embedder: Embedder,
    llm: LLM,
    budget: Budget,
    result: SweepResult,
    *,
    theta_beh: float,
    theta_sem: float,
    max_group: int = 6,
    retries: int = 2,
    progress: Callable[[int, int], None] | None = None,
) -> SweepResult:
    """Phase 3: (a), (b), (c), counted into `result`. Raises BudgetReached / LLMError like
    Phase 2; what was written before stays (behaviours in batches, each core schema with
    its edges)."""
    describe_behaviours(store, embedder, llm, budget, result, retries=retries, progress=progress)
    nodes, sem, beh = store.node_vectors(["schema"])
    result.collisions, result.redundant = collision_scan(nodes, sem, beh, theta_beh, theta_sem)
    result.groups = collision_groups(result.collisions, max_group)
    induce_cores(store, embedder, llm, result.groups, budget, result, retries=retries)
    return result
