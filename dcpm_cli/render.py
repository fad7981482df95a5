"""Everything dcpm shows: Rich on a terminal, plain stable text when piped, JSON on request.
The only module that prints."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Iterator
from typing import Any
from zoneinfo import ZoneInfo

from rich.console import Console

from dcpm_cli import views
from dcpm_cli.views import day as _day

# Piped output is never hard-wrapped: scripts get one record a line, cron logs one note a line.
out = Console(highlight=False, soft_wrap=not sys.stdout.isatty())
err = Console(stderr=True, highlight=False, soft_wrap=not sys.stderr.isatty())


def print_json(obj: Any) -> None:
    sys.stdout.write(views.to_json(obj) + "\n")
    sys.stdout.flush()


def error(message: str, hint: str | None = None) -> None:
    from rich.markup import escape  # "[dream]" in a message is text, not a style

    err.print(f"[bold red]error:[/] {escape(message)}", markup=True, highlight=False)
    if hint:
        err.print(f"[dim]hint:[/] {escape(hint)}", markup=True)


def note(message: str) -> None:
    err.print(message, markup=False)


def warnings(lines: list[str]) -> None:
    """Something went wrong but the command still did its job: said on stderr, once each."""
    for line in dict.fromkeys(lines):
        err.print(f"warning: {line}", markup=False)


@contextlib.contextmanager
def progress(label: str, enabled: bool) -> Iterator[Callable[[int, int], None] | None]:
    """A progress bar on a terminal (stderr), nothing otherwise."""
    if not (enabled and err.is_terminal):
        yield None
        return
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=err,
        transient=True,
    ) as bar:
        task = bar.add_task(label, total=None)

        def update(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

        yield update


def add_report(report: Any, *, as_json: bool, verb: str = "stored") -> None:
    if as_json:
        print_json(views.add_dict(report))
        return
    parts = [f"{verb} {report.stored} input{'s' if report.stored != 1 else ''}"] if verb == "stored" else []
    if report.already_stored:
        parts.append(f"{report.already_stored} already stored")
    if report.forgotten:
        parts.append(f"{report.forgotten} not stored again: you had forgotten them")
    if report.extracted or report.llm_calls:
        parts.append(f"extracted {report.extracted}")
        parts.append(
            f"+{report.added} new, {report.superseded} superseded, {report.updated} updated, "
            f"{report.duplicates} duplicate{'s' if report.duplicates != 1 else ''}"
        )
    if report.failed:
        parts.append(f"{report.failed} failed")
    if report.pending:
        parts.append(f"{report.pending} pending extraction")
    out.print(", ".join(parts) if parts else "nothing to do", markup=False)
    if report.repaired:
        note(f"note: {report.repaired}")
    rejected = [r for o in report.outcomes for r in o.rejected]
    for r in rejected[:5]:
        note(f"note: {r}")
    if report.skipped:
        shown = ", ".join(report.skipped[:5]) + (
            f" and {len(report.skipped) - 5} more" if len(report.skipped) > 5 else ""
        )
        note(
            f"not stored: {len(report.skipped)} file(s) with no date in their name ({shown}); "
            "name them by day, e.g. 2026-03-07.md"
        )


# -- the read path ------------------------------------------------------------------------


def recall_table(result: Any, *, arc: bool) -> None:
    from rich.text import Text

    if not result.hits:
        out.print(f"no memories match {result.query!r}", markup=False)
        return
    for n, hit in enumerate(result.hits, 1):
        line = Text(f"{n:>2}. ")
        line.append(f"[{'assistant' if hit.role == 'assistant' else hit.kind}]", style="cyan")
        line.append(f" {_day(hit.when, result.zone)}  ", style="dim")
        shown = views.shown_text(hit, result.query).replace("\n", " ")
        line.append(shown, style="bold" if not hit.superseded else "yellow")
        line.append(f"  {hit.id}", style="dim")
        if mark := views.then_mark(result, hit):
            line.append(f"  ({mark})", style="green" if mark == "said then" else "dim")
        out.print(line)
        alike = sorted(h.when for h in result.hits if h.id in hit.same_as)
        if alike:
            days = ", ".join(_day(w, result.zone) for w in alike)
            newer = (
                "not the newest"
                if any(w > hit.when for w in alike)
                else "said at the same time as another"
                if hit.when in alike
                else "newest of these"
            )
            out.print(Text(f"      (nearly the same also said {days}; {newer})", style="dim"))
        if hit.reply_to is not None:
            out.print(Text(f"      (answering {views.asked_of(hit)})", style="dim"))
        history = [c for c in hit.chain if c.id != hit.id]
        if history and not arc:
            out.print(Text(f"      ({len(hit.chain)} states; --arc shows how it changed)", style="dim"))
        if history and arc:
            for c in reversed(hit.chain):
                mark = "→" if c.id == hit.id else " "
                style = "bold" if c.id == hit.id else "dim"
                out.print(Text(f"    {mark} {_day(c.event_at, result.zone)}  {c.text}  {c.id}", style=style))
        for node in hit.nodes:
            if node.id in result.stale_nodes:  # its evidence has all been superseded
                out.print(Text(f"      {node.kind} (stale): {node.text}  {node.id}", style="dim"))
            else:
                out.print(Text(f"      {node.kind}: {node.text}  {node.id}", style="magenta"))


def recall_prompt(result: Any) -> None:
    """A compact context block to pipe into an LLM."""
    sys.stdout.write(views.recall_prompt_text(result))


def arcs_timeline(arcs: list[list[Any]], target: str, *, waiting: int = 0, zone: str = "UTC") -> None:
    """Each belief's arc as a timeline, oldest state at the top, the current one marked."""
    from rich.text import Text

    if not arcs:
        out.print(f"no beliefs match {target!r}", markup=False)
        if waiting:
            note(
                f"{waiting} input(s) still wait for extraction, so no belief comes from them yet: "
                "`dcpm process` extracts them; `dcpm recall` finds their words now"
            )
        return
    for n, arc in enumerate(arcs):
        head = arc[-1].item
        if n:
            out.print()
        out.print(Text(f"{head.topic or head.kind}: {len(arc)} state{'s' if len(arc) > 1 else ''}", "bold"))
        for s in arc:
            current = s.item.superseded_by is None
            line = Text("● " if current else "○ ", "green" if current else "dim")
            line.append(f"{_day(s.item.event_at, zone)}  ", "dim")
            line.append(s.item.text, "bold green" if current else "")
            line.append(f"  {s.item.id}", "dim")
            if current:
                line.append("  (current)", "green")
            out.print(line)
            for r in s.sources:
                snippet = r.text.replace("\n", " ")
                more = "…" if len(snippet) > 160 else ""
                out.print(Text(f"│   said {_day(r.said_at, zone)}: {snippet[:160]}{more}", "dim"))
            for e in s.events:
                if e.op == "UPDATE":
                    out.print(Text(f"│   updated {_day(e.at, zone)}; before: {e.previous_text}", "yellow"))
            if s.item.superseded_by:
                out.print(Text(f"│   replaced by {s.item.superseded_by}", "dim"))


