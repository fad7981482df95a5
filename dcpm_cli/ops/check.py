"""`dcpm check`: the invariants a user relies on, each checked, and what `--repair` can fix
without guessing.

1. the store's format is one this dcpm knows, every migration applied;
2. the embedder matches the store (its recorded model id, and every vector column's width);
3. every raw input is present and reads back whole (id, text, time), none stored twice, and
   every day of a notes folder has a current version;
4. no write was left unfinished (a marker of an interrupted write: see store/journal.py);
5. revision chains: pointers symmetric, to items that exist, acyclic, one current head each;
6. provenance: every item's raw ids are stored inputs;
7. the graph: every edge's ends exist and fit their kinds, no half-written dream cluster
   (schemas without evidence, core schemas without members), no duplicate nodes;
8. passages hold every user input of a session (recall's context-level keys);
9. full-text search answers on every searched table (a damaged index is rebuilt);
10. claims on inputs being extracted belong to live processes.

`--repair` finishes interrupted writes, restores missing chain back-pointers, makes the latest
version of a note day with none current again, repairs the graph as a dream would, rebuilds
missing passages and drops stale claims. It never invents a link: a fork, a cycle or a pointer
to an item that is gone is reported, not "fixed".
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from dcpm_cli.dream.integrity import check_graph, repair_graph
from dcpm_cli.models import REPLACED
from dcpm_cli.write.batches import replaced_by, status_before_replaced

if TYPE_CHECKING:
    from datetime import datetime

    from dcpm_cli.models import RawInput
    from dcpm_cli.store import Store

EXAMPLES = 5  # ids shown per problem


@dataclass
class Finding:
    """One invariant: whether it holds, a one-line account, and example ids when it does not."""

    name: str
    ok: bool
    detail: str
    examples: list[str] = field(default_factory=list)


@dataclass
class CheckReport:
    store: str
    findings: list[Finding] = field(default_factory=list)
    repairs: list[str] = field(default_factory=list)  # what --repair did

    @property
    def ok(self) -> bool:
        return all(f.ok for f in self.findings)

    def to_dict(self) -> dict:
        return {
            "store": self.store,
            "ok": self.ok,
            "checks": [f.__dict__ for f in self.findings],
            "repairs": self.repairs,
        }


def check(store: Store, *, repair: bool = False) -> CheckReport:
    """Check every invariant (under the write lock, so a writer's half-done step is not seen
    as damage); with `repair`, fix what can be fixed first, then report the state after."""
    report = CheckReport(store.uri)
    with store.write() if repair else store.reading():
        if repair:
            report.repairs = _repair(store)
        report.findings = [
            _format(store),
            _embedder(store),
            _raw(store),
            _note_days(store),
            _unfinished(store),
            _chains(store),
            _provenance(store),
            _graph(store),
            _passages(store),
            _text_search(store),
            _claims(store),
        ]
    return report


# -- the checks -------------------------------------------------------------------------------


def _format(store: Store) -> Finding:
    from dcpm_cli.store.migrations import FORMAT_VERSION, MIGRATIONS

    known = [name for name, _ in MIGRATIONS]
    applied = store.applied_migrations()
    missing = [m for m in known if m not in applied]
    unknown = sorted(applied - set(known))
    fmt = store.meta().get("format", "1")
    if missing or unknown:
        what = [f"not applied: {', '.join(missing)}"] if missing else []
        what += [f"unknown (a newer dcpm?): {', '.join(unknown)}"] if unknown else []
        return Finding("format", False, f"format {fmt}; migrations " + "; ".join(what))
    return Finding(
        "format", True, f"format {fmt} (this dcpm: {FORMAT_VERSION}), {len(known)} migrations applied"
    )


def _embedder(store: Store) -> Finding:
    meta = store.meta()
    dims = store.vector_dims()
    wrong = [f"{t} ({d})" for t, d in dims.items() if d != store.dim]
    if meta.get("embedder") != store.embedder_id or meta.get("dim") != str(store.dim) or wrong:
        detail = (
            f"store records {meta.get('embedder')} ({meta.get('dim')} dims), configured {store.embedder_id}"
        )
        if wrong:
            detail += "; vector columns of another width: " + ", ".join(wrong)
        return Finding("embedder", False, detail)
    return Finding("embedder", True, f"{store.embedder_id}, {store.dim} dims, in every vector column")


def _raw(store: Store) -> Finding:
    n, bad, twice = store.raw_health()
    if bad or twice:
        parts = [f"{len(bad)} unreadable"] if bad else []
        parts += [f"{len(twice)} stored twice"] if twice else []
        return Finding("raw inputs", False, f"{n} read; " + ", ".join(parts), (bad + twice)[:EXAMPLES])
    return Finding("raw inputs", True, f"all {n} present and readable")


def _note_days(store: Store) -> Finding:
    lost = days_without_current_note(store)
    if lost:
        return Finding(
            "note days",
            False,
            f"{len(lost)} day(s) of a notes folder with every version replaced, so never recalled: "
            "--repair makes the latest stored version current (or add the folder again)",
            [versions[-1].id for versions in lost][:EXAMPLES],
        )
    return Finding("note days", True, "every day of a notes folder has a current version")


def days_without_current_note(store: Store) -> list[list[RawInput]]:
    """The days of notes folders whose every stored version is REPLACED (what dcpm left, before
    this was fixed, of a day edited back to an earlier text), each day's versions oldest first."""
    replaced = store.raw_by_status([REPLACED])
    days: dict[tuple[str, str, datetime], list[RawInput]] = {}
    for session in sorted({r.session for r in replaced}):
        sources = sorted({r.source for r in replaced if r.session == session})
        for r in store.note_versions(session, sources):
            days.setdefault((session, r.source, r.said_at), []).append(r)
    # A day whose current version was forgotten is no fault: its older versions stay replaced.
    # The fault is versions replaced by one another, each "replaced by" a version still stored.
    return [
        sorted(versions, key=lambda r: (r.created_at, r.id))
        for versions in days.values()
        if all(r.status == REPLACED for r in versions)
        and all(replaced_by(r) in {v.id for v in versions} for r in versions)
    ]


