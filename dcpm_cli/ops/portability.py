"""`dcpm export` / `dcpm import`: the whole memory as JSONL, one typed record a line.

Line 1 is a header: `{"type": "header", "format": 1, "embedder": …, "dim": …, "counts": …}`.
Then raw inputs, items (both chain pointers), events, nodes, edges, dream runs and
calibrations, in that order (`store/dump.py`); timestamps in ISO 8601; vectors only with
`--with-vectors`, as base64 of little-endian float32. Passages are rebuilt from the raw
inputs on import.

Import is idempotent (records already present, by id, are skipped: importing twice changes
nothing), refuses a format newer than this dcpm reads, and embeds with the store's embedder
whenever the file has no vectors or they come from another model. What the store's `forget`
removed stays removed: an export made before it still holds those records, and they (and the
pointers and edges at them) are left out, counted as `forgotten`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import cache
from typing import TYPE_CHECKING, Any

from dcpm_cli.errors import InputError
from dcpm_cli.models import CHAIN_OPS, RAW_STATUSES, UNLINK

if TYPE_CHECKING:
    from dcpm_cli.embed import Embedder
    from dcpm_cli.store import Store

FORMAT = 1  # bump when a record changes shape; import reads every format up to this one
BATCH = 1000  # records embedded and written together on import

Progress = Callable[[int, int], None]


def header(store: Store, *, with_vectors: bool) -> dict[str, Any]:
    from dcpm_cli import __version__
    from dcpm_cli.store.dump import RECORD_TABLES

    return {
        "type": "header",
        "format": FORMAT,
        "dcpm": __version__,
        "embedder": store.embedder_id,
        "dim": store.dim,
        "with_vectors": with_vectors,
        "exported_at": datetime.now(UTC).isoformat(),
        "counts": {kind: store.record_count(kind) for kind in RECORD_TABLES},
        # facts a dream leaves out (evidence of a schema the user forgot): ids, never text
        "set_aside": sorted(store.facts_set_aside()),
    }


def export_lines(
    store: Store, *, with_vectors: bool = False, progress: Progress | None = None
) -> Iterator[str]:
    """The export, one JSON line at a time (the store is read in batches)."""
    from dcpm_cli.store.dump import RECORD_TABLES

    head = header(store, with_vectors=with_vectors)
    total, done = sum(head["counts"].values()), 0
    yield _line(head)
    for kind in RECORD_TABLES:
        for row in store.dump(kind, with_vectors=with_vectors):
            yield _line({"type": kind, **row})
            done += 1
            if progress and done % 1000 == 0:
                progress(done, total)
    if progress:
        progress(done, total)


def _line(record: dict[str, Any]) -> str:
    return json.dumps(record, default=_jsonable, ensure_ascii=False, sort_keys=True)


def _jsonable(o: Any) -> Any:
    if isinstance(o, datetime):
        return (o if o.tzinfo else o.replace(tzinfo=UTC)).isoformat()
    raise TypeError(f"cannot serialise {type(o).__name__}")


@dataclass
class ImportReport:
    format: int = FORMAT
    source_embedder: str = ""
    vectors: str = ""  # "from the file" | "re-embedded (…)"
    added: dict[str, int] = field(default_factory=dict)
    already_present: dict[str, int] = field(default_factory=dict)
    moved_forward: dict[str, int] = field(default_factory=dict)  # present, shown further on
    forgotten: dict[str, int] = field(default_factory=dict)  # removed here by `forget`: left out
    passages: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": self.format,
            "source_embedder": self.source_embedder,
            "vectors": self.vectors,
            "added": self.added,
            "already_present": self.already_present,
            "moved_forward": self.moved_forward,
            "forgotten": self.forgotten,
            "passages_built": self.passages,
        }


def import_lines(
    store: Store,
    embedder: Embedder,
    lines: Iterable[str],
    *,
    progress: Progress | None = None,
    survey: Survey | None = None,
) -> ImportReport:
    """Add an export's records to `store` (whose embedder is `embedder`); see the module doc.
    With the `survey` of the whole file (`check_lines`), the import is first checked against
    the store: refused, writing nothing, if it would leave a chain or a citation broken."""
    numbered = ((n, line) for n, line in enumerate(lines, 1) if line.strip())
    head = _header(next(numbered, (1, "")))
    reuse = bool(head.get("with_vectors")) and (head.get("embedder"), head.get("dim")) == (
        store.embedder_id,
        store.dim,
    )
    report = ImportReport(
        format=int(head["format"]),
        source_embedder=str(head.get("embedder", "")),
        vectors="from the file" if reuse else f"embedded by {store.embedder_id}",
    )
    total = sum(int(v) for v in dict(head.get("counts") or {}).values())
    done = 0
    sessions: set[str] = set()
    present: dict[str, list[dict[str, Any]]] = {}
    kind, batch = "", list[dict[str, Any]]()
    with store.write():
        gone = store.forgotten_records()
        if survey is not None:
            survey.leave_out(gone)
        cuts = _cuts(store, survey) if survey is not None else []
        if survey is not None:
            _check_against(store, survey, cuts)
        for n, line in numbered:
            record = _record(n, line)
            if record["type"] != kind or len(batch) >= BATCH:
                done += _flush(store, embedder, kind, batch, reuse, report, sessions, present, gone)
                kind, batch = record["type"], []
                if progress:
                    progress(done, total)
            batch.append(record)
        done += _flush(store, embedder, kind, batch, reuse, report, sessions, present, gone)
        # Records here already that the export shows further on (a newer export of the same
        # memory): moved forward once everything they point at is in; arcs first.
        if survey is not None and (relinked := _relink(store, survey, cuts)):
            report.moved_forward["item"] = relinked
        for kind in ("raw", "item"):
            moved, rewritten = store.advance(kind, present.get(kind, []))
            if rewritten:
                store.replace_items(rewritten, _embed(embedder, [i.text for i in rewritten], store.dim))
            if moved:
                report.moved_forward[kind] = report.moved_forward.get(kind, 0) + moved
        if aside := head.get("set_aside"):  # a forgotten schema stays forgotten in the copy
            store.set_facts_aside(add=store.get_items(aside).keys())
        report.passages = store.index_passages(sessions) if sessions else 0
    store.maintain()
    if progress:
        progress(done, total)
    return report


_IS_EXPORT = "is this a dcpm export?"


@dataclass
class Survey:
    """What a whole-file read learnt: records by type, and what the items point at (with the
    line of each), for the checks against the store before anything is written."""

    counts: dict[str, int] = field(default_factory=dict)
    items: dict[str, tuple[int, str | None, str | None]] = field(default_factory=dict)  # id → line, pointers
    raw_ids: set[str] = field(default_factory=set)
    cited_raws: dict[str, int] = field(default_factory=dict)  # raw id an item cites → its line
    node_ids: set[str] = field(default_factory=set)
    edges: list[tuple[int, str, str, str]] = field(default_factory=list)  # line, kind, src, dst
    # Every SUPERSEDE and UNLINK the log holds: op, the later item, the earlier one, when.
    chain_events: list[tuple[str, str, str, datetime]] = field(default_factory=list)

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    def leave_out(self, gone: dict[str, set[str]]) -> None:
        """Forget here what `forget` removed from the store (`Store.forgotten_records`): the
        import leaves those records out, and the pointers and edges at them."""
        items, raws, nodes = gone.get("item", set()), gone.get("raw", set()), gone.get("node", set())
        if not (items or raws or nodes):
            return
        self.items = {
            i: (n, a if a not in items else None, b if b not in items else None)
            for i, (n, a, b) in self.items.items()
            if i not in items
        }
        self.raw_ids -= raws
        self.cited_raws = {r: n for r, n in self.cited_raws.items() if r not in raws}
        self.node_ids -= nodes
        self.edges = [e for e in self.edges if not {e[2], e[3]} & (nodes | items)]
        self.chain_events = [e for e in self.chain_events if not {e[1], e[2]} & items]


def check_lines(lines: Iterable[str]) -> Survey:
    """Read an export whole before anything is imported: the header, then every line a record
    of a known type and shape, as many of each type as the header says. InputError naming the
    first bad line (a file cut short, a line that is not JSON or not UTF-8, a field missing or
    of the wrong type), so a broken file imports nothing."""
    n, seen_header, survey = 0, False, Survey()
    head: dict[str, Any] = {}
    first_seen: dict[tuple[str, ...], int] = {}  # (type, key) → the line it was first on
    try:
        for n, line in enumerate(lines, 1):
            if not line.strip():
                continue
            if not line.isascii():
                _utf8(n, line)
            if not seen_header:
                head = _header((n, line))
                seen_header = True
                continue
            record = _record(n, line)
            kind = record["type"]
            _vectors(n, record)
            survey.counts[kind] = survey.counts.get(kind, 0) + 1
            # Two records of one key would both be stored (a batch is checked against the
            # store, not against itself): refused, whatever they say.
            key = (kind, *(str(record.get(k)) for k in _KEY_FIELDS.get(kind, ("id",))))
            if (first := first_seen.setdefault(key, n)) != n:
                raise InputError(
                    f"line {n}: {kind} {' '.join(key[1:])} appears twice (first on line {first}); "
                    "nothing was imported",
                    _IS_EXPORT,
                )
            if kind == "raw":
                survey.raw_ids.add(record["id"])
            elif kind == "item":
                survey.items[record["id"]] = (n, record["supersedes"], record["superseded_by"])
                for raw_id in record["raw_ids"] or []:
                    survey.cited_raws.setdefault(raw_id, n)
            elif kind == "node":
                survey.node_ids.add(record["id"])
            elif kind == "edge":
                survey.edges.append((n, str(record["kind"]), str(record["src"]), str(record["dst"])))
            elif kind == "event" and record.get("op") in CHAIN_OPS and (at := _when(record)):
                survey.chain_events.append(
                    (record["op"], str(record["item_id"]), str(record["target_id"]), at)
                )
    except UnicodeDecodeError as e:
        raise InputError("the file is not UTF-8 text", _IS_EXPORT) from e  # read ahead: no line number
    if not seen_header:
        _header((1, ""))
    if "counts" in head:
        from dcpm_cli.store.dump import RECORD_TABLES

        for kind in dict.fromkeys([*RECORD_TABLES, *head["counts"]]):
            said, found = int(head["counts"].get(kind, 0)), survey.counts.get(kind, 0)
            if said != found:
                raise InputError(
                    f"the file holds {found} {kind} records, its header says {said} (line 1), "
                    f"and it ends at line {n}; nothing was imported",
                    "is it cut short or edited? export it again with `dcpm export`",
                )
    return survey


_KEY_FIELDS = {"calibration": ("embedder", "created_at")}  # the rest: by id


def _when(record: dict[str, Any]) -> datetime | None:
    from dcpm_cli.ingest.text import read_time

    return read_time(record.get("at"))


def _utf8(n: int, line: str) -> None:
    """A line read with `surrogateescape` holds the bytes that are not UTF-8 as surrogates."""
    try:
        line.encode("utf-8")
    except UnicodeEncodeError as e:
        raise InputError(f"line {n} is not UTF-8 text; nothing was imported", _IS_EXPORT) from e


def _vectors(n: int, record: dict[str, Any]) -> None:
    """Each vector base64 of float32s, so a bad one is refused before anything is written,
    not found half-way through the import. (Its length is checked on use: the vectors of
    another embedder are not used.)"""
    import base64
    import binascii

    for column in VECTOR_COLUMNS:
        value = record.get(column)
        if not isinstance(value, str):
            continue
        try:
            size = len(base64.b64decode(value, validate=True))
        except (binascii.Error, ValueError) as e:
            raise InputError(f"line {n}: {record['type']} field {column} is not base64", _IS_EXPORT) from e
        if size % 4:
            raise InputError(f"line {n}: {record['type']} field {column} is not float32 numbers", _IS_EXPORT)


VECTOR_COLUMNS = ("vector", "behaviour_vector")


def _header(numbered: tuple[int, str]) -> dict[str, Any]:
    n, line = numbered
    head = _record(n, line, header=True) if line else {}
    if head.get("type") != "header":
        raise InputError("not a dcpm export: the first line is not its header", "make one with `dcpm export`")
    fmt = head.get("format")
    if not isinstance(fmt, int) or fmt < 1:
        raise InputError(
            f"the export's format {fmt!r} is not a version number", "make one with `dcpm export`"
        )
    if fmt > FORMAT:
        raise InputError(
            f"this export has format {fmt}, newer than this dcpm reads (up to {FORMAT})",
            "upgrade dcpm on this machine, or export again with the dcpm that reads it",
        )
    counts = head.get("counts") or {}
    if not isinstance(counts, dict) or not all(
        isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in counts.values()
    ):
        raise InputError(
            f"line {n}: the header's counts are not numbers of records", "is this a dcpm export?"
        )
    for name, typ, what in _HEADER_FIELDS:
        value = head.get(name)
        ok = isinstance(value, typ) and (typ is bool or not isinstance(value, bool))
        if name in head and not (
            ok and (not isinstance(value, list) or all(isinstance(v, str) for v in value))
        ):
            raise InputError(f"line {n}: the header's {name} {head[name]!r} is not {what}", _IS_EXPORT)
    return head


_HEADER_FIELDS: list[tuple[str, Any, str]] = [
    ("embedder", str, "a model name"),
    ("dim", int, "a number of dimensions"),
    ("with_vectors", bool, "true or false"),
    ("dcpm", str, "a version"),
    ("exported_at", str, "a time"),
    ("set_aside", list, "a list of item ids"),
]


def _record(n: int, line: str, *, header: bool = False) -> dict[str, Any]:
    """One line as a record: JSON, an object, of a type this dcpm knows (the header's
    type is checked by `_header`)."""
    from dcpm_cli.ingest.text import check_json_depth
    from dcpm_cli.store.dump import RECORD_TABLES

    check_json_depth(line, f"line {n}")
    try:
        record = json.loads(line)
    except json.JSONDecodeError as e:
        raise InputError(f"line {n} is not JSON: {e.msg}", "is this a dcpm export?") from e
    if not isinstance(record, dict) or "type" not in record:
        raise InputError(f"line {n} is not a dcpm record", _IS_EXPORT)
    if not header and record["type"] not in RECORD_TABLES:
        raise InputError(f"line {n}: unknown record type {record['type']!r}", _IS_EXPORT)
    if not header:
        _validate(n, record)
    return record


@cache
def _shapes() -> dict[str, dict[str, Any]]:
    """record type → {field: arrow type}: the fields an export record must carry, read off
    the tables' own schemas (vectors and derived hashes are optional)."""
    from dcpm_cli.store import schemas as S
    from dcpm_cli.store.dump import RECORD_TABLES

    tables = {**S.initial(1), **S.dream_tables()}
    return {kind: {f.name: f.type for f in tables[table]} for kind, table in RECORD_TABLES.items()}