def detail(d: dict[str, Any], *, zone: str = "UTC") -> None:
    from rich.text import Text

    kind = d["type"]
    if kind == "item":
        i = d["item"]
        out.print(Text(f"{i.kind} {i.id}", "bold"))
        out.print(i.text, markup=False)
        out.print(
            Text(
                f"topic {i.topic or '-'} · subject {i.subject} · attribute {i.attribute or '-'} · "
                f"salience {i.salience:.2f} · when {_day(i.event_at, zone)}",
                "dim",
            )
        )
        out.print(
            Text(
                f"supersedes {i.supersedes or '-'} · superseded by {i.superseded_by or '-'} · "
                f"chain of {len(d['chain'])}",
                "dim",
            )
        )
        for r in d["sources"]:
            out.print(Text(f"from {r.id} ({_day(r.said_at, zone)}, {r.role}): {r.text}"))
        for e in d["events"]:
            extra = f"; before: {e.previous_text}" if e.previous_text else ""
            extra += f"; {e.detail}" if e.detail else ""
            out.print(
                Text(
                    f"{_day(e.at, zone)} {e.op} {e.item_id}"
                    f"{' ← ' + e.target_id if e.target_id else ''}{extra}",
                    "dim",
                )
            )
        for n in d["nodes"]:
            out.print(Text(f"evidence for {n.kind} {n.id}: {n.text}", "magenta"))
    elif kind == "raw":
        r = d["raw"]
        out.print(Text(f"raw input {r.id} · {r.role} · session {r.session or '-'} · {r.source}", "bold"))
        out.print(
            Text(
                f"said {r.said_at.astimezone(ZoneInfo(zone)):%Y-%m-%d %H:%M} · status {r.status}"
                + (f" ({r.error})" if r.error else ""),
                "dim",
            )
        )
        if (asked := d.get("reply_to")) is not None:
            out.print(Text(f'answering {asked.id}: "{" ".join(asked.text.split())}"', "dim"))
        out.print(r.text, markup=False)
        for i in d["items"]:
            out.print(Text(f"→ {i.kind} {i.id}: {i.text}", "cyan"))
    else:
        n = d["node"]
        out.print(Text(f"{n.kind} {n.id} · domain {n.domain or '-'}", "bold"))
        out.print(n.text, markup=False)
        if n.behaviour:
            out.print(Text(f"behaviour: {n.behaviour}", "dim"))
        for m in d["members"]:
            out.print(Text(f"member {m.kind} {m.id}: {m.text}", "magenta"))
        for ev in d["evidence"]:
            i = ev["item"]
            out.print(Text(f"evidence {i.id} ({_day(i.event_at, zone)}): {i.text}", "cyan"))
            for r in ev["sources"]:
                out.print(Text(f"    from {r.id}: {r.text[:160]}", "dim"))


