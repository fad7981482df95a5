"""Store verbs for `dcpm forget`: delete rows, and make sure the bytes that held their text
are gone from disk, not just hidden. Mixed into `Store`; like it, the only code that knows
these tables.

Why more than a delete: Lance never changes a data file. A delete writes a deletion vector
beside the file, an update writes the new row elsewhere and marks the old one deleted, and
compaction rewrites a fragment only when more than a tenth of its rows are deleted. So the
forgotten text stays in the old data file, in older table versions, and in the full-text index
(its token lists). `purge()` therefore rewrites every row still alive in a fragment that held
forgotten text (one merge-insert: the old fragment ends fully deleted and leaves the
manifest), rebuilds the full-text indices, and drops every older version and unreferenced
file at once.

A forget is resumable: its unfinished-write marker records what it changes and what it purges
(`forget_work`: ids, fragment numbers, the FORGET event's ids — never a text), and
`finish_forget()` carries that out, each step safe to run twice. So a forget killed at any
point is finished by the next write or `dcpm check --repair` (store/journal.py), purge
included: rows deleted but their bytes left on disk is not a state a kill can leave behind.
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Iterable, Sequence
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from dcpm_cli.models import Edge, Event, RawInput
from dcpm_cli.store import schemas as S
from dcpm_cli.store.sql import in_list as _in
from dcpm_cli.store.sql import quote as _q

_CHUNK = 500
# "raw" / "items" / "nodes" / "events" / "passages": what forget may touch, by table.
ERASABLE = {"raw": S.RAW, "items": S.ITEMS, "nodes": S.NODES, "events": S.EVENTS, "passages": S.PASSAGES}


class EraseVerbs:
    if TYPE_CHECKING:  # provided by Store

        def _rows(
            self, table: str, where: str | None, columns: Any = None, limit: int | None = None
        ) -> list: ...
        def table(self, name: str) -> Any: ...
        def _table_of(self, objs: Any, table: str, vectors: Any = None, **extra: Any) -> Any: ...
        def has_table(self, name: str) -> bool: ...
        @staticmethod
        def _from_row(cls: Any, row: dict[str, Any]) -> Any: ...

    # -- what a forget reaches ------------------------------------------------------------

    def items_from_raws(self, raw_ids: Sequence[str]) -> list[Any]:
        """Items whose provenance includes any of these raw inputs."""
        out = []
        for chunk in _chunks(raw_ids):
            ids = ", ".join(_q(r) for r in chunk)
            out += self.all_items(f"array_has_any(raw_ids, [{ids}])")  # type: ignore[attr-defined]
        return out

    def passages_holding(self, raw_ids: Sequence[str]) -> list[tuple[str, str]]:
        """(passage id, session) of the passages that hold any of these raw inputs."""
        out: list[tuple[str, str]] = []
        for chunk in _chunks(raw_ids):
            ids = ", ".join(_q(r) for r in chunk)
            rows = self._rows(S.PASSAGES, f"array_has_any(raw_ids, [{ids}])", ["id", "session"])
            out += [(r["id"], r["session"]) for r in rows]
        return out

    def edges_touching(self, ids: Sequence[str]) -> list[Edge]:
        """Edges whose source or destination is one of `ids`."""
        out: dict[str, Edge] = {}
        for chunk in _chunks(ids):
            where = f"{_in('src', chunk)} OR {_in('dst', chunk)}"
            for r in self._rows(S.EDGES, where):
                out[r["id"]] = self._from_row(Edge, r)
        return list(out.values())

    def fragments_of(self, collection: str, where: str) -> set[int]:
        """Ids of the Lance fragments holding the rows that match `where` (row address >> 32)."""
        rows = self.table(ERASABLE[collection]).search().where(where).select(["_rowaddr"]).limit(None)
        return {int(a) >> 32 for a in rows.to_arrow()["_rowaddr"].to_pylist()}

    def erasure_scope(
        self, raw_ids: Sequence[str], item_ids: Sequence[str], node_ids: Sequence[str]
    ) -> dict[str, set[int]]:
        """Fragments, per collection, whose data files hold text that is about to be forgotten.
        Taken before anything is deleted (afterwards the rows have no address)."""
        ids = [*raw_ids, *item_ids, *node_ids]
        scope: dict[str, set[int]] = {name: set() for name in ERASABLE}
        for chunk in _chunks(raw_ids):
            scope["raw"] |= self.fragments_of("raw", _in("id", chunk))
            quoted = ", ".join(_q(r) for r in chunk)
            scope["passages"] |= self.fragments_of("passages", f"array_has_any(raw_ids, [{quoted}])")
        for chunk in _chunks(item_ids):
            scope["items"] |= self.fragments_of("items", _in("id", chunk))
        for chunk in _chunks(node_ids):
            scope["nodes"] |= self.fragments_of("nodes", _in("id", chunk))
        for chunk in _chunks(ids):
            scope["events"] |= self.fragments_of("events", _events_about(chunk))
        return scope

    # -- changes --------------------------------------------------------------------------

    def delete_raw(self, ids: Sequence[str]) -> None:
        for chunk in _chunks(ids):
            self.table(S.RAW).delete(_in("id", chunk))

    def delete_items(self, ids: Sequence[str]) -> None:
        for chunk in _chunks(ids):
            self.table(S.ITEMS).delete(_in("id", chunk))

    def set_item_raw_ids(self, item_id: str, raw_ids: Sequence[str]) -> None:
        import pyarrow as pa

        values = pa.array([list(raw_ids)], pa.list_(pa.string()))[0]
        self.table(S.ITEMS).update(where=f"id = {_q(item_id)}", values={"raw_ids": values})

    def scrub_events(self, ids: Sequence[str]) -> int:
        """Blank the text kept in events about these ids (previous/new text, detail): the log
        keeps that something happened to them, never what they said."""
        n = 0
        for chunk in _chunks(ids):
            # A FORGET event's detail is ids only, and the record that keeps a forgotten input
            # from being stored again (`forgotten_inputs`): never blanked, by a forget resumed
            # after a kill or by a later forget of an id it names.
            where = (
                f"({_events_about(chunk)}) AND op != 'FORGET'"
                " AND (previous_text != '' OR new_text != '' OR detail != '')"
            )
            n += self.table(S.EVENTS).count_rows(where)
            self.table(S.EVENTS).update(
                where=where, values={"previous_text": "", "new_text": "", "detail": ""}
            )
        return n

    def log_forget(self, event: Event) -> None:
        self.table(S.EVENTS).add(self._table_of([event], S.EVENTS))

    def forget_events(self) -> list[Event]:
        rows = self._rows(S.EVENTS, "op = 'FORGET'")
        return sorted((self._from_row(Event, r) for r in rows), key=lambda e: e.at)

    def forgotten_inputs(self, raws: Sequence[RawInput]) -> set[str]:
        """The ids of those of `raws` a forget removed: by id, or by their words, speaker, moment
        and place in it (`RawInput.said_key`), come again in another session (a log piped anew).
        Its event keeps ids and digests, never a text: an input is known by its words, so the
        same journal added again would bring it back."""
        if not raws:
            return set()
        gone = self._forgotten(("raw", "said"))
        said = gone["said"]
        return {r.id for r in raws if r.id in gone["raw"] or r.said_key in said or r.said_key_before in said}

    def forgotten_places(self, raws: Sequence[RawInput]) -> dict[str, set[int]]:
        """id → the places (in their moment) of forgotten turns with the same words, speaker and
        moment as one of `raws`, for those there are: a log cut inside a moment numbers its
        turns there from the cut, so a forgotten one comes back at another place."""
        if not raws:
            return {}
        places: dict[str, set[int]] = {}
        for key in self._forgotten(("said",))["said"]:
            words, _, place = key.partition("+")
            if place.isdigit():
                places.setdefault(words, set()).add(int(place))
        out = {}
        for r in raws:
            if found := places.get(r.said_key.partition("+")[0]):
                out[r.id] = found
        return out

    def forgotten_records(self) -> dict[str, set[str]]:
        """The ids every forget removed, by export record type (raw, item, node, edge): an
        export made before a forget still holds them, and must not bring them back."""
        gone = self._forgotten(("raw", "items", "nodes", "edges"))
        return {"raw": gone["raw"], "item": gone["items"], "node": gone["nodes"], "edge": gone["edges"]}

    def _forgotten(self, keys: Sequence[str]) -> dict[str, set[str]]:
        """What every forget's event lists under each of `keys` of its detail."""
        gone: dict[str, set[str]] = {key: set() for key in keys}
        for event in self.forget_events():
            try:
                detail = json.loads(event.detail or "{}")
                for key in keys:
                    gone[key].update(str(i) for i in detail.get(key, []))
            except (ValueError, AttributeError, TypeError):
                continue  # blanked by a later forget, before FORGET events were kept whole
        return gone

    # -- a forget, carried out from its record ------------------------------------------

    def finish_forget(self, work: dict[str, Any]) -> tuple[int, dict[str, int]]:
        """Carry out (or finish, after a kill) the changes of a forget recorded by
        `forget_work`: relink, trim, delete, rebuild passages, blank the log, log the FORGET
        event, purge. Every step can run twice. Returns (events scrubbed, rows rewritten)."""
        removed = [*work["raw"], *work["items"], *work["nodes"]]
        # Relinks and trims come before the deletes: once every row is gone they were made,
        # and are not made again over what a later write changed.
        if self._any_present(work):
            self.set_chain_links(work["relinks"])  # type: ignore[attr-defined]
            for item_id, keep in work["trimmed"].items():
                self.set_item_raw_ids(item_id, keep)
            self.delete_edges(work["edges"])  # type: ignore[attr-defined]
            self.delete_nodes(work["nodes"])  # type: ignore[attr-defined]
            self.delete_items(work["items"])
            self.delete_raw(work["raw"])
        self.drop_claims(work["raw"])  # type: ignore[attr-defined]
        if work["sessions"]:
            self.index_passages(work["sessions"])  # type: ignore[attr-defined]
        scrubbed = self.scrub_events(removed)
        event = work["event"]
        if not self._rows(S.EVENTS, f"target_id = {_q(event['target_id'])}", ["id"], 1):
            from datetime import datetime

            self.log_forget(Event(**{**event, "at": datetime.fromisoformat(event["at"])}))
        rewritten = self.purge({name: set(frags) for name, frags in work["scope"].items()})
        self.__dict__.pop("_vectors", None)  # in-memory copies of the tables held the text
        return scrubbed, rewritten

    def forget_started(self, work: dict[str, Any]) -> bool:
        """Whether a forget cut short had changed anything: its first change reverts the text
        of kept items (`reverts`: id → content hash before), which a kill can cut off only
        before everything else; then nothing changed, and the forget is simply run again."""
        before = work.get("reverts") or {}
        if not before:
            return True
        rows = self._rows(S.ITEMS, _in("id", list(before)), ["id", "content_hash"])
        return not any(before.get(r["id"]) == r["content_hash"] for r in rows)

    def _any_present(self, work: dict[str, Any]) -> bool:
        for name, key in ((S.RAW, "raw"), (S.ITEMS, "items"), (S.NODES, "nodes")):
            for chunk in _chunks(work[key]):
                if self.has_table(name) and self._rows(name, _in("id", chunk), ["id"], 1):
                    return True
        return False

    # -- really gone ----------------------------------------------------------------------

    def purge(self, scope: dict[str, set[int]]) -> dict[str, int]:
        """Rewrite the surviving rows of the fragments in `scope`, rebuild full-text indices,
        and drop every older version and unreferenced file of every table. Returns the rows
        rewritten per collection. Callers hold the write lock; readers of older versions in
        other processes may see their read fail once (they retry on the next command)."""
        rewritten: dict[str, int] = {}
        for collection, fragments in scope.items():
            if fragments and self.has_table(ERASABLE[collection]):
                rewritten[collection] = self._rewrite_fragments(ERASABLE[collection], fragments)
        from lancedb.index import FTS

        for name in [*ERASABLE.values(), S.EDGES]:
            if not self.has_table(name):
                continue
            t = self.table(name)
            for index in t.list_indices():
                if index.index_type == "FTS":
                    t.create_index(index.columns[0], config=FTS(with_position=False), replace=True)
        for name in self.db.list_tables().tables:  # type: ignore[attr-defined]
            with warnings.catch_warnings():  # "concurrent readers may fail": we hold the lock
                warnings.simplefilter("ignore", UserWarning)
                # dcpm keeps its own history (event log, chains); these versions hold the text.
                self.table(name).optimize(cleanup_older_than=timedelta(0), delete_unverified=True)
        return rewritten

    def _rewrite_fragments(self, name: str, fragments: Iterable[int]) -> int:
        t = self.table(name)
        n = 0
        for frag in sorted(fragments):
            lo, hi = frag << 32, (frag + 1) << 32
            rows = t.search().where(f"_rowaddr >= {lo} AND _rowaddr < {hi}").limit(None).to_arrow()
            if rows.num_rows:
                rows = rows.select(t.schema.names)
                # One commit: the rows move to a new fragment, the old one is left empty.
                t.merge_insert("id").when_matched_update_all().execute(rows, on_bad_vectors="null")
                n += rows.num_rows
        return n