_OPTIONAL = {"vector", "behaviour_vector", "content_hash"}
_REQUIRED_TEXT = {"id", "text"}  # never null: what a record is, and what it says


def _validate(n: int, record: dict[str, Any]) -> None:
    """Every field of the record's table present, of its type; times in 1000–9000."""
    import math

    import pyarrow as pa

    from dcpm_cli.ingest.text import EARLIEST, LATEST, read_time

    kind = record["type"]
    for name, typ in _shapes()[kind].items():
        where = f"line {n}: {kind} field {name}"
        if name not in record:
            if name in _OPTIONAL:
                continue
            raise InputError(f"line {n}: the {kind} record lacks the field {name}", _IS_EXPORT)
        value = record[name]
        if value is None:
            if name in _REQUIRED_TEXT:
                raise InputError(f"{where} must be a string, not null", _IS_EXPORT)
            continue
        if name in _OPTIONAL and pa.types.is_list(typ) and not pa.types.is_string(typ.value_type):
            ok, want = isinstance(value, str), "base64 text"
        elif pa.types.is_string(typ):
            ok, want = isinstance(value, str), "a string"
        elif pa.types.is_timestamp(typ):
            ok, want = isinstance(value, str), "an ISO time"
            if ok:
                when = read_time(value)
                if when is None or not EARLIEST <= when < LATEST:
                    raise InputError(
                        f"{where} {value!r} is out of range", "times lie between the years 1000 and 9000"
                    )
        elif pa.types.is_boolean(typ):
            ok, want = isinstance(value, bool), "true or false"
        elif pa.types.is_integer(typ):
            ok, want = (
                isinstance(value, int) and not isinstance(value, bool) and abs(value) < 2**31,
                "an integer",
            )
        elif pa.types.is_floating(typ):
            ok = isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
            want = "a number"
        elif pa.types.is_list(typ):
            ok, want = isinstance(value, list) and all(isinstance(v, str) for v in value), "a list of strings"
        else:
            ok, want = True, ""
        if not ok:
            raise InputError(f"{where} must be {want}, not {type(value).__name__}", _IS_EXPORT)
    _words(n, record)