def stats(f: dict[str, Any]) -> None:
    from rich.table import Table
    from rich.text import Text

    t = Table(show_header=False, box=None, pad_edge=False)
    t.add_column(style="dim")
    t.add_column()
    t.add_row("store", Text(f["store"]))  # a path or spec, not markup: "[/]" is allowed in it
    t.add_row("embedder", Text(f["embedder"]))
    t.add_row(
        "raw inputs",
        f"{f['raw_inputs']} ({', '.join(f'{v} {k}' for k, v in sorted(f['raw_by_status'].items()))})",
    )
    t.add_row("pending", str(f["pending"]))
    t.add_row("items", ", ".join(f"{v} {k}" for k, v in sorted(f["items"].items())) or "0")
    c = f["chains"]
    t.add_row("chains", f"{c['count']} (mean length {c['mean_length']}, max {c['max_length']})")
    t.add_row("graph nodes", ", ".join(f"{v} {k}" for k, v in sorted(f["nodes"].items())) or "0")
    for run in f.get("dream_runs") or []:
        t.add_row("dream run", Text(" · ".join(f"{k} {v}" for k, v in run.items())))
    if f["disk_bytes"] is not None:
        t.add_row("on disk", f"{f['disk_bytes'] / 1e6:.1f} MB")
    out.print(t)


def check_report(report: Any, *, as_json: bool) -> None:
    """`dcpm check`: one line per invariant, then what --repair did."""
    if as_json:
        print_json(report.to_dict())
        return
    for line in report.repairs:
        out.print(f"repaired  {line}", markup=False)
    for f in report.findings:
        mark = "ok  " if f.ok else "FAIL"
        more = f" (e.g. {', '.join(f.examples)})" if f.examples and not f.ok else ""
        out.print(f"{mark}  {f.name:<18} {f.detail}{more}", markup=False)
    if report.ok:
        out.print(f"store {report.store}: every check holds", markup=False)
    else:
        hint = "" if report.repairs else "; `dcpm check --repair` fixes what it can"
        out.print(
            f"store {report.store}: {sum(not f.ok for f in report.findings)} check(s) fail{hint}",
            markup=False,
        )


def doctor(r: dict[str, Any]) -> None:
    store = "" if r["store_ok"] else f": unusable: {r['store_problem']}"
    out.print(f"store     {r['store']}{store}", markup=False)
    out.print(f"embedder  {r['embedder']}", markup=False)
    status = "ok" if r["llm_ok"] else f"unavailable: {r['llm_problem']}"
    out.print(f"llm       {r['llm']}: {status}", markup=False)


# -- System 2: dream, calibrate, schemas -----------------------------------------------------