def _unfinished(store: Store) -> Finding:
    markers = store.unfinished_writes()
    if markers:
        ops = sorted({m.get("op", "?") for m in markers})
        return Finding(
            "unfinished writes",
            False,
            f"{len(markers)} write(s) cut short ({', '.join(ops)}); the next write or --repair finishes them",
        )
    replayed = store.__dict__.get("_replayed_logs", 0)
    if replayed:  # on taking the lock (store/staging.py): a writer mid-group, or one that died
        return Finding("unfinished writes", True, f"none ({replayed} group-commit log(s) replayed)")
    return Finding("unfinished writes", True, "none")


def chain_problems(pointers: dict[str, tuple[str | None, str | None]]) -> dict[str, list[str]]:
    """Every way the revision chains break their invariants, by kind, with the ids concerned."""
    out: dict[str, list[str]] = {
        "missing back-pointers": [],
        "asymmetric pointers": [],
        "pointers to missing items": [],
        "forks (two newer states)": [],
        "cycles": [],
    }
    successors: dict[str, list[str]] = {}
    for i, (before, after) in pointers.items():
        if before is not None:
            successors.setdefault(before, []).append(i)
            if before not in pointers:
                out["pointers to missing items"].append(i)
            elif pointers[before][1] is None:
                out["missing back-pointers"].append(before)
            elif pointers[before][1] != i:
                out["asymmetric pointers"].append(i)
        if after is not None:
            if after not in pointers:
                out["pointers to missing items"].append(i)
            elif pointers[after][0] != i:
                out["asymmetric pointers"].append(i)
    out["forks (two newer states)"] = sorted(old for old, new in successors.items() if len(new) > 1)
    for start in pointers:
        seen, cur = {start}, pointers[start][1]
        while cur is not None and cur in pointers:
            if cur in seen:
                out["cycles"].append(start)
                break
            seen.add(cur)
            cur = pointers[cur][1]
    return {k: sorted(set(v)) for k, v in out.items() if v}


def _chains(store: Store) -> Finding:
    pointers = store.chain_pointers()
    problems = chain_problems(pointers)
    chains = sum(1 for before, _ in pointers.values() if before is None)
    if problems:
        detail = ", ".join(f"{len(ids)} {kind}" for kind, ids in problems.items())
        return Finding("chains", False, detail, [i for ids in problems.values() for i in ids][:EXAMPLES])
    return Finding("chains", True, f"{chains} chains, pointers symmetric, acyclic, one current head each")


def _provenance(store: Store) -> Finding:
    broken = store.items_without_sources()
    if broken:
        return Finding(
            "provenance",
            False,
            f"{len(broken)} items name raw inputs that are not stored",
            [i for i, _ in broken][:EXAMPLES],
        )
    return Finding("provenance", True, "every item's raw inputs are stored")


def _graph(store: Store) -> Finding:
    g = check_graph(store)
    if not g.ok:
        ids = [*g.dangling_edges, *g.misfit_edges, *g.orphan_nodes, *g.hollow_cores]
        return Finding("graph", False, "; ".join(g.problems()), ids[:EXAMPLES])
    return Finding(
        "graph",
        True,
        f"{g.nodes} nodes, {g.edges} edges: ends exist, kinds fit, no half-written dream cluster",
    )


def _passages(store: Store) -> Finding:
    missing = store.inputs_without_passage()
    if missing:
        n = sum(len(v) for v in missing.values())
        return Finding(
            "passages",
            False,
            f"{n} user input(s) in {len(missing)} session(s) have no passage",
            [i for ids in missing.values() for i in ids][:EXAMPLES],
        )
    return Finding("passages", True, "every user input of a session is in a passage")


def _text_search(store: Store) -> Finding:
    broken = store.text_index_problems()
    if broken:
        return Finding("text search", False, "; ".join(broken.values()), sorted(broken))
    return Finding("text search", True, "full-text search answers on inputs, items and passages")


def _claims(store: Store) -> Finding:
    stale = store.stale_claims()
    if stale:
        return Finding(
            "claims",
            True,
            f"{len(stale)} stale claims (their process is gone; they are taken over)",
            stale[:EXAMPLES],
        )
    return Finding("claims", True, "no stale claims")


# -- repair ----------------------------------------------------------------------------------


def _repair(store: Store) -> list[str]:
    """Fix what needs no guess; one line per kind of fix actually made."""
    done: list[str] = []
    recovered = store.recover()
    if recovered is not None:
        done.append(recovered.summary())
    if n := store.repair_chains():
        done.append(f"restored {n} chain back-pointer(s)")
    graph = repair_graph(store)
    if not graph.ok:
        done.append("repaired the graph: " + "; ".join(graph.problems()))
    missing = store.inputs_without_passage()
    if missing:
        written = store.index_passages(sorted(missing))
        done.append(f"rebuilt {written} passage(s) for {len(missing)} session(s)")
    for collection in store.text_index_problems():
        store.rebuild_text_index(collection)
        done.append(f"rebuilt the full-text index of {collection}")
    if lost := days_without_current_note(store):
        for versions in lost:
            store.set_raw_status(versions[-1].id, status_before_replaced(versions[-1]))
        done.append(f"made the latest version of {len(lost)} note day(s) current again")
    if stale := store.stale_claims():
        store.drop_claims(stale)
        done.append(f"dropped {len(stale)} stale claim(s)")
    return done