_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}")


def _words(n: int, record: dict[str, Any]) -> None:
    """What a record says, held to what `dcpm add` holds words to: Unicode text (no lone
    surrogate, which JSON's \\ud800 can spell), no NUL, an input not empty, an id of id
    characters; an input's role and status among those dcpm gives."""
    from dcpm_cli.ingest.formats import ROLES
    from dcpm_cli.ingest.text import refuse_binary

    kind = record["type"]
    for name, value in record.items():
        for text in value if isinstance(value, list) else [value]:
            if isinstance(text, str) and name not in VECTOR_COLUMNS:
                refuse_binary(text, f"line {n}: {kind} field {name}")  # a NUL, half a character
    if kind not in _KEY_FIELDS and "id" in record and not _ID.fullmatch(record["id"] or ""):
        raise InputError(f"line {n}: {kind} id {record['id']!r} is not an id", _IS_EXPORT)
    if kind == "raw":
        for name, allowed in (("role", ROLES), ("status", RAW_STATUSES)):
            if record[name] not in allowed:
                raise InputError(
                    f"line {n}: raw field {name} {record[name]!r} is not one of {', '.join(allowed)}",
                    _IS_EXPORT,
                )
        if not record["text"].strip():
            raise InputError(f"line {n}: raw input with no text", _IS_EXPORT)


