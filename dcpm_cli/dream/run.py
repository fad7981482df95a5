"""One `dcpm dream`: the lock, the budgets, the phases in order, and the run log.

- The dream lock (`store.dream_lock()`) is held for the whole run and never waited for: a
  second dream fails at once with LockBusy (exit 5). Writes take the store's short write
  lock per cluster, so `dcpm add` keeps working during a dream.
- The run log row is written when the run starts (status `running`), after every cluster,
  and at the end; a row left `running` while no dream holds the lock was interrupted.
- A budget (--max-calls / --max-seconds) ends the run with status `budget`; an unreachable
  LLM with `llm_unavailable`. Both keep everything committed so far, and the next run
  resumes: facts that became evidence are out of triage, the rest are clustered again.
  Every LLM call of the run counts against both budgets, the catch-up extraction included.
- After the phases, pairs of near current facts never compared are judged, and a `replaces`
  links them (dream/relink.py): an old journal imported after newer statements.
- A run whose LLM calls all failed (no valid reply, or only invalid actions, for every
  cluster and every pending input it tried) ends with status `failed`, not `ok`.
- Only an explicit "nothing to do" reply (`{"actions": []}`) declines a cluster, and a
  declined cluster (the same set of facts) is not asked again; a reply whose actions were
  all invalid is a failure, retried next run. `--retry-declined` forgets every decline.

Options, each with an environment variable and a `[dream]` key in config.toml (precedence:
flag > DCPM_* variable > config file > default):

    mode           DCPM_DREAM_MODE          full | no-collision | lite          (full)
    core_schemas   DCPM_CORE_SCHEMAS        Phase 3, opt-in                     (false)
    no_supersedes  DCPM_NO_SUPERSEDES       ablation: ignore revision chains    (false)
    catch_up       DCPM_DREAM_CATCH_UP      extract pending inputs first        (true)
    relink         DCPM_DREAM_RELINK        judge near facts never compared     (true)
    retry_declined DCPM_DREAM_RETRY_DECLINED ask declined clusters again        (false)
    max_calls      DCPM_DREAM_MAX_CALLS     LLM calls per run                   (none)
    max_seconds    DCPM_DREAM_MAX_SECONDS   wall time per run                   (none)
    eps1, eps2     DCPM_DREAM_EPS1/EPS2     DBSCAN radii        (per embedder, see calibrate)
    min_samples    DCPM_DREAM_MIN_SAMPLES                                       (3)
    max_cluster    DCPM_DREAM_MAX_CLUSTER   over-sized above this many facts    (40)
    theta_beh/sem  DCPM_DREAM_THETA_BEH/SEM collision thresholds (per embedder)
    max_group      DCPM_DREAM_MAX_GROUP     schemas per core schema             (6)
    dedupe_cos     DCPM_DREAM_DEDUPE_COS    a new node this close is the same   (0.92)
    context_k      DCPM_DREAM_CONTEXT_K     nearest nodes shown per cluster     (5)
"""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import tzinfo
from typing import TYPE_CHECKING, Any

import numpy as np

from dcpm_cli.config import DreamOptions, Settings
from dcpm_cli.dream import induce
from dcpm_cli.dream.budget import Budget, BudgetReached
from dcpm_cli.dream.calibrate import CalibrationReport, calibrate, thresholds_for
from dcpm_cli.dream.integrity import GraphCheck, check_graph
from dcpm_cli.dream.relink import pairs as relink_pairs
from dcpm_cli.dream.relink import relink
from dcpm_cli.dream.sweep import SweepResult, sweep
from dcpm_cli.dream.triage import GraphIndex, Triage, add_context, triage
from dcpm_cli.errors import InputError, LLMBadReply, LLMError, LLMUnavailable
from dcpm_cli.models import FAILED, PENDING, AddReport, Calibration, DreamRun, short_hash, utcnow

if TYPE_CHECKING:
    from dcpm_cli.embed import Embedder
    from dcpm_cli.llm import LLM
    from dcpm_cli.store import Store
    from dcpm_cli.write.pipeline import Writer

MAX_LOGGED_REJECTIONS = 100
SAVE_EVERY = 10  # clusters between run-log updates (each update is one more Lance commit)

Log = Callable[[str], None]
Progress = Callable[[int, int], None]
# Checks a store and repairs what it can: a report with `repairs` (what was done) and
# `findings` (each with `ok`, `name`, `detail`).
Repair = Callable[["Store"], Any]


