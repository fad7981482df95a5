"""The store: the only code that knows LanceDB tables and columns.

Offers verbs over raw inputs, memory items (with their supersedes chains), the event log and
the graph. Every write happens inside `store.write(...)`, one write section: Lance commits are
atomic per table but there is no multi-table transaction, so writes are ordered to leave a
repairable state if interrupted.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import os
import threading
from collections.abc import Iterable, Iterator, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from dcpm_cli.errors import (
    DiskFull,
    EmbedderMismatch,
    LockBusy,
    StoreError,
    StoreMissing,
    TextSearchFailed,
    disk_full,
)
from dcpm_cli.models import (
    PENDING,
    REPLACED,
    Calibration,
    DreamRun,
    Event,
    MemoryItem,
    Passage,
    RawInput,
    moment,
    place,
)
from dcpm_cli.store import schemas as S
from dcpm_cli.store.base import WHERE as _WHERE
from dcpm_cli.store.base import Lance, Write, cannot_write, uninterrupted
from dcpm_cli.store.base import utc as _utc
from dcpm_cli.store.claims import Claims
from dcpm_cli.store.dump import Records
from dcpm_cli.store.erase import EraseVerbs
from dcpm_cli.store.graph import Graph, GraphVerbs
from dcpm_cli.store.journal import JournalVerbs
from dcpm_cli.store.passages import Passages
from dcpm_cli.store.runs import DreamLog
from dcpm_cli.store.sql import in_list as _in
from dcpm_cli.store.sql import quote as _q
from dcpm_cli.store.sql import timestamp
from dcpm_cli.store.staging import Staged, StagingVerbs, fields
from dcpm_cli.store.vectors import Term, VectorSearch

if TYPE_CHECKING:
    import numpy as np
    import pyarrow as pa

    from dcpm_cli.embed import Embedder

T = TypeVar("T")
Found = MemoryItem | RawInput | Passage  # what a search finds

# Rust-side deprecation chatter from lance would otherwise reach the user's terminal.
os.environ.setdefault("LANCE_LOG", "error")
os.environ.setdefault("RUST_LOG", "error")


class Store(GraphVerbs, JournalVerbs, EraseVerbs, StagingVerbs):
    """A dcpm store at a LanceDB URI (a local directory, or object storage)."""

    def __init__(
        self, uri: str, embedder: Embedder, *, state_dir: Path | None = None, create: bool = True
    ) -> None:
        """`state_dir`: where this machine keeps the small state of a store on object storage
        (lock files, markers of unfinished writes, claims), the dcpm home; a local store keeps
        its own in its directory and needs none."""
        import lancedb

        self.uri = uri
        self.embedder_id = embedder.model_id
        self.dim = embedder.dim
        self.local_path: Path | None = None if "://" in uri else Path(uri).expanduser()
        self.state_dir = None if state_dir is None else Path(state_dir).expanduser()
        if self.local_path is None and self.state_dir is None:
            raise StoreError(
                f"the store {uri} is on object storage: it needs a local state directory", _WHERE
            )
        if self.local_path is not None:
            if not create and not self.local_path.exists():
                raise StoreMissing(f"nothing stored yet at {uri}", 'add something: dcpm add "..."')
            _usable_dir(self.local_path, uri, write=create)
        try:
            # Interval 0: every read sees commits made by other processes (cron + a shell pipe).
            self.db = lancedb.connect(str(self.local_path or uri), read_consistency_interval=timedelta(0))
        except (OSError, ValueError) as e:
            raise StoreError(f"cannot open store {uri}: {e}", "check --store / DCPM_HOME") from e
        self._lance = Lance(self.db, self.dim)
        self.dream_log = DreamLog(self._lance)
        self.graph = Graph(self._lance)
        self.passages = Passages(self._lance, lambda: self._vectors)
        self.claims = Claims(self._state_dir("claims"))
        self.records = Records(self._lance, self)
        self._dir_id = self._directory_id()
        if not self._up_to_date():  # so a reader never waits for a writer's lock
            with self.write():
                self._check_embedder()
                from dcpm_cli.store.migrations import apply_migrations

                apply_migrations(self)

    # -- infrastructure -------------------------------------------------------------------

    @contextlib.contextmanager
    def write(
        self,
        kind: Write = Write.SETTLED,
        *,
        timeout: float = 600.0,
        unfinished: str | None = None,
        sessions: Sequence[str] = (),
        **detail: Any,
    ) -> Iterator[None]:
        """One write section: writers serialised across processes (and, on object storage,
        across machines by a lease); re-entrant within one thread (a repair run by a command
        already inside one). On entry the staged writes are settled as `kind` says (see
        Write). With `unfinished`, the section is marked as a multi-step write of that name
        (with the `sessions` whose passages it touches): the marker stays if the block raises
        or the process dies, so the next writer repairs what it left."""
        try:
            with self._locked(timeout, flush=kind.flush, fold=kind.fold):
                if unfinished is None:
                    yield
                else:
                    with self.unfinished(unfinished, sessions=sessions, **detail):
                        yield
        except (OSError, RuntimeError, ValueError) as e:
            # A full disk is expected, not a crash; the marker stays for the next command.
            if not (why := disk_full(e)):
                raise
            raise DiskFull(
                f"the disk is full ({why}): the store at {self.uri} could not be written",
                "free some space, then run the command again (it finishes what was cut short)",
            ) from e

    @contextlib.contextmanager
    def reading(self) -> Iterator[None]:
        """A consistent read (check, export, backup): under the write lock, so no writer is
        half-way; on a store this process cannot write to (a read-only snapshot) the lock
        cannot be taken, and the store is read as it is."""
        if self.local_path is not None and not self._can_lock():
            yield
            return
        with self.write():
            yield

    def _can_lock(self) -> bool:
        """Whether the lock file can be opened for writing (tried, not guessed from the mode
        bits: root, a read-only mount and ACLs all answer differently)."""
        try:
            with open(self._lock_path(), "a"):
                return True
        except OSError:
            return False

    @contextlib.contextmanager
    def _locked(self, timeout: float, *, flush: bool, fold: bool) -> Iterator[None]:
        held = self.__dict__.setdefault("_lock_depth", threading.local())
        if getattr(held, "depth", 0):
            held.depth += 1
            try:
                yield
            finally:
                held.depth -= 1
            return
        from filelock import FileLock, Timeout

        lock = FileLock(str(self._lock_path()), timeout=timeout)
        try:
            with lock:
                held.depth = 1
                try:
                    if self.local_path is None:
                        with self._remote_lease():
                            yield
                    else:
                        self._same_store_as_opened()
                        self.settle(flush=flush, fold=fold)
                        yield
                finally:
                    held.depth = 0
        except Timeout as e:
            raise LockBusy("another dcpm process is writing to this store", "try again later") from e
        except OSError as e:
            if (refused := cannot_write(self.uri, e)) is None:
                raise
            raise refused from e

    @contextlib.contextmanager
    def _remote_lease(self) -> Iterator[None]:
        """On object storage, refuse to interleave with a writer on another machine."""
        from dcpm_cli.store import remote

        owner = self.__dict__.setdefault("_owner", remote.new_owner())
        if self.has_table(S.META):
            remote.take_lease(self, owner)
        try:
            yield
        finally:
            if self.has_table(S.META):
                remote.drop_lease(self, owner)

    def _directory_id(self) -> tuple[int, int] | None:
        """The local store directory's identity (device, inode), or None (not there yet)."""
        try:
            st = self.local_path.stat() if self.local_path is not None else None
        except OSError:
            return None
        return None if st is None else (st.st_dev, st.st_ino)

    def _same_store_as_opened(self) -> None:
        """Before a write or a search: a store swapped under this process since it opened it
        (`dcpm reembed` while a warm MCP server runs) is checked again, so no vector of the old
        embedder lands in a store of the new one, and no question embedded by the old model is
        ranked against the new one's vectors: EmbedderMismatch, where it wrote the old model's
        vectors and read a meaningless cosine. One stat() of the directory."""
        now = self._directory_id()
        if now is not None and self._dir_id is not None and now != self._dir_id:
            self._lance.reopen()  # no table handle of the old directory
            self.__dict__.pop("_vectors", None)  # nor a copy of its vectors
            self.__dict__.pop("_text_indexed", None)  # nor what it knew of its indices
            self._refuse_other_embedder(self.meta())
        if now is not None:  # away for a moment (a swap by two renames): keep the one opened
            self._dir_id = now

    def _lock_path(self) -> Path:
        if self.local_path is not None:
            return self.local_path / ".write.lock"
        from dcpm_cli.store.remote import local_lock_path

        return local_lock_path(self._machine_dir(), self.uri)

    def table(self, name: str) -> Any:
        return self._lance.table(name)

    def has_table(self, name: str) -> bool:
        return self._lance.has_table(name)

    def drop_table(self, name: str) -> None:
        self._lance.drop_table(name)
        self._text_indexed.discard(name)

    def create_table_if_missing(self, name: str, schema: pa.Schema) -> None:
        self._lance.create_table_if_missing(name, schema)

    def applied_migrations(self) -> set[str]:
        if not self.has_table(S.MIGRATIONS):
            return set()
        return {r["name"] for r in self._rows(S.MIGRATIONS, None, ["name"])}

    def record_migration(self, name: str) -> None:
        import pyarrow as pa

        schema = pa.schema([("name", pa.string()), ("applied_at", S.TS)])
        self.create_table_if_missing(S.MIGRATIONS, schema)
        self.table(S.MIGRATIONS).add(
            pa.table({"name": [name], "applied_at": [datetime.now(UTC)]}, schema=schema)
        )

    def _up_to_date(self) -> bool:
        """The embedder recorded (and the configured one) and every migration applied: nothing
        to write, so no lock to take."""
        from dcpm_cli.store.migrations import MIGRATIONS

        meta = self.meta() if self.has_table(S.META) else {}
        if not meta:
            return False
        self._refuse_newer_format(meta)
        self._refuse_other_embedder(meta)
        return {name for name, _ in MIGRATIONS} <= self.applied_migrations()

    def _check_embedder(self) -> None:
        import pyarrow as pa

        self.create_table_if_missing(S.META, S.initial(self.dim)[S.META])
        meta = self.meta()
        if not meta:
            rows = [
                {"key": "embedder", "value": self.embedder_id},
                {"key": "dim", "value": str(self.dim)},
            ]
            self.table(S.META).add(pa.Table.from_pylist(rows, schema=S.initial(self.dim)[S.META]))
            return
        self._refuse_newer_format(meta)
        self._refuse_other_embedder(meta)

    def _refuse_newer_format(self, meta: dict[str, str]) -> None:
        from dcpm_cli.store.migrations import FORMAT_VERSION

        try:
            found = int(meta.get("format", "1"))
        except ValueError:
            found = FORMAT_VERSION + 1  # not a number this dcpm ever wrote
        if found > FORMAT_VERSION:
            raise StoreError(
                f"this store has format {meta.get('format')}, written by a newer dcpm; "
                f"this dcpm reads formats up to {FORMAT_VERSION}",
                "upgrade dcpm (pip install -U dcpm); the store is left untouched",
            )

    def set_meta(self, key: str, value: str) -> None:
        import pyarrow as pa

        data = pa.Table.from_pylist([{"key": key, "value": value}], schema=S.initial(self.dim)[S.META])
        merge = self.table(S.META).merge_insert("key")
        merge.when_matched_update_all().when_not_matched_insert_all().execute(data)

    def facts_set_aside(self) -> set[str]:
        """Facts a dream leaves out: evidence of a schema or intention the user forgot."""
        import json

        return set(json.loads(self.meta().get(_SET_ASIDE, "[]")))

    def set_facts_aside(self, *, add: Iterable[str] = (), remove: Iterable[str] = ()) -> None:
        import json

        before = self.facts_set_aside()
        after = (before | set(add)) - set(remove)
        if after != before:
            self.set_meta(_SET_ASIDE, json.dumps(sorted(after)))

    def _refuse_other_embedder(self, meta: dict[str, str]) -> None:
        if meta.get("embedder") != self.embedder_id or meta.get("dim") != str(self.dim):
            from dcpm_cli.embed import embedder_option

            raise EmbedderMismatch(
                f"this store's vectors were made by {meta.get('embedder')} ({meta.get('dim')} dims); "
                f"the configured embedder is {self.embedder_id} ({self.dim} dims)",
                f"use --embedder {embedder_option(meta.get('embedder'))}, `dcpm reembed` to move the"
                " store to the other model, or a new --store for it",
            )

    def meta(self) -> dict[str, str]:
        return {r["key"]: r["value"] for r in self._rows(S.META, None, ["key", "value"])}

    def _rows(
        self,
        table: str,
        where: str | None,
        columns: Sequence[str] | None = None,
        limit: int | None = None,
    ) -> list[dict[str, Any]]:
        return self._lance.rows(table, where, columns, limit)

    def count(self, table: str, where: str | None = None) -> int:
        return self._lance.count(table, where)

    def _table_of(
        self, objs: Sequence[Any], table: str, vectors: np.ndarray | None = None, **extra: list
    ) -> pa.Table:
        return self._lance.arrow_of(objs, table, vectors, **extra)

    def _schema(self, table: str) -> pa.Schema:
        return self._lance.schema(table)

    _from_row = staticmethod(Lance.model_of)

    # -- the dream run log and calibrations (store/runs.py) -------------------------------

    def save_dream_run(self, run: DreamRun) -> None:
        self.dream_log.save_run(run)

    def dream_runs(self, n: int | None = 10) -> list[DreamRun]:
        return self.dream_log.runs(n)

    def declined_clusters(self) -> set[str]:
        return self.dream_log.declined_clusters()

    def forget_declined(self) -> int:
        return self.dream_log.forget_declined()

    def save_calibration(self, cal: Calibration) -> None:
        self.dream_log.save_calibration(cal)

    def calibration_for(self, embedder_id: str) -> Calibration | None:
        return self.dream_log.calibration_for(embedder_id)

    # -- passages (store/passages.py) -----------------------------------------------------

    def index_passages(self, sessions: Iterable[str] | None = None) -> int:
        return self.passages.index(sessions)

    def all_passages(self) -> list[Passage]:
        return self.passages.all()

    def inputs_without_passage(self) -> dict[str, list[str]]:
        return self.passages.inputs_without_passage()

    # -- claims (store/claims.py) ---------------------------------------------------------

    def claims_on(self, raw_ids: Sequence[str]) -> dict[str, tuple[str, datetime]]:
        return self.claims.held_on(raw_ids)

    def claim(self, raw_ids: Sequence[str], owner: str, lease: timedelta) -> list[str]:
        return self.claims.claim(raw_ids, owner, lease)

    def holds(self, raw_id: str, owner: str) -> bool:
        return self.claims.holds(raw_id, owner)

    def release(self, raw_ids: Sequence[str], owner: str) -> None:
        self.claims.release(raw_ids, owner)

    def stale_claims(self) -> list[str]:
        return self.claims.stale()

    def drop_claims(self, raw_ids: Sequence[str]) -> None:
        self.claims.drop(raw_ids)

    # -- export and import records (store/dump.py) ---------------------------------------

    def record_count(self, kind: str) -> int:
        return self.records.count(kind)

    def dump(self, kind: str, *, with_vectors: bool, batch_rows: int = 2048) -> Iterator[dict[str, Any]]:
        return self.records.dump(kind, with_vectors=with_vectors, batch_rows=batch_rows)

    def from_json(self, kind: str, record: dict[str, Any]) -> dict[str, Any]:
        return self.records.from_json(kind, record)

    def advance(self, kind: str, rows: Sequence[dict[str, Any]]) -> tuple[int, list[MemoryItem]]:
        return self.records.advance(kind, rows)

    @staticmethod
    def sessions_of(kind: str, rows: Sequence[dict[str, Any]]) -> set[str]:
        return Records.sessions_of(kind, rows)

    def new_record_keys(self, kind: str, rows: Sequence[dict[str, Any]]) -> list[int]:
        return self.records.new_keys(kind, rows)

    def load(self, kind: str, rows: Sequence[dict[str, Any]], vectors: dict[str, np.ndarray | None]) -> None:
        self.records.load(kind, rows, vectors)

    # -- raw inputs -----------------------------------------------------------------------

    def known_raw_hashes(self, hashes: Sequence[str]) -> set[str]:
        copy = self._vectors.copy(S.RAW, self.table(S.RAW))  # a warm writer's, if it has one
        if copy is not None:
            return set(copy.values(copy.positions("content_hash", hashes), "content_hash").to_pylist())
        known: set[str] = set()
        for i in range(0, len(hashes), 500):
            chunk = hashes[i : i + 500]
            rows = self._rows(S.RAW, _in("content_hash", chunk), ["content_hash"])
            known.update(r["content_hash"] for r in rows)
        return known

    def said_before(
        self, raws: Sequence[RawInput], forgotten: Mapping[str, set[int]]
    ) -> dict[str, tuple[str, str, datetime]]:
        """content hash → (session, source, time) of the stored input that
        is one of `raws` from another source (file, stdin, tool) or in another session: the same
        words and speaker at the same moment (`moment`), the turns of one moment matched in
        their order (a log cut inside a minute by `tail` numbers that minute's turns from the
        cut). What the writer needs to tell a journal renamed, a chat piped in after it was
        imported by name or again under another session, from a new conversation that happens
        to open with the same "Hi" at the same time. `forgotten`: `forgotten_places(raws)`, the
        places a forgotten turn left in its moment."""
        news: dict[datetime, dict[str, list[RawInput]]] = {}  # moment → session → its turns then
        for r in sorted(raws, key=lambda r: r.said_at):
            news.setdefault(moment(r.said_at), {}).setdefault(r.session, []).append(r)
        stored: dict[tuple[datetime, str], list[dict[str, Any]]] = {}
        for low, high in _spans(sorted(news)):
            where = f"said_at >= {timestamp(low)} AND said_at <= {timestamp(high)} AND {_LIVE}"
            for row in self._rows(S.RAW, where, ["text", "role", "said_at", "source", "session"]):
                if (at := moment(row["said_at"])) in news:
                    stored.setdefault((at, row["session"] or ""), []).append(row)
        found: dict[str, tuple[str, str, datetime]] = {}
        for (at, session), rows in stored.items():
            for turns in news[at].values():
                for r, row in _in_step(turns, rows, forgotten):
                    if (r.source, r.session, r.said_at) != (row["source"], session, row["said_at"]):
                        found[r.content_hash] = (session, row["source"], row["said_at"])
        return found

    def said_in(self, session: str) -> int:
        """How many inputs `session` holds (an edited day's old words not among them)."""
        return self.count(S.RAW, f"session = {_q(session)} AND {_LIVE}")

    def said_since(self, session: str, when: datetime) -> int:
        """How many inputs of `session` were said at `when` or after (an edited day's old words
        not among them)."""
        return self.count(S.RAW, f"session = {_q(session)} AND said_at >= {timestamp(when)} AND {_LIVE}")

    def add_raw(self, raws: Sequence[RawInput], vectors: np.ndarray | None, why: str = "") -> None:
        """Append new inputs and their passages (the caller holds the write lock); a marker
        left by a cut between the two has the next writer rebuild the passages. With no
        vectors (the embedder failed: `why`) inputs are marked, and `set_raw_vectors` completes
        them later."""
        if raws:
            sessions = sorted({r.session for r in raws if r.role == "user" and r.session})
            error = [f"{NO_VECTOR}: {why}" if vectors is None else r.error for r in raws]
            if vectors is None:
                self._flag_inputs_without_vectors(True)  # before the rows: a crash leaves it up
            staged = self._staging_now()
            if staged is not None:
                # In a group the passages are rebuilt at the flush; the log says so before the
                # rows are committed, so a crash in between leaves a replay that rebuilds them.
                staged.index_passages(sessions)
                self.write_staged()
                data = self._table_of(raws, S.RAW, vectors, error=error)
                with uninterrupted():  # what `add` reports stored is what was committed
                    self._vectors.wrote(S.RAW, self.table(S.RAW).add(data), rows=data)
                return
            with self.unfinished("raw", sessions=sessions):
                data = self._table_of(raws, S.RAW, vectors, error=error)
                with uninterrupted():
                    self._vectors.wrote(S.RAW, self.table(S.RAW).add(data), rows=data)
                self.index_passages(sessions)

    def raw_without_vectors(self) -> list[RawInput]:
        """Inputs stored while the embedder was failing (found by their mark: cheap, unlike a
        scan of the vector column). In a local store a flag file says whether any can exist,
        so the usual answer, none, costs a `stat` instead of a query on every write."""
        if self.local_path is not None and not self._no_vector_flag().exists():
            return []
        return [self._from_row(RawInput, r) for r in self._rows(S.RAW, _NO_VECTOR_YET, _RAW_COLUMNS)]

    def reflag_inputs_without_vectors(self) -> None:
        """Raise the flag when inputs stored without a vector exist (stores from before it)."""
        if self._rows(S.RAW, _NO_VECTOR_YET, ["id"], limit=1):
            self._flag_inputs_without_vectors(True)

    def _no_vector_flag(self) -> Path:
        return self._state_dir("flags") / "inputs-without-vectors"

    def _flag_inputs_without_vectors(self, up: bool) -> None:
        flag = self._no_vector_flag()
        if up:
            flag.parent.mkdir(parents=True, exist_ok=True)
            flag.touch()
        else:
            flag.unlink(missing_ok=True)

    def set_raw_vectors(self, raws: Sequence[RawInput], vectors: np.ndarray) -> None:
        """Give inputs stored without a vector theirs, and rebuild their passages."""
        for r, v in zip(raws, vectors, strict=True):
            values = {"vector": [float(x) for x in v], "error": ""}
            self.table(S.RAW).update(where=f"id = {_q(r.id)} AND {_NO_VECTOR_YET}", values=values)
        ids = [r.id for r in raws]
        for i in range(0, len(ids), 500):
            self.table(S.PASSAGES).delete(f"array_has_any(raw_ids, [{', '.join(map(_q, ids[i : i + 500]))}])")
        self.index_passages({r.session for r in raws if r.role == "user"})
        if not self._rows(S.RAW, _NO_VECTOR_YET, ["id"], limit=1):
            self._flag_inputs_without_vectors(False)

    def get_raw(self, ids: Sequence[str]) -> dict[str, RawInput]:
        if not ids:
            return {}
        rows = self._raw_seen(self._rows(S.RAW, _in("id", ids), _RAW_COLUMNS))
        return {r["id"]: self._from_row(RawInput, r) for r in rows}

    def _raw_seen(self, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Raw rows as this writer sees them: with the statuses it has staged."""
        staged = self._staged
        if staged is None or not staged.status:
            return rows
        return [staged.patch_raw(r) for r in rows]

    def note_versions(self, session: str, sources: Sequence[str]) -> list[RawInput]:
        """The inputs of these files (a notes folder's notes, a journal) in `session`, any status."""
        if not sources:
            return []
        rows = self._raw_seen(
            self._rows(S.RAW, f"session = {_q(session)} AND {_in('source', sources)}", _RAW_COLUMNS)
        )
        return [self._from_row(RawInput, r) for r in rows]

    def raw_by_status(self, statuses: Sequence[str], limit: int | None = None) -> list[RawInput]:
        """Raw inputs in these statuses, oldest first (by when said, then when stored)."""
        where = _in("status", statuses)
        staged = self._staged
        if staged is not None and staged.status:  # a staged status may bring a row into them
            where = f"({where}) OR {_in('id', list(staged.status))}"
        rows = [r for r in self._raw_seen(self._rows(S.RAW, where, _RAW_COLUMNS)) if r["status"] in statuses]
        rows.sort(key=lambda r: (r["said_at"], r["created_at"], r["id"]))
        return [self._from_row(RawInput, r) for r in rows[:limit]]

    def recent_raw(self, session: str, before: datetime, n: int) -> list[RawInput]:
        """The n inputs said just before `before` in the same session: extraction's context."""
        return self._said_before(session, before, None, n, buy=True)

    def turn_before(self, raw: RawInput) -> RawInput | None:
        """The input said just before `raw` in its session, or None: by when each was said, then
        when stored, so turns given one time (minute-precision adds, an export's messages with
        no time of their own) keep the order they were added in."""
        if not raw.session:
            return None
        before = self._said_before(raw.session, raw.said_at, raw.created_at, 1, buy=False)
        return before[-1] if before else None

    def turn_after(self, raw: RawInput) -> RawInput | None:
        """The input said just after `raw` in its session (the reply to it, when the assistant's),
        or None; the order is `turn_before`'s. Read a day ahead first, as a reply is minutes off."""
        if not raw.session:
            return None
        cut = (_micros_of(raw.said_at), _micros_of(raw.created_at))
        base = f"session = {_q(raw.session)} AND said_at >= {timestamp(raw.said_at)}"
        rows: list[dict[str, Any]] = []
        for days in (1, 30, None):
            until = "" if days is None else _until(raw.said_at, days)
            rows = self._rows(S.RAW, base + until, _RAW_COLUMNS)
            rows = [r for r in rows if (_micros_of(r["said_at"]), _micros_of(r["created_at"])) > cut]
            if rows:
                break
        first = min(rows, key=lambda r: (r["said_at"], r["created_at"]), default=None)
        return self._from_row(RawInput, first) if first is not None else None

    def _said_before(
        self, session: str, said: datetime, stored: datetime | None, n: int, *, buy: bool
    ) -> list[RawInput]:
        """The n inputs of `session` said last before `said` (with `stored`, said at `said` too
        when stored before `stored`), oldest first. A `buy` may buy the table's in-memory copy
        (a writer's many lookups); a lookup that does not (recall's) takes it only if it is there."""
        if n <= 0:
            return []
        copy = self._vectors.copy(S.RAW, self.table(S.RAW), use=buy)
        if copy is not None:  # a warm writer: the session's rows are in memory
            return [self._from_row(RawInput, r) for r in _last_before(copy, session, said, n, stored)]

        cut = (_micros_of(said), _micros_of(stored) if stored is not None else -1)
        base = f"session = {_q(session)} AND said_at {'<' if stored is None else '<='} {timestamp(said)}"
        # Most context is minutes old: read a day back first, widen only when that is short
        # (reading a 10k-turn session whole for six turns made `dcpm process` quadratic).
        for days in (1, 30, None):
            since = "" if days is None else _since(said, days)
            rows = self._rows(S.RAW, base + since, _RAW_COLUMNS)
            rows = [r for r in rows if (_micros_of(r["said_at"]), _micros_of(r["created_at"])) < cut]
            if len(rows) >= n:
                break
        rows.sort(key=lambda r: (r["said_at"], r["created_at"]))
        return [self._from_row(RawInput, r) for r in rows[-n:]]

    def set_raw_status(
        self,
        raw_id: str,
        status: str,
        error: str = "",
        attempts: int | None = None,
        *,
        unless: Sequence[str] = (),
    ) -> None:
        """Move an input's status; `unless`: leave it when it is already in one of these
        (another process finished it meanwhile)."""
        values: dict[str, Any] = {"status": status, "error": error}
        if attempts is not None:
            values["attempts"] = attempts
        staged = self._staging_now()
        if staged is not None and not unless:
            staged.set_raw_status(raw_id, values)
            return
        where = f"id = {_q(raw_id)}" + (f" AND NOT {_in('status', unless)}" if unless else "")
        done = self.table(S.RAW).update(where=where, values=values)
        self._vectors.wrote(S.RAW, done, changed={raw_id: values} if done.rows_updated else None)

    def note_raw_error(self, raw_ids: Sequence[str], error: str) -> None:
        """Record why these inputs still wait, status unchanged (one commit per 500 ids)."""
        for i in range(0, len(raw_ids), 500):
            self.table(S.RAW).update(where=_in("id", raw_ids[i : i + 500]), values={"error": error})

    # -- memory items ---------------------------------------------------------------------

    def add_items(self, items: Sequence[MemoryItem], vectors: np.ndarray) -> None:
        """Insert new items; ids already present are left as they are (re-runs are idempotent).
        The caller holds the write lock, so the ids found absent stay absent: a plain append
        (~7 ms) rather than a merge-insert (~30 ms, a join against the table)."""
        present = self.get_items([i.id for i in items])
        new = [n for n, i in enumerate(items) if i.id not in present]
        if not new:
            return
        items = [items[n] for n in new]
        staged = self._staging_now()
        if staged is not None:
            staged.add_items(items, vectors[new])
            return
        data = self._table_of(items, S.ITEMS, vectors[new], content_hash=[i.content_hash for i in items])
        self._vectors.wrote(S.ITEMS, self.table(S.ITEMS).add(data), rows=data)

    def replace_items(self, items: Sequence[MemoryItem], vectors: np.ndarray) -> None:
        """Overwrite items by id (UPDATE keeps the previous text in the event log first)."""
        if not items:
            return
        staged = self._staging_now()
        if staged is not None:
            staged.replace_items(items, vectors)
            return
        data = self._table_of(items, S.ITEMS, vectors, content_hash=[i.content_hash for i in items])
        merge = self.table(S.ITEMS).merge_insert("id").when_matched_update_all()
        self._vectors.wrote(S.ITEMS, merge.when_not_matched_insert_all().execute(data), rows=data)

    def get_items(self, ids: Sequence[str]) -> dict[str, MemoryItem]:
        if not ids:
            return {}
        return {r["id"]: self._from_row(MemoryItem, r) for r in self._items_where("id", ids)}

    def current_items_by_hash(self, hashes: Sequence[str]) -> dict[str, str]:
        """content hash → id of a current (not superseded) item with that content."""
        if not hashes:
            return {}
        rows = self._items_where("content_hash", hashes, current=True)
        return {r["content_hash"]: r["id"] for r in rows}

    def _items_where(
        self, column: str, values: Sequence[str], *, current: bool = False
    ) -> list[dict[str, Any]]:
        """Items whose `column` is one of `values`: from this process's in-memory copy of the
        table when its searches have made one (an agent, a batch: kept current like the
        search), else from LanceDB."""
        columns = [*_ITEM_COLUMNS, "content_hash"]
        copy = self._vectors.copy(S.ITEMS, self.table(S.ITEMS))
        if copy is not None:
            rows = copy.find(column, values, columns, [("superseded_by", None)] if current else [])
        else:
            where = _in(column, values) + (" AND superseded_by IS NULL" if current else "")
            rows = self._rows(S.ITEMS, where, columns)
        staged = self._staged
        if staged is None or not staged:
            return rows
        # This writer's staged rows over the table's (a link can make a row not current).
        seen = [r for r in map(staged.patch_item, rows) if r is not None]
        seen += [{c: r[c] for c in columns} for r in staged.item_rows(column, values)]
        return [r for r in seen if r["superseded_by"] is None] if current else seen

    def nearest_items(
        self,
        vector: np.ndarray,
        k: int,
        *,
        current_only: bool = True,
        kinds: Sequence[str] | None = None,
    ) -> list[tuple[MemoryItem, float]]:
        """The k items most similar to `vector`, with cosine similarity."""
        return self.nearest_items_many(vector[None, :], k, current_only=current_only, kinds=kinds)[0]

    def nearest_items_many(
        self,
        vectors: np.ndarray,
        k: int,
        *,
        current_only: bool = True,
        kinds: Sequence[str] | None = None,
    ) -> list[list[tuple[MemoryItem, float]]]:
        """`nearest_items` for each row of `vectors`, in one search."""
        terms: list[Term] = [("kind", tuple(kinds))] if kinds else []
        if current_only:
            terms.append(("superseded_by", None))
        staged = self._staged
        extra = len(staged.items) + len(staged.links) if staged is not None else 0
        found = self._vectors.search_many(
            S.ITEMS, self.table(S.ITEMS), vectors, k + extra, _ITEM_COLUMNS, terms
        )
        if extra:
            found = _with_staged(staged, vectors, found, k, current_only, kinds)  # type: ignore[arg-type]
        return [[(self._from_row(MemoryItem, r), score) for r, score in rows[:k]] for rows in found]

    def set_superseded_by(self, old_id: str, new_id: str) -> None:
        staged = self._staging_now()
        if staged is not None:
            staged.set_superseded_by(old_id, new_id)
            return
        done = self.table(S.ITEMS).update(where=f"id = {_q(old_id)}", values={"superseded_by": new_id})
        self._vectors.wrote(
            S.ITEMS, done, changed={old_id: {"superseded_by": new_id}} if done.rows_updated else None
        )

    def set_chain_links(self, links: Mapping[str, Sequence[str | None]]) -> None:
        """Set both pointers of these items, id → (supersedes, superseded_by), in one commit:
        a join or a cut of a chain is never half made (`forget`, `dcpm link`, `dcpm unlink`)."""
        if not links:
            return
        import pyarrow as pa

        changed = {i: {"supersedes": before, "superseded_by": after} for i, (before, after) in links.items()}
        schema = self._schema(S.ITEMS)
        data = pa.Table.from_pylist(
            [{"id": i, **values} for i, values in changed.items()],
            schema=pa.schema([schema.field(c) for c in ("id", "supersedes", "superseded_by")]),
        )
        done = self.table(S.ITEMS).merge_insert("id").when_matched_update_all().execute(data)
        self._vectors.wrote(S.ITEMS, done, changed=changed)

    def _commit_staged(self, staged: Staged) -> None:
        """A group's staged writes in one commit per table (the caller holds the lock): new
        items, items rewritten whole, chain back-pointers, the event log, raw statuses. Cut
        short, the log is replayed instead (store/staging.py)."""
        import numpy as np
        import pyarrow as pa

        new = [item for item_id, item in staged.items.items() if item_id in staged.new]
        if new:
            vectors = np.stack([staged.vectors[i.id] for i in new])
            data = self._table_of(new, S.ITEMS, vectors, content_hash=[i.content_hash for i in new])
            self._vectors.wrote(S.ITEMS, self.table(S.ITEMS).add(data), rows=data)
        rewritten = [item for item_id, item in staged.items.items() if item_id not in staged.new]
        if rewritten:
            self.replace_items(rewritten, np.stack([staged.vectors[i.id] for i in rewritten]))
        if staged.links:
            data = pa.table({"id": list(staged.links), "superseded_by": list(staged.links.values())})
            done = self.table(S.ITEMS).merge_insert("id").when_matched_update_all().execute(data)
            changed = {old: {"superseded_by": new_id} for old, new_id in staged.links.items()}
            self._vectors.wrote(S.ITEMS, done, changed=changed)
        if staged.events:
            self.log_events(list(staged.events.values()))  # an id logged before stays as it was
        by_columns: dict[tuple[str, ...], dict[str, dict[str, Any]]] = {}
        for raw_id, values in staged.status.items():
            by_columns.setdefault(tuple(sorted(values)), {})[raw_id] = values
        raw_schema = self._schema(S.RAW)
        for columns, rows in by_columns.items():
            schema = pa.schema([raw_schema.field("id"), *(raw_schema.field(c) for c in columns)])
            data = pa.Table.from_pylist([{"id": k, **v} for k, v in rows.items()], schema=schema)
            done = self.table(S.RAW).merge_insert("id").when_matched_update_all().execute(data)
            self._vectors.wrote(S.RAW, done, changed=rows)
        if staged.sessions:
            self.index_passages(sorted(staged.sessions))

    def chain(self, item_id: str) -> list[MemoryItem]:
        """The whole revision chain through `item_id`, oldest first."""
        items = self.get_items([item_id])
        if not items:
            return []
        node = items[item_id]
        seen = {node.id}
        back = self._walk(node, "supersedes", seen)
        forward = self._walk(node, "superseded_by", seen)
        return [*reversed(back), node, *forward]

    def head(self, item_id: str) -> MemoryItem | None:
        """The newest state of the chain through `item_id`."""
        item = self.get_items([item_id]).get(item_id)
        if item is None:
            return None
        return ([item, *self._walk(item, "superseded_by", {item.id})])[-1]

    def _walk(self, start: MemoryItem, pointer: str, seen: set[str]) -> list[MemoryItem]:
        """Follow one pointer of the chain from `start` (a cycle, or a missing item, ends it)."""
        out: list[MemoryItem] = []
        cur = start
        while (nxt_id := getattr(cur, pointer)) and nxt_id not in seen:
            nxt = self.get_items([nxt_id]).get(nxt_id)
            if nxt is None:
                break
            out.append(nxt)
            seen.add(nxt.id)
            cur = nxt
        return out

    def all_items(self, where: str | None = None) -> list[MemoryItem]:
        return [self._from_row(MemoryItem, r) for r in self._rows(S.ITEMS, where, _ITEM_COLUMNS)]

    def repair_chains(self) -> int:
        """Restore back-pointers a crash left out (new.supersedes set, old.superseded_by not);
        the caller holds the write lock. Returns how many were restored."""
        rows = self._rows(S.ITEMS, "supersedes IS NOT NULL", ["id", "supersedes", "created_at"])
        olds = sorted({r["supersedes"] for r in rows})
        back: dict[str, str | None] = {}
        for i in range(0, len(olds), 500):
            for r in self._rows(S.ITEMS, _in("id", olds[i : i + 500]), ["id", "superseded_by"]):
                back[r["id"]] = r["superseded_by"]
        fixed = 0
        for r in sorted(rows, key=lambda r: (r["created_at"], r["id"])):
            old = r["supersedes"]
            if old in back and back[old] is None:
                self.set_superseded_by(old, r["id"])
                back[old] = r["id"]
                fixed += 1
        return fixed

    def chain_pointers(self) -> dict[str, tuple[str | None, str | None]]:
        """id → (supersedes, superseded_by) for every item that holds a pointer, and for every
        item a pointer names (None when that item does not exist: not in the dict)."""
        where = "supersedes IS NOT NULL OR superseded_by IS NOT NULL"
        columns = ["id", "supersedes", "superseded_by"]
        out = {r["id"]: (r["supersedes"], r["superseded_by"]) for r in self._rows(S.ITEMS, where, columns)}
        named = sorted({p for pair in out.values() for p in pair if p and p not in out})
        for i in range(0, len(named), 500):
            for r in self._rows(S.ITEMS, _in("id", named[i : i + 500]), columns):
                out[r["id"]] = (r["supersedes"], r["superseded_by"])
        return out

    def items_without_sources(self) -> list[tuple[str, list[str]]]:
        """(item id, its raw ids that are not stored) for every item whose provenance is broken."""
        raw_ids = {r["id"] for r in self._rows(S.RAW, None, ["id"])}
        out = []
        for r in self._rows(S.ITEMS, None, ["id", "raw_ids"]):
            missing = [x for x in r["raw_ids"] or [] if x not in raw_ids]
            if missing or not r["raw_ids"]:
                out.append((r["id"], missing))
        return out

    def raw_health(self) -> tuple[int, list[str], list[str]]:
        """Every raw input read back whole: (rows read, ids of unreadable rows — no text, no
        time, no id —, ids stored more than once)."""
        seen: set[str] = set()
        bad: list[str] = []
        twice: list[str] = []
        n = 0
        query = self.table(S.RAW).search().select(["id", "text", "said_at", "content_hash"]).limit(None)
        for batch in query.to_batches(8192):
            for r in batch.to_pylist():
                n += 1
                if not r["id"] or r["text"] is None or r["said_at"] is None or not r["content_hash"]:
                    bad.append(r["id"] or f"row {n}")
                elif r["id"] in seen:
                    twice.append(r["id"])
                seen.add(r["id"] or "")
        return n, bad, twice

    def vector_dims(self) -> dict[str, int]:
        """table → the width of its vector column."""
        out = {}
        for name in (S.RAW, S.ITEMS, S.NODES, S.PASSAGES):
            if self.has_table(name):
                out[name] = int(self.table(name).schema.field("vector").type.list_size)
        return out

    # -- search (the read path) -----------------------------------------------------------

    def vector_search(
        self,
        collection: str,
        vector: np.ndarray,
        k: int,
        *,
        during: tuple[datetime, datetime] | None = None,
        **filters: Sequence[str] | None,
    ) -> list[tuple[Found, float]]:
        """Items, raw inputs or passages ("items", "raw", "passages") most similar to `vector`,
        with cosine similarity. Filters: kinds= (items), statuses= and roles= (raw); `during`
        = [start, end): items whose event, raw inputs said then (not for passages). Exact, not
        approximate: see store/vectors.py for how it stays fast."""
        self._same_store_as_opened()
        table = _COLLECTIONS[collection]
        terms: list[Term] = [(_FILTER_COLUMNS[name], tuple(v)) for name, v in filters.items() if v]
        span = None if during is None else (_TIME_COLUMNS[table], *during)
        rows = self._vectors.search(table, self.table(table), vector, k, _COLUMNS[table], terms, span)
        return self._found(table, rows)

    def _found(self, table: str, rows: list[tuple[dict[str, Any], float]]) -> list[tuple[Found, float]]:
        model = _MODELS[table]
        return [(self._from_row(model, r), score) for r, score in rows]

    def searchable_rows(self) -> int:
        """How many rows the read path could search: items, raw inputs and passages."""
        return sum(self.count(t) for t in (S.ITEMS, S.RAW, S.PASSAGES) if self.has_table(t))

    @functools.cached_property
    def _vectors(self) -> VectorSearch:
        return VectorSearch(self.db)

    def vectors_of(self, collection: str, ids: Sequence[str]) -> dict[str, np.ndarray]:
        """The stored vectors of these rows of "items" or "raw", by id (rows without one left out)."""
        if not ids:
            return {}
        import numpy as np

        table = _COLLECTIONS[collection]
        copy = self._vectors.copy(table, self.table(table))
        if copy is not None:  # in memory already: no query (the read path calls this on every recall)
            at = copy.positions("id", list(ids))
            found = zip(copy.values(at, "id").to_pylist(), copy.vectors(at), strict=True)
            return {i: v for i, v in found if v.any()}
        rows = self._rows(table, _in("id", ids), ["id", "vector"])
        return {r["id"]: np.asarray(r["vector"], dtype=np.float32) for r in rows if r["vector"] is not None}

    def maintain(self) -> dict[str, list[str]]:
        """Keep reads fast as the store grows: compact tables that many small commits have
        fragmented, fold new rows into their indices, index `id` columns. Returns what was done
        per table; cheap when nothing is due. Run after writes (`Writer.add`, `dcpm dream`)."""
        from dcpm_cli.store.upkeep import maintain

        return maintain(self)

    def text_search(
        self, collection: str, query: str, k: int, **filters: Sequence[str] | None
    ) -> list[tuple[Found, float]]:
        """Items, raw inputs or passages ranked by BM25 over their text (unindexed rows too).
        A query of only stop words or operators finds nothing; a failure (a damaged index)
        raises TextSearchFailed, so the caller can say that results came from vectors only."""
        self._same_store_as_opened()
        table, where = _COLLECTIONS[collection], _filters(filters)
        try:
            self.ensure_text_index(table)
        except StoreError as e:  # a read-only snapshot never indexed: the vectors answer alone
            raise TextSearchFailed(
                f"full-text search of {collection} needs an index ({e.message})",
                "a writable copy of the store gets its index",
            ) from e
        try:
            q = self.table(table).search(query, query_type="fts").limit(k)
            if where:
                q = q.where(where, prefilter=True)
            rows = q.select([*_COLUMNS[table], "_score"]).to_arrow().to_pylist()
        except (ValueError, RuntimeError, OSError) as e:
            self._text_indexed.discard(table)  # look for the index again next time
            why = (str(e).strip().splitlines() or [type(e).__name__])[0][:200]
            raise TextSearchFailed(
                f"full-text search of {collection} failed ({why})", "dcpm check --repair rebuilds the index"
            ) from e
        return self._found(table, [(r, float(r.pop("_score"))) for r in rows])

    def text_index_problems(self) -> dict[str, str]:
        """collection → why its full-text search fails (a query that must run, on each)."""
        out = {}
        for collection in ("raw", "items", "passages"):
            try:
                self.text_search(collection, "dcpm", 1)
            except TextSearchFailed as e:
                out[collection] = e.message
        return out

    def rebuild_text_index(self, collection: str) -> None:
        from lancedb.index import FTS

        with self.write():
            self.table(_COLLECTIONS[collection]).create_index(
                "text", config=FTS(with_position=False), replace=True
            )

    def ensure_text_index(self, table: str) -> None:
        """Index `table`'s text for BM25 if it has no index yet. Once seen, an index is not
        looked for again by this `Store` until a search fails (listing a table's indices is a
        LanceDB round trip, and every recall searches three tables)."""
        if table in self._text_indexed:
            return
        t = self.table(table)
        if not any(i.index_type == "FTS" for i in t.list_indices()):
            from lancedb.index import FTS

            with self.write():
                t.create_index("text", config=FTS(with_position=False), replace=True)
        self._text_indexed.add(table)

    @functools.cached_property
    def _text_indexed(self) -> set[str]:
        return set()

    def items_from_raw(self, raw_id: str) -> list[MemoryItem]:
        """Items whose provenance includes this raw input."""
        return self.all_items(f"array_has_any(raw_ids, [{_q(raw_id)}])")

    def disk_bytes(self) -> int | None:
        if self.local_path is None:
            return None
        return sum(p.stat().st_size for p in self.local_path.rglob("*") if p.is_file())

    def count_by_kind(self, collection: str) -> dict[str, int]:
        """kind → rows, for "items" or "nodes"; status → rows for "raw"."""
        column = "status" if collection == "raw" else "kind"
        counts: dict[str, int] = {}
        columns = ["id", column] if collection == "raw" else [column]
        rows = self._rows(_COLLECTIONS[collection], None, columns)
        for r in self._raw_seen(rows) if collection == "raw" else rows:
            counts[r[column]] = counts.get(r[column], 0) + 1
        return counts

    def chain_links(self) -> list[tuple[str, str | None, str | None]]:
        """(id, supersedes, superseded_by) of every item that is part of a chain."""
        where = "supersedes IS NOT NULL OR superseded_by IS NOT NULL"
        rows = self._rows(S.ITEMS, where, ["id", "supersedes", "superseded_by"])
        return [(r["id"], r["supersedes"], r["superseded_by"]) for r in rows]

    # -- event log ------------------------------------------------------------------------

    def log_events(self, events: Sequence[Event]) -> None:
        staged = self._staging_now()
        if staged is not None and events:
            staged.log_events(events)
            return
        if events:
            # An id logged before stays as it was (a write re-run after a crash logs its events
            # again), unless `forget` blanked it: the same input added again makes the same
            # event, whose words a later `forget` must find to undo what it did.
            data = self._table_of(events, S.EVENTS)
            blanked = "target.previous_text = '' AND target.new_text = '' AND target.detail = ''"
            (
                self.table(S.EVENTS)
                .merge_insert("id")
                .when_matched_update_all(where=blanked)
                .when_not_matched_insert_all()
                .execute(data)
            )

    def judged_pairs(self) -> set[frozenset[str]]:
        """The pairs of item ids a pairwise judgement was recorded for (JUDGED events)."""
        rows = self._rows(S.EVENTS, "op = 'JUDGED'", ["item_id", "target_id"])
        return {frozenset((r["item_id"], r["target_id"])) for r in rows}

    def unlinked_pairs(self) -> set[tuple[str, str]]:
        """The (later, earlier) item pairs the user ever cut apart (UNLINK events)."""
        rows = self._rows(S.EVENTS, "op = 'UNLINK'", ["item_id", "target_id"])
        return {(r["item_id"], r["target_id"]) for r in rows}

    def events_for(self, item_id: str) -> list[Event]:
        where = f"item_id = {_q(item_id)} OR target_id = {_q(item_id)}"
        rows = self._rows(S.EVENTS, where)
        rows.sort(key=lambda r: r["at"])
        return [self._from_row(Event, r) for r in rows]


def _with_staged(
    staged: Staged,
    vectors: np.ndarray,
    found: list[list[tuple[dict[str, Any], float]]],
    k: int,
    current_only: bool,
    kinds: Sequence[str] | None,
) -> list[list[tuple[dict[str, Any], float]]]:
    """Neighbours from the table merged with a writer's staged items: a row the overlay holds
    is taken from it, a staged link can make a row not current. `found` holds k + (staged
    rows) hits per query, enough for every one the overlay takes away."""
    import numpy as np

    mine = [
        item
        for item in staged.items.values()
        if (not kinds or item.kind in kinds) and not (current_only and item.superseded_by)
    ]
    matrix = np.stack([staged.vectors[i.id] for i in mine]) if mine else None
    out = []
    for q, rows in zip(np.atleast_2d(vectors), found, strict=True):
        hits = []
        for row, score in rows:
            seen = staged.patch_item(row)
            if seen is not None and not (current_only and seen["superseded_by"]):
                hits.append((seen, score))
        if matrix is not None:
            unit = q / max(float(np.linalg.norm(q)), 1e-12)
            scores = matrix @ unit.astype(np.float32)
            hits += [(fields(i), float(s)) for i, s in zip(mine, scores, strict=True)]
        hits.sort(key=lambda h: -h[1])
        out.append(hits[:k])
    return out


def _last_before(
    copy: Any, session: str, before: datetime, n: int, stored: datetime | None = None
) -> list[dict[str, Any]]:
    """The n rows of `session` said last before `before` (with `stored`, said at `before` too
    when stored before `stored`), oldest first, from a table copy."""
    import numpy as np

    at = copy.positions("session", [session])
    said, made = _micros(copy.values(at, "said_at")), _micros(copy.values(at, "created_at"))
    earlier = said < _micros_of(before)
    if stored is not None:
        earlier |= (said == _micros_of(before)) & (made < _micros_of(stored))
    at, said, made = at[earlier], said[earlier], made[earlier]
    order = np.lexsort((made, said))[-n:]
    return copy.rows(at[order], _RAW_COLUMNS)


def _micros(values: Any) -> np.ndarray:
    import pyarrow as pa

    return values.cast(pa.int64()).fill_null(0).to_numpy()


def _micros_of(t: datetime) -> int:
    t = _utc(t) or t
    delta = t - datetime(1970, 1, 1, tzinfo=UTC)
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


def _since(before: datetime, days: int) -> str:
    try:
        return f" AND said_at >= {timestamp(before - timedelta(days=days))}"
    except OverflowError:  # an input stored near year 1 by an older dcpm: no lower bound
        return ""


def _until(after: datetime, days: int) -> str:
    try:
        return f" AND said_at < {timestamp(after + timedelta(days=days))}"
    except OverflowError:  # an input stored near year 9999: no upper bound
        return ""


def _spans(moments: list[datetime], most: int = 500) -> Iterator[tuple[datetime, datetime]]:
    """Sorted moments as few time ranges (first, last microsecond), each of at most `most`
    moments less than a day apart: a log's times read in a few queries, not the years between
    two of them."""
    start = 0
    for n in range(1, len(moments) + 1):
        if n == len(moments) or n - start == most or moments[n] - moments[n - 1] > timedelta(days=1):
            last = moments[n - 1]
            yield moments[start], last.replace(microsecond=last.microsecond + 999)
            start = n


def _in_step(
    turns: list[RawInput], rows: list[dict[str, Any]], forgotten: Mapping[str, set[int]]
) -> list[tuple[RawInput, dict[str, Any]]]:
    """Turns of one moment paired with stored rows of one session at it, kept in step: the
    k-th turn with the row `shift` places on. Either log may have been cut inside the moment,
    numbering its turns there from the cut (`ingest.formats.parse_jsonl`): the shift is any
    under which every turn that falls among the rows finds one with its words and speaker, or
    the place of a forgotten turn with them (`forgotten`: id → places), and pairs at least one;
    of those, the one pairing the most, then the least. A journal's entries of one day share
    its noon, one place: there a turn pairs with any row of its words, and one without is an
    entry the other copy lacks, not another log. [] when none does."""
    at: dict[int, list[dict[str, Any]]] = {}
    for row in rows:
        at.setdefault(place(row["said_at"]), []).append(row)
    first, last = min(at), max(at)
    mine = [place(r.said_at) for r in turns]
    best: list[tuple[RawInput, dict[str, Any]]] = []
    for shift in sorted(range(first - max(mine), last - min(mine) + 1), key=abs):
        pairs: list[tuple[RawInput, dict[str, Any]]] = []
        taken: set[int] = set()
        for r, p in zip(turns, mine, strict=True):
            k = p + shift
            here = [row for row in at.get(k, ()) if id(row) not in taken]
            same = next((row for row in here if (r.text, r.role) == (row["text"], row["role"])), None)
            if same is not None:
                pairs.append((r, same))
                taken.add(id(same))
            elif k in at:
                if len(at[k]) == 1 and mine.count(p) == 1:
                    break  # another turn said at its place: another log
            elif first < k < last and k not in forgotten.get(r.id, ()):
                break
        else:
            if len(pairs) > len(best):
                best = pairs
    return best


NO_VECTOR = "no vector yet"  # the mark of an input stored while the embedder was failing
_NO_VECTOR_YET = f"error LIKE '{NO_VECTOR}%'"
_SET_ASIDE = "facts_set_aside"  # meta key: a JSON list of item ids


def _usable_dir(path: Path, uri: str, *, write: bool) -> None:
    """The store's directory, created 0700 when missing; a clear error when it cannot be used."""
    from dcpm_cli.private import private_dir

    if path.exists() and not path.is_dir():
        raise StoreError(f"the store {uri} is a file, not a directory", _WHERE)
    try:
        private_dir(path)
    except OSError as e:
        raise StoreError(f"cannot create the store at {uri}: {e.strerror or e}", _WHERE) from e
    if write and not os.access(path, os.W_OK | os.X_OK):
        raise StoreError(f"cannot write to the store at {uri}: permission denied", _WHERE)


def recorded_embedder(uri: str) -> tuple[str, int] | None:
    """The embedder (model id, dim) a store's vectors were made by, read without opening the
    store (no embedder needed, nothing written); None if there is no store or it records none."""
    import lancedb

    local = None if "://" in uri else Path(uri).expanduser()
    if local is not None and not (local / f"{S.META}.lance").exists():
        return None
    try:
        lance = Lance(lancedb.connect(str(local or uri)), 0)
        meta = {r["key"]: r["value"] for r in lance.rows(S.META, None, ["key", "value"])}
    except (OSError, ValueError, RuntimeError):
        return None
    model, dim = meta.get("embedder"), meta.get("dim", "")
    return (model, int(dim)) if model and dim.isdigit() else None


_FILTER_COLUMNS = {"kinds": "kind", "statuses": "status", "roles": "role"}
_TIME_COLUMNS = {S.RAW: "said_at", S.ITEMS: "event_at"}  # when a row is about (vector_search's `during`)


def _filters(filters: dict[str, Sequence[str] | None]) -> str | None:
    clauses = [_in(_FILTER_COLUMNS[name], values) for name, values in filters.items() if values]
    return " AND ".join(clauses) or None


_RAW_COLUMNS = [f.name for f in dataclasses.fields(RawInput) if f.name not in ("position", "wall_clock")]
_LIVE = f"status != {_q(REPLACED)}"  # not an edited day's old words
_ITEM_COLUMNS = [f.name for f in dataclasses.fields(MemoryItem)]
_PASSAGE_COLUMNS = [f.name for f in dataclasses.fields(Passage)]
_COLUMNS = {S.RAW: _RAW_COLUMNS, S.ITEMS: _ITEM_COLUMNS, S.PASSAGES: _PASSAGE_COLUMNS}
_MODELS: dict[str, type[Found]] = {S.RAW: RawInput, S.ITEMS: MemoryItem, S.PASSAGES: Passage}
_COLLECTIONS = {"raw": S.RAW, "items": S.ITEMS, "nodes": S.NODES, "passages": S.PASSAGES}

__all__ = ["PENDING", "Store", "Write", "recorded_embedder"]