def dream_outcome(outcome: Any, *, as_json: bool, zone: str = "UTC") -> None:
    if as_json:
        print_json(views.dream_dict(outcome))
        return
    run = outcome.run
    if run.status == "lite":
        out.print(run.note, markup=False)
        return
    if run.status == "dry_run":
        _dream_plan(outcome, zone)
        return
    applied = f"{run.actions_applied} actions applied, {run.actions_rejected} rejected"
    parts = [
        f"dream {run.status} in {run.seconds:.1f} s",
        f"{run.facts} facts → {run.clusters} clusters ({run.clusters_done} induced"
        + (f", {run.clusters_skipped} skipped" if run.clusters_skipped else "")
        + (f", {run.clusters_failed} failed" if run.clusters_failed else "")
        + ")",
        f"{run.nodes_created} nodes created, {run.evidence_added} evidence links, "
        f"{run.edges_added} other links",
        applied,
    ]
    if run.core_schemas:
        parts.append(
            f"{run.behaviours} behaviours, {run.collisions} collisions, {run.core_created} core schemas"
        )
    parts.append(f"{run.llm_calls} LLM calls, {run.prompt_tokens + run.completion_tokens} tokens")
    out.print("; ".join(parts), markup=False)
    for r in run.rejections[:5]:
        note(f"rejected: {r}")
    if len(run.rejections) > 5 or run.actions_rejected > len(run.rejections[:5]):
        note(f"({run.actions_rejected} rejected in all; `dcpm dream` keeps them in the run log)")
    for n in outcome.notes:
        note(n)


def _dream_plan(outcome: Any, zone: str) -> None:
    from rich.text import Text
    from rich.tree import Tree

    cal = outcome.calibration
    tri = outcome.triage
    out.print(Text("dry run: nothing written, no LLM called", "bold"))
    if cal is not None:
        out.print(
            Text(
                f"eps {cal.eps1}/{cal.eps2}, θ_beh {cal.theta_beh}, θ_sem {cal.theta_sem} "
                f"({cal.embedder}, {cal.method})",
                "dim",
            )
        )
    if tri is not None:
        out.print(
            f"{tri.facts} facts to consolidate → {len(tri.clusters)} clusters, {tri.noise} unclustered"
            + (f", {len(tri.declined)} skipped (declined before)" if tri.declined else ""),
            markup=False,
        )
        for c in tri.clusters:
            tree = Tree(Text(f"cluster {c.index + 1} · {len(c.facts)} facts · {c.signature}", "bold"))
            for i, f in enumerate(c.facts, 1):
                tree.add(Text(f"F{i} {f.id} [{_day(f.event_at, zone)}, {f.topic or '-'}] {f.text}"))
            for n, sim in c.nearest:
                tree.add(Text(f"near {n.kind} {n.id} ({sim:.2f}): {n.text}", "magenta"))
            for node_id, facts in c.evidence_nodes.items():
                tree.add(Text(f"already evidence of {node_id}: {', '.join(facts)}", "magenta"))
            _print_tree(tree)
    out.print(Text("LLM calls it would make:" + ("" if outcome.planned else " none"), "bold"))
    for p in outcome.planned:
        out.print(f"  {p}", markup=False)
    for n in outcome.notes:
        note(n)


def calibration(report: Any, *, as_json: bool) -> None:
    cal = report.calibration
    if as_json:
        print_json(views.calibration_dict(report))
        return
    out.print(
        f"{cal.embedder}: eps1 {cal.eps1}, eps2 {cal.eps2}, θ_beh {cal.theta_beh}, θ_sem {cal.theta_sem} "
        f"({cal.method}); stored, later dreams use these",
        markup=False,
    )
    for k, v in report.stats.items():
        out.print(f"  {k.replace('_', ' ')}: {v}", markup=False)


def schemas(overview: dict[str, Any], *, as_json: bool, asked: str = "") -> None:
    """`asked`: the filters given, said when nothing matches them."""
    if as_json:
        print_json(overview)
        return
    from rich.text import Text
    from rich.tree import Tree

    nodes = overview["nodes"]
    if not nodes and asked:
        out.print(f"no schemas or intentions match {asked}", markup=False)
        return
    if not nodes:
        out.print("no schemas yet: `dcpm dream` builds them from your facts", markup=False)
        return
    titles = {"schema": "schemas", "intention": "intentions", "core_schema": "core schemas"}
    counts = overview["counts"]
    root = Tree(Text(", ".join(f"{counts[k]} {titles.get(k, k)}" for k in titles if k in counts), "bold"))
    for kind, title in titles.items():
        of_kind = [n for n in nodes if n["kind"] == kind]
        if not of_kind:
            continue
        branch = root.add(Text(title, "bold"))
        if kind == "core_schema":
            for n in of_kind:
                stale = ", stale" if n.get("stale") else ""
                core = branch.add(Text(f"{n['text']}  ({n['id']}, {n['domain'] or '-'}{stale})", "magenta"))
                for m in n["members"]:
                    info = overview["member_text"].get(m, {})
                    core.add(Text(f"{info.get('domain') or '-'}: {info.get('text', '(missing)')}  ({m})"))
            continue
        domains: dict[str, Any] = {}
        for n in of_kind:
            d = n["domain"] or "-"
            if d not in domains:
                domains[d] = branch.add(Text(d, "cyan"))
            stale = ", stale" if n.get("stale") else ""
            domains[d].add(Text(f"{n['text']}  ({n['id']}, {n['evidence']} facts{stale})"))
    _print_tree(root)
    for link in overview["links"][:20]:
        out.print(Text(f"{link['src']} {link['relation']} {link['dst']}", "dim"))