@dataclass
class DreamOutcome:
    """What `dream()` returns: the run (as logged) and what the renderer may show."""

    run: DreamRun
    calibration: Calibration | None = None
    triage: Triage | None = None
    graph: GraphIndex | None = None
    check: GraphCheck | None = None  # dry run: what the graph check found (a dream repairs it first)
    sweep: SweepResult | None = None
    planned: list[str] = field(default_factory=list)  # dry run: the LLM calls it would make
    prompts: list[list[dict[str, str]]] = field(default_factory=list)  # dry run
    notes: list[str] = field(default_factory=list)


def dream(
    store: Store,
    embedder: Embedder,
    llm: LLM | None,
    opts: DreamOptions,
    *,
    progress: Progress | None = None,
    log: Log | None = None,
    writer: Writer | None = None,
    repair: Repair | None = None,
    settings: Settings | None = None,
) -> DreamOutcome:
    """Run System 2 once (or plan it, with `dry_run`). `llm` may be None for a dry run.
    `settings` (else the writer's) say how the re-link judges.
    With a `writer`, inputs still pending extraction are extracted first (DESIGN §2: "a later
    `dcpm process` or the next dream extracts it"), within the same budget. With `repair` (the
    store check and repair of `dcpm check --repair`, which lives above System 2), the store is
    repaired before anything is consolidated."""
    say = log or (lambda _: None)
    run = DreamRun(id=_run_id(), mode=opts.mode, core_schemas=opts.sweeps)
    if opts.mode == "lite":
        run.status, run.ended_at = "lite", utcnow()
        run.note = "lite mode: System 2 is off (System 1 only), nothing consolidated"
        return DreamOutcome(run)
    if opts.dry_run:
        return _plan(store, embedder, opts, run, say, _settings(writer, settings))
    if llm is None:
        raise InputError("a dream needs an LLM", "use --llm, or --dry-run to see the plan")
    with store.dream_lock():
        catch_up = writer if opts.catch_up else None
        return _dream(
            store, embedder, llm, opts, run, progress, say, catch_up, repair, _settings(writer, settings)
        )


def run_calibration(store: Store, embedder: Embedder) -> CalibrationReport:
    """`dcpm dream --calibrate`: thresholds for this store's embedder from the built-in set,
    stored in the store so every later dream uses them."""
    report = calibrate(embedder)
    with store.write():
        store.save_calibration(report.calibration)
    return report


# -- the run ------------------------------------------------------------------------------


def _dream(
    store: Store,
    embedder: Embedder,
    llm: LLM,
    opts: DreamOptions,
    run: DreamRun,
    progress: Progress | None,
    say: Log,
    writer: Writer | None,
    repair: Repair | None,
    settings: Settings,
) -> DreamOutcome:
    out = DreamOutcome(run)
    budget = Budget(llm, opts.max_calls, opts.max_seconds)
    usage = dataclasses.replace(llm.usage)
    caught_up = None
    try:
        _prepare(store, embedder, opts, out, say, repair)
        if writer is not None:
            caught_up = _catch_up(writer, budget, run, say)
        out.graph = GraphIndex.load(store)
        out.triage = _triage(store, out.graph, opts, out.calibration)  # type: ignore[arg-type]
        run.facts, run.clusters = out.triage.facts, len(out.triage.clusters)
        run.clusters_skipped = len(out.triage.declined)
        say(_phase1_line(out.triage))
        _phase2(
            store, embedder, llm, opts, out, budget, progress, lambda: _usage(run, llm, usage), settings.zone
        )
        say(
            f"phase 2: {run.clusters_done} clusters induced, {run.nodes_created} nodes created, "
            f"{run.evidence_added} evidence edges, {run.actions_rejected} actions rejected"
        )
        if opts.sweeps:
            _phase3(store, embedder, llm, opts, out, budget, say)
        elif opts.core_schemas:
            out.notes.append(f"core schemas are off in {opts.mode} mode")
        # After consolidation, so that a first dream over a store never compared pair by pair
        # spends its budget on consolidating first; the ablation writes no chains at all.
        if opts.relink and not opts.no_supersedes:
            _relink(store, embedder, budget, settings, out, say)
        run.status, run.note = _verdict(run, caught_up, out.sweep)
    except BudgetReached as e:
        run.status, run.note = "budget", f"{e}: the rest waits for the next dream"
    except LLMUnavailable as e:
        run.status, run.note = "llm_unavailable", _message(e)
    except LLMError as e:
        run.status, run.note = "llm_error", _message(e)
    except BaseException:
        run.status, run.note = "interrupted", "stopped by an error or a signal"
        raise
    finally:
        run.ended_at = utcnow()
        run.seconds = (run.ended_at - run.started_at).total_seconds()
        _usage(run, llm, usage)
        if run.note and run.status != "interrupted":
            say(run.note)
        store.save_dream_run(run)
    store.maintain()  # compaction and indices, when many small commits made them due
    return out


