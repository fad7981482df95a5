"""Store verbs over the graph G: schema, intention and core-schema nodes, evidence and
structural edges. Mixed into `Store`; like it, the only code that knows these tables."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from dcpm_cli.models import Edge, Node
from dcpm_cli.store import schemas as S
from dcpm_cli.store.sql import in_list as _in

if TYPE_CHECKING:
    import numpy as np


class GraphVerbs:
    dim: int

    # provided by Store
    def _rows(self, table: str, where: str | None, columns: Any = None, limit: int | None = None) -> list: ...
    def table(self, name: str) -> Any: ...
    def _table_of(self, objs: Any, table: str, vectors: Any = None, **extra: Any) -> Any: ...
    @staticmethod
    def _from_row(cls: Any, row: dict[str, Any]) -> Any: ...

    def add_nodes(self, nodes: Sequence[Node], vectors: np.ndarray) -> None:
        if nodes:
            import pyarrow as pa

            empty = pa.nulls(len(nodes), S.initial(self.dim)[S.NODES].field("behaviour_vector").type)
            data = self._table_of(nodes, S.NODES, vectors, behaviour_vector=empty)
            self.table(S.NODES).merge_insert("id").when_not_matched_insert_all().execute(data)

    def add_edges(self, edges: Sequence[Edge]) -> None:
        if edges:
            data = self._table_of(edges, S.EDGES)
            self.table(S.EDGES).merge_insert("id").when_not_matched_insert_all().execute(data)

    def nodes_with_evidence(self, fact_ids: Sequence[str]) -> dict[str, list[str]]:
        """node id → the given fact ids its evidence edges point to."""
        if not fact_ids:
            return {}
        out: dict[str, list[str]] = {}
        for r in self._rows(S.EDGES, f"kind = 'evidence' AND {_in('dst', fact_ids)}", ["src", "dst"]):
            out.setdefault(r["src"], []).append(r["dst"])
        return out

    def get_nodes(self, ids: Sequence[str]) -> dict[str, Node]:
        if not ids:
            return {}
        rows = self._rows(S.NODES, _in("id", ids), _NODE_COLUMNS)
        return {r["id"]: self._from_row(Node, r) for r in rows}


_NODE_COLUMNS = [f.name for f in dataclasses.fields(Node)]