def forget_work(
    *,
    raw: Sequence[str],
    items: Sequence[str],
    nodes: Sequence[str],
    edges: Sequence[str],
    relinks: dict[str, tuple[str | None, str | None]],
    trimmed: dict[str, list[str]],
    sessions: Sequence[str],
    scope: dict[str, set[int]],
    event: Event,
    reverts: dict[str, str],
) -> dict[str, Any]:
    """What a forget changes and purges, as the JSON its marker keeps: ids and fragment
    numbers only (the event's detail lists ids), so the marker never holds forgotten text."""
    return {
        "raw": list(raw),
        "items": list(items),
        "nodes": list(nodes),
        "edges": list(edges),
        "relinks": {k: list(v) for k, v in relinks.items()},
        "trimmed": {k: list(v) for k, v in trimmed.items()},
        "sessions": sorted(set(sessions)),
        "scope": {name: sorted(frags) for name, frags in scope.items()},
        "reverts": dict(reverts),
        "event": {
            "op": event.op,
            "item_id": event.item_id,
            "target_id": event.target_id,
            "detail": event.detail,
            "at": event.at.isoformat(),
            "id": event.id,
        },
    }


def _events_about(ids: Sequence[str]) -> str:
    return f"{_in('item_id', ids)} OR {_in('raw_id', ids)} OR {_in('target_id', ids)}"


def _chunks(ids: Sequence[str]) -> Iterable[list[str]]:
    ids = list(ids)
    for i in range(0, len(ids), _CHUNK):
        yield ids[i : i + _CHUNK]


def forget_detail(**parts: Any) -> str:
    return json.dumps(parts, sort_keys=True)