def _prepare(
    store: Store, embedder: Embedder, opts: DreamOptions, out: DreamOutcome, say: Log, repair: Repair | None
) -> None:
    """Verify and repair the store as `dcpm check --repair` does (what a killed dream, or a
    killed `dcpm add`, left), choose the thresholds, open the run log row."""
    if repair is not None:
        _repair(store, repair, out, say)
    if opts.retry_declined:
        with store.write():
            forgotten = store.forget_declined()
        out.notes.append(f"--retry-declined: {_n(forgotten, 'declined cluster')} will be asked again")
        say(out.notes[-1])
    cal, note = thresholds_for(store, embedder)
    if note:
        out.notes.append(note)
        say(note)
    out.calibration = _with_overrides(cal, opts)
    out.run.settings = _settings_json(opts, out.calibration)
    store.save_dream_run(out.run)


def _repair(store: Store, repair: Repair, out: DreamOutcome, say: Log) -> None:
    report = repair(store)
    if report.repairs:
        out.notes.append("repaired the store: " + "; ".join(report.repairs))
        say(out.notes[-1])
    broken = [f"{f.name}: {f.detail}" for f in report.findings if not f.ok]
    if broken:  # nothing a repair can do without guessing; the dream goes on around it
        out.notes.append("`dcpm check` still finds: " + "; ".join(broken))
        say(out.notes[-1])


def _phase2(
    store: Store,
    embedder: Embedder,
    llm: LLM,
    opts: DreamOptions,
    out: DreamOutcome,
    budget: Budget,
    progress: Progress | None,
    count_usage: Callable[[], None],
    zone: tzinfo,
) -> None:
    """One induction call per cluster, each cluster committed as a unit."""
    run, graph, clusters = out.run, out.graph, out.triage.clusters  # type: ignore[union-attr]
    assert graph is not None
    for i, cl in enumerate(clusters):
        budget.check()
        add_context(graph, cl, opts.context_k, 0.2)  # sees nodes made for earlier clusters
        try:
            actions = induce.ask(llm, cl, graph, budget.retries(opts.retries), zone)
        except LLMBadReply as e:
            run.clusters_failed += 1
            _reject(run, [f"cluster {cl.index + 1}: no valid reply ({e.message})"])
            continue
        result = induce.plan(store, embedder, cl, graph, actions, dedupe_cos=opts.dedupe_cos)
        _reject(run, result.rejected)
        if result.failed:  # every action invalid: not a decline; asked again next run
            run.clusters_failed += 1
            continue
        induce.commit(store, graph, result)
        run.clusters_done += 1
        run.actions_applied += result.applied
        run.nodes_created += result.nodes_created
        run.evidence_added += result.evidence_added
        run.edges_added += result.edges_added
        if result.declined:
            run.declined.append(cl.signature)
        if run.clusters_done % SAVE_EVERY == 0:
            count_usage()
            store.save_dream_run(run)
        if progress:
            progress(i + 1, len(clusters))


def _phase3(
    store: Store,
    embedder: Embedder,
    llm: LLM,
    opts: DreamOptions,
    out: DreamOutcome,
    budget: Budget,
    say: Log,
) -> None:
    cal = out.calibration
    assert cal is not None
    out.sweep = result = SweepResult()
    try:
        sweep(
            store,
            embedder,
            llm,
            budget,
            result,
            theta_beh=cal.theta_beh,
            theta_sem=cal.theta_sem,
            max_group=opts.max_group,
            retries=opts.retries,
        )
    finally:
        _sweep_counts(out.run, result)
    say(
        f"phase 3: {result.behaviours} behavioural descriptions, {len(result.collisions)} collisions "
        f"({result.redundant} redundant pairs skipped), {result.cores_created} core schemas created, "
        f"{result.cores_rewritten} rewritten for new members"
    )