def _cuts(store: Store, survey: Survey) -> list[tuple[str, str]]:
    """The (later, earlier) pairs the user cut apart (`dcpm unlink`), in the export or here, and
    nobody linked again since on either side: for each pair, the last SUPERSEDE or UNLINK of
    the two logs merged is what the import leaves. Every other change of arc only adds a
    pointer (so an older export, whose pointers still join a pair cut here since, joins
    nothing)."""
    said: dict[tuple[str, str], list[tuple[datetime, str]]] = {}
    for op, later, earlier, at in survey.chain_events:
        said.setdefault((later, earlier), []).append((at, op))
    cut_there = {pair for pair, ops in said.items() if any(op == UNLINK for _, op in ops)}
    out = []
    for later, earlier in sorted(cut_there | store.unlinked_pairs()):
        here = [(e.at, e.op) for e in store.events_for(later) if e.target_id == earlier and e.op in CHAIN_OPS]
        if max([*said.get((later, earlier), []), *here])[1] == UNLINK:
            out.append((later, earlier))
    return out


def _relink(store: Store, survey: Survey, cuts: list[tuple[str, str]]) -> int:
    """The arcs as the import leaves them (once every record is in): the user's cuts made,
    then each link of the export taken where both its ends are free here. How many items
    changed."""
    links = _links(survey)
    ids = sorted({i for pair in [*links, *cuts] for i in pair})
    pointers = {i: (item.supersedes, item.superseded_by) for i, item in store.get_items(ids).items()}
    changed = _cut_pointers(pointers, cuts) | _take_links(pointers, links, cuts)
    store.set_chain_links({i: pointers[i] for i in changed})
    return len(changed)


