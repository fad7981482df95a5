"""The graph G (`Graph`, composed into `Store` as `store.graph`): schema, intention and
core-schema nodes, evidence and structural edges; and the Store verbs System 2 reads items
and takes the dream lock with. Like the Store, the only code that knows these tables."""

from __future__ import annotations

import contextlib
import dataclasses
import os
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dcpm_cli.errors import LockBusy
from dcpm_cli.models import DreamRun, Edge, MemoryItem, Node, short_hash
from dcpm_cli.store import schemas as S
from dcpm_cli.store.base import Lance, cannot_write
from dcpm_cli.store.sql import in_list as _in
from dcpm_cli.store.sql import quote as _q

if TYPE_CHECKING:
    import numpy as np
    import pyarrow as pa

EVIDENCE = "evidence"  # edge kind: node → the fact id that supports it
MEMBER = "member"  # edge kind: core_schema → one of its member schemas
_CHUNK = 500  # ids per IN (...) filter


class Graph:
    """The graph G: schema, intention and core-schema nodes, evidence and member edges."""

    def __init__(self, lance: Lance) -> None:
        self._t = lance

    # -- nodes ----------------------------------------------------------------------------

    def add_nodes(self, nodes: Sequence[Node], vectors: np.ndarray) -> None:
        """Insert nodes; an id already present is left as it is (ids derive from content)."""
        if nodes:
            import pyarrow as pa

            empty = pa.nulls(len(nodes), S.initial(self._t.dim)[S.NODES].field("behaviour_vector").type)
            data = self._t.arrow_of(nodes, S.NODES, vectors, behaviour_vector=empty)
            # Lance treats an all-null vector column as "bad vectors"; null is what we mean.
            self._t.table(S.NODES).merge_insert("id").when_not_matched_insert_all().execute(
                data, on_bad_vectors="null"
            )

    def get_nodes(self, ids: Sequence[str]) -> dict[str, Node]:
        out: dict[str, Node] = {}
        for chunk in _chunks(ids):
            for r in self._t.rows(S.NODES, _in("id", chunk), _NODE_COLUMNS):
                out[r["id"]] = Lance.model_of(Node, r)
        return out

    def all_nodes(self, kinds: Sequence[str] | None = None) -> list[Node]:
        rows = self._t.rows(S.NODES, _in("kind", kinds) if kinds else None, _NODE_COLUMNS)
        return [Lance.model_of(Node, r) for r in rows]

    def node_vectors(self, kinds: Sequence[str] | None = None) -> tuple[list[Node], np.ndarray, np.ndarray]:
        """Nodes with their text vectors (E_sem) and behaviour vectors (E_beh; rows of NaN
        where no behavioural description was written yet)."""
        import numpy as np

        data = self._arrow(
            S.NODES, _in("kind", kinds) if kinds else None, [*_NODE_COLUMNS, "vector", "behaviour_vector"]
        )
        nodes = [Lance.model_of(Node, r) for r in data.select(_NODE_COLUMNS).to_pylist()]
        sem = _matrix(data.column("vector"), self._t.dim)
        beh = np.full((len(nodes), self._t.dim), np.nan, dtype=np.float32)
        col = data.column("behaviour_vector").combine_chunks() if len(nodes) else None
        if col is not None and col.null_count < len(col):
            valid = np.asarray(col.is_valid().to_numpy(zero_copy_only=False))
            beh[valid] = _matrix(col.filter(col.is_valid()), self._t.dim)
        return nodes, sem, beh

    def set_behaviours(self, behaviours: dict[str, tuple[str, np.ndarray]]) -> None:
        """Store Phase 3's behavioural description and its vector (E_beh) on schema nodes."""
        if not behaviours:
            return
        import pyarrow as pa

        ids = list(behaviours)
        parts = [self._arrow(S.NODES, _in("id", chunk), None) for chunk in _chunks(ids)]
        data = pa.concat_tables(parts) if parts else None
        if data is None or data.num_rows == 0:
            return
        order = data.column("id").to_pylist()
        texts = [behaviours[i][0] for i in order]
        vectors = [[float(x) for x in behaviours[i][1]] for i in order]
        schema = data.schema
        data = data.set_column(schema.get_field_index("behaviour"), "behaviour", pa.array(texts, pa.string()))
        field = schema.field("behaviour_vector")
        data = data.set_column(
            schema.get_field_index("behaviour_vector"), field, pa.array(vectors, field.type)
        )
        self._t.table(S.NODES).merge_insert("id").when_matched_update_all().execute(data)

    def rewrite_node(self, node_id: str, text: str, domain: str, vector: np.ndarray) -> None:
        """A node's text (and its vector, E_sem) and domain rewritten in place, id kept: a
        core schema re-induced when members join. Its behavioural description stays."""
        import pyarrow as pa

        from dcpm_cli.models import utcnow

        data = self._arrow(S.NODES, _in("id", [node_id]), None)
        if data.num_rows == 0:
            return
        schema = data.schema
        for name, value in (("text", text), ("domain", domain)):
            data = data.set_column(schema.get_field_index(name), name, pa.array([value], pa.string()))
        when = schema.field("updated_at")
        data = data.set_column(schema.get_field_index("updated_at"), when, pa.array([utcnow()], when.type))
        field = schema.field("vector")
        data = data.set_column(
            schema.get_field_index("vector"), field, pa.array([[float(x) for x in vector]], field.type)
        )
        self._t.table(S.NODES).merge_insert("id").when_matched_update_all().execute(
            data, on_bad_vectors="null"
        )

    def delete_nodes(self, ids: Sequence[str]) -> None:
        for chunk in _chunks(ids):
            self._t.table(S.NODES).delete(_in("id", chunk))

    def node_counts(self) -> dict[tuple[str, str], int]:
        """(kind, domain) → nodes."""
        counts: dict[tuple[str, str], int] = {}
        for r in self._t.rows(S.NODES, None, ["kind", "domain"]):
            key = (r["kind"], r["domain"] or "")
            counts[key] = counts.get(key, 0) + 1
        return counts

    # -- edges ----------------------------------------------------------------------------

    def add_edges(self, edges: Sequence[Edge]) -> None:
        """Insert edges; an edge already present (same kind, src, dst) is left as it is."""
        if edges:
            data = self._t.arrow_of(edges, S.EDGES)
            self._t.table(S.EDGES).merge_insert("id").when_not_matched_insert_all().execute(data)

    def edges(self, kinds: Sequence[str] | None = None) -> list[Edge]:
        rows = self._t.rows(S.EDGES, _in("kind", kinds) if kinds else None, _EDGE_COLUMNS)
        return [Lance.model_of(Edge, r) for r in rows]

    def known_edge_ids(self, ids: Sequence[str]) -> set[str]:
        known: set[str] = set()
        for chunk in _chunks(ids):
            known.update(r["id"] for r in self._t.rows(S.EDGES, _in("id", chunk), ["id"]))
        return known

    def delete_edges(self, ids: Sequence[str]) -> None:
        for chunk in _chunks(ids):
            self._t.table(S.EDGES).delete(_in("id", chunk))

    def nodes_with_evidence(self, fact_ids: Sequence[str]) -> dict[str, list[str]]:
        """node id → the given fact ids its evidence edges point to."""
        out: dict[str, list[str]] = {}
        for chunk in _chunks(fact_ids):
            where = f"kind = '{EVIDENCE}' AND {_in('dst', chunk)}"
            for r in self._t.rows(S.EDGES, where, ["src", "dst"]):
                out.setdefault(r["src"], []).append(r["dst"])
        return out

    def evidence_of(self, node_id: str) -> list[str]:
        """The fact ids a node's evidence edges point to."""
        rows = self._t.rows(S.EDGES, f"kind = '{EVIDENCE}' AND src = {_q(node_id)}", ["dst"])
        return sorted(r["dst"] for r in rows)

    def members_of(self, core_id: str) -> list[str]:
        """The member schema ids of a core schema."""
        rows = self._t.rows(S.EDGES, f"kind = '{MEMBER}' AND src = {_q(core_id)}", ["dst"])
        return sorted(r["dst"] for r in rows)

    def evidence_for(self, node_ids: Sequence[str]) -> dict[str, list[str]]:
        """node id → every fact id its evidence edges point to."""
        out: dict[str, list[str]] = {}
        for chunk in _chunks(node_ids):
            for r in self._t.rows(S.EDGES, f"kind = '{EVIDENCE}' AND {_in('src', chunk)}", ["src", "dst"]):
                out.setdefault(r["src"], []).append(r["dst"])
        return out

    def members_for(self, *, cores: Sequence[str] = (), schemas: Sequence[str] = ()) -> dict[str, list[str]]:
        """core schema id → all its member schema ids, for the given cores and for the cores
        that have any of the given schemas as a member."""
        found = set(cores)
        for chunk in _chunks(schemas):
            where = f"kind = '{MEMBER}' AND {_in('dst', chunk)}"
            found.update(r["src"] for r in self._t.rows(S.EDGES, where, ["src"]))
        out: dict[str, list[str]] = {}
        for chunk in _chunks(sorted(found)):
            for r in self._t.rows(S.EDGES, f"kind = '{MEMBER}' AND {_in('src', chunk)}", ["src", "dst"]):
                out.setdefault(r["src"], []).append(r["dst"])
        return {core: sorted(m) for core, m in out.items()}

    def evidence_counts(self) -> dict[str, int]:
        """node id → number of evidence edges."""
        counts: dict[str, int] = {}
        for r in self._t.rows(S.EDGES, f"kind = '{EVIDENCE}'", ["src"]):
            counts[r["src"]] = counts.get(r["src"], 0) + 1
        return counts

    def evidenced_fact_ids(self) -> set[str]:
        """Items already used as evidence by some node (dangling edges included: the
        integrity check removes those before a dream triages)."""
        return {r["dst"] for r in self._t.rows(S.EDGES, f"kind = '{EVIDENCE}'", ["dst"])}

    def _arrow(self, table: str, where: str | None, columns: Sequence[str] | None) -> pa.Table:
        q = self._t.table(table).search()
        if where:
            q = q.where(where)
        if columns:
            q = q.select(list(columns))
        return q.limit(None).to_arrow()