def _plan(
    store: Store, embedder: Embedder, opts: DreamOptions, run: DreamRun, say: Log, settings: Settings
) -> DreamOutcome:
    """--dry-run: Phase 1 for real, then the LLM calls that would follow; writes nothing."""
    out = DreamOutcome(run)
    run.status = "dry_run"
    out.check = check_graph(store)
    if not out.check.ok:
        out.notes.append("a dream would first repair the graph: " + "; ".join(out.check.problems()))
    if store.unfinished_writes():
        out.notes.append("a dream would first finish a write that was cut short (see `dcpm check`)")
    cal = store.calibration_for(embedder.model_id)
    if cal is None:
        from dcpm_cli.dream.calibrate import PROFILES

        cal = PROFILES.get(embedder.model_id)
    if cal is None:
        cal = calibrate(embedder).calibration
        out.notes.append(f"no thresholds known for {embedder.model_id}: a dream would calibrate first")
    out.calibration = cal = _with_overrides(cal, opts)
    run.settings = _settings_json(opts, cal)
    if opts.catch_up:
        raw = store.count_by_kind("raw")
        waiting = raw.get(PENDING, 0) + raw.get(FAILED, 0)
        if waiting:  # extracted first, within the same budget (`_catch_up`)
            out.planned.append(
                f"catch-up extraction: {waiting} input(s) still pending, a call each (one per piece of a "
                "long one) and up to judge_k judgements per fact with near memories; their facts are not "
                "in the clusters below"
            )
    out.graph = graph = GraphIndex.load(store)
    out.triage = tri = _triage(store, graph, opts, cal)
    run.facts, run.clusters, run.clusters_skipped = tri.facts, len(tri.clusters), len(tri.declined)
    say(_phase1_line(tri))
    for cl in tri.clusters:
        out.prompts.append(induce.prompt(cl, graph, settings.zone))
        out.planned.append(
            f"induction: cluster {cl.index + 1} ({len(cl.facts)} facts, {len(cl.nearest)} nearby nodes, "
            f"{len(cl.evidence_nodes)} nodes already touching them)"
        )
    if opts.sweeps:
        nodes, _, beh = store.node_vectors(["schema"])
        missing = sum(1 for n, v in zip(nodes, beh, strict=True) if not n.behaviour or np.isnan(v).any())
        out.planned.append(
            f"abstraction: {missing} existing schemas without a behavioural description "
            "(plus one per schema Phase 2 creates)"
        )
        out.planned.append("core induction: one call per new collision group (known after the abstractions)")
    elif opts.core_schemas:
        out.notes.append(f"core schemas are off in {opts.mode} mode")
    if opts.relink and not opts.no_supersedes:
        near = relink_pairs(store, embedder, settings.judge_k, settings.judge_min_similarity)
        if near:
            out.planned.append(
                f"re-link: {_n(len(near), 'pair')} of near facts never compared, a judgement each "
                "(two for a replaces)"
            )
    if opts.max_calls is not None:
        out.notes.append(f"--max-calls {opts.max_calls} would stop it after {opts.max_calls} LLM calls")
    run.ended_at = utcnow()
    return out


def _settings(writer: Writer | None, settings: Settings | None) -> Settings:
    return writer.settings if writer else settings or Settings()


def _relink(
    store: Store, embedder: Embedder, budget: Budget, settings: Settings, out: DreamOutcome, say: Log
) -> None:
    """Pairs of near current facts never compared are judged now (dream/relink.py)."""
    assert budget.llm is not None
    got = relink(
        store,
        embedder,
        budget.guard(budget.llm),
        budget,
        k=settings.judge_k,
        floor=settings.judge_min_similarity,
        prompt=settings.judge_prompt,
        change_words=settings.judge_change_words,
        zone=settings.zone,
    )
    if got.asked:
        out.notes.append(
            f"re-link: {_n(got.asked, 'pair')} of near facts judged, {_n(len(got.linked), 'link')} made"
        )
        say(out.notes[-1])


def _catch_up(writer: Writer, budget: Budget, run: DreamRun, say: Log) -> AddReport:
    """System 1 catching up: inputs left pending (LLM down, --no-extract) are extracted,
    oldest first, so tonight's facts are consolidated tonight. Every call (extraction,
    reconciliation, their retries) counts against --max-calls and --max-seconds: the budget
    is checked before each input and before each call; an input cut short by it stays
    pending, as it was."""
    budget.check()
    finished = 0

    def count(n: int, _total: int) -> None:
        nonlocal finished
        finished = n

    guarded = dataclasses.replace(writer, llm=budget.guard(writer.llm)) if writer.llm is not None else writer
    try:
        report = guarded.process_pending(progress=count, stop=budget.spent)
    except BudgetReached:
        run.extracted = finished
        say(f"caught up: {_n(finished, 'pending input')} processed before the budget ran out")
        raise
    run.extracted = report.extracted
    if report.extracted or report.failed:
        say(f"caught up: extracted {report.extracted} pending inputs ({report.failed} failed)")
    if report.llm_error:
        raise LLMUnavailable(report.llm_error)
    if report.pending:
        budget.check()  # the budget stopped the catch-up: the rest waits for the next run
    return report


