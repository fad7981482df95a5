"""Exact cosine search over a table's vectors: LanceDB's own scan for the first search of a
table in a process, then an in-memory copy of the table searched with numpy.

Why a copy: LanceDB's flat scan costs about 20× a numpy matrix–vector product over the same
vectors (≈190 ms against 9 ms at 100k rows), and its ANN indices are approximate (IVF_HNSW_SQ:
recall@10 ≈ 0.97) and take minutes to build. Copying a table costs about three scans, so, as in
the ski-rental problem, a process rents before it buys: the first three searches of a table are
LanceDB's scans, the fourth makes the copy. A one-shot `dcpm recall QUERY` never pays for a copy;
agents, `recall --batch`, the writer's reconcile step and benchmarks search many times.

Staying current: Lance never changes a stored row in place. Appends, updates, merge-inserts and
compaction write new fragments (fragment ids are never reused) and mark the old rows deleted.
A row cached under its address (`_rowaddr`) is therefore valid while that address is live, and
a refresh reads only rows with a higher address than any cached one, plus the list of live
addresses when the row count says cached rows were deleted. Each search first makes sure the
table version has not moved (the check `read_consistency_interval=0` makes on every read; see
`TableCopy.sync` for how it is made cheap on a local disk), so what another process or `Store`
wrote is seen by the next search. A schema change rebuilds the copy.

Keeping up with numpy: a small product runs on one BLAS thread (`blas_threads`), hits are turned
into Python objects once (`TableCopy._dicts`), and the version check avoids LanceDB's background
thread when it can: at 10k rows these made a search 1.2× numpy's bare top-k instead of 3×.
Scores agree with LanceDB's to float32 rounding (≈1e-7).
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any
from zoneinfo import ZoneInfo

from dcpm_cli.blas import blas_threads
from dcpm_cli.store.sql import in_list, timestamp

if TYPE_CHECKING:
    import numpy as np
    import pyarrow as pa

# (column, values): `column IN values`; values None: `column IS NULL`. Terms are AND-ed.
Term = tuple[str, tuple[str, ...] | None]
# (column, start, end): a timestamp column in [start, end), AND-ed with the terms.
Span = tuple[str, datetime, datetime]

RECHECK_S = 1.0  # ask LanceDB for the table version at least this often (see TableCopy.sync)
MTIME_MARGIN_NS = 2_000_000_000  # a directory mtime this old cannot be shared by a new commit
COPY_ON_SEARCH = 4  # copy a table on its 4th search in a process (see the module docstring)


def where_sql(terms: Sequence[Term], span: Span | None = None) -> str | None:
    clauses = [f"{c} IS NULL" if v is None else in_list(c, v) for c, v in terms]
    if span is not None:
        column, start, end = span
        clauses += [f"{column} >= {timestamp(start)}", f"{column} < {timestamp(end)}"]
    return " AND ".join(clauses) or None


class VectorSearch:
    """The vector search of one `Store`: which tables are copied, and when."""

    def __init__(self, db: Any, copy_on_search: int | None = None) -> None:
        self._db = db
        self.copy_on_search = copy_on_search or COPY_ON_SEARCH  # earlier searches: LanceDB's
        self._copies: dict[str, TableCopy] = {}
        self._searches: dict[str, int] = {}

    def search(
        self,
        name: str,
        table: Any,
        vector: np.ndarray,
        k: int,
        columns: Sequence[str],
        terms: Sequence[Term],
        span: Span | None = None,
    ) -> list[tuple[dict[str, Any], float]]:
        """The k rows of `table` most similar to `vector` that match `terms` (and lie in
        `span`), best first, as (row with `columns`, cosine similarity)."""
        return self.search_many(name, table, vector[None, :], k, columns, terms, span)[0]

    def search_many(
        self,
        name: str,
        table: Any,
        vectors: np.ndarray,
        k: int,
        columns: Sequence[str],
        terms: Sequence[Term],
        span: Span | None = None,
    ) -> list[list[tuple[dict[str, Any], float]]]:
        """`search` for each row of `vectors` (one version check and one matrix product for
        all: the writer's neighbours of every item of an input)."""
        copy = self.copy(name, table, use=True)
        if copy is None:
            return [lancedb_search(table, v, k, columns, terms, span) for v in vectors]
        return copy.search_many(vectors, k, columns, terms, span)

    def wrote(self, name: str, result: Any, **change: Any) -> None:
        """A commit this process made to `name` (`result`: what LanceDB returned, with the new
        version): the table's copy, if there is one, takes it in (see `TableCopy.wrote`)."""
        copy = self._copies.get(name)
        version = getattr(result, "version", None)
        if copy is not None and version:
            copy.wrote(int(version), **change)

    def copy(self, name: str, table: Any, *, use: bool = False) -> TableCopy | None:
        """The in-memory copy of `name`, brought up to date, if this process has one: reads
        by value then cost microseconds instead of a LanceDB query (~10–20 ms). A `use` (a
        search, or a read of many rows) counts towards buying the copy, on the
        `copy_on_search`-th; a plain lookup by id takes the copy only if there is one."""
        if use:
            self._searches[name] = self._searches.get(name, 0) + 1
        copy = self._copies.get(name)
        if copy is None and use and self._searches[name] >= self.copy_on_search:
            copy = self._copies[name] = TableCopy(self._db.open_table(name))
        if copy is not None:
            copy.sync(table)
        return copy


def lancedb_search(
    table: Any,
    vector: np.ndarray,
    k: int,
    columns: Sequence[str],
    terms: Sequence[Term],
    span: Span | None = None,
) -> list[tuple[dict[str, Any], float]]:
    """LanceDB's own exact search (a flat scan even if a vector index exists): the reference."""
    q = table.search(vector).distance_type("cosine").bypass_vector_index().limit(k)
    where = where_sql(terms, span)
    if where:
        q = q.where(where, prefilter=True)
    rows = q.select([*columns, "_distance"]).to_arrow().to_pylist()
    return [(r, 1.0 - float(r.pop("_distance"))) for r in rows]


class TableCopy:
    """One table in memory: its rows (all columns but the vectors) as Arrow and its vectors as
    unit-length float32 rows, in the same order, keyed by row address."""

    tail_rows = 4096  # rows added since the bulk load are kept apart up to this many (or 1/8)
    memo_rows = 20_000  # rows kept as Python objects (see _dicts)

    def __init__(self, pinned: Any) -> None:
        self._t = pinned  # a handle of our own, checked out at the version being read
        self.version = -1
        uri = str(pinned.uri)
        self._dir = None if "://" in uri else uri
        self._seen: tuple[int, float] | None = None  # (mtime of _versions, when checked)
        self._schema: pa.Schema | None = None
        self._blocks: list[np.ndarray] = []
        self._masks: dict[Term, np.ndarray] = {}
        self._searchable: np.ndarray | None = None
        self._memo: dict[int, dict[str, Any]] = {}  # position → row (see _dicts)

    # -- keeping current ------------------------------------------------------------------

    def sync(self, table: Any) -> None:
        """Refresh from `table` (a handle that follows the latest version) unless it provably
        has not changed. Asking LanceDB for the version costs a round trip through its
        background thread (0.1 ms idle, milliseconds on a busy machine); on a local disk,
        every commit writes a manifest into `_versions/`, so an unchanged directory mtime means
        no commit, provided that mtime was already old when we saw it (a later commit cannot
        share it even on coarse-grained clocks). LanceDB is asked at least every RECHECK_S."""
        stamp = commit_stamp(self._dir)
        if stamp is not None and self._seen is not None:
            mtime, checked = self._seen
            if stamp == mtime and time.monotonic() - checked < RECHECK_S:
                return
        self.refresh(table.version)
        if stamp is not None and time.time_ns() - stamp > MTIME_MARGIN_NS:
            self._seen = (stamp, time.monotonic())
        else:
            self._seen = None

    def refresh(self, version: int) -> None:
        """Catch up with `version` of the table (a no-op when already there)."""
        if version == self.version:
            return
        self._t.checkout(version)  # every read below sees this one version
        schema = self._t.schema
        if schema != self._schema:
            self._reset(schema)
        first = not self._placed.any()
        if first:
            self._reset(schema)  # nothing placed (new, or only our own rows): read it whole
            new = self._read(None)
        else:
            new = self._read(f"_rowaddr > {int(self._addr[self._placed].max())}")
            held = self._t.count_rows() - new.num_rows  # rows at or below our highest address
            self._drop_rewritten(new)
            # Our own rows (`wrote`) lie beyond that address: read again above, or deleted.
            self._alive &= self._placed
            if held != int(self._alive.sum()) and not self._drop_deleted(held):
                self._reset(schema)  # rows came back (a restore): start again
                new = self._read(None)
            self._shrink()
        if new.num_rows:
            self._append(new)
        if first and len(self._addr) <= self.memo_rows:  # in bulk: ~12 µs a row, against ~25 a few at a time
            self._remember(range(len(self._addr)))
        # Later refreshes turn rows into objects as searches hit them: after a compaction every
        # row is new, and converting 10k of them up front cost each such `dcpm add` ~120 ms.
        self._searchable = self._alive & self._has_vector  # a row without a vector is never a hit
        self._masks = {}
        self.version = version

    def _reset(self, schema: pa.Schema) -> None:
        import numpy as np
        import pyarrow as pa

        self._schema = schema
        self._dim = schema.field("vector").type.list_size
        self._columns = [f.name for f in schema if not pa.types.is_fixed_size_list(f.type)]
        self._rows = pa.table({c: pa.array([], schema.field(c).type) for c in self._columns})
        self._blocks = []
        self._addr = np.empty(0, dtype=np.uint64)
        self._alive = np.empty(0, dtype=bool)
        self._placed = np.empty(0, dtype=bool)  # the row's address is known (read from the table)
        self._has_vector = np.empty(0, dtype=bool)
        self._memo = {}

    def wrote(
        self,
        version: int,
        rows: pa.Table | None = None,
        gone: Sequence[str] = (),
        changed: dict[str, dict[str, Any]] | None = None,
    ) -> bool:
        """Take in a commit this process just made (under the write lock), so that the next
        search or lookup need not read it back: `rows` written (replacing any row with the same
        id, as a merge-insert does), ids `gone`, and `changed` ids with new column values (an
        update). Only when the copy stood at the version right before it: then the commit is
        the only change. Returns whether it was taken in; if not, the next sync reads the table.

        The rows' addresses are not known (Lance assigns them): they are kept unplaced, and the
        next refresh that reads rows from the table reads them again and places them. Reading
        our own commits back cost each `dcpm add` in a warm process two scans per table (≈ 20
        ms each at 10k rows, ≈ 50 at 100k)."""
        import numpy as np
        import pyarrow as pa

        if self.version != version - 1 or self._schema is None:
            return False
        parts = []
        if changed:
            at = self.positions("id", list(changed))
            if len(at) != len(changed):
                return False  # a row we do not hold: read it from the table instead
            old = self._rows.take(at)
            ids = old["id"].to_pylist()
            columns = {}
            for name in self._columns:
                col = old[name].to_pylist()
                for n, row_id in enumerate(ids):
                    if name in changed[row_id]:
                        col[n] = changed[row_id][name]
                columns[name] = pa.array(col, self._schema.field(name).type)
            flat = pa.array(self.vectors(at).ravel(), type=pa.float32())
            columns["vector"] = pa.FixedSizeListArray.from_arrays(flat, self._dim)
            parts.append(pa.table(columns))
        if rows is not None and rows.num_rows:
            parts.append(rows.select([*self._columns, "vector"]))
        dead = [*gone, *(x for part in parts for x in part["id"].to_pylist())]
        if dead:
            self._alive &= ~self._match(("id", tuple(dead)))
        for part in parts:
            unplaced = pa.array(np.full(part.num_rows, np.iinfo(np.uint64).max, dtype=np.uint64))
            self._append(part.append_column("_rowaddr", unplaced), placed=False)
        self._searchable = self._alive & self._has_vector
        self._masks = {}
        self.version = version
        return True

    def _read(self, where: str | None) -> pa.Table:
        q = self._t.search()
        if where:
            q = q.where(where)
        return q.select([*self._columns, "vector", "_rowaddr"]).limit(None).to_arrow()

    def _drop_rewritten(self, new: pa.Table) -> None:
        """Mark dead the rows that new rows replace. An update (or a merge-insert) in Lance
        deletes a row and writes it again, under a new address, with the same id; every dcpm
        table keys its rows by a unique `id`. So a cached row whose id comes back is gone,
        which saves reading every live address (~20 ms at 10k rows) after each update. If a
        table ever held an id twice, the row count disagrees and `_drop_deleted` decides."""
        import pyarrow as pa
        import pyarrow.compute as pc

        if "id" not in self._columns or not new.num_rows or not len(self._addr):
            return
        ids = self._rows["id"]
        back = pc.is_in(ids, value_set=pa.array(new["id"].to_pylist(), ids.type))
        self._alive &= ~back.fill_null(False).to_numpy(zero_copy_only=False)

    def _drop_deleted(self, held: int) -> bool:
        """Mark the rows deleted since the last refresh; False if the table holds rows at or
        below our highest address that we do not (only a restore of an old version does that)."""
        import numpy as np

        addrs = self._t.search().where(f"_rowaddr <= {int(self._addr[self._placed].max())}")
        live = addrs.select(["_rowaddr"]).limit(None).to_arrow()["_rowaddr"].to_numpy()
        self._alive &= np.isin(self._addr, live)
        return int(self._alive.sum()) == held

    def _shrink(self) -> None:
        """Free the space of dead rows once they are a quarter of the copy (after a
        compaction every row is dead: the table was read again)."""
        import numpy as np

        if int(self._alive.sum()) >= 0.75 * len(self._alive):
            return
        keep = np.flatnonzero(self._alive)
        self._blocks = [np.concatenate(self._blocks)[keep]] if len(keep) else []
        self._addr, self._alive = self._addr[keep], self._alive[keep]
        self._placed = self._placed[keep]
        self._has_vector, self._rows = self._has_vector[keep], self._rows.take(keep)
        self._memo = {}  # positions moved

    def _append(self, new: pa.Table, placed: bool = True) -> None:
        import numpy as np
        import pyarrow as pa

        vecs, has_vector = _unit_rows(new["vector"], self._dim)
        # At most two matrices: the bulk, and a tail of what refreshes added since, folded
        # into the bulk once it is an eighth of it (amortised O(1) per row). One contiguous
        # bulk matrix keeps the product as fast as numpy's over a single array.
        tail = vecs if len(self._blocks) < 2 else np.concatenate([self._blocks[1], vecs])
        if not self._blocks:
            self._blocks = [vecs]
        elif len(tail) > max(self.tail_rows, len(self._blocks[0]) // 8):
            self._blocks = [np.concatenate([self._blocks[0], tail])]
        else:
            self._blocks = [self._blocks[0], tail]
        self._addr = np.concatenate([self._addr, new["_rowaddr"].to_numpy()])
        self._alive = np.concatenate([self._alive, np.ones(new.num_rows, dtype=bool)])
        self._placed = np.concatenate([self._placed, np.full(new.num_rows, placed)])
        self._has_vector = np.concatenate([self._has_vector, has_vector])
        rows = new.select(self._columns)
        self._rows = pa.concat_tables([self._rows, rows]) if self._rows.num_rows else rows
        if self._rows.column(0).num_chunks > 64:
            self._rows = self._rows.combine_chunks()

    # -- searching ------------------------------------------------------------------------

    def search(
        self,
        vector: np.ndarray,
        k: int,
        columns: Sequence[str],
        terms: Sequence[Term],
        span: Span | None = None,
    ) -> list[tuple[dict[str, Any], float]]:
        return self.search_many(vector, k, columns, terms, span)[0]

    def search_many(
        self,
        vectors: np.ndarray,
        k: int,
        columns: Sequence[str],
        terms: Sequence[Term],
        span: Span | None = None,
    ) -> list[list[tuple[dict[str, Any], float]]]:
        import numpy as np

        q = np.atleast_2d(np.asarray(vectors, dtype=np.float32))
        if not self._blocks or k <= 0:
            return [[] for _ in q]
        q = q / np.maximum(np.linalg.norm(q, axis=1, keepdims=True), 1e-12)
        with blas_threads(sum(b.size for b in self._blocks) * len(q)):
            parts = [b @ q.T for b in self._blocks]  # (rows, queries)
        scores = parts[0] if len(parts) == 1 else np.concatenate(parts)
        mask = self._searchable
        assert mask is not None  # set whenever there are blocks
        for term in terms:
            mask = mask & self._mask(term)
        if span is not None:
            mask = mask & self._within(span)
        hits = int(mask.sum())
        k = min(k, hits)
        if k == 0:
            return [[] for _ in q]
        if hits < len(scores):
            scores[~mask] = -np.inf
        out = []
        for col in scores.T:
            top = np.argpartition(-col, k - 1)[:k] if k < len(col) else np.arange(k)
            top = top[np.argsort(-col[top], kind="stable")]
            rows = self._dicts(top.tolist(), columns)
            out.append([(r, float(col[i])) for i, r in zip(top, rows, strict=True)])
        return out

    def _dicts(self, positions: list[int], columns: Sequence[str]) -> list[dict[str, Any]]:
        """Fresh dicts of the rows at `positions`. Rows turned into Python objects are kept (the
        row at an address never changes): all of them up front for a table of up to memo_rows,
        else the hits as queries find them. Lists are copied: no caller can change what is kept."""
        self._remember(positions)
        rows = [self._memo[p] for p in positions]
        return [{c: list(r[c]) if type(r[c]) is list else r[c] for c in columns} for r in rows]

    def _remember(self, positions: Sequence[int]) -> None:
        missing = [p for p in positions if p not in self._memo]
        if missing:
            if len(self._memo) + len(missing) > self.memo_rows:
                self._memo, missing = {}, list(dict.fromkeys(positions))
            self._memo.update(zip(missing, _as_dicts(self._rows.take(missing), self._columns), strict=True))

    def find(
        self, column: str, values: Sequence[str], columns: Sequence[str], terms: Sequence[Term] = ()
    ) -> list[dict[str, Any]]:
        """The live rows whose `column` is one of `values` and that match `terms` (what
        `WHERE column IN (...) AND ...` reads from LanceDB), in table order."""
        return self.rows(self.positions(column, values, terms), columns)

    def positions(self, column: str, values: Sequence[str], terms: Sequence[Term] = ()) -> np.ndarray:
        """Positions of the live rows whose `column` is one of `values` and that match `terms`."""
        import numpy as np

        if not values or not len(self._addr):
            return np.empty(0, dtype=np.int64)
        mask = self._alive & self._match((column, tuple(values)))
        for term in terms:
            mask = mask & self._mask(term)
        return np.flatnonzero(mask)

    def rows(self, positions: Sequence[int] | np.ndarray, columns: Sequence[str]) -> list[dict[str, Any]]:
        return self._dicts([int(p) for p in positions], columns)

    def values(self, positions: np.ndarray, column: str) -> pa.Array:
        """One column at these positions, as Arrow (no Python objects made)."""
        return self._rows[column].take(positions).combine_chunks()

    def vectors(self, positions: np.ndarray) -> np.ndarray:
        """The unit vectors at these positions (zeros for rows without one)."""
        import numpy as np

        positions = np.asarray(positions, dtype=np.int64)
        out = np.zeros((len(positions), self._dim), dtype=np.float32)
        start = 0
        for block in self._blocks:  # the bulk, then the tail: never concatenated here
            inside = (positions >= start) & (positions < start + len(block))
            out[inside] = block[positions[inside] - start]
            start += len(block)
        return out

    def _mask(self, term: Term) -> np.ndarray:
        """Rows matching `term`, kept until the next refresh."""
        if term not in self._masks:
            self._masks[term] = self._match(term)
        return self._masks[term]

    def _within(self, span: Span) -> np.ndarray:
        """Rows whose timestamp column lies in [start, end) (not kept: spans vary by question)."""
        import pyarrow as pa
        import pyarrow.compute as pc

        column, start, end = span
        col = self._rows[column]
        lo, hi = pa.scalar(start, type=col.type), pa.scalar(end, type=col.type)
        hit = pc.and_(pc.greater_equal(col, lo), pc.less(col, hi))
        return hit.fill_null(False).to_numpy(zero_copy_only=False)

    def _match(self, term: Term) -> np.ndarray:
        import pyarrow as pa
        import pyarrow.compute as pc

        column, values = term
        col = self._rows[column]
        hit = pc.is_null(col) if values is None else pc.is_in(col, value_set=pa.array(values, col.type))
        return hit.fill_null(False).to_numpy(zero_copy_only=False)


def commit_stamp(table_dir: str | os.PathLike[str] | None) -> int | None:
    """The mtime of a local table's `_versions/` directory, which every commit writes a
    manifest into: unchanged, no commit since it was read. None when there is no local
    directory (object storage) or it cannot be read: then ask LanceDB for the version."""
    if table_dir is None:
        return None
    try:
        return os.stat(os.path.join(table_dir, "_versions")).st_mtime_ns
    except OSError:
        return None


def _as_dicts(table: pa.Table, columns: Sequence[str]) -> list[dict[str, Any]]:
    """`table.select(columns).to_pylist()`, but with UTC timestamps made 4× faster: Arrow looks
    the zone up for every value, and those lookups were most of a 10k-row search."""
    import pyarrow as pa

    values = []
    for name in columns:
        col = table[name]
        if col.type == pa.timestamp("us", tz="UTC"):
            values.append(
                [
                    None if us is None else _EPOCH + timedelta(microseconds=us)
                    for us in col.cast(pa.int64()).to_pylist()
                ]
            )
        else:
            values.append(col.to_pylist())
    return [dict(zip(columns, row, strict=True)) for row in zip(*values, strict=True)]


_EPOCH = datetime(1970, 1, 1, tzinfo=ZoneInfo("UTC"))  # the same tzinfo Arrow gives


def _unit_rows(column: pa.ChunkedArray, dim: int) -> tuple[np.ndarray, np.ndarray]:
    """A vector column as one (rows, dim) array of unit-length float32 rows (zeros where null),
    and which rows had a vector."""
    import numpy as np

    arr = column.combine_chunks()  # the one copy: Arrow's chunks into a contiguous buffer
    has_vector = np.asarray(arr.is_valid())
    if has_vector.all():
        vecs = arr.flatten().to_numpy().reshape(-1, dim)
    else:
        vecs = np.zeros((len(arr), dim), dtype=np.float32)
        vecs[has_vector] = arr.drop_null().flatten().to_numpy().reshape(-1, dim)
    norms = np.sqrt(np.einsum("ij,ij->i", vecs, vecs))
    if not np.allclose(norms[has_vector], 1.0, atol=1e-4):  # dcpm's embedders normalise already
        vecs = vecs / np.maximum(norms, 1e-12)[:, None]
    return vecs.astype(np.float32, copy=False), has_vector


__all__ = [
    "COPY_ON_SEARCH",
    "TableCopy",
    "Term",
    "VectorSearch",
    "commit_stamp",
    "lancedb_search",
    "where_sql",
]