def _links(survey: Survey) -> list[tuple[str, str]]:
    """Every (earlier, later) link the export's items hold, from either end."""
    out = set()
    for item_id, (_, supersedes, superseded_by) in survey.items.items():
        if supersedes:
            out.add((supersedes, item_id))
        if superseded_by:
            out.add((item_id, superseded_by))
    return sorted(out)


def _take_links(
    pointers: dict[str, tuple[str | None, str | None]],
    links: list[tuple[str, str]],
    cuts: list[tuple[str, str]],
) -> set[str]:
    """Each link whose two ends are free (or already so linked) in `pointers`, made there,
    unless the user cut it: a link made there joins a copy here, and where this copy linked
    either end otherwise, this copy's link stands. The ids changed."""
    cut, changed = set(cuts), set()
    for earlier, later in links:
        e, lt = pointers.get(earlier), pointers.get(later)
        if (later, earlier) in cut or e is None or lt is None or (e[1], lt[0]) == (later, earlier):
            continue
        if e[1] in (None, later) and lt[0] in (None, earlier):
            pointers[earlier], pointers[later] = (e[0], later), (earlier, lt[1])
            changed |= {i for i, was in ((earlier, e), (later, lt)) if pointers[i] != was}
    return changed


def _cut_pointers(
    pointers: dict[str, tuple[str | None, str | None]], cuts: list[tuple[str, str]]
) -> set[str]:
    """Each cut pair's pointers at each other gone, in `pointers`; the ids changed."""
    changed = set()
    for later, earlier in cuts:
        if later in pointers and pointers[later][0] == earlier:
            pointers[later] = (None, pointers[later][1])
            changed.add(later)
        if earlier in pointers and pointers[earlier][1] == later:
            pointers[earlier] = (pointers[earlier][0], None)
            changed.add(earlier)
    return changed


