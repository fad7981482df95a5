"""The records of `dcpm export` / `dcpm import` (`Records`, composed into `Store` as
`store.records`): every table read in batches as plain rows, and rows written back
idempotently (by id; calibrations by embedder and time). Like the Store, the only code that
knows these tables and columns.

Passages are not dumped: they are derived from the raw inputs (and rebuilt on import)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol

from dcpm_cli.models import DONE, FAILED, NO_ITEMS, PENDING, MemoryItem
from dcpm_cli.store import schemas as S
from dcpm_cli.store.base import Lance
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


class Advances(Protocol):
    """The store's own verbs `Records.advance` moves records forward with, so a warm
    process's table copies learn the change (`Store` implements it)."""

    def set_raw_status(
        self, raw_id: str, status: str, error: str = "", attempts: int | None = None
    ) -> None: ...


class Records:
    """Every record type's rows out (export) and back in (import)."""

    def __init__(self, lance: Lance, verbs: Advances) -> None:
        self._t = lance
        self._verbs = verbs

    def count(self, kind: str) -> int:
        return (
            int(self._t.table(RECORD_TABLES[kind]).count_rows())
            if self._t.has_table(RECORD_TABLES[kind])
            else 0
        )

    def dump(self, kind: str, *, with_vectors: bool, batch_rows: int = 2048) -> Iterator[dict[str, Any]]:
        """Every row of one record type, a batch at a time (memory stays flat); with
        `with_vectors`, each vector as base64 of its little-endian float32 bytes (exact, and
        a fifth the size of decimal floats), else left out."""
        table = self._t.table(RECORD_TABLES[kind])
        vector_cols = [c for c in VECTOR_SOURCES.get(kind, {}) if with_vectors]
        plain = [c for c in table.schema.names if c not in VECTOR_SOURCES.get(kind, {})]
        if kind == "item":
            plain = [c for c in plain if c != "content_hash"]  # derived from kind, subject, text
        query = table.search().select([*plain, *vector_cols]).limit(None)
        for batch in query.to_batches(batch_rows):
            vectors = {
                c: [_b64(v) for v in batch.column(c).to_numpy(zero_copy_only=False)] for c in vector_cols
            }
            for n, row in enumerate(batch.select(plain).to_pylist()):
                yield row | {c: v[n] for c, v in vectors.items()}

    def from_json(self, kind: str, record: dict[str, Any]) -> dict[str, Any]:
        """A record as read from JSON, with its timestamps (ISO strings) parsed, by the schema."""
        import pyarrow as pa

        schema = self._t.table(RECORD_TABLES[kind]).schema
        row = {k: v for k, v in record.items() if k != "type"}
        for name in schema.names:
            if isinstance(row.get(name), str) and pa.types.is_timestamp(schema.field(name).type):
                row[name] = datetime.fromisoformat(row[name])
        return row

    def advance(self, kind: str, rows: Sequence[dict[str, Any]]) -> tuple[int, list[MemoryItem]]:
        """Records already here that the export shows further on: a raw input extracted since
        (its status), an item updated since (returned, to be rewritten with a fresh vector).
        Never backward, so an older export, or the same one twice, changes nothing. Run once
        every record of the export is in. Returns how many moved, and the items to rewrite."""
        if kind not in ("raw", "item") or not rows:
            return 0, []
        name, theirs = RECORD_TABLES[kind], {r["id"]: r for r in rows}
        ids, updated, moved = list(theirs), [], 0
        for i in range(0, len(ids), _CHUNK):
            for mine in self._t.rows(name, _in("id", ids[i : i + _CHUNK])):
                new = theirs[mine["id"]]
                # Through the store's own verbs: a warm process's table copies learn the change.
                if kind == "raw":
                    if mine["status"] in (PENDING, FAILED) and new.get("status") in (DONE, NO_ITEMS):
                        self._verbs.set_raw_status(
                            mine["id"], new["status"], "", int(new.get("attempts") or 0)
                        )
                        moved += 1
                    continue
                # The arcs are the import's to settle, before this (ops/portability.py
                # `_relink`): an item rewritten keeps the pointers it has here now.
                later = new.get("updated_at") and new["updated_at"] > mine["updated_at"]
                if later and new.get("text") != mine["text"]:
                    fields: dict[str, Any] = {
                        f: new.get(f, mine.get(f)) for f in MemoryItem.__dataclass_fields__
                    }
                    fields["supersedes"], fields["superseded_by"] = mine["supersedes"], mine["superseded_by"]
                    updated.append(MemoryItem(**fields))
                    moved += 1
        return moved, updated

    @staticmethod
    def sessions_of(kind: str, rows: Sequence[dict[str, Any]]) -> set[str]:
        """The sessions whose passages these raw-input rows feed (user inputs in a session)."""
        if kind != "raw":
            return set()
        return {r["session"] for r in rows if r.get("role") == "user" and r.get("session")}

    def new_keys(self, kind: str, rows: Sequence[dict[str, Any]]) -> list[int]:
        """Positions in `rows` of the records not in the store yet."""
        if kind in _KEYS:
            have = {
                (r["embedder"], r["created_at"])
                for r in self._t.rows(RECORD_TABLES[kind], None, ["embedder", "created_at"])
            }
            return [n for n, r in enumerate(rows) if (r["embedder"], r["created_at"]) not in have]
        ids = [r["id"] for r in rows]
        known: set[str] = set()
        for i in range(0, len(ids), _CHUNK):
            known.update(
                r["id"] for r in self._t.rows(RECORD_TABLES[kind], _in("id", ids[i : i + _CHUNK]), ["id"])
            )
        return [n for n, r in enumerate(rows) if r["id"] not in known]

    def load(self, kind: str, rows: Sequence[dict[str, Any]], vectors: dict[str, np.ndarray | None]) -> None:
        """Insert records not present yet (present ones are left as they are). `vectors`:
        column → (rows, dim) array, or None for a column of nulls."""
        import pyarrow as pa

        if not rows:
            return
        name = RECORD_TABLES[kind]
        schema = self._t.table(name).schema
        cols: dict[str, Any] = {}
        for field in schema:
            if field.name in vectors:
                matrix = vectors[field.name]
                if matrix is None:
                    cols[field.name] = pa.nulls(len(rows), field.type)
                else:
                    flat = pa.array(matrix.astype("float32").ravel(), type=pa.float32())
                    cols[field.name] = pa.FixedSizeListArray.from_arrays(flat, self._t.dim)
            elif field.name == "content_hash" and kind == "item":  # derived, not exported
                names = MemoryItem.__dataclass_fields__
                items = [MemoryItem(**{k: v for k, v in r.items() if k in names}) for r in rows]
                cols[field.name] = pa.array([i.content_hash for i in items], field.type)
            else:
                cols[field.name] = pa.array([r.get(field.name) for r in rows], field.type)
        data = pa.table(cols, schema=schema)
        keys = _KEYS.get(kind, ["id"])
        self._t.table(name).merge_insert(
            keys if len(keys) > 1 else keys[0]
        ).when_not_matched_insert_all().execute(data, on_bad_vectors="null")


def _b64(vector: Any) -> str | None:
    import base64

    import numpy as np

    return None if vector is None else base64.b64encode(np.asarray(vector, dtype="<f4").tobytes()).decode()


def vector_from_b64(value: Any, dim: int) -> Any:
    """A vector as `dump` writes it (base64 float32; a list of numbers is accepted too)."""
    import base64

    import numpy as np

    vector = (
        np.frombuffer(base64.b64decode(value), dtype="<f4") if isinstance(value, str) else np.asarray(value)
    )
    if vector.shape != (dim,):
        raise ValueError(f"a vector of {vector.size} numbers, not {dim}")
    return vector