def _verdict(run: DreamRun, caught_up: AddReport | None, swept: SweepResult | None) -> tuple[str, str]:
    """`ok`, unless LLM calls were made and every one of them failed: then `failed`, with why."""
    extracted, bad_inputs = (caught_up.extracted, caught_up.failed) if caught_up else (0, 0)
    bad_sweeps = len(swept.failures) if swept else 0
    succeeded = extracted + run.clusters_done + (swept.behaviours + swept.cores_created if swept else 0)
    if succeeded or not (bad_inputs or run.clusters_failed or bad_sweeps):
        return "ok", run.note
    parts = [
        f"{_n(run.clusters_failed, 'cluster')} got no valid reply" if run.clusters_failed else "",
        f"{_n(bad_inputs, 'pending input')} failed extraction" if bad_inputs else "",
        f"{_n(bad_sweeps, 'core-schema call')} failed" if bad_sweeps else "",
    ]
    why = ", ".join(p for p in parts if p)
    return "failed", f"every LLM reply was invalid ({why}): nothing consolidated; the next dream tries again"


def _triage(store: Store, graph: GraphIndex, opts: DreamOptions, cal: Calibration) -> Triage:
    return triage(
        store,
        graph,
        eps1=cal.eps1,
        eps2=cal.eps2,
        min_samples=opts.min_samples,
        max_cluster=opts.max_cluster,
        context_k=opts.context_k,
        include_superseded=opts.no_supersedes,
        skip_declined=not opts.retry_declined,
    )


def _with_overrides(cal: Calibration, opts: DreamOptions) -> Calibration:
    changes = {
        name: getattr(opts, name)
        for name in ("eps1", "eps2", "theta_beh", "theta_sem")
        if getattr(opts, name) is not None
    }
    if not changes:
        return cal
    return dataclasses.replace(cal, method=f"{cal.method}, overridden: {', '.join(changes)}", **changes)


def _settings_json(opts: DreamOptions, cal: Calibration) -> str:
    return json.dumps(
        {
            "embedder": cal.embedder,
            "eps1": cal.eps1,
            "eps2": cal.eps2,
            "theta_beh": cal.theta_beh,
            "theta_sem": cal.theta_sem,
            "thresholds": cal.method,
            "min_samples": opts.min_samples,
            "max_cluster": opts.max_cluster,
            "max_group": opts.max_group,
            "max_calls": opts.max_calls,
            "max_seconds": opts.max_seconds,
            "no_supersedes": opts.no_supersedes,
        }
    )


def _phase1_line(tri: Triage) -> str:
    skipped = f", {len(tri.declined)} skipped (declined before)" if tri.declined else ""
    return (
        f"phase 1: {_n(tri.facts, 'fact')} to consolidate → {_n(len(tri.clusters), 'cluster')}{skipped}, "
        f"{tri.noise} unclustered, {tri.seconds:.2f} s"
    )


def _n(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"


def _reject(run: DreamRun, reasons: list[str]) -> None:
    run.actions_rejected += len(reasons)
    room = MAX_LOGGED_REJECTIONS - len(run.rejections)
    run.rejections.extend(reasons[: max(room, 0)])


def _usage(run: DreamRun, llm: LLM, start: Any) -> None:
    run.llm_calls = llm.usage.calls - start.calls
    run.prompt_tokens = llm.usage.prompt_tokens - start.prompt_tokens
    run.completion_tokens = llm.usage.completion_tokens - start.completion_tokens


def _sweep_counts(run: DreamRun, s: SweepResult) -> None:
    run.behaviours = s.behaviours
    run.collisions = len(s.collisions)
    run.core_created = s.cores_created
    run.edges_added += s.members_added
    run.nodes_created += s.cores_created
    _reject(run, s.failures)


def _message(e: LLMError) -> str:
    return e.message + (f" ({e.hint})" if e.hint else "")


def _run_id() -> str:
    now = utcnow()
    return f"d_{now:%Y%m%dT%H%M%S}_{short_hash(now.isoformat(), str(os.getpid()), n=6)}"