def _check_against(store: Store, survey: Survey, cuts: list[tuple[str, str]]) -> None:
    """The store as the import would leave it keeps `check`'s invariants: every pointer and
    cited raw input resolves in the file or the store, and the revision chains stay
    symmetric and acyclic (the user's cuts made, then the export's links taken where both
    ends are free, as `_relink` does). InputError naming the record's line."""
    from dcpm_cli.ops.check import chain_problems

    def missing(kind: str, ids: Iterable[str]) -> set[str]:
        rows = [{"id": i} for i in ids]
        return {rows[p]["id"] for p in store.new_record_keys(kind, rows)} if rows else set()

    if gone := sorted(missing("raw", set(survey.cited_raws) - survey.raw_ids)):
        raw_id = gone[0]
        raise InputError(
            f"line {survey.cited_raws[raw_id]}: an item cites raw input {raw_id}, "
            "which is neither in the file nor in this store; nothing was imported",
            _IS_EXPORT,
        )
    pointers = store.chain_pointers()
    before = {i for ids in chain_problems(pointers).values() for i in ids}
    new = missing("item", survey.items)
    for item_id, (_, supersedes, superseded_by) in survey.items.items():
        if item_id in new:
            pointers[item_id] = (supersedes, superseded_by)
        else:
            pointers.setdefault(item_id, (None, None))
    _cut_pointers(pointers, cuts)
    named = {p for _, a, b in survey.items.values() for p in (a, b) if p and p not in pointers}
    absent = missing("item", named)
    for item_id, (n, supersedes, superseded_by) in survey.items.items():
        for what, target in (("supersedes", supersedes), ("superseded_by", superseded_by)):
            if target in absent:
                raise InputError(
                    f"line {n}: item {item_id}'s {what} names {target}, which is neither in the file "
                    "nor in this store; nothing was imported",
                    _IS_EXPORT,
                )
    pointers.update({i: (None, None) for i in named - absent})
    _take_links(pointers, _links(survey), cuts)
    _check_edges(survey, missing)
    for kind, ids in chain_problems(pointers).items():
        for bad in ids:
            if bad in before:
                continue
            n = next(
                (line for i, (line, a, b) in survey.items.items() if bad in (i, a, b)),
                min(line for line, _, _ in survey.items.values()),
            )
            why = "would make a cycle" if kind == "cycles" else f"would leave {kind}"
            raise InputError(f"line {n}: item {bad}'s revision chain {why}; nothing was imported", _IS_EXPORT)


