"""Store verbs for `dcpm export` / `dcpm import`: every table read in batches as plain rows,
and rows written back idempotently (by id; calibrations by embedder and time). Mixed into
`Store`; like it, the only code that knows these tables and columns.

Passages are not dumped: they are derived from the raw inputs (and rebuilt on import)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

from dcpm_cli.store import schemas as S
from dcpm_cli.store.sql import in_list as _in

if TYPE_CHECKING:
    import numpy as np

# record type → table, in the order an export writes them (raw inputs before what cites them).
RECORD_TABLES: dict[str, str] = {
    "raw": S.RAW,
    "item": S.ITEMS,
    "event": S.EVENTS,
    "node": S.NODES,
    "edge": S.EDGES,
    "dream_run": S.DREAM_RUNS,
    "calibration": S.CALIBRATIONS,
}
# record type → its vector columns and the text column each one embeds.
VECTOR_SOURCES: dict[str, dict[str, str]] = {
    "raw": {"vector": "text"},
    "item": {"vector": "text"},
    "node": {"vector": "text", "behaviour_vector": "behaviour"},
}
_KEYS: dict[str, list[str]] = {"calibration": ["embedder", "created_at"]}
_CHUNK = 500


class DumpVerbs:
    dim: int

    # provided by Store
    def table(self, name: str) -> Any: ...
    def has_table(self, name: str) -> bool: ...
    def _rows(self, table: str, where: str | None, columns: Any = None, limit: int | None = None) -> list: ...

    def record_count(self, kind: str) -> int:
        return int(self.table(RECORD_TABLES[kind]).count_rows()) if self.has_table(RECORD_TABLES[kind]) else 0

    def dump(self, kind: str, *, with_vectors: bool, batch_rows: int = 2048) -> Iterator[dict[str, Any]]:
        """Every row of one record type, a batch at a time (memory stays flat), vector
        columns as lists of floats when `with_vectors`, else left out."""
        table = self.table(RECORD_TABLES[kind])
        vector_cols = set(VECTOR_SOURCES.get(kind, {}))
        columns = [c for c in table.schema.names if with_vectors or c not in vector_cols]
        if kind == "item":
            columns = [c for c in columns if c != "content_hash"]  # derived from kind, subject, text
        query = table.search().select(columns).limit(None)
        for batch in query.to_batches(batch_rows):
            yield from batch.to_pylist()

    def new_record_keys(self, kind: str, rows: Sequence[dict[str, Any]]) -> list[int]:
        """Positions in `rows` of the records not in the store yet."""
        if kind in _KEYS:
            have = {
                (r["embedder"], r["created_at"])
                for r in self._rows(RECORD_TABLES[kind], None, ["embedder", "created_at"])
            }
            return [n for n, r in enumerate(rows) if (r["embedder"], r["created_at"]) not in have]
        ids = [r["id"] for r in rows]
        known: set[str] = set()
        for i in range(0, len(ids), _CHUNK):
            known.update(
                r["id"] for r in self._rows(RECORD_TABLES[kind], _in("id", ids[i : i + _CHUNK]), ["id"])
            )
        return [n for n, r in enumerate(rows) if r["id"] not in known]

    def load(self, kind: str, rows: Sequence[dict[str, Any]], vectors: dict[str, np.ndarray | None]) -> None:
        """Insert records not present yet (present ones are left as they are). `vectors`:
        column → (rows, dim) array, or None for a column of nulls."""
        import pyarrow as pa

        if not rows:
            return
        name = RECORD_TABLES[kind]
        schema = self.table(name).schema
        cols: dict[str, Any] = {}
        for field in schema:
            if field.name in vectors:
                matrix = vectors[field.name]
                if matrix is None:
                    cols[field.name] = pa.nulls(len(rows), field.type)
                else:
                    flat = pa.array(matrix.astype("float32").ravel(), type=pa.float32())
                    cols[field.name] = pa.FixedSizeListArray.from_arrays(flat, self.dim)
            elif field.name == "content_hash" and kind == "item":
                cols[field.name] = pa.array([r["content_hash"] for r in rows], field.type)
            else:
                cols[field.name] = pa.array([r.get(field.name) for r in rows], field.type)
        data = pa.table(cols, schema=schema)
        keys = _KEYS.get(kind, ["id"])
        self.table(name).merge_insert(
            keys if len(keys) > 1 else keys[0]
        ).when_not_matched_insert_all().execute(data, on_bad_vectors="null")
