"""Passages (`Passages`, composed into `Store` as `store.passages`): windows of neighbouring
user inputs in one session, the read path's context-level keys. Like the Store, the only code
that knows this table.

Why: what a user said is often spread over neighbouring turns ("I'm upgrading my camera bag" …
"it's for my Sony A7R IV"), and a single turn rarely carries all of a question's words or
meaning. A passage is searched as one text (BM25) and one vector (the normalised mean of its
inputs' vectors: no extra embedding at write time), and recall adds its score to the inputs
and items it contains — the passage-level evidence of classic passage retrieval.

Layout: a session's user inputs in the order said, in windows of `PASSAGE_TURNS` starting
every `PASSAGE_STRIDE` inputs (half-overlapping, so every input has context on both sides);
a session shorter than a window is one passage. Passages are keyed by their members, so an
append changes only the last window or two. Inputs without a session (a lone `dcpm add`) get
none: nothing says they belong together.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

from dcpm_cli.models import Passage, short_hash
from dcpm_cli.store import schemas as S
from dcpm_cli.store.base import Lance
from dcpm_cli.store.sql import in_list as _in
from dcpm_cli.store.vectors import VectorSearch, _unit_rows

if TYPE_CHECKING:
    import numpy as np
    import pyarrow as pa

PASSAGE_TURNS = 4  # user inputs per passage
PASSAGE_STRIDE = 2  # a new passage every this many inputs


def window_starts(n: int, size: int = PASSAGE_TURNS, stride: int = PASSAGE_STRIDE) -> list[int]:
    """Start positions of the windows over n inputs: every `stride`, while a window still adds
    inputs the one before it did not reach."""
    if n <= 0:
        return []
    return [0, *(s for s in range(stride, n, stride) if s - stride + size < n)]


class Passages:
    """The passages of the store's sessions, kept in line with their user inputs."""

    def __init__(self, lance: Lance, vectors: Callable[[], VectorSearch]) -> None:
        """`vectors`: the store's current vector search (its in-memory table copies), asked
        at each use, since the store replaces it when a forget drops the copies."""
        self._t = lance
        self._search = vectors

    @property
    def _vectors(self) -> VectorSearch:
        return self._search()

    def index(self, sessions: Iterable[str] | None = None) -> int:
        """Bring the passages of these sessions (None: all) in line with their user inputs;
        returns how many passages were written. Callers hold the write lock."""
        if sessions is None:
            wanted = sorted({r["session"] for r in self._t.rows(S.RAW, _USER_IN_SESSION, ["session"])})
        else:
            wanted = sorted({s for s in sessions if s})
        written = 0
        for i in range(0, len(wanted), 200):
            written += self._index_sessions(wanted[i : i + 200])
        return written

    def _index_sessions(self, sessions: Sequence[str]) -> int:
        copy = self._vectors.copy(S.RAW, self._t.table(S.RAW), use=True)
        columns = ["id", "session", "said_at", "created_at"]
        if copy is not None:  # a warm writer: the sessions' rows are in memory
            rows = copy.find("session", sessions, columns, [("role", ("user",))])
        else:
            rows = self._t.rows(S.RAW, f"{_USER_IN_SESSION} AND {_in('session', sessions)}", columns)
        rows.sort(key=lambda r: (r["session"], r["said_at"], r["created_at"], r["id"]))
        by_session: dict[str, list[dict[str, Any]]] = {}
        for r in rows:
            by_session.setdefault(r["session"], []).append(r)
        wanted: dict[str, tuple[str, list[dict[str, Any]]]] = {}
        for session, members in by_session.items():
            for start in window_starts(len(members), PASSAGE_TURNS, PASSAGE_STRIDE):
                window = members[start : start + PASSAGE_TURNS]
                wanted["p_" + short_hash(*(m["id"] for m in window))] = (session, window)
        kept = self._vectors.copy(S.PASSAGES, self._t.table(S.PASSAGES))  # recall's, if it made one
        if kept is not None:
            have = {r["id"] for r in kept.find("session", sessions, ["id"])}
        else:
            have = {r["id"] for r in self._t.rows(S.PASSAGES, _in("session", sessions), ["id"])}
        missing = [pid for pid in wanted if pid not in have]
        if missing:
            raw_ids = sorted({m["id"] for pid in missing for m in wanted[pid][1]})
            texts, row_of, matrix = self._raw_texts_and_vectors(raw_ids, copy)
            passages = []
            for pid in missing:
                session, window = wanted[pid]
                ids = [m["id"] for m in window]
                text = "\n".join(texts[i] for i in ids)
                passages.append(Passage(pid, session, text, ids, window[0]["said_at"], window[-1]["said_at"]))
            pooled = _unit_means(matrix, [[row_of[i] for i in p.raw_ids] for p in passages])
            # Plain appends: under the write lock, and these ids were just seen to be missing.
            data = self._t.arrow_of(passages, S.PASSAGES, pooled)
            self._vectors.wrote(S.PASSAGES, self._t.table(S.PASSAGES).add(data), rows=data)
        # New passages first, then the stale ones go: an interruption leaves extras, not gaps.
        stale = sorted(have - set(wanted))
        for i in range(0, len(stale), 500):
            gone = stale[i : i + 500]
            self._vectors.wrote(S.PASSAGES, self._t.table(S.PASSAGES).delete(_in("id", gone)), gone=gone)
        return len(missing)

    def _raw_texts_and_vectors(
        self, ids: Sequence[str], copy: Any = None
    ) -> tuple[dict[str, str], dict[str, int], np.ndarray]:
        """Texts by id, and the vectors as one matrix with each id's row (from the raw
        table's in-memory copy when there is one)."""
        import numpy as np

        if copy is not None:
            at = copy.positions("id", ids)
            found = copy.values(at, "id").to_pylist()
            said = dict(zip(found, copy.values(at, "text").to_pylist(), strict=True))
            return said, {rid: n for n, rid in enumerate(found)}, copy.vectors(at)

        texts: dict[str, str] = {}
        blocks = []
        for i in range(0, len(ids), 500):
            q = (
                self._t.table(S.RAW)
                .search()
                .where(_in("id", ids[i : i + 500]))
                .select(["id", "text", "vector"])
            )
            data: pa.Table = q.limit(None).to_arrow()
            texts.update(zip(data.column("id").to_pylist(), data.column("text").to_pylist(), strict=True))
            blocks.append(_unit_rows(data.column("vector"), self._t.dim)[0])  # zeros: no vector yet
        matrix = np.concatenate(blocks) if blocks else np.zeros((0, self._t.dim), dtype=np.float32)
        return texts, {rid: n for n, rid in enumerate(texts)}, matrix

    def all(self) -> list[Passage]:
        return [Passage(**r) for r in self._t.rows(S.PASSAGES, None, _FIELDS)]

    def inputs_without_passage(self) -> dict[str, list[str]]:
        """session → ids of its user inputs that no passage holds (what a write cut short
        between an input and its passages, or an older dcpm, left)."""
        covered: set[str] = set()
        for r in self._t.rows(S.PASSAGES, None, ["raw_ids"]):
            covered.update(r["raw_ids"] or [])
        out: dict[str, list[str]] = {}
        for r in self._t.rows(S.RAW, _USER_IN_SESSION, ["id", "session"]):
            if r["id"] not in covered:
                out.setdefault(r["session"], []).append(r["id"])
        return out


_FIELDS = [f.name for f in dataclasses.fields(Passage)]
_USER_IN_SESSION = "role = 'user' AND session IS NOT NULL AND session != ''"


def _unit_means(matrix: np.ndarray, groups: list[list[int]]) -> np.ndarray:
    """The normalised mean of each group of rows (one row per group)."""
    import numpy as np

    starts = np.cumsum([0, *(len(g) for g in groups[:-1])])
    sums = np.add.reduceat(matrix[[i for g in groups for i in g]], starts, axis=0)
    norms = np.maximum(np.linalg.norm(sums, axis=1, keepdims=True), 1e-12)
    return (sums / norms).astype(np.float32)