class GraphVerbs:
    dim: int
    uri: str
    local_path: Path | None
    _machine_dir: Callable[[], Path]  # provided by JournalVerbs (annotated only: a stub would shadow it)

    graph: Graph  # composed by Store

    if TYPE_CHECKING:  # provided by Store

        def dream_runs(self, n: int | None = 10) -> list[DreamRun]: ...
        def _rows(
            self, table: str, where: str | None, columns: Any = None, limit: int | None = None
        ) -> list: ...
        def table(self, name: str) -> Any: ...

    # -- nodes and edges (Graph) ---------------------------------------------------------

    def add_nodes(self, nodes: Sequence[Node], vectors: np.ndarray) -> None:
        self.graph.add_nodes(nodes, vectors)

    def get_nodes(self, ids: Sequence[str]) -> dict[str, Node]:
        return self.graph.get_nodes(ids)

    def all_nodes(self, kinds: Sequence[str] | None = None) -> list[Node]:
        return self.graph.all_nodes(kinds)

    def node_vectors(self, kinds: Sequence[str] | None = None) -> tuple[list[Node], np.ndarray, np.ndarray]:
        return self.graph.node_vectors(kinds)

    def set_behaviours(self, behaviours: dict[str, tuple[str, np.ndarray]]) -> None:
        self.graph.set_behaviours(behaviours)

    def rewrite_node(self, node_id: str, text: str, domain: str, vector: np.ndarray) -> None:
        self.graph.rewrite_node(node_id, text, domain, vector)

    def delete_nodes(self, ids: Sequence[str]) -> None:
        self.graph.delete_nodes(ids)

    def node_counts(self) -> dict[tuple[str, str], int]:
        return self.graph.node_counts()

    def add_edges(self, edges: Sequence[Edge]) -> None:
        self.graph.add_edges(edges)

    def edges(self, kinds: Sequence[str] | None = None) -> list[Edge]:
        return self.graph.edges(kinds)

    def known_edge_ids(self, ids: Sequence[str]) -> set[str]:
        return self.graph.known_edge_ids(ids)

    def delete_edges(self, ids: Sequence[str]) -> None:
        self.graph.delete_edges(ids)

    def nodes_with_evidence(self, fact_ids: Sequence[str]) -> dict[str, list[str]]:
        return self.graph.nodes_with_evidence(fact_ids)

    def evidence_of(self, node_id: str) -> list[str]:
        return self.graph.evidence_of(node_id)

    def members_of(self, core_id: str) -> list[str]:
        return self.graph.members_of(core_id)

    def evidence_for(self, node_ids: Sequence[str]) -> dict[str, list[str]]:
        return self.graph.evidence_for(node_ids)

    def members_for(self, *, cores: Sequence[str] = (), schemas: Sequence[str] = ()) -> dict[str, list[str]]:
        return self.graph.members_for(cores=cores, schemas=schemas)

    def evidence_counts(self) -> dict[str, int]:
        return self.graph.evidence_counts()

    def evidenced_fact_ids(self) -> set[str]:
        return self.graph.evidenced_fact_ids()

    # -- items, as System 2 reads them ----------------------------------------------------

    def superseded_ids(self, ids: Sequence[str]) -> set[str]:
        """The given item ids that a later state has superseded."""
        out: set[str] = set()
        for chunk in _chunks(ids):
            where = f"{_in('id', chunk)} AND superseded_by IS NOT NULL"
            out.update(r["id"] for r in self._rows(S.ITEMS, where, ["id"]))
        return out

    def items_with_vectors(
        self, kinds: Sequence[str], *, current_only: bool = True
    ) -> tuple[list[MemoryItem], np.ndarray]:
        """Items of these kinds (current ones only, by default) with their vectors. Streamed
        in batches into one preallocated array, with only the fields System 2 reads filled in
        (id, kind, text, topic, event_at, chain pointers): a dream may read tens of thousands."""
        import numpy as np

        where = _in("kind", kinds)
        if current_only:
            where += " AND superseded_by IS NULL"
        table = self.table(S.ITEMS)
        vectors = np.empty((table.count_rows(where), self.dim), dtype=np.float32)
        extra: list[np.ndarray] = []  # rows added by a concurrent writer after the count
        items: list[MemoryItem] = []
        query = table.search().where(where).select([*_TRIAGE_COLUMNS, "vector"]).limit(None)
        for batch in query.to_batches(8192):
            columns = [batch.column(c).to_pylist() for c in _TRIAGE_COLUMNS]
            items += [
                MemoryItem(**dict(zip(_TRIAGE_COLUMNS, row, strict=True)))
                for row in zip(*columns, strict=True)
            ]
            block = _matrix(batch.column("vector"), self.dim)
            start, room = len(items) - len(block), len(vectors) - (len(items) - len(block))
            vectors[start : start + min(room, len(block))] = block[: max(room, 0)]
            if room < len(block):
                extra.append(block[max(room, 0) :])
        if extra:
            vectors = np.concatenate([vectors, *extra])
        return items, vectors[: len(items)]

    def existing_item_ids(self, ids: Sequence[str]) -> dict[str, str]:
        """id → kind, for the ids that are memory items."""
        out: dict[str, str] = {}
        for chunk in _chunks(ids):
            out.update((r["id"], r["kind"]) for r in self._rows(S.ITEMS, _in("id", chunk), ["id", "kind"]))
        return out

    # -- the dream run log (kept by store/runs.py) ----------------------------------------

    def last_dream_runs(self, n: int = 3) -> list[dict[str, Any]]:
        """A short summary of the last n runs (for `dcpm stats`); a run still marked running
        while no dream holds the lock was interrupted."""
        runs = self.dream_runs(n)
        if any(r.status == "running" for r in runs) and not self.dream_running():
            for r in runs:
                r.status = "interrupted" if r.status == "running" else r.status
        return [
            {
                "started": r.started_at.isoformat(timespec="seconds"),
                "status": r.status,
                "mode": r.mode + ("+core" if r.core_schemas else ""),
                "clusters": f"{r.clusters_done}/{r.clusters}",
                "applied": r.actions_applied,
                "rejected": r.actions_rejected,
                "llm_calls": r.llm_calls,
                "tokens": r.prompt_tokens + r.completion_tokens,
                "seconds": round(r.seconds, 1),
            }
            for r in runs
        ]

    # -- the dream lock -------------------------------------------------------------------

    @contextlib.contextmanager
    def dream_lock(self) -> Iterator[None]:
        """Held for a whole dream, never waited for: a second dream fails at once (LockBusy).
        Separate from `write()`, which writers hold only for short sections, so `dcpm add`
        keeps working during a dream."""
        from filelock import FileLock, Timeout

        path = self._dream_lock_path()
        lock = FileLock(str(path), timeout=0)
        try:
            lock.acquire()
        except Timeout as e:
            raise LockBusy(
                "another `dcpm dream` is running on this store",
                "wait for it to finish; a cron job can simply run again later",
            ) from e
        except OSError as e:  # a read-only store: a dream writes, so it cannot run
            if (refused := cannot_write(self.uri, e)) is None:
                raise
            raise refused from e
        holder = path.with_suffix(".pid")
        try:
            holder.write_text(str(os.getpid()), encoding="utf-8")
            yield
        finally:
            holder.unlink(missing_ok=True)
            lock.release()

    def dream_running(self) -> bool:
        """Whether a dream holds the lock right now: read from the process id the dream
        records beside it, never by taking the lock (a probe holding it for a moment made a
        dream starting in that moment exit 5)."""
        try:
            pid = int(self._dream_lock_path().with_suffix(".pid").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return False
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False  # killed without cleaning up
        except PermissionError:
            return True
        return True

    def _dream_lock_path(self) -> Path:
        if self.local_path is not None:
            return self.local_path / ".dream.lock"
        # an object store: one dream at a time per machine
        path = self._machine_dir() / "locks" / f"dream-{short_hash(self.uri)}.lock"
        path.parent.mkdir(parents=True, exist_ok=True)
        return path


def _chunks(ids: Sequence[str]) -> Iterator[list[str]]:
    ids = list(ids)
    for i in range(0, len(ids), _CHUNK):
        yield ids[i : i + _CHUNK]


def _matrix(column: Any, dim: int) -> np.ndarray:
    """A fixed-size-list vector column as a (rows, dim) float32 array."""
    import numpy as np

    arr = column.combine_chunks() if hasattr(column, "combine_chunks") else column
    if len(arr) == 0:
        return np.zeros((0, dim), dtype=np.float32)
    values = arr.flatten()
    # Without nulls the float buffer is used in place (no second copy of every vector).
    flat = values.to_numpy(zero_copy_only=values.null_count == 0)
    return np.asarray(flat, dtype=np.float32).reshape(len(arr), dim)


_NODE_COLUMNS = [f.name for f in dataclasses.fields(Node)]
_EDGE_COLUMNS = [f.name for f in dataclasses.fields(Edge)]
_TRIAGE_COLUMNS = ["id", "kind", "text", "topic", "event_at", "supersedes", "superseded_by"]