def _print_tree(tree: Any) -> None:
    """A Rich tree on a terminal; piped, the same as indented lines, never cropped."""
    if out.is_terminal:
        out.print(tree)
        return

    def walk(node: Any, depth: int) -> None:
        label = node.label.plain if hasattr(node.label, "plain") else str(node.label)
        sys.stdout.write("  " * depth + label + "\n")
        for child in node.children:
            walk(child, depth + 1)

    walk(tree, 0)
    sys.stdout.flush()


# -- your memory, your control: forget, export/import, reembed, backup, config (#9) ----------


def forget_plan(plan: Any, *, as_json: bool, done: Any = None) -> None:
    """What a forget removes (or removed), the cascade spelled out."""
    if as_json:
        print_json(views.forget_dict(plan, done))
        return
    head = "forgotten" if done is not None else "would forget"
    counts = f"{len(plan.raw_ids)} raw input(s), {len(plan.item_ids)} item(s), {len(plan.node_ids)} node(s)"
    out.print(f"{head}: {counts}")
    for ident in plan.removed:
        out.print(f"  - {ident}  {clip(plan.texts.get(ident, ''))}", markup=False)
    for ident, keep in plan.trimmed.items():
        out.print(f"  item {ident} keeps its other source(s): {', '.join(keep)}", markup=False)
    for ident, raws in plan.sources_kept.items():
        out.print(
            f"  note: the input(s) {ident} came from stay: {', '.join(raws)} (forget them too)", markup=False
        )
    for ident in plan.reverts:
        out.print(f"  item {ident} gets back its text from before: {clip(plan.texts[ident])}", markup=False)
    for ident, (before, after) in plan.relinks.items():
        out.print(f"  chain relinked: {before or '∅'} → {ident} → {after or '∅'}", markup=False)
    if plan.edge_ids:
        out.print(f"  {len(plan.edge_ids)} graph edge(s) removed")
    for ident, why in plan.marked.items():
        out.print(f"  node {ident} kept: {why}", markup=False)
    if plan.set_aside:
        out.print(
            f"  the {len(plan.set_aside)} fact(s) it rested on stay, set aside: a dream will not build it"
            " again from them",
            markup=False,
        )
    if plan.passages:
        out.print(
            f"  {len(plan.passages)} passage(s) rebuilt without it, in session(s) {', '.join(plan.sessions)}",
            markup=False,
        )
    if plan.raw_ids:
        out.print(
            "  added again as it was (its file or log added once more), it is not stored again",
            markup=False,
        )
    if done is None:
        out.print("  the event log will keep the ids and the time, never the text; old versions are purged")
    else:
        out.print(
            f"  logged as {done.event_id}; {done.events_scrubbed} older event(s) blanked; old versions purged"
        )


def clip(text: str, n: int = 70) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 1] + "…"


def summary(data: dict[str, Any], *, as_json: bool, title: str) -> None:
    """A flat report (export, import, reembed, backup) as `key: value` lines or JSON."""
    if as_json:
        print_json(data)
        return
    out.print(title, markup=False)
    for key, value in data.items():
        if isinstance(value, dict):  # counts by kind: "raw 404, item 404", not a Python dict
            value = ", ".join(f"{k} {v}" for k, v in value.items()) or "none"
        out.print(f"  {key}: {value}", markup=False)


def settings_table(rows: list[dict[str, Any]], *, as_json: bool) -> None:
    """Every resolved setting with where it came from."""
    if as_json:
        print_json(rows)
        return
    from rich.table import Table
    from rich.text import Text

    table = Table(box=None, pad_edge=False)
    for col in ("setting", "value", "source", "environment"):
        table.add_column(col, overflow="fold")
    for r in rows:
        value = Text("" if r["value"] is None else str(r["value"]))  # a path, a spec: not markup
        table.add_row(r["name"], value, r["source"], r["env"])
    out.print(table)