def _check_edges(survey: Survey, missing: Callable[[str, Iterable[str]], set[str]]) -> None:
    """Every edge starts at a node and ends at a node (an evidence edge: at an item), in the
    file or in the store, as `check`'s graph invariant asks."""
    from dcpm_cli.store.graph import EVIDENCE

    ends = {("node", src) for _, _, src, _ in survey.edges}
    ends |= {("item" if kind == EVIDENCE else "node", dst) for _, kind, _, dst in survey.edges}
    known = {"node": survey.node_ids, "item": set(survey.items)}
    absent = {
        (kind, i)
        for kind in ("node", "item")
        for i in missing(kind, {i for k, i in ends if k == kind} - known[kind])
    }
    for n, kind, src, dst in survey.edges:
        for end, what in ((src, "node"), (dst, "item" if kind == EVIDENCE else "node")):
            if (what, end) in absent:
                raise InputError(
                    f"line {n}: an edge names the {what} {end}, which is neither in the file nor in "
                    "this store; nothing was imported",
                    _IS_EXPORT,
                )


def _flush(
    store: Store,
    embedder: Embedder,
    kind: str,
    batch: list[dict[str, Any]],
    reuse: bool,
    report: ImportReport,
    sessions: set[str],
    present: dict[str, list[dict[str, Any]]],
    gone: dict[str, set[str]],
) -> int:
    if not batch:
        return 0
    import numpy as np

    from dcpm_cli.ingest.formats import said_words
    from dcpm_cli.store.dump import VECTOR_SOURCES, vector_from_b64

    kept = _not_forgotten(kind, batch, gone)
    if len(kept) < len(batch):
        report.forgotten[kind] = report.forgotten.get(kind, 0) + len(batch) - len(kept)
    if not kept:
        return len(batch)
    try:
        rows = [store.from_json(kind, r) for r in kept]
        fresh = [rows[i] for i in store.new_record_keys(kind, rows)]
    except (KeyError, ValueError, TypeError) as e:
        raise InputError(f"a {kind} record is incomplete or malformed: {e}", "is this a dcpm export?") from e
    sessions.update(store.sessions_of(kind, rows))  # all: an import cut short is finished by the next
    report.added[kind] = report.added.get(kind, 0) + len(fresh)
    report.already_present[kind] = report.already_present.get(kind, 0) + len(rows) - len(fresh)
    new_ids = {r["id"] for r in fresh if "id" in r}
    present.setdefault(kind, []).extend(r for r in rows if r.get("id") not in new_ids)
    if not fresh:
        return len(batch)
    vectors: dict[str, np.ndarray | None] = {}
    for column, text_column in VECTOR_SOURCES.get(kind, {}).items():
        if reuse and all(column in r for r in fresh):
            matrix = np.full((len(fresh), store.dim), np.nan, dtype=np.float32)
            for i, r in enumerate(fresh):
                try:
                    if r[column] is not None:
                        matrix[i] = vector_from_b64(r[column], store.dim)
                except (ValueError, TypeError) as e:
                    raise InputError(f"{kind} {r.get('id')}: bad {column}: {e}", "export it again") from e
            vectors[column] = matrix
        else:
            texts = [r.get(text_column) or "" for r in fresh]
            if kind == "raw":  # as `dcpm add` embeds them
                texts = [said_words(t) for t in texts]
            vectors[column] = _embed(embedder, texts, store.dim)
    store.load(kind, fresh, vectors)
    return len(batch)


def _not_forgotten(kind: str, batch: list[dict[str, Any]], gone: dict[str, set[str]]) -> list[dict[str, Any]]:
    """The records of `batch` that no forget removed here; an item's pointer at a forgotten
    item is cleared (the store relinked its chain around it), an edge at one is left out."""
    items, nodes = gone.get("item", set()), gone.get("node", set())
    out = []
    for r in batch:
        if r.get("id") in gone.get(kind, ()):
            continue
        if kind == "edge" and {r.get("src"), r.get("dst")} & (items | nodes):
            continue
        if kind == "item" and items and {r.get("supersedes"), r.get("superseded_by")} & items:
            r = {**r, **{p: None for p in ("supersedes", "superseded_by") if r.get(p) in items}}
        out.append(r)
    return out


def _embed(embedder: Embedder, texts: list[str], dim: int) -> Any:
    """Vectors of the non-empty texts; rows of NaN (stored as null) for empty ones."""
    import numpy as np

    matrix = np.full((len(texts), dim), np.nan, dtype=np.float32)
    todo = [i for i, t in enumerate(texts) if t]
    if todo:
        matrix[todo] = embedder.embed([texts[i] for i in todo])
    return matrix
